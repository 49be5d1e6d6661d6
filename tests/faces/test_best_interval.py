"""best_interval (stormsim.goodput): Daly's optimum with the fleet's contended write time."""
from __future__ import annotations

import math

import numpy as np
import pytest

import stormsim
from stormsim import SpecError, best_interval
from stormsim.stats.daly import daly_goodput, daly_optimum, young_interval

#: The fixed point is solved to INTERVAL_RTOL = 1e-9 per class per round; a
#: check of its defining equation holds to a few times that.
FIXED_POINT_RTOL = 1e-8

README = stormsim.Fleet.from_jobs(n_jobs=12, compute_interval="30 min", size="840 GB",
                                  bandwidth="40 GB/s", jitter="1%")


def _writes(fleet, classes, intervals):
    """The law's mean write per class with class c at intervals[c] (jitter a fixed share)."""
    T = fleet.T.copy()
    for c, t in zip(classes, intervals):
        T[fleet.T == c.interval] = t
    law = stormsim.stationary(fleet.replace(T=T, jitter=fleet.jitter * T / fleet.T))
    return [law.mean_write_duration[c.first_job] for c in classes]


def test_without_contention_the_contended_interval_is_dalys():
    fleet = README.replace(throughput="ideal")       # every write at rate 1: w = d
    got = best_interval(fleet, "24 h", "10 min")
    (c,) = got.classes
    assert c.contended == pytest.approx(c.daly, rel=FIXED_POINT_RTOL)
    assert c.daly == daly_optimum(c.write_alone, 86400.0)
    assert c.young == young_interval(c.write_alone, 86400.0)


@pytest.mark.parametrize("mtbf", [3 * 3600.0, 86400.0, 7 * 86400.0])
def test_the_contended_interval_is_dalys_for_its_own_write(mtbf):
    got = best_interval(README, mtbf, 600.0)
    (c,) = got.classes
    (w,) = _writes(README, got.classes, [c.contended])
    assert c.write_contended == pytest.approx(w, rel=FIXED_POINT_RTOL)
    assert c.contended == pytest.approx(daly_optimum(w, mtbf, 600.0), rel=FIXED_POINT_RTOL)
    # Contention stretches writes, so the interval that pays for them is longer.
    assert c.write_contended > c.write_alone and c.contended > c.daly
    # The fleet moving together is at least as good as each job for itself.
    assert got.fleet_optimum_goodput >= c.goodput_contended - 1e-12
    assert got.fleet_optimum_goodput == pytest.approx(
        daly_goodput(got.fleet_optimum, got.fleet_optimum_write, mtbf, 600.0), rel=1e-12)


def test_a_mixed_fleet_gets_a_fixed_point_over_its_classes():
    fleet = stormsim.Fleet(T=[1800.0] * 4 + [3600.0] * 2, d=[20.0] * 4 + [60.0] * 2,
                           jitter=[18.0] * 4 + [36.0] * 2)
    got = best_interval(fleet, "6 h", "5 min")
    assert [(c.jobs, c.first_job) for c in got.classes] == [(4, 0), (2, 4)]
    assert math.isnan(got.fleet_optimum)
    writes = _writes(fleet, got.classes, [c.contended for c in got.classes])
    for c, w in zip(got.classes, writes):
        assert c.contended == pytest.approx(daly_optimum(w, 6 * 3600.0, 300.0),
                                            rel=FIXED_POINT_RTOL)


@pytest.mark.parametrize(("kw", "match"), [
    (dict(mtbf="-1 h"), r"^mtbf = -3600.0"), (dict(mtbf=0.0), r"^mtbf = 0.0"),
    (dict(mtbf="3 GB"), r"^mtbf = '3 GB'"), (dict(mtbf=86400.0, restart=-1.0), r"^restart = -1.0"),
    (dict(mtbf=math.inf), r"^mtbf = inf"),
])
def test_bad_failure_rates_are_refused_by_name(kw, match):
    with pytest.raises(SpecError, match=match):
        best_interval(README, **kw)


def test_the_table_reads():
    text = best_interval(README, "24 h", "10 min").table()
    assert "MTBF 1 day, restart 10 min" in text and "All jobs at one interval" in text
    assert np.all([len(line) <= 100 for line in text.splitlines()])

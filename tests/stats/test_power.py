"""The long-run power of a base fleet from the law (MODEL.md E6; stats.power):
against every writer set's exact probability, and against the engine."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from enumeration import exact_law, small_fleets
from hypothesis import given, settings
from hypothesis import strategies as st

import stormsim
from stormsim import SpecError
from stormsim.stats.power import power_law

#: The law's mean (flow balance: work per second = mean work x checkpoint
#: rate) against the mean over exact writer-set probabilities: two routes
#: through ~1e-15-accurate floats of <= 8 jobs; a wrong rate factor (the cap
#: on computers, a missing job) moves it by far more.
MEAN_TOL = 1e-11

#: The engine's time-average power over 32 fleets x 2000 cycles against the
#: law: its standard error is ~2e-4 of the mean here; 5 standard errors.
ENGINE_REL_TOL = 1e-3


def _exact_power(fleet, busy, idle):
    """E[power] and P(power = x) by enumeration: computers run at min(1, C / n_c)."""
    n, cap = fleet.n_jobs, fleet.cap
    law = exact_law(fleet)
    mean, dist = Fraction(0), {}
    for S, p in law["pi"].items():
        n_c = n - sum(S)
        rc = Fraction(1) if math.isinf(cap) or n_c <= cap else Fraction(cap) / n_c
        watts = sum(Fraction(idle[i]) + (0 if S[i] else rc * Fraction(busy[i] - idle[i]))
                    for i in range(n))
        mean += p * watts
        dist[watts] = dist.get(watts, 0) + p
    return mean, dist


@settings(max_examples=40, deadline=None)
@given(fleet=small_fleets(), equal_drop=st.booleans(), data=st.data())
def test_mean_and_distribution_against_every_writer_set(fleet, equal_drop, data):
    n = fleet.n_jobs
    idle = data.draw(st.lists(st.floats(0.0, 300.0), min_size=n, max_size=n))
    drops = data.draw(st.lists(st.floats(1.0, 700.0), min_size=n, max_size=n))
    drops = [drops[0]] * n if equal_drop else drops
    busy = [a + b for a, b in zip(idle, drops)]
    got = power_law(fleet, busy, idle)
    mean, dist = _exact_power(fleet, busy, idle)
    assert got.mean == pytest.approx(float(mean), rel=MEAN_TOL)
    if not equal_drop and len(set(drops)) > 1:
        assert got.levels is None
        return
    for q in (0.01, 0.5, 0.99):
        cdf, want = Fraction(0), None
        for watts in sorted(dist):
            cdf += dist[watts]
            if cdf >= Fraction(q):
                want = watts
                break
        assert got.quantile(q) == pytest.approx(float(want), rel=MEAN_TOL)


def test_mean_agrees_with_the_engine():
    fleet = stormsim.Fleet.identical(12, load=0.8, jitter=0.05)
    law = power_law(fleet, 700.0, 100.0)
    run = stormsim.simulate(fleet, launch="random", fleets=32, cycles=2000, burn_in=100, seed=3)
    share = run.occupancy / run.occupancy.sum(axis=1, keepdims=True)
    simulated = float(np.mean(share @ law.levels))
    assert simulated == pytest.approx(law.mean, rel=ENGINE_REL_TOL)


@pytest.mark.parametrize(("busy", "idle", "match"), [
    (-1.0, 0.0, r"busy_power\[0\] = -1.0: must be a finite power"),
    (700.0, math.nan, r"idle_power\[0\] = nan: must be a finite power"),
    (100.0, 700.0, r"idle_power\[0\] = 700.0 W > busy_power\[0\] = 100.0 W"),
])
def test_bad_power_is_refused_by_name(busy, idle, match):
    with pytest.raises(SpecError, match=match):
        power_law(stormsim.Fleet.identical(4, load=0.5, jitter=0.01), busy, idle)


def test_quantile_without_a_distribution_says_why():
    fleet = stormsim.Fleet(T=[1.0, 2.0], d=[0.1, 0.2], jitter=0.02)
    with pytest.raises(SpecError, match="unequal watts"):
        power_law(fleet, [700.0, 1400.0], 100.0).quantile(0.5)

"""Fleets in physical units (MODEL.md E4): conversions, job tables, errors, results."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

import stormsim
from stormsim import SpecError
from stormsim.stats import physical
from stormsim.engine import jobcsv, units
from stormsim.stats.analysis import tail_probability
from stormsim.stats.survival import median_survival, passage_times
from stormsim.stats.tails import tail_estimate
from conftest import ROOT

pint = pytest.importorskip("pint")  # the [units] extra; in the test extra, so present in `make test`


#: Unit conversions are one or two float operations (a prefix factor, a
#: division): exact to a few ulps.
CONVERSION_RTOL = 1e-14
#: A lone job's simulated period is a sum of a few event times over many
#: cycles: rounding accumulates to ~cycles ulps of the period.
PERIOD_RTOL = 1e-11
#: A fleet given in minutes integrates the same dynamics as one in seconds,
#: each amount scaled by 60 (inexact in floating point); event times agree
#: to rounding growth over the run's few hundred cycles.
SCALED_RTOL = 1e-9


def hpc(**kw):
    base = dict(n_jobs=24, compute_interval="30 min", size="156 GB", bandwidth="5 TB/s")
    base.update(kw)
    return stormsim.Fleet.from_jobs(**base)


# -- conversions --------------------------------------------------------------

def test_hpc_flash_fleet_converts_to_seconds():
    fleet = hpc()
    assert fleet.n_jobs == 24
    np.testing.assert_allclose(fleet.T, 1800.0, rtol=CONVERSION_RTOL)
    np.testing.assert_allclose(fleet.d, 156e9 / 5e12, rtol=CONVERSION_RTOL)   # 0.0312 s alone
    assert fleet.load == pytest.approx(24 * 0.0312 / 1800, rel=CONVERSION_RTOL)  # ~0.04%


def test_prefixes_si_iec_and_bits():
    # 782 GiB is 840 GB (to 0.03%); 20 Gbit/s is 2.5 GB/s; 2.5 GiB/s is not.
    gib = stormsim.Fleet.from_jobs(n_jobs=1, compute_interval="1 h", size="782 GiB",
                                   bandwidth="2.5 GiB/s")
    gb = stormsim.Fleet.from_jobs(n_jobs=1, compute_interval="60 min", size="840 GB",
                                  bandwidth="20 Gbit/s")
    assert gib.d[0] == pytest.approx(782 / 2.5, rel=CONVERSION_RTOL)     # 312.8 s
    assert gb.d[0] == pytest.approx(336.0, rel=CONVERSION_RTOL)
    assert gb.T[0] == gib.T[0] == 3600.0
    q = units.registry().Quantity
    same = stormsim.Fleet.from_jobs(n_jobs=1, compute_interval=q(1, "hour"), size=q(840, "GB"),
                                    bandwidth=q(2.5e9, "byte/s"))
    assert same == gb


def test_per_job_values_and_broadcast():
    fleet = stormsim.Fleet.from_jobs(compute_interval=["30 min", "1 h", "45 min"], size="10 GB",
                                     bandwidth="1 GB/s", jitter=["1 s", "2 s", "0 s"])
    np.testing.assert_array_equal(fleet.T, [1800.0, 3600.0, 2700.0])
    np.testing.assert_allclose(fleet.d, 10.0, rtol=CONVERSION_RTOL)
    np.testing.assert_array_equal(fleet.jitter, [1.0, 2.0, 0.0])


def _lone_period(fleet, cycles=200):
    run = stormsim.simulate(fleet, launch="sync", fleets=1, cycles=cycles, record_firings=True)
    return np.diff(run.firings[0, 0])


@pytest.mark.parametrize("cap", [math.inf, 1.0, 0.6])
def test_checkpoint_period_is_the_lone_jobs_wall_clock_period(cap):
    # The kernel, not the conversion formula, says what period a lone job has.
    fleet = stormsim.Fleet.from_jobs(n_jobs=1, checkpoint_period="30 min", size="840 GB",
                                     bandwidth="2.5 GB/s", cap=cap)
    c = min(1.0, cap)
    assert fleet.T[0] == pytest.approx(c * (1800.0 - 336.0), rel=CONVERSION_RTOL)
    np.testing.assert_allclose(_lone_period(fleet), 1800.0, rtol=PERIOD_RTOL)
    # compute_interval is the compute time between checkpoints: the period adds the write
    other = stormsim.Fleet.from_jobs(n_jobs=1, compute_interval="30 min", size="840 GB",
                                     bandwidth="2.5 GB/s", cap=cap)
    np.testing.assert_allclose(_lone_period(other), 1800.0 / c + 336.0, rtol=PERIOD_RTOL)


def test_checkpoint_period_of_async_jobs_is_their_lone_cycle():
    for cap, eps in ((math.inf, 0.0), (math.inf, 0.3), (0.7, 0.5)):
        fleet = stormsim.Fleet.from_jobs(n_jobs=1, checkpoint_period="30 min", size="840 GB",
                                         bandwidth="2.5 GB/s", checkpoint="async",
                                         snapshot="20 s", slowdown=eps, cap=cap)
        c = min(1.0, cap)
        assert fleet.T[0] == pytest.approx(c * (1800.0 - 20.0 - eps * 336.0), rel=CONVERSION_RTOL)
        np.testing.assert_allclose(_lone_period(fleet), 1800.0, rtol=PERIOD_RTOL)


def test_async_fields_pass_through():
    fleet = stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="30 min", size="10 GB",
                                     bandwidth="1 GB/s", checkpoint="async", snapshot="5 s",
                                     slowdown=0.1, on_busy="skip", weight=[1.0, 3.0])
    assert list(fleet.checkpoint) == ["async", "async"] and list(fleet.on_busy) == ["skip"] * 2
    np.testing.assert_array_equal(fleet.snapshot, 5.0)
    np.testing.assert_array_equal(fleet.slowdown, 0.1)
    np.testing.assert_array_equal(fleet.weights, [1.0, 3.0])
    # per job, from a job table's columns too
    mixed = stormsim.Fleet.from_jobs(compute_interval="30 min", size="10 GB", bandwidth="1 GB/s",
                                     checkpoint=["blocking", "async"], snapshot=["0 s", "5 s"])
    assert list(mixed.checkpoint) == ["blocking", "async"]
    # blocking fleets pass no async keyword: all at the engine's defaults
    for extra in ({}, {"checkpoint": "blocking"}, {"checkpoint": ["blocking", "blocking"]}):
        assert stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="30 min", size="10 GB",
                                        bandwidth="1 GB/s", **extra) == stormsim.Fleet(
            T=[1800.0] * 2, d=[10.0] * 2)


def test_writer_cap_passes_through_from_jobs_and_job_tables(tmp_path):
    """max_writers is the fleet's E5 cap K, one integer like cap, next to the
    async options; a job table takes it as a keyword (it is no job's column)."""
    base = dict(n_jobs=4, compute_interval="30 min", size="10 GB", bandwidth="1 GB/s")
    capped = stormsim.Fleet.from_jobs(**base, max_writers=3)
    assert capped.max_writers == 3 and capped == stormsim.Fleet(T=[1800.0] * 4, d=[10.0] * 4,
                                                                 max_writers=3)
    assert stormsim.Fleet.from_jobs(**base).max_writers == 4            # None: no cap (K = N)
    both = stormsim.Fleet.from_jobs(**base, checkpoint="async", snapshot="5 s", slowdown=0.1,
                                    on_busy="skip", max_writers=1)
    assert both.max_writers == 1 and list(both.checkpoint) == ["async"] * 4
    np.testing.assert_array_equal(both.snapshot, 5.0)
    path = write(tmp_path, "compute_interval [min],size [GB],jitter [s]\n30,10,1\n30,10,1\n"
                           "30,10,1\n")
    assert stormsim.Fleet.from_csv(path, bandwidth="1 GB/s", max_writers=2).max_writers == 2
    with pytest.raises(SpecError, match=r"^max_writers = 4: must be an integer in 1\.\.3"):
        stormsim.Fleet.from_csv(path, bandwidth="1 GB/s", max_writers=4)


# -- results in physical terms ----------------------------------------------------

@pytest.fixture(scope="module")
def pod_runs():
    fleet = stormsim.Fleet.from_jobs(n_jobs=8, compute_interval="15 min", size="96 GB",
                                     bandwidth="80 GB/s", jitter="9 s")
    occ = stormsim.simulate(fleet, fleets=200, cycles=500, seed=3)
    first = stormsim.simulate(fleet, fleets=400, cycles=500, passage_level=2, seed=4)
    return fleet, occ, first


def test_storm_time_per_day_is_the_pooled_time_fraction_times_a_day(pod_runs):
    _, occ, _ = pod_runs
    est = physical.storm_time_per_day(occ, level=2, unit="min")
    pooled = occ.occupancy[:, 2:].sum() / occ.occupancy.sum()
    assert est.value == pytest.approx(pooled * 1440.0, rel=CONVERSION_RTOL)
    assert est.lo < est.value < est.hi and est.unit == "min/day"
    # the per-fleet fractions are what the ratio's interval is about
    per_fleet = tail_probability(occ.occupancy, 2) * 1440.0
    assert per_fleet.min() < est.lo and est.hi < per_fleet.max()
    # a unit is a unit: seconds per day are 60 x minutes per day
    assert physical.storm_time_per_day(occ, 2, unit="s").value == pytest.approx(60 * est.value,
                                                                           rel=CONVERSION_RTOL)


def test_storm_time_interval_covers_a_ten_times_larger_run(pod_runs):
    # Fixed seeds: deterministic. The 95% interval of 200 fleets holds the
    # estimate of 2000 other fleets (whose own error is ~3x smaller).
    fleet, occ, _ = pod_runs
    est = physical.storm_time_per_day(occ, level=2)
    big = physical.storm_time_per_day(stormsim.simulate(fleet, fleets=2000, cycles=500, seed=30), 2)
    assert est.lo <= big.value <= est.hi
    assert big.hi - big.lo < est.hi - est.lo


def test_write_time_of_uncontended_jobs_is_their_lone_share():
    # ideal throughput: no contention, each job writes d of every T + d exactly
    fleet = stormsim.Fleet.from_jobs(n_jobs=4, compute_interval="30 min", size="840 GB",
                                     bandwidth="2.5 GB/s", throughput="ideal")
    cycles = 400
    run = stormsim.simulate(fleet, fleets=20, cycles=cycles, seed=5)
    est = physical.write_time_per_day(run, unit="h")
    lone = 24.0 * 336.0 / 2136.0
    # the measured window ends at the slowest job's K-th firing: edges are
    # off by at most one write per job in K cycles
    assert est.value == pytest.approx(lone, rel=2.0 / cycles)
    assert est.unit == "h/day per job"


def test_no_storm_time_gives_a_bound_not_a_bare_zero():
    # two jobs launched half a cycle apart at a low load, no jitter: never overlap
    fleet = stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="30 min", size="1 GB",
                                     bandwidth="1 GB/s")
    run = stormsim.simulate(fleet, launch=[0.0, 0.5], fleets=50, cycles=100)
    est = physical.storm_time_per_day(run, level=2)
    assert est.value == 0.0 and est.lo == 0.0
    # the mean share is at most P(a fleet reaches 2), which 50 misses bound
    assert est.hi == pytest.approx((1.0 - 0.05 ** (1 / 50)) * 1440.0, rel=CONVERSION_RTOL)
    assert "one-sided upper bound" in est.method


def test_storm_time_interval_is_the_tails_interval(pod_runs):
    _, occ, _ = pod_runs
    tails = tail_estimate(occ.occupancy)
    for k in (2, 3):
        est = physical.storm_time_per_day(occ, level=k, unit="h")
        assert (est.lo, est.hi) == pytest.approx((tails.p_ge_lo[k] * 24.0, tails.p_ge_hi[k] * 24.0),
                                                       rel=CONVERSION_RTOL)


def test_time_to_passage_is_the_kaplan_meier_median_in_hours(pod_runs):
    _, _, first = pod_runs
    est = physical.time_to_passage(first, unit="h")
    t, observed = passage_times(first.passage_cycle, first.cycles, first.passage_time,
                                first.end_time)
    med, lo, hi = median_survival(t, observed)
    assert (est.value, est.lo, est.hi) == pytest.approx((med / 3600, lo / 3600, hi / 3600),
                                                              rel=CONVERSION_RTOL)
    assert est.lo <= est.value <= est.hi
    assert physical.time_to_passage(first, unit="min").value == pytest.approx(60 * est.value,
                                                                         rel=CONVERSION_RTOL)


def test_time_unit_reads_a_fleet_given_in_minutes():
    seconds = stormsim.Fleet.from_jobs(n_jobs=6, compute_interval="15 min", size="96 GB",
                                       bandwidth="8 GB/s", jitter="9 s")
    minutes = stormsim.Fleet(T=seconds.T / 60.0, d=seconds.d / 60.0, jitter=seconds.jitter / 60.0)
    kw = dict(fleets=100, cycles=300, passage_level=2, seed=6)
    a = physical.time_to_passage(stormsim.simulate(seconds, **kw), unit="h")
    b = physical.time_to_passage(stormsim.simulate(minutes, **kw), unit="h", time_unit="min")
    assert (b.value, b.lo, b.hi) == pytest.approx((a.value, a.lo, a.hi), rel=SCALED_RTOL)
    pa = physical.passage_probability(stormsim.simulate(seconds, **kw), within="2 h")
    pb = physical.passage_probability(stormsim.simulate(minutes, **kw), within="120 min",
                                   time_unit="min")
    assert pa == pb


def test_passage_probability_is_a_proportion_with_an_exact_interval(pod_runs):
    _, _, first = pod_runs
    est = physical.passage_probability(first, within="3 h")
    x = int((first.passage_time <= 3 * 3600.0).sum())
    ci = binomtest(x, first.fleets).proportion_ci(confidence_level=0.95, method="exact")
    assert (est.value, est.lo, est.hi) == (x / first.fleets, ci.low, ci.high)
    assert 0 < x < first.fleets


def test_passage_probability_refuses_a_horizon_the_runs_do_not_cover(pod_runs):
    fleet, _, _ = pod_runs
    first = stormsim.simulate(fleet, fleets=50, cycles=5, passage_level=2, seed=7)
    assert not first.passed.all()
    with pytest.raises(SpecError, match=r"fleets stopped before within = '1 year' without a "
                                        r"passage .* raise cycles"):
        physical.passage_probability(first, within="1 year")


def test_result_helpers_refuse_runs_they_cannot_read(pod_runs):
    _, occ, first = pod_runs
    with pytest.raises(SpecError, match=r"stopped each fleet at its passage.*stop_at_passage=False"):
        physical.storm_time_per_day(first)
    with pytest.raises(SpecError, match=r"needs a run with a passage_level"):
        physical.time_to_passage(occ)
    with pytest.raises(SpecError, match=r"level = 9: must be an integer in 1..8 \(a level k of N = 8 jobs\)"):
        physical.storm_time_per_day(occ, level=9)
    with pytest.raises(SpecError, match=r"unit = '1 GB' is a size: must be a time"):
        physical.storm_time_per_day(occ, unit="GB")
    one = stormsim.simulate(stormsim.Fleet.identical(2, load=0.3), fleets=1, cycles=10)
    with pytest.raises(SpecError, match=r"at least 2"):
        physical.write_time_per_day(one)


# -- job tables ----------------------------------------------------------------

def write(tmp_path, text, name="jobs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_example_pod_table_reads_as_its_comment_says():
    fleet = stormsim.Fleet.from_csv(ROOT / "examples" / "gpu_pod.csv", bandwidth="80 GB/s")
    assert fleet.n_jobs == 8
    np.testing.assert_array_equal(fleet.T, 900.0)
    np.testing.assert_allclose(fleet.d, 96e9 / 80e9, rtol=CONVERSION_RTOL)
    np.testing.assert_array_equal(fleet.jitter, 9.0)
    assert jobcsv.read_jobs(ROOT / "examples" / "gpu_pod.csv")["names"][0] == "pod-job-0"


def test_csv_units_in_the_header_or_in_each_cell(tmp_path):
    header = write(tmp_path, "# a comment\nname,compute_interval [h],size [GiB],jitter [min]\n"
                             "a,0.5,100,1\nb,1,200,0\n", "header.csv")
    cells = write(tmp_path, "compute_interval,size,jitter\n30 min,100 GiB,60 s\n"
                            "3600 s,200 GiB,0 s\n", "cells.csv")
    a = stormsim.Fleet.from_csv(header, bandwidth="1 GB/s")
    b = stormsim.Fleet.from_csv(cells, bandwidth="8 Gbit/s")
    assert a == b
    np.testing.assert_array_equal(a.T, [1800.0, 3600.0])
    np.testing.assert_allclose(a.d, [100 * 2**30 / 1e9, 200 * 2**30 / 1e9], rtol=CONVERSION_RTOL)
    np.testing.assert_array_equal(a.jitter, [60.0, 0.0])
    assert jobcsv.read_jobs(cells)["names"] == ["job-0", "job-1"]


def test_csv_checkpoint_period_column(tmp_path):
    path = write(tmp_path, "checkpoint_period [min],size [GB],jitter [s]\n30,840,0\n")
    fleet = stormsim.Fleet.from_csv(path, bandwidth="2.5 GB/s")
    assert fleet.T[0] == pytest.approx(1800.0 - 336.0, rel=CONVERSION_RTOL)


# -- errors of from_jobs ----------------------------------------------------------

@pytest.mark.parametrize("kw, message", [
    (dict(compute_interval=30), r"compute_interval = 30: a plain number is ambiguous; give its "
                                r"unit, e.g. '30 min'"),
    (dict(compute_interval="30"), r"compute_interval = '30' is a plain number: must be a time"),
    (dict(compute_interval="30 GB"), r"compute_interval = '30 GB' is a size: must be a time"),
    (dict(compute_interval="30 minn"), r"'30 minn': not a quantity pint can read"),
    (dict(compute_interval="-30 min"), r"compute_interval = '-30 min': must be finite and > 0"),
    (dict(compute_interval="nan min"), r"must be finite and > 0"),
    (dict(compute_interval=np.array([30.0, 40.0])), r"plain numbers are ambiguous"),
    (dict(compute_interval=True), r"must be a quantity"),
    (dict(size="1 s"), r"size = '1 s' is a time: must be a size, e.g. '156 GB'"),
    (dict(size="0 GB"), r"size = '0 GB': must be finite and > 0"),
    (dict(size=["1 GB", "-2 GB"]), r"size\[1\] = '-2 GB': must be finite and > 0"),
    (dict(size=[]), r"size = \[\]: a fleet needs at least one job"),
    (dict(size=["1 GB"] * 3), r"per-job values have different lengths \(size: 3, n_jobs: 2\)"),
    (dict(bandwidth="5 TB"), r"bandwidth = '5 TB' is a size: must be a bandwidth"),
    # a unit of another quantity (G is pint's gauss): named in words, not pint's dimensions
    (dict(size="840G"), r"^size = '840G' is in gauss \(G\), not a unit of time, size or "
     r"bandwidth: must be a size, e.g. '156 GB' \(bytes or bits: B, kB, MB, GB, TB, GiB, bit, "
     r"Gbit\); did you mean '840GB'\?$"),
    (dict(bandwidth="40G/s"), r"^bandwidth = '40G/s' is in gauss / second \(G / s\), not a unit "
     r"of time, size or bandwidth: must be a bandwidth, e.g. '5 TB/s' \(a size per unit of "
     r"time: MB/s, GB/s, TB/s, Gbit/s\); did you mean '40GB/s'\?$"),
    (dict(size="840 m"), r"^size = '840 m' is in meter \(m\), not a unit of time, size or "
     r"bandwidth: must be a size, e.g. '156 GB' \(bytes or bits: [^)]*\)$"),     # no guess
    (dict(compute_interval="30 G"), r"^compute_interval = '30 G' is in gauss \(G\), not a unit "
     r"of time, size or bandwidth: must be a time, e.g. '30 min' \(seconds, minutes or hours: "
     r"s, min, h\)$"),
    (dict(bandwidth="5 percent"), r"bandwidth = '5 percent' is a plain number: must be a bandwidth"),
    (dict(bandwidth=["1 GB/s", "2 GB/s"]), r"bandwidth has 2 values: give one"),
    (dict(jitter="-1 s"), r"jitter = '-1 s': must be finite and >= 0"),
    (dict(slowdown=1.5), r"slowdown = 1.5: must be in \[0, 1\]"),
    (dict(weight=0.0), r"weight = 0.0: must be finite and > 0"),
    (dict(snapshot="-2 s"), r"snapshot = '-2 s': must be finite and >= 0"),
    (dict(checkpoint="asynch"), r"checkpoint = 'asynch': must be one of 'blocking', 'async'"),
    (dict(on_busy="wait"), r"on_busy = 'wait': must be one of 'block', 'skip'"),
    (dict(checkpoint_period="30 min"), r"give exactly one of compute_interval .* got both"),
    (dict(compute_interval=None), r"give exactly one of compute_interval .* got neither"),
    (dict(n_jobs=None), r"give n_jobs, the number of jobs"),
    (dict(n_jobs=0), r"n_jobs = 0: must be an integer >= 1"),
    (dict(cap="lots"), r"cap = 'lots': must be a number > 0"),
    (dict(throughput="fast"), r"throughput = 'fast': must be 'fair', 'ideal'"),
    (dict(max_writers=0), r"max_writers = 0: must be an integer in 1\.\.2 \(at most this many "
     r"of the N = 2 jobs write at once; None: no cap\)"),
    (dict(max_writers=3), r"max_writers = 3: must be an integer in 1\.\.2"),
    (dict(max_writers="2"), r"max_writers = '2': must be an integer"),
    (dict(max_writers=2.0), r"max_writers = 2\.0: must be an integer"),
])
def test_from_jobs_errors_name_the_parameter_the_value_and_the_rule(kw, message):
    base = dict(n_jobs=2, compute_interval="30 min", size="10 GB", bandwidth="1 GB/s")
    base.update(kw)
    base = {k: v for k, v in base.items() if v is not None}
    with pytest.raises(SpecError, match=message):
        stormsim.Fleet.from_jobs(**base)


@pytest.mark.parametrize("extra, message", [
    ({}, r"checkpoint_period\[0\] = 300 s is too short: the write alone takes 336 s"),
    ({"checkpoint": "async", "snapshot": "10 s", "slowdown": 1.0},
     r"too short: the snapshot plus the slowed compute while persisting takes 346 s"),
])
def test_checkpoint_period_shorter_than_the_write_is_refused(extra, message):
    with pytest.raises(SpecError, match=message):
        stormsim.Fleet.from_jobs(n_jobs=1, checkpoint_period="5 min", size="840 GB",
                                 bandwidth="2.5 GB/s", **extra)


# -- storm episodes (MODEL.md E3) --------------------------------------------------

#: A storm count over K cycles is off by at most one at each end of the window.
def _edge_rtol(cycles):
    return 2.0 / cycles


def test_storms_per_day_of_a_locked_pair_is_one_per_cycle():
    # ideal throughput, no jitter: both jobs keep the lone period T + d and
    # their writes overlap once a cycle, so one storm (n_w >= 2) per period
    fleet = stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="30 min", size="840 GB",
                                     bandwidth="2.5 GB/s", throughput="ideal")
    cycles = 400
    run = stormsim.simulate(fleet, launch=[1.0, 0.95], fleets=4, cycles=cycles)
    est = physical.storms_per_day(run, level=2)
    assert est.value == pytest.approx(86400.0 / (1800.0 + 336.0), rel=_edge_rtol(cycles))
    # each storm lasts the overlap of the two writes: d - 0.05 T
    dur = physical.storm_duration(run, level=2, unit="s")
    assert dur.value == pytest.approx(336.0 - 0.05 * 1800.0, rel=_edge_rtol(cycles))


def test_storms_per_day_pools_up_crossings_over_measured_time(pod_runs):
    _, occ, _ = pod_runs
    est = physical.storms_per_day(occ, level=2)
    rate = occ.upcrossings[:, 2].sum() / occ.occupancy.sum()
    assert est.value == pytest.approx(rate * 86400.0, rel=CONVERSION_RTOL)
    assert est.lo < est.value < est.hi
    in_minutes = physical.storms_per_day(occ, level=2, time_unit="min")
    assert in_minutes.value == pytest.approx(est.value / 60.0, rel=CONVERSION_RTOL)
    dur = physical.storm_duration(occ, level=2)
    assert dur.value == pytest.approx(occ.occupancy[:, 2:].sum() / occ.upcrossings[:, 2].sum(),
                                      rel=CONVERSION_RTOL)


def test_no_storms_give_a_poisson_bound():
    fleet = stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="30 min", size="1 GB",
                                     bandwidth="1 GB/s")
    run = stormsim.simulate(fleet, launch=[0.0, 0.5], fleets=50, cycles=100)
    est = physical.storms_per_day(run, level=2)
    days = run.occupancy.sum() / 86400.0
    assert est.value == 0.0
    assert est.hi == pytest.approx(3.6889 / days, rel=1e-4)   # chi2(0.975, 2)/2 = 3.6889
    with pytest.raises(SpecError, match=r"no storm reached level 2"):
        physical.storm_duration(run, level=2)


# -- job tables in sweep files (keys 'jobs' and 'bandwidth') ------------------------

POD_SWEEP = """
[fixed]
jobs = "{jobs}"
launch = "random"
fleets = 8
cycles = 20
[grid]
bandwidth = ["20 GB/s", "80 GB/s"]
"""


def test_sweep_job_table_cells_are_the_tables_fleets(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pod.csv").write_text((ROOT / "examples" / "gpu_pod.csv").read_text())
    sweep_file = tmp_path / "sub" / "pod.toml"
    sweep_file.write_text(POD_SWEEP.format(jobs="pod.csv"))   # relative to the sweep file
    sweep = stormsim.load_sweep(sweep_file)
    for cell, bw in zip(sweep.cells, ("20 GB/s", "80 GB/s")):
        assert cell.fleet == stormsim.Fleet.from_csv(ROOT / "examples" / "gpu_pod.csv",
                                                     bandwidth=bw)
        assert cell.values["N"] == 8 and cell.values["bandwidth"] == bw
        assert cell.values["jobs"] == "pod.csv"
    # the fleet enters the seed through its encoding: the same fleet given as
    # N, T, d and jitter gets the same run seed
    plain = stormsim.parse_sweep("[fixed]\nN = 8\nT = 900.0\nd = 1.2\njitter = 9.0\n"
                                 "launch = 'random'\nfleets = 8\ncycles = 20\n")
    assert plain.cells[0].fleet == sweep.cells[1].fleet
    assert plain.cells[0].run_seed == sweep.cells[1].run_seed


def test_example_sweep_file_runs_from_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                  # not the examples folder
    sweep = stormsim.load_sweep(ROOT / "examples" / "gpu_pod_bandwidth.toml")
    assert [c.fleet.d[0] for c in sweep.cells] == pytest.approx([96 / 5, 96 / 20, 96 / 80],
                                                                rel=CONVERSION_RTOL)


@pytest.mark.parametrize("fixed, message", [
    ('jobs = "pod.csv"', r"'jobs' \(a CSV job table\) and 'bandwidth' .* go together: give both; "
                         r"got only jobs"),
    ('bandwidth = "80 GB/s"\nN = 8\nd = 0.1', r"give both; got only bandwidth"),
    ('jobs = "pod.csv"\nbandwidth = "80 GB/s"\nN = 8\nT = 2.0',
     r"jobs \(a job table\) gives every job's T, d and jitter: leave out 'N', 'T'"),
    ('jobs = "missing.csv"\nbandwidth = "80 GB/s"', r"job table .*missing.csv.*cannot be read"),
    ('jobs = "pod.csv"\nbandwidth = "80 GB"', r"\[fixed\] bandwidth = \"80 GB\": it is a size: must "
                                              r"be a bandwidth"),
    ('jobs = "pod.csv"\nbandwidth = 80', r"\[fixed\] bandwidth = 80: must be a string, a number "
                                         r"and its unit"),
    ('jobs = 3\nbandwidth = "80 GB/s"', r"\[fixed\] jobs = 3: must be a string"),
])
def test_sweep_job_table_errors(tmp_path, fixed, message):
    (tmp_path / "pod.csv").write_text((ROOT / "examples" / "gpu_pod.csv").read_text())
    path = tmp_path / "bad.toml"
    path.write_text(f"[fixed]\n{fixed}\nfleets = 4\ncycles = 10\n")
    with pytest.raises(stormsim.SweepError, match=message):
        stormsim.load_sweep(path)


def test_csv_async_columns(tmp_path):
    path = write(tmp_path, "compute_interval [min],size [GB],checkpoint,snapshot [s],slowdown,"
                           "on_busy,weight,jitter [%]\n30,840,async,10,0.05,skip,2,0\n"
                           "30,840,blocking,0,0,block,1,0\n")
    fleet = stormsim.Fleet.from_csv(path, bandwidth="2.5 GB/s")
    assert list(fleet.checkpoint) == ["async", "blocking"]
    np.testing.assert_array_equal(fleet.snapshot, [10.0, 0.0])
    np.testing.assert_array_equal(fleet.slowdown, [0.05, 0.0])
    np.testing.assert_array_equal(fleet.weights, [2.0, 1.0])
    assert list(fleet.on_busy) == ["skip", "block"]

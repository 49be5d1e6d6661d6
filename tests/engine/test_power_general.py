"""MODEL.md E6 in the general kernel (``run_fleets_general_power``): async
jobs (both rules, snapshots, slowdowns), unequal weights, writer caps (E5)
and the power cap C, power's mean, minimum and maximum and the ramps R_D
draw for draw against the reference integrator (tests/reference.py
``power_outputs``), the same bits whatever the threads and batches, and
every other output the same bits as without power."""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_power_kernel import OTHER_FIELDS, POWER_FIELDS, RTOL
from test_reference import horizon

import stormsim
from reference import simulate_reference
from stormsim import Fleet
from stormsim.engine.door import PW_BINS, root_key

#: The general kernel's outputs beyond the anonymous kernel's.
GENERAL_FIELDS = ("waits", "wait_time", "skips", "wait_sum", "wait_max", "wait_hist")


def general_case(seed, failures=False):
    """A small fleet for the general kernel with power: async, blocking or
    mixed jobs (snapshots, slowdowns 0, 1 or between, both rules), unequal
    weights or not, a writer cap or not, a power cap or not, equal or unequal
    drops, jitter or none, a burn-in, maybe a first passage that stops it;
    with ``failures``, job failures and outages (MODEL.md E8) too."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    hetero = bool(rng.integers(2))
    T = rng.uniform(0.3, 3.0, n if hetero else 1).repeat(1 if hetero else n)
    d = rng.uniform(0.02, 0.8, n if hetero else 1).repeat(1 if hetero else n)
    kw = {}
    mode = int(rng.integers(3))  # blocking, async, mixed
    if mode:
        is_async = [True] * n if mode == 1 else [bool(x) for x in rng.integers(0, 2, n)]
        is_async[int(rng.integers(n))] = True
        kw["checkpoint"] = ["async" if a else "blocking" for a in is_async]
        kw["snapshot"] = [float(rng.uniform(0.0, 0.4)) * bool(rng.integers(2)) if a else 0.0
                          for a in is_async]
        kw["slowdown"] = [float([0.0, 1.0, rng.uniform(0.0, 1.0)][int(rng.integers(3))])
                          if a else 0.0 for a in is_async]
        kw["on_busy"] = [["block", "skip"][int(rng.integers(2))] if a else "block"
                         for a in is_async]
    if rng.integers(2):
        kw["weights"] = rng.uniform(0.2, 5.0, n).tolist()
    if n > 1 and rng.integers(2):
        kw["max_writers"] = int(rng.integers(1, n))
    if failures:
        kw["mtbf"] = rng.uniform(3.0, 30.0, n).tolist() if rng.integers(4) else math.inf
        kw["restart"] = rng.uniform(0.0, 1.0, n).tolist()
        kw["outage_mtbf"] = float(rng.uniform(5.0, 40.0)) if rng.integers(2) else math.inf
    cap = math.inf if rng.integers(2) else float(rng.uniform(0.5, n + 0.5))
    jitter = 0.0 if rng.integers(3) == 0 else float(rng.uniform(0.0, 0.3))
    throughput = ["fair", "ideal", ("power", float(rng.uniform(0.2, 1.0)))][int(rng.integers(3))]
    if rng.integers(2):  # equal drops
        idle = [float(rng.uniform(0.0, 200.0))] * n
        busy = [idle[0] + float(rng.uniform(50.0, 800.0))] * n
    else:
        idle = rng.uniform(0.0, 300.0, n).tolist()
        busy = (np.array(idle) + rng.uniform(1.0, 800.0, n)).tolist()
    fleet = Fleet(T=T.tolist(), d=d.tolist(), cap=cap, throughput=throughput, jitter=jitter,
                  busy_power=busy, idle_power=idle, **kw)
    theta = np.zeros(n) if rng.integers(4) == 0 else rng.uniform(0.0, 1.0, n)
    cycles = int(rng.integers(2, 3 + 3 * horizon(fleet)))
    burn_in = int(rng.integers(0, cycles))
    level = int(rng.integers(1, n + 1)) if rng.integers(4) == 0 else None
    spread = float(np.max(busy) - np.min(idle)) * n
    D = tuple(rng.uniform(0.05, 4.0, int(rng.integers(1, 4))).tolist())
    X = (0.0, *rng.uniform(1.0, spread, int(rng.integers(1, 4))).tolist())
    return fleet, theta, cycles, burn_in, level, D, X


def reference_of(fleet, theta, cycles, burn_in, level, D, X, seed):
    key = tuple(int(k) for k in root_key(seed))
    failures = {}
    if fleet.has_failures:
        failures = dict(mtbf=fleet.mtbf, restart=fleet.restart, outage_mtbf=fleet.outage_mtbf)
    return simulate_reference(fleet.T, fleet.d, fleet.jitter, fleet.cap, fleet.f, theta, cycles,
                              burn_in=burn_in, level=level or 0, key=key,
                              checkpoint=fleet.checkpoint, snapshot=fleet.snapshot,
                              slowdown=fleet.slowdown, on_busy=fleet.on_busy,
                              weights=fleet.weights, max_writers=fleet.max_writers,
                              busy_power=fleet.busy_power, idle_power=fleet.idle_power,
                              ramp_x=X, ramp_d=D, **failures)


def assert_power_matches(run, ref, fleet, D, X, row=0):
    """A run's E6 fields (fleet ``row``) against the reference's."""
    assert run.ramp_windows == D and run.ramp_thresholds == X
    assert run.ramp_events.dtype == np.int64
    if math.isnan(ref["power_mean"]):  # stopped before the window opened
        for name in ("power_mean", "power_min", "power_max", "power_p01", "power_p99"):
            assert math.isnan(getattr(run, name)[row]), name
        assert np.all(np.isnan(run.ramp_share[row])) and not run.ramp_events[row].any()
        return
    scale = float(np.max(fleet.busy_power)) * fleet.n_jobs
    for name in ("power_mean", "power_min", "power_max"):
        assert abs(getattr(run, name)[row] - ref[name]) <= RTOL * scale, name
    assert_percentiles_match(run, ref, fleet, row)
    np.testing.assert_allclose(run.ramp_share[row], ref["ramp_share"], rtol=0, atol=RTOL)
    np.testing.assert_array_equal(run.ramp_events[row], ref["ramp_events"])
    np.testing.assert_allclose(run.ramp_share[row][:, 0], 1.0, rtol=0, atol=RTOL)  # R_D >= 0


def percentile_tolerance(fleet):
    """The kernels' percentiles come from a histogram of ``door.PW_BINS``
    equal bins over [sum idle, sum busy]: the level reported is in the exact
    percentile's bin (one bin's width at most), plus the levels' rounding
    (RTOL, as the mean's)."""
    width = float(np.sum(fleet.busy_power) - np.sum(fleet.idle_power)) / PW_BINS
    return width + RTOL * float(np.max(fleet.busy_power)) * fleet.n_jobs


def assert_percentiles_match(run, ref, fleet, row=0):
    tol = percentile_tolerance(fleet)
    for name in ("power_p01", "power_p99"):
        got = getattr(run, name)[row]
        assert abs(got - ref[name]) <= tol, (name, got, ref[name], tol)
        # the level reported is one P took: within [min, max]
        assert run.power_min[row] <= got <= run.power_max[row], name
    assert run.power_p01[row] <= run.power_p99[row]


def _equal_weights_and_drops(fleet):
    return (np.all(fleet.weights == fleet.weights[0])
            and np.all(fleet.busy_power - fleet.idle_power
                       == fleet.busy_power[0] - fleet.idle_power[0]))


@pytest.mark.parametrize("seed", range(60))
def test_general_kernel_power_matches_the_reference(seed):
    fleet, theta, cycles, burn_in, level, D, X = general_case(seed)
    runs = [stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                              burn_in=burn_in, passage_level=level, queues=queues,
                              kernel="general", ramps=(D, X))
            for queues in ("heap", "ring")]
    ref = reference_of(fleet, theta, cycles, burn_in, level, D, X, seed)
    for run in runs:
        assert_power_matches(run, ref, fleet, D, X)
    if _equal_weights_and_drops(fleet) and np.all(np.isin(fleet.slowdown, (0.0, 1.0))):
        for name in POWER_FIELDS:  # P from the counts: the same bits whatever the queue
            np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name), name)


@pytest.mark.parametrize("seed", range(6))
def test_general_kernel_power_is_the_anonymous_kernels_on_the_base_model(seed):
    """A base-model fleet through either kernel: the same power to rounding."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 7))
    fleet = Fleet.identical(n, load=float(rng.uniform(0.3, 1.2)), jitter=0.05,
                            cap=float(rng.uniform(1.0, n + 1.0)),
                            busy_power=rng.uniform(500.0, 800.0, n).tolist() if seed % 2 else 700.0,
                            idle_power=100.0)
    D, X = (0.3, 2.0), (0.0, 150.0, 900.0)
    kw = dict(fleets=3, cycles=8, seed=seed, burn_in=2, ramps=(D, X), fast_forward=False)
    a = stormsim.simulate(fleet, kernel="anonymous", **kw)
    g = stormsim.simulate(fleet, kernel="general", **kw)
    scale = float(np.max(fleet.busy_power)) * n
    for name in ("power_mean", "power_min", "power_max", "power_p01", "power_p99"):
        np.testing.assert_allclose(getattr(g, name), getattr(a, name), rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(g.ramp_share, a.ramp_share, rtol=0, atol=RTOL)
    np.testing.assert_array_equal(g.ramp_events, a.ramp_events)


def _mixed_fleet():
    n = 8
    return Fleet(T=[1.0] * n, d=[0.7 / n] * n, jitter=0.05, cap=6.0,
                 checkpoint=["async", "blocking"] * 4, snapshot=[0.02, 0.0] * 4,
                 slowdown=[0.3, 0.0, 0.0, 0.0, 1.0, 0.0, 0.6, 0.0],
                 on_busy=["skip", "block"] * 4, weights=[1.0, 2.0] * 4, max_writers=5,
                 busy_power=[700.0 + k for k in range(n)], idle_power=100.0)


def test_general_power_is_the_same_bits_across_threads_and_batches():
    kw = dict(fleets=7, cycles=60, seed=3, burn_in=5, ramps=((0.5, 3.0), (200.0, 900.0)))
    fleet = _mixed_fleet()
    runs = [stormsim.simulate(fleet, **kw),
            stormsim.simulate(fleet, **kw, batch_size=2, threads=1),
            stormsim.simulate(fleet, **kw, batch_size=3, threads=2)]
    for run in runs[1:]:
        for name in (*POWER_FIELDS, *OTHER_FIELDS, *GENERAL_FIELDS):
            a, b = getattr(runs[0], name), getattr(run, name)
            if a is None:  # firings, not recorded
                assert b is None, name
            else:
                assert a.tobytes() == b.tobytes(), name


def test_general_power_changes_no_other_output_by_a_bit():
    powered = _mixed_fleet()
    base = powered.replace(busy_power=None, idle_power=None)
    kw = dict(fleets=5, cycles=50, seed=11, burn_in=4, record_firings=True)
    plain = stormsim.simulate(base, **kw)
    run = stormsim.simulate(powered, **kw, ramps=((1.0,), (100.0,)))
    for name in (*OTHER_FIELDS, *GENERAL_FIELDS):
        assert getattr(plain, name).tobytes() == getattr(run, name).tobytes(), name
    for name in POWER_FIELDS:
        assert getattr(plain, name) is None, name
    assert np.all(run.power_min <= run.power_mean) and np.all(run.power_mean <= run.power_max)


# -- power with failures (MODEL.md E6 with E8) ----------------------------------------

def blocking_failure_case(seed):
    """A small base-model fleet with power and failures (job failures,
    outages or both), for the anonymous kernel."""
    rng = np.random.default_rng(1000 + seed)
    fleet, theta, cycles, burn_in, level, D, X = general_case(seed)
    n = fleet.n_jobs
    fleet = Fleet(T=fleet.T.tolist(), d=fleet.d.tolist(), cap=fleet.cap,
                  throughput=fleet.throughput, jitter=fleet.jitter,
                  busy_power=fleet.busy_power.tolist(), idle_power=fleet.idle_power.tolist(),
                  mtbf=rng.uniform(3.0, 30.0, n).tolist() if rng.integers(4) else math.inf,
                  restart=rng.uniform(0.0, 1.0, n).tolist(),
                  outage_mtbf=float(rng.uniform(5.0, 40.0)) if rng.integers(2) else math.inf)
    if not fleet.has_failures:
        fleet = fleet.replace(outage_mtbf=10.0)
    return fleet, theta, cycles, burn_in, level, D, X


@pytest.mark.parametrize("seed", range(40))
def test_anonymous_kernel_power_with_failures_matches_the_reference(seed):
    fleet, theta, cycles, burn_in, level, D, X = blocking_failure_case(seed)
    assert fleet.runs_anonymous and fleet.has_failures
    runs = [stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                              burn_in=burn_in, passage_level=level, queues=queues, ramps=(D, X))
            for queues in ("heap", "ring")]
    ref = reference_of(fleet, theta, cycles, burn_in, level, D, X, seed)
    for run in runs:
        assert_power_matches(run, ref, fleet, D, X)


@pytest.mark.parametrize("seed", range(40))
def test_general_kernel_power_with_failures_matches_the_reference(seed):
    fleet, theta, cycles, burn_in, level, D, X = general_case(seed, failures=True)
    if not fleet.has_failures:
        fleet = fleet.replace(outage_mtbf=10.0)
    runs = [stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                              burn_in=burn_in, passage_level=level, queues=queues,
                              kernel="general", ramps=(D, X))
            for queues in ("heap", "ring")]
    ref = reference_of(fleet, theta, cycles, burn_in, level, D, X, seed)
    for run in runs:
        assert_power_matches(run, ref, fleet, D, X)


def test_an_outage_drops_every_computing_job_to_idle():
    """Identical jobs, an outage early and a long restart: P falls to the
    idle sum (every job DOWN), which is the window's minimum."""
    fleet = Fleet.identical(4, load=0.4, outage_mtbf=3.0, restart=5.0, busy_power=700.0,
                            idle_power=100.0)
    run = stormsim.simulate(fleet, fleets=4, cycles=6, seed=1, ramps=((1.0,), (500.0,)))
    assert np.all(run.outages >= 1)
    # exact: P from the count of computing jobs, 0 of them
    np.testing.assert_array_equal(run.power_min, 400.0)
    assert np.all(run.ramp_events[:, 0, 0] >= 1)  # each outage is a drop of >= 3 x 600 W


@pytest.mark.parametrize("general", [False, True])
def test_power_with_failures_is_the_same_bits_across_threads_and_batches(general):
    fleet = _mixed_fleet() if general else Fleet.identical(
        8, load=0.6, jitter=0.05, cap=6.0, busy_power=[700.0 + k for k in range(8)],
        idle_power=100.0)
    fleet = fleet.replace(mtbf=20.0, restart=0.5, outage_mtbf=40.0)
    kw = dict(fleets=7, cycles=40, seed=3, burn_in=5, ramps=((0.5, 3.0), (200.0, 900.0)))
    runs = [stormsim.simulate(fleet, **kw),
            stormsim.simulate(fleet, **kw, batch_size=2, threads=1),
            stormsim.simulate(fleet, **kw, batch_size=3, threads=2)]
    fields = (*POWER_FIELDS, *OTHER_FIELDS, *GENERAL_FIELDS, "failures", "lost_work",
              "down_time", "committed_work")
    for run in runs[1:]:
        for name in fields:
            a, b = getattr(runs[0], name), getattr(run, name)
            if a is None:
                assert b is None, name
            else:
                assert a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("general", [False, True])
def test_power_with_failures_changes_no_other_output_by_a_bit(general):
    powered = _mixed_fleet() if general else Fleet.identical(
        6, load=0.5, jitter=0.02, cap=4.5, busy_power=[500.0, 600.0, 700.0, 500.0, 650.0, 720.0],
        idle_power=90.0)
    powered = powered.replace(mtbf=15.0, restart=0.3, outage_mtbf=30.0)
    base = powered.replace(busy_power=None, idle_power=None)
    kw = dict(fleets=5, cycles=40, seed=11, burn_in=4, record_firings=True)
    plain = stormsim.simulate(base, **kw)
    run = stormsim.simulate(powered, **kw, ramps=((1.0,), (100.0,)))
    for name in (*OTHER_FIELDS, *GENERAL_FIELDS, "failures", "abandoned_writes", "lost_work",
                 "down_time", "committed_work", "uncommitted_work", "outages",
                 "checkpoint_time"):
        assert getattr(plain, name).tobytes() == getattr(run, name).tobytes(), name
    assert np.all(run.power_min <= run.power_mean) and np.all(run.power_mean <= run.power_max)


# -- power traces (simulate(power_trace=m)) ---------------------------------------------

def assert_trace_matches(run, ref, fleet, m, row=0):
    """The first m steps of P over the window against the reference's levels
    (its ``power_levels`` from the window's start on): the same steps, their
    starts to RTOL of the run's length (each an instant both integrators
    reach by their own sums: see test_reference.py) and their P to RTOL of
    the fleet's busy power (as the mean)."""
    t, p = run.power_trace_t[row], run.power_trace_p[row]
    assert t.shape == p.shape == (m,)
    a, _, watts = ref["power_levels"]
    if math.isnan(ref["power_mean"]):
        assert np.all(np.isnan(t)) and np.all(np.isnan(p))
        return
    first = int(np.searchsorted(a, ref["power_start"]))
    a, watts = a[first:first + m], watts[first:first + m]
    k = a.size
    assert np.all(np.isnan(t[k:])) and np.all(np.isnan(p[k:]))
    assert t[0] == run.power_trace_t[row][0] and not np.isnan(t[:k]).any()
    tscale = max(1.0, float(ref["end_time"]))
    np.testing.assert_allclose(t[:k], a, rtol=0, atol=RTOL * tscale)
    pscale = float(np.max(fleet.busy_power)) * fleet.n_jobs
    np.testing.assert_allclose(p[:k], watts, rtol=0, atol=RTOL * pscale)


@pytest.mark.parametrize("seed", range(30))
def test_power_traces_match_the_reference_levels(seed):
    kind = seed % 3  # the anonymous kernel, the general one, either with failures
    if kind == 0:
        case = general_case(seed)
    elif kind == 1:
        case = blocking_failure_case(seed)
    else:
        case = general_case(seed, failures=True)
    fleet, theta, cycles, burn_in, level, D, X = case
    m = [1, 7, 40, 100000][seed % 4]
    run = stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                            burn_in=burn_in, passage_level=level, ramps=(D, X), power_trace=m)
    ref = reference_of(fleet, theta, cycles, burn_in, level, D, X, seed)
    assert_trace_matches(run, ref, fleet, m)
    if not math.isnan(ref["power_mean"]):
        # the window's start and its first level, exactly where the window opens
        assert run.power_trace_t[0, 0] == pytest.approx(ref["power_start"], rel=0, abs=RTOL * max(
            1.0, float(ref["end_time"])))


def test_power_traces_are_off_by_default_and_leave_every_other_output_alone():
    fleet = _mixed_fleet()
    kw = dict(fleets=5, cycles=30, seed=2, burn_in=3, ramps=((1.0,), (300.0,)))
    plain = stormsim.simulate(fleet, **kw)
    traced = stormsim.simulate(fleet, **kw, power_trace=25, batch_size=2)
    assert plain.power_trace_t is None and plain.power_trace_p is None
    assert traced.power_trace_t.shape == traced.power_trace_p.shape == (5, 25)
    for name in (*POWER_FIELDS, *OTHER_FIELDS, *GENERAL_FIELDS):
        a, b = getattr(plain, name), getattr(traced, name)
        assert (a is None and b is None) or a.tobytes() == b.tobytes(), name
    # steps in time order, within the window, P between its min and max
    t = traced.power_trace_t
    assert np.all(np.diff(t, axis=1) > 0)
    assert np.all(traced.power_trace_p >= traced.power_min[:, None])
    assert np.all(traced.power_trace_p <= traced.power_max[:, None])
    again = stormsim.simulate(fleet, **kw, power_trace=25, threads=1)
    assert again.power_trace_t.tobytes() == t.tobytes()
    assert again.power_trace_p.tobytes() == traced.power_trace_p.tobytes()


def test_power_trace_is_refused_by_name():
    from stormsim import SpecError

    with pytest.raises(SpecError, match="^power_trace = 3: the fleet has no power"):
        stormsim.simulate(Fleet.identical(3, load=0.5), fleets=1, cycles=2, power_trace=3)
    powered = Fleet.identical(3, load=0.5, busy_power=700.0, idle_power=100.0)
    for bad in (-1, 2.5, "3", True, None):
        with pytest.raises(SpecError, match="^power_trace"):
            stormsim.simulate(powered, fleets=1, cycles=2, power_trace=bad)


def test_a_power_trace_beyond_memory_is_refused_by_name():
    from stormsim import SpecError

    powered = Fleet.identical(3, load=0.5, busy_power=700.0, idle_power=100.0)
    with pytest.raises(SpecError, match=r"^power_trace = 1000000000000 with fleets = 2"):
        stormsim.simulate(powered, fleets=2, cycles=2, power_trace=10**12)

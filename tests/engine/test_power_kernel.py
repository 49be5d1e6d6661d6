"""MODEL.md E6 in the anonymous kernel (``run_fleets_power``): power's mean,
minimum and maximum and the ramps R_D, draw for draw against the reference
integrator (tests/reference.py ``power_outputs``), the same bits whatever the
threads and batches, every other output the same bits as without power, and
the ramps' arguments refused by name."""
from __future__ import annotations

import math

import numpy as np
import pytest

import stormsim
from reference import simulate_reference
from stormsim import Fleet, SpecError
from stormsim.engine.door import root_key

#: Every output of a Run that power must leave alone.
OTHER_FIELDS = ("firings", "occupancy", "passage_time", "passage_cycle", "end_time", "events",
                "upcrossings", "writing_time", "durations_count", "durations_sum",
                "durations_max", "durations_hist")
POWER_FIELDS = ("power_mean", "power_min", "power_max", "power_p01", "power_p99", "ramp_share",
                "ramp_events")
#: The kernel and the reference add the same levels in other orders (and a
#: fleet's P from its counts, not job by job): each sum exact to ~1e-16
#: relative per term over ~10^3 levels.
RTOL = 1e-9


def _case(seed):
    """A small blocking fleet with power: equal or unequal drops, a cap or
    none, jitter or none, a burn-in, maybe a first passage that stops it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    hetero = bool(rng.integers(2))
    T = rng.uniform(0.3, 3.0, n if hetero else 1).repeat(1 if hetero else n)
    d = rng.uniform(0.02, 0.8, n if hetero else 1).repeat(1 if hetero else n)
    cap = math.inf if rng.integers(2) else float(rng.uniform(0.5, n + 0.5))
    jitter = 0.0 if rng.integers(3) == 0 else float(rng.uniform(0.0, 0.3))
    throughput = ["fair", "ideal", ("power", float(rng.uniform(0.2, 1.0)))][int(rng.integers(3))]
    if rng.integers(2):  # equal drops: P a function of the jobs computing
        idle = [float(rng.uniform(0.0, 200.0))] * n
        busy = [idle[0] + float(rng.uniform(50.0, 800.0))] * n
    else:
        idle = rng.uniform(0.0, 300.0, n).tolist()
        busy = (np.array(idle) + rng.uniform(1.0, 800.0, n)).tolist()
    fleet = Fleet(T=T.tolist(), d=d.tolist(), cap=cap, throughput=throughput, jitter=jitter,
                  busy_power=busy, idle_power=idle)
    theta = np.zeros(n) if rng.integers(4) == 0 else rng.uniform(0.0, 1.0, n)
    cycles = int(rng.integers(2, 40))
    burn_in = int(rng.integers(0, cycles))
    level = int(rng.integers(1, n + 1)) if rng.integers(4) == 0 else None
    spread = float(np.max(busy) - np.min(idle)) * n
    D = tuple(rng.uniform(0.05, 4.0, int(rng.integers(1, 4))).tolist())
    X = (0.0, *rng.uniform(1.0, spread, int(rng.integers(1, 4))).tolist())
    return fleet, theta, cycles, burn_in, level, D, X


@pytest.mark.parametrize("seed", range(40))
def test_kernel_power_and_ramps_match_the_reference(seed):
    fleet, theta, cycles, burn_in, level, D, X = _case(seed)
    runs = [stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                              burn_in=burn_in, passage_level=level, queues=queues, ramps=(D, X))
            for queues in ("heap", "ring")]
    key = tuple(int(k) for k in root_key(seed))
    ref = simulate_reference(fleet.T, fleet.d, fleet.jitter, fleet.cap, fleet.f, theta, cycles,
                             burn_in=burn_in, level=level or 0, key=key,
                             busy_power=fleet.busy_power, idle_power=fleet.idle_power,
                             ramp_x=X, ramp_d=D)
    from test_power_general import assert_percentiles_match

    for run in runs:
        assert run.ramp_windows == D and run.ramp_thresholds == X
        assert run.ramp_share.shape == run.ramp_events.shape == (1, len(D), len(X))
        assert run.ramp_events.dtype == np.int64
        if math.isnan(ref["power_mean"]):  # stopped before the window opened
            for name in ("power_mean", "power_min", "power_max", "power_p01", "power_p99"):
                assert math.isnan(getattr(run, name)[0]), name
            assert np.all(np.isnan(run.ramp_share)) and not run.ramp_events.any()
            continue
        scale = float(np.max(fleet.busy_power)) * fleet.n_jobs
        for name in ("power_mean", "power_min", "power_max"):
            assert abs(getattr(run, name)[0] - ref[name]) <= RTOL * scale, name
        assert_percentiles_match(run, ref, fleet)
        np.testing.assert_allclose(run.ramp_share[0], ref["ramp_share"], rtol=0, atol=RTOL)
        np.testing.assert_array_equal(run.ramp_events[0], ref["ramp_events"])
        np.testing.assert_allclose(run.ramp_share[0][:, 0], 1.0, rtol=0, atol=RTOL)  # R_D >= 0
    if not fleet.busy_power.tolist().count(fleet.busy_power[0]) == fleet.n_jobs or \
            not fleet.idle_power.tolist().count(fleet.idle_power[0]) == fleet.n_jobs:
        return
    for name in POWER_FIELDS:  # equal drops: P from the counts, whatever the queue
        np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name), name)


def test_power_is_the_same_bits_across_threads_and_batches():
    fleet = Fleet.identical(8, load=0.6, jitter=0.05, cap=6.0, busy_power=[700.0 + k for k in
                                                                         range(8)],
                            idle_power=100.0)
    kw = dict(fleets=7, cycles=60, seed=3, burn_in=5, ramps=((0.5, 3.0), (200.0, 900.0)))
    runs = [stormsim.simulate(fleet, **kw),
            stormsim.simulate(fleet, **kw, batch_size=2, threads=1),
            stormsim.simulate(fleet, **kw, batch_size=3, threads=2)]
    for run in runs[1:]:
        for name in (*POWER_FIELDS, *OTHER_FIELDS):
            a, b = getattr(runs[0], name), getattr(run, name)
            if a is None:
                assert b is None, name
            else:
                assert a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("launch", ["random", "sync"])
def test_power_changes_no_other_output_by_a_bit(launch):
    base = Fleet.identical(6, load=0.5, jitter=0.02, cap=4.5)
    powered = base.replace(busy_power=[500.0, 600.0, 700.0, 500.0, 650.0, 720.0],
                           idle_power=90.0)
    kw = dict(launch=launch, fleets=5, cycles=50, seed=11, burn_in=4, record_firings=True,
              fast_forward=False)
    plain = stormsim.simulate(base, **kw)
    run = stormsim.simulate(powered, **kw, ramps=((1.0,), (100.0,)))
    for name in OTHER_FIELDS:
        assert getattr(plain, name).tobytes() == getattr(run, name).tobytes(), name
    for name in POWER_FIELDS:
        assert getattr(plain, name) is None, name
    assert np.all(run.power_min <= run.power_mean) and np.all(run.power_mean <= run.power_max)
    # without ramps asked: power's mean, min, max; empty ramp arrays
    bare = stormsim.simulate(powered, **kw)
    assert bare.ramp_share.shape == (5, 0, 0)
    assert bare.power_mean.tobytes() == run.power_mean.tobytes()


@pytest.mark.parametrize("ramps, match", [
    (((0.0,), (1.0,)), r"D\[0\] = 0.0 s"),
    (((1.0, -2.0), (1.0,)), r"D\[1\] = -2.0 s"),
    (((math.inf,), (1.0,)), r"D\[0\] = inf s"),
    (((1.0,), (1.0, math.nan)), r"X\[1\] = nan W"),
    (((1.0,), (math.inf,)), r"X\[0\] = inf W"),
    ((1.0,), r"ramps = \(1.0,\)"),
])
def test_bad_ramps_are_refused_by_name(ramps, match):
    fleet = Fleet.identical(3, load=0.5, busy_power=700.0, idle_power=100.0)
    with pytest.raises(SpecError, match=match):
        stormsim.simulate(fleet, fleets=1, cycles=2, ramps=ramps)


def test_ramps_need_power_and_power_refuses_forced_fast_forward():
    fleet = Fleet.identical(3, load=0.5)
    with pytest.raises(SpecError, match="no power"):
        stormsim.simulate(fleet, fleets=1, cycles=2, ramps=((1.0,), (1.0,)))
    powered = fleet.replace(busy_power=700.0, idle_power=100.0)
    with pytest.raises(SpecError, match="fast_forward = True"):
        stormsim.simulate(powered, fleets=1, cycles=2, fast_forward=True)

"""The fast-forward (``_kernel._fast_forward``) against the pure event loop.

Both integrate the same model with the same random draws; the fast-forward
adds the same intervals in a different order (a firing time as the last
firing + d_i + w on its own clock, against a running sum of inter-event
gaps), so they agree to rounding, not bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import stormsim
from stormsim import SpecError
from stormsim.engine import _kernel

#: Times, occupancies and writing times agree to 1e-9 relative (to a cycle
#: for values near 0). The two paths differ by ~1e-16 of a cycle per firing,
#: and while no two writes overlap the dynamics do not amplify differences
#: (each job's firings are a sum of its own intervals; nothing is chaotic),
#: so after 1e6 firings the gap is still ~1e-13 of the times: four decades
#: of room below RTOL.
RTOL = 1e-9

#: Cycles of an occupancy run (not stopped at its first collision) kept
#: short enough that collisions with three or more writers, where fair
#: sharing amplifies rounding by up to N - 1 per cycle (MODEL.md check 3),
#: cannot grow the ~1e-16 difference to RTOL (see tests/engine/test_reference.py,
#: ``horizon``). Runs that stop at their first collision have no such limit.
OCCUPANCY_CYCLES = 12


def random_fleet(rng, n):
    """An uncapped base-model fleet: identical or spread jobs, any f, light to
    heavy load, jitter from none to large (zero compute intervals happen)."""
    load = rng.uniform(0.05, 1.2)
    if rng.random() < 0.5:
        T = np.full(n, rng.uniform(0.5, 2.0))
        d = load * T / n
    else:
        T = rng.uniform(0.5, 2.0, n)
        d = load * T / n * rng.uniform(0.7, 1.3, n)
    rule = rng.choice(["fair", "ideal", "power"])
    throughput = ("power", float(rng.uniform(0, 1))) if rule == "power" else str(rule)
    cap = math.inf if rng.random() < 0.5 else float(n + rng.uniform(0.0, 2.0))
    scale = float(np.mean(T + d))
    jitter = float(rng.choice([0.0, 1e-6, 1e-3, 0.02, 0.3, 1.5])) * scale / n
    return stormsim.Fleet(T=T, d=d, cap=cap, throughput=throughput, jitter=jitter)


def both(fleet, **kw):
    return [stormsim.simulate(fleet, fast_forward=ff, **kw) for ff in (False, True)]


def assert_close(actual, expected, scale, what):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), f"{what}: NaN pattern differs"
    assert np.array_equal(np.isinf(actual), np.isinf(expected)), f"{what}: inf pattern differs"
    ok = np.isfinite(expected)
    err = np.abs(actual[ok] - expected[ok])
    bound = RTOL * np.maximum(np.abs(expected[ok]), scale)
    assert np.all(err <= bound), f"{what}: max error {err.max():.3g} > {RTOL} relative"


def assert_same_run(ff, pure, fleet):
    scale = float(np.max(fleet.T + fleet.d))
    np.testing.assert_array_equal(ff.passage_cycle, pure.passage_cycle)
    np.testing.assert_array_equal(ff.events, pure.events)
    np.testing.assert_array_equal(ff.upcrossings, pure.upcrossings)
    assert_close(ff.passage_time, pure.passage_time, scale, "passage time")
    assert_close(ff.end_time, pure.end_time, scale, "end time")
    window = pure.occupancy.sum(axis=1, keepdims=True)
    assert_close(ff.occupancy, pure.occupancy, window, "occupancy")
    assert_close(ff.writing_time, pure.writing_time, window, "writing time")
    # E7: a write alone lasts d_i on both paths (to rounding: the middle of
    # histogram bin 1), so the same counts in the same bins.
    np.testing.assert_array_equal(ff.durations_hist, pure.durations_hist)
    assert_close(ff.durations_sum, pure.durations_sum, window[:, 0], "duration sum")
    assert_close(ff.durations_max, pure.durations_max, scale, "duration max")
    if pure.firings is not None:
        assert_close(ff.firings, pure.firings, scale, "firing times")


@pytest.mark.parametrize("block", range(4))
def test_first_passage_equals_event_loop_on_random_fleets(block):
    """300 random fleets (4 runs each), stopped at their first passage to
    level 2 or 3 or at the cap: the same passage cycles, times, events and
    up-crossings, and firings and occupancy to RTOL."""
    rng = np.random.default_rng(1000 + block)
    for case in range(75):
        n = int(rng.choice([1, 2, 3, 5, 16, 40]))
        fleet = random_fleet(rng, n)
        launch = str(rng.choice(["random", "stagger"])) if fleet.n_jobs > 1 else "random"
        if launch == "stagger" and (not fleet.is_identical or fleet.load >= n / (n - 1)):
            launch = "random"  # no stagger exists
        level = int(min(n, rng.choice([2, 3])))
        cycles = int(rng.choice([50, 400, 3000]))
        burn_in = int(rng.choice([0, 0, cycles // 3]))
        pure, ff = both(fleet, launch=launch, fleets=4, cycles=cycles, seed=case,
                        passage_level=level, burn_in=burn_in, record_firings=cycles <= 400)
        assert_same_run(ff, pure, fleet)


def test_occupancy_runs_equal_event_loop_on_random_fleets():
    """Runs through their collisions (the event loop's) and back into the
    fast-forward, over OCCUPANCY_CYCLES cycles with a burn-in."""
    rng = np.random.default_rng(7)
    for case in range(150):
        n = int(rng.choice([2, 3, 5, 16]))
        fleet = random_fleet(rng, n)
        pure, ff = both(fleet, launch="random", fleets=4, cycles=OCCUPANCY_CYCLES, seed=case,
                        passage_level=None, burn_in=int(rng.integers(0, 4)),
                        record_firings=True)
        assert_same_run(ff, pure, fleet)


def test_long_stagger_runs_agree_and_the_fast_path_is_taken():
    """(f)-like runs, long: first passages equal; the two paths round
    differently (so the fast-forward did run), by far less than RTOL."""
    base = stormsim.Fleet.identical(16, T=1.0, load=0.6)
    margin = stormsim.stagger_margin(base)
    for m_over_sigma, cycles in ((30, 100_000), (256, 100_000), (1e6, 3000)):
        fleet = stormsim.Fleet.identical(16, T=1.0, load=0.6, jitter=margin / m_over_sigma)
        pure, ff = both(fleet, launch="stagger", fleets=16, cycles=cycles, seed=5,
                        passage_level=2, burn_in=10, record_firings=cycles <= 3000)
        assert_same_run(ff, pure, fleet)
        assert not np.array_equal(ff.end_time, pure.end_time)


#: Two estimates of one mean agree within Z standard errors of their
#: difference (taken as independent: the runs share seeds and begin alike,
#: which only shrinks the difference). 12 comparisons at Z = 4 raise a false
#: alarm with probability ~1e-3.
Z = 4.0


def test_occupancy_statistics_of_a_large_run_are_equal():
    """Workload (a) over 300 cycles: many-writer collisions amplify rounding
    (the model is chaotic there), so fleets part ways after a while; the
    statistics do not: P(n_w >= k) and the up-crossing rates of the two
    paths agree within Z standard errors."""
    fleet = stormsim.Fleet.identical(16, T=1.0, load=0.6, jitter=0.01)
    pure, ff = both(fleet, launch="random", fleets=600, cycles=300, seed=11, burn_in=50)
    assert not np.allclose(ff.occupancy, pure.occupancy, rtol=RTOL)  # they did part
    for k in range(1, 7):
        per_fleet = []
        for r in (pure, ff):
            window = r.occupancy.sum(axis=1)
            per_fleet.append((r.occupancy[:, k:].sum(axis=1) / window,
                              r.upcrossings[:, k] / window))
        for j, what in enumerate(("P(n_w >= k)", "up-crossing rate")):
            x, y = per_fleet[0][j], per_fleet[1][j]
            se = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / x.size)
            assert abs(x.mean() - y.mean()) <= Z * se, f"{what}, k = {k}"


@pytest.mark.parametrize("excess", [0.5, 2.0, 1e3])
def test_gaps_near_the_margin_go_to_the_event_loop(excess):
    """A jitter-free stagger whose margin m is excess * FF_MARGIN of a cycle:
    below the fast-forward's margin the event loop decides every firing,
    above it the fast-forward runs; either way no collision, and the same
    firings as the event loop."""
    n = 8
    T = 1.0
    cycle_gap = excess * _kernel.FF_MARGIN * 1.2  # the cycle is ~ T + d ~ 1.1
    d = (T - n * cycle_gap) / (n - 1)  # m = (T + d) / n - d
    fleet = stormsim.Fleet.identical(n, T=T, d=d)
    assert stormsim.stagger_margin(fleet) == pytest.approx(cycle_gap, rel=1e-6)
    pure, ff = both(fleet, launch="stagger", fleets=1, cycles=300, passage_level=2,
                    record_firings=True)
    assert (ff.passage_cycle == -1).all()
    assert_same_run(ff, pure, fleet)
    fast = not np.array_equal(ff.firings, pure.firings)
    assert fast == (excess * 1.2 * T / (T + d) > 1.0)


def test_queue_kinds_give_identical_fast_forward_results():
    """A round on the ring is exactly N single firings: ring and heap agree
    bit for bit with the fast-forward on too."""
    fleet = stormsim.Fleet.identical(16, T=1.0, load=0.6, jitter=0.002)
    runs = [stormsim.simulate(fleet, launch="stagger", fleets=8, cycles=2000, seed=3,
                              passage_level=3, stop_at_passage=False, burn_in=7,
                              record_firings=True, queues=q) for q in ("heap", "ring")]
    for name in ("firings", "occupancy", "passage_time", "passage_cycle", "end_time", "events",
                 "upcrossings", "writing_time", "durations_sum", "durations_max",
                 "durations_hist"):
        np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name),
                                      err_msg=name)


def test_fast_forward_option():
    capped = stormsim.Fleet.identical(4, T=1.0, load=0.5, cap=3.0)
    with pytest.raises(SpecError, match="fast_forward = True needs the base model uncapped"):
        stormsim.simulate(capped, fleets=1, cycles=5, fast_forward=True)
    asynchronous = stormsim.Fleet.identical(4, T=1.0, load=0.5, checkpoint="async")
    with pytest.raises(SpecError, match="general kernel"):
        stormsim.simulate(asynchronous, fleets=1, cycles=5, fast_forward=True)
    with pytest.raises(SpecError, match="fast_forward = 'yes'"):
        stormsim.simulate(capped, fleets=1, cycles=5, fast_forward="yes")
    # "auto" on a fleet it cannot serve is the event loop, bit for bit.
    a = stormsim.simulate(capped, fleets=3, cycles=50, seed=1, fast_forward="auto")
    b = stormsim.simulate(capped, fleets=3, cycles=50, seed=1, fast_forward=False)
    np.testing.assert_array_equal(a.occupancy, b.occupancy)


def test_auto_fast_forwards_first_passages_only():
    """"auto" takes the fast path in runs that stop at a passage to level >= 2
    (bitwise different from the event loop: it rounds differently) and
    leaves every other run to the event loop, bit for bit."""
    fleet = stormsim.Fleet.identical(6, T=1.0, load=0.5, jitter=0.002)
    kw = dict(launch="stagger", fleets=6, cycles=200, seed=4, record_firings=True)

    def same(**more):
        auto = stormsim.simulate(fleet, **kw, **more)
        pure = stormsim.simulate(fleet, **kw, **more, fast_forward=False)
        return np.array_equal(auto.firings, pure.firings, equal_nan=True)

    assert not same(passage_level=2)
    assert not same(passage_level=4)
    assert same()  # an occupancy run
    assert same(passage_level=2, stop_at_passage=False)
    assert same(passage_level=1)


#: Compiles both integrators in a fresh process (numba shows no code of
#: functions loaded from its cache).
_PROBE = """
import re, numpy as np, stormsim
from stormsim.engine import _kernel
from stormsim.engine.door import histogram_cells
from stormsim.engine.run import DURATION_EDGES, HIST_BINS
n, cycles = 4, 5
T, d, sigma = np.ones(n), np.full(n, 0.1), np.full(n, 0.01)
fleet = stormsim.Fleet(T=T, d=d, jitter=0.01)
args = (T, d, sigma, fleet.writer_rate, fleet.computer_rate, np.linspace(0, 0.9, n),
        np.uint64(1), np.uint64(2), 0, cycles, 0, 2, True, False, True, True,
        np.empty((1, 1)), np.empty(n + 1), np.empty(n + 1, np.int64), np.empty(n),
        histogram_cells(DURATION_EDGES), np.empty(HIST_BINS + 4))
for fn in (_kernel.run_fleet, _kernel.run_fleet_ff):
    fn(*args)
    ir = "".join(fn.inspect_llvm().values())
    print(len(re.findall(r"define [^@]*@[^(]*_fast_forward", ir)))
"""


@pytest.mark.slow
def test_the_plain_event_loop_is_compiled_without_the_fast_forward(tmp_path):
    """Issue 12: the fast-forward must cost the event loop nothing. ``run_fleet``
    (what fast_forward=False runs) is compiled with the fast path folded away:
    its code defines no ``_fast_forward``, while ``run_fleet_ff``'s does (so
    the probe can fail)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, STORMSIM_NO_CACHE="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path).stdout.split()
    assert out[0] == "0"
    assert int(out[1]) > 0


#: A stagger sweep, as the jitter-survival sweeps run (first passages),
#: with uncapped and capped cells (the key applies to the first only).
FF_SWEEP = """
[fixed]
N = 16
load = 0.6
launch = "stagger"
passage_level = 2
fleets = 60
cycles = 3000
[grid]
m_over_sigma = [8, 30]
cap_fraction = [inf, 0.75]
"""


def test_the_sweep_key_fast_forward():
    """A sweep with fast_forward = true runs the same draws (the same run
    seeds) as one with false to the same passage cycles, times to RTOL (the
    fast-forward's rounding, above), and is another sweep (its hash); capped
    cells, where no fast-forward applies, keep simulate's "auto" and give the
    same digits. The key's default is simulate's own, "auto"."""
    from stormsim.sweep.spec import parse_sweep

    off = parse_sweep(FF_SWEEP.replace("[grid]", "fast_forward = false\n[grid]"))
    on = parse_sweep(FF_SWEEP.replace("[grid]", "fast_forward = true\n[grid]"))
    assert [c.run_seed for c in on.cells] == [c.run_seed for c in off.cells]
    assert on.hash != off.hash
    assert [c.simulate_kwargs()["fast_forward"] for c in on.cells] == [True, "auto"] * 2
    assert not any(c.simulate_kwargs()["fast_forward"] for c in off.cells)
    default = parse_sweep(FF_SWEEP)
    assert [c.simulate_kwargs()["fast_forward"] for c in default.cells] == ["auto"] * 4
    res = {}
    for name, sw in (("off", off), ("on", on)):
        store = stormsim.MemoryStore()
        stormsim.run_sweep(sw, store, progress="none")
        res[name] = store.results()
    for i, cell in enumerate(off.cells):
        a, b = res["off"].cell(i).arrays, res["on"].cell(i).arrays
        np.testing.assert_array_equal(b["passage_cycle"], a["passage_cycle"])
        assert (a["passage_cycle"] > 0).any()  # some fleets run a while before colliding
        scale = float(np.max(cell.fleet.T + cell.fleet.d))
        np.testing.assert_array_equal(b["events"], a["events"])
        np.testing.assert_array_equal(b["upcrossings"], a["upcrossings"])
        if on.cells[i].simulate_kwargs()["fast_forward"] is True:
            assert_close(b["passage_time"], a["passage_time"], scale, "passage time")
            assert_close(b["end_time"], a["end_time"], scale, "end time")
            window = a["occupancy"].sum(axis=1, keepdims=True)
            assert_close(b["occupancy"], a["occupancy"], window, "occupancy")
        else:
            for name in ("passage_time", "end_time", "occupancy"):
                np.testing.assert_array_equal(b[name], a[name])

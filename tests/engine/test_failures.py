"""Failures, restarts, outages and goodput in both kernels (MODEL.md E8).

F1: with every M_i = inf and M_0 = inf the failure variant of the event loop
gives today's bits (no draw taken), and such a fleet is the base model. F2:
Daly's law, E = M e^{R/M} (e^{(T+d)/M} - 1) per committed interval, on one
job and on eight independent ones (ideal f, sigma = 0, uncapped). F3: an
outage synchronizes identical jobs. And: the goodput's parts sum to 1;
results depend neither on threads, batches nor the queues; bad values are a
SpecError naming the field. The general kernel (async jobs, weights, the
writer cap): F1 bit for bit, and random fleets against the reference.
"""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import stormsim
from stormsim import failures
from stormsim.engine import _kernel
from stormsim.engine.door import histogram_cells, root_key
from stormsim.engine.run import DURATION_EDGES, HIST_BINS
from stormsim.stats.goodput import goodput
from stormsim.stats.daly import daly_breakdown, daly_goodput

CYCLES = 40
CELLS = histogram_cells(DURATION_EDGES)


def base_cases():
    """(name, Fleet, theta): alike and mixed fleets, ties, zero compute
    intervals, binding caps (as tests/engine/test_event_loop.py)."""
    rng = np.random.default_rng(20261205)
    out = []
    for n in (1, 2, 5, 16):
        for sigma in (0.0, 0.02, 1.0):
            for cap in (np.inf, 0.6 * n):
                fleet = stormsim.Fleet.identical(n, T=1.0, load=0.7, jitter=sigma,
                                                 cap=max(1.0, cap))
                for launch, theta in (("random", rng.random(n)), ("sync", np.zeros(n))):
                    out.append((f"alike n={n} sigma={sigma} cap={cap} {launch}", fleet, theta))
    for n in (3, 9):
        for rep in range(4):
            T = 1.0 + 0.3 * rng.uniform(-1, 1, n)
            d = 0.7 / n * (1.0 + 0.3 * rng.uniform(-1, 1, n))
            fleet = stormsim.Fleet(T=T, d=d, jitter=[0.0, 0.05][rep % 2] * T,
                                   cap=[np.inf, 0.5 * n][rep // 2], throughput="power:0.5")
            out.append((f"mixed n={n} rep={rep}", fleet, rng.random(n)))
    return out


def run_one(fn, fleet, theta, ring, fail=None, **opts):
    """One fleet through ``fn`` (run_fleet or run_fleet_fail); fail: (fail_in,
    fail_keys) for the failure variant; opts: burn_in, level, stop, seed, index."""
    o = dict(burn_in=3, level=2, stop=False, seed=7, index=0)
    o.update(opts)
    burn_in, level, stop, seed, index = (o[k] for k in ("burn_in", "level", "stop", "seed", "index"))
    n = fleet.n_jobs
    key0, key1 = root_key(seed)
    firings = np.full((n, CYCLES), np.nan)
    occupancy = np.empty(n + 1)
    upcross = np.empty(n + 1, dtype=np.int64)
    writing = np.empty(n)
    dur_out = np.empty(HIST_BINS + 4)
    args = (fleet.T, fleet.d, fleet.jitter, fleet.writer_rate, fleet.computer_rate, theta,
            key0, key1, index, CYCLES, burn_in, level, stop, True, ring, ring, firings,
            occupancy, upcross, writing, CELLS, dur_out)
    fail_out = np.empty((n + 1, _kernel.FAIL_COLUMNS))
    if fail is None:
        ret = fn(*args)
    else:
        ret = fn(*args, fail[0], fail[1], fail_out)
    return ret, firings, occupancy, upcross, writing, dur_out, fail_out


def fail_inputs(fleet, mtbf=math.inf, restart=0.0, outage=math.inf, seed=7):
    n = fleet.n_jobs
    fail_in = np.zeros((n + 1, 2))
    fail_in[:n, 0] = mtbf
    fail_in[:n, 1] = restart
    fail_in[n, 0] = outage
    key1 = root_key(seed)[1]
    keys = np.array([key1 ^ np.uint64(failures.FAILURE_SALT), key1 ^ np.uint64(failures.OUTAGE_SALT)],
                    dtype=np.uint64)
    return fail_in, keys


@pytest.mark.parametrize("ring", [True, False], ids=["ring", "heap"])
def test_f1_the_failure_variant_without_failures_gives_todays_bits(ring):
    """F1 in the kernel: M = inf everywhere takes no draw and changes no bit."""
    for name, fleet, theta in base_cases():
        for opts in (dict(), dict(burn_in=0, level=1, stop=True)):
            a = run_one(_kernel.run_fleet, fleet, theta, ring, **opts)
            b = run_one(_kernel.run_fleet_fail, fleet, theta, ring, fail=fail_inputs(fleet), **opts)
            assert a[0] == b[0], (name, opts)
            for x, y, what in zip(a[1:6], b[1:6], ("firings", "occupancy", "upcross", "writing",
                                                   "durations")):
                np.testing.assert_array_equal(x, y, err_msg=f"{name} {opts} {what}")
            fo = b[6]
            assert not fo[:, [_kernel._FO_FAIL, _kernel._FO_ABANDON, _kernel._FO_LOST,
                              _kernel._FO_DOWN]].any(), name


def test_f1_a_fleet_that_never_fails_is_the_base_model():
    plain = stormsim.Fleet.identical(4, T=1.0, load=0.8, jitter=0.05)
    never = stormsim.Fleet.identical(4, T=1.0, load=0.8, jitter=0.05, mtbf=math.inf, restart=3.0,
                                     outage_mtbf=math.inf)
    assert not never.has_failures
    assert stormsim.Fleet.identical(4, T=1.0, load=0.8, jitter=0.05,
                                    mtbf=math.inf).canonical() == plain.canonical()
    a = stormsim.simulate(plain, fleets=8, cycles=50, burn_in=5, seed=4)
    b = stormsim.simulate(never, fleets=8, cycles=50, burn_in=5, seed=4)
    for name in ("occupancy", "upcrossings", "writing_time", "end_time", "events",
                 "durations_hist", "durations_sum"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert b.goodput is None and b.failures is None


def daly_E(T, d, M, R):
    """Daly (2006): expected wall time per committed interval of T + d."""
    return M * math.exp(R / M) * (math.exp((T + d) / M) - 1.0)


@pytest.mark.parametrize("n, T, d, M, R", [
    (1, 1.0, 0.1, 5.0, 0.3), (1, 1.0, 0.05, 2.0, 0.0), (1, 3.0, 0.5, 40.0, 2.0),
    (8, 1.0, 0.2, 10.0, 1.0), (8, 2.0, 0.1, 3.0, 0.5)])
def test_f2_goodput_follows_dalys_law_without_contention(n, T, d, M, R):
    """F2: a blocking job, sigma = 0, ideal f, uncapped: goodput T / E."""
    fleet = stormsim.Fleet(T=[T] * n, d=[d] * n, throughput="ideal", mtbf=M, restart=R)
    run = stormsim.simulate(fleet, fleets=200 if n == 1 else 60, cycles=400, burn_in=5, seed=3)
    parts = goodput(run, 0.999)
    g = parts["goodput"]
    assert g.lo <= T / daly_E(T, d, M, R) <= g.hi, (g, T / daly_E(T, d, M, R))
    assert g.hi - g.lo < 0.02
    # part by part, Daly's breakdown (stormsim.stats.daly)
    assert daly_goodput(T, d, M, R) == pytest.approx(T / daly_E(T, d, M, R), rel=1e-12)
    for name in ("writing", "lost", "down"):
        assert parts[name].lo <= daly_breakdown(T, d, M, R)[name] <= parts[name].hi, (name, parts[name])


def test_f3_an_outage_synchronizes_identical_jobs():
    """F3: identical jobs, sigma = 0, equal R: every job restarts at the
    outage's instant plus R, and they fire together afterwards."""
    n, M0, R, seed = 5, 30.0, 0.7, 11
    fleet = stormsim.Fleet.identical(n, T=1.0, load=0.5, restart=R, outage_mtbf=M0)
    run = stormsim.simulate(fleet, launch="stagger", fleets=6, cycles=200, seed=seed,
                            record_firings=True)
    key0, key1 = root_key(seed)
    for f in range(run.fleets):
        # np.uint64: numba returns the base as a Python int, which it would
        # type int64 on the way back in (int64 + uint64 is float64 in numba)
        base = np.uint64(_kernel.stream_base(key0, key1 ^ np.uint64(failures.OUTAGE_SALT), f, 0))
        first = M0 * failures.exponential(_kernel.stream_uniform(base, 0))
        fired = run.firings[f]
        assert np.isfinite(fired).all() and fired[:, -1].min() > first + R + 5.0
        before = np.sort(fired[fired < first])
        assert np.diff(before).min() > 0.01  # staggered: no two together
        after = [row[row > first] for row in fired]
        m = min(a.size for a in after)
        assert m > 10
        for a in after[1:]:
            np.testing.assert_array_equal(a[:m], after[0][:m])
        assert run.outages[f] >= 1
        np.testing.assert_array_equal(run.failures[f] >= run.outages[f], True)


def some_failing_fleets():
    rng = np.random.default_rng(5)
    out = [stormsim.Fleet.identical(6, T=1.0, load=0.8, jitter=0.03, mtbf=15.0, restart=0.4,
                                    outage_mtbf=60.0),
           stormsim.Fleet.identical(4, T=1.0, load=1.2, cap=2.5, mtbf=8.0, restart=0.0)]
    n = 7
    out.append(stormsim.Fleet(T=rng.uniform(0.8, 1.2, n), d=rng.uniform(0.05, 0.2, n),
                              jitter=rng.uniform(0.0, 0.1, n), mtbf=rng.uniform(5.0, 50.0, n),
                              restart=rng.uniform(0.0, 1.0, n), throughput="power:0.7"))
    return out


FAIL_FIELDS = ("occupancy", "upcrossings", "writing_time", "end_time", "events", "firings",
               "durations_hist", "durations_sum", "durations_max", "failures", "abandoned_writes",
               "lost_work", "down_time", "committed_work", "uncommitted_work", "outages")


@pytest.mark.parametrize("k", range(3))
def test_results_with_failures_depend_on_neither_threads_batches_nor_queues(k):
    fleet = some_failing_fleets()[k]
    args = dict(fleets=12, cycles=80, burn_in=4, seed=9, record_firings=True, passage_level=2,
                stop_at_passage=False)
    a = stormsim.simulate(fleet, **args)
    others = [stormsim.simulate(fleet, batch_size=5, threads=1, **args),
              stormsim.simulate(fleet, queues="heap", **args),
              stormsim.simulate(fleet, queues="ring", threads=2, batch_size=7, **args)]
    tail = stormsim.simulate(fleet, **{**args, "fleets": 5}, fleet_start=7)
    for b in others:
        for name in FAIL_FIELDS + ("passage_time",):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in FAIL_FIELDS:
        np.testing.assert_array_equal(getattr(a, name)[7:], getattr(tail, name), err_msg=name)
    assert a.failures.sum() > 20 and a.abandoned_writes.sum() > 0


def test_goodputs_parts_sum_to_one_and_cap_is_the_caps():
    for fleet in some_failing_fleets():
        run = stormsim.simulate(fleet, fleets=10, cycles=120, burn_in=10, seed=1)
        parts = run.goodput_parts
        total = sum(parts.values())
        np.testing.assert_allclose(total, 1.0, rtol=0, atol=1e-12)
        for name, share in parts.items():
            assert (share > -1e-12).all(), name
        if fleet.cap >= fleet.n_jobs:
            np.testing.assert_allclose(parts["cap"], 0.0, atol=1e-12)
        else:
            assert (parts["cap"] > 0.01).all()
        assert (parts["lost"] > 0).all() and (parts["down"] >= 0).all()
        # the writing share is the writing time's, abandoned writes included
        np.testing.assert_allclose(parts["writing"] * fleet.n_jobs * run.window,
                                   run.writing_time.sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("kw, field", [
    (dict(mtbf=0.0), "mtbf"), (dict(mtbf=-1.0), "mtbf"), (dict(mtbf=math.nan), "mtbf"),
    (dict(mtbf=[1.0, 2.0, -3.0]), "mtbf[2]"), (dict(restart=-1.0), "restart"),
    (dict(restart=math.inf), "restart"), (dict(restart=math.nan), "restart"),
    (dict(outage_mtbf=0.0), "outage_mtbf"), (dict(outage_mtbf=math.nan), "outage_mtbf"),
    (dict(outage_mtbf="1h"), "outage_mtbf"), (dict(mtbf="x"), "mtbf")])
def test_bad_failure_values_are_a_spec_error_naming_the_field(kw, field):
    with pytest.raises(stormsim.SpecError, match=rf"^{field.replace('[', '.').replace(']', '.')}"):
        stormsim.Fleet(T=[1.0] * 3, d=[0.1] * 3, **kw)


def test_failures_run_in_both_kernels_and_refuse_only_the_fast_forward():
    fleet = stormsim.Fleet.identical(3, T=1.0, load=0.5, mtbf=10.0, checkpoint="async")
    run = stormsim.simulate(fleet, fleets=2, cycles=5)
    assert run.failures is not None and run.checkpoint_time is not None
    plain = stormsim.Fleet.identical(3, T=1.0, load=0.5, mtbf=10.0)
    assert stormsim.simulate(plain, fleets=2, cycles=5, kernel="general").failures is not None
    with pytest.raises(stormsim.SpecError, match="fail"):
        stormsim.simulate(plain, fleets=2, cycles=5, fast_forward=True)


def test_fleet_keeps_its_failure_options():
    fleet = stormsim.Fleet(T=[1.0, 2.0], d=[0.1, 0.2], mtbf=[10.0, math.inf], restart=0.5,
                           outage_mtbf=100.0)
    assert fleet.has_failures
    np.testing.assert_array_equal(fleet.mtbf, [10.0, math.inf])
    np.testing.assert_array_equal(fleet.restart, [0.5, 0.5])
    assert fleet.outage_mtbf == 100.0

    assert pickle.loads(pickle.dumps(fleet)) == fleet
    assert "mtbf=[10. inf]" in repr(fleet) and "outage_mtbf=100.0" in repr(fleet)
    canon = fleet.canonical()
    assert canon["mtbf"] == [10.0.hex(), math.inf.hex()] and "outage_mtbf" in canon
    assert fleet != stormsim.Fleet(T=[1.0, 2.0], d=[0.1, 0.2])


def test_failures_in_physical_units_and_job_tables(tmp_path):
    pytest.importorskip("pint")
    fleet = stormsim.Fleet.from_jobs(size="100 GB", bandwidth="1 TB/s", compute_interval="30 min",
                                     n_jobs=3, mtbf="24 h", restart="10 min", outage_mtbf="7 day")
    np.testing.assert_array_equal(fleet.mtbf, 86400.0)
    np.testing.assert_array_equal(fleet.restart, 600.0)
    assert fleet.outage_mtbf == 7 * 86400.0
    path = tmp_path / "jobs.csv"
    path.write_text("size [GB],compute_interval [min],jitter [%],mtbf [h],restart [min]\n"
                    "100,30,1,24,10\n200,60,1,12,5\n")
    table = stormsim.Fleet.from_csv(path, bandwidth="1 TB/s", outage_mtbf="30 day")
    np.testing.assert_array_equal(table.mtbf, [86400.0, 43200.0])
    np.testing.assert_array_equal(table.restart, [600.0, 300.0])
    assert table.outage_mtbf == 30 * 86400.0
    for bad, field in ((dict(mtbf="0 h"), "mtbf"), (dict(restart="-1 min"), "restart"),
                       (dict(mtbf=5.0), "mtbf"), (dict(outage_mtbf="0 s"), "outage_mtbf")):
        with pytest.raises(stormsim.SpecError, match=f"^{field} = "):
            stormsim.Fleet.from_jobs(size="100 GB", bandwidth="1 TB/s", compute_interval="30 min",
                                     n_jobs=3, **bad)


def test_the_exact_law_and_splitting_refuse_failures():
    fleet = stormsim.Fleet.identical(3, T=1.0, load=0.5, jitter=0.05, mtbf=10.0)
    assert not fleet.is_anonymous and fleet.runs_anonymous
    with pytest.raises(stormsim.SpecError, match="stationary law does not hold with failures"):
        stormsim.stationary(fleet)
    with pytest.raises(stormsim.SpecError, match="failures"):
        stormsim.storm_split(fleet, levels=[2])


def random_failing_fleets():
    """(Fleet, theta, cycles, burn_in) with failures, outages, restarts of 0,
    jitter that clips intervals to 0, binding caps and contention. Contention
    and binding caps only on one or two jobs: with three or more writers
    sharing (or computers under a cap) rounding grows (MODEL.md check 3),
    and two exact integrators part ways in a few dozen cycles; ideal f
    (independent writers) on the larger fleets."""
    rng = np.random.default_rng(20261205)
    out = []
    for rep in range(12):
        n = int(rng.integers(1, 3)) if rep % 2 == 0 else int(rng.integers(3, 8))
        T = rng.uniform(0.5, 1.5, n)
        d = rng.uniform(0.05, 0.5, n)
        sigma = [0.0, 0.02, 0.6][rep % 3] * T
        mtbf = np.where(rng.random(n) < 0.8, rng.uniform(2.0, 30.0, n), math.inf)
        mtbf[0] = min(mtbf[0], 10.0)  # some job fails
        restart = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.0, 2.0, n))
        small = n <= 2
        fleet = stormsim.Fleet(T=T, d=d, jitter=sigma,
                               cap=0.6 * n if small and rep % 4 == 0 else math.inf,
                               throughput=["fair", "power:0.5"][rep % 4 // 2] if small else "ideal",
                               mtbf=mtbf, restart=restart,
                               outage_mtbf=[math.inf, 25.0][rep // 2 % 2])
        out.append((fleet, rng.random(n), 60, [0, 7][rep // 3 % 2]))
    return out


@pytest.mark.parametrize("k", range(12))
def test_random_fleets_with_failures_follow_the_reference_draw_for_draw(k):
    """The kernel against tests/reference.py (E8): the same failure and
    outage streams, so the same failures, abandoned writes and firings (to
    rounding), and the same work, down time and goodput's parts."""
    import reference

    fleet, theta, cycles, burn_in = random_failing_fleets()[k]
    seed = 100 + k
    run = stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                            record_firings=True, burn_in=burn_in)
    key = tuple(int(x) for x in root_key(seed))
    ref = reference.simulate_reference(fleet.T, fleet.d, fleet.jitter, fleet.cap, fleet.f, theta,
                                       cycles, burn_in=burn_in, key=key, mtbf=fleet.mtbf,
                                       restart=fleet.restart, outage_mtbf=fleet.outage_mtbf)
    scale = float(np.median(fleet.T + fleet.d))
    tol = 1e-9 * scale * cycles
    np.testing.assert_allclose(run.firings[0], ref["firings"], rtol=0, atol=tol)
    np.testing.assert_allclose(run.occupancy[0], ref["occupancy"], rtol=0, atol=tol)
    np.testing.assert_allclose(run.end_time[0], ref["end_time"], rtol=0, atol=tol)
    assert run.events[0] == ref["events"]
    np.testing.assert_array_equal(run.upcrossings[0], ref["upcrossings"])
    for name in ("failures", "abandoned_writes"):
        np.testing.assert_array_equal(getattr(run, name)[0], ref[name], err_msg=name)
    for name in ("lost_work", "down_time", "committed_work", "uncommitted_work", "writing_time"):
        np.testing.assert_allclose(getattr(run, name)[0], ref[name], rtol=0, atol=tol,
                                   err_msg=name)
    parts = run.goodput_parts
    assert parts["goodput"][0] == pytest.approx(ref["goodput"], abs=1e-9)
    for name, value in ref["goodput_parts"].items():
        assert parts[name][0] == pytest.approx(value, abs=1e-9), name
    assert run.failures.sum() > 0


def test_a_fleet_that_would_never_commit_is_refused():
    fleet = stormsim.Fleet.identical(2, T=100.0, load=0.1, mtbf=4.0)
    with pytest.raises(stormsim.SpecError, match=r"^mtbf\[0\] = 4.0.*never end"):
        stormsim.simulate(fleet, fleets=1, cycles=3)
    outages = stormsim.Fleet.identical(2, T=100.0, load=0.1, outage_mtbf=3.0)
    with pytest.raises(stormsim.SpecError, match="outage_mtbf = 3.0"):
        stormsim.simulate(outages, fleets=1, cycles=3)


# -- E8 in the general kernel: async jobs, weights, the writer cap --

def general_cases():
    """(name, Fleet, theta): async (snapshots, slowdowns of 0, between and 1,
    both rules), weighted and capped fleets, blocking and mixed."""
    rng = np.random.default_rng(20261206)
    out = []
    for n in (1, 3, 6):
        for sigma in (0.0, 0.05):
            base = dict(T=rng.uniform(0.8, 1.2, n), d=rng.uniform(0.05, 0.3, n), jitter=sigma)
            out.append((f"async n={n} s={sigma}", stormsim.Fleet(
                **base, checkpoint="async", snapshot=rng.uniform(0.0, 0.05, n),
                slowdown=rng.choice([0.0, 0.3, 1.0], n), on_busy=rng.choice(["block", "skip"], n)),
                rng.random(n)))
            out.append((f"weighted n={n} s={sigma}", stormsim.Fleet(
                **base, weights=rng.uniform(1.0, 4.0, n), cap=0.7 * n + 0.5), rng.random(n)))
            out.append((f"capped n={n} s={sigma}", stormsim.Fleet(
                **base, max_writers=max(1, n // 3), checkpoint=rng.choice(["async", "blocking"], n),
                snapshot=0.02, slowdown=0.5), np.zeros(n) if n == 3 else rng.random(n)))
    return out


def run_general(fn, fleet, theta, ring, fail=None, seed=7, burn_in=3, cycles=CYCLES):
    """One fleet through ``run_fleet_general`` or its FAIL variant; every output."""
    from stormsim.engine.door import prepare
    from stormsim.engine.run import WAIT_EDGES

    n = fleet.n_jobs
    inputs = prepare(fleet, seed)
    extra = inputs.general
    firings = np.full((n, cycles), np.nan)
    occupancy = np.empty(n + 1)
    upcross = np.empty(n + 1, dtype=np.int64)
    writing = np.empty(n)
    dur_out = np.empty(HIST_BINS + 4)
    wait_out = np.empty(HIST_BINS + 4)
    args = (fleet.T, fleet.d, fleet.jitter, extra[0], fleet.computer_rate, theta, *extra[1:],
            inputs.key0, inputs.key1, 0, cycles, burn_in, 2, False, True, ring, ring, ring,
            firings, occupancy, upcross, writing, CELLS, histogram_cells(WAIT_EDGES), dur_out,
            wait_out)
    fail_out = np.zeros((n + 1, _kernel.FAIL_COLUMNS))
    ret = fn(*args) if fail is None else fn(*args, *fail, fail_out)
    return ret, firings, occupancy, upcross, writing, dur_out, wait_out, fail_out


@pytest.mark.parametrize("ring", [True, False], ids=["ring", "heap"])
def test_f1_the_general_failure_variant_without_failures_gives_todays_bits(ring):
    """F1 in the general kernel: M = inf everywhere takes no draw and changes
    no bit of any output, on async, weighted and capped fleets."""
    for name, fleet, theta in general_cases():
        a = run_general(_kernel.run_fleet_general, fleet, theta, ring)
        b = run_general(_kernel.run_fleet_general_fail, fleet, theta, ring,
                        fail=fail_inputs(fleet, restart=0.5))
        assert a[0] == b[0], name
        for x, y, what in zip(a[1:7], b[1:7], ("firings", "occupancy", "upcross", "writing",
                                               "durations", "waits")):
            np.testing.assert_array_equal(x, y, err_msg=f"{name} {what}")
        fo = b[7]
        assert not fo[:, [_kernel._FO_FAIL, _kernel._FO_ABANDON, _kernel._FO_LOST,
                          _kernel._FO_DOWN]].any(), name


def random_general_failing_fleets():
    """(name, Fleet, theta, cycles, burn_in): async, weighted and capped fleets
    with failures, outages and restarts of 0. Contention among two or three
    writers at most (or one writer slot), as ``random_failing_fleets``."""
    rng = np.random.default_rng(20261207)
    out = []
    for rep in range(18):
        kind = ("async", "weighted", "capped")[rep % 3]
        n = int(rng.integers(1, 4))
        T = rng.uniform(0.5, 1.5, n)
        d = rng.uniform(0.05, 0.4, n)
        sigma = [0.0, 0.02, 0.6][rep // 3 % 3] * T
        mtbf = np.where(rng.random(n) < 0.8, rng.uniform(2.0, 30.0, n), math.inf)
        mtbf[0] = min(mtbf[0], 8.0)  # some job fails
        restart = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.0, 2.0, n))
        opts = dict(T=T, d=d, jitter=sigma, mtbf=mtbf, restart=restart,
                    outage_mtbf=[math.inf, 20.0][rep // 9],
                    throughput=["fair", "power:0.5"][rep % 2],
                    cap=0.7 * n if rep % 4 == 0 else math.inf)
        if kind == "async" or rep % 2:
            a = rng.random(n) < 0.8
            opts.update(checkpoint=np.where(a, "async", "blocking"),
                        snapshot=np.where(a & (rng.random(n) > 0.3), rng.uniform(0.0, 0.1, n), 0.0),
                        slowdown=np.where(a, rng.choice([0.0, 0.25, 1.0], n), 0.0),
                        on_busy=np.where(a, rng.choice(["block", "skip"], n), "block"))
        if kind == "weighted":
            opts["weights"] = rng.uniform(0.5, 3.0, n)
        if kind == "capped":
            opts["max_writers"] = 1
        out.append((f"{kind} {rep}", stormsim.Fleet(**opts), rng.random(n), 40, [0, 5][rep % 2]))
    return out


@pytest.mark.parametrize("k", range(18))
def test_general_fleets_with_failures_follow_the_reference_draw_for_draw(k):
    """The general kernel against tests/reference.py (E8) on async, weighted
    and writer-capped fleets: the same failures, abandoned writes, events and
    up-crossings, firings, work, down time and goodput's parts to rounding."""
    name, fleet, theta, cycles, burn_in = random_general_failing_fleets()[k]
    general_matches_reference(fleet, theta, cycles, burn_in, 200 + k, name)


def general_matches_reference(fleet, theta, cycles, burn_in, seed, name):
    import reference

    run = stormsim.simulate(fleet, launch=theta, fleets=1, cycles=cycles, seed=seed,
                            record_firings=True, burn_in=burn_in, kernel="general")
    key = tuple(int(x) for x in root_key(seed))
    ref = reference.simulate_reference(
        fleet.T, fleet.d, fleet.jitter, fleet.cap, fleet.f, theta, cycles, burn_in=burn_in,
        key=key, checkpoint=fleet.checkpoint, snapshot=fleet.snapshot, slowdown=fleet.slowdown,
        on_busy=fleet.on_busy, weights=fleet.weights, max_writers=fleet.max_writers,
        mtbf=fleet.mtbf, restart=fleet.restart, outage_mtbf=fleet.outage_mtbf)
    scale = float(np.median(fleet.T + fleet.d))
    tol = 1e-9 * scale * cycles
    np.testing.assert_allclose(run.firings[0], ref["firings"], rtol=0, atol=tol, err_msg=name)
    np.testing.assert_allclose(run.occupancy[0], ref["occupancy"], rtol=0, atol=tol)
    np.testing.assert_allclose(run.end_time[0], ref["end_time"], rtol=0, atol=tol)
    assert run.events[0] == ref["events"], name
    np.testing.assert_array_equal(run.upcrossings[0], ref["upcrossings"])
    assert (run.waits[0], run.skips[0]) == (ref["waits"], ref["skips"])
    assert run.wait_time[0] == pytest.approx(ref["wait_time"], abs=tol)
    for field in ("failures", "abandoned_writes"):
        np.testing.assert_array_equal(getattr(run, field)[0], ref[field], err_msg=field)
    for field in ("lost_work", "down_time", "committed_work", "uncommitted_work", "writing_time",
                  "checkpoint_time"):
        np.testing.assert_allclose(getattr(run, field)[0], ref[field], rtol=0, atol=tol,
                                   err_msg=field)
    parts = run.goodput_parts
    assert parts["goodput"][0] == pytest.approx(ref["goodput"], abs=1e-9)
    for part, value in ref["goodput_parts"].items():
        assert parts[part][0] == pytest.approx(value, abs=1e-9), part
    np.testing.assert_allclose(sum(parts.values()), 1.0, rtol=0, atol=1e-12)
    return run


def mixed_general_failing_fleets(count, seed=20261208):
    """Fleets of one to three jobs mixing every option at once: async and
    blocking jobs, snapshots of 0, slowdowns up to 1, both rules, weights, a
    writer cap of any K, binding caps, ideal to fair f, failures often (an
    MTBF down to 1.5 cycles), outages, restarts of 0, sync launches."""
    rng = np.random.default_rng(seed)
    out = []
    for rep in range(count):
        n = int(rng.integers(1, 4))
        T = rng.uniform(0.5, 1.5, n)
        d = rng.uniform(0.05, 0.6, n)
        mtbf = np.where(rng.random(n) < 0.8, rng.uniform(1.5, 20.0, n), math.inf)
        mtbf[0] = min(mtbf[0], 6.0)
        a = rng.random(n) < 0.7
        opts = dict(T=T, d=d, jitter=rng.choice([0.0, 0.02, 0.8]) * T, mtbf=mtbf,
                    restart=np.where(rng.random(n) < 0.4, 0.0, rng.uniform(0.0, 2.0, n)),
                    outage_mtbf=rng.choice([math.inf, 15.0]),
                    throughput=rng.choice(["fair", "power:0.5", "ideal"]),
                    cap=rng.choice([math.inf, 0.7 * n]), checkpoint=np.where(a, "async", "blocking"),
                    snapshot=np.where(a & (rng.random(n) > 0.3), rng.uniform(0.0, 0.2, n), 0.0),
                    slowdown=np.where(a, rng.choice([0.0, 0.25, 0.9, 1.0], n), 0.0),
                    on_busy=np.where(a, rng.choice(["block", "skip"], n), "block"),
                    max_writers=int(rng.integers(1, n + 1)))
        if rng.random() < 0.5:
            opts["weights"] = rng.uniform(0.5, 3.0, n)
        theta = rng.random(n) if rng.random() < 0.7 else np.zeros(n)
        out.append((f"mixed {rep}", stormsim.Fleet(**opts), theta, 25, int(rng.integers(0, 4))))
    return out


def test_many_mixed_general_fleets_with_failures_follow_the_reference():
    """200 small fleets with every option at once against the reference (~1 s)."""
    for k, (name, fleet, theta, cycles, burn_in) in enumerate(mixed_general_failing_fleets(200)):
        general_matches_reference(fleet, theta, cycles, burn_in, 5000 + k, name)


def some_failing_general_fleets():
    rng = np.random.default_rng(6)
    n = 6
    return [stormsim.Fleet.identical(n, T=1.0, load=0.9, jitter=0.03, checkpoint="async",
                                     snapshot=0.02, slowdown=0.3, mtbf=12.0, restart=0.4,
                                     outage_mtbf=60.0),
            stormsim.Fleet(T=rng.uniform(0.8, 1.2, n), d=rng.uniform(0.05, 0.2, n), jitter=0.05,
                           weights=rng.uniform(1.0, 3.0, n), mtbf=rng.uniform(5.0, 50.0, n),
                           restart=0.3, cap=4.0),
            stormsim.Fleet.identical(n, T=1.0, load=1.2, jitter=0.05, max_writers=2, mtbf=8.0,
                                     restart=0.0, outage_mtbf=40.0,
                                     checkpoint=["async", "blocking"] * (n // 2), snapshot=0.02,
                                     slowdown=0.5, on_busy="skip")]


@pytest.mark.parametrize("k", range(3))
def test_general_results_with_failures_depend_on_neither_threads_nor_batches(k):
    fleet = some_failing_general_fleets()[k]
    args = dict(fleets=12, cycles=60, burn_in=4, seed=9, record_firings=True, passage_level=2,
                stop_at_passage=False)
    fields = FAIL_FIELDS + ("passage_time", "checkpoint_time", "waits", "skips", "wait_time",
                            "wait_hist", "wait_sum")
    a = stormsim.simulate(fleet, **args)
    others = [stormsim.simulate(fleet, batch_size=5, threads=1, **args),
              stormsim.simulate(fleet, threads=2, batch_size=7, **args)]
    if np.all(fleet.weights == fleet.weights[0]):  # weights: W summed in another order
        others += [stormsim.simulate(fleet, queues="heap", **args),
                   stormsim.simulate(fleet, queues="ring", **args)]
    tail = stormsim.simulate(fleet, **{**args, "fleets": 5}, fleet_start=7)
    for b in others:
        for name in fields:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in fields:
        np.testing.assert_array_equal(getattr(a, name)[7:], getattr(tail, name), err_msg=name)
    assert a.failures.sum() > 20 and a.abandoned_writes.sum() > 0


def test_general_goodputs_parts_sum_to_one():
    for fleet in some_failing_general_fleets():
        run = stormsim.simulate(fleet, fleets=8, cycles=100, burn_in=10, seed=1)
        parts = run.goodput_parts
        np.testing.assert_allclose(sum(parts.values()), 1.0, rtol=0, atol=1e-12)
        for name, share in parts.items():
            assert (share > -1e-12).all(), name
        assert (parts["lost"] > 0).all() and (parts["writing"] > 0).all()
        if fleet.cap >= fleet.n_jobs:
            np.testing.assert_allclose(parts["cap"], 0.0, atol=1e-12)
        else:
            assert (parts["cap"] > 0.01).all()


def test_a_base_fleet_with_failures_is_the_same_in_both_kernels():
    """The general kernel on a blocking fleet without a cap: the anonymous
    kernel's failures, and checkpointing time is writing time (to rounding)."""
    fleet = some_failing_fleets()[0]
    args = dict(fleets=4, cycles=40, burn_in=3, seed=2, record_firings=True)
    a = stormsim.simulate(fleet, **args)
    b = stormsim.simulate(fleet, kernel="general", **args)
    for name in ("failures", "abandoned_writes", "outages", "events"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("firings", "lost_work", "down_time", "committed_work", "uncommitted_work",
                 "writing_time", "checkpoint_time"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=1e-9,
                                   err_msg=name)
    np.testing.assert_allclose(b.checkpoint_time, b.writing_time, rtol=0, atol=1e-9)


def test_a_restart_time_without_failures_is_not_in_the_seed():
    plain = stormsim.Fleet.identical(4, T=1.0, load=0.5, jitter=0.01)
    assert plain.replace(restart=5.0).canonical() == plain.canonical()
    failing = plain.replace(mtbf=50.0)
    assert failing.replace(restart=5.0).canonical() != failing.canonical()

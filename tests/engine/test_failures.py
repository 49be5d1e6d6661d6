"""Failures, restarts, outages and goodput in the anonymous kernel (MODEL.md E8).

F1: with every M_i = inf and M_0 = inf the failure variant of the event loop
gives today's bits (no draw taken), and such a fleet is the base model. F2:
Daly's law, E = M e^{R/M} (e^{(T+d)/M} - 1) per committed interval, on one
job and on eight independent ones (ideal f, sigma = 0, uncapped). F3: an
outage synchronizes identical jobs. And: the goodput's parts sum to 1;
results depend neither on threads, batches nor the queues; bad values are a
SpecError naming the field.
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


def test_failures_outside_the_anonymous_kernel_are_refused_by_name():
    fleet = stormsim.Fleet.identical(3, T=1.0, load=0.5, mtbf=10.0, checkpoint="async")
    with pytest.raises(stormsim.SpecError, match="failures"):
        stormsim.simulate(fleet, fleets=2, cycles=5)
    plain = stormsim.Fleet.identical(3, T=1.0, load=0.5, mtbf=10.0)
    with pytest.raises(stormsim.SpecError, match="failures"):
        stormsim.simulate(plain, fleets=2, cycles=5, kernel="general")
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

"""A result depends only on its inputs and seed: not on threads, batches or neighbours."""
from __future__ import annotations

import numba
import numpy as np
import pytest

import stormsim

FIELDS = ("firings", "occupancy", "passage_time", "passage_cycle", "end_time", "events",
          "upcrossings", "writing_time", "waits", "wait_time", "skips", "durations_count",
          "durations_sum", "durations_max", "durations_hist", "wait_sum", "wait_max", "wait_hist")


def jittered(n=6):
    return stormsim.Fleet.identical(n, T=1.0, load=0.7, jitter=0.03, cap=0.8 * n)


def extended(n=6):
    """Async and blocking jobs, both rules, slowdowns, snapshots, unequal weights
    (MODEL.md E1, E2): the general kernel."""
    return stormsim.Fleet(T=np.linspace(0.9, 1.1, n), d=np.full(n, 0.8), cap=0.8 * n, jitter=0.03,
                          checkpoint=["async"] * (n - 1) + ["blocking"],
                          snapshot=[0.02] * (n - 1) + [0.0],
                          slowdown=[0.0, 0.3, 1.0, 0.5, 0.1, 0.0][:n - 1] + [0.0],
                          on_busy=["block", "skip"] * ((n - 1) // 2) + ["block"] * (2 - n % 2),
                          weights=np.arange(1.0, n + 1))


def uncapped(n=6):
    """A fleet the fast-forward serves (C >= N), at a load where collisions
    come and go, so runs alternate between it and the event loop."""
    return stormsim.Fleet.identical(n, T=1.0, load=0.3, jitter=0.005)


def writer_cap(n=6):
    """MODEL.md E5: at most 2 writers, blocking and async jobs queueing for them,
    so the new outputs (E7 durations and waits) carry queue waits."""
    return stormsim.Fleet(T=np.linspace(0.9, 1.1, n), d=np.full(n, 0.5), jitter=0.03,
                          checkpoint=["async", "blocking"] * (n // 2), snapshot=0.01,
                          slowdown=0.2, max_writers=2)


FLEETS = {"base": jittered, "extended": extended, "fast-forward": uncapped,
          "writer-cap": writer_cap}


def run(fleet="base", **kw):
    args = dict(launch="random", fleets=100, cycles=60, seed=2026, record_firings=True,
                passage_level=3, stop_at_passage=False, burn_in=5)
    if fleet == "fast-forward":
        args["fast_forward"] = True  # also through its collisions ("auto": first passages)
    args.update(kw)
    return stormsim.simulate(FLEETS[fleet](), **args)


def assert_identical(a, b, rows=slice(None)):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        np.testing.assert_array_equal(x[rows], y, err_msg=name)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.parametrize("fleet", FLEETS)
def test_one_and_two_threads_agree_bit_for_bit(fleet):
    assert_identical(run(fleet, threads=1), run(fleet, threads=2))


@pytest.mark.parametrize("fleet", FLEETS)
def test_fleets_alone_equal_fleets_inside_a_larger_run(fleet):
    big = run(fleet, fleets=100)
    small = run(fleet, fleets=8)
    assert_identical(big, small, rows=slice(0, 8))


@pytest.mark.parametrize("fleet", FLEETS)
@pytest.mark.parametrize("batch", [1, 7, 33, 1000])
def test_batch_size_does_not_matter(fleet, batch):
    assert_identical(run(fleet, batch_size=1000), run(fleet, batch_size=batch))


@pytest.mark.parametrize("fleet", FLEETS)
def test_fleet_start_continues_a_run(fleet):
    whole = run(fleet, fleets=100)
    tail = run(fleet, fleets=40, fleet_start=60)
    assert_identical(whole, tail, rows=slice(60, 100))


def test_the_extended_fleet_exercises_its_options():
    """Not vacuous: the general kernel's waits, skips and overlaps all occur."""
    r = run("extended")
    assert r.waits.sum() > 0 and r.skips.sum() > 0 and r.upcrossings[:, 3].sum() > 0


def test_the_writer_cap_fleet_queues():
    """Not vacuous: checkpoints wait for a writer slot (E5) and the E7 outputs
    see it; never more than 2 writers."""
    r = run("writer-cap")
    assert r.wait_sum.sum() > 0 and r.wait_hist[:, 1:].sum() > 0
    assert r.occupancy[:, 3:].sum() == 0 and r.occupancy[:, 2].sum() > 0


def test_the_fast_forward_fleet_takes_the_fast_path():
    """Not vacuous either: its results round differently from the pure event loop's."""
    assert not np.array_equal(run("fast-forward").firings,
                              run("fast-forward", fast_forward=False).firings)


@pytest.mark.parametrize("fleet", ["base", "fast-forward"])
def test_stop_at_passage_is_a_prefix_of_the_full_run(fleet):
    """Stopping at the passage changes nothing before it."""
    full = run(fleet, passage_level=2, stop_at_passage=False)
    stop = run(fleet, passage_level=2, stop_at_passage=True)
    np.testing.assert_array_equal(full.passage_time, stop.passage_time)
    np.testing.assert_array_equal(full.passage_cycle, stop.passage_cycle)
    np.testing.assert_array_equal(stop.end_time, stop.passage_time)
    done = ~np.isnan(stop.firings)
    np.testing.assert_array_equal(stop.firings[done], full.firings[done])


def test_one_seed_gives_the_same_compute_intervals_in_both_modes():
    """MODEL.md E1: normal m of job i is its m-th compute interval after the
    launch interval, blocking or async: a lone job (no contention) has the
    intervals firing(k+1) - firing(k) - d (blocking) and - s (async, eps = 0)."""
    kw = dict(T=[1.0], d=[0.1], jitter=0.05)
    b = stormsim.simulate(stormsim.Fleet(**kw), launch=[0.5], fleets=3, cycles=40, seed=7,
                          record_firings=True)
    a = stormsim.simulate(stormsim.Fleet(**kw, checkpoint="async", snapshot=0.02), launch=[0.5],
                          fleets=3, cycles=40, seed=7, record_firings=True)
    # 40 firings near t ~ 40: rounding ~1e-14 per difference.
    np.testing.assert_allclose(np.diff(b.firings, axis=2) - 0.1, np.diff(a.firings, axis=2) - 0.02,
                               rtol=0, atol=1e-12)


def test_seed_matters_and_is_recorded():
    a, b = run(seed=1), run(seed=2)
    assert not np.array_equal(a.firings, b.firings)
    fresh = stormsim.simulate(jittered(), fleets=3, cycles=5, seed=None)
    again = stormsim.simulate(jittered(), fleets=3, cycles=5, seed=fresh.seed)
    np.testing.assert_array_equal(fresh.occupancy, again.occupancy)

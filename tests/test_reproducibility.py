"""A result depends only on its inputs and seed: not on threads, batches or neighbours."""
from __future__ import annotations

import numba
import numpy as np
import pytest

import stormsim

FIELDS = ("firings", "occupancy", "passage_time", "passage_cycle", "end_time", "events",
          "upcrossings", "writing_time")


def jittered(n=6):
    return stormsim.Fleet.identical(n, T=1.0, load=0.7, jitter=0.03, cap=0.8 * n)


def uncapped(n=6):
    """A fleet the fast-forward serves (C >= N), at a load where collisions
    come and go, so runs alternate between it and the event loop."""
    return stormsim.Fleet.identical(n, T=1.0, load=0.3, jitter=0.005)


FLEETS = {"capped": jittered, "fast-forward": uncapped}


@pytest.fixture(params=sorted(FLEETS))
def kind(request):
    return request.param


def run(kind="capped", **kw):
    args = dict(launch="random", fleets=100, cycles=60, seed=2026, record_firings=True,
                passage_level=3, stop_at_passage=False, burn_in=5)
    args.update(kw)
    return stormsim.simulate(FLEETS[kind](), **args)


def assert_identical(a, b, rows=slice(None)):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        np.testing.assert_array_equal(x[rows], y, err_msg=name)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_one_and_two_threads_agree_bit_for_bit(kind):
    assert_identical(run(kind, threads=1), run(kind, threads=2))


def test_fleets_alone_equal_fleets_inside_a_larger_run(kind):
    big = run(kind, fleets=100)
    small = run(kind, fleets=8)
    assert_identical(big, small, rows=slice(0, 8))


@pytest.mark.parametrize("batch", [1, 7, 33, 1000])
def test_batch_size_does_not_matter(batch, kind):
    assert_identical(run(kind, batch_size=1000), run(kind, batch_size=batch))


def test_fleet_start_continues_a_run(kind):
    whole = run(kind, fleets=100)
    tail = run(kind, fleets=40, fleet_start=60)
    assert_identical(whole, tail, rows=slice(60, 100))


def test_the_fast_forward_fleet_uses_it():
    """The 'fast-forward' fleet above does take the fast path (its results
    round differently from the pure event loop's)."""
    assert not np.array_equal(run("fast-forward").firings,
                              run("fast-forward", fast_forward=False).firings)


def test_seed_matters_and_is_recorded():
    a, b = run(seed=1), run(seed=2)
    assert not np.array_equal(a.firings, b.firings)
    fresh = stormsim.simulate(jittered(), fleets=3, cycles=5, seed=None)
    again = stormsim.simulate(jittered(), fleets=3, cycles=5, seed=fresh.seed)
    np.testing.assert_array_equal(fresh.occupancy, again.occupancy)


def test_stop_at_passage_is_a_prefix_of_the_full_run():
    """Stopping at the passage changes nothing before it."""
    full = run(passage_level=2, stop_at_passage=False)
    stop = run(passage_level=2, stop_at_passage=True)
    np.testing.assert_array_equal(full.passage_time, stop.passage_time)
    np.testing.assert_array_equal(full.passage_cycle, stop.passage_cycle)
    np.testing.assert_array_equal(stop.end_time, stop.passage_time)
    done = ~np.isnan(stop.firings)
    np.testing.assert_array_equal(stop.firings[done], full.firings[done])

"""Forward flux sampling on the general dynamics (async E1, weights E2,
writer caps E5): the kernel's walker (``engine._kernel.gffs_*``).

The walker integrates the general kernel's dynamics on a state it can bank
and clone; its first check is that a flux run is ``simulate``'s general-kernel
fleet, bit for bit (heap queues), on random small fleets mixing the options,
whatever the score sees.
"""
from __future__ import annotations

import numpy as np
import pytest

import stormsim
from stormsim.engine import door

#: The measured window, summed in time order, against the occupancy summed
#: level by level: the same intervals added in another order, ~1e3 additions
#: of rounding 1e-16 relative each.
WINDOW_RTOL = 1e-12


def _random_fleet(rng):
    """A small fleet mixing async jobs (both on_busy rules, snapshots, slowdowns
    0, 0.2 and 1), blocking ones, weights 1 and 4, a writer cap and a power cap."""
    n = int(rng.integers(2, 9))
    a = rng.random(n) < 0.7
    kw = dict(T=rng.uniform(5, 20, n), d=rng.uniform(0.3, 3, n), jitter=rng.uniform(0, 1, n),
              checkpoint=["async" if x else "blocking" for x in a],
              snapshot=np.where(a, rng.choice([0.0, 0.3], n), 0.0),
              slowdown=np.where(a, rng.choice([0.0, 0.2, 1.0], n), 0.0),
              on_busy=[str(rng.choice(["block", "skip"])) if x else "block" for x in a])
    if rng.random() < 0.5:
        kw["weights"] = rng.choice([1.0, 4.0], n)
    if rng.random() < 0.6:
        kw["max_writers"] = int(rng.integers(1, n + 1))
    if rng.random() < 0.5:
        kw["cap"] = float(rng.uniform(1, n))
    return stormsim.Fleet(**kw)


def _flux_runs(fleet, seed, fleets, cycles, burn_in, lo, horizon, reservoir=4):
    """door.gffs_flux's flux runs of fleets 0.. (launch "random")."""
    inputs = door.prepare(fleet, seed)
    n = fleet.n_jobs
    _, nf, ni = door.gffs_layout(n)
    occ = np.zeros((fleets, n + 1))
    up = np.zeros((fleets, n + 1), dtype=np.int64)
    res_f = np.zeros((fleets, reservoir, nf))
    res_i = np.zeros((fleets, reservoir, ni), dtype=np.int64)
    entries = np.zeros(fleets, dtype=np.int64)
    events = np.zeros(fleets, dtype=np.int64)
    window = np.zeros(fleets)
    door.gffs_flux(door.gffs_fleet(inputs), door.phases(inputs, None, 0, fleets),
                   inputs.key0, inputs.key1, np.int64(0), np.int64(lo), np.int64(burn_in),
                   np.int64(cycles), occ, up, res_f, res_i, entries, events, window,
                   np.int64(horizon))
    return occ, up, events, entries, window, res_f, res_i


@pytest.mark.parametrize("horizon", [0, 2])
def test_flux_run_is_the_general_kernel_fleet_bit_for_bit(horizon):
    """40 random small fleets mixing the options: a flux run, stopped at every
    instant that draws or ends a persist to look at its score (basin edge 2,
    reached, so entries are banked; or N + 1, never), gives ``simulate``'s
    general-kernel occupancy, up-crossings and event count bit for bit (the
    same arithmetic in the same order, heap queues): looking changes nothing."""
    rng = np.random.default_rng(38)
    for case in range(40):
        fleet = _random_fleet(rng)
        run = stormsim.simulate(fleet, fleets=3, cycles=60, burn_in=5, seed=7, kernel="general",
                                queues="heap")
        for lo in (2, fleet.n_jobs + 1):
            occ, up, events, entries, window, *_ = _flux_runs(fleet, 7, 3, 60, 5, lo, horizon)
            assert np.array_equal(occ, run.occupancy), (case, lo)
            assert np.array_equal(up, run.upcrossings), (case, lo)
            assert np.array_equal(events, run.events), (case, lo)
            assert np.allclose(window, occ.sum(axis=1), rtol=WINDOW_RTOL, atol=0.0), (case, lo)
            if lo > fleet.n_jobs:
                assert not entries.any()


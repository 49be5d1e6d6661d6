"""Forward flux sampling on the general dynamics (async E1, weights E2,
writer caps E5): the kernel's walker (``engine._kernel.gffs_walk``, ``gffs_flux``, ``gffs_stage``).

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
from stormsim.errors import SpecError
from stormsim.risk import splitting
from stormsim.risk.settings import SplitSettings
from stormsim.risk.splitting import storm_split

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


def _flux_runs(fleet, seed, fleets, cycles, burn_in, lo, horizon, score_every):  # noqa: PLR0913 (the flux run's inputs)
    """splitting's own flux runs (``_gflux``: door.gffs_flux) of fleets 0..
    (launch "random"): occupancy, up-crossings, events, entries, window."""
    split = SplitSettings(flux_cycles=cycles, burn_in=burn_in, horizon=horizon,
                          score_every=score_every, reservoir=4)
    occ, up, _, _, entries, events, window = splitting._gflux(door.prepare(fleet, seed), split,
                                                              "random", 0, fleets, lo)
    return occ, up, events, entries, window


@pytest.mark.parametrize(("horizon", "sparse"), [(0, False), (2, False), (2, True)])
def test_flux_run_is_the_general_kernel_fleet_bit_for_bit(horizon, sparse):
    """40 random small fleets mixing the options: a flux run, stopped to look
    at its score at every instant that draws a compute interval (or once a
    cycle: sparse) (basin edge 2, reached, so entries are banked; or N + 1,
    never), gives ``simulate``'s
    general-kernel occupancy, up-crossings and event count bit for bit (the
    same arithmetic in the same order, heap queues): looking changes nothing."""
    rng = np.random.default_rng(38)
    for case in range(40):
        fleet = _random_fleet(rng)
        run = stormsim.simulate(fleet, fleets=3, cycles=60, burn_in=5, seed=7, kernel="general",
                                queues="heap")
        for lo in (2, fleet.n_jobs + 1):
            occ, up, events, entries, window = _flux_runs(
                fleet, 7, 3, 60, 5, lo, horizon, "cycle" if sparse else "write-end")
            assert np.array_equal(occ, run.occupancy), (case, lo)
            assert np.array_equal(up, run.upcrossings), (case, lo)
            assert np.array_equal(events, run.events), (case, lo)
            assert np.allclose(window, occ.sum(axis=1), rtol=WINDOW_RTOL, atol=0.0), (case, lo)
            if lo > fleet.n_jobs:
                assert not entries.any()



def _async_cell(n=8, rule="block"):
    """Identical async jobs, L = 0.6, sigma = 0.01 T, snapshot 0.01 T, eps = 0.2."""
    return stormsim.Fleet(T=[1.0] * n, d=[0.6 / n] * n, jitter=0.01, checkpoint="async",
                          snapshot=0.01, slowdown=0.2, on_busy=rule)


def test_general_results_are_a_function_of_seed_inputs_and_effort():
    """Not of the thread count, nor of how the replicates are split into calls:
    each clone's start row and streams are a function of (seed, stage,
    replicate, clone), continuing each job's counter of compute intervals."""
    f = stormsim.Fleet(T=[1.0] * 8, d=[0.075] * 8, jitter=0.01, weights=[1.0, 4.0] * 4,
                       max_writers=6)
    kw = dict(trials=50, flux_cycles=300, burn_in=30, seed=4, basin=3)
    one = storm_split(f, [4, 5], replicates=4, threads=1, **kw)
    two = storm_split(f, [4, 5], replicates=4, threads=2, **kw)
    assert one.interfaces.size > 2 and not one.from_flux[-1]
    assert np.array_equal(one.rep_storms_per_s, two.rep_storms_per_s)
    assert np.array_equal(one.rep_p_ge, two.rep_p_ge)
    a = storm_split(f, [4, 5], replicates=2, **kw)
    b = storm_split(f, [4, 5], replicates=2, rep0=2, **kw)
    assert np.array_equal(np.concatenate([a.rep_p_ge, b.rep_p_ge]), one.rep_p_ge)
    other = storm_split(f, [4, 5], replicates=4, **{**kw, "seed": 5})
    assert not np.array_equal(other.rep_p_ge, one.rep_p_ge)


def test_refuses_fleets_with_failures():
    f = stormsim.Fleet(T=[1.0] * 4, d=[0.1] * 4, jitter=0.01, checkpoint="async", mtbf=100.0)
    with pytest.raises(SpecError, match=r"^fleet = .*without failures.*method='plain'"):
        storm_split(f, [3])
    with pytest.raises(SpecError, match=r"^fleet = .*without failures"):
        stormsim.storm_risk(f, [3], method="splitting")


#: Splitting against plain Monte Carlo: |difference| <= Z_AGREE combined
#: standard errors. 4, not the base model's 3: a cell compares ~10 figures
#: that share one flux run (all move together), and splitting's se comes
#: from 16 replicates (a t with 15 degrees of freedom: P(|t| > 3) = 0.009,
#: P(|t| > 4) = 0.001 per figure); measured z at N = 8 and 16 (seeds 2, 3,
#: 4) within +-3.4 (docs/SPLITTING.md, "The general dynamics").
Z_AGREE = 4.0
#: A level plain Monte Carlo resolves: its relative standard error at most this.
RESOLVED_RE = 0.3


def _agreement(fleet, ks, fleets, replicates=16, trials=100, flux_cycles=1000, horizon=2):
    """z of splitting against plain Monte Carlo, per level plain resolves, for
    P(n_w >= k) and nu_k (benchmarks.splitting_general's comparison)."""
    from stormsim.stats.storms import storm_estimate
    from stormsim.stats.tails import tail_estimate

    run = stormsim.simulate(fleet, fleets=fleets, cycles=800, burn_in=80, seed=11)
    te = tail_estimate(run.occupancy)
    st = storm_estimate(run.upcrossings, run.occupancy)
    s = storm_split(fleet, ks, trials=trials, replicates=replicates, flux_cycles=flux_cycles,
                    burn_in=100, seed=2, horizon=horizon)
    assert s.truncated == 0
    out = []
    for j, k in enumerate(ks):
        se_pp = (te.p_ge_hi[k] - te.p_ge_lo[k]) / 4
        se_rp = st.storms_per_s[k] * st.storms_per_s_rel_error[k]
        if not (te.p_ge[k] > 0 and se_pp / te.p_ge[k] <= RESOLVED_RE
                and st.storms_per_s_rel_error[k] <= RESOLVED_RE):
            continue
        zp = (s.p_ge[j] - te.p_ge[k]) / np.hypot(s.p_ge[j] * s.p_ge_rel_error[j], se_pp)
        zr = (s.storms_per_s[j] - st.storms_per_s[k]) / np.hypot(
            s.storms_per_s[j] * s.storms_per_s_rel_error[j], se_rp)
        out.append((k, bool(s.from_flux[j]), zp, zr))
    return out


@pytest.mark.parametrize("cell, horizon", [("async", 2), ("weights", 2), ("cap", 2),
                                           ("async", 0)])
def test_agrees_with_plain_monte_carlo_at_n_8(cell, horizon):
    """N = 8, L = 0.6, sigma = 0.01 T: async (snapshot 0.01 T, eps = 0.2),
    weights 1 and 4 alternating, a writer cap K = 4; splitting stages above
    L_0 (the mean future, and the committed one for async) agree with plain
    Monte Carlo (2000 fleets x 800 cycles) at every level it resolves, for
    the time share and the storm rate."""
    base = dict(T=[1.0] * 8, d=[0.075] * 8, jitter=0.01)
    fleet = {"async": stormsim.Fleet(**base, checkpoint="async", snapshot=0.01, slowdown=0.2),
             "weights": stormsim.Fleet(**base, weights=[1.0, 4.0] * 4),
             "cap": stormsim.Fleet(**base, max_writers=4)}[cell]
    ks = [k for k in (3, 4, 5, 6, 7) if k <= fleet.max_writers]
    z = _agreement(fleet, ks, 2000, horizon=horizon)
    assert any(not flux for _, flux, _, _ in z)          # a level from the stages
    for k, _, zp, zr in z:
        assert abs(zp) <= Z_AGREE and abs(zr) <= Z_AGREE, (k, zp, zr)


@pytest.mark.slow  # ~3 min: N = 16, six cells
@pytest.mark.parametrize("cell", ["async-block", "async-skip", "weights", "cap", "mixed-block",
                                  "mixed-skip"])
def test_agrees_with_plain_monte_carlo_at_n_16(cell):
    """The issue's cells (benchmarks.splitting_general): N = 16, L = 0.6,
    sigma = 0.01 T; async eps = 0.2 with both rules, weights 1 and 4, a cap
    K = 8; and "mixed": 4 jobs of T = 0.1 T, d = 0.015 among 12 of the cell
    (L = 1.05), async, where a fast job's persist outlasts its interval with
    ~10 writers, so the rules differ in the tail."""
    from benchmarks.splitting_general import cells, levels

    fleet = cells(16)[cell]
    z = _agreement(fleet, levels(16, fleet), 4000, flux_cycles=2000)
    assert any(not flux for _, flux, _, _ in z)
    for k, _, zp, zr in z:
        assert abs(zp) <= Z_AGREE and abs(zr) <= Z_AGREE, (k, zp, zr)


@pytest.mark.parametrize(("horizon", "look"), [(0, 0), (2, 0), (0, 1), (2, 1)])
def test_between_two_looks_the_fleet_stays_at_or_below_the_score(horizon, look):
    """What makes the basin {score < L_0} a set of quiet states: from one look
    to the next (look 0: the next instant that draws a compute interval;
    look 1, once a cycle: the last instant before an interval drawn since
    could end, at its draw or its mean) the fleet follows the future the
    score walked, so n_w, and every up-crossing up to and including the next
    look's instant, stay at or below the score. Random mixed fleets (async
    both rules, weights, caps, slowdowns), 300 looks each from the launch,
    the score walked in full (hi = N + 1)."""
    from stormsim.engine import _kernel

    rng = np.random.default_rng(5)
    for case in range(12):
        fleet = _random_fleet(rng)
        n = fleet.n_jobs
        inputs = door.prepare(fleet, case)
        g = door.gffs_fleet(inputs)
        _, nf, ni = door.gffs_layout(n)
        sf, si = np.empty(nf), np.empty(ni, dtype=np.int64)
        sf2, si2 = np.empty(nf), np.empty(ni, dtype=np.int64)
        _kernel.gffs_launch(inputs.T, door.phases(inputs, None, 0, 1)[0], sf, si)
        base = np.array([_kernel.stream_base(inputs.key0, inputs.key1, 0, i) for i in range(n)],
                        dtype=np.uint64)
        popped, popkey, stack = (np.empty(n, dtype=np.int64), np.empty(n),
                                 np.empty(n, dtype=np.int64))
        ctr2 = np.zeros(4, dtype=np.int64)
        ctr = np.array([0, 0, 0, 1], dtype=np.int64)
        hi = np.int64(n + 1)
        none = np.empty(0)
        score = _kernel.gffs_score(g, base, sf, si, sf2, si2, popped, popkey, stack, ctr2, False,
                                   hi, np.int64(horizon), none)
        advance = False
        for step in range(300):
            occ = np.zeros(n + 1)
            up = np.zeros(n + 1, dtype=np.int64)
            r = _kernel._gffs_call(g, base, sf, si, popped, popkey, stack, 0, advance, hi,
                                   np.int64(1) << 62, False, np.int64(0), np.int64(0),
                                   np.int64(1) << 62, occ, up, ctr, np.zeros(1), np.int64(look))
            assert r == _kernel.GW_LOOK
            advance = True
            assert not occ[score + 1:].any() and not up[score + 1:].any(), (case, step, score)
            score = _kernel.gffs_score(g, base, sf, si, sf2, si2, popped, popkey, stack, ctr2,
                                       True, hi, np.int64(horizon), none)

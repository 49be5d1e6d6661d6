"""Storm risk far below plain Monte Carlo: forward flux sampling.

``storm_split(fleet, levels)`` estimates, for each level k, the storm rate
nu_k (up-crossings of n_w to >= k per second, MODEL.md E3) and the time
fraction P(n_w >= k), down to 1e-12 and below, by stationary forward flux
sampling (FFS; Allen, Frenkel & ten Wolde 2006) on the exact dynamics.

Scope: every fleet without failures. The base model (blocking checkpoints,
anonymous sharing) runs on the two-clock kernel, as described below.
Asynchronous checkpoints (MODEL.md E1: both on_busy rules, snapshots,
slowdowns), unequal weights (E2) and a writer cap (E5), alone or mixed, run
on the general dynamics (``engine._kernel.gffs_walk``; "The general
dynamics" below). Fleets with failures (E8) are refused with a SpecError;
``storm_risk`` uses plain Monte Carlo for them.

The design
----------
Importance score S: the largest n_w of a predicted future from the present
state. ``horizon = 0``: the *committed future*, the exact dynamics in which
the jobs now computing fire at their already-drawn targets and no compute
interval started later ends (``engine._kernel.ffs_committed_max``). ``horizon = H
>= 1`` (the default, DEFAULT_HORIZON = 2): the *mean future* over H more
cycles, the same dynamics in which every compute interval started later
lasts exactly its mean T_i (no new draw), stopped after (jobs computing now)
+ H N firings (``engine._kernel.ffs_lookahead_max``); with the fleet's own sharing
it follows a cluster's growth (jobs firing inside a long shared write leave
it together) over the next cycles. Either way S >= n_w and S is a function of
the state alone; it can change only at the end of a write (the one instant a
new compute interval is drawn), so a state whose S has just reached an
interface differs from its clones' futures at their very next draw; plain
n_w would split clones that share the next cycle's firings.

When S is looked at (``score_every``): "write-end" at every write end.
"cycle" (the default) once a cycle: at the last instant before the first
compute interval drawn since the previous look could end (at its draw or at
its mean, whichever is first). Until then the fleet follows exactly the
future walked at that look (the same firings and write ends), so n_w <= S
still holds between looks and the basin, the entries and the excursions are
those of one rule, the same in flux runs and in every stage. A trial whose
last look scored within NEAR_LEVELS of its next interface also looks at
every write end, for that interface only, so it is seen reaching it as soon
as "write-end" would see it; the look that decides the basin stays the
cycle's (its due time travels with a state into the next stage's bank).
Most of a deep stage's events are failing trials far below the next
interface, which now cost one walk a cycle instead of one per write end.

Interfaces: fixed integers L_0 < L_0 + 1 < ... < k_max (k_max the deepest
level asked); the basin is A = {S < L_0}. "Reaching" L means S >= L at an
instant; a state that jumps past several interfaces is an entry of each
(its next trials reach at once, with zero length), so integer levels need
no tie rule: the interfaces are fixed, not chosen from the sample.

The estimator, per replicate (all functionals vanish in A because n_w <= S):
  rate(G) = Phi_0 * sum_j (prod_{i<j} p_i) * g_j
- Phi_0 = entries into {S >= L_0} from A per second of a plain (flux) run
  of one fleet, measured after a burn-in; its entry states are kept in a
  uniform reservoir;
- stage j (0..J-1): ``trials`` clones, each from a state drawn uniformly
  from the previous stage's entries (the flux run's reservoir for j = 0),
  run until S >= L_{j+1} (a success: its state enters the next bank) or
  S < L_0; p_j = the fraction of successes; the top stage J (at k_max)
  runs its clones until they return to A;
- g_j = the mean over stage j's clones of G accrued from the clone's start
  to its stop (G = the up-crossings of level k, or the time with n_w >= k):
  the stages' segments tile every excursion out of A.
This is the fixed-effort multilevel splitting estimator, unbiased for each
factor's product (Del Moral's particle estimates); and E[Phi_0 * mean of h
over uniformly drawn entries] = E[sum over entries of h] / window = the
stationary rate, so the whole is unbiased as plain Monte Carlo from the
same burn-in is. Levels below L_0 are the flux runs' plain estimates.

Randomness: clone m of replicate r in stage j draws its start row and its
normals from streams keyed by (seed, stage, r, m) (``engine._kernel.ffs_stage``),
continuing each job's normal counter, so the result is a function of
(seed, inputs, effort) alone, not of threads or timing. Replicate r's flux
fleet is fleet r of ``simulate(fleet, seed=seed)`` (same launch, same
streams).

Error bars: from independent replicates (each its own flux run and stages),
never from clones (clones of one excursion are correlated): the mean m of the
replicate estimates and a 95 % interval m * exp(+-t_{R-1} RE), RE the larger
of se / m (se the standard error over replicates; the delta method on the log
scale) and the RE a zero-inflated lognormal of the replicates' log spread
allows (``split_estimate.interval``): the replicates are heavy-tailed, and
se / m alone covered the exact law in 13 of 20 seeds at k = 23 of N = 32
(docs/SPLITTING.md, "Against the exact law").

What limits the variance (measured at N = 16 and 32, L = 0.6, sigma = 0.01 T,
fair; the runs, figures and what was tried and dropped are in
docs/SPLITTING.md): the spread between replicates, not the clones' binomial
noise. At the top interfaces the states that reach L differ widely in their
chance of reaching L + 1 (at N = 32, L = 24: from 0 to 1, median 0.07,
sd 5.7x the binomial's), which the integer score cannot tell apart, so a
replicate's deep stages succeed or fail together and the replicate estimates
are heavy-tailed (``top_share``). The mean look-ahead (horizon 2) cut the
work-normalised variance RE^2 x CPU 4-13x against the committed future at
k = 20-24 of N = 32.

The basin (``basin``): the default rule "raised" places L_0 at the highest
level a flux run still enters >= MIN_ENTRIES times (from the pilots); the
rule "most-entries" at the level entered most often. Sweeps use
``storm_risk``'s defaults (key ``risk_basin``). A low L_0 makes every
failing trial run all the way back to a quiet fleet; a higher one stops it
sooner (measured in docs/SPLITTING.md).

The general dynamics: ``gffs_walk`` integrates ``run_fleet_general``'s
dynamics (without failures; heap queues) on a state it can bank and clone:
per job its phase (computing, snapshot, wait), its persist in flight or
queued, its remaining work (stretched by the slowdown while its persist is
in flight), its counters of firings and of compute intervals drawn, and the
writer cap's FIFO queue. A flux run is fleet r of ``simulate(fleet,
seed=seed, kernel="general", queues="heap")`` bit for bit. The score is the
same integrator run on a copy of the state with the draws replaced:
``horizon = 0``, the committed future (every compute interval drawn from
now on never ends: the persists in flight or queued, the snapshots and
waits under way and the compute intervals already drawn play out, and
nothing more fires); ``horizon = H``, the mean future (each later interval
lasts T_i), stopped after the instant at which (H + 1) N firings have been
made. It can rise only at an instant that draws a compute interval (a
firing, a queue entry under a cap, a skip). ``score_every`` "write-end":
it is looked at after every such instant. "cycle" (the default), as on the
base model: a common look after the last instant before the first interval
drawn since the previous one could end, at its draw or at its mean
(pc + min(w, T_i) on the compute clock at its draw: a slowdown only
delays an end), plus every drawing instant of a trial within NEAR_LEVELS
of its next interface. Either way the fleet follows the future the last
look walked until the next look, so n_w stays at or below its score; the
score can fall where a persist ends, not looked at: a return to the basin
is seen at the next common look, in flux runs and trials alike. Looking
once a cycle cut the CPU of the async cell of docs/SPLITTING.md 4x at N =
32. Clones continue each job's counter of compute intervals drawn on their
own streams, as on the base model.

Cost: the score is a walk over the predicted future at every look: O(N) for
the committed future, O(H N) for the look-ahead (with "write-end", an event
of a trial costs ~40x ``simulate``'s at N = 32; with "cycle" ~5x). Both walks
stop once the score's class (< L_0, between, >= the next interface) is
decided: n_w rises only at firings, so once n_w + (firings left) cannot
reach the next bound the rest is skipped (same classes, bit-identical
results; tested against a plain-Python walk).
"""
from __future__ import annotations

import time
from dataclasses import replace
from numbers import Integral

import numpy as np

from .._args import check_int, check_levels, check_progress, check_real, stderr_line
from ..engine import door
from ..engine.launch import resolve
from ..engine.model import Fleet
from ..stats.analysis import time_at_or_above
from ..errors import SpecError
from .settings import (BASIN_RULES, DEFAULT_BASIN, DEFAULT_HORIZON, DEFAULT_SCORE_EVERY,
                       DEFAULT_SPLIT_BURN_IN, FIXED_REPLICATES, SCORE_EVERY, SplitSettings,
                       check_basin, check_score_every, split_settings)
from .split_estimate import MIN_REPLICATES, TOP_SHARE_WARN, SplitEstimate, merge, summarise

__all__ = ["SplitEstimate", "SplitSettings", "storm_split", "storm_split_until", "choose_basin",
           "merge", "check_basin", "check_score_every", "check_splittable", "DEFAULT_HORIZON",
           "DEFAULT_BASIN", "BASIN_RULES", "SCORE_EVERY", "DEFAULT_SCORE_EVERY",
           "MIN_REPLICATES", "TOP_SHARE_WARN"]

#: Rule "raised": the basin's edge L_0 is the highest level a flux run (of
#: ``flux_cycles``) is expected to enter at least this many times, judged from
#: the pilots. The first stage starts from those entries. A judgement, not a
#: tuned optimum: at N = 32 it gives L_0 = 9-11, where a replicate costs
#: 2-2.7x less than at the most-entries level 6 (docs/SPLITTING.md).
MIN_ENTRIES = 50
#: "cycle": a trial whose last look scored >= (next interface - NEAR_LEVELS)
#: looks at every write end, so it is seen reaching the interface as soon as
#: "write-end" would see it (measured, docs/SPLITTING.md: 0 looks only once
#: a cycle and is heavy-tailed, 4 costs 1.5x 2's CPU and gained nothing).
NEAR_LEVELS = 2
#: Fleet index of the pilot runs that place the basin (far from the
#: replicates' own 0, 1, ...).
PILOT_FLEET = 1 << 40


def _once_a_cycle(score_every) -> bool:
    """The kernels' flag (``sparse``) for a score_every rule."""
    return check_score_every(score_every) == "cycle"


def check_splittable(fleet: Fleet) -> None:
    """Refuse fleets outside the splitting kernels' scope: fleets with failures
    (MODEL.md E8). The base model runs on the two-clock kernel, every other
    fleet (async E1, weights E2, a writer cap E5) on the general dynamics."""
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    if fleet.has_failures:
        raise SpecError(f"fleet = {fleet!r}: storm_split runs fleets without failures only "
                        "(MODEL.md E8: every mtbf and outage_mtbf inf). "
                        "Use storm_risk(..., method='plain') (plain Monte Carlo) for it")


def _is_general(fleet: Fleet) -> bool:
    """The fleet runs on the general dynamics (``engine._kernel.gffs_walk``): async
    jobs, unequal weights or a writer cap; the base model on the two-clock one."""
    return not fleet.is_anonymous


def _theta(inputs, launch, rep0, R):
    """Replicate r's flux fleet starts as fleet rep0 + r of ``simulate`` would."""
    spec = resolve(launch, inputs.fleet, 1)
    if spec is not None:
        spec = np.asarray(spec, dtype=np.float64).reshape(-1, inputs.fleet.n_jobs)[0]
    return door.phases(inputs, spec, 0, R, rep0)


def _flux(inputs, split: SplitSettings, launch, rep0, R, lo):
    """R flux runs (replicates rep0..) of ``split``'s flux_cycles, measured after its
    burn_in, each keeping up to ``split.reservoir`` entries into {S >= lo}:
    (occupancy, up-crossings, the reservoir's arrays, entries, events, window);
    the reservoir is (remaining, phase, count) on the base model, the general
    dynamics' flat states (sf, si) otherwise."""
    if _is_general(inputs.fleet):
        return _gflux(inputs, split, launch, rep0, R, lo)
    n, reservoir = inputs.fleet.n_jobs, split.reservoir
    occ = np.zeros((R, n + 1))
    up = np.zeros((R, n + 1), dtype=np.int64)
    res_rem = np.zeros((R, reservoir, n))
    res_ph = np.zeros((R, reservoir, n), dtype=np.int8)
    res_cnt = np.zeros((R, reservoir, n), dtype=np.int64)
    entries = np.zeros(R, dtype=np.int64)
    events = np.zeros(R, dtype=np.int64)
    window = np.zeros(R)
    door.ffs_flux(*inputs.base, _theta(inputs, launch, rep0, R), inputs.key0, inputs.key1,
                  np.int64(rep0), np.int64(lo), np.int64(split.burn_in),
                  np.int64(split.flux_cycles),
                     occ, up, res_rem, res_ph, res_cnt, entries, events, window,
                     np.int64(split.horizon), _once_a_cycle(split.score_every))
    return occ, up, res_rem, res_ph, res_cnt, entries, events, window


def _gflux(inputs, split: SplitSettings, launch, rep0, R, lo):
    """``_flux`` on the general dynamics (``door.gffs_flux``)."""
    n, reservoir = inputs.fleet.n_jobs, split.reservoir
    _, nf, ni = door.gffs_layout(n)
    occ = np.zeros((R, n + 1))
    up = np.zeros((R, n + 1), dtype=np.int64)
    res_f = np.zeros((R, reservoir, nf))
    res_i = np.zeros((R, reservoir, ni), dtype=np.int64)
    entries = np.zeros(R, dtype=np.int64)
    events = np.zeros(R, dtype=np.int64)
    window = np.zeros(R)
    door.gffs_flux(door.gffs_fleet(inputs), _theta(inputs, launch, rep0, R), inputs.key0,
                   inputs.key1, np.int64(rep0), np.int64(lo), np.int64(split.burn_in),
                   np.int64(split.flux_cycles), occ, up, res_f, res_i, entries, events, window,
                   np.int64(split.horizon), _once_a_cycle(split.score_every))
    return occ, up, res_f, res_i, entries, events, window


def choose_basin(fleet: Fleet, levels, split: SplitSettings | None = None, *, seed: int = 0,
                 launch="random") -> int:
    """L_0 by the rule ``split.basin``, from two short pilot flux runs per level L
    in 1..max(levels) (fleets PILOT_FLEET.., a function of the seed alone; of
    ``split``'s flux_cycles, burn_in (None: DEFAULT_SPLIT_BURN_IN), horizon
    and score_every). An integer basin is returned as it is.

    rule "raised" (the default; None too): the highest L at which a flux run of
    ``flux_cycles`` would enter {S >= L} at least MIN_ENTRIES times (the
    pilots' entries scaled to its length), else the "most-entries" level.
    rule "most-entries": the L whose basin {S < L} a flux run leaves most
    often (ties: the higher); below it the fleet rarely returns to the
    basin, above it the entries are rare. A higher L_0 stops failing trials
    sooner (they need not return to a quiet fleet) at the price of fewer,
    less varied first-stage starts; see the module docstring.
    """
    split = split_settings(split, {}, "choose_basin").with_burn_in(DEFAULT_SPLIT_BURN_IN)
    if split.basin is not None and not isinstance(split.basin, str):
        return split.basin
    rule = split.basin or DEFAULT_BASIN
    flux_cycles, burn_in = split.flux_cycles, split.burn_in
    inputs = door.prepare(fleet, int(seed))
    pilot = max(100, (flux_cycles - burn_in) // 8)
    scale = (flux_cycles - burn_in) / (2.0 * pilot)     # 2 pilot fleets -> one flux run
    best, best_n, raised = 1, -1, None
    pilots = replace(split, flux_cycles=burn_in + pilot, reservoir=1)
    for L in range(1, int(np.max(levels)) + 1):
        *_, entries, _, _ = _flux(inputs, pilots, launch, PILOT_FLEET, 2, L)
        n = int(entries.sum())
        if n >= best_n:
            best, best_n = L, n
        if n * scale >= MIN_ENTRIES:
            raised = L
    if rule == "raised" and raised is not None and raised > best:
        return raised
    return best


def storm_split(fleet: Fleet, levels, split: SplitSettings | None = None, *, seed: int = 0,
                launch="random", rep0: int = 0, threads: int | None = None,
                **settings) -> SplitEstimate:
    """nu_k and P(n_w >= k) by forward flux sampling (see the module docstring).

    Parameters
    ----------
    fleet : a Fleet without failures (the base model, or async jobs, unequal
        weights, a writer cap: the general dynamics)
    levels : int or sequence of int in 1..N
    split : SplitSettings (None: its defaults): trials, replicates (None:
        FIXED_REPLICATES), flux_cycles, burn_in (None: DEFAULT_SPLIT_BURN_IN),
        horizon, basin, score_every, reservoir, max_events
    seed : int >= 0
    launch : the flux runs' launch, as in ``simulate``
    rep0 : index of the first replicate (replicates rep0.. are the same
        whatever the split into calls)
    threads : numba threads (results do not depend on it)
    **settings : SplitSettings' fields as keywords (``trials=100``, ...),
        set on ``split``: the same settings, spelled inline

    Returns
    -------
    SplitEstimate
        A function of (seed, fleet, levels, launch, the settings, rep0) alone.
    """
    check_splittable(fleet)
    ks = check_levels("levels", levels, fleet.n_jobs)
    split = split_settings(split, settings, "storm_split").with_burn_in(DEFAULT_SPLIT_BURN_IN)
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise SpecError(f"seed = {seed!r}: must be an integer >= 0")
    rep0 = check_int("rep0", rep0, 0)
    if threads is not None:
        threads = check_int("threads", threads, 1)
    check_basin(split.basin, int(ks[-1]))
    resolve(launch, fleet, 1)           # refused here, not after the basin's pilot runs
    basin = choose_basin(fleet, ks, split, seed=seed, launch=launch)
    replicates = FIXED_REPLICATES if split.replicates is None else split.replicates
    t0, c0 = time.perf_counter(), time.process_time()
    with door.numba_threads(threads):
        out = _run(fleet, ks, split, replicates, int(seed), basin, launch, int(rep0))
    cpu = time.process_time() - c0
    wall = time.perf_counter() - t0
    return summarise(fleet, ks, out, split, replicates, int(seed), cpu, wall)


def _first_bank(res, kept, general):
    """The first stage's starts: each replicate's kept flux-run entries, in order,
    one array per part of a state (the base model's remaining times, phases,
    counts and next looks; the general dynamics' sf and si), and the entries
    per replicate."""
    R = kept.size
    bank = tuple(np.concatenate([x[r, :kept[r]] for r in range(R)]) for x in res)
    if not general:
        bank += (np.full(bank[0].shape[0], np.inf),)    # the flux run's entries: just looked
    return bank, kept.astype(np.int64)


def _stage_buffers(R: int, M: int, n: int, general: bool) -> tuple:
    """The kernel's output buffers of one stage, M trials per replicate:
    occupancy, up-crossings, the states reached (a tuple, as the bank's
    parts), status, events."""
    if general:
        _, nf, ni = door.gffs_layout(n)
        states = (np.zeros((R, M, nf)), np.zeros((R, M, ni), dtype=np.int64))
    else:
        states = (np.zeros((R, M, n)), np.zeros((R, M, n), dtype=np.int8),
                  np.zeros((R, M, n), dtype=np.int64), np.zeros((R, M)))
    return (np.zeros((R, M, n + 1)), np.zeros((R, M, n + 1), dtype=np.int64), states,
            np.zeros((R, M), dtype=np.int64), np.zeros((R, M), dtype=np.int64))


def _stage(inputs, g, bank, bank_lo, bank_n, j, rep0, L0, hi, split, bufs):  # noqa: PLR0913 (a stage's inputs)
    """Stage j's trials (``door.ffs_stage``, or ``door.gffs_stage`` where g,
    the general fleet tuple, is given) into ``bufs``."""
    s_occ, s_up, states, status, ev = bufs
    if g is None:
        bank_rem, bank_ph, bank_cnt, bank_due = bank
        o_rem, o_ph, o_cnt, o_due = states
        door.ffs_stage(*inputs.base, bank_rem, bank_ph, bank_cnt, bank_lo, bank_n,
                       inputs.key0, inputs.key1, np.int64(j), np.int64(rep0), np.int64(L0), np.int64(hi),
                       np.int64(split.max_events), s_occ, s_up, o_rem, o_ph, o_cnt, status, ev,
                       np.int64(split.horizon), _once_a_cycle(split.score_every), np.int64(NEAR_LEVELS),
                       bank_due, o_due)
    else:
        door.gffs_stage(g, bank[0], bank[1], bank_lo, bank_n, inputs.key0, inputs.key1,
                        np.int64(j), np.int64(rep0), np.int64(L0), np.int64(hi),
                        np.int64(split.max_events), s_occ, s_up, states[0], states[1], status,
                        ev, np.int64(split.horizon), _once_a_cycle(split.score_every),
                        np.int64(NEAR_LEVELS))


def _run(fleet, ks, split: SplitSettings, R, seed, L0, launch, rep0):
    n = fleet.n_jobs
    general = _is_general(fleet)
    inputs = door.prepare(fleet, seed)
    g = door.gffs_fleet(inputs) if general else None
    occ, up, *res, entries, events, window = _flux(inputs, split, launch, rep0, R, L0)
    bank, bank_n = _first_bank(res, np.minimum(entries, split.reservoir), general)
    interfaces = np.arange(L0, int(ks[-1]) + 1, dtype=np.int64)
    J = interfaces.size - 1
    weight = np.ones(R)                               # prod_{i<j} p_i per replicate
    tot_up = np.zeros((R, n + 1))                     # sum_j w_j g_j, per level n
    tot_time = np.zeros((R, n + 1))                   # ... of the time at n_w >= level
    p_stage = np.zeros((R, J))
    total_events = int(events.sum())
    truncated = 0
    bufs = _stage_buffers(R, split.trials, n, general)
    s_occ, s_up, states, status, ev = bufs
    for j in range(J + 1):
        hi = int(interfaces[j + 1]) if j < J else n + 1
        bank_lo = np.concatenate([[0], np.cumsum(bank_n)[:-1]]).astype(np.int64)
        _stage(inputs, g, bank, bank_lo, bank_n, j, rep0, L0, hi, split, bufs)
        total_events += int(ev.sum())
        truncated += int((status < 0).sum())
        above = time_at_or_above(s_occ)
        alive = (bank_n > 0)[:, None]
        tot_up += weight[:, None] * np.where(alive, s_up.mean(axis=1), 0.0)
        tot_time += weight[:, None] * np.where(alive, above.mean(axis=1), 0.0)
        if j == J:
            break
        ok = status == 1
        p = ok.mean(axis=1) * (bank_n > 0)
        p_stage[:, j] = p
        weight = weight * p
        bank_n = ok.sum(axis=1).astype(np.int64)
        bank = tuple(np.ascontiguousarray(o[ok]) for o in states)
        if bank[0].shape[0] == 0:       # every replicate died out: deeper terms are 0
            bank = tuple(np.zeros((1,) + o.shape[2:], dtype=o.dtype) for o in states)
    flux = entries / window
    plain_up = up / window[:, None]
    plain_p = time_at_or_above(occ) / window[:, None]
    rep_storms_per_s = np.where(ks[None, :] < L0, plain_up[:, ks], flux[:, None] * tot_up[:, ks])
    rep_p_ge = np.where(ks[None, :] < L0, plain_p[:, ks], flux[:, None] * tot_time[:, ks])
    sim_per_event = window.sum() / max(int(events.sum()), 1)
    return dict(interfaces=interfaces, rep_storms_per_s=rep_storms_per_s, rep_p_ge=rep_p_ge,
                from_flux=ks < L0,
                p_stage=p_stage, flux=flux, entries=entries, events=total_events,
                truncated=truncated, sim_per_event=sim_per_event)


def _round_line(est: SplitEstimate) -> None:
    """storm_split_until's progress=True: one line per round."""
    stderr_line(f"storm_split: {est.replicates} replicates, {est.wall_seconds:.1f} s")


def storm_split_until(fleet: Fleet, levels, rel_error: float, max_seconds: float,  # noqa: PLR0913 (public keywords)
                      split: SplitSettings | None = None, *, seed: int = 0, launch="random",
                      threads: int | None = None, round_replicates: int = 8,
                      max_replicates: int = 65536, progress=None) -> SplitEstimate:
    """``storm_split`` in rounds of ``round_replicates`` replicates until every
    level's rate and P(n_w >= k) reach ``rel_error`` (after MIN_REPLICATES)
    or no further round fits in ``max_seconds`` (judged by the last round's
    duration; at least one round runs). ``split``: the settings of every
    round (SplitSettings; its ``replicates`` must be None: the rounds set
    them). Replicate r is the same whatever the rounds, so the result for R
    replicates equals ``storm_split(replicates=R)`` (the basin is placed once,
    from the seed). ``progress(estimate)`` after each round (True: a short
    line per round on stderr; False or None: none). ``max_replicates`` is a
    guard on memory, not an effort: 65536 (4096 would stop a 10-minute run
    at N = 32 early with score_every "cycle", ~0.17 CPU s a replicate there)."""
    check_splittable(fleet)
    progress = check_progress("progress", progress, _round_line)
    check_real("rel_error", rel_error, 0.0, open_lo=True)
    check_real("max_seconds", max_seconds, 0.0, open_lo=True)
    round_replicates = check_int("round_replicates", round_replicates, 1)
    max_replicates = check_int("max_replicates", max_replicates, 1)
    split = split_settings(split, {}, "storm_split_until")
    split = split.with_burn_in(DEFAULT_SPLIT_BURN_IN)
    if split.replicates is not None:
        raise SpecError(f"replicates = {split.replicates!r}: storm_split_until runs rounds of "
                        "round_replicates replicates until rel_error or max_seconds; leave "
                        "the settings' replicates None")
    split = replace(split, basin=choose_basin(fleet, levels, split, seed=seed, launch=launch))
    t0, c0 = time.perf_counter(), time.process_time()
    parts = []
    while True:
        tb = time.perf_counter()
        parts.append(storm_split(fleet, levels, replace(split, replicates=round_replicates),
                                 seed=seed, launch=launch, threads=threads,
                                 rep0=len(parts) * round_replicates))
        last = time.perf_counter() - tb
        est = merge(parts, fleet, cpu=time.process_time() - c0, wall=time.perf_counter() - t0)
        if progress is not None:
            progress(est)
        done = est.replicates >= MIN_REPLICATES and bool(
            np.all(est.storms_per_s_rel_error <= rel_error) and np.all(est.p_ge_rel_error <= rel_error))
        if done or est.replicates + round_replicates > max_replicates or \
                est.wall_seconds + last > max_seconds:
            return est

"""Storm risk far below plain Monte Carlo: forward flux sampling (issue 11 item 3).

``storm_split(fleet, levels)`` estimates, for each level k, the storm rate
nu_k (up-crossings of n_w to >= k per second, MODEL.md E3) and the time
fraction P(n_w >= k), down to 1e-12 and below, by stationary forward flux
sampling (FFS; Allen, Frenkel & ten Wolde 2006) on the exact dynamics.

Scope: the base model (blocking checkpoints, anonymous sharing: the
two-clock kernel). Asynchronous or weighted fleets (MODEL.md E1, E2) are
refused with a SpecError; ``storm_risk`` uses plain Monte Carlo for them.

The design
----------
Importance score S: the largest n_w of a predicted future from the present
state. ``horizon = 0``: the *committed future*, the exact dynamics in which
the jobs now computing fire at their already-drawn targets and no compute
interval started later ends (``_kernel.ffs_committed_max``). ``horizon = H
>= 1`` (the default, DEFAULT_HORIZON = 2): the *mean future* over H more
cycles, the same dynamics in which every compute interval started later
lasts exactly its mean T_i (no new draw), stopped after (jobs computing now)
+ H N firings (``_kernel.ffs_lookahead_max``); with the fleet's own sharing
it follows a cluster's growth (jobs firing inside a long shared write leave
it together) over the next cycles. Either way S >= n_w, S is a function of
the state alone, and it is evaluated at the end of every write (the one
instant a new compute interval is drawn), so a state whose S has just
reached an interface differs from its clones' futures at their very next
draw; plain n_w would split clones that share the next cycle's firings.

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
normals from streams keyed by (seed, stage, r, m) (``_kernel.ffs_stage``),
continuing each job's normal counter, so the result is a function of
(seed, inputs, effort) alone, not of threads or timing. Replicate r's flux
fleet is fleet r of ``simulate(fleet, seed=seed)`` (same launch, same
streams).

Error bars: from independent replicates (each its own flux run and stages),
never from clones (clones of one excursion are correlated): the mean of the
replicate estimates, its standard error over replicates, a 95 % interval
m * exp(+-t_{R-1} se / m) (delta method on the log scale).

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
rule "most-entries" (the default before, and still in sweeps, whose numbers
stay bit-identical) at the level entered most often. A low L_0 makes every
failing trial run all the way back to a quiet fleet; a higher one stops it
sooner (measured in docs/SPLITTING.md).

Cost: the score is a walk over the predicted future at every write's end:
O(N) for the committed future, O(H N) for the look-ahead (an event of a
trial costs ~50x ``simulate``'s at N = 32). Both walks stop once the score's
class (< L_0, between, >= the next interface) is decided: n_w rises only at
firings, so once n_w + (firings left) cannot reach the next bound the rest
is skipped (same classes, bit-identical results; tested against a
plain-Python walk).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from . import _kernel
from .engine import root_key, seconds_per_event
from .errors import SpecError
from .launch import resolve
from .model import Fleet
from .tails import LEVEL

__all__ = ["SplitEstimate", "storm_split", "storm_split_until", "choose_basin", "merge",
           "DEFAULT_HORIZON", "DEFAULT_BASIN", "BASIN_RULES"]

#: Rule "raised": the basin's edge L_0 is the highest level a flux run (of
#: ``flux_cycles``) is expected to enter at least this many times, judged from
#: the pilots. The first stage starts from those entries. A judgement, not a
#: tuned optimum: at N = 32 it gives L_0 = 9-11, where a replicate costs
#: 2-2.7x less than at the most-entries level 6 (docs/SPLITTING.md).
MIN_ENTRIES = 50
#: How the basin is placed when ``basin`` is not an integer (see choose_basin).
BASIN_RULES = ("raised", "most-entries")
DEFAULT_BASIN = "raised"
#: Replicates below which no relative error is reported (a spread needs units).
MIN_REPLICATES = 3
#: A level whose largest replicate holds more than this share of the
#: replicates' sum is flagged (``top_share``): its estimate rests on one
#: replicate (heavy tail; measured at N = 32, k = 24: 32-replicate runs gave
#: 2.7-4.9e-13 where a 600 s run of 1664 replicates gave 5.5e-12).
TOP_SHARE_WARN = 0.5
#: The score's default look-ahead (cycles of the mean future, ``horizon``):
#: 0 is the committed future alone. Measured at N = 32 (L = 0.6, sigma =
#: 0.01 T, fair), equal CPU (~100 s), P at k = 20 / 22 / 24: horizon 0
#: (200 x 192) RE 0.25 / 0.42 / 0.94, top share 0.25 / 0.30 / 0.94; horizon 2
#: (200 x 32) RE 0.14 / 0.22 / 0.26, top share 0.14 / 0.16 / 0.19.
DEFAULT_HORIZON = 2
#: Fleet index of the pilot runs that place the basin (far from the
#: replicates' own 0, 1, ...).
PILOT_FLEET = 1 << 40


@dataclass
class SplitEstimate:
    """What ``storm_split`` found. Level arrays are indexed like ``levels``.

    rate, rate_lo, rate_hi, rate_rel_error : nu_k (storms per second)
    p, p_lo, p_hi, p_rel_error : P(n_w >= k) (time fraction)
    rep_rate, rep_p : (replicates, levels) each replicate's own estimate
    from_flux : bool per level: below the basin edge, a plain estimate from
        the flux runs (no splitting)
    interfaces : L_0 .. k_max; p_stage (replicates, J) each stage's success
        fraction; truncated : clones stopped by the event guard (0 expected)
    work_relvar : RE^2 x CPU seconds of each level's rate (s)
    mc_work_relvar : plain Monte Carlo's RE^2 x CPU s for the same rate, a
        lower bound (Poisson counting of storms, 1 / (nu_k x simulated seconds
        per CPU second of ``simulate``, engine.NS_PER_EVENT)); storms come in
        clusters, which only adds to it
    gain : mc_work_relvar / work_relvar (>= the true gain at equal work)
    top_share : per level, the largest share one replicate holds of the sum of
        the replicates' estimates (of P or nu_k, the larger). Near 1 / R the
        replicates agree; above TOP_SHARE_WARN one replicate carries the
        estimate: the replicate distribution is heavy-tailed there, the
        typical run lies below the mean and the interval may be too narrow
    """

    levels: np.ndarray
    seed: int
    trials: int
    replicates: int
    flux_cycles: int
    burn_in: int
    interfaces: np.ndarray
    rate: np.ndarray
    rate_lo: np.ndarray
    rate_hi: np.ndarray
    rate_rel_error: np.ndarray
    p: np.ndarray
    p_lo: np.ndarray
    p_hi: np.ndarray
    p_rel_error: np.ndarray
    rep_rate: np.ndarray
    rep_p: np.ndarray
    from_flux: np.ndarray
    p_stage: np.ndarray
    flux: np.ndarray
    entries: np.ndarray
    events: int
    truncated: int
    cpu_seconds: float
    wall_seconds: float
    work_relvar: np.ndarray
    mc_work_relvar: np.ndarray
    gain: np.ndarray
    top_share: np.ndarray
    level: float = LEVEL
    horizon: int = DEFAULT_HORIZON
    _sim_per_event: float = field(default=float("nan"), repr=False)
    method: str = field(default=(
        "forward flux sampling on the committed-future score with a mean look-ahead of "
        "`horizon` cycles, fixed effort per stage; "
        "95% interval over independent replicates (t, log scale)"), repr=False)

    def __str__(self) -> str:
        lines = [f"storm_split: {self.replicates} replicates x {self.trials} clones per stage, "
                 f"look-ahead {self.horizon}, interfaces {self.interfaces.tolist()}, "
                 f"{self.events:.4g} events, "
                 f"{self.cpu_seconds:.3g} CPU s"]
        for j, k in enumerate(self.levels.tolist()):
            src = "flux run" if self.from_flux[j] else "splitting"
            lines.append(f"  k={k:3d}  nu_k={self.rate[j]:.3e} [{self.rate_lo[j]:.3e}, "
                         f"{self.rate_hi[j]:.3e}] RE {self.rate_rel_error[j]:.3f}   "
                         f"P={self.p[j]:.3e} [{self.p_lo[j]:.3e}, {self.p_hi[j]:.3e}] "
                         f"RE {self.p_rel_error[j]:.3f}  ({src}, gain >= {self.gain[j]:.3g})"
                         + (f"  ONE REPLICATE HOLDS {self.top_share[j]:.0%}: heavy tail, the "
                            "interval may be too narrow" if self.top_share[j] > TOP_SHARE_WARN
                            else ""))
        return "\n".join(lines)


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise SpecError(f"{name} = {value!r}: must be an integer >= 1")
    return int(value)


def check_splittable(fleet: Fleet) -> None:
    """Refuse fleets outside the splitting kernel's scope (the base model)."""
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    if not fleet.is_anonymous:
        raise SpecError("storm_split runs the base model only (blocking checkpoints, equal "
                        f"weights); this fleet has async jobs or unequal weights ({fleet!r}). "
                        "Use storm_risk(..., method='plain') (plain Monte Carlo) for it")


def _kernel_args(fleet: Fleet):
    return (np.ascontiguousarray(fleet.T), np.ascontiguousarray(fleet.d),
            np.ascontiguousarray(fleet.jitter), fleet.writer_rate, fleet.computer_rate)


def _theta(fleet, launch, key0, key1, rep0, R):
    spec = resolve(launch, fleet, 1)
    n = fleet.n_jobs
    if spec is None:
        out = np.empty((R, n))
        _kernel.random_theta(key0, key1, rep0, out)
        return out
    return np.broadcast_to(np.asarray(spec, dtype=np.float64).reshape(-1, n)[0], (R, n)).copy()


def _flux(fleet, key0, key1, rep0, R, lo, burn_in, cycles, reservoir, launch, horizon=0):
    T, d, sigma, rw, rc = _kernel_args(fleet)
    n = fleet.n_jobs
    occ = np.zeros((R, n + 1))
    up = np.zeros((R, n + 1), dtype=np.int64)
    res_rem = np.zeros((R, reservoir, n))
    res_ph = np.zeros((R, reservoir, n), dtype=np.int8)
    res_cnt = np.zeros((R, reservoir, n), dtype=np.int64)
    entries = np.zeros(R, dtype=np.int64)
    events = np.zeros(R, dtype=np.int64)
    window = np.zeros(R)
    _kernel.ffs_flux(T, d, sigma, rw, rc, _theta(fleet, launch, key0, key1, rep0, R), key0,
                     key1, np.int64(rep0), np.int64(lo), np.int64(burn_in), np.int64(cycles),
                     occ, up, res_rem, res_ph, res_cnt, entries, events, window,
                     np.int64(horizon))
    return occ, up, res_rem, res_ph, res_cnt, entries, events, window


def choose_basin(fleet: Fleet, levels, seed: int = 0, flux_cycles: int = 2000,
                 burn_in: int = 100, launch="random", horizon: int = DEFAULT_HORIZON,
                 rule: str = DEFAULT_BASIN) -> int:
    """L_0, from two short pilot flux runs per level L in 1..max(levels)
    (fleets PILOT_FLEET.., a function of the seed alone).

    rule "raised" (the default): the highest L at which a flux run of
    ``flux_cycles`` would enter {S >= L} at least MIN_ENTRIES times (the
    pilots' entries scaled to its length), else the "most-entries" level.
    rule "most-entries": the L whose basin {S < L} a flux run leaves most
    often (ties: the higher); below it the fleet rarely returns to the
    basin, above it the entries are rare. A higher L_0 stops failing trials
    sooner (they need not return to a quiet fleet) at the price of fewer,
    less varied first-stage starts; see the module docstring.
    """
    if rule not in BASIN_RULES:
        raise SpecError(f"basin = {rule!r}: must be an integer level or one of "
                        f"{', '.join(map(repr, BASIN_RULES))}")
    key0, key1 = root_key(int(seed))
    pilot = max(100, (flux_cycles - burn_in) // 8)
    scale = (flux_cycles - burn_in) / (2.0 * pilot)     # 2 pilot fleets -> one flux run
    best, best_n, raised = 1, -1, None
    for L in range(1, int(np.max(levels)) + 1):
        *_, entries, _, _ = _flux(fleet, key0, key1, PILOT_FLEET, 2, L, burn_in,
                                  burn_in + pilot, 1, launch, horizon)
        n = int(entries.sum())
        if n >= best_n:
            best, best_n = L, n
        if n * scale >= MIN_ENTRIES:
            raised = L
    if rule == "raised" and raised is not None and raised > best:
        return raised
    return best


def _log_interval(m, se, R, level):
    from scipy.stats import t as student_t

    q = float(student_t.ppf(0.5 + level / 2.0, max(R - 1, 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(m > 0, se / m, np.nan)
    return m * np.exp(-q * rel), m * np.exp(q * rel), rel


def storm_split(fleet: Fleet, levels, *, trials: int = 100, replicates: int = 32,
                flux_cycles: int = 2000, burn_in: int = 100, seed: int = 0,
                basin: int | str = DEFAULT_BASIN, reservoir: int = 4096, launch="random",
                rep0: int = 0, threads: int | None = None,
                max_events: int = _kernel.FFS_MAX_EVENTS,
                horizon: int = DEFAULT_HORIZON) -> SplitEstimate:
    """nu_k and P(n_w >= k) by forward flux sampling (see the module docstring).

    Parameters
    ----------
    fleet : a base-model Fleet (blocking, equal weights)
    levels : int or sequence of int in 1..N
    trials : clones per stage and replicate (the fixed effort M)
    replicates : independent FFS runs; the interval comes from their spread.
        The defaults (100 x 32) come from tuning runs at N = 32 (L = 0.6,
        sigma = 0.01 T): with horizon 0, at equal CPU, 32 x 250 and 64 x 100
        gave a work-normalised variance 2-4x below 8 x 1000; with horizon 2,
        64 x 100 beat 32 x 200 (1.2-2x): most of the variance is between
        replicates, so many short replicates beat a few rich ones
    horizon : the score's look-ahead in cycles (0: the committed future; see
        the module docstring); it also places the basin
    flux_cycles, burn_in : each replicate's flux run: one fleet, measured
        from its burn_in-th to its flux_cycles-th cycle
    seed : int >= 0
    basin : L_0, an integer, or the rule that places it from the seed
        (``choose_basin``): "raised" (the default; None too) or "most-entries"
    reservoir : entry states kept per flux run (uniformly, of all entries)
    rep0 : index of the first replicate (replicates rep0.. are the same
        whatever the split into calls)
    threads : numba threads (results do not depend on it)
    """
    check_splittable(fleet)
    n = fleet.n_jobs
    ks = np.array(sorted({int(k) for k in np.atleast_1d(levels)}), dtype=np.int64)
    if ks.size == 0 or ks[0] < 1 or ks[-1] > n:
        raise SpecError(f"levels = {levels!r}: integers in 1..N = {n}")
    trials = _check_positive_int("trials", trials)
    replicates = _check_positive_int("replicates", replicates)
    flux_cycles = _check_positive_int("flux_cycles", flux_cycles)
    reservoir = _check_positive_int("reservoir", reservoir)
    if isinstance(horizon, bool) or not isinstance(horizon, Integral) or horizon < 0:
        raise SpecError(f"horizon = {horizon!r}: must be an integer >= 0 (cycles of look-ahead)")
    horizon = int(horizon)
    if isinstance(burn_in, bool) or not isinstance(burn_in, Integral) or not \
            0 <= burn_in < flux_cycles:
        raise SpecError(f"burn_in = {burn_in!r}: must be an integer in 0..flux_cycles-1")
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise SpecError(f"seed = {seed!r}: must be an integer >= 0")
    if basin is None or isinstance(basin, str):
        basin = choose_basin(fleet, ks, seed, flux_cycles, burn_in, launch, horizon,
                             DEFAULT_BASIN if basin is None else basin)
    if isinstance(basin, bool) or not isinstance(basin, Integral) or not 1 <= basin <= ks[-1]:
        raise SpecError(f"basin = {basin!r}: must be an integer in 1..max(levels) = {ks[-1]} "
                        f"or a rule, one of {', '.join(map(repr, BASIN_RULES))}")
    basin = int(basin)
    if threads is not None:
        import numba

        saved = numba.get_num_threads()
        numba.set_num_threads(_check_positive_int("threads", threads))
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        out = _run(fleet, ks, trials, replicates, flux_cycles, burn_in, int(seed), basin,
                   reservoir, launch, int(rep0), int(max_events), horizon)
    finally:
        if threads is not None:
            numba.set_num_threads(saved)
    cpu = time.process_time() - c0
    wall = time.perf_counter() - t0
    return _summarise(fleet, ks, out, trials, replicates, flux_cycles, burn_in, int(seed),
                      cpu, wall, horizon)


def _run(fleet, ks, M, R, cycles, burn_in, seed, L0, reservoir, launch, rep0, max_events,
         horizon):
    n = fleet.n_jobs
    key0, key1 = root_key(seed)
    T, d, sigma, rw, rc = _kernel_args(fleet)
    occ, up, res_rem, res_ph, res_cnt, entries, events, window = _flux(
        fleet, key0, key1, rep0, R, L0, burn_in, cycles, reservoir, launch, horizon)
    kept = np.minimum(entries, reservoir)
    bank_rem = np.concatenate([res_rem[r, :kept[r]] for r in range(R)])
    bank_ph = np.concatenate([res_ph[r, :kept[r]] for r in range(R)])
    bank_cnt = np.concatenate([res_cnt[r, :kept[r]] for r in range(R)])
    bank_n = kept.astype(np.int64)
    interfaces = np.arange(L0, int(ks[-1]) + 1, dtype=np.int64)
    J = interfaces.size - 1
    weight = np.ones(R)                               # prod_{i<j} p_i per replicate
    tot_up = np.zeros((R, n + 1))                     # sum_j w_j g_j, per level n
    tot_time = np.zeros((R, n + 1))                   # ... of the time at n_w >= level
    p_stage = np.zeros((R, J))
    total_events = int(events.sum())
    truncated = 0
    s_occ = np.zeros((R, M, n + 1))
    s_up = np.zeros((R, M, n + 1), dtype=np.int64)
    o_rem = np.zeros((R, M, n))
    o_ph = np.zeros((R, M, n), dtype=np.int8)
    o_cnt = np.zeros((R, M, n), dtype=np.int64)
    status = np.zeros((R, M), dtype=np.int64)
    ev = np.zeros((R, M), dtype=np.int64)
    for j in range(J + 1):
        hi = int(interfaces[j + 1]) if j < J else n + 1
        bank_lo = np.concatenate([[0], np.cumsum(bank_n)[:-1]]).astype(np.int64)
        _kernel.ffs_stage(T, d, sigma, rw, rc, bank_rem, bank_ph, bank_cnt, bank_lo, bank_n,
                          key0, key1, np.int64(j), np.int64(rep0), np.int64(L0), np.int64(hi),
                          np.int64(max_events), s_occ, s_up, o_rem, o_ph, o_cnt, status, ev,
                          np.int64(horizon))
        total_events += int(ev.sum())
        truncated += int((status < 0).sum())
        above = np.cumsum(s_occ[:, :, ::-1], axis=2)[:, :, ::-1]
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
        bank_rem = np.ascontiguousarray(o_rem[ok])
        bank_ph = np.ascontiguousarray(o_ph[ok])
        bank_cnt = np.ascontiguousarray(o_cnt[ok])
        if bank_rem.shape[0] == 0:          # every replicate died out: deeper terms are 0
            bank_rem = np.zeros((1, n))
            bank_ph = np.zeros((1, n), dtype=np.int8)
            bank_cnt = np.zeros((1, n), dtype=np.int64)
    flux = entries / window
    plain_up = up / window[:, None]
    plain_p = np.cumsum(occ[:, ::-1], axis=1)[:, ::-1] / window[:, None]
    rep_rate = np.where(ks[None, :] < L0, plain_up[:, ks], flux[:, None] * tot_up[:, ks])
    rep_p = np.where(ks[None, :] < L0, plain_p[:, ks], flux[:, None] * tot_time[:, ks])
    sim_per_event = window.sum() / max(int(events.sum()), 1)
    return dict(interfaces=interfaces, rep_rate=rep_rate, rep_p=rep_p, from_flux=ks < L0,
                p_stage=p_stage, flux=flux, entries=entries, events=total_events,
                truncated=truncated, sim_per_event=sim_per_event)


def _summarise(fleet, ks, o, M, R, cycles, burn_in, seed, cpu, wall, horizon):
    def combine(x):
        m = x.mean(axis=0)
        se = x.std(axis=0, ddof=1) / math.sqrt(R) if R >= 2 else np.full(m.shape, np.nan)
        lo, hi, rel = _log_interval(m, se, R, LEVEL)
        if R < MIN_REPLICATES:
            lo, hi, rel = (np.full(m.shape, np.nan),) * 3
        return m, lo, hi, rel

    rate, rate_lo, rate_hi, rate_re = combine(o["rep_rate"])
    p, p_lo, p_hi, p_re = combine(o["rep_p"])
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.fmax(o["rep_p"].max(axis=0) / o["rep_p"].sum(axis=0),
                      o["rep_rate"].max(axis=0) / o["rep_rate"].sum(axis=0))
    work = rate_re ** 2 * cpu
    # plain MC: one storm per 1 / nu_k simulated seconds, a simulated second
    # costing (events per simulated second) x (CPU s per event of simulate)
    cpu_per_sim_s = seconds_per_event(fleet.n_jobs) / o["sim_per_event"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mc = cpu_per_sim_s / rate
        gain = mc / work
    return SplitEstimate(levels=ks, seed=seed, trials=M, replicates=R, flux_cycles=cycles,
                         burn_in=burn_in, interfaces=o["interfaces"], rate=rate,
                         rate_lo=rate_lo, rate_hi=rate_hi, rate_rel_error=rate_re, p=p,
                         p_lo=p_lo, p_hi=p_hi, p_rel_error=p_re, rep_rate=o["rep_rate"],
                         rep_p=o["rep_p"], from_flux=o["from_flux"], p_stage=o["p_stage"],
                         flux=o["flux"], entries=o["entries"], events=o["events"],
                         truncated=o["truncated"], cpu_seconds=cpu, wall_seconds=wall,
                         work_relvar=work, mc_work_relvar=mc, gain=gain, top_share=top,
                         horizon=horizon, _sim_per_event=o["sim_per_event"])


def storm_split_until(fleet: Fleet, levels, rel_error: float, max_seconds: float, *,
                      round_replicates: int = 8, max_replicates: int = 4096,
                      progress=None, seed: int = 0, basin: int | str = DEFAULT_BASIN,
                      **kw) -> SplitEstimate:
    """``storm_split`` in rounds of ``round_replicates`` replicates until every
    level's rate and P(n_w >= k) reach ``rel_error`` (after MIN_REPLICATES)
    or no further round fits in ``max_seconds`` (judged by the last round's
    duration; at least one round runs). Replicate r is the same whatever the
    rounds, so the result for R replicates equals ``storm_split(replicates=R)``
    (the basin is placed once, from the seed). ``progress(estimate)`` after
    each round."""
    check_splittable(fleet)
    burn_in = kw.get("burn_in", 100)
    flux_cycles = kw.get("flux_cycles", 2000)
    if basin is None or isinstance(basin, str):
        basin = choose_basin(fleet, levels, seed, flux_cycles, burn_in, kw.get("launch", "random"),
                             kw.get("horizon", DEFAULT_HORIZON), basin or DEFAULT_BASIN)
    t0, c0 = time.perf_counter(), time.process_time()
    parts = []
    while True:
        tb = time.perf_counter()
        parts.append(storm_split(fleet, levels, replicates=round_replicates, seed=seed,
                                 basin=basin, rep0=len(parts) * round_replicates, **kw))
        last = time.perf_counter() - tb
        est = merge(parts, fleet, cpu=time.process_time() - c0, wall=time.perf_counter() - t0)
        if progress is not None:
            progress(est)
        done = est.replicates >= MIN_REPLICATES and bool(
            np.all(est.rate_rel_error <= rel_error) and np.all(est.p_rel_error <= rel_error))
        if done or est.replicates + round_replicates > max_replicates or \
                est.wall_seconds + last > max_seconds:
            return est


def merge(parts, fleet: Fleet, cpu: float | None = None, wall: float | None = None):
    """One SplitEstimate of the replicates of several calls (same inputs, seed, basin)."""
    first = parts[0]
    o = dict(interfaces=first.interfaces,
             rep_rate=np.concatenate([p.rep_rate for p in parts]),
             rep_p=np.concatenate([p.rep_p for p in parts]), from_flux=first.from_flux,
             p_stage=np.concatenate([p.p_stage for p in parts]),
             flux=np.concatenate([p.flux for p in parts]),
             entries=np.concatenate([p.entries for p in parts]),
             events=sum(p.events for p in parts), truncated=sum(p.truncated for p in parts),
             sim_per_event=first._sim_per_event)
    R = o["rep_rate"].shape[0]
    cpu = sum(p.cpu_seconds for p in parts) if cpu is None else cpu
    wall = sum(p.wall_seconds for p in parts) if wall is None else wall
    return _summarise(fleet, first.levels, o, first.trials, R, first.flux_cycles,
                      first.burn_in, first.seed, cpu, wall, first.horizon)

"""``storm_risk``: how often a fleet storms, simulated until precise enough.

For each level k asked, P(n_w >= k) (the share of time with at least k jobs
writing) and the storm rate nu_k (storms per second, MODEL.md E3), each with
its 95 % interval, from plain Monte Carlo over independent fleets, run in
batches until every level reaches the relative error asked or the budget is
spent.

Reproducible by construction: batch b is fleets [b B, (b + 1) B) of
``simulate(fleet, seed=seed, fleet_start=b B, ...)``, B fixed by the inputs
(never by timing), so a run that stops earlier or later has seen a prefix of
the same fleets: the estimate from F fleets is a function of (seed, inputs, F).

Statistics (all over independent fleets, the units):

- P(n_w >= k): stormsim.stats.tails (ratio estimator, delta method, logit scale;
  no fleet at k: the one-sided bound 1 - 0.05^(1/F));
- nu_k and the mean storm duration: stormsim.stats.storms (ratio estimators,
  delta method on the log scale; no storm: the one-sided Poisson bound
  -ln(0.05) / measured time on nu_k);
- the relative error of an estimate is its relative standard error
  se / estimate (the delta method's se); a level is resolved when both its
  P(n_w >= k) and its nu_k are at or below ``rel_error`` and at least
  ``min_hits`` fleets reached it (so that the se itself is trustworthy).

A level not resolved would cost plain Monte Carlo F (RE / target)^2 fleets
(RE falls as 1 / sqrt(fleets)) where some fleet reached k; where none did, at
least the fleets to see 1 / target^2 storms at the bound's rate (a lower
bound: storms cluster, which only adds variance).

Choosing the method (``method="auto"``): a base-model fleet with jitter on
every job, asked from a random launch, gets the exact long-run law
(``risk.exact``: no simulation, no sampling error). Otherwise plain Monte Carlo runs first, with
PLAIN_SHARE of the budget (less once every unresolved level would cost it more
than the whole budget left). The levels it resolved stay plain. If the rest
would cost plain Monte Carlo more than the remaining budget (its own estimate
above), they go to forward flux sampling (stormsim.risk.splitting), in rounds of
replicates until they reach ``rel_error`` or the budget is spent; otherwise
plain Monte Carlo continues. So splitting is never chosen where plain Monte
Carlo suffices (shallow tails, where splitting loses). Splitting runs the base
model only: asynchronous or weighted fleets (MODEL.md E1, E2) use plain Monte
Carlo whatever ``method`` says, except that ``method="splitting"`` on them is
an error. ``level_method`` names the method of each level.

A fixed effort (``max_seconds=None``; sweeps): plain Monte Carlo runs until
every level is resolved or ``max_fleets`` fleets (whole batches) are done;
"auto" splits the levels left unresolved with exactly ``replicates``
replicates (``storm_split``; base model only); "splitting" splits them all.
No timing enters: a function of (seed, inputs, max_fleets, replicates).
"""
from __future__ import annotations

import inspect
import math
import time

import numpy as np

from .._args import check_int, check_levels, check_progress, check_real, stderr_line
from ..engine.cost import default_batch
from ..engine.launch import resolve
from ..engine.model import Fleet
from ..engine.run import simulate
from ..stats.analysis import time_at_or_above
from ..errors import SpecError
from ..stats.storms import ratio_of_means, storm_estimate
from ..stats.tails import LEVEL, tail_estimate
from .exact import exact_applies, exact_risk
from .result import StormRisk
from .splitting import (
    DEFAULT_BASIN,
    DEFAULT_HORIZON,
    DEFAULT_SCORE_EVERY,
    MIN_REPLICATES,
    check_basin,
    check_score_every,
    check_splittable,
    storm_split,
    storm_split_until,
)

__all__ = ["StormRisk", "fixed_batch", "storm_risk"]

#: Fleets that must reach a level before its relative error counts: the delta
#: method's se of a ratio rests on the units that saw the event (tails.py).
MIN_HITS = 10
MIN_BATCHES = 2     #: batches run before any level may stop the run (a spread needs units)
#: The share of max_seconds plain Monte Carlo gets before ``method="auto"``
#: decides whether the unresolved levels go to splitting.
PLAIN_SHARE = 0.25
METHODS = ("auto", "exact", "plain", "splitting")
#: A fixed effort's splitting replicates when not given: storm_split's default (its signature).
FIXED_REPLICATES = inspect.signature(storm_split).parameters["replicates"].default


def fixed_batch(n_jobs: int, cycles: int, fleets: int) -> int:
    """Fleets per batch of a fixed effort of ``fleets``: >= MIN_BATCHES equal
    batches of <= ``engine.cost.default_batch``, adding up to ``fleets`` rounded up
    by less than their number."""
    nb = max(MIN_BATCHES, -(-int(fleets) // default_batch(n_jobs, cycles)))
    return max(1, -(-int(fleets) // nb))


def _collapse(occ: np.ndarray, up: np.ndarray, ks: np.ndarray):
    """Per-fleet (occupancy, up-crossings) collapsed onto the levels: column 0
    the time below ks[0], column j the time in [ks[j-1], ks[j]) (last: >= ks[-1]),
    so that P(n_w >= ks[j-1]) is column j's tail of it (tails/storms take it as is)."""
    above = time_at_or_above(occ)                             # time at n_w >= k
    a = np.concatenate([above[:, :1], above[:, ks]], axis=1)  # total, then at >= each k
    c = a.copy()
    c[:, :-1] -= a[:, 1:]
    e = np.concatenate([np.zeros((up.shape[0], 1), np.int64), up[:, ks]], axis=1)
    return c, e


def _estimate(occ, up, ks, fleets, target, min_hits, cpu_per_fleet, level):
    """The StormRisk arrays of the collapsed per-fleet data (levels = ks)."""
    tail = tail_estimate(occ, fleets=fleets, level=level)
    st = storm_estimate(up, occ, fleets=fleets, level=level)
    above = time_at_or_above(occ)
    b = above[:, 0]
    u = occ.shape[0]
    p = tail.p[1:]
    p_re = np.full(ks.size, np.nan)
    if u >= 2:
        d = above[:, 1:] - p * b[:, None]
        se = np.sqrt((d * d).sum(axis=0) / (u * (u - 1))) / b.mean()
        with np.errstate(divide="ignore", invalid="ignore"):
            p_re = np.where(p > 0, se / p, np.nan)
    r_re = st.rel_error[1:]
    hits = (above[:, 1:] > 0).sum(axis=0)
    worst = np.fmax(p_re, r_re)                     # NaN only where both are
    resolved = (hits >= min_hits) & (p_re <= target) & (r_re <= target)
    needed = np.full(ks.size, float(fleets))
    lower = np.zeros(ks.size, dtype=bool)
    some = hits > 0
    grow = some & ~resolved
    needed[grow] = fleets * np.maximum((worst[grow] / target) ** 2,
                                       min_hits / np.maximum(hits[grow], 1))
    none = ~some
    if none.any():
        window = float(b.mean())
        # at least 1 / target^2 storms at the upper bound's rate
        needed[none] = 1.0 / (target ** 2 * st.rate_hi[1:][none] * window)
        lower[none] = True
    return dict(p=p, p_lo=tail.lo[1:], p_hi=tail.hi[1:], p_method=tail.method[1:].astype(str),
                p_rel_error=p_re, rate=st.rate[1:], rate_lo=st.rate_lo[1:],
                rate_hi=st.rate_hi[1:], rate_method=st.method[1:].astype(str),
                rate_rel_error=r_re, duration=st.duration[1:], duration_lo=st.duration_lo[1:],
                duration_hi=st.duration_hi[1:], hits=hits, resolved=resolved,
                fleets_needed=needed, cpu_seconds_needed=needed * cpu_per_fleet,
                needed_is_lower_bound=lower)


def _risk_line(risk: StormRisk) -> None:
    """storm_risk's progress=True: one line per batch or splitting round."""
    stderr_line(f"storm_risk: {risk.fleets} fleets, {int(np.sum(risk.resolved))}/"
                f"{len(risk.levels)} levels resolved, {risk.wall_seconds:.1f} s")


def storm_risk(fleet: Fleet, levels, rel_error: float = 0.1, max_seconds: float | None = 60.0,
               *, seed: int = 0, cycles: int = 800, burn_in: int = 80, launch="random",
               batch_fleets: int | None = None, max_fleets: int | None = None,
               min_hits: int = MIN_HITS, threads: int | None = None,
               progress=None, method: str = "auto", trials: int = 100,
               flux_cycles: int = 2000, horizon: int = DEFAULT_HORIZON,
               replicates: int | None = None, basin: int | str = DEFAULT_BASIN,
               score_every: str = DEFAULT_SCORE_EVERY) -> StormRisk:
    """P(n_w >= k) and the storm rate nu_k for each level k, to ``rel_error``.

    Parameters
    ----------
    fleet : Fleet
    levels : int or sequence of int in 1..N
    rel_error : target relative standard error of every estimate (0.1: 10 %)
    max_seconds : wall-time budget; no batch (or splitting round) starts that
        the last one's duration says would end past it (at least MIN_BATCHES
        batches run). None: a fixed effort instead (``max_fleets`` and
        ``replicates``; see the module docstring), timing-independent
    seed : int >= 0; fleet j is fleet j of ``simulate(fleet, seed=seed)``
    cycles, burn_in, launch : per fleet, as in ``simulate`` (measured after
        ``burn_in`` cycles, splitting's flux runs too)
    batch_fleets : fleets per batch (default: ``engine.cost.default_batch``, about
        half a second of work; with max_seconds=None, ``fixed_batch``: at
        least MIN_BATCHES batches adding up to max_fleets; fixed by the
        inputs, never by timing)
    max_fleets : stop after this many fleets (rounded up to whole batches)
    min_hits : fleets that must reach a level before its error counts
    progress : a callable, ``progress(risk)`` after each batch (or splitting
        round), with the StormRisk so far (``risk.fleets``, ``risk.resolved``,
        ...); True: a short line per batch or round on stderr; False or None
        (the default): no progress
    method : "auto" (the exact law where it applies: a base-model fleet
        with jitter on every job, from a random launch (``risk.exact``); else
        plain Monte Carlo, then splitting for the levels it cannot reach in
        the budget; see the module docstring), "exact" (the long-run law,
        whatever the launch; a SpecError where none exists), "plain", or
        "splitting" (every level by stormsim.risk.splitting; base model only)
    trials, flux_cycles, horizon, basin, score_every : storm_split's clones per
        stage, flux run, look-ahead, basin edge (a level <= the deepest level
        split, or "raised", "most-entries"), score looks ("cycle", "write-end")
    replicates : with ``max_seconds=None``, the splitting replicates, >=
        splitting.MIN_REPLICATES (default FIXED_REPLICATES); with a time budget it must be None
        (replicates then run in rounds until rel_error or the budget)

    Returns
    -------
    StormRisk
        Its estimate from F fleets (and R splitting replicates) is a function
        of (seed, the inputs, F, R) alone.
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    ks = check_levels("levels", levels, fleet.n_jobs)
    progress = check_progress("progress", progress, _risk_line)
    if method not in METHODS:
        raise SpecError(f"method = {method!r}: must be one of {', '.join(METHODS)}")
    resolve(launch, fleet, 1)           # refused here, not at the first batch
    target = check_real("rel_error", rel_error, 0.0, open_lo=True)
    budget = None if max_seconds is None else check_real("max_seconds", max_seconds, 0.0,
                                                                  open_lo=True)
    max_fleets = None if max_fleets is None else check_int("max_fleets", max_fleets, 1)
    fixed = budget is None
    exact = method == "exact" or (method == "auto" and exact_applies(fleet, launch))
    if fixed and max_fleets is None and method != "splitting" and not exact:
        raise SpecError("max_seconds = None (a fixed effort) needs max_fleets: the plain Monte "
                        "Carlo fleets to run (or give a time budget max_seconds)")
    if not fixed and replicates is not None:
        raise SpecError(f"replicates = {replicates!r} is the splitting effort of a fixed effort "
                        "(max_seconds = None); with a time budget replicates run in rounds until "
                        "rel_error or max_seconds: leave replicates out, or set max_seconds=None")
    replicates = check_int("replicates", FIXED_REPLICATES if replicates is None else replicates, 1)
    if replicates < MIN_REPLICATES:
        raise SpecError(f"replicates = {replicates}: must be >= {MIN_REPLICATES} (the interval of "
                        "a splitting estimate comes from the spread of its replicates; fewer "
                        "give none)")
    min_hits = check_int("min_hits", min_hits, 1)
    seed = check_int("seed", seed, 0, what="results are a function of it")
    cycles = check_int("cycles", cycles, 1)
    burn_in = check_int("burn_in", burn_in, 0, cycles - 1)
    trials = check_int("trials", trials, 1)
    flux_cycles = check_int("flux_cycles", flux_cycles, 1)
    horizon = check_int("horizon", horizon, 0, what="cycles of look-ahead")
    if threads is not None:
        threads = check_int("threads", threads, 1)
    check_basin(basin, fleet.n_jobs)    # a level above those split is lowered to them
    check_score_every(score_every)
    if method == "splitting":
        check_splittable(fleet)
    if batch_fleets is not None:
        batch = check_int("batch_fleets", batch_fleets, 1)
    elif fixed and max_fleets is not None:
        batch = fixed_batch(fleet.n_jobs, int(cycles), max_fleets)
    else:
        batch = default_batch(fleet.n_jobs, int(cycles))
    if exact:
        risk = exact_risk(fleet, ks, target, seed, batch)
        if progress is not None:
            progress(risk)
        return risk
    t0, c0 = time.perf_counter(), time.process_time()
    can_split = method != "plain" and fleet.is_anonymous
    state = dict(b=0, occs=[], ups=[], events=0)

    def plain(until: float | None) -> StormRisk:
        """Plain Monte Carlo batches until resolved, max_fleets or ``until`` s."""
        while True:
            b = state["b"]
            tb = time.perf_counter()
            run = simulate(fleet, launch=launch, fleets=batch, cycles=cycles, seed=int(seed),
                           burn_in=burn_in, fleet_start=b * batch, batch_size=batch,
                           threads=threads)
            last = time.perf_counter() - tb
            c, e = _collapse(run.occupancy, run.upcrossings, ks)
            state["occs"].append(c)
            state["ups"].append(e)
            state["events"] += int(run.events.sum())
            b = state["b"] = b + 1
            fleets = b * batch
            cpu = time.process_time() - c0
            wall = time.perf_counter() - t0
            est = _estimate(np.concatenate(state["occs"]), np.concatenate(state["ups"]), ks,
                            fleets, target, min_hits, cpu / fleets, LEVEL)
            if b >= MIN_BATCHES and bool(est["resolved"].all()):
                stopped = "rel_error"
            elif max_fleets is not None and fleets >= max_fleets:
                stopped = "max_fleets"
            elif not fixed and b >= MIN_BATCHES and wall + last > until:
                stopped = "max_seconds"
            elif not fixed and can_split and b >= MIN_BATCHES and _hopeless(est, cpu, wall,
                                                                             budget):
                stopped = "max_seconds"      # plain cannot finish: go to splitting now
            else:
                stopped = "running"
            risk = StormRisk(levels=ks, rel_error_target=target, seed=int(seed),
                             batch_fleets=batch, fleets=fleets, fleet_cycles=fleets * int(cycles),
                             events=state["events"], cpu_seconds=cpu, wall_seconds=wall,
                             batches=b, stopped=stopped,
                             level_method=np.full(ks.size, "plain"), **est)
            if progress is not None and (stopped == "running" or not can_split):
                progress(risk)
            if stopped != "running":
                return risk

    if method == "splitting":
        risk = None
        todo = np.ones(ks.size, dtype=bool)
    elif fixed:
        risk = plain(None)
        todo = ~risk.resolved
        if not can_split or not todo.any():
            if can_split and progress is not None:
                progress(risk)
            return risk
    else:
        risk = plain(budget * PLAIN_SHARE if can_split else budget)
        todo = ~risk.resolved
        if not can_split or risk.stopped != "max_seconds":
            if can_split and progress is not None:
                progress(risk)
            return risk
        # Would plain Monte Carlo finish the rest in the budget left (at the
        # CPU/wall ratio it ran at)? Then it goes on: splitting is not chosen.
        speed = risk.cpu_seconds / max(risk.wall_seconds, 1e-9)
        left = budget - risk.wall_seconds
        more = float(np.max(risk.cpu_seconds_needed[todo])) - risk.cpu_seconds
        if more / max(speed, 1e-9) <= left:
            risk = plain(budget)
            if progress is not None:
                progress(risk)
            return risk

    def split_progress(sp):
        if progress is not None:
            progress(_with_split(risk, ks, todo, sp, target, t0, c0, state["events"], "running"))

    if not (basin is None or isinstance(basin, str)):   # a level: at most the deepest split
        basin = min(basin, int(ks[todo].max()))
    if fixed:
        sp = storm_split(fleet, ks[todo], trials=trials, replicates=replicates,
                         flux_cycles=flux_cycles, burn_in=burn_in, seed=int(seed),
                         launch=launch, threads=threads, horizon=horizon, basin=basin,
                         score_every=score_every)
    else:
        sp = storm_split_until(fleet, ks[todo], target, budget - (time.perf_counter() - t0),
                               seed=int(seed), trials=trials, flux_cycles=flux_cycles,
                               burn_in=burn_in, launch=launch, threads=threads,
                               progress=split_progress, horizon=horizon, basin=basin,
                               score_every=score_every)
    done = bool(np.all(sp.rate_rel_error <= target) and np.all(sp.p_rel_error <= target))
    out = _with_split(risk, ks, todo, sp, target, t0, c0, state["events"],
                      "rel_error" if done and (risk is None or risk.resolved[~todo].all())
                      else "replicates" if fixed else "max_seconds")
    if progress is not None:
        progress(out)
    return out


def _hopeless(est, cpu, wall, budget) -> bool:
    """Every unresolved level would cost plain Monte Carlo more than the whole
    budget left, at the CPU/wall ratio it runs at."""
    todo = ~est["resolved"]
    speed = cpu / max(wall, 1e-9)
    more = est["cpu_seconds_needed"][todo] - cpu
    return bool(todo.any() and np.all(more / max(speed, 1e-9) > budget - wall))


def _bound_unreached(ks, unreached, base) -> None:
    """Levels no replicate reached: P(n_w >= k) <= P(n_w >= k') for every
    k' < k, so the upper end of the deepest lower level's interval bounds it
    ("monotone-bound"; 1 if none was reached). nu_k has no such bound (storms
    of k need not be rarer than storms of k - 1): "not-reached", NaN."""
    base["p_method"] = base["p_method"].astype(object)       # room for longer names
    base["rate_method"] = base["rate_method"].astype(object)
    for j in unreached.tolist():
        lower = [i for i in range(ks.size) if ks[i] < ks[j] and base["p"][i] > 0
                 and math.isfinite(base["p_hi"][i])]
        base["p"][j], base["p_lo"][j] = 0.0, 0.0
        base["p_hi"][j] = min((base["p_hi"][i] for i in lower), default=1.0)
        base["p_method"][j] = "monotone-bound"
        base["p_rel_error"][j] = np.nan
        for name in ("rate", "rate_lo", "rate_hi", "rate_rel_error"):
            base[name][j] = np.nan
        base["rate_method"][j] = "not-reached"


def _with_split(risk, ks, todo, sp, target, t0, c0, plain_events, stopped) -> StormRisk:
    """The StormRisk with levels ``todo`` replaced by the splitting estimate sp."""
    n = ks.size
    if risk is None:
        nan = np.full(n, np.nan)
        base = dict(p=nan.copy(), p_lo=nan.copy(), p_hi=nan.copy(),
                    p_method=np.full(n, "splitting"), p_rel_error=nan.copy(), rate=nan.copy(),
                    rate_lo=nan.copy(), rate_hi=nan.copy(), rate_method=np.full(n, "splitting"),
                    rate_rel_error=nan.copy(), duration=nan.copy(), duration_lo=nan.copy(),
                    duration_hi=nan.copy(), hits=np.zeros(n, dtype=np.int64),
                    resolved=np.zeros(n, dtype=bool), fleets_needed=nan.copy(),
                    cpu_seconds_needed=nan.copy(), needed_is_lower_bound=np.zeros(n, bool),
                    fleets=0, fleet_cycles=0, batches=0, batch_fleets=0, method=sp.method)
    else:
        base = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                for k, v in risk.__dict__.items() if k not in ("levels", "split")}
        base["p_method"] = base["p_method"].astype(object)
        base["rate_method"] = base["rate_method"].astype(object)
    idx = np.nonzero(todo)[0]
    for name in ("p", "p_lo", "p_hi", "p_rel_error", "rate", "rate_lo", "rate_hi",
                 "rate_rel_error"):
        base[name][idx] = getattr(sp, name)
    base["p_method"][idx] = "splitting"
    base["rate_method"][idx] = "splitting"
    _bound_unreached(ks, idx[~(sp.p > 0)], base)
    # time at >= k per storm: the ratio of the replicates' means, its interval
    # over the replicates (independent units) like every other ratio here
    d, d_lo, d_hi, _ = ratio_of_means(sp.rep_p, sp.rep_rate, sp.level)
    base["duration"][idx], base["duration_lo"][idx], base["duration_hi"][idx] = d, d_lo, d_hi
    base["resolved"][idx] = (sp.rate_rel_error <= target) & (sp.p_rel_error <= target)
    lm = np.full(n, "plain", dtype=object) if risk is None or risk.level_method is None \
        else risk.level_method.astype(object)
    lm[idx] = "splitting"
    base.update(level_method=lm.astype(str), split=sp, stopped=stopped,
                cpu_seconds=time.process_time() - c0, wall_seconds=time.perf_counter() - t0,
                events=plain_events + sp.events, rel_error_target=target, seed=sp.seed)
    base["p_method"] = base["p_method"].astype(str)
    base["rate_method"] = base["rate_method"].astype(str)
    return StormRisk(levels=ks, **base)

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
Carlo suffices (shallow tails, where splitting loses). Splitting runs every
fleet without failures: the base model on its two-clock kernel, asynchronous,
weighted and capped fleets (MODEL.md E1, E2, E5) on the general dynamics;
fleets with failures (E8) use plain Monte Carlo whatever ``method`` says,
except that ``method="splitting"`` on them is an error. ``level_method``
names the method of each level.

A fixed effort (``max_seconds=None``; sweeps): plain Monte Carlo runs until
every level is resolved or ``max_fleets`` fleets (whole batches) are done;
"auto" splits the levels left unresolved with exactly ``split.replicates``
replicates (``storm_split``; no failures); "splitting" splits them all.
No timing enters: a function of (seed, inputs, max_fleets, the settings).

Splitting's settings (clones per stage, flux run, look-ahead, basin, score
looks, replicates) come as one object, ``split=SplitSettings(...)``
(``stormsim.risk.settings``), with their defaults in one place.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from .._args import check_int, check_levels, check_progress, check_real, stderr_line
from ..engine.cost import default_batch
from ..engine.launch import resolve
from ..engine.model import Fleet
from ..engine.run import simulate
from ..stats.analysis import time_at_or_above
from ..errors import SpecError
from ..stats.storms import storm_estimate
from ..stats.interval import CONFIDENCE
from ..stats.tails import tail_estimate
from .exact import exact_applies, exact_risk
from .result import StormRisk, with_split
from .settings import (DEFAULT_BURN_IN, FIXED_REPLICATES, SplitSettings, check_basin,
                       split_settings)
from .splitting import MIN_REPLICATES, check_splittable, storm_split, storm_split_until

__all__ = ["DEFAULT_BURN_IN", "DEFAULT_MAX_SECONDS", "DEFAULT_METHOD", "DEFAULT_REL_ERROR",
           "DEPRECATED_KEYWORDS", "FIXED_REPLICATES", "METHODS", "PlainRun", "RiskJob",
           "SplitSettings", "StormRisk", "fixed_batch", "storm_risk"]

#: Fleets that must reach a level before its relative error counts: the delta
#: method's se of a ratio rests on the units that saw the event (tails.py).
MIN_HITS = 10
MIN_BATCHES = 2     #: batches run before any level may stop the run (a spread needs units)
#: The share of max_seconds plain Monte Carlo gets before ``method="auto"``
#: decides whether the unresolved levels go to splitting.
PLAIN_SHARE = 0.25
METHODS = ("auto", "exact", "plain", "splitting")
DEFAULT_METHOD = "auto"         #: storm_risk's method when not given
DEFAULT_REL_ERROR = 0.1         #: storm_risk's target relative error when not given
DEFAULT_MAX_SECONDS = 60.0      #: storm_risk's time budget when not given
#: storm_risk's former splitting keywords: still taken, with a DeprecationWarning
#: (the settings of ``split=SplitSettings(...)``).
DEPRECATED_KEYWORDS = ("trials", "flux_cycles", "horizon", "replicates", "basin", "score_every")


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


def _estimate(occ, up, ks, fleets, target, min_hits, cpu_per_fleet, confidence):
    """The StormRisk arrays of the collapsed per-fleet data (levels = ks)."""
    tail = tail_estimate(occ, fleets=fleets, confidence=confidence)
    st = storm_estimate(up, occ, fleets=fleets, confidence=confidence)
    above = time_at_or_above(occ)
    b = above[:, 0]
    u = occ.shape[0]
    p = tail.p_ge[1:]
    p_re = np.full(ks.size, np.nan)
    if u >= 2:
        d = above[:, 1:] - p * b[:, None]
        se = np.sqrt((d * d).sum(axis=0) / (u * (u - 1))) / b.mean()
        with np.errstate(divide="ignore", invalid="ignore"):
            p_re = np.where(p > 0, se / p, np.nan)
    r_re = st.storms_per_s_rel_error[1:]
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
        needed[none] = 1.0 / (target ** 2 * st.storms_per_s_hi[1:][none] * window)
        lower[none] = True
    return dict(p_ge=p, p_ge_lo=tail.p_ge_lo[1:], p_ge_hi=tail.p_ge_hi[1:],
                p_ge_method=tail.method[1:].astype(str), p_ge_rel_error=p_re,
                storms_per_s=st.storms_per_s[1:], storms_per_s_lo=st.storms_per_s_lo[1:],
                storms_per_s_hi=st.storms_per_s_hi[1:], storms_method=st.method[1:].astype(str),
                storms_per_s_rel_error=r_re, storm_duration=st.storm_duration[1:],
                storm_duration_lo=st.storm_duration_lo[1:], storm_duration_hi=st.storm_duration_hi[1:],
                hits=hits, resolved=resolved,
                fleets_needed=needed, cpu_seconds_needed=needed * cpu_per_fleet,
                needed_is_lower_bound=lower)


def _risk_line(risk: StormRisk) -> None:
    """storm_risk's progress=True: one line per batch or splitting round."""
    stderr_line(f"storm_risk: {risk.fleets} fleets, {int(np.sum(risk.resolved))}/"
                f"{len(risk.levels)} levels resolved, {risk.wall_seconds:.1f} s")


def storm_risk(fleet: Fleet, levels, rel_error: float = DEFAULT_REL_ERROR,  # noqa: PLR0913 (public keywords)
               max_seconds: float | None = DEFAULT_MAX_SECONDS, *, seed: int = 0,
               cycles: int = 800, burn_in: int = DEFAULT_BURN_IN, launch="random",
               batch_fleets: int | None = None, max_fleets: int | None = None,
               min_hits: int = MIN_HITS, threads: int | None = None, progress=None,
               method: str = DEFAULT_METHOD, split: SplitSettings | None = None,
               **deprecated) -> StormRisk:
    """P(n_w >= k) and the storm rate nu_k for each level k, to ``rel_error``.

    Parameters
    ----------
    fleet : Fleet
    levels : int or sequence of int in 1..N
    rel_error : target relative standard error of every estimate (0.1: 10 %)
    max_seconds : wall-time budget; no batch (or splitting round) starts that
        the last one's duration says would end past it (at least MIN_BATCHES
        batches run). None: a fixed effort instead (``max_fleets`` and
        ``split.replicates``; see the module docstring), timing-independent
    seed : int >= 0; fleet j is fleet j of ``simulate(fleet, seed=seed)``
    cycles, burn_in, launch : per fleet, as in ``simulate`` (measured after
        ``burn_in`` cycles, splitting's flux runs too)
    batch_fleets : fleets per batch (default: ``engine.cost.default_batch``, about
        half a second of work; with max_seconds=None, ``fixed_batch``: at
        least MIN_BATCHES batches adding up to max_fleets; fixed by the
        inputs, never by timing)
    max_fleets : stop after this many fleets (rounded up to whole batches)
    min_hits : fleets that must reach a level before its error counts
    threads : numba threads (results do not depend on it)
    progress : a callable, ``progress(risk)`` after each batch (or splitting
        round), with the StormRisk so far (``risk.fleets``, ``risk.resolved``,
        ...); True: a short line per batch or round on stderr; False or None
        (the default): no progress
    method : "auto" (the exact law where it applies: a base-model fleet
        with jitter on every job, from a random launch (``risk.exact``); else
        plain Monte Carlo, then splitting for the levels it cannot reach in
        the budget; see the module docstring), "exact" (the long-run law,
        whatever the launch; a SpecError where none exists), "plain", or
        "splitting" (every level by stormsim.risk.splitting; fleets without
        failures)
    split : SplitSettings, splitting's settings (None: its defaults): clones
        per stage (``trials``), ``flux_cycles``, look-ahead (``horizon``),
        basin edge (a level is lowered to the deepest level split), when the
        score is looked at (``score_every``), and ``replicates``: with
        ``max_seconds=None`` the splitting replicates, >=
        splitting.MIN_REPLICATES (None: FIXED_REPLICATES); with a time budget
        it must be None (replicates then run in rounds until rel_error or the
        budget). Its ``burn_in`` is this ``burn_in`` (None, or the same)
    **deprecated : trials, flux_cycles, horizon, replicates, basin,
        score_every as keywords: deprecated (a DeprecationWarning), the same
        as ``split=SplitSettings(trials=...)``

    Returns
    -------
    StormRisk
        Per level: P(n_w >= k), nu_k and the mean storm duration with their
        95 % intervals and methods, relative errors, ``resolved`` and the
        plain Monte Carlo fleets still needed; ``level_method`` (exact, plain
        or splitting), the effort spent and why it ``stopped``. Its estimate
        from F fleets (and R splitting replicates) is a function of (seed,
        the inputs, F, R) alone.

    Raises
    ------
    SpecError
        An argument out of its range (naming it); ``method="exact"`` where no
        exact law exists; ``method="splitting"`` on a fleet with
        failures; a fixed effort without ``max_fleets``; ``replicates``
        with a time budget; ``split.burn_in`` other than ``burn_in``.
    TypeError
        A keyword storm_risk does not take.
    """
    unknown = sorted(set(deprecated) - set(DEPRECATED_KEYWORDS))
    if unknown:
        raise TypeError(f"storm_risk() got an unexpected keyword argument {unknown[0]!r}")
    split = split_settings(split, deprecated, "storm_risk", deprecated=True)
    job = _checked(fleet, levels, rel_error, max_seconds, seed, cycles, burn_in, launch,
                   batch_fleets, max_fleets, min_hits, threads, progress, method, split)
    if job.exact:
        risk = exact_risk(job.fleet, job.ks, job.target, job.seed, job.batch)
        if job.progress is not None:
            job.progress(risk)
        return risk
    plain = PlainRun(job)
    if job.method == "splitting":
        return _split_levels(job, None, np.ones(job.ks.size, dtype=bool), plain)
    risk = plain.run(None if job.fixed else job.budget * PLAIN_SHARE if job.can_split
                     else job.budget)
    step = _after_plain(job, risk)
    if step == "split":
        return _split_levels(job, risk, ~risk.resolved, plain)
    if step == "plain":
        risk = plain.run(job.budget)
    if job.can_split and job.progress is not None:
        job.progress(risk)
    return risk


@dataclass(frozen=True)
class RiskJob:
    """storm_risk's inputs, checked: what every step of it reads."""

    fleet: Fleet
    ks: np.ndarray
    target: float
    budget: float | None        # None: a fixed effort
    max_fleets: int | None
    batch: int
    seed: int
    cycles: int
    burn_in: int
    launch: object
    threads: int | None
    min_hits: int
    progress: object
    method: str
    split: SplitSettings
    exact: bool

    @property
    def fixed(self) -> bool:
        return self.budget is None

    @property
    def can_split(self) -> bool:
        """Whether levels may go to splitting (a fleet without failures, a method
        that splits)."""
        return self.method != "plain" and not self.fleet.has_failures


def _checked(fleet, levels, rel_error, max_seconds, seed, cycles, burn_in, launch,  # noqa: PLR0913 (storm_risk's)
             batch_fleets, max_fleets, min_hits, threads, progress, method,
             split: SplitSettings) -> RiskJob:
    """storm_risk's arguments checked (a SpecError naming the first wrong one)."""
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
    exact = method == "exact" or (method == "auto" and exact_applies(fleet, launch))
    if budget is None and max_fleets is None and method != "splitting" and not exact:
        raise SpecError("max_seconds = None (a fixed effort) needs max_fleets: the plain Monte "
                        "Carlo fleets to run (or give a time budget max_seconds)")
    replicates = split.replicates
    if budget is not None and replicates is not None:
        raise SpecError(f"replicates = {replicates!r} is the splitting effort of a fixed effort "
                        "(max_seconds = None); with a time budget replicates run in rounds until "
                        "rel_error or max_seconds: leave SplitSettings' replicates None, or set "
                        "max_seconds=None")
    if replicates is not None and replicates < MIN_REPLICATES:
        raise SpecError(f"replicates = {replicates}: must be >= {MIN_REPLICATES} (the interval of "
                        "a splitting estimate comes from the spread of its replicates; fewer "
                        "give none)")
    min_hits = check_int("min_hits", min_hits, 1)
    seed = check_int("seed", seed, 0, what="results are a function of it")
    cycles = check_int("cycles", cycles, 1)
    burn_in = check_int("burn_in", burn_in, 0, cycles - 1)
    if split.burn_in is not None and split.burn_in != burn_in:
        raise SpecError(f"split.burn_in = {split.burn_in} differs from burn_in = {burn_in}: "
                        "storm_risk measures its plain fleets and its splitting flux runs after "
                        "one burn-in; give it once, as burn_in")
    if threads is not None:
        threads = check_int("threads", threads, 1)
    check_basin(split.basin, fleet.n_jobs)    # a level above those split is lowered to them
    if method == "splitting":
        check_splittable(fleet)
    if batch_fleets is not None:
        batch = check_int("batch_fleets", batch_fleets, 1)
    elif budget is None and max_fleets is not None:
        batch = fixed_batch(fleet.n_jobs, cycles, max_fleets)
    else:
        batch = default_batch(fleet.n_jobs, cycles)
    return RiskJob(fleet=fleet, ks=ks, target=target, budget=budget, max_fleets=max_fleets,
                   batch=batch, seed=seed, cycles=cycles, burn_in=burn_in, launch=launch,
                   threads=threads, min_hits=min_hits, progress=progress, method=method,
                   split=split, exact=exact)


class PlainRun:
    """Plain Monte Carlo's batches so far (batch b: fleets [b B, (b + 1) B) of
    ``simulate(fleet, seed=seed)``), and the StormRisk they give. ``t0`` and
    ``c0`` (wall and CPU clocks at its start) time storm_risk's whole run."""

    def __init__(self, job: RiskJob):
        self.job = job
        self.batches = 0
        self.occs: list = []
        self.ups: list = []
        self.events = 0
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def clocks(self) -> tuple[float, float]:
        """CPU and wall seconds since the start."""
        return time.process_time() - self.c0, time.perf_counter() - self.t0

    def add_batch(self) -> float:
        """Run the next batch and keep its per-fleet data; its wall seconds."""
        job = self.job
        tb = time.perf_counter()
        run = simulate(job.fleet, launch=job.launch, fleets=job.batch, cycles=job.cycles,
                       seed=job.seed, burn_in=job.burn_in, fleet_start=self.batches * job.batch,
                       batch_size=job.batch, threads=job.threads)
        last = time.perf_counter() - tb
        c, e = _collapse(run.occupancy, run.upcrossings, job.ks)
        self.occs.append(c)
        self.ups.append(e)
        self.events += int(run.events.sum())
        self.batches += 1
        return last

    def estimate(self, cpu: float) -> dict:
        """The StormRisk arrays of the batches so far (``cpu``: CPU seconds spent)."""
        job, fleets = self.job, self.batches * self.job.batch
        return _estimate(np.concatenate(self.occs), np.concatenate(self.ups), job.ks, fleets,
                         job.target, job.min_hits, cpu / fleets, CONFIDENCE)

    def run(self, until: float | None) -> StormRisk:
        """Batches until resolved, max_fleets or ``until`` s (None: a fixed
        effort); ``progress`` after each (where no splitting may follow, after
        the last too)."""
        job = self.job
        while True:
            last = self.add_batch()
            fleets = self.batches * job.batch
            cpu = time.process_time() - self.c0
            wall = time.perf_counter() - self.t0
            est = self.estimate(cpu)
            stopped = _stopped(job, self.batches, est, cpu, wall, last, until)
            risk = StormRisk(levels=job.ks, rel_error_target=job.target, seed=job.seed,
                             batch_fleets=job.batch, fleets=fleets,
                             fleet_cycles=fleets * job.cycles, events=self.events,
                             cpu_seconds=cpu, wall_seconds=wall, batches=self.batches,
                             stopped=stopped, level_method=np.full(job.ks.size, "plain"), **est)
            if job.progress is not None and (stopped == "running" or not job.can_split):
                job.progress(risk)
            if stopped != "running":
                return risk


def _stopped(job: RiskJob, batches: int, est: dict, cpu: float, wall: float, last: float,
             until: float | None) -> str:
    """Why plain Monte Carlo stops after ``batches`` batches ("running": it does not)."""
    enough = batches >= MIN_BATCHES
    if enough and bool(est["resolved"].all()):
        return "rel_error"
    if job.max_fleets is not None and batches * job.batch >= job.max_fleets:
        return "max_fleets"
    if not job.fixed and enough and wall + last > until:
        return "max_seconds"
    if not job.fixed and job.can_split and enough and _hopeless(est, cpu, wall, job.budget):
        return "max_seconds"      # plain cannot finish: go to splitting now
    return "running"


def _after_plain(job: RiskJob, risk: StormRisk) -> str:
    """What follows plain Monte Carlo's first run: "done" (also where its
    first MIN_BATCHES batches already spent the whole budget), "plain" (it
    goes on to the whole budget: it would finish the rest in the budget left,
    at the CPU/wall ratio it ran at, so splitting is not chosen) or "split"
    (the levels it left unresolved)."""
    todo = ~risk.resolved
    if not job.can_split:
        return "done"
    if job.fixed:
        return "split" if todo.any() else "done"
    if risk.stopped != "max_seconds":
        return "done"
    speed = risk.cpu_seconds / max(risk.wall_seconds, 1e-9)
    left = job.budget - risk.wall_seconds
    if left <= 0.0:
        return "done"
    more = float(np.max(risk.cpu_seconds_needed[todo])) - risk.cpu_seconds
    return "plain" if more / max(speed, 1e-9) <= left else "split"


def _split_levels(job: RiskJob, risk: StormRisk | None, todo: np.ndarray,
                  plain: PlainRun) -> StormRisk:
    """Levels ``todo`` by splitting (``risk``: plain Monte Carlo's StormRisk,
    None if it did not run): ``storm_split`` with a fixed effort, else
    ``storm_split_until`` in the budget left; ``progress`` after each round
    and at the end."""
    basin = job.split.basin
    if not (basin is None or isinstance(basin, str)):   # a level: at most the deepest split
        basin = min(basin, int(job.ks[todo].max()))
    split = replace(job.split, basin=basin).with_burn_in(job.burn_in)
    if job.fixed:
        sp = storm_split(job.fleet, job.ks[todo], split, seed=job.seed, launch=job.launch,
                         threads=job.threads)
    else:
        rounds = None if job.progress is None else partial(_round_progress, job, risk, todo,
                                                           plain)
        sp = storm_split_until(job.fleet, job.ks[todo], job.target,
                               job.budget - (time.perf_counter() - plain.t0), split,
                               seed=job.seed, launch=job.launch, threads=job.threads,
                               progress=rounds)
    done = bool(np.all(sp.storms_per_s_rel_error <= job.target) and np.all(sp.p_ge_rel_error <= job.target))
    stopped = "rel_error" if done and (risk is None or risk.resolved[~todo].all()) \
        else "replicates" if job.fixed else "max_seconds"
    out = with_split(risk, job.ks, todo, sp, job.target, plain.events, stopped, plain.clocks())
    if job.progress is not None:
        job.progress(out)
    return out


def _round_progress(job: RiskJob, risk, todo, plain: PlainRun, sp) -> None:
    """storm_risk's progress after a splitting round: the StormRisk so far."""
    job.progress(with_split(risk, job.ks, todo, sp, job.target, plain.events, "running",
                            plain.clocks()))


def _hopeless(est, cpu, wall, budget) -> bool:
    """Every unresolved level would cost plain Monte Carlo more than the whole
    budget left, at the CPU/wall ratio it runs at."""
    todo = ~est["resolved"]
    speed = cpu / max(wall, 1e-9)
    more = est["cpu_seconds_needed"][todo] - cpu
    return bool(todo.any() and np.all(more / max(speed, 1e-9) > budget - wall))

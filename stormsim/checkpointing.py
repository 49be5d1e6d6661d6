"""The best checkpoint interval when jobs fail (MODEL.md E8): Young's, Daly's,
and Daly's with the write time the fleet's contention gives.

Daly's law (``stats.daly``) takes a job's write time d as given. On a shared
fabric the write time is the fleet's: the law's mean write duration
(``StationaryLaw.mean_write_duration``), which depends on every job's
interval, so the interval that is best for a job given the others is a fixed
point: each class of identical jobs at Daly's optimum for the write time the
fleet gives it at those intervals. For identical jobs the fleet can also move
together: the one interval that maximises every job's Daly goodput with the
write time that interval gives (the fleet optimum, never worse than the
fixed point for the fleet, since it accounts for what a job's write costs
the others).

These are predictions: Daly's law with a contended mean write is not the
law of a fleet whose failures interrupt storms (the stationary law does not
hold with failures, MODEL.md E8); the engine measures the goodput they give.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm

from ._format import fmt_duration
from .engine.model import Fleet
from .engine.run import simulate
from .engine.units import time_seconds
from .errors import SpecError
from .stats.daly import daly_goodput, daly_optimum, young_interval
from .stats.goodput import goodput
from .stats.interval import CONFIDENCE, Interval
from .stats.stationary import stationary

__all__ = ["BestInterval", "ClassInterval", "Recommendation", "best_interval", "paired_gain",
           "recommend", "simulated_goodput"]

#: The fixed point's intervals are settled when no class moves by more than
#: this relative amount in a round (the law's write times are exact to
#: ~1e-12; Daly's goodput is flat at its optimum, so 1e-9 in T is ~1e-18 in G).
INTERVAL_RTOL = 1e-9
#: Rounds of the classes' fixed point before giving up (each round solves
#: every class's own interval given the others; 2-5 rounds settle the fleets
#: of the tests).
MAX_ROUNDS = 100


@dataclass(frozen=True)
class ClassInterval:
    """One class of identical jobs (alike in every per-job value): its intervals (s).

    jobs : how many; first_job : the index of the first
    mtbf, restart : its failures: MTBF M_i (outages included: 1 / (1/M_i +
        1/M_0)) and restart R_i
    interval : T now; write_alone : d, the write time alone
    young : Young's sqrt(2 d M); daly : Daly's exact optimum with d alone
    contended : Daly's optimum with the fleet's contended mean write, the
        fixed point over all classes; write_contended : that write time
    goodput_now, goodput_daly, goodput_contended : Daly's goodput with the
        contended write the fleet would have with every class at its current,
        Daly's or the contended interval
    """

    jobs: int
    first_job: int
    mtbf: float
    restart: float
    interval: float
    write_alone: float
    young: float
    daly: float
    contended: float
    write_contended: float
    goodput_now: float
    goodput_daly: float
    goodput_contended: float


@dataclass(frozen=True)
class BestInterval:
    """:func:`best_interval`'s answer: per class, and for identical jobs the fleet's.

    fleet_optimum : for identical jobs, the one interval that maximises their
        goodput with the contended write it gives (s); NaN for a mixed fleet
    fleet_optimum_goodput, fleet_optimum_write : its goodput and write time
    """

    classes: tuple[ClassInterval, ...]
    fleet_optimum: float = math.nan
    fleet_optimum_goodput: float = math.nan
    fleet_optimum_write: float = math.nan

    def table(self) -> str:
        """The classes as text, one line each, then the fleet optimum."""
        head = (f"{'jobs':>5} {'MTBF':>8} {'now':>8} {'Young':>8} {'Daly':>8} {'contended':>9} "
                f"{'write':>7} {'goodput now -> contended':>25}")
        lines = ["Checkpoint interval (compute between checkpoints), restart "
                 + ", ".join(sorted({fmt_duration(c.restart) for c in self.classes})) + ":", head]
        for c in self.classes:
            lines.append(
                f"{c.jobs:>5} {fmt_duration(c.mtbf):>8} {fmt_duration(c.interval):>8} "
                f"{fmt_duration(c.young):>8} {fmt_duration(c.daly):>8} "
                f"{fmt_duration(c.contended):>9} {fmt_duration(c.write_contended):>7} "
                f"{c.goodput_now:>12.4f} -> {c.goodput_contended:.4f}")
        if math.isfinite(self.fleet_optimum):
            lines.append(f"All jobs at one interval: {fmt_duration(self.fleet_optimum)} (write "
                         f"{fmt_duration(self.fleet_optimum_write)}, goodput "
                         f"{self.fleet_optimum_goodput:.4f})")
        return "\n".join(lines)


def _classes(fleet: Fleet) -> tuple[np.ndarray, np.ndarray]:
    """(first job of each class, class of each job) from ``Fleet.job_classes``."""
    classes = fleet.job_classes()
    index = np.empty(fleet.n_jobs, dtype=np.int64)
    for c, jobs in enumerate(classes):
        index[jobs] = c
    return np.array([jobs[0] for jobs in classes], dtype=np.int64), index


class _Contention:
    """The law's mean write per class with each class at a given interval (the
    fleet without its failures: the law of the storage it shares)."""

    def __init__(self, fleet: Fleet, starts: np.ndarray, index: np.ndarray):
        self.fleet = fleet.replace(mtbf=math.inf, restart=0.0, outage_mtbf=math.inf)
        self.starts, self.index = starts, index

    def writes(self, intervals: np.ndarray) -> np.ndarray:
        scale = intervals[self.index] / self.fleet.T
        law = stationary(self.fleet.replace(T=self.fleet.T * scale,
                                            jitter=self.fleet.jitter * scale))
        return np.asarray(law.mean_write_duration)[self.starts]


@dataclass(frozen=True)
class _Failures:
    """Each class's MTBF (outages included) and restart."""

    mtbf: np.ndarray
    restart: np.ndarray

    def optimum(self, c: int, write: float) -> float:
        return daly_optimum(write, self.mtbf[c], self.restart[c])

    def goodputs(self, intervals, writes) -> np.ndarray:
        return np.array([daly_goodput(t, w, m, r) for t, w, m, r in
                         zip(intervals, writes, self.mtbf, self.restart)])


def _fixed_point(contention: _Contention, alone: np.ndarray, fail: _Failures) -> np.ndarray:
    """Every class at Daly's optimum for its contended write, the others as they are.

    Class c's own equation T = daly_optimum(w_c(T)) has one root in
    [daly_optimum(d_c), M_c): the contended write is at least d_c (f(n) <= n)
    and falls as T grows, and Daly's optimum is below M whatever the write."""
    t = np.array([fail.optimum(c, d) for c, d in enumerate(alone)])
    for _ in range(MAX_ROUNDS):
        before = t.copy()
        for c in range(t.size):
            def gap(x, c=c):
                trial = t.copy()
                trial[c] = x
                return fail.optimum(c, contention.writes(trial)[c]) - x
            lo = fail.optimum(c, alone[c])
            t[c] = lo if gap(lo) <= 0.0 else brentq(gap, lo, fail.mtbf[c], rtol=INTERVAL_RTOL)
        if np.all(np.abs(t - before) <= INTERVAL_RTOL * t):
            return t
    raise SpecError(f"the classes' best intervals did not settle in {MAX_ROUNDS} rounds; "
                    "give fewer distinct job classes or report the fleet")


def _fleet_optimum(contention: _Contention, daly: float, fail: _Failures):
    """For identical jobs: the interval maximising Daly's goodput with its own contended write."""
    def loss(log_t):
        t = np.array([math.exp(log_t)])
        return -fail.goodputs(t, contention.writes(t))[0]
    found = minimize_scalar(loss, bounds=(math.log(daly / 4.0), math.log(fail.mtbf[0])),
                            method="bounded", options={"xatol": INTERVAL_RTOL})
    best = math.exp(found.x)
    return best, -found.fun, float(contention.writes(np.array([best]))[0])


def _failing(fleet: Fleet, mtbf, restart) -> Fleet:
    """The fleet with the failures asked for (each job's own where not given)."""
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    changes = {}
    if mtbf is not None:
        changes["mtbf"] = time_seconds("mtbf", mtbf, positive=True)
    if restart is not None:
        changes["restart"] = time_seconds("restart", restart)
    fleet = fleet.replace(**changes)
    if not fleet.has_failures:
        raise SpecError("mtbf = None: the fleet never fails (its mtbf is inf and it has no "
                        "outages), so no interval is best; give mtbf= (e.g. '24 h')")
    return fleet


def best_interval(fleet: Fleet, mtbf=None, restart=None) -> BestInterval:
    """The best checkpoint interval for each class of jobs, with and without contention.

    Parameters
    ----------
    fleet : stormsim.Fleet
        A base-model fleet (blocking, equal weights, no writer cap: the law's
        write times), its T the current compute interval between checkpoints,
        and its failures (``mtbf``, ``restart``, ``outage_mtbf``) unless given here.
    mtbf : float or str, optional
        Every job's mean time between failures: seconds, or a time with its
        unit ("24 h"). Default: each job's own.
    restart : float or str, optional
        Every job's time from a failure until it computes again. Default: each
        job's own.

    Returns
    -------
    BestInterval
        Per class: Young's interval, Daly's exact optimum with the write time
        alone, Daly's optimum with the fleet's contended write time (a fixed
        point), and Daly's goodput at each; for identical jobs the fleet
        optimum. An outage fails every job, so a job's MTBF here is
        1 / (1/M_i + 1/M_0).

    Raises
    ------
    SpecError
        A bad mtbf or restart, a fleet that never fails, or one the stationary
        law refuses.
    """
    fleet = _failing(fleet, mtbf, restart)
    starts, index = _classes(fleet)
    contention = _Contention(fleet, starts, index)
    fail = _Failures(1.0 / (1.0 / fleet.mtbf[starts] + 1.0 / fleet.outage_mtbf),
                     fleet.restart[starts])
    now, alone = fleet.T[starts], fleet.d[starts]
    picks = {"now": now, "daly": np.array([fail.optimum(c, d) for c, d in enumerate(alone)])}
    picks["contended"] = _fixed_point(contention, alone, fail)
    writes = {name: contention.writes(t) for name, t in picks.items()}
    goodputs = {name: fail.goodputs(picks[name], writes[name]) for name in picks}
    counts = np.bincount(index)
    classes = tuple(
        ClassInterval(jobs=int(counts[c]), first_job=int(starts[c]), mtbf=float(fail.mtbf[c]),
                      restart=float(fail.restart[c]), interval=float(now[c]),
                      write_alone=float(alone[c]), young=young_interval(alone[c], fail.mtbf[c]),
                      daly=float(picks["daly"][c]), contended=float(picks["contended"][c]),
                      write_contended=float(writes["contended"][c]),
                      goodput_now=float(goodputs["now"][c]),
                      goodput_daly=float(goodputs["daly"][c]),
                      goodput_contended=float(goodputs["contended"][c]))
        for c in range(starts.size))
    if starts.size == 1:
        return BestInterval(classes, *_fleet_optimum(contention, float(picks["daly"][0]), fail))
    return BestInterval(classes)


# -- the engine's goodput, and the plan's recommendation --------------------------------------

#: The goodput runs of ``plan``: fleets x cycles after a burn-in, a random
#: launch (cut where the budget's share cannot buy them, down to GOODPUT_LEAST).
GOODPUT_FLEETS, GOODPUT_CYCLES, GOODPUT_BURN_IN = 64, 1000, 20
GOODPUT_LEAST = (8, 100)
#: How the gain of a recommended interval is made.
PAIRED = "paired over fleets (the same seed at both intervals), normal"


def simulated_goodput(fleet: Fleet, seed: int, fleets: int, cycles: int):
    """(G over fleets as an Interval, G per fleet): the engine's goodput of a
    fleet with failures, ``fleets`` x ``cycles`` from a random launch."""
    run = simulate(fleet, launch="random", fleets=fleets, cycles=cycles,
                   burn_in=min(GOODPUT_BURN_IN, cycles // 10), seed=seed)
    return goodput(run)["goodput"], np.asarray(run.goodput)


def paired_gain(now: np.ndarray, then: np.ndarray, confidence: float = CONFIDENCE) -> Interval:
    """The mean per-fleet gain ``then - now`` (per-fleet goodputs of two runs on
    one seed) with its normal interval over fleets (PAIRED)."""
    diff = then - now
    half = float(norm.ppf(0.5 + confidence / 2.0) * diff.std(ddof=1) / math.sqrt(diff.size))
    mean = float(diff.mean())
    return Interval(mean, mean - half, mean + half, PAIRED, confidence)


@dataclass(frozen=True)
class Recommendation:
    """plan's checkpoint interval: :func:`best_interval` and the engine's goodput.

    intervals : each job's recommended T_i (s): for identical jobs the fleet
        optimum, else each class at its contention-aware interval
    goodput_now, goodput_then : the engine's goodput at the current and at the
        recommended intervals; gain : then - now, paired over fleets
    """

    best: BestInterval
    intervals: np.ndarray
    goodput_now: Interval
    goodput_then: Interval
    gain: Interval

    def lines(self) -> list[str]:
        """The plan's sentences on it."""
        b = self.best
        if math.isfinite(b.fleet_optimum):
            (c,) = b.classes
            what = (f"every job at {fmt_duration(b.fleet_optimum)} (now "
                    f"{fmt_duration(c.interval)}; Young's {fmt_duration(c.young)}, Daly's with the "
                    f"write alone {fmt_duration(c.daly)}, with the contended write each job for "
                    f"itself {fmt_duration(c.contended)})")
        else:
            what = "; ".join(f"{c.jobs} jobs at {fmt_duration(c.contended)} (now "
                             f"{fmt_duration(c.interval)}, Young's {fmt_duration(c.young)})"
                             for c in b.classes)
        g, h, d = self.goodput_now, self.goodput_then, self.gain
        rates = "; ".join(sorted({f"MTBF {fmt_duration(c.mtbf)}, restart {fmt_duration(c.restart)}"
                                  for c in b.classes}))
        return [f"Checkpoint interval with failures ({rates}): {what}. "
                f"Goodput now {g.value:.4f} [{g.lo:.4f}, {g.hi:.4f}], at the recommended "
                f"interval {h.value:.4f} [{h.lo:.4f}, {h.hi:.4f}]: a gain of {d.value:+.4f} "
                f"[{d.lo:+.4f}, {d.hi:+.4f}] ({d.method}; simulated: the engine with failures)."]


def recommend(fleet: Fleet, seed: int, fleets: int, cycles: int) -> Recommendation:
    """The recommended interval of a fleet with failures (:func:`best_interval`:
    a base-model fleet) and the engine's goodput now and there, on one seed."""
    best = best_interval(fleet)
    starts, index = _classes(fleet)
    per_class = (np.full(starts.size, best.fleet_optimum) if math.isfinite(best.fleet_optimum)
                 else np.array([c.contended for c in best.classes]))
    intervals = per_class[index]
    scale = intervals / fleet.T
    then_fleet = fleet.replace(T=fleet.T * scale, jitter=fleet.jitter * scale)
    now, now_f = simulated_goodput(fleet, seed, fleets, cycles)
    then, then_f = simulated_goodput(then_fleet, seed, fleets, cycles)
    return Recommendation(best, intervals, now, then, paired_gain(now_f, then_f))

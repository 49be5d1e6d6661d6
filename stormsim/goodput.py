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
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from ._format import fmt_duration
from .engine.model import Fleet
from .engine.units import time_seconds
from .errors import SpecError
from .stats.daly import daly_goodput, daly_optimum, young_interval
from .stats.stationary import stationary

__all__ = ["BestInterval", "ClassInterval", "best_interval"]

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
    """One class of identical jobs (same T, d, jitter and options): its intervals (s).

    jobs : how many; first_job : the index of the first
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

    mtbf: float
    restart: float
    classes: tuple[ClassInterval, ...]
    fleet_optimum: float = math.nan
    fleet_optimum_goodput: float = math.nan
    fleet_optimum_write: float = math.nan
    notes: tuple[str, ...] = field(default=())

    def table(self) -> str:
        """The classes as text, one line each, then the fleet optimum."""
        head = (f"{'jobs':>5} {'now':>9} {'Young':>9} {'Daly':>9} {'contended':>9} "
                f"{'write':>9} {'goodput now -> contended':>25}")
        lines = [f"Checkpoint interval (compute between checkpoints), MTBF "
                 f"{fmt_duration(self.mtbf)}, restart {fmt_duration(self.restart)}:", head]
        for c in self.classes:
            lines.append(
                f"{c.jobs:>5} {fmt_duration(c.interval):>9} {fmt_duration(c.young):>9} "
                f"{fmt_duration(c.daly):>9} {fmt_duration(c.contended):>9} "
                f"{fmt_duration(c.write_contended):>9} "
                f"{c.goodput_now:>12.4f} -> {c.goodput_contended:.4f}")
        if math.isfinite(self.fleet_optimum):
            lines.append(f"All jobs at one interval: {fmt_duration(self.fleet_optimum)} (write "
                         f"{fmt_duration(self.fleet_optimum_write)}, goodput "
                         f"{self.fleet_optimum_goodput:.4f})")
        return "\n".join(lines + list(self.notes))


def _classes(fleet: Fleet) -> tuple[np.ndarray, np.ndarray]:
    """(first job of each class, class of each job): jobs alike in every per-job value."""
    columns = [fleet.T, fleet.d, fleet.jitter, fleet.snapshot, fleet.slowdown, fleet.weights,
               fleet.is_async.astype(np.float64), (fleet.on_busy == "block").astype(np.float64)]
    _, starts, index = np.unique(np.stack(columns, axis=1), axis=0, return_index=True,
                                 return_inverse=True)
    order = np.argsort(starts)                    # classes in the order of their first job
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return starts[order], rank[index.ravel()]


class _Contention:
    """The law's mean write per class with each class at a given interval."""

    def __init__(self, fleet: Fleet, starts: np.ndarray, index: np.ndarray):
        self.fleet, self.starts, self.index = fleet, starts, index

    def fleet_at(self, intervals: np.ndarray) -> Fleet:
        """The fleet with class c at ``intervals[c]``, its jitter the same share of it."""
        scale = intervals[self.index] / self.fleet.T
        return self.fleet.replace(T=self.fleet.T * scale, jitter=self.fleet.jitter * scale)

    def writes(self, intervals: np.ndarray) -> np.ndarray:
        law = stationary(self.fleet_at(intervals))
        return np.asarray(law.mean_write_duration)[self.starts]


def _goodputs(intervals, writes, mtbf, restart) -> np.ndarray:
    return np.array([daly_goodput(t, w, mtbf, restart) for t, w in zip(intervals, writes)])


def _fixed_point(contention: _Contention, alone: np.ndarray, mtbf: float, restart: float):
    """Every class at Daly's optimum for its contended write, the others as they are.

    Class c's own equation T = daly_optimum(w_c(T)) has one root in
    [daly_optimum(d_c), mtbf): the contended write is at least d_c (f(n) <= n)
    and falls as T grows, and Daly's optimum is below M whatever the write."""
    t = np.array([daly_optimum(d, mtbf, restart) for d in alone])
    for _ in range(MAX_ROUNDS):
        before = t.copy()
        for c in range(t.size):
            def gap(x, c=c):
                trial = t.copy()
                trial[c] = x
                return daly_optimum(contention.writes(trial)[c], mtbf, restart) - x
            lo = daly_optimum(alone[c], mtbf, restart)
            t[c] = lo if gap(lo) <= 0.0 else brentq(gap, lo, mtbf, rtol=INTERVAL_RTOL)
        if np.all(np.abs(t - before) <= INTERVAL_RTOL * t):
            return t
    raise SpecError(f"the classes' best intervals did not settle in {MAX_ROUNDS} rounds; "
                    "give fewer distinct job classes or report the fleet")


def _fleet_optimum(contention: _Contention, daly: float, mtbf: float, restart: float):
    """For identical jobs: the interval maximising Daly's goodput with its own contended write."""
    def loss(log_t):
        t = np.array([math.exp(log_t)])
        return -daly_goodput(t[0], contention.writes(t)[0], mtbf, restart)
    found = minimize_scalar(loss, bounds=(math.log(daly / 4.0), math.log(mtbf)),
                            method="bounded", options={"xatol": INTERVAL_RTOL})
    best = math.exp(found.x)
    return best, -found.fun, float(contention.writes(np.array([best]))[0])


def best_interval(fleet: Fleet, mtbf, restart=0.0) -> BestInterval:
    """The best checkpoint interval for each class of jobs, with and without contention.

    Parameters
    ----------
    fleet : stormsim.Fleet
        A base-model fleet (blocking, equal weights, no writer cap: the law's
        write times), its T the current compute interval between checkpoints.
    mtbf : float or str
        Each job's mean time between failures: seconds, or a time with its unit
        ("24 h"). The same for every job.
    restart : float or str
        The time from a failure until the job computes again (default 0).

    Returns
    -------
    BestInterval
        Per class: Young's interval, Daly's exact optimum with the write time
        alone, Daly's optimum with the fleet's contended write time (a fixed
        point), and Daly's goodput at each; for identical jobs the fleet
        optimum.

    Raises
    ------
    SpecError
        A bad mtbf or restart, or a fleet the stationary law refuses.
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    mtbf = time_seconds("mtbf", mtbf, positive=True)
    restart = time_seconds("restart", restart)
    starts, index = _classes(fleet)
    contention = _Contention(fleet, starts, index)
    now, alone = fleet.T[starts], fleet.d[starts]
    daly = np.array([daly_optimum(d, mtbf, restart) for d in alone])
    contended = _fixed_point(contention, alone, mtbf, restart)
    writes = {name: contention.writes(t) for name, t in
              (("now", now), ("daly", daly), ("contended", contended))}
    counts = np.bincount(index)
    classes = tuple(
        ClassInterval(jobs=int(counts[c]), first_job=int(starts[c]), interval=float(now[c]),
                      write_alone=float(alone[c]), young=young_interval(alone[c], mtbf),
                      daly=float(daly[c]), contended=float(contended[c]),
                      write_contended=float(writes["contended"][c]),
                      goodput_now=float(_goodputs(now, writes["now"], mtbf, restart)[c]),
                      goodput_daly=float(_goodputs(daly, writes["daly"], mtbf, restart)[c]),
                      goodput_contended=float(_goodputs(contended, writes["contended"],
                                                        mtbf, restart)[c]))
        for c in range(starts.size))
    if starts.size == 1:
        best, goodput, write = _fleet_optimum(contention, float(daly[0]), mtbf, restart)
        return BestInterval(mtbf, restart, classes, best, goodput, write)
    return BestInterval(mtbf, restart, classes)

"""A fleet's power draw in the long run, from the exact stationary law (MODEL.md E6).

A job computing at rate r draws ``idle + r (busy - idle)`` watts; writing
(or queued, waiting, snapshotting) it draws ``idle``. Two facts of the base
model give the long-run power exactly, without simulation:

- **the mean, for any base fleet**: job i's compute work per second is its
  mean compute work per cycle times its checkpoint rate (every cycle does
  one compute interval), so its mean draw is
  ``idle_i + (busy_i - idle_i) * mean_compute_i * checkpoint_rate_i``,
  whatever the cap does to its rate;
- **the distribution, where power is a function of n_w**: when every job
  drops by the same watts when it stops computing (equal ``busy - idle``),
  the fleet draws ``sum(idle) + (busy - idle) * min(N - n_w, C)`` with n_w
  writers (the cap C running the N - n_w computers at C / (N - n_w) each),
  so P(power <= x) is a sum of the law's P(n_w = n). With unequal drops the
  power depends on which jobs write, and only the mean is given here.

Ramps (the drop over a window, MODEL.md E6) depend on the fleet's motion in
time, which the law does not hold: they are simulated, and
:func:`ramp_estimate` gives a run's ramp events per day and time share with
their intervals over fleets (:func:`ramp_estimate_of` the same from the
per-fleet arrays a sweep's cell stores), :func:`mean_power` its mean draw
with an interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scipy.stats import chi2

from .._args import check_real
from ..engine.model import check_power
from ..engine.units import SECONDS_PER_DAY
from ..errors import SpecError
from .durations import ratio
from .interval import CONFIDENCE, Interval
from .stationary import StationaryLaw, stationary
from .storms import ratio_of_means

#: Below this many fleets with a ramp event, events per day take Garwood's
#: interval (as the settling's blocks do, stormsim.settling).
FEW_FLEETS = 10

__all__ = ["PowerLaw", "RampEstimate", "mean_power", "power_law", "ramp_estimate",
           "ramp_estimate_of"]

#: Drops (busy - idle) equal to this relative difference count as equal: the
#: rounding of busy - idle from watts given to the last bit (700.1 - 100.1
#: and 800.1 - 200.1 differ by ~1e-16 relative).
EQUAL_DROP_RTOL = 1e-12


@dataclass(frozen=True)
class PowerLaw:
    """The long-run power of a base-model fleet, from :func:`power_law` (watts).

    Attributes
    ----------
    n_jobs : int
        N.
    mean_job : (N,)
        Each job's mean draw (W), exact for every base fleet.
    mean : float
        The fleet's mean draw, the sum of ``mean_job`` (W).
    levels : (N + 1,) or None
        The fleet's draw with n = 0..N writers (W), where power is a function
        of n_w (equal ``busy - idle`` for every job, to
        EQUAL_DROP_RTOL); None otherwise.
    pmf : (N + 1,) or None
        P(n_w = n), the law's, beside ``levels``; None where ``levels`` is.
    """

    n_jobs: int
    mean_job: np.ndarray = field(repr=False)
    mean: float
    levels: np.ndarray | None = field(default=None, repr=False)
    pmf: np.ndarray | None = field(default=None, repr=False)

    def quantile(self, q: float) -> float:
        """The q-quantile of the fleet's draw over time (W): the least x with
        P(power <= x) >= q, 0 < q < 1. SpecError where ``levels`` is None."""
        if self.levels is None:
            raise SpecError("quantile: the fleet's jobs drop by unequal watts when they stop "
                            "computing, so its power is not a function of the number of writers "
                            "and the law gives only its mean; simulate for its distribution")
        if not 0.0 < q < 1.0:
            raise SpecError(f"q = {q!r}: must be a probability strictly between 0 and 1")
        order = np.argsort(self.levels, kind="stable")
        cdf = np.cumsum(self.pmf[order])
        # pmf sums to 1 to rounding: a q above its total falls on the highest level.
        at = min(int(np.searchsorted(cdf, q, side="left")), order.size - 1)
        return float(self.levels[order[at]])


def power_law(fleet, busy_power, idle_power, law: StationaryLaw | None = None) -> PowerLaw:
    """The long-run power of a base-model fleet: its mean, and its distribution
    over time where power is a function of the number of writers.

    Parameters
    ----------
    fleet : stormsim.Fleet
        A base-model fleet (as :func:`stormsim.stationary` takes).
    busy_power, idle_power : float or (N,) array
        Watts per job computing at full rate, and writing (or otherwise
        stopped); ``idle_power <= busy_power``.
    law : StationaryLaw, optional
        ``stationary(fleet)``, when the caller has it already.

    Raises
    ------
    SpecError
        A power negative or not finite, an idle power above its busy power, or
        a fleet the law refuses (see :func:`stormsim.stationary`).
    """
    if law is None:
        law = stationary(fleet)
    elif not isinstance(law, StationaryLaw) or law.n_jobs != fleet.n_jobs:
        raise SpecError(f"law = {law!r}: must be stationary(fleet), the law of this fleet")
    n = law.n_jobs
    busy, idle = check_power(busy_power, idle_power, n)
    if busy is None:
        raise SpecError("busy_power = None: give both powers (W per job)")
    drop = busy - idle
    mean_job = idle + drop * law.mean_compute * law.checkpoint_rate
    if n and np.ptp(drop) <= EQUAL_DROP_RTOL * drop.max():
        computing = np.arange(n, -1, -1, dtype=np.float64)
        levels = idle.sum() + drop[0] * np.minimum(computing, float(fleet.cap))
        pmf = np.array(law.pmf)
    else:
        levels = pmf = None
    return PowerLaw(n_jobs=n, mean_job=mean_job, mean=float(math.fsum(mean_job)),
                    levels=levels, pmf=pmf)


@dataclass(frozen=True)
class RampEstimate:
    """A run's ramps over fleets (MODEL.md E6), from :func:`ramp_estimate`.

    Arrays are (len windows, len thresholds): for window D[a] and threshold
    X[b], ``ramp_events_per_day`` counts the up-crossings of R_D through X (a drop
    of X watts or more within D seconds, once per episode) per day of
    measured time, ``ramp_share`` the time share with R_D >= X; each with its
    ``_lo`` and ``_hi`` at ``confidence`` and its ``method``:

    - "ratio-log": the ratio estimator over fleets (sum over fleets of the
      events, or time, over the sum of their windows), its delta-method
      interval on the log scale with a t quantile
      (``stats.storms.ratio_of_means``, as for storm rates);
    - "garwood": events seen in fewer than FEW_FLEETS fleets: the exact
      Poisson (Garwood) interval of the total count over the total time for
      events per day (the spread over so few fleets says little), the
      ratio-log interval for the share;
    - "zero-bound": no fleet saw one: events per day get the exact Poisson
      (Garwood) upper bound from the total measured time, the share the
      bound ``1 - (1 - confidence) ** (1 / F)`` over F fleets (a fleet's
      share is positive only if it saw an event; stats.tails).
    """

    windows: tuple
    thresholds: tuple
    ramp_events_per_day: np.ndarray = field(repr=False)
    ramp_events_per_day_lo: np.ndarray = field(repr=False)
    ramp_events_per_day_hi: np.ndarray = field(repr=False)
    ramp_share: np.ndarray = field(repr=False)
    ramp_share_lo: np.ndarray = field(repr=False)
    ramp_share_hi: np.ndarray = field(repr=False)
    method: np.ndarray = field(repr=False)
    fleets: int
    confidence: float = CONFIDENCE

    def interval(self, window: float, threshold: float,
                 what: str = "ramp_events_per_day") -> Interval:
        """One cell as an Interval: ``what`` "ramp_events_per_day" or "ramp_share", at
        a window and threshold of the run's ramps."""
        if what not in ("ramp_events_per_day", "ramp_share"):
            raise SpecError(f"what = {what!r}: must be 'ramp_events_per_day' or 'ramp_share'")
        a, b = self._index("window", window, self.windows), \
            self._index("threshold", threshold, self.thresholds)
        method = {"ratio-log": f"ratio over {self.fleets} fleets, delta method on the log scale",
                  "garwood": f"exact Poisson (Garwood) on the total over {self.fleets} fleets",
                  "zero-bound": f"none in {self.fleets} fleets: one-sided upper bound"}[
            self.method[a, b]]
        return Interval(float(getattr(self, what)[a, b]), float(getattr(self, f"{what}_lo")[a, b]),
                        float(getattr(self, f"{what}_hi")[a, b]), method, self.confidence,
                        "1/day" if what == "ramp_events_per_day" else "")

    @staticmethod
    def _index(name: str, x, values: tuple) -> int:
        try:
            return values.index(float(x))
        except (TypeError, ValueError):
            raise SpecError(f"{name} = {x!r}: not one of the run's ramp {name}s "
                            f"{list(values)}") from None


def ramp_estimate(run, confidence: float = CONFIDENCE) -> RampEstimate:
    """Ramp events per day and the time share with R_D >= X over the run's
    fleets, with intervals (:class:`RampEstimate`), from a Run of
    ``simulate(fleet, ramps=(windows, thresholds))`` (seconds as the model's
    time unit, as ``Fleet.from_jobs`` makes them)."""
    check_real("confidence", confidence, 0.0, 1.0, open_lo=True, open_hi=True)
    if getattr(run, "ramp_events", None) is None or run.ramp_events.size == 0:
        raise SpecError("run: no ramps recorded; simulate(fleet, ramps=(windows, thresholds)) "
                        "with a fleet that has power (busy_power, idle_power)")
    return ramp_estimate_of(run.window, run.ramp_events, run.ramp_share, run.ramp_windows,
                            run.ramp_thresholds, confidence)


def ramp_estimate_of(window, ramp_events, ramp_share, windows, thresholds,
                     confidence: float = CONFIDENCE) -> RampEstimate:
    """:func:`ramp_estimate` from per-fleet arrays: ``window`` (fleets,) the
    measured window's length (s), ``ramp_events`` and ``ramp_share`` (fleets,
    len windows, len thresholds) as a Run has them, ``windows`` D (s) and
    ``thresholds`` X (W): the one estimator of ``ramp_estimate(run)`` and of a
    sweep's cells (stormsim.stats.summary)."""
    check_real("confidence", confidence, 0.0, 1.0, open_lo=True, open_hi=True)
    window = np.asarray(window, dtype=np.float64)
    ramp_events, ramp_share = np.asarray(ramp_events), np.asarray(ramp_share)
    fleets = window.size
    if fleets == 0 or ramp_events.size == 0:
        raise SpecError("no ramps recorded: no fleets, or no windows and thresholds")
    events = ramp_events.reshape(fleets, -1).astype(np.float64)
    time = ramp_share.reshape(fleets, -1) * window[:, None]
    den = np.broadcast_to(window[:, None], events.shape)
    shape = ramp_events.shape[1:]
    rate, rate_lo, rate_hi, _ = ratio_of_means(events, den, confidence)
    share, share_lo, share_hi, _ = ratio_of_means(time, den, confidence)
    total = float(window.sum())
    count = events.sum(axis=0)
    seen = (events > 0).sum(axis=0)
    few = (seen > 0) & (seen < FEW_FLEETS)
    alpha = 1.0 - confidence
    rate_lo[few] = chi2.ppf(alpha / 2.0, 2.0 * count[few]) / 2.0 / total
    rate_hi[few] = chi2.ppf(1.0 - alpha / 2.0, 2.0 * count[few] + 2.0) / 2.0 / total
    zero = count == 0
    rate_hi[zero] = chi2.ppf(0.5 + confidence / 2.0, 2) / 2.0 / total
    share_hi[zero] = 1.0 - (1.0 - confidence) ** (1.0 / fleets)
    rate_lo[zero] = share_lo[zero] = rate[zero] = share[zero] = 0.0
    method = np.where(zero, "zero-bound", np.where(few, "garwood", "ratio-log")).reshape(shape)
    day = SECONDS_PER_DAY

    def grid(x):
        return np.asarray(x, dtype=np.float64).reshape(shape)

    return RampEstimate(windows=tuple(float(x) for x in windows),
                        thresholds=tuple(float(x) for x in thresholds),
                        ramp_events_per_day=grid(rate) * day,
                        ramp_events_per_day_lo=grid(rate_lo) * day,
                        ramp_events_per_day_hi=grid(rate_hi) * day, ramp_share=grid(share),
                        ramp_share_lo=grid(share_lo), ramp_share_hi=grid(np.minimum(share_hi, 1.0)),
                        method=method, fleets=fleets, confidence=confidence)


def mean_power(window, power_mean, confidence: float = CONFIDENCE) -> Interval:
    """The fleets' mean draw (W) over their measured windows, with its interval:
    the ratio over fleets of the energy (``power_mean`` x ``window``, per fleet)
    to the time (``stats.durations.ratio``: delta method; NaN ends with fewer
    than 2 fleets). Per-fleet arrays as a Run (or a sweep's cell) has them."""
    window = np.asarray(window, dtype=np.float64)
    return ratio(np.asarray(power_mean, dtype=np.float64) * window, window, confidence, unit="W")

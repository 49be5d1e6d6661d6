"""A run read in physical terms: time per day, storms per day, hours to the
first collision, each with its interval (MODEL.md E3, E4).

Every reader takes a ``Run`` and, where it reads times, the model's time unit
(``time_unit="s"``: fleets from ``Fleet.from_jobs`` are in seconds). Fleets
are independent, so the intervals are over fleets: a ratio estimator's normal
interval for pooled time fractions and rates, Kaplan-Meier with
Brookmeyer-Crowley for median first passages (``stormsim.stats.survival``), and
Clopper-Pearson for proportions. No event gives a bound, never a bare 0.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy.stats import binomtest, chi2

from ..engine.units import SECONDS_PER_DAY, quantity, seconds
from .._args import check_int
from ..errors import SpecError
from .analysis import writer_seconds
from .survival import median_survival, passage_times
from .._deprecated import moved
from .interval import CONFIDENCE, Interval
from .tails import tail_estimate

__all__ = ["Interval", "passage_probability", "storm_duration", "storm_time_per_day",
           "storms_per_day", "time_to_passage", "write_time_per_day"]


def _z() -> float:
    return NormalDist().inv_cdf(0.5 + CONFIDENCE / 2.0)


def _measured(run):
    occ = np.asarray(run.occupancy, dtype=np.float64)
    if run.fleets < 2:
        raise SpecError(f"run has {run.fleets} fleet: an interval needs independent fleets, "
                        "at least 2 (use hundreds)")
    if run.passage_level is not None and np.any(run.passed & (run.end_time == run.passage_time)):
        raise SpecError("this run stopped each fleet at its passage, so its occupancy ends at the "
                        "first collision and undercounts storms: simulate with "
                        "stop_at_passage=False (or no passage_level) for time per day")
    return occ


def _ratio(num: np.ndarray, den: np.ndarray, scale: float, unit: str, what: str,
           clip: bool = True) -> Interval:
    """Pooled ratio sum(num)/sum(den) over independent fleets, times ``scale``.

    Interval: the ratio estimator's normal approximation (delta method) over
    fleets, clipped at 0 (and, for a fraction, ``clip``, at 1).
    """
    n = num.size
    total = float(den.sum())
    r = float(num.sum()) / total
    if r == 0.0:                       # (callers bound their zero cases themselves)
        return Interval(0.0, 0.0, math.inf, f"no {what} in any of {n} fleets", unit=unit)
    resid = num - r * den
    se = math.sqrt(float(np.sum(resid ** 2)) / (n * (n - 1))) / (total / n)
    z = _z()
    hi = min(1.0, r + z * se) if clip else r + z * se
    return Interval(r * scale, max(0.0, r - z * se) * scale, hi * scale,
                    f"{CONFIDENCE:.0%} normal interval of a ratio over {n} independent fleets", unit=unit)


def _level(level, n_jobs: int) -> int:
    return check_int("level", level, 1, n_jobs, what=f"a level k of N = {n_jobs} jobs")


def storm_time_per_day(run, level: int = 2, unit: str = "min") -> Interval:
    """Time per day with at least ``level`` jobs writing at once (default: minutes per day).

    P(n_w >= level) with its interval from ``stormsim.stats.tails`` (the ratio
    estimator over fleets on the logit scale; no fleet reaching the level
    gives a one-sided upper bound), times one day. Independent of the
    model's time unit: it is a time fraction.
    """
    occ = _measured(run)
    level = _level(level, occ.shape[1] - 1)
    est = tail_estimate(occ, confidence=CONFIDENCE)
    per_day = SECONDS_PER_DAY / seconds(unit)
    method = {"ratio-logit": f"{CONFIDENCE:.0%} ratio-estimator interval over {run.fleets} fleets "
                             "(logit scale, stormsim.stats.tails)",
              "zero-bound": f"no fleet of {run.fleets} reached {level} writers: {CONFIDENCE:.0%} "
                            "one-sided upper bound (stormsim.stats.tails)"}.get(
        est.method[level], f"{est.method[level]} (stormsim.stats.tails)")
    return Interval(float(est.p_ge[level]) * per_day, float(est.p_ge_lo[level]) * per_day,
                    float(est.p_ge_hi[level]) * per_day, method, unit=f"{unit}/day")


def _upcrossings(run) -> np.ndarray:
    counts = getattr(run, "upcrossings", None)
    if counts is None:
        raise SpecError("this Run has no storm up-crossings (MODEL.md E3): the engine of this "
                        "stormsim does not count storm episodes yet")
    return np.asarray(counts)


def storms_per_day(run, level: int = 2, time_unit="s") -> Interval:
    """Storms per day: up-crossings of n_w to ``level`` or more (MODEL.md E3) per day.

    The rate pools the up-crossings and the measured time over fleets; its
    interval is the ratio estimator's (normal, over independent fleets). No
    storm in any fleet gives the exact Poisson upper bound (Garwood) on the
    rate from the total measured time.
    """
    occ = _measured(run)
    level = _level(level, occ.shape[1] - 1)
    counts = _upcrossings(run)[:, level].astype(np.float64)
    window = occ.sum(axis=1)
    per_day = SECONDS_PER_DAY / seconds(time_unit, "time_unit")       # model time units per day
    if counts.sum() == 0:

        hi = chi2.ppf(0.5 + CONFIDENCE / 2.0, 2) / 2.0 / float(window.sum()) * per_day
        return Interval(0.0, 0.0, hi, f"no storm in {run.fleets} fleets: exact Poisson (Garwood) "
                        f"{CONFIDENCE:.0%} upper bound from the total measured time", unit="storms/day")
    return _ratio(counts, window, per_day, "storms/day", "storm", clip=False)


def storm_duration(run, level: int = 2, unit: str = "s", time_unit="s") -> Interval:
    """Mean duration of a storm (n_w >= ``level``): time at or above the level per up-crossing."""
    occ = _measured(run)
    level = _level(level, occ.shape[1] - 1)
    counts = _upcrossings(run)[:, level].astype(np.float64)
    if counts.sum() == 0:
        raise SpecError(f"no storm reached level {level} in any of the {run.fleets} fleets: "
                        "no duration to average (storms_per_day bounds their rate)")
    return _ratio(occ[:, level:].sum(axis=1), counts, seconds(time_unit, "time_unit") / seconds(unit),
                  unit, "storm", clip=False)


def write_time_per_day(run, unit: str = "h") -> Interval:
    """Time per day one job spends writing its checkpoints (blocked, for blocking jobs).

    E[n_w] / N of the measured time, times one day. Compare with the lone
    job's share d / (T + d): the excess is what contention costs.
    """
    occ = _measured(run)
    n_jobs = occ.shape[1] - 1
    busy = writer_seconds(occ) / n_jobs
    per_day = SECONDS_PER_DAY / seconds(unit)
    return _ratio(busy, occ.sum(axis=1), per_day, f"{unit}/day per job", "write time")


def time_to_passage(run, unit: str = "h", time_unit="s") -> Interval:
    """Median time to the run's passage (``passage_level = 2``: the first collision).

    Kaplan-Meier over fleets in time, each fleet without a passage censored
    at the end of its run; the interval is Brookmeyer-Crowley's
    (``stormsim.stats.survival``). ``hi = inf`` (or value inf) where the runs are
    too short to bound it: raise ``cycles``. ``time_unit`` is the model's unit
    of time (seconds for fleets from physical units).
    """
    if run.passage_level is None:
        raise SpecError("time_to_passage needs a run with a passage_level (2: the first collision)")
    t, observed = passage_times(run.passage_cycle, run.cycles, run.passage_time, run.end_time)
    med, lo, hi = median_survival(t, observed, confidence=CONFIDENCE)
    k = seconds(time_unit, "time_unit") / seconds(unit)
    censored = int((~observed).sum())
    return Interval(med * k, lo * k, hi * k, f"median, {CONFIDENCE:.0%} Brookmeyer-Crowley interval, "
                    f"Kaplan-Meier over {t.size} fleets, {censored} censored", unit=unit)


def passage_probability(run, within, time_unit="s") -> Interval:
    """P(the run's passage, e.g. the first collision, happens within ``within``).

    ``within`` is a time with its unit ("1 day"). A binomial proportion over
    fleets with the exact (Clopper-Pearson) interval; every fleet must have
    been followed that long or have passed before (else raise ``cycles``).
    """
    if run.passage_level is None:
        raise SpecError("passage_probability needs a run with a passage_level (2: the first collision)")
    horizon = (float(quantity("within", within, "time").to("second").magnitude)
               / seconds(time_unit, "time_unit"))
    if not horizon > 0.0:
        raise SpecError(f"within = {within!r}: must be > 0")
    hit = run.passed & (run.passage_time <= horizon)
    short = ~hit & (run.end_time < horizon)
    if np.any(short):
        raise SpecError(f"{int(short.sum())} of {run.fleets} fleets stopped before within = "
                        f"{within!r} without a passage (the longest ran "
                        f"{float(run.end_time.max()) * seconds(time_unit, 'time_unit') / 3600.0:.3g} h): "
                        "raise cycles so every fleet covers the horizon")

    x, n = int(hit.sum()), int(run.fleets)
    ci = binomtest(x, n).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return Interval(x / n, float(ci.low), float(ci.high),
                    f"{x} of {n} fleets, Clopper-Pearson {CONFIDENCE:.0%}")


#: The name of Interval here in 0.2.0, kept one release.
__getattr__ = moved(__name__, "Estimate", "stormsim.Interval", Interval)

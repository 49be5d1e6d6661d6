"""Kaplan-Meier estimates for right-censored first-passage data.

A fleet that reaches the cycle cap without its passage is *right-censored*:
all we know is that its first passage comes later than the cap. Dropping such
fleets, or counting them as passages at the cap, biases every median and
survival curve towards early passages, most of all where the stagger lasts
long. Everything here takes the censoring into account.

Conventions (the usual ones, e.g. R's ``survival::survfit``):

- At a time with both passages and censorings, the passages come first: a
  fleet censored at t was still at risk at t.
- The survival curve S(t) = P(first passage > t) is a right-continuous step
  function that drops at each distinct passage time.
- Its variance is Greenwood's, and the pointwise 95% band is the log-log one
  (Kalbfleisch and Prentice), which stays inside [0, 1]. Where S = 0 the
  variance is undefined and the band is the uninformative [0, 1].
- The median is the smallest passage time t with S(t) <= 1/2, ``inf`` when
  S never gets there (more than half censored). Its confidence interval
  inverts the band (Brookmeyer and Crowley 1982): it holds the times t at
  which 1/2 is inside the band, so its lower limit is the first t where the
  band's lower edge is <= 1/2 and its upper limit the first t where the
  band's upper edge is; ``inf`` where that never happens.

In a stormsim run, ``passage_cycle == -1`` marks a fleet without a passage
(it ran at least K fleet cycles, so its passage cycle is at least K). A
passage can also be recorded at a cycle >= K (the run stops at the slowest
job's K-th firing, when others have fired more): in cycles, every fleet is
censored at the cap K, those included; :func:`passage_times` turns a run's
arrays into (time, observed).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .._args import check_real
from .._deprecated import renamed
from .._format import fmt_array
from ..errors import SpecError
from .interval import CONFIDENCE

__all__ = ["KaplanMeier", "kaplan_meier", "median_survival", "passage_times",
           "survival_at"]


@dataclass(frozen=True)
class KaplanMeier:
    """A Kaplan-Meier survival curve, one row per distinct passage time.

    Attributes
    ----------
    time : float64 (m,)
        Distinct observed passage times, increasing.
    at_risk : int64 (m,)
        Fleets whose passage or censoring time is >= time.
    events : int64 (m,)
        Passages at exactly that time.
    survival : float64 (m,)
        S(time) = P(first passage > time), just after the drop.
    greenwood : float64 (m,)
        Greenwood's sum, sum d / (n (n - d)) up to time: Var(log S) estimate
        (inf once S = 0).
    lower, upper : float64 (m,)
        Pointwise log-log confidence band for S at ``confidence``; [0, 1]
        (no information) where S = 0.
    n : int
        Number of fleets.
    n_censored : int
        Fleets without a passage.
    confidence : float
        The band's confidence.
    """

    time: np.ndarray
    at_risk: np.ndarray
    events: np.ndarray
    survival: np.ndarray
    greenwood: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n: int
    n_censored: int
    confidence: float

    # the name of 0.2.0, kept one release
    __getattr__ = renamed("KaplanMeier", {"level": "confidence"})

    def __call__(self, t) -> np.ndarray:
        """S(t) for any times t (a step function; S = 1 before the first passage)."""
        return survival_at(self, t)

    @property
    def median(self) -> tuple[float, float, float]:
        """(median, lower, upper) first-passage time; see the module notes."""
        return _median_from_curve(self)


def _old_level(fn: str, confidence: float, level) -> float:
    """``confidence``, or ``level`` (its name of 0.2.0) with a DeprecationWarning."""
    if level is None:
        return confidence
    warnings.warn(f"{fn}(level=...) is now {fn}(confidence=...); the old name goes in the "
                  "next release", DeprecationWarning, stacklevel=3)
    return level


def kaplan_meier(time, observed=None, confidence: float = CONFIDENCE, *,
                 level: float | None = None) -> KaplanMeier:
    """Kaplan-Meier estimate of S(t) = P(T > t) from right-censored data.

    Parameters
    ----------
    time : array (n,)
        Passage time of each fleet, or its censoring time where not observed.
        Finite; any unit (seconds or cycles).
    observed : bool array (n,), optional
        True where the passage was seen, False where censored at ``time``.
        Default: all observed.
    confidence : float in (0, 1)
        The confidence of the pointwise band (``level=``, its name of 0.2.0,
        still works one release, with a DeprecationWarning).
    """
    confidence = _old_level("kaplan_meier", confidence, level)
    if np.asarray(time).dtype.kind not in "iuf":
        raise SpecError(f"time = {fmt_array(time)}: must be a number or an array of numbers "
                        "(passage or censoring times)")
    t = np.asarray(time, dtype=np.float64).ravel()
    if observed is not None and not (np.asarray(observed).dtype.kind == "b" or (
            np.asarray(observed).dtype.kind in "iu" and np.isin(observed, (0, 1)).all())):
        raise SpecError(f"observed = {fmt_array(observed)}: must be an array of bools (True "
                        "where the passage was seen), or None (all seen)")
    obs = np.ones(t.shape, dtype=bool) if observed is None else np.asarray(observed, dtype=bool).ravel()
    if obs.shape != t.shape:
        raise SpecError(f"time has {t.size} values but observed has {obs.size}: lengths must match")
    if not np.all(np.isfinite(t)):
        raise SpecError(f"time = {fmt_array(time)}: time must be finite: give censored fleets "
                        "their censoring time and observed = False")
    check_real("confidence", confidence, 0.0, 1.0, open_lo=True, open_hi=True,
               what="the band's confidence")
    n = int(t.size)
    ev_times, ev_counts = np.unique(t[obs], return_counts=True)
    # at risk at u: fleets with time >= u (censored at u included: events first)
    order = np.sort(t)
    at_risk = n - np.searchsorted(order, ev_times, side="left")
    d = ev_counts.astype(np.int64)
    r = at_risk.astype(np.int64)
    surv = np.cumprod(1.0 - d / r)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(r > d, d / (r * (r - d)).astype(np.float64), np.inf)
    gw = np.cumsum(terms)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    # Where S = 0 (every fleet still at risk passed) Greenwood's variance is
    # undefined (0/0: inf above), and the log-log band cannot be formed: the
    # band there is the uninformative [0, 1], not [0, 0]. A band pinned at 0
    # would make the median's upper limit the last passage time, a finite
    # bound the data do not give; with [0, 1] it is inf unless the band's
    # upper edge reached 1/2 at an earlier passage.
    lower = np.zeros_like(surv)
    upper = np.ones_like(surv)
    pos = surv > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(surv[pos])
        # log(-log S) +- z sqrt(V) / |log S|, mapped back: S ** exp(-+ ...)
        w = z * np.sqrt(gw[pos]) / np.abs(logs)
        lower[pos] = np.exp(logs * np.exp(w))
        upper[pos] = np.exp(logs * np.exp(-w))
    return KaplanMeier(time=ev_times, at_risk=r, events=d, survival=surv, greenwood=gw,
                       lower=lower, upper=upper, n=n, n_censored=int(n - obs.sum()),
                       confidence=float(confidence))


def survival_at(km: KaplanMeier, t) -> np.ndarray:
    """Evaluate the step function S at times t (S = 1 before the first passage)."""
    t = np.asarray(t, dtype=np.float64)
    idx = np.searchsorted(km.time, t, side="right") - 1
    out = np.where(idx >= 0, km.survival[np.clip(idx, 0, None)] if km.time.size else 1.0, 1.0)
    return out


#: S(t) is a running product of (1 - d/n): where it is exactly 1/2 in exact
#: arithmetic, rounding can leave it a few ulps above (e.g. (9/10)(8/9)...(5/6)
#: = 0.5000000000000001), which would move the median one passage later. The
#: relative rounding of a product of n factors is below n * 2.2e-16; 1e-9 covers
#: a million fleets and is far below any difference the data can resolve.
HALF_TOL = 1e-9


def _first_at_or_below(values: np.ndarray, times: np.ndarray, level: float = 0.5) -> float:
    hit = np.nonzero(values <= level + HALF_TOL)[0]
    return float(times[hit[0]]) if hit.size else float("inf")


def _median_from_curve(km: KaplanMeier) -> tuple[float, float, float]:
    return (_first_at_or_below(km.survival, km.time),
            _first_at_or_below(km.lower, km.time),
            _first_at_or_below(km.upper, km.time))


def median_survival(time, observed=None, confidence: float = CONFIDENCE, *,
                    level: float | None = None) -> tuple[float, float, float]:
    """Median first passage and its confidence interval, censoring included.

    Returns (median, lower, upper); each is ``inf`` where the curve (or the
    band edge) never reaches 1/2, i.e. the data cannot bound it: report such
    a value as "> the largest time observed". With no data all three are NaN.
    ``confidence``: the interval's (``level=``, its name of 0.2.0, still works
    one release, with a DeprecationWarning).
    """
    confidence = _old_level("median_survival", confidence, level)
    if np.size(time) == 0:
        return (float("nan"),) * 3
    return _median_from_curve(kaplan_meier(time, observed, confidence))


def passage_times(passage_cycle, cycles: int, passage_time=None, end_time=None):
    """(time, observed) for :func:`kaplan_meier` from a run's passage arrays.

    In cycles (default): every fleet is censored administratively at the cap
    K = ``cycles``. A run stops at its *slowest* job's K-th firing, so the
    other jobs may have fired more than K times by then, and a fleet's
    passage cycle (firings up to the passage, integer-divided by N) can be
    seen at K or later. Only a passage at a cycle below K is seen by *every*
    fleet (each fleet's run reaches N K firings, i.e. fleet cycle K); a
    fleet that passed at cycle >= K, or never, is censored at K. Keeping the
    late passages as events while the fleets without one are censored at K
    would leave only passers at risk after K, and S would fall to 0 there:
    a finite but bogus median. (The curve for t < K does not depend on
    whether such fleets are censored at K - 1 or K: no event is at >= K.)

    In seconds (give ``passage_time`` and ``end_time``): each fleet is
    followed until its run stopped, ``end_time``; a passage is seen iff it
    happened by then, and every passage recorded did (``passage_time <=
    end_time``). So observed fleets are at their passage time and the
    others are censored at their own ``end_time``: the censoring time is the
    actual end of each fleet's observation, which is what Kaplan-Meier needs.
    Unlike cycles there is no common cap to truncate at, and no truncation is
    needed: a fleet with no passage is in the risk set exactly as long as it
    was observed. (A passage at fleet cycle >= K is therefore an event in
    seconds but censored in cycles.)
    """
    pc = np.asarray(passage_cycle)
    if passage_time is None:
        observed = (pc >= 0) & (pc < cycles)
        return np.where(observed, pc, cycles).astype(np.float64), observed
    observed = pc >= 0
    if end_time is None:
        raise ValueError("passage_times in seconds needs end_time for the censored fleets")
    return np.where(observed, passage_time, end_time).astype(np.float64), observed

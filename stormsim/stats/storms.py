"""Storm rates and durations (MODEL.md E3) with intervals from independent units.

A storm at level k is an episode with n_w >= k; the kernel counts its
up-crossings E[k] in the measured window (``Run.upcrossings``). Over
independent units u (fleets, or fixed blocks of fleets in ``occupancy =
"sum"`` mode, the same units as :mod:`stormsim.stats.tails`):

- the storm rate ``nu_k = sum_u E_u[k] / sum_u W_u`` (storms per second of
  measured time, W_u the unit's measured time);
- the mean storm duration ``D_k = sum_u A_u[k] / sum_u E_u[k]`` (s), A_u[k]
  the unit's time at n_w >= k.

Interval methods (at ``confidence``, 95 % by default)
------------------------------------------------
``ratio-log``
    Both are ratio estimators over iid units: the delta-method variance
    ``se^2 = sum_u (num_u - R den_u)^2 / (u (u - 1) mean(den)^2)``, carried
    to the log scale (``se / R``; both are positive) and back, with the
    Student t quantile on min(u, units that saw a storm at k) - 1 degrees of
    freedom, as tails.py does for P(n_w >= k).
``zero-bound``
    No storm at k in any unit: the rate's interval is ``[0, -ln(1 - confidence) /
    sum_u W_u]``, the one-sided upper bound for a Poisson count of zero
    (about 3 / total measured time at 95 %); it holds when storms at so rare
    a level arrive as a Poisson stream (rare episodes do, to first order);
    the duration is NaN (no storm to average).
``none``
    One unit only: NaN interval (no spread to measure).
``not-recorded``
    A result written before storms were counted (no ``upcrossings``): NaN.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import t as student_t

from .analysis import time_at_or_above
from .interval import CONFIDENCE

__all__ = ["STORM_METHODS", "StormEstimate", "ratio_of_means", "storm_estimate"]

#: How each storm interval was made (stored as int8 in the result file's table).
STORM_METHODS = {"ratio-log": 0, "zero-bound": 1, "none": 3, "structural": 4, "not-recorded": 5}


class StormEstimate:
    """Storm rate and mean duration for k = 0..N (index k; k = 0 is NaN).

    Attributes (arrays of length N + 1)
    ----------
    storms : float64, storms (up-crossings) summed over the units
    storms_per_s, storms_per_s_lo, storms_per_s_hi : storms per second of measured time
    storm_duration, storm_duration_lo, storm_duration_hi : mean storm duration (s)
    method : str array, one of STORM_METHODS
    storms_per_s_rel_error : the relative standard error se / storms_per_s
        (NaN where none)
    units, fleets, confidence
    """

    __slots__ = ("storms", "storms_per_s", "storms_per_s_lo", "storms_per_s_hi", "storm_duration",
                 "storm_duration_lo", "storm_duration_hi", "method", "storms_per_s_rel_error",
                 "units", "fleets", "confidence")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return (f"<StormEstimate N={self.storms_per_s.size - 1}, {self.units} units of "
                f"{self.fleets} fleets, confidence {self.confidence}>")


def _ratio_log(num, den, total_num, total_den, reached, confidence):
    """(R, lo, hi, relative se) of sum num / sum den over units (columns: levels)."""

    u = num.shape[0]
    r = total_num / total_den
    d = num - r * den
    se = np.sqrt((d * d).sum(axis=0) / (u * (u - 1))) / (total_den / u)
    df = np.maximum(np.minimum(u, reached) - 1, 1)
    q = student_t.ppf(0.5 + confidence / 2.0, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(r > 0, se / r, np.nan)      # r = 0: a storm at the window's last instant
    return r, r * np.exp(-q * rel), r * np.exp(q * rel), rel


def ratio_of_means(num, den, confidence: float = CONFIDENCE):
    """(R, lo, hi, relative se) of R = sum num / sum den over independent units
    (rows; columns are levels): the delta method on the log scale with a t
    quantile, as for the durations above. E.g. the mean storm duration of a
    splitting estimate, P(n_w >= k) / nu_k over its replicates."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    u = num.shape[0]
    if u < 2:
        nan = np.full(num.shape[1:], np.nan)
        return nan, nan.copy(), nan.copy(), nan.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return _ratio_log(num, den, num.sum(axis=0), den.sum(axis=0), (num > 0).sum(axis=0), confidence)


def storm_estimate(unit_upcrossings, unit_occupancy, fleets: int | None = None,
                   confidence: float = CONFIDENCE, upcrossings_sum=None,
                   occupancy_sum=None) -> StormEstimate:
    """Storm rate and duration for k = 0..N from independent units.

    unit_upcrossings : (units, N + 1) storms counted per unit (E[k]);
    unit_occupancy : (units, N + 1) time (s) with exactly n writers per unit;
    fleets : the fleets those units hold (default: one per unit);
    upcrossings_sum, occupancy_sum : the exact totals (default: the units' sums).
    """
    e = np.asarray(unit_upcrossings, dtype=np.float64)
    occ = np.asarray(unit_occupancy, dtype=np.float64)
    if e.ndim != 2 or e.shape != occ.shape:
        raise ValueError(f"unit_upcrossings {e.shape} and unit_occupancy {occ.shape} must "
                         "both be (units, N + 1)")
    u, width = e.shape
    fleets = u if fleets is None else int(fleets)
    nan = np.full(width, np.nan)
    out = dict(storms_per_s=nan.copy(), storms_per_s_lo=nan.copy(), storms_per_s_hi=nan.copy(),
               storm_duration=nan.copy(), storm_duration_lo=nan.copy(),
               storm_duration_hi=nan.copy(), storms_per_s_rel_error=nan.copy(),
               method=np.full(width, "none", dtype=object), units=u, fleets=fleets,
               confidence=confidence)
    tot_e = e.sum(axis=0) if upcrossings_sum is None else np.asarray(upcrossings_sum, np.float64)
    occ_t = occ.sum(axis=0) if occupancy_sum is None else np.asarray(occupancy_sum, np.float64)
    out["storms"] = tot_e.copy()
    window = float(occ_t.sum())
    if u == 0 or not window > 0:
        return StormEstimate(**out)
    above = time_at_or_above(occ)                              # time at n_w >= k, per unit
    above_t = time_at_or_above(occ_t)
    ks = np.arange(1, width)
    zero = ks[tot_e[1:] <= 0]
    out["storms_per_s"][zero], out["storms_per_s_lo"][zero] = 0.0, 0.0
    out["storms_per_s_hi"][zero] = -math.log1p(-confidence) / window
    out["method"][zero] = "zero-bound"
    some = ks[tot_e[1:] > 0]
    out["storms_per_s"][some] = tot_e[some] / window
    out["storm_duration"][some] = above_t[some] / tot_e[some]
    if u >= 2 and some.size:
        reached = (e[:, some] > 0).sum(axis=0)
        w = occ.sum(axis=1)[:, None]
        r, lo, hi, rel = _ratio_log(e[:, some], np.broadcast_to(w, (u, some.size)),
                                    tot_e[some], window, reached, confidence)
        out["storms_per_s_lo"][some], out["storms_per_s_hi"][some] = lo, hi
        out["storms_per_s_rel_error"][some] = rel
        _, lo, hi, _ = _ratio_log(above[:, some], e[:, some], above_t[some], tot_e[some],
                                  reached, confidence)
        out["storm_duration_lo"][some], out["storm_duration_hi"][some] = lo, hi
        out["method"][some] = "ratio-log"
    return StormEstimate(**out)

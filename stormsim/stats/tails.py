"""Tail probabilities P(n_w >= k) with intervals from independent fleets.

A cell's P(n_w >= k) is the share of its measured time with at least k jobs
writing: over fleets f, R_k = sum_f A_f(k) / sum_f B_f, where A_f(k) is fleet
f's time at n_w >= k and B_f its measured time. Fleets are independent and
identically distributed (fleet j depends on (run_seed, j) alone), so R_k is a
ratio estimator over iid units and its uncertainty comes from the spread of
the units, not from the (strongly correlated) time inside one fleet.

Interval methods (all at ``confidence``, 95 % by default)
----------------------------------------------------
``ratio-logit``
    Where 0 < R_k < 1 and there are u >= 2 units: the delta-method
    (linearisation) variance of a ratio estimator,
    ``se^2 = sum_u (A_u - R B_u)^2 / (u (u - 1) mean(B)^2)``, carried to the
    logit scale (``se / (R (1 - R))``) and back, with the Student t quantile
    on min(u, units that reached k) - 1 degrees of freedom (the spread of a
    rare level is measured by the few units that reached it; on synthetic
    sparse data this keeps the coverage at 94-97 %, tests/store/test_results_data.py).
    The logit keeps the interval inside (0, 1)
    and makes it skewed the way a small probability's is.
``zero-bound``
    Where no fleet reached k (R_k = 0): the one-sided upper bound
    ``1 - (1 - confidence) ** (1 / F)`` over the F fleets (the "rule of three",
    about 3 / F at 95 %), lower end 0. A fleet's share of time at n_w >= k
    is in [0, 1] and positive only if the fleet reached k, so its mean is at
    most P(a fleet reaches k), which F fleets that all missed bound so.
    (It bounds the mean per-fleet share; the ratio estimator weighs fleets by
    their measured time, which differs between fleets by a few per cent at
    most in a run without stops.)
``one-bound``
    Where every fleet spent all its time at n_w >= k (R_k = 1): the mirror
    image, a one-sided lower bound ``(1 - confidence) ** (1 / F)``, upper end 1.
``none``
    One unit only (no spread to measure) and 0 < R_k < 1: NaN interval.

Units are the fleets when the sweep stores each fleet's occupancy
(``occupancy = "fleet"``), and fixed blocks of fleets in ``occupancy =
"sum"`` mode (see :func:`block_ranges`): a block's sums are exact integer sums
(:func:`stormsim.stats.exact_sums.exact_column_sums`), so a block cut between
two units of work adds up to the same bits whichever way it was cut.

Independent baseline
--------------------
Jobs that write independently, job i a fraction p_i of the time, give
n_w ~ Poisson-binomial(p_1..p_N) (:func:`poisson_binomial_sf`). For identical
jobs p_i = p, the measured mean writing fraction, and this is Binomial(N, p).
For jobs that differ, the p_i are not recorded in a result (only the total
occupancy is), so :func:`independent_tail` gives the baseline only where the
per-job fractions are given, and NaN otherwise: Binomial(N, mean p) is not the
independent law of unlike jobs.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.stats import binom
from scipy.stats import t as student_t

from .analysis import time_at_or_above, writing_fraction
from .exact_sums import exact_column_sums
from .interval import CONFIDENCE

__all__ = ["BLOCKS", "TailEstimate", "block_ranges", "block_sums_exact",
           "independent_tail", "monotone_bound", "poisson_binomial_sf", "tail_estimate", "tail_point"]

#: Blocks of fleets per cell whose occupancy sums ``occupancy = "sum"`` keeps:
#: enough units for a t-based interval (31 degrees of freedom put the t
#: quantile within 4 % of the normal one), few enough that a cell's blocks are
#: a small multiple of its total, (BLOCKS, N + 1) floats.
BLOCKS = 32

METHODS = ("ratio-logit", "zero-bound", "one-bound", "none")


def block_ranges(fleets: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, stop) fleet index of each block of a cell with ``fleets`` fleets.

    Blocks are ``ceil(fleets / BLOCKS)`` fleets long (the last may be shorter),
    fixed by fleet index alone: not by how the fleets were cut into units.
    """
    size = max(1, math.ceil(int(fleets) / BLOCKS))
    starts = np.arange(0, int(fleets), size, dtype=np.int64)
    return starts, np.minimum(starts + size, int(fleets))


def block_sums_exact(occupancy, start: int, fleets: int) -> tuple:
    """The exact occupancy sums of fleets [start, start + rows) per block.

    occupancy : float64 (rows, N + 1), fleets start.. of a cell of ``fleets``.
    Returns ((block, (int, ...)), ...): one entry per block the rows touch,
    the sums in units of 2**-1074, so partial sums of one block from two
    units add (as ints) to the block's sum.
    """
    occ = np.asarray(occupancy, dtype=np.float64)
    stop = start + occ.shape[0]
    starts, stops = block_ranges(fleets)
    out = []
    for b, (a, z) in enumerate(zip(starts.tolist(), stops.tolist())):
        lo, hi = max(a, start), min(z, stop)
        if lo < hi:
            out.append((b, tuple(exact_column_sums(occ[lo - start:hi - start]))))
    return tuple(out)


class TailEstimate:
    """P(n_w >= k) for k = 0..N with a ``confidence`` interval (see the module notes).

    Attributes (arrays of length N + 1, index k)
    ----------
    p_ge, p_ge_lo, p_ge_hi : float64, P(n_w >= k) and its interval
    method : str array, one of ``METHODS``
    units, fleets : the independent units used and the fleets they hold
    confidence : the intervals' confidence
    """

    __slots__ = ("p_ge", "p_ge_lo", "p_ge_hi", "method", "units", "fleets", "confidence")

    def __init__(self, p, lo, hi, method, units, fleets, confidence):
        self.p_ge, self.p_ge_lo, self.p_ge_hi, self.method = p, lo, hi, method
        self.units, self.fleets, self.confidence = units, fleets, confidence

    def __repr__(self) -> str:
        return (f"<TailEstimate N={self.p_ge.size - 1}, {self.units} units of {self.fleets} "
                f"fleets, confidence {self.confidence}>")


@functools.lru_cache(maxsize=4096)
def _t_quantile(df: int, confidence: float) -> float:
    """The two-sided ``confidence`` quantile of Student's t on ``df`` degrees of freedom
    (cached: a sweep asks for the same few df in every cell)."""

    return float(student_t.ppf(0.5 + confidence / 2.0, df))


def tail_point(occupancy_sum) -> np.ndarray:
    """P(n_w >= k), k = 0..N, from a cell's total occupancy: ``occ[k:].sum() /
    occ.sum()`` (the estimate stormsim has always printed, to the bit)."""
    occ = np.asarray(occupancy_sum, dtype=np.float64)
    total = occ.sum()
    if not total > 0:
        return np.full(occ.size, np.nan)
    return np.array([occ[k:].sum() / total for k in range(occ.size)])


def tail_estimate(unit_occupancy, fleets: int | None = None, confidence: float = CONFIDENCE,
                  occupancy_sum=None) -> TailEstimate:
    """P(n_w >= k), k = 0..N, from the occupancy of independent units.

    unit_occupancy : float64 (units, N + 1): time (s) with exactly n writers,
        one row per fleet, or per block of fleets.
    fleets : the number of fleets in those units (default: one per unit);
        the zero and one bounds count fleets.
    occupancy_sum : the units' exact total (default: their float sum); the
        point estimate is :func:`tail_point` of it.
    """
    occ = np.asarray(unit_occupancy, dtype=np.float64)
    if occ.ndim != 2:
        raise ValueError(f"unit_occupancy must be (units, N + 1); got shape {occ.shape}")
    u, width = occ.shape
    fleets = u if fleets is None else int(fleets)
    nan = np.full(width, np.nan)
    method = np.full(width, "none", dtype=object)
    if u == 0 or not occ.sum() > 0:
        return TailEstimate(nan, nan.copy(), nan.copy(), method, u, fleets, confidence)
    a = time_at_or_above(occ)                              # time at n_w >= k, per unit
    b = a[:, 0]
    p = tail_point(occ.sum(axis=0) if occupancy_sum is None else occupancy_sum)
    lo, hi = nan.copy(), nan.copy()
    zero, one = p <= 0.0, p >= 1.0
    bound = 1.0 - (1.0 - confidence) ** (1.0 / fleets)
    lo[zero], hi[zero] = 0.0, bound
    lo[one], hi[one] = (1.0 - confidence) ** (1.0 / fleets), 1.0
    method[zero], method[one] = "zero-bound", "one-bound"
    mid = ~(zero | one)
    if u >= 2 and mid.any():
        d = a[:, mid] - p[mid] * b[:, None]
        se = np.sqrt((d * d).sum(axis=0) / (u * (u - 1))) / b.mean()
        # The spread is measured by the units that reached k (the others add
        # only their time): with few of them the variance estimate has few
        # degrees of freedom, so t takes min(u, units reaching k) - 1.
        reached = (a[:, mid] > 0).sum(axis=0)
        df = np.maximum(np.minimum(u, reached) - 1, 1)
        q = np.array([_t_quantile(int(x), confidence) for x in df])
        pm = p[mid]
        w = q * se / (pm * (1.0 - pm))
        logit = np.log(pm / (1.0 - pm))
        lo[mid] = 1.0 / (1.0 + np.exp(-(logit - w)))
        hi[mid] = 1.0 / (1.0 + np.exp(-(logit + w)))
        method[mid] = "ratio-logit"
    return TailEstimate(p, lo, hi, method, u, fleets, confidence)


def monotone_bound(hi, method) -> np.ndarray:
    """The upper bound to show for each P(n_w >= k), k = 0..N: ``hi`` where
    measured; where no fleet reached k (``zero-bound``), the smaller of its
    ``hi`` (1 - 0.05^(1/F), the fleets' bound) and the upper end of the
    interval of the deepest level below k some fleet reached: P(n_w >= k)
    falls with k, so a 95 % upper bound of that larger probability bounds it
    too, at the scale of what was measured, shrinking as fleets are added.
    Each is a one-sided 95 % bound; the smaller of the two holds at >= 90 %
    (Bonferroni). What the tables and figures show; the stored ``p_ge_hi``
    keeps the fleets' bound."""
    hi = np.asarray(hi, dtype=np.float64)
    out = hi.copy()
    last = math.nan                           # upper end of the deepest level reached so far
    for k, m in enumerate(np.asarray(method)):
        if m == "ratio-logit":
            last = hi[k]
        elif m == "zero-bound" and math.isfinite(last):
            out[k] = min(hi[k], last)
    return out


def poisson_binomial_sf(p) -> np.ndarray:
    """P(S >= k), k = 0..N, for S the number of successes of independent
    Bernoulli(p_i) trials (the Poisson-binomial law), by the exact O(N^2)
    recursion on the probability mass (stable: only sums of products in [0, 1])."""
    p = np.asarray(p, dtype=np.float64).ravel()
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("poisson_binomial_sf: every p_i must be in [0, 1]")
    pmf = np.zeros(p.size + 1)
    pmf[0] = 1.0
    for i, pi in enumerate(p):
        pmf[1:i + 2] = pmf[1:i + 2] * (1.0 - pi) + pmf[:i + 1] * pi
        pmf[0] *= 1.0 - pi
    sf = np.cumsum(pmf[::-1])[::-1]
    return np.minimum(sf, 1.0)


def independent_tail(occupancy_sum, alike: bool, job_fractions=None) -> tuple[np.ndarray, str]:
    """The law of P(n_w >= k), k = 0..N, for jobs writing independently with
    the measured writing fractions, and the name of the law used.

    occupancy_sum : float64 (N + 1,) the cell's time with exactly n writers;
    alike : whether the jobs are identical (same T, d, jitter);
    job_fractions : (N,) each job's share of time writing, when recorded.
    Returns (sf, law) with law "poisson-binomial" (per-job fractions given),
    "binomial" (identical jobs: the Poisson-binomial with equal p), or
    "none" (unlike jobs without per-job fractions: NaN).
    """

    occ = np.asarray(occupancy_sum, dtype=np.float64)
    n = occ.size - 1
    if job_fractions is not None:
        return poisson_binomial_sf(job_fractions), "poisson-binomial"
    total = occ.sum()
    if not alike or not total > 0:
        return np.full(n + 1, np.nan), "none"
    pw = float(writing_fraction(occ))
    return binom.sf(np.arange(n + 1) - 1, n, pw), "binomial"

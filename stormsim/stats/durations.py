"""Checkpoint durations and waits with intervals over fleets (MODEL.md E7).

A run's fleets are independent and identically distributed, while the
checkpoints of one fleet are not (a storm lengthens several writes at once).
So every interval here treats the fleet as the unit of sampling:

- the mean (write duration or wait) is the ratio estimator
  sum_f S_f / sum_f N_f (S_f the fleet's sum, N_f its count), with the
  delta-method variance over fleets
  var = sum_f (S_f - m N_f)^2 / (F (F - 1) Nbar^2);
- P(X >= x) is the same ratio on the fleets' exceedance counts, with a
  Wilson score interval at the effective sample size p (1 - p) / var (the
  count of checkpoints deflated by the clustering: Kish's design effect),
  so that it stays inside [0, 1] and is not degenerate for rare exceedances;
- a quantile is read from the pooled histogram (log-linear inside its bin),
  and its interval is a percentile bootstrap over fleets (fleets resampled
  with replacement, a fixed seed), widened to the edges of the bins its ends
  fall in: the histogram resolves nothing finer. A binomial order-statistic
  interval on the pooled histogram would treat checkpoints as independent
  and be too narrow where storms correlate them.

Units: the histograms are kept on d_i (durations) and T_i (waits); the
results are in seconds when every job has the same d (or T), otherwise in
multiples of d_i (T_i), and ``Interval.unit`` says which. Means are always
in seconds (the sums are).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import SpecError
from .._deprecated import moved
from .interval import CONFIDENCE, Interval

#: Bootstrap resamples of the fleets for a quantile's interval, and the seed:
#: fixed, so an interval is a function of the run alone. 1000 resamples put
#: the 2.5 % and 97.5 % points within ~0.5 % (in probability) of their limit.
RESAMPLES = 1000
BOOTSTRAP_SEED = 20260

#: Replicates formed at once (bounds the work space to CHUNK x fleets floats).
_CHUNK = 50

WHAT = ("duration", "wait")


@dataclass(frozen=True)
class Checkpoints:
    """One observable's per-fleet arrays (MODEL.md E7).

    count : int64 (F,); total : float64 (F,) s; hist : int64 (F, B + 2) on
    ``edges`` (B + 1,) in ``unit``, bin 0 below edges[0], bin B + 1 at or
    above edges[B].
    """

    count: np.ndarray
    total: np.ndarray
    hist: np.ndarray
    edges: np.ndarray
    unit: str


def checkpoints(run, what: str = "duration") -> Checkpoints:
    """The arrays of ``run`` for ``what`` ("duration" or "wait"), edges in
    seconds when every job has the same d (wait: T), else relative."""
    if what not in WHAT:
        raise SpecError(f"what = {what!r}: must be one of {', '.join(map(repr, WHAT))}")
    if what == "duration":
        scale, rel, hist, total, edges = (run.fleet.d, "d_i", run.durations_hist,
                                          run.durations_sum, run.duration_edges)
    else:
        scale, rel, hist, total, edges = (run.fleet.T, "T_i", run.wait_hist, run.wait_sum,
                                          run.wait_edges)
    if np.all(scale == scale[0]):
        edges, unit = edges * float(scale[0]), "s"
    else:
        unit = rel
    return Checkpoints(np.asarray(run.durations_count), np.asarray(total, float),
                       np.asarray(hist), np.asarray(edges, float), unit)


def _arrays(data, what) -> Checkpoints:
    c = data if isinstance(data, Checkpoints) else checkpoints(data, what)
    if c.count.shape[0] < 2:
        raise SpecError(f"fleets = {c.count.shape[0]}: intervals over fleets need at least 2")
    if int(c.count.sum()) == 0:
        raise SpecError("no checkpoint ended in the measured window: nothing to estimate")
    return c


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise SpecError(f"confidence = {confidence!r}: must be in (0, 1)")
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2.0))


def _ratio(num: np.ndarray, den: np.ndarray) -> tuple[float, float]:
    """Ratio estimator sum num / sum den over fleets and its delta-method
    standard error (fleets as independent units)."""
    F = den.shape[0]
    r = float(num.sum()) / float(den.sum())
    nbar = float(den.sum()) / F
    resid = num - r * den
    var = float(np.dot(resid, resid)) / (F * (F - 1) * nbar * nbar)
    return r, math.sqrt(var)


def mean(data, what: str = "duration", confidence: float = CONFIDENCE) -> Interval:
    """Mean write duration (or wait) per checkpoint, s, with its interval
    (ratio estimator over fleets, delta method, normal quantile)."""
    c = _arrays(data, what)
    return ratio(c.total, c.count.astype(float), confidence, "s")


def ratio(num, den, confidence: float = CONFIDENCE, unit: str = "") -> Interval:
    """sum num / sum den over fleets (per-fleet sums, fleets as the
    independent units) with its delta-method interval at ``confidence``
    (normal quantile): ``mean``'s estimator, for any per-fleet sums."""
    z = _z(confidence)
    m, se = _ratio(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    return Interval(m, m - z * se, m + z * se, "ratio over fleets, delta method", confidence, unit)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    z2 = z * z / n
    centre = (p + z2 / 2.0) / (1.0 + z2)
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / (1.0 + z2)
    # the score interval holds p; min/max keep rounding from putting an end past it
    # (at p = 0, centre - half is 0 in exact arithmetic and ~1e-22 in floats)
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def exceedance_edge(data, x: float, what: str = "duration") -> float:
    """The threshold ``exceedance`` uses for x: the first histogram edge >= x
    (in the Checkpoints' unit)."""
    c = _arrays(data, what)
    return float(c.edges[_edge_index(c, x)])


def _edge_index(c: Checkpoints, x) -> int:
    """Index of the first edge of c >= x; x checked."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise SpecError(f"x = {x!r}: must be a number (a threshold in {c.unit})") from None
    if not (x >= 0.0) or math.isinf(x):
        raise SpecError(f"x = {x!r}: must be finite and >= 0 ({c.unit})")
    j = int(np.searchsorted(c.edges, x, side="left"))  # first edge >= x
    if j >= c.edges.size:
        raise SpecError(f"x = {x!r}: above the histogram's last edge {c.edges[-1]:.6g} {c.unit}")
    return j


def exceedance(data, x: float, what: str = "duration", confidence: float = CONFIDENCE) -> Interval:
    """P(X >= e) for the first histogram edge e >= x (in the Checkpoints' unit;
    ``exceedance_edge`` gives e): so P(X > x) when x is an edge, else a lower
    bound of it. Ratio over fleets, Wilson interval at the effective sample size."""
    c = _arrays(data, what)
    z = _z(confidence)
    j = _edge_index(c, x)
    n = c.count.astype(float)
    hits = c.hist[:, j + 1:].sum(axis=1).astype(float)  # bins whose lower edge is >= edges[j]
    p, se = _ratio(hits, n)
    total = float(n.sum())
    n_eff = total if se == 0.0 or p in (0.0, 1.0) else min(total, p * (1.0 - p) / (se * se))
    low, high = _wilson(p, n_eff, z)
    return Interval(p, low, high, "ratio over fleets, Wilson at the delta-method effective size",
                    confidence, "probability")


def _bin_quantile(pooled: np.ndarray, q: float) -> tuple[int, float]:
    """(bin, fraction of the way through it) of the q-quantile of a histogram."""
    cum = np.cumsum(pooled)
    target = q * cum[-1]
    b = int(np.searchsorted(cum, target, side="left"))
    below = cum[b - 1] if b > 0 else 0
    frac = (target - below) / pooled[b] if pooled[b] > 0 else 0.0
    return b, float(frac)


def _value(edges: np.ndarray, b: int, frac: float) -> float:
    nb = edges.size - 1
    if b == 0:
        return float(edges[0]) * frac  # underflow: linear from 0
    if b == nb + 1:
        return math.inf
    lo, hi = edges[b - 1], edges[b]
    return float(lo * (hi / lo) ** frac)


def _lower_edge(edges, b) -> float:
    return 0.0 if b == 0 else float(edges[b - 1])


def _upper_edge(edges, b) -> float:
    return math.inf if b == edges.size else float(edges[b])


def quantile(data, q: float = 0.99, what: str = "duration", confidence: float = CONFIDENCE,
             resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval:
    """The q-quantile of write durations (or waits) from the pooled histogram,
    in the Checkpoints' unit, with a bootstrap-over-fleets interval widened to
    bin edges (see the module's docstring)."""
    c = _arrays(data, what)
    if not 0.0 < q < 1.0:
        raise SpecError(f"q = {q!r}: must be in (0, 1)")
    _z(confidence)
    hist = c.hist.astype(float)
    F = hist.shape[0]
    b, frac = _bin_quantile(hist.sum(axis=0), q)
    value = _value(c.edges, b, frac)
    rng = np.random.default_rng(seed)
    bins = np.empty(resamples, dtype=np.int64)
    for lo in range(0, resamples, _CHUNK):
        m = min(_CHUNK, resamples - lo)
        weights = rng.multinomial(F, np.full(F, 1.0 / F), size=m).astype(float)
        for r, pooled in enumerate(weights @ hist):
            bins[lo + r] = _bin_quantile(pooled, q)[0] if pooled.sum() > 0 else b
    alpha = (1.0 - confidence) / 2.0
    b_lo = int(np.quantile(bins, alpha, method="lower"))
    b_hi = int(np.quantile(bins, 1.0 - alpha, method="higher"))
    return Interval(value, _lower_edge(c.edges, min(b_lo, b)), _upper_edge(c.edges, max(b_hi, b)),
                    f"pooled histogram; bootstrap over fleets ({resamples} resamples, seed "
                    f"{seed}), widened to bin edges", confidence, c.unit)


def summary(run, what: str = "duration", confidence: float = CONFIDENCE, q: float = 0.99) -> dict:
    """{"mean": ..., "quantile": ...} Intervals of one observable of a run."""
    return {"mean": mean(run, what, confidence), "quantile": quantile(run, q, what, confidence)}


#: The name of Interval here in 0.2.0, kept one release.
__getattr__ = moved(__name__, "Estimate", "stormsim.Interval", Interval)

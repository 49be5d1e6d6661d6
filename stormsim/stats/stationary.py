"""The exact long-run law of the base model (MODEL.md, "The stationary law").

For blocking checkpoints, anonymous sharing and per-cycle jitter on every job,
the set S of jobs writing has the product-form law

    pi(S) = g(|S|) prod_{i in S} x_i / Z,        x_i = d_i / T_i,
    g(n)  = [n! / prod_{k=1..n} f(k)] [(N-n)! / prod_{k=1..N-n} min(k, C)],

with T_i the mean compute work per cycle, E[max(0, T_i + sigma_i xi)].
:func:`stationary` evaluates it and its consequences (level probabilities,
storm rates and durations, per-job writing shares and checkpoint rates)
without simulation.

Numerics
--------
Every term of every sum is positive, so all is done in log space and nothing
cancels: a level far below 1e-308 is as exact as the mode. Against an
extended-precision recurrence, log P(n_w >= k) was within 8e-12 at N = 2000
(levels down to e^-21900) and 5.5e-11 at N = 10 000 (down to e^-101000, where
one ulp of the log is 1.5e-11). The subset sums are elementary symmetric
polynomials (ESPs) e_n(x), built job by job (e_n <- e_n + x_j e_{n-1}) on x
scaled by its geometric mean and in mean form, log e_n - log C(J, n): each
step is a convex combination of small logs, so rounding does not drift over
10 000 nearly equal jobs. Per-job quantities need leave-one-out sums
sum_m h(m) e_m(x_{-i}): each job's prefix ESPs paired with a suffix adjoint
A_j[a] = sum_b h(a+b) e_b(x_{j..N}) (the reverse mode of the recurrence, all
positive). Jobs of one type (equal d and mean T) enter as one binomial kernel
and share their sums; one type is the closed form e_n = C(N, n) x^n (O(N)).
Otherwise: O(N^2) time (N = 10 000 distinct jobs: 5-10 s) and O(N^1.5)
memory (many types: a prefix kept every ~sqrt(N) jobs, recomputed by block).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from ..engine.units import SECONDS_PER_DAY
from .._deprecated import renamed
from ..errors import SpecError
from .product_form import (compensated_cumsum, esp_sweep, log_binom, log_poisson_binomial,
                           log_sum_exp, log_tail_of)

__all__ = ["DeterministicFleetWarning", "SATURATED_CYCLES", "SATURATED_SHARE", "StationaryLaw",
           "mean_compute_work", "saturated", "stationary"]

#: The Fleet attributes this module reads (duck typing: the module does not
#: import the model, so that it can live in a sub-package of its own).
_FLEET_ATTRIBUTES = ("T", "d", "cap", "f", "jitter", "weights", "is_async", "n_jobs")

class DeterministicFleetWarning(UserWarning):
    """Some job has no jitter (sigma_i = 0): its time averages depend on the
    launch, and the stationary law is at most their average over random launches."""


def mean_compute_work(T, sigma) -> np.ndarray:
    """Mean compute work per cycle E[max(0, T + sigma xi)], xi standard normal (s).

    T, sigma : array_like (N,), compute work (s at full rate) and jitter (s), sigma >= 0.
    Returns float64 (N,): T Phi(T/sigma) + sigma phi(T/sigma); T where sigma <= T / 20
    (the jitter's share is then below 1e-80 relative), sigma = 0 included.
    """
    T = np.asarray(T, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    out = T.copy()
    # Beyond z = T / sigma = Z_NEGLIGIBLE the jitter's share, sigma phi(z) - T Phi(-z) <
    # T phi(z) / z^2, is below 1e-80 of T: the mean is T. Leaving those jobs out also keeps
    # z and z^2 finite (T / sigma overflows for sigma = 1e-10, T = 1e300).
    pos = s > T / _Z_NEGLIGIBLE
    z = T[pos] / s[pos]
    out[pos] = T[pos] * ndtr(z) + s[pos] * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return out


#: mean_compute_work: z above which E[max(0, T + sigma xi)] = T to 1e-80 relative
#: (phi(20) / 20^2 = 1.4e-89).
_Z_NEGLIGIBLE = 20.0


def _log_ratio(a, b) -> np.ndarray:
    """log(a / b), a, b > 0: of the quotient where it is a normal float (exactly 0 for a = b,
    as before), else the difference of the logs: no overflow or underflow for f(n) = 5e-324
    or C = 1e-308 against n ~ 1e4."""
    with np.errstate(over="ignore", under="ignore"):
        q = np.asarray(a, dtype=np.float64) / b
    ok = (q >= np.finfo(np.float64).tiny) & (q < np.inf)
    return np.where(ok, np.log(np.where(ok, q, 1.0)), np.log(a) - np.log(b))


def _plain(log_name: str) -> property:
    """A read-only property exp(self.<log_name>): inf past float64's largest value
    and 0 below its smallest, silently (the log twin stays exact; a storm at a
    saturated level lasts e^15000 s, and that is no error)."""
    def get(self) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            out = np.exp(getattr(self, log_name))
        out.flags.writeable = False
        return out
    return property(get, doc=f"exp({log_name}); see the class docstring.")


@dataclass(frozen=True)
class StationaryLaw:
    """The exact long-run law of a base-model fleet (from :func:`stationary`).

    Levels k = 0..N index the number of writers n_w; jobs i = 0..N-1 follow
    the fleet's order. Time is in seconds (the model's unit, MODEL.md E4).
    Every array is float64 and read-only. The plain arrays underflow to 0 (and
    durations may overflow to inf) where a value leaves float64's range; their
    ``log_`` twins stay exact there (natural logarithms, -inf for a true 0).

    Attributes
    ----------
    n_jobs : int
        N.
    mean_compute : (N,)
        T_i used by the law: the mean compute work E[max(0, T_i + sigma_i xi)] (s).
    log_pmf, pmf : (N + 1,)
        P(n_w = n).
    log_p_ge, p_ge : (N + 1,)
        P(n_w >= k); p_ge[0] = 1.
    log_storms_per_s, storms_per_s : (N + 1,)
        nu_k, up-crossings of n_w into level k (from below k to k) per second;
        nu_0 = 0 by definition (n_w never crosses up into 0), log -inf.
    log_storm_duration, storm_duration : (N + 1,)
        Mean storm duration at level k, P(n_w >= k) / nu_k (s); level 0 never
        ends: inf.
    log_writing_probability, writing_probability : (N,)
        P(job i writing), its long-run share of time in WRITE.
    log_checkpoint_rate, checkpoint_rate : (N,)
        lambda_i, checkpoints (firings) of job i per second.
    log_mean_write_duration, mean_write_duration : (N,)
        P(i writing) / lambda_i: mean time from a firing to its write's end (s).
    log_write_stretch, write_stretch : (N,)
        mean_write_duration_i / d_i: how much contention stretches a write (>= 1
        when f(n) <= n, with 1 meaning "as if alone").
    log_binomial_pmf, binomial_pmf, log_binomial_p_ge, binomial_p_ge : (N + 1,)
        The independent-phase baseline: n_w Poisson-binomial with the law's own
        per-job writing probabilities p_i = writing_probability (same mean
        number of writers, no contention coupling). Exact for ideal f uncapped.
    """

    n_jobs: int
    mean_compute: np.ndarray = field(repr=False)
    log_pmf: np.ndarray = field(repr=False)
    log_p_ge: np.ndarray = field(repr=False)
    log_storms_per_s: np.ndarray = field(repr=False)
    log_storm_duration: np.ndarray = field(repr=False)
    log_writing_probability: np.ndarray = field(repr=False)
    log_checkpoint_rate: np.ndarray = field(repr=False)
    log_mean_write_duration: np.ndarray = field(repr=False)
    log_write_stretch: np.ndarray = field(repr=False)
    log_binomial_pmf: np.ndarray = field(repr=False)
    log_binomial_p_ge: np.ndarray = field(repr=False)

    def __post_init__(self):
        for name in self.__dataclass_fields__:
            if name != "n_jobs":
                value = np.array(getattr(self, name), dtype=np.float64)
                value.flags.writeable = False
                object.__setattr__(self, name, value)

    # The plain values, exp of the logs on access (read-only too, so that no
    # caller mistakes a fresh array for the result's state).
    pmf = _plain("log_pmf")
    p_ge = _plain("log_p_ge")
    storms_per_s = _plain("log_storms_per_s")
    storm_duration = _plain("log_storm_duration")
    writing_probability = _plain("log_writing_probability")
    checkpoint_rate = _plain("log_checkpoint_rate")
    mean_write_duration = _plain("log_mean_write_duration")
    write_stretch = _plain("log_write_stretch")
    binomial_pmf = _plain("log_binomial_pmf")
    binomial_p_ge = _plain("log_binomial_p_ge")

    # the names of 0.2.0, kept one release
    __getattr__ = renamed("StationaryLaw", {
        "tail": "p_ge", "log_tail": "log_p_ge", "storm_rate": "storms_per_s",
        "log_storm_rate": "log_storms_per_s", "binomial_tail": "binomial_p_ge",
        "log_binomial_tail": "log_binomial_p_ge"})

    @property
    def storms_per_day(self) -> np.ndarray:
        """(N + 1,): storms_per_s x 86400, storms per day at each level (T, d in seconds)."""
        with np.errstate(over="ignore"):
            out = self.storms_per_s * SECONDS_PER_DAY
        out.flags.writeable = False
        return out

    @property
    def mean_writers(self) -> float:
        """E[n_w] = sum_i P(i writing)."""
        return float(np.sum(self.writing_probability))


# -- regimes --------------------------------------------------------------------------------------

#: A level k is saturated when k or more jobs write at least this share of the
#: time: the storm is then the fleet's usual state (its median state), and
#: what ends are the calms between storms, not the storms.
SATURATED_SHARE = 0.5
#: ... and a mean storm at k outlasts this many lone cycles (the longest
#: T_i + d_i, a job's compute and write alone): every job checkpoints and
#: computes again inside one storm, so it is no collision of a few writes.
#: Both are needed: at load 0.9, 12 jobs have 2 or more writing 52 % of the
#: time in storms of 0.2 cycle, frequent episodes that their rate describes.
SATURATED_CYCLES = 1.0


def saturated(p_ge, storm_duration, cycle) -> np.ndarray:
    """Whether a level is saturated, "almost never left": P(n_w >= k) >=
    SATURATED_SHARE and mean storm duration >= SATURATED_CYCLES x ``cycle``.

    p_ge, storm_duration : array_like, one entry per level (s; inf allowed).
    cycle : the fleet's longest lone cycle max_i (T_i + d_i) (s).
    Returns bool, the shape of ``p_ge``. There the storm rate counts the rare
    ends of calms and reads as "no storms" (at load 58, 0 storms a day in
    float64, each lasting e^15000 s) where the fabric never stops storming:
    say "saturated" instead. For an estimate, give its lower bounds: the
    verdict then holds at the interval's confidence.
    """
    p = np.asarray(p_ge, dtype=np.float64)
    dur = np.asarray(storm_duration, dtype=np.float64)
    return (p >= SATURATED_SHARE) & (dur >= SATURATED_CYCLES * float(cycle))


# -- refusals -------------------------------------------------------------------------------------

def _check(fleet) -> None:
    missing = [a for a in _FLEET_ATTRIBUTES if not hasattr(fleet, a)]
    if missing:
        raise SpecError(f"fleet = {type(fleet).__name__} object: must be a stormsim.Fleet (it has no "
                        f"{', '.join(missing)}); build one with stormsim.Fleet(T=..., d=..., ...)")
    n = int(fleet.n_jobs)
    if np.any(np.asarray(fleet.is_async)):
        jobs = np.nonzero(np.asarray(fleet.is_async))[0]
        raise SpecError(
            f"fleet has {jobs.size} asynchronous job(s) (checkpoint = 'async', job {int(jobs[0])} "
            "first): the stationary law has no closed form there, since an async job holds both "
            "resources at once (it computes while its persist writes) and the fleet is no longer a "
            "network of two symmetric stations (MODEL.md E1). Estimate it instead with "
            "stormsim.storm_risk or stormsim.simulate (occupancy, upcrossings)")
    if getattr(fleet, "has_failures", False):
        raise SpecError(
            "fleet has failures (mtbf or outage_mtbf finite, MODEL.md E8): the stationary law "
            "does not hold with failures, since a failure removes a writer at a rate in wall "
            "time, not in work, and the fleet is no longer a network of two symmetric stations. "
            "Simulate it instead: stormsim.simulate (goodput, occupancy) or stormsim.storm_risk")
    w = np.asarray(fleet.weights, dtype=np.float64)
    if np.any(w != w[0]):
        raise SpecError(
            f"fleet has unequal weights (from {float(w.min())!r} to {float(w.max())!r}): the "
            "stationary law has no closed form there, since weighted sharing is not a balanced "
            "allocation (MODEL.md E2; Bonald & Proutiere 2003), so the product form fails. "
            "Give equal weights, or estimate it with stormsim.storm_risk or stormsim.simulate")
    # A writer admission cap (MODEL.md E5, ``max_writers``) queues jobs outside
    # both stations: no product form either, so a fleet that sets it below N is
    # refused here rather than answered wrongly.
    k = getattr(fleet, "max_writers", None)
    if k is not None and k < n:
        raise SpecError(
            f"fleet has max_writers = {k!r} < N = {n}: a writer admission cap queues jobs, and the "
            "stationary law has no closed form with a queue (MODEL.md E5). Estimate it with "
            "stormsim.storm_risk or stormsim.simulate")
    sigma = np.asarray(fleet.jitter, dtype=np.float64)
    if np.any(sigma == 0.0):
        zero = np.nonzero(sigma == 0.0)[0]
        warnings.warn(DeterministicFleetWarning(
            f"{zero.size} of {n} jobs have jitter = 0 (job {int(zero[0])} first): without "
            "randomness a fleet's time averages depend on its launch, and this law is at most "
            "their average over random launches; measure the fleet with stormsim.simulate, or give "
            "every job some jitter > 0"), stacklevel=3)


def stationary(fleet) -> StationaryLaw:
    """The exact long-run law of a base-model fleet (MODEL.md, "The stationary law").

    Parameters
    ----------
    fleet : stormsim.Fleet
        Blocking checkpoints and equal weights (the base model), any T_i, d_i,
        throughput f and cap C. Every job should have jitter sigma_i > 0.

    Returns
    -------
    StationaryLaw
        Levels 0..N: probabilities, storm rates and durations; jobs: writing
        probabilities, checkpoint rates, write durations; the Poisson-binomial
        baseline. Times in seconds when T and d are.

    Raises
    ------
    SpecError
        ``fleet`` is not a Fleet; or a job checkpoints asynchronously, weights
        are unequal, or a writer cap is set (no closed form: simulate instead).

    Warns
    -----
    DeterministicFleetWarning
        Some job has jitter 0: the law is then at most the average over random
        launches of the fleet's time averages.

    Notes
    -----
    T_i in x_i = d_i / T_i and in lambda_i is the mean compute work
    E[max(0, T_i + sigma_i xi)] (:func:`mean_compute_work`). The storm rate is
    nu_k = g(k-1) min(1, C/(N-k+1)) G_{k-1} / Z with
    G_n = sum_j (1/T_j) e_n(x_{-j}), the flow balance of MODEL.md.
    """
    _check(fleet)
    n = int(fleet.n_jobs)
    T = mean_compute_work(fleet.T, fleet.jitter)
    d = np.asarray(fleet.d, dtype=np.float64)
    lg, log_rc, lh, rows = _log_weights(np.asarray(fleet.f, dtype=np.float64), float(fleet.cap))
    # Job types: jobs with equal d and mean T have equal x and 1/T, hence equal
    # leave-one-out sums; each type is swept once, with binomial kernels.
    _, first, group, counts = np.unique(np.stack([d, T], axis=1), axis=0, return_index=True,
                                           return_inverse=True, return_counts=True)
    group = group.ravel()
    lx = np.log(d) - np.log(T)
    lE, lG, loo_t = _symmetric_sums(lx, -np.log(T), first, counts, lh)
    loo_t = loo_t[rows]
    log_z = float(log_sum_exp(lg + lE))
    log_pmf = lg + lE - log_z
    log_tail = _log_tail(log_pmf)
    log_nu = np.full(n + 1, -np.inf)
    log_nu[1:] = lg[:-1] + log_rc[::-1] + lG - log_z
    log_dur = np.full(n + 1, np.inf)
    log_dur[1:] = log_tail[1:] - log_nu[1:]
    # Per job Z = L0_i + x_i L1_i (S without i, with i): each job's own Z makes p_i + q_i = 1
    # to rounding; the global Z left ~1e-11 per job, 1e-7 in the baseline's total at N = 1e4.
    lx_t = lx[first]
    log_z_t = np.logaddexp(loo_t[0], lx_t + loo_t[1])
    log_q_t = loo_t[0] - log_z_t
    log_p_t = lx_t + loo_t[1] - log_z_t
    log_bin = log_poisson_binomial(log_p_t, log_q_t, counts)
    log_p = log_p_t[group]
    log_lam = (loo_t[2] - log_z_t)[group] - np.log(T)
    log_wd = log_p - log_lam
    return StationaryLaw(
        n_jobs=n, mean_compute=T, log_pmf=log_pmf, log_p_ge=log_tail, log_storms_per_s=log_nu,
        log_storm_duration=log_dur, log_writing_probability=log_p, log_checkpoint_rate=log_lam,
        log_mean_write_duration=log_wd, log_write_stretch=log_wd - np.log(d),
        log_binomial_pmf=log_bin, log_binomial_p_ge=_log_tail(log_bin))


#: _log_tail: below this P(n_w < k), log P(n_w >= k) is log1p(-P(n_w < k)).
_HEAD_LOG1P = 1e-8


def _log_tail(log_pmf: np.ndarray) -> np.ndarray:
    """log P(n_w >= k), k = 0..N: the sum of the tail from the top down; where
    P(n_w < k) < _HEAD_LOG1P, log1p(-P(n_w < k)) instead. A tail near 1 sums
    to 1 within rounding, and its log, off by an ulp of 1 (up to +7e-13 at
    load 58, a probability above 1), says nothing of how far below 1 it is;
    log1p of the head, a sum of small positive terms, is exact to rounding
    (-2.7e-15 there for P(n_w >= 2) = 1 - 2.7e-15). Elsewhere the tail is the
    sum as ever, digit for digit, but for k = 0: P(n_w >= 0) = 1, log 0."""
    out = log_tail_of(log_pmf)
    log_head = np.logaddexp.accumulate(log_pmf)[:-1]          # log P(n_w < k), k = 1..N
    near = log_head < math.log(_HEAD_LOG1P)
    out[1:][near] = np.log1p(-np.exp(log_head[near]))
    out[0] = 0.0
    return out


def _log_weights(f: np.ndarray, cap: float) -> tuple:
    """(log g(n), n = 0..N; log r_c(m) = log min(1, C/m), m = 1..N; the
    leave-one-out weights' logs h(m), m = 0..N-1, one row per kind needed;
    the rows h0, h1, h2 index into them) for throughput f(0..N) and cap C."""
    n = f.size - 1
    levels = np.arange(n + 1, dtype=np.float64)
    k = levels[1:]
    # log g(n) as sums of log(k / f(k)) and log(k / min(k, C)): exactly 0 for
    # ideal f and an idle cap, so those cases carry no rounding at all.
    cum_f = compensated_cumsum(_log_ratio(k, f[1:]))
    cum_c = compensated_cumsum(_log_ratio(k, np.minimum(k, cap)))
    lg = cum_f + cum_c[::-1]
    log_rc = np.minimum(0.0, _log_ratio(cap, k))        # log r_c(m) = log min(1, C/m), m = 1..N
    # Leave-one-out weights h(m): P(i idle) = sum h0 e_m(x_-i) / Z, P(i writing) =
    # x_i sum h1 e_m / Z, lambda_i = sum h2 e_m / (T_i Z), h2(m) = g(m) r_c(N - m).
    lh = np.stack([lg[:-1], lg[1:], lg[:-1] + log_rc[::-1]])
    rows = [0, 1, 0] if not np.any(log_rc) else [0, 1, 2]    # cap idle: h2 = h0, a row fewer
    return lg, log_rc, lh[:max(rows) + 1], rows


def _symmetric_sums(lx: np.ndarray, ly: np.ndarray, first: np.ndarray, counts: np.ndarray,
                    lh: np.ndarray) -> tuple:
    """(log e_n(x), n = 0..N; log G_m, m = 0..N-1; each job type's leave-one-out
    sums log sum_m h(m) e_m(x_-i), one row per row of lh) from the jobs' log x
    and log 1/T and the job types (their first job, their counts)."""
    n = lx.size
    levels = np.arange(n + 1, dtype=np.float64)
    m = levels[:-1]                                     # m = 0..N-1 others writing
    lx_t, ly_t = lx[first], ly[first]
    if counts.size == 1:
        # Identical jobs, the closed form: e_n = C(N, n) x^n, e_m(x_-i) = C(N-1, m) x^m.
        lx0, ly0 = float(lx_t[0]), float(ly_t[0])
        lE = log_binom(n, levels) + levels * lx0
        lG = math.log(n) + log_binom(n - 1, m) + m * lx0 + ly0
        loo_t = log_sum_exp(lh + m * lx0 + log_binom(n - 1, m))[:, None]
    else:
        # x and 1/T scaled by their geometric means: small logs (rounding is relative
        # to them); the scale returns as n log x0 at the end.
        lx0, ly0 = float(np.mean(lx)), float(np.mean(ly))
        lE_u, lE1, loo_t = esp_sweep(lx_t - lx0, ly_t - ly0, counts, lh + m * lx0)
        lE = lE_u + levels * lx0
        lG = lE1 + m * lx0 + ly0
    return lE, lG, loo_t

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
Every term of every sum is positive, so everything is computed in log space
and nothing cancels: a level far below 1e-308 is as exact as the mode, to a
few units in the last place of its log (against an extended-precision
recurrence: 7e-12 in log P(n_w = k) at N = 2000, levels down to e^-21900;
4.5e-11 at N = 10 000, down to e^-101000, where one ulp of the log is 1.5e-11).

The sums over subsets reduce to elementary symmetric polynomials (ESPs)
e_n(x), built by the recurrence E_j[n] = logaddexp(E_{j-1}[n], log x_j +
E_{j-1}[n-1]) on x scaled by its geometric mean (rounding is relative to the
logs, so they are kept small). Per-job quantities need leave-one-out sums
sum_m h(m) e_m(x_{-i}); they pair each job's prefix ESP with a suffix
"adjoint" A_j[a] = sum_b h(a+b) e_b(x_{j..N}) (the reverse mode of the
recurrence, again all positive). Identical jobs share their leave-one-out
sums (computed once per job type); a fleet of one type uses the closed form
e_n = C(N, n) x^n (O(N)). Otherwise the cost is O(N^2) time (N = 10 000:
~5 s) and O(N^1.5) memory: with many job types the forward sweep keeps a
prefix every ~sqrt(N) jobs and the backward sweep recomputes them block by
block.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln, logsumexp, ndtr

from .errors import SpecError

__all__ = ["DeterministicFleetWarning", "SECONDS_PER_DAY", "StationaryLaw", "mean_compute_work",
           "stationary"]

#: Seconds in a day: the model's time unit is the second when T and d are in
#: seconds (MODEL.md E4), so storms per day = storms per second x this.
SECONDS_PER_DAY = 86400.0

#: The Fleet attributes this module reads (duck typing: the module does not
#: import the model, so that it can live in a sub-package of its own).
_FLEET_ATTRIBUTES = ("T", "d", "cap", "f", "jitter", "weights", "is_async", "n_jobs")

#: Prefixes kept in memory at once by the backward sweep, in units of N
#: floats: with more job types than this the forward sweep keeps a prefix
#: every ~sqrt(N) jobs and each block is recomputed (one more forward sweep).
_MIN_STORED_PREFIXES = 64


class DeterministicFleetWarning(UserWarning):
    """Some job has no jitter (sigma_i = 0): its time averages depend on the
    launch, and the stationary law is at most their average over random launches."""


def mean_compute_work(T, sigma) -> np.ndarray:
    """Mean compute work per cycle, E[max(0, T + sigma xi)], xi standard normal.

    Parameters
    ----------
    T, sigma : array_like, shape (N,)
        Compute work (s at full rate) and its jitter (s), sigma >= 0.

    Returns
    -------
    float64 (N,) : T Phi(T/sigma) + sigma phi(T/sigma) (s); T where sigma = 0.
    It equals T to within 1e-80 relative when sigma <= T / 20.
    """
    T = np.asarray(T, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    out = T.copy()
    pos = s > 0
    z = T[pos] / s[pos]
    out[pos] = T[pos] * ndtr(z) + s[pos] * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return out


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False
    return a


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
    log_tail, tail : (N + 1,)
        P(n_w >= k); tail[0] = 1.
    log_storm_rate, storm_rate : (N + 1,)
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
    log_binomial_pmf, binomial_pmf, log_binomial_tail, binomial_tail : (N + 1,)
        The independent-phase baseline: n_w Poisson-binomial with the law's own
        per-job writing probabilities p_i = writing_probability (same mean
        number of writers, no contention coupling). Exact for ideal f uncapped.
    """

    n_jobs: int
    mean_compute: np.ndarray = field(repr=False)
    log_pmf: np.ndarray = field(repr=False)
    log_tail: np.ndarray = field(repr=False)
    log_storm_rate: np.ndarray = field(repr=False)
    log_storm_duration: np.ndarray = field(repr=False)
    log_writing_probability: np.ndarray = field(repr=False)
    log_checkpoint_rate: np.ndarray = field(repr=False)
    log_mean_write_duration: np.ndarray = field(repr=False)
    log_write_stretch: np.ndarray = field(repr=False)
    log_binomial_pmf: np.ndarray = field(repr=False)
    log_binomial_tail: np.ndarray = field(repr=False)

    def __post_init__(self):
        for name in ("mean_compute", "log_pmf", "log_tail", "log_storm_rate", "log_storm_duration",
                     "log_writing_probability", "log_checkpoint_rate", "log_mean_write_duration",
                     "log_write_stretch", "log_binomial_pmf", "log_binomial_tail"):
            object.__setattr__(self, name, _readonly(getattr(self, name)))

    # The plain values, computed on access (exp of a read-only array is a new
    # array: marked read-only too, so that no caller mistakes it for state).
    def _exp(self, name: str) -> np.ndarray:
        out = np.exp(getattr(self, name))
        out.flags.writeable = False
        return out

    @property
    def pmf(self) -> np.ndarray:
        return self._exp("log_pmf")

    @property
    def tail(self) -> np.ndarray:
        return self._exp("log_tail")

    @property
    def storm_rate(self) -> np.ndarray:
        return self._exp("log_storm_rate")

    @property
    def storm_duration(self) -> np.ndarray:
        return self._exp("log_storm_duration")

    @property
    def writing_probability(self) -> np.ndarray:
        return self._exp("log_writing_probability")

    @property
    def checkpoint_rate(self) -> np.ndarray:
        return self._exp("log_checkpoint_rate")

    @property
    def mean_write_duration(self) -> np.ndarray:
        return self._exp("log_mean_write_duration")

    @property
    def write_stretch(self) -> np.ndarray:
        return self._exp("log_write_stretch")

    @property
    def binomial_pmf(self) -> np.ndarray:
        return self._exp("log_binomial_pmf")

    @property
    def binomial_tail(self) -> np.ndarray:
        return self._exp("log_binomial_tail")

    @property
    def storms_per_day(self) -> np.ndarray:
        """(N + 1,): storm_rate x 86400, storms per day at each level (T, d in seconds)."""
        out = self.storm_rate * SECONDS_PER_DAY
        out.flags.writeable = False
        return out

    @property
    def mean_writers(self) -> float:
        """E[n_w] = sum_i P(i writing)."""
        return float(np.sum(self.writing_probability))


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
    w = np.asarray(fleet.weights, dtype=np.float64)
    if np.any(w != w[0]):
        raise SpecError(
            f"fleet has unequal weights (from {float(w.min())!r} to {float(w.max())!r}): the "
            "stationary law has no closed form there, since weighted sharing is not a balanced "
            "allocation (MODEL.md E2; Bonald & Proutiere 2003), so the product form fails. "
            "Give equal weights, or estimate it with stormsim.storm_risk or stormsim.simulate")
    # A writer admission cap (MODEL.md E5) queues jobs outside both stations:
    # no product form either. The option does not exist yet; when it does,
    # a fleet that sets it below N is refused here rather than answered wrongly.
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


# -- log-space elementary symmetric polynomials ---------------------------------------------------

def _step(P: np.ndarray, lu: float) -> np.ndarray:
    """ESPs of one more job: new[n] = P[n] + u P[n-1] in logs; length + 1."""
    out = np.empty(P.size + 1)
    out[0] = P[0]
    out[-1] = P[-1] + lu
    np.logaddexp(P[1:], P[:-1] + lu, out=out[1:-1])
    return out


def _log_esp(lu: np.ndarray) -> np.ndarray:
    """log e_n(u), n = 0..N, for log u (N,)."""
    P = np.zeros(1)
    for lu_j in lu:
        P = _step(P, float(lu_j))
    return P


def _log_dot(p: np.ndarray, M: np.ndarray) -> np.ndarray:
    """log sum_a exp(p[a] + M[r, a]) per row r, for finite p (n,), M (H, n); M is overwritten.

    scipy's logsumexp validates and copies at each call: at N = 5000 it took
    half the time of the whole law, one call per job type."""
    M += p
    top = M.max(axis=1, keepdims=True)
    M -= top
    np.exp(M, out=M)
    return np.log(M.sum(axis=1)) + top[:, 0]


def _sweep(lu, lv, lh, last):
    """The forward and backward sweeps over jobs in group-contiguous order.

    Parameters
    ----------
    lu : (N,) log u_j (x_j scaled by a common factor)
    lv : (N,) log v_j (the weights of G, scaled by a common factor)
    lh : (H, N) log h'(m), m = 0..N-1: the weight vectors of the leave-one-out sums
    last : bool (N,) jobs whose leave-one-out sums are wanted (one per group)

    Returns
    -------
    lE : (N + 1,) log e_n(u)
    lE1 : (N,) log sum_j v_j e_n(u_{-j}), n = 0..N-1
    loo : (H, N) log sum_m h'(m) e_m(u_{-k}) at the jobs k with last[k] (else nan)
    """
    n = lu.size
    H = lh.shape[0]
    block = math.isqrt(n - 1) + 1          # ceil(sqrt(N)): O(N^1.5) floats held at once
    wanted = int(np.count_nonzero(last))
    # Few job types: hold the prefix each type needs (<= max(block, 64) vectors);
    # many: hold every block-th prefix and recompute a block's during the backward sweep.
    keep_all = wanted <= max(block, _MIN_STORED_PREFIXES)
    needed: dict[int, np.ndarray] = {}
    checkpoints: dict[int, np.ndarray] = {}
    # Forward: prefixes P^(k) = log ESPs of jobs 0..k-1 and the G-sum E1 (the
    # coefficient of s in prod_j (1 + u_j t + v_j s): all terms positive).
    P = np.zeros(1)
    E1 = np.empty(0)
    for k in range(n):
        if keep_all:
            if last[k]:
                needed[k] = P
        elif k % block == 0:
            checkpoints[k] = P
        lu_k = float(lu[k])
        t = np.full(k + 1, -np.inf)
        t[:k] = E1
        if k:
            np.logaddexp(t[1:], E1 + lu_k, out=t[1:])
        E1 = np.logaddexp(t, P + lv[k])
        P = _step(P, lu_k)
    lE = P
    # Backward: the adjoint, normalised by h' so that its logs stay small
    # (hat A^(k)[a] = A^(k)[a] / h'(a), A^(k) over jobs k..N-1; hat A^(N) = 1),
    # paired at each wanted job k with its prefix: sum_a P^(k)[a] h'(a) hat A^(k+1)[a].
    rho = np.diff(lh, axis=1)
    A = np.zeros((H, n))
    loo = np.full((H, n), np.nan)
    blocks = [(0, n)] if keep_all else [(s, min(n, s + block)) for s in range(0, n, block)]
    for s, e in reversed(blocks):
        if not keep_all:
            needed = {}
            P = checkpoints.pop(s)
            for k in range(s, e):
                if last[k]:
                    needed[k] = P
                if k + 1 < e:
                    P = _step(P, float(lu[k]))
        for k in range(e - 1, s - 1, -1):
            if last[k]:
                loo[:, k] = _log_dot(needed.pop(k), lh[:, :k + 1] + A)
            if k:
                A = np.logaddexp(A[:, :k], float(lu[k]) + rho[:, :k] + A[:, 1:k + 1])
    return lE, E1, loo


def _cumsum(terms: np.ndarray) -> np.ndarray:
    """[0, t_1, t_1 + t_2, ...] with compensated (Neumaier) summation.

    log g(n) sums up to N logs to magnitudes ~N log N (1e5 at N = 1e4); a plain
    cumsum's rounding grows with the number of terms (1.3e-10 in the log at
    N = 2000, power f, binding cap), a compensated one stays at ~1 ulp of the sum."""
    out = np.empty(terms.size + 1)
    out[0] = total = comp = 0.0
    for i, t in enumerate(terms.tolist(), 1):
        s = total + t
        comp += (total - s) + t if abs(total) >= abs(t) else (t - s) + total
        total = s
        out[i] = total + comp
    return out


def _log_binom(a: int, b: np.ndarray) -> np.ndarray:
    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def _log_tail(log_pmf: np.ndarray) -> np.ndarray:
    """log P(n >= k) from the top down (each step adds a positive term)."""
    return np.logaddexp.accumulate(log_pmf[::-1])[::-1]


def _poisson_binomial(lp: np.ndarray, lq: np.ndarray, identical: bool) -> np.ndarray:
    """log P(n = k) of a sum of independent Bernoulli(p_i), from log p, log q = log(1 - p)."""
    n = lp.size
    k = np.arange(n + 1, dtype=np.float64)
    if identical:
        return _log_binom(n, k) + k * lp[0] + (n - k) * lq[0]
    lr = lp - lq                         # log odds: P(k) = prod q * e_k(p / q)
    lr0 = float(np.mean(lr))
    return float(np.sum(lq)) + k * lr0 + _log_esp(lr - lr0)


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
        Level probabilities, storm rates and mean durations (levels 0..N),
        per-job writing probabilities, checkpoint rates and write durations
        (jobs 0..N-1), and the independent-phase (Poisson-binomial) baseline;
        times in seconds when T and d are.

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
    G_n = sum_j (1/T_j) e_n(x_{-j}), the flow balance of MODEL.md. Cost: O(N)
    for identical jobs, O(N^2) time and O(N^1.5) memory otherwise.
    """
    _check(fleet)
    n = int(fleet.n_jobs)
    T = mean_compute_work(fleet.T, fleet.jitter)
    d = np.asarray(fleet.d, dtype=np.float64)
    f = np.asarray(fleet.f, dtype=np.float64)
    cap = float(fleet.cap)
    lx = np.log(d) - np.log(T)
    ly = -np.log(T)
    levels = np.arange(n + 1, dtype=np.float64)
    k = levels[1:]
    # log g(n) as sums of log(k / f(k)) and log(k / min(k, C)): exactly 0 for
    # ideal f and an idle cap, so those cases carry no rounding at all.
    cum_f = _cumsum(np.log(k / f[1:]))
    cum_c = _cumsum(np.log(k / np.minimum(k, cap)))
    lg = cum_f + cum_c[::-1]
    log_rc = np.log(np.minimum(1.0, cap / k))          # log r_c(m), m = 1..N
    m = levels[:-1]                                     # m = 0..N-1 others writing
    # Leave-one-out weights h(m): P(i idle) = sum h0 e_m(x_-i) / Z, P(i writing) =
    # x_i sum h1 e_m / Z, lambda_i = sum h2 e_m / (T_i Z), h2(m) = g(m) r_c(N - m).
    lh = np.stack([lg[:-1], lg[1:], lg[:-1] + log_rc[::-1]])
    # With the cap idle (C >= N) h2 is h0: one sweep row fewer (a third of the adjoint's cost).
    rows = [0, 1, 0] if not np.any(log_rc) else [0, 1, 2]
    lh = lh[:max(rows) + 1]

    _, group, counts = np.unique(np.stack([d, T], axis=1), axis=0, return_inverse=True,
                                 return_counts=True)
    group = group.ravel()
    identical = counts.size == 1
    if identical:
        lx0, ly0 = float(lx[0]), float(ly[0])
        lE = _log_binom(n, levels) + levels * lx0
        lG = math.log(n) + _log_binom(n - 1, m) + m * lx0 + ly0
        loo_sorted = logsumexp(lh + m * lx0 + _log_binom(n - 1, m), axis=1)[:, None]
        loo = np.repeat(loo_sorted, n, axis=1)
    else:
        # Scale x and 1/T by their geometric means so that the recurrences' logs
        # stay small (rounding is relative to them); the scale returns exactly
        # as n log x0 at the end.
        lx0, ly0 = float(np.mean(lx)), float(np.mean(ly))
        order = np.argsort(group, kind="stable")
        gs = group[order]
        last = np.ones(n, dtype=bool)
        last[:-1] = gs[:-1] != gs[1:]
        lE_u, lE1, loo_s = _sweep(lx[order] - lx0, ly[order] - ly0, lh + m * lx0, last)
        lE = lE_u + levels * lx0
        lG = lE1 + m * lx0 + ly0
        by_group = np.empty((lh.shape[0], counts.size))
        by_group[:, gs[last]] = loo_s[:, last]
        loo = by_group[:, group]
    loo = loo[rows]
    log_z = float(logsumexp(lg + lE))
    log_pmf = lg + lE - log_z
    log_tail = _log_tail(log_pmf)
    log_nu = np.full(n + 1, -np.inf)
    log_nu[1:] = lg[:-1] + log_rc[::-1] + lG - log_z
    log_dur = np.full(n + 1, np.inf)
    log_dur[1:] = log_tail[1:] - log_nu[1:]
    log_q = loo[0] - log_z
    log_p = lx + loo[1] - log_z
    log_lam = loo[2] - np.log(T) - log_z
    log_wd = log_p - log_lam
    # The baseline's recurrence runs in the law's (sorted) job order, so that
    # the result does not depend on how the fleet lists its jobs.
    sweep_order = slice(None) if identical else order
    log_bin = _poisson_binomial(log_p[sweep_order], log_q[sweep_order], identical)
    return StationaryLaw(
        n_jobs=n, mean_compute=T, log_pmf=log_pmf, log_tail=log_tail, log_storm_rate=log_nu,
        log_storm_duration=log_dur, log_writing_probability=log_p, log_checkpoint_rate=log_lam,
        log_mean_write_duration=log_wd, log_write_stretch=log_wd - np.log(d),
        log_binomial_pmf=log_bin, log_binomial_tail=_log_tail(log_bin))

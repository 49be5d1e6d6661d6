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
from scipy.special import gammaln, ndtr

from .errors import SpecError

__all__ = ["DeterministicFleetWarning", "SECONDS_PER_DAY", "StationaryLaw", "mean_compute_work",
           "stationary"]

#: Seconds in a day: the model's time unit is the second when T and d are in
#: seconds (MODEL.md E4), so storms per day = storms per second x this.
SECONDS_PER_DAY = 86400.0

#: The Fleet attributes this module reads (duck typing: the module does not
#: import the model, so that it can live in a sub-package of its own).
_FLEET_ATTRIBUTES = ("T", "d", "cap", "f", "jitter", "weights", "is_async", "n_jobs")

#: Up to max(this, ceil(sqrt(N))) job types, the forward sweep keeps every
#: type's leave-one-out prefix (that many vectors of <= N + 1 floats); with
#: more it keeps one every ~sqrt(N) jobs and the backward sweep recomputes
#: them block by block (one more forward sweep, O(N^1.5) memory).
_MIN_STORED_PREFIXES = 64


class DeterministicFleetWarning(UserWarning):
    """Some job has no jitter (sigma_i = 0): its time averages depend on the
    launch, and the stationary law is at most their average over random launches."""


def mean_compute_work(T, sigma) -> np.ndarray:
    """Mean compute work per cycle E[max(0, T + sigma xi)], xi standard normal (s).

    T, sigma : array_like (N,), compute work (s at full rate) and jitter (s), sigma >= 0.
    Returns float64 (N,): T Phi(T/sigma) + sigma phi(T/sigma); T where sigma = 0
    (and to within 1e-80 relative when sigma <= T / 20).
    """
    T = np.asarray(T, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    out = T.copy()
    pos = s > 0
    z = T[pos] / s[pos]
    out[pos] = T[pos] * ndtr(z) + s[pos] * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return out


def _plain(log_name: str) -> property:
    """A read-only property exp(self.<log_name>)."""
    def get(self) -> np.ndarray:
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
        for name in self.__dataclass_fields__:
            if name != "n_jobs":
                value = np.array(getattr(self, name), dtype=np.float64)
                value.flags.writeable = False
                object.__setattr__(self, name, value)

    # The plain values, exp of the logs on access (read-only too, so that no
    # caller mistakes a fresh array for the result's state).
    pmf = _plain("log_pmf")
    tail = _plain("log_tail")
    storm_rate = _plain("log_storm_rate")
    storm_duration = _plain("log_storm_duration")
    writing_probability = _plain("log_writing_probability")
    checkpoint_rate = _plain("log_checkpoint_rate")
    mean_write_duration = _plain("log_mean_write_duration")
    write_stretch = _plain("log_write_stretch")
    binomial_pmf = _plain("log_binomial_pmf")
    binomial_tail = _plain("log_binomial_tail")

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

def _lse(M: np.ndarray) -> np.ndarray:
    """log sum exp over the last axis, for arrays whose every row has a finite entry.

    scipy's logsumexp validates and copies at each call: at N = 5000 it took
    half the time of the whole law, one call per job type."""
    top = M.max(axis=-1, keepdims=True)
    M = np.exp(M - top)
    return np.log(M.sum(axis=-1)) + top[..., 0]


def _kernel(c: int, lu: float) -> np.ndarray:
    """log ESPs of c jobs with one value u: log C(c, k) + k log u, k = 0..c."""
    k = np.arange(c + 1, dtype=np.float64)
    return _log_binom(c, k) + k * lu


#: Floats of the largest temporary a grouped step builds (chunks of this size).
_CHUNK = 1 << 21


def _add_group(P: np.ndarray, c: int, lu: float) -> np.ndarray:
    """log ESPs of c >= 2 more jobs with one value u: P convolved with the kernel."""
    a, b = P, _kernel(c, lu)
    if a.size < b.size:                  # slide the shorter one: (len a + len b) x len b terms
        a, b = b, a
    if b.size == 1:
        return a + b[0]
    pad = np.full(b.size - 1, -np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(np.concatenate([pad, a, pad]), b.size)
    out = np.empty(windows.shape[0])
    rows = max(1, _CHUNK // b.size)
    for r in range(0, out.size, rows):
        out[r:r + rows] = _lse(windows[r:r + rows] + b[::-1])
    return out


def _remove_group(A: np.ndarray, c: int, lu: float, lh: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The normalised adjoint one group earlier: hat A[a] <- sum_k B[k] (h'(a+k)/h'(a)) hat A[a+k],
    B the group's kernel; (H, L) -> (H, L - c)."""
    L = A.shape[1]
    if c == 1:
        return np.logaddexp(A[:, :L - 1], lu + rho[:, :L - 1] + A[:, 1:L])
    b = _kernel(c, lu)
    lh_w = np.lib.stride_tricks.sliding_window_view(lh[:, :L], c + 1, axis=1)
    A_w = np.lib.stride_tricks.sliding_window_view(A, c + 1, axis=1)
    out = np.empty((A.shape[0], L - c))
    rows = max(1, _CHUNK // (A.shape[0] * (c + 1)))
    for r in range(0, L - c, rows):
        s = slice(r, min(L - c, r + rows))
        # h'(a+k) - h'(a) as one subtraction of the stored logs: rounded relative
        # to the (small) difference, not to the (large) logs themselves.
        out[:, s] = _lse((lh_w[:, s] - lh[:, s, None]) + (A_w[:, s] + b))
    return out


def _grow(F: np.ndarray, J: int, c: int, lu: float, tab: _Tables) -> np.ndarray:
    """Mean-form log ESPs F[n] = log e_n - log C(J, n) (the mean over n-subsets of prod u)
    of J jobs -> J + c jobs with one value u. Its logs stay small (~n |log u|, not
    log C(N, n) ~ 7000 at N = 1e4), so steps with nearly equal u do not drift."""
    if c == 0:
        return F
    lt = tab.log
    if c == 1:
        out = np.empty(J + 2)
        out[0] = F[0]
        out[-1] = F[-1] + lu
        if J:   # new[n] = ((J+1-n) F[n] + n u F[n-1]) / (J+1), n = 1..J
            np.logaddexp((lt[J:0:-1] - lt[J + 1]) + F[1:], (lt[1:J + 1] - lt[J + 1] + lu) + F[:-1],
                         out=out[1:-1])
        return out
    # c jobs at once: the binomial kernel, convolved unnormalised (one rounding
    # relative to log C per group, not per job).
    return _add_group(F + tab.binom(J), c, lu) - tab.binom(J + c)


def _grow_g(G: np.ndarray, Q: np.ndarray, J: int, c: int, lu: float, lv: float,
            tab: _Tables) -> np.ndarray:
    """The G-sum E1[n] = sum_j v_j e_n(u_{-j}) as G[n] = log E1[n] - log(J C(J-1, n)), of J
    jobs -> J + c of one type (u, v); Q: the mean-form ESPs of the J + c - 1 others."""
    new = J + c
    lt = tab.log
    if c == 1:   # new[n] = ((J-n) G[n] + n u G[n-1] + v Q[n]) / (J+1)
        out = (lv - lt[new]) + Q
        if J:
            t = np.full(new, -np.inf)
            t[:J] = (lt[J:0:-1] - lt[new]) + G
            np.logaddexp(t[1:], (lt[1:new] - lt[new] + lu) + G, out=t[1:])
            np.logaddexp(out, t, out=out)
        return out
    out = math.log(c) + lv + Q + tab.binom(new - 1)
    if J:
        np.logaddexp(out, _add_group(G + lt[J] + tab.binom(J - 1), c, lu), out=out)
    return out - (lt[new] + tab.binom(new - 1))


def _log_esp(lu: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """log e_n(u), n = 0..N, for job types with log u (m,) and counts (m,)."""
    n = int(counts.sum())
    tab = _Tables(n)
    F, J = np.zeros(1), 0
    for lu_t, c in zip(lu.tolist(), counts.tolist()):
        F = _grow(F, J, c, lu_t, tab)
        J += c
    return F + tab.binom(n)


class _Tables:
    """log k and log k! for k = 0..N: a row of log C(J, a) is then two
    subtractions (gammaln itself, three calls per row, cost half the sweep)."""

    def __init__(self, n: int):
        with np.errstate(divide="ignore"):      # log 0 = -inf, never used
            self.log = np.log(np.arange(n + 1.0))
        self.log_factorial = gammaln(np.arange(n + 1.0) + 1.0)

    def binom(self, J: int) -> np.ndarray:
        """log C(J, a), a = 0..J."""
        lf = self.log_factorial
        return lf[J] - lf[:J + 1] - lf[J::-1]


def _sweep(lu, lv, counts, lh):
    """The forward and backward sweeps over m job types: log u_t, log v_t (m,), x and 1/T
    scaled by common factors; counts (m,); lh (H, N) log h'(a), a = 0..N-1, the weights
    of the leave-one-out sums. Returns lE (N + 1,) log e_n(u); lE1 (N,) log sum_j v_j
    e_n(u_{-j}); loo (H, m) log sum_a h'(a) e_a(u_{-j}) for a job j of each type.
    """
    types_ = counts.size
    n = int(counts.sum())
    H = lh.shape[0]
    tab = _Tables(n)
    lu = lu.tolist()
    counts = counts.tolist()
    before = np.concatenate([[0], np.cumsum(counts)]).tolist()    # jobs before each type
    block = math.isqrt(n - 1) + 1          # ceil(sqrt(N)): O(N^1.5) floats held at once
    keep_all = types_ <= max(block, _MIN_STORED_PREFIXES)
    blocks, jobs = [0], 0
    for t, c in enumerate(counts):
        if jobs >= block:
            blocks.append(t)
            jobs = 0
        jobs += c
    blocks = [(s, e) for s, e in zip(blocks, blocks[1:] + [types_])]

    def prefix(Q, t):   # the type's leave-one-out prefix, unnormalised for the pairing
        return Q + tab.binom(before[t + 1] - 1)

    needed: dict[int, np.ndarray] = {}
    checkpoints: dict[int, np.ndarray] = {}
    # Forward: P = normalised ESPs of the types before t; Q = P with c_t - 1 jobs
    # of type t (what any one job of type t sees of the others); G the G-sum, the
    # coefficient of s in prod_j (1 + u_j z + v_j s): all terms positive.
    starts = {s for s, _ in blocks}
    P = np.zeros(1)
    G = np.empty(0)
    for t in range(types_):
        if not keep_all and t in starts:
            checkpoints[t] = P
        c, J = counts[t], before[t]
        Q = _grow(P, J, c - 1, lu[t], tab)
        if keep_all:
            needed[t] = prefix(Q, t)
        G = _grow_g(G, Q, J, c, lu[t], lv[t], tab)
        P = _grow(Q, J + c - 1, 1, lu[t], tab)
    lE = P + tab.binom(n)
    lE1 = G + tab.log[n] + tab.binom(n - 1)
    # Backward: the adjoint over the types after t, normalised by h' so that its
    # logs stay small (hat A[a] = A[a] / h'(a); over no job, hat A = 1), paired
    # with each type's prefix: sum_a Q_t[a] h'(a) hat A[a].
    rho = np.diff(lh, axis=1)
    A = np.zeros((H, n))
    loo = np.empty((H, types_))
    for s, e in reversed(blocks if not keep_all else [(0, types_)]):
        if not keep_all:
            needed = {}
            P = checkpoints.pop(s)
            for t in range(s, e):
                Q = _grow(P, before[t], counts[t] - 1, lu[t], tab)
                needed[t] = prefix(Q, t)
                if t + 1 < e:
                    P = _grow(Q, before[t + 1] - 1, 1, lu[t], tab)
        for t in range(e - 1, s - 1, -1):
            Q = needed.pop(t)
            loo[:, t] = _lse(lh[:, :Q.size] + A + Q)
            if t:
                A = _remove_group(A, counts[t], lu[t], lh, rho)
    return lE, lE1, loo


def _cumsum(terms: np.ndarray) -> np.ndarray:
    """[0, t_1, t_1 + t_2, ...], compensated (Neumaier): log g(n) sums N logs to ~N log N;
    a plain cumsum lost 1.3e-10 in the log at N = 2000, this one ~1 ulp of the sum."""
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


def _log_tail(log_pmf: np.ndarray) -> np.ndarray:    # from the top down: positive terms
    return np.logaddexp.accumulate(log_pmf[::-1])[::-1]


def _poisson_binomial(lp: np.ndarray, lq: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """log P(n = k) of a sum of independent Bernoulli(p): job types with log p,
    log q = log(1 - p) (m,) and counts (m,)."""
    k = np.arange(int(counts.sum()) + 1, dtype=np.float64)
    lr = lp - lq                         # log odds: P(k) = prod q * e_k(p / q)
    lr0 = float(counts @ lr / counts.sum())
    return float(counts @ lq) + k * lr0 + _log_esp(lr - lr0, counts)


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
    rows = [0, 1, 0] if not np.any(log_rc) else [0, 1, 2]    # cap idle: h2 = h0, a row fewer
    lh = lh[:max(rows) + 1]

    # Job types: jobs with equal d and mean T have equal x and 1/T, hence equal
    # leave-one-out sums; each type is swept once, with binomial kernels.
    _, first, group, counts = np.unique(np.stack([d, T], axis=1), axis=0, return_index=True,
                                           return_inverse=True, return_counts=True)
    group = group.ravel()
    lx_t, ly_t = lx[first], ly[first]
    if counts.size == 1:
        # Identical jobs, the closed form: e_n = C(N, n) x^n, e_m(x_-i) = C(N-1, m) x^m.
        lx0, ly0 = float(lx_t[0]), float(ly_t[0])
        lE = _log_binom(n, levels) + levels * lx0
        lG = math.log(n) + _log_binom(n - 1, m) + m * lx0 + ly0
        loo_t = _lse(lh + m * lx0 + _log_binom(n - 1, m))[:, None]
    else:
        # x and 1/T scaled by their geometric means: small logs (rounding is relative
        # to them); the scale returns as n log x0 at the end.
        lx0, ly0 = float(np.mean(lx)), float(np.mean(ly))
        lE_u, lE1, loo_t = _sweep(lx_t - lx0, ly_t - ly0, counts, lh + m * lx0)
        lE = lE_u + levels * lx0
        lG = lE1 + m * lx0 + ly0
    loo_t = loo_t[rows]
    log_z = float(_lse(lg + lE))
    log_pmf = lg + lE - log_z
    log_tail = _log_tail(log_pmf)
    log_nu = np.full(n + 1, -np.inf)
    log_nu[1:] = lg[:-1] + log_rc[::-1] + lG - log_z
    log_dur = np.full(n + 1, np.inf)
    log_dur[1:] = log_tail[1:] - log_nu[1:]
    # Per job Z = L0_i + x_i L1_i (S without i, with i): each job's own Z makes p_i + q_i = 1
    # to rounding; the global Z left ~1e-11 per job, 1e-7 in the baseline's total at N = 1e4.
    log_z_t = np.logaddexp(loo_t[0], lx_t + loo_t[1])
    log_q_t = loo_t[0] - log_z_t
    log_p_t = lx_t + loo_t[1] - log_z_t
    log_bin = _poisson_binomial(log_p_t, log_q_t, counts)
    log_p = log_p_t[group]
    log_lam = (loo_t[2] - log_z_t)[group] - np.log(T)
    log_wd = log_p - log_lam
    return StationaryLaw(
        n_jobs=n, mean_compute=T, log_pmf=log_pmf, log_tail=log_tail, log_storm_rate=log_nu,
        log_storm_duration=log_dur, log_writing_probability=log_p, log_checkpoint_rate=log_lam,
        log_mean_write_duration=log_wd, log_write_stretch=log_wd - np.log(d),
        log_binomial_pmf=log_bin, log_binomial_tail=_log_tail(log_bin))

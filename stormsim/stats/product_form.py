"""Log-space sums of the product form: elementary symmetric polynomials and
their leave-one-out sums, with every term positive (``stats.stationary``).

See ``stats.stationary``'s docstring, "Numerics", for the method and its
measured accuracy.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["compensated_cumsum", "esp_sweep", "log_binom", "log_poisson_binomial", "log_sum_exp",
           "log_tail_of"]

#: Up to max(this, ceil(sqrt(N))) job types, the forward sweep keeps every
#: type's leave-one-out prefix (that many vectors of <= N + 1 floats); with
#: more it keeps one every ~sqrt(N) jobs and the backward sweep recomputes
#: them block by block (one more forward sweep, O(N^1.5) memory).
_MIN_STORED_PREFIXES = 64


def log_sum_exp(M: np.ndarray) -> np.ndarray:
    """log sum exp over the last axis, for arrays whose every row has a finite entry.

    scipy's logsumexp validates and copies at each call: at N = 5000 it took
    half the time of the whole law, one call per job type."""
    top = M.max(axis=-1, keepdims=True)
    M = np.exp(M - top)
    return np.log(M.sum(axis=-1)) + top[..., 0]


def _kernel(c: int, lu: float) -> np.ndarray:
    """log ESPs of c jobs with one value u: log C(c, k) + k log u, k = 0..c."""
    k = np.arange(c + 1, dtype=np.float64)
    return log_binom(c, k) + k * lu


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
        out[r:r + rows] = log_sum_exp(windows[r:r + rows] + b[::-1])
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
        out[:, s] = log_sum_exp((lh_w[:, s] - lh[:, s, None]) + (A_w[:, s] + b))
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


def esp_sweep(lu, lv, counts, lh):
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
            loo[:, t] = log_sum_exp(lh[:, :Q.size] + A + Q)
            if t:
                A = _remove_group(A, counts[t], lu[t], lh, rho)
    return lE, lE1, loo


def compensated_cumsum(terms: np.ndarray) -> np.ndarray:
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


def log_binom(a: int, b: np.ndarray) -> np.ndarray:
    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def log_tail_of(log_pmf: np.ndarray) -> np.ndarray:    # from the top down: positive terms
    return np.logaddexp.accumulate(log_pmf[::-1])[::-1]


def log_poisson_binomial(lp: np.ndarray, lq: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """log P(n = k) of a sum of independent Bernoulli(p): job types with log p,
    log q = log(1 - p) (m,) and counts (m,)."""
    k = np.arange(int(counts.sum()) + 1, dtype=np.float64)
    lr = lp - lq                         # log odds: P(k) = prod q * e_k(p / q)
    lr0 = float(counts @ lr / counts.sum())
    return float(counts @ lq) + k * lr0 + _log_esp(lr - lr0, counts)



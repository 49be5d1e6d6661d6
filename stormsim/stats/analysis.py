"""Observables derived from recorded firing times and occupancy (MODEL.md).

All functions take arrays, fleets on axis 0: firings is (fleets, N, K) as in
``Run.firings``; NaN firings (runs stopped early) propagate as NaN.
"""
from __future__ import annotations

import numpy as np


def phases(firings: np.ndarray) -> np.ndarray:
    """Phases of every job at job 0's firings.

    theta[f, k, i] = (first firing of job i at or after s_k - s_k) / (s_{k+1} - s_k),
    s_k = firings[f, 0, k], for k = 0..K-2; NaN where job i has no recorded
    firing at or after s_k. Job 0's own phase is 0.

    Returns float64 (fleets, K - 1, N).
    """
    firings = np.asarray(firings, dtype=np.float64)
    F, N, K = firings.shape
    if K < 2:
        raise ValueError(f"firings has K = {K} cycles: phases need at least 2")
    s = firings[:, 0, :]                       # (F, K)
    period = s[:, 1:] - s[:, :-1]              # (F, K-1)
    out = np.full((F, K - 1, N), np.nan)
    for f in range(F):
        sk = s[f, :-1]
        for i in range(N):
            times = firings[f, i]
            valid = times[~np.isnan(times)]
            idx = np.searchsorted(valid, sk, side="left")
            ok = idx < valid.size
            nxt = np.full(K - 1, np.nan)
            nxt[ok] = valid[idx[ok]]
            out[f, :, i] = (nxt - sk) / period[f]
    return out


def phase_gap(firings: np.ndarray) -> np.ndarray:
    """Pair phase gap delta_k (N = 2): job 1's phase at job 0's k-th firing.

    Returns float64 (fleets, K - 1).
    """
    if np.shape(firings)[1] != 2:
        raise ValueError(f"phase_gap is defined for N = 2 jobs; firings has N = {np.shape(firings)[1]}")
    return phases(firings)[:, :, 1]


def daido(firings: np.ndarray, orders=(1, 2, 3, 4)) -> np.ndarray:
    """Daido moments Z_m = |mean_i exp(2 pi i m theta_i)| at job 0's firings.

    Returns float64 (len(orders), fleets, K - 1).
    """
    th = phases(firings)
    return np.stack([np.abs(np.exp(2j * np.pi * m * th).mean(axis=2)) for m in orders])


def time_at_or_above(occupancy: np.ndarray) -> np.ndarray:
    """Time with n_w >= k for every k = 0..N along the last axis (the
    occupancy's reversed cumulative sum; [..., 0] is the whole window).

    The one home of this sum: tails, storms, storm risk and splitting read
    P(n_w >= k) as its ratio to [..., 0]."""
    occ = np.asarray(occupancy, dtype=np.float64)
    return np.flip(np.cumsum(np.flip(occ, -1), axis=-1), -1)


def tail_probability(occupancy: np.ndarray, k: int) -> np.ndarray:
    """P(n_w >= k) per fleet: fraction of the measured time with at least k writers."""
    occ = np.asarray(occupancy, dtype=np.float64)
    return occ[..., k:].sum(axis=-1) / occ.sum(axis=-1)


def writer_seconds(occupancy: np.ndarray) -> np.ndarray:
    """sum_n n H[n] along the last axis: the writers' time summed (E[n_w] x the window)."""
    occ = np.asarray(occupancy, dtype=np.float64)
    return (occ * np.arange(occ.shape[-1])).sum(axis=-1)


def writing_fraction(occupancy: np.ndarray) -> np.ndarray:
    """Mean fraction of time one job spends writing: E[n_w] / N, per fleet
    (the one home of this ratio)."""
    occ = np.asarray(occupancy, dtype=np.float64)
    n = occ.shape[-1] - 1
    return writer_seconds(occ) / (n * occ.sum(axis=-1))


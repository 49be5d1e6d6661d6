"""Launches (initial conditions, MODEL.md "Launch") -> phases theta in [0, 1].

A job launched with phase theta starts computing with remaining work
(1 - theta) T_i: theta = 0 is a full interval ahead, theta = 1 fires at t = 0.
"""
from __future__ import annotations

import numpy as np

from ._format import fmt_array
from .errors import SpecError
from .model import Fleet

#: A stagger whose writes would overlap by less than this fraction of T is
#: placed with touching writes: the same 1e-12 relative tie rule as MODEL.md.
STAGGER_RTOL = 1e-12


def stagger_spacing(fleet: Fleet) -> float:
    """Interval s between consecutive first write starts of a stagger launch.

    One writer at a time writes at f(1) = 1, so each write lasts d. Over one
    period N s, a computing job sees the N - 1 other writes (compute rate
    r1 = min(1, C/(N-1))) and N write-free gaps of s - d (rate r0 = min(1, C/N)):
    T = N (s - d) r0 + (N - 1) d r1. Uncapped this is s = (T + d) / N.
    Raises SpecError when no collision-free stagger exists (s < d).
    """
    if not fleet.is_identical:
        raise SpecError(
            f"launch = 'stagger' needs identical jobs (one T, d and jitter); got {fleet!r}. "
            "Give explicit phases theta for heterogeneous jobs")
    n = fleet.n_jobs
    T, d = float(fleet.T[0]), float(fleet.d[0])
    rc = fleet.computer_rate
    r0 = rc[n]
    r1 = rc[n - 1] if n > 1 else 1.0
    spare = T - (n - 1) * d * r1
    # At L = L*(C) exactly, rounding of d = L T / N can leave spare ~ -1e-16 T:
    # treat |spare| within the tie tolerance of MODEL.md as touching writes.
    if -STAGGER_RTOL * T <= spare < 0.0:
        spare = 0.0
    if spare < 0.0:
        lstar = n / (n - 1)
        raise SpecError(
            f"launch = 'stagger' cannot be placed: load L = {fleet.load:.6g} with N = {n}, "
            f"cap = {fleet.cap!r} leaves no room between writes (needs T >= (N-1) d min(1, C/(N-1)); "
            f"uncapped that is L <= L* = N/(N-1) = {lstar:.6g}). Lower the load or bind a cap")
    return d + spare / (n * r0)


def stagger_margin(fleet: Fleet) -> float:
    """m = s - d: the time between the end of one write and the start of the next."""
    return stagger_spacing(fleet) - float(fleet.d[0])


def stagger_theta(fleet: Fleet) -> np.ndarray:
    """Phases whose first write starts are spaced by ``stagger_spacing``.

    Job 0 fires first, at t = m, and job N-1 last, with theta = 0. Job j's
    compute done by its first firing is r0 m + j (d r1 + m r0) (see
    ``stagger_spacing`` for r0, r1), so theta_j = 1 - that / T.
    """
    s = stagger_spacing(fleet)
    n = fleet.n_jobs
    T, d = float(fleet.T[0]), float(fleet.d[0])
    m = s - d
    rc = fleet.computer_rate
    r0 = rc[n]
    r1 = rc[n - 1] if n > 1 else 1.0
    j = np.arange(n, dtype=np.float64)
    theta = 1.0 - (r0 * m + j * (d * r1 + m * r0)) / T
    theta[-1] = 0.0  # exact by construction; remove rounding
    return np.clip(theta, 0.0, 1.0)


def resolve(launch, fleet: Fleet, fleets: int) -> np.ndarray | None:
    """Validate a launch; return theta (N,) or (fleets, N), or None for 'random'."""
    n = fleet.n_jobs
    if isinstance(launch, str):
        if launch == "random":
            return None
        if launch == "sync":
            return np.zeros(n)
        if launch == "stagger":
            return stagger_theta(fleet)
        raise SpecError(f"launch = {launch!r}: must be 'random', 'sync', 'stagger' or phases theta "
                        f"of shape (N,) or (fleets, N)")
    try:
        theta = np.array(launch, dtype=np.float64)
    except (TypeError, ValueError):
        raise SpecError(f"launch = {fmt_array(launch)}: must be 'random', 'sync', 'stagger' or an array "
                        "of phases theta") from None
    if theta.shape not in ((n,), (fleets, n)):
        raise SpecError(f"launch theta has shape {theta.shape}: must be (N,) = ({n},) or "
                        f"(fleets, N) = ({fleets}, {n})")
    bad = ~np.isfinite(theta) | (theta < 0.0) | (theta > 1.0)
    if bad.any():
        idx = tuple(int(x) for x in np.argwhere(bad)[0])
        raise SpecError(f"launch theta{list(idx)} = {float(theta[idx])!r}: phases must be in [0, 1]")
    return theta

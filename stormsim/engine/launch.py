"""Launches (initial conditions, MODEL.md "Launch") -> phases theta in [0, 1].

A job launched with phase theta starts computing with remaining work
(1 - theta) T_i: theta = 0 is a full interval ahead, theta = 1 fires at t = 0.
"""
from __future__ import annotations

import numpy as np

from .._format import fmt_array
from ..errors import SpecError
from .model import Fleet

#: A stagger whose writes would overlap by less than this fraction of T is
#: placed with touching writes: the same 1e-12 relative tie rule as MODEL.md.
STAGGER_RTOL = 1e-12


def stagger_spacing(fleet: Fleet) -> float:
    """Interval s between consecutive first write starts of a stagger launch.

    Blocking jobs: one writer at a time writes at f(1) = 1, so each write
    lasts d. Over one period N s, a computing job sees the N - 1 other writes
    (compute rate r1 = min(1, C/(N-1))) and N write-free gaps of s - d (rate
    r0 = min(1, C/N)): T = N (s - d) r0 + (N - 1) d r1. Uncapped this is
    s = (T + d) / N.

    Async jobs (MODEL.md E1), uncapped only: s is a lone job's cycle over N,
    (snapshot + T + slowdown d) / N, its persist (d at rate 1) overlapping
    compute at rate 1 - slowdown.

    A shortfall below touching writes within the tie tolerance (STAGGER_RTOL
    T) is rounding: s = d. Raises SpecError for a fleet that is not a Fleet or
    whose jobs are not identical, and where no collision-free stagger
    exists: writes or persists that overlap (s < d); for async jobs also a
    cap that can bind (C < N), a persist that outlasts the compute interval
    ((1 - slowdown) d > T), or a first firing that would precede the launch
    ((N - 1) s > T).
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    if not fleet.is_identical:
        raise SpecError(
            f"launch = 'stagger' needs identical jobs (one T, d and jitter); got {fleet!r}. "
            "Give explicit phases theta for heterogeneous jobs")
    if fleet.is_async[0]:
        return _async_spacing(fleet)
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


def _async_spacing(fleet: Fleet) -> float:
    """Stagger spacing of identical async jobs (MODEL.md E1): cycle / N.

    Uncapped, a lone async job fires every s + T + eps d: its persist (d at
    rate 1) overlaps compute at rate 1 - eps, and the checkpoint then falls
    due with no persist in flight as long as (1 - eps) d <= T. Refused where
    that placement is not exact: a cap that can bind (C < N), a persist that
    outlasts the compute interval, overlapping persists (spacing < d), or a
    first firing that would have to precede the launch ((N-1) spacing > T).
    """
    n = fleet.n_jobs
    T, d = float(fleet.T[0]), float(fleet.d[0])
    s, eps = float(fleet.snapshot[0]), float(fleet.slowdown[0])
    if fleet.cap < n:
        raise SpecError(
            f"launch = 'stagger' for async jobs is derived for uncapped fleets only: cap = "
            f"{fleet.cap!r} < N = {n} can bind. Give explicit phases theta, or cap >= N")
    if (1.0 - eps) * d > T * (1.0 + STAGGER_RTOL):
        raise SpecError(
            f"launch = 'stagger' cannot be placed: a lone persist (d = {d!r}) outlasts the "
            f"compute interval (T = {T!r} at rate 1 - slowdown = {1.0 - eps!r}), so jobs wait. "
            "Lower d or raise T")
    spacing = (s + T + eps * d) / n
    margin = spacing - d
    if -STAGGER_RTOL * T <= margin < 0.0:
        spacing = d  # touching persists (rounding at the threshold)
    elif margin < 0.0:
        raise SpecError(
            f"launch = 'stagger' cannot be placed: the persists overlap (d = {d!r} > cycle / N = "
            f"(s + T + slowdown d) / N = {spacing:.6g}, N = {n}). Lower the load")
    if (n - 1) * spacing > T * (1.0 + STAGGER_RTOL):
        raise SpecError(
            f"launch = 'stagger' cannot be placed: the first job would fire (N-1) spacing = "
            f"{(n - 1) * spacing:.6g} before the last, more than one compute interval T = {T!r} "
            "(snapshot + slowdown d too long against T / (N-1)). Give explicit phases theta")
    return spacing


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
    if fleet.is_async[0]:
        # Uncapped, job j first fires at (1 - theta_j) T + snapshot; the last
        # (theta = 0) at T + snapshot, job j (N-1-j) spacings before it.
        theta = (n - 1 - np.arange(n, dtype=np.float64)) * s / T
        return np.clip(theta, 0.0, 1.0)
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

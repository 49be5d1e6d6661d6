"""A fleet's power draw in the long run, from the exact stationary law (MODEL.md E6).

A job computing at rate r draws ``idle + r (busy - idle)`` watts; writing
(or queued, waiting, snapshotting) it draws ``idle``. Two facts of the base
model give the long-run power exactly, without simulation:

- **the mean, for any base fleet**: job i's compute work per second is its
  mean compute work per cycle times its checkpoint rate (every cycle does
  one compute interval), so its mean draw is
  ``idle_i + (busy_i - idle_i) * mean_compute_i * checkpoint_rate_i``,
  whatever the cap does to its rate;
- **the distribution, where power is a function of n_w**: when every job
  drops by the same watts when it stops computing (equal ``busy - idle``),
  the fleet draws ``sum(idle) + (busy - idle) * min(N - n_w, C)`` with n_w
  writers (the cap C running the N - n_w computers at C / (N - n_w) each),
  so P(power <= x) is a sum of the law's P(n_w = n). With unequal drops the
  power depends on which jobs write, and only the mean is given here.

Ramps (the drop over a window, MODEL.md E6) depend on the fleet's motion in
time, which the law does not hold: they are simulated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..engine.model import check_power
from ..errors import SpecError
from .stationary import StationaryLaw, stationary

__all__ = ["PowerLaw", "power_law"]

#: Drops (busy - idle) equal to this relative difference count as equal: the
#: rounding of busy - idle from watts given to the last bit (700.1 - 100.1
#: and 800.1 - 200.1 differ by ~1e-16 relative).
EQUAL_DROP_RTOL = 1e-12


@dataclass(frozen=True)
class PowerLaw:
    """The long-run power of a base-model fleet, from :func:`power_law` (watts).

    Attributes
    ----------
    n_jobs : int
        N.
    mean_job : (N,)
        Each job's mean draw (W), exact for every base fleet.
    mean : float
        The fleet's mean draw, the sum of ``mean_job`` (W).
    levels : (N + 1,) or None
        The fleet's draw with n = 0..N writers (W), where power is a function
        of n_w (equal ``busy - idle`` for every job, to
        EQUAL_DROP_RTOL); None otherwise.
    pmf : (N + 1,) or None
        P(n_w = n), the law's, beside ``levels``; None where ``levels`` is.
    """

    n_jobs: int
    mean_job: np.ndarray = field(repr=False)
    mean: float
    levels: np.ndarray | None = field(default=None, repr=False)
    pmf: np.ndarray | None = field(default=None, repr=False)

    def quantile(self, q: float) -> float:
        """The q-quantile of the fleet's draw over time (W): the least x with
        P(power <= x) >= q, 0 < q < 1. SpecError where ``levels`` is None."""
        if self.levels is None:
            raise SpecError("quantile: the fleet's jobs drop by unequal watts when they stop "
                            "computing, so its power is not a function of the number of writers "
                            "and the law gives only its mean; simulate for its distribution")
        if not 0.0 < q < 1.0:
            raise SpecError(f"q = {q!r}: must be a probability strictly between 0 and 1")
        order = np.argsort(self.levels, kind="stable")
        cdf = np.cumsum(self.pmf[order])
        # pmf sums to 1 to rounding: a q above its total falls on the highest level.
        at = min(int(np.searchsorted(cdf, q, side="left")), order.size - 1)
        return float(self.levels[order[at]])


def power_law(fleet, busy_power, idle_power, law: StationaryLaw | None = None) -> PowerLaw:
    """The long-run power of a base-model fleet: its mean, and its distribution
    over time where power is a function of the number of writers.

    Parameters
    ----------
    fleet : stormsim.Fleet
        A base-model fleet (as :func:`stormsim.stationary` takes).
    busy_power, idle_power : float or (N,) array
        Watts per job computing at full rate, and writing (or otherwise
        stopped); ``idle_power <= busy_power``.
    law : StationaryLaw, optional
        ``stationary(fleet)``, when the caller has it already.

    Raises
    ------
    SpecError
        A power negative or not finite, an idle power above its busy power, or
        a fleet the law refuses (see :func:`stormsim.stationary`).
    """
    if law is None:
        law = stationary(fleet)
    elif not isinstance(law, StationaryLaw) or law.n_jobs != fleet.n_jobs:
        raise SpecError(f"law = {law!r}: must be stationary(fleet), the law of this fleet")
    n = law.n_jobs
    busy, idle = check_power(busy_power, idle_power, n)
    if busy is None:
        raise SpecError("busy_power = None: give both powers (W per job)")
    drop = busy - idle
    mean_job = idle + drop * law.mean_compute * law.checkpoint_rate
    if n and np.ptp(drop) <= EQUAL_DROP_RTOL * drop.max():
        computing = np.arange(n, -1, -1, dtype=np.float64)
        levels = idle.sum() + drop[0] * np.minimum(computing, float(fleet.cap))
        pmf = np.array(law.pmf)
    else:
        levels = pmf = None
    return PowerLaw(n_jobs=n, mean_job=mean_job, mean=float(math.fsum(mean_job)),
                    levels=levels, pmf=pmf)

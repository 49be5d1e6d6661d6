"""``Interval``: every estimate shown to a user, a number with its interval.

One type for every interval the package reports outside its arrays: a
checkpoint's mean, p99 and watchdog share (``stormsim.stats.durations``), a
run read in physical terms (``stormsim.stats.physical``), the operator's plan
(``stormsim.fleetplan``). Its ends are ``lo`` and ``hi`` at ``confidence``,
the names the arrays and files use for their ``_lo`` and ``_hi`` columns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np

from .._args import check_real
from .._deprecated import renamed
from ..errors import SpecError

__all__ = ["CONFIDENCE", "Interval"]

#: The two-sided confidence of every interval the package makes.
CONFIDENCE = 0.95

@dataclass(frozen=True)
class Interval:
    """A number and its interval: ``value`` in [``lo``, ``hi``] at ``confidence``.

    Attributes
    ----------
    value : float
        The estimate (NaN: none).
    lo, hi : float
        The interval's ends in the same unit; ``hi = inf`` where the data give
        no upper bound. Where nothing was observed (no storm, no fleet at the
        level) ``value`` and ``lo`` are 0 and ``hi`` is a one-sided bound.
    method : str
        How the interval was made (and, for a bound, what bound holds).
    confidence : float
        Its two-sided confidence (``CONFIDENCE``).
    unit : str
        The unit of value, lo and hi ("s", "storms/day", "d_i", "" for a
        probability or share).

    Raises
    ------
    SpecError
        A value, lo or hi that is not a number, a method or unit that is not
        text, a confidence outside (0, 1), or ends that do not hold the value
        (``lo <= value <= hi`` among the numbers that are not NaN).
    """

    value: float
    lo: float
    hi: float
    method: str
    confidence: float = CONFIDENCE
    unit: str = ""

    def __post_init__(self):
        for name in ("value", "lo", "hi"):
            x = getattr(self, name)
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, Real):
                raise SpecError(f"{name} = {x!r}: must be a number (NaN: none, inf: no bound)")
            object.__setattr__(self, name, float(x))
        for name in ("method", "unit"):
            if not isinstance(getattr(self, name), str):
                raise SpecError(f"{name} = {getattr(self, name)!r}: must be text")
        check_real("confidence", self.confidence, 0.0, 1.0, open_lo=True, open_hi=True)
        known = [x for x in (self.lo, self.value, self.hi) if not math.isnan(x)]
        if known != sorted(known):
            raise SpecError(f"lo = {self.lo!r}, hi = {self.hi!r}: the ends must hold the "
                            f"value {self.value!r} (lo <= value <= hi)")

    # the names of the two classes it replaces, kept one release
    __getattr__ = renamed("Interval", {"low": "lo", "lower": "lo", "high": "hi", "upper": "hi",
                                       "level": "confidence"})

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.value:.3g}{unit} [{self.lo:.3g}, {self.hi:.3g}] ({self.method})"

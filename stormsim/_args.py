"""Argument checks shared by every public function: one rule, one message.

Each check takes the argument's name (as the caller spells it) and the
value, returns the normalized value, or raises :class:`SpecError` saying
what was given and what is required.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from .errors import SpecError


def check_int(name: str, value, lo: int, hi: int | None = None, what: str = "") -> int:
    """An integer in lo..hi (hi None: no upper bound); bools are refused
    (True is not a count). ``what`` says what the number counts, for the message."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise SpecError(f"{name} = {value!r}: must be an integer" + (f" ({what})" if what else ""))
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise SpecError(f"{name} = {value!r}: must be an integer {rng}"
                        + (f" ({what})" if what else ""))
    return value


def check_flag(name: str, value) -> bool:
    """A flag -> a Python bool (one kernel signature); 'yes', 1 or None are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(f"{name} = {value!r}: must be True or False")
    return bool(value)

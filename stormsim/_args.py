"""Argument checks shared by every public function: one rule, one message.

Each check takes the argument's name (as the caller spells it) and the
value, returns the normalized value, or raises :class:`SpecError` saying
what was given and what is required.
"""
from __future__ import annotations

import functools
import math
import os
from numbers import Integral, Real
from typing import Callable, TypeVar, cast

import numpy as np

from .errors import SpecError

_F = TypeVar("_F", bound=Callable)


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


def check_real(name: str, value, lo: float | None = None, hi: float | None = None, *,
               open_lo: bool = False, open_hi: bool = False, what: str = "") -> float:
    """A finite real number in [lo, hi] (an end None: unbounded; open_lo /
    open_hi: that end excluded) -> float; bools, strings, NaN and inf are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        ok = False
    else:
        value = float(value)
        ok = math.isfinite(value) and (lo is None or (value > lo if open_lo else value >= lo)) \
            and (hi is None or (value < hi if open_hi else value <= hi))
    if not ok:
        if lo is not None and hi is not None:
            rng = f"in {'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        else:
            rng = "" if lo is None and hi is None else (
                (f"> {lo:g}" if open_lo else f">= {lo:g}") if hi is None
                else (f"< {hi:g}" if open_hi else f"<= {hi:g}"))
        rule = rng if rng.startswith("in ") else "a finite number" + (f" {rng}" if rng else "")
        raise SpecError(f"{name} = {value!r}: must be {rule}" + (f" ({what})" if what else ""))
    return value


def check_levels(name: str, levels, n: int) -> np.ndarray:
    """Storm levels k: an integer or a sequence of distinct integers in 1..n ->
    sorted int64 (n, the fleet's N); "3", 2.5 or True are refused, not rounded."""
    if isinstance(levels, (str, bytes, dict, set)):
        raise SpecError(f"{name} = {levels!r}: must be an integer level k in 1..N = {n} or a "
                        "sequence of them")
    ks = np.atleast_1d(np.asarray(levels, dtype=object))
    if ks.ndim != 1 or ks.size == 0:
        raise SpecError(f"{name} = {levels!r}: give at least one level k in 1..N = {n} "
                        "(an integer or a flat sequence of them)")
    out = []
    for k in ks.tolist():
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= int(k) <= n:
            raise SpecError(f"{name} = {levels!r}: {k!r} is not an integer in 1..N = {n}")
        out.append(int(k))
    if len(set(out)) != len(out):
        raise SpecError(f"{name} = {out}: each level once")
    return np.array(sorted(out), dtype=np.int64)


def check_flag(name: str, value) -> bool:
    """A flag -> a Python bool (one kernel signature); 'yes', 1 or None are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(f"{name} = {value!r}: must be True or False")
    return bool(value)


#: What a ``progress`` argument may be, in every error about one.
PROGRESS_RULE = ("a callable, True (a short line per step on stderr) or False / None (no "
                 "progress)")


def check_progress(name: str, value, default):
    """A progress argument -> a callable or None: a callable as given, True the
    ``default`` display (a callable), False or None no progress; anything else
    (a string, a number) is refused here rather than called deep inside."""
    if value is None or value is False or (isinstance(value, np.bool_) and not value):
        return None
    if value is True or isinstance(value, np.bool_):
        return default
    if callable(value):
        return value
    raise SpecError(f"{name} = {value!r}: must be {PROGRESS_RULE}")


def stderr_line(text: str) -> None:
    """One progress line on the current stderr (looked up per call, so that a
    redirected or captured stderr gets it)."""
    import sys
    print(text, file=sys.stderr, flush=True)


def check_progress_mode(name: str, value, modes: tuple[str, ...]) -> str:
    """A progress argument given as a display mode (a sweep's: ``modes``, the
    first the default display, "none" none) -> the mode: True is the default
    display and False / None is "none", as in :func:`check_progress`."""
    if value is None or value is False or (isinstance(value, np.bool_) and not value):
        return "none"
    if value is True or isinstance(value, np.bool_):
        return modes[0]
    if isinstance(value, str) and value in modes:
        return value
    raise SpecError(f"{name} = {value!r}: must be one of {', '.join(map(repr, modes))}, True "
                    f"(the same as {modes[0]!r}) or False / None (the same as 'none')")


def check_keywords(where: str, given: dict, function) -> None:
    """Keywords passed on (``**kw``) to ``function``: an unknown one (with the
    nearest known name) or a missing required one is a SpecError, not Python's
    TypeError from inside."""
    import difflib
    import inspect
    params = inspect.signature(function).parameters
    for key in given:
        if key not in params:
            near = difflib.get_close_matches(key, list(params), n=1)
            raise SpecError(f"{key} = {given[key]!r}: {where} has no argument {key!r}"
                            + (f" (did you mean {near[0]!r}?)" if near else "")
                            + "; its arguments are " + ", ".join(params))
    for name, p in params.items():
        if p.default is inspect.Parameter.empty and p.kind is p.KEYWORD_ONLY and name not in given:
            raise SpecError(f"{name}: missing; {where} needs it")


def keywords_of(where: str, like) -> Callable[[_F], _F]:
    """A decorator for a keyword-only method that passes its keywords on to
    ``like``: they are checked against ``like``'s first (``check_keywords``), so
    an unknown or missing one is a SpecError naming it, not Python's TypeError.
    The method keeps its own signature (``help``, IDEs)."""
    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def checked(cls, **given):
            check_keywords(where, given, like)
            return method(cls, **given)
        return cast(_F, checked)
    return wrap


def is_path(value) -> bool:
    """A str (not blank) or an os.PathLike: what may name a file."""
    return isinstance(value, os.PathLike) or (isinstance(value, str) and bool(value.strip()))


def check_path(name: str, value, what: str, error=SpecError):
    """``value`` if it can name a file (``is_path``), else ``error`` saying what
    it must name, e.g. check_path("path", p, "a CSV job table")."""
    if not is_path(value):
        raise error(f"{name} = {value!r}: must be the path of {what} (a str or Path)")
    return value

"""Argument checks shared by every public function: one rule, one message.

Each check takes the argument's name (as the caller spells it) and the
value, returns the normalized value, or raises :class:`SpecError` saying
what was given and what is required.
"""
from __future__ import annotations

import functools
import math
import os
import re
from numbers import Integral, Real
from typing import Callable, TypeVar, cast

import numpy as np

from ._format import fmt_array
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


# -- storm levels k of P(n_w >= k): an integer, 'N' or 'N/q' ------------------

def _level_rule(spec) -> tuple[int | None, float | None]:
    """A level's syntax: (k, None) for an integer k >= 1, (None, q) for 'N/q'
    (q >= 1; 'N' is q = 1). Raises SpecError naming the level and the rule."""
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        k = int(spec)
    else:
        s = str(spec).strip().replace(" ", "")
        m = re.fullmatch(r"N(?:/(\d+(?:\.\d+)?))?", s)
        if m:
            q = 1.0 if m.group(1) is None else float(m.group(1))
            if q < 1.0:
                raise SpecError(f"tail level {spec!r}: q must be >= 1 in 'N/q' (k = ceil(N/q) "
                                "is in 1..N then)")
            return None, q
        if not re.fullmatch(r"-?\d+", s):
            raise SpecError(f"tail level {spec!r}: must be an integer k, 'N' or 'N/q' "
                            "(e.g. 2, N/4, N)")
        k = int(s)
    if k < 1:
        raise SpecError(f"tail level {spec!r}: k must be an integer >= 1 (P(n_w >= 0) = 1 "
                        "always)")
    return k, None


def check_tail_level(spec) -> None:
    """Raise SpecError if ``spec`` is not a level for any N."""
    _level_rule(spec)


def tail_level(spec, n_jobs: int) -> int:
    """A level for a fleet of N jobs: an int k, 'N', or 'N/q' (k = ceil(N / q)).

    Raises SpecError when the level is not in 1..N (never clipped)."""
    k, q = _level_rule(spec)
    if k is None:
        k = math.ceil(n_jobs / q)
    if k > n_jobs:
        raise SpecError(f"tail level {spec!r} is k = {k}, above N = {n_jobs}: k must be in "
                        "1..N")
    return k


def split_levels(text: str) -> tuple[str, ...]:
    """Levels written as one text, '2, N/4,N' -> ('2', 'N/4', 'N') (blanks
    dropped), each one's syntax checked (before anything is read)."""
    levels = tuple(x.strip() for x in text.split(",") if x.strip())
    for level in levels:
        check_tail_level(level)
    return levels


def check_levels(name: str, levels, n: int, *, text: bool = False) -> np.ndarray:
    """Storm levels k: an integer or a sequence of distinct integers in 1..n ->
    sorted int64 (n, the fleet's N); "3", 2.5 or True are refused, not rounded.

    With ``text``, levels may also be written as strings, each an integer, 'N'
    or 'N/q' (k = ceil(N/q)), or as one comma-separated string ('2,N/4'); a
    level named twice counts once."""
    spec = levels.split(",") if text and isinstance(levels, str) else levels
    if text and isinstance(spec, (list, tuple)) and spec and all(isinstance(x, str) for x in spec):
        try:
            return np.array(sorted({tail_level(x.strip(), n) for x in spec}), dtype=np.int64)
        except SpecError as exc:
            raise SpecError(f"{name} = {levels!r}: {exc}") from None
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


def job_array(name: str, value, n: int | None) -> np.ndarray:
    """A per-job float array from a number (``n`` copies; refused when ``n`` is None)
    or a sequence of ``n`` numbers; strings, booleans and None are never coerced."""
    try:
        kind = np.asarray(value).dtype.kind      # "3", True, None: not numbers (never coerced)
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        kind = "O"
    if kind not in "iuf":
        raise SpecError(f"{name} = {fmt_array(value)}: must be a number or a sequence of numbers")
    if arr.ndim == 0:
        if n is None:
            raise SpecError(f"{name} = {fmt_array(value)}: give one value per job (a sequence), "
                            "or use Fleet.identical(n_jobs, ...) for identical jobs")
        arr = np.full(n, float(arr))
    if arr.ndim != 1:
        raise SpecError(f"{name} has shape {arr.shape}: must be one value per job, shape (N,)")
    if arr.size == 0:
        raise SpecError(f"{name} = []: a fleet needs at least one job")
    if n is not None and arr.size != n:
        raise SpecError(f"{name} has {arr.size} values but the fleet has {n} jobs: lengths must match")
    return arr


def check_jobs(name: str, arr: np.ndarray, ok: np.ndarray, rule: str) -> None:
    """A SpecError naming the first job whose value is not ``ok``."""
    bad = np.nonzero(~ok)[0]
    if bad.size:
        i = int(bad[0])
        raise SpecError(f"{name}[{i}] = {float(arr[i])!r}: must be {rule}")

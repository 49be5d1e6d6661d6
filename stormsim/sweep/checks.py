"""Value checks of sweep-file keys: raw TOML value -> normalized value, or raise Bad.

The building blocks of ``stormsim.sweep.keys.KEYS`` (each Key names its check).
"""
from __future__ import annotations

import math
from numbers import Integral, Real

from .._format import fmt_toml
from ..engine.cost import FLEET_BYTES_PER_JOB, check_memory
from ..engine.model import canonical_throughput
from ..errors import SpecError
from .._args import check_tail_level

__all__ = ["Bad", "boolean", "int_at_least", "int_or_one_of", "is_int", "is_num", "one_of",
           "passage_level", "per_job", "positive", "positive_or_inf", "power_or_none",
           "ramp_thresholds", "ramp_windows", "seconds_or_none", "tail_level_list", "throughput",
           "time_or_inf", "writer_cap"]


class Bad(Exception):
    """A value breaks its key's rule; the message says what is allowed."""


def is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool)


def is_num(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def int_at_least(lo: int, below: int | None = None):
    def check(v):
        if not is_int(v) or v < lo:
            raise Bad(f"must be an integer >= {lo}")
        if below is not None and v >= below:
            raise Bad(f"must be < 2**{int(math.log2(below))}")
        return int(v)
    return check


def n_jobs(v) -> int:
    """N: an integer >= 1 whose fleet fits in memory (model.check_memory)."""
    n = int_at_least(1)(v)
    try:
        check_memory(f"N = {n}", FLEET_BYTES_PER_JOB * float(n), "use fewer jobs")
    except SpecError as exc:
        raise Bad(str(exc)[len(f"N = {n} "):]) from None
    return n


def positive(v, *, allow_inf=False) -> float:
    if not is_num(v):
        raise Bad("must be a number")
    v = float(v)
    if math.isnan(v) or v <= 0.0 or (math.isinf(v) and not allow_inf):
        raise Bad("must be " + ("> 0 (inf allowed)" if allow_inf else "finite and > 0"))
    return v


def positive_or_inf(v) -> float:
    if isinstance(v, str) and v.strip().lower() in ("inf", "infinity", "none"):
        return math.inf
    return positive(v, allow_inf=True)


def _per_job_numbers(v, bad_rule, rule: str):
    """A number, or a non-empty list of them (one per job), each passing
    ``not bad_rule(x)``: the float (or tuple of floats), or raise Bad."""
    items = v if isinstance(v, list) else [v]
    if isinstance(v, list) and not v:
        raise Bad("an empty list: give one value per job")
    out = []
    for x in items:
        if not is_num(x):
            raise Bad(f"must be a number, or a list of numbers (one per job); found "
                      f"{fmt_toml(x)}")
        x = float(x)
        if bad_rule(x):
            raise Bad(f"every value must be {rule}; found {fmt_toml(x)}")
        out.append(x)
    return tuple(out) if isinstance(v, list) else out[0]


def per_job(lo_ok_zero: bool):
    """A finite number > 0 (>= 0 with lo_ok_zero), or a list of them (one per job)."""
    rule = "finite and " + (">= 0" if lo_ok_zero else "> 0")

    def bad(x):
        return not math.isfinite(x) or x < 0.0 or (x == 0.0 and not lo_ok_zero)

    return lambda v: _per_job_numbers(v, bad, rule)


def percent(v) -> float | None:
    """The fraction a percentage string such as '2%' gives (0.02), None for
    anything else, or raise Bad for a percentage outside [0%, 100%]."""
    if not isinstance(v, str) or not v.strip().endswith("%"):
        return None
    try:
        x = float(v.strip()[:-1])
    except ValueError:
        raise Bad(f"{fmt_toml(v)} is no percentage: write a number and %, e.g. '2%'") from None
    if not (math.isfinite(x) and 0.0 <= x <= 100.0):
        raise Bad(f"a percentage of the compute interval must be in [0%, 100%] (above, most "
                  f"intervals would clip to 0); found {fmt_toml(v)}")
    return x / 100.0


def jitter(v):
    """A number >= 0 (seconds), a percentage of each job's T ('2%'), or a list
    of them (one per job): the float, the string, or a tuple of them."""
    items = v if isinstance(v, list) else [v]
    if isinstance(v, list) and not v:
        raise Bad("an empty list: give one value per job")
    out = []
    for x in items:
        if percent(x) is not None:
            out.append(x.strip())
            continue
        if not is_num(x):
            raise Bad("must be a number >= 0 (s), a percentage of the compute interval such as "
                      f"'2%', or a list of them (one per job); found {fmt_toml(x)}")
        if not math.isfinite(x) or x < 0.0:
            raise Bad("every value must be finite and >= 0 (or a percentage of the compute "
                      f"interval such as '2%'); found {fmt_toml(x)}")
        out.append(float(x))
    return tuple(out) if isinstance(v, list) else out[0]


def per_job_in(lo: float, hi: float):
    """A number in [lo, hi], or a list of them (one per job)."""
    return lambda v: _per_job_numbers(v, lambda x: not lo <= x <= hi, f"in [{lo:g}, {hi:g}]")


def one_of(*choices):
    def check(v):
        if v not in choices:
            raise Bad("must be one of " + ", ".join(repr(x) for x in choices))
        return v
    return check


def int_or_one_of(lo: int, *choices):
    """An integer >= lo, or one of the (text) choices."""
    def check(v):
        if v in choices:
            return v
        if not is_int(v) or v < lo:
            raise Bad(f"must be an integer >= {lo} or one of " + ", ".join(map(repr, choices)))
        return int(v)
    return check


def boolean(v):
    if not isinstance(v, bool):
        raise Bad("must be true or false")
    return v


def auto_or_boolean(v):
    """'auto', true or false (simulate's ``fast_forward``)."""
    if v != "auto" and not isinstance(v, bool):
        raise Bad("must be 'auto', true or false")
    return v


def throughput(v):
    """-> the canonical rule of stormsim.engine.model: 'fair', 'ideal', ('power', a) or a tuple."""
    if isinstance(v, list) and not all(is_num(x) for x in v):
        raise Bad("a table must list f(1), ..., f(N) as numbers")
    try:
        return canonical_throughput(tuple(v) if isinstance(v, list) else v)
    except SpecError as exc:
        raise Bad(str(exc)) from None


def passage_level(v):
    if isinstance(v, str) and v.strip().lower() == "none":
        return 0
    if not is_int(v) or v < 0:
        raise Bad("must be an integer >= 1 (the level k), or 0 / 'none' for no passage")
    return int(v)


def writer_cap(v):
    """max_writers: an integer >= 1 (its bound N is checked with the cell), or
    'none' -> 0 (no cap: the key's default, as passage_level's 0 is no passage)."""
    if isinstance(v, str) and v.strip().lower() == "none":
        return 0
    if not is_int(v) or v < 1:
        raise Bad("must be an integer in 1..N (at most that many checkpoints write at once), "
                  "or 'none' for no cap")
    return int(v)


def seconds_or_none(v):
    """A threshold in seconds, a number > 0, or 'none' -> NaN (the key's default)."""
    if isinstance(v, str) and v.strip().lower() == "none":
        return math.nan
    if not is_num(v) or not 0.0 < float(v) < math.inf:
        raise Bad("must be a number of seconds, finite and > 0, or 'none'")
    return float(v)


def tail_level_list(v) -> tuple:
    """Tail levels: a list of integers k >= 1, 'N' or 'N/q' (or one of them) ->
    a tuple of ints and normalized strings ('N/2'); [] -> () (none)."""
    items = v if isinstance(v, list) else [v]
    out = []
    for x in items:
        if isinstance(x, bool) or not (is_int(x) or isinstance(x, str)):
            raise Bad(f"must be a list of levels k (integers >= 1, 'N' or 'N/q'); found "
                      f"{fmt_toml(x)}")
        try:
            check_tail_level(x)
        except SpecError as exc:
            raise Bad(str(exc)) from None
        norm = int(x) if is_int(x) else x.strip().replace(" ", "")
        if norm in out:
            raise Bad(f"lists {fmt_toml(x)} twice: give each level once")
        out.append(norm)
    return tuple(out)


def _magnitude(x, kind: str, unit: str, example: str) -> float:
    """One quantity of ``kind`` ("time", "power") as a float in ``unit``: a
    number already in it, or text with its unit (``example``); raise Bad
    otherwise (its range is the caller's)."""
    from ..engine.units import quantity

    if isinstance(x, str):
        try:
            return float(quantity("value", x, kind).to(unit).magnitude)
        except SpecError as exc:
            rest = str(exc).split(": ", 1)[-1]
            raise Bad(f"{fmt_toml(x)} is not a {kind} ({rest}); write {unit}s or a {kind} "
                      f"with its unit, e.g. '{example}'") from None
    if not is_num(x):
        raise Bad(f"must be a number of {unit}s or a {kind} with its unit such as "
                  f"'{example}', or a list of them (one per job); found {fmt_toml(x)}")
    return float(x)


def _time(x, positive: bool, inf_ok: bool) -> float:
    """One time: a number of seconds, a time with its unit ('24 h', '10 min'), or
    (``inf_ok``) inf / 'inf' / 'none' for never; raise Bad otherwise."""
    rule = (("> 0" if positive else ">= 0") + (" (inf or 'none': never)" if inf_ok else ""))
    if isinstance(x, str) and x.strip().lower() in ("inf", "infinity", "none"):
        if inf_ok:
            return math.inf
        raise Bad(f"must be finite and {rule}")
    x = _magnitude(x, "time", "second", "24 h")
    if math.isnan(x) or x < 0.0 or (x == 0.0 and positive) or (math.isinf(x) and not inf_ok):
        raise Bad(f"every value must be {'' if inf_ok else 'finite and '}{rule}; found "
                  f"{fmt_toml(x)}")
    return x


def time_or_inf(positive: bool, inf_ok: bool, per_job: bool = True):
    """A time (seconds, or with its unit: '24 h'), inf where ``inf_ok``, or (``per_job``)
    a list of them, one per job: the float (or tuple of floats), or raise Bad."""
    def check(v):
        if isinstance(v, list):
            if not per_job:
                raise Bad("must be one time, the fleet's (not a list)")
            if not v:
                raise Bad("an empty list: give one value per job")
            return tuple(_time(x, positive, inf_ok) for x in v)
        return _time(v, positive, inf_ok)
    return check


def _watts(x) -> float:
    """One power: a number of watts or a power with its unit ('716.8 kW'), finite
    and >= 0; raise Bad otherwise."""
    x = _magnitude(x, "power", "watt", "716.8 kW")
    if not (math.isfinite(x) and x >= 0.0):
        raise Bad(f"every value must be a finite power >= 0 (W); found {fmt_toml(x)}")
    return x


def power_or_none(v):
    """A job's power (MODEL.md E6): watts, a power with its unit ('716.8 kW'), a
    list of them (one per job), or 'none' (power off): float, tuple or None."""
    if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
        return None
    if isinstance(v, list):
        if not v:
            raise Bad("an empty list: give one value per job")
        return tuple(_watts(x) for x in v)
    return _watts(v)


def ramp_windows(v) -> tuple:
    """The ramp windows D (MODEL.md E6): a time > 0 (seconds or with its unit,
    '1 min') or a list of them, each once: a sorted tuple of floats."""
    items = v if isinstance(v, list) else [v]
    if not items:
        raise Bad("an empty list: give at least one window D (s), e.g. [1, 60]")
    out = [_time(x, True, False) for x in items]
    if len(set(out)) != len(out):
        raise Bad("lists a window twice: give each once")
    return tuple(sorted(out))


def ramp_thresholds(v):
    """The ramp thresholds X (MODEL.md E6): a power > 0 (watts or with its unit,
    '1 MW') or a list of them, each once (a sorted tuple), or 'none' (the default
    thresholds, decided per cell)."""
    if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
        return None
    items = v if isinstance(v, list) else [v]
    if not items:
        raise Bad("an empty list: give at least one threshold X (W), e.g. ['1 MW']")
    out = [_watts(x) for x in items]
    if any(x == 0.0 for x in out):
        raise Bad("every threshold must be > 0 W (a drop of 0 W is always there)")
    if len(set(out)) != len(out):
        raise Bad("lists a threshold twice: give each once")
    return tuple(sorted(out))

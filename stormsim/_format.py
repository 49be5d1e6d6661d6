"""How values are written for people: in tables, in error messages, as TOML.

One home for formatting, used by every module that prints a value.
"""
from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["fmt_array", "fmt_ci", "fmt_clock", "fmt_count", "fmt_duration", "fmt_estimate",
           "fmt_interval", "fmt_law", "fmt_p_ge", "fmt_passage", "fmt_percent", "fmt_rate", "fmt_share",
           "fmt_storm_duration", "fmt_storms", "fmt_toml", "fmt_value"]


def fmt_value(v, digits: int = 6) -> str:
    """A scalar in a table: ``digits`` significant digits, ``inf``, ``-`` for NaN,
    true/false (integers in full)."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}g}"
    return str(v)


def fmt_array(value) -> str:
    """A value given to the Python API, for an error message (arrays shortened)."""
    text = (np.array2string(np.asarray(value), threshold=8, precision=6) if np.ndim(value)
            else repr(value))
    return text if len(text) < 120 else text[:117] + "..."


def fmt_toml(value) -> str:
    """A value as it would be written in a TOML sweep file (for error messages)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return "nan"
        return repr(value)
    if isinstance(value, (list, tuple)):
        text = "[" + ", ".join(fmt_toml(v) for v in value) + "]"
        return text if len(text) <= 80 else text[:77] + "...]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {fmt_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


def fmt_clock(seconds: float) -> str:
    """A duration as H:MM:SS (days as 'Nd H:MM:SS'); '?' when unknown (NaN, inf)."""
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "?"
    s = int(round(max(seconds, 0.0)))
    days, s = divmod(s, 86400)
    text = f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{days}d {text}" if days else text


def fmt_duration(seconds: float) -> str:
    """A duration in words, two digits: '36 s', '12 min', '3.5 h', '2.1 days', '4.2 years'."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            number = f"{seconds / size:.2g}"
            return f"{number} {unit[:-1] if number == '1' and unit.endswith('s') else unit}"
    return f"{seconds:.2g} s"


def fmt_rate(x: float) -> str:
    """A rate with a k / M / G suffix, 3 significant digits."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f}{suffix}"
    return f"{x:.0f}"


def fmt_percent(x: float) -> str:
    """A share as a percentage, 2 significant digits ('4.2%'), from 99.5 % on as
    ``fmt_share`` ('99.54%', '> 99.99%': two digits would print '1e+02%'); '-' for NaN."""
    if math.isnan(x):
        return "-"
    return fmt_share(x) if x >= 0.995 else f"{100 * x:.2g}%"


def fmt_share(p: float) -> str:
    """A share of time as a percentage, 4 significant digits ('99.97%'), and
    '> 99.99%' above that, so that a share short of 1 never reads as '100%'."""
    return "> 99.99%" if p > 0.9999 else f"{100 * p:.4g}%"


def fmt_interval(value: float, lo: float, hi: float) -> str:
    """An estimate and its interval, 3 significant digits: 'v [lo, hi]'; 'v'
    where the interval is empty; '< hi' (an upper bound) for an estimate of 0
    ('0' where that bound is 0 too); '-' for NaN."""
    if math.isnan(value):
        return "-"
    if value == 0.0:
        return f"< {hi:.2g}" if hi > 0 else "0"
    return f"{value:.3g} [{lo:.3g}, {hi:.3g}]" if lo < hi else f"{value:.3g}"


def fmt_estimate(value: float, lo: float, hi: float, method: str) -> str:
    """A rate as its method made it, 3 significant digits: 'v (exact)' from an
    exact law, '0 (the cap)' where a writer cap rules the level out, '< hi
    (none seen)' where no sample reached it, else 'v [lo, hi]' (an interval)."""
    if method == "exact":
        return f"{value:.3g} (exact)"
    if method == "cap":
        return "0 (the cap)"
    if method == "budget":
        return "not estimated in the budget"
    if value == 0.0:
        return f"< {hi:.2g} (none seen)"
    return f"{value:.3g} [{lo:.3g}, {hi:.3g}]"


def fmt_count(n: int, noun: str) -> str:
    """``1 figure``, ``2 figures``, ``0 figures``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


# -- the inspect tables' numbers with their intervals ---------------------------

def fmt_passage(x: float, cap) -> str:
    """A first-passage median: '-' (none), '>CAP' (beyond the cycle cap), else 6 digits."""
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return f">{cap}"
    return fmt_value(x)


def fmt_p_ge(p: float, lo: float, hi: float, method: str, bound: float = math.nan) -> str:
    """P(n_w >= k) with its interval, as the inspect table prints it; where no
    fleet reached k, a bound that reads as one: ``bound`` (Results.summary's
    ``p_ge_L_bound``, stormsim.stats.tails.monotone_bound) or else ``hi``."""
    if method == "zero-bound":
        return f"< {bound if math.isfinite(bound) else hi:.2e} (none reached k)"
    if method == "one-bound":
        return f"1 (>{lo:.2e})"
    if math.isnan(lo) or math.isnan(hi):
        return f"{p:.3e} no CI"
    return f"{p:.3e} [{lo:.3e}, {hi:.3e}]"


def fmt_storms(r: float, lo: float, hi: float, method: str, fmt: str = ".3e") -> str:
    """A storm rate with its interval ('< b (no storm)': b a one-sided bound);
    ``fmt`` its numbers' format (per day, ``.3g`` reads: '80.9 [65.5, 99.9]')."""
    if method == "zero-bound":
        return f"< {hi:.2e} (no storm)"
    if math.isnan(r):
        return "-"
    if math.isnan(lo) or math.isnan(hi):
        return f"{r:{fmt}} no CI"
    return f"{r:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def fmt_storm_duration(d: float, lo: float, hi: float, unit: bool = False) -> str:
    """A mean storm duration in seconds with its interval; ``unit``: in the
    unit that reads (s, min, h, from the estimate), named."""
    if math.isnan(d):
        return "-"
    size, name = next(((size, name) for size, name in ((3600.0, "h"), (60.0, "min"))
                       if unit and d >= size), (1.0, "s" if unit else ""))
    d, lo, hi = d / size, lo / size, hi / size
    name = f" {name}" if name else ""
    if math.isnan(lo) or math.isnan(hi):
        return f"{d:.4g}{name} no CI"
    return f"{d:.4g}{name} [{lo:.4g}, {hi:.4g}]"


def fmt_law(x: float, fmt: str = ".3e") -> str:
    """A number with no interval (an exact law's value, a maximum); '-' for NaN."""
    return "-" if math.isnan(x) else format(x, fmt)


def fmt_ci(x: float, lo: float, hi: float) -> str:
    """A number and its interval, 4 significant digits; 'no CI' where it has none."""
    if math.isnan(x):
        return "-"
    return f"{x:.4g} [{lo:.4g}, {hi:.4g}]" if math.isfinite(lo) else f"{x:.4g} no CI"

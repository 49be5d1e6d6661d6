"""How values are written for people: in tables, in error messages, as TOML.

One home for formatting, used by every module that prints a value.
"""
from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["fmt_array", "fmt_toml", "fmt_value"]


def fmt_value(v) -> str:
    """A scalar in a table: 6 significant digits, ``inf``, ``-`` for NaN, true/false."""
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
        return f"{v:.6g}"
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

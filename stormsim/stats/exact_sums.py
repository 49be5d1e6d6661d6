"""Exact sums of floats: column sums as Python ints in units of 2**-1074.

Every finite float64 is an integer multiple of 2**-1074 (the smallest
subnormal), so a sum of floats is exactly an integer in those units. Sums of
any split of the rows add up (as ints) to the sum of all rows, whatever the
split: a cell's sums over its fleets do not depend on how the fleets were cut
into units of work. :func:`exact_to_float` rounds such a sum to float64
correctly (equal to ``math.fsum`` of the same values).
"""
from __future__ import annotations

import numpy as np

__all__ = ["add_exact", "exact_column_sums", "exact_to_float"]

#: Every finite float64 is an integer multiple of 2**-_ULP_EXP.
_ULP_EXP = 1074


def exact_column_sums(a) -> list[int]:
    """Exact column sums of a float64 array, as Python ints in units of 2**-1074.

    The sums of any split of the rows add up (as ints) to the sum of all rows:
    this is what makes a cell's occupancy sum independent of how its fleets
    were cut into units. Convert with :func:`exact_to_float`.

    Parameters
    ----------
    a : float64 (rows, cols) or (rows,), finite
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"exact_column_sums takes a 1-d or 2-d array; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("exact_column_sums needs finite values")
    rows, cols = a.shape
    if rows == 0:
        return [0] * cols
    mant, expo = np.frexp(a)                      # a = mant * 2**expo, 0.5 <= |mant| < 1
    m = np.ldexp(mant, 53).astype(np.int64)       # exact: |m| < 2**53
    shift = expo.astype(np.int64) + (_ULP_EXP - 53)  # a = m * 2**shift * 2**-1074
    sub = shift < 0                               # subnormal: a * 2**1074 is an integer
    if sub.any():
        m[sub] = np.ldexp(a[sub], _ULP_EXP).astype(np.int64)
        shift[sub] = 0
    # Group equal (column, shift) and add the integer mantissas in int64 halves
    # (26 bits each, so a group of up to 2**36 values cannot overflow).
    keys = (np.arange(cols, dtype=np.int64)[None, :] * 4096 + shift).ravel()
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    mv = m.ravel()[order]
    starts = np.flatnonzero(np.concatenate([[True], ks[1:] != ks[:-1]]))
    hi = np.add.reduceat(mv >> 26, starts)
    lo = np.add.reduceat(mv & ((1 << 26) - 1), starts)
    out = [0] * cols
    for k, high, low in zip(ks[starts].tolist(), hi.tolist(), lo.tolist()):
        col, s = divmod(k, 4096)
        out[col] += ((high << 26) + low) << s
    return out


def exact_to_float(ints) -> np.ndarray:
    """Exact sums from :func:`exact_column_sums` -> float64, correctly rounded
    (Python's int / int is), so equal to ``math.fsum`` of the same values."""
    den = 1 << _ULP_EXP
    return np.array([x / den for x in ints], dtype=np.float64)


def add_exact(total: list | None, more) -> list:
    """Element-wise sum of two exact sums (None: nothing yet)."""
    return list(more) if total is None else [x + y for x, y in zip(total, more)]

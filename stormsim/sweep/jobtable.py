"""Job tables in sweep files: the keys ``jobs`` (a CSV job table) and
``bandwidth`` (the fabric's, with its unit), read by ``stormsim.engine.units``.

A table gives every job's T, d and jitter (and any asynchronous columns), so
it replaces N, T, d, load, jitter and m_over_sigma; its path is relative to
the sweep file. The fleet enters the run seed through its canonical encoding
like any other, so a fleet from a table and the same fleet given as T and d
get the same seed.
"""
from __future__ import annotations

from pathlib import Path

from ..engine import jobcsv, units
from ..engine.model import Fleet
from ..errors import SpecError
from .checks import Bad

__all__ = ["GIVES", "check_bandwidth", "check_path", "clash", "fleet", "read"]

#: Keys a job table replaces.
GIVES = ("N", "T", "d", "load", "jitter", "m_over_sigma")


def check_path(v) -> str:
    if not isinstance(v, str) or not v.strip():
        raise Bad("must be a string: the path of a CSV job table")
    return v


def check_bandwidth(v) -> str:
    if not isinstance(v, str):
        raise Bad("must be a string, a number and its unit such as '80 GB/s'")
    try:
        units.quantity("bandwidth", v, "bandwidth")
    except SpecError as exc:            # "bandwidth = '80 GB' is a size: ..." without the echo
        rest = str(exc).removeprefix(f"bandwidth = {v!r}").lstrip(": ")
        raise Bad(("it " + rest) if rest.startswith("is ") else rest) from None
    return v


def clash(given) -> str | None:
    """The error for a file giving both a job table and keys it replaces, or None."""
    both = [k for k in GIVES if k in given]
    if "jobs" in given and both:
        return ("jobs (a job table) gives every job's T, d and jitter: leave out "
                + ", ".join(repr(k) for k in both))
    return None


def read(v: dict, folder) -> dict | None:
    """The cell's job table as ``Fleet.from_jobs`` keywords (its path resolved
    against ``folder``, the sweep file's); None without one; or raise Bad."""
    if "jobs" not in v and "bandwidth" not in v:
        return None
    if "jobs" not in v or "bandwidth" not in v:
        raise Bad("'jobs' (a CSV job table) and 'bandwidth' (the fabric's, e.g. '80 GB/s') go "
                  f"together: give both; got only {'jobs' if 'jobs' in v else 'bandwidth'}")
    path = Path(v["jobs"])
    try:
        return jobcsv.read_jobs(path if path.is_absolute() else Path(folder) / path, names=False)
    except SpecError as exc:
        raise Bad(str(exc)) from None


def fleet(table: dict, v: dict, cap: float, throughput) -> Fleet:
    """The table's fleet behind the cell's cap and throughput (a checkpoint_period
    column depends on the cap), or raise Bad."""
    try:
        return Fleet.from_jobs(**table, bandwidth=v["bandwidth"], cap=cap, throughput=throughput)
    except SpecError as exc:
        raise Bad(str(exc)) from None

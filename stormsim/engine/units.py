"""Fleets in physical units (MODEL.md E4): minutes, GB and TB/s in, the
model's seconds out (``Fleet.from_jobs``, ``Fleet.from_csv``); results read
back in physical terms are in ``stormsim.stats.physical``.

The convention (one, everywhere)
--------------------------------
Every dimensional quantity carries its unit, and pint (the maintained units
library; ``pip install 'stormsim[units]'``) reads it:

- in Python, a string such as ``"30 min"``, ``"156 GB"``, ``"5 TB/s"``,
  ``"20 Gbit/s"`` or a pint ``Quantity``; a plain number is refused, since
  ``30`` could be seconds or minutes. Dimensionless values (``slowdown``,
  ``weight``) are plain numbers.
- in a CSV job table, the header names each column and its unit in brackets,
  ``size [GB]``, and the cells are plain numbers; a column whose header has
  no unit takes a unit in every cell (``"156 GB"``).

GB is 10**9 bytes and GiB 2**30 (pint's SI and IEC prefixes): a 782 GiB
checkpoint is 840 GB.

The names (each has one meaning)
--------------------------------
compute_interval
    Compute time between two checkpoints at full speed: the model's T_i
    (what "checkpoint every k steps" sets: k times the step time).
checkpoint_period
    Wall-clock time from one checkpoint start to the next *for the job
    running alone* (what a timer-based policy sets). Converted to T_i by the
    lone job's cycle: blocking, period = T_i / c + d_i; async, period =
    s_i + T_i / c + eps_i d_i (MODEL.md E1), with c = min(1, cap). Give
    exactly one of ``compute_interval`` and ``checkpoint_period`` per fleet.
size
    Bytes written per checkpoint; d_i = size / bandwidth (the write alone).
bandwidth
    The storage fabric's aggregate bandwidth (one value for the fleet).
snapshot
    Blocking snapshot time of an async checkpoint, s_i (MODEL.md E1).
jitter
    Standard deviation of each compute interval, sigma_i: a time, or a
    percentage of the job's compute interval T_i ("2%": sigma_i = 0.02 T_i;
    a column ``jitter [%]`` or cells "2%"), at most T_i (100%). A job table
    must give it (0 for a deterministic fleet): a missing column is refused.
slowdown, weight, checkpoint, on_busy
    eps_i (in [0, 1]), w_i (> 0), "blocking" | "async", "block" | "skip":
    passed to ``Fleet`` as ``slowdown``, ``weights``, ``checkpoint``,
    ``on_busy`` (MODEL.md E1, E2).
max_writers
    The writer cap K of the fleet (MODEL.md E5): at most K checkpoints
    write at once, an integer in 1..N (None: no cap); no unit, one value
    for the fleet, like ``cap``.
mtbf, restart
    A job's mean time between failures M_i (wall time, > 0) and its
    downtime after one, R_i (>= 0), MODEL.md E8: times, per job (columns
    ``mtbf [h]``, ``restart [min]``). Without them a job never fails.
outage_mtbf
    The fleet's mean time between outages M_0 (each fails every job at
    once): a time, one value for the fleet.
busy_power, idle_power
    A job's draw computing at full rate and stopped (writing, queued,
    waiting, snapshotting, down), MODEL.md E6: powers ("700 W", "1.4 MW"),
    per job (columns ``busy_power [kW]``, ``idle_power [kW]``); both or
    neither (power off).
gpus, gpu_power, gpu_idle_power
    Instead of busy_power and idle_power: the job's accelerators and one
    accelerator's draw computing and stopped; the job draws gpus times each
    (columns ``gpus``, ``gpu_power [W]``, ``gpu_idle_power [W]``; all three
    or none).

The model's time unit is then the second.
"""
from __future__ import annotations

import functools
import math
import re
from numbers import Real

import numpy as np

from .._format import fmt_array as _fmt
from .._args import check_int, check_real
from ..errors import SpecError

__all__ = ["CHOICES", "JOB_COLUMNS", "KINDS", "SECONDS_PER_DAY", "UNITS", "fleet_arguments",
           "is_percent", "magnitudes", "quantity", "registry", "seconds"]

#: The kinds of quantity: pint's root unit of each (pint counts bits as
#: dimensionless, so a size is told from a plain number by its root unit,
#: not by its dimensionality) and an example for error messages.
KINDS = {
    "time": ("second", "'30 min'"),
    "size": ("bit", "'156 GB'"),
    "bandwidth": ("bit / second", "'5 TB/s'"),
    "number": ("dimensionless", "0.5"),
    "jitter": ("second", "'9 s' or a percentage of the compute interval, '1%'"),
    "power": ("gram * meter ** 2 / second ** 3", "'700 W'"),
}

#: Each kind's unit in the model (a time in seconds, a size in bytes).
UNITS = {"time": "second", "jitter": "second", "size": "byte", "bandwidth": "byte / second",
         "number": "dimensionless", "power": "watt"}

#: Above these (in UNITS) a value is a typo, not a fleet: 1e9 s is ~32 years,
#: 1e18 B an exabyte (a thousand times today's largest checkpoints, and an
#: exabyte a second through one fabric). They also keep the model's float64
#: times far from overflow (1e308 GB is inf bytes).
CEILINGS = {"second": (1e9, "1e9 s (~32 years)"), "byte": (1e18, "1e18 B (an exabyte)"),
            "byte / second": (1e18, "1e18 B/s (an exabyte a second)")}

#: Job table columns and the per-job keywords of fleet_arguments -> (kind,
#: rule on the value (a key of _RULES), what it is). One row per job.
JOB_COLUMNS: dict[str, tuple[str, str | None, str]] = {
    "name": ("text", None, "a label for the job (optional)"),
    "compute_interval": ("time", "positive", "compute time between checkpoints at full speed (T)"),
    "checkpoint_period": ("time", "positive", "wall-clock checkpoint period of the job alone"),
    "size": ("size", "positive", "bytes per checkpoint"),
    "snapshot": ("time", "nonnegative", "async snapshot time (s)"),
    "jitter": ("jitter", "nonnegative", "standard deviation of each compute interval (sigma): a "
               "time, or a percentage of the compute interval (at most 100%)"),
    "slowdown": ("number", "fraction", "async compute slowdown while persisting, in [0, 1] (eps)"),
    "weight": ("number", "positive", "storage sharing weight, > 0 (w)"),
    "checkpoint": ("text", None, "'blocking' or 'async'"),
    "on_busy": ("text", None, "'block' or 'skip'"),
    "mtbf": ("time", "positive", "mean time between the job's failures (M, wall time; MODEL.md E8)"),
    "restart": ("time", "nonnegative", "downtime after a failure until the job computes again (R)"),
    "busy_power": ("power", "nonnegative", "draw computing at full rate (W; MODEL.md E6)"),
    "idle_power": ("power", "nonnegative", "draw while writing or stopped (W; MODEL.md E6)"),
    "gpus": ("number", "positive", "accelerators of the job: with gpu_power and gpu_idle_power, "
             "instead of busy_power and idle_power"),
    "gpu_power": ("power", "nonnegative", "draw of one accelerator computing at full rate (W)"),
    "gpu_idle_power": ("power", "nonnegative", "draw of one accelerator while its job writes or "
                       "stops (W)"),
}

#: Per accelerator, the job's busy_power and idle_power: gpus times each.
_GPU_FIELDS = {"gpu_power": "busy_power", "gpu_idle_power": "idle_power"}

#: Text columns with a fixed set of values.
CHOICES = {"checkpoint": ("blocking", "async"), "on_busy": ("block", "skip")}

#: Per-job keywords of fleet_arguments -> the Fleet keyword they become.
_ASYNC_FIELDS = {"checkpoint": "checkpoint", "snapshot": "snapshot", "slowdown": "slowdown",
                 "on_busy": "on_busy", "weight": "weights"}

SECONDS_PER_DAY = 86400.0


@functools.lru_cache(maxsize=1)
def registry():
    """The one pint UnitRegistry of stormsim (created on first use)."""
    try:
        import pint
    except ImportError:
        raise SpecError("physical units need pint: pip install 'stormsim[units]' "
                        "(or pip install pint)") from None
    return pint.UnitRegistry()


def _is_quantity(value) -> bool:
    return hasattr(value, "magnitude") and hasattr(value, "units") and hasattr(value, "to")


def quantity(name: str, value, kind: str):
    """``value`` (a unit string or pint Quantity) as a Quantity of ``kind``, or SpecError.

    ``kind`` is "time", "size", "bandwidth" or "number" (dimensionless; a
    plain number is accepted only there).
    """
    ureg = registry()
    root, example = KINDS[kind]
    if _is_quantity(value):
        q = ureg.Quantity(np.asarray(value.magnitude, dtype=np.float64), str(value.units))
    elif isinstance(value, str):
        try:
            q = ureg.Quantity(value.strip())
        except Exception as exc:  # pint raises several kinds for a bad expression
            raise SpecError(f"{name} = {value!r}: not a quantity pint can read ({exc or 'bad syntax'}); "
                            f"write a number and a unit, e.g. {example}") from None
    elif isinstance(value, bool):
        raise SpecError(f"{name} = {value!r}: must be a quantity, e.g. {example}")
    elif isinstance(value, (int, float, np.integer, np.floating)):
        if kind != "number":
            raise SpecError(f"{name} = {value!r}: a plain number is ambiguous; give its unit, "
                            f"e.g. {example} (a string or a pint Quantity)")
        q = ureg.Quantity(float(value))
    else:
        raise SpecError(f"{name} = {_fmt(value)}: must be a quantity such as {example}")
    _, units = ureg.get_root_units(q.units)
    if str(units) != root or (kind != "number" and q.unitless):
        got = next((k for k, (r, _) in KINDS.items() if r == str(units)), None)
        want = "a plain number" if kind == "number" else f"a {kind}, e.g. {example}"
        if q.unitless or got:
            raise SpecError(f"{name} = {_shown(value)} is "
                            f"{'a plain number' if q.unitless else f'a {got}'}: must be {want}")
        raise SpecError(f"{name} = {_shown(value)} is in {q.units} ({q.units:~}), not a unit of "
                        f"time, size or bandwidth: must be {want}"
                        + (f" ({UNIT_WORDS[kind]})" if kind in UNIT_WORDS else "")
                        + _meant(value, kind))
    return q


#: What each kind of quantity is written in, for the error about a unit of
#: another kind.
UNIT_WORDS = {"time": "seconds, minutes or hours: s, min, h",
              "size": "bytes or bits: B, kB, MB, GB, TB, GiB, bit, Gbit",
              "bandwidth": "a size per unit of time: MB/s, GB/s, TB/s, Gbit/s",
              "jitter": "seconds or minutes: s, min",
              "power": "watts: W, kW, MW"}


def _meant(value, kind: str) -> str:
    """'; did you mean ...?' where a size or bandwidth written with a prefix
    but without its B ('840G', '40G/s') reads as one with it, else ''."""
    if not isinstance(value, str) or kind not in ("size", "bandwidth"):
        return ""
    text = value.strip()
    if not re.search(r"\d\s*[kKMGTPE]i?" + ("" if kind == "size" else r"\s*/\s*s") + "$", text):
        return ""
    guess = text + "B" if kind == "size" else text.replace("/", "B/", 1)
    try:
        q = registry().Quantity(guess)
        ok = str(registry().get_root_units(q.units)[1]) == KINDS[kind][0]
    except Exception:        # pint raises several kinds; no guess then
        ok = False
    return f"; did you mean {guess!r}?" if ok else ""


def _is_sequence(value) -> bool:
    """One value per job (even a sequence of one), rather than one for all."""
    if _is_quantity(value):
        return np.ndim(value.magnitude) > 0
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _shown(value) -> str:
    return repr(value) if isinstance(value, (str, int, float)) else f"{value:~}" \
        if _is_quantity(value) else _fmt(value)


#: Rules on values: name -> (test on magnitudes, text for the error).
_RULES = {
    "positive": (lambda a: np.isfinite(a) & (a > 0.0), "finite and > 0"),
    "nonnegative": (lambda a: np.isfinite(a) & (a >= 0.0), "finite and >= 0"),
    "fraction": (lambda a: (a >= 0.0) & (a <= 1.0), "in [0, 1]"),
}


def magnitudes(name: str, value, kind: str, unit: str, rule: str) -> np.ndarray:
    """One or several quantities -> float64 magnitudes in ``unit`` (1-d), each
    checked against ``rule`` (a key of ``_RULES``) with the value as given."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype == object):
        items = list(value)
        if not items:
            raise SpecError(f"{name} = []: a fleet needs at least one job")
        return np.array([float(magnitudes(f"{name}[{i}]", v, kind, unit, rule)[0])
                         for i, v in enumerate(items)])
    if isinstance(value, np.ndarray) and kind != "number":
        raise SpecError(f"{name} = {_fmt(value)}: plain numbers are ambiguous; give their unit, "
                        f"e.g. a pint Quantity or strings like {KINDS[kind][1]}")
    if isinstance(value, np.ndarray):
        mag = value.astype(np.float64).ravel()
    else:
        q = quantity(name, value, kind)
        with np.errstate(over="ignore"):      # 1e308 GB in bytes: inf, refused below
            mag = np.atleast_1d(np.asarray(q.to(UNITS[kind]).magnitude, dtype=np.float64)).ravel()
    bad = first_bad(mag, rule, unit)
    if bad is not None:
        i, text = bad
        shown = _shown(value) if mag.size == 1 else f"{float(mag[i])!r} {unit}"
        label = name if mag.size == 1 else f"{name}[{i}]"
        raise SpecError(f"{label} = {shown}: {text}")
    return mag


def first_bad(mag: np.ndarray, rule: str, unit: str) -> tuple[int, str] | None:
    """(index, what it breaks) of the first magnitude (in ``unit``) that breaks
    ``rule`` or lies above the unit's ceiling (CEILINGS), or None."""
    test, text = _RULES[rule]
    top, shown = CEILINGS.get(unit, (np.inf, ""))
    with np.errstate(invalid="ignore"):
        over = mag > top
    bad = np.nonzero(~test(mag) | over)[0]
    if not bad.size:
        return None
    i = int(bad[0])
    if over[i]:               # 1e308 GB is inf bytes: the ceiling's message, not "> 0"
        return i, f"must be finite and at most {shown}: not a plausible value, check its unit"
    return i, f"must be {text}"


def is_percent(value) -> bool:
    """A percentage ('2%', '2 percent', a pint Quantity in percent): a jitter
    relative to the compute interval."""
    if isinstance(value, str):
        value = value.strip()
        if not value.endswith("%") and not value.endswith("percent"):
            return False
        try:
            value = registry().Quantity(value)
        except Exception:        # pint raises several kinds; the caller reports it
            return False
    return _is_quantity(value) and str(value.units) == "percent"


def _jitter_parts(value, name: str = "jitter") -> tuple[np.ndarray, np.ndarray]:
    """A jitter (or one per job) -> (seconds, fractions of T), each 1-d, NaN
    where the other applies: times in seconds, percentages as fractions."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype == object):
        if len(value) == 0:
            raise SpecError("jitter = []: a fleet needs at least one job")
        parts = [_jitter_parts(v, f"{name}[{i}]") for i, v in enumerate(value)]
        for i, (sec, _) in enumerate(parts):
            if sec.size != 1:
                raise SpecError(f"{name}[{i}] = {_shown(value[i])}: one value per job")
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    if is_percent(value):
        q = registry().Quantity(value) if isinstance(value, str) else value
        frac = np.atleast_1d(np.asarray(q.to("dimensionless").magnitude, dtype=np.float64)).ravel()
        bad = np.nonzero(~(np.isfinite(frac) & (frac >= 0.0) & (frac <= 1.0)))[0]
        if bad.size:
            label = name if frac.size == 1 else f"{name}[{int(bad[0])}]"
            raise SpecError(f"{label} = {_shown(value) if frac.size == 1 else frac[bad[0]] * 100}"
                            ": a percentage of the compute interval must be finite and in "
                            "[0%, 100%] (a jitter above the interval clips most intervals to 0)")
        return np.full(frac.size, np.nan), frac
    sec = magnitudes(name, value, "jitter", "second", "nonnegative")
    return sec, np.full(sec.size, np.nan)


def _per_job(name: str, arr: np.ndarray, n: int) -> np.ndarray:
    if arr.size == 1:
        return np.full(n, float(arr[0]))
    if arr.size != n:
        raise SpecError(f"{name} has {arr.size} values but the fleet has {n} jobs: "
                        "give one value per job, or a single value for all")
    return arr


def _texts(name: str, value, allowed: tuple[str, ...], n: int) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    for i, v in enumerate(items):
        if v not in allowed:
            label = name if len(items) == 1 else f"{name}[{i}]"
            raise SpecError(f"{label} = {v!r}: must be one of "
                            + ", ".join(repr(a) for a in allowed))
    if len(items) == 1:
        return items * n
    if len(items) != n:
        raise SpecError(f"{name} has {len(items)} values but the fleet has {n} jobs")
    return items


def fleet_arguments(*, size, bandwidth, compute_interval=None, checkpoint_period=None,  # noqa: PLR0913 (keywords: the user surface)
                    n_jobs: int | None = None, jitter=None, cap: float = math.inf,
                    throughput="fair", checkpoint=None, snapshot=None, slowdown=None,
                    on_busy=None, weight=None, max_writers=None, mtbf=None, restart=None,
                    outage_mtbf=None, busy_power=None, idle_power=None, gpus=None,
                    gpu_power=None, gpu_idle_power=None) -> dict:
    """``Fleet`` keyword arguments from physical quantities (MODEL.md E4), in seconds.

    ``Fleet.from_jobs(**quantities)`` is ``Fleet(**fleet_arguments(**quantities))``.

    Parameters
    ----------
    size : quantity or sequence of quantities, e.g. "156 GB"
        Bytes per checkpoint, > 0.
    bandwidth : quantity, e.g. "5 TB/s"
        The fabric's aggregate bandwidth, > 0 (one value: the fabric's).
    compute_interval : quantity or sequence, e.g. "30 min"
        Compute time between checkpoints at full speed (T), > 0.
    checkpoint_period : quantity or sequence
        Instead of compute_interval: the wall-clock period of each job
        running alone (see the module notes for the conversion).
    n_jobs : int, optional
        Number of jobs when every per-job value is a single one.
    jitter : quantity or sequence, optional
        Standard deviation of each compute interval (sigma), >= 0: a time
        ("9 s") or a percentage of the job's compute interval ("1%"), at most
        the interval; default 0 (a deterministic fleet).
    cap, throughput
        As in ``Fleet`` (the cap counts full-rate jobs: no unit).
    checkpoint, snapshot, slowdown, on_busy, weight : optional
        Asynchronous checkpoints and weighted sharing (MODEL.md E1, E2),
        passed to ``Fleet`` (``weight`` as ``weights``).
    max_writers : int, optional
        The writer cap K (MODEL.md E5), an integer in 1..N: at most K
        checkpoints write at once, the others queue; None (default): no cap.
    mtbf, restart : quantity or sequence, optional
        Each job's mean time between failures (> 0) and its downtime after
        one (>= 0), MODEL.md E8; default: never fails, restart 0.
    outage_mtbf : quantity, optional
        The mean time between outages of the whole fleet (> 0); default none.
    busy_power, idle_power : quantity or sequence, optional
        Each job's draw computing at full rate and stopped (MODEL.md E6),
        e.g. "700 kW", "100 kW": both or neither (default: power off).
    gpus, gpu_power, gpu_idle_power : optional
        Instead of busy_power and idle_power: each job's accelerators (> 0)
        and one accelerator's draw computing and stopped ("700 W", "100 W");
        a job draws gpus times each. All three or none.

    Notes
    -----
    Every quantity carries its unit: a string pint reads, or a pint Quantity.
    Blocking fleets get no asynchronous keywords (all at their defaults).
    """
    interval_name = _interval_name(compute_interval, checkpoint_period)
    bw = magnitudes("bandwidth", bandwidth, "bandwidth", "byte / second", "positive")
    if bw.size != 1:
        raise SpecError(f"bandwidth has {bw.size} values: give one, the fabric's aggregate bandwidth")
    given = {"size": size, interval_name: compute_interval if compute_interval is not None
             else checkpoint_period, "jitter": jitter, "snapshot": snapshot, "slowdown": slowdown,
             "weight": weight, "mtbf": mtbf, "restart": restart, "busy_power": busy_power,
             "idle_power": idle_power, "gpus": gpus, "gpu_power": gpu_power,
             "gpu_idle_power": gpu_idle_power}
    values, jitter_share, lengths = _job_magnitudes(given, interval_name)
    for name, value in (("checkpoint", checkpoint), ("on_busy", on_busy)):
        if value is not None and not isinstance(value, str):
            if not isinstance(value, (list, tuple, np.ndarray)):
                raise SpecError(f"{name} = {value!r}: must be one of "
                                + ", ".join(map(repr, CHOICES[name])) + ", or a list with one per job")
            lengths.add(len(value))
    n = _job_count(lengths, values, n_jobs)
    v = {k: _per_job(k, a, n) for k, a in values.items()}
    d = v["size"] / bw[0]
    modes = _texts("checkpoint", checkpoint, CHOICES["checkpoint"], n) if checkpoint is not None \
        else ["blocking"] * n
    is_async = np.array([m == "async" for m in modes])
    if isinstance(cap, (bool, np.bool_)) or not isinstance(cap, Real) or not cap > 0:
        raise SpecError(f"cap = {cap!r}: must be a number > 0 (inf = uncapped)")
    if interval_name == "compute_interval":
        T = v["compute_interval"]
    else:
        T = _interval_from_period(v, d, is_async, min(1.0, float(cap)))
    sigma = 0.0
    if "jitter" in v:
        sigma = _sigma(v["jitter"], _per_job("jitter", jitter_share, n), T, values["jitter"].size)
    kwargs = dict(T=T, d=d, cap=cap, throughput=throughput, jitter=sigma)
    if checkpoint is not None and is_async.any():
        kwargs["checkpoint"] = modes     # all "blocking" is the default
    if on_busy is not None:
        kwargs["on_busy"] = _texts("on_busy", on_busy, CHOICES["on_busy"], n)
    for name in ("snapshot", "slowdown", "weight"):
        if name in v:
            kwargs[_ASYNC_FIELDS[name]] = v[name]
    kwargs.update(_failure_arguments(v, outage_mtbf))
    kwargs.update(_power_arguments(v))
    if max_writers is not None:
        kwargs["max_writers"] = check_int("max_writers", max_writers, 1, n, what=(
            f"at most this many of the N = {n} jobs write at once; None: no cap"))
    return kwargs


def _power_arguments(v: dict) -> dict:
    """Fleet's E6 keywords (W per job): busy_power and idle_power as given, or
    gpus times gpu_power and gpu_idle_power."""
    gpu = [name for name in ("gpus", *_GPU_FIELDS) if name in v]
    if not gpu:
        return {name: v[name] for name in ("busy_power", "idle_power") if name in v}
    if len(gpu) < 3:
        missing = [name for name in ("gpus", *_GPU_FIELDS) if name not in v]
        raise SpecError(f"{gpu[0]} without {' and '.join(missing)}: a job's power per "
                        "accelerator needs gpus, gpu_power and gpu_idle_power together")
    both = [name for name in ("busy_power", "idle_power") if name in v]
    if both:
        raise SpecError(f"{both[0]} and gpus: give the job's power either whole (busy_power, "
                        "idle_power) or per accelerator (gpus, gpu_power, gpu_idle_power)")
    return {whole: v["gpus"] * v[each] for each, whole in _GPU_FIELDS.items()}


def _failure_arguments(v: dict, outage_mtbf) -> dict:
    """Fleet's E8 keywords: mtbf and restart per job (seconds), outage_mtbf."""
    out = {name: v[name] for name in ("mtbf", "restart") if name in v}
    if outage_mtbf is not None:
        m0 = magnitudes("outage_mtbf", outage_mtbf, "time", "second", "positive")
        if m0.size != 1:
            raise SpecError(f"outage_mtbf has {m0.size} values: give one, the fleet's")
        out["outage_mtbf"] = float(m0[0])
    return out


def _interval_name(compute_interval, checkpoint_period) -> str:
    """Which of the two ways to give T was used: exactly one must be."""
    if (compute_interval is None) == (checkpoint_period is None):
        raise SpecError(f"compute_interval = {compute_interval!r}, checkpoint_period = "
                        f"{checkpoint_period!r}: give exactly one of compute_interval (compute "
                        "time between checkpoints at full speed) and checkpoint_period "
                        "(wall-clock period of a job alone); "
                        "got " + ("both" if compute_interval is not None else "neither"))
    return "compute_interval" if compute_interval is not None else "checkpoint_period"


def _job_magnitudes(given: dict, interval_name: str) -> tuple[dict, object, set]:
    """The per-job quantities given (name -> value or None) as magnitudes in
    the model's units: (magnitudes by name, the jitter's share of T where the
    jitter is a percentage (NaN elsewhere; None without a jitter), the lengths
    of the sequences given)."""
    values = {}
    jitter_share = None
    lengths = set()
    for name, value in given.items():
        if value is None:
            if name in ("size", interval_name):
                raise SpecError(f"{name} = None: must be {JOB_COLUMNS[name][2]}, e.g. "
                                f"{KINDS[JOB_COLUMNS[name][0]][1]}")
            continue
        kind, rule, _ = JOB_COLUMNS[name]
        if name == "jitter":                 # a time, or a percentage of T (known later)
            values[name], jitter_share = _jitter_parts(value)
        else:
            values[name] = magnitudes(name, value, kind, UNITS[kind], rule)
        if _is_sequence(value):
            lengths.add(values[name].size)       # a sequence, even of one: one value per job
    return values, jitter_share, lengths


def _job_count(lengths: set, values: dict, n_jobs) -> int:
    """N: the one length of the sequences given and n_jobs."""
    if n_jobs is not None:
        lengths.add(check_int("n_jobs", n_jobs, 1))
    if len(lengths) > 1:
        raise SpecError("per-job values have different lengths "
                        f"({', '.join(f'{k}: {v.size}' for k, v in values.items() if v.size > 1)}"
                        + (f", n_jobs: {n_jobs}" if n_jobs is not None else "")
                        + "): give one value per job, or one value for all")
    if not lengths:
        raise SpecError("every per-job value is a single one: give n_jobs, the number of jobs")
    return lengths.pop()


def _interval_from_period(v: dict, d: np.ndarray, is_async: np.ndarray, c: float) -> np.ndarray:
    """T from each job's checkpoint_period alone, at compute rate c = min(1, cap)."""
    period = v["checkpoint_period"]
    n = period.size
    s = v.get("snapshot", np.zeros(n))
    eps = v.get("slowdown", np.zeros(n))
    # lone blocking job: period = T/c + d; lone async job: s + T/c + eps d,
    # valid while its persist ends before its next checkpoint falls due
    # (c (1 - eps) d <= T); MODEL.md E1.
    T = np.where(is_async, c * (period - s - eps * d), c * (period - d))
    lone = np.where(is_async, s + eps * d, d)
    bad = np.nonzero(~(T > 0.0) | (is_async & (T < c * (1.0 - eps) * d)))[0]
    if bad.size:
        i = int(bad[0])
        what = ("the snapshot plus the slowed compute while persisting" if is_async[i]
                else "the write alone")
        raise SpecError(
            f"checkpoint_period[{i}] = {period[i]:.6g} s is too short: {what} takes "
            f"{lone[i]:.6g} s of it (write {d[i]:.6g} s = size / bandwidth)"
            + (", and the persist must end before the next checkpoint is due" if is_async[i] else "")
            + "; give a longer period, a smaller size or a faster fabric")
    return T


def _sigma(jitter: np.ndarray, share: np.ndarray, T: np.ndarray, given: int) -> np.ndarray:
    """sigma per job: the jitter in seconds, or its share of T where it is a
    percentage (share not NaN); ``given`` is how many jitter values were given."""
    sigma = np.where(np.isnan(share), jitter, share * T)
    bad = np.nonzero(sigma > T)[0]
    if bad.size:
        i = int(bad[0])
        raise SpecError(f"{'jitter' if given == 1 else f'jitter[{i}]'} = "
                        f"{sigma[i]:.6g} s is above the compute interval T = {T[i]:.6g} s: "
                        "a jitter that large clips most compute intervals to 0; give at "
                        "most the interval (100%)")
    return sigma


def seconds(unit, name: str = "unit") -> float:
    """Seconds in one ``unit`` of time: a unit ("s", "min", "h") or a pint Quantity."""
    return float(quantity(name, "1 " + unit if isinstance(unit, str) else unit,
                          "time").to("second").magnitude)


def time_seconds(name: str, value, positive: bool = False) -> float:
    """A time in seconds, >= 0 (> 0 if ``positive``) and finite: a number of
    seconds, or a time with its unit ("10 min", a pint Quantity)."""
    if isinstance(value, str) or _is_quantity(value):
        value = float(quantity(name, value, "time").to("second").magnitude)
    return check_real(name, value, 0.0, open_lo=positive,
                      what="seconds, or a time with its unit such as '10 min'")

"""Sweeps: a TOML grid -> validated, seeded cells -> units of work -> a store.

Data flows one way::

    sweep file --load_sweep--> Sweep (cells: Fleet + simulate kwargs + seed)
               --Planner-----> units: pieces (cell, fleets [a, b)); small cells packed
               --executor----> run_unit -> stormsim.simulate(..., fleet_start=a)
               --store-------> parts on disk -> one HDF5 file, assembled once

A cell is one point of the grid: a :class:`~stormsim.Fleet` and the keyword
arguments of :func:`stormsim.simulate`. Fleet j of a cell depends only on
(the cell's run seed, j), so a cell can be cut into units of fleets [a, b)
anywhere and the pieces concatenate to one big call, bit for bit: that is
what makes resume and Dask exact.

Seeding
-------
Each cell's run seed is a pure function of its resolved parameters and the
``seed`` key (see :func:`cell_seed`); it does not depend on the cell's place
in the grid, on the other cells, or on ``fleets``. Adding values to a grid
therefore leaves the existing cells' numbers unchanged, and a sweep with more
fleets per cell extends one with fewer. Two cells with the same parameters
and seed are the same experiment: vary ``seed`` for replicates.
"""
from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import threading
import time
import tomllib
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from .launch import stagger_margin, stagger_theta
from .model import Fleet, SpecError

__all__ = ["Cell", "Sweep", "SweepError", "SweepOutcome", "cell_seed", "load_sweep",
           "parse_sweep", "run_sweep", "run_unit"]

#: After a stop request, how long to wait for units already running, to keep
#: them (units last ~0.25 s locally, ~1 s on Dask): the process still exits
#: within a second of Ctrl-C or SIGTERM.
STOP_GRACE_SECONDS = 0.4

#: Version of the cell-seed derivation (part of the hashed bytes).
SEED_DOMAIN = b"stormsim.sweep.cell-seed/1\0"


class SweepError(SpecError):
    """A sweep file (or an output) that cannot be used: says where, what and why."""


# ---------------------------------------------------------------------------
# The keys of a sweep file
# ---------------------------------------------------------------------------

#: Every parameter a cell can have: [fixed] or [grid] key -> what is allowed.
PARAMS: dict[str, str] = {
    "N": "the number of jobs, an integer >= 1",
    "T": "compute work between two checkpoints (s at full rate): a number > 0, or a list "
         "with one per job",
    "d": "checkpoint volume (s writing alone): a number > 0, or a list with one per job",
    "load": "the write load L = sum_i d_i / T_i, a number > 0 (identical jobs: d = L T / N)",
    "cap": "the power cap C in full-rate jobs: a number > 0, or inf (uncapped)",
    "cap_fraction": "the power cap as a fraction of N (C = cap_fraction * N): a number > 0, "
                    "or inf (uncapped)",
    "throughput": "'fair', 'ideal', 'power:ALPHA' (or {power = ALPHA}) with ALPHA in [0, 1], "
                  "or a table [f(1), ..., f(N)]",
    "jitter": "the per-cycle compute jitter sigma (s): a number >= 0, or a list with one per job",
    "m_over_sigma": "the stagger margin over the jitter, m/sigma: a number > 0 (inf: no "
                    "jitter); sets sigma = m / (m/sigma), m = stagger_margin of the fleet",
    "launch": "'random', 'sync' or 'stagger'",
    "passage_level": "record the first passage to n_w >= k: an integer k in 1..N, or 0 "
                     "(or 'none') for no passage",
    "stop_at_passage": "true (stop each fleet at its passage: cycles is then a cap) or false",
    "fleets": "independent fleets per cell, an integer >= 1",
    "cycles": "cycles K per fleet (a cap when stopping at the passage), an integer >= 1",
    "burn_in": "cycles before the occupancy is measured, an integer in 0..cycles-1",
    "seed": "an integer >= 0; each cell's run seed derives from it and the cell's parameters",
}

DEFAULTS: dict[str, object] = {
    "T": 1.0, "throughput": "fair", "launch": "random", "passage_level": 0,
    "stop_at_passage": True, "burn_in": 0, "seed": 0,
}

#: [sweep] table: key -> what is allowed.
SWEEP_KEYS: dict[str, str] = {
    "name": "a string naming the sweep (default: the file's name)",
    "description": "a string",
    "occupancy": "'fleet' (store each fleet's occupancy, the default) or 'sum' (store only "
                 "its exact sum over the cell's fleets)",
}

TABLES = {"sweep": "options of the sweep", "fixed": "parameters shared by every cell",
          "grid": "parameters to vary: each a list of values; cells are every combination"}

#: Common misspellings -> the key meant.
_HINTS = {"sigma": "jitter", "L": "load", "C": "cap", "K": "cycles", "n": "N", "n_jobs": "N",
          "jobs": "N", "m/sigma": "m_over_sigma", "margin_over_sigma": "m_over_sigma",
          "level": "passage_level", "passage": "passage_level", "f": "throughput",
          "n_fleets": "fleets", "burnin": "burn_in", "B": "burn_in", "theta": "launch"}

OCCUPANCY_MODES = ("fleet", "sum")
LAUNCHES = ("random", "sync", "stagger")


def _toml(value) -> str:
    """A value as it would be written in TOML (for error messages)."""
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
        text = "[" + ", ".join(_toml(v) for v in value) + "]"
        return text if len(text) <= 80 else text[:77] + "...]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


class _Bad(Exception):
    """A value breaks its key's rule; the message says what is allowed."""


def _unknown(key: str, allowed) -> str:
    allowed = list(allowed)
    hint = _HINTS.get(key) if _HINTS.get(key) in allowed else None
    if hint is None:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = close[0] if close else None
    did = f" (did you mean {hint!r}?)" if hint else ""
    return f"unknown key{did}; allowed keys: {', '.join(allowed)}"


# -- per-key value checks: return the normalized value or raise _Bad ----------

def _is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def _positive(v, *, allow_inf=False) -> float:
    if not _is_num(v):
        raise _Bad("must be a number")
    v = float(v)
    if math.isnan(v) or v <= 0.0 or (math.isinf(v) and not allow_inf):
        raise _Bad("must be " + ("> 0 (inf allowed)" if allow_inf else "finite and > 0"))
    return v


def _per_job(v, *, lo_ok_zero: bool):
    rule = ">= 0" if lo_ok_zero else "> 0"
    items = v if isinstance(v, list) else [v]
    if isinstance(v, list) and not v:
        raise _Bad("an empty list: give one value per job")
    out = []
    for x in items:
        if not _is_num(x):
            raise _Bad(f"must be a number, or a list of numbers (one per job); found {_toml(x)}")
        x = float(x)
        if not math.isfinite(x) or x < 0.0 or (x == 0.0 and not lo_ok_zero):
            raise _Bad(f"every value must be finite and {rule}; found {_toml(x)}")
        out.append(x)
    return tuple(out) if isinstance(v, list) else out[0]


def _check_value(key: str, v):
    if key == "N":
        if not _is_int(v) or v < 1:
            raise _Bad("must be an integer >= 1")
        return int(v)
    if key in ("T", "d"):
        return _per_job(v, lo_ok_zero=False)
    if key == "jitter":
        return _per_job(v, lo_ok_zero=True)
    if key == "load":
        return _positive(v)
    if key in ("cap", "cap_fraction"):
        if isinstance(v, str) and v.strip().lower() in ("inf", "infinity", "none"):
            return math.inf
        return _positive(v, allow_inf=True)
    if key == "m_over_sigma":
        return _positive(v, allow_inf=True)
    if key == "throughput":
        return _throughput(v)
    if key == "launch":
        if v not in LAUNCHES:
            raise _Bad("must be one of " + ", ".join(repr(x) for x in LAUNCHES))
        return v
    if key == "passage_level":
        if isinstance(v, str) and v.strip().lower() == "none":
            return 0
        if not _is_int(v) or v < 0:
            raise _Bad("must be an integer >= 1 (the level k), or 0 / 'none' for no passage")
        return int(v)
    if key == "stop_at_passage":
        if not isinstance(v, bool):
            raise _Bad("must be true or false")
        return v
    if key in ("fleets", "cycles"):
        if not _is_int(v) or v < 1:
            raise _Bad("must be an integer >= 1")
        return int(v)
    if key in ("burn_in", "seed"):
        if not _is_int(v) or v < 0:
            raise _Bad("must be an integer >= 0")
        if key == "seed" and v >= 2**63:
            raise _Bad("must be < 2**63")
        return int(v)
    raise AssertionError(key)  # pragma: no cover


def _throughput(v):
    """-> the canonical label: 'fair', 'ideal', 'power:ALPHA' or a tuple table."""
    alpha = None
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("fair", "ideal"):
            return s
        if s.startswith("power:"):
            try:
                alpha = float(s.split(":", 1)[1])
            except ValueError:
                raise _Bad("power needs a number: 'power:0.5'") from None
        else:
            raise _Bad("must be 'fair', 'ideal', 'power:ALPHA' (ALPHA in [0, 1]), "
                       "{power = ALPHA} or a table [f(1), ..., f(N)]")
    elif isinstance(v, dict):
        if set(v) != {"power"} or not _is_num(v["power"]):
            raise _Bad("an inline table must be {power = ALPHA} with ALPHA a number in [0, 1]")
        alpha = float(v["power"])
    elif isinstance(v, list):
        if not v or not all(_is_num(x) for x in v):
            raise _Bad("a table must list f(1), ..., f(N) as numbers")
        return tuple(float(x) for x in v)
    else:
        raise _Bad("must be 'fair', 'ideal', 'power:ALPHA', {power = ALPHA} or a table")
    if not 0.0 <= alpha <= 1.0:
        raise _Bad(f"power ALPHA = {alpha!r} must be in [0, 1]")
    return f"power:{alpha!r}"


def _fleet_throughput(label):
    if isinstance(label, tuple):
        return label
    if label.startswith("power:"):
        return ("power", float(label.split(":", 1)[1]))
    return label


def _throughput_label(label) -> str:
    return "table" if isinstance(label, tuple) else label


# ---------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------

def _hexlist(a) -> list[str]:
    return [float(x).hex() for x in np.asarray(a, dtype=np.float64).ravel()]


def cell_seed(fleet: Fleet, *, launch: str, cycles: int, burn_in: int,
              passage_level: int | None, stop_at_passage: bool, seed: int) -> int:
    """The run seed of a cell: a pure function of what is simulated.

    ``run_seed = int.from_bytes(sha256(SEED_DOMAIN + canonical)[:8], "big") >> 1``
    where ``canonical`` is the compact, key-sorted JSON of the fleet (N, T, d,
    cap, f(0..N), sigma as float.hex strings), launch, cycles, burn_in,
    passage_level (0 = none), stop_at_passage and the user's ``seed``. It is
    a 63-bit integer, passed to ``stormsim.simulate(seed=...)``. ``fleets`` is
    not part of it: more fleets extend a cell, they do not change its first ones.
    """
    canon = {
        "N": fleet.n_jobs, "T": _hexlist(fleet.T), "d": _hexlist(fleet.d),
        "cap": float(fleet.cap).hex(), "f": _hexlist(fleet.f), "sigma": _hexlist(fleet.jitter),
        "launch": launch, "cycles": int(cycles), "burn_in": int(burn_in),
        "passage_level": int(passage_level or 0), "stop_at_passage": bool(stop_at_passage),
        "seed": int(seed),
    }
    blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
    return int.from_bytes(hashlib.sha256(SEED_DOMAIN + blob).digest()[:8], "big") >> 1


@dataclass(frozen=True, eq=False)
class Cell:
    """One point of a sweep: a fleet, the simulate keyword arguments, a seed.

    ``stormsim.simulate(cell.fleet, fleets=cell.fleets, **cell.simulate_kwargs())``
    reproduces the cell's stored arrays bit for bit.
    """

    index: int
    fleet: Fleet
    launch: str
    fleets: int
    cycles: int
    burn_in: int
    passage_level: int | None
    stop_at_passage: bool
    seed: int
    run_seed: int
    values: dict = field(repr=False)      # the user-facing parameters (given or derived)

    @property
    def n_jobs(self) -> int:
        return self.fleet.n_jobs

    def simulate_kwargs(self) -> dict:
        return dict(launch=self.launch, cycles=self.cycles, seed=self.run_seed,
                    passage_level=self.passage_level, burn_in=self.burn_in,
                    stop_at_passage=self.stop_at_passage)

    def identity(self) -> dict:
        """What is simulated, exactly (floats as hex): hashed into the sweep's identity."""
        f = self.fleet
        return {"N": f.n_jobs, "T": _hexlist(f.T), "d": _hexlist(f.d),
                "cap": float(f.cap).hex(), "f": _hexlist(f.f), "sigma": _hexlist(f.jitter),
                "launch": self.launch, "fleets": self.fleets, "cycles": self.cycles,
                "burn_in": self.burn_in, "passage_level": self.passage_level or 0,
                "stop_at_passage": self.stop_at_passage, "seed": self.seed,
                "run_seed": self.run_seed}


#: Columns of the parameter table, in order, with their numpy dtype.
COLUMNS: dict[str, object] = {
    "N": np.int64, "T": np.float64, "d": np.float64, "load": np.float64, "cap": np.float64,
    "cap_fraction": np.float64, "throughput": str, "jitter": np.float64,
    "margin": np.float64, "m_over_sigma": np.float64, "launch": str,
    "passage_level": np.int64, "stop_at_passage": np.bool_, "fleets": np.int64,
    "cycles": np.int64, "burn_in": np.int64, "seed": np.int64, "run_seed": np.int64,
}


def _resolve_cell(index: int, v: dict) -> Cell:
    """Values of every key (given or default) -> a validated Cell, or raise _Bad."""
    for key in ("N", "fleets", "cycles"):
        if key not in v:
            raise _Bad(f"missing key {key!r}: give it in [fixed] or [grid] ({PARAMS[key]})")
    n = v["N"]
    if ("load" in v) == ("d" in v):
        raise _Bad("give exactly one of 'load' and 'd' (in [fixed] or [grid]); got "
                   + ("both" if "load" in v else "neither"))
    if "cap" in v and "cap_fraction" in v:
        raise _Bad("give at most one of 'cap' and 'cap_fraction'")
    if "jitter" in v and "m_over_sigma" in v:
        raise _Bad("give at most one of 'jitter' and 'm_over_sigma'")

    def per_job(key):
        x = v[key]
        if isinstance(x, tuple):
            if len(x) != n:
                raise _Bad(f"{key} = {_toml(list(x))} has {len(x)} values but N = {n}: "
                           "give one per job, or a single number")
            return np.array(x)
        return np.full(n, float(x))

    T = per_job("T")
    d = v["load"] * T / n if "load" in v else per_job("d")
    cap = v["cap_fraction"] * n if "cap_fraction" in v else v.get("cap", math.inf)
    thr = v["throughput"]
    if isinstance(thr, tuple) and len(thr) != n:
        raise _Bad(f"throughput table has {len(thr)} values but N = {n}: give f(1), ..., f(N)")
    try:
        base = Fleet(T=T, d=d, cap=cap, throughput=_fleet_throughput(thr), jitter=0.0)
        margin = math.nan
        if base.is_identical:
            try:
                margin = stagger_margin(base)
            except SpecError as exc:
                if "m_over_sigma" in v:
                    raise _Bad(f"m_over_sigma needs a stagger margin m, and here {exc}") from None
        elif "m_over_sigma" in v:
            raise _Bad("m_over_sigma needs identical jobs (one T and d); give jitter instead")
        if "m_over_sigma" in v:
            if not margin > 0.0:
                raise _Bad(f"the stagger margin is m = {float(margin)!r} here, so m_over_sigma cannot "
                           "set the jitter; give jitter instead")
            sigma = margin / v["m_over_sigma"]
        else:
            sigma = per_job("jitter") if "jitter" in v else 0.0
        fleet = Fleet(T=T, d=d, cap=cap, throughput=_fleet_throughput(thr), jitter=sigma)
        if v["launch"] == "stagger":
            if not fleet.is_identical:
                # (launch.py's message suggests explicit phases, which a sweep
                # file cannot give)
                differ = [k for k, a in (("T", fleet.T), ("d", fleet.d), ("jitter", fleet.jitter))
                          if not np.all(a == a[0])]
                raise _Bad("launch = 'stagger' needs identical jobs (one T, d and jitter), but "
                           f"{' and '.join(differ)} differ{'s' if len(differ) == 1 else ''} "
                           "between jobs here; a sweep file has no explicit phases: give one "
                           "value each, or use launch = 'random' or 'sync'")
            stagger_theta(fleet)  # raises when no stagger can be placed
    except SpecError as exc:
        raise _Bad(str(exc)) from None
    level = v["passage_level"]
    if level > n:
        raise _Bad(f"passage_level = {level} is above N = {n}: must be in 1..N, or 0 for none")
    if v["burn_in"] >= v["cycles"]:
        raise _Bad(f"burn_in = {v['burn_in']} must be below cycles = {v['cycles']}")
    level = level or None
    run_seed = cell_seed(fleet, launch=v["launch"], cycles=v["cycles"], burn_in=v["burn_in"],
                         passage_level=level, stop_at_passage=v["stop_at_passage"],
                         seed=v["seed"])
    sig = fleet.jitter
    values = {
        "N": n,
        "T": float(T[0]) if np.all(T == T[0]) else math.nan,
        "d": float(fleet.d[0]) if np.all(fleet.d == fleet.d[0]) else math.nan,
        "load": v["load"] if "load" in v else fleet.load,
        "cap": fleet.cap,
        "cap_fraction": v["cap_fraction"] if "cap_fraction" in v else fleet.cap / n,
        "throughput": _throughput_label(thr),
        "jitter": float(sig[0]) if np.all(sig == sig[0]) else math.nan,
        "margin": margin,
        "m_over_sigma": (v["m_over_sigma"] if "m_over_sigma" in v
                         else (math.nan if not margin >= 0.0 or not np.all(sig == sig[0])
                               else (math.inf if sig[0] == 0.0 else margin / float(sig[0])))),
        "launch": v["launch"], "passage_level": level or 0,
        "stop_at_passage": v["stop_at_passage"], "fleets": v["fleets"], "cycles": v["cycles"],
        "burn_in": v["burn_in"], "seed": v["seed"], "run_seed": run_seed,
    }
    return Cell(index=index, fleet=fleet, launch=v["launch"], fleets=v["fleets"],
                cycles=v["cycles"], burn_in=v["burn_in"], passage_level=level,
                stop_at_passage=v["stop_at_passage"], seed=v["seed"], run_seed=run_seed,
                values=values)


# ---------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Sweep:
    """A validated sweep: every cell resolved, seeded and ready to run.

    Attributes
    ----------
    cells : list of Cell, in grid order (the last [grid] key varies fastest)
    grid : dict key -> list of values, as given (file order)
    fixed : dict key -> value, as given
    name, description : str
    occupancy : "fleet" | "sum"
    text : the sweep file's text (stored in the output)
    source : where it came from (for messages)
    hash : hex sha256 of what is simulated (cells and occupancy mode): the
        sweep's identity. Comments, key order and the name do not change it.
    """

    cells: list
    grid: dict
    fixed: dict
    name: str
    description: str
    occupancy: str
    text: str
    source: str
    hash: str

    @property
    def grid_keys(self) -> list[str]:
        return list(self.grid)

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def total_fleets(self) -> int:
        return sum(c.fleets for c in self.cells)

    def columns(self) -> dict[str, np.ndarray]:
        """The parameter table: key -> array (n_cells,), see COLUMNS."""
        out = {}
        for key, dtype in COLUMNS.items():
            vals = [c.values[key] for c in self.cells]
            out[key] = np.array(vals, dtype=object if dtype is str else dtype)
            if dtype is str:
                out[key] = out[key].astype(str)
        return out


def parse_sweep(text: str, source: str = "<sweep>") -> Sweep:
    """Validate a sweep file's text; raise SweepError naming key, value and rule."""
    def fail(msg):
        raise SweepError(f"{source}: {msg}") from None

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        fail(f"not valid TOML: {exc}")
    for key, val in doc.items():
        if key not in TABLES:
            if key in PARAMS:
                fail(f"{key} = {_toml(val)} is outside any table: put it under [fixed] "
                     "(same for every cell) or [grid] (a list of values to vary)")
            fail(f"[{key}]: unknown table; allowed tables: "
                 + ", ".join(f"[{t}] ({d})" for t, d in TABLES.items()))
        if not isinstance(val, dict):
            fail(f"{key} = {_toml(val)}: must be a table [{key}]")
    opts = doc.get("sweep", {})
    for key, val in opts.items():
        if key not in SWEEP_KEYS:
            fail(f"[sweep] {key} = {_toml(val)}: {_unknown(key, SWEEP_KEYS)}")
        if not isinstance(val, str):
            fail(f"[sweep] {key} = {_toml(val)}: must be {SWEEP_KEYS[key]}")
    occupancy = opts.get("occupancy", "fleet")
    if occupancy not in OCCUPANCY_MODES:
        fail(f"[sweep] occupancy = {_toml(occupancy)}: must be {SWEEP_KEYS['occupancy']}")
    name = opts.get("name") or (Path(source).stem if source != "<sweep>" else "sweep")

    fixed_in, grid_in = doc.get("fixed", {}), doc.get("grid", {})
    fixed, grid = {}, {}
    for key, val in fixed_in.items():
        if key not in PARAMS:
            fail(f"[fixed] {key} = {_toml(val)}: {_unknown(key, PARAMS)}")
        try:
            fixed[key] = _check_value(key, val)
        except _Bad as exc:
            fail(f"[fixed] {key} = {_toml(val)}: {exc}; {key} is {PARAMS[key]}")
    for key, vals in grid_in.items():
        if key not in PARAMS:
            fail(f"[grid] {key} = {_toml(vals)}: {_unknown(key, PARAMS)}")
        if key in fixed:
            fail(f"{key} is in both [fixed] and [grid]: keep one")
        if not isinstance(vals, list) or not vals:
            fail(f"[grid] {key} = {_toml(vals)}: a grid key takes a non-empty list of values, "
                 f"e.g. {key} = [a, b]; {key} is {PARAMS[key]}")
        out, seen = [], {}
        for i, val in enumerate(vals):
            try:
                norm = _check_value(key, val)
            except _Bad as exc:
                fail(f"[grid] {key}[{i}] = {_toml(val)}: {exc}; {key} is {PARAMS[key]}")
            if repr(norm) in seen:
                fail(f"[grid] {key} lists {_toml(val)} twice (positions {seen[repr(norm)]} "
                     f"and {i}): the cells would repeat; vary seed for replicates")
            seen[repr(norm)] = i
            out.append(norm)
        grid[key] = out

    cells = []
    keys = list(grid)
    for index, combo in enumerate(itertools.product(*(grid[k] for k in keys))):
        values = {**DEFAULTS, **fixed, **dict(zip(keys, combo))}
        try:
            cells.append(_resolve_cell(index, values))
        except _Bad as exc:
            where = ", ".join(f"{k} = {_toml(list(v) if isinstance(v, tuple) else v)}"
                              for k, v in zip(keys, combo))
            fail(f"cell {index}" + (f" ({where})" if where else "") + f": {exc}")
    ident = {"format": 1, "occupancy": occupancy, "cells": [c.identity() for c in cells]}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":"))
                            .encode()).hexdigest()
    return Sweep(cells=cells, grid={k: grid_in[k] for k in keys}, fixed=dict(fixed_in), name=name, description=opts.get("description", ""),
                 occupancy=occupancy, text=text, source=source, hash=digest)


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file (TOML); see docs/FORMAT.md and README "Sweeps"."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"{p}: no such sweep file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{p}: cannot read the sweep file: {exc}") from None
    return parse_sweep(text, str(p))


# ---------------------------------------------------------------------------
# Units of work
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PieceTask:
    """Fleets [start, stop) of one cell, with everything needed to run them."""

    cell: int
    start: int
    stop: int
    T: tuple
    d: tuple
    sigma: tuple
    cap: float
    throughput: object
    launch: str
    cycles: int
    burn_in: int
    passage_level: int | None
    stop_at_passage: bool
    run_seed: int
    cell_fleets: int = 0      # the cell's fleets: fixes its blocks (stormsim.tails)


@dataclass(frozen=True)
class UnitTask:
    """A unit of work: one or more pieces (a big cell is cut into several
    units; small cells are packed several to a unit). Plain, picklable data."""

    sweep_hash: str
    pieces: tuple
    keep_occupancy: bool
    threads: int | None = None

    @property
    def fleets(self) -> int:
        return sum(p.stop - p.start for p in self.pieces)

    @property
    def key(self) -> str:
        p = self.pieces[0]
        return f"stormsim-unit-{self.sweep_hash[:12]}-c{p.cell}-{p.start}"


def make_piece(sweep: Sweep, cell: int, start: int, stop: int) -> PieceTask:
    c = sweep.cells[cell]
    f = c.fleet
    return PieceTask(cell=cell, start=start, stop=stop, T=tuple(f.T.tolist()),
                     d=tuple(f.d.tolist()), sigma=tuple(f.jitter.tolist()), cap=f.cap,
                     throughput=f.throughput, launch=c.launch, cycles=c.cycles,
                     burn_in=c.burn_in, passage_level=c.passage_level,
                     stop_at_passage=c.stop_at_passage, run_seed=c.run_seed,
                     cell_fleets=c.fleets)


def make_task(sweep: Sweep, cell: int, start: int, stop: int, threads=None) -> UnitTask:
    """A unit of a single piece: fleets [start, stop) of one cell."""
    return UnitTask(sweep_hash=sweep.hash, pieces=(make_piece(sweep, cell, start, stop),),
                    keep_occupancy=sweep.occupancy == "fleet", threads=threads)


_layer_lock = threading.Lock()
_layer_safe: bool | None = None


def threadsafe_layer() -> bool:
    """Whether numba's threading layer lets several threads run parallel
    kernels at once: 'tbb' and 'omp' do; 'workqueue' aborts the process."""
    import numba

    layer = str(numba.config.THREADING_LAYER)
    if layer in ("tbb", "omp", "threadsafe"):
        return True
    if layer == "workqueue":
        return False
    for mod in ("tbbpool", "omppool"):
        try:
            __import__(f"numba.np.ufunc.{mod}")
            return True
        except ImportError:
            continue
    return False


def _simulate_threadsafe(fleet, **kw):
    """simulate(), serialized if numba's layer is not thread-safe (a threaded
    Dask worker, or the local thread pool, could run two at once)."""
    global _layer_safe
    from .engine import simulate

    if _layer_safe is None:
        _layer_safe = threadsafe_layer()
    if _layer_safe:
        return simulate(fleet, **kw)
    with _layer_lock:  # pragma: no cover - depends on the machine's numba
        return simulate(fleet, **kw)


def run_unit(task: UnitTask) -> list:
    """Run one unit: a pure function of the task (seeds, fleet ranges, parameters).

    Returns one :class:`stormsim.store.Part` per piece, in order.
    """
    from .store import Part, exact_column_sums
    from .tails import block_sums_exact

    out = []
    for p in task.pieces:
        t0 = time.perf_counter()
        fleet = Fleet(T=list(p.T), d=list(p.d), cap=p.cap, throughput=p.throughput,
                      jitter=list(p.sigma))
        n = p.stop - p.start
        run = _simulate_threadsafe(
            fleet, launch=p.launch, fleets=n, cycles=p.cycles, seed=p.run_seed,
            passage_level=p.passage_level, burn_in=p.burn_in,
            stop_at_passage=p.stop_at_passage, fleet_start=p.start, batch_size=n,
            threads=task.threads)
        if p.passage_level is not None and p.stop_at_passage:
            fc = int(np.where(run.passage_cycle >= 0, run.passage_cycle, p.cycles).sum())
        else:
            fc = n * p.cycles
        out.append(Part(cell=p.cell, start=p.start, stop=p.stop, sweep_hash=task.sweep_hash,
                        run_seed=p.run_seed, passage_time=run.passage_time,
                        passage_cycle=run.passage_cycle, end_time=run.end_time,
                        events=run.events,
                        occupancy=run.occupancy if task.keep_occupancy else None,
                        occupancy_exact=tuple(exact_column_sums(run.occupancy)),
                        occupancy_blocks=() if task.keep_occupancy else block_sums_exact(
                            run.occupancy, p.start, p.cell_fleets, exact_column_sums),
                        seconds=time.perf_counter() - t0, fleet_cycles=fc))
    return out


def _gaps(done: list, total: int) -> list:
    out, pos = [], 0
    for a, b in sorted(done):
        if a > pos:
            out.append((pos, a))
        pos = max(pos, b)
    if pos < total:
        out.append((pos, total))
    return out


class Planner:
    """Cuts the fleets not yet done into units of about ``target_seconds``.

    Unit boundaries never change a result (fleet j depends on (seed, j) only),
    so the planner sizes units from measured speed: a cell's fleets are first
    estimated pessimistically (``assumed_rate`` job-cycles per second against
    N x cycles per fleet, an upper bound of the work), then from that cell's
    measured seconds per fleet, growing at most ``growth`` times per unit. Small
    cells are packed several to a unit (at most ``max_pieces``). A unit never
    holds more than ``max_fleets`` fleets of a cell or about ``max_bytes`` of
    results: memory stays bounded by one unit, whatever the number of cells.
    """

    def __init__(self, sweep: Sweep, done: dict, target_seconds: float = 0.25,
                 assumed_rate: float = 1e6, growth: float = 4.0, max_fleets: int = 4096,
                 max_bytes: int = 32 << 20, max_pieces: int = 64, threads: int | None = None):
        self.sweep = sweep
        self.target = float(target_seconds)
        self.assumed_rate = float(assumed_rate)
        self.growth = growth
        self.max_fleets = max_fleets
        self.max_bytes = max_bytes
        self.max_pieces = max_pieces
        self.threads = threads
        self.queue = []
        for c in sweep.cells:
            for a, b in _gaps(done.get(c.index, []), c.fleets):
                self.queue.append([c.index, a, b])
        self.queue.reverse()                  # pop() from the end = cell order
        self.per_fleet: dict[int, float] = {}  # cell -> measured seconds per fleet
        self.last: dict[int, int] = {}         # cell -> size of its last piece

    @property
    def remaining(self) -> int:
        return sum(b - a for _, a, b in self.queue)

    def _seconds_per_fleet(self, cell: int) -> float:
        if cell in self.per_fleet:
            return max(self.per_fleet[cell], 1e-9)
        c = self.sweep.cells[cell]
        return c.n_jobs * c.cycles / self.assumed_rate

    def _bytes_per_fleet(self, cell: int) -> int:
        return 8 * (self.sweep.cells[cell].n_jobs + 1) * 2 + 64

    def next(self) -> UnitTask | None:
        pieces, budget, room = [], self.target, self.max_bytes
        while self.queue and len(pieces) < self.max_pieces:
            item = self.queue[-1]
            cell, a, b = item
            per = self._seconds_per_fleet(cell)
            n = budget / per
            if cell in self.per_fleet:
                n = min(n, self.growth * self.last.get(cell, 1))
            n = min(n, self.max_fleets, room // self._bytes_per_fleet(cell), b - a)
            if n < 1:
                if pieces:
                    break
                n = 1                         # a unit always makes progress
            n = int(n)
            pieces.append(make_piece(self.sweep, cell, a, a + n))
            self.last[cell] = n
            budget -= n * per
            room -= n * self._bytes_per_fleet(cell)
            if a + n < b:
                item[1] = a + n
                break                         # this cell fills the unit
            self.queue.pop()
        if not pieces:
            return None
        return UnitTask(sweep_hash=self.sweep.hash, pieces=tuple(pieces),
                        keep_occupancy=self.sweep.occupancy == "fleet", threads=self.threads)

    def feedback(self, parts) -> None:
        for part in parts:
            rate = part.seconds / (part.stop - part.start)
            old = self.per_fleet.get(part.cell)
            self.per_fleet[part.cell] = rate if old is None else 0.5 * (old + rate)


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

@dataclass
class SweepOutcome:
    """What ``run_sweep`` did.

    status : "complete" (finished now), "already complete" (nothing to do)
        or "interrupted" (stopped on request; finished units are kept)
    """

    status: str
    output: str
    n_cells: int
    cells_done: int
    fleets_total: int
    fleets_done: int
    fleets_before: int = 0
    fleets_run: int = 0
    fleet_cycles: int = 0
    seconds: float = 0.0
    version: str = ""
    executor: str = ""


def _executor_from(spec):
    from .executors import DaskExecutor, Executor, LocalExecutor

    if spec is None:
        return LocalExecutor()
    if isinstance(spec, Executor):
        return spec
    if isinstance(spec, str):
        return DaskExecutor(spec)
    if type(spec).__name__ == "Client":
        return DaskExecutor(spec)
    raise SweepError(f"executor = {spec!r}: must be None (local), a stormsim executor, "
                     "a dask.distributed Client, 'local:W' or a scheduler address")


def run_sweep(sweep, output, *, executor=None, overwrite: bool = False,
              progress: str = "auto", stop: threading.Event | None = None,
              stream=None) -> SweepOutcome:
    """Run a sweep into an output, resuming whatever is already done.

    Parameters
    ----------
    sweep : Sweep, or the path of a sweep file
    output : path of the HDF5 result, or a store (``MemoryStore``, ``HDF5Store``)
    executor : None (local, this process), ``LocalExecutor``, ``DaskExecutor``,
        a ``dask.distributed.Client``, ``"local:W"`` (a LocalCluster of W
        workers) or a scheduler address
    overwrite : discard an existing output (a finished result or finished
        units) instead of refusing a different sweep or resuming this one
    progress : "auto" (a bar on a terminal, else lines), "bar", "lines" or "none"
    stop : set it (e.g. from a signal handler) to stop at the next unit
        boundary; finished units are kept and the outcome is "interrupted"
    stream : where progress goes (default sys.stderr)

    The sweep file is validated, and an output from another sweep refused,
    before any output is created or touched.
    """
    from . import __version__
    from .progress import Progress
    from .store import HDF5Store, Store

    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    ex = _executor_from(executor)       # validates the spec; connects nothing yet
    store = output if isinstance(output, Store) else HDF5Store(output)
    state = store.open(sweep, overwrite=overwrite)
    try:
        done = {c.index: sum(b - a for a, b in state.done.get(c.index, [])) for c in sweep.cells}
        fleets_before = sum(done.values())
        if state.complete:
            return SweepOutcome("already complete", store.location, sweep.n_cells,
                                sweep.n_cells, sweep.total_fleets, sweep.total_fleets,
                                fleets_before=sweep.total_fleets, version=state.version)
        out = SweepOutcome("complete", store.location, sweep.n_cells,
                           sum(done[c.index] == c.fleets for c in sweep.cells),
                           sweep.total_fleets, fleets_before, fleets_before=fleets_before,
                           version=__version__)
        t0 = time.perf_counter()
        prog = Progress(progress, total_cells=sweep.n_cells, total_fleets=sweep.total_fleets,
                        cells_done=out.cells_done, fleets_done=fleets_before, stream=stream)

        def keep(parts):
            store.commit(parts)
            for part in parts:
                n = part.stop - part.start
                done[part.cell] += n
                out.fleets_done += n
                out.fleets_run += n
                out.fleet_cycles += part.fleet_cycles
                if done[part.cell] == sweep.cells[part.cell].fleets:
                    out.cells_done += 1
                prog.update(n, part.fleet_cycles, out.cells_done)

        try:
            planner = Planner(sweep, state.done, target_seconds=ex.target_seconds,
                              threads=ex.task_threads)
            if planner.remaining:             # else only the assembly is left to do
                ex.start()
                out.executor = ex.describe()
                prog.describe(out.executor)
            in_flight = 0
            while True:
                while in_flight < ex.slots and not (stop is not None and stop.is_set()):
                    task = planner.next()
                    if task is None:
                        break
                    ex.submit(run_unit, task)
                    in_flight += 1
                if in_flight == 0:
                    break
                for parts in ex.poll(timeout=0.1):
                    in_flight -= 1
                    keep(parts)
                    planner.feedback(parts)
                if stop is not None and stop.is_set():
                    # keep the units that finish within a short grace; drop the rest
                    deadline = time.monotonic() + STOP_GRACE_SECONDS
                    while in_flight and time.monotonic() < deadline:
                        for parts in ex.poll(timeout=min(0.05, deadline - time.monotonic())):
                            in_flight -= 1
                            keep(parts)
                    break
            if in_flight or planner.remaining:
                out.status = "interrupted"
        finally:
            ex.cancel()
            prog.close()
        if out.status == "complete":
            store.finish()
        out.seconds = time.perf_counter() - t0
        return out
    finally:
        try:
            ex.close()
        finally:
            store.close()

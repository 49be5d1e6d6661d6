"""The sweep file: its keys (one table), its grammar, and the seeded cells it resolves to.

    sweep file (TOML) --parse_sweep--> Sweep (cells: Fleet + simulate kwargs + run seed)

A cell is one point of the grid: a :class:`~stormsim.Fleet` and the keyword
arguments of :func:`stormsim.simulate`. Fleet j of a cell depends only on
(the cell's run seed, j), so a cell can be cut into units of fleets [a, b)
anywhere and the pieces concatenate to one big call, bit for bit.

Seeding
-------
Each cell's run seed is a pure function of its resolved parameters and the
``seed`` key (see :func:`cell_seed`); it does not depend on the cell's place
in the grid, on the other cells, or on ``fleets``. Adding values to a grid
therefore leaves the existing cells' numbers unchanged, and a sweep with more
fleets per cell extends one with fewer.

How to add a key
----------------
Add one :class:`Key` to :data:`KEYS`, in ``stormsim._keys`` (its place there is its
place in error messages and in the parameter table), and nothing else:

- ``doc``: what is allowed, as a sentence fragment ("an integer >= 1");
- ``check``: raw TOML value -> normalized value, raising :class:`Bad` with the
  rule broken (reuse those of ``stormsim._checks``: ``int_at_least``, ``positive``, ``one_of``, ...);
- ``default``: the value when the key is not given (``REQUIRED``: the file must
  give it; ``ABSENT``: not given means something, decided in ``_resolve_cell``);
- ``dtype``: its column in the parameter table (``None``: no column), and
  ``units``, ``long_name``: that column's attributes in results (HDF5, xarray);
- ``aliases``: names people type for it, answered with "did you mean";
- ``seed``: how it enters the run seed (:data:`SEED_ROLES`). A new key MUST
  be ``"unless-default"`` (or ``"no"`` if it changes nothing simulated, or
  ``"identity"`` if it changes the digits but not the draws):
  at its default it is left out of the seed's canonical bytes, so every
  existing sweep keeps its run seeds, its identity and its numbers (a Fleet
  option is ``"fleet"``: ``Fleet.canonical`` leaves it out at its default).

Then pass it to the kernel: ``Cell.simulate_kwargs`` and the piece of a unit
(``stormsim.work.Piece``) take the values of every key whose ``kwarg`` is set.
"""
from __future__ import annotations

import hashlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .checks import Bad
from .._format import fmt_toml
from .grid import Outline, read_text
from .keys import (ABSENT, COLUMNS, DEFAULTS, KEY, KEYS, OCCUPANCY_MODES, PARAMS, REFUSED_KEYS,
                    REQUIRED, RISK_DEFAULTS, RISK_KEYS, SEED_DOMAIN, SWEEP_KEYS, TABLES, Key,
                    unknown_key)
from . import jobtable as _jobtable
from ..engine.run import fast_forward_applies
from ..errors import SpecError, SweepError
from ..engine.launch import stagger_margin, stagger_theta
from ..engine.model import Fleet, throughput_label
from ..risk.splitting import check_splittable
from ..stats.tails import tail_level

__all__ = ["ABSENT", "KEYS", "REQUIRED", "SEED_DOMAIN", "Bad", "Cell", "Key", "Sweep", "cell_seed",
           "load_outline", "load_sweep", "parse_sweep", "read_sweep", "resolve_cell"]

# -- seeding ---------------------------------------------------------------------

def _canon(v):
    """A key's value in the seed's canonical JSON: floats exactly, as hex."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v).hex()
    if isinstance(v, (tuple, list)):
        return [_canon(x) for x in v]
    return v


fleet_canon = Fleet.canonical  # the one canonical encoding of a fleet


def seed_canon(fleet: Fleet, values: dict) -> dict:
    """What a run seed hashes: the fleet's encoding and the seeded keys' values."""
    canon = fleet_canon(fleet)
    for k in KEYS:
        if k.seed == "always":
            canon[k.name] = _canon(values[k.name])
        elif k.seed == "unless-default" and values.get(k.name, k.default) != k.default:
            canon[k.name] = _canon(values[k.name])
    return canon


def cell_seed(fleet: Fleet, **values) -> int:
    """The run seed of a cell: a pure function of what is simulated.

    ``run_seed = int.from_bytes(sha256(SEED_DOMAIN + canonical)[:8], "big") >> 1``
    where ``canonical`` is the compact, key-sorted JSON of the fleet (N, T, d,
    cap, f(0..N), sigma as float.hex strings) and of the keys seeded "always"
    (launch, cycles, burn_in, passage_level (0 = none), stop_at_passage and
    the user's ``seed``); keys seeded "unless-default" join it only away from
    their default. It is a 63-bit integer, passed to ``stormsim.simulate(seed=...)``.
    ``fleets`` is not part of it: more fleets extend a cell, they do not
    change its first ones.
    """
    blob = json.dumps(seed_canon(fleet, values), sort_keys=True, separators=(",", ":")).encode()
    return int.from_bytes(hashlib.sha256(SEED_DOMAIN + blob).digest()[:8], "big") >> 1


# -- cells -----------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Cell:
    """One point of a sweep: a fleet, the simulate keyword arguments, a seed.

    ``stormsim.simulate(cell.fleet, fleets=cell.fleets, **cell.simulate_kwargs())``
    reproduces the cell's stored arrays bit for bit. ``values`` holds every
    column of the parameter table (given, default or derived).
    """

    index: int
    fleet: Fleet
    values: dict = field(repr=False)

    @property
    def n_jobs(self) -> int:
        return self.fleet.n_jobs

    @property
    def fleets(self) -> int:
        return self.values["fleets"]

    @property
    def cycles(self) -> int:
        return self.values["cycles"]

    @property
    def burn_in(self) -> int:
        return self.values["burn_in"]

    @property
    def launch(self) -> str:
        return self.values["launch"]

    @property
    def stop_at_passage(self) -> bool:
        return self.values["stop_at_passage"]

    @property
    def passage_level(self) -> int | None:
        return self.values["passage_level"] or None

    @property
    def seed(self) -> int:
        return self.values["seed"]

    @property
    def run_seed(self) -> int:
        return self.values["run_seed"]

    def simulate_kwargs(self) -> dict:
        """simulate()'s keyword arguments but fleets.

        ``fast_forward`` is the cell's key (default False: the event loop, so
        existing sweeps' digits stay bit-identical); True asks for the
        fast-forward where the engine has one (``engine.fast_forward_applies``)
        and is False elsewhere, never simulate()'s "auto"."""
        kw = {k.name: self.values[k.name] for k in KEYS if k.kwarg}
        kw["passage_level"] = self.passage_level
        kw["fast_forward"] = bool(kw["fast_forward"]) and fast_forward_applies(self.fleet)
        kw["seed"] = self.run_seed
        return kw

    @property
    def has_risk(self) -> bool:
        """Whether the cell asks for its storm risk (``risk_levels``)."""
        return bool(self.values["risk_levels"])

    def risk_levels(self) -> np.ndarray:
        """The storm risk's levels k for this cell's N, sorted, each once ('N/q' resolved)."""
        return np.array(sorted({tail_level(x, self.n_jobs) for x in self.values["risk_levels"]}),
                        dtype=np.int64)

    def risk_kwargs(self) -> dict | None:
        """storm_risk()'s keyword arguments but the fleet (None: no storm risk).

        ``stormsim.storm_risk(cell.fleet, **cell.risk_kwargs())`` reproduces the
        cell's stored storm risk bit for bit: a fixed effort (``max_seconds=None``),
        the cell's run seed, cycles, burn_in and launch, and each risk_* key
        given (the others at storm_risk's defaults). Its plain fleets are fleets
        0.. of ``simulate(cell.fleet, seed=cell.run_seed)`` run for all
        ``cycles`` (no passage stop; simulate's default engine)."""
        if not self.has_risk:
            return None
        kw = {"levels": self.risk_levels(), "max_seconds": None, "seed": self.run_seed,
              "cycles": self.cycles, "burn_in": self.burn_in, "launch": self.launch}
        for key, param in RISK_KEYS.items():
            if key != "risk_levels" and self.values[key] is not None:
                kw[param] = self.values[key]
        return kw

    def identity(self) -> dict:
        """What is simulated, exactly (floats as hex): hashed into the sweep's identity.
        Keys seeded "identity" (``fast_forward``) join it only away from their
        default, so that sweeps made before they existed keep their hash."""
        extra = {k.name: _canon(self.values[k.name]) for k in KEYS
                 if k.seed == "identity" and self.values[k.name] != k.default}
        return {**seed_canon(self.fleet, self.values), **extra, "fleets": self.fleets,
                "run_seed": self.run_seed}


def _resolve_cell(index: int, v: dict, folder=".") -> Cell:
    """Values of every key (given or default) -> a validated Cell, or raise Bad.

    Here live the rules between keys (load or d, cap or cap_fraction, jitter
    or m_over_sigma) and the derived columns."""
    table = _jobtable.read(v, folder)          # Fleet.from_jobs keywords, or None
    for key in (k.name for k in KEYS if k.default is REQUIRED):
        if key not in v and not (key == "N" and table):
            raise Bad(f"missing key {key!r}: give it in [fixed] or [grid] ({PARAMS[key]})")
    n = v["N"] if table is None else len(table["size"])
    if table is None and ("load" in v) == ("d" in v):
        raise Bad("give exactly one of 'load' and 'd' (in [fixed] or [grid]); got "
                  + ("both" if "load" in v else "neither"))
    if "cap" in v and "cap_fraction" in v:
        raise Bad("give at most one of 'cap' and 'cap_fraction'")
    if "jitter" in v and "m_over_sigma" in v:
        raise Bad("give at most one of 'jitter' and 'm_over_sigma'")

    def per_job(key):
        x = v[key]
        if isinstance(x, tuple):
            if len(x) != n:
                raise Bad(f"{key} = {fmt_toml(list(x))} has {len(x)} values but N = {n}: "
                          "give one per job, or a single number")
            return np.array(x)
        return np.full(n, float(x))

    cap = v["cap_fraction"] * n if "cap_fraction" in v else v.get("cap", math.inf)
    thr = v["throughput"]
    if isinstance(thr, tuple) and thr[0] != "power" and len(thr) != n:
        raise Bad(f"throughput table has {len(thr)} values but N = {n}: give f(1), ..., f(N)")
    # E1 / E2 options (a scalar stays one, so that Fleet's messages quote it as given)
    options = {k: per_job(k) if isinstance(v[k], tuple) else v[k] for k in Fleet.OPTIONS}
    if table and any(np.any(np.asarray(v[k]) != Fleet.OPTIONS[k]) for k in Fleet.OPTIONS):
        raise Bad("with a job table ('jobs'), give the asynchronous-checkpoint and weight options "
                  "as its columns, not as keys: "
                  + ", ".join(k for k in Fleet.OPTIONS if np.any(np.asarray(v[k]) != Fleet.OPTIONS[k])))
    jobs = _jobtable.fleet(table, v, cap, thr) if table else None
    T = per_job("T") if jobs is None else jobs.T
    d = jobs.d if jobs else v["load"] * T / n if "load" in v else per_job("d")
    try:
        base = Fleet(T=T, d=d, cap=cap, throughput=thr, jitter=0.0, **options)
        margin = math.nan
        if base.is_identical:
            try:
                margin = stagger_margin(base)
            except SpecError as exc:
                if "m_over_sigma" in v:
                    raise Bad(f"m_over_sigma needs a stagger margin m, and here {exc}") from None
        elif "m_over_sigma" in v:
            raise Bad("m_over_sigma needs identical jobs (one T and d); give jitter instead")
        if "m_over_sigma" in v:
            if not margin > 0.0:
                raise Bad(f"the stagger margin is m = {float(margin)!r} here, so m_over_sigma "
                          "cannot set the jitter; give jitter instead")
            sigma = margin / v["m_over_sigma"]
        else:
            sigma = per_job("jitter") if "jitter" in v else 0.0
        fleet = jobs or Fleet(T=T, d=d, cap=cap, throughput=thr, jitter=sigma, **options)
        if v["launch"] == "stagger":
            if not fleet.is_identical:
                # (launch.py's message suggests explicit phases, which a sweep
                # file cannot give)
                differ = [k for k in ("T", "d", "jitter", "snapshot", "slowdown", "weights")
                          if not np.all((a := getattr(fleet, k)) == a[0])]
                what = ("one T, d and jitter" if set(differ) <= {"T", "d", "jitter"}
                        else "one T, d, jitter, snapshot, slowdown and weight")
                raise Bad(f"launch = 'stagger' needs identical jobs ({what}), but "
                          f"{' and '.join(differ)} differ{'s' if len(differ) == 1 else ''} "
                          "between jobs here; a sweep file has no explicit phases: give one "
                          "value each, or use launch = 'random' or 'sync'")
            stagger_theta(fleet)  # raises when no stagger can be placed
    except SpecError as exc:
        raise Bad(str(exc)) from None
    if v["passage_level"] > n:
        raise Bad(f"passage_level = {v['passage_level']} is above N = {n}: must be in 1..N, "
                  "or 0 for none")
    if v["burn_in"] >= v["cycles"]:
        raise Bad(f"burn_in = {v['burn_in']} must be below cycles = {v['cycles']}")
    _check_risk(v, n, fleet)
    sig = fleet.jitter

    def same(a):
        return float(a[0]) if np.all(a == a[0]) else math.nan

    if "m_over_sigma" in v:
        mos = v["m_over_sigma"]
    elif not margin >= 0.0 or not np.all(sig == sig[0]):
        mos = math.nan
    else:
        mos = math.inf if sig[0] == 0.0 else margin / float(sig[0])
    derived = {
        "N": n, "jobs": v.get("jobs", ""), "bandwidth": v.get("bandwidth", ""),
        "T": same(T), "d": same(fleet.d),
        "load": v["load"] if "load" in v else fleet.load,
        "cap": fleet.cap,
        "cap_fraction": v["cap_fraction"] if "cap_fraction" in v else fleet.cap / n,
        "throughput": throughput_label(thr), "jitter": same(sig), "margin": margin,
        "m_over_sigma": mos, "snapshot": same(fleet.snapshot), "slowdown": same(fleet.slowdown),
        "weights": same(fleet.weights),
    }
    values = {k.name: derived[k.name] if k.name in derived else v.get(k.name) for k in KEYS}
    values["run_seed"] = cell_seed(fleet, **values)
    return Cell(index=index, fleet=fleet, values=values)


def _check_risk(v: dict, n: int, fleet: Fleet) -> None:
    """The rules between the risk_* keys (and with N, burn_in, the fleet), or raise Bad."""
    given = [k for k in RISK_KEYS if k != "risk_levels" and v.get(k) != KEY[k].default]
    if not v["risk_levels"]:
        if given:
            raise Bad(f"{', '.join(given)} without risk_levels: give risk_levels (the levels "
                      f"k of the storm risk, e.g. risk_levels = [4, 'N/2']), or leave "
                      f"{'them' if len(given) > 1 else 'it'} out")
        return
    for x in v["risk_levels"]:
        try:
            tail_level(x, n)
        except SpecError as exc:
            raise Bad(f"risk_levels: {exc}") from None
    method = v["risk_method"]
    if method == "splitting":
        try:
            check_splittable(fleet)
        except SpecError as exc:
            raise Bad(f"risk_method = 'splitting': {exc}; use risk_method = 'plain' or "
                      "'auto' (plain Monte Carlo for such fleets)") from None
    elif v["risk_fleets"] is None:
        raise Bad(f"risk_levels given without risk_fleets: a sweep's storm risk runs a fixed "
                  f"effort; give risk_fleets (plain Monte Carlo fleets per cell, e.g. "
                  f"risk_fleets = 256) and, for risk_method = {method!r}, risk_replicates "
                  f"(splitting replicates, default {RISK_DEFAULTS['replicates']})")
    top = max(tail_level(x, n) for x in v["risk_levels"])
    if isinstance(v["risk_basin"], int) and method != "plain" and v["risk_basin"] > top:
        raise Bad(f"risk_basin = {v['risk_basin']} is above the deepest risk level {top}: the "
                  "basin's edge L_0 must be a level in 1..max(risk_levels); lower it, or use "
                  "'raised' or 'most-entries'")
    flux = v["risk_flux_cycles"] or RISK_DEFAULTS["flux_cycles"]
    if method != "plain" and fleet.is_anonymous and v["burn_in"] >= flux:
        raise Bad(f"burn_in = {v['burn_in']} must be below risk_flux_cycles = {flux} (each "
                  "splitting replicate's flux run is measured after the burn-in): raise "
                  "risk_flux_cycles, or use risk_method = 'plain'")


# -- the sweep -------------------------------------------------------------------

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


def read_sweep(text: str, source: str = "<sweep>") -> Outline:
    """A sweep file's text read, each key's values checked (else SweepError), no cell resolved."""
    def fail(msg):
        raise SweepError(f"{source}: {msg}") from None

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        fail(f"not valid TOML: {exc}")
    for key, val in doc.items():
        if key not in TABLES:
            if key in PARAMS:
                fail(f"{key} = {fmt_toml(val)} is outside any table: put it under [fixed] "
                     "(same for every cell) or [grid] (a list of values to vary)")
            fail(f"[{key}]: unknown table; allowed tables: "
                 + ", ".join(f"[{t}] ({d})" for t, d in TABLES.items()))
        if not isinstance(val, dict):
            fail(f"{key} = {fmt_toml(val)}: must be a table [{key}]")
    opts = doc.get("sweep", {})
    fixed_in, grid_in = doc.get("fixed", {}), doc.get("grid", {})
    for key in [*fixed_in, *grid_in, *opts]:    # first: a refused key is not merely unknown
        if key in REFUSED_KEYS:
            table = "fixed" if key in fixed_in else "grid" if key in grid_in else "sweep"
            fail(f"[{table}] {key}: refused: {REFUSED_KEYS[key]}")
    for key, val in opts.items():
        if key not in SWEEP_KEYS:
            fail(f"[sweep] {key} = {fmt_toml(val)}: {unknown_key(key, SWEEP_KEYS)}")
        if not isinstance(val, str):
            fail(f"[sweep] {key} = {fmt_toml(val)}: must be {SWEEP_KEYS[key]}")
    occupancy = opts.get("occupancy", "fleet")
    if occupancy not in OCCUPANCY_MODES:
        fail(f"[sweep] occupancy = {fmt_toml(occupancy)}: must be {SWEEP_KEYS['occupancy']}")
    name = opts.get("name") or (Path(source).stem if source != "<sweep>" else "sweep")

    fixed, grid = {}, {}
    for key, val in fixed_in.items():
        if key not in PARAMS:
            fail(f"[fixed] {key} = {fmt_toml(val)}: {unknown_key(key, PARAMS)}")
        try:
            fixed[key] = KEY[key].check(val)
        except Bad as exc:
            fail(f"[fixed] {key} = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
    for key, vals in grid_in.items():
        if key not in PARAMS:
            fail(f"[grid] {key} = {fmt_toml(vals)}: {unknown_key(key, PARAMS)}")
        if key in fixed:
            fail(f"{key} is in both [fixed] and [grid]: keep one")
        if not isinstance(vals, list) or not vals:
            fail(f"[grid] {key} = {fmt_toml(vals)}: a grid key takes a non-empty list of "
                 f"values, e.g. {key} = [a, b]; {key} is {PARAMS[key]}")
        out, seen = [], {}
        for i, val in enumerate(vals):
            try:
                norm = KEY[key].check(val)
            except Bad as exc:
                fail(f"[grid] {key}[{i}] = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
            if repr(norm) in seen:
                fail(f"[grid] {key} lists {fmt_toml(val)} twice (positions {seen[repr(norm)]} "
                     f"and {i}): the cells would repeat; vary seed for replicates")
            seen[repr(norm)] = i
            out.append(norm)
        grid[key] = out

    if _jobtable.clash({**fixed, **grid}):
        fail(_jobtable.clash({**fixed, **grid}))
    return Outline(grid=grid, fixed=fixed, grid_in={k: grid_in[k] for k in grid},
                   fixed_in=dict(fixed_in), name=name, description=opts.get("description", ""),
                   occupancy=occupancy, text=text, source=source, defaults=DEFAULTS)


def resolve_cell(outline: Outline, index: int) -> Cell:
    """Cell ``index`` of an outline, resolved and checked (SweepError if it fails)."""
    values = outline.cell_values(index)
    # the folder that a 'jobs' path is relative to: the sweep file's
    folder = Path(outline.source).parent if outline.source != "<sweep>" else Path.cwd()
    try:
        return _resolve_cell(index, values, folder)
    except Bad as exc:
        raise SweepError(f"{outline.source}: cell {index}{outline.where(values)}: {exc}") from None


def parse_sweep(text: str, source: str = "<sweep>") -> Sweep:
    """Validate a sweep file's text; raise SweepError naming key, value and rule (a grid
    of more than MAX_CELLS cells before any cell is resolved)."""
    out = read_sweep(text, source)
    out.check_size()
    cells = [resolve_cell(out, i) for i in range(out.n_cells)]
    ident = {"format": 1, "occupancy": out.occupancy, "cells": [c.identity() for c in cells]}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":"))
                            .encode()).hexdigest()
    return Sweep(cells=cells, grid=out.grid_in, fixed=out.fixed_in, name=out.name,
                 description=out.description, occupancy=out.occupancy, text=out.text,
                 source=out.source, hash=digest)


def load_outline(path) -> Outline:
    """Read a sweep file and check its keys, resolving no cell (see read_sweep)."""
    return read_sweep(*read_text(path))


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file (TOML); see docs/FORMAT.md and README "Sweeps"."""
    return parse_sweep(*read_text(path))

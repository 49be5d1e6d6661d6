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
Add one :class:`Key` to :data:`KEYS`, in ``stormsim.sweep.keys`` (its place there is its
place in error messages and in the parameter table), and nothing else:

- ``doc``: what is allowed, as a sentence fragment ("an integer >= 1");
- ``check``: raw TOML value -> normalized value, raising :class:`Bad` with the
  rule broken (reuse those of ``stormsim.sweep.checks``: ``int_at_least``, ``positive``, ``one_of``, ...);
- ``default``: the value when the key is not given (``REQUIRED``: the file must
  give it; ``ABSENT``: not given means something, decided in ``cell.resolve_values``);
- ``dtype``: its column in the parameter table (``None``: no column), and
  ``units``, ``long_name``: that column's attributes in results (HDF5, xarray);
- ``aliases``: names people type for it, answered with "did you mean";
- ``seed``: how it enters the run seed (:data:`SEED_ROLES`). A new key MUST
  be ``"unless-default"`` (or ``"no"`` if it changes nothing simulated, or
  ``"identity"`` if it changes the digits but not the draws, or ``"observed"``
  if it changes what is recorded but no draw, in the identity where recorded):
  at its default it is left out of the seed's canonical bytes, so every
  existing sweep keeps its run seeds, its identity and its numbers (a Fleet
  option is ``"fleet"``: ``Fleet.canonical`` leaves it out at its default).

Then pass it to the kernel: ``Cell.simulate_kwargs`` and the piece of a unit
(``stormsim.sweep.work.Piece``) take the values of every key whose ``kwarg`` is set.
"""
from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from .._format import fmt_toml
from .._version import ALGORITHM_VERSION
from ..errors import SweepError
from . import jobtable
from .cell import Cell, cell_seed, resolve_values
from .checks import Bad
from .grid import Outline, read_text
from .keys import (
    ABSENT,
    COLUMNS,
    DEFAULTS,
    KEY,
    KEYS,
    OCCUPANCY_MODES,
    PARAMS,
    REFUSED_KEYS,
    REQUIRED,
    SEED_DOMAIN,
    SWEEP_KEYS,
    TABLES,
    Key,
    unknown_key,
)

__all__ = ["ABSENT", "KEYS", "REQUIRED", "SEED_DOMAIN", "Bad", "Cell", "Key", "Sweep", "cell_seed",
           "load_outline", "load_sweep", "parse_sweep", "read_sweep", "resolve_cell", "sweep_of"]

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
    doc = _parse_toml(text, source)
    opts = doc.get("sweep", {})
    fixed_in, grid_in = doc.get("fixed", {}), doc.get("grid", {})
    _check_refused(fixed_in, grid_in, opts, source)
    occupancy = _check_options(opts, source)
    name = opts.get("name") or (Path(source).stem if source != "<sweep>" else "sweep")
    fixed = _check_fixed(fixed_in, source)
    grid = _check_grid(grid_in, fixed, source)
    clash = jobtable.clash({**fixed, **grid})
    if clash:
        _fail(source, clash)
    return Outline(grid=grid, fixed=fixed, grid_in={k: grid_in[k] for k in grid},
                   fixed_in=dict(fixed_in), name=name, description=opts.get("description", ""),
                   occupancy=occupancy, text=text, source=source, defaults=DEFAULTS,
                   table_n=_table_sizes(grid.get("jobs", [fixed.get("jobs")]), source))


def _fail(source: str, msg: str) -> NoReturn:
    """Raise the SweepError that names the sweep (``source``) and says ``msg``."""
    raise SweepError(f"{source}: {msg}") from None


def _parse_toml(text, source) -> dict:
    """The file's TOML as a dict of tables, each a known table of the sweep grammar
    (SweepError if the arguments are not strings, the TOML is invalid, or a top-level
    key is not one of TABLES holding a table)."""
    if not isinstance(text, str):
        raise SweepError(f"text = {text!r}: must be a sweep file's text (a str; load_sweep reads "
                         "a file)")
    if not isinstance(source, str):
        raise SweepError(f"source = {source!r}: must be a str, the name errors give the sweep")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        _fail(source, f"not valid TOML: {exc}")
    for key, val in doc.items():
        if key not in TABLES:
            if key in PARAMS:
                _fail(source, f"{key} = {fmt_toml(val)} is outside any table: put it under "
                      "[fixed] (same for every cell) or [grid] (a list of values to vary)")
            _fail(source, f"[{key}]: unknown table; allowed tables: "
                  + ", ".join(f"[{t}] ({d})" for t, d in TABLES.items()))
        if not isinstance(val, dict):
            _fail(source, f"{key} = {fmt_toml(val)}: must be a table [{key}]")
    return doc


def _check_refused(fixed_in: dict, grid_in: dict, opts: dict, source: str) -> None:
    """SweepError for the first refused key (REFUSED_KEYS) in [fixed], [grid] or [sweep];
    checked before any key is called unknown, so a refused key says why."""
    for key in [*fixed_in, *grid_in, *opts]:
        if key in REFUSED_KEYS:
            table = "fixed" if key in fixed_in else "grid" if key in grid_in else "sweep"
            _fail(source, f"[{table}] {key}: refused: {REFUSED_KEYS[key]}")


def _check_options(opts: dict, source: str) -> str:
    """The [sweep] table checked (known keys, string values); its occupancy mode."""
    for key, val in opts.items():
        if key not in SWEEP_KEYS:
            _fail(source, f"[sweep] {key} = {fmt_toml(val)}: {unknown_key(key, SWEEP_KEYS)}")
        if not isinstance(val, str):
            _fail(source, f"[sweep] {key} = {fmt_toml(val)}: must be {SWEEP_KEYS[key]}")
    occupancy = opts.get("occupancy", "fleet")
    if occupancy not in OCCUPANCY_MODES:
        _fail(source, f"[sweep] occupancy = {fmt_toml(occupancy)}: "
              f"must be {SWEEP_KEYS['occupancy']}")
    return occupancy


def _check_fixed(fixed_in: dict, source: str) -> dict:
    """The [fixed] table: key -> normalized value, each key known and its value checked."""
    fixed = {}
    for key, val in fixed_in.items():
        if key not in PARAMS:
            _fail(source, f"[fixed] {key} = {fmt_toml(val)}: {unknown_key(key, PARAMS)}")
        try:
            fixed[key] = KEY[key].check(val)
        except Bad as exc:
            _fail(source, f"[fixed] {key} = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
    return fixed


def _check_grid(grid_in: dict, fixed: dict, source: str) -> dict:
    """The [grid] table: key -> list of normalized values, each key known, not also
    in [fixed], and given a non-empty list of distinct valid values."""
    grid = {}
    for key, vals in grid_in.items():
        if key not in PARAMS:
            _fail(source, f"[grid] {key} = {fmt_toml(vals)}: {unknown_key(key, PARAMS)}")
        if key in fixed:
            _fail(source, f"{key} is in both [fixed] and [grid]: keep one")
        if not isinstance(vals, list) or not vals:
            _fail(source, f"[grid] {key} = {fmt_toml(vals)}: a grid key takes a non-empty "
                  f"list of values, e.g. {key} = [a, b]; {key} is {PARAMS[key]}")
        grid[key] = _grid_values(key, vals, source)
    return grid


def _grid_values(key: str, vals: list, source: str) -> list:
    """One grid key's values, each checked and normalized; SweepError for an invalid
    value or for a value listed twice (the cells would repeat)."""
    out, seen = [], {}
    for i, val in enumerate(vals):
        try:
            norm = KEY[key].check(val)
        except Bad as exc:
            _fail(source, f"[grid] {key}[{i}] = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
        if repr(norm) in seen:
            _fail(source, f"[grid] {key} lists {fmt_toml(val)} twice (positions "
                  f"{seen[repr(norm)]} and {i}): the cells would repeat; vary seed for replicates")
        seen[repr(norm)] = i
        out.append(norm)
    return out


def _table_sizes(paths, source: str) -> dict:
    """Each job table's number of jobs (its rows), for the grid's cost: a few
    tables read once, not one per cell. A table that cannot be read is left
    out (its cells' resolution says why)."""
    folder = _folder(source)
    sizes = {}
    for path in paths:
        if path:
            try:
                sizes[path] = len(jobtable.read({"jobs": path, "bandwidth": ""}, folder)["size"])
            except Bad:
                pass
    return sizes


def _folder(source: str) -> Path:
    """The folder that a 'jobs' path is relative to: the sweep file's."""
    return Path(source).parent if source != "<sweep>" else Path.cwd()


def resolve_cell(outline: Outline, index: int) -> Cell:
    """Cell ``index`` of an outline, resolved and checked (SweepError if it fails)."""
    values = outline.cell_values(index)
    try:
        return resolve_values(index, values, _folder(outline.source))
    except Bad as exc:
        raise SweepError(f"{outline.source}: cell {index}{outline.where(values)}: {exc}") from None


def parse_sweep(text: str, source: str = "<sweep>") -> Sweep:
    """Validate a sweep file's text; raise SweepError naming key, value and rule (a grid
    of more than MAX_CELLS cells before any cell is resolved)."""
    return sweep_of(read_sweep(text, source))


def sweep_of(out: Outline) -> Sweep:
    """The Sweep of an outline (read_sweep): every cell resolved and seeded; raise
    SweepError for a grid of more than MAX_CELLS cells (before resolving any) or
    a cell whose keys do not resolve."""
    out.check_size()
    cells = [resolve_cell(out, i) for i in range(out.n_cells)]
    ident = {"format": 1, "algorithm": ALGORITHM_VERSION, "occupancy": out.occupancy,
             "cells": [c.identity() for c in cells]}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":"))
                            .encode()).hexdigest()
    return Sweep(cells=cells, grid=out.grid_in, fixed=out.fixed_in, name=out.name,
                 description=out.description, occupancy=out.occupancy, text=out.text,
                 source=out.source, hash=digest)


def load_outline(path) -> Outline:
    """Read a sweep file and check its keys, resolving no cell (see read_sweep)."""
    return read_sweep(*read_text(path))


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file (TOML); see docs/sweeps.md and docs/reference/keys.md."""
    return parse_sweep(*read_text(path))

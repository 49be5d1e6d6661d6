"""The HDF5 result layout (docs/FORMAT.md section 2): the one place that knows it.

Version 2 (written now) holds every dataset of version 1 unchanged, bit for
bit, and adds:

- ``units`` and ``long_name`` attributes on every dataset (``units`` on the
  numeric ones);
- named dimensions, as HDF5 dimension scales the netCDF-4 way, so that
  ``xarray.open_dataset(path, engine="h5netcdf")`` (``group=`` a cell) gives
  real coordinates: ``cell``, ``k`` at the top, ``fleet``, ``job``, ``n_w``
  (and ``block``) in a cell;
- a top-level per-cell table (dimensions ``cell`` and ``k``): every parameter
  as a coordinate (the ``/params`` datasets, hard-linked, not copied), the
  summary of :mod:`stormsim.stats.summary` (medians, P(n_w >= k) with intervals,
  the independent baseline);
- ``/grid``: the same table on the grid's own dimensions (one per [grid] key,
  the grid being their full Cartesian product), so that
  ``xarray.open_dataset(path, engine="h5netcdf", group="grid").sel(load=0.9)``
  selects by parameter value;
- per cell, in ``occupancy = "sum"`` mode, ``occupancy_block_sum``: the exact
  occupancy sums of fixed blocks of fleets (``stormsim.stats.tails.block_ranges``),
  the independent units of the tail intervals.

Version 1 files read as before (their table is computed when asked for).

A cell whose jobs have power (MODEL.md E6) also holds the arrays marked
``power`` (per fleet; ``ramp_share`` and ``ramp_events`` on the cell's
dimensions ``ramp_window`` and ``ramp_threshold``), ``window``, and its jobs'
``busy_power`` and ``idle_power``; other cells have none of them.

A cell whose jobs fail (MODEL.md E8) also holds the arrays of
:data:`stormsim.sweep.work.RESULT_ARRAYS` marked ``failures`` (per fleet, sums
over its jobs) and its jobs' ``mtbf`` and ``restart``; other cells have none
of them (still version 2: datasets are only added), and a file without them
reads as cells without failures.

A sweep with storm risk (``risk_levels``; still version 2: the datasets are
added, none changes) also has, per cell that asks for it, a dimension
``risk_k`` (the levels asked) and the datasets of
:data:`stormsim.sweep.cellrisk.RISK_ARRAYS` on it and of ``RISK_SCALARS`` (0-d); and at
the top and in /grid the same on (cell, k) and (cell,) (NaN / '' / -1 where
a level is not asked).
"""
from __future__ import annotations

import json
import math
import os

import h5py
import numpy as np

from .._version import ALGORITHM_VERSION, __version__
from ..engine.cost import HIST_BINS
from ..engine.run import DURATION_EDGES, WAIT_EDGES
from ..stats.storms import STORM_METHODS
from ..stats.summary import (BY_LEVEL, METHOD_CODES, RAMP_ARRAYS, SCALARS, cell_summary,
                             table_of_rows)
from ..stats.interval import CONFIDENCE
from ..stats.tails import block_ranges
from ..sweep.cellrisk import RISK_ARRAYS, RISK_SCALARS, risk_table
from ..sweep.keys import KEY, KEYS, PARAM_ATTRS
from ..sweep.work import RESULT_ARRAYS
from .cellresult import FAILURE_FLEET_ARRAYS, FLEET_ARRAYS, POWER_FLEET_ARRAYS, cell_from_parts
from .identity import settings_json

__all__ = ["FORMAT", "FORMAT_VERSION", "cell_group", "check_version",
           "grid_attrs", "grid_axes", "read_cell", "write_result"]

FORMAT = "stormsim.sweep"
FORMAT_VERSION = 2
#: Versions this stormsim reads.
READABLE = (1, 2)

#: What a file written before an array existed means by its absence (MODEL.md E1, E2 defaults).
FLEET_ARRAY_DEFAULTS = {"snapshot": 0.0, "slowdown": 0.0, "weights": 1.0}


def cell_group(i: int) -> str:
    """The HDF5 group of cell i, below /cells."""
    return f"{i:06d}"

#: /params/<key>: units and long name.

#: /cells/<i>/<name> besides the result arrays: dimensions, units, long name.
CELL_ARRAYS = {
    "T": (("job",), "s", "compute work between checkpoints at full rate, per job"),
    "d": (("job",), "s", "checkpoint volume (seconds writing alone), per job"),
    "jitter": (("job",), "s", "compute jitter sigma_i, per job (also linked as sigma, its name in 0.2.0)"),
    "f": (("n_w",), "1", "storage throughput f(n) with n writers, f(0) = 0"),
    "snapshot": (("job",), "s", "async snapshot time, per job (MODEL.md E1)"),
    "slowdown": (("job",), "1", "async compute slowdown while persisting, per job (MODEL.md E1)"),
    "weights": (("job",), "1", "storage weight, per job (MODEL.md E2)"),
    "mtbf": (("job",), "s", "mean time between failures M_i, per job (MODEL.md E8; cells with "
             "failures only)"),
    "restart": (("job",), "s", "restart time R_i after a failure, per job (MODEL.md E8; cells "
                "with failures only)"),
    "busy_power": (("job",), "W", "draw computing at full rate P^busy, per job (MODEL.md E6; "
                   "cells with power only)"),
    "idle_power": (("job",), "W", "draw writing or stopped P^idle, per job (MODEL.md E6; cells "
                   "with power only)"),
    "block_start": (("block",), "1", "first fleet of each block"),
    "block_fleets": (("block",), "1", "fleets in each block"),
}


#: The long name of ``window`` in a cell with power (MODEL.md E6).
POWER_WINDOW_LONG_NAME = ("length of the measured window (MODEL.md E6, E8; cells with power or "
                          "failures)")


def _result_attrs(name: str):
    """(dims, units, long name) of a result dataset: a RESULT_ARRAYS array per
    fleet, its exact sum over fleets (NAME_sum) or per block (NAME_block_sum)."""
    for a in RESULT_ARRAYS:
        level = a.dims()
        if name == a.name:
            return ("fleet",) + level, a.units, a.doc
        if a.summed and name == f"{a.name}_sum":
            return level, a.units, f"{a.doc}; summed over the cell's fleets (exact)"
        if a.summed and name == f"{a.name}_block_sum":
            return ("block",) + level, a.units, f"{a.doc}; summed over each block of fleets (exact)"
    return CELL_ARRAYS.get(name)


#: Dimension scales of a cell group: name -> (units, long name).
CELL_DIMS = {"fleet": ("1", "fleet index"), "job": ("1", "job index"),
             "n_w": ("1", "number of jobs writing at once"),
             "block": ("1", "block of fleets (occupancy='sum' mode)"),
             "duration_bin": ("1", "bin of the write-duration histogram (MODEL.md E7): 0 below "
                              "duration_edge[0], j in [duration_edge[j-1], duration_edge[j]), "
                              "the last at or above the last edge"),
             "wait_bin": ("1", "bin of the wait histogram (MODEL.md E7), as duration_bin on "
                          "wait_edge"),
             "duration_edge": ("1", "edges of the write-duration histogram, multiples of each "
                               "job's d"),
             "wait_edge": ("1", "edges of the wait histogram, multiples of each job's T"),
             "ramp_window": ("s", "ramp window D of ramp_share and ramp_events (MODEL.md E6; "
                             "cells with power only)"),
             "ramp_threshold": ("W", "ramp threshold X of ramp_share and ramp_events "
                                "(MODEL.md E6; cells with power only)")}



def _attrs(ds, units, long_name) -> None:
    if units is not None:
        ds.attrs["units"] = units
    ds.attrs["long_name"] = long_name


def _scale(group, name, data, units, long_name):
    ds = group.create_dataset(name, data=data)
    ds.make_scale(name)
    _attrs(ds, units, long_name)
    return ds


def _attach(ds, *scales) -> None:
    for i, s in enumerate(scales):
        ds.dims[i].attach_scale(s)


def _jsonable(values: dict) -> dict:
    out = {}
    for k, v in values.items():
        if isinstance(v, float) and not math.isfinite(v):
            v = str(v)
        elif isinstance(v, (np.integer, np.floating, np.bool_)):
            v = v.item()
        out[k] = v
    return out


def _column(group, key, col):

    if col.dtype.kind == "U":
        return group.create_dataset(key, data=col.astype(object), dtype=h5py.string_dtype())
    return group.create_dataset(key, data=col)


def grid_attrs(key: str) -> tuple:
    """(units, long name) of a grid key's coordinate: its column's, or, for a key
    without a column, its doc (the values as given, as JSON text)."""
    if key in PARAM_ATTRS:
        return PARAM_ATTRS[key]
    return None, f"{key}: {KEY[key].doc} (as given, JSON)"


def grid_axes(grid: dict, columns: dict, n_cells: int) -> tuple[tuple, dict]:
    """(shape, {key: coordinate values}) of the grid (cells in nested-loop order,
    the last key fastest): a key's coordinate is its parameter column along its
    axis when that is numeric and finite or a string, else the values as given
    (JSON text, e.g. a per-job list)."""
    keys = list(grid)
    shape = tuple(len(grid[k]) for k in keys)
    if int(np.prod(shape, dtype=np.int64)) != n_cells:
        raise ValueError(f"the grid {dict(zip(keys, shape))} does not have {n_cells} cells")
    coords = {}
    for j, k in enumerate(keys):
        at = [int(np.ravel_multi_index(tuple(i if a == j else 0 for a in range(len(keys))),
                                       shape)) for i in range(shape[j])] if keys else []
        if k not in columns:              # a key without a column (fast_forward, risk_*)
            coords[k] = np.array([json.dumps(v) for v in grid[k]]).astype(str)
            continue
        col = np.asarray(columns[k])[at]
        if col.dtype.kind == "U" or (col.dtype.kind in "iub") or (
                col.dtype.kind == "f" and not np.any(np.isnan(col))):
            if len(set(col.tolist())) == len(col):
                coords[k] = col
                continue
        coords[k] = np.array([json.dumps(v) for v in grid[k]]).astype(str)
    return shape, coords


def write_result(path, sweep, parts_of, *, risk_of, level: float = CONFIDENCE) -> None:
    """Write a finished result (layout version 2), cell by cell: ``parts_of(i)``
    yields the Parts that tile cell i; one piece in memory at a time;
    ``risk_of(i)``: cell i's storm risk (a RiskPart) where it asks for one
    (``risk_of`` is required; None only for a sweep without storm risk: a
    result is never written without the storm risk its cells ask for)."""
    risky = [c.index for c in sweep.cells if c.has_risk]
    if risk_of is None and risky:
        raise ValueError(f"write_result: cells {risky[:5]}{' ...' if len(risky) > 5 else ''} "
                         "ask for their storm risk (risk_levels), but risk_of is None: give "
                         f"risk_of(i) -> cell i's RiskPart; {path} was not written")
    f = _create(path)
    try:
        _fill(f, sweep, parts_of, level, risk_of)
        f.close()
    except BaseException:
        _abandon(f, path)
        raise


def _create(path):
    """A new HDF5 file, as ``h5py.File(path, "w")`` makes it, but whose raw data
    reach the disk in the call that writes them.

    HDF5 keeps a dataset smaller than its sieve buffer (64 KiB by default) in
    that buffer until the dataset is closed, which h5py does when the Dataset
    object is dropped. On a full disk that close fails inside ``__del__``: the
    error is only printed ("Exception ignored"), the writing goes on, and HDF5,
    having freed the dataset but kept its id, frees it again at the
    interpreter's exit (SIGSEGV). Without the sieve buffer the failing write is
    create_dataset's own, an ordinary exception that reaches the caller."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)   # h5py's default
    fapl.set_sieve_buf_size(0)
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)     # h5py's default: no times, so the same bytes each run
    return h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fapl=fapl, fcpl=fcpl))


def _abandon(f, path) -> None:
    """Close a result whose writing failed, and empty it.

    HDF5 flushes its metadata when a file is closed; on a full disk that
    flush fails too, the file stays half open inside the library, and the
    interpreter's exit then crashed (SIGSEGV). Emptying the file first
    (truncate frees its blocks, the descriptor stays valid) gives the flush
    room, so the file closes; its contents are discarded anyway."""

    try:
        os.truncate(path, 0)
    except OSError:
        pass
    for _ in range(3):
        try:
            f.close()
            break
        except Exception:     # still failing: try again, then give up
            continue


def _fill(f, sweep, parts_of, level: float, risk_of) -> None:
    """The contents of a result (layout version 2) into the open file ``f``."""
    cols = sweep.columns()
    a = f.attrs
    a["format"], a["format_version"] = FORMAT, FORMAT_VERSION
    a["stormsim_version"], a["algorithm_version"] = __version__, ALGORITHM_VERSION
    a["settings"] = settings_json(sweep)       # every resolved setting, beside the numbers
    a["sweep_hash"], a["sweep_name"] = sweep.hash, sweep.name
    a["sweep_description"], a["sweep_source"] = sweep.description, sweep.source
    a["sweep_toml"], a["occupancy"], a["n_cells"] = sweep.text, sweep.occupancy, sweep.n_cells
    a["grid_keys"] = json.dumps(sweep.grid_keys)
    a["fixed_keys"] = json.dumps(list(sweep.fixed))
    a["confidence"] = level
    params = f.create_group("params")
    cell_dim = _scale(params, "cell", np.arange(sweep.n_cells, dtype=np.int64), "1",
                      "cell index (grid order, the last [grid] key fastest)")
    f["cell"] = cell_dim                        # hard link: one object, two names
    for key, col in cols.items():
        ds = _column(params, key, col)
        _attrs(ds, *PARAM_ATTRS[key])
        _attach(ds, cell_dim)
    cells = f.create_group("cells")
    rows, risks = [], []
    for c in sweep.cells:
        rows.append(_write_cell(cells, c, sweep.occupancy, parts_of(c.index), level,
                                _unobserved(c, sweep.grid_keys)))
        risks.append(_write_risk(cells[cell_group(c.index)], _risk_of(risk_of, c))
                     if c.has_risk else None)
    table = table_of_rows(rows)
    if any(r is not None for r in risks):
        table["risk"] = risk_table(risks, table["k"].size)
    _write_table(f, sweep, cols, table)


def _risk_of(risk_of, c):
    """Cell c's storm risk from ``risk_of``, which must have one for it."""
    part = risk_of(c.index)
    if part is None or part.cell != c.index:
        raise ValueError(f"write_result: cell {c.index} asks for its storm risk (risk_levels), "
                         f"but risk_of({c.index}) gave "
                         + ("None" if part is None else f"cell {part.cell}'s storm risk"))
    return part


def _string_or_number(group, name, data):

    data = np.asarray(data)
    if data.dtype.kind in "UO":
        return group.create_dataset(name, data=data.astype(object), dtype=h5py.string_dtype())
    return group.create_dataset(name, data=data)


def _write_risk(g, part) -> dict:
    """A cell's storm risk (a RiskPart) into its group: the ``risk_k`` scale, the
    RISK_ARRAYS on it, the RISK_SCALARS; returns them (a risk_table row)."""
    k = _scale(g, "risk_k", part.levels, "1", "the storm risk's levels k (risk_levels)")
    for a in RISK_ARRAYS:
        ds = _string_or_number(g, a.name, part.arrays[a.name])
        _attrs(ds, a.units, a.doc)
        _attach(ds, k)
    for a in RISK_SCALARS:
        _attrs(_string_or_number(g, a.name, part.arrays[a.name]), a.units, a.doc)
    return {"levels": part.levels, **part.arrays}


def _unobserved(c, grid_keys) -> set:
    """The keys seeded "observed" (power, MODEL.md E6) that cell c's ``params``
    attribute leaves out: all of them (but grid keys) where the cell has no
    power, so that such a cell's group is the one written before power was a key."""
    if c.fleet.has_power:
        return set()
    return {k.name for k in KEYS if k.seed == "observed" and k.name not in grid_keys}


def _write_cell(cells, c, occupancy: str, parts, level: float, leave_out=frozenset()) -> dict:
    """Cell c's group from its parts (assembled by cell_from_parts, the cell's
    arrays in memory, written whole); returns its summary row
    (stormsim.stats.summary), computed from that cell (no read-back)."""

    keep = occupancy == "fleet"
    cell = cell_from_parts(c, parts, keep_per_fleet=keep)
    g = cells.create_group(cell_group(c.index))
    g.attrs["index"] = c.index
    g.attrs["params"] = json.dumps(_jsonable({k: v for k, v in c.values.items()
                                              if k not in leave_out}))
    starts, stops = block_ranges(c.fleets)
    scales = _cell_scales(g, c, None if keep else starts.size, cell.has_power)
    for name in FLEET_ARRAYS:
        _put(g, scales, name, getattr(cell, name))
    g["sigma"] = g["jitter"]        # a hard link: the name 0.2.0 wrote and its readers read
    if cell.has_failures:           # MODEL.md E8: no dataset for a fleet that never fails
        for name in FAILURE_FLEET_ARRAYS:
            _put(g, scales, name, getattr(cell, name))
    if cell.has_power:              # MODEL.md E6: no dataset for a fleet without power
        for name in POWER_FLEET_ARRAYS:
            _put(g, scales, name, getattr(cell, name))
    for name, arr in cell.arrays.items():
        if arr is not None:
            _put(g, scales, name, arr)
    if cell.has_power:   # (window's own long name is a cell with failures', kept as written)
        g["window"].attrs["long_name"] = POWER_WINDOW_LONG_NAME
    for a in RESULT_ARRAYS:
        if a.summed:
            _put(g, scales, f"{a.name}_sum", cell.sums[a.name])
            if not keep:
                _put(g, scales, f"{a.name}_block_sum", cell.blocks[a.name])
    if not keep:
        _put(g, scales, "block_start", starts)
        _put(g, scales, "block_fleets", stops - starts)
    return cell_summary(cell, level)


def _cell_scales(g, c, blocks: int | None, power: bool = False) -> dict:
    """The dimension scales of cell c's group (CELL_DIMS; ``block`` when ``blocks``
    is not None; ``ramp_window`` and ``ramp_threshold`` with ``power``): name -> dataset."""
    dims = {"fleet": np.arange(c.fleets, dtype=np.int64),
            "job": np.arange(c.n_jobs, dtype=np.int64),
            "n_w": np.arange(c.n_jobs + 1, dtype=np.int64),
            "duration_bin": np.arange(HIST_BINS + 2, dtype=np.int64),
            "wait_bin": np.arange(HIST_BINS + 2, dtype=np.int64),
            "duration_edge": DURATION_EDGES, "wait_edge": WAIT_EDGES}
    if blocks is not None:
        dims["block"] = np.arange(blocks, dtype=np.int64)
    if power:
        windows, thresholds = c.ramps
        dims["ramp_window"] = np.asarray(windows, dtype=np.float64)
        dims["ramp_threshold"] = np.asarray(thresholds, dtype=np.float64)
    return {k: _scale(g, k, v, *CELL_DIMS[k]) for k, v in dims.items()}


def _put(g, scales: dict, name: str, data) -> None:
    """A cell dataset, with its units, long name and dimension scales (_result_attrs)."""
    ds = g.create_dataset(name, data=data)
    dnames, units, long_name = _result_attrs(name)
    _attrs(ds, units, long_name)
    _attach(ds, *(scales[x] for x in dnames))


def _table_datasets(group, table: dict, dims: tuple, k_dim, coords: str,
                    ramp_dims: tuple = ()) -> None:
    """The summary arrays into ``group`` over ``dims`` (+ k for the BY_LEVEL ones,
    + ``ramp_dims``, the ramp_window and ramp_threshold scales, for RAMP_ARRAYS)."""

    shape = tuple(len(s) for s in dims)

    def put(name, data, units, long_name, with_k=False, extra=()):
        data = np.asarray(data)
        full = shape + ((len(k_dim),) if with_k else ()) + tuple(len(x) for x in extra)
        if data.dtype.kind == "U":
            ds = group.create_dataset(name, data=data.astype(object).reshape(full),
                                      dtype=h5py.string_dtype())
        else:
            ds = group.create_dataset(name, data=data.reshape(full))
        _attrs(ds, units, long_name)
        _attach(ds, *dims, *((k_dim,) if with_k else ()), *extra)
        if coords:
            ds.attrs["coordinates"] = coords
        return ds

    for name, (_, units, long_name) in SCALARS.items():
        put(name, table[name], units, long_name)
    for name, (units, long_name) in BY_LEVEL.items():
        put(name, table[name], units, long_name, with_k=True)
    m = put("p_ge_method", table["p_ge_method"], "1", "how each P(n_w >= k) interval was made",
            with_k=True)
    m.attrs["flag_values"] = np.array(sorted(METHOD_CODES.values()), dtype=np.int8)
    m.attrs["flag_meanings"] = " ".join(x.replace("-", "_") for x, _ in
                                        sorted(METHOD_CODES.items(), key=lambda kv: kv[1]))
    m.attrs["missing_value_meaning"] = "-1: no such level (k > the cell's N)"
    m = put("storms_method", table["storms_method"], "1",
            "how each storm rate / duration interval was made (stormsim.stats.storms)", with_k=True)
    m.attrs["flag_values"] = np.array(sorted(STORM_METHODS.values()), dtype=np.int8)
    m.attrs["flag_meanings"] = " ".join(x.replace("-", "_") for x, _ in
                                        sorted(STORM_METHODS.items(), key=lambda kv: kv[1]))
    m.attrs["missing_value_meaning"] = "-1: no such level (k > the cell's N)"
    put("independent_law", table["independent_law"], None,
        "law of the independent baseline: binomial, poisson-binomial or none")
    risk = table.get("risk")
    if risk is not None:
        for a in RISK_ARRAYS:
            put(a.name, risk[a.name], a.units, a.doc + " (where asked: risk_levels)",
                with_k=True)
        for a in RISK_SCALARS:
            put(a.name, risk[a.name], a.units, a.doc + " (cells with risk_levels)")
    ramps = table.get("ramps")
    if ramps is not None:           # cells with power (MODEL.md E6)
        for name, (units, long_name) in RAMP_ARRAYS.items():
            put(name, ramps[name], units, long_name + " (MODEL.md E6; cells with power)",
                extra=ramp_dims)


def _write_table(f, sweep, cols: dict, table: dict) -> None:
    """The top-level per-cell table and /grid."""
    k_dim = _scale(f, "k", table["k"], "1", "tail level k of P(n_w >= k)")
    ramp_dims = ()
    if "ramps" in table:            # cells with power (MODEL.md E6): their D and X, all
        ramp_dims = tuple(_scale(f, name, table["ramps"][name], *CELL_DIMS[name][:1],
                                 f"{name.replace('_', ' ')} of the ramp table (every cell's, "
                                 "MODEL.md E6)") for name in ("ramp_window", "ramp_threshold"))
    for key in cols:                                  # the parameters, as coordinates
        f[key] = f["params"][key]
    _table_datasets(f, table, (f["cell"],), k_dim, " ".join(cols), ramp_dims)

    g = f.create_group("grid")
    g.attrs["long_name"] = ("the per-cell table on the grid's dimensions (one per [grid] key, "
                            "in order); select cells by parameter value")
    shape, coords = grid_axes(sweep.grid, cols, sweep.n_cells)
    dims = []
    for key, vals in coords.items():
        ds = _column(g, key, vals)
        ds.make_scale(key)
        units, long_name = grid_attrs(key)
        _attrs(ds, units if ds.dtype.kind in "iuf" else None, long_name)
        dims.append(ds)
    g["k"] = k_dim
    for ds in ramp_dims:
        g[ds.name.rsplit("/", 1)[-1]] = ds
    others = [k for k in cols if k not in coords]
    for key in others:
        ds = _column(g, key, np.asarray(cols[key]).reshape(shape))
        _attrs(ds, *PARAM_ATTRS[key])
        _attach(ds, *dims)
    cell = g.create_dataset("cell", data=np.arange(sweep.n_cells, dtype=np.int64).reshape(shape))
    _attrs(cell, "1", "cell index (its group is /cells/<cell:06d>)")
    _attach(cell, *dims)
    _table_datasets(g, table, tuple(dims), k_dim, " ".join(others + ["cell"]), ramp_dims)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

def check_version(f, path) -> int:
    v = int(f.attrs.get("format_version", 0))
    if v not in READABLE:
        raise ValueError(f"{path}: stormsim result format_version {v}; this stormsim reads "
                         f"versions {', '.join(map(str, READABLE))}: open it with a newer "
                         "stormsim")
    return v


def read_cell(g) -> dict:
    """A cell group's arrays (either version) as CellResult keywords."""
    pv = json.loads(g.attrs["params"])
    for k, v in pv.items():
        if isinstance(v, str) and v in ("inf", "-inf", "nan"):
            pv[k] = float(v)
    n = g["passage_time"].shape[0]
    arrays, sums, blocks = {}, {}, {}
    for a in RESULT_ARRAYS:
        arrays[a.name] = g[a.name][()] if a.name in g else None
        if a.summed:
            # None: a file written before this array existed (e.g. upcrossings)
            sums[a.name] = g[f"{a.name}_sum"][()] if f"{a.name}_sum" in g else None
            if f"{a.name}_block_sum" in g:
                blocks[a.name] = g[f"{a.name}_block_sum"][()]
    risk = None
    if "risk_k" in g:
        risk = {"levels": g["risk_k"][()]}
        for a in RISK_ARRAYS + RISK_SCALARS:
            ds = g[a.name]
            risk[a.name] = (np.asarray(ds.asstr()[()], dtype=str) if a.dtype is str
                            else ds[()])
    return dict(params=pv, fleets=n, fleet_index=np.arange(n), arrays=arrays, sums=sums,
                blocks=blocks, risk=risk,
                **{k: _fleet_array(g, k) for k in FLEET_ARRAYS},
                **{k: g[k][()] if k in g else np.full(g["T"].shape, v)
                   for k, v in FAILURE_FLEET_ARRAYS.items()},
                **_read_power(g))


def _read_power(g) -> dict:
    """A cell group's E6 per-job draws and ramp axes (none: a cell without power)."""
    if "power_mean" not in g:
        return {}
    return {"busy_power": g["busy_power"][()], "idle_power": g["idle_power"][()],
            "ramp_windows": tuple(float(x) for x in g["ramp_window"][()]),
            "ramp_thresholds": tuple(float(x) for x in g["ramp_threshold"][()])}


def _fleet_array(g, name: str) -> np.ndarray:
    """A per-job array of a stored cell; a file of 0.2.0 names the jitter sigma, and
    one written before E1/E2 has no snapshot, slowdown or weights (their defaults)."""
    if name == "jitter" and name not in g:
        name = "sigma"
    return g[name][()] if name in g else np.full(g["T"].shape, FLEET_ARRAY_DEFAULTS[name])

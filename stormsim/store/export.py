"""Results as data: xarray, pandas, CSV and JSON views of a sweep's cells.

Every number comes from :mod:`stormsim.stats.summary` (the same as ``stormsim
inspect`` and the result file's top-level table). pandas and xarray are
optional (``pip install 'stormsim[data]'``) and imported only here, when a
view is asked for.

Column names are ones a person can type: ``p_ge_4`` is P(n_w >= 4),
``p_ge_4_lo`` / ``p_ge_4_hi`` its 95 % interval, ``p_ge_4_method`` how that
was made (stormsim.stats.tails), ``p_ge_4_independent`` the independent-jobs law;
``median``, ``median_lo``, ``median_hi`` the Kaplan-Meier median first passage
in fleet cycles (``median_time...`` in seconds; in xarray ``median_cycles...``
and the coordinate ``load_L`` for ``load``: XARRAY_NAMES). A sweep with storm risk
(``risk_levels``) adds its numbers (stormsim.sweep.cellrisk: ``risk_p_ge_4``,
``risk_storms_per_s_ge_4_lo``, ``risk_storms_per_day_ge_4``, ``risk_level_method_ge_4``,
..., and per cell ``risk_fleets_run``, ``risk_replicates_run``, ...): in
the DataFrame, and at every level some cell asked in CSV and JSON.
"""
from __future__ import annotations

import csv
import io
import json
import math
import tomllib

import numpy as np

from ..stats.interval import CONFIDENCE
from ..stats.storms import STORM_METHODS
from ..stats.summary import (BY_LEVEL, CHECKPOINT_KEYS, GOODPUT_KEYS, METHOD_CODES, POWER_KEYS,
                              RAMP_ARRAYS, SCALARS, level_column, ramp_column, summary_table)
from ..sweep.cellrisk import PER_DAY, RISK_ARRAYS, RISK_SCALARS, asked_levels, per_day, risk_table
from ..sweep.keys import PARAM_ATTRS
from .layout import grid_attrs, grid_axes
from .tables import grid_value

__all__ = ["inspect_csv", "inspect_json", "to_dataframe", "to_xarray"]

_METHOD_NAMES = {v: k for k, v in METHOD_CODES.items()}
_STORM_METHOD_NAMES = {v: k for k, v in STORM_METHODS.items()}


def _need(module: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise ImportError(f"this view needs {module}, which is not installed: "
                          "pip install 'stormsim[data]'") from exc


def _grid(res) -> dict:

    try:
        grid = tomllib.loads(res.sweep_toml).get("grid", {})
    except Exception:   # the stored text is informative only: no grid view then
        return {}
    return {k: grid[k] for k in res.grid_keys if k in grid}


#: Names the xarray view gives instead of the table's: ``median`` and ``load``
#: are methods of ``xarray.Dataset`` (``ds.median()``, ``ds.load()``), so data
#: by those names would hide behind them. The file and the other views keep
#: the table's names.
XARRAY_NAMES = {"median": "median_cycles", "median_lo": "median_cycles_lo",
                "median_hi": "median_cycles_hi", "load": "load_L"}


def to_xarray(res, grid: bool = True, confidence: float = CONFIDENCE):
    """The per-cell table as an ``xarray.Dataset``, its names as in
    XARRAY_NAMES where the table's would be a Dataset method.

    With ``grid`` (default) on the grid's dimensions, one per [grid] key (as
    the result file's ``/grid`` group): ``ds.sel(load_L=0.9, m_over_sigma=64)``
    selects by parameter value. Else on a ``cell`` dimension, every parameter
    a coordinate (as the file's top level). Both have a ``k`` dimension
    (1..largest N; NaN where k > a cell's N). Units and long names are in
    each variable's attributes.
    """
    ds = _to_xarray(res, grid, confidence)
    return ds.rename({k: v for k, v in XARRAY_NAMES.items() if k in ds.variables})


def _to_xarray(res, grid: bool, confidence: float):
    xr = _need("xarray")

    n = res.n_cells
    risks = [None] * n
    table = summary_table(_keeping_risk(res, risks), n, confidence)
    k = table["k"]

    def attrs(units, long_name):
        return {"long_name": long_name, **({"units": units} if units is not None else {})}

    cols = {key: np.asarray(v) for key, v in res.params.items()}
    data = {}
    for name, (_, units, long_name) in SCALARS.items():
        data[name] = (("cell",), table[name], attrs(units, long_name))
    for name, (units, long_name) in BY_LEVEL.items():
        data[name] = (("cell", "k"), table[name], attrs(units, long_name))
    data["p_ge_method"] = (("cell", "k"), table["p_ge_method"],
                           {"long_name": "how each P(n_w >= k) interval was made",
                            "flag_meanings": " ".join(_METHOD_NAMES[i].replace("-", "_")
                                                      for i in sorted(_METHOD_NAMES)),
                            "flag_values": np.array(sorted(_METHOD_NAMES), np.int8)})
    data["storms_method"] = (("cell", "k"), table["storms_method"],
                             {"long_name": "how each storm rate / duration interval was made",
                              "flag_meanings": " ".join(
                                  _STORM_METHOD_NAMES[i].replace("-", "_")
                                  for i in sorted(_STORM_METHOD_NAMES)),
                              "flag_values": np.array(sorted(_STORM_METHOD_NAMES), np.int8)})
    data["independent_law"] = (("cell",), table["independent_law"],
                               {"long_name": "law of the independent baseline"})
    risk = _risk(risks, k.size)
    if risk is not None:
        for a in RISK_ARRAYS:
            data[a.name] = (("cell", "k"), risk[a.name], attrs(a.units, a.doc))
        for name, (_, long_name) in PER_DAY.items():
            data[name] = (("cell", "k"), risk[name], attrs("1/d", long_name))
        for a in RISK_SCALARS:
            data[a.name] = (("cell",), risk[a.name], attrs(a.units, a.doc))
    coords = {"cell": ("cell", np.arange(n), {"long_name": "cell index"}),
              "k": ("k", k, {"units": "1", "long_name": "tail level k of P(n_w >= k)"})}
    _ramp_variables(table.get("ramps"), data, coords, attrs)
    for key, col in cols.items():
        coords[key] = ("cell", col, attrs(*PARAM_ATTRS[key]))
    meta = {"sweep_name": res.name, "sweep_hash": res.sweep_hash, "occupancy": res.occupancy,
            "confidence": confidence, "complete": int(res.complete)}
    ds = xr.Dataset(data, coords=coords, attrs=meta)
    g = _grid(res)
    if not grid or (res.grid_keys and len(g) != len(res.grid_keys)):
        return ds
    shape, axes = grid_axes(g, cols, n)
    dims = tuple(axes)
    out = {}
    for name, var in ds.data_vars.items():
        extra = var.shape[1:]
        out[name] = (dims + var.dims[1:], var.values.reshape(shape + extra), var.attrs)
    gc = {key: (key, vals, ds[key].attrs if key in ds.coords else
                {k: v for k, v in zip(("units", "long_name"), grid_attrs(key)) if v})
          for key, vals in axes.items()}
    gc["k"] = ds["k"]
    for key in ("ramp_window", "ramp_threshold"):
        if key in ds.coords:
            gc[key] = ds[key]
    for key in cols:
        if key not in axes:
            gc[key] = (dims, cols[key].reshape(shape), ds[key].attrs)
    gc["cell"] = (dims, np.arange(n).reshape(shape), {"long_name": "cell index"})
    return xr.Dataset(out, coords=gc, attrs=meta)


def _ramp_variables(ramps: dict | None, data: dict, coords: dict, attrs) -> None:
    """The ramp table (cells with power, MODEL.md E6; stats.summary.ramp_table) into
    the xarray view's ``data`` and ``coords``, on (cell, ramp_window, ramp_threshold)."""
    if ramps is None:
        return
    for name, (units, long_name) in RAMP_ARRAYS.items():
        data[name] = (("cell", "ramp_window", "ramp_threshold"), ramps[name],
                      attrs(units, long_name + " (MODEL.md E6; cells with power)"))
    coords["ramp_window"] = ("ramp_window", ramps["ramp_window"],
                             {"units": "s", "long_name": "ramp window D (MODEL.md E6)"})
    coords["ramp_threshold"] = ("ramp_threshold", ramps["ramp_threshold"],
                                {"units": "W", "long_name": "ramp threshold X (MODEL.md E6)"})


def _keeping_risk(res, risks: list):
    """Each cell of ``res``, read once, keeping its storm risk in ``risks[i]``:
    the views need the cells' summaries and their risks, and a second pass
    would read every cell (all its arrays) again."""
    for c in res:
        risks[c.index] = c.risk
        yield c


def _risk(risks: list, kmax: int) -> dict | None:
    """The storm-risk table of the cells' risks (stormsim.sweep.cellrisk.risk_table, with
    per-day rates and ``asked``: the levels any cell asked), or None when no
    cell has a storm risk."""
    if all(r is None for r in risks):
        return None
    table = risk_table(risks, kmax)
    return {**table, **per_day(table), "asked": asked_levels(risks)}


def _risk_columns(risk: dict, levels) -> dict:
    """The storm-risk columns of the table views (pandas, CSV, JSON), in order:
    each RISK_SCALARS' column, then per level k its RISK_ARRAYS' columns
    (``risk_p_ge_{k}``, ...) and the per-day rates (``risk_storms_per_day_ge_{k}``,
    ``_lo``, ``_hi``): name -> array (cells,)."""
    cols = {a.column: risk[a.name] for a in RISK_SCALARS}
    for kk in levels:
        for a in RISK_ARRAYS:
            cols[a.column.format(k=kk)] = risk[a.name][:, kk - 1]
        for name in PER_DAY:
            cols[name.replace("_per_day", f"_per_day_ge_{kk}", 1)] = risk[name][:, kk - 1]
    return cols


def _levels(res, levels) -> list[int]:
    if levels is None:
        return list(range(1, int(np.max(res.params["N"])) + 1)) if res.n_cells else []
    return [int(x) for x in np.atleast_1d(levels)]


def to_dataframe(res, levels=None, confidence: float = CONFIDENCE):
    """One row per cell (index ``cell``): every parameter, the medians and, for
    each level k in ``levels`` (default: 1..largest N), ``p_ge_K``, ``p_ge_K_lo``,
    ``p_ge_K_hi``, ``p_ge_K_method`` and ``p_ge_K_independent`` (NaN where
    k > the cell's N)."""
    pd = _need("pandas")
    risks = [None] * res.n_cells
    table = summary_table(_keeping_risk(res, risks), res.n_cells, confidence)
    cols = {key: np.asarray(v) for key, v in res.params.items()}
    for name in SCALARS:
        cols[name] = table[name]
    kmax = table["k"].size
    for kk in _levels(res, levels):
        if not 1 <= kk:
            raise ValueError(f"level k = {kk}: must be >= 1")
        j = kk - 1
        inside = j < kmax
        for name in BY_LEVEL:
            cols[level_column(name, kk)] = (
                table[name][:, j] if inside else np.full(res.n_cells, np.nan))
        codes = table["p_ge_method"][:, j] if inside else np.full(res.n_cells, -1)
        cols[f"p_ge_{kk}_method"] = [_METHOD_NAMES.get(int(c), "no such level") for c in codes]
        codes = table["storms_method"][:, j] if inside else np.full(res.n_cells, -1)
        cols[level_column("storms_method", kk)] = [
            _STORM_METHOD_NAMES.get(int(c), "no such level") for c in codes]
    cols["independent_law"] = table["independent_law"]
    ramps = table.get("ramps")
    if ramps is not None:          # cells with power (MODEL.md E6), per window and threshold
        for a, window in enumerate(ramps["ramp_window"]):
            for b, threshold in enumerate(ramps["ramp_threshold"]):
                for name in RAMP_ARRAYS:
                    cols[ramp_column(name, window, threshold)] = ramps[name][:, a, b]
    risk = _risk(risks, kmax)
    if risk is not None:           # the levels some cell asked, among those shown
        cols.update(_risk_columns(risk, [x for x in _levels(res, levels) if x in risk["asked"]]))
    df = pd.DataFrame(cols, index=pd.RangeIndex(res.n_cells, name="cell"))
    df.attrs.update(sweep_name=res.name, confidence=confidence)
    return df


#: The per-level columns of ``stormsim inspect --format csv/json``, in order
#: (with ``--storms``, then STORM_COLUMNS), named by level_column.
LEVEL_COLUMNS = ("k", "p_ge", "p_ge_lo", "p_ge_hi", "p_ge_method")
STORM_COLUMNS = ("storms", "storms_method", "storms_per_s", "storms_per_s_lo", "storms_per_s_hi",
                 "storm_duration", "storm_duration_lo", "storm_duration_hi")


def _rows(res, levels, unit: str, storms: bool = False,
          durations: bool = False) -> tuple[list[str], list[dict]]:
    risks = [None] * res.n_cells
    s = res.summary(levels=levels, unit=unit, cells=_keeping_risk(res, risks))
    P = res.params
    names = ["cell"] + list(res.grid_keys) + ["N", "fleets", "fleets_done", "passed",
                                              "censored", "median", "median_lo", "median_hi"]
    names = list(dict.fromkeys(names))
    for lv in levels:
        names += [level_column(name, lv) for name in LEVEL_COLUMNS + (STORM_COLUMNS if storms else ())]
    if durations:                  # checkpoint durations and waits (MODEL.md E7)
        names += list(CHECKPOINT_KEYS)
    if res.n_cells and np.any(np.asarray(s["failures"]) >= 0):   # failures, goodput (E8)
        names += list(GOODPUT_KEYS)
    if res.n_cells and np.any(np.isfinite(np.asarray(s["power_mean"]))):   # power (E6)
        names += list(POWER_KEYS) + [k for k in s if k.startswith(tuple(RAMP_ARRAYS))]
    rows = []
    for i in range(res.n_cells):
        r = {"cell": i}
        r.update({key: (s[key][i] if key in s else grid_value(res, key, i)) for key in names[1:]})
        for lv in levels:
            if not s[level_column("k", lv)][i]:                   # k > the cell's N
                r[level_column("p_ge_method", lv)] = "no such level"
        rows.append(r)
    kmax = int(np.max(P["N"])) if res.n_cells else 0
    risk = _risk(risks, kmax)
    if risk is not None:           # every level some cell asked (absolute k, not --levels')
        extra = _risk_columns(risk, risk["asked"])
        names += list(extra)
        for i, r in enumerate(rows):
            r.update({name: col[i] for name, col in extra.items()})
    return names, [{k: _plain(r[k]) for k in names} for r in rows]


def _plain(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v if isinstance(v, (int, str)) else str(v)


def inspect_csv(res, levels, unit: str = "cycle", storms: bool = False,
                durations: bool = False) -> str:
    """``stormsim inspect --format csv``: one row per cell; NaN is empty,
    infinity ``inf`` (pandas.read_csv reads both back)."""
    names, rows = _rows(res, levels, unit, storms, durations)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if isinstance(v, float) and math.isnan(v) else
                    ("inf" if v == math.inf else "-inf" if v == -math.inf else v)
                    for v in (r[k] for k in names)])
    return buf.getvalue()


def inspect_json(res, levels, unit: str = "cycle", storms: bool = False,
                 durations: bool = False) -> str:
    """``stormsim inspect --format json``: the sweep, the columns, one object
    per cell (NaN is null, infinity the string "inf") and what the methods mean."""
    names, rows = _rows(res, levels, unit, storms, durations)

    def enc(v):
        if isinstance(v, float):
            if math.isnan(v):
                return None
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
        return v

    doc = {"path": str(res.path), "sweep_name": res.name, "complete": bool(res.complete),
           "occupancy": res.occupancy, "unit": unit, "confidence": CONFIDENCE,
           "columns": names, "cells": [{k: enc(r[k]) for k in names} for r in rows],
           "methods": METHOD_NOTES}
    return json.dumps(doc, indent=1)


#: What each interval method means (for the JSON output and the docs).
METHOD_NOTES = {
    "median": "Kaplan-Meier median first passage, censored fleets included; 95% interval by "
              "Brookmeyer-Crowley (log-log band); inf: beyond the cycle cap / unbounded",
    "ratio-logit": "P(n_w>=k) = sum of fleets' time at n_w>=k / their total time; 95% interval "
                   "by the delta method of a ratio estimator over independent fleets (or fixed "
                   "blocks of fleets in occupancy='sum' mode), on the logit scale, Student t",
    "zero-bound": "no fleet reached k: the interval is [0, 1 - 0.05**(1/fleets)], a one-sided "
                  "95% upper bound",
    "one-bound": "every fleet always at n_w>=k: [0.05**(1/fleets), 1], a one-sided lower bound",
    "none": "no interval: a single independent unit (one fleet, or a version-1 file in "
            "occupancy='sum' mode, which kept only the total)",
    "ratio-log": "storms_per_s = storms counted / measured time, storm_duration = time at "
                 "n_w>=k / storms; 95% interval by the delta method of a ratio estimator over "
                 "the same independent units, on the log scale, Student t (stormsim.stats.storms)",
    "storms zero-bound": "no storm at k: storms_per_s in [0, -ln(0.05)/measured time], a "
                         "one-sided 95% Poisson upper bound; storm_duration NaN",
    "not-recorded": "a result written before storms were counted: NaN",
    "structural": "NaN: the fleets stop at their first passage to n_w>=passage_level, so the "
                  "time at those levels is zero by construction",
}

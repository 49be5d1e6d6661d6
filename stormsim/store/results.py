"""Reading a sweep's results: a finished HDF5 file, or the parts of an unfinished sweep.

``open_results(path)`` -> :class:`Results`: the parameter table (numpy
arrays, one row per cell) and each cell's arrays
(:class:`~stormsim.store.cellresult.CellResult`),
read one cell at a time. The layout is docs/FORMAT.md; stormsim.store.layout
knows it (names, writer, cell reader).
"""
from __future__ import annotations

import json
import math
import re
import tomllib
import warnings
from pathlib import Path

import h5py
import numpy as np

from .._args import check_path
from .._deprecated import UNSET, old_keyword
from .._version import __version__
from ..errors import SpecError, SweepError
from ..stats.interval import CONFIDENCE
from ..stats.summary import (CHECKPOINT_KEYS, GOODPUT_KEYS, POWER_KEYS, RAMP_ARRAYS, SCALARS,
                             cell_summary, level_column, ramp_column)
from .._args import check_tail_level, tail_level
from ..stats.tails import monotone_bound
from ..sweep.spec import Sweep, parse_sweep
from ..sweep.work import FleetRanges
from .cellresult import CellResult, cell_from_parts
from .export import to_dataframe, to_xarray
from .files import DirLock
from .layout import FORMAT, FORMAT_VERSION, cell_group, check_version, read_cell
from .parts import is_risk_file, parts_dir, read_manifest, read_risk, read_unit, unit_pieces
from .tables import inspect_table

__all__ = ["DEFAULT_TAIL_LEVELS", "FORMAT", "FORMAT_VERSION", "CellResult", "Results",
           "cell_group", "check_tail_level", "open_results", "read_identity", "tail_level",
           "tail_levels"]

DEFAULT_TAIL_LEVELS = ("N/4", "N/2", "N")


def tail_levels(spec, n_jobs) -> np.ndarray:
    """The k of a tail level for each cell's N (int64), 0 where it is above that N.

    Raises SpecError when the level is bad for every N (naming them)."""
    check_tail_level(spec)
    ks = []
    for n in np.asarray(n_jobs, dtype=np.int64).tolist():
        try:
            ks.append(tail_level(spec, n))
        except SpecError:
            ks.append(0)
    if ks and not any(ks):
        ns = ", ".join(str(n) for n in sorted(set(np.asarray(n_jobs).tolist())))
        raise SpecError(f"tail level {spec!r}: above N in every cell (N = {ns}); k must be "
                        "in 1..N")
    return np.array(ks, dtype=np.int64)


class Results:
    """A sweep's results: the parameter table and each cell's arrays.

    Attributes
    ----------
    path : str
    complete : bool (False: read from the parts of an unfinished sweep)
    running : bool (True: unfinished, and another process is writing it now;
        ``writer`` says which, e.g. "pid 1234")
    name, description, version, occupancy ("fleet" | "sum"), sweep_hash, sweep_toml
    grid_keys : list of the varied keys; fixed : dict of the fixed ones
    params : dict key -> array (n_cells,) (see docs/FORMAT.md)
    fleets, fleets_done : int64 (n_cells,)
    """

    def __init__(self):
        raise TypeError("use stormsim.open_results(path)")

    @classmethod
    def new(cls, **kw) -> "Results":
        """(For the readers in stormsim: builds Results from its attributes.)"""
        self = object.__new__(cls)
        self.__dict__.update(kw)
        return self

    @classmethod
    def from_parts(cls, sweep: Sweep, parts_of, *, complete: bool, location: str,
                   done: FleetRanges, risk_of=None) -> "Results":
        """Results of a sweep whose cell i's parts are ``parts_of(i)`` (and storm
        risk ``risk_of(i)``, a RiskPart or None), the fleets they hold ``done``."""
        done = np.array([done.count(c.index) for c in sweep.cells], dtype=np.int64)
        return cls.new(path=location, complete=complete, running=False, writer=None,
                       name=sweep.name,
                       description=sweep.description, version=__version__,
                       occupancy=sweep.occupancy, sweep_hash=sweep.hash, sweep_toml=sweep.text,
                       grid_keys=sweep.grid_keys, fixed=dict(sweep.fixed),
                       params=sweep.columns(),
                       fleets=np.array([c.fleets for c in sweep.cells], dtype=np.int64),
                       fleets_done=done,
                       _cell=lambda i: cell_from_parts(
                           sweep.cells[i], parts_of(i), keep_per_fleet=sweep.occupancy == "fleet",
                           risk=risk_of(i) if risk_of else None))

    @property
    def n_cells(self) -> int:
        return int(self.fleets.size)

    def __len__(self) -> int:
        return self.n_cells

    def __iter__(self):
        it = self.__dict__.get("_iter")
        return it() if it is not None else (self.cell(i) for i in range(self.n_cells))

    def cell(self, i: int) -> CellResult:
        """Cell i's arrays (read now; one cell in memory at a time)."""
        if not 0 <= int(i) < self.n_cells:
            raise IndexError(f"cell {i}: the sweep has cells 0..{self.n_cells - 1}")
        return self._cell(int(i))

    def summary(self, levels=DEFAULT_TAIL_LEVELS, unit: str = "cycle",
                confidence: float = CONFIDENCE, cells=None, *, tail=UNSET,
                level=UNSET) -> dict[str, np.ndarray]:
        """Per-cell summary arrays (n_cells,), as ``stormsim inspect`` prints them.

        ``cells``: the cells to summarize (default: every cell, read now); a
        view that needs more of each cell (e.g. its storm risk) passes a
        generator over ``self`` that keeps it, so each cell is read once.

        Keys: fleets, fleets_done, passed, censored, median, median_lo,
        median_hi (Kaplan-Meier, censoring included; NaN without a passage
        level; passed + censored = fleets_done, counted in ``unit``: in
        cycles a passage at a cycle >= the cap K is censored at K), and per
        level L of ``levels`` (int k, 'N' or 'N/q') the columns the exports
        have, named by stormsim.stats.summary.level_column (L = 'N/4' is
        written N_4): ``k_L`` the k it resolves to per cell, ``p_ge_L`` =
        P(n_w >= k) with ``p_ge_L_lo`` and ``p_ge_L_hi`` (its interval at
        ``confidence``), ``p_ge_L_method`` how that was made
        (stormsim.stats.tails: "ratio-logit", "zero-bound" (no fleet reached
        k: [0, one-sided upper bound]), "one-bound", "none", or
        "structural": NaN, zero by construction for a fleet stopped at its
        passage), ``p_ge_L_bound`` the upper end shown (``_hi``, or where no
        fleet reached k the tighter stormsim.stats.tails.monotone_bound) and
        ``p_ge_L_law`` the exact law's value where it exists. A level above
        a cell's N gives NaN there (and k = 0); a level outside 1..N for
        every cell raises SpecError.

        Storms (MODEL.md E3, stormsim.stats.storms), per level:
        ``storms_per_s_ge_L`` the storm rate nu_k (storms per second of
        measured time) and ``storm_duration_ge_L`` the mean storm duration
        (s), each with ``_lo`` and ``_hi``; ``storms_per_s_ge_L_law`` the
        law's rate; ``storms_ge_L`` the count and ``storms_ge_L_method``
        ("ratio-log", "zero-bound": no storm, [0, one-sided Poisson upper
        bound] for the rate and NaN duration, "none", "structural",
        "not-recorded": a file written before storms were counted).
        Checkpoint durations and waits: the
        stormsim.stats.summary.CHECKPOINT_KEYS (``duration_mean``, ...).
        Failures and goodput (MODEL.md E8): the GOODPUT_KEYS (``goodput``,
        ``goodput_lo``, ``goodput_lost``, ..., ``failures_per_day``; NaN, -1
        and 'none' for a cell without failures).
        Power (MODEL.md E6): the POWER_KEYS (``power_mean`` with ``_lo``,
        ``_hi``, ``power_min``, ``power_max``; NaN for a cell without power)
        and, per ramp window D and threshold X of some cell, each of
        RAMP_ARRAYS as ``ramp_column`` names it (``ramp_events_per_day_D60_X614400``,
        ``..._lo``, ``ramp_share_D1_X614400``, ``ramp_method_D1_X614400``; NaN
        and '' in cells without them).
        The keys of 0.2.0 (``P(n_w>=L):lo``, ``k:L``, ...) still read, with a
        DeprecationWarning, for one release; so do ``tail=`` and ``level=``.
        """
        levels = old_keyword("Results.summary", "tail", "levels", tail, levels)
        confidence = old_keyword("Results.summary", "level", "confidence", level, confidence)
        ks = {lv: tail_levels(lv, self.params["N"]) for lv in levels}
        out = _summary_columns(self.n_cells, levels, ks, self.fleets, self.fleets_done)
        for c in (self if cells is None else cells):
            _summarize_cell(out, c, levels, ks, unit, confidence)
        return out

    def table(self, levels=DEFAULT_TAIL_LEVELS, unit: str = "cycle", storms: bool = False,
              risk: bool = False, durations: bool = False, *, tail=UNSET) -> str:
        """The text table of ``stormsim inspect`` (``storms``: with storm rates and
        durations; ``risk``: then the cells' storm risk, stormsim.store.tables.risk_table_text;
        ``durations``: then their checkpoint durations, durations_table_text)."""
        levels = old_keyword("Results.table", "tail", "levels", tail, levels)
        return inspect_table(self, levels, unit, storms=storms, risk=risk, durations=durations)

    def to_xarray(self, grid: bool = True, confidence: float = CONFIDENCE, *, level=UNSET):
        """The per-cell table as an xarray.Dataset, on the grid's dimensions
        (``.sel(load=0.9)``) or, with ``grid=False``, on ``cell``; see
        stormsim.store.export.to_xarray. Needs xarray."""
        confidence = old_keyword("Results.to_xarray", "level", "confidence", level, confidence)
        return to_xarray(self, grid=grid, confidence=confidence)

    def to_dataframe(self, levels=None, confidence: float = CONFIDENCE, *, k=UNSET, level=UNSET):
        """One row per cell as a pandas.DataFrame (``p_ge_4``, ``p_ge_4_lo``, ...,
        ``median``, ``median_lo``, ...); see stormsim.store.export.to_dataframe. Needs pandas."""
        levels = old_keyword("Results.to_dataframe", "k", "levels", k, levels)
        confidence = old_keyword("Results.to_dataframe", "level", "confidence", level, confidence)
        return to_dataframe(self, levels=levels, confidence=confidence)

    def __repr__(self) -> str:
        state = "complete" if self.complete else "unfinished"
        return (f"<stormsim sweep results {self.name!r}: {self.n_cells} cells, {state}, "
                f"{int(self.fleets_done.sum())}/{int(self.fleets.sum())} fleets, {self.path}>")


#: Results.summary's numbers per level, from each cell's cell_summary (BY_LEVEL
#: names; ``p_ge_bound`` is the upper end shown, see _summarize_cell).
SUMMARY_BY_LEVEL = ("p_ge", "p_ge_lo", "p_ge_hi", "p_ge_method", "p_ge_law", "p_ge_bound",
                    "storms_per_s", "storms_per_s_lo", "storms_per_s_hi", "storms_per_s_law",
                    "storm_duration", "storm_duration_lo", "storm_duration_hi", "storms",
                    "storms_method")


class Summary(dict):
    """Results.summary's arrays by name. The keys of 0.2.0 still read, with a
    DeprecationWarning naming the one name: ``P(n_w>=L)`` (and ``:lo``, ``:hi``,
    ``:method``, ``:bound``, ``:law``) is ``p_ge_L...``, ``k:L`` is ``k_L``,
    ``storms_per_s(n_w>=L):lo`` is ``storms_per_s_ge_L_lo``, and so on."""

    def __missing__(self, key):
        new = _new_summary_key(key)
        if new is None or not dict.__contains__(self, new):
            raise KeyError(key)
        warnings.warn(f"Results.summary()[{key!r}] is now [{new!r}]; the old key goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        return self[new]


def _new_summary_key(key) -> str | None:
    """The one name of a Results.summary key of 0.2.0, or None."""
    m = re.fullmatch(r"k:(.+)", str(key))
    if m:
        return level_column("k", m.group(1))
    m = re.fullmatch(r"(P|storms_per_s|storm_duration|storms)\(n_w>=(.+?)\)(?::(\w+))?", str(key))
    if m is None:
        return None
    stem = "p_ge" if m.group(1) == "P" else m.group(1)
    return level_column(stem + (f"_{m.group(3)}" if m.group(3) else ""), m.group(2))


def _summary_columns(n: int, levels, ks: dict, fleets, fleets_done) -> Summary:
    """Results.summary's arrays before any cell is read: NaN, 0, 'none' (the
    checkpoint keys come with the first cell)."""
    out = Summary(fleets=fleets.copy(), fleets_done=fleets_done.copy(),
                  passed=np.zeros(n, np.int64), censored=np.zeros(n, np.int64),
                  median=np.full(n, np.nan), median_lo=np.full(n, np.nan),
                  median_hi=np.full(n, np.nan))
    for lv in levels:
        out[level_column("k", lv)] = ks[lv]
        for name in SUMMARY_BY_LEVEL:
            out[level_column(name, lv)] = (np.full(n, "none", dtype=object) if
                                           name.endswith("_method") else np.full(n, np.nan))
    return out


def _summarize_cell(out: dict, c, levels, ks: dict, unit: str, confidence: float) -> None:
    """Cell c's entries of Results.summary's arrays ``out``."""
    i = c.index
    out["fleets_done"][i] = c.fleets_done
    if c.passage_level:
        # counted as the median's Kaplan-Meier counts them: in cycles a
        # passage at a cycle >= K is censored at the cap K, in seconds
        # it is a passage (see survival.passage_times)
        if c.fleets_done:
            km = c.survival(unit, confidence)
            out["censored"][i] = km.n_censored
            out["median"][i], out["median_lo"][i], out["median_hi"][i] = km.median
        out["passed"][i] = c.fleets_done - out["censored"][i]
    cs = cell_summary(c, confidence) if c.fleets_done else None
    for key in CHECKPOINT_KEYS:      # checkpoint durations (MODEL.md E7); none: NaN, -1
        none = -1 if key == "checkpoints" else math.nan
        out.setdefault(key, np.full(out["fleets"].size, none))[i] = none if cs is None else cs[key]
    for key in GOODPUT_KEYS:         # failures and goodput (MODEL.md E8); none: NaN, -1, 'none'
        dtype = SCALARS[key][0]
        none = -1 if dtype is np.int64 else "none" if dtype is str else math.nan
        col = out.setdefault(key, np.full(out["fleets"].size, none,
                                          dtype=object if dtype is str else dtype))
        col[i] = none if cs is None else cs[key]
    for key in POWER_KEYS:           # power (MODEL.md E6); none: NaN
        out.setdefault(key, np.full(out["fleets"].size, math.nan))[i] = (
            math.nan if cs is None else cs[key])
    if cs is not None and cs["ramps"] is not None:
        _ramp_columns(out, i, cs["ramps"])
    if cs is None:
        return
    cs["p_ge_bound"] = monotone_bound(cs["p_ge_hi"], cs["p_ge_method"])
    for lv in levels:
        k = ks[lv][i]
        if k:
            for name in SUMMARY_BY_LEVEL:
                out[level_column(name, lv)][i] = cs[name][k]


def _ramp_columns(out: dict, i: int, r) -> None:
    """Cell i's ramps (a RampEstimate, MODEL.md E6) into Results.summary's arrays,
    one per RAMP_ARRAYS name, window D and threshold X (``ramp_column``: e.g.
    ``ramp_events_per_day_D60_X614400``, ``ramp_share_D1_X614400_hi``); NaN ('' for
    the method) in other cells."""
    n = out["fleets"].size
    for a, window in enumerate(r.windows):
        for b, threshold in enumerate(r.thresholds):
            for name in RAMP_ARRAYS:
                col = out.setdefault(ramp_column(name, window, threshold),
                                     np.full(n, "", dtype=object) if name == "ramp_method"
                                     else np.full(n, math.nan))
                col[i] = r.method[a, b] if name == "ramp_method" else getattr(r, name)[a, b]


def read_identity(path: Path) -> dict | None:
    """Root attributes of a finished result, or None if it is not one."""

    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") != FORMAT:
                return None
            return {k: f.attrs[k].item() if hasattr(f.attrs[k], "item") else f.attrs[k]
                    for k in ("sweep_hash", "sweep_name", "n_cells", "stormsim_version",
                              "algorithm_version", "sweep_source", "sweep_toml")
                    if k in f.attrs}
    except (OSError, ValueError):
        return None


def _h5_results(path: Path) -> Results:

    with h5py.File(path, "r") as f:
        version = check_version(f, path)
        a = f.attrs
        params = {}
        for k, ds in f["params"].items():
            if k == "cell":                     # layout 2: the dimension scale
                continue
            params[k] = ds.asstr()[()].astype(str) if h5py.check_string_dtype(ds.dtype) else ds[()]
        fleets = np.asarray(params["fleets"], dtype=np.int64)
        meta = dict(path=str(path), complete=True, running=False, writer=None, name=str(a["sweep_name"]),
                    description=str(a["sweep_description"]), version=str(a["stormsim_version"]),
                    occupancy=str(a["occupancy"]), sweep_hash=str(a["sweep_hash"]),
                    sweep_toml=str(a["sweep_toml"]), grid_keys=json.loads(a["grid_keys"]),
                    fixed={k: None for k in json.loads(a["fixed_keys"])}, params=params,
                    fleets=fleets, fleets_done=fleets.copy(), format_version=version)
    try:

        fx = tomllib.loads(meta["sweep_toml"]).get("fixed", {})
        meta["fixed"] = {k: fx.get(k) for k in meta["fixed"]}
    except Exception:  # the stored text is informative only
        pass

    def from_group(i: int, g) -> CellResult:
        return CellResult(index=i, **read_cell(g))

    def read_cell_at(i: int) -> CellResult:
        with h5py.File(path, "r") as f:
            return from_group(i, f["cells"][cell_group(i)])

    def iterate():
        with h5py.File(path, "r") as f:        # one open for all cells
            cells = f["cells"]
            for i in range(len(fleets)):
                yield from_group(i, cells[cell_group(i)])

    return Results.new(**meta, _cell=read_cell_at, _iter=iterate)


def _parts_results(path: Path, parts: Path) -> Results:
    man = read_manifest(parts)
    if man is None:
        raise SweepError(f"{parts}: no readable MANIFEST.json; not the parts of a stormsim sweep")
    sweep = parse_sweep(man["sweep_toml"], man.get("sweep_source", str(parts)))
    if sweep.hash != man.get("sweep_hash"):
        raise SweepError(f"{parts} was made by stormsim {man.get('stormsim_version')}, whose "
                         "cells this version resolves differently: open it with that version")
    found = _PartsFound(parts, sweep)
    res = Results.from_parts(sweep, found.parts_of, complete=False, location=str(path),
                             done=found.done, risk_of=found.risk_of)
    res.version = str(man.get("stormsim_version"))
    res.writer = DirLock(parts, "").holder_elsewhere()
    res.running = res.writer is not None
    return res


class _PartsFound:
    """The unit and storm-risk files of an unfinished sweep that pass their checks
    (a file removed by a finishing run, or not trustworthy, is skipped), read one
    cell at a time (the parts of the last cell read are kept)."""

    def __init__(self, parts: Path, sweep: Sweep):
        self.sweep = sweep
        self.index: dict[int, set] = {}           # cell -> unit files holding some of it
        self.done = FleetRanges()
        self.risk_files = {int(p.name[1:-4]): p for p in sorted(parts.glob("r*.npz"))
                           if is_risk_file(p)}    # cell -> its storm-risk file
        for p in sorted(parts.glob("u*.npz")):
            pieces = self._pieces(p)
            for q in pieces:
                self.done.add(q["cell"], q["start"], q["stop"])
                self.index.setdefault(q["cell"], set()).add(p)
        self._last: tuple = (None, [])            # (cell, its parts)

    def _pieces(self, path: Path) -> list:
        """The pieces of a unit file; none if it fails its checks or overlaps another."""
        try:
            pieces = unit_pieces(path, self.sweep)
            if any(self.done.overlaps(q["cell"], q["start"], q["stop"]) for q in pieces):
                return []
        except Exception:  # removed by a finishing run, or not trustworthy: skip
            return []
        return pieces

    def parts_of(self, i: int) -> list:
        """Cell i's parts, in fleet order."""
        if self._last[0] != i:
            out = []
            for path in sorted(self.index.get(i, ())):
                try:
                    out.extend(read_unit(path, self.sweep, only_cell=i))
                except Exception:  # removed by a finishing run, or not trustworthy: skip
                    continue
            self._last = (i, sorted(out, key=lambda x: x.start))
        return self._last[1]

    def risk_of(self, i: int):
        """Cell i's storm risk (a RiskPart), or None."""
        try:
            return read_risk(self.risk_files[i], self.sweep) if i in self.risk_files else None
        except Exception:  # removed by a finishing run, or not trustworthy: skip
            return None


def open_results(path) -> Results:
    """Open a sweep's results for reading (plain numpy arrays; nothing is kept open).

    ``path`` is the HDF5 output of ``stormsim sweep``. While that sweep is
    unfinished (running or interrupted), the output does not exist yet and
    the finished units are read from ``path.parts/`` instead
    (``Results.complete`` is then False). A ``.parts`` directory may also be
    given directly.
    """
    p = Path(check_path("path", path, "a sweep result (HDF5, or its .parts directory)"))
    if p.is_dir() and p.name.endswith(".parts"):
        return _parts_results(p.with_name(p.name[:-len(".parts")]), p)
    if p.exists():
        if read_identity(p) is None:
            raise SweepError(f"{p} is not a stormsim sweep result (no '{FORMAT}' format "
                             "attribute, or not an HDF5 file)")
        return _h5_results(p)
    parts = parts_dir(p)
    if parts.is_dir():
        return _parts_results(p, parts)
    raise SweepError(f"{p}: no such result (and no unfinished sweep in {parts})")

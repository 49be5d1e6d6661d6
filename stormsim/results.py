"""Reading a sweep's results: a finished HDF5 file, or the parts of an unfinished sweep.

``open_results(path)`` -> :class:`Results`: the parameter table (numpy
arrays, one row per cell) and each cell's arrays (:class:`CellResult`),
read one cell at a time. The layout is docs/FORMAT.md; its names live here
(``FORMAT``, :func:`cell_group`) and the writer (stormsim.store) uses them.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._parts import parts_dir, read_manifest, read_unit, unit_pieces
from ._version import __version__
from .errors import SweepError
from .spec import Sweep, parse_sweep
from .tables import inspect_table
from .work import RESULT_ARRAYS, FleetRanges, add_exact, exact_to_float

__all__ = ["DEFAULT_TAIL_LEVELS", "FORMAT", "FORMAT_VERSION", "CellResult", "Results",
           "cell_group", "open_results", "read_identity", "tail_level"]

FORMAT = "stormsim.sweep"
FORMAT_VERSION = 1

#: The per-job arrays of a cell's fleet, as stored: dataset name -> Fleet attribute.
FLEET_ARRAYS = {"T": "T", "d": "d", "sigma": "jitter", "f": "f", "snapshot": "snapshot",
                "slowdown": "slowdown", "weights": "weights"}
#: What a file written before an array existed means by its absence (MODEL.md E1, E2 defaults).
FLEET_ARRAY_DEFAULTS = {"snapshot": 0.0, "slowdown": 0.0, "weights": 1.0}


def cell_group(i: int) -> str:
    """The HDF5 group of cell i, below /cells."""
    return f"{i:06d}"


DEFAULT_TAIL_LEVELS = ("N/4", "N/2", "N")


def tail_level(spec, n_jobs: int) -> int:
    """A tail level: an int k, 'N', or 'N/q' (k = ceil(N / q)); clipped to 1..N."""
    if isinstance(spec, (int, np.integer)):
        k = int(spec)
    else:
        s = str(spec).strip().replace(" ", "")
        m = re.fullmatch(r"N(?:/(\d+(?:\.\d+)?))?", s)
        if m:
            k = n_jobs if m.group(1) is None else math.ceil(n_jobs / float(m.group(1)))
        elif re.fullmatch(r"\d+", s):
            k = int(s)
        else:
            raise ValueError(f"tail level {spec!r}: must be an integer k, 'N' or 'N/q' "
                             "(e.g. 2, N/4, N)")
    return max(1, min(n_jobs, k))


@dataclass(eq=False)
class CellResult:
    """One cell's stored arrays; fleets are axis 0 (only the fleets done so far
    when the sweep is unfinished: ``fleet_index`` says which).

    Each array of :data:`stormsim.work.RESULT_ARRAYS` is an attribute
    (``cell.passage_time``, ``cell.occupancy``: None when only its sum is
    kept), and each summed one's exact sum over the fleets is ``NAME_sum``
    (``cell.occupancy_sum``, float64 (N+1,)).
    """

    index: int
    params: dict
    T: np.ndarray
    d: np.ndarray
    sigma: np.ndarray
    f: np.ndarray
    fleets: int
    fleet_index: np.ndarray
    arrays: dict
    sums: dict
    snapshot: np.ndarray = None  # (N,) MODEL.md E1 / E2 per-job options
    slowdown: np.ndarray = None
    weights: np.ndarray = None

    def __getattr__(self, name):
        d = self.__dict__
        if name in d.get("arrays", ()):
            return d["arrays"][name]
        if name.endswith("_sum") and name[:-4] in d.get("sums", ()):
            return d["sums"][name[:-4]]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def fleets_done(self) -> int:
        return int(self.fleet_index.size)

    @property
    def cycles(self) -> int:
        return int(self.params["cycles"])

    @property
    def passage_level(self) -> int:
        return int(self.params["passage_level"])

    def survival(self, unit: str = "cycle", level: float = 0.95):
        """Kaplan-Meier curve of the first passage, censored fleets included."""
        from .survival import kaplan_meier, passage_times

        if unit == "cycle":
            t, obs = passage_times(self.passage_cycle, self.cycles)
        elif unit == "time":
            t, obs = passage_times(self.passage_cycle, self.cycles, self.passage_time,
                                   self.end_time)
        else:
            raise ValueError(f"unit = {unit!r}: must be 'cycle' or 'time'")
        return kaplan_meier(t, obs, level)

    def median(self, unit: str = "cycle", level: float = 0.95) -> tuple[float, float, float]:
        """(median, lower, upper) first passage; NaN without a passage level or fleets."""
        if self.passage_level == 0 or self.fleets_done == 0:
            return (math.nan,) * 3
        return self.survival(unit, level).median

    def tail(self, k) -> float:
        """P(n_w >= k) over the cell's summed occupancy (k: int, 'N' or 'N/q')."""
        k = tail_level(k, self.T.size)
        total = float(self.occupancy_sum.sum())
        return float(self.occupancy_sum[k:].sum() / total) if total > 0 else math.nan


class Results:
    """A sweep's results: the parameter table and each cell's arrays.

    Attributes
    ----------
    path : str
    complete : bool (False: read from the parts of an unfinished sweep)
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
                   done=None) -> "Results":
        """Results of a sweep whose cell i's parts are ``parts_of(i)``."""
        if done is None:
            done = [sum(p.n for p in parts_of(c.index)) for c in sweep.cells]
        done = np.asarray(done, dtype=np.int64)
        return cls.new(path=location, complete=complete, name=sweep.name,
                       description=sweep.description, version=__version__,
                       occupancy=sweep.occupancy, sweep_hash=sweep.hash, sweep_toml=sweep.text,
                       grid_keys=sweep.grid_keys, fixed=dict(sweep.fixed),
                       params=sweep.columns(),
                       fleets=np.array([c.fleets for c in sweep.cells], dtype=np.int64),
                       fleets_done=done, _cell=lambda i: cell_from_parts(sweep, i, parts_of(i)))

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

    def summary(self, tail=DEFAULT_TAIL_LEVELS, unit: str = "cycle",
                level: float = 0.95) -> dict[str, np.ndarray]:
        """Per-cell summary arrays (n_cells,), as ``stormsim inspect`` prints them.

        Keys: fleets, fleets_done, passed, censored, median, median_lo,
        median_hi (Kaplan-Meier, censoring included; NaN without a passage
        level; passed + censored = fleets_done, counted in ``unit``: in
        cycles a passage at a cycle >= the cap K is censored at K), and
        ``P(n_w>=LEVEL)`` for each tail level (int k, 'N' or 'N/q'), plus
        ``k:LEVEL`` with the k each level resolves to per cell.
        """
        n = self.n_cells
        out = {"fleets": self.fleets.copy(), "fleets_done": self.fleets_done.copy(),
               "passed": np.zeros(n, np.int64), "censored": np.zeros(n, np.int64),
               "median": np.full(n, np.nan), "median_lo": np.full(n, np.nan),
               "median_hi": np.full(n, np.nan)}
        for lv in tail:
            out[f"P(n_w>={lv})"] = np.full(n, np.nan)
            out[f"k:{lv}"] = np.zeros(n, np.int64)
        for c in self:
            i = c.index
            out["fleets_done"][i] = c.fleets_done
            if c.passage_level:
                # counted as the median's Kaplan-Meier counts them: in cycles a
                # passage at a cycle >= K is censored at the cap K, in seconds
                # it is a passage (see survival.passage_times)
                if c.fleets_done:
                    km = c.survival(unit, level)
                    out["censored"][i] = km.n_censored
                    out["median"][i], out["median_lo"][i], out["median_hi"][i] = km.median
                out["passed"][i] = c.fleets_done - out["censored"][i]
            for lv in tail:
                out[f"k:{lv}"][i] = tail_level(lv, c.T.size)
                if c.fleets_done:
                    out[f"P(n_w>={lv})"][i] = c.tail(lv)
        return out

    def table(self, tail=DEFAULT_TAIL_LEVELS, unit: str = "cycle") -> str:
        """The text table of ``stormsim inspect``."""
        return inspect_table(self, tail, unit)

    def __repr__(self) -> str:
        state = "complete" if self.complete else "unfinished"
        return (f"<stormsim sweep results {self.name!r}: {self.n_cells} cells, {state}, "
                f"{int(self.fleets_done.sum())}/{int(self.fleets.sum())} fleets, {self.path}>")


def cell_from_parts(sweep: Sweep, i: int, parts) -> CellResult:
    """Cell i's CellResult from its parts (in fleet order)."""
    c = sweep.cells[i]
    parts = list(parts)
    arrays, sums = {}, {}
    for a in RESULT_ARRAYS:
        if a.summed:
            total = None
            for p in parts:
                total = add_exact(total, p.sums[a.name])
            sums[a.name] = exact_to_float(total if total is not None else [0] * (c.n_jobs + 1))
            if sweep.occupancy != "fleet":
                arrays[a.name] = None
                continue
        rows = [p.arrays[a.name] for p in parts]
        arrays[a.name] = (np.concatenate(rows) if rows
                          else np.empty((0,) + a.width(c.n_jobs), a.dtype))
    idx = (np.concatenate([np.arange(p.start, p.stop) for p in parts]) if parts
           else np.empty(0, np.int64))
    fleet = c.fleet
    return CellResult(index=i, params=dict(c.values), fleets=c.fleets, fleet_index=idx,
                      arrays=arrays, sums=sums,
                      **{k: getattr(fleet, attr).copy() for k, attr in FLEET_ARRAYS.items()})


def read_identity(path: Path) -> dict | None:
    """Root attributes of a finished result, or None if it is not one."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") != FORMAT:
                return None
            return {k: f.attrs[k] for k in ("sweep_hash", "sweep_name", "n_cells",
                                             "stormsim_version", "sweep_source", "sweep_toml")
                    if k in f.attrs}
    except (OSError, ValueError):
        return None


def _h5_results(path: Path) -> Results:
    import h5py

    with h5py.File(path, "r") as f:
        a = f.attrs
        params = {}
        for k, ds in f["params"].items():
            params[k] = ds.asstr()[()].astype(str) if h5py.check_string_dtype(ds.dtype) else ds[()]
        fleets = np.asarray(params["fleets"], dtype=np.int64)
        meta = dict(path=str(path), complete=True, name=str(a["sweep_name"]),
                    description=str(a["sweep_description"]), version=str(a["stormsim_version"]),
                    occupancy=str(a["occupancy"]), sweep_hash=str(a["sweep_hash"]),
                    sweep_toml=str(a["sweep_toml"]), grid_keys=json.loads(a["grid_keys"]),
                    fixed={k: None for k in json.loads(a["fixed_keys"])}, params=params,
                    fleets=fleets, fleets_done=fleets.copy())
    try:
        import tomllib

        fx = tomllib.loads(meta["sweep_toml"]).get("fixed", {})
        meta["fixed"] = {k: fx.get(k) for k in meta["fixed"]}
    except Exception:  # the stored text is informative only
        pass

    def from_group(i: int, g) -> CellResult:
        pv = json.loads(g.attrs["params"])
        for k, v in pv.items():
            if isinstance(v, str) and v in ("inf", "-inf", "nan"):
                pv[k] = float(v)
        n = g["passage_time"].shape[0]
        arrays = {a.name: g[a.name][()] if a.name in g else None for a in RESULT_ARRAYS}
        sums = {a.name: g[f"{a.name}_sum"][()] for a in RESULT_ARRAYS if a.summed}
        return CellResult(index=i, params=pv, fleets=n, fleet_index=np.arange(n),
                          arrays=arrays, sums=sums,
                          **{k: g[k][()] if k in g else np.full(g["T"].shape, FLEET_ARRAY_DEFAULTS[k])
                             for k in FLEET_ARRAYS})

    def read_cell(i: int) -> CellResult:
        with h5py.File(path, "r") as f:
            return from_group(i, f["cells"][cell_group(i)])

    def iterate():
        with h5py.File(path, "r") as f:        # one open for all cells
            cells = f["cells"]
            for i in range(len(fleets)):
                yield from_group(i, cells[cell_group(i)])

    return Results.new(**meta, _cell=read_cell, _iter=iterate)


def _parts_results(path: Path, parts: Path) -> Results:
    man = read_manifest(parts)
    if man is None:
        raise SweepError(f"{parts}: no readable MANIFEST.json; not the parts of a stormsim sweep")
    sweep = parse_sweep(man["sweep_toml"], man.get("sweep_source", str(parts)))
    if sweep.hash != man.get("sweep_hash"):
        raise SweepError(f"{parts} was made by stormsim {man.get('stormsim_version')}, whose "
                         "cells this version resolves differently: open it with that version")
    index: dict[int, set] = {}                # cell -> unit files holding some of it
    done = FleetRanges()
    for p in sorted(parts.glob("u*.npz")):
        try:
            pieces = unit_pieces(p, sweep)
            for q in pieces:
                if done.overlaps(q["cell"], q["start"], q["stop"]):
                    raise ValueError("overlaps another unit")
        except Exception:  # removed by a finishing run, or not trustworthy: skip
            continue
        for q in pieces:
            done.add(q["cell"], q["start"], q["stop"])
            index.setdefault(q["cell"], set()).add(p)

    def parts_of(i):
        out = []
        for path in sorted(index.get(i, ())):
            try:
                out.extend(read_unit(path, sweep, only_cell=i))
            except Exception:  # removed by a finishing run, or not trustworthy: skip
                continue
        return sorted(out, key=lambda x: x.start)

    cache: dict[int, list] = {}

    def cached(i):
        if i not in cache:
            cache.clear()
            cache[i] = parts_of(i)
        return cache[i]

    res = Results.from_parts(sweep, cached, complete=False, location=str(path),
                             done=[done.count(c.index) for c in sweep.cells])
    res.version = str(man.get("stormsim_version"))
    return res


def open_results(path) -> Results:
    """Open a sweep's results for reading (plain numpy arrays; nothing is kept open).

    ``path`` is the HDF5 output of ``stormsim sweep``. While that sweep is
    unfinished (running or interrupted), the output does not exist yet and
    the finished units are read from ``path.parts/`` instead
    (``Results.complete`` is then False). A ``.parts`` directory may also be
    given directly.
    """
    p = Path(path)
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

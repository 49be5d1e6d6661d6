"""``OUTPUT.parts/``: unit files and the manifest of an unfinished sweep (docs/FORMAT.md §3).

Each finished unit is one ``u<cell:06d>_<start:012d>.npz``, written atomically
(``_files.atomic_path``), holding for piece j the arrays of
:data:`stormsim.sweep.work.RESULT_ARRAYS` as ``j_NAME`` and, for a summed array,
its exact column sums as ``j_NAME_exact`` (decimal integers, units of
2**-1074). A cell's storm risk (``risk_levels``) is one ``r<cell:06d>.npz``,
written the same way, holding ``levels`` and each of
:data:`stormsim.sweep.cellrisk.RISK_ARRAYS` and ``RISK_SCALARS``. ``MANIFEST.json``
says which sweep (and which stormsim) the units belong to.
"""
from __future__ import annotations

import json
import re
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._version import ALGORITHM_VERSION
from ..stats.tails import block_ranges
from ..sweep.cellrisk import RISK_ARRAYS, RISK_SCALARS, RiskPart
from ..sweep.spec import Sweep
from ..sweep.work import RESULT_ARRAYS, Part
from .files import atomic_path, fault, write_atomic

__all__ = ["BAD_UNIT_ERRORS", "PARTS_FORMAT", "is_risk_file", "is_unit_file", "parts_dir",
           "read_manifest", "read_risk", "read_unit", "risk_name", "unit_name", "unit_pieces",
           "write_manifest", "write_risk", "write_unit"]

PARTS_FORMAT = "stormsim.sweep.parts"

#: A unit's file is named after its first piece: no two valid units share a fleet.
_UNIT_NAME = re.compile(r"^u(\d{6,})_(\d{12,})\.npz$")
#: A cell's storm risk: one file per cell.
_RISK_NAME = re.compile(r"^r(\d{6,})\.npz$")

#: Errors reading a unit that show the file itself is bad (see HDF5Store's scan):
#: not a zip or a truncated one (BadZipFile, EOFError), a CRC mismatch
#: (BadZipFile), contents that fail validation (ValueError, KeyError, TypeError).
BAD_UNIT_ERRORS = (zipfile.BadZipFile, EOFError, ValueError, KeyError, TypeError)


def parts_dir(output: Path) -> Path:
    return output.with_name(output.name + ".parts")


def unit_name(cell: int, start: int) -> str:
    return f"u{cell:06d}_{start:012d}.npz"


def risk_name(cell: int) -> str:
    return f"r{cell:06d}.npz"


def is_risk_file(path: Path) -> bool:
    return _RISK_NAME.match(path.name) is not None


def is_unit_file(path: Path) -> bool:
    """A file holding finished work: fleets of cells, or a cell's storm risk."""
    return _UNIT_NAME.match(path.name) is not None or is_risk_file(path)


@contextmanager
def _npz(path: Path):
    """np.load of a unit file that closes it even when it is not a zip (numpy
    leaves the file open when NpzFile fails on a truncated one)."""
    with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
        yield z


def write_unit(directory: Path, parts: list) -> Path:
    """One finished unit (its pieces, a list of Part) -> one file, atomically."""
    final = directory / unit_name(parts[0].cell, parts[0].start)
    meta = {"sweep_hash": parts[0].sweep_hash,
            "pieces": [{"cell": p.cell, "start": p.start, "stop": p.stop,
                        "run_seed": p.run_seed, "seconds": p.seconds,
                        "fleet_cycles": p.fleet_cycles} for p in parts]}
    arrays = {"meta": np.array(json.dumps(meta))}
    for j, part in enumerate(parts):
        for a in RESULT_ARRAYS:
            value = part.arrays[a.name]
            if value is not None:
                arrays[f"{j}_{a.name}"] = np.ascontiguousarray(value, dtype=a.dtype)
            if a.summed:
                arrays[f"{j}_{a.name}_exact"] = np.array([str(x) for x in part.sums[a.name]])
            if a.name in part.blocks:
                arrays[f"{j}_{a.name}_blocks"] = np.array(
                    [[str(b)] + [str(x) for x in sums] for b, sums in part.blocks[a.name]])
    with atomic_path(final) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
        fh.flush()
    return final


def unit_pieces(path: Path, sweep: Sweep) -> list[dict]:
    """The pieces a unit file claims (reads only its meta), checked against the sweep."""
    m = _UNIT_NAME.match(path.name)
    if not m:
        raise ValueError("not a unit file name")
    with _npz(path) as z:
        meta = json.loads(str(z["meta"]))
    pieces = meta.get("pieces") or []
    if meta.get("sweep_hash") != sweep.hash or not pieces:
        raise ValueError("it belongs to another sweep")
    if (pieces[0]["cell"], pieces[0]["start"]) != (int(m.group(1)), int(m.group(2))):
        raise ValueError("its name does not match its first piece")
    for p in pieces:
        cell, a, b = p["cell"], p["start"], p["stop"]
        if not (0 <= cell < sweep.n_cells and 0 <= a < b <= sweep.cells[cell].fleets
                and p["run_seed"] == sweep.cells[cell].run_seed):
            raise ValueError("a piece is outside the sweep")
    return pieces


def read_unit(path: Path, sweep: Sweep, only_cell: int | None = None) -> list[Part]:
    """Load and check a unit file; raise one of BAD_UNIT_ERRORS when it cannot be trusted."""
    fault("parts:read-unit")
    pieces = unit_pieces(path, sweep)
    keep = sweep.occupancy == "fleet"
    out = []
    with _npz(path) as z:                          # zip CRCs are checked on read
        for j, p in enumerate(pieces):
            if only_cell is not None and p["cell"] != only_cell:
                continue
            cell, a, b = p["cell"], p["start"], p["stop"]
            n_jobs = sweep.cells[cell].n_jobs
            arrays, sums, blocks = {}, {}, {}
            for r in RESULT_ARRAYS:
                if not r.kept(sweep.cells[cell].fleet):
                    arrays[r.name] = None
                    continue
                if r.summed:
                    exact = tuple(int(x) for x in z[f"{j}_{r.name}_exact"].tolist())
                    if len(exact) != r.columns(n_jobs):
                        raise ValueError(f"{r.name}_exact has the wrong length")
                    sums[r.name] = exact
                    if not keep:
                        rows = z[f"{j}_{r.name}_blocks"].tolist()
                        blocks[r.name] = tuple((int(x[0]), tuple(int(v) for v in x[1:]))
                                               for x in rows)
                        if not rows or any(len(x) != r.columns(n_jobs) + 1 for x in rows):
                            raise ValueError(f"{r.name}_blocks has the wrong shape")
                        if [x[0] for x in blocks[r.name]] != _blocks_touched(
                                sweep.cells[cell].fleets, a, b):
                            raise ValueError(f"{r.name}_blocks are not the blocks of fleets "
                                             f"{a}..{b}")
                        arrays[r.name] = None
                        continue
                value = z[f"{j}_{r.name}"]
                if value.dtype != r.dtype or value.shape != (b - a,) + r.width(
                        n_jobs, sweep.cells[cell].ramp_shape):
                    raise ValueError(f"{r.name} has the wrong shape or type")
                arrays[r.name] = value
            out.append(Part(cell=cell, start=a, stop=b, sweep_hash=sweep.hash,
                            run_seed=p["run_seed"], arrays=arrays, sums=sums, blocks=blocks,
                            seconds=float(p.get("seconds", 0.0)),
                            fleet_cycles=int(p.get("fleet_cycles", 0))))
    return out


def _blocks_touched(fleets: int, a: int, b: int) -> list[int]:
    """The blocks (stormsim.stats.tails.block_ranges) that fleets [a, b) of a cell touch, in order."""
    starts, stops = block_ranges(fleets)
    return np.flatnonzero((starts < b) & (stops > a)).tolist()


def write_risk(directory: Path, part: RiskPart) -> Path:
    """A cell's storm risk -> its file, atomically."""
    final = directory / risk_name(part.cell)
    meta = {"sweep_hash": part.sweep_hash, "cell": part.cell, "run_seed": part.run_seed,
            "seconds": part.seconds, "fleet_cycles": part.fleet_cycles}
    arrays = {"meta": np.array(json.dumps(meta)), "levels": part.levels, **part.arrays}
    with atomic_path(final) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
        fh.flush()
    return final


def read_risk(path: Path, sweep: Sweep) -> RiskPart:
    """Load and check a storm-risk file; raise one of BAD_UNIT_ERRORS when it cannot be trusted."""
    fault("parts:read-unit")
    m = _RISK_NAME.match(path.name)
    if not m:
        raise ValueError("not a storm-risk file name")
    with _npz(path) as z:
        meta = json.loads(str(z["meta"]))
        cell = meta.get("cell")
        if meta.get("sweep_hash") != sweep.hash or cell != int(m.group(1)):
            raise ValueError("it belongs to another sweep")
        if not (0 <= cell < sweep.n_cells and sweep.cells[cell].has_risk
                and meta.get("run_seed") == sweep.cells[cell].run_seed):
            raise ValueError("its cell is outside the sweep or has no storm risk")
        levels = z["levels"]
        if levels.dtype != np.int64 or not np.array_equal(levels,
                                                          sweep.cells[cell].risk_levels()):
            raise ValueError("its levels are not the cell's")
        arrays = {}
        for a in RISK_ARRAYS + RISK_SCALARS:
            v = z[a.name]
            shape = levels.shape if a in RISK_ARRAYS else ()
            if v.shape != shape or (v.dtype.kind != "U" if a.dtype is str else v.dtype != a.dtype):
                raise ValueError(f"{a.name} has the wrong shape or type")
            arrays[a.name] = v
    return RiskPart(cell=cell, sweep_hash=sweep.hash, run_seed=meta["run_seed"], levels=levels,
                    arrays=arrays, seconds=float(meta.get("seconds", 0.0)),
                    fleet_cycles=int(meta.get("fleet_cycles", 0)))


def read_manifest(parts: Path) -> dict | None:
    """The manifest of a parts directory, or None if there is no readable one."""
    try:
        doc = json.loads((parts / "MANIFEST.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == PARTS_FORMAT else None


def write_manifest(parts: Path, sweep: Sweep, version: str, format_version: int) -> dict:
    man = {"format": PARTS_FORMAT, "format_version": format_version,
           "sweep_hash": sweep.hash, "sweep_name": sweep.name,
           "sweep_source": sweep.source, "n_cells": sweep.n_cells,
           "stormsim_version": version, "algorithm_version": ALGORITHM_VERSION,
           "sweep_toml": sweep.text}
    write_atomic(parts / "MANIFEST.json", json.dumps(man, indent=1).encode())
    return man

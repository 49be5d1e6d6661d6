"""Stores for sweep results: one interface, in memory or on disk (HDF5).

A store receives finished units of work (:class:`Part`: fleets [start, stop)
of one cell), keeps them, tells a resumed sweep which fleets are done, and
assembles the result once every fleet of every cell is in.

HDF5Store and crashes
---------------------
HDF5 does not survive SIGKILL reliably while a file is open for writing
(EVIDENCE.md: unflushed files do not open, flushed groups are corrupted when
dirty metadata is evicted between flushes, a counter in the file runs ahead
of its data). So the HDF5 file is never open for writing while units run:

1. each finished unit (fleets of one cell, or several small cells) goes to
   its own small file ``OUTPUT.parts/u<cell>_<start>.npz``, written to a
   temporary name, fsync'ed, renamed into place (os.replace is atomic) and
   the directory fsync'ed: a unit exists whole or not at all;
2. a resumed sweep loads and checks every part (CRC, shapes, sweep identity)
   and runs only the fleets that no valid part holds;
3. when all fleets are in, ``OUTPUT.tmp`` is written from the parts, closed,
   fsync'ed and renamed to ``OUTPUT``: the result appears whole, at once;
   only then are the parts removed.

A kill at any instant leaves either no OUTPUT or a complete one; the parts
directory is never needed to read a finished result. Results do not depend
on how fleets were cut into units (fleet j depends on (seed, j) only), and
the occupancy sum is exact (correctly rounded), so resumed, re-cut or Dask
runs give the same bits.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

import numpy as np

from .layout import FORMAT, FORMAT_VERSION
from .sweep import Sweep, SweepError, parse_sweep

__all__ = ["CellResult", "HDF5Store", "MemoryStore", "Part", "Results", "Store",
           "exact_column_sums", "exact_to_float", "open_results"]

PARTS_FORMAT = "stormsim.sweep.parts"

# ---------------------------------------------------------------------------
# Exact sums
# ---------------------------------------------------------------------------

#: Every finite float64 is an integer multiple of 2**-1074 (the smallest
#: subnormal), so a sum of floats is exactly an integer in those units.
_ULP_EXP = 1074


def exact_column_sums(a) -> list[int]:
    """Exact column sums of a float64 array, as Python ints in units of 2**-1074.

    The sums of any split of the rows add up (as ints) to the sum of all rows:
    this is what makes a cell's occupancy sum independent of how its fleets
    were cut into units. Convert with :func:`exact_to_float`.

    Parameters
    ----------
    a : float64 (rows, cols) or (rows,), finite
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"exact_column_sums takes a 1-d or 2-d array; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("exact_column_sums needs finite values")
    rows, cols = a.shape
    if rows == 0:
        return [0] * cols
    mant, expo = np.frexp(a)                      # a = mant * 2**expo, 0.5 <= |mant| < 1
    m = np.ldexp(mant, 53).astype(np.int64)       # exact: |m| < 2**53
    shift = expo.astype(np.int64) + (_ULP_EXP - 53)  # a = m * 2**shift * 2**-1074
    sub = shift < 0                               # subnormal: a * 2**1074 is an integer
    if sub.any():
        m[sub] = np.ldexp(a[sub], _ULP_EXP).astype(np.int64)
        shift[sub] = 0
    # Group equal (column, shift) and add the integer mantissas in int64 halves
    # (26 bits each, so a group of up to 2**36 values cannot overflow).
    keys = (np.arange(cols, dtype=np.int64)[None, :] * 4096 + shift).ravel()
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    mv = m.ravel()[order]
    starts = np.flatnonzero(np.concatenate([[True], ks[1:] != ks[:-1]]))
    hi = np.add.reduceat(mv >> 26, starts)
    lo = np.add.reduceat(mv & ((1 << 26) - 1), starts)
    out = [0] * cols
    for k, h, l in zip(ks[starts].tolist(), hi.tolist(), lo.tolist()):
        col, s = divmod(k, 4096)
        out[col] += ((h << 26) + l) << s
    return out


def exact_to_float(ints) -> np.ndarray:
    """Exact sums from :func:`exact_column_sums` -> float64, correctly rounded
    (Python's int / int is), so equal to ``math.fsum`` of the same values."""
    den = 1 << _ULP_EXP
    return np.array([x / den for x in ints], dtype=np.float64)


# ---------------------------------------------------------------------------
# Parts
# ---------------------------------------------------------------------------

@dataclass(eq=False)
class Part:
    """Fleets [start, stop) of one cell, as ``run_unit`` returns them.

    Arrays have one row per fleet, in fleet order. ``occupancy`` is None when
    the sweep keeps only the sum; ``occupancy_exact`` is always there: the
    exact column sums of the unit's occupancy (see exact_column_sums).
    """

    cell: int
    start: int
    stop: int
    sweep_hash: str
    run_seed: int
    passage_time: np.ndarray
    passage_cycle: np.ndarray
    end_time: np.ndarray
    events: np.ndarray
    occupancy: np.ndarray | None
    occupancy_exact: tuple
    seconds: float = 0.0
    fleet_cycles: int = 0
    #: occupancy = "sum": the exact sums per block of fleets these rows touch,
    #: ((block, (int, ...)), ...) (stormsim.tails.block_sums_exact)
    occupancy_blocks: tuple = ()

    @property
    def n(self) -> int:
        return self.stop - self.start


#: A unit's file is named after its first piece: no two valid units share a fleet.
_PART_NAME = re.compile(r"^u(\d{6,})_(\d{12,})\.npz$")
_ARRAYS = {"passage_time": np.float64, "passage_cycle": np.int64, "end_time": np.float64,
           "events": np.int64}


def _part_name(cell: int, start: int) -> str:
    return f"u{cell:06d}_{start:012d}.npz"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_unit(directory: Path, parts: list) -> Path:
    """One finished unit -> one file, atomically: tmp, fsync, rename, fsync dir."""
    final = directory / _part_name(parts[0].cell, parts[0].start)
    tmp = directory / (final.name + f".tmp{os.getpid()}")
    meta = {"sweep_hash": parts[0].sweep_hash,
            "pieces": [{"cell": p.cell, "start": p.start, "stop": p.stop,
                        "run_seed": p.run_seed, "seconds": p.seconds,
                        "fleet_cycles": p.fleet_cycles} for p in parts]}
    arrays = {"meta": np.array(json.dumps(meta))}
    for j, part in enumerate(parts):
        for k, t in _ARRAYS.items():
            arrays[f"{j}_{k}"] = np.ascontiguousarray(getattr(part, k), dtype=t)
        if part.occupancy is not None:
            arrays[f"{j}_occupancy"] = np.ascontiguousarray(part.occupancy, dtype=np.float64)
        arrays[f"{j}_occupancy_exact"] = np.array([str(x) for x in part.occupancy_exact])
        if part.occupancy is None:
            arrays[f"{j}_occupancy_blocks"] = np.array(
                [[str(b)] + [str(x) for x in sums] for b, sums in part.occupancy_blocks])
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    _fsync_dir(directory)
    return final


def _unit_pieces(path: Path, sweep: Sweep) -> list[dict]:
    """The pieces a unit file claims (reads only its meta), checked against the sweep."""
    m = _PART_NAME.match(path.name)
    if not m:
        raise ValueError("not a unit file name")
    with np.load(path, allow_pickle=False) as z:
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


def _read_unit(path: Path, sweep: Sweep, only_cell: int | None = None) -> list[Part]:
    """Load and check a unit file; raise ValueError when it cannot be trusted."""
    pieces = _unit_pieces(path, sweep)
    out = []
    with np.load(path, allow_pickle=False) as z:   # zip CRCs are checked on read
        for j, p in enumerate(pieces):
            if only_cell is not None and p["cell"] != only_cell:
                continue
            cell, a, b = p["cell"], p["start"], p["stop"]
            n, width = b - a, sweep.cells[cell].n_jobs + 1
            data = {k: z[f"{j}_{k}"] for k in _ARRAYS}
            for k, t in _ARRAYS.items():
                if data[k].dtype != t or data[k].shape != (n,):
                    raise ValueError(f"{k} has the wrong shape or type")
            occ = None
            if sweep.occupancy == "fleet":
                occ = z[f"{j}_occupancy"]
                if occ.dtype != np.float64 or occ.shape != (n, width):
                    raise ValueError("occupancy has the wrong shape or type")
            exact = tuple(int(x) for x in z[f"{j}_occupancy_exact"].tolist())
            if len(exact) != width:
                raise ValueError("occupancy_exact has the wrong length")
            blocks = ()
            if sweep.occupancy == "sum":
                rows = z[f"{j}_occupancy_blocks"].tolist()
                blocks = tuple((int(r[0]), tuple(int(x) for x in r[1:])) for r in rows)
                if not blocks or any(len(s) != width for _, s in blocks):
                    raise ValueError("occupancy_blocks has the wrong shape")
            out.append(Part(cell=cell, start=a, stop=b, sweep_hash=sweep.hash,
                            run_seed=p["run_seed"], occupancy=occ, occupancy_exact=exact,
                            occupancy_blocks=blocks,
                            seconds=float(p.get("seconds", 0.0)),
                            fleet_cycles=int(p.get("fleet_cycles", 0)), **data))
    return out


# ---------------------------------------------------------------------------
# Stores
# ---------------------------------------------------------------------------

@dataclass
class OpenState:
    """What a store holds for a sweep when opened: done fleet ranges per cell."""

    done: dict
    complete: bool
    version: str


class Store:
    """Interface of a sweep store. ``run_sweep`` calls, in order: ``open`` once,
    ``commit`` per finished unit (durable on return), ``finish`` when every
    fleet is in, ``close`` always. ``results()`` reads what is there."""

    location: str = ""

    def open(self, sweep: Sweep, *, overwrite: bool = False) -> OpenState:
        raise NotImplementedError

    def commit(self, parts: list) -> None:
        """Keep a finished unit (its pieces, a list of Part) durably."""
        raise NotImplementedError

    def finish(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def results(self) -> "Results":
        raise NotImplementedError


def _all_done(sweep: Sweep) -> dict:
    return {c.index: [(0, c.fleets)] for c in sweep.cells}


def _check_tiling(sweep: Sweep, ranges: dict) -> None:
    for c in sweep.cells:
        pos = 0
        for a, b in sorted(ranges.get(c.index, [])):
            if a != pos:
                raise RuntimeError(f"cell {c.index}: fleets {pos}..{a} missing or overlapping "
                                   "at assembly (a bug: please report it)")
            pos = b
        if pos != c.fleets:
            raise RuntimeError(f"cell {c.index}: only {pos} of {c.fleets} fleets at assembly")


def _overlaps(ranges: list, a: int, b: int) -> bool:
    return any(a < y and x < b for x, y in ranges)


class MemoryStore(Store):
    """Keeps a sweep's parts in memory (for notebooks and tests); no files."""

    def __init__(self):
        self.location = "<memory>"
        self.sweep: Sweep | None = None
        self.parts: dict[int, list[Part]] = {}
        self.complete = False

    def open(self, sweep: Sweep, *, overwrite: bool = False) -> OpenState:
        from . import __version__

        if self.sweep is not None and self.sweep.hash != sweep.hash and not overwrite:
            raise SweepError(f"this memory store holds a different sweep ({self.sweep.name!r}, "
                             f"{self.sweep.n_cells} cells) than {sweep.source} ({sweep.name!r}, "
                             f"{sweep.n_cells} cells); use a new store or overwrite=True")
        if overwrite or self.sweep is None or self.sweep.hash != sweep.hash:
            self.parts, self.complete = {}, False
        self.sweep = sweep
        if self.complete:
            return OpenState(_all_done(sweep), True, __version__)
        done = {c: [(p.start, p.stop) for p in ps] for c, ps in self.parts.items()}
        return OpenState(done, False, __version__)

    def commit(self, parts: list) -> None:
        for part in parts:
            have = self.parts.setdefault(part.cell, [])
            if _overlaps([(p.start, p.stop) for p in have], part.start, part.stop):
                raise RuntimeError(f"cell {part.cell}: fleets {part.start}..{part.stop} "
                                   "committed twice")
        for part in parts:
            self.parts[part.cell].append(part)

    def finish(self) -> None:
        _check_tiling(self.sweep, {c: [(p.start, p.stop) for p in ps]
                                   for c, ps in self.parts.items()})
        self.complete = True

    def results(self) -> "Results":
        if self.sweep is None:
            raise SweepError("this memory store holds no sweep yet")
        return Results._from_parts(self.sweep, lambda i: sorted(self.parts.get(i, []),
                                                                   key=lambda p: p.start),
                                   complete=self.complete, location=self.location)


def _parts_dir(path: Path) -> Path:
    return path.with_name(path.name + ".parts")


def _read_identity(path: Path) -> dict | None:
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


def _read_manifest(parts: Path) -> dict | None:
    try:
        doc = json.loads((parts / "MANIFEST.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == PARTS_FORMAT else None


#: Errors reading a unit that show the file itself is bad (see HDF5Store._scan).
_BAD_UNIT_ERRORS = (zipfile.BadZipFile, EOFError, ValueError, KeyError, TypeError)


def _other_sweep(meta: dict, sweep: Sweep) -> str:
    """'a different sweep (...) than ...': what an output's identity or manifest
    says it was made from, against the sweep being run."""
    return (f"a different sweep ({meta.get('sweep_name')!r}, {meta.get('n_cells')} cells, from "
            f"{meta.get('sweep_source')}) than {sweep.source} ({sweep.name!r}, "
            f"{sweep.n_cells} cells){_fleets_only(meta.get('sweep_toml'), sweep)}")


def _fleets_only(other_toml, sweep: Sweep) -> str:
    """'' unless the other sweep differs from ``sweep`` only in ``fleets``: then
    say so, and what to do (an output cannot be extended to more fleets)."""
    if not other_toml:
        return ""
    try:
        other = parse_sweep(str(other_toml), "<stored>")
    except Exception:  # made by another version, or unreadable: no hint
        return ""

    def key(sw):
        ids = [dict(c.identity(), fleets=None) for c in sw.cells]
        return sw.occupancy, json.dumps(ids, sort_keys=True)

    if other.hash == sweep.hash or key(other) != key(sweep):
        return ""
    had = sorted({c.fleets for c in other.cells})
    want = sorted({c.fleets for c in sweep.cells})
    fmt = (lambda v: str(v[0]) if len(v) == 1 else str(v))
    return (f"; only 'fleets' differs (fleets = {fmt(had)} there, {fmt(want)} here). An output "
            "cannot be extended to more (or cut to fewer) fleets: run the sweep with "
            f"fleets = {fmt(had)} to resume or keep that output, or write this one to another "
            "output (its first fleets will be the same numbers)")


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class HDF5Store(Store):
    """A sweep result in one HDF5 file (layout: docs/FORMAT.md), made crash-safe
    by writing finished units to ``PATH.parts/`` and assembling PATH once."""

    def __init__(self, path):
        self.path = Path(path)
        self.parts = _parts_dir(self.path)
        self.location = str(self.path)
        self.sweep: Sweep | None = None
        self._lock = None
        self._done: dict[int, list] = {}
        self._index: dict[int, list] = {}     # cell -> [(start, unit file)]
        self.removed_invalid = 0

    # -- opening ---------------------------------------------------------------
    def _refuse(self, why: str):
        raise SweepError(f"{why}. Use --overwrite (overwrite=True) to discard it, "
                         "or choose another output")

    def open(self, sweep: Sweep, *, overwrite: bool = False) -> OpenState:
        from . import __version__

        path, parts = self.path, self.parts
        if not path.parent.is_dir():
            raise SweepError(f"output {path}: the directory {path.parent} does not exist")
        if path.is_dir():
            raise SweepError(f"output {path} is a directory: give a file name, e.g. results.h5")
        for trash in path.parent.glob(glob_escape(parts.name) + ".trash-*"):
            shutil.rmtree(trash, ignore_errors=True)      # left by an older --overwrite
        if not overwrite and path.exists():
            return self._finished_state(sweep)
        # Everything below changes OUTPUT or OUTPUT.parts: take the lock first,
        # so that neither a resume nor --overwrite touches another process's run.
        new = not parts.exists()
        self._acquire_lock()
        try:
            if not overwrite and path.exists():     # finished while we were locking
                self._release(remove_if_empty=True)
                return self._finished_state(sweep)
            if new:
                _fsync_dir(path.parent)
            if overwrite:
                if path.exists():
                    path.unlink()
                    _fsync_dir(path.parent)
            else:
                self._check_parts(sweep)
            man = _read_manifest(parts)
            if overwrite or man is None or man.get("sweep_hash") != sweep.hash \
                    or man.get("stormsim_version") != __version__:
                # (a different or stale manifest is only replaced when no unit
                # holds results: _check_parts refused otherwise)
                man = {"format": PARTS_FORMAT, "format_version": FORMAT_VERSION,
                       "sweep_hash": sweep.hash, "sweep_name": sweep.name,
                       "sweep_source": sweep.source, "n_cells": sweep.n_cells,
                       "stormsim_version": __version__, "sweep_toml": sweep.text}
                _write_atomic(parts / "MANIFEST.json", json.dumps(man, indent=1).encode())
            if overwrite:
                # after the new manifest: a kill mid-way leaves units of the old
                # sweep, which a resume deletes (they fail the sweep check)
                for p in sorted(parts.iterdir()):
                    if p.name not in ("LOCK", "MANIFEST.json"):
                        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
                _fsync_dir(parts)
            self.sweep = sweep
            self._done = self._scan()
        except BaseException:
            self._release(remove_if_empty=True)
            raise
        return OpenState({c: list(r) for c, r in self._done.items()}, False, __version__)

    def _finished_state(self, sweep: Sweep) -> OpenState:
        path, parts = self.path, self.parts
        ident = _read_identity(path)
        if ident is None:
            self._refuse(f"{path} exists and is not a stormsim sweep result")
        if ident.get("sweep_hash") != sweep.hash:
            self._refuse(f"{path} holds the results of {_other_sweep(ident, sweep)}: "
                         "refusing to touch it")
        if parts.exists():      # a run killed after its final rename left them
            try:
                self._acquire_lock(create=False)
            except SweepError:
                pass            # another process holds them: leave them to it
            else:
                shutil.rmtree(parts, ignore_errors=True)
                self._release()
        self.sweep = sweep
        return OpenState(_all_done(sweep), True, str(ident.get("stormsim_version")))

    def _check_parts(self, sweep: Sweep) -> None:
        """Refuse parts (we hold their lock) whose units cannot be resumed by this
        sweep. Without unit files there is nothing to lose: any manifest is replaced."""
        from . import __version__

        parts = self.parts
        if not any(_PART_NAME.match(p.name) for p in parts.iterdir()):
            return
        man = _read_manifest(parts)
        if man is None:
            self._refuse(f"{parts} exists but has no readable MANIFEST.json")
        elif man.get("sweep_hash") != sweep.hash:
            self._refuse(f"{parts} holds finished units of {_other_sweep(man, sweep)}")
        elif man.get("stormsim_version") != __version__:
            self._refuse(f"{parts} holds finished units made by stormsim "
                         f"{man.get('stormsim_version')}, but this is stormsim {__version__}: "
                         "their numbers may differ, so they cannot be resumed")

    def _acquire_lock(self, create: bool = True) -> None:
        """flock PARTS/LOCK (creating PARTS if asked), or refuse: one writer at a time.

        The lock file is removed with its directory (when a run finishes, or
        ends with no unit): a process that opened it just before holds a lock
        on a file no longer there, so the lock is only trusted once the path
        still names the locked file."""
        import fcntl

        for _ in range(5):
            if create:
                self.parts.mkdir(exist_ok=True)
            try:
                fh = open(self.parts / "LOCK", "a+")
            except FileNotFoundError:       # removed meanwhile by a finishing run
                if not create:
                    raise SweepError(f"{self.parts} was removed meanwhile") from None
                continue
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.seek(0)
                who = fh.read().strip()
                fh.close()
                raise SweepError(f"another stormsim process ({who or 'unknown pid'}) is running "
                                 f"a sweep into {self.path}: wait for it, or stop it "
                                 "first") from None
            try:
                same = os.stat(self.parts / "LOCK").st_ino == os.fstat(fh.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if not same:                    # locked a removed file: try again
                fh.close()
                continue
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}\n")
            fh.flush()
            self._lock = fh
            return
        raise SweepError(f"{self.parts}: could not take its lock (it keeps being removed by "
                         "another process)")

    def _release(self, remove_if_empty: bool = False) -> None:
        """Release the lock; with ``remove_if_empty``, first remove PARTS when it
        holds no finished unit (a run that failed to start, or stopped before
        its first unit, leaves no output behind)."""
        if self._lock is None:
            return
        try:
            if remove_if_empty and self.parts.is_dir() and not any(
                    _PART_NAME.match(p.name) for p in self.parts.iterdir()):
                for p in self.parts.iterdir():
                    if p.name != "LOCK":
                        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
                (self.parts / "LOCK").unlink(missing_ok=True)   # last: we still hold it
                self.parts.rmdir()
                _fsync_dir(self.path.parent)
        except OSError:
            pass    # a stray file in it: the directory stays (a later run replaces it)
        finally:
            self._lock.close()
            self._lock = None

    def _scan(self) -> dict:
        """Valid units' fleet ranges per cell; remove temporaries and units that
        fail their checks (their fleets are simply run again).

        Only errors that show the file itself is bad remove it: not a zip or
        a truncated one (BadZipFile, EOFError), a CRC mismatch (BadZipFile),
        contents that fail validation (ValueError, KeyError, TypeError). An
        OSError (disk, NFS, permissions) or MemoryError says nothing about the
        file: it propagates, and the unit stays for the next run."""
        done: dict[int, list] = {}
        self._index = {}
        for p in sorted(self.parts.iterdir()):
            if ".tmp" in p.name:
                p.unlink(missing_ok=True)
                continue
            if not p.name.endswith(".npz"):
                continue
            try:
                parts = _read_unit(p, self.sweep)
                if any(_overlaps(done.get(x.cell, []), x.start, x.stop) for x in parts):
                    raise ValueError("overlaps another unit")
            except _BAD_UNIT_ERRORS:  # a bad file is redone, never trusted
                p.unlink(missing_ok=True)
                self.removed_invalid += 1
                continue
            for x in parts:
                done.setdefault(x.cell, []).append((x.start, x.stop))
                self._index.setdefault(x.cell, []).append((x.start, p))
        return done

    # -- writing ---------------------------------------------------------------
    def commit(self, parts: list) -> None:
        for part in parts:
            if _overlaps(self._done.get(part.cell, []), part.start, part.stop):
                raise RuntimeError(f"cell {part.cell}: fleets {part.start}..{part.stop} "
                                   "committed twice")
        path = _write_unit(self.parts, parts)
        for part in parts:
            self._done.setdefault(part.cell, []).append((part.start, part.stop))
            self._index.setdefault(part.cell, []).append((part.start, path))

    def finish(self) -> None:
        """Assemble PATH from the units (tmp, fsync, rename), then drop the parts."""
        sweep = self.sweep
        _check_tiling(sweep, self._done)
        tmp = self.path.with_name(self.path.name + ".tmp")
        _write_h5(tmp, sweep, self._cell_parts)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.path.parent)
        shutil.rmtree(self.parts, ignore_errors=True)

    def _cell_parts(self, cell: int):
        for path in sorted({p for _, p in self._index.get(cell, [])}):
            yield from _read_unit(path, self.sweep, only_cell=cell)

    def close(self) -> None:
        self._release(remove_if_empty=True)

    def results(self) -> "Results":
        return open_results(self.path)


def _write_h5(path: Path, sweep: Sweep, parts_of) -> None:
    """Write a finished result (docs/FORMAT.md; stormsim.layout), cell by cell."""
    from . import __version__
    from .layout import write_result

    write_result(path, sweep, parts_of, exact_to_float, __version__)


# ---------------------------------------------------------------------------
# Reading results
# ---------------------------------------------------------------------------

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
    when the sweep is unfinished: ``fleet_index`` says which)."""

    index: int
    params: dict
    T: np.ndarray
    d: np.ndarray
    sigma: np.ndarray
    f: np.ndarray
    fleets: int
    fleet_index: np.ndarray
    passage_time: np.ndarray
    passage_cycle: np.ndarray
    end_time: np.ndarray
    events: np.ndarray
    occupancy: np.ndarray | None
    occupancy_sum: np.ndarray
    #: occupancy = "sum" (layout 2): (blocks, N + 1) sums per block of fleets
    occupancy_blocks: np.ndarray | None = None

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
        """P(n_w >= k) over the cell's summed occupancy (k: int, 'N' or 'N/q');
        NaN where it is zero by construction (a fleet stopped at its passage
        to n_w >= passage_level <= k; see stormsim.summary)."""
        k = tail_level(k, self.T.size)
        if bool(self.params.get("stop_at_passage", True)) and 0 < self.passage_level <= k:
            return math.nan
        total = float(self.occupancy_sum.sum())
        return float(self.occupancy_sum[k:].sum() / total) if total > 0 else math.nan

    def summary(self, level: float = 0.95) -> dict:
        """The cell's numbers (stormsim.summary.cell_summary): medians with
        intervals, P(n_w >= k) for k = 0..N with intervals, the baseline."""
        from .summary import cell_summary

        return cell_summary(self, level)


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
    def _new(cls, **kw) -> "Results":
        self = object.__new__(cls)
        self.__dict__.update(kw)
        return self

    @classmethod
    def _from_parts(cls, sweep: Sweep, parts_of, *, complete: bool, location: str,
                    done=None) -> "Results":
        if done is None:
            done = [sum(p.n for p in parts_of(c.index)) for c in sweep.cells]
        done = np.asarray(done, dtype=np.int64)
        from . import __version__

        return cls._new(path=location, complete=complete, name=sweep.name,
                        description=sweep.description, version=__version__,
                        occupancy=sweep.occupancy, sweep_hash=sweep.hash, sweep_toml=sweep.text,
                        grid_keys=sweep.grid_keys, fixed=dict(sweep.fixed),
                        params=sweep.columns(),
                        fleets=np.array([c.fleets for c in sweep.cells], dtype=np.int64),
                        fleets_done=done, _cell=lambda i: _cell_from_parts(sweep, i, parts_of(i)))

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
        cycles a passage at a cycle >= the cap K is censored at K), and ``P(n_w>=LEVEL)`` for each tail level (int k, 'N' or 'N/q'),
        with its ``level`` interval ``P(n_w>=LEVEL):lo`` and ``:hi`` and how
        that was made, ``:method`` (stormsim.tails: "ratio-logit",
        "zero-bound" (no fleet reached k: [0, one-sided upper bound]),
        "one-bound", "none", or "structural": NaN, zero by construction for a
        fleet stopped at its passage), plus ``k:LEVEL`` with the k each level
        resolves to per cell.
        """
        from .summary import cell_summary

        n = self.n_cells
        out = {"fleets": self.fleets.copy(), "fleets_done": self.fleets_done.copy(),
               "passed": np.zeros(n, np.int64), "censored": np.zeros(n, np.int64),
               "median": np.full(n, np.nan), "median_lo": np.full(n, np.nan),
               "median_hi": np.full(n, np.nan)}
        for lv in tail:
            for end in ("", ":lo", ":hi"):
                out[f"P(n_w>={lv}){end}"] = np.full(n, np.nan)
            out[f"P(n_w>={lv}):method"] = np.full(n, "none", dtype=object)
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
            cs = cell_summary(c, level) if c.fleets_done else None
            for lv in tail:
                k = out[f"k:{lv}"][i] = tail_level(lv, c.T.size)
                if cs is not None:
                    for end, key in (("", "p_ge"), (":lo", "p_ge_lo"), (":hi", "p_ge_hi"),
                                     (":method", "p_ge_method")):
                        out[f"P(n_w>={lv}){end}"][i] = cs[key][k]
        return out

    def table(self, tail=DEFAULT_TAIL_LEVELS, unit: str = "cycle") -> str:
        """The text table of ``stormsim inspect``."""
        return _format_table(self, tail, unit)

    def to_xarray(self, grid: bool = True, level: float = 0.95):
        """The per-cell table as an xarray.Dataset, on the grid's dimensions
        (``.sel(load=0.9)``) or, with ``grid=False``, on ``cell``; see
        stormsim.export.to_xarray. Needs xarray."""
        from .export import to_xarray

        return to_xarray(self, grid=grid, level=level)

    def to_dataframe(self, k=None, level: float = 0.95):
        """One row per cell as a pandas.DataFrame (``p_ge_4``, ``p_ge_4_lo``, ...,
        ``median``, ``median_lo``, ...); see stormsim.export.to_dataframe. Needs pandas."""
        from .export import to_dataframe

        return to_dataframe(self, k=k, level=level)

    def __repr__(self) -> str:
        state = "complete" if self.complete else "unfinished"
        return (f"<stormsim sweep results {self.name!r}: {self.n_cells} cells, {state}, "
                f"{int(self.fleets_done.sum())}/{int(self.fleets.sum())} fleets, {self.path}>")


def _cell_from_parts(sweep: Sweep, i: int, parts) -> CellResult:
    c = sweep.cells[i]
    parts = list(parts)
    width = c.n_jobs + 1

    def cat(k, dtype, shape=()):
        arrs = [getattr(p, k) for p in parts]
        return np.concatenate(arrs) if arrs else np.empty((0,) + shape, dtype)

    total = [0] * width
    for p in parts:
        total = [x + y for x, y in zip(total, p.occupancy_exact)]
    occ = cat("occupancy", np.float64, (width,)) if sweep.occupancy == "fleet" else None
    blocks = None
    if sweep.occupancy == "sum":
        from .tails import block_ranges

        starts, _ = block_ranges(c.fleets)
        sums = {}
        for p in parts:
            for b, s in p.occupancy_blocks:
                sums[b] = [x + y for x, y in zip(sums.get(b, [0] * width), s)]
        # only the blocks begun so far (an unfinished cell's last one may be partial)
        blocks = np.array([exact_to_float(sums[b]) for b in sorted(sums)]).reshape(-1, width)
    idx = (np.concatenate([np.arange(p.start, p.stop) for p in parts]) if parts
           else np.empty(0, np.int64))
    return CellResult(index=i, params=dict(c.values), T=c.fleet.T.copy(), d=c.fleet.d.copy(),
                      sigma=c.fleet.jitter.copy(), f=c.fleet.f.copy(), fleets=c.fleets,
                      fleet_index=idx, passage_time=cat("passage_time", np.float64),
                      passage_cycle=cat("passage_cycle", np.int64),
                      end_time=cat("end_time", np.float64), events=cat("events", np.int64),
                      occupancy=occ, occupancy_sum=exact_to_float(total),
                      occupancy_blocks=blocks)


def _h5_results(path: Path) -> Results:
    import h5py

    from .layout import check_version, read_cell

    with h5py.File(path, "r") as f:
        check_version(f, path)
        a = f.attrs
        params = {}
        for k, ds in f["params"].items():
            if k == "cell":                     # layout 2: the dimension scale
                continue
            params[k] = ds.asstr()[()].astype(str) if h5py.check_string_dtype(ds.dtype) else ds[()]
        fleets = np.asarray(params["fleets"], dtype=np.int64)
        meta = dict(path=str(path), complete=True, name=str(a["sweep_name"]),
                    description=str(a["sweep_description"]), version=str(a["stormsim_version"]),
                    occupancy=str(a["occupancy"]), sweep_hash=str(a["sweep_hash"]),
                    sweep_toml=str(a["sweep_toml"]), grid_keys=json.loads(a["grid_keys"]),
                    fixed={k: None for k in json.loads(a["fixed_keys"])}, params=params,
                    fleets=fleets, fleets_done=fleets.copy(),
                    format_version=int(a["format_version"]))
    try:
        import tomllib

        fx = tomllib.loads(meta["sweep_toml"]).get("fixed", {})
        meta["fixed"] = {k: fx.get(k) for k in meta["fixed"]}
    except Exception:  # the stored text is informative only
        pass

    def from_group(i: int, g) -> CellResult:
        return CellResult(index=i, **read_cell(g))

    def read_cell_at(i: int) -> CellResult:
        with h5py.File(path, "r") as f:
            return from_group(i, f["cells"][f"{i:06d}"])

    def iterate():
        with h5py.File(path, "r") as f:        # one open for all cells
            cells = f["cells"]
            for i in range(len(fleets)):
                yield from_group(i, cells[f"{i:06d}"])

    return Results._new(**meta, _cell=read_cell_at, _iter=iterate)


def _parts_results(path: Path, parts: Path) -> Results:
    man = _read_manifest(parts)
    if man is None:
        raise SweepError(f"{parts}: no readable MANIFEST.json; not the parts of a stormsim sweep")
    sweep = parse_sweep(man["sweep_toml"], man.get("sweep_source", str(parts)))
    if sweep.hash != man.get("sweep_hash"):
        raise SweepError(f"{parts} was made by stormsim {man.get('stormsim_version')}, whose "
                         "cells this version resolves differently: open it with that version")
    index: dict[int, list] = {}
    for p in parts.glob("u*.npz"):
        try:
            pieces = _unit_pieces(p, sweep)
        except Exception:  # removed by a finishing run, or not trustworthy: skip
            continue
        for q in pieces:
            index.setdefault(q["cell"], []).append((q["start"], q["stop"], p))

    def parts_of(i):
        out = []
        for path in sorted({p for _, _, p in index.get(i, [])}):
            try:
                out.extend(_read_unit(path, sweep, only_cell=i))
            except Exception:  # removed by a finishing run, or not trustworthy: skip
                continue
        return sorted(out, key=lambda x: x.start)

    cache: dict[int, list] = {}

    def cached(i):
        if i not in cache:
            cache.clear()
            cache[i] = parts_of(i)
        return cache[i]

    done = [sum(b - a for a, b, _ in index.get(c.index, [])) for c in sweep.cells]
    res = Results._from_parts(sweep, cached, complete=False, location=str(path), done=done)
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
        if _read_identity(p) is None:
            raise SweepError(f"{p} is not a stormsim sweep result (no '{FORMAT}' format "
                             "attribute, or not an HDF5 file)")
        return _h5_results(p)
    parts = _parts_dir(p)
    if parts.is_dir():
        return _parts_results(p, parts)
    raise SweepError(f"{p}: no such result (and no unfinished sweep in {parts})")


# ---------------------------------------------------------------------------
# The inspect table
# ---------------------------------------------------------------------------

def _fmt_value(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.6g}"
    return str(v)


def _fmt_passage(x: float, cap: int) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return f">{cap}"
    return f"{x:.6g}"


def _fmt_tail(p: float, lo: float, hi: float, method: str) -> str:
    """P(n_w >= k) with its interval, as the inspect table prints it."""
    if method == "zero-bound":
        return f"0 (<{hi:.2e})"
    if method == "one-bound":
        return f"1 (>{lo:.2e})"
    if math.isnan(lo) or math.isnan(hi):
        return f"{p:.3e} no CI"
    return f"{p:.3e} [{lo:.3e}, {hi:.3e}]"


def _format_table(res: Results, tail, unit: str) -> str:
    s = res.summary(tail=tail, unit=unit)
    P = res.params
    n = res.n_cells
    lines = []
    state = ("complete" if res.complete else
             f"UNFINISHED: {int((res.fleets_done == res.fleets).sum())}/{n} cells done; "
             "run the same sweep command again to resume")
    lines.append(f"{res.path}: sweep {res.name!r}, {n} cells, {state}")
    lines.append(f"stormsim {res.version}; occupancy stored "
                 + ("per fleet" if res.occupancy == "fleet" else "as its sum over fleets"))
    fixed = [k for k in P if k not in res.grid_keys and k not in ("run_seed",)
             and len(set(map(str, P[k].tolist()))) == 1]
    if n:
        shown = ", ".join(f"{k} = {_fmt_value(P[k][0])}" for k in fixed
                          if k in res.fixed or k in ("N", "T", "d", "launch", "cycles", "fleets"))
        if shown:
            lines.append("same in every cell: " + shown)
    header = ["cell"] + list(res.grid_keys) + ["fleets"]
    has_passage = bool(np.any(P["passage_level"] > 0))
    if has_passage:
        header += ["censored", f"median {unit} [95% CI]"]
    same_n = len(set(P["N"].tolist())) == 1

    def structural_zero(lv, i):
        # a fleet stopped at its passage never spends time at n_w >= its level
        return bool(P["stop_at_passage"][i]) and 0 < P["passage_level"][i] <= s[f"k:{lv}"][i]

    tail = [lv for lv in tail if not all(structural_zero(lv, i) for i in range(n))]
    for lv in tail:
        label = f"P(n_w>={s[f'k:{lv}'][0]})" if same_n and n else f"P(n_w>={lv})"
        header.append(label + " [95% CI]")
    rows = []
    for i in range(n):
        row = [str(i)] + [_fmt_value(P[k][i]) for k in res.grid_keys]
        row.append(f"{s['fleets_done'][i]}/{s['fleets'][i]}")
        if has_passage:
            if P["passage_level"][i] > 0 and s["fleets_done"][i] > 0:
                cap = int(P["cycles"][i])
                capt = ("cap" if unit == "time" else cap)
                med = _fmt_passage(s["median"][i], capt)
                lo = _fmt_passage(s["median_lo"][i], capt)
                hi = _fmt_passage(s["median_hi"][i], capt)
                row += [str(int(s["censored"][i])), f"{med} [{lo}, {hi}]"]
            else:
                row += ["-", "-"]
        for lv in tail:
            p = s[f"P(n_w>={lv})"][i]
            row.append("-" if math.isnan(p) or structural_zero(lv, i) else _fmt_tail(
                p, s[f"P(n_w>={lv}):lo"][i], s[f"P(n_w>={lv}):hi"][i],
                s[f"P(n_w>={lv}):method"][i]))
        rows.append(row)
    widths = [max(len(h), *(len(r[j]) for r in rows)) if rows else len(h)
              for j, h in enumerate(header)]
    lines.append("")
    lines.append("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        lines.append("  ".join(x.rjust(w) for x, w in zip(r, widths)))
    lines.append("")
    if has_passage:
        if unit == "time":
            lines.append("median time: first passage to n_w >= passage_level, in seconds, "
                         "Kaplan-Meier with the fleets without a passage included, censored at "
                         "the end of their run (the K-cycle cap); 95% CI by Brookmeyer-Crowley "
                         "(log-log band); '>cap': not reached by the end of the runs.")
        else:
            lines.append(f"median {unit}: first passage to n_w >= passage_level, Kaplan-Meier "
                         "with the fleets censored at the cycle cap K included (a passage at a "
                         "cycle >= K counts as censored); 95% CI by Brookmeyer-Crowley (log-log "
                         "band); '>K': not reached within the K-cycle cap.")
    if tail:
        lines.append("P(n_w>=k): share of the cell's total measured time with at least k jobs "
                     "writing, from the occupancy summed over its fleets; 95% CI from the "
                     "spread between its independent " + ("fleets" if res.occupancy == "fleet"
                                                          else "blocks of fleets")
                     + " (delta method of the ratio estimator, on the logit scale); '0 (<b)': no fleet reached k, b is a "
                     "one-sided 95% upper bound (1 - 0.05^(1/fleets)); 'no CI': one "
                     "independent unit only.")
    else:
        lines.append("(no P(n_w>=k) columns: every fleet stops at its passage, so the time at "
                     "those levels is zero by construction; choose levels with --tail)")
    return "\n".join(lines)

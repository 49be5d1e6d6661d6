"""Stores for sweep results: one interface, in memory or on disk (HDF5).

A store receives finished units of work (:class:`~stormsim.sweep.work.Part`:
fleets [start, stop) of one cell), keeps them, tells a resumed sweep which
fleets are done, and assembles the result once every fleet of every cell is in.

HDF5Store and crashes
---------------------
HDF5 does not survive SIGKILL reliably while a file is open for writing
(EVIDENCE.md: unflushed files do not open, flushed groups are corrupted when
dirty metadata is evicted between flushes, a counter in the file runs ahead
of its data). So the HDF5 file is never open for writing while units run:

1. each finished unit (fleets of one cell, or several small cells) goes to
   its own small file ``OUTPUT.parts/u<cell>_<start>.npz``, written
   atomically (stormsim.store.files): a unit exists whole or not at all;
2. a resumed sweep loads and checks every part (CRC, shapes, sweep identity)
   and runs only the fleets that no valid part holds;
3. when all fleets are in, ``OUTPUT`` is written atomically from the parts
   (through ``OUTPUT.tmp``): the result appears whole, at once; only then
   are the parts removed.

A kill at any instant leaves either no OUTPUT or a complete one; the parts
directory is never needed to read a finished result. Results do not depend
on how fleets were cut into units (fleet j depends on (seed, j) only), and
the occupancy sum is exact (correctly rounded), so resumed, re-cut or Dask
runs give the same bits.
"""
from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

from .._args import check_path
from .._version import ALGORITHM_VERSION, __version__
from ..errors import ResourceError, SweepError, os_error_why
from ..sweep.cellrisk import RiskPart
from ..sweep.spec import Sweep
from ..sweep.work import FleetRanges
from .files import DirLock, atomic_path, fault, fsync_dir, tmp_path_of
from .identity import other_sweep
from .layout import FORMAT_VERSION, write_result
from .parts import (
    BAD_UNIT_ERRORS,
    is_risk_file,
    is_unit_file,
    parts_dir,
    read_manifest,
    read_risk,
    read_unit,
    risk_name,
    unit_name,
    write_manifest,
    write_risk,
    write_unit,
)
from .results import Results, open_results, read_identity

__all__ = ["AssemblyError", "HDF5Store", "MemoryStore", "OpenState", "Store"]


@dataclass
class OpenState:
    """What a store holds for a sweep when opened: done fleet ranges per cell,
    and the cells whose storm risk (risk_levels) is done.

    Of an unfinished sweep, ``done`` and ``risk_done`` are the store's own
    records (not copies): they grow as the store commits units, so a sweep
    run reads what is done from them and keeps no count of its own. Read
    them; only ``commit`` changes them."""

    done: FleetRanges
    complete: bool
    version: str
    risk_done: Collection = frozenset()


class AssemblyError(RuntimeError):
    """Assembling a finished sweep's output failed for a reason that is neither
    the disk's nor a bad unit's: a bug. The units are kept (see HDF5Store.finish)."""


def _redo(path: Path) -> str:
    """What the same command redoes for a removed part."""
    return "that cell's storm risk" if is_risk_file(path) else "that unit's fleets"


class _BadUnit(Exception):
    """A unit file that fails its checks while the output is assembled."""

    def __init__(self, path: Path, exc: BaseException):
        super().__init__(str(path))
        self.path = path
        self.why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _refused(exc: BaseException) -> bool:
    """The environment refused (disk, memory, or h5py's plain RuntimeError when a
    close fails), not a bug: RuntimeError's subclasses (RecursionError,
    NotImplementedError, ...) come from code, not from the disk."""
    return isinstance(exc, (OSError, MemoryError)) or type(exc) is RuntimeError


def _all_risk(sweep: Sweep) -> frozenset:
    return frozenset(c.index for c in sweep.cells if c.has_risk)


def _check_risk_done(sweep: Sweep, risk: dict) -> None:
    """RuntimeError unless every cell asking for its storm risk has it (at assembly)."""
    missing = sorted(_all_risk(sweep) - set(risk))
    if missing:
        raise RuntimeError(f"cells {missing[:5]}: storm risk missing at assembly")


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

    def results(self) -> Results:
        raise NotImplementedError


class MemoryStore(Store):
    """Keeps a sweep's parts in memory (for notebooks and tests); no files."""

    def __init__(self):
        self.location = "<memory>"
        self.sweep: Sweep | None = None
        self.parts: dict[int, list] = {}
        self.risk: dict[int, RiskPart] = {}
        self.done = FleetRanges()
        self.complete = False

    def open(self, sweep: Sweep, *, overwrite: bool = False) -> OpenState:
        if self.sweep is not None and self.sweep.hash != sweep.hash and not overwrite:
            raise SweepError(f"this memory store holds a different sweep ({self.sweep.name!r}, "
                             f"{self.sweep.n_cells} cells) than {sweep.source} ({sweep.name!r}, "
                             f"{sweep.n_cells} cells); use a new store or overwrite=True")
        if overwrite or self.sweep is None or self.sweep.hash != sweep.hash:
            self.parts, self.risk, self.done, self.complete = {}, {}, FleetRanges(), False
        self.sweep = sweep
        if self.complete:
            return OpenState(FleetRanges.full(sweep), True, __version__, _all_risk(sweep))
        return OpenState(self.done, False, __version__, self.risk.keys())

    def commit(self, parts: list) -> None:
        if parts and parts[0].kind == "risk":
            if parts[0].cell in self.risk:
                raise RuntimeError(f"cell {parts[0].cell}: storm risk committed twice")
            self.risk[parts[0].cell] = parts[0]
            return
        for part in parts:
            if self.done.overlaps(part.cell, part.start, part.stop):
                raise RuntimeError(f"cell {part.cell}: fleets {part.start}..{part.stop} "
                                   "committed twice")
        for part in parts:
            self.done.add(part.cell, part.start, part.stop)
            self.parts.setdefault(part.cell, []).append(part)

    def finish(self) -> None:
        self.done.check_tiling(self.sweep)
        _check_risk_done(self.sweep, self.risk)
        self.complete = True

    def results(self) -> Results:
        if self.sweep is None:
            raise SweepError("this memory store holds no sweep yet")
        return Results.from_parts(self.sweep, lambda i: self.parts.get(i, []),
                                  complete=self.complete, location=self.location,
                                  done=self.done, risk_of=self.risk.get)


def _remove_entries(directory: Path, keep=("LOCK",)) -> None:
    for p in sorted(directory.iterdir()):
        if p.name not in keep:
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


class HDF5Store(Store):
    """A sweep result in one HDF5 file (layout: docs/FORMAT.md), made crash-safe
    by writing finished units to ``PATH.parts/`` and assembling PATH once."""

    def __init__(self, path):
        self.path = Path(check_path("path", path, "the HDF5 result"))
        self.parts = parts_dir(self.path)
        self.location = str(self.path)
        self.sweep: Sweep | None = None
        self._lock = DirLock(self.parts, f"running a sweep into {self.path}")
        self._done = FleetRanges()
        self._index: dict[int, list] = {}     # cell -> [(start, unit file)]
        self._risk: dict[int, Path] = {}      # cell -> its storm-risk file
        self.removed_invalid = 0

    # -- opening ---------------------------------------------------------------
    def _refuse(self, why: str):
        raise SweepError(f"{why}. Use --overwrite (overwrite=True) to discard it, "
                         "or choose another output")

    def open(self, sweep: Sweep, *, overwrite: bool = False) -> OpenState:
        path, parts = self.path, self.parts
        if not path.parent.is_dir():
            raise SweepError(f"output {path}: the directory {path.parent} does not exist")
        if path.is_dir():
            raise SweepError(f"output {path} is a directory: give a file name, e.g. results.h5")
        if parts.exists() and not parts.is_dir():
            raise SweepError(f"{parts} exists and is not a directory: a sweep into {path} keeps "
                             "its finished units there. Move or remove that file, or choose "
                             "another output")
        for trash in path.parent.glob(glob_escape(parts.name) + ".trash-*"):
            shutil.rmtree(trash, ignore_errors=True)      # left by an older --overwrite
        if not overwrite and path.exists():
            return self._finished_state(sweep)
        # Everything below changes OUTPUT or OUTPUT.parts: take the lock first,
        # so that neither a resume nor --overwrite touches another process's run.
        new = not parts.exists()
        try:
            self._lock.acquire()
        except OSError as exc:      # a read-only directory, no permission
            raise ResourceError(f"output {path}: cannot create {parts.name} in {path.parent}: "
                                + os_error_why(exc)) from None
        try:
            if not overwrite and path.exists():     # finished while we were locking
                self._release(remove_if_empty=True)
                return self._finished_state(sweep)
            if new:
                fsync_dir(path.parent)
            if overwrite:
                if path.exists():
                    path.unlink()
                    fsync_dir(path.parent)
            else:
                self._check_parts(sweep)
            self._lock.claim()                      # going ahead: LOCK names this process
            man = read_manifest(parts)
            if overwrite or man is None or man.get("sweep_hash") != sweep.hash \
                    or man.get("algorithm_version") != ALGORITHM_VERSION:
                # (a different or stale manifest is only replaced when no unit
                # holds results: _check_parts refused otherwise)
                write_manifest(parts, sweep, __version__, FORMAT_VERSION)
            if overwrite:
                # after the new manifest: a kill mid-way leaves units of the old
                # sweep, which a resume deletes (they fail the sweep check)
                _remove_entries(parts, keep=("LOCK", "MANIFEST.json"))
                fsync_dir(parts)
            self.sweep = sweep
            self._done = self._scan()
        except BaseException as exc:
            # a full disk here (LOCK's pid, MANIFEST.json) is no bare errno: say
            # where, and that nothing is lost (before the parts may be removed)
            full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
            why = self._write_failed(exc, f"LOCK and MANIFEST.json into {parts}") if full else ""
            self._release(remove_if_empty=True)
            if full:
                raise ResourceError(why) from None
            raise
        return OpenState(self._done, False, __version__, self._risk.keys())

    def _finished_state(self, sweep: Sweep) -> OpenState:
        path, parts = self.path, self.parts
        ident = read_identity(path)
        if ident is None:
            self._refuse(f"{path} exists and is not a stormsim sweep result")
        if ident.get("sweep_hash") != sweep.hash or \
                ident.get("algorithm_version") != ALGORITHM_VERSION:
            self._refuse(f"{path} holds the results of {other_sweep(ident, sweep)}: "
                         "refusing to touch it")
        if parts.exists():      # a run killed after its final rename left them
            try:
                self._lock.acquire(create=False)
            except ResourceError:
                pass            # another process holds them: leave them to it
            else:
                shutil.rmtree(parts, ignore_errors=True)
                self._release()
        self.sweep = sweep
        return OpenState(FleetRanges.full(sweep), True, str(ident.get("stormsim_version")),
                         _all_risk(sweep))

    def _check_parts(self, sweep: Sweep) -> None:
        """Refuse parts (we hold their lock) whose units cannot be resumed by this
        sweep. Without unit files there is nothing to lose: any manifest is replaced."""
        parts = self.parts
        if not any(is_unit_file(p) for p in parts.iterdir()):
            return
        man = read_manifest(parts)
        if man is None:
            self._refuse(f"{parts} exists but has no readable MANIFEST.json")
        elif man.get("sweep_hash") != sweep.hash or \
                man.get("algorithm_version") != ALGORITHM_VERSION:
            self._refuse(f"{parts} holds finished units of {other_sweep(man, sweep)}")

    def _release(self, remove_if_empty: bool = False) -> None:
        """Release the lock; with ``remove_if_empty``, first remove PARTS when it
        holds no finished unit (a run that failed to start, or stopped before
        its first unit, leaves no output behind)."""
        if not self._lock.held:
            return
        try:
            if remove_if_empty and self.parts.is_dir() and not any(
                    is_unit_file(p) for p in self.parts.iterdir()):
                _remove_entries(self.parts)
                self._lock.path.unlink(missing_ok=True)   # last: we still hold it
                self.parts.rmdir()
                fsync_dir(self.path.parent)
        except OSError:
            pass    # a stray file in it: the directory stays (a later run replaces it)
        finally:
            self._lock.release()

    def _scan(self) -> FleetRanges:
        """Valid units' fleet ranges per cell; remove temporaries and units that
        fail their checks (their fleets are simply run again).

        Only errors that show the file itself is bad (BAD_UNIT_ERRORS) remove
        it. An OSError (disk, NFS, permissions) or MemoryError says nothing
        about the file: it propagates, and the unit stays for the next run."""
        done = FleetRanges()
        self._index, self._risk = {}, {}
        for p in sorted(self.parts.iterdir()):
            if ".tmp" in p.name:
                p.unlink(missing_ok=True)
                continue
            if not p.name.endswith(".npz"):
                continue
            if is_risk_file(p):
                try:
                    self._risk[read_risk(p, self.sweep).cell] = p
                except BAD_UNIT_ERRORS:  # a bad file is redone, never trusted
                    p.unlink(missing_ok=True)
                    self.removed_invalid += 1
                continue
            try:
                parts = read_unit(p, self.sweep)
                if any(done.overlaps(x.cell, x.start, x.stop) for x in parts):
                    raise ValueError("overlaps another unit")
            except BAD_UNIT_ERRORS:  # a bad file is redone, never trusted
                p.unlink(missing_ok=True)
                self.removed_invalid += 1
                continue
            for x in parts:
                done.add(x.cell, x.start, x.stop)
                self._index.setdefault(x.cell, []).append((x.start, p))
        return done

    # -- writing ---------------------------------------------------------------
    def commit(self, parts: list) -> None:
        if parts and parts[0].kind == "risk":
            self._commit_risk(parts[0])
            return
        for part in parts:
            if self._done.overlaps(part.cell, part.start, part.stop):
                raise RuntimeError(f"cell {part.cell}: fleets {part.start}..{part.stop} "
                                   "committed twice")
        try:
            path = write_unit(self.parts, parts)
        except OSError as exc:      # full disk, quota, I/O: what is kept stays kept
            tmp_path_of(self.parts / unit_name(parts[0].cell, parts[0].start)).unlink(
                missing_ok=True)
            raise ResourceError(self._write_failed(exc, f"a unit of work into {self.parts}")) \
                from None
        for part in parts:
            self._done.add(part.cell, part.start, part.stop)
            self._index.setdefault(part.cell, []).append((part.start, path))

    def _commit_risk(self, part: RiskPart) -> None:
        if part.cell in self._risk:
            raise RuntimeError(f"cell {part.cell}: storm risk committed twice")
        try:
            path = write_risk(self.parts, part)
        except OSError as exc:      # full disk, quota, I/O: what is kept stays kept
            tmp_path_of(self.parts / risk_name(part.cell)).unlink(missing_ok=True)
            raise ResourceError(self._write_failed(exc, f"a storm risk into {self.parts}")) \
                from None
        self._risk[part.cell] = path

    def finish(self) -> None:
        """Assemble PATH from the units (atomically), then drop the parts.

        Whatever fails, PATH.tmp is removed and every good unit stays, so the
        same command resumes with only this assembly left (or the fleets of a
        unit found bad, and this assembly):

        - the disk refuses (full, quota, I/O error), or memory runs out:
          ResourceError, free space (or memory);
        - a unit turns out bad while assembling (unreadable since the scan, or
          contents the scan could not check): it is removed, ResourceError
          says its fleets are redone by the same command;
        - anything else (a bug): AssemblyError names the output and the kept
          units, the original exception chained (its traceback is shown)."""
        self._done.check_tiling(self.sweep)
        _check_risk_done(self.sweep, self._risk)
        try:
            with atomic_path(self.path) as tmp:
                write_result(tmp, self.sweep, self._cell_parts, risk_of=self._cell_risk)
        except _BadUnit as bad:
            tmp_path_of(self.path).unlink(missing_ok=True)
            bad.path.unlink(missing_ok=True)
            raise ResourceError(
                f"could not assemble {self.path}: its finished unit {bad.path.name} turned "
                f"out bad ({bad.why}) and was removed; {self._kept()}; run the same command "
                f"to redo {_redo(bad.path)} and finish") from None
        except Exception as exc:
            tmp_path_of(self.path).unlink(missing_ok=True)
            if _refused(exc):       # the environment: free space (or memory) and resume
                raise ResourceError(self._write_failed(exc, str(self.path))) from None
            raise self._assembly_error(exc) from exc   # a bug: keep everything, show where
        fault("store:before-parts-removed")
        shutil.rmtree(self.parts, ignore_errors=True)

    def _assembly_error(self, exc: BaseException) -> AssemblyError:
        return AssemblyError(
            f"could not assemble {self.path} ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'no message'}); nothing is lost: "
            f"{self._kept()}, and the same command retries only this assembly. If it "
            "fails the same way, this is a bug in stormsim: please report it with this "
            "traceback")

    def _kept(self) -> str:
        """'N units of work are kept in PARTS'."""
        units = sum(1 for p in self.parts.iterdir() if is_unit_file(p))
        return (f"{units} unit{'s' if units != 1 else ''} of work "
                f"{'are' if units != 1 else 'is'} kept in {self.parts}")

    def _write_failed(self, exc: BaseException, writing: str) -> str:
        """'no space left on device while writing OUTPUT; N units of work are kept ...'."""
        kept = self._kept()
        code = getattr(exc, "errno", None)
        if code in (errno.ENOSPC, errno.EDQUOT) or "errno = 28," in str(exc) \
                or "errno = 122," in str(exc):
            what = "no space left on device" if code != errno.EDQUOT and "errno = 122," \
                not in str(exc) else "disk quota exceeded"
            return (f"{what} while writing {writing}; {kept}; free space and run the same "
                    "command to resume")
        why = (os.strerror(code) if isinstance(code, int) else
               (str(exc).splitlines() or ["out of memory" if isinstance(exc, MemoryError)
                                          else type(exc).__name__])[0])
        return (f"could not write {writing} ({why}); {kept}; fix that and run the same "
                "command to resume")

    def _cell_parts(self, cell: int):
        for path in sorted({p for _, p in self._index.get(cell, [])}):
            try:
                parts = read_unit(path, self.sweep, only_cell=cell)
            except BAD_UNIT_ERRORS as exc:      # changed since the scan: never trusted
                raise _BadUnit(path, exc) from exc
            yield from parts

    def _cell_risk(self, cell: int):
        path = self._risk.get(cell)
        try:
            return None if path is None else read_risk(path, self.sweep)
        except BAD_UNIT_ERRORS as exc:
            raise _BadUnit(path, exc) from exc

    def close(self) -> None:
        self._release(remove_if_empty=True)

    def results(self) -> Results:
        return open_results(self.path)


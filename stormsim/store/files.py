"""Files that survive a kill: the atomic-write recipe, the directory lock, fault points.

Atomic write (the one recipe): write ``NAME.tmp`` beside the target, flush,
fsync it, ``os.replace`` it onto the target (atomic on POSIX), fsync the
directory. A kill at any instant leaves the old file or the new one, and at
worst a ``.tmp`` that the next writer overwrites (or a scan removes). Only
one process writes a given path at a time: the directory lock sees to that.

Fault points: tests make a write fail at a named point (as a kill would)
through :func:`inject_fault`, not by patching a module's imports, so moving
code between modules cannot silently disarm a test.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from ..errors import ResourceError

__all__ = ["FAULT_POINTS", "DirLock", "atomic_path", "fault", "fsync_dir", "inject_fault", "tmp_path_of",
           "write_atomic"]

#: The places where a test may inject a failure, and what happens there.
FAULT_POINTS = {
    "atomic:before-replace": "a file is written and fsync'ed, not yet renamed into place",
    "store:before-parts-removed": "the result is in place, its parts directory not yet removed",
    "parts:read-unit": "a unit file is about to be read",
}
_faults: dict[str, BaseException] = {}


def fault(point: str) -> None:
    """Raise the exception a test injected at ``point`` (nothing otherwise)."""
    exc = _faults.get(point)
    if exc is not None:
        raise exc


@contextmanager
def inject_fault(point: str, exc: BaseException):
    """Within the block, reaching ``point`` raises ``exc`` (for tests)."""
    if point not in FAULT_POINTS:
        raise ValueError(f"fault point {point!r}: must be one of {', '.join(FAULT_POINTS)}")
    _faults[point] = exc
    try:
        yield
    finally:
        _faults.pop(point, None)


def fsync_dir(path: Path) -> None:
    """fsync a directory, so that a rename or a new entry in it is durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tmp_path_of(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


@contextmanager
def atomic_path(path):
    """Yield a temporary path to write ``path`` through; on leaving the block
    the file is fsync'ed and renamed into place (see the module docstring).
    On an exception the temporary stays, as a kill would leave it."""
    path = Path(path)
    tmp = tmp_path_of(path)
    yield tmp
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    fault("atomic:before-replace")
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_atomic(path, data: bytes) -> None:
    """Write bytes to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()


class DirLock:
    """An exclusive flock on ``DIR/LOCK``: one writer of a directory at a time.

    The lock file is removed with its directory by whoever holds it: a process
    that opened it just before holds a lock on a file no longer there, so the
    lock is only trusted once the path still names the locked file.
    ``holder`` names what the holder does, for the refusal message.
    """

    def __init__(self, directory, holder: str):
        self.directory = Path(directory)
        self.holder = holder
        self._fh = None

    @property
    def path(self) -> Path:
        return self.directory / "LOCK"

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self, create: bool = True) -> None:
        """Take the lock (creating the directory if asked) or raise ResourceError.
        The lock file names its holder only after ``claim``."""

        for _ in range(5):
            if create:
                self.directory.mkdir(exist_ok=True)
            try:
                fh = open(self.path, "a+")
            except FileNotFoundError:       # removed meanwhile by a finishing run
                if not create:
                    raise ResourceError(f"{self.directory} was removed meanwhile") from None
                continue
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.seek(0)
                who = fh.read().strip()
                fh.close()
                raise ResourceError(f"another stormsim process ({who or 'unknown pid'}) is "
                                    f"{self.holder}: wait for it, or stop it first") from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fh.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if not same:                    # locked a removed file: try again
                fh.close()
                continue
            self._fh = fh
            return
        raise ResourceError(f"{self.directory}: could not take its lock (it keeps being "
                            "removed by another process)")

    def holder_elsewhere(self) -> str | None:
        """What the LOCK file says ('pid N') if another process holds the lock
        now, else None. Probed with a shared flock released at once (a sweep
        starting in that instant is refused as if this one ran: retry it)."""

        try:
            fh = open(self.path)
        except OSError:                     # no lock file: nobody runs
            return None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return fh.read().strip() or "unknown pid"
        else:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return None
        finally:
            fh.close()

    def claim(self) -> None:
        """Name this process in the held lock file, once it goes ahead: a run
        that takes the lock only to refuse leaves the file naming whoever
        last worked there."""
        fh = self._fh
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

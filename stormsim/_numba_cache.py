"""Choose a writable numba cache directory before any kernel is compiled.

numba reads ``numba.config.CACHE_DIR`` when a ``cache=True`` function is
decorated, so this module must run before ``stormsim._kernel`` is imported
(``stormsim/__init__.py`` imports it first). In a read-only install with no
writable directory, ``cache=True`` fails at import ("no locator available",
numba issues 4032 and 5566): we then compile without caching instead.
"""
from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".stormsim-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


def _candidates() -> list[Path]:
    out = []
    for var in ("STORMSIM_CACHE_DIR", "NUMBA_CACHE_DIR"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    out.append(Path(xdg) / "stormsim" / "numba")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    out.append(Path(tempfile.gettempdir()) / f"stormsim-numba-{uid}")
    return out


def configure() -> str | None:
    """Point numba's cache at the first writable candidate; return it, or None.

    Order: $STORMSIM_CACHE_DIR, $NUMBA_CACHE_DIR, $XDG_CACHE_HOME/stormsim/numba
    (default ~/.cache/stormsim/numba), then a per-user temporary directory.
    ``STORMSIM_NO_CACHE=1`` disables caching.
    """
    if os.environ.get("STORMSIM_NO_CACHE", "") not in ("", "0"):
        return None
    import numba

    for path in _candidates():
        if _writable(path):
            numba.config.CACHE_DIR = str(path)
            return str(path)
    warnings.warn(
        "stormsim: no writable numba cache directory (tried "
        + ", ".join(str(p) for p in _candidates())
        + "); kernels will be compiled on every start. Set STORMSIM_CACHE_DIR "
        "to a writable directory to cache them.",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


CACHE_DIR = configure()
CACHE = CACHE_DIR is not None

"""Choose a writable numba cache directory before any kernel is compiled.

numba reads ``numba.config.CACHE_DIR`` when a ``cache=True`` function is
decorated, so this module must run before ``stormsim.engine._kernel`` is imported
(``stormsim/__init__.py`` imports it first). In a read-only install with no
writable directory, ``cache=True`` fails at import ("no locator available",
github.com/numba/numba/issues/4032 and /5566): we then compile without caching instead.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path


def _writable(path: Path, parents: bool = True) -> bool:
    try:
        path.mkdir(parents=parents, exist_ok=True)
        probe = path / f".stormsim-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


def _temp_dirs() -> list[str]:
    """The temporary directories tempfile.gettempdir() would try, in its order,
    without its last resort, the working directory (a library must not write
    there unasked), and without its FileNotFoundError when none is usable."""
    out = [os.environ[v] for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)]
    if os.name == "nt":
        out += [os.path.expandvars(r"%LOCALAPPDATA%\Temp"), r"C:\TEMP", r"C:\TMP", r"\TEMP", r"\TMP"]
    else:
        out += ["/tmp", "/var/tmp", "/usr/tmp"]
    return out


def _candidates() -> list[tuple[Path, bool]]:
    """(directory, create its missing parents): a temporary directory is only
    used when it exists (/usr/tmp is not made on a system that has none)."""
    out = []
    for var in ("STORMSIM_CACHE_DIR", "NUMBA_CACHE_DIR"):
        if os.environ.get(var):
            out.append((Path(os.environ[var]), True))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    out.append((Path(xdg) / "stormsim" / "numba", True))
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    for tmp in dict.fromkeys(_temp_dirs()):        # (in order, once each)
        out.append((Path(tmp) / f"stormsim-numba-{uid}", False))
    return out


def configure() -> str | None:
    """Point numba's cache at the first writable candidate; return it, or None.

    Order: $STORMSIM_CACHE_DIR, $NUMBA_CACHE_DIR, $XDG_CACHE_HOME/stormsim/numba
    (default ~/.cache/stormsim/numba), then stormsim-numba-UID in $TMPDIR,
    $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp; never the working directory.
    With none writable: one RuntimeWarning, and kernels compile uncached.
    ``STORMSIM_NO_CACHE=1`` disables caching.
    """
    if os.environ.get("STORMSIM_NO_CACHE", "") not in ("", "0"):
        return None
    import numba

    tried = _candidates()
    for path, parents in tried:
        if _writable(path, parents):
            numba.config.CACHE_DIR = str(path)
            return str(path)
    warnings.warn(
        "stormsim: no writable numba cache directory (tried "
        + ", ".join(str(p) for p, _ in tried)
        + "); kernels will be compiled on every start. Set STORMSIM_CACHE_DIR "
        "to a writable directory to cache them.",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


CACHE_DIR = configure()
CACHE = CACHE_DIR is not None

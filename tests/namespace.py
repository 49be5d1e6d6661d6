"""Real read-only directories and full disks for the tests: a command run in a
private mount namespace (``unshare -m``, root only), where read-only bind
mounts and small tmpfs mounts exist for that command alone."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest


def _usable() -> str | None:
    """None when private mount namespaces work here, else why not."""
    if os.name != "posix" or not hasattr(os, "geteuid"):
        return "mount namespaces need Linux"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "the unshare or mount program is not installed"
    try:
        ok = subprocess.run(["unshare", "-m", "mount", "--make-rprivate", "/"],
                            capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unshare -m failed: {exc}"
    if ok.returncode != 0:
        return ("unshare -m (a private mount namespace) is not permitted here "
                f"(needs root or CAP_SYS_ADMIN): {ok.stderr.decode(errors='replace').strip()}")
    return None


WHY_NOT = _usable()
needs_namespace = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def read_only(path) -> str:
    """Shell lines that make ``path`` read-only inside the namespace."""
    p = shlex.quote(str(path))
    return f"mount --bind {p} {p} && mount -o remount,bind,ro {p}"


def writable(path) -> str:
    """Shell lines that make ``path`` writable again below a read-only parent
    (a fresh bind mount of it carries its own, writable flags)."""
    p = shlex.quote(str(path))
    return f"mount --bind {p} {p} && mount -o remount,bind,rw {p}"


def tmpfs(path, size: str) -> str:
    """Shell lines that mount an empty tmpfs of ``size`` (e.g. '2m') on ``path``."""
    return f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(path))}"


def run_in_namespace(setup: list[str], argv: list[str], **kw) -> subprocess.CompletedProcess:
    """Run ``argv`` in a private mount namespace after the shell lines ``setup``
    (mounts seen by this command only; they vanish with it)."""
    script = " && ".join(["mount --make-rprivate /", *setup, "exec " + shlex.join(argv)])
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          **kw)


#: A sweep for full-disk tests: 2 cells x 4000 fleets of 64 jobs (computed in
#: about a second), a result of about 8.4 MiB, most of it the per-fleet
#: arrays, then the small datasets of the per-cell table and /grid, written last.
FULL_DISK_SWEEP = """
[sweep]
name = "disk full"
[fixed]
N = 64
T = 1.0
jitter = 0.01
cycles = 20
fleets = 4000
[grid]
load = [0.4, 0.8]
"""

"""Real stormsim processes for the tests: the environment they run in, the
finished units they leave, and killing them (SIGKILL) at a chosen moment.
Shared by the crash tests (tests/e2e/test_sweep_crash.py, test_risk_crash.py) and
the other tests that start `python -m stormsim`."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from conftest import ROOT

#: How often a wait for a new unit file looks (s), and how finely a kill is timed (s).
POLL_FILES_S = 0.005
POLL_KILL_S = 0.001
#: The longest wait for one more unit file (s): a unit takes well under a second
#: here, so a child that writes none in this long hangs; the wait then kills it
#: and fails rather than hold the suite until CI's limit.
WAIT_PART_S = 120.0


def env() -> dict:
    """os.environ with this checkout first on PYTHONPATH (the stormsim under test)."""
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def count_parts(d: Path, pattern: str = "*.npz") -> int:
    """Files matching ``pattern`` in ``d``/out.h5.parts (0 without it)."""
    p = d / "out.h5.parts"
    return len(list(p.glob(pattern))) if p.is_dir() else 0


def wait_for_a_new_part(proc, d: Path, timeout: float = WAIT_PART_S) -> None:
    """Until one more unit file lands in ``d``/out.h5.parts, or ``proc`` ends;
    after ``timeout`` s without either, kill ``proc`` and raise TimeoutError."""
    before = count_parts(d)
    deadline = time.monotonic() + timeout
    while count_parts(d) <= before and proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"no new unit file in {d / 'out.h5.parts'} within {timeout:g} s "
                               f"and the child ({proc.args}) still ran: killed it")
        time.sleep(POLL_FILES_S)


def kill_at(proc, deadline: float) -> bool:
    """SIGKILL ``proc`` at ``deadline`` (time.monotonic()) if it still runs then,
    and reap it; whether it was killed (False: it ended first)."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(POLL_KILL_S)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True

"""The crash tests' process helpers (tests/procs.py) on real children."""
from __future__ import annotations

import subprocess
import sys

import pytest

from procs import wait_for_a_new_part


def test_a_child_that_writes_no_unit_is_killed_not_waited_for(tmp_path):
    """The wait ends at its timeout, not when the child does: a hung child
    cannot hold the suite until CI's limit."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with pytest.raises(TimeoutError, match="no new unit file .* within 0.5 s"):
        wait_for_a_new_part(proc, tmp_path, timeout=0.5)
    assert proc.poll() is not None                      # killed and reaped


def test_the_wait_ends_when_a_unit_lands(tmp_path):
    parts = tmp_path / "out.h5.parts"
    parts.mkdir()
    code = (f"import time, pathlib; time.sleep(0.2); "
            f"pathlib.Path({str(parts / 'u0.npz')!r}).touch(); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for_a_new_part(proc, tmp_path, timeout=60)
        assert proc.poll() is None                      # returned on the file, not the exit
    finally:
        proc.kill()
        proc.wait()

"""An output the system refuses, on a real read-only bind mount (a private
mount namespace): `stormsim sweep -o`, `report -o` and `demo -o` each say in
one line which path and why, with exit 3 (the environment refused), never a
bare '[Errno 30]' or a traceback, and write nothing."""
from __future__ import annotations

import sys

import pytest

from namespace import needs_namespace, read_only, run_in_namespace
from procs import env
from stormsim import run_sweep
from stormsim.errors import EXIT_ENVIRONMENT
from stormsim.sweep.spec import parse_sweep

SWEEP = """
[sweep]
name = "read-only"
[fixed]
N = 4
T = 1.0
load = 0.5
jitter = 0.02
cycles = 50
fleets = 4
[grid]
seed = [1, 2]
"""
#: Generous bound on one command (the interpreter's and numba's start), so a
#: hang fails instead of holding CI.
COMMAND_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    (d / "s.toml").write_text(SWEEP)
    run_sweep(parse_sweep(SWEEP, str(d / "s.toml")), d / "s.h5", progress="none")
    return d


@pytest.mark.slow
@needs_namespace
@pytest.mark.parametrize("args, names", [
    (["sweep", "{data}/s.toml", "-o", "{ro}/out.h5"], "{ro}"),
    (["report", "{data}/s.h5", "-o", "{ro}/rep"], "{ro}/rep"),
    (["report", "{data}/s.h5", "-o", "{ro}/a/b"], "{ro}/a"),      # its parent missing, too
    (["report", "{data}/s.h5", "-o", "{ro}"], "{ro}/"),           # the folder itself
    (["demo", "-o", "{ro}/demo"], "{ro}/demo"),
], ids=["sweep", "report", "report-missing-parent", "report-into-it", "demo"])
def test_a_read_only_output_is_one_sentence_and_exit_3(tmp_path, data, args, names):
    ro = tmp_path / "ro"
    ro.mkdir()
    argv = [a.format(data=data, ro=ro) for a in args]
    p = run_in_namespace([read_only(ro)], [sys.executable, "-m", "stormsim", *argv],
                         cwd=tmp_path, env=env(), timeout=COMMAND_TIMEOUT_S)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == EXIT_ENVIRONMENT, p.stderr
    assert len(lines) == 1 and lines[0].startswith("stormsim: error: "), p.stderr
    assert "Errno" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "read-only" in lines[0].lower() and names.format(ro=ro) in lines[0], lines[0]
    assert "-o" in lines[0]                                # what to do: another output
    assert list(ro.iterdir()) == []

"""A sweep with storm risk (risk_levels) killed (SIGKILL) at random moments,
then resumed: the result equals an uninterrupted run bit for bit, and a
storm risk that was kept is never lost or redone differently."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from stormsim.sweep.spec import parse_sweep
from stormsim.driver import run_sweep

from h5compare import datasets
from procs import count_parts, env, kill_at, wait_for_a_new_part

pytestmark = pytest.mark.slow

#: Four cells, each a storm risk (one task: 48 plain fleets, then 3 splitting
#: replicates at the top level) and 1800 fleets in units: the storm risks run
#: first, then ~50 units, so kills land inside and between risk tasks and units.
#: (With 600 fleets, a third as many units, a run killed after its first unit could finish
#: every fleet before the kill: two kills, then a clean run, and the test failed.)
SWEEP = """
[sweep]
name = "risk crash test"
[fixed]
T = 1.0
jitter = 0.01
cycles = 400
burn_in = 40
fleets = 1800
launch = "sync"            # a restart: no exact law answers it, so the storm risk is
risk_levels = [2, "N"]     # simulated (plain, then splitting), long enough to be killed
risk_fleets = 48
risk_replicates = 3
risk_trials = 60
risk_flux_cycles = 600
[grid]
N = [8, 12]
load = [0.5, 0.7]
"""
#: Kills that must land (each at a random moment after the next file lands).
KILLS = 8
TIMEOUT_S = 600.0


def test_sigkill_during_risk_tasks_then_resume_is_bit_identical(tmp_path):
    ref = tmp_path / "ref.h5"
    run_sweep(parse_sweep(SWEEP, "sweep.toml"), ref, progress="none")
    reference = datasets(ref)
    (tmp_path / "sweep.toml").write_text(SWEEP)
    rng = random.Random(int(os.environ.get("STORMSIM_KILL_SEED", "20261201")))
    kills, log, risks_seen, t0 = 0, [], 0, time.monotonic()
    while True:
        assert time.monotonic() - t0 < TIMEOUT_S, log
        proc = subprocess.Popen([sys.executable, "-m", "stormsim", "sweep", "sweep.toml", "-o",
                                 "out.h5", "--quiet"], cwd=tmp_path, env=env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if kills < KILLS:
            wait_for_a_new_part(proc, tmp_path)
            kills += kill_at(proc, time.monotonic() + rng.uniform(0.0, 0.25))
        out, err = proc.communicate()
        kept = count_parts(tmp_path, "r*.npz")
        assert kept >= risks_seen or (tmp_path / "out.h5").exists(), (log, err)
        risks_seen = kept
        log.append((proc.returncode, kept, count_parts(tmp_path, "u*.npz")))
        if proc.returncode == 0:
            break
        assert proc.returncode == -signal.SIGKILL, (log, err)
    assert kills >= 3, log                      # the kills landed while work remained
    assert any(0 < r < 4 for _, r, _ in log), log   # some with storm risks kept, some to do
    assert datasets(tmp_path / "out.h5") == reference, log
    assert not (tmp_path / "out.h5.parts").exists()
    print(f"SIGKILL log (return code, storm-risk files kept, unit files kept): {log}")

"""Ctrl-C during `stormsim plan`: exit 130 and one line on stderr, no traceback."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from procs import env

pytestmark = pytest.mark.slow

#: A plan that runs for minutes, interrupted once its progress shows it is
#: under way: async jobs have no exact law, so their storm risk is simulated,
#: in batches of about half a second, for up to an eighth of the 600 s budget
#: (levels N/4 and N/2 of 200 jobs are far from resolved by then). Short kernel
#: calls matter: a signal is handled between calls, not inside one (with 5000
#: jobs one fleet's run outlasted the wait below on a loaded machine).
PLAN = ["plan", "--jobs", "200", "--size", "840GB", "--interval", "30min", "--bandwidth",
        "2TB/s", "--jitter", "1%", "--async", "--no-what-if", "--max-seconds", "600"]


@pytest.mark.parametrize("inherited", [signal.SIG_DFL, signal.SIG_IGN],
                         ids=["foreground", "started-with-SIGINT-ignored"])
def test_ctrl_c_during_plan_exits_130_with_one_line_and_no_traceback(tmp_path, inherited):
    # the same plan on a budget of 2 s first: it compiles and caches the kernels a
    # plan runs, so that the signal below lands in a plan at work (in a fresh
    # install it would land in numba's compiler, minutes of it on a loaded machine)
    warm = subprocess.run([sys.executable, "-m", "stormsim", *PLAN[:-1], "2"], cwd=tmp_path,
                          env=env(), capture_output=True, text=True, timeout=900)
    assert warm.returncode == 0, warm.stderr
    # SIGINT as a terminal's foreground job has it, and as a start in the background
    # of a shell without job control leaves it (ignored, and Python then installs no
    # KeyboardInterrupt for it): plan hears it either way, as the sweep does
    proc = subprocess.Popen([sys.executable, "-m", "stormsim", *PLAN], cwd=tmp_path, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, inherited))
    try:
        first = proc.stderr.readline()          # the first progress line: the plan runs
        assert first.startswith("stormsim plan: "), (first, proc.poll())
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=120)
    finally:                                    # no process left behind to fail a later test
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert out == ""
    lines = [x for x in err.splitlines() if not x.startswith("stormsim plan: ") or
             "interrupted" in x]
    assert lines == ["stormsim plan: interrupted (Ctrl-C): no table printed"], err
    assert "Traceback" not in err


def test_ctrl_c_while_the_program_loads_exits_130_with_one_line(tmp_path):
    """Ctrl-C while ``python -m stormsim`` imports its modules (numba, the
    kernels): one line and 130, not a traceback from inside an import. The
    signal is sent once stormsim._interrupt is loaded (``-X importtime``
    prints each import as it completes), which is when the handler is in."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "stormsim", *PLAN],
                            cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stderr:
            if line.rstrip().endswith("stormsim._interrupt"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    lines = [x for x in err.splitlines() if not x.startswith("import time:") and (
        not x.startswith("stormsim plan: ") or "interrupted" in x)]
    assert proc.returncode == 130, err[-2000:]
    assert out == "" and "Traceback" not in err
    # in the loading, or (a fast machine, the modules cached) in the plan just begun
    assert lines in (["stormsim: interrupted (Ctrl-C) while loading"],
                     ["stormsim plan: interrupted (Ctrl-C): no table printed"]), lines

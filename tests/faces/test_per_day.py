"""Storm rates in the units of the question: a fleet given in physical units
(a job table and a bandwidth) is read in storms per day and storm durations
in seconds or minutes, not in storms per second; a storm risk reads per day
beside per second, with its interval; ``stormsim report`` shows the storms."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from conftest import ROOT
from stormsim import open_results, run_sweep
from stormsim.cli import main
from stormsim.engine.units import SECONDS_PER_DAY
from stormsim.risk.result import StormRisk
from stormsim.sweep.spec import load_sweep

#: The pod of examples/gpu_pod.csv behind two bandwidths, small enough for the
#: fast suite: it storms at k = 2 within a few hundred cycles.
POD = """
[sweep]
name = "pod"
[fixed]
jobs = "gpu_pod.csv"
launch = "random"
fleets = 8
cycles = 300
burn_in = 20
seed = 1
[grid]
bandwidth = ["5 GB/s", "20 GB/s"]
"""

@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    d = tmp_path_factory.mktemp("pod")
    shutil.copy(ROOT / "examples" / "gpu_pod.csv", d)
    (d / "pod.toml").write_text(POD)
    run_sweep(load_sweep(d / "pod.toml"), d / "pod.h5", progress="none")
    return d / "pod.h5"


def test_inspect_storms_of_a_physical_fleet_are_per_day(pod, capsys):
    assert main(["inspect", str(pod), "--storms", "--levels", "2"]) == 0
    out = capsys.readouterr().out
    assert "storms/day(n_w>=2) [95% CI]" in out and "storms/s(" not in out
    s = open_results(pod).summary(levels=(2,))
    per_day = s["storms_per_s_ge_2"][0] * SECONDS_PER_DAY
    assert f"{per_day:.3g} [" in out          # the per-second rate x 86400, as printed
    # a storm of the 5 GB/s pod lasts seconds: its duration says its unit
    row = next(line for line in out.splitlines() if line.split()[:3] == ["0", "5", "GB/s"])
    assert re.search(r"\d(\.\d+)? (s|min) \[", row), row
    assert "storms/day(n_w>=k): storms" in out           # the footnote says what it is


def _risk(**over) -> StormRisk:
    one = np.array
    kw = dict(levels=one([2, 4]), rel_error_target=0.1, seed=0, batch_fleets=8,
              p_ge=one([1e-2, 0.0]), p_ge_lo=one([9e-3, 0.0]), p_ge_hi=one([1.1e-2, 3e-4]),
              p_ge_method=one(["ratio-logit", "zero-bound"]), p_ge_rel_error=one([0.05, np.nan]),
              storms_per_s=one([2e-4, 0.0]), storms_per_s_lo=one([1.5e-4, 0.0]),
              storms_per_s_hi=one([2.5e-4, 3e-6]), storms_method=one(["ratio-log", "zero-bound"]),
              storms_per_s_rel_error=one([0.06, np.nan]), storm_duration=one([1.5, np.nan]),
              storm_duration_lo=one([1.2, np.nan]), storm_duration_hi=one([1.8, np.nan]), hits=one([8, 0]),
              resolved=one([True, False]),
              fleets_needed=one([8.0, 100.0]), cpu_seconds_needed=one([1.0, 10.0]),
              needed_is_lower_bound=one([False, True]), fleets=8, batches=1)
    return StormRisk(**{**kw, **over})


def test_inspect_shows_the_jitter_a_job_table_gives(pod, capsys):
    """The jitter of a job table's fleet (9 s in gpu_pod.csv) is said, like N
    and T: a reader must see whether the fleet is deterministic."""
    assert main(["inspect", str(pod), "--levels", "2"]) == 0
    same = next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("same in every cell:"))
    assert "jitter = 9" in same and "T = 900" in same


def test_storm_risk_reads_per_day_with_its_interval():
    r = _risk()
    assert np.array_equal(r.storms_per_day_lo, r.storms_per_s_lo * SECONDS_PER_DAY)
    assert np.array_equal(r.storms_per_day_hi, r.storms_per_s_hi * SECONDS_PER_DAY)
    text = str(r)
    assert "storms/day [95% CI]" in text and "storms/s [95% CI]" in text
    assert f"{2e-4 * SECONDS_PER_DAY:.3e} [{1.5e-4 * SECONDS_PER_DAY:.3e}, " in text


def test_report_shows_the_storms_at_the_levels_asked(pod, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "rep"
    assert main(["report", str(pod), "-o", str(out), "--levels", "2,3"]) == 0
    md = (out / "report.md").read_text()
    assert "## Storms" in md
    assert "storms/day(n_w>=2) [95% CI]" in md and "storms/day(n_w>=3) [95% CI]" in md
    assert "P(n_w>=3)" in md and "P(n_w>=8)" not in md      # the levels asked, not N/4,N/2,N


def test_report_draws_the_storm_rates_per_day_for_a_job_table(pod):
    pytest.importorskip("matplotlib")
    from stormsim.report import figures

    figs = {name: (fig, caption) for name, fig, caption in figures(open_results(pod))}
    assert "storms.png" in figs
    fig, caption = figs["storms.png"]
    assert "storms per day" in fig.axes[0].get_ylabel() and "per day" in caption

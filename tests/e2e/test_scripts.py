"""Smoke tests of scripts/: each claim script's --quick path runs with one
command, writes its PNGs and appends a complete entry (with its commit, seeds
and paper-vs-project rows) to the results file; summarize_results.py puts the
table of all verdicts at the top.

The figures and the results file go to a temporary directory, never to the
repository's figures/ or RESULTS.md.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

from conftest import ROOT
SCRIPTS = ROOT / "scripts"

#: script -> (claims it appends, figures it writes, verdict that a quick run must give).
#: Claims 1, 2 and 7 check exact theory (MODEL.md checks 1, 3, 4, 5 and the
#: threshold), so even the quick run must reproduce them; the others are
#: statistical and only have to run.
CASES = {
    "claim1_pair_return_map.py": (["1"], ["claim1_return_map", "claim1_neutrality_ends"],
                                  "Reproduced."),
    "claim2_spectrum.py": (["2"], ["claim2_spectrum"], "Reproduced."),
    "claim3_separation.py": (["3"], ["claim3_separation"], None),
    "claim4_5_locking_tail.py": (["4", "5"], ["claim4_locking", "claim5_tail"], None),
    "claim4b_launch_distance.py": (["4b"], ["claim4b_launch_distance"], None),
    "claim4c_tightest_pair.py": (["4c"], ["claim4c_tightest_pair"], None),
    "claim6_stagger_jitter.py": (["6"], ["claim6_stagger_survival"], None),
    "claim7_stagger_feasibility.py": (["7"], ["claim7_stagger_feasibility"], "Reproduced."),
    "claim8_cap.py": (["8"], ["claim8_cap_locking", "claim8_cap_tail", "claim8_cap_spectrum",
                              "claim8_det_generic"], None),
    "claim8b_hetero_response.py": (["8b"], ["claim8b_hetero_response"], None),
    "corollary10_long_horizon.py": (["C10"], ["corollary10_long_horizon"], None),
    # the open questions of E1; the A1 / A2 controls inside them are exact, but the
    # verdict words depend on the sample, so only the controls are checked (below)
    "e1_async_pair.py": (["E1a"], ["e1_async_pair_gap_map", "e1_async_pair_direction"], None),
    "e1_async_fleet.py": (["E1b"], ["e1_async_fleet"], None),
    # async fleets' deep tail by splitting (no law to check); statistical, it only has to run
    "e1_async_deep_tail.py": (["E1t"], ["e1_async_deep_tail"], None),
    "e2_weighted_pair.py": (["E2c"], ["e2_weighted_pair"], None),
    # splitting against brute force; statistical, so it only has to run
    "e3_storm_splitting.py": (["E3s"], ["e3_storm_splitting"], None),
    # the long-run law (MODEL.md "The stationary law"): how long from a launch until it
    # applies, and the tail it explains; their exact checks are assertions in the scripts
    "e4_mixing.py": (["E4m"], ["e4_mixing"], None),
    "e4_product_form.py": (["5x"], ["e4_product_form"], None),
    # power drops (MODEL.md E6): statistical; its mean against the law is asserted inside
    "e6_power.py": (["E6"], ["e6_power_drops", "e6_power_trace"], None),
    # failures and goodput (MODEL.md E8): Daly's law and the contention-aware interval
    "e8_goodput.py": (["E8"], ["e8_daly_cases"], None),
}
#: Claims whose entry compares figures the paper reports: they must carry
#: paper-vs-project rows (the summary table at the top is built from them).
PAPER_ROWS = {"3", "4", "4b", "4c", "5", "5x", "6", "8", "8b", "C10", "E1a", "E1b", "E2c", "E6", "E8"}
#: Exact controls that even a quick run must pass (MODEL.md A1, A2 and the
#: equal-margin stagger control): a phrase of the entry's verdict.
CONTROLS = {"E1a": "Control A1 (eps = 1, s = 0 is the blocking pair)",
            "E1b": "the margin, not the mode, sets stagger survival",
            "E2c": "neutral, as A2 requires"}

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(CASES))
def test_quick_run(script, tmp_path):
    claims, figures, verdict = CASES[script]
    results = tmp_path / "RESULTS.md"
    figdir = tmp_path / "figs"
    cmd = [sys.executable, str(SCRIPTS / script), "--quick", "--results", str(results),
           "--figures", str(figdir)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in figures:
        png = figdir / f"{name}.png"
        assert png.read_bytes()[:8] == PNG_MAGIC, name
    text = results.read_text()
    assert text.startswith("# stormsim: the paper's claims, measured")
    for claim in claims:
        entry = text.split(f"## Claim {claim}:")[1].split("\n## Claim")[0]
        assert "--quick" in entry and script in entry          # the command that made it
        assert "**Measured.**" in entry and "**Verdict.**" in entry
        assert "; commit " in entry and "; seeds: " in entry  # provenance of every entry
        if claim in PAPER_ROWS:
            assert "**Paper vs project.**" in entry and "<!-- verdict {" in entry
        assert "| " in entry                                   # a table of numbers
        if verdict:
            assert f"**Verdict.** {verdict}" in entry, entry[-1500:]
        assert "FAILS" not in entry
        if claim in CONTROLS:
            assert CONTROLS[claim] in entry.split("**Verdict.**")[1], entry[-1500:]


@pytest.mark.slow
def test_summary_collects_every_verdict_row_once(tmp_path):
    """Two entries, then the summary: one row per hidden verdict line, in file
    order, between the markers; running it again changes nothing."""
    import json

    results = tmp_path / "RESULTS.md"
    for script in ("claim2_spectrum.py", "claim8b_hetero_response.py"):
        subprocess.run([sys.executable, str(SCRIPTS / script), "--quick", "--results",
                        str(results), "--figures", str(tmp_path)], cwd=ROOT, check=True,
                       capture_output=True, timeout=300)
    summarize = [sys.executable, str(SCRIPTS / "summarize_results.py"), "--results", str(results)]
    subprocess.run(summarize, cwd=ROOT, check=True, capture_output=True, timeout=60)
    once = results.read_text()
    subprocess.run(summarize, cwd=ROOT, check=True, capture_output=True, timeout=60)
    assert results.read_text() == once
    head = once.split("<!-- summary -->")[1].split("<!-- /summary -->")[0]
    hidden = [json.loads(line[len("<!-- verdict "):-len(" -->")])
              for line in once.splitlines() if line.startswith("<!-- verdict {")]
    assert hidden, "the 8b entry has paper-vs-project rows"
    rows = [line for line in head.splitlines() if line.startswith("| 8b |")]
    assert len(rows) == len([h for h in hidden if h["claim"] == "8b"])


@pytest.mark.slow
def test_no_record_leaves_results_alone(tmp_path):
    results = tmp_path / "RESULTS.md"
    cmd = [sys.executable, str(SCRIPTS / "claim2_spectrum.py"), "--quick", "--no-record",
           "--results", str(results), "--figures", str(tmp_path)]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert not results.exists()


def test_kaplan_meier_median_counts_censored_fleets():
    sys.path.insert(0, str(SCRIPTS))
    try:
        import _common
    finally:
        sys.path.remove(str(SCRIPTS))
    import numpy as np

    t = np.array([1.0, 2.0, 3.0, 10.0, 10.0, 10.0])
    # S drops to 1/2 at t = 3 whether or not the last three are censored
    assert _common.km_median(t, np.array([True, True, True, False, False, False])) == 3.0
    # two of six observed: S never reaches 1/2, so the median is beyond the data
    assert _common.km_median(t, np.array([True, True, False, False, False, False])) == np.inf

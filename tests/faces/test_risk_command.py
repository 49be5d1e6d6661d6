"""``stormsim risk FILE --cell I`` starts from the cell's own storm-risk
settings (its risk_* keys and the fixed effort its sweep ran), so with no
flags it prints the numbers the sweep stored; a flag overrides one."""
from __future__ import annotations

import json

import numpy as np
import pytest

import stormsim
from stormsim.cli import main

#: One cell, N = 10, synchronized (a transient: no exact law answers it), so
#: "auto" runs plain Monte Carlo (32 fleets) and splits k = N (3 replicates).
SWEEP = """
[sweep]
name = "risk command"
[fixed]
N = 10
T = 1.0
load = 0.6
jitter = 0.01
launch = "sync"
cycles = 150
burn_in = 20
fleets = 2
seed = 3
risk_levels = [2, "N"]
risk_fleets = 32
risk_replicates = 3
risk_trials = 40
risk_flux_cycles = 300
"""

#: The command's JSON field -> the stored dataset it must equal, bit for bit.
STORED = {name: f"risk_{name}" for name in (
    "p_ge", "p_ge_lo", "p_ge_hi", "p_ge_rel_error", "storms_per_s", "storms_per_s_lo",
    "storms_per_s_hi", "storms_per_s_rel_error", "storm_duration", "storm_duration_lo",
    "storm_duration_hi", "hits")}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("riskcmd")
    toml = folder / "risk.toml"
    toml.write_text(SWEEP)
    out = folder / "risk.h5"
    assert stormsim.run_sweep(stormsim.load_sweep(toml), out, progress="none").status == \
        "complete"
    return toml, next(iter(stormsim.open_results(out))).risk


def _command(capsys, toml, *flags) -> dict:
    assert main(["risk", str(toml), "--cell", "0", "-q", "--format", "json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def _floats(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def test_no_flags_print_the_stored_numbers(stored, capsys):
    toml, risk = stored
    doc = _command(capsys, toml)
    assert doc["levels"] == [2, 10] == risk["levels"].tolist()
    assert doc["level_method"] == ["plain", "splitting"]          # both paths compared
    for field, name in STORED.items():
        assert np.array_equal(_floats(doc[field]), np.asarray(risk[name], dtype=np.float64),
                              equal_nan=True), field
    assert doc["fleets"] == int(risk["risk_fleets_run"]) == 32
    assert doc["split"]["replicates"] == int(risk["risk_replicates_run"]) == 3
    assert doc["stopped"] == str(risk["risk_stopped"])


def test_a_flag_overrides_the_cell_s_setting(stored, capsys):
    toml, risk = stored
    doc = _command(capsys, toml, "--max-fleets", "64", "--levels", "2")
    assert doc["levels"] == [2] and doc["fleets"] == 64 != int(risk["risk_fleets_run"])
    assert doc["p_ge"][0] != float(risk["risk_p_ge"][0])      # other fleets: another estimate


def test_a_time_budget_replaces_the_cell_s_fixed_effort(stored, capsys):
    """--max-seconds on a cell's fixed effort: its replicates would refuse a
    time budget (they run in rounds there), and its risk_fleets no longer cap it."""
    toml, _ = stored
    doc = _command(capsys, toml, "--max-seconds", "1", "--levels", "2", "--method", "plain")
    assert doc["stopped"] in ("rel_error", "max_seconds") and doc["level_method"] == ["plain"]

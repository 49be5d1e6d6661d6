"""A sweep's estimate comes from its grid, at once: no cell is resolved to
count or cost it (a cell costs ~0.3 ms to resolve: 30 000 of them ~10-30 s of
silence). And a long run is never started unattended by accident: without a
terminal to ask, a sweep estimated above a day needs --yes."""
from __future__ import annotations

import io
import shutil
import sys

import pytest

import stormsim.cli as cli
import stormsim.sweep.spec as spec
from conftest import ROOT
from stormsim.cli import main
from stormsim.engine.cost import run_events, run_seconds
from stormsim.sweep.spec import load_outline, load_sweep

#: 30 000 cells of 8 jobs, 1000 fleets of 1e5 cycles each: weeks of CPU.
BIG = """
[sweep]
name = "big"
[fixed]
N = 8
T = 1.0
jitter = 0.01
fleets = 1000
cycles = 100000
[grid]
load = [{loads}]
seed = [{seeds}]
"""


def _big(tmp_path):
    loads = ", ".join(f"{0.1 + 0.002 * i:.3f}" for i in range(300))
    seeds = ", ".join(str(i) for i in range(100))
    (tmp_path / "big.toml").write_text(BIG.format(loads=loads, seeds=seeds))


@pytest.fixture
def counted(monkeypatch):
    """Every cell resolved, counted (the sweep's cells all go through resolve_values)."""
    seen = []
    resolve = spec.resolve_values

    def counting(*a, **k):
        seen.append(1)
        return resolve(*a, **k)
    monkeypatch.setattr(spec, "resolve_values", counting)
    return seen


def test_an_unattended_sweep_estimated_above_a_day_is_refused_from_its_grid(
        tmp_path, monkeypatch, capsys, counted):
    monkeypatch.chdir(tmp_path)
    _big(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))       # a batch job: no terminal
    started = []                                               # weeks of CPU: never run here
    monkeypatch.setattr(cli, "run_sweep", lambda *a, **k: started.append(1) / 0)
    assert main(["sweep", "big.toml", "-o", "big.h5"]) == 2
    assert counted == [] and started == []                     # estimated without any cell
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err            # one line
    assert "estimated" in err and "days" in err and "--yes" in err and "terminal" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.toml"]     # nothing written


def test_a_job_table_sweep_is_costed_from_its_tables_not_its_cells(tmp_path):
    """The grid's cost counts each cell's N, read from its job table where it has one."""
    shutil.copy(ROOT / "examples" / "gpu_pod.csv", tmp_path)
    text = (ROOT / "examples" / "gpu_pod_bandwidth.toml").read_text()
    (tmp_path / "pod.toml").write_text(text)
    outline = load_outline(tmp_path / "pod.toml")
    cells = load_sweep(tmp_path / "pod.toml").cells
    assert outline.events == sum(run_events(c.n_jobs, c.fleets, c.cycles) for c in cells) > 0
    assert outline.seconds == pytest.approx(
        sum(run_seconds(c.n_jobs, c.fleets, c.cycles) for c in cells), rel=1e-12)  # sum order

"""The ETA and the up-front estimate count events, not fleets.

An ETA of fleets left / fleets per second since the start would be inflated
by a numba compile (36 min shown during a compile of an 11 s run), and cheap
cells finishing first would hide expensive ones (2 h 32 min shown for a sweep
estimated at ~11 days)."""
from __future__ import annotations

import io
import math
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from stormsim.cli import main
from stormsim.engine.cost import EVENTS_PER_JOB_CYCLE
from stormsim.sweep.progress import MIN_RATE_SECONDS, Progress
from stormsim.sweep.spec import parse_sweep
from stormsim.sweep.planner import WorkEstimate
from stormsim.sweep.work import FleetRanges, make_unit, run_unit

from conftest import ROOT


class Clock:
    """Time as the test says (the Progress ``clock`` seam)."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_eta_waits_out_the_compile_and_counts_events():
    clock = Clock()
    p = Progress("lines", total_cells=2, total_fleets=1000, stream=io.StringIO(), clock=clock,
                 interval=1e9)
    left = {"events": 1e9}
    clock.t = 30.0                             # the first unit finishes after a 30 s compile
    p.update(fleets_done=10, cells_done=0, risk_done=0, fleet_cycles=100, events=1e7,
             events_left=lambda: left["events"])
    assert math.isinf(p.eta())                 # no rate yet: '?', not 30 s x 99
    assert "ETA ?" in p.line()
    clock.t = 30.0 + MIN_RATE_SECONDS / 2      # too short a time to measure a rate
    left["events"] = 9.8e8
    p.update(fleets_done=20, cells_done=0, risk_done=0, fleet_cycles=200, events=2e7,
             events_left=lambda: left["events"])
    assert math.isinf(p.eta())
    clock.t = 30.0 + MIN_RATE_SECONDS          # 2e7 + 2e7 events in 2 s since the first unit
    p.update(fleets_done=30, cells_done=0, risk_done=0, fleet_cycles=300, events=2e7,
             events_left=lambda: 9.6e8)
    rate = 4e7 / MIN_RATE_SECONDS
    assert p.eta() == pytest.approx(9.6e8 / rate, rel=1e-12)    # float arithmetic only
    p.update(fleets_done=1000, cells_done=2, risk_done=0, fleet_cycles=400, events=2e7,
             events_left=lambda: 0.0)
    assert p.eta() == 0.0


SHAPES = """
[fixed]
load = 0.5
jitter = 0.01
fleets = 20
[grid]
N = [4, 64]
cycles = [50, 400]
"""


def test_work_left_is_counted_in_events_by_cell_shape():
    sw = parse_sweep(SHAPES)
    done = FleetRanges()
    est = WorkEstimate(sw, done)
    bounds = [EVENTS_PER_JOB_CYCLE * c.n_jobs * c.cycles for c in sw.cells]
    assert est.events_left() == sum(20 * b for b in bounds)      # nothing measured: 2 N K
    part = run_unit(make_unit(sw, 3, 0, 20))[0]                  # the biggest cell, all done
    done.add(3, 0, 20)                                           # as the store commits it
    est.add(part)
    ratio = int(part.events.sum()) / (20 * bounds[3])   # measured / 2 N K, the same kind
    assert 0.9 < ratio < 1.1
    assert est.left(3) == 0
    assert est.events_left() == pytest.approx(sum(20 * b * ratio for b in bounds[:3]), rel=1e-12)
    # the cheap cell is cheap: a third of the fleets left, under 5% of the work
    assert est.left(0) / sum(est.left(c.index) for c in sw.cells) == pytest.approx(1 / 3)
    assert 20 * bounds[0] * ratio / est.events_left() < 0.05


STOPS = """
[fixed]
N = 8
load = 0.5
launch = "sync"            # collides at once
passage_level = 2
cycles = 1000000000        # a cap it never nears
fleets = 40
[grid]
seed = [1, 2]
"""


def test_a_stopping_cell_is_charged_its_cap_only_until_its_kind_is_measured():
    sw = parse_sweep(STOPS)
    done = FleetRanges()
    est = WorkEstimate(sw, done)
    assert est.events_left() == 80 * EVENTS_PER_JOB_CYCLE * 8 * 10**9
    part = run_unit(make_unit(sw, 0, 0, 40))[0]
    done.add(0, 0, 40)                                           # as the store commits it
    est.add(part)
    measured = int(part.events.sum()) / 40
    assert measured < 100                                        # sync: a handful of events
    # the other cell, of the same kind, at the same measured ratio: its 40 fleets
    assert est.events_left() == pytest.approx(40 * measured, rel=1e-12)


def test_a_long_sweep_is_announced_and_runs_without_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("stops.toml").write_text(STOPS)
    assert main(["sweep", "stops.toml", "-o", "o.h5", "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "estimated time: at most" in err and "h on 2 worker threads" in err
    assert "no terminal to ask: starting; --yes skips this note" in err
    assert Path("o.h5").exists()
    assert main(["sweep", "stops.toml", "-o", "p.h5", "--yes", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["sweep", "stops.toml", "--dry-run"]) == 0
    assert "estimated time: at most" in capsys.readouterr().out


@pytest.mark.slow
def test_a_long_sweep_asks_on_a_terminal(tmp_path):
    """On a real terminal the estimate comes with a question; 'n' runs nothing."""
    (tmp_path / "stops.toml").write_text(STOPS)
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen([sys.executable, "-m", "stormsim", "sweep", "stops.toml", "-o", "o.h5"],
                         cwd=tmp_path, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    screen = b""
    while b"Start it? [y/N]" not in screen:
        data = os.read(master, 4096)
        assert data, screen
        screen += data
    os.write(master, b"n\n")
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:                 # EIO: the child closed the terminal
            break
        if not data:
            break
        screen += data
    os.close(master)
    assert p.wait(timeout=60) == 0
    text = screen.decode()
    assert "estimated time: at most" in text and "not started" in text
    assert not (tmp_path / "o.h5").exists() and not (tmp_path / "o.h5.parts").exists()


def test_the_estimate_takes_every_executor_spelling(tmp_path, monkeypatch, capsys):
    """--dask ADDRESS is a string until run_sweep makes an executor of it: the
    estimate must take it too (no cluster is started by --dry-run)."""
    monkeypatch.chdir(tmp_path)
    Path("stops.toml").write_text(STOPS)
    assert main(["sweep", "stops.toml", "--dry-run", "--dask", "local:3"]) == 0
    assert "on 3 Dask workers" in capsys.readouterr().out
    assert main(["sweep", "stops.toml", "--dry-run", "--dask", "tcp://10.0.0.1:8786"]) == 0
    assert "on one core (divide by the cluster's cores)" in capsys.readouterr().out
    assert main(["sweep", "stops.toml", "--dry-run", "--workers", "1"]) == 0
    assert "on 1 worker thread," in capsys.readouterr().out


def test_the_progress_line_counts_fleets_and_labels_the_cells_apart():
    """The percentage is of fleets, next to the fleets; the cells done are their
    own labelled figure, never beside a percentage they are not (4/10 cells is
    not 50 %)."""
    p = Progress("lines", total_cells=10, total_fleets=1000, stream=io.StringIO(),
                 clock=Clock(), interval=1e9)
    p.update(fleets_done=500, cells_done=4, risk_done=0, fleet_cycles=100, events=1,
             events_left=lambda: 1.0)
    line = p.line()
    assert "fleets 500/1000 (50.0%)" in line and "cells done 4/10" in line, line
    assert line.index("fleets 500/1000 (50.0%)") < line.index("cells done 4/10")


def test_the_bar_counts_fleets_and_labels_the_cells_apart():
    pytest.importorskip("tqdm")
    p = Progress("bar", total_cells=10, total_fleets=1000, stream=io.StringIO(), clock=Clock())
    p.update(fleets_done=500, cells_done=4, risk_done=0, fleet_cycles=100, events=1,
             events_left=lambda: 1.0)
    text = str(p.bar)
    p.close()
    assert "fleets  50%|" in text and "500/1000 fleets" in text and "cells done 4/10" in text, text
    assert not text.startswith("cells"), text


def test_the_eta_moves_at_every_update_from_the_measured_rate():
    """Units finishing 0.1 s apart at a steady rate: each update's ETA is the
    events left then over the rate measured then, so it falls at every step
    (it stood still while the estimate of the events left was held for 1 s)."""
    clock = Clock()
    p = Progress("lines", total_cells=2, total_fleets=10_000, stream=io.StringIO(), clock=clock,
                 interval=1e9)
    left = [1e9]
    p.update(fleets_done=1, cells_done=0, risk_done=0, fleet_cycles=1, events=1e6,
             events_left=lambda: left[0])                        # the first unit: t = 0
    etas = []
    for step in range(1, 60):
        clock.t = 0.1 * step
        left[0] -= 1e6
        p.update(fleets_done=1 + step, cells_done=0, risk_done=0, fleet_cycles=1 + step,
                 events=1e6, events_left=lambda: left[0])
        if clock.t >= MIN_RATE_SECONDS:
            etas.append(p.eta())
    assert len(etas) > 30
    assert all(b < a for a, b in zip(etas, etas[1:])), etas
    rate = 1e6 / 0.1                                         # events per second, steady
    assert etas[-1] == pytest.approx(left[0] / rate, rel=1e-9)   # float sums of 1e6 steps

"""The README's examples run as written and print what it shows."""
from __future__ import annotations

import re
import shutil

import pytest

from stormsim.cli import main
from conftest import ROOT
from docblocks import blocks, run_python_blocks

# the README's examples, run as written (~15 s once the kernels are cached)
pytestmark = pytest.mark.slow

README = ROOT / "README.md"


def test_readme_python_blocks_print_what_it_shows(tmp_path, monkeypatch):
    # Every Python block, in order; each output block shown, exactly.
    python = [b for b in blocks(README.read_text()) if b.lang == "python"]
    assert len(python) >= 2 and all(b.output is not None for b in python)
    assert run_python_blocks(README, tmp_path, monkeypatch) == len(python)


def test_readme_commands_run_and_print_what_it_shows(tmp_path, monkeypatch, capsys):
    text = README.read_text()
    shell = "\n".join(b.text for b in blocks(text) if b.lang == "sh")
    assert "make demo" in shell and "make test" in shell
    # make demo's sweep (the Makefile runs `python -m stormsim demo`)
    assert "$(PY) -m stormsim demo" in (ROOT / "Makefile").read_text()
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "-o", str(tmp_path / "results")]) == 0
    assert (tmp_path / "results" / "demo.h5").exists()
    # the sweep, as its shell block gives it, and the rows shown
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    assert "stormsim sweep examples/tail_sweep.toml -o tail.h5" in shell
    assert main(["sweep", "examples/tail_sweep.toml", "-o", "tail.h5", "-q"]) == 0
    capsys.readouterr()
    assert main(["inspect", "tail.h5", "--levels", "2,4,N/2"]) == 0
    table = capsys.readouterr().out
    shown = re.search(r"stormsim inspect tail.h5 --levels 2,4,N/2\n```\n\n```\n(.*?)```", text,
                      re.S).group(1)
    rows = [line for line in shown.splitlines() if line.strip() and "..." not in line]
    assert len(rows) >= 5
    for line in rows:  # the README's rows are this run's rows, digit for digit
        assert line in table, line


def test_readme_plan_command_prints_its_exact_rows(capsys):
    """The first screen's `stormsim plan` line, run as written: its rows made
    of exact numbers are this run's, digit for digit (the simulated rows'
    digits vary with the time budget, as the README says)."""
    text = README.read_text()
    line = next(x for x in text.splitlines() if x.startswith("stormsim plan "))
    shown = re.search(re.escape(line) + r"\n```\n\n```\n(.*?)```", text, re.S).group(1)
    assert main(line.split()[1:]) == 0
    printed = capsys.readouterr().out
    assert max(map(len, shown.splitlines())) <= 100      # the default table: 100 columns
    exact = [row for row in shown.splitlines() if "(exact)" in row]
    assert len(exact) >= 5 and sum(row.split()[0] == "fleet" for row in exact) == 1
    # compared cell by cell: the columns' widths follow the simulated rows' digits
    lines = {" ".join(line.split()) for line in printed.splitlines()}
    for row in exact:
        assert " ".join(row.split()) in lines, row

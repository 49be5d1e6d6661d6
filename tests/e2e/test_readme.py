"""The README's examples run as written and print what it shows."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stormsim.cli import DEMO_PLAN
from conftest import ROOT
from docblocks import blocks, run_python_blocks, shell_commands

# the README's examples, run as written (~45 s once the kernels are cached)
pytestmark = pytest.mark.slow

README = ROOT / "README.md"


def test_readme_python_blocks_print_what_it_shows(tmp_path, monkeypatch):
    # Every Python block, in order; each output block shown, exactly.
    python = [b for b in blocks(README.read_text()) if b.lang == "python"]
    assert len(python) >= 2 and all(b.output is not None for b in python)
    assert run_python_blocks(README, tmp_path, monkeypatch) == len(python)


@pytest.fixture(scope="module")
def after_make_demo(tmp_path_factory) -> dict[str, str]:
    """Every command of the README's shell blocks, run as written through the
    shell, in order, in a fresh clone (the tracked files it needs) after `make
    demo`: its .venv is this interpreter's, not on PATH. `make demo` runs for
    real, its install step taken as done; other make targets are dry runs
    (`make test` would run this test). Each line's stdout, by line."""
    venv_bin = Path(sys.prefix) / "bin"
    if not (venv_bin / "stormsim").exists() or shutil.which("make") is None:
        pytest.skip("needs make and a venv with the stormsim command installed")
    tmp = tmp_path_factory.mktemp("readme")
    clone = tmp / "clone"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "Makefile", "pyproject.toml",
                              "examples"], capture_output=True, text=True)
    for name in tracked.stdout.split() if tracked.returncode == 0 else ["Makefile", "pyproject.toml"]:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    if tracked.returncode != 0:      # not a git checkout: the files as they are
        shutil.copytree(ROOT / "examples", clone / "examples")
    (clone / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    stamp = tmp / "installed"        # make's install step, done: no pip
    stamp.touch()
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and Path(p).resolve() != venv_bin.resolve()]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=os.pathsep.join(path), PYTHONPATH=str(ROOT))   # this tree's stormsim
    out = {}
    for line in shell_commands(README.read_text()):
        command = line
        if line.startswith("make "):
            command = line.split("#")[0] + f" STAMP={stamp}" + ("" if line.split()[1] == "demo"
                                                                else " -n")
        proc = subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        out[line] = proc.stdout
    return out


def _line(after: dict[str, str], start: str) -> str:
    return next(line for line in after if line.startswith(start))


def test_make_demo_plans_the_readme_fleet_then_runs_the_sweep(after_make_demo):
    out = after_make_demo[_line(after_make_demo, "make demo")]
    plan = _line(after_make_demo, ".venv/bin/stormsim plan ").split("#")[0].strip()
    # the README's fleet first, as the command a user types next, with a small budget
    assert plan.split()[2:] + ["--max-seconds", "8"] == list(DEMO_PLAN)
    first, second = out.index("== 1/2 An operator's question"), out.index("== 2/2 A researcher's")
    assert first < out.index(f"    {plan} --max-seconds 8\n") < out.index("   fleet ") < second
    assert "    .venv/bin/stormsim sweep results/demo.toml -o results/demo.h5" in out[second:]
    assert "sweep 'demo: stagger survival', 6 cells, complete" in out[second:]


def test_readme_commands_run_and_print_what_it_shows(after_make_demo):
    text = README.read_text()
    assert {"make demo", "make test"} <= {" ".join(x.split("#")[0].split()) for x in after_make_demo}
    table = after_make_demo[_line(after_make_demo, ".venv/bin/stormsim inspect tail.h5 ")]
    shown = re.search(r"stormsim inspect tail.h5 --levels 2,4,N/2\n```\n\n```\n(.*?)```", text,
                      re.S).group(1)
    rows = [line for line in shown.splitlines() if line.strip() and "..." not in line]
    assert len(rows) >= 5
    for line in rows:  # the README's rows are this run's rows, digit for digit
        assert line in table, line


def test_readme_plan_command_prints_its_exact_rows(after_make_demo):
    """The first screen's `stormsim plan` line, run as written: its rows made
    of exact numbers are this run's, digit for digit (the simulated rows'
    digits vary with the time budget, as the README says)."""
    text = README.read_text()
    line = next(x for x in text.splitlines() if x.startswith(".venv/bin/stormsim plan "))
    shown = re.search(re.escape(line) + r"\n```\n\n```\n(.*?)```", text, re.S).group(1)
    printed = after_make_demo[line]
    assert max(map(len, shown.splitlines())) <= 100      # the default table: 100 columns
    exact = [row for row in shown.splitlines() if "(exact)" in row]
    assert len(exact) >= 5 and sum(row.split()[0] == "fleet" for row in exact) == 1
    # compared cell by cell: the columns' widths follow the simulated rows' digits
    lines = {" ".join(line.split()) for line in printed.splitlines()}
    for row in exact:
        assert " ".join(row.split()) in lines, row

"""The README's examples run as written and print what it shows."""
from __future__ import annotations

import re
import runpy
import shutil

import pytest

from stormsim.cli import main
from conftest import ROOT

# the README's examples, run as written (~50 s)
pytestmark = pytest.mark.slow

README = (ROOT / "README.md").read_text()


def test_readme_examples_run_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    # The two worked examples, as their shell blocks give them.
    assert main(["sweep", "examples/stagger_survival.toml", "-o", "stagger.h5", "-q"]) == 0
    assert main(["sweep", "examples/tail_sweep.toml", "-o", "tail.h5", "-q"]) == 0
    capsys.readouterr()
    assert main(["inspect", "tail.h5", "--tail", "2,4,N/2"]) == 0
    table = capsys.readouterr().out
    shown = re.search(r"stormsim inspect tail.h5 --tail 2,4,N/2\n```\n\n```\n(.*?)```", README,
                      re.S).group(1)
    rows = [line for line in shown.splitlines() if line.strip() and "..." not in line]
    assert len(rows) >= 5
    for line in rows:  # the README's rows are this run's rows, digit for digit
        assert line in table, line
    # Every Python block but the SLURM recipe (it needs a cluster).
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    ran = 0
    for i, block in enumerate(blocks):
        if "dask_jobqueue" in block:
            continue
        exec(compile(block, f"README.md python block {i}", "exec"), {})
        ran += 1
    assert ran >= 2


@pytest.mark.slow
def test_readme_physical_fleets_print_what_it_shows(tmp_path, monkeypatch, capsys):
    # "Fleets in physical units": each shell block and the output shown below it.
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shown = re.findall(r"```sh\npython (examples/physical_fleets.py) ([\w-]+)\n```\n\n```\n(.*?)```",
                       README, re.S)
    assert [name for _, name, _ in shown] == ["hpc", "pod", "object-store"]
    for script, name, output in shown:
        monkeypatch.setattr("sys.argv", [script, name])
        runpy.run_path(script, run_name="__main__")
        printed = capsys.readouterr().out
        assert printed == output, name   # every line, digit for digit
    # its sweep file, and the rows the README shows
    assert main(["sweep", "examples/gpu_pod_bandwidth.toml", "-o", "pod.h5", "-q"]) == 0
    capsys.readouterr()
    assert main(["inspect", "pod.h5", "--tail", "2,3,4"]) == 0
    table = capsys.readouterr().out
    shown = re.search(r"stormsim inspect pod.h5 --tail 2,3,4\n```\n\n```\n(.*?)```", README,
                      re.S).group(1)
    rows = [line for line in shown.splitlines() if line.strip()]
    assert len(rows) == 4
    for line in rows:
        assert line in table, line

"""The code passes its ruff configuration (pyproject.toml [tool.ruff]): a new
unused name, shadowed loop variable, bare except or a function of too many
statements, arguments or branches fails the suite, not a reviewer's eye.
``make lint`` runs the same check."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def test_the_code_passes_ruff():
    pytest.importorskip("ruff", reason="ruff comes with the 'test' extra")
    p = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "stormsim", "tests",
                        "scripts", "benchmarks"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_ruff_flags_a_long_function(tmp_path):
    """The size rules are on: a function of too many statements, arguments and
    branches fails the project's configuration."""
    pytest.importorskip("ruff", reason="ruff comes with the 'test' extra")
    body = "".join(f"    if a == {i}:\n        a += {i}\n" for i in range(60))
    (tmp_path / "long.py").write_text(f"def f(a, b, c, d, e, f, g, h, i, j):\n{body}    return a\n")
    p = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                        str(ROOT / "pyproject.toml"), "long.py"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    for code in ("PLR0915", "PLR0913", "C901"):
        assert code in p.stdout, p.stdout

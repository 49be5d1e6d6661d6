"""The code passes its ruff configuration (pyproject.toml [tool.ruff]): a new
unused name, shadowed loop variable or bare except fails the suite, not a
reviewer's eye. ``make lint`` runs the same check."""
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

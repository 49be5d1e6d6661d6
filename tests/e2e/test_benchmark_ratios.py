"""``python -m benchmarks.ratios`` runs in a tiny configuration: the ratio of
the general kernel to the blocking one always, the two against the reference
kernel where ``shared/reference-kernel`` exists (skipped with a message where
it does not, as in CI)."""
from __future__ import annotations

import json
import sys

import numba
import pytest

# benchmarks/ is not installed with stormsim: import it from the checkout.
from conftest import ROOT
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import ratios  # noqa: E402

TINY = ["--pairs", "2", "--fleets", "4", "--cycles", "24"]
GENERAL = "(g) / (a) cost per event, 1 thread"
AGAINST_REFERENCE = ["(a) / reference, 1 thread", "(a) / reference, 2 threads"]


def _run(tmp_path, capsys, *extra) -> tuple[str, dict]:
    out = tmp_path / "ratios.json"
    assert ratios.main([*TINY, "--json", str(out), *extra]) == 0
    return capsys.readouterr().out, json.loads(out.read_text())


def test_without_the_reference_kernel_only_the_general_ratio(tmp_path, capsys):
    text, res = _run(tmp_path, capsys, "--reference", str(tmp_path / "absent"))
    assert "ratios 1 and 2 skipped" in text
    assert list(res["ratios"]) == [GENERAL] and res["reference"] is None
    assert res["ratios"][GENERAL]["median"] > 0 and len(res["ratios"][GENERAL]["values"]) == 2
    assert GENERAL in text


def test_with_the_reference_kernel_all_three_ratios(tmp_path, capsys):
    path = ratios.default_reference()
    if ratios.load_reference(path) is None:
        pytest.skip(f"no reference kernel at {path} (shared/ is not in CI)")
    text, res = _run(tmp_path, capsys)
    two = numba.config.NUMBA_NUM_THREADS >= 2
    expected = [AGAINST_REFERENCE[0], GENERAL] + ([AGAINST_REFERENCE[1]] if two else [])
    assert sorted(res["ratios"]) == sorted(expected)
    for label in expected:
        assert res["ratios"][label]["median"] > 0 and label in text
    assert set(res["rates"]) >= {"ref@1", "a@1", "g@1"}

"""stormsim report draws the exact law (the product form) on its tail figure
beside the simulated points, for the cells the law covers and no other."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from stormsim.driver import run_sweep  # noqa: E402
from stormsim.report import EXACT_GID, figures  # noqa: E402
from stormsim.store.results import open_results  # noqa: E402
from stormsim.sweep.spec import parse_sweep  # noqa: E402

LEGEND = "exact law (product form)"

SWEEP = """
[sweep]
name = "law"
[fixed]
N = 6
T = 1.0
load = 0.6
cycles = 200
fleets = 8
seed = 2
[grid]
jitter = {jitter}
"""


def _tail(tmp_path, jitter: str):
    path = tmp_path / "s.h5"
    run_sweep(parse_sweep(SWEEP.format(jitter=jitter), "s.toml"), path, progress="none")
    res = open_results(path)
    out = {name: (fig, caption) for name, fig, caption in figures(res)}
    return res, out["tail.png"]


def _law_lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == EXACT_GID]


def _legend_texts(fig):
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_a_qualifying_cell_draws_the_law(tmp_path):
    # jitter 0.05 is covered (blocking, equal weights, jitter on every job); jitter 0 is
    # not (a deterministic fleet's averages depend on its launch): one line, its values
    # the summary's p_ge_law.
    res, (fig, caption) = _tail(tmp_path, "[0.0, 0.05]")
    lines = _law_lines(fig)
    assert len(lines) == 1
    assert LEGEND in _legend_texts(fig)
    assert "exact long-run law" in caption
    laws = [res.cell(i).summary()["p_ge_law"] for i in range(len(res))]     # k = 0..N
    covered = [law for law in laws if np.all(np.isfinite(law))]
    assert len(covered) == 1 and sum(np.all(np.isnan(law)) for law in laws) == 1
    np.testing.assert_array_equal(lines[0].get_ydata(), covered[0][1:])
    np.testing.assert_array_equal(lines[0].get_xdata(), np.arange(1, 7))


def test_no_qualifying_cell_draws_no_law(tmp_path):
    _, (fig, caption) = _tail(tmp_path, "[0.0]")
    assert _law_lines(fig) == []
    assert LEGEND not in _legend_texts(fig)
    assert "exact long-run law" not in caption

"""A level no fleet reached reads as a bound, and one scaled to the effort:
P(n_w >= k) falls with k, so it is below the upper end of the interval of the
deepest level some fleet did reach (a 95 % upper bound of a larger
probability), which shrinks as fleets are added; not the bare fleet-count
bound 1 - 0.05^(1/F), which sat a hundred times above measured values."""
from __future__ import annotations

import re

import numpy as np
import pytest

from stormsim import open_results, run_sweep
from stormsim.cli import main
from stormsim.stats.tails import monotone_bound
from stormsim.sweep.spec import parse_sweep

SWEEP = """
[sweep]
name = "bounds"
[fixed]
N = 16
T = 1.0
jitter = 0.01
launch = "random"
cycles = 300
fleets = 8
seed = 3
[grid]
load = [0.3, 0.6]
"""
#: The bound printed to 3 significant digits.
PRINTED = "{:.2e}"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounds") / "b.h5"
    run_sweep(parse_sweep(SWEEP, "b.toml"), path, progress="none")
    return open_results(path)


def test_the_bound_is_the_upper_end_of_the_deepest_level_reached():
    hi = np.array([1.0, 0.5, 1e-3, 2e-6, 0.2, 0.2])
    method = np.array(["one-bound", "ratio-logit", "ratio-logit", "ratio-logit", "zero-bound",
                       "zero-bound"], dtype=object)
    assert monotone_bound(hi, method).tolist() == [1.0, 0.5, 1e-3, 2e-6, 2e-6, 2e-6]
    # never above the fleets' own bound
    assert monotone_bound(np.array([0.9, 0.2]), np.array(["ratio-logit", "zero-bound"],
                                                          dtype=object)).tolist() == [0.9, 0.2]
    # no level reached below: the fleet-count bound stays
    assert monotone_bound(np.array([0.2]), np.array(["zero-bound"], dtype=object)).tolist() == [0.2]


def test_inspect_prints_an_unreached_level_as_a_bound_of_the_measured_scale(result, capsys):
    assert main(["inspect", str(result.path), "--levels", "N"]) == 0
    out = capsys.readouterr().out
    assert "0 (<" not in out
    for c in result:
        cs = c.summary()
        assert cs["p_ge_method"][16] == "zero-bound"              # no fleet of 16 writing
        b = monotone_bound(cs["p_ge_hi"], cs["p_ge_method"])[16]
        deepest = np.flatnonzero(cs["p_ge_method"] == "ratio-logit").max()
        assert b == min(cs["p_ge_hi"][deepest], cs["p_ge_hi"][16])   # never above 1 - 0.05^(1/8)
        assert f"< {PRINTED.format(b)} (none reached k)" in out, out
    assert re.search(r"'< b \(none reached k\)'", out)            # the footnote explains it


def test_the_tail_figure_draws_bounds_at_the_measured_scale_as_hollow_triangles(result):
    pytest.importorskip("matplotlib")
    from stormsim.report import figures

    (fig, _), = [(f, c) for name, f, c in figures(result) if name == "tail.png"]
    ax = fig.axes[0]
    from matplotlib.collections import PathCollection

    tri = [c for c in ax.collections if isinstance(c, PathCollection) and
           np.all(np.asarray(c.get_facecolors())[:, 3] == 0)]         # hollow markers
    pts = np.concatenate([np.asarray(c.get_offsets()) for c in tri])
    ys = pts[:, 1]
    want = [monotone_bound(cs["p_ge_hi"], cs["p_ge_method"])[k]
            for cs in (c.summary() for c in result)
            for k in np.flatnonzero(cs["p_ge_method"] == "zero-bound")[:1]]
    assert sorted(ys.tolist()) == pytest.approx(sorted(want), rel=1e-12)   # drawn, not recomputed
    # never joined: no drawn line (solid, dashed) has a bound as a vertex
    for line in ax.lines:
        if line.get_linestyle() in ("None", ""):
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float),
                              np.asarray(line.get_ydata(), float)])
        assert not any(np.all(xy == p, axis=1).any() for p in pts), line

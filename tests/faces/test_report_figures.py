"""stormsim report: bounded memory and figures a reader
can read (defect 3.5): titles inside the figure, uncrowded log ticks, one
colour per curve of a panel with its confidence band, zeros marked by their
bound, the (m/sigma)^2 law drawn against m/sigma."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from stormsim import plots  # noqa: E402
from stormsim.store.results import open_results  # noqa: E402
from stormsim.sweep.spec import parse_sweep  # noqa: E402
from stormsim.driver import run_sweep  # noqa: E402

STAGGER = """
[sweep]
name = "a stagger sweep with a long enough name to need more than one line in its titles"
[fixed]
N = 8
T = 1.0
launch = "stagger"
passage_level = 2
stop_at_passage = false
cycles = 400
fleets = 24
seed = 5
[grid]
load = [0.5, 0.9]
m_over_sigma = [2, 4, 8, 16, 32]
"""


@pytest.fixture(scope="module")
def stagger(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "s.h5"
    run_sweep(parse_sweep(STAGGER, "s.toml"), path, progress="none")
    return open_results(path)


@pytest.fixture(scope="module")
def figs(stagger):
    from stormsim.report import figures

    out = {name: (fig, caption) for name, fig, caption in figures(stagger)}
    for fig, _ in out.values():
        FigureCanvasAgg(fig).draw()          # lay out: extents below are final
    return out


@pytest.mark.slow  # ~1.7 s: a report with every figure
def test_every_title_fits_inside_its_figure(figs):
    assert {"tail.png", "survival.png", "median_vs_m_over_sigma.png"} <= set(figs)
    for name, (fig, _) in figs.items():
        r = fig.canvas.get_renderer()
        box = fig.bbox
        texts = [fig._suptitle] if fig._suptitle is not None else []
        texts += [ax.title for ax in fig.axes]
        for t in texts:
            if not t.get_text():
                continue
            e = t.get_window_extent(r)
            # a pixel of slack for antialiasing at the edge
            assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y1 <= box.y1 + 1, \
                (name, t.get_text())


def _visible_major_labels(axis):
    lo, hi = sorted(axis.get_view_interval())
    return [t for t in axis.get_major_ticks()
            if t.label1.get_visible() and t.label1.get_text() and lo <= t.get_loc() <= hi]


def test_log_ticks_do_not_crowd_when_limits_widen_after_drawing():
    # a series first drawn over a narrow range (1-2-5 ticks), then widened to
    # 7 decades, as the report's tail panels do
    fig = plots.series([1.0, 2.0], {"a": ([0.3, 0.6], None, None)}, logy=True)
    ax = fig.axes[0]
    ax.set_ylim(1e-7, 1.0)
    FigureCanvasAgg(fig).draw()
    labels = _visible_major_labels(ax.yaxis)
    assert 3 <= len(labels) <= plots.MAX_LOG_LABELS + 1
    r = fig.canvas.get_renderer()
    boxes = sorted((t.label1.get_window_extent(r) for t in labels), key=lambda b: b.y0)
    assert all(a.y1 <= b.y0 for a, b in zip(boxes, boxes[1:]))    # no two overlap
    # and a narrow axis still reads 1-2-5 in plain numbers
    ax.set_ylim(0.2, 3.0)
    fig.canvas.draw()
    assert {t.label1.get_text() for t in _visible_major_labels(ax.yaxis)} >= {"0.5", "1", "2"}


def test_report_log_axes_are_readable(figs):
    for name, (fig, _) in figs.items():
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if axis.get_scale() == "log":
                    assert len(_visible_major_labels(axis)) <= plots.MAX_LOG_LABELS + 1, name


def test_survival_curves_are_told_apart_and_banded(figs):
    fig, caption = figs["survival.png"]
    axes = [ax for ax in fig.axes if ax.lines]
    assert len(axes) == 2                                       # one panel per load
    for ax in axes:
        curves = [ln for ln in ax.lines if not ln.get_label().startswith("_")]
        assert len(curves) == 5 and len(curves) <= 8
        colours = {ln.get_color() for ln in curves}
        assert len(colours) == len(curves)                     # one colour each
        assert set(map(str, colours)) <= set(plots.COLORS)     # the qualitative palette
        assert len(ax.collections) >= len(curves)             # a band per curve
    assert "95 %" in caption


def test_zero_probabilities_are_marked_by_their_bound(stagger, figs):
    s = stagger.summary(levels=("N",))
    zero = s["p_ge_N_method"] == "zero-bound"
    assert zero.any()                       # this sweep has levels no fleet reached
    bound = s["p_ge_N_bound"][zero][0]         # the bound shown (monotone_bound)
    fig, caption = figs["tail.png"]
    marks = [c for ax in fig.axes for c in ax.collections
             if len(c.get_offsets()) and c.get_paths()]
    ys = np.concatenate([np.asarray(c.get_offsets())[:, 1] for c in marks])
    assert np.any(np.isclose(ys, bound, rtol=1e-12))
    assert "upper bound" in caption


def test_median_against_m_over_sigma_has_the_square_law(figs):
    fig, caption = figs["median_vs_m_over_sigma.png"]
    ax = fig.axes[0]
    ref = [ln for ln in ax.lines if "sigma" in ln.get_label()]
    assert len(ref) == 1
    x, y = (np.asarray(v, float) for v in ref[0].get_data())
    slope = np.polyfit(np.log(x), np.log(y), 1)[0]
    assert slope == pytest.approx(2.0, rel=1e-9)                # a power law, exactly
    assert "(m/\\sigma)^2" in caption


MEMORY = """
[sweep]
name = "memory"
[fixed]
N = 32
T = 1.0
load = 0.6
jitter = 0.01
cycles = 20
fleets = 400
[grid]
seed = [1, 2]
"""
#: Traced numpy/Python allocations of the report's figures of a result whose
#: cells hold 400 x 33 occupancies (0.1 MB each): ~7 MB measured (matplotlib's
#: own arrays); the 400-resample bootstrap it replaced allocated 400 x 400 x 33
#: floats, 42 MB, per cell. 20 MB separates the two with room on either side.
PEAK_BYTES = 20e6


@pytest.mark.slow
def test_report_memory_is_bounded(tmp_path):
    from stormsim.report import figures

    path = tmp_path / "m.h5"
    run_sweep(parse_sweep(MEMORY, "m.toml"), path, progress="none")
    res = open_results(path)
    figures(res)                             # imports, caches, fonts: not counted
    tracemalloc.start()
    try:
        figures(res)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES


def test_no_legend_hides_a_bound_marker(figs):
    """The triangles that stand for a zero must be seen: none under a legend."""
    names = [n for n in figs if n.startswith("tail")]
    assert "tail.png" in names and len(names) == 2
    for name in names:
        fig, _ = figs[name]
        r = fig.canvas.get_renderer()
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is None:
                continue
            box = leg.get_window_extent(r)
            for c in ax.collections:
                if not len(c.get_offsets()):
                    continue
                for x, y in ax.transData.transform(np.asarray(c.get_offsets())):
                    assert not box.contains(x, y), (name, x, y)

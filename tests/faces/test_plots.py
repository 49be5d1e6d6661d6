"""stormsim.plots and stormsim.report: every figure draws from plain arrays,
has labelled axes and saves as a PNG; the report reads any sweep result."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import stormsim  # noqa: E402
from stormsim import plots  # noqa: E402
from stormsim.stats.analysis import phase_gap  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def saved_png(fig, path) -> bytes:
    fig.savefig(path, dpi=50)
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return data


def labelled(fig):
    """Every axes of the figure has both axis labels."""
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        assert ax.get_xlabel() and ax.get_ylabel(), ax


@pytest.fixture(scope="module")
def pair_gaps():
    fleet = stormsim.Fleet(T=[1.0, 1.04], d=[0.3, 0.3])
    run = stormsim.simulate(fleet, launch="random", fleets=8, cycles=30, seed=1,
                            record_firings=True)
    return phase_gap(run.firings)


@pytest.mark.slow  # a subprocess
def test_import_stormsim_does_not_import_matplotlib():
    code = "import sys, stormsim; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_pair_figures(pair_gaps, tmp_path):
    x, g = plots.circular_increment(pair_gaps)
    assert x.shape == g.shape and np.all((x >= 0) & (x < 1)) and np.all(np.abs(g) <= 0.5)
    for fig in (plots.return_map({"pair": pair_gaps}),
                plots.gap_increment({"pair": pair_gaps}),
                plots.gap_increment({"pair": pair_gaps}, log=True)):
        labelled(fig)
        saved_png(fig, tmp_path / "f.png")


def test_circular_increment_drops_skipped_cycles():
    # a gap >= 1 (job 1 skipped a cycle of job 0) and a NaN are not steps
    delta = np.array([[0.9, 0.95, 1.01, 0.02, np.nan, 0.1]])
    x, g = plots.circular_increment(delta)
    np.testing.assert_allclose(x, [0.9])
    np.testing.assert_allclose(g, [0.05])


@pytest.mark.slow  # draws and saves many figures (~10 s)
def test_array_figures(tmp_path):
    rng = np.random.default_rng(0)
    x = np.array([0.5, 1.0, 2.0])
    figs = [
        plots.spectrum({"fair": (x, x, lambda z: z), "noline": (x, x ** 0.5, None)}),
        plots.separation({"a": rng.normal(-5, 1, (6, 40))}, examples=2),
        plots.separation({"a": rng.normal(-5, 1, (6, 40))}, band=False),
        plots.gap_opening({"a": rng.random(20) * 0.01}, {"a": rng.random(20)}),
        plots.ecdf({"a": rng.random(30), "b": rng.random(30)}, xlabel="gap (cycles)"),
        plots.daido_vs_null(["c1", "c2"], rng.random((2, 4)),
                            (np.zeros((2, 4)), np.ones((2, 4))), np.full((2, 4), 0.3),
                            (np.full((2, 4), 0.2), np.full((2, 4), 0.4))),
        plots.tail_vs_binomial(np.arange(1, 5), np.array([0.5, 0.1, 0.01, 0.0]),
                               (np.array([0.4, 0.05, 0.001, 0.0]), np.array([0.6, 0.2, 0.02, 0.0])),
                               np.array([0.5, 0.05, 0.001, 1e-5]), label="cell"),
        plots.survival({"a": (np.array([1.0, 3, 5, 100]), np.array([True, True, True, False])),
                        "never": (np.array([100.0, 100.0]), np.array([False, False]))}),
        plots.power_law_fit({"N=4": x}, {"N=4": (x ** 2, x ** 2 * 0.9, x ** 2 * 1.1)},
                            {"N=4": (1.0, 2.0)}, xlabel="m/sigma", ylabel="median"),
        plots.occupancy({"a": rng.random((5, 5))}),
        plots.series(x, {"m": (np.array([1.0, np.inf, 3.0]), np.array([0.5, 10.0, 2.0]),
                               np.array([2.0, np.nan, 4.0]))}, xlabel="x", ylabel="y",
                     logx=True, logy=True),
        plots.heatmap(rng.random((2, 3)), [1, 2, 3], ["a", "b"], xlabel="x", ylabel="y"),
    ]
    for fig in figs:
        labelled(fig)
        saved_png(fig, tmp_path / "f.png")


def test_draws_into_given_axes():
    fig, axes = plots.grid(2, 1)
    out = plots.ecdf({"a": np.arange(1.0, 5.0)}, ax=axes[0, 1], xlabel="x")
    assert out is fig and axes[0, 1].lines


SWEEP = """
[sweep]
name = "report smoke"
[fixed]
T = 1.0
cycles = 60
fleets = 6
seed = 3
[grid]
N = [4, 8]
load = [0.3, 0.6, 0.9]
launch = ["random", "stagger"]
jitter = [0.002]
passage_level = [0, 2]
"""


@pytest.fixture(scope="module")
def sweep_result(tmp_path_factory):
    from stormsim.sweep.spec import parse_sweep
    from stormsim.driver import run_sweep

    d = tmp_path_factory.mktemp("sweep")
    sweep = parse_sweep(SWEEP, str(d / "s.toml"))
    run_sweep(sweep, str(d / "s.h5"), progress="none")
    return d / "s.h5"


@pytest.mark.slow  # a sweep and a full report
def test_report_writes_figures_and_markdown(sweep_result, tmp_path):
    from stormsim.report import main

    out = tmp_path / "rep"
    assert main(str(sweep_result), str(out)) == 0
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "tail.png", "survival.png"} <= names
    assert "tail_vs_load.png" in names and "median_vs_load.png" in names
    for p in out.glob("*.png"):
        assert p.read_bytes()[:8] == PNG_MAGIC
    text = (out / "report.md").read_text()
    assert "report smoke" in text and "![tail.png](tail.png)" in text


def test_report_refuses_a_file_that_is_not_a_result(tmp_path):
    from stormsim.report import main

    bad = tmp_path / "x.h5"
    bad.write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match="not a stormsim sweep result"):
        main(str(bad), str(tmp_path / "out"))

"""Checkpoint durations and waits (MODEL.md E7) in sweeps, and the writer cap (E5) as a key."""
from __future__ import annotations

import math

import numpy as np
import pytest

import stormsim
from stormsim.driver import run_sweep
from stormsim.errors import SweepError
from stormsim.stats import durations
from stormsim.store.results import open_results
from stormsim.sweep.spec import parse_sweep
from stormsim.sweep.work import RESULT_ARRAYS

E7_ARRAYS = ("durations_count", "durations_sum", "durations_max", "durations_hist", "wait_sum",
             "wait_max", "wait_hist")

BASE = """
[fixed]
N = 6
load = 0.9
jitter = "2%"
fleets = 8
cycles = 60
burn_in = 5
watchdog = 0.3
[grid]
max_writers = ["none", 2]
"""


@pytest.fixture(scope="module")
def fleet_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("e7") / "fleet.h5"
    sweep = parse_sweep(BASE)
    run_sweep(sweep, out, progress="none")
    return sweep, open_results(out)


def test_every_sweep_keeps_the_e7_arrays_as_simulate_returns_them(fleet_result):
    sweep, res = fleet_result
    assert {a.name for a in RESULT_ARRAYS} >= set(E7_ARRAYS)
    for c, cell in zip(sweep.cells, res):
        run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
        for name in E7_ARRAYS:
            np.testing.assert_array_equal(getattr(cell, name), getattr(run, name), err_msg=name)
        np.testing.assert_array_equal(cell.wait_count, run.wait_count)
        np.testing.assert_array_equal(cell.durations_hist_sum, run.durations_hist.sum(axis=0))
        assert cell.durations_count_sum == run.durations_count.sum()


def test_cell_summary_is_stats_durations_of_the_run(fleet_result):
    """The per-cell numbers come from stormsim.stats.durations, over the fleets."""
    sweep, res = fleet_result
    for c, cell in zip(sweep.cells, res):
        run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
        s = cell.summary()
        m = durations.mean(run)
        q = durations.quantile(run, 0.99)
        e = durations.exceedance(run, 0.3)
        w = durations.mean(run, "wait")
        # the same estimators on the same per-fleet arrays: equal to rounding
        # (the cell's arrays pass through float64 on their way)
        rel = 1e-12
        assert s["checkpoints"] == int(run.durations_count.sum())
        for key, est in (("duration_mean", m), ("duration_p99", q), ("wait_mean", w)):
            assert s[key] == pytest.approx(est.value, rel=rel)
            assert s[key + "_lo"] == pytest.approx(est.lo, rel=rel, abs=1e-300)
            assert s[key + "_hi"] == pytest.approx(est.hi, rel=rel)
        assert s["duration_p_watchdog"] == pytest.approx(e.value, rel=rel, abs=1e-300)
        at = durations.exceedance_edge(run, 0.3)
        assert s["duration_watchdog_at"] == pytest.approx(at) and at >= 0.3
        assert s["duration_max"] == run.durations_max.max()
        assert s["wait_max"] == run.wait_max.max()
    capped = res.cell(1).summary()
    assert capped["wait_mean"] > 0.0       # with K = 2 of 6 writers, checkpoints queue


def test_sum_mode_keeps_blocks_and_gives_the_same_means(fleet_result, tmp_path):
    _, fleet = fleet_result
    out = tmp_path / "sum.h5"
    run_sweep(parse_sweep('[sweep]\noccupancy = "sum"\n' + BASE), out, progress="none")
    res = open_results(out)
    for a, b in zip(fleet, res):
        assert b.durations_hist is None and b.durations_count is None
        np.testing.assert_array_equal(b.durations_max, a.durations_max)  # per fleet: no sum
        np.testing.assert_array_equal(b.durations_hist_sum, a.durations_hist_sum)
        assert b.durations_hist_blocks.sum(axis=0).tolist() == a.durations_hist_sum.tolist()
        sa, sb = a.summary(), b.summary()
        # the point estimates are ratios of the same sums; only the intervals'
        # units differ (blocks of fleets instead of fleets)
        assert sb["duration_mean"] == pytest.approx(sa["duration_mean"], rel=1e-12)
        assert sb["checkpoints"] == sa["checkpoints"]
        assert sb["duration_mean_lo"] < sb["duration_mean"] < sb["duration_mean_hi"]


def test_a_file_without_the_e7_arrays_reads_and_says_not_recorded(tmp_path):
    import h5py

    out = tmp_path / "old.h5"
    run_sweep(parse_sweep(BASE), out, progress="none")
    with h5py.File(out, "r+") as f:
        for g in f["cells"].values():
            for name in E7_ARRAYS:
                del g[name]
            for name in E7_ARRAYS:
                if f"{name}_sum" in g:
                    del g[f"{name}_sum"]
    cell = next(iter(open_results(out)))
    assert cell.durations_hist is None and cell.durations_hist_sum is None
    s = cell.summary()
    assert s["checkpoints"] == -1
    assert math.isnan(s["duration_mean"]) and math.isnan(s["duration_p99"])


# -- the writer cap as a key ---------------------------------------------------------

PLAIN = """
[fixed]
N = 4
load = 0.5
fleets = 3
cycles = 20
jitter = 0.01
"""


def test_max_writers_reaches_the_fleet_and_a_grid(fleet_result):
    sweep, res = fleet_result
    assert [c.fleet.max_writers for c in sweep.cells] == [6, 2]
    assert res.params["max_writers"].tolist() == [0, 2]        # 0: no cap
    assert all(cell.wait_max.max() <= 0.0 for cell in [res.cell(0)])  # no cap, no queue


@pytest.mark.parametrize("extra", ["", 'max_writers = "none"\n', "max_writers = 4\n"])
def test_no_cap_keeps_the_run_seed(extra):
    """Fleet.canonical leaves max_writers out unless it caps (K < N)."""
    assert parse_sweep(PLAIN + extra).cells[0].run_seed == parse_sweep(PLAIN).cells[0].run_seed


def test_a_cap_changes_the_run_seed():
    assert (parse_sweep(PLAIN + "max_writers = 3\n").cells[0].run_seed
            != parse_sweep(PLAIN).cells[0].run_seed)


@pytest.mark.parametrize("extra,match", [
    ("max_writers = 5\n", r"cell 0: max_writers = 5 is above N = 4: must be in 1\.\.N"),
    ("max_writers = 0\n", r"max_writers = 0: must be an integer in 1\.\.N"),
    ("max_writers = 1.5\n", r"max_writers = 1\.5: must be an integer in 1\.\.N"),
    ('max_writers = "two"\n', r"max_writers = \"two\": must be an integer in 1\.\.N"),
    ("watchdog = -1\n", r"watchdog = -1: must be a number of seconds"),
])
def test_bad_caps_and_watchdogs_are_refused(extra, match):
    with pytest.raises(SweepError, match=match):
        parse_sweep(PLAIN + extra)


# -- the views -------------------------------------------------------------------------

def test_every_view_shows_the_durations(fleet_result, capsys):
    from stormsim.cli import main

    _, res = fleet_result
    s = res.cell(1).summary()
    text = res.table(durations=True)
    assert "Checkpoint durations and waits, per cell:" in text
    assert "p99 s [95% CI]" in text and "P(>=watchdog) [95% CI]" in text
    assert f"{s['duration_mean']:.4g} [{s['duration_mean_lo']:.4g}" in text
    assert "Checkpoint durations" not in res.table()          # only when asked
    df = res.to_dataframe()
    assert df["duration_mean"].iloc[1] == s["duration_mean"]
    assert df["checkpoints"].iloc[1] == s["checkpoints"]
    assert main(["inspect", res.path, "--durations", "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert {"duration_mean", "duration_p99_hi", "duration_p_watchdog", "wait_mean"} <= set(header)
    pytest.importorskip("xarray")
    ds = res.to_xarray(grid=False)
    assert float(ds["duration_p99"][1]) == s["duration_p99"]
    assert ds["duration_p99"].attrs["units"] == "s"


def test_the_result_file_has_the_durations_in_its_table(fleet_result):
    import h5py

    _, res = fleet_result
    with h5py.File(res.path, "r") as f:
        assert f["duration_mean"].shape == (2,) and f["grid/duration_mean"].shape == (2,)
        assert f["cells/000001/durations_hist"].dims[1][0].name.endswith("duration_bin")
        np.testing.assert_array_equal(f["cells/000001/duration_edge"][()],
                                      res.cell(1).duration_edges)


def test_the_report_has_a_durations_section(fleet_result, tmp_path):
    pytest.importorskip("matplotlib")
    from stormsim.report import main

    _, res = fleet_result
    assert main(res.path, str(tmp_path / "rep")) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Checkpoint durations" in text and "mean wait s [95% CI]" in text


@pytest.mark.parametrize("mode", ["fleet", "sum"])
def test_unit_files_keep_the_e7_arrays_sums_and_blocks(mode, tmp_path):
    """A unit file read back (a resumed sweep's parts) is the Part that was written."""
    from stormsim.store.parts import read_unit, write_unit
    from stormsim.sweep.work import make_unit, run_unit

    sweep = parse_sweep(f'[sweep]\noccupancy = "{mode}"\n' + BASE)
    (part,) = run_unit(make_unit(sweep, 1, 2, 7))
    (back,) = read_unit(write_unit(tmp_path, [part]), sweep)
    for name in E7_ARRAYS:
        a, b = part.arrays[name], back.arrays[name]
        assert (a is None and b is None) or np.array_equal(a, b), name
    assert back.sums == part.sums and back.blocks == part.blocks
    assert ("durations_hist" in back.blocks) == (mode == "sum")

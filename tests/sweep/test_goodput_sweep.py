"""Failures and goodput in sweeps (MODEL.md E8, issue 35 item 2): the keys
mtbf, restart and outage_mtbf, what a cell with failures stores, and every view
of it (summary, xarray, pandas, inspect's CSV, the report)."""
from __future__ import annotations

import csv
import io
import math

import h5py
import numpy as np
import pytest

import stormsim
from stormsim.driver import run_sweep
from stormsim.errors import SweepError
from stormsim.stats.goodput import goodput
from stormsim.stats.summary import GOODPUT_KEYS, GOODPUT_PARTS
from stormsim.store.results import open_results
from stormsim.sweep.executors import LocalExecutor
from stormsim.sweep.spec import parse_sweep
from stormsim.sweep.work import FAILURE_ARRAYS, Part, make_piece

from h5compare import datasets

FIXED = """
[sweep]
name = "fail"
[fixed]
N = 4
T = 1800.0
d = 30.0
jitter = 18.0
fleets = 24
cycles = 150
burn_in = 10
seed = 3
"""
#: mtbf falls from cell 0 to cell 2; cell 3 never fails.
GRID = FIXED + 'restart = "10 min"\n[grid]\nmtbf = ["7 d", "24 h", "3 h", "inf"]\n'


def _cells_datasets(path) -> dict:
    """Each cell group's datasets, by cell index -> {name: (dtype, shape, bytes)}."""
    out = {}
    for name, v in datasets(path).items():
        if name.startswith("cells/") and not name.endswith("@"):
            cell, _, rest = name[len("cells/"):].partition("/")
            out.setdefault(int(cell), {})[rest] = v
    return out


# -- keys ---------------------------------------------------------------------------

def test_the_failure_keys_at_their_defaults_move_no_seed_and_no_identity():
    plain = parse_sweep(FIXED)
    given = parse_sweep(FIXED + 'mtbf = "inf"\nrestart = 0\noutage_mtbf = "none"\n')
    assert given.cells[0].run_seed == plain.cells[0].run_seed
    assert given.hash == plain.hash
    assert not given.cells[0].fleet.has_failures


def test_the_failure_keys_set_the_fleet_and_change_the_seed_away_from_their_default():
    sw = parse_sweep(GRID.replace('restart = "10 min"', 'restart = "10 min"\n'
                                  'outage_mtbf = "30 d"'))
    seeds = {c.run_seed for c in sw.cells}
    assert len(seeds) == 4
    c = sw.cells[1]
    assert np.all(c.fleet.mtbf == 86400.0) and np.all(c.fleet.restart == 600.0)
    assert c.fleet.outage_mtbf == 30 * 86400.0
    cols = sw.columns()
    assert cols["mtbf"].tolist() == [604800.0, 86400.0, 10800.0, math.inf]
    assert cols["restart"].tolist() == [600.0] * 4
    per_job = parse_sweep(FIXED + "mtbf = [3600, 7200, 3600, 7200]\n").cells[0]
    assert per_job.fleet.mtbf.tolist() == [3600.0, 7200.0, 3600.0, 7200.0]
    assert math.isnan(per_job.values["mtbf"])            # jobs differ: NaN in the column


@pytest.mark.parametrize("line, words", [
    ("mtbf = 0", "mtbf = 0: every value must be > 0"),
    ("mtbf = -5.0", "mtbf = -5.0: every value must be > 0"),
    ('mtbf = "3 GB"', 'mtbf = "3 GB": "3 GB" is not a time'),
    ("mtbf = [1, 2]", "mtbf = [1.0, 2.0] has 2 values but N = 4"),
    ("restart = -1", "restart = -1: every value must be finite and >= 0"),
    ('restart = "inf"', "restart = \"inf\": must be finite"),
    ("outage_mtbf = [1, 2]", "outage_mtbf = [1, 2]: must be one time"),
    ("outage_mtbf = 0", "outage_mtbf = 0: every value must be > 0"),
])
def test_a_bad_failure_key_is_an_error_naming_it(line, words):
    with pytest.raises(SweepError) as exc:
        parse_sweep(FIXED + line + "\n")
    assert words in str(exc.value)


def test_a_cell_whose_failures_no_kernel_runs_is_refused_when_the_file_is_read():
    """Failures where the engine cannot run them yet (the general kernel's
    fleets, while it lacks MODEL.md E8) are an error of the sweep file, naming
    the cell, not of a unit halfway through the run; where it can, they load."""
    from stormsim.engine.run import choose_kernel
    from stormsim.errors import SpecError

    text = FIXED + 'checkpoint = "async"\nmtbf = "3 h"\n'
    fleet = parse_sweep(FIXED + 'checkpoint = "async"\n').cells[0].fleet
    try:
        choose_kernel(stormsim.Fleet(T=fleet.T, d=fleet.d, jitter=fleet.jitter,
                                     checkpoint="async", mtbf=10800.0))
    except SpecError as exc:
        with pytest.raises(SweepError, match="cell 0: failures") as got:
            parse_sweep(text)
        assert str(exc) in str(got.value)
    else:
        assert parse_sweep(text).cells[0].fleet.has_failures


def test_job_tables_give_mtbf_and_restart_as_columns_or_take_the_keys(tmp_path):
    (tmp_path / "with.csv").write_text("compute_interval [min],size [GB],jitter [s],mtbf [h]\n"
                                       "30,840,18,3\n30,840,18,6\n")
    (tmp_path / "without.csv").write_text("compute_interval [min],size [GB],jitter [s]\n"
                                          "30,840,18\n30,840,18\n")
    base = '[fixed]\nbandwidth = "40 GB/s"\nfleets = 2\ncycles = 10\n'
    src = str(tmp_path / "s.toml")
    f = parse_sweep(base + 'jobs = "with.csv"\nrestart = 60\n', src).cells[0].fleet
    assert f.mtbf.tolist() == [10800.0, 21600.0] and f.restart.tolist() == [60.0, 60.0]
    f = parse_sweep(base + 'jobs = "without.csv"\nmtbf = "3 h"\noutage_mtbf = "30 d"\n',
                    src).cells[0].fleet
    assert f.mtbf.tolist() == [10800.0] * 2 and f.outage_mtbf == 30 * 86400.0
    with pytest.raises(SweepError, match="has the column mtbf: leave the key 'mtbf' out"):
        parse_sweep(base + 'jobs = "with.csv"\nmtbf = "3 h"\n', src)


# -- storage and bits ---------------------------------------------------------------

def test_a_cells_failure_arrays_do_not_depend_on_batches_threads_or_pieces():
    """The per-fleet sums of a Part (MODEL.md E8) are the same bits however the
    fleets are cut and however many threads run them."""
    sw = parse_sweep(GRID)
    kw = dict(make_piece(sw, 2, 0, 12).kwargs)

    def part(a, b, **extra):
        p = make_piece(sw, 2, a, b)
        run = stormsim.simulate(p.fleet, fleets=b - a, fleet_start=a, **kw, **extra)
        return Part.from_run(p, run, sweep_hash=sw.hash, keep_per_fleet=True)

    whole = part(0, 12, batch_size=12, threads=1)
    other = part(0, 12, batch_size=5, threads=2)
    for name in FAILURE_ARRAYS:
        assert other.arrays[name].tobytes() == whole.arrays[name].tobytes(), name
    left, right = part(0, 7, batch_size=3), part(7, 12, batch_size=2)
    for name in FAILURE_ARRAYS:
        joined = np.concatenate([left.arrays[name], right.arrays[name]])
        assert joined.tobytes() == whole.arrays[name].tobytes(), name
        assert whole.arrays[name].shape == (12,)


def test_goodput_of_the_stored_sums_is_goodput_of_the_run():
    """The summary's estimator on the stored per-fleet sums gives the bits of
    stormsim.stats.goodput.goodput on the cell's own Run."""
    sw = parse_sweep(GRID)
    c = sw.cells[2]
    run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
    piece = make_piece(sw, 2, 0, c.fleets)
    part = Part.from_run(piece, run, sweep_hash=sw.hash, keep_per_fleet=True)
    g = goodput(run)
    from stormsim.store.cellresult import cell_from_parts
    s = cell_from_parts(c, [part], keep_per_fleet=True).summary()
    assert s["goodput"] == g["goodput"].value and s["goodput_lo"] == g["goodput"].lo
    for p in GOODPUT_PARTS:
        assert s[f"goodput_{p}"] == g[p].value and s[f"goodput_{p}_hi"] == g[p].hi
    assert s["failures"] == int(run.failures.sum())


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The grid over mtbf run into an HDF5 file (and a file of the same sweep
    without the failure keys, to compare its cell without failures)."""
    d = tmp_path_factory.mktemp("goodput")
    out = d / "fail.h5"
    assert run_sweep(parse_sweep(GRID, "fail.toml"), out, progress="none").status == "complete"
    plain = d / "plain.h5"       # (restart enters Fleet.canonical even where no job fails)
    assert run_sweep(parse_sweep(FIXED + 'restart = "10 min"\n', "plain.toml"), plain,
                     progress="none").status == "complete"
    return out, plain


def test_only_cells_with_failures_store_the_failure_arrays(swept):
    out, plain = swept
    cells = _cells_datasets(out)
    for i in range(3):
        assert set(FAILURE_ARRAYS) | {"mtbf", "restart"} <= set(cells[i])
        assert cells[i]["committed_work"][1] == (24,)
    assert not (set(FAILURE_ARRAYS) | {"mtbf", "restart"}) & set(cells[3])
    # the cell that never fails is the cell of a sweep without mtbf, bit for bit
    assert cells[3] == _cells_datasets(plain)[0]


def test_the_summary_has_goodput_with_intervals_falling_with_mtbf(swept):
    out, _ = swept
    res = open_results(out)
    s = res.summary(levels=())
    g, lo, hi = s["goodput"], s["goodput_lo"], s["goodput_hi"]
    assert np.all(lo[:3] < g[:3]) and np.all(g[:3] < hi[:3])
    assert hi[2] < lo[1] and hi[1] < lo[0]                      # falls as mtbf falls
    assert s["goodput_method"].tolist() == ["ratio-delta"] * 3 + ["none"]
    assert math.isnan(g[3]) and s["failures"][3] == -1 and s["outages"][3] == -1
    total = g[:3] + sum(s[f"goodput_{p}"][:3] for p in GOODPUT_PARTS)
    assert np.allclose(total, 1.0, atol=1e-12)
    assert np.all(s["goodput_lost"][:3] > 0) and np.all(s["goodput_down"][:3] > 0)
    rate = s["failures_per_day"][:3]                            # 4 jobs x 86400 / mtbf
    want = 4 * 86400.0 / np.array([604800.0, 86400.0, 10800.0])
    assert np.all(s["failures_per_day_lo"][:3] < want * 1.15)
    assert np.all(s["failures_per_day_hi"][:3] > want * 0.85)
    assert np.all(np.abs(rate / want - 1) < 0.25)
    # the file's own table (written with the cells) says the same
    with h5py.File(out, "r") as f:
        assert f["goodput"][()].tobytes() == g.tobytes()
        assert f["grid"]["goodput"][()].tobytes() == g.tobytes()
        assert f["goodput_method"].asstr()[()].tolist() == ["ratio-delta"] * 3 + ["none"]


def test_xarray_and_pandas_have_the_goodput_columns(swept):
    pytest.importorskip("xarray")
    pytest.importorskip("pandas")
    out, _ = swept
    res = open_results(out)
    ds = res.to_xarray()
    assert ds["goodput"].dims == ("mtbf",)
    assert ds["goodput"].sel(mtbf=86400.0).item() == res.summary(levels=())["goodput"][1]
    assert ds["goodput_lost_hi"].attrs["units"] == "1"
    df = res.to_dataframe(levels=[2])
    for name in GOODPUT_KEYS:
        assert name in df.columns
    assert df["goodput"].iloc[0] > df["goodput"].iloc[2]


def test_inspect_csv_and_text_and_the_report_show_goodput(swept, tmp_path, capsys):
    from stormsim.cli import main

    out, plain = swept
    assert main(["inspect", str(out), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["goodput_method"] for r in rows] == ["ratio-delta"] * 3 + ["none"]
    assert float(rows[2]["goodput_hi"]) < float(rows[1]["goodput_lo"])
    assert rows[3]["goodput"] == "" and rows[3]["failures"] == "-1"
    assert main(["inspect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Goodput and failures, per cell with failures" in text
    assert main(["inspect", str(plain), "--format", "csv"]) == 0
    assert "goodput" not in capsys.readouterr().out.splitlines()[0]   # no failures: no columns
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "goodput_vs_mtbf.png").is_file()
    assert "## Goodput" in (tmp_path / "rep" / "report.md").read_text()


def test_a_resumed_sweep_with_failures_gives_the_same_bits(swept, tmp_path):
    """Interrupted after its first unit (units of a few fleets), then resumed:
    the file is the one run in one go."""
    from test_sweep import InterruptAfterFirst

    out, _ = swept
    sw = parse_sweep(GRID, "fail.toml")
    again = tmp_path / "again.h5"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sw, again, progress="none",
                  executor=InterruptAfterFirst(workers=1, target_seconds=1e-5))
    assert (tmp_path / "again.h5.parts").is_dir()
    assert run_sweep(sw, again, progress="none",
                     executor=LocalExecutor(workers=2, target_seconds=1e-5)).status == "complete"
    a, b = datasets(out), datasets(again)
    keys = [k for k in a if not k.endswith("@")]
    assert [k for k in keys if a[k] != b.get(k)] == []


def test_a_file_without_failure_arrays_reads_as_cells_without_failures(swept, tmp_path):
    """A file of 0.3.0 (no failure datasets, no goodput columns) reads: goodput NaN."""
    import shutil

    _, plain = swept
    old = tmp_path / "old.h5"
    shutil.copy(plain, old)
    with h5py.File(old, "a") as f:
        for name in GOODPUT_KEYS:
            for g in (f, f["grid"]):
                if name in g:
                    del g[name]
        for name in ("mtbf", "restart", "outage_mtbf"):
            for g in (f, f["params"], f["grid"]):
                if name in g:
                    del g[name]
    res = open_results(old)
    c = res.cell(0)
    assert not c.has_failures and c.committed_work is None and np.all(np.isinf(c.mtbf))
    s = res.summary(levels=())
    assert math.isnan(s["goodput"][0]) and s["failures"][0] == -1

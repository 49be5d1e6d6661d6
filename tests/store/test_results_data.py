"""Results as data: tail intervals, the v2 layout, xarray / pandas / CSV / JSON
views, version-1 files, structural NaN."""
from __future__ import annotations

import csv
import io
import json
import math

import h5py
import numpy as np
import pytest
from scipy.stats import binom

import stormsim
from stormsim.cli import main
from stormsim.store.export import XARRAY_NAMES
from stormsim.store.results import open_results
from stormsim.sweep.spec import parse_sweep
from stormsim.store.stores import HDF5Store, MemoryStore
from stormsim.driver import run_sweep
from stormsim.stats.exact_sums import exact_column_sums
from stormsim.sweep.work import make_unit, run_unit
from stormsim.stats.tails import (BLOCKS, block_ranges, block_sums_exact, poisson_binomial_sf,
                            tail_estimate)

from conftest import ROOT

DATA = ROOT / "tests" / "data"

#: Coverage of a nominal 95 % interval over REPS synthetic replications: the
#: binomial standard error of the observed coverage is sqrt(.95 .05 / REPS)
#: = 0.004 at REPS = 3000; +- COVERAGE_TOL (about 5 of them, plus the delta
#: method's own small-sample error) flags a broken interval, not noise.
REPS = 3000
COVERAGE_TOL = 0.025


def _synthetic_units(rng, u, p_zero, mean):
    """(u, 2) occupancy of u iid units: [time below k, time at >= k], with a
    share X that is 0 with probability p_zero, else min(Exp, 1); its mean is the
    true P(n_w >= k) since the unit's length B is independent of X."""
    B = 1000.0 * rng.uniform(0.9, 1.1, u)
    m = mean / (1.0 - p_zero)
    X = np.where(rng.random(u) < p_zero, 0.0, np.minimum(rng.exponential(m, u), 1.0))
    truth = (1.0 - p_zero) * m * (1.0 - math.exp(-1.0 / m))
    return np.stack([B - X * B, X * B], axis=1), truth


@pytest.mark.parametrize("u, p_zero, mean", [(64, 0.7, 0.1), (32, 0.0, 0.05),
                                             (200, 0.95, 0.01), (16, 0.5, 0.2)])
def test_tail_interval_covers_the_truth_95_percent_of_the_time(u, p_zero, mean):
    rng = np.random.default_rng(u)
    hit = 0
    for _ in range(REPS):
        occ, truth = _synthetic_units(rng, u, p_zero, mean)
        est = tail_estimate(occ)
        hit += est.p_ge_lo[1] <= truth <= est.p_ge_hi[1]
    assert abs(hit / REPS - 0.95) < COVERAGE_TOL


def test_no_fleet_at_k_gives_a_one_sided_bound_not_a_bare_zero():
    occ = np.array([[5.0, 1.0, 0.0]] * 40)
    est = tail_estimate(occ)
    assert est.p_ge[2] == 0.0 and est.p_ge_lo[2] == 0.0
    assert est.p_ge_hi[2] == 1.0 - 0.05 ** (1.0 / 40) and est.method[2] == "zero-bound"
    # blocks of fleets: the bound counts fleets, not blocks
    est = tail_estimate(occ[:4], fleets=40)
    assert est.p_ge_hi[2] == 1.0 - 0.05 ** (1.0 / 40)


def test_poisson_binomial_against_enumeration_and_binomial():
    p = np.array([0.1, 0.5, 0.9, 0.33, 0.02])
    pmf = np.zeros(p.size + 1)
    for bits in range(1 << p.size):          # every outcome of the 5 trials
        x = np.array([(bits >> i) & 1 for i in range(p.size)], bool)
        pmf[x.sum()] += np.prod(np.where(x, p, 1 - p))
    exact = np.cumsum(pmf[::-1])[::-1]
    # a few ulps of difference between two exact formulas of sums of products
    assert poisson_binomial_sf(p) == pytest.approx(exact, rel=1e-12, abs=1e-15)
    k = np.arange(9)
    assert poisson_binomial_sf([0.3] * 8) == pytest.approx(binom.sf(k - 1, 8, 0.3), rel=1e-12)


SUM_SWEEP = """
[sweep]
name = "blocks"
occupancy = "sum"
[fixed]
N = 4
T = 1.0
load = 0.8
jitter = 0.02
cycles = 80
fleets = 70
[grid]
cap_fraction = [inf, 0.75]
"""


def _assemble(tmp_path, sweep, cuts, name):
    store = HDF5Store(tmp_path / name)
    store.open(sweep)
    for c in sweep.cells:
        for a, b in zip(cuts[:-1], cuts[1:]):
            store.commit(run_unit(make_unit(sweep, c.index, a, b)))
    store.finish()
    store.close()
    return tmp_path / name


def test_block_sums_do_not_depend_on_how_fleets_were_cut(tmp_path):
    sweep = parse_sweep(SUM_SWEEP, "blocks.toml")
    a = _assemble(tmp_path, sweep, [0, 70], "one.h5")
    b = _assemble(tmp_path, sweep, [0, 1, 2, 13, 40, 41, 70], "cut.h5")   # cuts inside blocks
    starts, stops = block_ranges(70)
    assert starts.size == math.ceil(70 / math.ceil(70 / BLOCKS))
    with h5py.File(a) as fa, h5py.File(b) as fb:
        for i in ("000000", "000001"):
            x, y = fa[f"cells/{i}/occupancy_block_sum"], fb[f"cells/{i}/occupancy_block_sum"]
            assert x.shape == (starts.size, 5) and x[()].tobytes() == y[()].tobytes()
            assert fa[f"cells/{i}/block_fleets"][()].tolist() == (stops - starts).tolist()
    # the blocks are exact: their integer sums add to the cell's exact total
    c = sweep.cells[1]
    run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
    blocks = block_sums_exact(run.occupancy, 0, c.fleets)
    total = [sum(s[j] for _, s in blocks) for j in range(5)]
    assert total == exact_column_sums(run.occupancy)


def test_sum_mode_has_intervals_like_fleet_mode(tmp_path):
    """The same cells in both modes: the same estimate (bit for bit) and
    intervals from blocks close to the ones from fleets."""
    s_sum = parse_sweep(SUM_SWEEP, "s.toml")
    s_fleet = parse_sweep(SUM_SWEEP.replace('occupancy = "sum"', ""), "f.toml")
    rs = run_sweep(s_sum, MemoryStore(), progress="none")
    mem_f, mem_s = MemoryStore(), MemoryStore()
    run_sweep(s_sum, mem_s, progress="none")
    run_sweep(s_fleet, mem_f, progress="none")
    assert rs.status == "complete"
    a, b = mem_s.results().summary(levels=(2,)), mem_f.results().summary(levels=(2,))
    assert np.array_equal(a["p_ge_2"], b["p_ge_2"])
    assert set(a["p_ge_2_method"]) == {"ratio-logit"}
    wa = a["p_ge_2_hi"] - a["p_ge_2_lo"]
    wb = b["p_ge_2_hi"] - b["p_ge_2_lo"]
    # 23 blocks against 70 fleets: two estimates of one standard error, each
    # within ~15-30 % of it; a factor 2 apart would mean a wrong block variance
    assert np.all((wa / wb > 0.5) & (wa / wb < 2.0))


STOP_SWEEP = """
[fixed]
N = 6
T = 1.0
load = 0.9
jitter = 0.05
launch = "stagger"
passage_level = 3
cycles = 200
fleets = 8
[grid]
seed = [1, 2]
"""


def test_structural_zeros_are_nan_not_zero():
    mem = MemoryStore()
    run_sweep(parse_sweep(STOP_SWEEP, "stop.toml"), mem, progress="none")
    res = mem.results()
    c = res.cell(0)
    assert math.isnan(c.p_ge(3)) and math.isnan(c.p_ge("N"))   # stopped on reaching 3
    assert c.p_ge(2) >= 0 and not math.isnan(c.p_ge(2))        # below the level: measured
    with pytest.warns(DeprecationWarning, match="CellResult.tail is now CellResult.p_ge"):
        assert c.tail(2) == c.p_ge(2)
    s = res.summary(levels=(2, 3, "N"))
    assert np.all(np.isnan(s["p_ge_3"])) and np.all(np.isnan(s["p_ge_N"]))
    assert set(s["p_ge_3_method"]) == {"structural"}
    assert not np.any(np.isnan(s["p_ge_2"]))


@pytest.mark.parametrize("name", ["v1_fleet", "v1_sum"])
def test_version_1_files_read_and_keep_their_numbers(tmp_path, name):
    """A file written in layout 1 (stormsim 0.1.0) opens, summarises and
    converts; the current writer, run with the rules of then (the event loop:
    fast_forward = false), gives the same values for every one of its datasets."""
    old = DATA / f"{name}.h5"
    toml = DATA / ("v1_small.toml" if name == "v1_fleet" else "v1_small_sum.toml")
    with h5py.File(old) as f:
        assert f.attrs["format_version"] == 1
    res = open_results(old)
    s = res.summary(levels=(1, 2))
    assert res.n_cells == 4 and np.all(np.isfinite(s["p_ge_1"]))
    ds = res.to_xarray()
    assert ds.sizes["N"] == 2 and ds.sizes["load_L"] == 2
    new = tmp_path / "new.h5"
    then = toml.read_text().replace("[fixed]", "[fixed]\nfast_forward = false", 1)
    assert "fast_forward = false" in then
    run_sweep(stormsim.parse_sweep(then, str(toml)), new, progress="none")
    with h5py.File(old) as fo, h5py.File(new) as fn:
        names = []
        fo.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        assert len(names) > 30
        for n in names:
            a, b = fo[n], fn[n]
            if h5py.check_string_dtype(a.dtype):
                assert a.asstr()[()].tolist() == b.asstr()[()].tolist(), n
            else:
                assert a.dtype == b.dtype and a[()].tobytes() == b[()].tobytes(), n


@pytest.fixture(scope="module")
def tail_h5(tmp_path_factory):
    d = tmp_path_factory.mktemp("v2")
    sweep = parse_sweep("""
[sweep]
name = "v2 test"
[fixed]
T = 1.0
jitter = 0.02
cycles = 100
fleets = 12
[grid]
N = [4, 8]
load = [0.5, 0.9]
cap_fraction = [inf]
""", "v2.toml")
    run_sweep(sweep, d / "r.h5", progress="none")
    return d / "r.h5"


def test_every_dataset_has_a_long_name_and_numeric_ones_units(tail_h5):
    with h5py.File(tail_h5) as f:
        seen = []

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                seen.append(name)
                assert "long_name" in obj.attrs, name
                if obj.dtype.kind in "iuf" and not h5py.check_string_dtype(obj.dtype):
                    assert "units" in obj.attrs, name
        f.visititems(visit)
        assert f.attrs["format_version"] == 2
    assert len(seen) > 40


@pytest.mark.slow  # ~1 s: xarray and h5netcdf
def test_xarray_opens_the_file_with_coordinates_and_selects_by_value(tail_h5):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    with xr.open_dataset(tail_h5, engine="h5netcdf") as ds:
        assert ds.sizes["cell"] == 4 and ds["k"].values.tolist() == list(range(1, 9))
        assert "load" in ds.coords and ds["p_ge"].attrs["units"] == "1"
        # padded by level: the N = 4 cells have no P(n_w >= 5..8)
        n4 = ds.where(ds.N == 4, drop=True)
        assert np.all(np.isnan(n4.p_ge.sel(k=slice(5, 8)).values))
        table = ds.load()
    with xr.open_dataset(tail_h5, engine="h5netcdf", group="grid") as g:
        one = g.sel(load=0.9, N=8, cap_fraction=np.inf)
        i = int(one.cell)
        assert float(one.p_ge.sel(k=2)) == float(table.p_ge.isel(cell=i).sel(k=2))
        assert float(one.p_ge_lo.sel(k=2)) < float(one.p_ge.sel(k=2)) < float(one.p_ge_hi.sel(k=2))
    res = open_results(tail_h5)
    with xr.open_dataset(tail_h5, engine="h5netcdf", group=f"cells/{i:06d}") as c:
        assert c["occupancy"].dims == ("fleet", "n_w") and c["fleet"].size == 12
        assert c["passage_time"].attrs["units"] == "s"
        assert np.array_equal(c["occupancy_sum"].values, res.cell(i).occupancy_sum)
    # the API's view equals the file's (the same writer computed both)
    api = res.to_xarray()
    with xr.open_dataset(tail_h5, engine="h5netcdf", group="grid") as g:
        # the same numbers; the API's median is median_cycles (XARRAY_NAMES)
        for v in ("p_ge", "p_ge_lo", "p_ge_hi", "median", "p_write", "cell"):
            assert np.array_equal(api[XARRAY_NAMES.get(v, v)].values, g[v].values,
                                  equal_nan=True), v
    flat = res.to_xarray(grid=False)
    assert np.array_equal(flat.p_ge.values, table.p_ge.values, equal_nan=True)


def test_dataframe_columns_a_person_can_type(tail_h5):
    pytest.importorskip("pandas")
    res = open_results(tail_h5)
    df = res.to_dataframe(levels=[2, 8])
    for col in ("N", "load", "median", "median_lo", "median_hi", "p_ge_2", "p_ge_2_lo",
                "p_ge_2_hi", "p_ge_2_method", "p_ge_2_independent", "p_ge_8"):
        assert col in df.columns
    s = res.summary(levels=(2,))
    assert np.array_equal(df["p_ge_2"].to_numpy(), s["p_ge_2"])
    assert np.array_equal(df["p_ge_2_lo"].to_numpy(), s["p_ge_2_lo"])
    assert df.loc[df.N == 4, "p_ge_8"].isna().all()              # k > N: NaN, not clipped
    assert df.loc[df.N == 4, "p_ge_8_method"].eq("no such level").all()
    # identical jobs: the independent baseline is the binomial
    assert (df["independent_law"] == "binomial").all()


def test_the_summary_keys_are_the_export_columns(tail_h5, capsys):
    """Results.summary, to_dataframe and the CSV of stormsim inspect name each
    per-level number alike: every CSV column is a summary key or a parameter."""
    res = open_results(tail_h5)
    s = res.summary(levels=(2, "N/2"))
    assert main(["inspect", str(tail_h5), "--format", "csv", "--levels", "2,N/2",
                 "--storms"]) == 0
    columns = capsys.readouterr().out.splitlines()[0].split(",")
    assert set(columns) - {"cell"} <= set(s) | set(res.params)
    assert {"p_ge_N_2_bound", "p_ge_2_law", "storms_per_s_ge_2_law"} <= set(s)


def test_the_summary_names_of_0_2_0_still_read_with_a_warning(tail_h5):
    res = open_results(tail_h5)
    s = res.summary(levels=(2, "N/2"))
    for old, new in (("P(n_w>=2)", "p_ge_2"), ("P(n_w>=N/2):lo", "p_ge_N_2_lo"),
                     ("k:N/2", "k_N_2"), ("storms_per_s(n_w>=2):hi", "storms_per_s_ge_2_hi"),
                     ("storms(n_w>=N/2):method", "storms_ge_N_2_method")):
        with pytest.warns(DeprecationWarning, match=f"is now \\[{new!r}\\]"):
            assert np.array_equal(s[old], s[new])
    with pytest.raises(KeyError):
        s["P(n_w>=3)"]                                 # a level not asked: no such key
    with pytest.warns(DeprecationWarning, match=r"Results.summary\(tail=...\) is now"):
        old = res.summary(tail=(2,))
    assert np.array_equal(old["p_ge_2"], s["p_ge_2"])
    with pytest.warns(DeprecationWarning, match=r"Results.table\(tail=...\)"):
        assert res.table(tail=(2,)) == res.table(levels=(2,))


def test_inspect_csv_and_json(tail_h5, capsys):
    pd = pytest.importorskip("pandas")
    assert main(["inspect", str(tail_h5), "--format", "csv", "--levels", "2,N/2"]) == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 4 and {"p_ge_2", "p_ge_2_lo", "p_ge_2_hi", "p_ge_N_2", "k_N_2",
                               "median"} <= set(rows[0])
    df = pd.read_csv(io.StringIO(text))
    s = open_results(tail_h5).summary(levels=(2, "N/2"))
    assert np.array_equal(df["p_ge_2"].to_numpy(), s["p_ge_2"])   # repr round-trips
    assert df["k_N_2"].tolist() == s["k_N_2"].tolist()
    assert main(["inspect", str(tail_h5), "--format", "json", "--levels", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cells"][0]["p_ge_2_lo"] < doc["cells"][0]["p_ge_2"] < doc["cells"][0]["p_ge_2_hi"]
    assert doc["cells"][0]["median"] is None                     # no passage level: null
    assert "ratio-logit" in doc["methods"]
    # a level above some cells' N: empty there, and said so
    assert main(["inspect", str(tail_h5), "--format", "csv", "--levels", "8"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for r in rows:
        assert (r["p_ge_8_method"] == "no such level") == (r["N"] == "4"), r
        assert (r["p_ge_8"] == "") == (r["N"] == "4")


def test_every_tail_in_the_inspect_table_has_an_interval_or_a_bound(tail_h5, capsys):
    assert main(["inspect", str(tail_h5), "--levels", "2,N/2,N"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(out) if line.lstrip().startswith("cell"))
    for line in out[head + 1:head + 5]:
        shown = line.count("[") + line.count("(none reached k)")
        assert shown == 3, line


@pytest.mark.slow  # a subprocess
def test_data_extras_are_imported_lazily():
    import subprocess
    import sys

    code = ("import sys, stormsim; r = stormsim.open_results; "
            "print(any(m in sys.modules for m in ('pandas', 'xarray', 'h5netcdf')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def _cell(T, occ_sum, **extra):
    from types import SimpleNamespace

    n = len(T)
    return SimpleNamespace(params={"passage_level": 0, "stop_at_passage": False, "cycles": 10},
                           T=np.asarray(T, float), d=np.full(n, 0.1), jitter=np.zeros(n),
                           passage_cycle=np.full(3, -1), passage_time=np.full(3, np.inf),
                           end_time=np.full(3, 10.0), occupancy=None, occupancy_blocks=None,
                           occupancy_sum=np.asarray(occ_sum, float), fleets_done=3, **extra)


def test_independent_baseline_is_poisson_binomial_for_unlike_jobs():
    from stormsim.stats.summary import cell_summary

    occ = [10.0, 6.0, 3.0, 1.0]
    # identical jobs: the binomial with the measured mean fraction
    same = cell_summary(_cell([1.0, 1.0, 1.0], occ))
    pw = (6 + 2 * 3 + 3 * 1) / (3 * 20)
    assert same["independent_law"] == "binomial"
    assert same["p_ge_independent"] == pytest.approx(binom.sf(np.arange(4) - 1, 3, pw),
                                                     rel=1e-12)
    # unlike jobs without per-job fractions: no baseline, not Binomial(N, mean p)
    unlike = cell_summary(_cell([1.0, 1.5, 2.0], occ))
    assert unlike["independent_law"] == "none"
    assert np.all(np.isnan(unlike["p_ge_independent"]))
    # with each job's writing time recorded: the Poisson-binomial of its fractions
    wt = np.array([[2.0, 3.0, 0.5], [1.0, 1.5, 0.25], [2.0, 1.5, 0.25]])   # (fleets, N)
    pb = cell_summary(_cell([1.0, 1.5, 2.0], occ, writing_time=wt))
    assert pb["independent_law"] == "poisson-binomial"
    assert pb["p_ge_independent"] == pytest.approx(
        poisson_binomial_sf(wt.sum(axis=0) / 20.0), rel=1e-12)


LISTS = """
[fixed]
N = 2
load = 0.5
cycles = 50
fleets = 4
[grid]
T = [[1.0, 1.2], 1.5]
throughput = ["fair", "power:0.5"]
"""


def test_grid_of_per_job_lists_and_strings_selects_by_label(tmp_path):
    """A grid value that is not a number (a per-job list, a throughput rule) is
    a coordinate label: the value as given (JSON), or the stored string."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    path = tmp_path / "lists.h5"
    run_sweep(parse_sweep(LISTS, "lists.toml"), path, progress="none")
    with xr.open_dataset(path, engine="h5netcdf", group="grid") as g:
        assert g["T"].values.tolist() == ["[1.0, 1.2]", "1.5"]
        assert g["throughput"].values.tolist() == ["fair", "power:0.5"]
        cell = int(g.cell.sel(T="[1.0, 1.2]", throughput="power:0.5"))
        # unlike jobs (T differs): no independent baseline, said so
        assert str(g.independent_law.sel(T="[1.0, 1.2]", throughput="fair").values) == "none"
    assert cell == 1
    ds = open_results(path).to_xarray()
    assert int(ds.cell.sel(T="1.5", throughput="fair")) == 2


def test_the_jitter_is_stored_as_jitter_and_read_from_either_name(tail_h5, tmp_path):
    """A cell's per-job jitter is the dataset ``jitter`` (the one name), with
    ``sigma``, its name in 0.2.0, a hard link to it; a file with only ``sigma``
    (0.2.0) reads the same, and CellResult.sigma warns."""
    with h5py.File(tail_h5, "r") as f:
        g = f["cells/000000"]
        assert g["jitter"] == g["sigma"]                # one dataset under two names
    cell = open_results(tail_h5).cell(0)
    old = tmp_path / "old.h5"
    old.write_bytes(tail_h5.read_bytes())
    with h5py.File(old, "r+") as f:
        for name in f["cells"]:
            del f[f"cells/{name}/jitter"]
    assert np.array_equal(open_results(old).cell(0).jitter, cell.jitter)
    with pytest.warns(DeprecationWarning, match="CellResult.sigma is now CellResult.jitter"):
        assert np.array_equal(cell.sigma, cell.jitter)

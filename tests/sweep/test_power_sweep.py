"""Power in sweeps (MODEL.md E6): the keys busy_power, idle_power, ramp_windows
and ramp_thresholds, what a cell with power stores, and every view of it
(summary, xarray, pandas, inspect's CSV, the report)."""
from __future__ import annotations

import csv
import io
import math

import h5py
import numpy as np
import pytest

import stormsim
from stormsim.driver import run_sweep
from stormsim.errors import SpecError, SweepError
from stormsim.stats.power import mean_power, ramp_estimate
from stormsim.stats.summary import POWER_KEYS, RAMP_ARRAYS, ramp_column
from stormsim.store.cellresult import cell_from_parts
from stormsim.store.results import open_results
from stormsim.sweep.executors import LocalExecutor
from stormsim.sweep.spec import parse_sweep
from stormsim.sweep.work import POWER_ARRAYS, Part, make_piece

from h5compare import datasets

FIXED = """
[sweep]
name = "power"
[fixed]
N = 6
T = 1800.0
d = 30.0
jitter = 18.0
fleets = 12
cycles = 80
burn_in = 5
seed = 3
"""
#: The README's jobs at 1024 GPUs each, 700 W and 100 W a GPU.
POWER = 'busy_power = "716.8 kW"\nidle_power = "102.4 kW"\n'
GRID_OK = (FIXED + POWER + 'ramp_windows = [1, "1 min"]\n'
           'ramp_thresholds = ["614.4 kW", "1.2288 MW"]\n[grid]\ncap_fraction = [0.75, 1.0]\n')
#: The mean draw of 12 fleets x 80 cycles against the exact long-run law: their
#: spread is ~0.1 % (the interval's half-width), a burn-in of 5 cycles leaves a
#: little of the random launch; 1 % holds it with room and still sees a wrong
#: draw (a job's drop, 614.4 kW of ~3.7 MW, is 17 %).
MEAN_REL_TOL = 0.01
#: The kernel sums the draws of the computing jobs: rounding at the last bits of
#: ~3.4 MW, far below a watt.
ROUND_RTOL = 1e-12
PLAIN = FIXED + "[grid]\ncap_fraction = [0.75, 1.0]\n"


def _cells_datasets(path) -> dict:
    """Each cell group's datasets, by cell index -> {name: (dtype, shape, bytes)}."""
    out = {}
    for name, v in datasets(path).items():
        if name.startswith("cells/") and not name.endswith("@"):
            cell, _, rest = name[len("cells/"):].partition("/")
            out.setdefault(int(cell), {})[rest] = v
    return out


# -- keys ---------------------------------------------------------------------------

def test_power_keys_move_no_seed_and_at_their_defaults_no_identity():
    plain = parse_sweep(FIXED)
    off = parse_sweep(FIXED + 'busy_power = "none"\nidle_power = "none"\nramp_windows = [1, 60]\n')
    on = parse_sweep(FIXED + POWER)
    assert off.hash == plain.hash and not off.cells[0].fleet.has_power
    assert on.cells[0].run_seed == plain.cells[0].run_seed          # observed only
    assert on.hash != plain.hash                                    # a resume must not mix them
    other = parse_sweep(FIXED + POWER + 'ramp_thresholds = "1 MW"\n')
    assert other.cells[0].run_seed == plain.cells[0].run_seed and other.hash != on.hash
    c = on.cells[0]
    assert np.all(c.fleet.busy_power == 716800.0) and np.all(c.fleet.idle_power == 102400.0)
    # the defaults: windows 1 s and 60 s, one job's drop as the threshold
    assert c.ramps == ((1.0, 60.0), (614400.0,))
    assert c.simulate_kwargs()["ramps"] == c.ramps
    assert "ramps" not in plain.cells[0].simulate_kwargs()
    cols = on.columns()
    assert cols["busy_power"].tolist() == [716800.0] and math.isnan(plain.columns()["busy_power"][0])


def test_per_job_powers_and_units():
    sw = parse_sweep(FIXED + "busy_power = [700, 800, 700, 800, 700, 800]\nidle_power = 100\n"
                     'ramp_windows = "2 min"\n')
    c = sw.cells[0]
    assert c.fleet.busy_power.tolist() == [700.0, 800.0] * 3
    assert c.fleet.idle_power.tolist() == [100.0] * 6
    assert c.ramps == ((120.0,), (700.0,))                          # the largest job's drop
    assert math.isnan(c.values["busy_power"]) and c.values["idle_power"] == 100.0


@pytest.mark.parametrize("line, words", [
    ("busy_power = -5.0\nidle_power = 0", "busy_power = -5.0: every value must be a finite power"),
    ('busy_power = "3 GB"\nidle_power = 0', 'busy_power = "3 GB": "3 GB" is not a power'),
    ("busy_power = 100\nidle_power = 200", "idle_power[0] = 200.0 W > busy_power[0] = 100.0 W"),
    ("busy_power = 100", "idle_power is missing with busy_power given"),
    ("busy_power = [1, 2]\nidle_power = 0", "busy_power = [1.0, 2.0] has 2 values but N = 6"),
    (POWER + "ramp_windows = 0", "ramp_windows = 0: every value must be finite and > 0"),
    (POWER + "ramp_windows = [1, -60]", "ramp_windows = [1, -60]: every value must be finite"),
    (POWER + "ramp_windows = []", "ramp_windows = []: an empty list"),
    (POWER + "ramp_thresholds = 0", "ramp_thresholds = 0: every threshold must be > 0 W"),
    (POWER + "ramp_thresholds = [1, 1]", "ramp_thresholds = [1, 1]: lists a threshold twice"),
    ("busy_power = 100\nidle_power = 100", "ramp_thresholds: the default, one job's drop"),
    ('busy_power = [7, 8, 7, 8, 7, 8]\nidle_power = 1\nlaunch = "stagger"',
     "busy_power, idle_power: launch = 'stagger' places identical jobs"),
])
def test_a_bad_power_key_is_an_error_naming_it_first(line, words):
    """Refused when the file is read, as a SpecError (SweepError) whose message,
    after the file and the table or cell, starts with the key's name."""
    with pytest.raises(SpecError) as exc:
        parse_sweep(FIXED + line + "\n")
    assert isinstance(exc.value, SweepError)
    assert words in str(exc.value)
    tail = str(exc.value).split(": ", 1)[1]                       # after "<sweep>: "
    tail = tail.split(": ", 1)[1] if tail.startswith("cell ") else tail.removeprefix("[fixed] ")
    assert tail.startswith(words.split(" ")[0].rstrip(":,")), tail


def test_power_with_failures_and_in_the_general_kernel_is_the_runs():
    """Cells whose fleets fail (MODEL.md E8) or run the general kernel (async, a
    writer cap) keep the Run's power arrays too, beside their other ones."""
    sw = parse_sweep(FIXED + POWER + 'mtbf = "3 h"\n[grid]\nmax_writers = ["none", 2]\n'
                     'checkpoint = ["blocking", "async"]\n')
    for c in sw.cells:
        run = stormsim.simulate(c.fleet, fleets=4, **c.simulate_kwargs())
        part = Part.from_run(make_piece(sw, c.index, 0, 4), run, sweep_hash=sw.hash,
                             keep_per_fleet=True)
        for name in POWER_ARRAYS:
            assert part.arrays[name].tobytes() == np.asarray(getattr(run, name)).tobytes()
        assert part.arrays["committed_work"] is not None


def test_job_tables_give_power_as_columns_or_take_the_keys(tmp_path):
    (tmp_path / "with.csv").write_text("compute_interval [min],size [GB],jitter [s],gpus,"
                                       "gpu_power [W],gpu_idle_power [W]\n"
                                       "30,840,18,1024,700,100\n30,840,18,512,700,100\n")
    (tmp_path / "without.csv").write_text("compute_interval [min],size [GB],jitter [s]\n"
                                          "30,840,18\n30,840,18\n")
    base = '[fixed]\nbandwidth = "40 GB/s"\nfleets = 2\ncycles = 10\n'
    src = str(tmp_path / "s.toml")
    c = parse_sweep(base + 'jobs = "with.csv"\nmax_writers = 2\n', src).cells[0]
    assert c.fleet.busy_power.tolist() == [716800.0, 358400.0]
    assert c.ramps == ((1.0, 60.0), (614400.0,))
    plain = parse_sweep(base + 'jobs = "without.csv"\n', src).cells[0]
    f = parse_sweep(base + 'jobs = "without.csv"\n' + POWER, src).cells[0]
    assert f.fleet.busy_power.tolist() == [716800.0] * 2 and f.run_seed == plain.run_seed
    with pytest.raises(SweepError, match="gives the jobs' power"):
        parse_sweep(base + 'jobs = "with.csv"\n' + POWER, src)


# -- storage and bits ---------------------------------------------------------------

def test_a_cells_power_arrays_do_not_depend_on_batches_threads_or_pieces():
    sw = parse_sweep(GRID_OK)
    kw = dict(make_piece(sw, 1, 0, 12).kwargs)

    def part(a, b, **extra):
        p = make_piece(sw, 1, a, b)
        run = stormsim.simulate(p.fleet, fleets=b - a, fleet_start=a, **kw, **extra)
        return Part.from_run(p, run, sweep_hash=sw.hash, keep_per_fleet=True)

    whole = part(0, 12, batch_size=12, threads=1)
    other = part(0, 12, batch_size=5, threads=2)
    left, right = part(0, 7, batch_size=3), part(7, 12, batch_size=2)
    for name in POWER_ARRAYS + ("window",):
        assert other.arrays[name].tobytes() == whole.arrays[name].tobytes(), name
        joined = np.concatenate([left.arrays[name], right.arrays[name]])
        assert joined.tobytes() == whole.arrays[name].tobytes(), name
    assert whole.arrays["ramp_events"].shape == (12, 2, 2)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """GRID_OK run into an HDF5 file, and PLAIN (the same sweep without power)."""
    d = tmp_path_factory.mktemp("power")
    out = d / "power.h5"
    assert run_sweep(parse_sweep(GRID_OK, "power.toml"), out, progress="none").status == "complete"
    plain = d / "plain.h5"
    assert run_sweep(parse_sweep(PLAIN, "plain.toml"), plain,
                     progress="none").status == "complete"
    return out, plain


def test_a_sweep_with_power_equals_simulate_with_its_ramps_cell_by_cell(swept):
    """Every stored array of a cell with power is simulate()'s, bit for bit."""
    out, _ = swept
    sw = parse_sweep(GRID_OK)
    with h5py.File(out, "r") as f:
        for c in sw.cells:
            g = f["cells"][f"{c.index:06d}"]
            run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
            for name in POWER_ARRAYS + ("window", "occupancy", "events", "end_time"):
                want = np.asarray(getattr(run, name))
                assert g[name][()].tobytes() == want.tobytes(), (c.index, name)
            assert g["ramp_window"][()].tolist() == [1.0, 60.0]
            assert g["ramp_threshold"][()].tolist() == [614400.0, 1228800.0]
            assert g["busy_power"][()].tolist() == [716800.0] * 6


def test_cells_without_power_are_the_cells_of_a_sweep_without_power_keys(swept):
    """Power moves nothing: every dataset a cell without power has is there, bit
    for bit, in the cell with power, which only adds its power datasets."""
    out, plain = swept
    cells, bare = _cells_datasets(out), _cells_datasets(plain)
    added = set(POWER_ARRAYS) | {"window", "busy_power", "idle_power", "ramp_window",
                                 "ramp_threshold"}
    for i in (0, 1):
        assert set(cells[i]) - set(bare[i]) == added
        assert {k: cells[i][k] for k in bare[i]} == bare[i]
        assert not added & set(bare[i])


def test_the_summary_is_the_estimators_on_the_cells_run(swept):
    """The summary's power and ramps are stats.power's mean_power and
    ramp_estimate on the cell's own Run, bit for bit."""
    out, _ = swept
    sw = parse_sweep(GRID_OK)
    res = open_results(out)
    s = res.summary(levels=())
    for c in sw.cells:
        run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
        m = mean_power(run.window, run.power_mean)
        assert (s["power_mean"][c.index], s["power_mean_lo"][c.index],
                s["power_mean_hi"][c.index]) == (m.value, m.lo, m.hi)
        assert s["power_max"][c.index] == run.power_max.max()
        e = ramp_estimate(run)
        for a, window in enumerate(e.windows):
            for b, threshold in enumerate(e.thresholds):
                for name in RAMP_ARRAYS:
                    got = s[ramp_column(name, window, threshold)][c.index]
                    want = e.method[a, b] if name == "ramp_method" else getattr(e, name)[a, b]
                    assert got == want, (c.index, name, window, threshold)
        part = Part.from_run(make_piece(sw, c.index, 0, c.fleets), run, sweep_hash=sw.hash,
                             keep_per_fleet=True)
        again = cell_from_parts(c, [part], keep_per_fleet=True).summary()["ramps"]
        assert again.ramp_share.tobytes() == e.ramp_share.tobytes()


def test_the_summary_has_mean_power_and_ramps_with_intervals(swept):
    out, plain = swept
    res = open_results(out)
    s = res.summary(levels=())
    fleet = parse_sweep(GRID_OK).cells[1].fleet
    # cap = N: the exact long-run mean (stats.power.power_law), to MEAN_REL_TOL
    law = stormsim.power_law(fleet, fleet.busy_power, fleet.idle_power).mean
    assert abs(s["power_mean"][1] / law - 1) < MEAN_REL_TOL
    assert s["power_mean_lo"][1] < s["power_mean"][1] < s["power_mean_hi"][1]
    assert s["power_min"][1] < s["power_mean"][1] < s["power_max"][1]
    # the cap 0.75 N keeps at most 4.5 of 6 jobs' worth computing: a lower mean
    assert s["power_max"][0] <= (6 * 102400.0 + 4.5 * 614400.0) * (1 + ROUND_RTOL)
    assert s["power_mean"][0] < s["power_mean"][1]
    ev = s[ramp_column("ramp_events_per_day", 60.0, 614400.0)]
    assert ev[1] > 0 and s[ramp_column("ramp_events_per_day_hi", 60.0, 614400.0)][1] > ev[1]
    assert math.isnan(open_results(plain).summary(levels=())["power_mean"][0])
    with h5py.File(out, "r") as f:            # the file's own table says the same
        assert f["power_mean"][()].tobytes() == s["power_mean"].tobytes()
        assert f["ramp_events_per_day"].shape == (2, 2, 2)
        assert f["ramp_events_per_day"][1, 1, 0] == ev[1]
        assert f["grid"]["ramp_share"].shape == (2, 2, 2)
        assert "ramp_window" not in h5py.File(plain, "r")


def test_xarray_and_pandas_have_power_and_ramps(swept):
    pytest.importorskip("xarray")
    pytest.importorskip("pandas")
    out, _ = swept
    res = open_results(out)
    s = res.summary(levels=())
    ds = res.to_xarray()
    assert ds["ramp_events_per_day"].dims == ("cap_fraction", "ramp_window", "ramp_threshold")
    got = ds["ramp_events_per_day"].sel(cap_fraction=1.0, ramp_window=60.0,
                                        ramp_threshold=614400.0).item()
    assert got == s[ramp_column("ramp_events_per_day", 60.0, 614400.0)][1]
    assert ds["power_mean"].attrs["units"] == "W"
    df = res.to_dataframe(levels=[2])
    for name in POWER_KEYS:
        assert name in df.columns
    assert df[ramp_column("ramp_share_hi", 1.0, 1228800.0)].iloc[1] == \
        s[ramp_column("ramp_share_hi", 1.0, 1228800.0)][1]


def test_inspect_csv_and_text_and_the_report_show_power(swept, tmp_path, capsys):
    from stormsim.cli import main

    out, plain = swept
    assert main(["inspect", str(out), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert float(rows[1]["power_mean_lo"]) < float(rows[1]["power_mean"])
    assert rows[1][ramp_column("ramp_method", 60.0, 614400.0)] in ("ratio-log", "garwood")
    assert main(["inspect", str(out)]) == 0
    assert "Power and ramps, per cell with power" in capsys.readouterr().out
    assert main(["inspect", str(plain), "--format", "csv"]) == 0
    assert "power_mean" not in capsys.readouterr().out.splitlines()[0]   # no power: no columns
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "ramp_events_vs_cap_fraction.png").is_file()
    assert "## Power" in (tmp_path / "rep" / "report.md").read_text()


def test_a_resumed_sweep_with_power_gives_the_same_bits(swept, tmp_path):
    """Interrupted after its first unit (units of a few fleets), then resumed:
    the file is the one run in one go."""
    from test_sweep import InterruptAfterFirst

    out, _ = swept
    sw = parse_sweep(GRID_OK, "power.toml")
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


def test_a_file_without_power_arrays_reads_as_cells_without_power(swept, tmp_path):
    """A file written before E6 in sweeps (no power datasets, no power columns)
    reads: power NaN, no ramp columns."""
    import shutil

    _, plain = swept
    old = tmp_path / "old.h5"
    shutil.copy(plain, old)
    with h5py.File(old, "a") as f:
        for name in POWER_KEYS + ("busy_power", "idle_power"):
            for g in (f, f["params"], f["grid"]):
                if name in g:
                    del g[name]
    res = open_results(old)
    c = res.cell(0)
    assert not c.has_power and c.power_mean is None and c.busy_power is None
    s = res.summary(levels=())
    assert math.isnan(s["power_mean"][0])
    assert not [k for k in s if k.startswith("ramp_")]


def test_the_power_example_loads_with_power_in_every_cell():
    """examples/power.toml: the README's fleet at 1024 GPUs a job, power in
    every cell, the seeds of the same file without its power keys."""
    from conftest import ROOT

    text = (ROOT / "examples" / "power.toml").read_text()
    sw = parse_sweep(text, "power.toml")
    bare = parse_sweep("\n".join(line for line in text.splitlines()
                                 if not line.startswith(("busy_power", "idle_power", "ramp_"))))
    assert sw.n_cells == 6 and all(c.fleet.has_power for c in sw.cells)
    assert [c.run_seed for c in sw.cells] == [c.run_seed for c in bare.cells]
    assert sw.cells[0].ramps == ((1.0, 60.0), (614400.0, 1228800.0, 2457600.0))


def test_a_grid_over_ramp_windows_shows_in_inspect_and_the_report(tmp_path, capsys):
    """ramp_windows has no parameter column (a list per cell): the views show
    the grid's value as the file gives it, and the table has every cell's D."""
    from stormsim.cli import main

    out = tmp_path / "windows.h5"
    text = (FIXED.replace("fleets = 12", "fleets = 4") + POWER
            + '[grid]\nramp_windows = [[1, 60], "10 s"]\n')
    assert run_sweep(parse_sweep(text, "w.toml"), out, progress="none").status == "complete"
    assert main(["inspect", str(out), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["ramp_windows"] for r in rows] == ["[1, 60]", '"10 s"']
    assert rows[0][ramp_column("ramp_method", 10.0, 614400.0)] == ""      # not its window
    assert rows[1][ramp_column("ramp_method", 10.0, 614400.0)] != ""
    assert main(["inspect", str(out)]) == 0 and "Power and ramps" in capsys.readouterr().out
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    with h5py.File(out, "r") as f:
        assert f["ramp_window"][()].tolist() == [1.0, 10.0, 60.0]


def test_a_resume_with_other_power_keys_is_refused(swept, tmp_path):
    """The power keys move no seed but are in the sweep's identity where power is
    on: a result of other thresholds (or none) is another sweep's."""
    import shutil

    out, _ = swept
    copy = tmp_path / "power.h5"
    shutil.copy(out, copy)
    other = parse_sweep(GRID_OK.replace('"1.2288 MW"', '"2 MW"'), "other.toml")
    assert [c.run_seed for c in other.cells] == [c.run_seed for c in parse_sweep(GRID_OK).cells]
    with pytest.raises(SweepError, match="holds the results of a different sweep"):
        run_sweep(other, copy, progress="none")
    with pytest.raises(SweepError, match="holds the results of a different sweep"):
        run_sweep(parse_sweep(PLAIN, "plain.toml"), copy, progress="none")


def test_the_file_opens_in_xarray_with_the_ramp_dimensions(swept):
    """The file's table, /grid and a cell group open with h5netcdf, the ramp
    arrays on their named dimensions."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    out, _ = swept
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert ds["ramp_share"].dims == ("cell", "ramp_window", "ramp_threshold")
        assert ds["ramp_threshold"].values.tolist() == [614400.0, 1228800.0]
    with xr.open_dataset(out, engine="h5netcdf", group="grid") as g:
        got = g["ramp_events_per_day"].sel(cap_fraction=1.0, ramp_window=60.0).values
        want = open_results(out).to_xarray()["ramp_events_per_day"].sel(
            cap_fraction=1.0, ramp_window=60.0).values
        assert got.tobytes() == want.tobytes()
    with xr.open_dataset(out, engine="h5netcdf", group="cells/000001") as c:
        assert c["ramp_events"].dims == ("fleet", "ramp_window", "ramp_threshold")
        assert c["power_p99"].attrs["units"] == "W"


def test_a_cell_without_power_writes_the_attributes_of_before(swept, tmp_path):
    """Its ``params`` attribute has none of the power keys and its datasets their
    long names of before (window: a cell with failures'), so that its group is
    the one written before power was a key; a cell with power says E6."""
    import json

    out, plain = swept
    fail = tmp_path / "fail.h5"
    text = FIXED.replace("fleets = 12", "fleets = 2") + 'mtbf = "3 h"\n'
    assert run_sweep(parse_sweep(text, "f.toml"), fail, progress="none").status == "complete"
    with h5py.File(plain, "r") as f, h5py.File(fail, "r") as g, h5py.File(out, "r") as p:
        for cell in (f["cells/000000"], g["cells/000000"]):
            params = json.loads(cell.attrs["params"])
            assert not {"busy_power", "idle_power", "ramp_windows", "ramp_thresholds"} & set(params)
        assert g["cells/000000/window"].attrs["long_name"] == (
            "length of the measured window (MODEL.md E8; cells with failures)")
        assert "E6" in p["cells/000000/window"].attrs["long_name"]
        assert json.loads(p["cells/000000"].attrs["params"])["busy_power"] == 716800.0

"""Storm risk with a fixed effort, and as a sweep cell option.

The sweep cases are small (N = 8..12, a few hundred cycles, 2-4 splitting
replicates): they check that numbers flow and stay put, not the estimator's
accuracy (tests/risk/test_splitting.py does that).
"""
import io

import numpy as np
import pytest

import stormsim
from stormsim.errors import SpecError

#: The StormRisk arrays a fixed effort must reproduce bit for bit.
RISK_FIELDS = ("p_ge", "p_ge_lo", "p_ge_hi", "p_ge_rel_error", "storms_per_s", "storms_per_s_lo",
               "storms_per_s_hi", "storms_per_s_rel_error", "storm_duration", "storm_duration_lo",
               "storm_duration_hi", "hits")


def _cell(n=10):
    """L = 0.6, sigma = 0.01 T but the last job without jitter: no exact law
    covers it, so "auto" runs its simulation chain (plain, then splitting)."""
    return stormsim.Fleet(T=[1.0] * n, d=[0.6 / n] * n, jitter=[0.01] * (n - 1) + [0.0])


#: A small fixed effort: 32 plain fleets, 3 splitting replicates of 40 clones.
SPLIT = stormsim.SplitSettings(replicates=3, flux_cycles=300, trials=40)
FIXED = dict(max_seconds=None, max_fleets=32, cycles=150, burn_in=20, seed=5, split=SPLIT)


def test_fixed_effort_is_a_function_of_seed_and_effort_not_threads():
    a = stormsim.storm_risk(_cell(), [2, 8], **FIXED)
    b = stormsim.storm_risk(_cell(), [2, 8], threads=1, **FIXED)
    assert a.fleets == 32 and a.batches == 2
    assert list(a.level_method) == ["plain", "splitting"]      # k = 8 of 10: not resolved
    assert a.split.replicates == 3 and a.stopped == "replicates"
    for name in RISK_FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert list(a.p_ge_method) == list(b.p_ge_method) and list(a.storms_method) == list(b.storms_method)


def test_fixed_effort_plain_stops_at_max_fleets_or_rel_error():
    kw = {**FIXED, "split": None}
    r = stormsim.storm_risk(_cell(), [2], method="plain", **kw)
    assert r.stopped in ("rel_error", "max_fleets") and r.split is None
    loose = stormsim.storm_risk(_cell(), [2], method="plain", rel_error=0.5, **kw)
    assert loose.stopped == "rel_error" and loose.fleets == 32      # MIN_BATCHES batches


def test_fixed_effort_errors_name_the_parameter():
    with pytest.raises(SpecError, match="max_seconds = None .* needs max_fleets"):
        stormsim.storm_risk(_cell(), [2], max_seconds=None)
    with pytest.raises(SpecError, match="replicates = 4 is the splitting effort"):
        stormsim.storm_risk(_cell(), [2], max_seconds=5,
                            split=stormsim.SplitSettings(replicates=4))
    with pytest.raises(SpecError, match="replicates = 0"):
        stormsim.SplitSettings(replicates=0)
    with pytest.raises(SpecError, match=r"replicates = 2: must be >= 3 \(the interval"):
        stormsim.storm_risk(_cell(), [2], max_seconds=None, max_fleets=16,
                            split=stormsim.SplitSettings(replicates=2))


# ---------------------------------------------------------------------------
# The sweep cell option (risk_levels, risk_fleets, ...)
# ---------------------------------------------------------------------------

#: Two cells, N = 6 and 10: at N = 10, k = N is beyond 32 fleets of 150
#: cycles, so "auto" splits it (3 replicates); the rest stays plain. A
#: synchronized launch (a restart: a transient, which no exact law answers)
#: keeps "auto" on its simulation chain.
RISK_SWEEP = """
[sweep]
name = "risk cells"
[fixed]
T = 1.0
load = 0.6
jitter = 0.01
launch = "sync"
cycles = 150
burn_in = 20
fleets = 8
seed = 3
risk_levels = [2, "N"]
risk_fleets = 32
risk_replicates = 3
risk_trials = 40
risk_flux_cycles = 300
[grid]
N = [6, 10]
"""


def _sweep(text=RISK_SWEEP, source="risk.toml"):
    from stormsim.sweep.spec import parse_sweep

    return parse_sweep(text, source)


@pytest.fixture(scope="module")
def risk_result(tmp_path_factory):
    from stormsim.driver import run_sweep

    out = tmp_path_factory.mktemp("risk") / "risk.h5"
    assert run_sweep(_sweep(), out, progress="none").status == "complete"
    return out


def test_a_sweep_cell_s_risk_is_a_direct_storm_risk_call_bit_for_bit(risk_result):
    """The documented call, spelled out (not through Cell.risk_kwargs)."""
    res = stormsim.open_results(risk_result)
    sw = _sweep()
    methods = []
    for c, cell in zip(res, sw.cells):
        n = cell.n_jobs
        direct = stormsim.storm_risk(cell.fleet, [2, n], max_seconds=None, max_fleets=32,
                                     split=SPLIT, seed=cell.run_seed, cycles=150, burn_in=20,
                                     launch="sync")
        r = c.risk
        assert list(r["levels"]) == [2, n]
        for name in RISK_FIELDS:
            assert np.array_equal(r[f"risk_{name}"], getattr(direct, name), equal_nan=True), \
                (c.index, name)
        assert list(r["risk_p_ge_method"]) == list(direct.p_ge_method)
        assert list(r["risk_storms_method"]) == list(direct.storms_method)
        assert list(r["risk_level_method"]) == list(direct.level_method)
        assert int(r["risk_fleets_run"]) == direct.fleets == 32
        assert int(r["risk_replicates_run"]) == (direct.split.replicates if direct.split else 0)
        assert int(r["risk_seed"]) == cell.run_seed
        methods += list(r["risk_level_method"])
    assert "splitting" in methods and "plain" in methods      # both paths are exercised
    # every number has its interval, or a bound
    for c in res:
        r = c.risk
        assert np.all((r["risk_p_ge_lo"] <= r["risk_p_ge"]) & (r["risk_p_ge"] <= r["risk_p_ge_hi"]))
        assert np.all(np.isfinite(r["risk_p_ge_hi"]))


def test_risk_is_the_same_in_memory_on_one_thread_and_after_a_resume(tmp_path, risk_result):
    import threading

    from h5compare import datasets
    from stormsim.sweep.executors import LocalExecutor
    from stormsim.store.stores import MemoryStore
    from stormsim.driver import run_sweep

    ref = datasets(risk_result)
    one = tmp_path / "one.h5"
    run_sweep(_sweep(), one, executor=LocalExecutor(workers=1), progress="none")
    assert datasets(one) == ref
    # a resume after a stop: the first unit (a cell's storm risk) is kept, the rest runs
    stop = threading.Event()
    out = tmp_path / "resumed.h5"

    class StopAfterFirst(LocalExecutor):
        def poll(self, timeout):
            got = super().poll(timeout)
            if got:
                stop.set()
            return got

    first = run_sweep(_sweep(), out, executor=StopAfterFirst(workers=1), stop=stop,
                      progress="none")
    assert first.status == "interrupted" and not out.exists()
    part = stormsim.open_results(out)                    # unfinished: read from the parts
    assert not part.complete and any(c.risk is not None for c in part)
    assert run_sweep(_sweep(), out, progress="none").status == "complete"
    assert datasets(out) == ref
    mem = MemoryStore()
    run_sweep(_sweep(), mem, progress="none")
    for a, b in zip(mem.results(), stormsim.open_results(risk_result)):
        for name in a.risk:
            assert np.array_equal(a.risk[name], b.risk[name],
                                  equal_nan=a.risk[name].dtype.kind == "f"), name


def test_risk_views_round_trip(risk_result):
    """xarray (grid and cell), pandas and the file opened by xarray itself agree."""
    xr = pytest.importorskip("xarray")
    res = stormsim.open_results(risk_result)
    cells = list(res)
    df = res.to_dataframe()
    ds = res.to_xarray()
    flat = res.to_xarray(grid=False)
    raw = xr.open_dataset(risk_result, engine="h5netcdf")
    grid = xr.open_dataset(risk_result, engine="h5netcdf", group="grid")
    for c in cells:
        n = int(res.params["N"][c.index])
        for j, k in enumerate(c.risk["levels"].tolist()):
            p = c.risk["risk_p_ge"][j]
            assert df.loc[c.index, f"risk_p_ge_{k}"] == p
            assert df.loc[c.index, f"risk_level_method_ge_{k}"] == c.risk["risk_level_method"][j]
            np.testing.assert_array_equal(                          # the second is the unit
                df.loc[c.index, f"risk_storms_per_day_ge_{k}_hi"],
                c.risk["risk_storms_per_s_hi"][j] * 86400.0)
            assert float(ds["risk_p_ge"].sel(N=n, k=k)) == p
            assert float(flat["risk_p_ge"].sel(cell=c.index, k=k)) == p
            assert float(raw["risk_p_ge"].values[c.index, k - 1]) == p
            assert float(grid["risk_p_ge"].sel(N=n, k=k)) == p
            assert str(raw["risk_level_method"].values[c.index, k - 1]) == c.risk["risk_level_method"][j]
        asked = set(c.risk["levels"].tolist())
        for k in range(1, n + 1):                              # levels not asked: empty
            if k not in asked:
                assert np.isnan(raw["risk_p_ge"].values[c.index, k - 1])
                assert str(raw["risk_level_method"].values[c.index, k - 1]) == ""
    assert ds["risk_storms_per_s"].attrs["units"] == "1/s"
    assert "risk_p_ge_3" not in df.columns                     # no cell asked k = 3


def test_sweeps_without_risk_keep_their_identity_and_have_no_risk_datasets(tmp_path):
    import h5py

    from stormsim.driver import run_sweep

    plain = "\n".join(x for x in RISK_SWEEP.splitlines() if not x.startswith("risk_"))
    at_default = plain.replace("[fixed]", '[fixed]\nrisk_levels = []\nrisk_method = "auto"')
    assert _sweep(plain).hash == _sweep(at_default).hash
    assert [c.run_seed for c in _sweep(plain).cells] == [c.run_seed for c in _sweep().cells]
    assert _sweep(plain).hash != _sweep().hash            # the option is in the identity
    out = tmp_path / "plain.h5"
    run_sweep(_sweep(plain), out, progress="none")
    with h5py.File(out) as f:
        assert not [k for k in f if k.startswith("risk")] and "risk_k" not in f["cells/000000"]
    assert all(c.risk is None for c in stormsim.open_results(out))


@pytest.mark.parametrize("change,message", [
    ("risk_fleets = 32", r"risk_fleets = 32 there, 64 here"),
    ("risk_levels = [2, \"N\"]", r"risk_levels = \[2, \"N\"\] there, \[2\] here"),
])
def test_resuming_with_another_risk_option_is_refused_naming_the_key(tmp_path, change, message):
    from stormsim.errors import SweepError
    from stormsim.driver import run_sweep

    out = tmp_path / "out.h5"
    run_sweep(_sweep(), out, progress="none")
    other = RISK_SWEEP.replace(change, {"risk_fleets = 32": "risk_fleets = 64",
                                        "risk_levels = [2, \"N\"]": "risk_levels = [2]"}[change])
    with pytest.raises(SweepError, match=message):
        run_sweep(_sweep(other), out, progress="none")


#: A splitting cell where the two basin rules differ (N = 16: the raised
#: basin lies above the most-entries one).
BASIN_CELL = (RISK_SWEEP.replace('risk_levels = [2, "N"]', 'risk_levels = ["N/2"]\n'
                                 'risk_method = "splitting"')
              .replace("risk_trials = 40\n", "risk_trials = 20\n")
              .replace("risk_flux_cycles = 300\n", "").replace("N = [6, 10]", "N = [16]"))


def test_a_sweep_cell_s_storm_risk_runs_storm_risk_s_own_defaults():
    """One set of defaults: a cell that leaves risk_basin and risk_score_every
    out runs storm_risk's ("raised", "cycle"), resolved and recorded in its
    identity; giving either is another sweep, and its rule is the one run."""
    from stormsim.risk.splitting import DEFAULT_BASIN, DEFAULT_SCORE_EVERY
    from stormsim.sweep.cellrisk import risk_call

    old = _sweep(BASIN_CELL)
    kw = old.cells[0].risk_kwargs()
    assert (kw["basin"], kw["score_every"]) == (DEFAULT_BASIN, DEFAULT_SCORE_EVERY)
    assert old.cells[0].identity()["risk_basin"] is None       # given as storm_risk's default
    raised = stormsim.storm_risk(old.cells[0].fleet, **risk_call(kw)).split.interfaces[0]
    most = _sweep(BASIN_CELL.replace("[fixed]", '[fixed]\nrisk_basin = "most-entries"'))
    assert most.hash != old.hash and most.cells[0].run_seed == old.cells[0].run_seed
    lowest = stormsim.storm_risk(most.cells[0].fleet, **risk_call(most.cells[0].risk_kwargs()))
    assert lowest.split.interfaces[0] < raised          # the rule asked is the rule run
    ends = _sweep(BASIN_CELL.replace("[fixed]", '[fixed]\nrisk_score_every = "write-end"'))
    assert ends.hash != old.hash and ends.cells[0].risk_kwargs()["score_every"] == "write-end"
    fixed = _sweep(BASIN_CELL.replace("[fixed]", "[fixed]\nrisk_basin = 6"))
    assert stormsim.storm_risk(fixed.cells[0].fleet,
                               **risk_call(fixed.cells[0].risk_kwargs())).split.interfaces[0] == 6


def test_an_integer_basin_above_the_levels_left_to_split_is_lowered():
    """With "auto", splitting gets only the levels plain Monte Carlo left; a
    basin level above them is lowered to the deepest of them (never a cell
    that fails on every resume)."""
    from dataclasses import replace

    kw = {**FIXED, "max_fleets": 16}
    basin = (lambda b: {**kw, "split": replace(SPLIT, basin=b)})
    r = stormsim.storm_risk(_cell(), [2, 6], **basin(9))
    assert list(r.level_method) == ["plain", "splitting"] and r.split.interfaces[0] == 6
    direct = stormsim.storm_risk(_cell(), [2, 6], **basin(6))
    assert np.array_equal(r.p_ge, direct.p_ge) and np.array_equal(r.storms_per_s, direct.storms_per_s)
    assert stormsim.storm_risk(_cell(), [2, 6], **basin(None)).split.interfaces[0] == \
        stormsim.storm_risk(_cell(), [2, 6], **kw).split.interfaces[0]   # None: the default


@pytest.mark.parametrize("line,message", [
    ("risk_max_seconds = 60", r"\[fixed\] risk_max_seconds: refused: a sweep's storm risk has "
     r"a fixed effort, never a time budget.*risk_fleets"),
    ("max_seconds = 60", r"max_seconds: refused"),
    ("risk_levels = [0]", r"risk_levels = \[0\]: tail level 0: k must be an integer >= 1"),
    ("risk_levels = [2, 2]", r"lists 2 twice"),
    ("risk_levels = [2.5]", r"must be a list of levels k"),
    ("risk_levels = [7]", r"cell 0 \(N = 6\): risk_levels: tail level 7 is k = 7, above N = 6"),
    ("risk_replicates = 2", r"risk_replicates = 2: must be an integer >= 3"),
    ("risk_basin = 'low'", r"risk_basin = \"low\": must be an integer >= 1 or one of "
     r"'raised', 'most-entries'"),
    ("risk_basin = 11", r"risk_basin = 11 is above the deepest risk level 6"),
    ("risk_method = 'fast'", r"risk_method = \"fast\": must be one of 'auto', 'exact', 'plain', "
     r"'splitting'"),
    ("risk_score_every = 'often'", r"risk_score_every = \"often\": must be one of 'cycle', "
     r"'write-end'"),
])
def test_bad_risk_keys_say_key_value_and_rule(line, message):
    from stormsim.errors import SweepError

    key = line.split("=")[0].strip()
    text = "\n".join(x for x in RISK_SWEEP.splitlines() if not x.startswith(key + " "))
    text = text.replace("[fixed]", "[fixed]\n" + line)
    with pytest.raises(SweepError, match=message):
        _sweep(text)


@pytest.mark.parametrize("value", ['"60"', "60"])
def test_a_time_budget_in_the_sweep_table_gets_the_refusal_not_unknown_key(value):
    """[sweep] max_seconds gets the refusal that says why and what to give
    instead, not the unknown-key error of [sweep]."""
    from stormsim.errors import SweepError

    text = RISK_SWEEP.replace('name = "risk cells"', f'name = "risk cells"\nmax_seconds = {value}')
    with pytest.raises(SweepError, match=r"\[sweep\] max_seconds: refused: a sweep's storm risk "
                       r"has a fixed effort, never a time budget.*Give risk_fleets.*"
                       r"stormsim risk FILE --cell I --max-seconds S"):
        _sweep(text)


def test_risk_rules_between_keys():
    from stormsim.errors import SweepError

    base = RISK_SWEEP
    with pytest.raises(SweepError, match=r"risk_fleets, risk_replicates, risk_trials, "
                       r"risk_flux_cycles without risk_levels: give risk_levels"):
        _sweep(base.replace('risk_levels = [2, "N"]\n', ""))
    with pytest.raises(SweepError, match=r"risk_levels given without risk_fleets: a sweep's "
                       r"storm risk runs a fixed effort"):
        _sweep(base.replace("risk_fleets = 32\n", ""))
    _sweep(base.replace("risk_fleets = 32\n", 'risk_method = "splitting"\n'))   # no plain part
    with pytest.raises(SweepError, match=r"burn_in = 20 must be below risk_flux_cycles = 10"):
        _sweep(base.replace("risk_flux_cycles = 300", "risk_flux_cycles = 10"))
    _sweep(base.replace("risk_flux_cycles = 300", "risk_flux_cycles = 10")
           .replace("[fixed]", '[fixed]\nrisk_method = "plain"'))              # never splits
    failing = base.replace("[fixed]", '[fixed]\nmtbf = 1e4\nrisk_method = "splitting"')
    with pytest.raises(SweepError, match=r"risk_method = 'splitting': fleet = .*without "
                       r"failures.*use risk_method = 'plain' or 'auto'"):
        _sweep(failing)
    _sweep(base.replace("[fixed]", '[fixed]\ncheckpoint = "async"\nrisk_method = "splitting"'))


@pytest.mark.slow  # ~1.3 s: a report's figures
def test_the_report_shows_the_storm_risk(tmp_path, risk_result, capsys):
    from stormsim.report import main

    assert main(str(risk_result), str(tmp_path / "rep")) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Storm risk" in text and "storms/day [95% CI]" in text
    res = stormsim.open_results(risk_result)
    c = res.cell(0)                        # N = 6: its k = N is reached by splitting
    j = list(c.risk["levels"]).index(6)
    assert c.risk["risk_level_method"][j] == "splitting"
    assert f"{c.risk['risk_p_ge'][j]:.3e} [{c.risk['risk_p_ge_lo'][j]:.3e}, " in text
    assert "32 fleets, 3 replicates x 40" in text


def test_a_grid_over_risk_levels_and_an_async_cell_stay_plain(tmp_path):
    """risk_levels in [grid] (each value a list); "auto" on an async fleet: plain only."""
    from stormsim.driver import run_sweep

    text = RISK_SWEEP.replace('risk_levels = [2, "N"]\n', "").replace(
        "N = [6, 10]", 'N = [6]\ncheckpoint = ["blocking", "async"]\nrisk_levels = [[2], ["N/2", 3]]')
    sw = _sweep(text)
    assert sw.n_cells == 4 and list(sw.cells[1].risk_levels()) == [3]   # N/2 = 3, once
    out = run_sweep(sw, tmp_path / "g.h5", progress="none")
    assert out.status == "complete" and out.cells_done == 4
    res = stormsim.open_results(tmp_path / "g.h5")
    for c, cell in zip(res, sw.cells):
        assert list(c.risk["levels"]) == list(cell.risk_levels())
        if cell.values["checkpoint"] == "async":
            assert set(c.risk["risk_level_method"]) == {"plain"} and int(c.risk["risk_replicates_run"]) == 0
    ds = res.to_xarray()                        # a key without a column: its values as JSON
    assert ds["risk_p_ge"].dims == ("N", "checkpoint", "risk_levels", "k")
    p = ds["risk_p_ge"].sel(N=6, checkpoint="async", risk_levels='["N/2", 3]', k=3)
    assert float(p) == res.cell(3).risk["risk_p_ge"][0]


@pytest.mark.slow  # a LocalCluster of processes
def test_risk_on_dask_matches_the_local_run(tmp_path, risk_result):
    pytest.importorskip("distributed")
    from h5compare import datasets
    from stormsim.driver import run_sweep

    out = run_sweep(_sweep(), tmp_path / "dask.h5", executor="local:2", progress="none")
    assert out.status == "complete" and out.cells_done == 2
    assert datasets(tmp_path / "dask.h5") == datasets(risk_result)


def test_dry_run_says_the_storm_risk_is_extra(capsys):
    from stormsim.store.tables import cells_table

    text = cells_table(_sweep())
    assert ("plus the storm risk of 2 cells (risk_levels), a fixed effort: at most 64 plain "
            "fleets in all (risk_fleets rounded up to whole batches") in text
    assert text.splitlines()[1].endswith("None of it is in the estimates above or below")


#: One cell per risk_method, risk_fleets = 33: storm_risk runs MIN_BATCHES = 2
#: equal batches of 17 (risk.stormrisk.fixed_batch: 33 rounded up to whole batches), so
#: 34 plain fleets in "auto" and "plain" and none in "splitting"; k = N = 6 is
#: out of reach of 34 fleets of 150 cycles, so every batch runs.
METHODS_SWEEP = (RISK_SWEEP.replace("risk_fleets = 32", "risk_fleets = 33")
                 .replace("[grid]\nN = [6, 10]",
                          'N = 6\n[grid]\nrisk_method = ["auto", "plain", "splitting"]'))


def test_dry_run_and_progress_count_the_storm_risk_as_it_runs(tmp_path):
    """The dry run's plain fleets are those storm_risk runs (batch rounding, none
    with risk_method = 'splitting'; not the sum of risk_fleets, 99), it
    names the cells that split; the progress counts the risk tasks and says
    the ETA leaves them out."""
    import io

    from stormsim.driver import run_sweep
    from stormsim.store.tables import cells_table

    sw = _sweep(METHODS_SWEEP)
    line = cells_table(sw).splitlines()[1]
    assert line.startswith("plus the storm risk of 3 cells (risk_levels), a fixed effort: at "
                           "most 68 plain fleets in all (risk_fleets rounded up to whole "
                           "batches; fewer if every level resolves first): "), line
    assert ("; then 3 splitting replicates for the levels plain Monte Carlo leaves unresolved "
            "in 1 cell and for every level in 1 cell (risk_method = 'splitting'), not costed "
            "here") in line, line
    log = io.StringIO()
    assert run_sweep(sw, tmp_path / "m.h5", progress="lines", stream=log).status == "complete"
    ran = [int(c.risk["risk_fleets_run"]) for c in stormsim.open_results(tmp_path / "m.h5")]
    assert ran == [34, 34, 0]                          # what the dry run said: 68 in all
    lines = log.getvalue().splitlines()
    assert "and the storm risk of 3 cells (not in the ETA); running on" in lines[0], lines
    assert "storm risk 3/3 cells" in lines[-1] and "ETA 0:00:00" in lines[-1], lines


def test_the_eta_says_it_leaves_the_storm_risk_out():
    from stormsim.sweep.progress import Progress

    clock = type("Clock", (), {"t": 0.0, "__call__": lambda self: self.t})()
    p = Progress("lines", total_cells=2, total_fleets=10, stream=io.StringIO(), clock=clock,
                 interval=1e9, total_risk=2)
    p.update(fleets_done=0, cells_done=0, risk_done=1, fleet_cycles=0, events=10)
    assert "storm risk 1/2 cells" in p.line() and "ETA ? (fleets only)" in p.line()
    p.update(fleets_done=10, cells_done=1, risk_done=1, fleet_cycles=100,
             events=10)                                # every fleet done, one risk left
    assert p.eta() == float("inf") and "ETA ? (fleets only)" in p.line()   # not 0:00:00
    p.update(fleets_done=10, cells_done=2, risk_done=2, fleet_cycles=100, events=10)
    assert p.eta() == 0.0 and p.line().endswith("ETA 0:00:00")


def test_a_grid_key_without_a_column_selects_by_its_values_as_given(tmp_path):
    """fast_forward in [grid] (no parameter column, like the risk keys): /grid and
    to_xarray take the values as given (JSON text) as its coordinate."""
    xr = pytest.importorskip("xarray")
    from stormsim.driver import run_sweep

    text = "\n".join(x for x in RISK_SWEEP.splitlines() if not x.startswith("risk_"))
    text = text.replace("N = [6, 10]", "N = [6]\nfast_forward = [false, true]")
    out = tmp_path / "ff.h5"
    run_sweep(_sweep(text), out, progress="none")
    ds = stormsim.open_results(out).to_xarray()
    g = xr.open_dataset(out, engine="h5netcdf", group="grid")
    assert list(ds["fast_forward"].values) == ["false", "true"]
    assert float(ds["p_ge"].sel(N=6, fast_forward="true", k=2)) == \
        float(g["p_ge"].sel(N=6, fast_forward="true", k=2))


def test_no_stored_risk_name_is_a_key_and_a_grid_over_the_effort_assembles(tmp_path):
    """A stored name equal to a key's would collide with /grid/<key> and the xarray
    coordinates of a grid over it (h5py 'name already exists'): none may."""
    from stormsim.sweep.keys import KEY
    from stormsim.sweep.cellrisk import RISK_ARRAYS, RISK_SCALARS
    from stormsim.driver import run_sweep

    names = {a.name for a in RISK_ARRAYS + RISK_SCALARS}
    assert not names & set(KEY), names & set(KEY)
    text = (RISK_SWEEP.replace("risk_fleets = 32\n", "").replace("risk_replicates = 3\n", "")
            .replace("[grid]\nN = [6, 10]", "N = 6\n[grid]\nrisk_fleets = [16, 32]\n"
                     "risk_replicates = [3, 4]"))
    out = tmp_path / "g.h5"
    assert run_sweep(_sweep(text), out, progress="none").status == "complete"
    res = stormsim.open_results(out)
    ds = res.to_xarray()
    assert sorted(int(x) for x in ds["risk_fleets"].values) == [16, 32]
    assert sorted(int(c.risk["risk_fleets_run"]) for c in res) == [16, 16, 32, 32]


def test_inspect_csv_and_json_have_the_storm_risk_columns_of_the_dataframe(risk_result,
                                                                           capsys):
    """`stormsim inspect --format csv/json`: the DataFrame's storm-risk columns
    (same names, same numbers), at every level some cell asked; a cell that did
    not ask a level holds the table's fill there (NaN: empty / null)."""
    import csv
    import io
    import json

    from stormsim.sweep.cellrisk import PER_DAY, RISK_ARRAYS, RISK_SCALARS
    from stormsim.cli import main

    pytest.importorskip("pandas")
    df = stormsim.open_results(risk_result).to_dataframe()
    names = [a.column for a in RISK_SCALARS]
    for k in (2, 6, 10):                               # the levels asked: [2, N] at N = 6, 10
        names += [a.column.format(k=k) for a in RISK_ARRAYS]
        names += [n.replace("_per_day", f"_per_day_ge_{k}", 1) for n in PER_DAY]
    assert set(names) <= set(df.columns)
    assert main(["inspect", str(risk_result), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["inspect", str(risk_result), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [c for c in doc["columns"] if c.startswith("risk_")] == names
    assert [c for c in rows[0] if c.startswith("risk_")] == names
    for i, (cell, row) in enumerate(zip(doc["cells"], rows)):
        for name in names:
            want = df.loc[i, name]
            if isinstance(want, str):
                assert cell[name] == row[name] == want, (i, name)
            elif isinstance(want, (int, np.integer)):      # counts, seeds; -1: not asked
                assert cell[name] == int(row[name]) == want, (i, name)
            elif np.isnan(want):                       # not asked by this cell
                assert cell[name] is None and row[name] == "", (i, name)
            else:                                      # JSON and CSV floats round-trip
                assert cell[name] == float(row[name]) == want, (i, name)
    assert doc["cells"][0]["risk_p_ge_6"] == float(df.loc[0, "risk_p_ge_6"])   # k = N = 6
    assert doc["cells"][0]["risk_p_ge_10"] is None                             # k = 10 > 6


def _count_reads(res) -> list:
    """The cells ``res`` reads from now on, in order (each read appends its index)."""
    reads, every_cell = [], res._iter

    def counted():
        for c in every_cell():
            reads.append(c.index)
            yield c

    res._iter = counted
    return reads


def test_each_view_reads_each_cell_once(risk_result):
    """The views need each cell's summary and its storm risk: one pass over the
    cells (a second one read every cell's arrays again)."""
    from stormsim.store.export import inspect_csv, inspect_json

    pytest.importorskip("xarray")
    res = stormsim.open_results(risk_result)
    reads = _count_reads(res)
    for view in (res.to_dataframe, res.to_xarray, lambda: inspect_csv(res, ("N",)),
                 lambda: inspect_json(res, ("N",))):
        reads.clear()
        view()
        assert reads == list(range(res.n_cells)), view


def test_a_result_cannot_be_written_without_the_storm_risk_its_cells_ask_for(tmp_path):
    """write_result's risk_of is required (forgetting it is Python's
    TypeError), and a risk_of that is None or gives no risk (or another
    cell's) for a cell that asks for one is a ValueError naming the cell,
    before any file is created."""
    from stormsim.store.layout import write_result
    from stormsim.store.stores import MemoryStore
    from stormsim.driver import run_sweep

    sw, mem = _sweep(), MemoryStore()
    run_sweep(sw, mem, progress="none")
    parts_of = mem.parts.__getitem__
    out = tmp_path / "r.h5"
    with pytest.raises(TypeError, match="risk_of"):
        write_result(out, sw, parts_of)                 # forgetting it is impossible
    with pytest.raises(ValueError, match=r"write_result: cells \[0, 1\] ask for their storm "
                       r"risk \(risk_levels\), but risk_of is None: give risk_of\(i\)"):
        write_result(out, sw, parts_of, risk_of=None)
    assert not out.exists()
    with pytest.raises(ValueError, match=r"write_result: cell 1 asks for its storm risk "
                       r"\(risk_levels\), but risk_of\(1\) gave None"):
        write_result(out, sw, parts_of, risk_of={0: mem.risk[0]}.get)
    with pytest.raises(ValueError, match=r"but risk_of\(1\) gave cell 0's storm risk"):
        write_result(out, sw, parts_of, risk_of=lambda i: mem.risk[0])
    write_result(out, sw, parts_of, risk_of=mem.risk.get)          # the right call works
    assert [int(c.risk["risk_fleets_run"]) for c in stormsim.open_results(out)] == [32, 32]


def test_inspect_shows_the_storm_risk_reading_each_cell_once(risk_result, capsys):
    """`stormsim inspect FILE` (text) shows the cells' storm risk, as the report
    and the data views do: one row per cell and level asked."""
    from stormsim.cli import main

    assert main(["inspect", str(risk_result)]) == 0
    out = capsys.readouterr().out
    assert "Storm risk (risk_levels), per cell and level k asked:" in out
    res = stormsim.open_results(risk_result)
    rows = [line.split() for line in out.split("Storm risk (risk_levels)")[1].splitlines()]
    for c in res:
        n = int(c.params["N"])
        for k, method in zip(c.risk["levels"].tolist(), c.risk["risk_level_method"]):
            assert [str(c.index), str(n), str(k), str(method)] in [r[:4] for r in rows], (c.index, k)
    reads = _count_reads(res)
    assert "Storm risk (risk_levels)" in res.table(risk=True)
    assert reads == list(range(res.n_cells))
    assert "Storm risk" not in res.table()             # the report adds its own section

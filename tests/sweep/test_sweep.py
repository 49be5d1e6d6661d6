"""Sweep files -> validated, seeded cells -> run_sweep (in-process)."""
from __future__ import annotations

import hashlib
import json
import math
import threading

import numpy as np
import pytest

import stormsim
from stormsim.errors import ResourceError, SweepError
from stormsim.sweep.executors import LocalExecutor
from stormsim.store.results import open_results
from stormsim.sweep.spec import SEED_DOMAIN, load_sweep, parse_sweep
from stormsim.store.stores import MemoryStore
from stormsim.driver import run_sweep

from h5compare import datasets

from conftest import ROOT

BASE = """
[sweep]
name = "t"
[fixed]
N = 8
T = 1.0
cycles = 100
fleets = 10
[grid]
load = [0.3, 0.6]
"""


def sweep_of(fixed: str = "", grid: str = "", sweep: str = "") -> str:
    """A small valid file with extra lines in each table."""
    return (f"[sweep]\nname = \"t\"\n{sweep}\n[fixed]\ncycles = 100\nfleets = 10\n"
            f"{fixed}\n[grid]\n{grid}\n")


# -- validation -------------------------------------------------------------------

BAD = [
    # (fixed, grid, sweep, message regex)
    ("N = 8\nlod = 0.5", "", "", r"\[fixed\] lod = 0\.5: unknown key \(did you mean 'load'\?\); "
                                 r"allowed keys: N, T, d, load"),
    ("N = 8\nload = 0.5", "sigma = [0.1]", "", r"\[grid\] sigma = \[0\.1\]: unknown key \(did "
                                                r"you mean 'jitter'\?\)"),
    ("N = 8\nload = 0.5", "", "occupancy = \"none\"",
     r"\[sweep\] occupancy = \"none\": must be 'fleet' .* or 'sum'"),
    ("N = 8\nload = 0.5", "", "nme = \"x\"", r"\[sweep\] nme = \"x\": unknown key \(did you mean "
                                              r"'name'\?\)"),
    ("N = 8", "load = [0.5, -0.5]", "", r"\[grid\] load\[1\] = -0\.5: must be finite and > 0; "
                                        r"load is the write load"),
    ("N = 0\nload = 0.5", "", "", r"\[fixed\] N = 0: must be an integer >= 1"),
    ("N = 8.5\nload = 0.5", "", "", r"\[fixed\] N = 8\.5: must be an integer >= 1"),
    ("N = 8", "load = 0.5", "", r"\[grid\] load = 0\.5: a grid key takes a non-empty list"),
    ("N = 8\nload = 0.5", "N = [4]", "", r"N is in both \[fixed\] and \[grid\]"),
    ("N = 8", "load = [0.5, 0.5]", "", r"\[grid\] load lists 0\.5 twice \(positions 0 and 1\)"),
    ("N = 8\nload = 0.5\nd = 0.1", "", "", r"cell 0: give exactly one of 'load' and 'd'.*both"),
    ("N = 8", "", "", r"cell 0: give exactly one of 'load' and 'd'.*neither"),
    ("load = 0.5", "", "", r"cell 0: missing key 'N'"),
    ("N = 8\nload = 0.5\ncap = 4\ncap_fraction = 0.5", "", "",
     r"give at most one of 'cap' and 'cap_fraction'"),
    ("N = 8\nload = 0.5\ncap = 0", "", "", r"\[fixed\] cap = 0: must be > 0 \(inf allowed\)"),
    ("N = 8\nload = 0.5\njitter = 0.1\nm_over_sigma = 4", "", "",
     r"give at most one of 'jitter' and 'm_over_sigma'"),
    ("N = 8\nload = 0.5\njitter = -0.1", "", "", r"\[fixed\] jitter = -0\.1: every value must be "
                                                 r"finite and >= 0"),
    ("N = 3\nd = [0.1, 0.1, 0.1]\nT = [1.0, 2.0, 1.0]\nm_over_sigma = 4", "", "",
     r"m_over_sigma needs identical jobs"),
    ("N = 8\nload = 0.5\nlaunch = \"staggered\"", "", "",
     r"\[fixed\] launch = \"staggered\": must be one of 'random', 'sync', 'stagger'"),
    ("N = 8\nlaunch = \"stagger\"", "load = [0.5, 1.5]", "",
     r"cell 1 \(load = 1\.5\): launch = 'stagger' cannot be placed: load L = 1\.5"),
    ("N = 8\nm_over_sigma = 4", "load = [1.5]", "",
     r"cell 0 \(load = 1\.5\): m_over_sigma needs a stagger margin m"),
    # a float formatted as a float, not as np.float64(0.0)
    ("N = 4\nT = 1.0\nm_over_sigma = 4", "load = [1.3333333333333333]", "",
     r"cell 0 \(load = 1\.3333333333333333\): the stagger margin is m = 0\.0 here, so "
     r"m_over_sigma cannot set the jitter; give jitter instead"),
    # a sweep file cannot give explicit phases: the message must not suggest them
    ("N = 4\nload = 0.5\nlaunch = \"stagger\"\njitter = [0.1, 0.1, 0.1, 0.2]", "", "",
     r"cell 0: launch = 'stagger' needs identical jobs \(one T, d and jitter\), but jitter "
     r"differs between jobs here; a sweep file has no explicit phases: give one value each, "
     r"or use launch = 'random' or 'sync'$"),
    ("N = 8\nload = 0.5\npassage_level = 9", "", "", r"passage_level = 9 is above N = 8"),
    ("N = 8\nload = 0.5\nburn_in = 100", "", "", r"burn_in = 100 must be below cycles = 100"),
    ("N = 8\nload = 0.5\nthroughput = \"power:1.5\"", "", "",
     r"throughput = \"power:1\.5\": power alpha = 1\.5: alpha must be a number in \[0, 1\]"),
    ("N = 8\nload = 0.5\nthroughput = \"fast\"", "", "",
     r"throughput = \"fast\": must be 'fair', 'ideal', 'power:ALPHA'"),
    ("N = 3\nload = 0.5\nthroughput = [1.0, 1.5]", "", "",
     r"throughput table has 2 values but N = 3"),
    ("N = 3\nload = 0.5\nthroughput = [1.0, 2.5, 2.0]", "", "",
     r"throughput table f\(2\) = 2\.5: must be in \(0, 2\]"),
    ("N = 3\nload = 0.5\nT = [1.0, 2.0]", "", "", r"T = \[1\.0, 2\.0\] has 2 values but N = 3"),
    ("N = 8\nload = 0.5\nstop_at_passage = 1", "", "", r"stop_at_passage = 1: must be true or false"),
    ("N = 8\nload = 0.5\nseed = -1", "", "", r"\[fixed\] seed = -1: must be an integer >= 0"),
]


@pytest.mark.parametrize("fixed,grid,sweep,match", BAD)
def test_bad_sweep_files_name_key_value_and_rule(fixed, grid, sweep, match):
    with pytest.raises(SweepError, match=match):
        parse_sweep(sweep_of(fixed, grid, sweep), "bad.toml")


def test_file_level_errors(tmp_path):
    with pytest.raises(SweepError, match=r"bad\.toml: not valid TOML"):
        parse_sweep("[fixed\nN = 1", "bad.toml")
    with pytest.raises(SweepError, match=r"N = 8 is outside any table: put it under \[fixed\]"):
        parse_sweep("N = 8\n", "bad.toml")
    with pytest.raises(SweepError, match=r"\[cells\]: unknown table; allowed tables: \[sweep\]"):
        parse_sweep("[cells]\nN = 8\n", "bad.toml")
    with pytest.raises(SweepError, match=r"missing\.toml: no such sweep file"):
        load_sweep(tmp_path / "missing.toml")


def test_every_documented_key_is_accepted():
    text = sweep_of(
        "N = 4\nd = 0.05\ncap = 3.5\nthroughput = {power = 0.5}\njitter = [0.0, 0.01, 0.02, 0.0]\n"
        "launch = \"sync\"\npassage_level = \"none\"\nstop_at_passage = false\nburn_in = 10\n"
        "seed = 3", "")
    (cell,) = parse_sweep(text).cells
    assert cell.fleet.throughput == ("power", 0.5) and cell.fleet.cap == 3.5
    assert cell.fleet.jitter.tolist() == [0.0, 0.01, 0.02, 0.0]
    assert cell.passage_level is None and cell.burn_in == 10 and cell.seed == 3


# -- resolution -----------------------------------------------------------------

def test_load_cap_fraction_and_m_over_sigma_resolve_as_documented():
    sw = parse_sweep(sweep_of("N = 16\nlaunch = \"stagger\"\nthroughput = \"fair\"",
                              "load = [0.6]\ncap_fraction = [inf, 0.9]\nm_over_sigma = [8, inf]"))
    assert len(sw.cells) == 4
    for c in sw.cells:
        assert c.fleet.d.tolist() == [0.6 * 1.0 / 16] * 16            # d = L T / N
        frac = c.values["cap_fraction"]
        assert c.fleet.cap == (math.inf if math.isinf(frac) else frac * 16)
        base = stormsim.Fleet(T=c.fleet.T, d=c.fleet.d, cap=c.fleet.cap)
        m = stormsim.stagger_margin(base)
        mos = c.values["m_over_sigma"]
        assert c.fleet.jitter[0] == (0.0 if math.isinf(mos) else m / mos)   # sigma = m/(m/sigma)
        assert c.values["margin"] == m
    cols = sw.columns()
    assert cols["cap"].tolist() == [math.inf, math.inf, 0.9 * 16, 0.9 * 16]
    assert cols["launch"].tolist() == ["stagger"] * 4


def test_grid_order_is_the_nested_loops_of_the_file():
    sw = parse_sweep(sweep_of("", "N = [4, 8]\nload = [0.2, 0.4, 0.6]"))
    assert [(c.n_jobs, c.values["load"]) for c in sw.cells] == [
        (4, 0.2), (4, 0.4), (4, 0.6), (8, 0.2), (8, 0.4), (8, 0.6)]
    assert sw.grid_keys == ["N", "load"]


def test_per_job_lists_and_throughput_tables():
    sw = parse_sweep(sweep_of("N = 2\nd = 0.1\nthroughput = [1.0, 1.5]",
                              "T = [[1.0, 1.2], 1.5]"))
    assert sw.cells[0].fleet.T.tolist() == [1.0, 1.2] and math.isnan(sw.cells[0].values["T"])
    assert sw.cells[1].fleet.T.tolist() == [1.5, 1.5]
    assert sw.cells[0].fleet.f.tolist() == [0.0, 1.0, 1.5]
    assert sw.columns()["throughput"].tolist() == ["table", "table"]


# -- seeding ----------------------------------------------------------------------

def test_cell_seed_is_the_documented_hash():
    (c,) = parse_sweep(sweep_of("N = 2\nload = 0.5\nseed = 11", "")).cells
    f = c.fleet
    canon = {"N": 2, "T": [x.hex() for x in f.T.tolist()], "d": [x.hex() for x in f.d.tolist()],
             "cap": math.inf.hex(), "f": [x.hex() for x in f.f.tolist()],
             "sigma": [x.hex() for x in f.jitter.tolist()], "launch": "random", "cycles": 100,
             "burn_in": 0, "passage_level": 0, "stop_at_passage": True, "seed": 11}
    blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
    assert c.run_seed == int.from_bytes(hashlib.sha256(SEED_DOMAIN + blob).digest()[:8], "big") >> 1
    assert 0 <= c.run_seed < 2**63


def test_cell_seeds_do_not_depend_on_grid_order_extension_or_fleets():
    a = parse_sweep(sweep_of("N = 4", "load = [0.2, 0.4]"))
    b = parse_sweep(sweep_of("N = 4", "load = [0.6, 0.4, 0.2]").replace("fleets = 10", "fleets = 99"))
    seeds_a = {c.values["load"]: c.run_seed for c in a.cells}
    seeds_b = {c.values["load"]: c.run_seed for c in b.cells}
    assert seeds_a[0.2] == seeds_b[0.2] and seeds_a[0.4] == seeds_b[0.4]
    assert len(set(seeds_b.values())) == 3                       # independent cells
    c = parse_sweep(sweep_of("N = 4\nseed = 1", "load = [0.2]")).cells[0]
    assert c.run_seed != seeds_a[0.2]                            # seed makes replicates
    assert a.hash != b.hash
    # comments and key order do not change what is simulated, nor its identity
    assert parse_sweep("# note\n" + sweep_of("N = 4", "load = [0.2, 0.4]")).hash == a.hash


# -- running --------------------------------------------------------------------

RUN = """
[sweep]
name = "run test"
[fixed]
T = 1.0
load = 0.5
jitter = 0.01
cycles = 200
fleets = 40
passage_level = 3
stop_at_passage = false
burn_in = 20
[grid]
N = [4, 8]
launch = ["random", "sync"]
"""


def _same_cells(sweep, res):
    for c in sweep.cells:
        run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
        cell = res.cell(c.index)
        for key in ("passage_time", "passage_cycle", "end_time", "events", "occupancy"):
            assert getattr(run, key).tobytes() == getattr(cell, key).tobytes(), (c.index, key)


def test_run_sweep_equals_one_simulate_call_per_cell_whatever_the_units():
    sw = parse_sweep(RUN)
    big = MemoryStore()
    assert run_sweep(sw, big, progress="none").status == "complete"
    _same_cells(sw, big.results())
    tiny = MemoryStore()                   # units of one or a few fleets
    run_sweep(sw, tiny, executor=LocalExecutor(workers=2, target_seconds=1e-5), progress="none")
    assert max(len(p) for p in tiny.parts.values()) > 10
    _same_cells(sw, tiny.results())


class StopAfter(LocalExecutor):
    """Sets the stop event after n units, as a signal handler would."""

    def __init__(self, stop, n):
        super().__init__(target_seconds=1e-4)
        self.stop, self.n = stop, n

    def poll(self, timeout):
        out = super().poll(timeout)
        self.n -= len(out)
        if self.n <= 0:
            self.stop.set()
        return out


class FailsToStart(LocalExecutor):
    """An executor whose workers cannot be reached (e.g. --dask nofile.json)."""

    def start(self):
        raise ResourceError("cannot reach the scheduler")


def test_a_failed_start_leaves_no_output(tmp_path):
    """No OUTPUT.parts (LOCK, MANIFEST.json) is left by a run whose executor
    failed to start, so another sweep file may use the output next."""
    out = tmp_path / "out.h5"
    with pytest.raises(ResourceError, match="cannot reach the scheduler"):
        run_sweep(parse_sweep(RUN, "run.toml"), out, executor=FailsToStart(), progress="none")
    assert list(tmp_path.iterdir()) == []
    other = parse_sweep(RUN.replace("cycles = 200", "cycles = 150"), "other.toml")
    assert run_sweep(other, out, progress="none").status == "complete"


@pytest.mark.slow  # ~1.5 s: a sweep run twice
def test_stop_then_resume_is_bit_identical(tmp_path):
    sw = parse_sweep(RUN, "run.toml")
    ref = tmp_path / "ref.h5"
    run_sweep(sw, ref, progress="none")
    out = tmp_path / "out.h5"
    for n in (3, 5, 1000):
        stop = threading.Event()
        o = run_sweep(sw, out, executor=StopAfter(stop, n), progress="none", stop=stop)
        if o.status == "complete":
            break
        assert o.status == "interrupted" and not out.exists()
        assert (tmp_path / "out.h5.parts").is_dir()
    assert o.status == "complete" and o.fleets_before > 0
    assert datasets(out) == datasets(ref)
    again = run_sweep(sw, out, progress="none")
    assert again.status == "already complete" and again.fleets_run == 0


def test_stop_before_the_first_unit_runs_nothing(tmp_path):
    stop = threading.Event()
    stop.set()
    o = run_sweep(parse_sweep(RUN), tmp_path / "out.h5", stop=stop, progress="none")
    assert o.status == "interrupted" and o.fleets_run == 0 and not (tmp_path / "out.h5").exists()


def test_outputs_of_other_sweeps_are_refused_then_overwritten(tmp_path):
    out = tmp_path / "out.h5"
    run_sweep(parse_sweep(RUN, "run.toml"), out, progress="none")
    before = out.read_bytes()
    other = parse_sweep(RUN.replace("cycles = 200", "cycles = 150"), "other.toml")
    with pytest.raises(SweepError, match=r"out\.h5 holds the results of a different sweep "
                                         r"\('run test', 4 cells, from run\.toml\) than other\.toml"):
        run_sweep(other, out, progress="none")
    assert out.read_bytes() == before
    assert run_sweep(other, out, overwrite=True, progress="none").status == "complete"
    assert open_results(out).params["cycles"].tolist() == [150] * 4


def test_censored_fleets_are_stored_and_counted():
    # a stagger with little jitter: most fleets reach the 60-cycle cap unseen
    sw = parse_sweep(sweep_of("N = 8\nload = 0.5\nlaunch = \"stagger\"\npassage_level = 2",
                              "m_over_sigma = [4, 60]"))
    store = MemoryStore()
    run_sweep(sw, store, progress="none")
    res = store.results()
    s = res.summary()
    fast, slow = res.cell(0), res.cell(1)
    assert (fast.passage_cycle >= 0).all()
    # m/sigma = 60: a median near 0.09 (m/sigma)^2 ~ 300 cycles, far past the cap
    assert (slow.passage_cycle == -1).sum() == s["censored"][1] > 5
    assert np.isinf(slow.passage_time[slow.passage_cycle == -1]).all()
    km = slow.survival()
    assert km.n_censored == s["censored"][1] and km.n == 10
    assert math.isinf(s["median"][1])          # more than half censored: not bounded
    # none censored: the smallest t with S(t) <= 1/2 is the 5th of 10 passages
    assert s["censored"][0] == 0 and s["median"][0] == np.sort(fast.passage_cycle)[4]
    assert ">100 [>100, >100]" in res.table()


def test_examples_are_valid_sweeps():
    for name in ("stagger_survival.toml", "tail_sweep.toml", "goodput.toml"):
        sw = load_sweep(ROOT / "examples" / name)
        assert sw.n_cells >= 8
    goodput = load_sweep(ROOT / "examples" / "goodput.toml")
    assert all(c.fleet.has_failures for c in goodput.cells)
    assert load_sweep(ROOT / "examples" / "stagger_survival.toml").occupancy == "sum"


class InterruptAfterFirst(LocalExecutor):
    """A KeyboardInterrupt in the driver's wait once a unit is kept, as Ctrl-C
    lands in a notebook."""

    kept = False

    def poll(self, timeout):
        if self.kept:
            raise KeyboardInterrupt
        out = super().poll(timeout)
        self.kept = bool(out)
        return out


def _unit_threads():
    return [t for t in threading.enumerate() if t.name.startswith("stormsim-unit") and t.is_alive()]


def test_a_keyboard_interrupt_leaves_no_worker_thread_running(tmp_path):
    """After a KeyboardInterrupt in run_sweep no unit keeps running in the
    background: the pool waits for its units (each ~0.1 s)."""
    sw = parse_sweep(RUN.replace("fleets = 40", "fleets = 4000"), "run.toml")
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sw, tmp_path / "out.h5", progress="none",
                  executor=InterruptAfterFirst(workers=2, target_seconds=0.1))
    assert _unit_threads() == []
    assert (tmp_path / "out.h5.parts").is_dir()           # the finished unit is kept


def test_the_bar_is_tqdm_auto():
    """tqdm.auto: a widget in a notebook, text on a terminal."""
    import io

    tqdm_auto = pytest.importorskip("tqdm.auto")
    from stormsim.sweep.progress import Progress

    p = Progress("bar", total_cells=1, total_fleets=3, stream=io.StringIO())
    assert isinstance(p.bar, tqdm_auto.tqdm)
    p.close()


def test_a_new_key_at_its_default_keeps_every_run_seed(monkeypatch):
    """The recipe of stormsim.sweep.spec's docstring: a key added later is seeded
    'unless-default', so at its default no run seed moves, and away from it
    the cell is another experiment."""
    from stormsim.sweep import cell as spec
    from stormsim.sweep import checks as _checks
    from stormsim.sweep import keys as _keys

    before = parse_sweep(BASE)
    knob = _keys.Key("test_knob", "a key added later", _checks.positive, 1.0, np.float64,
                     seed="unless-default")
    monkeypatch.setattr(spec, "KEYS", spec.KEYS + (knob,))
    c = before.cells[0]
    assert spec.cell_seed(c.fleet, **c.values) == c.run_seed             # absent: its default
    assert spec.cell_seed(c.fleet, **{**c.values, "test_knob": 1.0}) == c.run_seed
    assert spec.cell_seed(c.fleet, **{**c.values, "test_knob": 2.0}) != c.run_seed

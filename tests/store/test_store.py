"""Stores: the memory and HDF5 stores pass the same tests (one interface),
plus what only a file can do (crash leftovers, plain-h5py layout)."""
from __future__ import annotations

import json
import math
import os
import random

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormsim
from stormsim._version import ALGORITHM_VERSION
from stormsim.store.files import inject_fault
from stormsim.errors import ResourceError, SweepError
from stormsim.store.cellresult import cell_from_parts
from stormsim.store.results import open_results
from stormsim.sweep.spec import parse_sweep
from stormsim.store.stores import HDF5Store, MemoryStore
from stormsim.stats.exact_sums import exact_column_sums, exact_to_float
from stormsim.sweep.work import FleetRanges, make_unit, run_unit

SWEEP = """
[sweep]
name = "store test"
[fixed]
T = 1.0
jitter = 0.02
cycles = 120
fleets = 23
passage_level = 2
stop_at_passage = false
[grid]
N = [3, 6]
load = [0.4, 0.9]
"""

OTHER = SWEEP.replace("cycles = 120", "cycles = 121")


@pytest.fixture(scope="module")
def sweep():
    return parse_sweep(SWEEP, "store_test.toml")


@pytest.fixture(scope="module")
def parts(sweep):
    """Every cell cut into uneven units (each a list of one piece), computed once."""
    out = []
    for c in sweep.cells:
        cuts = [0, 1, 9, 10, c.fleets]
        for a, b in zip(cuts[:-1], cuts[1:]):
            out.append(run_unit(make_unit(sweep, c.index, a, b)))
    return out


class Kind:
    """How to make, and re-open, a store of one kind."""

    def __init__(self, name, tmp_path):
        self.name, self.path = name, tmp_path / "out.h5"
        self._mem = MemoryStore()

    def new(self):
        return self._mem if self.name == "memory" else HDF5Store(self.path)

    def read(self, store):
        return store.results() if self.name == "memory" else open_results(self.path)


@pytest.fixture(params=["memory", "hdf5"])
def kind(request, tmp_path):
    return Kind(request.param, tmp_path)


def _direct(sweep, i):
    c = sweep.cells[i]
    return stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())


def test_parts_in_any_order_assemble_to_one_call(kind, sweep, parts):
    store = kind.new()
    state = store.open(sweep)
    assert state.done.as_dict() == {} and not state.complete
    shuffled = list(parts)
    random.Random(4).shuffle(shuffled)
    for p in shuffled:
        store.commit(p)
    store.finish()
    store.close()
    res = kind.read(store)
    assert res.complete and res.n_cells == 4 and res.fleets_done.tolist() == [23] * 4
    for i in range(4):
        run, cell = _direct(sweep, i), res.cell(i)
        for key in ("passage_time", "passage_cycle", "end_time", "events", "occupancy"):
            a, b = getattr(run, key), getattr(cell, key)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
        # the stored sum is the correctly rounded exact sum over fleets
        fsum = [math.fsum(run.occupancy[:, j]) for j in range(run.occupancy.shape[1])]
        assert cell.occupancy_sum.tolist() == fsum
        assert cell.fleet_index.tolist() == list(range(23))


def test_resume_reports_exactly_what_was_committed(kind, sweep, parts):
    store = kind.new()
    store.open(sweep)
    kept = parts[::3]
    for p in kept:
        store.commit(p)
    store.close()
    reopened = kind.new()
    state = reopened.open(sweep)
    expect = {}
    for (p,) in kept:
        expect.setdefault(p.cell, []).append((p.start, p.stop))
    assert state.done.as_dict() == {c: sorted(r) for c, r in expect.items()}
    assert not state.complete
    reopened.close()


def test_a_cell_is_the_same_whatever_the_order_of_its_parts(sweep, parts):
    """cell_from_parts, which both the HDF5 writer and the readers of parts use,
    puts each part's fleets at their place: parts in any order (unit files are
    read in name order) give the same cell, bit for bit."""
    cell = [u[0] for u in parts if u[0].cell == 2]
    for keep in (True, False):
        ordered = cell_from_parts(sweep.cells[2], cell, keep_per_fleet=keep)
        shuffled = cell_from_parts(sweep.cells[2], cell[::-1], keep_per_fleet=keep)
        some = cell_from_parts(sweep.cells[2], [cell[3], cell[0]], keep_per_fleet=keep)
        assert ordered.fleet_index.tolist() == shuffled.fleet_index.tolist() == list(range(23))
        assert some.fleet_index.tolist() == [0] + list(range(10, 23))
        for name, arr in ordered.arrays.items():
            if arr is None:
                continue
            assert shuffled.arrays[name].tobytes() == arr.tobytes(), name
            assert some.arrays[name].tobytes() == arr[some.fleet_index].tobytes(), name
        for name, total in ordered.sums.items():
            assert shuffled.sums[name].tobytes() == total.tobytes(), name
    run = _direct(sweep, 2)
    assert ordered.passage_cycle.tobytes() == run.passage_cycle.tobytes()


def test_a_resume_with_only_the_assembly_left_starts_no_executor(tmp_path, sweep, parts):
    """Every unit kept, the output not yet assembled (a full disk at the end):
    the same command with a Dask executor assembles it without starting one
    (nor asking a cluster it never started for its slots)."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for unit in parts:
        store.commit(unit)
    store.close()
    out = stormsim.run_sweep(sweep, tmp_path / "out.h5", executor="local:1", progress="none")
    assert out.status == "complete" and out.executor == "" and out.fleets_run == 0
    assert open_results(tmp_path / "out.h5").complete


def test_partial_results_hold_the_fleets_done(kind, sweep, parts):
    store = kind.new()
    store.open(sweep)
    kept = [u for u in parts if u[0].cell == 1 and u[0].start != 1]   # fleets 0, 9..22 of cell 1
    for p in kept:
        store.commit(p)
    res = kind.read(store)
    assert not res.complete
    assert res.fleets_done.tolist() == [0, 15, 0, 0]
    cell = res.cell(1)
    run = _direct(sweep, 1)
    idx = np.r_[0, 9:23]
    assert cell.fleet_index.tolist() == idx.tolist()
    assert cell.passage_cycle.tobytes() == run.passage_cycle[idx].tobytes()
    assert cell.occupancy.tobytes() == run.occupancy[idx].tobytes()
    empty = res.cell(0)
    assert empty.fleets_done == 0 and empty.occupancy.shape == (0, 4)
    # the HDF5 store holds its lock while open: a reader sees the sweep running
    state = "RUNNING (pid" if kind.name == "hdf5" else "UNFINISHED: 0/4 cells done"
    assert state in res.table() and "0/4 cells done" in res.table()
    store.close()


def test_complete_store_reopens_complete(kind, sweep, parts):
    store = kind.new()
    store.open(sweep)
    for p in parts:
        store.commit(p)
    store.finish()
    store.close()
    state = kind.new().open(sweep)
    assert state.complete
    assert state.done.as_dict() == {c.index: [(0, c.fleets)] for c in sweep.cells}


def test_a_different_sweep_is_refused_unless_overwrite(kind, sweep, parts):
    store = kind.new()
    store.open(sweep)
    store.commit(parts[0])
    store.close()
    other = parse_sweep(OTHER, "other.toml")
    with pytest.raises(SweepError, match=r"different sweep .*other\.toml"):
        kind.new().open(other)
    store = kind.new()
    state = store.open(other, overwrite=True)
    assert state.done.as_dict() == {}
    store.close()


def test_sum_mode_keeps_only_the_exact_sum(kind):
    sw = parse_sweep(SWEEP.replace('name = "store test"', 'occupancy = "sum"'))
    store = kind.new()
    store.open(sw)
    for c in sw.cells:
        for a, b in ((0, 5), (5, c.fleets)):
            store.commit(run_unit(make_unit(sw, c.index, a, b)))
    store.finish()
    store.close()
    res = kind.read(store)
    for i in range(sw.n_cells):
        cell, run = res.cell(i), _direct(sw, i)
        assert cell.occupancy is None
        assert cell.occupancy_sum.tolist() == [math.fsum(run.occupancy[:, j])
                                               for j in range(run.occupancy.shape[1])]


def test_units_packing_several_cells(kind, sweep):
    """Small cells packed into one unit (one file on disk) read back per cell."""
    from stormsim.sweep.planner import Planner

    store = kind.new()
    store.open(sweep)
    planner = Planner(sweep, FleetRanges(), target_seconds=10.0)     # room for every cell at once
    task = planner.next()
    assert len({p.cell for p in task.pieces}) > 1                     # cells were packed
    units = [task]
    while (u := planner.next()) is not None:
        units.append(u)
    assert len(units) < sweep.n_cells
    task = units[0]
    for u in units:
        store.commit(run_unit(u))
    store.finish()
    store.close()
    res = kind.read(store)
    for i in range(4):
        run, cell = _direct(sweep, i), res.cell(i)
        assert cell.occupancy.tobytes() == run.occupancy.tobytes()
        assert cell.passage_time.tobytes() == run.passage_time.tobytes()


# -- exact sums -----------------------------------------------------------------

finite = st.floats(min_value=0.0, max_value=1e300, allow_nan=False, allow_infinity=False,
                   allow_subnormal=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=60), st.integers(0, 60))
def test_exact_sums_split_anywhere_equal_fsum(values, cut):
    a = np.array(values)
    cut = min(cut, a.size)
    whole = exact_column_sums(a)
    halves = [x + y for x, y in zip(exact_column_sums(a[:cut]), exact_column_sums(a[cut:]))]
    assert whole == halves
    assert exact_to_float(whole).tolist() == [math.fsum(values)]


def test_exact_sums_columns_and_signs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((500, 7)) * np.exp(rng.uniform(-300, 300, (500, 7)))
    a[::17] = 5e-324                                      # subnormals
    got = exact_to_float(exact_column_sums(a))
    assert got.tolist() == [math.fsum(a[:, j]) for j in range(7)]
    with pytest.raises(ValueError, match="finite"):
        exact_column_sums(np.array([1.0, np.inf]))


# -- HDF5 only ------------------------------------------------------------------

def _complete(tmp_path, sweep, parts):
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for p in parts:
        store.commit(p)
    store.finish()
    store.close()
    return tmp_path / "out.h5"


def test_layout_reads_with_plain_h5py(tmp_path, sweep, parts):
    path = _complete(tmp_path, sweep, parts)
    assert not (tmp_path / "out.h5.parts").exists()
    assert not (tmp_path / "out.h5.tmp").exists()
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "stormsim.sweep" and f.attrs["format_version"] == 2
        assert f.attrs["stormsim_version"] == stormsim.__version__
        assert f.attrs["sweep_hash"] == sweep.hash and f.attrs["n_cells"] == 4
        assert json.loads(f.attrs["grid_keys"]) == ["N", "load"]
        assert f.attrs["sweep_toml"] == SWEEP
        assert f["params/N"][()].tolist() == [3, 3, 6, 6]
        assert f["params/load"][()].tolist() == [0.4, 0.9, 0.4, 0.9]
        assert f["params/launch"].asstr()[()].tolist() == ["random"] * 4
        assert f["params/run_seed"][()].tolist() == [c.run_seed for c in sweep.cells]
        g = f["cells/000003"]
        assert g["occupancy"].shape == (23, 7) and g["occupancy"].dtype == np.float64
        assert g["passage_cycle"].dtype == np.int64 and g["passage_time"].shape == (23,)
        assert g["occupancy_sum"].shape == (7,)
        assert g["T"][()].tolist() == [1.0] * 6 and g["f"].shape == (7,)
        assert json.loads(g.attrs["params"])["N"] == 6


def test_invalid_and_temporary_parts_are_redone(tmp_path, sweep, parts):
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for p in parts[:6]:
        store.commit(p)
    store.close()
    d = tmp_path / "out.h5.parts"
    names = sorted(x.name for x in d.glob("*.npz"))
    (d / names[0]).write_bytes(b"truncated")                    # not a zip
    raw = bytearray((d / names[1]).read_bytes())                # a flipped byte: CRC
    raw[len(raw) // 2] ^= 0xFF
    (d / names[1]).write_bytes(bytes(raw))
    (d / (names[2] + ".tmp999")).write_bytes(b"half written")   # killed mid-write
    store = HDF5Store(tmp_path / "out.h5")
    state = store.open(sweep)
    assert store.removed_invalid == 2
    assert sum(len(r) for r in state.done.as_dict().values()) == 4
    assert not any(".tmp" in x.name for x in d.iterdir())
    store.close()


def test_final_file_never_half_there(tmp_path, sweep, parts):
    """A crash between writing OUTPUT.tmp and renaming it, then a crash after
    the rename but before the parts are removed: each rerun ends complete."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for p in parts:
        store.commit(p)

    with inject_fault("atomic:before-replace", KeyboardInterrupt("killed")), \
            pytest.raises(KeyboardInterrupt):
        store.finish()
    store.close()
    assert not (tmp_path / "out.h5").exists() and (tmp_path / "out.h5.tmp").exists()

    store = HDF5Store(tmp_path / "out.h5")
    state = store.open(sweep)                          # everything is still done
    assert sum(b - a for r in state.done.as_dict().values() for a, b in r) == 4 * 23
    with inject_fault("store:before-parts-removed", KeyboardInterrupt("killed")), \
            pytest.raises(KeyboardInterrupt):
        store.finish()
    store.close()
    assert (tmp_path / "out.h5").exists() and (tmp_path / "out.h5.parts").exists()
    state = HDF5Store(tmp_path / "out.h5").open(sweep)
    assert state.complete and not (tmp_path / "out.h5.parts").exists()


def test_refusals_name_the_output(tmp_path, sweep):
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = 1
    before = foreign.read_bytes()
    with pytest.raises(SweepError, match=r"foreign\.h5 exists and is not a stormsim sweep "
                                         r"result.*--overwrite"):
        HDF5Store(foreign).open(sweep)
    assert foreign.read_bytes() == before
    with pytest.raises(SweepError, match=r"the directory .*nowhere does not exist"):
        HDF5Store(tmp_path / "nowhere" / "x.h5").open(sweep)
    with pytest.raises(SweepError, match="is a directory"):
        HDF5Store(tmp_path).open(sweep)
    with pytest.raises(SweepError, match="no such result"):
        open_results(tmp_path / "missing.h5")
    with pytest.raises(SweepError, match="not a stormsim sweep result"):
        open_results(foreign)


def test_one_writer_at_a_time(tmp_path, sweep):
    first = HDF5Store(tmp_path / "out.h5")
    first.open(sweep)
    with pytest.raises(ResourceError, match=rf"another stormsim process \(pid {os.getpid()}\)"):
        HDF5Store(tmp_path / "out.h5").open(sweep)
    first.close()
    second = HDF5Store(tmp_path / "out.h5")
    second.open(sweep)
    second.close()


def test_overwrite_respects_another_process_lock(tmp_path, sweep, parts):
    """--overwrite takes the lock before discarding anything: while another
    store writes into OUTPUT, it is refused and the other run's units stay."""
    first = HDF5Store(tmp_path / "out.h5")
    first.open(sweep)
    first.commit(parts[0])
    other = parse_sweep(OTHER, "other.toml")
    with pytest.raises(ResourceError, match=r"another stormsim process \(pid \d+\) is running"):
        HDF5Store(tmp_path / "out.h5").open(other, overwrite=True)
    for p in parts[1:]:
        first.commit(p)
    first.finish()                                   # its units are all still there
    first.close()
    assert open_results(tmp_path / "out.h5").fleets_done.tolist() == [23] * 4
    # a finished result is also discarded under the lock, and only when it is free
    second = HDF5Store(tmp_path / "out.h5")
    assert not second.open(other, overwrite=True).complete
    assert not (tmp_path / "out.h5").exists()
    with pytest.raises(ResourceError, match="another stormsim process"):
        HDF5Store(tmp_path / "out.h5").open(sweep, overwrite=True)
    second.close()


def test_empty_parts_of_another_sweep_are_replaced(tmp_path, sweep, parts):
    """Parts with no unit (a run that ended before its first unit) hold nothing
    to lose: another sweep may use the output; with units it is refused."""
    d = tmp_path / "out.h5.parts"
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    assert (d / "MANIFEST.json").exists()
    store.close()
    assert not d.exists()                            # nothing finished: nothing left
    d.mkdir()                                        # as an older version left them
    man = {"format": "stormsim.sweep.parts", "sweep_hash": "0" * 64, "sweep_name": "old",
           "stormsim_version": "0.0"}
    (d / "MANIFEST.json").write_text(json.dumps(man))
    (d / "LOCK").write_text("pid 1\n")
    store = HDF5Store(tmp_path / "out.h5")
    assert store.open(sweep).done.as_dict() == {}
    assert json.loads((d / "MANIFEST.json").read_text())["sweep_hash"] == sweep.hash
    store.commit(parts[0])
    store.close()
    with pytest.raises(SweepError, match=r"holds finished units of a different sweep"):
        HDF5Store(tmp_path / "out.h5").open(parse_sweep(OTHER, "other.toml"))


def test_only_fleets_differ_is_named(tmp_path, sweep, parts):
    """More fleets do not extend an output (docs/FORMAT.md): the refusal says
    that only 'fleets' differs, and what to do."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    store.commit(parts[0])
    store.close()
    more = parse_sweep(SWEEP.replace("fleets = 23", "fleets = 40"), "more.toml")
    msg = (r"key 'fleets' differs \(fleets = 23 there, 40 here\)\. An output cannot be "
           r"extended to more \(or cut to fewer\) fleets.*run with the stored settings to "
           r"resume that output, or write this one to another output")
    with pytest.raises(SweepError, match=r"holds finished units of a different sweep.*" + msg):
        HDF5Store(tmp_path / "out.h5").open(more)
    with pytest.raises(SweepError) as exc:           # any other difference: no such hint
        HDF5Store(tmp_path / "out.h5").open(parse_sweep(OTHER, "other.toml"))
    assert "key 'fleets'" not in str(exc.value)
    _complete(tmp_path, sweep, parts[1:])
    with pytest.raises(SweepError, match=r"holds the results of a different sweep.*" + msg):
        HDF5Store(tmp_path / "out.h5").open(more)


def test_a_changed_seed_or_algorithm_version_is_refused_by_name(tmp_path, sweep, parts):
    """A resume refuses any difference and names it: a changed seed by its key
    and values, units made by another algorithm version by that version."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    store.commit(parts[0])
    store.close()
    seeded = parse_sweep(SWEEP.replace("[grid]", "seed = 7\n[grid]"), "seeded.toml")
    with pytest.raises(SweepError, match=r"key 'seed' differs \(seed = 0 there, 7 here\)"):
        HDF5Store(tmp_path / "out.h5").open(seeded)
    man_path = tmp_path / "out.h5.parts" / "MANIFEST.json"
    man = json.loads(man_path.read_text())
    man["algorithm_version"], man["stormsim_version"] = 1, "0.1.0"
    man_path.write_text(json.dumps(man))
    with pytest.raises(SweepError, match=r"the algorithm version differs \(1 there, made by "
                                         rf"stormsim 0\.1\.0; {ALGORITHM_VERSION} here\)"):
        HDF5Store(tmp_path / "out.h5").open(sweep)


def test_every_resolved_setting_is_recorded_with_the_result(tmp_path, sweep, parts):
    """The result's attributes hold the algorithm version and every cell's
    resolved settings (defaults filled in), beside the numbers."""
    _complete(tmp_path, sweep, parts)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert int(f.attrs["algorithm_version"]) == ALGORITHM_VERSION
        settings = json.loads(f.attrs["settings"])
    assert settings["algorithm_version"] == ALGORITHM_VERSION
    first = settings["cells"][0]["values"]
    assert first["fast_forward"] == "auto" and first["seed"] == 0 and first["cycles"] == 120
    assert len(settings["cells"]) == sweep.n_cells


def test_a_changed_fast_forward_is_refused_and_named(tmp_path, sweep, parts):
    """fast_forward keeps the run seeds but not the digits (to rounding): an
    output begun with one value is not resumed with the other (its numbers
    would depend on where it was resumed), and the refusal names the key."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    store.commit(parts[0])
    store.close()
    fast = parse_sweep(SWEEP.replace("[grid]", "fast_forward = true\n[grid]"), "fast.toml")
    assert [c.run_seed for c in fast.cells] == [c.run_seed for c in sweep.cells]
    assert fast.hash != sweep.hash
    msg = (r"key 'fast_forward' differs \(fast_forward = \"auto\" there, true here\)\..*one "
           r"output cannot mix them.*run with the stored settings to resume that output")
    with pytest.raises(SweepError, match=r"holds finished units of a different sweep.*" + msg):
        HDF5Store(tmp_path / "out.h5").open(fast)
    _complete(tmp_path, sweep, parts[1:])
    with pytest.raises(SweepError, match=r"holds the results of a different sweep.*" + msg):
        HDF5Store(tmp_path / "out.h5").open(fast)
    # the default, written out, is the same sweep as the key left out
    same = parse_sweep(SWEEP.replace("[grid]", "fast_forward = \"auto\"\n[grid]"), "same.toml")
    assert same.hash == sweep.hash
    assert HDF5Store(tmp_path / "out.h5").open(same).complete


def test_resume_deletes_only_bad_units(tmp_path, sweep, parts):
    """A truncated unit is deleted and redone; an error that says nothing about
    the file (OSError from the disk, MemoryError) propagates and deletes nothing."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for p in parts[:3]:
        store.commit(p)
    store.close()
    d = tmp_path / "out.h5.parts"
    names = sorted(x.name for x in d.glob("*.npz"))
    raw = (d / names[0]).read_bytes()
    (d / names[0]).write_bytes(raw[: len(raw) // 2])             # truncated zip

    for err in (OSError, MemoryError):
        with inject_fault("parts:read-unit", err("transient")), \
                pytest.raises(err, match="transient"):
            HDF5Store(tmp_path / "out.h5").open(sweep)
        assert sorted(x.name for x in d.glob("*.npz")) == names   # nothing deleted
    store = HDF5Store(tmp_path / "out.h5")
    state = store.open(sweep)
    assert store.removed_invalid == 1
    assert sorted(x.name for x in d.glob("*.npz")) == names[1:]
    assert sum(len(r) for r in state.done.as_dict().values()) == 2
    store.close()


@pytest.mark.parametrize("target", [1e-6, 1e-3, 0.05, 10.0])
def test_planner_units_tile_the_fleets_within_their_bounds(sweep, target):
    """The planner's sizes are a heuristic; what it must keep are bounds: the
    units tile every fleet once, in pieces of at most max_fleets, at most
    max_pieces to a unit and about max_bytes of results, and a cell's pieces
    grow at most ``growth`` times per unit once its speed is measured."""
    from stormsim.sweep.planner import Planner

    done = FleetRanges({1: [(3, 9)]})                   # a resumed sweep
    planner = Planner(sweep, done, target_seconds=target, max_fleets=7, max_pieces=3,
                      max_bytes=64 << 10)
    seen = FleetRanges(done.as_dict())
    last: dict = {}
    while (unit := planner.next()) is not None:
        assert 1 <= len(unit.pieces) <= 3
        size = sum((p.stop - p.start) * planner.bytes_per_fleet(p.cell) for p in unit.pieces)
        assert size <= 64 << 10 or unit.fleets == 1
        for p in unit.pieces:
            n = p.stop - p.start
            assert 1 <= n <= 7
            if p.cell in last:
                assert n <= planner.growth * last[p.cell] + 1e-9
            last[p.cell] = n
            seen.add(p.cell, p.start, p.stop)              # raises on a fleet run twice

        class Measured:                                     # as run_unit reports a piece
            kind = "fleets"

            def __init__(self, p):
                self.cell, self.start, self.stop, self.seconds = p.cell, p.start, p.stop, 1e-4

        planner.feedback([Measured(p) for p in unit.pieces])
    seen.check_tiling(sweep)

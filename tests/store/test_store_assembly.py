"""The final assembly of OUTPUT from OUTPUT.parts fails, for any reason: the
store is left so that the same command resumes (the good units kept,
OUTPUT.tmp removed), the error names the output and says what to do, and the
resumed result is bit-identical to an uninterrupted one.

The disk's own refusals (full, read-only) are tested with real full disks in
tests/e2e/test_edges.py; here the failures are real bad inputs (a unit file
corrupted after the scan, a unit whose contents the scan could not check
before) and, for the kind no input explains (a bug), an exception at the
assembly's fault point."""
from __future__ import annotations

import numpy as np
import pytest

from h5compare import datasets
from stormsim.store.files import inject_fault
from stormsim.errors import ResourceError
from stormsim.sweep.spec import parse_sweep
from stormsim.store.stores import AssemblyError, HDF5Store
from stormsim.driver import run_sweep
from stormsim.sweep.cellrisk import make_risk_unit, run_risk
from stormsim.sweep.work import make_unit, run_unit

#: occupancy = "sum": the units hold per-block exact sums (the contents the
#: scan did not check before); 2 cells x 23 fleets, cut unevenly.
SWEEP = """
[sweep]
name = "assembly"
occupancy = "sum"
[fixed]
N = 4
T = 1.0
jitter = 0.02
cycles = 60
fleets = 23
[grid]
load = [0.5, 0.9]
"""
CUTS = (0, 1, 9, 10, 23)


@pytest.fixture(scope="module")
def sweep():
    return parse_sweep(SWEEP, "assembly.toml")


@pytest.fixture(scope="module")
def reference(sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "ref.h5"
    run_sweep(sweep, out, progress="none")
    return datasets(out)


def _units_in_parts(tmp_path, sweep):
    """OUTPUT.parts holding every fleet (4 units per cell), not assembled."""
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for c in sweep.cells:
        for a, b in zip(CUTS[:-1], CUTS[1:]):
            store.commit(run_unit(make_unit(sweep, c.index, a, b)))
    store.close()
    return sorted((tmp_path / "out.h5.parts").glob("u*.npz"))


def _left(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def _corrupt(path):
    """Flip the bits of the middle byte of a part file (its zip CRC no longer matches)."""
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_unit_corrupted_after_the_scan_is_removed_and_the_same_command_resumes(
        tmp_path, sweep, reference):
    units = _units_in_parts(tmp_path, sweep)
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)                                  # the scan: every unit is good
    _corrupt(units[1])                                 # then one goes bad (CRC)
    with pytest.raises(ResourceError, match=(
            rf"could not assemble {tmp_path / 'out.h5'}: its finished unit {units[1].name} "
            r"turned out bad \(BadZipFile: .*\) and was removed; 7 units of work are kept in "
            r".*out\.h5\.parts; run the same command to redo that unit's fleets and finish")):
        store.finish()
    store.close()
    assert _left(tmp_path) == ["out.h5.parts"], "out.h5.tmp (or out.h5) was left"
    assert sorted((tmp_path / "out.h5.parts").glob("u*.npz")) == units[:1] + units[2:]

    out = run_sweep(sweep, tmp_path / "out.h5", progress="none")
    assert out.status == "complete" and out.fleets_run == CUTS[2] - CUTS[1]
    assert _left(tmp_path) == ["out.h5"]
    assert datasets(tmp_path / "out.h5") == reference


def test_a_unit_with_blocks_outside_its_fleets_is_redone_not_assembled(
        tmp_path, sweep, reference):
    """A unit whose block sums name a block its fleets do not touch (a valid
    zip, right shapes): before, the scan kept it and every assembly failed
    (IndexError) or, for a block in range, summed it into the wrong block."""
    units = _units_in_parts(tmp_path, sweep)
    with np.load(units[0]) as z:
        arrays = dict(z)
    name = next(k for k in arrays if k.endswith("_blocks"))
    rows = arrays[name].copy()
    rows[:, 0] = str(10 ** 6)                          # no cell has that many blocks
    arrays[name] = rows
    with open(units[0], "wb") as fh:
        np.savez(fh, **arrays)

    out = run_sweep(sweep, tmp_path / "out.h5", progress="none")
    assert out.status == "complete" and out.fleets_run == CUTS[1] - CUTS[0]
    assert _left(tmp_path) == ["out.h5"]
    assert datasets(tmp_path / "out.h5") == reference


def test_any_other_assembly_failure_keeps_every_unit_and_says_so(tmp_path, sweep, reference):
    """A ValueError from inside the writing (h5py raises them, e.g. 'name
    already exists', a bug once) is not the user's input: the CLI
    must not call it one (exit 2); it keeps everything and says what to do."""
    units = _units_in_parts(tmp_path, sweep)
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    with inject_fault("atomic:before-replace", ValueError("Unable to synchronously create "
                                                          "dataset (name already exists)")), \
            pytest.raises(AssemblyError, match=(
                rf"could not assemble {tmp_path / 'out.h5'} \(ValueError: Unable to "
                r"synchronously create dataset \(name already exists\)\); nothing is lost: "
                r"8 units of work are kept in .*out\.h5\.parts, and the same command retries "
                r"only this assembly\. If it fails the same way, this is a bug")) as info:
        store.finish()
    store.close()
    assert not isinstance(info.value, ValueError)      # not "bad input" to the CLI
    assert isinstance(info.value.__cause__, ValueError)  # the traceback shows where
    assert _left(tmp_path) == ["out.h5.parts"], "out.h5.tmp (or out.h5) was left"
    assert sorted((tmp_path / "out.h5.parts").glob("u*.npz")) == units

    out = run_sweep(sweep, tmp_path / "out.h5", progress="none")
    assert out.status == "complete" and out.fleets_run == 0
    assert datasets(tmp_path / "out.h5") == reference


@pytest.mark.parametrize("exc, why", [(MemoryError(), "out of memory"),
                                      (OSError(), "OSError"),
                                      (RuntimeError("Can't decrement id ref count"),
                                       "Can't decrement id ref count")])
def test_running_out_of_memory_or_a_bare_os_error_is_the_environment_s(
        tmp_path, sweep, reference, exc, why):
    """MemoryError says nothing about stormsim (a ResourceError, not a bug), and
    an exception without a message still gets one (no IndexError building it)."""
    _units_in_parts(tmp_path, sweep)
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    with inject_fault("atomic:before-replace", exc), pytest.raises(ResourceError, match=(
            rf"could not write {tmp_path / 'out.h5'} \({why}\); 8 units of work are kept in "
            r".*out\.h5\.parts; fix that and run the same command to resume")):
        store.finish()
    store.close()
    assert _left(tmp_path) == ["out.h5.parts"]
    assert run_sweep(sweep, tmp_path / "out.h5", progress="none").fleets_run == 0
    assert datasets(tmp_path / "out.h5") == reference


@pytest.mark.parametrize("exc", [RecursionError("maximum recursion depth exceeded"),
                                 NotImplementedError("a layout not written yet")])
def test_a_runtime_error_subclass_is_a_bug_not_the_disk(tmp_path, sweep, reference, exc):
    """h5py raises a plain RuntimeError when a close fails (the environment); its
    subclasses come from code: before, they read as the disk's fault (exit 3,
    "fix that and run the same command") instead of a bug to report."""
    _units_in_parts(tmp_path, sweep)
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    with inject_fault("atomic:before-replace", exc), pytest.raises(AssemblyError, match=(
            rf"\({type(exc).__name__}: .*\); nothing is lost: 8 units of work are kept")) \
            as info:
        store.finish()
    store.close()
    assert info.value.__cause__ is exc
    assert _left(tmp_path) == ["out.h5.parts"]
    assert run_sweep(sweep, tmp_path / "out.h5", progress="none").fleets_run == 0
    assert datasets(tmp_path / "out.h5") == reference


RISK_SWEEP = SWEEP.replace("fleets = 23\n", "fleets = 23\nrisk_levels = [2]\n"
                           "risk_method = \"plain\"\nrisk_fleets = 16\n")


def test_a_storm_risk_part_corrupted_after_the_scan_is_removed_and_redone(tmp_path):
    """As for a unit, but the message says the cell's storm risk is redone (not
    "that unit's fleets"), and the same command redoes only that."""
    sweep = parse_sweep(RISK_SWEEP, "risk.toml")
    ref = tmp_path / "ref"
    ref.mkdir()
    run_sweep(sweep, ref / "out.h5", progress="none")
    reference = datasets(ref / "out.h5")
    _units_in_parts(tmp_path, sweep)
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)
    for c in sweep.cells:
        store.commit([run_risk(make_risk_unit(sweep, c.index))])
    store.close()
    risk = sorted((tmp_path / "out.h5.parts").glob("r*.npz"))
    assert len(risk) == sweep.n_cells
    store = HDF5Store(tmp_path / "out.h5")
    store.open(sweep)                                  # the scan: every part is good
    _corrupt(risk[0])                                  # then one goes bad (CRC)
    with pytest.raises(ResourceError, match=(
            rf"its finished unit {risk[0].name} turned out bad \(BadZipFile: .*\) and was "
            r"removed; .* run the same command to redo that cell's storm risk and finish")):
        store.finish()
    store.close()
    assert not risk[0].exists() and risk[1].exists()
    out = run_sweep(sweep, tmp_path / "out.h5", progress="none")
    assert out.status == "complete" and out.fleets_run == 0
    assert datasets(tmp_path / "out.h5") == reference

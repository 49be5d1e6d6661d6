"""Sweep keys of MODEL.md E1 / E2: checkpoint, snapshot, slowdown, on_busy, weights."""
from __future__ import annotations


import numpy as np
import pytest

import stormsim
from stormsim.errors import SweepError
from stormsim.store.results import open_results
from stormsim.sweep.spec import load_sweep, parse_sweep
from stormsim.driver import run_sweep

from conftest import ROOT

#: The sweep identities (sha256 over every cell's fleet, resolved settings,
#: fleets, run seed and the algorithm version) of both examples at algorithm
#: version 5, and their first run seeds, which are those of version 1 (the
#: run seed derives from the fleet and the seeded keys alone: a new default
#: changes the identity, not the draws).
EXAMPLE_HASHES = {
    "stagger_survival": "f791ccb496906d48c4ab6ffba9f8898e675c893a1597bf68c77796cdae20a7f7",
    "tail_sweep": "bf83e1902cf6e5a997cdb85cea7ca4fee5f7479802eb393e88fd2394621fa20f",
}
EXAMPLE_RUN_SEEDS = {
    "stagger_survival": [3693653558161107420, 6011118877858052850, 3206690599656814622],
    "tail_sweep": [3608559311969989947, 3614542487654973544, 5890149219418701163],
}

BASE = """
[fixed]
N = 4
load = 0.5
fleets = 6
cycles = 30
jitter = 0.01
"""


@pytest.mark.parametrize("name", sorted(EXAMPLE_HASHES))
def test_existing_sweeps_keep_their_identity_and_run_seeds(name):
    sweep = load_sweep(ROOT / "examples" / f"{name}.toml")
    assert sweep.hash == EXAMPLE_HASHES[name]
    assert [c.run_seed for c in sweep.cells[:3]] == EXAMPLE_RUN_SEEDS[name]


def test_defaults_written_out_change_nothing():
    """Giving the new keys at their defaults is the same sweep, seed for seed."""
    plain = parse_sweep(BASE)
    explicit = parse_sweep(BASE + 'checkpoint = "blocking"\nsnapshot = 0.0\nslowdown = 0.0\n'
                           'on_busy = "block"\nweights = [1.0, 1.0, 1.0, 1.0]\n')
    assert explicit.hash == plain.hash
    assert [c.run_seed for c in explicit.cells] == [c.run_seed for c in plain.cells]


@pytest.mark.parametrize("extra", [
    'checkpoint = "async"\n',
    'checkpoint = "async"\nsnapshot = 0.01\n',
    'checkpoint = "async"\nslowdown = 0.2\n',
    'checkpoint = "async"\non_busy = "skip"\n',
    'weights = [1.0, 2.0, 1.0, 1.0]\n',
    'weights = 2.0\n',  # equal weights simulate the same, but it is another fleet
])
def test_each_option_away_from_its_default_changes_the_run_seed(extra):
    plain = parse_sweep(BASE)
    other = parse_sweep(BASE + extra)
    assert other.cells[0].run_seed != plain.cells[0].run_seed


@pytest.mark.parametrize("extra,match", [
    ('snapshot = 0.1\n', r"cell 0: snapshot = 0\.1: an option of asynchronous checkpoints, but "
                         r"every job has checkpoint = 'blocking'"),
    ('on_busy = "skip"\n', r"cell 0: on_busy = 'skip': an option of asynchronous checkpoints"),
    ('checkpoint = "lazy"\n', r"\[fixed\] checkpoint = \"lazy\": must be one of 'blocking', "
                              r"'async'; checkpoint is 'blocking'"),
    ('checkpoint = "async"\nslowdown = 1.5\n', r"\[fixed\] slowdown = 1\.5: every value must be "
                                               r"in \[0, 1\]; found 1\.5; slowdown is the "
                                               r"compute slowdown eps"),
    ('checkpoint = "async"\nsnapshot = -1\n', r"\[fixed\] snapshot = -1: every value must be "
                                              r"finite and >= 0"),
    ('checkpoint = "async"\nsnapshot = [0.1, 0.2]\n', r"cell 0: snapshot = \[0\.1, 0\.2\] has 2 "
                                                      r"values but N = 4"),
    ('weights = 0\n', r"\[fixed\] weights = 0: every value must be finite and > 0"),
    ('weight = 2\n', r"\[fixed\] weight = 2: unknown key \(did you mean 'weights'\?\)"),
    ('checkpoint = "async"\nslowdown = [0.1, 0.2, 0.1, 0.1]\nlaunch = "stagger"\n',
     r"launch = 'stagger' needs identical jobs \(one T, d, jitter, snapshot, slowdown and "
     r"weight\), but slowdown differs"),
    ('checkpoint = "async"\nsnapshot = 0.9\nlaunch = "stagger"\n',
     r"launch = 'stagger' cannot be placed: the first job would fire"),
])
def test_bad_values_are_refused_with_key_value_and_rule(extra, match):
    with pytest.raises(SweepError, match=match):
        parse_sweep(BASE + extra)


GRID = BASE + """checkpoint = "async"
snapshot = [0.0, 0.01, 0.02, 0.0]
weights = [1.0, 2.0, 1.0, 3.0]
[grid]
slowdown = [0.0, 0.5, 1.0]
on_busy = ["block", "skip"]
"""


def test_an_async_sweep_runs_stores_its_options_and_reproduces_simulate(tmp_path):
    sweep = parse_sweep(GRID)
    out = tmp_path / "async.h5"
    run_sweep(sweep, out)
    res = open_results(out)
    params = res.params
    np.testing.assert_array_equal(params["slowdown"], [0.0, 0.0, 0.5, 0.5, 1.0, 1.0])
    assert list(params["on_busy"]) == ["block", "skip"] * 3
    assert list(params["checkpoint"]) == ["async"] * 6
    assert np.isnan(params["snapshot"]).all()  # per job: the column is NaN, the arrays hold it
    for c, cell in zip(sweep.cells, res):
        np.testing.assert_array_equal(cell.snapshot, [0.0, 0.01, 0.02, 0.0])
        np.testing.assert_array_equal(cell.weights, [1.0, 2.0, 1.0, 3.0])
        np.testing.assert_array_equal(cell.slowdown, c.fleet.slowdown)
        run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
        np.testing.assert_array_equal(cell.occupancy, run.occupancy)
        np.testing.assert_array_equal(cell.end_time, run.end_time)


def test_files_without_the_option_arrays_read_as_defaults(tmp_path):
    """A file from before these keys has no snapshot/slowdown/weights datasets."""
    import h5py

    out = tmp_path / "plain.h5"
    run_sweep(parse_sweep(BASE), out)
    with h5py.File(out, "r+") as f:
        for g in f["cells"].values():
            for name in ("snapshot", "slowdown", "weights"):
                del g[name]
    cell = next(iter(open_results(out)))
    np.testing.assert_array_equal(cell.weights, np.ones(4))
    np.testing.assert_array_equal(cell.snapshot, np.zeros(4))

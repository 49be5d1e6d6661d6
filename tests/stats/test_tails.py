"""Tail levels k of P(n_w >= k): resolved per cell, never silently clipped."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stormsim.cli import main
from stormsim.errors import SpecError
from stormsim.store.results import tail_level
from stormsim.sweep.spec import parse_sweep
from stormsim.store.stores import MemoryStore
from stormsim.driver import run_sweep

TWO_N = """
[sweep]
name = "tails"
[fixed]
load = 0.7
jitter = 0.01
cycles = 200
fleets = 6
[grid]
N = [4, 8]
"""


@pytest.fixture(scope="module")
def res():
    store = MemoryStore()
    run_sweep(parse_sweep(TWO_N), store, progress="none")
    return store.results()


@pytest.fixture(scope="module")
def one_n(tmp_path_factory):
    path = tmp_path_factory.mktemp("tails") / "one.h5"
    run_sweep(parse_sweep(TWO_N.replace("N = [4, 8]", "N = [8]").replace(
        "[fixed]", "[fixed]\nseed = 1")), path, progress="none")
    return path


def test_levels_resolve_or_name_the_rule():
    assert tail_level("N/4", 8) == 2 and tail_level("N", 8) == 8 and tail_level(3, 8) == 3
    assert tail_level("N/3", 8) == 3                  # ceil(8/3)
    for spec, rule in ((0, r"tail level 0: k must be an integer >= 1"),
                       ("0", r"tail level '0': k must be an integer >= 1"),
                       (20, r"tail level 20 is k = 20, above N = 8: k must be in 1\.\.N"),
                       ("N/0.5", r"tail level 'N/0\.5': q must be >= 1"),
                       ("N/0", r"tail level 'N/0': q must be >= 1"),
                       ("x", r"tail level 'x': must be an integer k, 'N' or 'N/q'")):
        with pytest.raises(SpecError, match=rule):
            tail_level(spec, 8)


def test_summary_gives_nan_where_a_cell_is_too_small_and_refuses_where_all_are(res):
    s = res.summary(levels=[6])
    small, big = res.cell(0), res.cell(1)
    assert small.T.size == 4 and big.T.size == 8
    assert math.isnan(s["p_ge_6"][0]) and s["k_6"][0] == 0       # N = 4 < 6: no such level
    occ = big.occupancy_sum
    assert s["p_ge_6"][1] == occ[6:].sum() / occ.sum() and s["k_6"][1] == 6
    with pytest.raises(SpecError, match=r"tail level 20: above N in every cell \(N = 4, 8\)"):
        res.summary(levels=[20])
    with pytest.raises(SpecError, match=r"tail level 0: k must be an integer >= 1"):
        res.summary(levels=[0])
    with pytest.raises(SpecError, match=r"above N = 4"):
        small.p_ge(6)
    table = res.table(levels=[6])
    assert "P(n_w>=6)" in table and "'-' in P(n_w>=6): the cell has N < 6" in table


def test_inspect_refuses_levels_outside_1_to_n(one_n, capsys):
    assert main(["inspect", str(one_n), "--levels", "0,20"]) == 2
    err = capsys.readouterr().err
    assert "tail level '0': k must be an integer >= 1" in err
    assert main(["inspect", str(one_n), "--levels", "20"]) == 2
    assert "tail level '20': above N in every cell (N = 8)" in capsys.readouterr().err
    assert main(["inspect", str(one_n), "--levels", "N/4,N"]) == 0
    header = [line for line in capsys.readouterr().out.splitlines() if "P(n_w>=" in line][0]
    assert "P(n_w>=2)" in header and "P(n_w>=8)" in header     # one N: k spelled out


def test_inspect_columns_show_the_level_asked(res, one_n, capsys):
    assert main(["inspect", str(one_n), "--levels", "3"]) == 0
    out = capsys.readouterr().out
    assert "P(n_w>=3)" in out
    s = res.summary(levels=["N/2"])
    assert s["k_N_2"].tolist() == [2, 4]
    assert np.all(np.isfinite(s["p_ge_N_2"]))

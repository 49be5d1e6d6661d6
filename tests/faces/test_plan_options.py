"""stormsim plan's what-if options and flags, without running a plan: which
rows each option asks for, the fleets behind them, and every wrong input
refused before anything is simulated (one line, exit 2 on the command line)."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import stormsim
import stormsim.fleetplan
from stormsim import SpecError
from stormsim.cli import main
from stormsim.fleetplan import ASYNC_SLOWDOWN, ASYNC_SNAPSHOT, plan, what_ifs

pytest.importorskip("pint")     # fleets from physical units: the [units] extra

#: The operator's example: 12 jobs, 840 GB every 30 min of compute through 40 GB/s.
ARGS = ["--jobs", "12", "--size", "840GB", "--bandwidth", "40GB/s", "--jitter", "36s"]


def _fleet(n_jobs=12, **kw):
    return stormsim.Fleet.from_jobs(n_jobs=n_jobs, size="840 GB", compute_interval="30 min",
                                    bandwidth="40 GB/s", jitter="36 s", **kw)


def _caps(rows):
    return {name: f.max_writers for name, _, f in rows if name.startswith("writers")}


# -- the writer-cap rows ---------------------------------------------------------

def test_without_max_writers_the_one_writer_cap_row_is_at_a_quarter_of_the_fleet():
    assert _caps(what_ifs(_fleet())) == {"writers <= 3": 3}
    assert _caps(what_ifs(_fleet(max_writers=3))) == {}      # the fleet caps as much already


@pytest.mark.parametrize("max_writers", [[1, 6, 12], (12, 1, 6), "1,N/2,N", "N, 1 ,6"])
def test_max_writers_gives_one_row_per_cap_in_order(max_writers):
    rows = what_ifs(_fleet(), max_writers=max_writers)
    assert _caps(rows) == {"writers <= 1": 1, "writers <= 6": 6, "writers <= 12": 12}
    assert [name for name, _, _ in rows][-3:] == ["writers <= 1", "writers <= 6", "writers <= 12"]
    change = {name: text for name, text, _ in rows}
    assert change["writers <= 6"] == "at most 6 checkpoints write at once (a queue)"
    assert change["writers <= 12"] == "no writer cap (all 12 jobs may write at once)"
    # the other rows are the default's, fleet for fleet
    assert [r for r in rows if not r[0].startswith("writers")] == [
        r for r in what_ifs(_fleet()) if not r[0].startswith("writers")]


def test_a_single_cap_and_a_capped_fleet_loosened():
    assert _caps(what_ifs(_fleet(), max_writers=2)) == {"writers <= 2": 2}
    assert _caps(what_ifs(_fleet(max_writers=2), max_writers=np.int64(4))) == {"writers <= 4": 4}


@pytest.mark.parametrize("bad", [0, 13, "13", "", "x", "N/0", 2.5, True, [2, 2], [[2]], {2}])
def test_a_wrong_writer_cap_is_refused_naming_max_writers(bad):
    with pytest.raises(SpecError, match=r"^max_writers = .*: each K must be an integer in "
                                        r"1\.\.N = 12, 'N' or 'N/q'"):
        what_ifs(_fleet(), max_writers=bad)


# -- the async row's assumptions ----------------------------------------------------

def test_the_async_row_assumes_a_free_snapshot_and_no_slowdown_by_default():
    assert (ASYNC_SNAPSHOT, ASYNC_SLOWDOWN) == (0.0, 0.0)
    fleet = _fleet()
    (row,) = [f for name, _, f in what_ifs(fleet) if name == "async"]
    assert row == stormsim.Fleet(T=fleet.T, d=fleet.d, jitter=fleet.jitter, checkpoint="async")


def test_snapshot_and_slowdown_set_the_async_row_alone():
    fleet = _fleet()
    rows = what_ifs(fleet, snapshot="10 s", slowdown=0.05)
    (row,) = [f for name, _, f in rows if name == "async"]
    assert row == stormsim.Fleet(T=fleet.T, d=fleet.d, jitter=fleet.jitter, checkpoint="async",
                                 snapshot=10.0, slowdown=0.05)
    assert what_ifs(fleet, snapshot=10.0)[5][2].snapshot[0] == 10.0       # a number: seconds
    others = [r for r in rows if r[0] != "async"]
    assert others == [r for r in what_ifs(fleet) if r[0] != "async"]


def test_jobs_already_async_keep_their_own_snapshot_slowdown_and_rule():
    mixed = stormsim.Fleet.from_jobs(size="840 GB", compute_interval="30 min",
                                     bandwidth="40 GB/s", jitter="36 s",
                                     checkpoint=["async", "blocking", "blocking"],
                                     snapshot=["3 s", "0 s", "0 s"], slowdown=[0.2, 0.0, 0.0],
                                     on_busy=["skip", "block", "block"])
    (row,) = [f for name, _, f in what_ifs(mixed, snapshot="10 s", slowdown=0.05)
              if name == "async"]
    assert list(row.checkpoint) == ["async"] * 3
    assert row.snapshot.tolist() == [3.0, 10.0, 10.0]
    assert row.slowdown.tolist() == [0.2, 0.05, 0.05]
    assert list(row.on_busy) == ["skip", "block", "block"]


@pytest.mark.parametrize("kw, message", [
    (dict(snapshot=-1.0), r"^snapshot = -1\.0: must be a finite number >= 0"),
    (dict(snapshot="5"), r"^snapshot = '5' is a plain number: must be a time"),
    (dict(snapshot="5 GB"), r"^snapshot = '5 GB' is a size: must be a time"),
    (dict(slowdown=1.5), r"^slowdown = 1\.5: must be in \[0, 1\]"),
    (dict(slowdown="0.1"), r"^slowdown = '0\.1': must be in \[0, 1\]"),
])
def test_wrong_async_assumptions_are_refused_naming_them(kw, message):
    with pytest.raises(SpecError, match=message):
        what_ifs(_fleet(), **kw)


def test_an_all_async_fleet_has_no_async_row_to_assume_for():
    fleet = _fleet(checkpoint="async", snapshot="3 s")
    assert "async" not in [name for name, _, _ in what_ifs(fleet)]
    with pytest.raises(SpecError, match=r"^snapshot = 10\.0: an assumption of the async "
                                        r"what-if, but every job of the fleet is async already"):
        what_ifs(fleet, snapshot="10 s")


# -- plan: the options checked before anything runs -----------------------------------

@pytest.mark.parametrize("kw, message", [
    (dict(what_if=False, max_writers=3), r"^max_writers = 3: an option of the what-if rows, "
     r"but what_if = False"),
    (dict(what_if=False, snapshot="5 s"), r"^snapshot = '5 s': an option of the what-if rows"),
    (dict(max_writers=[0]), r"^max_writers = \[0\]: each K"),
    (dict(watchdog="600"), r"^watchdog = '600' is a plain number: must be a time"),
    (dict(watchdog=0.0), r"^watchdog = 0\.0: must be a finite number > 0"),
])
def test_plan_refuses_a_wrong_option_before_simulating(kw, message, monkeypatch):
    monkeypatch.setattr(stormsim.fleetplan, "storm_risk", _never)
    with pytest.raises(SpecError, match=message):
        plan(_fleet(), **kw)


def _never(*args, **kwargs):
    raise AssertionError("a wrong option must be refused before any simulation")


def test_a_one_job_fleet_has_no_storm_to_plan(monkeypatch):
    monkeypatch.setattr(stormsim.fleetplan, "storm_risk", _never)
    with pytest.raises(SpecError, match=r"^fleet has 1 job: no storm of 2 writers is possible "
                                        r"with one job"):
        plan(_fleet(1))
    for levels in ([1], "1", ["N"]):                 # whatever levels are asked
        with pytest.raises(SpecError, match=r"^fleet has 1 job"):
            plan(_fleet(1), levels)


def test_an_exact_rate_below_floats_range_is_no_zero():
    """5000 jobs at load 0.14: n_w >= 1250 has a rate far below 1e-308; its
    cells say so instead of '0 (exact)', which reads as "never"."""
    p = plan(stormsim.Fleet.identical(5000, T=1800.0, d=0.042, jitter=18.0), [2, 1250],
             what_if=False, max_seconds=2)
    assert p.rows[0].storms_per_day[1] == 0.0 and p.rows[0].method[1] == "exact"
    line = [x for x in p.table().splitlines() if x.split()[:1] == ["1250"]][0]
    assert "< 1e-300 (exact)" in line and line.rstrip().endswith("< 1e-300")


# -- the command line: each flag reaches plan --------------------------------------

@pytest.fixture
def called(monkeypatch):
    """plan's arguments, as the command passes them (no plan is run)."""
    seen = {}

    class Done:
        def __str__(self):
            return "planned"

    def fake(fleet, levels, **kw):
        seen.update(fleet=fleet, levels=levels, **kw)
        return Done()

    monkeypatch.setattr(stormsim.fleetplan, "plan", fake)
    return seen


def test_the_flags_reach_plan(called, capsys):
    assert main(["plan", *ARGS, "--interval", "30min", "--max-writers", "2,N/4",
                 "--snapshot", "5s", "--slowdown", "0.05"]) == 0
    assert capsys.readouterr().out == "planned\n"
    assert called["fleet"] == _fleet()
    assert called["levels"] == stormsim.fleetplan.DEFAULT_LEVELS
    assert (called["max_writers"], called["snapshot"], called["slowdown"]) == ("2,N/4", "5s", 0.05)


def test_without_flags_plan_gets_its_defaults(called, capsys):
    assert main(["plan", *ARGS, "--interval", "30min", "--levels", "2,6"]) == 0
    capsys.readouterr()
    assert called["levels"] == "2,6" and called["max_writers"] is None
    assert "snapshot" not in called and "slowdown" not in called        # plan's own defaults


def test_async_makes_the_fleet_async_with_its_snapshot_and_slowdown(called, capsys):
    assert main(["plan", *ARGS, "--interval", "30min", "--async", "--snapshot", "5s",
                 "--slowdown", "0.05"]) == 0
    capsys.readouterr()
    assert called["fleet"] == _fleet(checkpoint="async", snapshot="5 s", slowdown=0.05)
    assert "snapshot" not in called and "slowdown" not in called        # the fleet's, not a what-if's


def test_period_is_the_start_to_start_period_of_a_job_alone(called, capsys):
    """--period 30.35min: 1821 s less the lone write (840 GB / 40 GB/s = 21 s)
    is 30 min of compute, the --interval 30min fleet; async with a 5 s
    snapshot: 1821 s less the snapshot (no slowdown) is 1816 s of compute."""
    assert main(["plan", *ARGS, "--period", "30.35min"]) == 0
    capsys.readouterr()
    fleet = called["fleet"]
    # 30.35 min in seconds is one rounding from 1821; T is one subtraction from it
    np.testing.assert_allclose(fleet.T, 1800.0, rtol=1e-14)
    assert main(["plan", *ARGS, "--period", "30.35min", "--async", "--snapshot", "5s"]) == 0
    capsys.readouterr()
    np.testing.assert_allclose(called["fleet"].T, 1816.0, rtol=1e-14)


@pytest.mark.parametrize("argv, message", [
    ([*ARGS, "--interval", "30min", "--period", "31min"], r"^stormsim: error: plan: --interval "
     r"30min and --period 31min: give one"),
    (["--jobs", "12", "--size", "840GB", "--bandwidth", "40GB/s", "--jitter", "36s"],
     r"give a job table \(CSV\) or --interval \(identical jobs"),
    (["jobs.csv", "--bandwidth", "40GB/s", "--async"], r"give a job table or --async, not both"),
    ([*ARGS, "--interval", "30min", "--no-what-if", "--max-writers", "3"],
     r"plan: --max-writers set what-if rows, but --no-what-if leaves them out"),
    ([*ARGS, "--interval", "30min", "--no-what-if", "--snapshot", "5s", "--slowdown", "0.1"],
     r"plan: --snapshot, --slowdown set what-if rows"),
    # a value that looks like an option is still the option's: refused for what it is
    ([*ARGS[:2], "--size", "-840GB", *ARGS[4:], "--interval", "30min"],
     r"^stormsim: error: size = '-840GB': must be finite and > 0\n$"),
    ([*ARGS, "--interval", "-30min"], r"compute_interval = '-30min': must be finite and > 0"),
    ([*ARGS[:-2], "--jitter", "-.5s", "--interval", "30min"], r"jitter = '-.5s': must be finite"),
])
def test_wrong_flags_are_one_line_and_exit_2(argv, message, called, capsys):
    assert main(["plan", *argv]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert err.count("\n") == 1 and "expected one argument" not in err and not called


def test_a_watchdog_is_echoed_as_given(monkeypatch, capsys):
    """'--watchdog 600' is refused as the plain number it is, shown as typed
    (a time needs its unit: '600s' or '10min')."""
    monkeypatch.setattr(stormsim.fleetplan, "storm_risk", _never)
    assert main(["plan", *ARGS, "--interval", "30min", "--watchdog", "600"]) == 2
    err = capsys.readouterr().err
    assert err == ("stormsim: error: watchdog = '600' is a plain number: must be a time, "
                   "e.g. '30 min'\n"), err


def test_the_help_states_the_async_what_if_s_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 0 s: a free snapshot)" in text and "(default 0: none)" in text
    assert "--period PERIOD" in text and "--max-writers K[,K...]" in text
    assert "(default: 2,N/4,N/2, the distinct ones >= 2)" in text


def test_a_simulated_level_never_left_says_so():
    """A simulation that saw no storm begin while k or more wrote all the time
    (5000 jobs at load 58, async, 4 fleets: too few for the 95 % verdict
    "saturated"): the cell says the level was never left, not "< x (none seen)"."""
    p = plan(stormsim.Fleet.identical(4, T=1800.0, d=21.0, jitter=18.0), [2], what_if=False,
             max_seconds=2)
    row = dataclasses.replace(p.rows[0], method=np.array(["plain"]),
                              storms_per_day=np.array([0.0]), p_ge=np.array([0.9999]),
                              storms_per_day_hi=np.array([0.002]))
    text = dataclasses.replace(p, rows=[row]).table()
    assert "never left in the run (99.99% of the time)" in text

"""plan's time budget bounds the whole plan: every simulation is sized from a
named share of it (``BUDGET_SHARES``) by the counted cost of its events, and
what a share cannot buy is said in words. Sizes are checked by counted work
(fleets x cycles), never by the wall clock."""
import math

import numpy as np
import pytest

import stormsim
from stormsim import cli
from stormsim.engine.cost import run_seconds
from stormsim.errors import SpecError
from stormsim.fleetplan import (BUDGET_SHARES, DURATION_CYCLES, DURATION_FLEETS,
                                DURATION_LEAST, NOT_IN_BUDGET, PlanStep, _effort, plan,
                                settle_hours)


def _fleet(n=12):
    return stormsim.Fleet.from_jobs(n_jobs=n, size="840 GB", compute_interval="30 min",
                                    bandwidth="40 GB/s", jitter="36 s")


def test_the_shares_are_named_and_add_up_to_the_budget():
    assert set(BUDGET_SHARES) == {"risk", "durations", "stagger", "settle"}
    assert sum(BUDGET_SHARES.values()) == pytest.approx(1.0)


def test_an_effort_is_the_full_one_where_affordable_else_cut_then_refused():
    full = run_seconds(5000, DURATION_FLEETS, DURATION_CYCLES)
    assert _effort(5000, full * 1.01, DURATION_FLEETS, DURATION_CYCLES,
                   DURATION_LEAST) == (DURATION_FLEETS, DURATION_CYCLES)
    f, c = _effort(5000, full / 10, DURATION_FLEETS, DURATION_CYCLES, DURATION_LEAST)
    assert (f, c) == (DURATION_FLEETS // 10, DURATION_CYCLES)          # fleets cut first
    assert run_seconds(5000, f, c) <= full / 10
    f, c = _effort(5000, full / 200, DURATION_FLEETS, DURATION_CYCLES, DURATION_LEAST)
    assert f == DURATION_LEAST[0] and DURATION_LEAST[1] <= c < DURATION_CYCLES   # then cycles
    assert run_seconds(5000, f, c) <= full / 200
    assert _effort(5000, full / 1e6, DURATION_FLEETS, DURATION_CYCLES, DURATION_LEAST) is None
    # the stagger's way round: the cycle cap first, the fleets kept
    f, c = _effort(12, run_seconds(12, 200, 20_000) / 4, 200, 20_000, (20, 4),
                   cut_cycles_first=True)
    assert (f, c) == (200, 5000)


def test_what_a_budget_cannot_buy_is_said_in_words_never_a_bare_number():
    """1e-5 s buys no simulation of 12 jobs (its least effort alone costs more),
    whatever this machine's speed: every simulated number says so."""
    p = plan(_fleet(), levels=[2], what_if=False, max_seconds=1e-5, seed=1)
    row = p.rows[0]
    assert row.method.tolist() == ["exact"]           # the law costs no budget
    for x in (row.checkpoint_p99, row.over_watchdog, row.wait_p99, row.stagger_hours):
        assert math.isnan(x.value) and x.method == NOT_IN_BUDGET
    assert math.isnan(p.settle_hours) and p.settle_method.startswith(NOT_IN_BUDGET)
    text = str(p)
    assert "nan" not in text.lower()
    assert "the time for storms to settle" in text and NOT_IN_BUDGET in text
    note = next(n for n in p.notes if n.startswith("Budget: 1e-05 s"))
    assert "checkpoint durations: not estimated per scenario" in note
    assert "stagger runs: not all estimated" in note


def test_a_storm_risk_the_budget_cannot_buy_is_not_estimated():
    """The async row (no law) of 12 jobs at 1e-5 s: not a number, the words."""
    p = plan(_fleet(), levels=[2], max_seconds=1e-5, seed=1, max_writers=[12])
    row = next(r for r in p.rows if r.scenario == "async")
    assert row.method.tolist() == ["budget"] and np.isnan(row.storms_per_day).all()
    line = next(x for x in str(p).splitlines() if x.strip().startswith("async "))
    assert "not estimated in the budget" in line
    assert any(n.startswith("async: storms per day not estimated in the budget") for n in p.notes)


def test_settling_without_budget_left_says_so():
    hours, how = settle_hours(_fleet(), seed=1, max_seconds=1e-9)
    assert math.isnan(hours) and how.startswith(NOT_IN_BUDGET)


def test_progress_is_told_each_stage_a_callable_true_or_none(capsys):
    steps = []
    plan(_fleet(), levels=[2], what_if=False, max_seconds=1e-5, seed=1, progress=steps.append)
    assert all(isinstance(s, PlanStep) for s in steps)
    assert [s.stage for s in steps[:3]] == ["storm risk", "checkpoint durations", "stagger"]
    assert steps[3].scenario == "settling"
    assert str(steps[0]).startswith("stormsim plan: fleet (1/1): storm risk (")
    plan(_fleet(), levels=[2], what_if=False, max_seconds=1e-5, seed=1, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(steps) and all(x.startswith("stormsim plan: ") for x in err)
    plan(_fleet(), levels=[2], what_if=False, max_seconds=1e-5, seed=1, progress=None)
    assert capsys.readouterr().err == ""
    with pytest.raises(SpecError, match="progress = 'yes'"):
        plan(_fleet(), what_if=False, max_seconds=1e-5, progress="yes")


def test_the_command_s_progress_shows_once_the_plan_has_run_two_seconds(capsys):
    now = [100.0]
    show = cli._PlanProgress(clock=lambda: now[0])
    step = PlanStep("fleet (1/7)", "stagger", 0.5, 60.0)
    show(step)
    assert capsys.readouterr().err == ""
    show._due()              # the timer's call at PLAN_PROGRESS_AFTER: the stage running
    assert capsys.readouterr().err == "stormsim plan: fleet (1/7): stagger (0.5 s of 60 s)\n"
    now[0] += cli.PLAN_PROGRESS_AFTER
    show(step)               # shown already: not again
    assert capsys.readouterr().err == ""
    show(PlanStep("settling", "after a synchronized restart", 2.5, 60.0))
    assert capsys.readouterr().err == ("stormsim plan: settling: after a synchronized restart "
                                       "(2.5 s of 60 s)\n")


def test_quiet_plan_prints_no_progress(capsys):
    args = ["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth",
            "40GB/s", "--jitter", "1%", "--no-what-if", "--levels", "2", "--max-seconds", "1e-5"]
    assert cli.main(args + ["--quiet"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and "not estimated in the budget" in out.out


def test_each_simulation_is_sized_within_its_share_by_its_counted_cost(monkeypatch):
    """Every run plan starts, counted (fleets x cycles x N at engine.cost's cost
    per event), fits its share of a budget too small for the full efforts:
    the durations' and stagger runs' shares split over the scenarios (fewer
    fleets or cycles than the full efforts), settling within the budget."""
    import stormsim.fleetplan as fp
    import stormsim.settling

    calls, real = [], fp.simulate

    def counted(fleet, launch="random", fleets=1000, cycles=800, **kw):
        calls.append((launch, fleets, cycles, kw.get("passage_level")))
        return real(fleet, launch=launch, fleets=fleets, cycles=cycles, **kw)

    monkeypatch.setattr(fp, "simulate", counted)
    monkeypatch.setattr(stormsim.settling, "simulate", counted)       # the restart's blocks
    budget = 0.05
    p = plan(_fleet(), levels=[2], max_seconds=budget, seed=1, max_writers=[12])
    among = len(p.rows)
    cost = lambda f, c: run_seconds(12, f, c)                  # noqa: E731
    calibration = [c for c in calls if c[1] == 1]
    durations = [c for c in calls if c[0] == "random" and c[1] > 1]
    stagger = [c for c in calls if c[0] == "stagger"]
    settle = [c for c in calls if c[0] == "sync"]
    assert len(calibration) <= 2 * among and len(durations) == among
    assert all(cost(f, c) <= budget * BUDGET_SHARES["durations"] / among
               for _, f, c, _ in durations)
    assert any((f, c) != (DURATION_FLEETS, DURATION_CYCLES) for _, f, c, _ in durations)
    assert all(cost(f, c) <= budget * BUDGET_SHARES["stagger"] / among for _, f, c, _ in stagger)
    assert sum(cost(f, c) for _, f, c, _ in settle) <= budget
    assert any(n.startswith(f"Budget: {budget:g} s") for n in p.notes)

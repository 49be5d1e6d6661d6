"""plan with failures (MODEL.md E8): each row's goodput and the recommended interval."""
from __future__ import annotations

import json

import numpy as np
import pytest

import stormsim
from stormsim import SpecError
from stormsim.checkpointing import recommend, simulated_goodput
from stormsim.cli import main

README = dict(n_jobs=12, size="840 GB", compute_interval="30 min", bandwidth="40 GB/s",
              jitter="1%")
FLEET = stormsim.Fleet.from_jobs(**README)

#: A small budget: the exact rows cost nothing, the goodput runs fit it.
SECONDS = 20.0


@pytest.fixture(scope="module")
def failing_plan():
    return stormsim.plan(FLEET, [2, 6], mtbf="3 h", restart="10 min", max_seconds=SECONDS)


def test_every_blocking_row_has_its_simulated_goodput(failing_plan):
    fleet_row = failing_plan.rows[0]
    failing = FLEET.replace(mtbf=3 * 3600.0, restart=600.0)
    g, _ = simulated_goodput(failing, 0, 64, 1000)
    assert fleet_row.goodput == g          # the plan's run is this run (seed 0, full effort)
    for row in failing_plan.rows:          # async and writer-capped rows too (the general kernel)
        assert row.goodput.lo <= row.goodput.value <= row.goodput.hi, row.scenario
        assert not any(r.startswith("goodput") for r in row.reasons)


def test_the_storms_are_the_long_runs_without_failures(failing_plan):
    plain = stormsim.plan(FLEET, [2, 6], what_if=False, max_seconds=SECONDS)
    np.testing.assert_array_equal(failing_plan.rows[0].storms_per_day, plain.rows[0].storms_per_day)
    assert plain.recommendation is None and "goodput" not in plain.table()
    assert f"goodput: {stormsim.fleetplan.NO_FAILURES}" in plain.rows[0].reasons


def test_the_recommendation_gains_goodput_at_a_short_mtbf(failing_plan):
    rec = failing_plan.recommendation
    best = stormsim.best_interval(FLEET, "3 h", "10 min")
    np.testing.assert_array_equal(rec.intervals, np.full(12, best.fleet_optimum))
    # 30 min against an MTBF of 3 h is too long: the shorter interval gains, and the
    # paired interval says so (a wrong recommendation would lose or tie)
    assert rec.gain.lo > 0.0 and rec.goodput_then.value > rec.goodput_now.value
    assert rec.goodput_now == failing_plan.rows[0].goodput
    text = failing_plan.table()
    assert "Checkpoint interval with failures (MTBF 3 h, restart 10 min): every job at 15 min" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_json_and_csv_carry_goodput_and_the_recommendation(failing_plan):
    doc = json.loads(failing_plan.to_json())
    assert doc["rows"][0]["goodput"]["method"].startswith("ratio over fleets")
    assert doc["recommendation"]["gain"]["value"] == pytest.approx(
        failing_plan.recommendation.gain.value)
    header = failing_plan.to_csv().splitlines()[0].split(",")
    assert {"goodput", "goodput_lo", "goodput_hi", "goodput_method"} <= set(header)


def test_a_fleets_own_failures_are_used_and_can_be_overridden():
    own = FLEET.replace(mtbf=3 * 3600.0, restart=600.0)
    a = stormsim.plan(own, [2], what_if=False, max_seconds=SECONDS)
    b = stormsim.plan(FLEET, [2], what_if=False, max_seconds=SECONDS, mtbf=3 * 3600.0,
                      restart="10 min")
    assert a.rows[0].goodput == b.rows[0].goodput
    assert a.recommendation.gain == b.recommendation.gain


@pytest.mark.parametrize(("kw", "match"), [
    (dict(restart="10 min"), r"^restart = '10 min': a restart time without failures"),
    (dict(mtbf="-3 h"), r"^mtbf = -10800.0"), (dict(mtbf="3 GB"), r"^mtbf = '3 GB'"),
    (dict(mtbf="3 h", outage_mtbf=0.0), r"^outage_mtbf = 0.0"),
])
def test_bad_failures_are_refused_by_name(kw, match):
    with pytest.raises(SpecError, match=match):
        stormsim.plan(FLEET, [2], what_if=False, max_seconds=SECONDS, **kw)


def test_a_fleet_the_law_refuses_gets_no_recommendation_and_says_why():
    mixed = stormsim.Fleet(T=[1800.0] * 6, d=[21.0] * 6, jitter=18.0, weights=[1.0, 2.0] * 3)
    p = stormsim.plan(mixed, [2], what_if=False, max_seconds=SECONDS, mtbf="3 h")
    assert p.recommendation is None
    assert any(n.startswith("Checkpoint interval: not recommended") for n in p.notes)


def test_the_command_line_takes_mtbf_restart_and_outages(capsys):
    assert main(["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth",
                 "40GB/s", "--jitter", "1%", "--levels", "2", "--no-what-if", "--mtbf", "24h",
                 "--restart", "10min", "--outage-mtbf", "30d", "--max-seconds", "20", "--quiet",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["goodput"]["value"] > 0.9 and doc["recommendation"] is not None


def test_recommend_refuses_a_fleet_that_never_fails():
    with pytest.raises(SpecError, match="never fails"):
        recommend(FLEET, 0, 8, 100)

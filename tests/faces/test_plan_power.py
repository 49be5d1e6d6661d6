"""plan with power (MODEL.md E6): each row's mean draw and its power drops per
day, the GPU form of a job's power, and the flags that set them."""
from __future__ import annotations

import json

import numpy as np
import pytest

import stormsim
from stormsim import SpecError
from stormsim.cli import main
from stormsim.plan_power import POWER_WINDOWS, default_thresholds
from stormsim.stats.power import power_law, ramp_estimate

README = dict(n_jobs=12, size="840 GB", compute_interval="30 min", bandwidth="40 GB/s",
              jitter="2%")
GPUS = dict(gpus=1024, gpu_power="700 W", gpu_idle_power="100 W")
FLEET = stormsim.Fleet.from_jobs(**README, **GPUS)

#: A small budget: the base rows are exact, their durations runs fit in full.
SECONDS = 10.0


@pytest.fixture(scope="module")
def power_plan():
    return stormsim.plan(FLEET, [2], what_if=False, max_seconds=SECONDS)


def test_a_job_draws_its_gpus_times_one_gpus_power():
    np.testing.assert_array_equal(FLEET.busy_power, np.full(12, 1024 * 700.0))
    np.testing.assert_array_equal(FLEET.idle_power, np.full(12, 1024 * 100.0))
    whole = stormsim.Fleet.from_jobs(**README, busy_power="716.8 kW", idle_power="102.4 kW")
    np.testing.assert_array_equal(whole.busy_power, FLEET.busy_power)


@pytest.mark.parametrize("given, match", [
    (dict(gpus=8), "^gpus without gpu_power and gpu_idle_power"),
    (dict(gpu_power="700 W", gpu_idle_power="100 W"), "^gpu_power without gpus"),
    (dict(**GPUS, busy_power="1 MW", idle_power="0.1 MW"), "^busy_power and gpus"),
    (dict(gpus=0, gpu_power="700 W", gpu_idle_power="100 W"), "^gpus = 0"),
    (dict(gpus=8, gpu_power="100 W", gpu_idle_power="700 W"), "idle_power"),
])
def test_a_gpu_power_that_cannot_be_is_refused_by_name(given, match):
    with pytest.raises(SpecError, match=match):
        stormsim.Fleet.from_jobs(**README, **given)


def test_a_job_table_gives_gpus_per_job_and_the_watts_once(tmp_path):
    table = tmp_path / "jobs.csv"
    table.write_text("size [GB],compute_interval [min],jitter [%],gpus\n"
                     "840,30,2,1024\n420,30,2,512\n")
    fleet = stormsim.Fleet.from_csv(table, bandwidth="40 GB/s", gpu_power="700 W",
                                    gpu_idle_power="100 W")
    np.testing.assert_array_equal(fleet.busy_power, [1024 * 700.0, 512 * 700.0])
    table.write_text("size [GB],compute_interval [min],jitter [%],gpus,gpu_power [W]\n"
                     "840,30,2,1024,700\n")
    with pytest.raises(SpecError, match="^gpu_power = '650 W': the table .* has a gpu_power"):
        stormsim.Fleet.from_csv(table, bandwidth="40 GB/s", gpu_power="650 W",
                                gpu_idle_power="100 W")


def test_the_fleet_row_has_the_laws_mean_and_the_runs_drops(power_plan):
    row = power_plan.power[0]
    assert row.scenario == "fleet" and row.reason == ""
    exact = power_law(FLEET, FLEET.busy_power, FLEET.idle_power).mean
    assert row.power_mean.value == exact and row.power_mean.method == "exact"
    assert row.drops.windows == POWER_WINDOWS
    assert row.drops.thresholds == default_thresholds(FLEET)
    # the plan's drops are the durations run's: seed 0, its full effort, these ramps
    run = stormsim.simulate(FLEET, fleets=128, cycles=400, burn_in=40, seed=0,
                            batch_size=stormsim.fleetplan._batch(12, 400),
                            ramps=(POWER_WINDOWS, default_thresholds(FLEET)))
    np.testing.assert_array_equal(row.drops.ramp_events_per_day, ramp_estimate(run).ramp_events_per_day)


def test_default_thresholds_are_one_jobs_drop_and_shares_of_the_swing():
    # drop 614.4 kW per job, swing 7.37 MW: 0.61, 1.8 and 3.7 MW to two digits
    assert default_thresholds(FLEET) == (610000.0, 1800000.0, 3700000.0)
    assert default_thresholds(stormsim.Fleet.from_jobs(**README)) == ()


def test_a_drop_of_one_job_within_a_second_is_about_every_checkpoint(power_plan):
    # one job stopping drops 0.614 MW >= 0.61 MW at once; a drop is missed only
    # where another job's write ended within the second before (rare at load
    # 0.23), so the rate is a little under N x 48 checkpoints a day
    e = power_plan.power[0].drops
    rate = e.interval(1.0, 610000.0)
    checkpoints = 12 * 86400.0 / (1800.0 + 21.0)
    assert 0.9 * checkpoints < rate.value < checkpoints


def test_the_table_and_json_show_power(power_plan):
    text = power_plan.table()
    assert "Power: drops per day" in text and "8.5 (exact)" in text
    doc = json.loads(power_plan.to_json())
    (row,) = doc["power"]
    assert row["scenario"] == "fleet" and len(row["drops"]) == 2 * 3
    cell = row["drops"][0]
    assert cell["window"] == 1.0 and cell["threshold"] == 610000.0
    assert cell["ramp_events_per_day_lo"] <= cell["ramp_events_per_day"] <= cell["ramp_events_per_day_hi"]


def test_a_plan_without_power_has_none():
    plain = stormsim.plan(stormsim.Fleet.from_jobs(**README), [2], what_if=False,
                          max_seconds=SECONDS)
    assert plain.power is None and "Power:" not in plain.table()
    assert json.loads(plain.to_json())["power"] is None


@pytest.mark.parametrize("drops, match", [
    ("-1MW", r"^drops\[0\] = '-1MW': must be finite and > 0"),
    ("5 GB", r"^drops\[0\]"),
    ("", "^drops = '': give at least one threshold"),
])
def test_bad_drops_are_refused_by_name(drops, match):
    with pytest.raises(SpecError, match=match):
        stormsim.plan(FLEET, [2], what_if=False, drops=drops, max_seconds=SECONDS)


def test_drops_need_power():
    with pytest.raises(SpecError, match="^drops = '1MW': the fleet has no power"):
        stormsim.plan(stormsim.Fleet.from_jobs(**README), [2], drops="1MW")


def test_the_command_line_takes_gpus_and_drops(capsys):
    rc = main(["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--jitter", "2%",
               "--bandwidth", "40GB/s", "--gpus", "1024", "--gpu-power", "700W",
               "--gpu-idle-power", "100W", "--drops", "1MW,5MW", "--no-what-if",
               "--levels", "2", "--max-seconds", "10", "-q", "--format", "json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["threshold"] for c in doc["power"][0]["drops"][:2]] == [1e6, 5e6]


def test_the_command_line_refuses_gpus_with_a_table(tmp_path, capsys):
    table = tmp_path / "jobs.csv"
    table.write_text("size [GB],compute_interval [min],jitter [%]\n840,30,2\n840,30,2\n")
    rc = main(["plan", str(table), "--bandwidth", "40GB/s", "--gpus", "8", "-q"])
    assert rc == 2
    assert "--gpus 8 with a job table: give the table a gpus column" in capsys.readouterr().err


#: A time-weighted mean of a constant draw, summed in another order: rounding only.
CONSTANT_RTOL = 1e-12


def test_every_what_if_has_its_drops_and_async_without_a_stop_drops_nothing():
    p = stormsim.plan(FLEET, [2], max_seconds=SECONDS, progress=None)
    rows = {r.scenario: r for r in p.power}
    assert list(rows) == [r.scenario for r in p.rows]
    assert all(r.drops is not None and r.reason == "" for r in p.power), p.table()
    # a free snapshot and no slowdown: no job ever stops computing, the draw is constant
    free = rows["async"]
    assert not free.drops.ramp_events_per_day.any()
    assert free.power_mean.value == pytest.approx(float(FLEET.busy_power.sum()), rel=CONSTANT_RTOL)
    # a writer cap of 3 queues the 4th writer (queued, it stops computing all the same): the
    # cap thins the 3-job drops within a second, it cannot add to them
    capped, fleet = rows["writers <= 3"].drops, rows["fleet"].drops
    assert capped.ramp_events_per_day_hi[0, 1] <= fleet.ramp_events_per_day_hi[0, 1]


def test_the_power_csv_has_a_row_per_scenario_window_and_threshold(power_plan, capsys):
    import csv
    import io

    from stormsim.plan_power import POWER_COLUMNS

    rows = list(csv.DictReader(io.StringIO(power_plan.power_csv())))
    assert len(rows) == 2 * 3 and list(rows[0]) == list(POWER_COLUMNS)
    assert float(rows[0]["ramp_events_per_day"]) == power_plan.power[0].drops.ramp_events_per_day[0, 0]
    rc = main(["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--jitter", "2%",
               "--bandwidth", "40GB/s", "--gpus", "1024", "--gpu-power", "700W",
               "--gpu-idle-power", "100W", "--no-what-if", "--levels", "2", "--max-seconds", "10",
               "-q", "--format", "csv", "--power"])
    assert rc == 0 and capsys.readouterr().out.startswith(",".join(POWER_COLUMNS))
    assert main(["plan", "--jobs", "2", "--size", "1GB", "--interval", "1min", "--jitter", "2%",
                 "--bandwidth", "1GB/s", "--power"]) == 2
    assert "--power selects the power section's CSV" in capsys.readouterr().err


def test_an_outage_is_a_step_of_the_whole_computing_draw():
    p = stormsim.plan(FLEET, [2], what_if=False, outage_mtbf="30 d", mtbf="24 h",
                      max_seconds=SECONDS)
    (note,) = [n for n in p.notes if n.startswith("Outages")]
    idle = 12 * 1024 * 100.0
    step = power_law(FLEET, FLEET.busy_power, FLEET.idle_power).mean - idle
    assert f"about {step / 1e6:.3g} MW within an instant" in note and "0.0333 a day" in note
    plain = stormsim.plan(FLEET, [2], what_if=False, mtbf="24 h", max_seconds=SECONDS)
    assert not [n for n in plain.notes if n.startswith("Outages")]


def test_an_operator_plans_power_from_a_job_table_with_gpu_counts(tmp_path, capsys):
    table = tmp_path / "jobs.csv"
    table.write_text("size [GB],compute_interval [min],jitter [%],gpus\n"
                     + "840,30,2,1024\n" * 4 + "420,30,2,512\n" * 4)
    rc = main(["plan", str(table), "--bandwidth", "40GB/s", "--gpu-power", "700W",
               "--gpu-idle-power", "100W", "--drops", "1MW", "--no-what-if", "--levels", "2",
               "--max-seconds", "10", "-q"])
    out = capsys.readouterr().out
    assert rc == 0 and "Power: drops per day" in out and ">= 1 MW" in out
    # 4 x 614.4 kW + 4 x 307.2 kW of drops; mean draw from the law (a mixed base fleet)
    fleet = stormsim.Fleet.from_csv(table, bandwidth="40 GB/s", gpu_power="700 W",
                                    gpu_idle_power="100 W")
    mean = power_law(fleet, fleet.busy_power, fleet.idle_power).mean
    assert f"{mean / 1e6:.3g} (exact)" in out

"""stormsim plan: an operator's fleet in, storms per day, costs and what-ifs out."""
import csv
import io
import json
import math

import numpy as np
import pytest

import stormsim
from stormsim.cli import main
from stormsim.fleetplan import plan, settle_hours, what_ifs

# each test runs plan: its simulations take a few seconds
pytestmark = pytest.mark.slow

#: The operator's example: 12 jobs, 840 GB every 30 min of compute through 40 GB/s.
ARGS = ["--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth", "40GB/s",
        "--jitter", "36s"]


def _fleet(jitter="36 s"):
    return stormsim.Fleet.from_jobs(n_jobs=12, size="840 GB", compute_interval="30 min",
                                    bandwidth="40 GB/s", jitter=jitter)


@pytest.fixture(scope="module")
def result():
    return plan(_fleet(), max_seconds=8, seed=1)


def test_the_fleet_s_long_run_numbers_are_the_exact_law(result):
    law = stormsim.stationary(_fleet())
    row = result.rows[0]
    assert row.scenario == "fleet" and list(row.method) == ["exact"] * 3
    assert result.levels.tolist() == [2, 3, 6]                 # 2, N/4, N/2 of 12
    assert np.array_equal(row.storms_per_day, law.storms_per_s[[2, 3, 6]] * 86400.0)
    assert np.array_equal(row.p_ge, law.p_ge[[2, 3, 6]])
    lam = np.asarray(law.checkpoint_rate)
    assert row.checkpoint_seconds == pytest.approx(
        float(np.sum(lam * law.mean_write_duration) / np.sum(lam)), rel=1e-12)
    assert row.checkpoint_seconds > row.lone_checkpoint_seconds == pytest.approx(21.0)
    assert 0 < row.contention_share < row.writing_share < 0.05
    h = row.stagger_hours
    assert h.lo < h.value < h.hi and h.unit == "h"


def test_each_what_if_moves_the_numbers_the_way_it_should(result):
    by = {r.scenario: r for r in result.rows}
    assert list(by) == [name for name, _, _ in what_ifs(_fleet())]
    assert by["bandwidth x2"].storms_per_day[-1] < by["fleet"].storms_per_day[-1] \
        < by["bandwidth x0.5"].storms_per_day[-1]
    assert by["interval x2"].storms_per_day[0] < by["fleet"].storms_per_day[0] \
        < by["interval x0.5"].storms_per_day[0]
    assert by["bandwidth x2"].lone_checkpoint_seconds == pytest.approx(10.5)
    # no law covers async checkpoints: simulated, with an interval around it
    a = by["async"]
    assert a.method[0] == "plain" and a.storms_per_day_lo[0] < a.storms_per_day[0] \
        < a.storms_per_day_hi[0]
    # at most 3 writers (N // 4): no storm of 6, and checkpoints wait in its queue
    cap = by["writers <= 3"]
    assert cap.method[-1] == "cap" and cap.storms_per_day[-1] == 0.0
    assert cap.wait_mean > 0 == by["fleet"].wait_mean


def test_checkpoint_durations_have_an_upper_quantile_and_a_watchdog_share(result):
    row = result.rows[0]
    q = row.checkpoint_p99
    assert row.lone_checkpoint_seconds < row.checkpoint_seconds < q.value and q.lo <= q.value <= q.hi
    over = row.over_watchdog                        # no write of 21 s alone lasts 600 s
    assert over.value == over.lo == 0.0 and 0 < over.hi < 1e-4 and result.watchdog == 600.0
    tight = plan(_fleet(), what_if=False, watchdog="40 s", max_seconds=4, seed=1)
    assert 0 < tight.rows[0].over_watchdog.value < 0.1           # some writes pass 40 s


def test_the_outputs_travel(result):
    doc = json.loads(result.to_json())
    scenarios = len(what_ifs(_fleet()))
    assert doc["levels"] == [2, 3, 6] and len(doc["rows"]) == scenarios == 7
    assert doc["rows"][0]["method"] == ["exact"] * 3
    over = doc["rows"][0]["over_watchdog"]          # an Interval travels as its fields
    assert set(over) == {"value", "lo", "hi", "method", "confidence", "unit"}
    assert over["lo"] <= over["value"] <= over["hi"]
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert len(rows) == scenarios * 3 and rows[0]["scenario"] == "fleet" and rows[0]["k"] == "2"
    frame = result.to_frame()
    assert frame.shape[0] == scenarios * 3 and set(frame["method"]) >= {"exact", "plain", "cap"}
    text = str(result)
    assert "63.7 (exact)" in text and "stagger holds" in text and "restart" in text


def test_json_and_csv_use_the_api_s_names_and_keep_every_bound(result):
    """One table (ROW_OUTPUTS, PLAN_OUTPUTS) names every field: a PlanRow's
    and a FleetPlan's attributes, no more, no fewer; the CSV carries each
    interval's ends and method, each level's bounds and the settling time."""
    from dataclasses import fields

    from stormsim.fleetplan import PLAN_OUTPUTS, ROW_OUTPUTS, FleetPlan, PlanRow, csv_columns

    assert {o.name for o in ROW_OUTPUTS} == {f.name for f in fields(PlanRow)}
    assert {o.name for o in PLAN_OUTPUTS} == {f.name for f in fields(FleetPlan)} - {"rows"}
    doc = json.loads(result.to_json())
    assert list(doc) == [o.name for o in PLAN_OUTPUTS] + ["rows"]
    assert all(list(r) == [o.name for o in ROW_OUTPUTS] for r in doc["rows"])
    assert doc["watchdog"] == 600.0
    for name in ("settle_hours", "settle_hours_lo", "settle_hours_hi"):    # NaN: null
        x = getattr(result, name)
        assert doc[name] is None if math.isnan(x) else doc[name] == pytest.approx(x), name
    assert doc["settling"]["levels"] == [2, 3, 6] and doc["settling"]["method"] == doc["settle_method"]
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert list(rows[0]) == csv_columns()
    for name in ("storms_per_day", "storm_duration", "p_ge", "checkpoint_p99", "over_watchdog",
                 "wait_p99", "stagger_hours"):
        assert {name, f"{name}_lo", f"{name}_hi"} <= set(rows[0]), name
    fleet, s = result.rows[0], rows[0]
    assert float(s["stagger_hours_lo"]) == fleet.stagger_hours.lo
    assert float(s["checkpoint_p99_hi"]) == fleet.checkpoint_p99.hi
    assert float(s["p_ge_lo"]) == fleet.p_ge_lo[0] <= fleet.p_ge[0] <= fleet.p_ge_hi[0]
    for name in ("settle_hours", "settle_hours_lo", "settle_hours_hi"):
        assert float(s[name]) == getattr(result, name) or math.isnan(getattr(result, name)), name
    assert s["settle_method"]
    capped = next(r for r in rows if r["scenario"] == "writers <= 3" and r["k"] == "6")
    assert capped["method"] == "cap" and float(capped["p_ge_hi"]) == 0.0


def _mixed_48() -> stormsim.Fleet:
    """48 jobs of four kinds (sizes, intervals and jitters differ)."""
    kinds = [("840 GB", "30 min", "36 s"), ("420 GB", "20 min", "24 s"),
             ("96 GB", "15 min", "9 s"), ("1680 GB", "60 min", "72 s")]
    return stormsim.Fleet.from_jobs(**{name: [kinds[i % 4][j] for i in range(48)] for j, name in
                                       enumerate(("size", "compute_interval", "jitter"))},
                                    bandwidth="200 GB/s")


def test_the_default_table_fits_100_columns_and_wide_keeps_one_line_per_scenario(result):
    """The README's fleet, 48 mixed jobs and a saturated fleet, each with its
    what-ifs: no line past 100 columns; ``table(wide=True)`` has the fleet
    and each what-if on one line, under one header."""
    saturated = stormsim.Fleet.from_jobs(n_jobs=12, size="840 GB", compute_interval="30 min",
                                         bandwidth="40 MB/s", jitter="1%")
    plans = [result, plan(_mixed_48(), max_seconds=1, seed=1),
             plan(saturated, max_seconds=1, seed=1)]
    assert "saturated (" in str(plans[2]) and plans[1].levels.tolist() == [2, 12, 24]
    for p in plans:
        text = str(p)
        assert max(map(len, text.splitlines())) <= 100, text
        for r in p.rows:                  # each scenario once in the storms and in each block
            assert sum(line.strip().split("  ")[0] == r.scenario
                       for line in text.splitlines()) >= 2, r.scenario
        wide = p.table(wide=True).splitlines()
        assert len(wide[0]) > 100 and [line.strip().split("  ")[0] for line in wide[1:1 + len(
            p.rows)]] == [r.scenario for r in p.rows]


def test_storms_settle_sooner_after_a_restart_with_more_jitter():
    slow, how = settle_hours(_fleet("36 s"))
    fast, _ = settle_hours(_fleet("180 s"))
    assert how.startswith("exact") and 0 < fast < slow


def test_the_figure_draws_each_scenario_s_storms_per_day(result):
    """One line per scenario, through its storms per day at each level asked
    (a level with none, e.g. above a writer cap, is left out on the log axis),
    with error bars on the simulated rows only."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = result.figure()
    try:
        ax, = fig.axes
        lines = {line.get_label(): line for line in ax.get_lines()
                 if not line.get_label().startswith("_")}      # error bars draw lines too
        assert list(lines) == [r.scenario for r in result.rows]
        for r in result.rows:
            shown = r.storms_per_day > 0
            x, y = lines[r.scenario].get_data()
            assert np.array_equal(x, result.levels[shown].astype(float))
            assert np.array_equal(y, r.storms_per_day[shown])
        bars = [c for c in ax.containers if c.has_yerr]
        simulated = [r for r in result.rows if (r.method[r.storms_per_day > 0] != "exact").any()]
        assert len(bars) == len(simulated) and ax.get_yscale() == "log"
    finally:
        plt.close(fig)


def test_the_command_prints_text_json_csv_and_a_figure(tmp_path, capsys):
    assert main(["plan", *ARGS, "--max-seconds", "4", "--no-what-if"]) == 0
    out = capsys.readouterr().out
    assert "fleet" in out and "(exact)" in out and "bandwidth x2" not in out
    assert main(["plan", *ARGS, "--max-seconds", "4", "--no-what-if", "--format", "json",
                 "--plot", str(tmp_path / "p.png")]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["scenario"] == "fleet"
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plan", *ARGS, "--max-seconds", "4", "--no-what-if", "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    assert wide[0].split()[:2] == ["scenario", "storms/day"] and len(wide[0]) > 100
    assert wide[1].split()[:2] == ["fleet", "63.7"]
    assert main(["plan", *ARGS, "--no-what-if", "--wide", "--format", "csv"]) == 2
    assert "--wide lays out the text table" in capsys.readouterr().err


def test_a_job_table_plans_too(tmp_path, capsys):
    table = tmp_path / "jobs.csv"
    table.write_text("size [GB],compute_interval [min],jitter [s]\n840,30,36\n420,20,30\n"
                     "840,30,36\n")
    assert main(["plan", str(table), "--bandwidth", "40GB/s", "--max-seconds", "4",
                 "--no-what-if", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # 2, N/4, N/2 of 3 is 2, 1, 2: the distinct levels >= 2 (a level 1 is no storm)
    assert [r["k"] for r in rows] == ["2"] and rows[0]["method"] == "exact"


def test_a_pair_s_default_levels_are_the_pair_alone():
    """N = 2: the defaults 2, N/4, N/2 are 2, 1, 1; the table shows n_w >= 2 alone."""
    pair = stormsim.Fleet.from_jobs(n_jobs=2, size="840 GB", compute_interval="30 min",
                                    bandwidth="40 GB/s", jitter="36 s")
    result = plan(pair, what_if=False, max_seconds=1, seed=1)
    assert result.levels.tolist() == [2] and "n_w>=1" not in str(result)


def test_writer_caps_and_async_assumptions_of_one_plan():
    """max_writers [1, 2]: a row per cap, in place of the N/4 row; K = 1 keeps
    every level >= 2 out of reach, K = 2 the level 3; the tighter cap queues
    longer. The async row's assumptions are stated in the notes."""
    result = plan(_fleet(), levels=[2, 3], max_writers=[1, 2], snapshot="5 s", slowdown=0.05,
                  max_seconds=8, seed=1)
    by = {r.scenario: r for r in result.rows}
    assert list(by)[-2:] == ["writers <= 1", "writers <= 2"] and "writers <= 3" not in by
    one, two = by["writers <= 1"], by["writers <= 2"]
    assert list(one.method) == ["cap", "cap"] and one.storms_per_day.tolist() == [0.0, 0.0]
    assert two.method[0] != "cap" and two.method[1] == "cap" and two.storms_per_day[0] > 0
    assert one.wait_mean > two.wait_mean > 0
    note = ("async: every blocking job made asynchronous, assuming a snapshot of 5 s and a "
            "compute slowdown of 0.05 while its persist is in flight")
    assert result.notes[0].startswith(note) and note in " ".join(str(result).split())
    default = plan(_fleet(), levels=[2], max_seconds=4, seed=1)
    assert default.notes[0].startswith("async: every blocking job made asynchronous, assuming "
                                       "a snapshot of 0 s and a compute slowdown of 0 while")


@pytest.mark.parametrize("argv,message", [
    (["plan", "--bandwidth", "40GB/s", "--jobs", "12"], r"give a job table \(CSV\) or --size, "
     r"--interval, --jitter"),
    (["plan", "jobs.csv", "--bandwidth", "40GB/s", "--jobs", "3"], "not both"),
    (["plan", *ARGS[:-4], "--bandwidth", "40GB", "--jitter", "36s"], "bandwidth"),
    (["plan", *ARGS, "--levels", "13"], "13"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    import re
    assert re.search(message, err), err
    assert "Traceback" not in err


def test_a_mixed_fleet_s_alone_figure_is_per_write_like_its_mean():
    """Three sizes: the checkpoint mean is per write (the law's rates weigh each
    job), and so is the lone figure beside it. The plain mean of the lone
    times, per job, overstates it (small jobs write more often)."""
    PER_WRITE_RTOL = 1e-12      # the same sums in another order
    fleet = stormsim.Fleet.from_jobs(compute_interval="30 min", size=["20 GB"] * 8 + ["200 GB"] * 4
                                     + ["2 TB"] * 2, bandwidth="100 GB/s", jitter="1%")
    row = plan(fleet, what_if=False, max_seconds=2, seed=1).rows[0]
    law = stormsim.stationary(fleet)
    lam = np.asarray(law.checkpoint_rate)
    assert row.lone_checkpoint_seconds == pytest.approx(float(np.sum(lam * fleet.d) / np.sum(lam)),
                                                        rel=PER_WRITE_RTOL)
    assert row.lone_checkpoint_seconds < float(np.mean(fleet.d))
    assert row.lone_checkpoint_seconds < row.checkpoint_seconds     # contention stretches writes

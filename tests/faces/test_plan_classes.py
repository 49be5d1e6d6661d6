"""stormsim plan on fleets of several kinds of jobs, and what each cost is:
the fleet per job class (exact where the law is, else simulated with an
interval), the GPU time lost (blocked, slowed, queued) of every row, async
and capped ones included, and a reason for every number the plan cannot
give, in the text table (-(a) and its note), the JSON and the CSV."""
from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

import stormsim
from stormsim.cli import main
from stormsim.fleetplan import CLASS_OUTPUTS, ROW_OUTPUTS, class_columns, plan, what_ifs
from stormsim.plan_costs import POOLED, class_rows, gpu_shares
from stormsim.stats import durations

pytest.importorskip("pint")     # fleets from physical units: the [units] extra

#: The same sums in another order.
RTOL = 1e-12
#: The README's fleet: 12 jobs, 840 GB every 30 min of compute through 40 GB/s.
README = dict(n_jobs=12, size="840 GB", compute_interval="30 min", bandwidth="40 GB/s",
              jitter="18 s")
#: Three sizes of job (8 x 20 GB, 4 x 200 GB, 2 x 2 TB) through 100 GB/s.
MIXED = dict(compute_interval="30 min", size=["20 GB"] * 8 + ["200 GB"] * 4 + ["2 TB"] * 2,
             bandwidth="100 GB/s", jitter="1%")


def _readme(**kw):
    return stormsim.Fleet.from_jobs(**README, **kw)


def _mixed(**kw):
    return stormsim.Fleet.from_jobs(**MIXED, **kw)


def _what_if(name: str, **kw) -> stormsim.Fleet:
    return next(f for n, _, f in what_ifs(_readme(), **kw) if n == name)


#: The fleets every output must explain: the README's, a mixed one, the
#: README's async and capped what-ifs as fleets, and a saturated fabric.
CASES = {
    "README": _readme,
    "mixed": _mixed,
    "async what-if": lambda: _what_if("async", snapshot="5 s", slowdown=0.2),
    "capped what-if": lambda: _what_if("writers <= 3"),
    "saturated": lambda: stormsim.Fleet.from_jobs(**(README | {"bandwidth": "40 MB/s"})),
}


@pytest.fixture(scope="module")
def plans():
    made = {}

    def get(name):
        if name not in made:
            made[name] = plan(CASES[name](), what_if=False, max_seconds=3, seed=1)
        return made[name]
    return get


# -- the fleet per job class ----------------------------------------------------

def test_job_classes_group_jobs_alike_in_every_parameter_in_order():
    fleet = stormsim.Fleet(T=[10.0, 20.0, 10.0, 10.0], d=[1.0, 1.0, 1.0, 1.0],
                           jitter=[0.1, 0.1, 0.1, 0.2])
    assert [c.tolist() for c in fleet.job_classes()] == [[0, 2], [1], [3]]
    assert len(_readme().job_classes()) == 1 and len(_mixed().job_classes()) == 3


@pytest.mark.slow
def test_a_mixed_fleet_per_class_is_the_exact_law_per_write(plans):
    p, fleet = plans("mixed"), _mixed()
    law = stormsim.stationary(fleet)
    classes = p.by_class
    assert [c.jobs for c in classes] == [8, 4, 2]
    assert [c.lone_checkpoint_seconds for c in classes] == pytest.approx([0.2, 2.0, 20.0])
    for c, idx in zip(classes, fleet.job_classes()):
        i = idx[0]
        assert c.checkpoint_seconds.value == pytest.approx(law.mean_write_duration[i], rel=RTOL)
        assert c.write_stretch.value == pytest.approx(law.write_stretch[i], rel=RTOL)
        assert c.gpu_lost_share.value == pytest.approx(law.writing_probability[i], rel=RTOL)
        assert c.method == "exact" and c.write_stretch.value > 1.0      # contention stretches
        assert math.isnan(c.checkpoint_p99.value) and c.checkpoint_p99.method == POOLED
    # the classes' means, weighted by their writes, are the fleet's mean per write
    lam = np.asarray(law.checkpoint_rate)
    writes = np.array([c.jobs * lam[idx[0]] for c, idx in zip(classes, fleet.job_classes())])
    means = np.array([c.checkpoint_seconds.value for c in classes])
    assert float(writes @ means / writes.sum()) == pytest.approx(p.rows[0].checkpoint_seconds,
                                                                 rel=RTOL)


@pytest.mark.slow
def test_a_one_class_fleet_has_one_class_with_the_fleet_s_p99(plans):
    p = plans("README")
    (c,) = p.by_class
    assert c.jobs == 12 and c.checkpoint_p99 == p.rows[0].checkpoint_p99
    assert c.checkpoint_seconds.value == pytest.approx(p.rows[0].checkpoint_seconds, rel=RTOL)


def test_simulated_class_means_agree_with_the_law_within_their_intervals():
    """Where the law does not apply the class means come from the durations
    run (each job's writing time over its checkpoints, counted from its
    compute time); checked here on a fleet the law covers."""
    fleet = _mixed()
    law = stormsim.stationary(fleet)
    run = stormsim.simulate(fleet, fleets=128, cycles=400, burn_in=40, seed=1)   # as plan runs
    nan = stormsim.Interval(math.nan, math.nan, math.nan, "none")
    for c, idx in zip(class_rows(fleet, None, run, nan), fleet.job_classes()):
        m = c.checkpoint_seconds
        assert m.lo < law.mean_write_duration[idx[0]] < m.hi, (c, idx)
        assert m.unit == "s" and "ratio over fleets" in m.method
        assert c.write_stretch.value == pytest.approx(m.value / c.lone_checkpoint_seconds)


def test_class_means_an_async_or_capped_run_cannot_split_are_nan_with_why():
    fleet = _what_if("async")
    run = stormsim.simulate(fleet, fleets=4, cycles=40, seed=1)
    nan = stormsim.Interval(math.nan, math.nan, math.nan, "none")
    (c,) = class_rows(fleet, None, run, nan)
    assert math.isnan(c.checkpoint_seconds.value)
    assert "async jobs" in c.checkpoint_seconds.method
    (c,) = class_rows(fleet, None, None, nan, "not estimated in the budget")
    assert c.checkpoint_seconds.method == c.method == "not estimated in the budget"


# -- the GPU time lost ----------------------------------------------------------

def test_the_law_s_gpu_time_lost_is_its_writing_share():
    fleet = _readme()
    law = stormsim.stationary(fleet)
    s = gpu_shares(fleet, law, None)
    assert s["blocked_share"].value == s["gpu_lost_share"].value == pytest.approx(
        float(np.mean(law.writing_probability)), rel=RTOL)
    assert s["slowed_share"].value == s["queued_share"].value == 0.0
    assert {x.method for x in s.values()} == {"exact"}


def test_async_gpu_time_lost_is_the_snapshot_the_slowed_persist_and_the_waits():
    """5 s snapshots every ~30 min and a persist of ~24 s (21 s alone, stretched
    by contention) slowing compute by 20 %: about 5/1826 blocked and 0.2 x
    24/1826 slowed, with intervals."""
    fleet = _what_if("async", snapshot="5 s", slowdown=0.2)
    run = stormsim.simulate(fleet, fleets=32, cycles=100, burn_in=10, seed=2)
    s = gpu_shares(fleet, None, run)
    persist = durations.mean(run).value
    cycle = 1800.0 + 5.0 + 0.2 * persist
    assert s["blocked_share"].value == pytest.approx(5.0 / cycle, rel=0.02)
    assert s["slowed_share"].value == pytest.approx(0.2 * persist / cycle, rel=0.02)
    assert s["queued_share"].value == 0.0                   # a persist never outlasts 30 min
    total = sum(s[n].value for n in ("blocked_share", "slowed_share", "queued_share"))
    assert s["gpu_lost_share"].value == pytest.approx(total, rel=1e-9)
    for x in s.values():
        assert x.lo <= x.value <= x.hi and x.method == "ratio over fleets, delta method"


def test_a_writer_cap_s_gpu_time_lost_counts_its_queue():
    fleet = _readme(max_writers=1)
    run = stormsim.simulate(fleet, fleets=32, cycles=100, burn_in=10, seed=2)
    s = gpu_shares(fleet, None, run)
    window = run.occupancy.sum(axis=1)
    assert s["queued_share"].value == pytest.approx(run.wait_sum.sum() / (12 * window.sum()))
    assert s["queued_share"].value > 0 and s["slowed_share"].value == 0.0
    assert s["blocked_share"].value == pytest.approx(
        run.writing_time.sum() / (12 * window.sum()), rel=RTOL)


def test_gpu_time_lost_without_a_run_says_why():
    s = gpu_shares(_what_if("async"), None, None, "not estimated in the budget")
    assert all(math.isnan(x.value) and x.method == "not estimated in the budget"
               for x in s.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["async what-if", "capped what-if"])
def test_async_and_capped_rows_show_their_gpu_time_lost(plans, name):
    p = plans(name)
    row = p.rows[0]
    parts = [row.blocked_share, row.slowed_share, row.queued_share]
    assert all(not math.isnan(x.value) for x in [*parts, row.gpu_lost_share])
    assert (row.slowed_share.value > 0) == (name == "async what-if")
    assert (row.queued_share.value > 0) == (name == "capped what-if")
    text = str(p)
    g = row.gpu_lost_share
    assert f"{100 * g.value:.3g}% [{100 * g.lo:.3g}%, {100 * g.hi:.3g}%]" in text


# -- a reason for every number the plan cannot give ---------------------------------

def _table_lines(text: str) -> list[str]:
    return text[:text.index("\nk: k or more")].splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_every_dash_in_the_text_table_has_its_reason_below(plans, name):
    text = plans(name).table(by_class=True)
    lines = _table_lines(text)
    assert max(map(len, text.splitlines())) <= 100
    for line in lines:
        assert not re.search(r"(^|\s)-(\s|,|$)", line), line      # never a bare '-'
    marks = set(re.findall(r"-\(([a-z]+)\)", "\n".join(lines)))
    notes = dict(re.findall(r"^-\(([a-z]+)\): (.+)$", text, re.M))
    assert marks == set(notes), (marks, notes)
    assert all(len(why) > 10 for why in notes.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_every_null_in_json_and_csv_has_its_reason(plans, name):
    p = plans(name)
    doc = json.loads(p.to_json())
    for row in doc["rows"]:
        reasons = row["reasons"]
        for o in ROW_OUTPUTS:
            v = row[o.name]
            if o.kind == "interval":
                assert v["value"] is not None or v["method"], o.name
                if v["value"] is None:
                    assert any(r.startswith(f"{o.name}: ") for r in reasons), o.name
            elif o.kind == "level":
                for k, x in zip(doc["levels"], v):
                    base = o.name.removesuffix("_lo").removesuffix("_hi")   # its ends: its reason
                    if x is None:
                        assert any(r.startswith(f"{base} at k = {k}: ") for r in reasons)
            elif v is None:
                assert any(r.startswith(f"{o.name}: ") for r in reasons), o.name
    records = list(csv.DictReader(io.StringIO(p.to_csv())))
    assert records[0]["reasons"] == " | ".join(doc["rows"][0]["reasons"])


@pytest.mark.slow
def test_the_reasons_say_what_the_operator_needs(plans):
    def reasons(name):        # goodput is null without failures, and says so
        return " ".join(r for r in plans(name).rows[0].reasons if not r.startswith("goodput: "))
    assert reasons("README") == ""                        # nothing else missing
    assert "mixed fleet" in reasons("mixed") and "the jobs differ" in reasons("mixed")
    assert "at most 3 write at once" in reasons("capped what-if")
    assert "exact law does not cover async checkpoints" in reasons("async what-if")
    assert "no collision-free stagger" in reasons("saturated")


# -- the outputs ----------------------------------------------------------------

@pytest.mark.slow
def test_the_json_has_the_classes_and_the_class_csv_their_columns(plans):
    p = plans("mixed")
    doc = json.loads(p.to_json())
    assert [c["jobs"] for c in doc["by_class"]] == [8, 4, 2]
    assert list(doc["by_class"][0]) == [o.name for o in CLASS_OUTPUTS]
    assert doc["by_class"][0]["checkpoint_p99"]["value"] is None
    rows = list(csv.DictReader(io.StringIO(p.class_csv())))
    assert list(rows[0]) == class_columns() and [r["class"] for r in rows] == ["1", "2", "3"]
    assert float(rows[2]["write_stretch"]) == pytest.approx(p.by_class[2].write_stretch.value)


@pytest.mark.slow
def test_a_mixed_table_points_to_by_class_and_by_class_shows_each(plans):
    p = plans("mixed")
    assert "3 job classes: stormsim plan --by-class" in str(p)
    text = p.table(by_class=True)
    assert "The fleet by job class" in text and "job classes: stormsim plan" not in text
    line = next(x for x in text.splitlines() if x.split()[:2] == ["3", "2"])
    assert "20.3 (exact)" in line and "1.02 (exact)" in line


@pytest.mark.slow
def test_the_p99_note_says_the_effort_the_durations_run_had(plans):
    p = plans("README")
    assert "(simulated: 128 fleets x 400 cycles)" in str(p)
    cut = replace(p, durations_effort="4 to 128 fleets x 20 to 400 cycles")
    assert "(simulated: 4 to 128 fleets x 20 to 400 cycles)" in str(cut)
    assert "128 fleets x 400 cycles)" not in str(cut).replace("to 128 fleets x 20 to 400", "")


# -- the command line -------------------------------------------------------------

ARGS = ["--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth", "40GB/s",
        "--jitter", "18s", "--no-what-if", "--max-seconds", "2", "-q"]


@pytest.mark.slow
def test_by_class_on_the_command_line(tmp_path, capsys):
    table = tmp_path / "jobs.csv"
    table.write_text("name,compute_interval [min],size [GB],jitter [s]\n"
                     + "".join(f"j{i},30,{gb},18\n" for i, gb in
                               enumerate([20] * 8 + [200] * 4 + [2000] * 2)))
    assert main(["plan", str(table), "--bandwidth", "100GB/s", "--no-what-if",
                 "--max-seconds", "2", "-q", "--by-class"]) == 0
    assert "The fleet by job class" in capsys.readouterr().out
    assert main(["plan", str(table), "--bandwidth", "100GB/s", "--no-what-if",
                 "--max-seconds", "2", "-q", "--by-class", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["jobs"] for r in rows] == ["8", "4", "2"]


@pytest.mark.slow
def test_the_fleet_s_own_writer_cap_from_the_command_line(capsys):
    assert main(["plan", *ARGS, "--fleet-max-writers", "3", "--levels", "2,4",
                 "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["method"][1] == "cap" and row["queued_share"]["value"] > 0


@pytest.mark.slow
def test_a_simulated_mean_has_its_interval_and_an_exact_one_none(plans):
    exact, sim = plans("README").rows[0], plans("capped what-if").rows[0]
    assert exact.checkpoint_seconds_lo == exact.checkpoint_seconds == exact.checkpoint_seconds_hi
    assert sim.checkpoint_seconds_lo < sim.checkpoint_seconds < sim.checkpoint_seconds_hi
    assert sim.wait_mean_lo < sim.wait_mean < sim.wait_mean_hi            # the cap's queue
    assert exact.wait_mean == exact.wait_mean_lo == exact.wait_mean_hi == 0.0
    cell = (f"{sim.checkpoint_seconds:.3g} [{sim.checkpoint_seconds_lo:.3g}, "
            f"{sim.checkpoint_seconds_hi:.3g}] (21)")
    assert cell in str(plans("capped what-if"))
    row = json.loads(plans("capped what-if").to_json())["rows"][0]
    assert row["checkpoint_seconds_lo"] == sim.checkpoint_seconds_lo


@pytest.mark.parametrize("k", ["0", "13"])
def test_a_wrong_fleet_writer_cap_is_named_as_its_flag(k, capsys):
    assert main(["plan", *ARGS, "--fleet-max-writers", k]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormsim: error: plan: --fleet-max-writers {k}: must be ")
    assert "Traceback" not in err and err.count("\n") == 1

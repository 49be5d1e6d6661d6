"""stormsim plan on near-critical and overloaded fleets: where a level is
saturated (k or more write most of the time, in storms that outlast a job's
cycle) every output says so in words, and states the load; where storms are
episodes, the table reads as it did, number for number."""
import csv
import io
import json
import math
import re

import numpy as np
import pytest

import stormsim
from stormsim.cli import main
from stormsim.fleetplan import EPISODES, SATURATED, plan
from stormsim.stats.stationary import SATURATED_CYCLES, SATURATED_SHARE, saturated

#: 12 jobs computing 30 min between checkpoints, 1 % jitter.
T, N = 1800.0, 12
#: The levels plan asks by default for 12 jobs: 2, N/4, N/2.
LEVELS = [2, 3, 6]


def _loaded(load: float, n: int = N) -> stormsim.Fleet:
    """n identical jobs whose load sum_i d_i / T_i is ``load``."""
    return stormsim.Fleet(T=[T] * n, d=[load * T / n] * n, jitter=T / 100)


def _physical(bandwidth: str, n: int = N) -> stormsim.Fleet:
    return stormsim.Fleet.from_jobs(n_jobs=n, size="840 GB", compute_interval="30 min",
                                    bandwidth=bandwidth, jitter="1%")


#: A load sum_i d_i / T_i against its value: 12 equal ratios, each from a
#: size and a bandwidth converted to seconds, rounded a few times (~1e-16 each).
LOAD_TOL = 1e-12

#: fleet -> (its load, the levels of LEVELS (or 2, N/4, N/2) that are saturated)
CASES = {
    "load 0.9": (lambda: _loaded(0.9), 0.9, []),
    "load 1": (lambda: _loaded(1.0), 1.0, []),
    "load 2": (lambda: _loaded(2.0), 2.0, [2, 3]),
    "load 58": (lambda: _loaded(58.0), 58.0, [2, 3, 6]),
    "40 MB/s": (lambda: _physical("40 MB/s"), 140.0, [2, 3, 6]),       # a lone write: 21 000 s
    "README, 40 GB/s": (lambda: _physical("40 GB/s"), 0.14, []),
    "5 TB/s": (lambda: _physical("5 TB/s"), 0.00112, []),
}


# -- the verdict (the law alone: fast) ----------------------------------------------------------

def test_the_thresholds_are_inclusive_and_both_needed():
    c = 2100.0
    assert saturated(SATURATED_SHARE, SATURATED_CYCLES * c, c)
    assert not saturated(np.nextafter(SATURATED_SHARE, 0.0), math.inf, c)     # a long storm, rare
    assert not saturated(1.0, np.nextafter(SATURATED_CYCLES * c, 0.0), c)      # short, frequent
    assert not saturated(1.0, math.nan, c)                      # no duration measured: no verdict
    assert saturated([0.4, 0.6, 0.9], [1e9, 1e9, 1.0], c).tolist() == [False, True, False]


@pytest.mark.parametrize("name", CASES)
def test_which_levels_the_law_calls_saturated(name):
    build, load, want = CASES[name]
    fleet = build()
    assert float(np.sum(fleet.d / fleet.T)) == pytest.approx(load, rel=LOAD_TOL)
    law = stormsim.stationary(fleet)
    ks = np.array(LEVELS)
    sat = saturated(law.p_ge[ks], law.storm_duration[ks], float(np.max(fleet.T + fleet.d)))
    assert ks[sat].tolist() == want


def test_at_load_0_9_the_storm_duration_decides():
    """Two or more write 52 % of the time, but in storms of a fifth of a cycle:
    frequent episodes, which their rate describes."""
    fleet = _loaded(0.9)
    law = stormsim.stationary(fleet)
    assert law.p_ge[2] > SATURATED_SHARE
    assert law.storm_duration[2] < 0.25 * float(np.max(fleet.T + fleet.d))


def test_5000_jobs_through_40_gb_per_s_are_saturated_at_every_default_level():
    fleet = _physical("40 GB/s", n=5000)
    law = stormsim.stationary(fleet)
    ks = np.array([2, 1250, 2500])
    assert np.all(saturated(law.p_ge[ks], law.storm_duration[ks], float(np.max(fleet.T + fleet.d))))
    assert law.storms_per_day[2] == 0.0                 # what used to read "0 (exact)"


# -- the plan's outputs (each runs plan: a few seconds per fleet) -------------------------------

#: plan(fleet, what_if=False, max_seconds=4, seed=1).table(wide=True) of two
#: fleets whose storms are episodes (the wide layout, once the default; the
#: costs' columns since the GPU time lost replaced the writing share): exact
#: and fixed-effort numbers only, so it is a function of the fleet and the seed;
#: then the settling sentence, whose blocks' fleets the budget may cut (SETTLE_NOTE).
README_TABLE = """\
scenario  storms/day n_w>=2 [95% CI]  storms/day n_w>=3 [95% CI]  storms/day n_w>=6 [95% CI]  storm s  checkpoint s              p99 s  P(> 600 s)        GPU lost  blocked, slowed, queued  wait s: mean, p99       stagger holds
   fleet                63.7 (exact)                7.43 (exact)             0.00595 (exact)     22.6       24 (21)  51.9 [46.3, 53.5]   < 6.9e-06  1.32% (0.163%)            1.32%, 0%, 0%        0, < 0.0016  4.7 h [4.19, 5.21]
storm s: mean storm duration at n_w >= 6; checkpoint s: mean write duration, per write (firing to
write end; exact where the law is, else simulated), alone in brackets; p99 s: its 99th percentile
(simulated: 128 fleets x 400 cycles); P(> watchdog): the share of writes longer than the watchdog;
wait s: from a checkpoint falling due to its write starting (a writer cap's queue, an async WAIT),
mean and 99th percentile; GPU lost: the share of each job's time its checkpoints cost, what
contention adds in round brackets (exact rows) or its 95 % interval in square ones (simulated rows);
blocked, slowed, queued: that time stopped for a blocking write or an async snapshot, lost to
compute slowed by an async persist, stopped in a writer cap's queue or an async WAIT; stagger holds:
median time to the first collision from a stagger launch. (exact): the product-form law, no sampling
error; [lo, hi]: 95 % interval over independent fleets.
"""  # noqa: E501 (a table row as printed)

FIVE_TB_TABLE = """\
scenario  storms/day n_w>=2 [95% CI]  storms/day n_w>=3 [95% CI]  storms/day n_w>=6 [95% CI]  storm s   checkpoint s                p99 s  P(> 600 s)              GPU lost  blocked, slowed, queued  wait s: mean, p99      stagger holds
   fleet               0.591 (exact)            0.000551 (exact)            2.26e-13 (exact)    0.168  0.168 (0.168)  0.18 [0.156, 0.181]   < 6.9e-06  0.00934% (9.59e-06%)         0.00934%, 0%, 0%        0, < 0.0016  54 h [46.6, 58.4]
storm s: mean storm duration at n_w >= 6; checkpoint s: mean write duration, per write (firing to
write end; exact where the law is, else simulated), alone in brackets; p99 s: its 99th percentile
(simulated: 128 fleets x 400 cycles); P(> watchdog): the share of writes longer than the watchdog;
wait s: from a checkpoint falling due to its write starting (a writer cap's queue, an async WAIT),
mean and 99th percentile; GPU lost: the share of each job's time its checkpoints cost, what
contention adds in round brackets (exact rows) or its 95 % interval in square ones (simulated rows);
blocked, slowed, queued: that time stopped for a blocking write or an async snapshot, lost to
compute slowed by an async persist, stopped in a writer cap's queue or an async WAIT; stagger holds:
median time to the first collision from a stagger launch. (exact): the product-form law, no sampling
error; [lo, hi]: 95 % interval over independent fleets.
"""  # noqa: E501 (a table row as printed)


#: The settling sentence after the tables: a settled time with the interval the
#: blocks allow, or what the budget could not buy (its fleets depend on the budget).
SETTLE_NOTE = re.compile(
    r"After a synchronized restart, storms settle within 10% of their long-run rate \(n_w >= 2\)"
    r" after about [\d.]+ h \[[\d.]+, ([\d.]+|beyond the horizon)\] \(.*exact \(the law\); "
    r"\d+ fleets, 32 blocks of .*\)\.|After a synchronized restart, the time for storms to settle "
    r".*not estimated in the budget.*", re.S)


#: str(plan(...)) of the README's fleet as README_TABLE: the default layout,
#: at most 100 columns (the notes as README_TABLE's, rewrapped).
README_NARROW = """\
scenario  k  storms/day [95% CI]  storm s  share of time
   fleet  2         63.7 (exact)     23.7           1.7%
          3         7.43 (exact)     23.4           0.2%
          6      0.00595 (exact)     22.6       0.00016%

scenario  checkpoint s              p99 s  P(> 600 s)        GPU lost  blocked, slowed, queued
   fleet       24 (21)  51.9 [46.3, 53.5]   < 6.9e-06  1.32% (0.163%)            1.32%, 0%, 0%

scenario  wait s: mean, p99       stagger holds
   fleet        0, < 0.0016  4.7 h [4.19, 5.21]

"""


@pytest.fixture(scope="module")
def plans():
    """plan of each case, the fleet alone (no what-if), made once."""
    made = {}

    def get(name):
        if name not in made:
            made[name] = plan(CASES[name][0](), what_if=False, max_seconds=4, seed=1)
        return made[name]
    return get


def _levels(text: str, n: int = len(LEVELS)) -> list[list[str]]:
    """The fleet's lines of the default table's storms, one per level: the
    cells k, storms/day, storm s and share of time (columns are two or more
    spaces apart; the first line starts with the scenario)."""
    lines = text.splitlines()[1:1 + n]
    cells = [re.split(r"\s{2,}", line.strip()) for line in lines]
    assert cells[0][0] == "fleet"
    return [cells[0][1:], *cells[1:]]


def _words(want: list) -> list[str]:
    return [SATURATED if k in want else EPISODES for k in LEVELS]


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_the_python_object_names_the_regime_and_keeps_the_law_s_numbers(plans, name):
    build, load, want = CASES[name]
    p = plans(name)
    row = p.rows[0]
    law = stormsim.stationary(build())
    assert p.levels.tolist() == LEVELS
    assert row.regime.tolist() == _words(want)
    assert row.load == pytest.approx(load, rel=LOAD_TOL)
    assert np.array_equal(row.storms_per_day, law.storms_per_s[LEVELS] * 86400.0)
    assert np.array_equal(row.p_ge, law.p_ge[LEVELS])
    assert np.array_equal(row.storm_duration, law.storm_duration[LEVELS])
    assert list(row.method) == ["exact"] * 3


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_the_text_table_says_saturated_where_it_must_and_only_there(plans, name):
    _, load, want = CASES[name]
    p = plans(name)
    text, row = str(p), p.rows[0]
    levels = _levels(text)
    for j, k in enumerate(LEVELS):
        cells = levels[j]
        assert cells[0] == str(k)
        if k in want:
            share = "> 99.99%" if row.p_ge[j] > 0.9999 else f"{100 * row.p_ge[j]:.4g}%"
            assert cells[1:3] == [f"saturated ({share} of the time)", "saturated"]
        else:
            assert cells[1:3] == [f"{row.storms_per_day[j]:.3g} (exact)",
                                  f"{row.storm_duration[j]:.3g}"]
        assert "0 (exact)" not in cells and "inf" not in cells
    assert "after about - h" not in text
    overloaded = load > N / (N - 1)                 # no collision-free stagger exists
    assert ("Load (the sum of d_i / T_i" in text) == overloaded
    assert (f"{load:.3g} (fleet)" in text) == overloaded
    assert ("\nsaturated: fleet at n_w >= " in text) == bool(want)
    assert ("storms of n_w >= 2 do not settle into episodes" in text) == (2 in want)


@pytest.mark.slow
@pytest.mark.parametrize("name, table", [("README, 40 GB/s", README_TABLE),
                                         ("5 TB/s", FIVE_TB_TABLE)])
def test_fleets_whose_storms_are_episodes_read_exactly_as_before(plans, name, table):
    """The wide layout (``--wide``) is the table as it was, character for character,
    but the settling sentence, which says what the budget bought."""
    text = plans(name).table(wide=True)
    assert text.startswith(table)
    assert SETTLE_NOTE.fullmatch(" ".join(text[len(table):].split())), text[len(table):]


@pytest.mark.slow
def test_the_default_table_is_the_wide_one_in_100_columns(plans):
    """The same numbers, storms one line per level, the costs in blocks; the
    notes say the same, wrapped to the width."""
    text = str(plans("README, 40 GB/s"))
    assert text.startswith(README_NARROW)
    assert max(map(len, text.splitlines())) <= 100
    assert SETTLE_NOTE.fullmatch(" ".join(text[text.index("After a synchronized restart"):].split()))


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_json_and_csv_carry_the_regime_and_the_load(plans, name):
    _, load, want = CASES[name]
    p = plans(name)
    doc = json.loads(p.to_json())
    row = doc["rows"][0]
    assert row["regime"] == _words(want) and row["load"] == pytest.approx(load, rel=LOAD_TOL)
    assert row["storms_per_day"] == p.rows[0].storms_per_day.tolist()     # the numbers stay
    assert any(n.startswith("saturated: fleet") for n in doc["notes"]) == bool(want)
    assert any(n.startswith("Load (") for n in doc["notes"]) == (load > N / (N - 1))
    records = list(csv.DictReader(io.StringIO(p.to_csv())))
    assert [r["k"] for r in records] == ["2", "3", "6"]
    assert [r["regime"] for r in records] == _words(want)
    assert all(float(r["load"]) == pytest.approx(load, rel=LOAD_TOL) for r in records)
    assert p.to_frame()["regime"].tolist() == _words(want)


@pytest.mark.slow
def test_the_operator_s_12_jobs_through_40_mb_per_s_read_saturated_in_every_format(capsys):
    """The command as the operator ran it: a lone write of 21 000 s against
    1 800 s of compute, load 140: two or more write all the time."""
    argv = ["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth",
            "40MB/s", "--jitter", "1%", "--no-what-if", "--max-seconds", "4"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert [c[1:] for c in _levels(text)] == [["saturated (> 99.99% of the time)", "saturated",
                                               "> 99.99%"]] * 3
    assert "(exact)" not in text.split("\n\n")[0] and "Load (the sum" in text
    assert "140 (fleet)" in text
    assert main([*argv, "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["regime"] == [SATURATED] * 3 and row["load"] == pytest.approx(140.0, rel=LOAD_TOL)
    assert main([*argv, "--format", "csv"]) == 0
    records = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["regime"] for r in records] == [SATURATED] * 3


@pytest.mark.slow
def test_5000_jobs_through_40_gb_per_s_read_saturated_in_every_format():
    """Load 58: storms of 2, 1250 and 2500 writers never end (the law's storm
    lasts e^15000 s, inf in float64), so no level reads "0 (exact)"."""
    p = plan(_physical("40 GB/s", n=5000), what_if=False, max_seconds=4, seed=1)
    row = p.rows[0]
    assert p.levels.tolist() == [2, 1250, 2500] and row.regime.tolist() == [SATURATED] * 3
    assert row.load == pytest.approx(5000 * 21 / 1800, rel=LOAD_TOL)
    assert math.isnan(p.settle_hours) and p.settle_method.startswith(SATURATED)
    text = str(p)
    assert [c[1:3] for c in _levels(text)] == [["saturated (> 99.99% of the time)",
                                                "saturated"]] * 3
    assert "0 (exact)" not in text and "58.3 (fleet)" in text and "after about - h" not in text
    doc = json.loads(p.to_json())
    assert doc["rows"][0]["regime"] == [SATURATED] * 3
    assert [r["regime"] for r in csv.DictReader(io.StringIO(p.to_csv()))] == [SATURATED] * 3


@pytest.mark.slow
def test_simulated_rows_of_a_saturated_fleet_read_saturated_not_none_seen():
    """The async and writer-cap what-ifs are simulated: no storm begins in
    their runs (the fleet never leaves n_w >= 2), so the rate is a one-sided
    bound; P's lower bound over that bound's rate bounds the storm duration
    from below, far past a cycle: saturated, not "< 6.9e-07 (none seen)"."""
    p = plan(_physical("40 MB/s"), max_seconds=8, seed=1)
    by = {r.scenario: r for r in p.rows}
    assert by["async"].method.tolist() == ["plain"] * 3
    assert by["async"].regime.tolist() == [SATURATED] * 3
    cap = by["writers <= 3"]                  # at most 3 writers: no storm of 6 at all
    assert cap.regime.tolist() == [SATURATED, SATURATED, EPISODES] and cap.method[-1] == "cap"
    for r in p.rows:                          # the exact rows: every what-if stays saturated
        assert r.regime[0] == SATURATED and r.load >= 70.0 * (1 - LOAD_TOL)
    text = str(p)
    assert "none seen" not in text and "not resolved" not in text
    assert text.count("saturated (> 99.99% of the time)") == 3 * len(p.rows) - 1
    assert "0 (the cap)" in text
    # GPU time writing at 99.5 % or more (half the bandwidth) reads as a share, not "1e+02%"
    assert by["bandwidth x0.5"].writing_share >= 0.995 and "e+02%" not in text


@pytest.mark.slow
def test_the_figure_leaves_saturated_levels_out(plans):
    """At load 2 only n_w >= 6 has storms that come and go: its line has one point."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    p = plans("load 2")
    fig = p.figure()
    try:
        ax, = fig.axes
        line, = [x for x in ax.get_lines() if x.get_label() == "fleet"]
        x, y = line.get_data()
        assert x.tolist() == [6.0] and y.tolist() == [p.rows[0].storms_per_day[-1]]
    finally:
        plt.close(fig)


@pytest.mark.slow
def test_a_restart_of_a_saturated_fleet_does_not_settle_known_either_way():
    """settle_hours: from the law where it applies, else from a random
    launch's run (async checkpoints: no law); saturated at n_w >= 2 either
    way, so no synchronized runs and no hours; a fleet of episodes settles."""
    from stormsim.fleetplan import settle_hours

    hours, how = settle_hours(_physical("40 MB/s"), seed=1)
    assert math.isnan(hours) and how == "saturated at n_w >= 2 (> 99.99% of the time; exact (the law))"
    fleet = _physical("40 MB/s")
    async_fleet = stormsim.Fleet(T=fleet.T, d=fleet.d, jitter=fleet.jitter, checkpoint="async")
    hours, how = settle_hours(async_fleet, seed=1)
    assert math.isnan(hours) and how.startswith("saturated at n_w >= 2 (")
    assert "; from a random launch (" in how
    hours, how = settle_hours(_loaded(1.0), seed=1)
    assert hours > 0 and how.startswith("exact (the law); ")

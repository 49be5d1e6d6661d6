"""Storms after a synchronized restart, block by block (stormsim.settling): the
blocks' counts against the engine's own, the settling time's definition, and
the estimate against direct long synchronized runs."""
import math

import numpy as np
import pytest

import stormsim
from stormsim.settling import (BLOCKS, NOT_IN_BUDGET, TOLERANCE, Settling, blocks_of_firings,
                               restart_storms, settle_time)

#: Occupancy sums: the replay and the kernel add the same stretches in another
#: order and through another clock, so they agree to rounding (relative).
OCCUPANCY_RTOL = 1e-9


def _six(jitter=50.0) -> stormsim.Fleet:
    """6 jobs, T = 1000 s, d = 30 s (load 0.18): settles in hours, runs in seconds."""
    return stormsim.Fleet(T=np.full(6, 1000.0), d=np.full(6, 30.0), jitter=jitter)


_T, _D = np.full(8, 1000.0), np.full(8, 60.0)
KINDS = {
    "fair": stormsim.Fleet(T=_T, d=_D, jitter=20.0),
    "ideal": stormsim.Fleet(T=_T, d=_D, jitter=20.0, throughput="ideal"),
    "power": stormsim.Fleet(T=_T, d=_D, jitter=20.0, throughput="power:0.5"),
    "power cap": stormsim.Fleet(T=_T, d=_D, jitter=20.0, cap=5),
    "unlike jobs": stormsim.Fleet(T=_T * np.linspace(0.8, 1.2, 8), d=_D * np.linspace(1, 5, 8),
                                  jitter=30.0),
    "weights": stormsim.Fleet(T=_T, d=_D, jitter=20.0, weights=np.arange(1.0, 9.0)),
    "async": stormsim.Fleet(T=_T, d=_D, jitter=20.0, checkpoint="async", snapshot=5.0,
                            slowdown=0.2),
    "writer cap": stormsim.Fleet(T=_T, d=_D, jitter=20.0, max_writers=3),
    "no jitter": stormsim.Fleet(T=_T, d=_D),
}


@pytest.mark.parametrize("launch", ["sync", "random"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_blocks_count_what_the_engine_counts(kind, launch):
    """Replayed from a run's firings, the storms (every level) and the time at
    n_w >= k over [0, the instant every job has fired c times] are the
    engine's own counts for a run of c cycles: storms exactly, time to rounding."""
    fleet, fleets, cycles = KINDS[kind], 4, 30
    run = stormsim.simulate(fleet, launch=launch, fleets=fleets, cycles=3 * cycles, seed=3,
                            record_firings=True)
    short = stormsim.simulate(fleet, launch=launch, fleets=fleets, cycles=cycles, seed=3)
    levels = np.arange(1, fleet.n_jobs + 1)
    for f in range(fleets):
        end = short.end_time[f]          # a firing instant: counted, as the engine counts it
        up, busy, reach = blocks_of_firings(fleet, run.firings[f:f + 1], end * (1 + 1e-13), 1,
                                            levels)
        assert reach[0] >= end
        assert up[0, 0].tolist() == short.upcrossings[f, 1:].tolist(), (kind, f)
        above = np.cumsum(short.occupancy[f][::-1])[::-1][1:]
        np.testing.assert_allclose(busy[0, 0], above, rtol=OCCUPANCY_RTOL, atol=OCCUPANCY_RTOL * end)


def test_blocks_split_the_time_and_storms_of_the_whole():
    """Blocks partition [0, B tau): their sums are the one-block counts."""
    fleet = KINDS["fair"]
    run = stormsim.simulate(fleet, launch="sync", fleets=3, cycles=40, seed=1, record_firings=True)
    tau = 30 * 1000.0 / 7
    up, busy, _ = blocks_of_firings(fleet, run.firings, tau, 7, [2, 3])
    up1, busy1, _ = blocks_of_firings(fleet, run.firings, 7 * tau, 1, [2, 3])
    assert up.sum(axis=1).tolist() == up1[:, 0].tolist()
    np.testing.assert_allclose(busy.sum(axis=1), busy1[:, 0], rtol=OCCUPANCY_RTOL)


# -- the settling time's definition ------------------------------------------------------

def _steps(rates, half=0.02):
    r = np.asarray(rates, dtype=np.float64)
    return np.arange(r.size, dtype=np.float64), r, r * (1 - half), r * (1 + half)


def test_settle_time_is_the_first_block_after_the_last_one_out_of_tolerance():
    starts, r, lo, hi = _steps([3.0, 2.0, 1.3, 1.05, 0.95, 1.0, 1.02, 0.99])
    s = settle_time(starts, r, lo, hi, (1.0, 1.0, 1.0))
    assert (s.lo, s.value, s.hi) == (3.0, 3.0, 4.0) and s.unit == "h"   # hi: that block's end
    # a block back out of tolerance later resets it: contiguous, not "first within"
    r2 = np.array([3.0, 1.0, 1.0, 1.2, 1.0, 1.0])
    s2 = settle_time(np.arange(6.0), r2, r2 * 0.98, r2 * 1.02, (1.0, 1.0, 1.0))
    assert s2.value == 4.0


def test_settle_time_bands_give_the_earliest_and_the_latest_start():
    """A block whose band straddles the tolerance's edge: within it for lo, out
    of it for hi; the value goes by the point."""
    starts = np.arange(5.0)
    r = np.array([2.0, 1.12, 1.08, 1.0, 1.0])
    lo, hi = r - 0.05, r + 0.05
    s = settle_time(starts, r, lo, hi, (1.0, 1.0, 1.0))
    assert (s.lo, s.value, s.hi) == (1.0, 2.0, 4.0)
    # an uncertain long-run rate widens the interval both ways
    s = settle_time(starts, r, lo, hi, (1.0, 0.97, 1.03))
    assert s.lo == 1.0 and s.value == 2.0 and s.hi == 4.0
    wide = settle_time(starts, r, r - 0.2, r + 0.2, (1.0, 1.0, 1.0))
    assert wide.value == 2.0 and wide.hi == math.inf
    assert "reaches out of the tolerance" in wide.method


def test_not_settled_by_the_horizon_is_nan_with_the_reason():
    starts, r, lo, hi = _steps([3.0, 2.0, 1.5, 1.3])
    s = settle_time(starts, r, lo, hi, (1.0, 1.0, 1.0))
    assert math.isnan(s.value) and s.method == "not settled by the horizon"


# -- restart_storms ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def six():
    return restart_storms(_six(), (2, 3, 6), seed=1)


def test_restart_storms_gives_blocks_bands_and_settling_per_level(six):
    s = six
    assert isinstance(s, Settling) and s.levels.tolist() == [2, 3, 6]
    assert s.block_hours.size == BLOCKS and s.storms_per_day.shape == (BLOCKS, 3)
    assert np.allclose(np.diff(s.block_hours), s.tau_hours)       # contiguous, equal
    assert np.all(s.storms_per_day_lo <= s.storms_per_day) and np.all(
        s.storms_per_day <= s.storms_per_day_hi)
    law = stormsim.stats.stationary.stationary(_six())
    assert s.long_run_per_day.tolist() == pytest.approx([law.storms_per_s[k] * 86400 for k in (2, 3, 6)])
    two = s.hours(2)
    assert two.lo <= two.value <= two.hi and two.value in s.block_hours   # a block's start
    assert two.value <= s.horizon_hours / 2 and s.method.startswith("exact (the law); ")
    # the first storm of every level is the restart itself: every fleet's first firing
    assert s.storms_per_day[0, 2] > 0
    six_level = s.hours(6)
    assert math.isnan(six_level.value) and six_level.method.startswith("not resolved")
    text = s.table()
    assert f"settled within {TOLERANCE:.0%} at n_w>=2: " in text and len(text.splitlines()) > BLOCKS
    assert s.to_dict()["settle"][0]["value"] == two.value


def test_more_jitter_settles_sooner():
    slow = restart_storms(_six(30.0), seed=1).hours(2)
    fast = restart_storms(_six(100.0), seed=1).hours(2)
    assert fast.hi < slow.lo


def test_a_budget_too_small_buys_no_blocks():
    s = restart_storms(_six(), seed=1, max_seconds=1e-9)
    assert s.fleets == 0 and math.isnan(s.hours(2).value) and s.method.startswith(NOT_IN_BUDGET)


# -- against long synchronized runs ------------------------------------------------------------

#: The direct measurement's windows (cycles) and fleets: cumulative engine runs to
#: w, 2w, ... cycles from the restart (same seed: the same trajectories, so their
#: differences count each window (A_{c-w}, A_c] exactly); with 3x the estimate's
#: fleets and windows twice its blocks, each window's rate is ~2.5x as precise.
WINDOW, DIRECT_FLEETS = 4, 16_000


def _direct_settle(fleet: stormsim.Fleet, level: int, until: int, nu: float, seed: int) -> tuple:
    """(settling time h, window h) from the engine's counts alone: the start of
    the first window after which every window's rate is within TOLERANCE of nu."""
    cum, ends = [], []
    for c in range(WINDOW, until + 1, WINDOW):
        run = stormsim.simulate(fleet, launch="sync", fleets=DIRECT_FLEETS, cycles=c, seed=seed)
        cum.append(run.upcrossings[:, level].sum())
        ends.append(run.end_time.copy())
    counts = np.diff([0, *cum])
    edges = np.array([np.zeros(DIRECT_FLEETS), *ends])
    rates = counts / np.diff(edges, axis=0).sum(axis=1)
    ok = np.abs(rates / nu - 1.0) <= TOLERANCE
    first = 0 if ok.all() else int(np.flatnonzero(~ok)[-1]) + 1
    starts = edges.mean(axis=1) / 3600.0
    return float(starts[first]), float(np.mean(np.diff(starts)))


def test_the_settling_time_agrees_with_a_direct_long_sync_run():
    """The estimate's interval holds the settling time that direct engine runs
    (another seed, 16 000 fleets, windows of 4 cycles, no replay) find, to one
    window plus one block (both answers are a window's or a block's start)."""
    fleet = _six()
    est = restart_storms(fleet, (2,), seed=1)
    s = est.hours(2)
    nu = est.long_run_per_day[0] / 86400
    cycles = int(round(est.horizon_hours * 3600 / 1030 / WINDOW)) * WINDOW  # T + d = 1030 s
    direct, window = _direct_settle(fleet, 2, cycles, nu, 7)
    slack = window + est.tau_hours
    assert s.lo - slack <= direct <= s.hi + slack, (s, direct)
    assert abs(s.value - direct) <= 2 * slack, (s, direct)


#: Seeds x late blocks whose 95 % bands are checked against the law (truth where
#: the rates have settled: half a horizon past a settling time of ~1/10 of it).
COVERAGE_SEEDS = 12
#: The share of bands holding the truth: 95 % within ~3 binomial standard
#: errors of 12 x 16 x 2 checks (1.1 % each; blocks of one run are nearly
#: independent at this spacing).
COVERAGE_RANGE = (0.91, 0.985)


def test_the_blocks_bands_cover_the_long_run_rate_once_settled():
    fleet = _six(100.0)
    law = stormsim.stats.stationary.stationary(fleet)
    settled = restart_storms(fleet, (2,), seed=99).hours(2)       # full effort: ~2 h [lo, hi]
    held = []
    for seed in range(COVERAGE_SEEDS):
        s = restart_storms(fleet, (2, 3), seed=seed, fleets=64)
        assert settled.hi <= s.horizon_hours / 4      # the late half, long settled: the law is truth
        late = slice(BLOCKS // 2, BLOCKS)
        for i, k in enumerate(s.levels):
            truth = law.storms_per_s[k] * 86400
            held += ((s.storms_per_day_lo[late, i] <= truth)
                     & (truth <= s.storms_per_day_hi[late, i])).tolist()
    share = float(np.mean(held))
    assert COVERAGE_RANGE[0] <= share <= COVERAGE_RANGE[1], share

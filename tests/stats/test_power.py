"""The long-run power of a base fleet from the law (MODEL.md E6; stats.power):
against every writer set's exact probability, and against the engine."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from enumeration import exact_law, small_fleets
from hypothesis import given, settings
from hypothesis import strategies as st

import stormsim
from stormsim import SpecError
from stormsim.stats.power import power_law

#: The law's mean (flow balance: work per second = mean work x checkpoint
#: rate) against the mean over exact writer-set probabilities: two routes
#: through ~1e-15-accurate floats of <= 8 jobs; a wrong rate factor (the cap
#: on computers, a missing job) moves it by far more.
MEAN_TOL = 1e-11

#: The engine's time-average power over 32 fleets x 2000 cycles against the
#: law: its standard error is ~2e-4 of the mean here; 5 standard errors.
ENGINE_REL_TOL = 1e-3


def _exact_power(fleet, busy, idle):
    """E[power] and P(power = x) by enumeration: computers run at min(1, C / n_c)."""
    n, cap = fleet.n_jobs, fleet.cap
    law = exact_law(fleet)
    mean, dist = Fraction(0), {}
    for S, p in law["pi"].items():
        n_c = n - sum(S)
        rc = Fraction(1) if math.isinf(cap) or n_c <= cap else Fraction(cap) / n_c
        watts = sum(Fraction(idle[i]) + (0 if S[i] else rc * Fraction(busy[i] - idle[i]))
                    for i in range(n))
        mean += p * watts
        dist[watts] = dist.get(watts, 0) + p
    return mean, dist


@settings(max_examples=40, deadline=None)
@given(fleet=small_fleets(), equal_drop=st.booleans(), data=st.data())
def test_mean_and_distribution_against_every_writer_set(fleet, equal_drop, data):
    n = fleet.n_jobs
    idle = data.draw(st.lists(st.floats(0.0, 300.0), min_size=n, max_size=n))
    drops = data.draw(st.lists(st.floats(1.0, 700.0), min_size=n, max_size=n))
    drops = [drops[0]] * n if equal_drop else drops
    busy = [a + b for a, b in zip(idle, drops)]
    got = power_law(fleet, busy, idle)
    mean, dist = _exact_power(fleet, busy, idle)
    assert got.mean == pytest.approx(float(mean), rel=MEAN_TOL)
    if not equal_drop and len(set(drops)) > 1:
        assert got.levels is None
        return
    for q in (0.01, 0.5, 0.99):
        cdf, want = Fraction(0), None
        for watts in sorted(dist):
            cdf += dist[watts]
            if cdf >= Fraction(q):
                want = watts
                break
        assert got.quantile(q) == pytest.approx(float(want), rel=MEAN_TOL)


def test_mean_agrees_with_the_engine():
    fleet = stormsim.Fleet.identical(12, load=0.8, jitter=0.05)
    law = power_law(fleet, 700.0, 100.0)
    run = stormsim.simulate(fleet, launch="random", fleets=32, cycles=2000, burn_in=100, seed=3)
    share = run.occupancy / run.occupancy.sum(axis=1, keepdims=True)
    simulated = float(np.mean(share @ law.levels))
    assert simulated == pytest.approx(law.mean, rel=ENGINE_REL_TOL)


@pytest.mark.parametrize(("busy", "idle", "match"), [
    (-1.0, 0.0, r"busy_power\[0\] = -1.0: must be a finite power"),
    (700.0, math.nan, r"idle_power\[0\] = nan: must be a finite power"),
    (100.0, 700.0, r"idle_power\[0\] = 700.0 W > busy_power\[0\] = 100.0 W"),
])
def test_bad_power_is_refused_by_name(busy, idle, match):
    with pytest.raises(SpecError, match=match):
        power_law(stormsim.Fleet.identical(4, load=0.5, jitter=0.01), busy, idle)


def test_quantile_without_a_distribution_says_why():
    fleet = stormsim.Fleet(T=[1.0, 2.0], d=[0.1, 0.2], jitter=0.02)
    with pytest.raises(SpecError, match="unequal watts"):
        power_law(fleet, [700.0, 1400.0], 100.0).quantile(0.5)


# -- ramp_estimate: ramp events per day and time share with intervals --------

def _ramp_run(events, share, window):
    """A stand-in for a Run with ramps: (fleets, 1, len X) arrays."""
    from types import SimpleNamespace

    events = np.asarray(events, dtype=np.int64)[:, None, :]
    return SimpleNamespace(ramp_events=events, ramp_share=np.asarray(share, float)[:, None, :],
                           window=np.asarray(window, float), ramp_windows=(1.0,),
                           ramp_thresholds=tuple(float(x) for x in range(events.shape[2])))


#: Ratios of sums recomputed here in another order than the estimator's.
RATIO_RTOL = 1e-12


def test_ramp_estimate_is_a_ratio_over_fleets_a_garwood_interval_or_a_bound():
    from scipy.stats import chi2

    from stormsim.stats.power import FEW_FLEETS, ramp_estimate

    fleets = 2 * FEW_FLEETS
    window = np.full(fleets, 86400.0)
    many = np.arange(1, fleets + 1)              # every fleet saw some
    few = np.zeros(fleets, dtype=int)
    few[:3] = [1, 2, 1]                          # 3 fleets saw 4 in all
    none = np.zeros(fleets, dtype=int)
    e = ramp_estimate(_ramp_run(np.stack([many, few, none], 1), np.stack(
        [many / 1e4, few / 1e4, none / 1.0], 1), window))
    assert list(e.method[0]) == ["ratio-log", "garwood", "zero-bound"]
    np.testing.assert_allclose(e.ramp_events_per_day[0], [many.mean(), 4 / fleets, 0.0],
                               rtol=RATIO_RTOL)
    total_days = fleets * 1.0
    np.testing.assert_allclose([e.ramp_events_per_day_lo[0, 1], e.ramp_events_per_day_hi[0, 1]],
                               [chi2.ppf(0.025, 8) / 2 / total_days,
                                chi2.ppf(0.975, 10) / 2 / total_days], rtol=RATIO_RTOL)
    assert e.ramp_events_per_day_hi[0, 2] == pytest.approx(chi2.ppf(0.975, 2) / 2 / total_days,
                                                      rel=RATIO_RTOL)
    assert e.ramp_share_hi[0, 2] == pytest.approx(1 - 0.05 ** (1 / fleets), rel=RATIO_RTOL)
    assert e.ramp_events_per_day_lo[0, 0] < many.mean() < e.ramp_events_per_day_hi[0, 0]
    cell = e.interval(1.0, 1.0)
    assert cell.method.startswith("exact Poisson (Garwood)") and cell.unit == "1/day"


def test_ramp_estimate_refuses_a_run_without_ramps_and_an_unknown_cell():
    from stormsim.stats.power import ramp_estimate

    fleet = stormsim.Fleet.from_jobs(n_jobs=4, size="1 TB", compute_interval="30 min",
                                     bandwidth="10 GB/s", jitter="2%", busy_power="1 MW",
                                     idle_power="0.1 MW")
    with pytest.raises(SpecError, match="^run: no ramps recorded"):
        ramp_estimate(stormsim.simulate(fleet, fleets=2, cycles=5))
    e = ramp_estimate(stormsim.simulate(fleet, fleets=2, cycles=5, ramps=((1.0,), (5e5,))))
    with pytest.raises(SpecError, match=r"^window = 2.0: not one of the run's ramp windows \[1.0\]"):
        e.interval(2.0, 5e5)
    with pytest.raises(SpecError, match="^what = 'rate'"):
        e.interval(1.0, 5e5, "rate")


#: Coverage of ramp_estimate's 95 % intervals against a long run's value:
#: REPLICATES independent runs of a 6-job fleet; the long run's own error is
#: ~1/7 of one replicate's. Each replicate covers with probability ~0.95, so
#: the count is Binomial(REPLICATES, 0.95): >= COVERED_AT_LEAST of 60 fails
#: with probability < 1e-3 at true coverage 0.95 and is likely below 0.85.
REPLICATES, COVERED_AT_LEAST = 60, 51


@pytest.mark.slow
def test_ramp_intervals_cover_the_long_run_value():
    from stormsim.stats.power import ramp_estimate

    fleet = stormsim.Fleet.from_jobs(n_jobs=6, size="1.2 TB", compute_interval="20 min",
                                     bandwidth="10 GB/s", jitter="3%", busy_power="1 MW",
                                     idle_power="0.2 MW")
    ramps = ((1.0, 60.0), (7e5, 1.5e6))
    truth = ramp_estimate(stormsim.simulate(fleet, fleets=1600, cycles=400, seed=10**6,
                                            ramps=ramps))
    covered_rate = np.zeros((2, 2), dtype=int)
    covered_share = np.zeros((2, 2), dtype=int)
    for seed in range(REPLICATES):
        e = ramp_estimate(stormsim.simulate(fleet, fleets=32, cycles=400, seed=seed,
                                            ramps=ramps))
        covered_rate += (e.ramp_events_per_day_lo <= truth.ramp_events_per_day) & \
            (truth.ramp_events_per_day <= e.ramp_events_per_day_hi)
        covered_share += (e.ramp_share_lo <= truth.ramp_share) & (truth.ramp_share <= e.ramp_share_hi)
    assert np.all(truth.method == "ratio-log"), truth.method    # a measurable truth everywhere
    assert covered_rate.min() >= COVERED_AT_LEAST, covered_rate
    assert covered_share.min() >= COVERED_AT_LEAST, covered_share


def test_the_engines_percentiles_are_the_laws_on_a_jittered_base_fleet():
    # equal drops: power is a function of n_w, so the law gives its distribution. Here
    # the law's CDF is 0.0038 one level below its 1st percentile and 0.021 at it: a
    # fleet's time share at those levels over 3000 cycles (~2 % relative error) would
    # have to be off by a factor of 2.6 to move its percentile, so every fleet's
    # percentiles are the law's exactly (the top level is the 99th percentile)
    fleet = stormsim.Fleet.identical(6, T=1.0, load=0.6, jitter=0.05).replace(
        busy_power=700.0, idle_power=100.0)
    law = power_law(fleet, fleet.busy_power, fleet.idle_power)
    cdf = np.cumsum(law.pmf[::-1])
    assert cdf[1] < 0.01 / 2.5 and cdf[2] > 0.01 * 2 and cdf[-2] < 0.99 / 1.9, cdf
    run = stormsim.simulate(fleet, fleets=32, cycles=3000, seed=5)
    np.testing.assert_array_equal(run.power_p01, law.quantile(0.01))
    np.testing.assert_array_equal(run.power_p99, law.quantile(0.99))
    assert law.quantile(0.01) == 1800.0 and law.quantile(0.99) == 4200.0

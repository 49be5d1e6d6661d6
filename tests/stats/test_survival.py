"""Kaplan-Meier estimates for right-censored first passages (stormsim.stats.survival)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from stormsim.stats.survival import kaplan_meier, median_survival, passage_times, survival_at

#: Exact rational values computed by hand, compared after float rounding of
#: a handful of products and sums: a few ulps.
EXACT_RTOL = 1e-12
#: Band values below were worked by hand to 5 significant digits.
HAND_RTOL = 5e-5
#: The 6-MP table is published to 3 decimals.
PUBLISHED_ATOL = 5e-4
#: Monte Carlo median of 4000 censored exponentials: its standard error is
#: about 1 / (2 f(m) sqrt(n_at_risk)) ~ 0.02 (f(ln 2) = 1/2, ~3000 fleets
#: still at risk there); 4 standard errors.
MC_MEDIAN_ATOL = 0.08
#: Dropping the censored fleets biases the median low by ~0.2 here (they are
#: the late ones); well over the Monte Carlo noise above.
NAIVE_BIAS_MIN = 0.15


def _hand_case():
    # (time, observed): 10 fleets, 3 censored; a tie of two passages at 5 and
    # a passage tied with a censoring at 2 (the censored one is still at risk).
    t = np.array([1, 2, 2, 3, 4, 5, 5, 6, 7, 8], dtype=float)
    obs = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1], dtype=bool)
    return t, obs


def test_hand_computed_curve():
    """Worked by hand:

    t  at risk  passages  S                        Greenwood sum
    1  10       1         9/10                     1/90
    2   9       1         8/10                     + 1/72
    3   7       1         8/10 * 6/7   = 24/35     + 1/42
    5   5       2         24/35 * 3/5  = 72/175    + 2/15
    7   2       1         72/175 / 2   = 36/175    + 1/2
    8   1       1         0                        inf
    """
    t, obs = _hand_case()
    km = kaplan_meier(t, obs)
    assert km.time.tolist() == [1, 2, 3, 5, 7, 8]
    assert km.at_risk.tolist() == [10, 9, 7, 5, 2, 1]
    assert km.events.tolist() == [1, 1, 1, 2, 1, 1]
    S = [Fraction(9, 10), Fraction(8, 10), Fraction(24, 35), Fraction(72, 175), Fraction(36, 175), 0]
    assert km.survival == pytest.approx([float(x) for x in S], rel=EXACT_RTOL, abs=0)
    gw = np.cumsum([1 / 90, 1 / 72, 1 / 42, 2 / 15, 1 / 2])
    assert km.greenwood[:5] == pytest.approx(gw, rel=EXACT_RTOL)
    assert math.isinf(km.greenwood[5])
    assert km.n == 10 and km.n_censored == 3

    # log-log band S ** exp(-+ z sqrt(V) / |log S|), z = 1.959964, by hand:
    # t=1: w = 1.959964 * 0.105409 / 0.105361 = 1.960858 -> L = 0.47301, U = 0.98528
    # t=3: w = 1.959964 * 0.220929 / 0.377294 = 1.147679 -> L = 0.30459, U = 0.88715
    # t=5: w = 1.959964 * 0.426782 / 0.888143 = 0.941817 -> L = 0.10251, U = 0.70731
    # t=7: w = 1.959964 * 0.825919 / 1.581201 = 1.023757 -> L = 0.012259, U = 0.56661
    assert km.lower[[0, 2, 3, 4]] == pytest.approx([0.47301, 0.30459, 0.10251, 0.012259],
                                                    rel=HAND_RTOL)
    assert km.upper[[0, 2, 3, 4]] == pytest.approx([0.98528, 0.88715, 0.70731, 0.56661],
                                                    rel=HAND_RTOL)
    # S = 0 at t = 8: Greenwood's variance is 0/0 there (inf), the log-log band
    # cannot be formed, and the band is the uninformative [0, 1] (not [0, 0],
    # which would claim S = 0 is known exactly from a single fleet at risk).
    assert km.lower[5] == 0.0 and km.upper[5] == 1.0


def test_hand_computed_median_and_interval():
    # S first <= 1/2 at t = 5 (72/175 = 0.411); the band's lower edge is
    # already <= 1/2 at t = 1 (0.473); its upper edge is above 1/2 at every
    # passage up to t = 7 (0.567), and at t = 8, where S = 0, the band is the
    # uninformative [0, 1] (Greenwood's variance is undefined there): the data
    # do not bound the median above, so the upper limit is inf (not the
    # finite, unfounded 8 that a band of [0, 0] at S = 0 would give).
    t, obs = _hand_case()
    assert median_survival(t, obs) == (5.0, 1.0, math.inf)
    assert kaplan_meier(t, obs).median == (5.0, 1.0, math.inf)


def test_published_6mp_table():
    """Freireich et al. (1963) 6-MP arm, as tabulated in Klein and Moeschberger,
    Survival Analysis, Table 4.1: S(t) and Greenwood standard errors; median 23."""
    t = [6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35]
    e = [1, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    km = kaplan_meier(t, np.array(e, dtype=bool))
    assert km.time.tolist() == [6, 7, 10, 13, 16, 22, 23]
    assert km.survival == pytest.approx([0.857, 0.807, 0.753, 0.690, 0.627, 0.538, 0.448],
                                        abs=PUBLISHED_ATOL)
    se = km.survival * np.sqrt(km.greenwood)
    assert se == pytest.approx([0.076, 0.087, 0.096, 0.107, 0.114, 0.128, 0.135],
                               abs=PUBLISHED_ATOL)
    med, lo, hi = km.median
    # lower edge first <= 1/2 at t = 13 (0.432); the upper edge never gets
    # there (0.680 at the last passage): the data cannot bound it above.
    assert (med, lo, hi) == (23.0, 13.0, math.inf)


def test_no_censoring_is_the_empirical_distribution():
    rng = np.random.default_rng(3)
    t = rng.integers(0, 50, size=301).astype(float)
    km = kaplan_meier(t)
    ecdf = np.array([(t <= u).mean() for u in km.time])
    # a product of (1 - d/n) telescopes to the empirical survival: rounding only
    assert km.survival == pytest.approx(1.0 - ecdf, abs=1e-12)
    # the median is the smallest t with F(t) >= 1/2: the lower sample median
    assert km.median[0] == np.sort(t)[150]


def test_median_is_not_moved_by_rounding():
    # sorted 0 0 2 3 4 5 5 6 6 6: (8/10)(7/8)(6/7)(5/6) is 1/2 after the passage
    # at 4, exactly, but the product rounds to 0.5000000000000001
    t = np.array([2.0, 6.0, 5.0, 0.0, 3.0, 6.0, 4.0, 0.0, 6.0, 5.0])
    km = kaplan_meier(t)
    assert km.survival[km.time == 4.0][0] == 0.5000000000000001   # the rounding guarded against
    assert km.median[0] == 4.0 == np.sort(t)[4]     # smallest t with S(t) <= 1/2


def test_all_censored_and_empty():
    km = kaplan_meier([5.0, 5.0, 5.0], [False, False, False])
    assert km.time.size == 0 and km.n_censored == 3
    assert km.median == (math.inf, math.inf, math.inf)
    assert survival_at(km, [0.0, 10.0]).tolist() == [1.0, 1.0]
    assert all(math.isnan(x) for x in median_survival([], []))


def test_step_function_evaluation():
    t, obs = _hand_case()
    km = kaplan_meier(t, obs)
    assert km([0.5, 1.0, 1.5, 4.9, 5.0, 100.0]).tolist() == pytest.approx(
        [1.0, 0.9, 0.9, 24 / 35, 72 / 175, 0.0], rel=EXACT_RTOL)


def test_censoring_is_not_ignored():
    """Exponential passages (median ln 2) censored at uniform times: the
    Kaplan-Meier median recovers ln 2; dropping the censored fleets does not."""
    rng = np.random.default_rng(12)
    n = 4000
    x = rng.exponential(1.0, n)
    c = rng.uniform(0.0, 2.0, n)
    t, obs = np.minimum(x, c), x <= c
    med, lo, hi = median_survival(t, obs)
    assert med == pytest.approx(math.log(2), abs=MC_MEDIAN_ATOL)
    assert lo <= math.log(2) <= hi
    naive = np.median(t[obs])           # what ignoring censoring gives
    assert naive < math.log(2) - NAIVE_BIAS_MIN


def test_passage_times_from_run_arrays():
    pc = np.array([3, -1, 0, 7, -1])
    pt = np.array([3.5, np.inf, 0.2, 7.7, np.inf])
    end = np.array([3.5, 10.1, 0.2, 7.7, 10.4])
    t, obs = passage_times(pc, cycles=10)
    assert t.tolist() == [3, 10, 0, 7, 10] and obs.tolist() == [True, False, True, True, False]
    t, obs = passage_times(pc, 10, pt, end)
    assert t.tolist() == [3.5, 10.1, 0.2, 7.7, 10.4]
    with pytest.raises(ValueError, match="needs end_time"):
        passage_times(pc, 10, pt)


def test_passages_at_or_after_the_cap_are_censored_at_the_cap():
    # a run stops at its slowest job's K-th firing, so a passage can be seen
    # at fleet cycle >= K; in cycles every fleet is censored at K
    pc = np.array([3, -1, 10, 12, -1])
    t, obs = passage_times(pc, cycles=10)
    assert t.tolist() == [3, 10, 10, 10, 10]
    assert obs.tolist() == [True, False, False, False, False]
    # in seconds each fleet is followed to its own end: late passages are seen
    pt = np.array([3.5, np.inf, 10.2, 12.9, np.inf])
    end = np.array([3.5, 10.1, 10.2, 12.9, 10.4])
    t, obs = passage_times(pc, 10, pt, end)
    assert t.tolist() == [3.5, 10.1, 10.2, 12.9, 10.4]
    assert obs.tolist() == [True, False, True, True, False]


def test_cycle_median_with_passages_beyond_the_cap():
    """A pair with T = 1 and 2.2: the run stops at the slow job's 20th firing,
    when the fast one has fired ~44 times, so passages are recorded at fleet
    cycles up to ~31 > K = 20 while 93% of the fleets never pass. Counting
    the late passages as events (the others censored at K) left only passers
    at risk after K: S fell to 0 and the median was a bogus 25 cycles."""
    from stormsim import Fleet, simulate

    K = 20
    run = simulate(Fleet(T=[1.0, 2.2], d=[0.002, 0.002]), fleets=4000, cycles=K, seed=3,
                   passage_level=2)
    pc = run.passage_cycle
    late = (pc >= K).sum()
    assert late > 50 and (pc < 0).mean() > 0.9          # the evidence's situation
    km = kaplan_meier(*passage_times(pc, K))
    assert km.time.max() < K and km.n_censored == (pc < 0).sum() + late
    # S after the last event is the share of fleets not passed before K
    assert km.survival[-1] == pytest.approx(((pc < 0) | (pc >= K)).mean(), rel=EXACT_RTOL)
    assert km.median == (math.inf, math.inf, math.inf)
    # in seconds: censored at each fleet's end; most never pass, so no median either
    kms = kaplan_meier(*passage_times(pc, K, run.passage_time, run.end_time))
    assert kms.n_censored == (pc < 0).sum() and math.isinf(kms.median[0])


def test_bad_input():
    with pytest.raises(ValueError, match="time has 2 values but observed has 3"):
        kaplan_meier([1.0, 2.0], [True, False, True])
    with pytest.raises(ValueError, match="time must be finite"):
        kaplan_meier([1.0, np.inf], [True, False])
    with pytest.raises(ValueError, match=r"confidence = 1.5: must be in \(0, 1\)"):
        kaplan_meier([1.0], confidence=1.5)


def test_level_of_0_2_0_warns_and_gives_the_confidence():
    t, obs = [1.0, 2.0, 3.0, 4.0], [True, True, False, True]
    with pytest.warns(DeprecationWarning, match=r"kaplan_meier\(level=...\) is now "
                      r"kaplan_meier\(confidence=...\)"):
        old = kaplan_meier(t, obs, level=0.9)
    new = kaplan_meier(t, obs, confidence=0.9)
    assert np.array_equal(old.lower, new.lower) and new.confidence == 0.9
    with pytest.warns(DeprecationWarning, match="KaplanMeier.level is now KaplanMeier.confidence"):
        assert new.level == 0.9
    with pytest.warns(DeprecationWarning, match=r"median_survival\(level=...\)"):
        assert median_survival(t, obs, level=0.9) == median_survival(t, obs, confidence=0.9)

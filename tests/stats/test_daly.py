"""Daly's law (stormsim.stats.daly): his published cases, the exact optimum
against the Lambert-function closed form, and bad input named."""
from __future__ import annotations

import math

import pytest
from scipy.special import lambertw

from stormsim.errors import SpecError
from stormsim.stats.daly import (daly_breakdown, daly_expected_time, daly_goodput,
                                 daly_interval_approx, daly_optimum, young_interval)

MIN, HOUR = 60.0, 3600.0

#: Daly (2006) prints his optima to 0.1 min: a value rounds to the printed one
#: iff it lies within half a unit of that last digit.
PRINTED = 0.05 * MIN

#: Two evaluations of one root (brentq to 4 ulp; lambertw to a few ulp away
#: from its branch point -1/e, i.e. for d/M >= 1e-4): 1e-12 relative leaves
#: three decades for the root's conditioning.
ROOT_RTOL = 1e-12

#: One formula's value against its hand-derived closed form: exp, expm1 and
#: a product, each within an ulp: 8 ulp.
FORMULA_RTOL = 8 * 2.0 ** -52

# T_s = 500 h (the job's total work, which no optimum depends on), R = 10 min, d = 5 min.
DALY_D, DALY_R = 5 * MIN, 10 * MIN


@pytest.mark.parametrize("M, exact, higher_order", [
    (24 * HOUR, 116.7, 116.7),  # his Fig. 3: "tau_opt = 117 min"
    (6 * HOUR, 56.7, 56.7),     # Fig. 4: "57 min"
    (15 * MIN, 9.2, 9.1),       # Fig. 5: "9.1 min"; the exact optimum is 9.17 min
])
def test_dalys_published_cases(M, exact, higher_order):
    """The issue's 116.7, 56.7 and 9.2 min are the exact optima; Daly's
    higher-order estimate gives 116.7, 56.7 and 9.1 (as his figures print).
    At M = 15 min the two differ by 1.5 s across a rounding edge (9.167 and
    9.141 min): the case tells the formulas apart."""
    assert abs(daly_optimum(DALY_D, M, DALY_R) - exact * MIN) <= PRINTED
    assert abs(daly_interval_approx(DALY_D, M) - higher_order * MIN) <= PRINTED


@pytest.mark.parametrize("d, M", [(5.0, 1440.0), (5.0, 15.0), (1.0, 2.0), (0.3, 1.0), (1e-3, 10.0)])
def test_exact_optimum_is_the_lambert_root(d, M):
    """T* = M (1 + W_0(-e^{-1 - d/M})), and it is a maximum of the goodput."""
    opt = daly_optimum(d, M, 0.5)
    closed = M * (1.0 + lambertw(-math.exp(-1.0 - d / M)).real)
    assert opt == pytest.approx(closed, rel=ROOT_RTOL)
    # A maximum: 0.1% either side gives less goodput (the optimum is flat to
    # second order: the drop, ~1e-6 relative, is far above rounding, 1e-15).
    G = daly_goodput(opt, d, M, 0.5)
    assert daly_goodput(opt * 0.999, d, M, 0.5) < G > daly_goodput(opt * 1.001, d, M, 0.5)


def test_optimum_does_not_depend_on_restart():
    assert daly_optimum(5.0, 100.0, 0.0) == daly_optimum(5.0, 100.0, 50.0)


def test_expected_time_closed_forms():
    """T + d = M, R = 0: E = M (e - 1); R = M: one more factor e; M = inf: E = T + d."""
    assert daly_expected_time(0.5, 0.5, 1.0, 0.0) == pytest.approx(math.e - 1.0, rel=FORMULA_RTOL)
    assert daly_expected_time(3.0, 1.0, 4.0, 4.0) == pytest.approx(4 * math.e * (math.e - 1),
                                                                    rel=FORMULA_RTOL)
    assert daly_expected_time(3.0, 1.0, math.inf, 7.0) == 4.0
    assert daly_goodput(3.0, 1.0, math.inf, 7.0) == 0.75
    assert daly_optimum(1.0, math.inf) == math.inf


def test_young_is_the_first_order_limit():
    """d / M -> 0: Daly's optimum / sqrt(2 d M) - 1 ~ sqrt(d / 2M) / 3 - sqrt(d / 2M)
    (his expansion); at d / M = 1e-6 that is 4.7e-4, so within 1e-3 of Young."""
    d, M = 1.0, 1e6
    assert young_interval(d, M) == math.sqrt(2e6)
    assert daly_optimum(d, M) / young_interval(d, M) == pytest.approx(1.0, abs=1e-3)
    assert daly_optimum(d, M) != pytest.approx(young_interval(d, M), rel=1e-4)


@pytest.mark.parametrize("call, name", [
    (lambda: daly_goodput(0.0, 1.0, 10.0, 0.0), "T"),
    (lambda: daly_goodput(math.inf, 1.0, 10.0, 0.0), "T"),
    (lambda: daly_goodput(1.0, -1.0, 10.0, 0.0), "d"),
    (lambda: daly_goodput(1.0, math.nan, 10.0, 0.0), "d"),
    (lambda: daly_goodput(1.0, 1.0, 0.0, 0.0), "mtbf"),
    (lambda: daly_goodput(1.0, 1.0, "often", 0.0), "mtbf"),
    (lambda: daly_goodput(1.0, 1.0, 10.0, -1.0), "restart"),
    (lambda: daly_goodput(1.0, 1.0, 10.0, math.inf), "restart"),
    (lambda: daly_optimum(1.0, -5.0), "mtbf"),
    (lambda: daly_optimum(1.0, 5.0, None), "restart"),
    (lambda: young_interval(0.0, 5.0), "d"),
    (lambda: daly_interval_approx(1.0, math.nan), "mtbf"),
])
def test_bad_input_is_named(call, name):
    with pytest.raises(SpecError, match=rf"^{name} = .*: must be"):
        call()


@pytest.mark.parametrize("T, d, M, R", [(1.0, 0.3, 1.0, 0.5), (550.0, 300.0, 900.0, 600.0),
                                         (2.0, 0.5, math.inf, 3.0), (1.0, 0.1, 1e7, 0.0)])
def test_breakdown_adds_up_and_has_its_limits(T, d, M, R):
    """The parts add up to 1 (a sum of four fractions: 8 ulp); without
    failures only writing is left, d / (T + d); with R = 0 there is no down time."""
    b = daly_breakdown(T, d, M, R)
    assert math.fsum(b.values()) == pytest.approx(1.0, abs=FORMULA_RTOL)
    assert b["goodput"] == daly_goodput(T, d, M, R)
    assert all(v >= 0 for v in b.values())
    if math.isinf(M):
        assert (b["lost"], b["down"]) == (0.0, 0.0)
        assert b["writing"] == pytest.approx(d / (T + d), rel=FORMULA_RTOL)
    if R == 0:
        assert b["down"] == 0.0

"""Interval: the one type of every estimate shown to a user."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stormsim.errors import SpecError
from stormsim.stats import durations
from stormsim.stats.durations import Checkpoints
from stormsim.stats.interval import CONFIDENCE, Interval


def test_the_ends_must_hold_the_value():
    assert Interval(0.5, 0.25, 0.75, "m").confidence == CONFIDENCE
    with pytest.raises(SpecError, match="lo <= value <= hi"):
        Interval(0.0, 4.2e-22, 6.9e-06, "an end above its value")
    with pytest.raises(SpecError, match="lo <= value <= hi"):
        Interval(1.0, 0.0, 0.5, "an end below its value")
    none = Interval(math.nan, math.nan, math.nan, "not estimated")   # no interval at all
    assert math.isnan(none.value)
    bound = Interval(0.0, 0.0, math.inf, "no event: no upper bound")
    assert bound.hi == math.inf


def test_the_old_names_warn_and_read_the_new_ones():
    x = Interval(2.0, 1.0, 3.0, "m", unit="s")
    for old, new in (("low", "lo"), ("lower", "lo"), ("high", "hi"), ("upper", "hi"),
                     ("level", "confidence")):
        with pytest.warns(DeprecationWarning, match=f"Interval.{old} is now Interval.{new}"):
            assert getattr(x, old) == getattr(x, new)
    with pytest.raises(AttributeError, match="no attribute 'lowest'"):
        x.lowest  # noqa: B018  (the read is the test)


@pytest.mark.parametrize("count", [3, 100, 330_000, 10**6])
def test_no_exceedance_gives_a_lower_end_of_exactly_zero(count):
    """No checkpoint past the threshold: P = 0, its lower end 0 and its upper
    end a bound. The Wilson score interval's lower end at p = 0 is 0 exactly
    in arithmetic; in floats it came out 1e-22 to 1e-17 at these counts, an
    end above the value."""
    edges = np.array([1.0, 2.0, 4.0])
    hist = np.zeros((2, edges.size + 1))
    hist[:, 1] = count                                  # every write in [1, 2), two fleets
    c = Checkpoints(np.full(2, float(count)), np.full(2, 1.5 * count), hist, edges, "s")
    p = durations.exceedance(c, 2.0)
    assert p.value == p.lo == 0.0 and 0.0 < p.hi < 1.0


@pytest.mark.parametrize("module", ["stormsim.stats.physical", "stormsim.stats.durations"])
def test_the_estimate_class_of_0_2_0_reads_as_interval_with_a_warning(module):
    import importlib

    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.Estimate is now stormsim.Interval"):
        assert mod.Estimate is Interval
    with pytest.raises(AttributeError, match="no attribute 'Estimat'"):
        mod.Estimat  # noqa: B018  (the read is the test)

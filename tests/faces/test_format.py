"""How values are written for people (stormsim._format): the one home of
number formatting that the tables, the plan and the report share."""
import math

import numpy as np

from stormsim._format import fmt_count, fmt_estimate, fmt_interval, fmt_percent, fmt_value


def test_a_value_to_its_significant_digits():
    assert [fmt_value(x) for x in (1234.56789, math.nan, -math.inf, 7, True)] == \
        ["1234.57", "-", "-inf", "7", "true"]
    assert [fmt_value(x, digits=3) for x in (1234.56789, np.float64(0.012345), 12)] == \
        ["1.23e+03", "0.0123", "12"]


def test_an_interval_a_bound_or_a_point():
    assert fmt_interval(2.0, 1.5, 2.5) == "2 [1.5, 2.5]"
    assert fmt_interval(2.0, 2.0, 2.0) == "2"                   # an empty interval
    assert fmt_interval(0.0, 0.0, 0.0123) == "< 0.012"          # none seen: the bound
    assert fmt_interval(0.0, 0.0, 0.0) == "0"
    assert fmt_interval(math.nan, 1.0, 2.0) == "-"


def test_an_estimate_says_how_it_was_made():
    assert fmt_estimate(12.345, 12.345, 12.345, "exact") == "12.3 (exact)"
    assert fmt_estimate(0.0, 0.0, 0.0, "cap") == "0 (the cap)"
    assert fmt_estimate(0.0, 0.0, 0.031, "plain") == "< 0.031 (none seen)"
    assert fmt_estimate(3.3e-5, 1e-5, 9e-5, "splitting") == "3.3e-05 [1e-05, 9e-05]"


def test_shares_and_counts():
    assert (fmt_percent(0.04234), fmt_percent(math.nan)) == ("4.2%", "-")
    assert [fmt_count(n, "figure") for n in (0, 1, 2)] == ["0 figures", "1 figure", "2 figures"]

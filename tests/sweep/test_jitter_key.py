"""The sweep key ``jitter`` as a percentage of each job's compute interval."""
from __future__ import annotations

import numpy as np
import pytest

import stormsim
from stormsim.errors import SweepError

BASE = "[fixed]\nN = 4\nT = 100.0\nd = 1.0\nlaunch = 'random'\nfleets = 2\ncycles = 10\n"


def test_a_percentage_is_of_each_jobs_T_and_seeds_as_the_same_jitter_in_seconds():
    sweep = stormsim.parse_sweep(BASE.replace("T = 100.0", "T = [100.0, 100.0, 200.0, 50.0]")
                                 + "[grid]\njitter = ['2%', ['2%', 2.0, '2%', 1.0]]\n")
    a, b = sweep.cells
    np.testing.assert_array_equal(a.fleet.jitter, [2.0, 2.0, 4.0, 1.0])   # 2% of 100, 200, 50: exact
    assert a.fleet == b.fleet and a.run_seed == b.run_seed      # the fleet is the seed's input


@pytest.mark.parametrize("value, message", [
    ("'150%'", r"jitter = \"150%\": a percentage of the compute interval must be in \[0%, 100%\]"),
    ("'-2%'", r"must be in \[0%, 100%\]"),
    ("'two%'", r"\"two%\" is no percentage: write a number and %"),
    ("'2'", r"must be a number >= 0 \(s\), a percentage of the compute interval such as '2%'"),
    ("['1%']", r"jitter = \[\"1%\"\] has 1 values but N = 4"),
])
def test_a_bad_percentage_is_refused(value, message):
    with pytest.raises(SweepError, match=message):
        stormsim.parse_sweep(BASE + f"jitter = {value}\n")

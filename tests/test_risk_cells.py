"""Storm risk with a fixed effort, and as a sweep cell option (issue 11 item 2).

The sweep cases are small (N = 8..12, a few hundred cycles, 2-4 splitting
replicates): they check that numbers flow and stay put, not the estimator's
accuracy (tests/test_splitting.py does that).
"""
import numpy as np
import pytest

import stormsim
from stormsim.errors import SpecError

#: The StormRisk arrays a fixed effort must reproduce bit for bit.
RISK_FIELDS = ("p", "p_lo", "p_hi", "p_rel_error", "rate", "rate_lo", "rate_hi",
               "rate_rel_error", "duration", "duration_lo", "duration_hi", "hits")


def _cell(n=10):
    return stormsim.Fleet.identical(n, load=0.6, jitter=0.01)


FIXED = dict(max_seconds=None, max_fleets=32, batch_fleets=16, replicates=2, cycles=150,
             burn_in=20, flux_cycles=300, trials=40, seed=5)


def test_fixed_effort_is_a_function_of_seed_and_effort_not_threads():
    a = stormsim.storm_risk(_cell(), [2, 8], **FIXED)
    b = stormsim.storm_risk(_cell(), [2, 8], threads=1, **FIXED)
    assert a.fleets == 32 and a.batches == 2
    assert list(a.level_method) == ["plain", "splitting"]      # k = 8 of 10: not resolved
    assert a.split.replicates == 2 and a.stopped == "replicates"
    for name in RISK_FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert list(a.p_method) == list(b.p_method) and list(a.rate_method) == list(b.rate_method)


def test_fixed_effort_plain_stops_at_max_fleets_or_rel_error():
    kw = {**FIXED, "replicates": None}
    r = stormsim.storm_risk(_cell(), [2], method="plain", **kw)
    assert r.stopped in ("rel_error", "max_fleets") and r.split is None
    loose = stormsim.storm_risk(_cell(), [2], method="plain", rel_error=0.5, **kw)
    assert loose.stopped == "rel_error" and loose.fleets == 32      # MIN_BATCHES batches


def test_fixed_effort_errors_name_the_parameter():
    with pytest.raises(SpecError, match="max_seconds = None .* needs max_fleets"):
        stormsim.storm_risk(_cell(), [2], max_seconds=None)
    with pytest.raises(SpecError, match="replicates = 4 is the splitting effort"):
        stormsim.storm_risk(_cell(), [2], max_seconds=5, replicates=4)
    with pytest.raises(SpecError, match="replicates = 0"):
        stormsim.storm_risk(_cell(), [2], max_seconds=None, max_fleets=16, replicates=0)

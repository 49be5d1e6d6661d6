"""Splitting's settings in one object (SplitSettings): one place for their
defaults, checked on construction, and storm_risk's former keywords."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import stormsim
from stormsim import SplitSettings, SpecError
from stormsim.risk.settings import DEFAULT_BURN_IN, DEFAULT_SPLIT_BURN_IN, FIXED_REPLICATES
from stormsim.risk.splitting import storm_split_until
from stormsim.sweep.keys import RISK_DEFAULTS, RISK_SPLIT_KEYS

#: The StormRisk arrays the two spellings must give bit for bit.
RISK_FIELDS = ("p_ge", "p_ge_lo", "p_ge_hi", "p_ge_rel_error", "storms_per_s", "storms_per_s_lo",
               "storms_per_s_hi", "storms_per_s_rel_error", "storm_duration", "storm_duration_lo",
               "storm_duration_hi", "hits")


def _cell(n=10):
    """No exact law (the last job has no jitter): "auto" runs plain, then splitting."""
    return stormsim.Fleet(T=[1.0] * n, d=[0.6 / n] * n, jitter=[0.01] * (n - 1) + [0.0])


FIXED = dict(max_seconds=None, max_fleets=32, cycles=150, burn_in=20, seed=5)


def test_the_old_keywords_warn_and_give_the_same_bits():
    new = stormsim.storm_risk(_cell(), [2, 8], **FIXED,
                              split=SplitSettings(trials=40, flux_cycles=300, replicates=3))
    with pytest.warns(DeprecationWarning, match=r"storm_risk\(trials, flux_cycles, replicates"
                      r"=\.\.\.\) is deprecated: give split=SplitSettings\(trials=40, "
                      r"flux_cycles=300, replicates=3\)"):
        old = stormsim.storm_risk(_cell(), [2, 8], **FIXED, trials=40, flux_cycles=300,
                                  replicates=3)
    assert list(new.level_method) == ["plain", "splitting"]       # both paths compared
    for name in RISK_FIELDS:
        assert np.array_equal(getattr(old, name), getattr(new, name), equal_nan=True), name
    assert np.array_equal(old.split.rep_storms_per_s, new.split.rep_storms_per_s)


def test_storm_risk_refuses_a_keyword_it_never_took():
    with pytest.raises(TypeError, match="unexpected keyword argument 'reservoir'"):
        stormsim.storm_risk(_cell(), [2], reservoir=8)


def test_one_burn_in_for_plain_fleets_and_flux_runs():
    """storm_risk measures both after its burn_in: a different split.burn_in is
    refused, not silently overridden; storm_split alone keeps its own default."""
    with pytest.raises(SpecError, match=r"split.burn_in = 30 differs from burn_in = 20"):
        stormsim.storm_risk(_cell(), [2], **FIXED, split=SplitSettings(burn_in=30))
    same = stormsim.storm_risk(_cell(), [2], **FIXED, method="plain",
                               split=SplitSettings(burn_in=20))
    assert same.fleets == 32
    assert inspect.signature(stormsim.storm_risk).parameters["burn_in"].default == \
        DEFAULT_BURN_IN == 80
    assert SplitSettings().burn_in is None and DEFAULT_SPLIT_BURN_IN == 100
    split = stormsim.storm_split(_cell(6), [3], trials=4, replicates=2, flux_cycles=300, seed=1)
    assert split.burn_in == DEFAULT_SPLIT_BURN_IN


def test_the_defaults_live_in_the_settings_and_the_sweep_keys_read_them():
    """A sweep's risk_* keys default to SplitSettings' fields (and storm_risk's
    constants): change one, and the key's default follows."""
    defaults = SplitSettings()
    for key, field in RISK_SPLIT_KEYS.items():
        expected = FIXED_REPLICATES if field == "replicates" else getattr(defaults, field)
        assert RISK_DEFAULTS[field] == expected, key
    assert set(RISK_SPLIT_KEYS.values()) == {"replicates", "trials", "flux_cycles", "horizon",
                                             "basin", "score_every"}
    params = inspect.signature(stormsim.storm_risk).parameters
    for name in ("rel_error", "max_seconds", "method"):
        assert RISK_DEFAULTS[name] == params[name].default, name


def test_settings_are_checked_when_made():
    with pytest.raises(SpecError, match=r"^burn_in = 300: must be an integer in 0\.\.299"):
        SplitSettings(flux_cycles=300, burn_in=300)
    with pytest.raises(SpecError, match=r"^basin = 0: must be an integer level >= 1 or a rule"):
        SplitSettings(basin=0)
    with pytest.raises(SpecError, match=r"^split = \{'trials': 4\}: must be a stormsim"):
        stormsim.storm_split(_cell(6), [3], split={"trials": 4})
    s = SplitSettings(trials=np.int64(7), basin=np.int64(3))
    assert type(s.trials) is int and type(s.basin) is int      # normalized, as checked


def test_rounds_set_the_replicates_themselves():
    with pytest.raises(SpecError, match=r"replicates = 8: storm_split_until runs rounds"):
        storm_split_until(stormsim.Fleet.identical(6, load=0.6, jitter=0.01), [3], 0.1, 10.0,
                          SplitSettings(replicates=8))

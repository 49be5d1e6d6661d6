"""One name per quantity in the storm-risk objects: the names the files and the
per-cell table use (p_ge, storms_per_s, storm_duration, confidence); the names
of 0.2.0 still read, with a DeprecationWarning, for one release."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import stormsim

#: StormRisk's names of 0.2.0 and the names they read.
RISK_OLD = {"p": "p_ge", "p_lo": "p_ge_lo", "p_hi": "p_ge_hi", "p_method": "p_ge_method",
            "p_rel_error": "p_ge_rel_error", "rate": "storms_per_s",
            "rate_lo": "storms_per_s_lo", "rate_hi": "storms_per_s_hi",
            "rate_rel_error": "storms_per_s_rel_error", "rate_method": "storms_method",
            "duration": "storm_duration", "duration_lo": "storm_duration_lo",
            "duration_hi": "storm_duration_hi", "level": "confidence"}
#: Names no storm-risk object gives a field: each says too little.
VAGUE = ("p", "rate", "tail", "duration", "level")


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def test_the_old_storm_risk_names_warn_and_read_the_new_values():
    risk = stormsim.storm_risk(stormsim.Fleet.identical(8, load=0.6, jitter=0.01), [2, 4])
    assert risk.stopped == "exact" and risk.confidence == 0.95
    for old, new in RISK_OLD.items():
        with pytest.warns(DeprecationWarning, match=f"StormRisk.{old} is now StormRisk.{new}"):
            assert _same(getattr(risk, old), getattr(risk, new)), old
    with pytest.raises(AttributeError, match="no attribute 'tail'"):
        risk.tail                                          # noqa: B018


def test_to_dict_uses_the_new_names():
    doc = stormsim.storm_risk(stormsim.Fleet.identical(8, load=0.6, jitter=0.01), [2]).to_dict()
    assert {"p_ge", "p_ge_hi", "storms_per_s", "storms_method", "storm_duration",
            "confidence"} <= set(doc)
    assert not set(RISK_OLD) & set(doc)


@pytest.mark.parametrize("cls", [stormsim.StormRisk, stormsim.SplitEstimate, stormsim.StationaryLaw])
def test_no_field_has_a_vague_name(cls):
    names = {f.name for f in dataclasses.fields(cls)} | {
        n for n in vars(cls) if not n.startswith("_")}
    assert not names & set(VAGUE), sorted(names & set(VAGUE))


#: SplitEstimate's names of 0.2.0 and the names they read.
SPLIT_OLD = {"p": "p_ge", "p_lo": "p_ge_lo", "p_hi": "p_ge_hi", "p_rel_error": "p_ge_rel_error",
             "rate": "storms_per_s", "rate_lo": "storms_per_s_lo", "rate_hi": "storms_per_s_hi",
             "rate_rel_error": "storms_per_s_rel_error", "rep_p": "rep_p_ge",
             "rep_rate": "rep_storms_per_s", "level": "confidence"}


def test_the_old_split_estimate_names_warn_and_read_the_new_values():
    sp = stormsim.storm_split(stormsim.Fleet.identical(6, load=0.6, jitter=0.01), [3], trials=4,
                              replicates=3, flux_cycles=300, seed=1)
    assert sp.confidence == 0.95
    for old, new in SPLIT_OLD.items():
        with pytest.warns(DeprecationWarning,
                          match=f"SplitEstimate.{old} is now SplitEstimate.{new}"):
            assert _same(getattr(sp, old), getattr(sp, new)), old

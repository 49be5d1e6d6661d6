"""storm_risk answers a qualifying fleet from the exact law, and simulates the rest."""
import numpy as np
import pytest

import stormsim
from stormsim.cli import main
from stormsim.errors import SpecError
from stormsim.stats.stationary import DeterministicFleetWarning


def _base(n=16):
    return stormsim.Fleet.identical(n, load=0.6, jitter=0.01)


def test_auto_answers_a_jittered_base_fleet_from_the_law_and_says_so():
    fleet = _base()
    law = stormsim.stationary(fleet)
    r = stormsim.storm_risk(fleet, [2, 8, 16], seed=1)
    # the very numbers of the law (no sampling, no arithmetic in between)
    assert np.array_equal(r.p_ge, law.p_ge[[2, 8, 16]])
    assert np.array_equal(r.storms_per_s, law.storms_per_s[[2, 8, 16]])
    assert np.array_equal(r.storm_duration, law.storm_duration[[2, 8, 16]])
    assert np.array_equal(r.p_ge_lo, r.p_ge) and np.array_equal(r.storms_per_s_hi, r.storms_per_s)
    assert list(r.level_method) == ["exact"] * 3 and r.resolved.all()
    assert r.fleets == 0 and r.stopped == "exact" and r.split is None
    assert r.p_ge[2] < 1e-9 < r.p_ge[1]                           # far below what sampling reaches
    assert "exact (product form)" in str(r)


def test_auto_simulates_what_the_law_cannot_answer():
    """A launch in a given state (a transient), a fleet without jitter, an
    async or a weighted fleet: simulated (plain Monte Carlo, then splitting for
    the levels it leaves unresolved), never answered from the law."""
    cases = {"sync": (_base(8), dict(launch="sync")),
             "no jitter": (stormsim.Fleet.identical(8, load=0.6), {}),
             "async": (stormsim.Fleet.identical(8, load=0.6, jitter=0.01, checkpoint="async"), {}),
             "weights": (stormsim.Fleet(T=[1.0] * 4, d=[0.15] * 4, jitter=0.01,
                                        weights=[1, 2, 1, 2]), {})}
    for name, (fleet, kw) in cases.items():
        r = stormsim.storm_risk(fleet, [2], max_seconds=None, max_fleets=32, seed=1,
                                cycles=100, burn_in=10, **kw)
        assert r.level_method[0] in ("plain", "splitting") and r.fleets == 32, name


def test_method_exact_refuses_a_fleet_without_a_law_and_warns_without_jitter():
    asyn = stormsim.Fleet.identical(8, load=0.6, jitter=0.01, checkpoint="async")
    with pytest.raises(SpecError, match=r"asynchronous job.*no closed form.*storm_risk"):
        stormsim.storm_risk(asyn, [2], method="exact")
    with pytest.warns(DeterministicFleetWarning, match="jitter = 0"):
        r = stormsim.storm_risk(stormsim.Fleet.identical(8, load=0.6), [2], method="exact")
    assert list(r.level_method) == ["exact"]


#: The simulated P(n_w >= 2) of a jittered base fleet lies within this many of
#: its own standard errors of the law (check 6; one comparison, a 1e-4 rule).
Z_BOUND = 3.9


def test_the_exact_answer_agrees_with_the_simulated_one():
    fleet = _base(8)
    exact = stormsim.storm_risk(fleet, [2, 3], seed=2)
    plain = stormsim.storm_risk(fleet, [2, 3], method="plain", max_seconds=None,
                                max_fleets=256, cycles=1000, burn_in=100, seed=2)
    z = (plain.p_ge - exact.p_ge) / (plain.p_ge_rel_error * plain.p_ge)
    assert np.all(np.abs(z) <= Z_BOUND), z


def test_the_risk_command_says_exact(tmp_path, capsys):
    toml = tmp_path / "risk.toml"
    toml.write_text('[fixed]\nN = 8\nT = 1.0\nload = 0.6\njitter = 0.01\ncycles = 100\n'
                    'fleets = 1\n')
    assert main(["risk", str(toml), "--levels", "2,N", "-q"]) == 0
    assert "exact (product form)" in capsys.readouterr().out

"""The benchmark peers integrate the same model as stormsim.

Each peer (SimPy, a NumPy event loop, SimGrid) must reproduce stormsim's
firing times, end times and occupancies on deterministic cases (sigma = 0,
explicit launches; N = 2, 4 and 16; fair, ideal and power f; with and without
a binding cap; simultaneous firings) before its speed means anything.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

# benchmarks/ is not installed with stormsim: import it from the checkout.
from conftest import ROOT
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import peers  # noqa: E402


def _check(name: str) -> None:
    rows = peers.verify(name)
    assert len(rows) == len(peers.verification_cases())
    bad = [r for r in rows if not r["ok"]]
    # VERIFY_RTOL (1e-9): same exact model, different order of rounding only.
    assert not bad, f"{name} disagrees with stormsim beyond {peers.VERIFY_RTOL}: {bad}"


def test_numpy_peer_matches_stormsim():
    _check("numpy")


def test_simpy_peer_matches_stormsim():
    pytest.importorskip("simpy")
    _check("simpy")


def test_simgrid_peer_matches_stormsim():
    if not peers.simgrid_available():
        pytest.skip(f"{peers.SIMGRID_PYTHON} cannot import simgrid "
                    "(apt-get install python3-simgrid)")
    _check("simgrid")


def test_verification_detects_a_wrong_peer(monkeypatch):
    """The check is not vacuous: a peer whose storage is 1% too fast fails it."""
    from benchmarks.peers import numpy_peer

    real = numpy_peer.run

    def skewed(case):
        case = dict(case, f=[x * 1.01 for x in case["f"]])
        return real(case)

    monkeypatch.setattr(numpy_peer, "run", skewed)
    rows = peers.verify("numpy")
    assert not all(r["ok"] for r in rows)


def test_peer_rates_count_the_same_events():
    """On a jittered random case the NumPy peer counts 2 events per firing, as
    stormsim does (a run of K cycles fires at least N K times)."""
    import stormsim

    fleet = stormsim.Fleet.identical(4, T=1.0, load=0.6, jitter=0.01)
    theta = np.random.default_rng(0).uniform(size=(8, 4))
    res = peers.peer_runner("numpy")([peers.make_case(fleet, theta, 20, seed=1)])[0]
    ref = stormsim.simulate(fleet, launch=theta, fleets=8, cycles=20, seed=1)
    assert np.all(res["events"] >= 2 * 4 * 20 - 4)
    # Different random streams, same dynamics: both runs hold 2 N K events per
    # fleet plus the extra phase changes of jobs ahead of the slowest one at
    # the stop (fewer than 2 N per fleet), so the totals differ by < 1/K = 5%.
    assert abs(res["events"].sum() / ref.events.sum() - 1.0) < 1.0 / 20


def test_benchmark_flags_a_busy_machine(monkeypatch):
    """A figure is flagged BUSY when the load average around it exceeded the
    cores or its runs got under 90% of their threads' cores."""
    from benchmarks import harness
    from benchmarks.__main__ import _load

    monkeypatch.setattr(harness.os, "cpu_count", lambda: 2)

    def fig(load, cores):
        return {"loadavg": {"max": load}, "cpu_per_wall": {"median": cores}}

    assert not harness.busy(fig(1.9, 1.0), 1)
    assert harness.busy(fig(2.5, 1.0), 1)           # other work queued
    assert harness.busy(fig(1.0, 1.5), 2)           # 2 threads got 1.5 cores
    assert not harness.busy(fig(2.0, 1.95), 2)
    assert _load(fig(3.38, 1.0), 1) == "3.38 BUSY"
    assert _load(fig(0.8, 1.0), 1) == "0.80"
    assert _load({}, 1) == "-"                       # a JSON of an older benchmark

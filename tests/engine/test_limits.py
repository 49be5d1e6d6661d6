"""Absurd sizes are refused before anything is allocated, with the figure and
the limit; the estimate behind the refusal bounds what is really allocated."""
from __future__ import annotations

import tracemalloc

import numba
import pytest

import stormsim
from stormsim.engine.cost import CALL_OVERHEAD, KERNEL_BYTES_PER_JOB, memory_needed
from stormsim.engine.cost import FLEET_BYTES_PER_JOB, format_bytes, memory_limit
from stormsim.errors import SpecError

#: A refusal computes a product and raises: it must not allocate first (7.28
#: TiB was once attempted). Python's peak allocation during the refused call
#: stays below this (a few arrays of the small sizes checked, messages).
REFUSE_PEAK_BYTES = 16 << 20
#: memory_needed may exceed what Python allocates by this factor (plus the
#: fixed CALL_OVERHEAD): an estimate that refuses what fits is as bad as none.
ESTIMATE_SLACK = 1.10


def _refused(call):
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < REFUSE_PEAK_BYTES, peak
    return str(info.value)


def test_a_trillion_jobs_is_refused_with_the_figure_and_the_limit():
    msg = _refused(lambda: stormsim.Fleet.identical(10**12, load=0.5))
    need = format_bytes(FLEET_BYTES_PER_JOB * 10**12)     # "146 TiB"
    assert f"n_jobs = 1000000000000 needs about {need} of memory" in msg
    assert f"more than the limit of {format_bytes(memory_limit())}" in msg
    assert "use fewer jobs" in msg


def test_recorded_firings_beyond_memory_are_refused():
    fleet = stormsim.Fleet.identical(100, load=0.5)
    msg = _refused(lambda: stormsim.simulate(fleet, fleets=10**6, cycles=10**6,
                                             record_firings=True))
    assert "record_firings=True with fleets = 1000000, N = 100, cycles = 1000000" in msg
    assert "needs about 728 TiB of memory" in msg
    assert "or run without record_firings" in msg


def test_too_many_fleets_in_one_call_are_refused():
    fleet = stormsim.Fleet.identical(100, load=0.5)
    msg = _refused(lambda: stormsim.simulate(fleet, fleets=10**12, cycles=10))
    assert "simulate with fleets = 1000000000000, N = 100 needs about" in msg
    assert "fleet_start continues a run in pieces" in msg


def test_the_limit_is_exactly_the_estimate(monkeypatch):
    """At the boundary: a call needing exactly the limit runs, one byte less refuses."""
    fleet = stormsim.Fleet.identical(8, load=0.5)
    kw = dict(fleets=50, cycles=20, record_firings=True)
    need = memory_needed(8, 50, 20, True, None, numba.get_num_threads())
    monkeypatch.setenv("STORMSIM_MEMORY_LIMIT", str(need))
    assert stormsim.simulate(fleet, **kw).firings.shape == (50, 8, 20)
    monkeypatch.setenv("STORMSIM_MEMORY_LIMIT", str(need - 1))
    assert f"needs about {format_bytes(need)}" in _refused(lambda: stormsim.simulate(fleet, **kw))
    monkeypatch.setenv("STORMSIM_MEMORY_LIMIT", "lots")
    with pytest.raises(SpecError, match=r"STORMSIM_MEMORY_LIMIT = 'lots': must be a number"):
        memory_limit()


@pytest.mark.parametrize("n,fleets,cycles,record", [(10, 1000, 50, True), (100, 200, 20, True),
                                                    (1000, 100, 5, False), (16, 5000, 10, False)])
def test_the_estimate_bounds_what_simulate_allocates(n, fleets, cycles, record):
    """tracemalloc sees every numpy array simulate allocates in Python (the
    kernel's own work space comes from numba's allocator, which it does not
    see, so that term is left out of the comparison)."""
    fleet = stormsim.Fleet.identical(n, load=0.5)
    stormsim.simulate(fleet, fleets=2, cycles=2, record_firings=record)   # compile first
    threads = numba.get_num_threads()
    tracemalloc.start()
    try:
        stormsim.simulate(fleet, fleets=fleets, cycles=cycles, record_firings=record)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    need = memory_needed(n, fleets, cycles, record, None, threads)
    assert peak <= need
    assert need - KERNEL_BYTES_PER_JOB * n * threads <= ESTIMATE_SLACK * peak + CALL_OVERHEAD


def test_the_fleet_estimate_bounds_what_fleet_identical_allocates():
    n = 100_000      # large enough that fixed Python overheads do not count
    tracemalloc.start()
    try:
        stormsim.Fleet.identical(n, load=0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= FLEET_BYTES_PER_JOB * n

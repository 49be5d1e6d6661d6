"""The event loop's short path for lone instants against its general path, bit for bit.

``run_fleet`` takes an instant at which one job alone changes phase by a
short path (``_make_run_fleet``, LONE); ``_make_run_fleet(False, LONE=False)``
sends every instant through the general path. Both must give the same bits
on every input: alike and heterogeneous fleets, ties (sigma = 0 with
simultaneous or evenly spaced launches, equal T_i among unequal d_i), zero
compute intervals (sigma = T: the draw is clipped at 0 for ~16% of
intervals), binding caps, rings and heaps, records, passages, burn-in.
"""
from __future__ import annotations

import numpy as np
import pytest

import stormsim
from stormsim.engine import _kernel
from stormsim.engine.door import root_key
from stormsim.engine.door import histogram_cells
from stormsim.engine.run import DURATION_EDGES, HIST_BINS

general_path = _kernel._make_run_fleet(False, LONE=False)

CYCLES = 40


def fleets():
    """(name, Fleet, theta) cases; theta (N,) launch phases."""
    rng = np.random.default_rng(20261201)
    out = []
    for n in (1, 2, 3, 7, 16):
        for sigma in (0.0, 0.01, 0.3, 1.0):
            for cap in (np.inf, 0.6 * n):
                fleet = stormsim.Fleet.identical(n, T=1.0, load=0.7, jitter=sigma,
                                                 cap=max(1.0, cap))
                for launch, theta in (("random", rng.random(n)), ("sync", np.zeros(n)),
                                      ("stagger", np.arange(n) / n)):
                    out.append((f"alike n={n} sigma={sigma} cap={cap} {launch}", fleet, theta))
    for n in (2, 5, 16):
        for rep in range(6):
            T = 1.0 + 0.3 * rng.uniform(-1, 1, n)
            d = 0.7 / n * (1.0 + 0.3 * rng.uniform(-1, 1, n))
            if rep % 2:  # partial ties: one T, two d
                T[:] = T[0]
                d[1::2] = d[0]
            fleet = stormsim.Fleet(T=T, d=d, jitter=[0.0, 0.02, 0.5][rep % 3] * T,
                                   cap=[np.inf, 0.5 * n][rep % 2])
            theta = np.zeros(n) if rep >= 4 else rng.random(n)
            out.append((f"mixed n={n} rep={rep}", fleet, theta))
    return out


CASES = fleets()


def run(fn, fleet, theta, fleet_index, ring, **kw):
    n = fleet.n_jobs
    args = dict(burn_in=0, level=0, stop_at_passage=False, record=True)
    args.update(kw)
    key0, key1 = root_key(7)
    firings = np.full((n, CYCLES), np.nan)
    occupancy = np.empty(n + 1)
    upcross = np.empty(n + 1, dtype=np.int64)
    writing = np.empty(n)
    dur_out = np.empty(HIST_BINS + 4)
    ret = fn(fleet.T, fleet.d, fleet.jitter, fleet.writer_rate, fleet.computer_rate, theta,
             key0, key1, fleet_index, CYCLES, args["burn_in"], args["level"],
             args["stop_at_passage"], args["record"], ring, ring, firings, occupancy,
             upcross, writing, histogram_cells(DURATION_EDGES), dur_out)
    return ret, firings, occupancy, upcross, writing, dur_out


OPTIONS = [dict(), dict(burn_in=5, level=2), dict(level=1, stop_at_passage=True, record=False)]


@pytest.mark.parametrize("ring", [True, False], ids=["ring", "heap"])
def test_the_short_path_gives_the_general_paths_bits(ring):
    tied = distinct = 0
    for name, fleet, theta in CASES:
        for j, opts in enumerate(OPTIONS):
            for fleet_index in range(3):
                a = run(_kernel.run_fleet, fleet, theta, fleet_index, ring, **opts)
                b = run(general_path, fleet, theta, fleet_index, ring, **opts)
                assert a[0] == b[0], (name, opts)  # passage time, cycle, end time, events
                for x, y, what in zip(a[1:], b[1:], ("firings", "occupancy", "upcross",
                                                     "writing", "durations")):
                    np.testing.assert_array_equal(x, y, err_msg=f"{name} {opts} {what}")
                if j == 0:
                    f = a[1][np.isfinite(a[1])]
                    u = np.unique(f).size
                    tied += f.size - u
                    distinct += u
    # Both kinds of instant were exercised: firings at one instant (ties) and alone.
    assert tied > 1000 and distinct > 10 * tied  # measured: 6262 and 93818


@pytest.mark.parametrize("ring", [True, False], ids=["ring", "heap"])
def test_durations_off_changes_no_other_bit(ring):
    """``run_fleet_nodur`` (DUR=False: the write durations' maximum and
    histogram compiled out) gives ``run_fleet``'s bits for every other
    output, the durations' sum included; the maximum and histogram stay 0."""
    for name, fleet, theta in CASES:
        for opts in OPTIONS:
            a = run(_kernel.run_fleet, fleet, theta, 1, ring, **opts)
            b = run(_kernel.run_fleet_nodur, fleet, theta, 1, ring, **opts)
            assert a[0] == b[0], (name, opts)
            for x, y, what in zip(a[1:5], b[1:5], ("firings", "occupancy", "upcross", "writing")):
                np.testing.assert_array_equal(x, y, err_msg=f"{name} {opts} {what}")
            assert a[5][0] == b[5][0] and not np.any(b[5][1:]), (name, opts)


def test_simulate_without_durations():
    """simulate(durations=False): the E7 fields are None, every other output
    the same bits; the fast-forward and failures keep their kernels."""
    fleet = stormsim.Fleet.identical(8, T=1.0, load=0.7, jitter=0.05)
    for kw in (dict(), dict(burn_in=3, passage_level=2, stop_at_passage=False),
               dict(passage_level=2, fast_forward=True), dict(record_firings=True)):
        a = stormsim.simulate(fleet, fleets=6, cycles=30, seed=3, **kw)
        b = stormsim.simulate(fleet, fleets=6, cycles=30, seed=3, durations=False, **kw)
        for f in ("durations_count", "durations_sum", "durations_max", "durations_hist",
                  "wait_sum", "wait_max", "wait_hist"):
            assert getattr(b, f) is None
        for f in ("occupancy", "passage_time", "passage_cycle", "end_time", "events",
                  "upcrossings", "writing_time", "firings"):
            x, y = getattr(a, f), getattr(b, f)
            assert (x is None and y is None) or x.tobytes() == y.tobytes(), (kw, f)


def test_a_block_of_normals_is_stream_normal_where_it_is_not_nan():
    """``_normal_block`` (the event loop's draws, _NB at once) equals
    ``stream_normal`` bit for bit wherever it gives a value; NaN (the draw
    did not end at its first stream output) comes at the ziggurat's rate,
    1 - mean(_ZIG_RATIO) = 2.76% (bounds: a binomial 5-sigma band over 8,000
    draws)."""
    nb = _kernel._NB
    out = np.empty(nb * 2)
    nan = total = 0
    for job in range(50):
        base = np.uint64(_kernel.stream_base(np.uint64(3), np.uint64(4), 1, job))
        for k0 in range(0, 160, nb):
            _kernel._normal_block(base, k0, out, nb)
            for b in range(nb):
                z = out[nb + b]
                total += 1
                if np.isnan(z):
                    nan += 1
                else:
                    assert z == _kernel.stream_normal(base, k0 + b)
    assert total == 8000
    p = 1.0 - _kernel._ZIG_RATIO.mean()
    assert abs(nan - p * total) <= 5.0 * np.sqrt(total * p * (1.0 - p))


def test_exact_inverse():
    """x * _exact_inverse(r) is x / r bit for bit where it is not 0.0, which
    is exactly at powers of two with a normal inverse."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-300, 300, 2000),
                        [0.0, -0.0, 5e-324, 1.7e308]])
    for r in (1.0, 0.5, 0.25, 2.0, 2.0 ** -1022, 2.0 ** 1022):
        inv = _kernel._exact_inverse(r)
        assert inv == 1.0 / r
        with np.errstate(over="ignore", under="ignore"):
            np.testing.assert_array_equal(x * inv, x / r)
    for r in (1.0 / 3.0, 0.75, 0.1, 3.0, 2.0 ** -1030, 2.0 ** 1023 * 1.5, 0.0, np.inf, np.nan):
        assert _kernel._exact_inverse(r) == 0.0

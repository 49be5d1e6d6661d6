"""The five theory checks of MODEL.md ("What theory says"), as tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

import stormsim
from stormsim.analysis import phase_gap

#: Pair neutrality holds exactly; what remains is rounding of firing times that
#: grow to ~1e3 cycle lengths over 1000 cycles (eps * 1e3 ~ 2e-13 of a period),
#: divided by one period. MODEL.md asks for ~1e-12.
NEUTRAL_TOL = 1e-12

#: Central differences of a map that is exactly linear on the fully-overlapping
#: region: step 1e-5 of intervals ~1e-2, rounding of event times ~1e-16
#: -> ~1e-11 per derivative. The issue asks for 1e-6.
SPECTRUM_TOL = 1e-6

RULES_AND_CAPS = [
    ("fair", math.inf),
    (("power", 0.5), math.inf),
    ("ideal", math.inf),
    ("fair", 1.5),   # binding: two computers share 1.5
    ("fair", 0.8),   # binding even for one computer
    ("ideal", 1.2),
    ("table", 1.7),  # f(n) = 1 + 0.4 (n - 1): partly work-conserving
    (("power", 0.2), 0.5),
]


def rule(throughput, n):
    """The throughput spec for n jobs ("table" stands for an explicit f(1..n))."""
    if throughput == "table":
        return [1.0 + 0.4 * (k - 1) for k in range(1, n + 1)]
    return throughput


def circ(x):
    """Signed circular difference in (-0.5, 0.5]."""
    return (np.asarray(x) + 0.5) % 1.0 - 0.5


@pytest.mark.parametrize("throughput,cap", RULES_AND_CAPS)
@pytest.mark.parametrize("d", [0.3, 0.8])
def test_pair_neutrality(throughput, cap, d):
    """Check 1: identical pair, d < T: the phase gap delta_k never changes."""
    fleet = stormsim.Fleet(T=[1.0, 1.0], d=[d, d], cap=cap, throughput=rule(throughput, 2))
    run = stormsim.simulate(fleet, launch="random", fleets=16, cycles=1000, seed=11,
                            record_firings=True)
    delta = phase_gap(run.firings)
    drift = np.abs(circ(delta - delta[:, :1]))
    assert np.nanmax(drift) <= NEUTRAL_TOL
    # The gaps cover the circle, so contended states are among them (not vacuous).
    assert np.nanmin(np.minimum(delta[:, 0], 1 - delta[:, 0])) < d / (1 + d)


@pytest.mark.parametrize("throughput,cap", RULES_AND_CAPS)
def test_frozen_order(throughput, cap):
    """Check 2: identical jobs, sigma = 0: the cyclic firing order never changes."""
    n, cycles = 8, 300
    fleet = stormsim.Fleet.identical(n, T=1.0, load=0.7, cap=cap, throughput=rule(throughput, n))
    run = stormsim.simulate(fleet, launch="random", fleets=10, cycles=cycles, seed=5,
                            record_firings=True)
    for fir in run.firings:
        order = np.argsort(fir.T.ravel(), kind="stable") % n  # jobs in firing order
        rounds = order.reshape(cycles, n)
        # Rotate each round to start with job 0's position in round 0 is not
        # needed: every round must repeat the first.
        assert (rounds == rounds[0]).all(), "firing order changed"


def overlapping_map(n, a, throughput, T=1.0, d=0.3, cap=math.inf):
    """Intervals between consecutive write starts, one cycle later."""
    tau = np.concatenate([[0.0], np.cumsum(a)])
    fleet = stormsim.Fleet.identical(n, T=T, d=d, cap=cap, throughput=throughput)
    run = stormsim.simulate(fleet, launch=1.0 - tau / T, fleets=1, cycles=2, seed=0,
                            record_firings=True)
    return np.diff(run.firings[0, :, 1])


def jacobian(n, throughput, a0, h=1e-5, **kw):
    J = np.empty((n - 1, n - 1))
    for col in range(n - 1):
        e = np.zeros(n - 1)
        e[col] = h
        J[:, col] = (overlapping_map(n, a0 + e, throughput, **kw)
                     - overlapping_map(n, a0 - e, throughput, **kw)) / (2 * h)
    return J


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 11])
@pytest.mark.parametrize("throughput", ["fair", ("power", 0.5), "ideal", "table"])
def test_n_writer_spectrum(n, throughput):
    """Check 3: all N writes overlap: the interval map is diag((N-j) f(j) / (j f(N-j)))."""
    if throughput == "table":
        throughput = [1.0] + [0.9 * k ** 0.7 for k in range(2, n + 1)]
    rng = np.random.default_rng(n)
    a0 = 0.3 * 0.01 * rng.uniform(0.5, 1.5, n - 1)  # ~1% of d: all writes overlap
    f = stormsim.throughput_table(throughput, n)[0]
    j = np.arange(1, n)
    expected = (n - j) * f[j] / (j * f[n - j])
    J = jacobian(n, throughput, a0)
    assert np.abs(J - np.diag(expected)).max() <= SPECTRUM_TOL
    assert np.linalg.det(J) == pytest.approx(1.0, abs=SPECTRUM_TOL * n)
    if throughput == "fair":
        assert (np.abs(np.diag(J)) > 1 + SPECTRUM_TOL).sum() == math.ceil(n / 2) - 1


STAGGER_CASES = [(n, cap_kind, throughput)
                 for n in (2, 3, 4, 8, 16)
                 for cap_kind in ("inf", "n-1", "n-0.5")
                 for throughput in ("fair", ("power", 0.5), "ideal")]


@pytest.mark.parametrize("n,cap_kind,throughput", STAGGER_CASES)
def test_stagger_never_collides(n, cap_kind, throughput):
    """Check 4: sigma = 0, C >= N - 1, L <= L*: a stagger launch never collides."""
    cap = {"inf": math.inf, "n-1": n - 1.0, "n-0.5": n - 0.5}[cap_kind]
    lstar = n / (n - 1)
    for load in (0.1, 0.5, 0.9 * lstar, 0.999 * lstar, lstar):
        fleet = stormsim.Fleet.identical(n, T=1.0, load=load, cap=cap, throughput=throughput)
        run = stormsim.simulate(fleet, launch="stagger", fleets=1, cycles=1000,
                                passage_level=2)
        assert run.passage_cycle[0] == -1, f"L = {load}: stagger collided"
        # and every job has written alone: exactly one writer or none at any time
        assert run.occupancy[0, 2:].sum() == 0.0


def test_stagger_collides_beyond_its_assumptions():
    """The collision detector is live: a jittered stagger does collide."""
    fleet = stormsim.Fleet.identical(8, T=1.0, load=0.9, jitter=0.01)
    run = stormsim.simulate(fleet, launch="stagger", fleets=20, cycles=2000, seed=2,
                            passage_level=2)
    assert (run.passage_cycle >= 0).all()


def test_stagger_spacing_is_exact():
    """Stagger first write starts are equally spaced by (T + d) / N (uncapped)."""
    n, T = 6, 1.0
    fleet = stormsim.Fleet.identical(n, T=T, load=0.8)
    run = stormsim.simulate(fleet, launch="stagger", fleets=1, cycles=50, record_firings=True)
    starts = np.sort(run.firings[0].ravel())
    spacing = (T + fleet.d[0]) / n
    np.testing.assert_allclose(np.diff(starts), spacing, rtol=1e-9)
    assert stormsim.stagger_spacing(fleet) == pytest.approx(spacing, rel=1e-15)


def test_stagger_under_binding_cap_is_periodic_and_collision_free():
    """With C < N - 1 the stagger exists beyond L* and its spacing is constant."""
    n = 8
    fleet = stormsim.Fleet.identical(n, T=1.0, load=1.3, cap=0.5 * n)  # L* = 8/7 ~ 1.14
    run = stormsim.simulate(fleet, launch="stagger", fleets=1, cycles=200,
                            record_firings=True, passage_level=2, stop_at_passage=False)
    assert run.passage_cycle[0] == -1
    starts = np.sort(run.firings[0].ravel())
    np.testing.assert_allclose(np.diff(starts), stormsim.stagger_spacing(fleet), rtol=1e-9)


def gap_increments(fleet, fleets=8, cycles=600, seed=4):
    run = stormsim.simulate(fleet, launch="random", fleets=fleets, cycles=cycles, seed=seed,
                            record_firings=True)
    delta = phase_gap(run.firings)
    g = circ(np.diff(delta, axis=1))
    # delta_k >= 1 when the slower job 1 has no firing in job 0's k-th cycle;
    # the next delta then refers to the same firing (delta - 1): not a step
    # of the gap map, so it is left out.
    g[delta[:, :-1] >= 1.0] = np.nan
    return delta, g


#: A rotation's increment is constant up to rounding (see NEUTRAL_TOL); a
#: coupled pair's varies by far more: 1e-3 is ~1e9 times the rounding.
COUPLED_SPREAD = 1e-3


@pytest.mark.parametrize("throughput,cap", [("fair", math.inf), (("power", 0.5), math.inf),
                                            ("ideal", 1.5), ("fair", 1.5)])
def test_unequal_lone_cycles_couple(throughput, cap):
    """Check 5: lone cycles differ and writes overlap: the gap map is not a rotation."""
    fleet = stormsim.Fleet(T=[1.0, 1.13], d=[0.4, 0.4], cap=cap, throughput=throughput)
    delta, g = gap_increments(fleet)
    spread = np.nanmax(g, axis=1) - np.nanmin(g, axis=1)
    assert (spread > COUPLED_SPREAD).all()


def test_unequal_lone_cycles_ideal_uncapped_rotate():
    """Check 5: ideal f and no binding cap: the gap map stays a rotation."""
    fleet = stormsim.Fleet(T=[1.0, 1.13], d=[0.4, 0.4], cap=2.0, throughput="ideal")
    delta, g = gap_increments(fleet)
    # the rotation by the lone-cycle ratio, wrapped onto the circle
    spread = np.nanmax(g, axis=1) - np.nanmin(g, axis=1)
    assert (spread <= 1e3 * NEUTRAL_TOL).all()  # 600 cycles of accumulated rounding
    assert np.nanmax(np.abs(g)) > 0.01  # it does rotate


@pytest.mark.parametrize("throughput,cap", RULES_AND_CAPS)
def test_equal_lone_cycles_stay_neutral(throughput, cap):
    """Check 5: equal lone cycles T_i / min(1, C) + d_i, T_0 != T_1: neutral."""
    r = min(1.0, cap)
    T0, d0, d1 = 1.0, 0.35, 0.2
    T1 = (T0 / r + d0 - d1) * r
    fleet = stormsim.Fleet(T=[T0, T1], d=[d0, d1], cap=cap, throughput=rule(throughput, 2))
    delta, g = gap_increments(fleet, cycles=1000)
    assert np.nanmax(np.abs(circ(delta - delta[:, :1]))) <= NEUTRAL_TOL

"""MODEL.md E6 (power): the fleet's busy and idle power, and the reference
integrator's exact power P(t), its distribution and ramps R_D, against cases
worked by hand, the reference's own work accounting and the stationary law."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from f1_cases import cases

from reference import simulate_reference
from stormsim import Fleet, SpecError
from stormsim.stats.power import power_law

pytest.importorskip("pint")

#: The reference's mean power against its work accounting: both sum ~10^3
#: steps' products of ~10^3 W by ~1 s, each exact to an ulp or two (~1e-16
#: relative); 1e-11 relative leaves decades of room and catches any job's
#: draw counted at a wrong rate (>= 1e-3 relative here).
ACCOUNT_RTOL = 1e-11


# -- the fleet's options (E6) ---------------------------------------------------------

def test_power_is_off_by_default_and_never_in_the_canonical_encoding():
    base = Fleet.identical(4, load=0.5, jitter=0.01)
    assert not base.has_power and base.busy_power is None and base.idle_power is None
    assert "busy_power" not in base.canonical() and "idle_power" not in base.canonical()
    powered = base.replace(busy_power=700.0, idle_power=100.0)
    assert powered.has_power and powered != base
    assert powered.replace(busy_power=None, idle_power=None) == base
    # observed, not dynamics: the same seed, the same trajectories with power on or off
    assert powered.canonical() == base.canonical()


def test_power_is_per_job_and_splits_job_classes():
    fleet = Fleet.identical(4, load=0.5, busy_power=700.0, idle_power=100.0)
    assert fleet.is_identical and [c.tolist() for c in fleet.job_classes()] == [[0, 1, 2, 3]]
    mixed = fleet.replace(busy_power=[700.0, 700.0, 800.0, 700.0])
    assert not mixed.is_identical
    assert [c.tolist() for c in mixed.job_classes()] == [[0, 1, 3], [2]]
    assert not mixed.busy_power.flags.writeable
    assert pickle.loads(pickle.dumps(mixed)) == mixed
    assert hash(pickle.loads(pickle.dumps(mixed))) == hash(mixed)
    assert "busy_power=[700. 700. 800. 700.], idle_power=100.0" in repr(mixed)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"busy_power": -1.0, "idle_power": 0.0}, r"busy_power\[0\] = -1.0: must be a finite power"),
    ({"busy_power": 700.0, "idle_power": math.nan}, r"idle_power\[0\] = nan: must be a finite"),
    ({"busy_power": [700.0, math.inf], "idle_power": 0.0}, r"busy_power\[1\] = inf"),
    ({"busy_power": 100.0, "idle_power": [0.0, 700.0]},
     r"idle_power\[1\] = 700.0 W > busy_power\[1\] = 100.0 W"),
    ({"busy_power": 700.0}, "idle_power = None with busy_power given: give both"),
    ({"idle_power": 100.0}, "busy_power = None with idle_power given: give both"),
])
def test_bad_power_is_a_spec_error_by_name(kwargs, match):
    with pytest.raises(SpecError, match=match):
        Fleet(T=[1.0, 1.0], d=[0.1, 0.1], **kwargs)


def test_from_jobs_reads_watts_with_their_unit():
    fleet = Fleet.from_jobs(size="100 GB", bandwidth="1 TB/s", compute_interval="30 min",
                            n_jobs=2, busy_power="0.7 MW", idle_power=["100 kW", "1e5 W"])
    assert fleet.busy_power.tolist() == [7e5, 7e5] and fleet.idle_power.tolist() == [1e5, 1e5]
    with pytest.raises(SpecError, match="busy_power = '700 s' is a time: must be a power"):
        Fleet.from_jobs(size="100 GB", bandwidth="1 TB/s", compute_interval="30 min",
                        n_jobs=2, busy_power="700 s", idle_power="1 W")
    with pytest.raises(SpecError, match="busy_power = 700.0: a plain number is ambiguous"):
        Fleet.from_jobs(size="100 GB", bandwidth="1 TB/s", compute_interval="30 min",
                        n_jobs=2, busy_power=700.0, idle_power="1 W")


# -- the reference integrator's power (E6) ----------------------------------------------

FAIR2 = [math.nan, 1.0, 1.0]


def _two_jobs(ramp_d, ramp_x=(500.0, 1000.0), cycles=5):
    """Two blocking jobs T = 1, d = 0.5, fair sharing, 0.25 apart: from t = 0.75
    every 1.75 s, job 1 writes alone for 0.25 s (800 W), both write 0.5 s
    (200 W), job 0 alone 0.25 s (800 W), both compute 0.75 s (1400 W)."""
    return simulate_reference([1.0, 1.0], [0.5, 0.5], [0.0, 0.0], math.inf, FAIR2, [0.0, 0.25],
                              cycles, burn_in=1, busy_power=[700.0, 700.0],
                              idle_power=[100.0, 100.0], ramp_x=ramp_x, ramp_d=ramp_d)


def test_two_jobs_power_and_its_distribution_by_hand():
    out = _two_jobs([1.0])
    a, b, p = out["power_levels"]
    assert list(zip(a[:6], b[:6], p[:6])) == [(0.0, 0.75, 1400.0), (0.75, 1.0, 800.0),
                                              (1.0, 1.5, 200.0), (1.5, 1.75, 800.0),
                                              (1.75, 2.5, 1400.0), (2.5, 2.75, 800.0)]
    # The window: job 0's first firing (t = 1) to its fifth, four whole periods.
    assert out["power_window"] == 7.0
    assert out["power_mean"] == pytest.approx((0.5 * 800 + 0.5 * 200 + 0.75 * 1400) / 1.75,
                                              rel=1e-15)
    assert (out["power_min"], out["power_max"]) == (200.0, 1400.0)
    # 200 W for 0.5 of each 1.75 s: above 1%; 1400 W for 0.75: below 99%'s share.
    assert (out["power_p01"], out["power_p99"]) == (200.0, 1400.0)


@pytest.mark.parametrize(("D", "share", "events"), [
    # D = 0.1: 1400 W leaves the window 0.1 s into the first drop (R = 600 for
    # 0.1 s), 800 W 0.1 s into the 200 W level (R = 600 for 0.1 s): two ramps
    # of 600 W per period, none of 1000 W.
    (0.1, (0.2, 0.0), (2, 0)),
    # D = 0.5: R = 600 (0.25 s), 1200 (0.25 s: 1400 W still in the window),
    # 600 (0.25 s: 800 W is), then 0 as 800 W rises from 200 W.
    (0.5, (0.75, 0.25), (1, 1)),
    # D = 2 > the period: 1400 W is always in the window: R = 1400 - P.
    (2.0, (1.0, 0.5), (1, 1)),
])
def test_two_jobs_ramps_by_hand(D, share, events):
    out = _two_jobs([D])
    periods = 4
    np.testing.assert_allclose(out["ramp_share"][0], np.array(share) / 1.75, rtol=1e-14)
    assert out["ramp_events"][0].tolist() == [e * periods for e in events]


def test_ramps_need_no_window_grid_beyond_the_asked():
    """The (D, X) grid is computed per window: asking several at once gives
    each the value asked alone."""
    together = _two_jobs([0.1, 0.5, 2.0], ramp_x=(500.0, 1000.0, 1e9))
    for k, D in enumerate((0.1, 0.5, 2.0)):
        alone = _two_jobs([D], ramp_x=(500.0, 1000.0, 1e9))
        assert together["ramp_share"][k].tolist() == alone["ramp_share"][0].tolist()
        assert together["ramp_events"][k].tolist() == alone["ramp_events"][0].tolist()
    assert together["ramp_share"][:, 2].tolist() == [0.0] * 3


def _powers(n):
    rng = np.random.default_rng(n)
    idle = rng.uniform(0.0, 300.0, n)
    return (idle + rng.uniform(1.0, 700.0, n)).tolist(), idle.tolist()


@pytest.mark.parametrize("name, args, kwargs", cases(), ids=[c[0] for c in cases()])
def test_power_changes_nothing_else_and_matches_the_work_done(name, args, kwargs):
    """Power is an observable: every other output is the same to the bit; and
    the mean power over the window is sum(idle) + sum((busy - idle) x work
    done per second), the work the reference accounts (E8) on its own."""
    plain = simulate_reference(*args, **kwargs)
    busy, idle = _powers(len(args[0]))
    out = simulate_reference(*args, **kwargs, busy_power=busy, idle_power=idle,
                             ramp_x=[50.0], ramp_d=[0.5])
    for field, value in plain.items():
        if isinstance(value, dict):
            assert out[field] == value, field
        else:
            np.testing.assert_array_equal(out[field], value, err_msg=field)
    if plain["window"] == 0.0:
        return
    work = out["committed_work"] + out["lost_work"] + out["uncommitted_work"]
    drop = np.array(busy) - np.array(idle)
    want = (math.fsum(idle) * out["window"] + math.fsum(drop * work)) / out["window"]
    assert out["power_window"] == pytest.approx(out["window"], rel=1e-13)
    assert out["power_mean"] == pytest.approx(want, rel=ACCOUNT_RTOL)
    assert out["power_min"] <= out["power_p01"] <= out["power_mean"] <= out["power_max"]
    assert 0.0 <= out["ramp_share"][0, 0] <= 1.0


def test_identical_jobs_power_is_a_function_of_the_writers():
    """Identical blocking jobs under a cap: the time at each power level is the
    time with the law's matching number of writers (the occupancy), to rounding."""
    n, cap = 4, 2.5
    fleet = Fleet.identical(n, load=0.8, jitter=0.05, cap=cap)
    law = power_law(fleet, 700.0, 100.0)
    rng = np.random.default_rng(5)
    out = simulate_reference(fleet.T.tolist(), fleet.d.tolist(), fleet.jitter.tolist(), cap,
                             [math.nan] + fleet.f[1:].tolist(), rng.uniform(0, 1, n).tolist(),
                             60, burn_in=5, key=(3, 4), busy_power=[700.0] * n,
                             idle_power=[100.0] * n)
    a, b, p = out["power_levels"]
    inside = a >= out["power_start"]
    for level in np.unique(law.levels):
        same = law.levels == level  # n_w = 0 and 1 both run 2.5 jobs' worth under C = 2.5
        at = (b - a)[inside & np.isclose(p, level, rtol=1e-12)].sum()
        assert at == pytest.approx(out["occupancy"][same].sum(), rel=1e-9, abs=1e-9), level


def test_reference_power_agrees_with_the_law_on_a_jittered_fleet():
    """The reference's mean and distribution of P against power_law (the
    stationary law) on jittered identical jobs and on unequal jobs (mean)."""
    for fleet, busy, idle in [
        (Fleet.identical(4, load=0.8, jitter=0.05), 700.0, 100.0),
        (Fleet(T=[1.0, 1.3, 0.7, 2.0], d=[0.3, 0.2, 0.5, 0.4], jitter=[0.05, 0.06, 0.03, 0.1]),
         [700.0, 800.0, 300.0, 500.0], [100.0, 50.0, 0.0, 200.0]),
    ]:
        n = fleet.n_jobs
        law = power_law(fleet, busy, idle)
        rng = np.random.default_rng(11)
        out = simulate_reference(fleet.T.tolist(), fleet.d.tolist(), fleet.jitter.tolist(),
                                 fleet.cap, [math.nan] + fleet.f[1:].tolist(),
                                 rng.uniform(0, 1, n).tolist(), 3000, burn_in=50, key=(8, 9),
                                 busy_power=np.broadcast_to(busy, n).tolist(),
                                 idle_power=np.broadcast_to(idle, n).tolist())
        assert out["power_mean"] == pytest.approx(law.mean, rel=1e-2)
        if law.levels is not None:
            share = out["occupancy"] / out["occupancy"].sum()
            np.testing.assert_allclose(share, law.pmf, atol=0.02)
            assert out["power_p01"] == law.quantile(0.01)
            assert out["power_p99"] == law.quantile(0.99)


def _streamed(levels, t0, D, X):
    """R_D >= X's time and up-crossings from t0, one pass: a deque of (exit, P)
    with P strictly decreasing front to back (the window's running max at its
    front), as a kernel keeps it; a level exits at fl(b + D)."""
    window, time, events, above_before = [], 0.0, 0, False
    for a, b, p, _ in levels:
        while window and window[-1][1] <= p:
            window.pop()
        window.append((b + D, p))
        u = a
        while u < b:
            while window[0][0] <= u:
                window.pop(0)
            v = min(b, window[0][0]) if len(window) > 1 else b
            above = window[0][1] - p >= X
            if u >= t0:
                time += (v - u) if above else 0.0
                events += above and not above_before
            above_before = above
            u = v
    return time, events


def test_ramps_agree_with_a_streaming_window_and_with_sampling():
    """power_outputs on random level sequences against a one-pass monotone
    deque (the same instants: the exits as floats), and its time shares
    against R_D sampled on a fine grid by its definition."""
    from reference import power_outputs
    rng = np.random.default_rng(1)
    ds, xs = [0.1, 0.5, 1.0, 3.0], [50.0, 300.0, 700.0]
    for trial in range(120):
        n = int(rng.integers(2, 40))
        span = rng.choice([0.25, 0.5, 1.0, 0.125], n) if trial % 2 else rng.exponential(1.0, n)
        b = np.cumsum(span)
        a = np.concatenate([[0.0], b[:-1]])
        p = rng.choice([0.0, 100.0, 250.0, 600.0, 1000.0], n) if trial % 3 else rng.uniform(0, 1e3, n)
        m0 = int(rng.integers(0, n))
        levels = [[a[k], b[k], p[k], k >= m0] for k in range(n)]
        out = power_outputs(levels, xs, ds)
        window = b[-1] - a[m0]
        grid = np.linspace(a[m0], b[-1], 1001)[:-1] + 1e-9
        for jd, D in enumerate(ds):
            sampled = np.array([p[(a <= t) & (b > t - D)].max() - p[(a <= t) & (b > t)][0]
                                for t in grid])
            for jx, X in enumerate(xs):
                time, events = _streamed(levels, a[m0], D, X)
                assert out["ramp_share"][jd, jx] == pytest.approx(time / window, rel=1e-12,
                                                                  abs=1e-15)
                assert out["ramp_events"][jd, jx] == events
                # a grid step is 1e-3 of the window; each R_D change can cost one
                assert abs((sampled >= X).mean() - out["ramp_share"][jd, jx]) <= 4e-3 * n

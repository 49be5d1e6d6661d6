"""Checkpoint durations and waits (MODEL.md E7): the kernels' per-fleet sums
and histograms, and their estimates with intervals (stormsim.stats.durations)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import stormsim
from stormsim.errors import SpecError
from stormsim.stats import durations as dur

#: |estimate - exact| in standard errors (delta method over fleets) that a
#: correct engine exceeds about once in 16,000 runs (normal two-sided 4
#: sigma); the seed is fixed, so the test is deterministic.
Z_BOUND = 4.0

#: The runs are long enough that the interval means something: the mean's
#: relative standard error must be below this.
MAX_REL_SE = 0.01


def stationary_mean_write_duration(fleet) -> float:
    """MODEL.md "The stationary law", by enumeration of every writer set S:
    P(i writing) / lambda_i per job; pooled over the jobs' checkpoints, the
    mean write duration is sum_i P(i writing) / sum_i lambda_i."""
    n = fleet.n_jobs
    x = fleet.d / fleet.T
    f = fleet.f
    C = fleet.cap

    def g(k):
        writers = math.factorial(k) / math.prod(f[j] for j in range(1, k + 1))
        computers = math.factorial(n - k) / math.prod(min(j, C) for j in range(1, n - k + 1))
        return writers * computers

    busy = np.zeros(n)
    rate = np.zeros(n)
    z = 0.0
    for k in range(n + 1):
        for S in itertools.combinations(range(n), k):
            w = g(k) * math.prod(x[i] for i in S)
            z += w
            inside = np.zeros(n, dtype=bool)
            inside[list(S)] = True
            busy[inside] += w
            if k < n:
                rate[~inside] += w * min(1.0, C / (n - k)) / fleet.T[~inside]
    return float(busy.sum() / rate.sum())


#: A small heterogeneous jittered fleet under a binding cap: sigma_i = T_i / 25,
#: so the mean compute work is T_i to 1e-80 (MODEL.md).
LAW_FLEET = stormsim.Fleet(T=[1.0, 1.3, 0.8, 1.1, 0.9], d=[0.3, 0.2, 0.25, 0.35, 0.15],
                           cap=4.0, jitter=np.array([1.0, 1.3, 0.8, 1.1, 0.9]) / 25)


@pytest.mark.parametrize("throughput", ["fair", ("power", 0.5)])
def test_mean_write_duration_is_the_stationary_laws(throughput):
    fleet = stormsim.Fleet(T=LAW_FLEET.T, d=LAW_FLEET.d, cap=LAW_FLEET.cap,
                           jitter=LAW_FLEET.jitter, throughput=throughput)
    exact = stationary_mean_write_duration(fleet)
    run = stormsim.simulate(fleet, fleets=400, cycles=1500, burn_in=50, seed=11)
    est = dur.mean(run)
    z = (est.hi - est.lo) / 2.0 / 1.959963984540054  # back to one standard error
    assert est.unit == "s"
    assert z / est.value < MAX_REL_SE
    assert abs(est.value - exact) <= Z_BOUND * z, (est, exact)


def test_sums_agree_with_writing_and_wait_time():
    """Sums over the same checkpoints as the window's writing time and WAIT
    time, but for the checkpoints cut by the window's ends: at most one per
    job at each end, each shorter than the run's longest duration (wait)."""
    fleet = stormsim.Fleet.identical(6, T=1.0, load=1.5, jitter=0.02, checkpoint="async",
                                     snapshot=0.01, slowdown=0.2)
    run = stormsim.simulate(fleet, fleets=20, cycles=300, burn_in=20, seed=3)
    edge = 2 * fleet.n_jobs * run.durations_max
    np.testing.assert_array_less(np.abs(run.durations_sum - run.writing_time.sum(axis=1)), edge)
    assert run.wait_sum.sum() > 0 and run.waits.sum() > 0
    np.testing.assert_array_less(np.abs(run.wait_sum - run.wait_time), 2 * fleet.n_jobs
                                 * run.wait_max + 1e-12)
    np.testing.assert_array_equal(run.durations_hist.sum(axis=1), run.durations_count)
    np.testing.assert_array_equal(run.wait_hist.sum(axis=1), run.wait_count)
    np.testing.assert_array_equal(run.wait_count, run.durations_count)
    # A blocking fleet never waits: every wait is 0, in the underflow bin.
    base = stormsim.simulate(stormsim.Fleet.identical(6, T=1.0, load=1.5, jitter=0.02),
                             fleets=5, cycles=100, seed=3)
    assert base.wait_sum.sum() == 0.0 and base.wait_max.sum() == 0.0
    np.testing.assert_array_equal(base.wait_hist[:, 0], base.durations_count)


def test_writes_alone_last_d_and_fill_bin_one():
    """Ideal sharing: every write lasts d (it drains at rate 1), so every
    duration is in bin 1 and every quantile's interval holds d."""
    d = 0.07
    fleet = stormsim.Fleet.identical(8, T=1.0, d=d, throughput="ideal", jitter=0.01)
    run = stormsim.simulate(fleet, fleets=30, cycles=200, seed=5)
    assert np.all(run.durations_hist[:, 1] == run.durations_count)
    q = dur.quantile(run, 0.99)
    assert q.lo <= d <= q.hi
    assert q.hi / q.lo == pytest.approx(run.duration_edges[1] / run.duration_edges[0])
    mean = dur.mean(run)
    # Each duration is d to the rounding of two instants (~1e-16 of the run's time).
    ROUNDING = 1e-12
    assert mean.value == pytest.approx(d, rel=ROUNDING)
    above = dur.exceedance(run, 1.5 * d)
    assert above.value == 0.0 and dur.exceedance_edge(run, 1.5 * d) >= 1.5 * d and above.hi < 1e-3


def synthetic(rng, fleets=300, per=200, sigma=0.4):
    """Lognormal durations (s, with d = 1), per fleet a random count, as a Run
    would hold them; and the law's quantile function."""
    from scipy import stats

    edges = stormsim.engine.run.DURATION_EDGES
    counts = rng.integers(per // 2, 2 * per, fleets)
    hist = np.zeros((fleets, edges.size + 1), dtype=np.int64)
    total = np.zeros(fleets)
    for f, n in enumerate(counts):
        x = np.exp(sigma * rng.standard_normal(n)) * 1.5
        total[f] = x.sum()
        np.add.at(hist[f], np.searchsorted(edges, x, side="right"), 1)
    law = stats.lognorm(sigma, scale=1.5)
    return dur.Checkpoints(counts, total, hist, edges, "s"), law


def test_intervals_cover_a_known_law():
    """On 20 synthetic runs of a known law, the 95 % intervals of the mean,
    of P(X >= e) and of the 99th percentile cover the truth at least 17
    times (a binomial(20, 0.95) falls below 17 with probability 1.6 %; the
    seed is fixed)."""
    MIN_COVERED = 17
    rng = np.random.default_rng(2026)
    covered = {"mean": 0, "exceedance": 0, "quantile": 0}
    for _ in range(20):
        data, law = synthetic(rng)
        m = dur.mean(data)
        covered["mean"] += m.lo <= law.mean() <= m.hi
        p = dur.exceedance(data, 3.0)
        covered["exceedance"] += p.lo <= law.sf(dur.exceedance_edge(data, 3.0)) <= p.hi
        q = dur.quantile(data, 0.99, resamples=200)
        covered["quantile"] += q.lo <= law.ppf(0.99) <= q.hi
    assert min(covered.values()) >= MIN_COVERED, covered


def test_bad_input_is_a_spec_error():
    run = stormsim.simulate(stormsim.Fleet.identical(3, T=1.0, load=0.5, jitter=0.01),
                            fleets=4, cycles=20, seed=1)
    with pytest.raises(SpecError, match="what = 'size'"):
        dur.mean(run, what="size")
    with pytest.raises(SpecError, match="q = 1.5"):
        dur.quantile(run, 1.5)
    with pytest.raises(SpecError, match="confidence = 2"):
        dur.mean(run, confidence=2)
    with pytest.raises(SpecError, match="x = -1"):
        dur.exceedance(run, -1)
    one = stormsim.simulate(stormsim.Fleet.identical(3, T=1.0, load=0.5), fleets=1, cycles=5)
    with pytest.raises(SpecError, match="at least 2"):
        dur.mean(one)

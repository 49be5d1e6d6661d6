"""The exact law on hostile input: one job, 10^5 jobs, d_i / T_i from 1e-12 to
1e6, f(n) and the cap C near the smallest float, jitter ten times T. Never NaN,
never an overflow (warnings are errors), a pmf that sums to 1, a monotone
tail, finite logs; where the model forbids an input, Fleet's SpecError."""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from scipy import integrate
from scipy.special import logsumexp
from scipy.stats import norm

import stormsim
from stormsim import SpecError, stationary
from stormsim.stats.stationary import mean_compute_work

Fleet = stormsim.Fleet

#: sum of N + 1 exps of logs each within ~1e-15 (N = 1e5 levels: ~1e-11 of
#: accumulated rounding at worst); a sum off by 1e-9 is a bug, not rounding.
SUM_TO_ONE_TOL = 1e-9

#: Enumeration of all 2^N subsets in log space (N <= 10) against the law:
#: absolute error of natural logs, i.e. relative error of the probabilities.
#: Both are sums of positive terms rounded ~1e-15 each; a wrong factor moves
#: a log by far more.
ENUM_LOG_TOL = 1e-10

#: Flow identities (sum_k nu_k = sum_i lambda_i, E[n_w] = sum_i p_i) at up to
#: 1e5 jobs: both sides sums of up to 1e5 floats along different paths.
IDENTITY_TOL = 1e-9

#: E[max(0, T + sigma xi)] against adaptive quadrature, whose own error
#: estimate is ~1e-13 here.
QUAD_TOL = 1e-10


def _sane(law) -> None:
    """What every law must satisfy, whatever its input."""
    for name in law.__dataclass_fields__:
        value = getattr(law, name)
        if isinstance(value, np.ndarray):
            assert not np.isnan(value).any(), name
    assert abs(law.pmf.sum() - 1.0) <= SUM_TO_ONE_TOL
    assert np.all(np.diff(law.log_p_ge) <= 0.0)           # P(n_w >= k) never rises with k
    assert law.log_p_ge[0] == pytest.approx(0.0, abs=SUM_TO_ONE_TOL)
    # Every state has positive probability (x_i > 0, f > 0, C > 0): every log is finite,
    # however far below float64 the probability lies.
    assert np.all(np.isfinite(law.log_pmf)) and np.all(np.isfinite(law.log_p_ge))
    assert np.all(np.isfinite(law.log_storms_per_s[1:]))
    for name in ("log_writing_probability", "log_checkpoint_rate", "log_mean_write_duration"):
        assert np.all(np.isfinite(getattr(law, name))), name


def _enumerate(T_eff, d, f, cap):
    """log P(n_w >= k), log P(i writing), log lambda_i by all subsets, in log space.

    pi(S) ~ g(|S|) prod_{i in S} d_i / T_i with g(n) = [n! / prod f(1..n)] (f[0] unused)
    [(N-n)! / prod min(1..N-n, C)]; lambda_i = E[compute rate of i; i idle] / T_i,
    the compute rate min(1, C / (N - |S|))."""
    n = len(T_eff)
    lx = [math.log(di) - math.log(ti) for di, ti in zip(d, T_eff)]

    def lg(m):
        a = math.fsum(math.log(k) - math.log(f[k]) for k in range(1, m + 1))
        b = math.fsum(math.log(k) - math.log(min(k, cap)) for k in range(1, n - m + 1))
        return a + b

    lgs = [lg(m) for m in range(n + 1)]
    by_level = [[] for _ in range(n + 1)]
    writing = [[] for _ in range(n)]
    rate = [[] for _ in range(n)]
    for bits in itertools.product((0, 1), repeat=n):
        m = sum(bits)
        lp = lgs[m] + math.fsum(lx[i] for i in range(n) if bits[i])
        by_level[m].append(lp)
        rc = 0.0 if m == n else min(0.0, math.log(cap) - math.log(n - m))
        for i in range(n):
            (writing if bits[i] else rate)[i].append(lp if bits[i] else lp + rc)
    level = np.array([logsumexp(v) for v in by_level])
    log_z = logsumexp(level)
    tail = np.logaddexp.accumulate(level[::-1])[::-1] - log_z
    p = np.array([logsumexp(v) for v in writing]) - log_z
    lam = np.array([logsumexp(v) for v in rate]) - log_z - np.log(T_eff)
    return tail, p, lam


def _against_enumeration(fleet, T_eff=None):
    law = stationary(fleet)
    _sane(law)
    T_eff = np.asarray(fleet.T, float) if T_eff is None else T_eff
    tail, p, lam = _enumerate(T_eff, np.asarray(fleet.d, float), np.asarray(fleet.f, float),
                              float(fleet.cap))
    assert np.max(np.abs(law.log_p_ge - tail)) <= ENUM_LOG_TOL
    assert np.max(np.abs(law.log_writing_probability - p)) <= ENUM_LOG_TOL
    assert np.max(np.abs(law.log_checkpoint_rate - lam)) <= ENUM_LOG_TOL
    return law


# -- sizes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("cap", [math.inf, 1.0, 1e-3])
def test_one_job(cap):
    # One job alternates T / min(1, C) of compute and d of writing: p = d / cycle.
    law = stationary(Fleet(T=[1.0], d=[0.5], jitter=0.01, cap=cap))
    _sane(law)
    cycle = 1.0 / min(1.0, cap) + 0.5
    assert law.p_ge[1] == pytest.approx(0.5 / cycle, rel=IDENTITY_TOL)
    assert law.checkpoint_rate[0] == pytest.approx(1.0 / cycle, rel=IDENTITY_TOL)
    assert law.write_stretch[0] == pytest.approx(1.0, rel=IDENTITY_TOL)


def _identities(law):
    assert math.isclose(law.storms_per_s.sum(), law.checkpoint_rate.sum(), rel_tol=IDENTITY_TOL)
    assert math.isclose(np.arange(law.n_jobs + 1) @ law.pmf, law.mean_writers, rel_tol=IDENTITY_TOL)


def test_a_hundred_thousand_identical_jobs():
    law = stationary(Fleet.identical(100_000, load=0.6, jitter=0.01))   # the O(N) closed form
    _sane(law)
    _identities(law)
    assert law.log_p_ge[-1] < -1e5          # P(all write) far below 1e-308, its log exact


def test_three_thousand_distinct_jobs():
    rng = np.random.default_rng(3)
    T = rng.uniform(0.5, 2.0, 3000)
    law = stationary(Fleet(T=T, d=0.6 * T / 3000 * rng.uniform(0.5, 1.5, 3000), jitter=0.01 * T))
    _sane(law)
    _identities(law)


# -- d_i / T_i from 1e-12 to 1e6 -----------------------------------------------------------------

@pytest.mark.parametrize("ratio", [1e-12, 1e-6, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("n", [8, 2000])
def test_one_ratio_across_the_range(ratio, n):
    law = stationary(Fleet.identical(n, T=1.0, d=ratio, jitter=0.01))
    _sane(law)
    _identities(law)


@pytest.mark.parametrize("cap", [math.inf, 3.0, 1e-3])
def test_mixed_ratios_in_one_fleet(cap):
    ratio = np.logspace(-12, 6, 10)
    _against_enumeration(Fleet(T=np.ones(10), d=ratio, jitter=0.01, cap=cap))
    # the same ratios through T rather than d (T from 1e12 s down to 1e-6 s)
    _against_enumeration(Fleet(T=1.0 / ratio, d=np.ones(10), jitter=0.01 / ratio, cap=cap))


def test_mixed_ratios_many_jobs():
    law = stationary(Fleet(T=np.ones(400), d=np.logspace(-12, 6, 400), jitter=0.01))
    _sane(law)
    _identities(law)


def test_ratios_beyond_float_range():
    # x = d / T = 1e600 and 1e-300 in one fleet: only the logs hold them.
    law = stationary(Fleet(T=[1e-300, 1.0], d=[1e300, 1e-300], jitter=[1e-301, 0.1]))
    _sane(law)
    assert law.log_writing_probability[0] == pytest.approx(0.0, abs=ENUM_LOG_TOL)


# -- f(n) near 0 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tiny", [1e-300, 5e-324])
def test_throughput_near_zero(tiny):
    f = np.ones(10)
    f[6:] = tiny                  # writes by 7+ writers crawl: the fleet piles up at n_w = N
    law = _against_enumeration(Fleet.identical(10, load=0.6, jitter=0.01, throughput=list(f)))
    assert law.p_ge[-1] == pytest.approx(1.0, rel=ENUM_LOG_TOL)
    big = np.ones(100)
    big[10:] = tiny
    _sane(stationary(Fleet.identical(100, load=0.6, jitter=0.01, throughput=list(big))))


def test_power_zero_is_fair():
    # f(n) = n^0 = 1: the same law as "fair", at the closed form and the sweep.
    for fleet in (lambda tp: Fleet.identical(200, load=0.6, jitter=0.01, throughput=tp),
                  lambda tp: Fleet(T=np.linspace(0.5, 2.0, 50), d=np.full(50, 0.01), jitter=0.01,
                                   throughput=tp)):
        a, b = stationary(fleet("power:0")), stationary(fleet("fair"))
        _sane(a)
        assert np.max(np.abs(a.log_p_ge - b.log_p_ge)) <= ENUM_LOG_TOL


# -- the cap far below 1 -------------------------------------------------------------------------

@pytest.mark.parametrize("cap", [1e-3, 1e-300, 5e-324])
def test_cap_far_below_one(cap):
    _against_enumeration(Fleet(T=np.linspace(0.5, 2.0, 10), d=np.full(10, 0.05), jitter=0.01,
                               cap=cap))
    law = stationary(Fleet.identical(10_000, load=0.6, jitter=0.01, cap=cap))
    _sane(law)


# -- huge jitter ---------------------------------------------------------------------------------

def _quad_mean(T, sigma):
    value, _ = integrate.quad(lambda z: (T + sigma * z) * norm.pdf(z), -T / sigma, np.inf,
                              epsabs=0.0, epsrel=1e-13, limit=200)
    return value


@pytest.mark.parametrize("scale", [10.0, 1e6])
def test_jitter_far_above_the_compute(scale):
    # sigma = 10 T: half the draws are cut at 0 and the mean work is ~4.5 T, not T.
    T = np.array([0.5, 0.8, 1.0, 1.3, 1.6, 2.0, 1.1, 0.7])
    sigma = scale * T
    want = np.array([_quad_mean(t, s) for t, s in zip(T, sigma)])
    got = mean_compute_work(T, sigma)
    assert np.max(np.abs(got - want) / want) <= QUAD_TOL
    law = _against_enumeration(Fleet(T=T, d=np.full(8, 0.05), jitter=sigma), T_eff=want)
    assert np.allclose(law.mean_compute, want, rtol=QUAD_TOL, atol=0)


#: sigma = T: E[max(0, T (1 + xi))] = T (Phi(1) + phi(1)).
_AT_ONE = norm.cdf(1.0) + norm.pdf(1.0)


@pytest.mark.parametrize("T, sigma, want", [
    (1e6, 1e-150, 1e6), (1e300, 1e-10, 1e300),                    # T / sigma overflows: T
    (1e308, 1e308, 1e308 * _AT_ONE),                               # T + sigma overflows
    (1e-300, 1e300, 1e300 / math.sqrt(2 * math.pi)),               # sigma phi(0), T negligible
])
def test_jitter_ratios_beyond_float_range(T, sigma, want):
    law = stationary(Fleet.identical(8, T=T, d=T / 10, jitter=sigma))
    _sane(law)
    assert law.mean_compute[0] == pytest.approx(want, rel=QUAD_TOL)


# -- inputs the model forbids: Fleet refuses them --------------------------------------------------

@pytest.mark.parametrize("build, says", [
    (lambda: Fleet.identical(4, load=0.6, jitter=0.01, throughput=[1e-300] * 4), "f(1)"),
    (lambda: Fleet.identical(5, load=0.6, jitter=0.01, throughput=[1, 1, 0, 1, 1]), "f(3)"),
    (lambda: Fleet.identical(3, load=0.6, jitter=0.01, throughput=[1, np.nan, 1]), "finite"),
    (lambda: Fleet.identical(3, load=0.6, jitter=0.01, throughput=[1, np.inf, 1]), "finite"),
    (lambda: Fleet.identical(3, load=0.6, jitter=0.01, throughput="power:-1"), "power"),
    (lambda: Fleet.identical(4, load=0.6, jitter=0.01, cap=0.0), "cap"),
    (lambda: Fleet.identical(4, load=0.6, jitter=0.01, cap=-1.0), "cap"),
    (lambda: Fleet.identical(4, T=0.0, d=1.0, jitter=0.1), "T"),
    (lambda: Fleet.identical(4, T=1.0, d=np.inf, jitter=0.1), "d"),
    (lambda: Fleet(T=[1.0, 1.0], d=[np.nan, 1.0], jitter=0.1), "d"),
    (lambda: Fleet.identical(4, T=1.0, d=1.0, jitter=-1.0), "jitter"),
    (lambda: Fleet.identical(4, T=1.0, d=1.0, jitter=np.inf), "jitter"),
])
def test_forbidden_inputs_are_refused_by_fleet(build, says):
    with pytest.raises(SpecError, match=re.escape(says)):
        build()


# -- a saturated fabric --------------------------------------------------------------------------

#: The law's logs at a saturated fabric against the closed form of identical
#: jobs (lgamma and logsumexp in float64): the logs reach 1.6e4 at N = 5000,
#: whose ulp is 1.8e-12, and each side sums N terms along its own path (the
#: law measured within 8e-12 at N = 2000, see stormsim.stats.stationary); a
#: wrong factor or an overflow moves them by far more than 1e-9.
SATURATED_LOG_TOL = 1e-9
#: P(n_w < k) of the law against the closed form where it is below 1e-8: both
#: sums of a few positive terms whose logs agree within SATURATED_LOG_TOL x
#: |log pi(0)| at N = 12 (~5e-8 absolute would be the bound; measured: 1e-14),
#: so a relative 1e-10 tells log1p(-head) from a tail summed near 1 (off by 1e-13
#: absolute, 1e9 times the value -3e-22 at load 140).
HEAD_REL_TOL = 1e-10


def _every_plain_value(law) -> dict:
    """Each plain array and scalar the law offers (with warnings as errors, an
    overflow in exp fails here)."""
    names = ("pmf", "p_ge", "storms_per_s", "storm_duration", "writing_probability",
             "checkpoint_rate", "mean_write_duration", "write_stretch", "binomial_pmf",
             "binomial_p_ge", "storms_per_day", "mean_writers")
    return {name: getattr(law, name) for name in names}


@pytest.mark.parametrize("n, d", [
    (5000, 840 / 40),        # 5000 jobs x 840 GB / 30 min through 40 GB/s: load 58
    (12, 840e3 / 40),        # 12 jobs x 840 GB / 30 min through 40 MB/s: load 140
])
def test_a_saturated_fabric_has_exact_logs_and_no_overflow(n, d):
    """Identical jobs, fair sharing, uncapped: pi(n) ~ N! / (N-n)! x^n and
    nu_k = pi(k) / d, so the mean storm lasts P(n_w >= k) d / pi(k). At load
    58 it lasts e^15000 s: the plain value is inf, silently, the log exact."""
    T = 1800.0
    law = stationary(Fleet(T=[T] * n, d=[d] * n, jitter=T / 100))
    _sane(law)
    plain = _every_plain_value(law)
    k = np.arange(n + 1)
    log_pi = np.array([math.lgamma(n + 1) - math.lgamma(n - m + 1) for m in k]) \
        + k * math.log(d / T)
    log_pi -= logsumexp(log_pi)
    log_ge = np.array([logsumexp(log_pi[m:]) for m in k])
    assert np.max(np.abs(law.log_p_ge - log_ge)) <= SATURATED_LOG_TOL * max(1.0, abs(log_pi[0]))
    want = log_ge[1:] - log_pi[1:] + math.log(d)
    got = law.log_storm_duration[1:]
    assert np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))) <= SATURATED_LOG_TOL
    # Never above 1: near 1, log P(n_w >= k) is log1p(-P(n_w < k)), to the head's rounding
    # (a sum of the tail would be 1 + 7e-13 at load 58, and say nothing of 1 - 1e-20).
    assert np.all(law.log_p_ge[1:] <= 0.0) and np.all(plain["p_ge"] <= 1.0 + 1e-12)
    head = np.logaddexp.accumulate(log_pi)[:-1]            # log P(n_w < k), k = 1..N
    near = head < math.log(1e-8)
    assert near[1]                                        # k = 2 among them in both fleets
    assert np.allclose(law.log_p_ge[1:][near], np.log1p(-np.exp(head[near])),
                       rtol=HEAD_REL_TOL, atol=0.0)
    # the plain twin: exp of the log where float64 holds it, inf past its largest value
    big = want > math.log(np.finfo(np.float64).max)
    assert big.any() == (n == 5000)             # only the 5000 jobs' storms outlast float64
    assert np.all(np.isinf(plain["storm_duration"][1:][big]))
    assert np.array_equal(plain["storm_duration"][1:][~big], np.exp(got[~big]))


def test_a_saturated_fabric_of_two_job_types_has_no_overflow():
    """The same through the sweep of distinct job types (no closed form)."""
    T = np.repeat([1800.0, 3600.0], 2500)
    law = stationary(Fleet(T=T, d=21.0 * T / 1800, jitter=T / 100))
    _sane(law)
    _every_plain_value(law)
    assert law.log_storm_duration[2] > math.log(np.finfo(np.float64).max)
    assert np.isinf(law.storm_duration[2])

"""The stationary law (MODEL.md, "The stationary law"): against exact rational
arithmetic by subset enumeration, closed forms at levels far below 1e-308, the
Poisson-binomial of ideal sharing, and the engine (check 6)."""
from __future__ import annotations

import math
import types
from unittest import mock

import numpy as np
import pytest
from enumeration import exact_law as _exact
from enumeration import rule as _rule
from enumeration import small_fleets
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import gammaln, logsumexp
from scipy.stats import norm

import stormsim
from stormsim import SpecError, StationaryLaw, stationary

# The numerics' module, whose memory mode (prefixes kept or recomputed) the tests switch.
from stormsim.stats import product_form as _module  # noqa: E402
from stormsim.stats.stationary import DeterministicFleetWarning, mean_compute_work

#: The target accuracy of the law at every level (the brief's). The float
#: code is within ~1e-14 of exact rationals; a wrong factor anywhere (g, a
#: rate, a leave-one-out sum) moves values by far more than 1e-10.
REL_EXACT = 1e-10

#: Levels far below 1e-308: absolute error of the natural logs, i.e. the
#: relative error of the probabilities they stand for (same target).
LOG_EXTREME = 1e-10

#: Ideal sharing, uncapped: every factor of g is exactly 1, so the law is the
#: Poisson-binomial; what remains is the rounding of two different O(N^2)
#: recurrences over N = 24 jobs (~1e-15 relative each step).
POISSON_BINOMIAL_TOL = 1e-12

#: Identities that hold exactly (sum_k nu_k = sum_i lambda_i, E[n_w] =
#: sum_i p_i, P(n_w >= 0) = 1, lambda_i (T_i + write_i) = 1 uncapped), each
#: side a sum of <= 31 floats computed along different paths (~1e-15 each).
IDENTITY_TOL = 1e-12

#: N = 10 000: the pmf summed over 10 001 levels in float64 (each exp to
#: ~1e-15, Z from a log-sum of the same terms): a sum off by 1e-9 is a bug.
SUM_TO_ONE_TOL = 1e-9

#: E[max(0, T + sigma xi)] against adaptive quadrature of the same integral,
#: whose own error estimate is ~1e-13 here.
QUAD_TOL = 1e-10


def _rel_err(got, want) -> float:
    want = np.array([float(v) for v in want])
    got = np.asarray(got, dtype=np.float64)
    assert want.shape == got.shape
    return float(np.max(np.abs(got - want) / np.abs(want)))


@settings(max_examples=60, deadline=None)
@given(fleet=small_fleets(), stored=st.sampled_from([64, 0]))
def test_law_equals_exact_enumeration(fleet, stored):
    """Every output against pi(S) summed over all 2^N subsets in exact rationals;
    ``stored`` = 0 forces the block-recomputation path of the backward sweep."""
    with mock.patch.object(_module, "_MIN_STORED_PREFIXES", stored):
        law = stationary(fleet)
    ref = _exact(fleet)
    assert isinstance(law, StationaryLaw)
    assert _rel_err(law.pmf, ref["pmf"]) <= REL_EXACT
    assert _rel_err(law.p_ge, ref["tail"]) <= REL_EXACT
    assert _rel_err(law.storms_per_s[1:], ref["nu_fire"][1:]) <= REL_EXACT
    assert _rel_err(law.storms_per_s[1:], ref["nu_end"][1:]) <= REL_EXACT
    assert law.storms_per_s[0] == 0.0 and law.storm_duration[0] == math.inf
    assert _rel_err(law.storm_duration[1:], ref["duration"][1:]) <= REL_EXACT
    assert _rel_err(law.writing_probability, ref["p"]) <= REL_EXACT
    assert _rel_err(law.checkpoint_rate, ref["lam"]) <= REL_EXACT
    assert _rel_err(law.mean_write_duration, ref["write"]) <= REL_EXACT
    assert _rel_err(law.write_stretch, ref["stretch"]) <= REL_EXACT
    assert _rel_err(law.binomial_pmf, ref["binom"]) <= REL_EXACT
    assert _rel_err(law.binomial_p_ge, ref["binom_tail"]) <= REL_EXACT
    assert np.allclose(law.storms_per_day, law.storms_per_s * 86400.0, rtol=REL_EXACT, atol=0)


def test_exact_enumeration_worst_case_is_reported():
    """The error figure of the brief on fixed fleets (N = 8, all paths): kept
    as a plain test so that a run shows it with -rA (print) and holds it."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for kind, cap, stored in (("fair", math.inf, 64), ("power:0.5", 3.5, 0), ("table", 0.7, 0),
                              ("ideal", 8.0, 64)):
        T = rng.uniform(0.3, 3.0, 8)
        fleet = stormsim.Fleet(T=T, d=rng.uniform(0.01, 2.0, 8), cap=cap,
                               throughput=_rule(kind, 8, rng.uniform(0.05, 1, 7)), jitter=T / 50)
        with mock.patch.object(_module, "_MIN_STORED_PREFIXES", stored):
            law = stationary(fleet)
        ref = _exact(fleet)
        for got, key in ((law.pmf, "pmf"), (law.p_ge, "tail"), (law.writing_probability, "p"),
                         (law.checkpoint_rate, "lam"), (law.binomial_pmf, "binom")):
            worst = max(worst, _rel_err(got, ref[key]))
        worst = max(worst, _rel_err(law.storms_per_s[1:], ref["nu_end"][1:]))
    print(f"max relative error against Fractions: {worst:.3g}")
    assert worst <= REL_EXACT


# -- levels far below 1e-308 ---------------------------------------------------------------------

def _closed_form_log_tail(n, log_x, kind, cap):
    """Identical jobs: log P(n_w >= k) from g(k) C(N, k) x^k, written out independently."""
    k = np.arange(n + 1, dtype=np.float64)
    if kind == "fair" and math.isinf(cap):
        log_w = gammaln(n + 1) - gammaln(n - k + 1) + k * log_x     # N! / (N-k)! x^k
    else:
        # power:0.5 and an integer cap C: prod f(j) = sqrt(k!), prod_{j<=m} min(j, C)
        # = min(m, C)! C^(m - C)+, so g(k) C(N, k) = N! / sqrt(k!) / prod_{j<=N-k} min(j, C).
        assert kind == "power:0.5" and cap == int(cap)
        m = n - k
        log_cap_prod = gammaln(np.minimum(m, cap) + 1) + np.maximum(m - cap, 0) * math.log(cap)
        log_w = gammaln(n + 1) - 0.5 * gammaln(k + 1) - log_cap_prod + k * log_x
    log_pmf = log_w - logsumexp(log_w)
    return np.array([logsumexp(log_pmf[j:]) for j in range(n + 1)])


@pytest.mark.parametrize("kind, cap", [("fair", math.inf), ("power:0.5", 500.0)])
def test_extreme_levels_identical_and_near_identical(kind, cap):
    """N = 2000 jobs with x = 1e-6: P(n_w = N) ~ 1e-6000. The closed form, the
    two-type path (jobs 1 ulp apart) and the all-distinct path (jobs a few ulps
    apart, block recomputation) agree on every level's log."""
    n, T, d = 2000, 1.0, 1e-6
    law = stationary(stormsim.Fleet.identical(n, T=T, d=d, cap=cap, throughput=kind, jitter=0.02))
    assert law.log_p_ge[-1] < -5000 * math.log(10)   # far below 1e-308: the plain value is 0
    assert law.p_ge[-1] == 0.0
    want = _closed_form_log_tail(n, math.log(d / T), kind, cap)
    assert np.max(np.abs(law.log_p_ge - want)) <= LOG_EXTREME

    two_types = np.where(np.arange(n) % 2 == 0, d, np.nextafter(d, 1.0))
    distinct = d + np.arange(n) * np.spacing(d)      # N job types
    for ds in (two_types, distinct):
        fleet = stormsim.Fleet(T=[T] * n, d=ds, cap=cap, throughput=kind, jitter=0.02)
        got = stationary(fleet).log_p_ge
        # To first order in the tiny spread, e_k(x) = C(N, k) xbar^k with xbar the
        # geometric mean (the second-order term is ~ k (1e-13)^2 here).
        ref = _closed_form_log_tail(n, float(np.mean(np.log(ds) - math.log(T))), kind, cap)
        assert np.max(np.abs(got - ref)) <= LOG_EXTREME


def test_job_types_agree_with_distinct_jobs():
    """Three job types of 250, 200 and 150 jobs (one binomial kernel per type)
    against the same fleet with every job made distinct by a few ulps in
    +/- pairs (one step per job, prefixes recomputed by block): the pairs
    cancel to first order, so both must give the same law."""
    counts, T_t, d_t = [250, 200, 150], [1.0, 1.5, 0.8], [1e-3, 3e-3, 2e-3]
    T = np.repeat(T_t, counts)
    d = np.repeat(d_t, counts)
    spread = d.copy()
    start = 0
    for c, dt in zip(counts, d_t):
        k = np.arange(1, c // 2 + 1)
        spread[start:start + c] = np.concatenate([dt + k * np.spacing(dt), dt - k * np.spacing(dt)])
        start += c
    assert np.unique(spread).size == spread.size
    kw = dict(cap=400.0, throughput="power:0.5")
    typed = stationary(stormsim.Fleet(T=T, d=d, jitter=0.02 * T, **kw))
    distinct = stationary(stormsim.Fleet(T=T, d=spread, jitter=0.02 * T, **kw))
    for name in ("log_pmf", "log_p_ge", "log_storms_per_s", "log_writing_probability",
                 "log_checkpoint_rate", "log_write_stretch"):
        a, b = getattr(typed, name), getattr(distinct, name)
        ok = np.isfinite(a)                      # log nu_0 = -inf in both
        assert np.array_equal(a[~ok], b[~ok]), name
        assert np.max(np.abs(a[ok] - b[ok])) <= LOG_EXTREME, name


# -- ideal sharing: independent writers ----------------------------------------------------------

def test_ideal_uncapped_is_poisson_binomial():
    rng = np.random.default_rng(11)
    n = 24
    T = rng.uniform(0.5, 2.0, n)
    d = rng.uniform(0.05, 1.5, n)
    law = stationary(stormsim.Fleet(T=T, d=d, throughput="ideal", jitter=0.03 * T))
    p = d / (d + T)
    pb = np.array([1.0])                  # plain DP: all terms positive, no cancellation
    for q in p:
        pb = np.concatenate([pb * (1 - q), [0.0]]) + np.concatenate([[0.0], pb * q])
    assert np.max(np.abs(law.pmf - pb) / pb) <= POISSON_BINOMIAL_TOL
    assert np.max(np.abs(law.writing_probability - p) / p) <= POISSON_BINOMIAL_TOL
    assert np.max(np.abs(law.binomial_pmf - pb) / pb) <= POISSON_BINOMIAL_TOL
    assert np.max(np.abs(law.write_stretch - 1.0)) <= POISSON_BINOMIAL_TOL   # no contention


def test_identities_and_contention_shape():
    """sum_k nu_k = sum_i lambda_i (each firing crosses one level), E[n_w] = sum_i p_i;
    fair sharing uncapped puts more time on many writers than the binomial (MODEL.md).
    The binomial has the law's own p_i, hence the same mean number of writers."""
    rng = np.random.default_rng(5)
    n = 30
    T = rng.uniform(0.5, 2.0, n)
    law = stationary(stormsim.Fleet(T=T, d=rng.uniform(0.01, 0.08, n), jitter=0.02 * T))
    assert math.isclose(law.storms_per_s.sum(), law.checkpoint_rate.sum(), rel_tol=IDENTITY_TOL)
    assert math.isclose(np.arange(n + 1) @ law.pmf, law.mean_writers, rel_tol=IDENTITY_TOL)
    assert law.p_ge[0] == pytest.approx(1.0, rel=IDENTITY_TOL)
    assert np.allclose(law.storm_duration[1:], law.p_ge[1:] / law.storms_per_s[1:], rtol=IDENTITY_TOL)
    # More time on many writers than the binomial, and a wider law: its variance
    # is larger. (Its P(n_w = 0) is larger too, here and in every fleet tried:
    # the law sits above the binomial at both ends and below it in between.)
    levels = np.arange(n + 1)
    assert law.p_ge[-1] > law.binomial_p_ge[-1]
    mean = law.mean_writers
    assert law.pmf @ (levels - mean) ** 2 > law.binomial_pmf @ (levels - mean) ** 2
    assert np.all(law.write_stretch > 1.0)
    # Read-only results.
    with pytest.raises(ValueError):
        law.log_pmf[0] = 0.0
    with pytest.raises(ValueError):
        law.pmf[0] = 0.0
    with pytest.raises(AttributeError):
        law.n_jobs = 3


def test_mean_compute_work_enters_the_law():
    """sigma ~ T: the law uses E[max(0, T + sigma xi)], so a fleet with that mean
    and negligible jitter has the same law."""
    T = np.array([1.0, 0.7, 1.6])
    sigma = np.array([1.0, 1.4, 0.4])
    got = mean_compute_work(T, sigma)
    for t, s, m in zip(T, sigma, got):
        want, _ = integrate.quad(lambda z, t=t, s=s: (t + s * z) * norm.pdf(z), -t / s, np.inf,
                                 epsabs=0, epsrel=1e-13)
        assert abs(m - want) <= QUAD_TOL * want
    assert mean_compute_work([2.0], [0.1])[0] == 2.0      # sigma = T / 20: exactly T
    d = [0.3, 0.2, 0.5]
    wide = stationary(stormsim.Fleet(T=T, d=d, cap=2.0, throughput="power:0.5", jitter=sigma))
    same = stationary(stormsim.Fleet(T=got, d=d, cap=2.0, throughput="power:0.5", jitter=got / 50))
    assert np.array_equal(wide.mean_compute, got)
    for name in ("log_pmf", "log_storms_per_s", "log_writing_probability", "log_checkpoint_rate"):
        assert np.allclose(getattr(wide, name), getattr(same, name), rtol=0, atol=REL_EXACT)


def test_physical_units_give_storms_per_day_and_seconds():
    """MODEL.md E4: a fleet in minutes, GB and TB/s is in seconds, so the law's
    rates are per second, storms_per_day is 86400 times them and durations are s."""
    fleet = stormsim.Fleet.from_jobs(n_jobs=24, compute_interval="30 min", size="156 GB",
                                     bandwidth="5 TB/s", jitter="1 min")
    law = stationary(fleet)
    assert np.array_equal(law.storms_per_day, law.storms_per_s * 86400.0)
    d = 156e9 / 5e12                                          # 31.2 s alone
    assert np.allclose(law.mean_write_duration, d * law.write_stretch, rtol=IDENTITY_TOL, atol=0)
    # Uncapped, a cycle is the compute work (at rate 1) plus the write: by renewal,
    # lambda_i (T_i + mean write duration_i) = 1 exactly.
    assert np.array_equal(law.mean_compute, fleet.T) and fleet.T[0] == 1800.0
    cycle = law.mean_compute + law.mean_write_duration
    assert np.allclose(law.checkpoint_rate * cycle, 1.0, rtol=IDENTITY_TOL, atol=0)


# -- refusals and warnings -----------------------------------------------------------------------

def test_async_fleets_are_refused():
    fleet = stormsim.Fleet(T=[1.0, 1.1], d=[0.1, 0.2], jitter=0.02,
                           checkpoint=["blocking", "async"])
    with pytest.raises(SpecError, match=r"asynchronous.*holds both\s+resources.*storm_risk"):
        stationary(fleet)


def test_unequal_weights_are_refused():
    fleet = stormsim.Fleet(T=[1.0, 1.1], d=[0.1, 0.2], jitter=0.02, weights=[1.0, 2.0])
    with pytest.raises(SpecError, match=r"unequal weights.*balanced\s+allocation.*simulate"):
        stationary(fleet)
    equal = stormsim.Fleet(T=[1.0, 1.1], d=[0.1, 0.2], jitter=0.02, weights=[2.0, 2.0])
    plain = stormsim.Fleet(T=[1.0, 1.1], d=[0.1, 0.2], jitter=0.02)
    assert np.array_equal(stationary(equal).log_pmf, stationary(plain).log_pmf)


@pytest.mark.parametrize("given_", [None, "fleet", 3.0, {"T": [1.0], "d": [0.1]}])
def test_non_fleets_are_refused(given_):
    with pytest.raises(SpecError, match=r"fleet = .*must be a stormsim\.Fleet"):
        stationary(given_)


def test_a_writer_cap_below_n_is_refused():
    """The hook for MODEL.md E5: a fleet attribute max_writers < N has no closed form."""
    fleet = stormsim.Fleet(T=[1.0, 1.1, 0.9], d=[0.1, 0.2, 0.1], jitter=0.02)
    fields = {a: getattr(fleet, a) for a in ("T", "d", "cap", "f", "jitter", "weights", "is_async",
                                             "n_jobs")}
    with pytest.raises(SpecError, match=r"max_writers = 2 < N = 3.*queue"):
        stationary(types.SimpleNamespace(**fields, max_writers=2))
    loose = stationary(types.SimpleNamespace(**fields, max_writers=3))
    assert np.array_equal(loose.log_pmf, stationary(fleet).log_pmf)


def test_deterministic_jobs_warn():
    jittered = stormsim.Fleet(T=[1.0, 1.3], d=[0.2, 0.1], jitter=[0.02, 0.02])
    fleet = stormsim.Fleet(T=[1.0, 1.3], d=[0.2, 0.1], jitter=[0.0, 0.02])
    with pytest.warns(DeterministicFleetWarning, match=r"jitter = 0.*average over random launches"):
        law = stationary(fleet)
    assert issubclass(DeterministicFleetWarning, UserWarning)
    assert np.array_equal(law.log_pmf, stationary(jittered).log_pmf)   # sigma << T: same law


# -- scale ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_ten_thousand_heterogeneous_jobs():
    rng = np.random.default_rng(2)
    n = 10_000
    T = rng.uniform(0.5, 2.0, n)
    fleet = stormsim.Fleet(T=T, d=rng.uniform(1e-4, 1e-3, n), cap=0.8 * n, throughput="power:0.5",
                           jitter=0.02 * T)
    law = stationary(fleet)
    arrays = [getattr(law, name) for name in StationaryLaw.__dataclass_fields__ if name != "n_jobs"]
    assert not any(np.isnan(a).any() for a in arrays)
    assert abs(law.pmf.sum() - 1.0) <= SUM_TO_ONE_TOL
    assert abs(law.binomial_pmf.sum() - 1.0) <= SUM_TO_ONE_TOL


# -- the engine against the law (MODEL.md check 6) -----------------------------------------------

#: Family-wise false-alarm probability of the whole engine comparison. The
#: rule: Bonferroni over every number compared (all fleets, levels and jobs),
#: two-sided, so each |z| is held to norm.isf(FAMILY_WISE / (2 M)) (M = 54:
#: 4.28). The z are correlated within a fleet, which only makes it conservative.
FAMILY_WISE = 1e-3


def _engine_fleets():
    """A few small jittered base fleets: heterogeneous T_i, d_i; fair, power and
    table throughput; loose and binding caps; sigma 0.01-0.05 T."""
    rng = np.random.default_rng(20261203)
    out = []
    for n, kind, cap, rel_sigma in ((4, "fair", math.inf, 0.03), (5, "power:0.5", 2.5, 0.05),
                                    (6, "table", 4.0, 0.02), (3, "fair", 1.5, 0.01)):
        T = rng.uniform(0.6, 1.6, n)
        d = rng.uniform(0.05, 0.35, n)
        out.append(stormsim.Fleet(T=T, d=d, cap=cap, throughput=_rule(kind, n, rng.uniform(0.3, 1, n - 1)),
                                  jitter=rel_sigma * T))
    return out


def _ratio_of_means(a, b):
    """R = sum a / sum b over independent fleets and its delta-method standard error."""
    r = a.sum(0) / b.sum(0)
    resid = a - r * b
    m = a.shape[0]
    se = np.sqrt((resid ** 2).sum(0) / (m * (m - 1))) / b.mean(0)
    return r, se


def test_engine_agrees_with_the_law():
    fleets, cycles, burn_in = 64, 3000, 100
    compared = []                        # (z, what) over every number compared
    for number, fleet in enumerate(_engine_fleets()):
        law = stationary(fleet)
        run = stormsim.simulate(fleet, launch="random", fleets=fleets, cycles=cycles, seed=number,
                                burn_in=burn_in)
        window = run.occupancy.sum(axis=1)[:, None]
        at_least = np.cumsum(run.occupancy[:, ::-1], axis=1)[:, ::-1]
        for what, a, want in (("P(n_w >= k)", at_least[:, 1:], law.p_ge[1:]),
                              ("nu_k", run.upcrossings[:, 1:].astype(np.float64), law.storms_per_s[1:]),
                              ("P(i writing)", run.writing_time, law.writing_probability)):
            r, se = _ratio_of_means(a, np.broadcast_to(window, a.shape))
            compared += [((ri - wi) / si, f"fleet {number} {what}[{j}]: {ri:.6g} vs {wi:.6g}")
                         for j, (ri, wi, si) in enumerate(zip(r, want, se))]
    # Bonferroni over every number compared, two-sided.
    bound = norm.isf(FAMILY_WISE / (2 * len(compared)))
    worst = max(compared, key=lambda c: abs(c[0]))
    print(f"{len(compared)} numbers, |z| <= {bound:.2f}; worst z = {worst[0]:.2f} ({worst[1]})")
    assert all(abs(z) <= bound for z, _ in compared), worst


def test_the_names_of_0_2_0_warn_and_read_the_one_names():
    law = stationary(stormsim.Fleet.identical(4, load=0.5, jitter=0.01))
    for old, new in (("tail", "p_ge"), ("storm_rate", "storms_per_s"),
                     ("binomial_tail", "binomial_p_ge"), ("log_tail", "log_p_ge")):
        with pytest.warns(DeprecationWarning, match=f"StationaryLaw.{old} is now StationaryLaw.{new}"):
            assert np.array_equal(getattr(law, old), getattr(law, new))

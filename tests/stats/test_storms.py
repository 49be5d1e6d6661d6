"""Storms (MODEL.md E3) in sweeps and results, and storm_risk.

The known answer: jobs with ideal f (each writer at rate 1) and no cap never
interact, so each is an independent renewal process; with jitter, after a
burn-in of many cycles its phase is uniform (sigma sqrt(cycles) >> T + d), so
n_w ~ Binomial(N, p), p = d / (T + d), and a storm at level k starts at a
firing that finds exactly k - 1 of the other N - 1 writing:
nu_k = N / (T + d) * Binomial(N - 1, p).pmf(k - 1), exactly.
"""
from __future__ import annotations

import math

import h5py
import numpy as np
import pytest
from scipy.stats import binom

import stormsim
from stormsim.cli import main
from stormsim.store.results import open_results
from stormsim.sweep.spec import parse_sweep
from stormsim.stats.storms import ratio_of_means, storm_estimate
from stormsim.driver import run_sweep
from stormsim.stats.tails import tail_estimate

from conftest import ROOT

#: An estimate is within Z_TOL of its standard errors of the exact value:
#: 3 se, since each test compares many correlated levels at once (a 2-se
#: rule would fail by chance on one of them about a third of the time).
Z_TOL = 3.0

N, T, D, SIGMA = 8, 1.0, 0.25, 0.1
#: burn-in 400 cycles: the phase's spread sigma sqrt(400) = 2 s is 1.6 cycles,
#: so each job's phase is uniform to ~exp(-2 pi^2 1.6^2) ~ 1e-22.
CYCLES, BURN_IN = 1000, 400


def _independent():
    return stormsim.Fleet(T=[T] * N, d=[D] * N, throughput="ideal", jitter=SIGMA)


def _truth():
    p = D / (T + D)
    k = np.arange(1, N + 1)
    return binom.sf(k - 1, N, p), N / (T + D) * binom.pmf(k - 1, N - 1, p)


def test_storm_rate_recovers_the_exact_independent_answer():
    run = stormsim.simulate(_independent(), fleets=600, cycles=CYCLES, burn_in=BURN_IN, seed=2)
    p_true, nu_true = _truth()
    st = storm_estimate(run.upcrossings, run.occupancy)
    te = tail_estimate(run.occupancy)
    for k in range(1, N):                            # k = N: too few storms for a se
        assert st.method[k] == "ratio-log"
        assert abs(st.storms_per_s[k] / nu_true[k - 1] - 1) <= Z_TOL * st.storms_per_s_rel_error[k], k
        # the interval is the t interval of the same se on the log scale
        assert st.storms_per_s_lo[k] < nu_true[k - 1] * 1.5 and st.storms_per_s_hi[k] > nu_true[k - 1] / 1.5
        assert te.p_ge_lo[k] <= p_true[k - 1] * 1.2 and te.p_ge_hi[k] >= p_true[k - 1] / 1.2
    # the mean duration of the lowest storm: time at n_w >= 1 per storm
    assert st.storm_duration[1] == pytest.approx(run.occupancy[:, 1:].sum() / run.upcrossings[:, 1].sum())


def test_storm_rate_interval_covers_synthetic_truth():
    """Coverage of the rate interval on iid units with overdispersed counts
    (a gamma-mixed Poisson: the clustering of storms within a fleet)."""
    reps, u, nu, w = 2000, 48, 0.002, 1000.0
    rng = np.random.default_rng(5)
    hit = 0
    for _ in range(reps):
        W = w * rng.uniform(0.9, 1.1, u)
        lam = rng.gamma(0.5, 2.0, u) * nu * W        # mean nu W, variance inflated
        e = rng.poisson(lam)
        occ = np.stack([W - 0.01 * e, 0.01 * e], axis=1)
        up = np.stack([np.zeros(u), e], axis=1)
        st = storm_estimate(up, occ)
        hit += st.storms_per_s_lo[1] <= nu <= st.storms_per_s_hi[1]
    # binomial se of the coverage sqrt(.95 .05 / 2000) = 0.005; 0.03 flags a broken interval
    assert abs(hit / reps - 0.95) < 0.03


def test_ratio_of_means_interval_covers_synthetic_truth():
    """The duration interval of a splitting estimate (P / nu over replicates):
    coverage on iid, right-skewed, correlated units with a known ratio."""
    reps, u, ratio = 2000, 32, 0.04
    rng = np.random.default_rng(6)
    hit = 0
    for _ in range(reps):
        den = rng.gamma(2.0, 1.0, (u, 1))                   # skewed, like replicate rates
        num = ratio * den * rng.gamma(20.0, 1 / 20.0, (u, 1))  # E[num | den] = ratio den
        r, lo, hi, _ = ratio_of_means(num, den)
        hit += lo[0] <= ratio <= hi[0]
    # binomial se of the coverage sqrt(.95 .05 / 2000) = 0.005; 0.03 flags a broken interval
    assert abs(hit / reps - 0.95) < 0.03
    nan = ratio_of_means(np.ones((1, 2)), np.ones((1, 2)))       # one unit: no interval
    assert all(np.isnan(x).all() for x in nan)


def test_split_levels_give_their_storm_duration_with_an_interval():
    f = stormsim.Fleet.identical(16, load=0.6, jitter=0.01)
    r = stormsim.storm_risk(f, [6], method="splitting", max_seconds=None, seed=3,
                            split=stormsim.SplitSettings(trials=100, replicates=3))
    assert r.level_method[0] == "splitting" and r.split.replicates == 3
    assert 0 < r.storm_duration_lo[0] < r.storm_duration[0] < r.storm_duration_hi[0] < 1.0   # storms << T
    assert f"{r.storm_duration[0]:.4g} [{r.storm_duration_lo[0]:.4g}, " in str(r)


@pytest.mark.slow  # ~1 s of splitting
def test_a_level_splitting_never_reached_gets_a_bound_not_a_bare_zero():
    """k = N = 64 with 3 replicates of 10 clones: none gets there (it would
    take ~55 stages of 10 clones in a row; the best of them stop near stage
    25). P is bounded by the interval of the deepest lower level asked; the
    rate says it has none."""
    f = stormsim.Fleet.identical(64, load=0.6, jitter=0.01)
    r = stormsim.storm_risk(f, [8, 64], method="splitting", max_seconds=None, seed=3,
                            split=stormsim.SplitSettings(trials=10, replicates=3))
    assert r.p_ge[0] > 0 and list(r.p_ge_method) == ["splitting", "monotone-bound"]
    assert r.p_ge[1] == 0 and r.p_ge_hi[1] == r.p_ge_hi[0]
    assert r.storms_method[1] == "not-reached" and math.isnan(r.storms_per_s[1])
    text = str(r).splitlines()[3]
    assert f"< {r.p_ge_hi[0]:.2e} (not reached)" in text and "not reached, no bound" in text


def test_no_storm_gives_a_one_sided_poisson_bound_not_a_bare_zero():
    occ = np.array([[100.0, 0.0], [120.0, 0.0]])
    st = storm_estimate(np.zeros((2, 2)), occ)
    assert st.method[1] == "zero-bound" and st.storms_per_s[1] == 0.0
    assert st.storms_per_s_hi[1] == pytest.approx(-math.log(0.05) / 220.0)   # rule of three
    assert math.isnan(st.storm_duration[1])


SWEEP = """
[sweep]
name = "storms"
occupancy = "{mode}"
[fixed]
T = 1.0
jitter = 0.02
cycles = 150
burn_in = 10
fleets = 40
seed = 11
[grid]
N = [4, 6]
load = [0.5, 0.9]
"""


@pytest.mark.parametrize("mode", ["fleet", "sum"])
def test_sweep_keeps_storms_exactly_as_simulate_counts_them(mode, tmp_path):
    sweep = parse_sweep(SWEEP.format(mode=mode), "storms.toml")
    out = tmp_path / "s.h5"
    assert run_sweep(sweep, out, progress="none").status == "complete"
    res = open_results(out)
    df = res.to_dataframe(levels=[2, 4])
    s = res.summary(levels=(2,))
    with h5py.File(out) as f:
        for c in sweep.cells:
            run = stormsim.simulate(c.fleet, fleets=c.fleets, **c.simulate_kwargs())
            g = f["cells"][f"{c.index:06d}"]
            e = run.upcrossings.sum(axis=0)
            assert np.array_equal(g["upcrossings_sum"][()], e)           # exact integers
            if mode == "fleet":
                assert np.array_equal(g["upcrossings"][()], run.upcrossings)
            else:
                assert g["upcrossings_block_sum"][()].sum(axis=0).tolist() == e.tolist()
            window = run.occupancy.sum()
            nu = e[2] / window
            assert df["storms_per_s_ge_2"][c.index] == pytest.approx(nu, rel=1e-12)
            assert s["storms_per_s_ge_2"][c.index] == pytest.approx(nu, rel=1e-12)
            assert df["storms_ge_2"][c.index] == e[2]
            dur = run.occupancy[:, 2:].sum() / e[2]
            assert df["storm_duration_ge_2"][c.index] == pytest.approx(dur, rel=1e-12)
            assert df["storms_per_s_ge_2_lo"][c.index] < nu < df["storms_per_s_ge_2_hi"][c.index]
            assert df["storms_ge_2_method"][c.index] == "ratio-log"
            # the file's per-cell table holds the same numbers
            assert f["storms_per_s"][c.index, 1] == pytest.approx(nu, rel=1e-12)
            assert f["storms_method"][c.index, 1] == 0
        assert f["storms_per_s"].attrs["units"] == "1/s"
    ds = res.to_xarray(grid=False)
    assert float(ds["storms_per_s"].sel(cell=0, k=2)) == pytest.approx(df["storms_per_s_ge_2"][0])


def test_inspect_storms_column(tmp_path, capsys):
    sweep = parse_sweep(SWEEP.format(mode="sum"), "storms.toml")
    out = tmp_path / "s.h5"
    run_sweep(sweep, out, progress="none")
    assert main(["inspect", str(out), "--storms", "--levels", "2"]) == 0
    text = capsys.readouterr().out
    assert "storms/s(n_w>=2) [95% CI]" in text and "storm s(n_w>=2)" in text
    assert main(["inspect", str(out), "--storms", "--levels", "2", "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert {"storms_per_s_ge_2", "storms_per_s_ge_2_lo", "storms_per_s_ge_2_hi",
            "storm_duration_ge_2", "storms_ge_2_method"} <= set(header)


def test_a_file_written_before_storms_were_counted_reads_as_not_recorded():

    res = open_results(ROOT / "tests" / "data" / "v1_sum.h5")
    s = res.summary(levels=(2,))
    assert set(s["storms_ge_2_method"].tolist()) <= {"not-recorded", "structural"}
    assert np.all(np.isnan(s["storms_per_s_ge_2"]))


# ---------------------------------------------------------------------------
# storm_risk
# ---------------------------------------------------------------------------

def test_storm_risk_reaches_the_exact_answer_to_its_relative_error():
    p_true, nu_true = _truth()
    levels = [2, 4, 6]
    r = stormsim.storm_risk(_independent(), levels, rel_error=0.05, max_seconds=None,
                            max_fleets=100_000, cycles=CYCLES, burn_in=BURN_IN, seed=3, batch_fleets=64,
                            method="plain")
    assert r.stopped == "rel_error" and r.resolved.all()
    assert np.all(r.p_ge_rel_error <= 0.05) and np.all(r.storms_per_s_rel_error <= 0.05)
    for j, k in enumerate(levels):
        assert abs(r.p_ge[j] / p_true[k - 1] - 1) <= Z_TOL * r.p_ge_rel_error[j], k
        assert abs(r.storms_per_s[j] / nu_true[k - 1] - 1) <= Z_TOL * r.storms_per_s_rel_error[j], k
    assert r.fleets == r.batches * 64 and r.fleet_cycles == r.fleets * CYCLES
    assert r.cpu_seconds > 0 and r.events > 0
    assert "storm_risk:" in str(r)


def test_storm_risk_is_a_prefix_of_the_same_fleets():
    """Stopped after 2 batches, the estimate is exactly that of the first 2
    batches' fleets in one simulate() call: a function of (seed, inputs, F)."""
    fl = stormsim.Fleet(T=[1.0] * 6, d=[0.15] * 6, jitter=0.01)
    r = stormsim.storm_risk(fl, [2, 3], rel_error=1e-6, max_fleets=64, batch_fleets=32,
                            cycles=200, burn_in=20, seed=9, method="plain")
    assert r.stopped == "max_fleets" and r.fleets == 64
    run = stormsim.simulate(fl, fleets=64, cycles=200, burn_in=20, seed=9)
    te = tail_estimate(run.occupancy)
    st = storm_estimate(run.upcrossings, run.occupancy)
    # the same fleets, summed in another grouping: equal to rounding
    assert r.p_ge == pytest.approx(te.p_ge[[2, 3]], rel=1e-12)
    assert r.storms_per_s == pytest.approx(st.storms_per_s[[2, 3]], rel=1e-12)
    again = stormsim.storm_risk(fl, [2, 3], rel_error=1e-6, max_fleets=64, batch_fleets=32,
                                cycles=200, burn_in=20, seed=9, method="plain")
    assert np.array_equal(again.p_ge, r.p_ge) and np.array_equal(again.storms_per_s_hi, r.storms_per_s_hi)


def test_storm_risk_agrees_with_a_long_plain_run():
    """Fair f, L = 0.6, sigma = 0.01 T at N = 16 (the validation cell): storm_risk
    to 10 % against 2000 fleets of another seed, within Z_TOL combined se."""
    n = 16
    fl = stormsim.Fleet(T=[1.0] * n, d=[0.6 / n] * n, jitter=0.01)
    r = stormsim.storm_risk(fl, [2, 3, 4], rel_error=0.1, max_seconds=None, max_fleets=100_000,
                            cycles=400, burn_in=40, seed=1, batch_fleets=64, method="plain")
    assert r.stopped == "rel_error"
    run = stormsim.simulate(fl, fleets=2000, cycles=400, burn_in=40, seed=1234)
    st = storm_estimate(run.upcrossings, run.occupancy)
    for j, k in enumerate([2, 3, 4]):
        se = math.hypot(r.storms_per_s_rel_error[j] * r.storms_per_s[j],
                        st.storms_per_s_rel_error[k] * st.storms_per_s[k])
        assert abs(r.storms_per_s[j] - st.storms_per_s[k]) <= Z_TOL * se, k


def test_storm_risk_bounds_an_unreached_level_and_prices_it():
    fl = stormsim.Fleet(T=[1.0] * 16, d=[0.3 / 16] * 16, jitter=0.01)
    r = stormsim.storm_risk(fl, [2, 16], rel_error=0.1, max_fleets=64, batch_fleets=32,
                            cycles=200, burn_in=20, seed=4, method="plain")
    j = 1
    assert r.hits[j] == 0 and not r.resolved[j]
    assert r.p_ge_method[j] == "zero-bound" and r.storms_method[j] == "zero-bound"
    assert r.storms_per_s[j] == 0.0 and r.storms_per_s_hi[j] > 0 and r.p_ge_hi[j] > 0
    assert r.needed_is_lower_bound[j] and r.fleets_needed[j] > r.fleets
    assert "fleets" in str(r)


def test_storm_risk_refuses_bad_input():
    fl = stormsim.Fleet(T=[1.0] * 4, d=[0.1] * 4)
    for kw in ({"levels": [5]}, {"levels": [0]}, {"levels": [2], "rel_error": 0},
               {"levels": [2], "max_seconds": -1}, {"levels": [2], "seed": -1}):
        with pytest.raises(stormsim.SpecError):
            stormsim.storm_risk(fl, **kw)


def test_risk_command_prints_the_levels_and_the_effort(tmp_path, capsys):
    toml = tmp_path / "risk.toml"
    toml.write_text('[sweep]\nname = "risk"\n[fixed]\nN = 8\nT = 1.0\nload = 0.6\n'
                    'jitter = 0.01\ncycles = 100\nburn_in = 10\nseed = 1\nfleets = 1\n')
    assert main(["risk", str(toml), "--levels", "2,N", "--max-fleets", "64", "-q",
                 "--method", "plain", "--format", "json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["levels"] == [2, 8] and doc["fleets"] >= 64 and doc["stopped"] == "max_fleets"
    assert len(doc["storms_per_s_hi"]) == 2 and doc["cpu_seconds"] > 0
    assert main(["risk", str(toml), "--cell", "3"]) == 2      # bad input: exit code 2

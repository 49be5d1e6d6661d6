"""MODEL.md E8 in the reference integrator: F1 (no failures: the model
before E8, bit for bit, no draw), the failure streams, goodput's parts, F2
(Daly's law) and F3 (an outage synchronizes identical jobs)."""
from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy import stats

import reference
from conftest import ROOT
from f1_cases import cases
from reference import GOODPUT_PARTS, simulate_reference
from stormsim.failures import FAILURE_SALT, OUTAGE_SALT, exponential
from stormsim.stats.daly import daly_breakdown, daly_expected_time, daly_goodput

#: The reference's outputs on the F1 cases before E8 (commit 8d49c28), as hex floats.
BEFORE_E8 = ROOT / "tests" / "data" / "reference_before_e8.json"

#: Goodput and its parts add up to 1: six sums of per-job sums over ~10^3
#: steps, each step's split (rate + (1 - r_c) + r_c eps = 1) exact to an ulp
#: or two: 1e-12 leaves two decades above the ~1e-14 seen.
PARTS_ATOL = 1e-12


def _no_draw(u):
    raise AssertionError("a failure stream was drawn from")


@pytest.mark.parametrize("name, args, kwargs", cases(), ids=[c[0] for c in cases()])
@pytest.mark.parametrize("failures", [None, "inf"])
def test_f1_no_failures_is_the_model_before_e8_bit_for_bit(monkeypatch, name, args, kwargs,
                                                           failures):
    """Every output the reference had before E8 is unchanged to the bit, with
    the failure options left out or given as M = inf (with restarts and an
    infinite outage MTBF), and no failure stream is drawn from."""
    monkeypatch.setattr(reference, "exponential", _no_draw)
    extra = {}
    if failures == "inf":
        n = len(args[0])
        extra = {"mtbf": [math.inf] * n, "restart": [3.0] * n, "outage_mtbf": math.inf}
    out = simulate_reference(*args, **kwargs, **extra)
    before = json.loads(BEFORE_E8.read_text())[name]
    for field, saved in before.items():
        got = np.asarray(out[field], float)
        assert list(got.shape) == saved["shape"], field
        assert [float.hex(float(x)) for x in got.ravel()] == saved["hex"], field
    # No failure, no loss, no downtime; the parts still add up.
    assert out["failures"].sum() == out["abandoned_writes"].sum() == 0
    assert out["lost_work"].sum() == out["down_time"].sum() == 0.0
    assert out["goodput"] + sum(out["goodput_parts"].values()) == pytest.approx(1.0, abs=PARTS_ATOL)


#: Down time against the union of the DOWN intervals: both are sums of a few
#: hundred differences of instants ~1e2 s, each rounded to ~1e-14 s.
DOWN_ATOL = 1e-9


def _instants(base, mean, horizon):
    """The documented failure instants of a stream up to horizon: the running
    float sum of mean * exponential(uniform m), m = 0, 1, ..."""
    t, m, out = 0.0, 0, []
    while True:
        t += mean * exponential(reference.uniform(base, m))
        m += 1
        if t > horizon:
            return out
        out.append(t)


def test_failure_instants_are_the_documented_streams():
    """Job i's failures are the running sum of M_i * exponential(uniform m) of
    stream (key0, key1 ^ FAILURE_SALT, fleet, i), outages that of job 0 of
    key1 ^ OUTAGE_SALT, and an outage fails every job. Observed exactly: the
    failures in the window are the instants up to its end, and (a failure in
    DOWN starting DOWN again) the down time is the measure of the union of
    [F, F + R) over those instants."""
    key, fleet, M, M0, R = (11, 22), 5, [3.0, 5.0], 7.0, [0.5, 0.25]
    out = simulate_reference([1.0, 1.5], [0.2, 0.3], [0.1, 0.0], math.inf, [math.nan, 1.0, 2.0],
                             [0.0, 0.5], 100, key=key, fleet=fleet, mtbf=M, restart=R,
                             outage_mtbf=M0)
    end = out["end_time"]
    outages = _instants(reference.stream_base(key[0], key[1] ^ OUTAGE_SALT, fleet, 0), M0, end)
    assert len(outages) > 5  # the case exercises outages
    for i in range(2):
        own = _instants(reference.stream_base(key[0], key[1] ^ FAILURE_SALT, fleet, i), M[i], end)
        assert out["failures"][i] == len(own) + len(outages) > 20
        down, reach = 0.0, 0.0  # the union's measure, instants in order
        instants = sorted(own + outages)
        assert np.any(np.diff(instants) < R[i])  # some failures strike in DOWN
        for F in instants:
            down += min(F + R[i], end) - max(F, reach) if F + R[i] > reach else 0.0
            reach = max(reach, F + R[i])
        assert out["down_time"][i] == pytest.approx(down, abs=DOWN_ATOL)


def test_a_failure_frees_its_writer_slot_at_once():
    """Writer cap K = 1: job 0 writes from 0.5 (after 0.5 s of compute), job 1
    falls due at 0.7 and queues; job 0 fails at 1.0 mid-write: its write is
    abandoned (its 0.5 s of work lost) and job 1 is admitted at that instant."""
    key = (5, 5)
    u0 = reference.uniform(reference.stream_base(key[0], key[1] ^ FAILURE_SALT, 0, 0), 0)
    M = 1.0 / exponential(u0)
    t_f = M * exponential(u0)  # the failure instant, as the integrator draws it
    out = simulate_reference([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], math.inf, [math.nan, 1.0, 1.0],
                             [0.5, 0.3], 1, key=key, max_writers=1, mtbf=[M, math.inf],
                             restart=[2.0, 0.0])
    assert out["firings"][1, 0] == t_f == out["end_time"]
    assert out["failures"].tolist() == [1, 0] and out["abandoned_writes"].tolist() == [1, 0]
    assert out["lost_work"].tolist() == [0.5, 0.0]
    assert out["committed_work"].tolist() == [0.0, 0.0]
    # job 1: 0.7 s of compute (uncommitted, its write just started), 0.3 s queued
    assert out["uncommitted_work"][1] == pytest.approx(0.7, abs=PARTS_ATOL)
    assert out["checkpoint_time"].tolist() == pytest.approx([t_f - 0.5, t_f - 0.7],
                                                            abs=PARTS_ATOL)


def test_goodput_parts_add_up_to_one():
    """Every kind of job at once, with failures and outages, jitter, a cap
    and a writer cap: goodput and its five parts add up to 1, per job too."""
    n = 4
    out = simulate_reference([1.0, 1.3, 0.8, 1.1], [0.3, 0.4, 0.2, 0.5], [0.1] * n, 2.5,
                             [math.nan, 1.0, 1.0, 1.0, 1.0], [0.1, 0.4, 0.7, 1.0], 40, burn_in=5,
                             key=(3, 4), checkpoint=["async", "blocking", "async", "async"],
                             snapshot=[0.05, 0.0, 0.0, 0.1], slowdown=[0.3, 0.0, 1.0, 0.5],
                             on_busy=["block", "block", "skip", "block"], max_writers=2,
                             mtbf=[4.0, 6.0, 5.0, math.inf], restart=[0.3, 0.0, 0.5, 0.2],
                             outage_mtbf=15.0)
    assert set(out["goodput_parts"]) == set(GOODPUT_PARTS)
    assert out["failures"].min() > 0 and out["abandoned_writes"].sum() > 0  # it exercises E8
    assert all(v > 0 for k, v in out["goodput_parts"].items() if k != "uncommitted")
    total = out["goodput"] + math.fsum(out["goodput_parts"].values())
    assert total == pytest.approx(1.0, abs=PARTS_ATOL)
    per_job = (out["committed_work"] + out["lost_work"] + out["uncommitted_work"]
               + out["down_time"] + out["checkpoint_time"] + out["cap_time"])
    np.testing.assert_allclose(per_job, out["window"], rtol=PARTS_ATOL)


#: F2 runs each case over independent fleets (streams (seed, fleet, ...)),
#: each to CYCLES firings; goodput per fleet is committed / window.
F2_FLEETS = {1: 40, 8: 20}
F2_CYCLES = {1: 500, 8: 100}

#: A correct integrator's mean falls outside its interval once in 10^4 cases
#: (two-sided, Student's t over the fleets); the seeds are fixed.
F2_ALPHA = 1e-4

#: The cases (T, d, M, R): light and heavy failures, and two of Daly's
#: published cases (in minutes as seconds: the law is scale-free) at their
#: optimum intervals, M = 15 min and 6 h with R = 10 min, d = 5 min.
F2_CASES = [(1.0, 0.1, 5.0, 0.2), (1.0, 0.3, 1.0, 0.5), (9.1665, 5.0, 15.0, 10.0),
            (56.714, 5.0, 360.0, 10.0)]


@functools.lru_cache(maxsize=None)  # shared by the F2 tests
def _f2_runs(T, d, M, R, n):
    """Goodput and its parts, one per fleet, of n independent blocking jobs
    (sigma = 0, ideal f, uncapped), and the fleets' mean window."""
    parts, windows = {k: [] for k in ("goodput",) + GOODPUT_PARTS}, []
    for fleet in range(F2_FLEETS[n]):
        out = simulate_reference([T] * n, [d] * n, [0.0] * n, math.inf,
                                 [math.nan] + [float(k) for k in range(1, n + 1)], [0.0] * n,
                                 F2_CYCLES[n], key=(2026, 35), fleet=fleet, mtbf=[M] * n,
                                 restart=[R] * n)
        parts["goodput"].append(out["goodput"])
        for k in GOODPUT_PARTS:
            parts[k].append(out["goodput_parts"][k])
        windows.append(out["window"])
    return {k: np.array(v) for k, v in parts.items()}, float(np.mean(windows))


def _f2_interval(T, d, M, R, n, part="goodput"):
    """(mean over fleets, half-width of its interval, bias allowance) of a part.

    The window ends at the slowest job's last firing, with the interval it
    fires for not yet committed: that end moves each job's share of at most
    one renewal cycle in expectation, E_Daly / window (the launch, theta = 0,
    is a renewal point: no bias at the start)."""
    runs, window = _f2_runs(T, d, M, R, n)
    x = runs[part]
    half = stats.t.ppf(1 - F2_ALPHA / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(half), daly_expected_time(T, d, M, R) / window


@pytest.mark.parametrize("n", [1, 8])
@pytest.mark.parametrize("T, d, M, R", F2_CASES)
def test_f2_dalys_law(T, d, M, R, n):
    """F2: with no contention the reference's goodput is T / E_Daly within its
    interval (N = 1, and N = 8 ideal and uncapped: independent jobs)."""
    mean, half, bias = _f2_interval(T, d, M, R, n)
    expected = daly_goodput(T, d, M, R)
    assert abs(mean - expected) <= half + bias, (mean, half, bias, expected)
    # Power: the interval excludes what a model without failures would give.
    assert abs(T / (T + d) - expected) > 2 * (half + bias)


@pytest.mark.parametrize("T, d, M, R", F2_CASES[1:3])
def test_f2_tells_failures_in_down_apart(T, d, M, R):
    """The F2 interval is narrow enough to see that failures strike during
    DOWN too: without them E would be (M + R)(e^{(T + d)/M} - 1), a goodput
    10% to 17% higher in these cases, outside the interval."""
    mean, half, bias = _f2_interval(T, d, M, R, 1)
    without = T / ((M + R) * math.expm1((T + d) / M))
    assert abs(mean - without) > half + bias
    assert abs(without - daly_goodput(T, d, M, R)) > 2 * (half + bias)


@pytest.mark.parametrize("T, d, M, R", F2_CASES)
def test_f2_goodput_parts_follow_dalys_breakdown(T, d, M, R):
    """F2, part by part (N = 1): the shares of writing, lost work and down time
    are Daly's (``daly_breakdown``), each within its interval; no cap; the
    uncommitted share is the window's end only (below the bias allowance)."""
    law = daly_breakdown(T, d, M, R)
    for part in ("writing", "lost", "down"):
        mean, half, bias = _f2_interval(T, d, M, R, 1, part)
        assert abs(mean - law[part]) <= half + bias, (part, mean, half, bias, law[part])
    runs, _ = _f2_runs(T, d, M, R, 1)
    assert np.all(runs["cap"] == 0.0)
    assert runs["uncommitted"].mean() <= _f2_interval(T, d, M, R, 1)[2]


def test_f3_an_outage_synchronizes_identical_jobs():
    """F3: four identical jobs staggered (L = 0.4 < L*: no two ever write at
    once) meet an outage at t_o; with equal R they restart together and from
    then on fire together, a storm of 4 writers one interval after the
    restart (at t_o + R + T). Without the outage: no storm."""
    n, T, d, R = 4, 1.0, 0.1, 0.4
    for k1 in range(100):  # the first key whose second outage comes 4 first gaps later
        base = reference.stream_base(7, k1 ^ OUTAGE_SALT, 0, 0)
        u0, u1 = reference.uniform(base, 0), reference.uniform(base, 1)
        if exponential(u1) > 4 * exponential(u0):
            break
    key = (7, k1)
    M0 = 5.3 / exponential(u0)  # the first outage at 5.3 s, the next after 26 s
    t_o = M0 * exponential(u0)  # exactly as the integrator draws it
    common = ([T] * n, [d] * n, [0.0] * n, math.inf, [math.nan] + [1.0] * n,
              [0.0, 0.25, 0.5, 0.75], 12)
    quiet = simulate_reference(*common, key=key, restart=[R] * n)
    out = simulate_reference(*common, key=key, restart=[R] * n, outage_mtbf=M0)
    assert quiet["upcrossings"][2] == 0 and out["upcrossings"][n] >= 1
    assert out["failures"].tolist() == [1] * n  # one outage in the run, which fails all
    firings = out["firings"]
    before = firings[:, 0]
    assert len(set(before.tolist())) == n  # staggered before the outage
    after = [row[row > t_o] for row in firings]
    assert min(len(a) for a in after) >= 3
    for row in after[1:]:  # the same instants, bit for bit (the same operations)
        assert row[:3].tolist() == after[0][:3].tolist()
    assert after[0][0] == pytest.approx(t_o + R + T, rel=1e-12)


def test_failure_streams_are_reproducible_in_the_kernel():
    """The definitions of stormsim.failures evaluated as a kernel does (numba:
    the engine's stream_base and stream_uniform on uint64 words, -log(1 - u)
    compiled) give the reference's gaps bit for bit, the smallest and largest
    uniforms included (u = 0: a gap of 0; u = 1 - 2^-53: the longest, 36.7 M)."""
    from numba import njit

    from stormsim.engine import _kernel
    from stormsim.engine.door import root_key

    @njit
    def kernel_gap(base, m, mean):
        return mean * -math.log(1.0 - _kernel.stream_uniform(base, m))

    key0, key1 = root_key(35)
    for salt, job in [(FAILURE_SALT, 0), (FAILURE_SALT, 7), (OUTAGE_SALT, 0)]:
        # as a kernel stores it, a uint64 word (numba returns a Python int, which
        # types as int64 below 2^63, and the stream's sums would go to float)
        base = np.uint64(_kernel.stream_base(key0, key1 ^ np.uint64(salt), 3, job))
        ref_base = reference.stream_base(int(key0), int(key1) ^ salt, 3, job)
        assert int(base) == ref_base
        for m in range(3000):
            assert kernel_gap(base, m, 2.5) == 2.5 * exponential(reference.uniform(ref_base, m))
    for u in (0.0, 2.0 ** -53, 0.5, 1.0 - 2.0 ** -53):
        assert njit(lambda x: -math.log(1.0 - x))(u) == exponential(u)
    assert exponential(1.0 - 2.0 ** -53) == pytest.approx(53 * math.log(2.0), rel=1e-15)

"""Forward flux sampling (stormsim.risk.splitting).

Known answer: jobs with ideal f and no cap never interact, so after a long
burn-in with jitter each job's phase is uniform and n_w ~ Binomial(N, q),
q = d / (T + d); a storm at level k starts at a firing that finds exactly
k - 1 of the other N - 1 writing: nu_k = N / (T + d) Binomial(N - 1, q).pmf(k - 1).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

import stormsim
from stormsim.engine import _kernel
from stormsim.engine import door
from stormsim.errors import SpecError
from stormsim.risk.splitting import (DEFAULT_BASIN, DEFAULT_HORIZON, DEFAULT_SCORE_EVERY, MIN_ENTRIES,
                                PILOT_FLEET, SplitSettings, _flux, choose_basin, storm_split)
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

#: An estimate is within Z_TOL standard errors (over replicates) of the truth:
#: 3 se, since each test compares several correlated levels at once.
Z_TOL = 3.0

N, T = 16, 1.0
D = 0.6 * T / N            # load L = 0.6
#: burn-in 400 cycles at sigma = 0.1 T: the phase spread sigma sqrt(400) = 2 T
#: is ~1.9 cycles, so each job's phase is uniform to ~exp(-2 pi^2 1.9^2).
SIGMA_IND, BURN_IND = 0.1, 400


def _independent():
    return stormsim.Fleet(T=[T] * N, d=[D] * N, throughput="ideal", jitter=SIGMA_IND)


def _paper_cell(n=N):
    """The validation cell: L = 0.6, sigma = 0.01 T, fair, uncapped."""
    return stormsim.Fleet.identical(n, load=0.6, jitter=0.01)


def _uncovered_cell(n=N):
    """The validation cell with its last job's jitter 0: no exact law covers
    it (MODEL.md: without randomness the law is at most an average), so
    storm_risk's "auto" runs its simulation chain (plain, then splitting)."""
    return stormsim.Fleet(T=[1.0] * n, d=[0.6 / n] * n, jitter=[0.01] * (n - 1) + [0.0])


@pytest.mark.parametrize("looks", ["cycle", "write-end"])
def test_flux_run_is_the_simulated_fleet_bit_for_bit(looks):
    """A replicate's flux run is fleet r of simulate(seed=...): the same launch,
    the same streams, the same arithmetic (ring queues), so the same numbers
    (looking at the score changes nothing in the fleet, only where its
    excursions are seen to start and end)."""
    f = _paper_cell()
    occ, up, *_ = _flux(door.prepare(f, 3), SplitSettings(
        burn_in=50, flux_cycles=300, reservoir=8, horizon=DEFAULT_HORIZON, score_every=looks),
        "random", 5, 2, 4)
    run = stormsim.simulate(f, fleets=2, fleet_start=5, cycles=300, burn_in=50, seed=3,
                            queues="ring")
    assert np.array_equal(run.occupancy, occ)
    assert np.array_equal(run.upcrossings, up)


def _hand_case():
    """Five jobs of d = 1, fair f: three writing (targets 0.5, 0.6, 0.7, rings of
    8), two computing that fire at 0.1 and 0.2 (``ckey``) or, in ``late``, at
    9.0 and 9.5, after every write has ended."""
    d = np.full(5, 1.0)
    rw = np.ones(6)
    rw[1:] = 1.0 / np.arange(1, 6)          # fair: f(n) = 1
    rc = np.ones(6)
    wkey = np.array([0.5, 0.6, 0.7, 0.0, 0.0, 0.0, 0.0, 0.0])
    widx = np.array([0, 1, 2, 0, 0, 0, 0, 0])
    ckey = np.array([0.1, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    late = np.array([9.0, 9.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    cidx = np.array([3, 4, 0, 0, 0, 0, 0, 0])
    return d, rw, rc, wkey, widx, ckey, late, cidx


def test_committed_score_is_at_least_the_writers_and_sees_a_committed_storm():
    """Three writers now, and two computers that fire before any write ends:
    the committed future reaches 5; without the computers, the score is n_w.
    (The score is exact to its class: (lo, hi) = (1, 5) asks whether it reaches 5.)"""
    d, rw, rc, wkey, widx, ckey, late, cidx = _hand_case()
    buf = np.empty(6)
    s = _kernel.ffs_committed_max(wkey, widx, 0, 3, ckey, cidx, 0, 2, 7, 0.0, 0.0, d, rw, rc,
                                  1, 5, buf)
    assert s == 5
    assert _kernel.ffs_committed_max(wkey, widx, 0, 3, ckey, cidx, 0, 0, 7, 0.0, 0.0, d, rw,
                                     rc, 1, 5, buf) == 3
    # a computer that fires only after every write has ended adds nothing to the peak
    assert _kernel.ffs_committed_max(wkey, widx, 0, 3, late, cidx, 0, 2, 7, 0.0, 0.0, d, rw,
                                     rc, 1, 5, buf) == 3


def test_lookahead_score_is_at_least_the_writers_and_sees_the_next_cycle():
    """The mean future over horizon cycles (``ffs_lookahead_max``): >= n_w, and
    >= the committed future's peak on the committed case above; on the late
    case, where the committed future stays at 3, the three writers refire at
    T = 7.5 after their writes end (real times 1.5, 1.7, 1.8: fair sharing) and
    meet the two late computers (9.0, 9.5) in one long shared write: 5 with
    one cycle of look-ahead."""
    T = np.full(5, 7.5)
    d, rw, rc, wkey, widx, ckey, late, cidx = _hand_case()
    scratch = (np.empty(8), np.empty(8, dtype=np.int64), np.empty(8), np.empty(8, dtype=np.int64))

    def look(ck, nch, horizon):
        return _kernel.ffs_lookahead_max(wkey, widx, 0, 3, ck, cidx, 0, nch, 7, 0.0, 0.0, T, d,
                                         rw, rc, 6, horizon, *scratch)

    assert look(ckey, 2, 1) == 5
    assert look(ckey, 0, 0) == 3                 # no computer, no look-ahead: n_w
    assert look(late, 2, 0) == 3                 # horizon 0: the computers' one firing each
    assert look(late, 2, 1) == 5
    # a cycle so long that the writers refire after the late writes end: no meeting
    T[:] = 20.0
    assert look(late, 2, 1) == 3


@pytest.mark.parametrize("horizon, basin, trials, replicates, looks",
                         [(0, DEFAULT_BASIN, 1000, 10, "cycle"),
                          (DEFAULT_HORIZON, DEFAULT_BASIN, 400, 24, "cycle"),
                          (DEFAULT_HORIZON, DEFAULT_BASIN, 400, 24, "write-end"),
                          (DEFAULT_HORIZON, "most-entries", 200, 16, "cycle")])
def test_recovers_the_exact_binomial_answer_down_to_1e_11(horizon, basin, trials, replicates,
                                                          looks):
    """Both scores: the committed future (horizon 0) and the mean
    look-ahead (the default horizon, which also places the basin); both
    basin rules (the raised basin, L_0 = 5 here against 3, costs a replicate
    ~0.3x the CPU, so it gets more clones and replicates); both rules of when
    the score is looked at (score_every)."""
    ks = np.arange(2, 11)
    q = D / (T + D)
    p_true = binom.sf(ks - 1, N, q)
    nu_true = N / (T + D) * binom.pmf(ks - 1, N - 1, q)
    s = storm_split(_independent(), ks, trials=trials, replicates=replicates, flux_cycles=1400,
                    burn_in=BURN_IND, seed=5, horizon=horizon, basin=basin, score_every=looks)
    assert s.horizon == horizon and s.score_every == looks
    assert p_true[-1] < 1e-10                      # the deepest level is far below brute force
    assert np.all((s.top_share >= 1 / replicates - 1e-12) & (s.top_share <= 1))  # a share
    assert s.truncated == 0
    assert s.from_flux[0] and not s.from_flux[-1]  # both paths are checked
    for j, k in enumerate(ks):
        assert abs(s.p_ge[j] / p_true[j] - 1) <= Z_TOL * s.p_ge_rel_error[j], k
        assert abs(s.storms_per_s[j] / nu_true[j] - 1) <= Z_TOL * s.storms_per_s_rel_error[j], k
        assert s.p_ge_lo[j] < s.p_ge[j] < s.p_ge_hi[j]
        assert s.storms_per_s_lo[j] < s.storms_per_s[j] < s.storms_per_s_hi[j]


@pytest.mark.parametrize("horizon, basin, trials, replicates, looks",
                         [(0, DEFAULT_BASIN, 1000, 8, "cycle"),
                          (DEFAULT_HORIZON, DEFAULT_BASIN, 100, 16, "cycle"),
                          (DEFAULT_HORIZON, DEFAULT_BASIN, 100, 16, "write-end"),
                          (DEFAULT_HORIZON, "most-entries", 100, 16, "cycle")])
def test_agrees_with_brute_force_on_the_paper_cell(horizon, basin, trials, replicates, looks):
    """N = 16, L = 0.6, sigma = 0.01 T, fair, uncapped: splitting against
    plain Monte Carlo at the levels plain Monte Carlo resolves in seconds
    (k = 10: P ~ 9e-5), both basin rules, both score_every rules, with
    splitting stages above L_0."""
    f = _paper_cell()
    ks = [3, 5, 7, 8, 10]
    run = stormsim.simulate(f, fleets=1500, cycles=800, burn_in=80, seed=11)
    te = tail_estimate(run.occupancy)
    st = storm_estimate(run.upcrossings, run.occupancy)
    s = storm_split(f, ks, trials=trials, replicates=replicates, flux_cycles=2000, burn_in=100,
                    seed=2, horizon=horizon, basin=basin, score_every=looks)
    assert s.interfaces.size > 2 and not s.from_flux[-1]     # stages ran, not the flux alone
    for j, k in enumerate(ks):
        se_p = np.hypot(s.p_ge[j] * s.p_ge_rel_error[j], (te.p_ge_hi[k] - te.p_ge_lo[k]) / 4)
        se_r = np.hypot(s.storms_per_s[j] * s.storms_per_s_rel_error[j],
                        st.storms_per_s[k] * st.storms_per_s_rel_error[k])
        assert abs(s.p_ge[j] - te.p_ge[k]) <= Z_TOL * se_p, k
        assert abs(s.storms_per_s[j] - st.storms_per_s[k]) <= Z_TOL * se_r, k


def test_results_are_a_function_of_seed_inputs_and_effort():
    """Not of the thread count, nor of how the replicates are split into calls."""
    f = _paper_cell(12)
    kw = dict(trials=200, flux_cycles=400, burn_in=40, seed=4, basin=3)
    one = storm_split(f, [4, 6], replicates=4, threads=1, **kw)
    two = storm_split(f, [4, 6], replicates=4, threads=2, **kw)
    assert np.array_equal(one.rep_storms_per_s, two.rep_storms_per_s)
    assert np.array_equal(one.rep_p_ge, two.rep_p_ge)
    a = storm_split(f, [4, 6], replicates=2, **kw)
    b = storm_split(f, [4, 6], replicates=2, rep0=2, **kw)
    assert np.array_equal(np.concatenate([a.rep_storms_per_s, b.rep_storms_per_s]), one.rep_storms_per_s)
    other = storm_split(f, [4, 6], replicates=4, **{**kw, "seed": 5})
    assert not np.array_equal(other.rep_storms_per_s, one.rep_storms_per_s)


def test_rounds_of_replicates_are_the_replicates_of_one_call():
    """storm_split_until (storm_risk's driver) adds rounds of replicates; its
    estimate from R replicates is storm_split's with replicates = R."""
    from stormsim.risk.splitting import storm_split_until

    f = _paper_cell(12)
    split = SplitSettings(trials=100, flux_cycles=300, burn_in=30, basin=3)
    est = storm_split_until(f, [4, 6], rel_error=1e-9, max_seconds=1e9, split=split,
                            round_replicates=2, max_replicates=6, seed=4)
    assert est.replicates == 6
    one = storm_split(f, [4, 6], split, replicates=6, seed=4)
    assert np.array_equal(est.rep_storms_per_s, one.rep_storms_per_s)
    assert np.array_equal(est.storms_per_s, one.storms_per_s)
    assert np.array_equal(est.p_ge_hi, one.p_ge_hi)


def test_basin_is_chosen_from_the_seed_alone():
    f = _paper_cell()
    b = choose_basin(f, [10], seed=1)
    assert 2 <= b <= 10 and b == choose_basin(f, [10], seed=1)


def test_basin_rules_place_the_edge_where_they_say():
    """"most-entries": the level the pilots enter most often; "raised" (the
    default): the highest level a flux run of flux_cycles would enter >=
    MIN_ENTRIES times, from the same pilots (2 fleets of (flux_cycles -
    burn_in) / 8 cycles), so never below "most-entries"."""
    f = _paper_cell()
    cycles, burn = 2000, 100
    pilot = (cycles - burn) // 8
    inputs = door.prepare(f, 1)
    entries = {L: int(_flux(inputs, SplitSettings(burn_in=burn, flux_cycles=burn + pilot, reservoir=1),
                            "random", PILOT_FLEET, 2, L)[5].sum()) for L in range(1, 11)}
    most = choose_basin(f, [10], SplitSettings(basin="most-entries"), seed=1)
    raised = choose_basin(f, [10], seed=1)
    assert entries[most] == max(entries.values())
    per_run = {L: n * (cycles - burn) / (2 * pilot) for L, n in entries.items()}
    assert per_run[raised] >= MIN_ENTRIES and raised > most     # N = 16: 8 against 5
    assert all(per_run[L] < MIN_ENTRIES for L in range(raised + 1, 11))
    with pytest.raises(SpecError, match="basin = 'low'.*raised"):
        SplitSettings(basin="low")


def test_refuses_what_it_does_not_model():
    a = stormsim.Fleet.identical(8, load=0.5, mtbf=100.0)
    with pytest.raises(SpecError, match="^fleet = .*without failures.*method='plain'"):
        storm_split(a, [3])
    with pytest.raises(SpecError, match="levels"):
        storm_split(_paper_cell(), [0])
    with pytest.raises(SpecError, match="trials"):
        storm_split(_paper_cell(), [3], trials=0)
    with pytest.raises(SpecError, match="basin"):
        storm_split(_paper_cell(), [3], basin=5)
    with pytest.raises(SpecError, match="horizon = -1"):
        storm_split(_paper_cell(), [3], horizon=-1)
    with pytest.raises(SpecError, match="score_every = 'often'.*'cycle', 'write-end'"):
        storm_split(_paper_cell(), [3], score_every="often")


# ---------------------------------------------------------------------------
# storm_risk's choice of method, and the CLI
# ---------------------------------------------------------------------------

def test_storm_risk_keeps_plain_monte_carlo_where_it_suffices():
    """Shallow tails: plain Monte Carlo resolves them, splitting is not chosen."""
    r = stormsim.storm_risk(_uncovered_cell(), [2, 3], rel_error=0.1, max_seconds=30, seed=1)
    assert r.stopped == "rel_error" and r.split is None
    assert list(r.level_method) == ["plain", "plain"]


@pytest.mark.slow  # ~8 s: its budget
def test_storm_risk_splits_the_levels_plain_monte_carlo_cannot_reach():
    """k = 14 at N = 16 (~4e-8 of the time, RESULTS.md E3s): plain Monte Carlo
    would need ~10x the budget, so it goes to splitting; k = 2 stays plain.
    (k = 13 was marginal: plain's estimate of its own cost, ~14 CPU s, about
    the budget's 8 s on 2 cores, so a fast machine kept it plain.)"""
    seen = []
    r = stormsim.storm_risk(_uncovered_cell(), [2, 14], rel_error=0.1, max_seconds=8, seed=1,
                            progress=seen.append)
    assert list(r.level_method) == ["plain", "splitting"]
    assert r.split is not None and r.split.replicates >= 4 and r.split.truncated == 0
    assert r.p_ge_method[1] == "splitting" and r.storms_per_s_lo[1] < r.storms_per_s[1] < r.storms_per_s_hi[1]
    assert 1e-9 < r.p_ge[1] < 1e-6                      # brute force: 4.0e-8 (E3s)
    assert seen[-1].level_method[1] == "splitting" and seen[-1].stopped == r.stopped
    assert "splitting levels:" in str(r) and r.to_dict()["split"]["replicates"] >= 4


@pytest.mark.slow  # fleets with failures
def test_storm_risk_uses_plain_monte_carlo_for_fleets_with_failures():
    a = stormsim.Fleet.identical(8, load=0.5, checkpoint="async", jitter=0.01, mtbf=1e4)
    r = stormsim.storm_risk(a, [8], rel_error=0.1, max_seconds=None, max_fleets=64, cycles=100,
                            burn_in=10)
    assert r.split is None and list(r.level_method) == ["plain"]
    with pytest.raises(SpecError, match="without failures"):
        stormsim.storm_risk(a, [8], method="splitting")
    with pytest.raises(SpecError, match="method = 'fancy'"):
        stormsim.storm_risk(a, [8], method="fancy")
    # refused up front, even where plain Monte Carlo alone would run
    with pytest.raises(SpecError, match="score_every = 'often'"):
        stormsim.storm_risk(a, [8], split=SplitSettings(score_every="often"))


def test_risk_command_splits_on_request(tmp_path, capsys):
    from stormsim.cli import main
    import json

    toml = tmp_path / "risk.toml"
    toml.write_text('[sweep]\nname = "risk"\n[fixed]\nN = 12\nT = 1.0\nload = 0.6\n'
                    'jitter = 0.01\ncycles = 400\nburn_in = 40\nseed = 1\nfleets = 1\n')
    assert main(["risk", str(toml), "--levels", "3,6", "--method", "splitting", "--trials",
                 "200", "--max-seconds", "3", "-q", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["level_method"] == ["splitting", "splitting"]
    assert doc["split"]["trials"] == 200 and doc["split"]["replicates"] >= 4
    assert doc["split"]["score_every"] == DEFAULT_SCORE_EVERY
    assert main(["risk", str(toml), "--levels", "6", "--method", "splitting", "--max-seconds",
                 "2", "--score-every", "write-end", "-q", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["split"]["score_every"] == "write-end"


# ---------------------------------------------------------------------------
# The look-ahead score's early exit
# ---------------------------------------------------------------------------

def _step(writers, computers, rw, rc, n):
    """One step of the two-clock dynamics in plain Python: every [remaining,
    job, ...] entry advanced to the next event; returns (dt, the compute rate
    over it, whether the event is a write end: writers first on a tie)."""
    nw = len(writers)
    r_w, r_c = (rw[nw] if nw else 0.0), rc[n - nw]
    tw = min(w[0] for w in writers) / r_w if writers else np.inf
    tc = min(c[0] for c in computers) / r_c if computers else np.inf
    dt = min(tw, tc)
    for w in writers:
        w[0] -= r_w * dt
    for c in computers:
        c[0] -= r_c * dt
    return dt, r_c, tw <= tc


def _mean_future_max(rem, ph, T, d, rw, rc, horizon):
    """The mean future's largest n_w in plain Python, on absolute clocks (its
    own code path, no early exit): writers' remaining work, computers'
    remaining compute time; writers first on a tie, as in the kernel."""
    n = T.size
    writers = [[rem[i], i] for i in range(n) if ph[i] == 1]
    computers = [[rem[i], i] for i in range(n) if ph[i] == 0]
    best = len(writers)
    budget, fired = len(computers) + horizon * n, 0
    while fired < budget and writers + computers:
        if _step(writers, computers, rw, rc, n)[2]:
            w = min(writers)
            writers.remove(w)
            computers.append([T[w[1]], w[1]])
        else:
            c = min(computers)
            computers.remove(c)
            writers.append([d[c[1]], c[1]])
            fired += 1
            best = max(best, len(writers))
    return best


def _rings(rem, ph):
    """The kernel's sorted ring queues (capacity a power of two) of a state."""
    n = rem.size
    cap = 1 << (n - 1).bit_length()
    out = []
    for phase in (1, 0):
        jobs = [i for i in np.argsort(rem, kind="mergesort") if ph[i] == phase]
        key, idx = np.zeros(cap), np.zeros(cap, dtype=np.int64)
        key[:len(jobs)], idx[:len(jobs)] = rem[jobs], jobs
        out += [key, idx, len(jobs)]
    return out, cap


def test_lookahead_early_exit_keeps_the_class_of_the_full_walk():
    """``ffs_lookahead_max`` stops once n_w + (firings left) cannot reach the
    next bound; its class (< lo, [lo, hi), >= hi) must be the full mean
    future's, computed here by a plain-Python walk, on real entry states of
    the paper cell (from a flux run's reservoir)."""
    # the hand case: the peak (5) comes at the budget's last firing (horizon 0:
    # the two computers' firings), where an exit one firing early would miss it
    T5 = np.full(5, 7.5)
    d5, rw5, rc5, wkey5, widx5, ckey5, _, cidx5 = _hand_case()
    scratch5 = (np.empty(8), np.empty(8, dtype=np.int64), np.empty(8),
                np.empty(8, dtype=np.int64))
    for lo, hi in [(-1, 5), (4, 5), (5, 6)]:
        s5 = _kernel.ffs_lookahead_max(wkey5, widx5, 0, 3, ckey5, cidx5, 0, 2, 7, 0.0, 0.0, T5,
                                       d5, rw5, rc5, hi, 0, *scratch5, lo)
        assert (s5 >= 5) if hi == 5 else (lo <= s5 < hi), (lo, hi, s5)
    f = _paper_cell()
    _, _, res_rem, res_ph, _, entries, _, _ = _flux(door.prepare(f, 7), SplitSettings(
        burn_in=20, flux_cycles=620, reservoir=64, horizon=DEFAULT_HORIZON, score_every="write-end"),
        "random", 0, 1, 4)
    T_, d_, _, rw, rc = (np.ascontiguousarray(f.T), np.ascontiguousarray(f.d), None,
                         f.writer_rate, f.computer_rate)
    assert entries[0] >= 64
    seen = set()
    for row in range(64):
        rem, ph = res_rem[0, row], res_ph[0, row]
        (wkey, widx, nwh, ckey, cidx, nch), cap = _rings(rem, ph)
        full = _mean_future_max(rem, ph, T_, d_, rw, rc, DEFAULT_HORIZON)
        for lo, hi in [(4, 7), (4, 6), (3, 5), (2, 4), (5, 8), (6, 10), (-1, 17)]:
            scratch = (np.empty(cap), np.empty(cap, dtype=np.int64), np.empty(cap),
                       np.empty(cap, dtype=np.int64))
            s = _kernel.ffs_lookahead_max(wkey, widx, 0, nwh, ckey, cidx, 0, nch, cap - 1, 0.0,
                                          0.0, T_, d_, rw, rc, hi, DEFAULT_HORIZON, *scratch,
                                          lo)
            cls = [full < lo, lo <= full < hi, full >= hi]
            assert [s < lo, lo <= s < hi, s >= hi] == cls, (row, lo, hi)
            seen.add(cls.index(True))
    assert seen == {0, 1, 2}           # every class occurs: the comparison means something


def _real_max_between_looks(rem, ph, T, d, rw, rc, draws, late):
    """The largest n_w of the real dynamics from a state just looked at, in
    plain Python, each write that ends drawing the compute interval draws[i]:
    until the last instant before the first compute interval drawn since could
    end at its draw or at its mean T_i (score_every "cycle": the next look),
    or (late) until just after the second such interval ends."""
    n = T.size
    writers = [[rem[i], i] for i in range(n) if ph[i] == 1]
    computers = [[rem[i], i, False] for i in range(n) if ph[i] == 0]
    best, clock, due, refired = len(writers), 0.0, np.inf, 0
    while True:
        dt, r_c, write_end = _step(writers, computers, rw, rc, n)
        if not late and clock + r_c * dt >= due:
            return best                  # (the step just taken is past the next look)
        clock += r_c * dt
        if write_end:
            w = min(writers)
            writers.remove(w)
            i = w[1]
            computers.append([draws[i], i, True])
            due = min(due, clock + min(draws[i], T[i]))
        else:
            c = min(computers)
            computers.remove(c)
            writers.append([d[c[1]], c[1]])
            best = max(best, len(writers))
            refired += c[2]
            if late and refired == 2:
                return best


@pytest.mark.parametrize("share", [0.05, 0.7, 1.3])
def test_between_two_looks_the_fleet_stays_below_the_score(share):
    """score_every "cycle" rests on this: from a look until the last instant
    before a compute interval drawn since could end (at its draw or its mean),
    the fleet follows the mean future walked at the look, so n_w never exceeds
    that score (and time with n_w >= k never falls in the basin). Checked on
    real entry states of the paper cell with new compute intervals far shorter
    than, near, and longer than the mean; and it has teeth: run on past the
    second new firing, n_w does exceed the score (short intervals refire
    inside the look-ahead's own write windows)."""
    f = _paper_cell()
    _, _, res_rem, res_ph, _, entries, _, _ = _flux(door.prepare(f, 7), SplitSettings(
        burn_in=20, flux_cycles=620, reservoir=64, horizon=DEFAULT_HORIZON, score_every="write-end"),
        "random", 0, 1, 4)
    T_, d_, rw, rc = np.ascontiguousarray(f.T), np.ascontiguousarray(f.d), f.writer_rate, \
        f.computer_rate
    assert entries[0] >= 64
    rng = np.random.default_rng(3)
    over = 0
    for row in range(64):
        rem, ph = res_rem[0, row], res_ph[0, row]
        score = _mean_future_max(rem, ph, T_, d_, rw, rc, DEFAULT_HORIZON)
        draws = T_ * share * rng.uniform(0.9, 1.1, T_.size)
        assert _real_max_between_looks(rem, ph, T_, d_, rw, rc, draws, False) <= score, row
        over += _real_max_between_looks(rem, ph, T_, d_, rw, rc, draws, True) > score
    if share < 0.5:
        assert over > 0

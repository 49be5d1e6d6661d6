"""Do forward flux sampling's 95 % intervals cover the true answer? (docs/SPLITTING.md)

``python -m benchmarks.splitting_coverage --n 32 --levels 16,20,23 --seeds 20 --replicates 64``
    ``storm_split(fleet, levels, replicates=R, trials=M, seed=s)`` for seeds
    ``--seed0`` .. ``--seed0 + seeds - 1`` on ``Fleet.identical(N, T=1, load=0.6,
    jitter=0.01)`` (fair, uncapped), against ``stormsim.stationary`` (exact).
    ``--cell async-block`` (or another cell of benchmarks.splitting_general):
    that fleet, which has no exact law, against a long plain run
    (``plain_truth``, ``--truth-fleets`` fleets, kept in ``--truth``; its own
    95 % interval is printed beside each level, so a level where it is not
    much narrower than splitting's is read as such).
    Every replicate's estimate is written to ``--json`` after each seed (a
    rerun with the same settings resumes: seeds already there are skipped),
    so the table can be re-read from it (``--analyse-only``) and regrouped.

Per level, for P(n_w >= k) and nu_k, and per scheme:

- "R=<r>": the first r replicates of each seed that has them (r in ``--subsets`` and R;
  replicate r is the same whatever R, so a subset is what ``replicates=r``
  gives), with the interval of ``--interval`` (split_estimate.INTERVALS);
- "until <rel_error>": ``storm_split_until``'s stopping rule replayed on the
  stored replicates (rounds of 8; a seed that has not stopped by R is
  counted at R, and the count of those is printed): what ``storm_risk(...,
  method="splitting", rel_error=...)`` reports;

the median and mean of estimate / exact, the coverage of the 95 % intervals
(count of seeds, with a 95 % Wilson interval on the coverage), the mean
reported RE and the CPU seconds per seed (a seed's CPU per replicate times
the replicates used). Then, pooled over all seeds' replicates, the mean
replicate / exact (with its RE: the estimator's bias), the replicates'
skewness, median / mean, the largest share and the share of zeros. At the
levels below the basin the replicates are the flux runs' plain estimates:
their pooled mean against the law says whether the flux runs' start
(``burn_in`` cycles after a random launch) is stationary.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm, skew

import stormsim
from stormsim.risk.settings import DEFAULT_HORIZON
from stormsim.risk.split_estimate import DEFAULT_INTERVAL, INTERVALS, interval
from stormsim.risk.splitting import storm_split
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

from .splitting_general import cells

#: storm_split_until's round (its default round_replicates).
ROUND = 8


#: The plain truth's units: blocks of this many fleets (their spread gives its error).
TRUTH_BLOCK = 100


def _fleet(n, cell="base"):
    """The fleet of a cell: "base" (identical blocking jobs, the exact law's)
    or a cell of benchmarks.splitting_general (no exact law: a long plain run
    is the truth)."""
    if cell == "base":
        return stormsim.Fleet.identical(n, T=1.0, load=0.6, jitter=0.01)
    return cells(n)[cell]


def plain_truth(fleet, fleets, chunk=5000, seed=1_000_003, path: Path | None = None,
                threads=1) -> dict:
    """P(n_w >= k) and nu_k from ``fleets`` plain fleets (800 cycles after 80,
    run ``chunk`` at a time, fleets 0.. of seed ``seed``, which no splitting
    seed of this study uses), with 95 % intervals from blocks of TRUTH_BLOCK
    fleets (stormsim.stats' delta method). Sums are kept in ``path`` after
    each chunk, so a killed run resumes where it stopped; a file of another
    fleet or seed is refused."""
    n = fleet.n_jobs
    data = json.loads(path.read_text()) if path and path.exists() else \
        dict(fleet=repr(fleet), seed=seed, fleets=0, occ=[], up=[])
    if (data.get("fleet"), data.get("seed")) != (repr(fleet), seed):
        raise SystemExit(f"{path} holds the plain runs of {data.get('fleet')} (seed "
                         f"{data.get('seed')}), not of {fleet!r} (seed {seed})")
    while data["fleets"] < fleets:
        m = min(chunk, fleets - data["fleets"])
        run = stormsim.simulate(fleet, fleets=m, cycles=800, burn_in=80, seed=seed,
                                fleet_start=data["fleets"], threads=threads)
        b = -(-m // TRUTH_BLOCK)
        for q in range(b):
            sl = slice(q * TRUTH_BLOCK, (q + 1) * TRUTH_BLOCK)
            data["occ"].append(run.occupancy[sl].sum(axis=0).tolist())
            data["up"].append(run.upcrossings[sl].sum(axis=0).tolist())
        data["fleets"] += m
        if path:
            path.write_text(json.dumps(data))
        print(f"plain truth: {data['fleets']} / {fleets} fleets", flush=True)
    occ, up = np.asarray(data["occ"]), np.asarray(data["up"])
    te = tail_estimate(occ, fleets=data["fleets"])
    st = storm_estimate(up, occ, fleets=data["fleets"])
    return dict(p=te.p_ge[:n + 1], p_lo=te.p_ge_lo[:n + 1], p_hi=te.p_ge_hi[:n + 1],
                rate=st.storms_per_s[:n + 1], rate_lo=st.storms_per_s_lo[:n + 1],
                rate_hi=st.storms_per_s_hi[:n + 1], fleets=data["fleets"])


def _settings(a):
    out = dict(n=a.n, levels=a.levels, trials=a.trials, burn_in=a.burn_in,
               flux_cycles=a.flux_cycles, basin=a.basin, version=stormsim.__version__)
    if a.cell != "base" or a.horizon != DEFAULT_HORIZON:
        out.update(cell=a.cell, horizon=a.horizon)
    return out


def run(a, path: Path) -> dict:
    """Run the seeds (or the replicates of a seed) not yet in ``path`` (same
    settings), writing after each seed. A seed with fewer than ``replicates``
    is extended (replicates rep0 = those it has, from its stored basin: the
    same replicates a single call would give)."""
    data = json.loads(path.read_text()) if path.exists() else None
    if data is None or data["settings"] != _settings(a):
        if data is not None and not a.fresh:
            raise SystemExit(f"{path} holds other settings {data['settings']}; --fresh to overwrite")
        data = dict(settings=_settings(a), runs={})
    fleet = _fleet(a.n, a.cell)
    for s in range(a.seed0, a.seed0 + a.seeds):
        old = data["runs"].get(str(s))
        have = len(old["rep_p"]) if old else 0
        if have >= a.replicates:
            continue
        basin = old["basin"] if old else int(a.basin) if str(a.basin).isdigit() else a.basin
        c0 = time.process_time()
        sp = storm_split(fleet, a.levels, replicates=a.replicates - have, trials=a.trials, seed=s,
                         burn_in=a.burn_in, flux_cycles=a.flux_cycles, basin=basin,
                         threads=a.threads, rep0=have, horizon=a.horizon)
        new = dict(rep_p=sp.rep_p_ge.tolist(), rep_rate=sp.rep_storms_per_s.tolist(),
                   basin=int(sp.interfaces[0]), cpu=time.process_time() - c0,
                   split_cpu=sp.cpu_seconds, truncated=sp.truncated)
        if old:
            new.update(rep_p=old["rep_p"] + new["rep_p"], rep_rate=old["rep_rate"] + new["rep_rate"],
                       cpu=old["cpu"] + new["cpu"], split_cpu=old["split_cpu"] + new["split_cpu"],
                       truncated=old["truncated"] + new["truncated"])
        data["runs"][str(s)] = new
        path.write_text(json.dumps(data))
        print(f"seed {s}: basin {sp.interfaces[0]}, replicates {have}..{a.replicates}, "
              f"{sp.cpu_seconds:.1f} CPU s", flush=True)
    return data


def wilson(c, n, level=0.95):
    """Wilson score interval of a binomial proportion c / n."""
    z = norm.ppf(0.5 + level / 2)
    p = c / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def _until(x_p, x_r, cols, rel_error, method):
    """storm_split_until's stop replayed on levels ``cols``: the replicate count
    it stops at, and whether it stopped (else all of x's replicates)."""
    R = x_p.shape[0]
    for r in range(ROUND, R + 1, ROUND):
        re = max(np.max(interval(x_p[:r, cols], method=method)[3]),
                 np.max(interval(x_r[:r, cols], method=method)[3]))
        if re <= rel_error:
            return r, True
    return R, False


def _row(ratio, covered, res, cpus):
    n = len(ratio)
    w = wilson(covered, n)
    return dict(median=float(np.median(ratio)), mean=float(np.mean(ratio)), covered=int(covered),
                seeds=n, wilson=[float(w[0]), float(w[1])], mean_re=float(np.nanmean(res)),
                cpu=float(np.mean(cpus)))


def _pooled(x, exact):
    m = x.mean()
    return dict(mean=float(m / exact), re=float(x.std(ddof=1) / np.sqrt(x.size) / m),
                skew=float(skew(x)), median_over_mean=float(np.median(x) / m),
                top_share_all=float(x.max() / x.sum()), replicates=int(x.size),
                zeros=float(np.mean(x == 0)))


def _truth(st, truth_path, truth_fleets):
    """Per level k: (P, nu_k) and their 95 % intervals: the exact law's (base
    cell: zero width) or a long plain run's."""
    cell = st.get("cell", "base")
    fleet = _fleet(st["n"], cell)
    if cell == "base":
        law = stormsim.stationary(fleet)
        return dict(p=law.p_ge, p_lo=law.p_ge, p_hi=law.p_ge, rate=law.storms_per_s,
                    rate_lo=law.storms_per_s, rate_hi=law.storms_per_s, fleets=None)
    return plain_truth(fleet, truth_fleets, path=truth_path)


def analyse(data, rel_error, subsets, method, until_levels=None, out=print, truth_path=None,
            truth_fleets=0) -> dict:
    st = data["settings"]
    law = _truth(st, truth_path, truth_fleets)
    ks = sorted(set(st["levels"]))
    seeds = sorted(data["runs"], key=int)
    reps = {s: (np.asarray(data["runs"][s]["rep_p"]), np.asarray(data["runs"][s]["rep_rate"]))
            for s in seeds}
    have = {s: reps[s][0].shape[0] for s in seeds}
    R = max(have.values())
    cpu_rep = {s: data["runs"][s]["split_cpu"] / have[s] for s in seeds}
    basins = [data["runs"][s]["basin"] for s in seeds]
    out(f"N = {st['n']}, {len(seeds)} seeds, {min(have.values())}..{R} replicates x {st['trials']} "
        f"clones, burn-in {st['burn_in']}, flux {st['flux_cycles']} cycles, basin {st['basin']} -> "
        f"{min(basins)}..{max(basins)}, interval {method!r}, "
        f"{np.mean(list(cpu_rep.values())):.3f} CPU s a replicate")
    schemes = [(f"R={r}", r) for r in sorted({*subsets, R})]
    stops = {}
    if rel_error:
        cols = [ks.index(k) for k in (until_levels or ks)]
        stops = {s: _until(*reps[s], cols, rel_error, method) for s in seeds}
        schemes.append((f"until {rel_error:g}", None))
    table = {}
    for j, k in enumerate(ks):
        exact = dict(p=float(law["p"][k]), rate=float(law["rate"][k]))
        if law["fleets"] is None:
            out(f"k = {k}: exact P = {exact['p']:.4e}, nu = {exact['rate']:.4e}")
        else:
            out(f"k = {k}: plain ({law['fleets']} fleets) P = {exact['p']:.4e} "
                f"[{law['p_lo'][k]:.4e}, {law['p_hi'][k]:.4e}], nu = {exact['rate']:.4e} "
                f"[{law['rate_lo'][k]:.4e}, {law['rate_hi'][k]:.4e}]")
            if not exact["p"] > 0:
                continue
        for name, r in schemes:
            use = [s for s in seeds if r is None or have[s] >= r]
            if not use:
                continue
            for q, col in (("p", 0), ("rate", 1)):
                ratio, cov, res, cpus = [], 0, [], []
                for s in use:
                    rr = r if r is not None else stops[s][0]
                    m, lo, hi, re = (v[0] for v in interval(reps[s][col][:rr, j][:, None],
                                                            method=method))
                    ratio.append(m / exact[q])
                    cov += bool(lo <= exact[q] <= hi)
                    res.append(re)
                    cpus.append(cpu_rep[s] * rr)
                row = _row(ratio, cov, res, cpus)
                extra = ""
                if r is None:
                    row["not_stopped"] = sum(not stops[s][1] for s in use)
                    row["mean_replicates"] = float(np.mean([stops[s][0] for s in use]))
                    extra = (f"  (mean {row['mean_replicates']:.0f} replicates, "
                             f"{row['not_stopped']} not stopped)")
                table[f"{k} {q} {name}"] = row
                w = row["wilson"]
                out(f"  {q:>4} {name:>10}: median {row['median']:.2f}x  mean {row['mean']:.2f}x  "
                    f"covered {cov}/{len(use)} [{w[0]:.2f}, {w[1]:.2f}]  RE {row['mean_re']:.3f}  "
                    f"{row['cpu']:.1f} CPU s{extra}")
        for q, col in (("p", 0), ("rate", 1)):
            pool = _pooled(np.concatenate([reps[s][col][:, j] for s in seeds]), exact[q])
            table[f"{k} {q} pooled"] = pool
            out(f"  {q:>4} pooled {pool['replicates']} replicates: mean {pool['mean']:.3f}x "
                f"(RE {pool['re']:.3f}), skewness {pool['skew']:.1f}, median / mean "
                f"{pool['median_over_mean']:.2f}, largest share {pool['top_share_all']:.3f}, "
                f"zeros {pool['zeros']:.3f}")
    return table


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--cell", default="base", choices=["base", *cells(16)],
                    help="the fleet: base (exact law) or a cell of benchmarks.splitting_general")
    ap.add_argument("--horizon", type=int, default=DEFAULT_HORIZON)
    ap.add_argument("--truth", type=Path, default=None,
                    help="the plain truth's sums (a cell other than base; resumable)")
    ap.add_argument("--truth-fleets", type=int, default=200_000)
    ap.add_argument("--levels", type=lambda s: [int(v) for v in s.split(",")], default=[16, 20, 23])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--seed0", type=int, default=1)
    ap.add_argument("--replicates", type=int, default=64)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--burn-in", type=int, default=100)
    ap.add_argument("--flux-cycles", type=int, default=2000)
    ap.add_argument("--basin", default="raised")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--rel-error", type=float, default=0.2,
                    help="replay storm_split_until's stop at this target (0: no replay)")
    ap.add_argument("--until-levels", type=lambda s: [int(v) for v in s.split(",")], default=None,
                    help="the levels the replayed stop waits for (default: all)")
    ap.add_argument("--subsets", type=lambda s: [int(v) for v in s.split(",")], default=[8, 32])
    ap.add_argument("--interval", choices=INTERVALS, default=DEFAULT_INTERVAL)
    ap.add_argument("--json", type=Path, default=Path("/tmp/splitting_coverage.json"))
    ap.add_argument("--analyse-only", action="store_true", help="read --json, run nothing")
    ap.add_argument("--fresh", action="store_true", help="overwrite a --json of other settings")
    a = ap.parse_args(argv)
    data = json.loads(a.json.read_text()) if a.analyse_only else run(a, a.json)
    truth = a.truth or a.json.with_suffix(".truth.json")
    table = analyse(data, a.rel_error, a.subsets, a.interval, a.until_levels, truth_path=truth,
                    truth_fleets=a.truth_fleets)
    a.json.with_suffix(".table.json").write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

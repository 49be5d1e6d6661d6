"""Splitting's work-normalised variance gain over plain Monte Carlo on an async fleet (issue 38 item 4).

``python -m benchmarks.splitting_gain [--n 32] [--levels 10,11,12] [--batches 8]
[--replicates 32] [--truth PATH] [--json PATH]``

The fleet: ``benchmarks.splitting_general.cells(n)["async-block"]`` (N
identical async jobs, L = 0.6, sigma = 0.01 T, snapshot 0.01 T, slowdown
0.2, on_busy "block"); at N = 32 its P(n_w >= k) is ~1.5e-8 at k = 10,
~5e-10 at 11 and ~1e-11 at 12.

Splitting: ``storm_split(fleet, levels, replicates=R)`` with storm_risk's
defaults otherwise, ``--batches`` independent calls (seeds 1..B). Per batch
and level, its work-normalised variance ``RE^2 x CPU s`` of nu_k and of P,
RE the standard error over the batch's replicates / their mean; the table
gives the median and range over batches, and the pooled figure (all B x R
replicates, CPU summed).

Plain Monte Carlo's: measured where it reaches, from the long plain run of
``benchmarks.splitting_coverage.plain_truth`` (``--truth``, its blocks of
fleets: RE^2 of the delta-method estimate x the run's CPU s), and carried
below by what counting storms costs: RE^2 x CPU = kappa / (nu_k x simulated
seconds per CPU second), kappa (the clustering of storms: 1 for Poisson
counts) measured at the deepest level plain resolves to RE <= KAPPA_RE and
held at the deeper ones (kappa grew with k where measured: a lower bound on
plain's cost there, so a lower bound on the gain). Gain = plain's / splitting's.

The goal's figure: splitting's CPU to a 10 % RE at each level, pooled
relvar x CPU / 0.01, and its wall time on 2 cores at the pool's measured
CPU / wall ratio.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import stormsim
from stormsim.risk.splitting import storm_split
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

from .splitting_general import cells

#: The deepest level whose plain RE is at most this sets kappa.
KAPPA_RE = 0.05
#: The goal's relative error.
TARGET_RE = 0.1


def _relvar(x):
    """RE^2 of the mean of replicates x (sample variance / R / mean^2)."""
    m = x.mean()
    return float(x.var(ddof=1) / x.size / m ** 2) if m > 0 else float("inf")


def split_batches(fleet, ks, batches, replicates, threads=None):
    """Per batch: CPU s, wall s, the replicates' nu_k and P (R, levels)."""
    out = []
    for b in range(1, batches + 1):
        c0, t0 = time.process_time(), time.perf_counter()
        s = storm_split(fleet, ks, replicates=replicates, seed=b, threads=threads)
        out.append(dict(cpu=time.process_time() - c0, wall=time.perf_counter() - t0,
                        rate=s.rep_storms_per_s.tolist(), p=s.rep_p_ge.tolist(),
                        interfaces=s.interfaces.tolist()))
        print(f"batch {b}: {out[-1]['cpu']:.1f} CPU s, interfaces {s.interfaces.tolist()}",
              flush=True)
    return out


def plain_cost(fleet, truth_path: Path, fleets=2000):
    """Plain Monte Carlo's RE^2 x CPU s per level k (nu_k and P) from the truth
    run's blocks, with CPU s per fleet timed on ``fleets`` fleets (1 thread,
    as the truth ran), and simulated seconds per CPU second."""
    data = json.loads(truth_path.read_text())
    occ, up = np.asarray(data["occ"]), np.asarray(data["up"])
    te = tail_estimate(occ, fleets=data["fleets"])
    st = storm_estimate(up, occ, fleets=data["fleets"])
    c0 = time.process_time()
    run = stormsim.simulate(fleet, fleets=fleets, cycles=800, burn_in=80, seed=7, threads=1)
    cpu_fleet = (time.process_time() - c0) / fleets
    cpu = cpu_fleet * data["fleets"]
    sim_per_cpu = run.occupancy.sum() / (cpu_fleet * fleets)
    with np.errstate(divide="ignore", invalid="ignore"):    # levels no fleet reached: inf
        re_p = (np.log(te.p_ge_hi) - np.log(te.p_ge_lo)) / (2 * 1.96)
    re_r = st.storms_per_s_rel_error
    return dict(p=te.p_ge, rate=st.storms_per_s, wrv_p=re_p ** 2 * cpu, wrv_rate=re_r ** 2 * cpu,
                re_p=re_p, re_rate=re_r, cpu=cpu, sim_per_cpu=float(sim_per_cpu))


def analyse(batches, ks, plain, out=print) -> dict:
    res = {}
    resolved = [k for k in range(len(plain["rate"])) if 0 < plain["re_rate"][k] <= KAPPA_RE]
    k_kappa = max(resolved)
    kappa = {q: float(plain[f"wrv_{q}"][k_kappa] * plain["rate"][k_kappa] * plain["sim_per_cpu"])
             for q in ("rate", "p")}
    out(f"plain: {plain['cpu']:.0f} CPU s; kappa (at k = {k_kappa}, RE {plain['re_rate'][k_kappa]:.3f}): "
        f"nu {kappa['rate']:.2f}, P {kappa['p']:.2f}; {plain['sim_per_cpu']:.3g} simulated s per CPU s")
    cpu = np.array([b["cpu"] for b in batches])
    wall = np.array([b["wall"] for b in batches])
    for q in ("rate", "p"):
        reps = [np.asarray(b[q]) for b in batches]
        pooled = np.concatenate(reps)
        for j, k in enumerate(ks):
            per = np.array([_relvar(r[:, j]) * c for r, c in zip(reps, cpu, strict=True)])
            pool = _relvar(pooled[:, j]) * cpu.sum()
            est = float(pooled[:, j].mean())
            measured = 0 < plain[f"re_{q}"][k] <= 0.3
            mc = (plain[f"wrv_{q}"][k] if measured else
                  kappa[q] / (est_rate(batches, j) * plain["sim_per_cpu"]))
            row = dict(k=k, estimate=est, wrv_median=float(np.median(per)),
                       wrv_lo=float(per.min()), wrv_hi=float(per.max()), wrv_pooled=float(pool),
                       mc_wrv=float(mc), mc_measured=bool(measured),
                       gain_median=float(mc / np.median(per)), gain_lo=float(mc / per.max()),
                       gain_hi=float(mc / per.min()), gain_pooled=float(mc / pool),
                       cpu_to_target=float(pool / TARGET_RE ** 2),
                       wall_to_target=float(pool / TARGET_RE ** 2 * wall.sum() / cpu.sum()))
            res[f"{q} {k}"] = row
            out(f"{q:>4} k={k:2d} {est:.3e}: split RE^2xCPU median {row['wrv_median']:.3g} "
                f"[{row['wrv_lo']:.3g}, {row['wrv_hi']:.3g}] pooled {pool:.3g}; plain "
                f"{mc:.3g} ({'measured' if measured else 'kappa / nu_k'}); gain median "
                f"{row['gain_median']:.3g} [{row['gain_lo']:.3g}, {row['gain_hi']:.3g}] pooled "
                f"{row['gain_pooled']:.3g}; to RE {TARGET_RE}: {row['cpu_to_target']:.0f} CPU s, "
                f"{row['wall_to_target']:.0f} s wall")
    return res


def est_rate(batches, j):
    """The pooled nu_k of level index j (plain's cost below where it reaches)."""
    return float(np.concatenate([np.asarray(b["rate"]) for b in batches])[:, j].mean())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--levels", type=lambda s: [int(v) for v in s.split(",")], default=[10, 11, 12])
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--replicates", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--truth", type=Path, required=True)
    ap.add_argument("--json", type=Path, default=Path("/tmp/splitting_gain.json"))
    ap.add_argument("--analyse-only", action="store_true", help="read --json, run nothing")
    a = ap.parse_args(argv)
    fleet = cells(a.n)["async-block"]
    if a.analyse_only:
        batches = json.loads(a.json.read_text())["batches"]
    else:
        batches = split_batches(fleet, a.levels, a.batches, a.replicates, a.threads)
        a.json.write_text(json.dumps(dict(levels=a.levels, n=a.n, batches=batches)))
    table = analyse(batches, a.levels, plain_cost(fleet, a.truth))
    a.json.with_suffix(".table.json").write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

"""E3s: storm rates far below brute force, by forward flux sampling.

Validation: at N = 16 and 32 (L = 0.6, sigma = 0.01 T, fair, uncapped)
``stormsim.storm_split`` against plain Monte Carlo (``simulate`` over
independent fleets, intervals from stormsim.stats.tails / stormsim.stats.storms) at every
level plain Monte Carlo resolves (>= MIN_STORMS storms), for the time
fraction P(n_w >= k) and the storm rate nu_k; and on the independent case
(ideal f: n_w ~ Binomial(N, d / (T + d)) exactly) down to ~1e-11.
Figure: nu_k against k for N = 16, 32, 64 at loads 0.6 and 0.9, splitting
and brute force overlaid, with the binomial baseline (independent jobs at
the same load).

    .venv/bin/python scripts/e3_storm_splitting.py [--quick] [--bf-seconds 60]
"""
from __future__ import annotations

import time

import numpy as np
from scipy.stats import binom

import _common as C
import stormsim
from stormsim import plots
from stormsim.risk.splitting import DEFAULT_HORIZON, TOP_SHARE_WARN
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

#: A level counts as resolved by brute force with at least this many storms
#: seen (below, its own interval is too rough to test anything).
MIN_STORMS = 30
#: Agreement: |splitting - brute force| <= Z_TOL combined standard errors
#: (3: many correlated levels are compared at once).
Z_TOL = 3.0
T = 1.0


def brute(fleet, cpu_seconds, seed, cycles=800, burn_in=80):
    """Plain Monte Carlo for about cpu_seconds: (tail, storms, fleets)."""
    occs, ups = [], []
    c0 = time.process_time()
    b, batch = 0, 128
    while b < 2 or time.process_time() - c0 < cpu_seconds:
        run = stormsim.simulate(fleet, fleets=batch, cycles=cycles, burn_in=burn_in, seed=seed,
                                fleet_start=b * batch)
        occs.append(run.occupancy)
        ups.append(run.upcrossings)
        b += 1
    occ, up = np.concatenate(occs), np.concatenate(ups)
    return tail_estimate(occ), storm_estimate(up, occ), up.sum(axis=0), b * batch


def z(a, sa, b, sb):
    return (a - b) / np.hypot(sa, sb)


def validate(n, args, rows, table):
    fleet = stormsim.Fleet.identical(n, T=T, load=0.6, jitter=0.01)
    te, st, storms, fleets = brute(fleet, args.bf_seconds, args.seed + n)
    ks = np.arange(2, n + 1)
    ks = ks[storms[ks] >= MIN_STORMS]
    sp = stormsim.storm_split(fleet, ks, trials=args.trials, replicates=args.replicates,
                              seed=args.seed + n, horizon=args.horizon,
                              basin=args.basin, score_every=args.score_every)
    worst, n_ok = 0.0, 0
    for j, k in enumerate(ks):
        se_bf_p = te.p_ge[k] * (np.log(te.p_ge_hi[k] / te.p_ge_lo[k]) / 3.92)   # 95% log-scale half-width
        zp = z(sp.p_ge[j], sp.p_ge[j] * sp.p_ge_rel_error[j], te.p_ge[k], se_bf_p)
        zr = z(sp.storms_per_s[j], sp.storms_per_s[j] * sp.storms_per_s_rel_error[j], st.storms_per_s[k],
               st.storms_per_s[k] * st.storms_per_s_rel_error[k])
        ok = abs(zp) <= Z_TOL and abs(zr) <= Z_TOL
        n_ok += ok
        worst = max(worst, abs(zp), abs(zr))
        table.append([n, k, C.fmt_ci(te.p_ge[k], te.p_ge_lo[k], te.p_ge_hi[k]),
                      C.fmt_ci(sp.p_ge[j], sp.p_ge_lo[j], sp.p_ge_hi[j]), C.fmt(zp, 2),
                      C.fmt_ci(st.storms_per_s[k], st.storms_per_s_lo[k], st.storms_per_s_hi[k]),
                      C.fmt_ci(sp.storms_per_s[j], sp.storms_per_s_lo[j], sp.storms_per_s_hi[j]), C.fmt(zr, 2),
                      "yes" if ok else "NO"])
    deepest = te.p_ge[ks[-1]]
    rows.append((f"N = {n}: splitting agrees with brute force where brute force resolves",
                 f"{n_ok}/{len(ks)} levels k = {ks[0]}..{ks[-1]} (down to P = "
                 f"{C.fmt(deepest)}) within {Z_TOL:g} se; worst |z| = {C.fmt(worst, 2)}",
                 "agrees" if n_ok == len(ks) else "disagrees at some levels (see the table)"))
    return n_ok == len(ks)


def known_answer(args, rows, table):
    n = 16
    d = 0.6 * T / n
    fleet = stormsim.Fleet(T=[T] * n, d=[d] * n, throughput="ideal", jitter=0.1)
    ks = np.arange(2, 11)
    q = d / (T + d)
    p_true = binom.sf(ks - 1, n, q)
    nu_true = n / (T + d) * binom.pmf(ks - 1, n - 1, q)
    sp = stormsim.storm_split(fleet, ks, trials=args.trials, replicates=args.replicates,
                              flux_cycles=1400, burn_in=400, seed=args.seed, horizon=args.horizon,
                              basin=args.basin, score_every=args.score_every)
    zs = []
    for j, k in enumerate(ks):
        zp = (sp.p_ge[j] / p_true[j] - 1) / sp.p_ge_rel_error[j]
        zr = (sp.storms_per_s[j] / nu_true[j] - 1) / sp.storms_per_s_rel_error[j]
        zs += [abs(zp), abs(zr)]
        table.append([k, C.fmt(p_true[j]), C.fmt_ci(sp.p_ge[j], sp.p_ge_lo[j], sp.p_ge_hi[j]),
                      C.fmt(zp, 2), C.fmt(nu_true[j]),
                      C.fmt_ci(sp.storms_per_s[j], sp.storms_per_s_lo[j], sp.storms_per_s_hi[j]), C.fmt(zr, 2)])
    ok = max(zs) <= Z_TOL
    rows.append(("independent jobs (ideal f, N = 16): the exact binomial answer",
                 f"k = 2..10 (P down to {C.fmt(p_true[-1])}): worst |z| = {C.fmt(max(zs), 2)}",
                 "recovered" if ok else "NOT recovered"))
    return ok


def curves(args):
    """nu_k for each (N, load): splitting, brute force, binomial baseline."""
    out = {}
    for n in args.ns:
        for load in (0.6, 0.9):
            fleet = stormsim.Fleet.identical(n, T=T, load=load, jitter=0.01)
            ks = np.arange(2, n + 1)
            t0 = time.perf_counter()
            sp = stormsim.storm_split(fleet, ks, trials=args.trials,
                                      replicates=args.fig_replicates, seed=args.seed + 7 * n,
                                      horizon=args.horizon, basin=args.basin, score_every=args.score_every)
            te, st, storms, _ = brute(fleet, args.fig_bf_seconds, args.seed + 11 * n)
            d = load * T / n
            q = d / (T + d)
            base = n / (T + d) * binom.pmf(ks - 1, n - 1, q)
            out[(n, load)] = dict(ks=ks, sp=sp, st=st, storms=storms, base=base)
            print(f"N = {n}, L = {load}: splitting {sp.cpu_seconds:.0f} CPU s "
                  f"({time.perf_counter() - t0:.0f} s wall with brute force)", flush=True)
    return out


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--bf-seconds", type=float, default=None,
                   help="CPU seconds of brute force per validation cell")
    p.add_argument("--horizon", type=int, default=DEFAULT_HORIZON,
                   help="the splitting score's look-ahead in cycles (storm_split(horizon=...))")
    p.add_argument("--basin", default="most-entries", choices=("most-entries", "raised"),
                   help="storm_split's basin rule (default: most-entries, the rule of the "
                        "RESULTS.md entry; storm_split's own default is raised)")
    p.add_argument("--score-every", default="write-end", choices=("write-end", "cycle"),
                   help="when storm_split looks at its score (default: write-end, the rule of "
                        "the RESULTS.md entry; storm_split's own default is cycle)")
    args = p.parse_args(argv)
    t0 = C.start(args)
    args.bf_seconds = args.bf_seconds or C.pick(args, 3.0, 90.0)
    args.trials = C.pick(args, 100, 100)
    args.replicates = C.pick(args, 8, 64)
    args.fig_replicates = C.pick(args, 4, 64)
    args.fig_bf_seconds = C.pick(args, 1.0, 8.0)
    args.ns = C.pick(args, (16, 32), (16, 32, 64))

    rows, vtable, ktable = [], [], []
    ok = all([validate(n, args, rows, vtable) for n in (16, 32)])
    ok = known_answer(args, rows, ktable) and ok
    cur = curves(args)

    fig, axes = plots.grid(2, 1, size=(6.0, 4.6))
    for ax, load in zip(axes.ravel(), (0.6, 0.9)):
        ys, styles = {}, {}
        for n in args.ns:
            c = cur[(n, load)]
            sp, st, ks = c["sp"], c["st"], c["ks"]
            # a line where the replicates agree enough (RE < 1, no replicate holding
            # more than half the estimate: stormsim.risk.splitting.TOP_SHARE_WARN), crosses
            # where one replicate carries it (heavy tail: more likely low than high)
            fine = (sp.storms_per_s > 0) & (sp.storms_per_s_rel_error < 1.0)
            keep = fine & (sp.top_share <= TOP_SHARE_WARN)
            y = np.where(keep, sp.storms_per_s, np.nan)
            ys[f"N={n} splitting"] = (y, np.where(keep, sp.storms_per_s_lo, np.nan),
                                      np.where(keep, sp.storms_per_s_hi, np.nan))
            flag = fine & ~keep
            ys[f"N={n} splitting, one replicate > 50%"] = (np.where(flag, sp.storms_per_s, np.nan),
                                                           None, None)
            styles[f"N={n} splitting, one replicate > 50%"] = dict(marker="x", lw=0)
            seen = c["storms"][ks] >= 10
            ys[f"N={n} brute force"] = (np.where(seen, st.storms_per_s[ks], np.nan),
                                        np.where(seen, st.storms_per_s_lo[ks], np.nan),
                                        np.where(seen, st.storms_per_s_hi[ks], np.nan))
            ys[f"N={n} binomial"] = (c["base"], None, None)
            styles[f"N={n} brute force"] = dict(marker="s", lw=0, mfc="none")
            styles[f"N={n} binomial"] = dict(marker="", ls=":")
        # one abscissa per panel: pad the shorter curves with NaN
        kmax = max(args.ns)
        x = np.arange(2, kmax + 1)
        padded = {lab: tuple(None if v is None else np.concatenate(
            [np.asarray(v, float), np.full(kmax + 1 - 2 - len(v), np.nan)]) for v in val)
            for lab, val in ys.items()}
        plots.series(x, padded, ax=ax, xlabel="level k (jobs writing at once)",
                     ylabel="storms per second nu_k (T = 1 s)", logy=True, styles=styles,
                     title=f"L = {load}, sigma = 0.01 T, fair, uncapped")
        ax.set_ylim(1e-14, 1e2)
    f1 = C.save(fig, args, "e3_storm_splitting")

    curve_rows = []
    for (n, load), c in cur.items():
        sp = c["sp"]
        fine = (sp.storms_per_s > 0) & (sp.storms_per_s_rel_error < 1.0) & (sp.top_share <= TOP_SHARE_WARN)
        deep = int(np.nonzero(fine)[0].max()) if fine.any() else 0
        j12 = int(np.argmin(np.abs(np.log(np.maximum(sp.storms_per_s, 1e-300)) - np.log(1e-12))))
        curve_rows.append([n, load, f"{sp.interfaces[0]}..{sp.interfaces[-1]}",
                           C.fmt(sp.cpu_seconds, 3), int(c["ks"][deep]),
                           C.fmt_ci(sp.storms_per_s[deep], sp.storms_per_s_lo[deep], sp.storms_per_s_hi[deep]),
                           int(c["ks"][j12]), C.fmt(sp.storms_per_s[j12]), C.fmt(sp.storms_per_s_rel_error[j12], 2),
                           C.fmt(sp.top_share[j12], 2), C.fmt(sp.storms_per_s[j12] / c["base"][j12])])
    definition = f"""
Cells: N identical jobs, T = 1 s, load L = N d / T, sigma = 0.01 T, fair f, uncapped, random
launch. Brute force: ``simulate`` over independent fleets (800 cycles, burn-in 80), P(n_w >= k)
with stormsim.stats.tails' interval, nu_k (up-crossings of k per second) with stormsim.stats.storms';
a level counts as resolved with >= {MIN_STORMS} storms. Splitting: ``stormsim.storm_split``
(forward flux sampling on the score with a {args.horizon}-cycle mean look-ahead (0: the committed future), integer interfaces, fixed effort
{args.trials} clones per stage; {args.replicates} independent replicates for the validation,
{args.fig_replicates} for the figure; 95 % intervals from the replicates' spread, t on the
log scale; "top replicate share" = the largest share one replicate holds of the replicates'
sum: the figure draws a line where it is <= {TOP_SHARE_WARN} and RE < 1, a cross where it is above). z = (splitting - brute force) / (combined se); agreement: |z| <= {Z_TOL:g} for both
P and nu_k. Known answer: ideal f, sigma = 0.1 T, burn-in 400 cycles, n_w ~ Binomial(N, d / (T
+ d)), nu_k = N / (T + d) Binomial(N - 1, q).pmf(k - 1). Binomial baseline in the figure: the
same formula at the cell's load (independent jobs)."""
    body = ("Splitting against brute force (P(n_w >= k) and nu_k with 95 % intervals):\n\n"
            + C.md_table(["N", "k", "P brute force", "P splitting", "z", "nu brute force",
                          "nu splitting", "z", "agree"], vtable)
            + "\n\nThe known answer (independent jobs, N = 16, ideal f):\n\n"
            + C.md_table(["k", "P exact", "P splitting", "z", "nu exact", "nu splitting", "z"],
                         ktable)
            + "\n\nThe figure's splitting runs (nu_k in storms per second):\n\n"
            + C.md_table(["N", "L", "interfaces", "CPU s", "deepest k drawn", "nu_k there",
                          "k nearest 1e-12/s", "nu_k", "RE", "top replicate share",
                          "vs binomial"], curve_rows))
    verdict = (("Validated. " if ok else "NOT validated at every level (see the tables). ")
               + "Forward flux sampling agrees with brute force at every level brute force "
               "resolves at N = 16 and 32 and recovers the exact binomial answer of independent "
               "jobs" + ("" if ok else " (except where the tables say NO)") + ". Below brute "
               "force the storm rate of fair-shared fleets lies orders of magnitude above the "
               "binomial baseline. Caveat: at the deepest levels the replicate estimates are "
               "heavy-tailed (the phase configuration mixes slowly, over more cycles than the "
               "score's look-ahead): the typical run lies below the mean, so the figure's "
               "deepest points (crosses, where one replicate holds more than half the sum: "
               "the table's top replicate share) are more likely low than high and their "
               "intervals can be too narrow. A longer run at N = 32, L = 0.6, k = 24 "
               "(benchmarks/splitting.py --demo, 600 s wall, 296 replicates) gave P = 1.25e-11 "
               "[8.6e-12, 1.8e-11], RE 0.19; at k = 25, P = 2.1e-12 [1.1e-12, 4.0e-12], RE 0.33, "
               "carried by a few replicates.")
    C.append_results(args, "E3s", "storm rates below brute force: forward flux sampling",
                     definition, body, verdict, [f1], t0,
                     seeds=f"root seed {args.seed}; cell seeds seed + N, + 7 N, + 11 N",
                     rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

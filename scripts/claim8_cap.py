"""Claim 8 (beyond the paper): identical jobs behind a binding power cap C < N.

Do fleets lock or cluster once the cap binds? The statistics of claims 4 and 5
(smallest gaps, opening of the tightest pair, Daido moments against independent
phases, the upper tail against the binomial baseline) for C/N in {0.5, 0.75,
0.9}; and the Jacobian of the fully-overlapping map (claim 2) under the cap:
its determinant, its spectrum, and a prediction for it.

    .venv/bin/python scripts/claim8_cap.py [--quick]
"""
from __future__ import annotations

import math

import numpy as np

import _common as C
import claim2_spectrum as c2
import claim4_5_locking_tail as c45
import stormsim
from stormsim import plots

CAP_FRACS = (0.5, 0.75, 0.9)
NS = (4, 8, 16)
LOADS = (0.4, 0.7)
#: The firing-time map of generic (not fully-overlapping) configurations: cells
#: (C/N = inf is the uncapped control), horizons in cycles, from the launch's
#: first firings (k0 = 1: every job has fired once).
DET_FRACS = (math.inf, 0.5, 0.75)
DET_LOAD = 0.7
DET_HORIZONS = (1, 5, 10)
DET_K0 = 1
#: Central-difference steps (in launch phase): a Jacobian counts as measured only when
#: both steps give the same log10 |det| to DET_AGREE (no branch boundary crossed, no
#: rounding: firing times ~10 s carry ~1e-15 s, against h ~ 1e-9).
DET_STEPS = (1e-8, 1e-9)
DET_AGREE = 1e-3
#: "det J >> 1": more than this.
DET_BIG = 10.0
#: det = 1 to this is volume-preserving (rounding level of the differences).
DET_ONE = 1e-6


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--fleets", type=int, default=None, help="random launches per cell")
    p.add_argument("--cycles", type=int, default=None)
    args = p.parse_args(argv)
    t0 = C.start(args)
    fleets = args.fleets or C.pick(args, 40, 500)
    cycles = args.cycles or C.pick(args, 200, 800)
    fracs = C.pick(args, (0.5, 0.9), CAP_FRACS)
    ns = C.pick(args, (4, 16), NS)
    loads = C.pick(args, (0.7,), LOADS)
    nmax = C.pick(args, 6, 12)
    rng = np.random.default_rng(args.seed)

    # -- the fully-overlapping map under the cap
    jac_rows, spec_series = [], {}
    for cf in fracs:
        for name, rule in c2.RULES.items():
            worst_det = worst_res = worst_unc = 0.0
            exp_diff = []
            for n in range(3, nmax + 1):
                fleet = stormsim.Fleet.identical(n, T=1.0, d=0.3, throughput=rule, cap=cf * n)
                J, _, _ = C.overlap_jacobian(fleet, rel_step=1e-2, seed=args.seed)
                mod = np.sort(np.abs(np.linalg.eigvals(J)))
                pred = np.sort(C.overlap_theory(fleet))
                unc = stormsim.Fleet.identical(n, T=1.0, d=0.3, throughput=rule)
                unc_th = np.sort(C.overlap_theory(unc))
                worst_det = max(worst_det, abs(np.linalg.det(J) - 1.0))
                worst_res = max(worst_res, float(np.abs(mod / pred - 1).max()))
                worst_unc = max(worst_unc, float(np.abs(mod / unc_th - 1).max()))
                exp_diff.append(f"{int(np.sum(mod > 1 + 1e-9))}/{math.ceil(n / 2) - 1}")
                if n == nmax and name == "fair":
                    j = np.arange(1, n)
                    ratio = (n - j) / j
                    ev = np.abs(np.diag(J))        # J is diagonal: eigenvalue j is J_jj
                    spec_series[f"C/N = {cf:g}"] = (ratio, ev, C.overlap_theory(fleet))
            jac_rows.append([f"{cf:g}", name, f"3..{nmax}", C.fmt(worst_det), C.fmt(worst_unc),
                             C.fmt(worst_res), " ".join(exp_diff)])

    # -- the firing-time map of generic configurations (what the paper could have measured)
    det_rows, det_vrows, det_samples, det_phase = [], [], {}, {}
    n_det = C.pick(args, 10, 100)
    det_ns = C.pick(args, (4, 8), NS)
    for cf in DET_FRACS:
        for n in det_ns:
            fleet = stormsim.Fleet.identical(n, T=1.0, load=DET_LOAD, cap=cf * n)
            th = np.random.default_rng(args.seed + 7 * n + (0 if math.isinf(cf) else
                                                            int(100 * cf))).random((n_det, n))
            a = C.firing_map_jacobians(fleet, th, DET_K0, DET_HORIZONS, DET_STEPS[0], args.seed)
            b = C.firing_map_jacobians(fleet, th, DET_K0, DET_HORIZONS, DET_STEPS[1], args.seed)
            for K in DET_HORIZONS:
                da, dp, eig = a[K]
                ok = np.abs(np.log10(np.abs(a[K][0])) - np.log10(np.abs(b[K][0]))) < DET_AGREE
                ld = np.log10(np.abs(da[ok]))
                m = int(ok.sum())
                capname = "uncapped" if math.isinf(cf) else f"C/N = {cf:g}"
                det_samples[(capname, n, K)] = ld
                det_phase[(capname, n, K)] = np.log10(np.abs(dp[ok]))
                if m == 0:
                    det_rows.append([capname, n, K, f"0/{n_det}"] + ["n/a"] * 7)
                    continue
                idx = C.bootstrap_indices(m, rng)
                mean_ci = C.percentile_ci(ld[idx].mean(axis=1))
                det_rows.append([capname, n, K, f"{m}/{n_det}",
                                 " / ".join(C.fmt(10 ** q) for q in np.quantile(ld, [0.05, 0.5,
                                                                                    0.95])),
                                 C.fmt_prop(int(np.sum(np.abs(da[ok] - 1) < DET_ONE)), m),
                                 C.fmt_prop(int(np.sum(da[ok] > DET_BIG)), m),
                                 C.fmt_prop(int(np.sum(da[ok] < 1 / DET_BIG)), m),
                                 C.fmt_ci(float(ld.mean()), *mean_ci),
                                 C.fmt(float(np.median(np.abs(dp[ok])))),
                                 C.fmt_prop(int(np.sum(np.abs(dp[ok]) > DET_BIG)), m)])

    # -- locking and tails under the cap
    res = []
    for cf in fracs:
        for n in ns:
            for load in loads:
                fleet = stormsim.Fleet.identical(n, T=1.0, load=load, cap=cf * n)
                res.append(c45.cell(fleet, fleets, cycles,
                                    args.seed + int(1000 * cf) + 10 * n + int(100 * load), rng,
                                    C.pick(args, 20_000, c45.NULL_DRAWS)))
                print(f"  cell C/N = {cf}, N = {n}, L = {load}: done")

    # -- figures
    f1 = C.save(c45.locking_figure(res, f"Binding cap: {fleets} random launches per cell, "
                                        f"{cycles} cycles, fair f"), args, "claim8_cap_locking")
    fig, axes = plots.grid(len(ns), len(fracs), size=(4.6, 3.6))
    for i, cf in enumerate(fracs):
        for j, n in enumerate(ns):
            ax = axes[i, j]
            sel = [r for r in res if r["N"] == n and abs(r["cap"] - cf * n) < 1e-9]
            for r, c in zip(sel, plots.COLORS):
                k = r["k"][1:]
                plots.tail_vs_binomial(k, r["p_sim"][1:],
                                       (r["p_sim_ci"][0][1:], r["p_sim_ci"][1][1:]),
                                       r["p_bin"][1:], ax=ax, color=c, label=f"L={r['L']:g}")
            ax.set_ylim(max(ax.get_ylim()[0], 1e-12), 1.5)
            ax.set_title(f"N = {n}, C/N = {cf:g}", fontsize=9)
    fig.suptitle(f"Binding cap: P(n_w >= k) (points, 95 % CI) vs independent jobs (dashed), "
                 f"{fleets} fleets x {cycles} cycles", fontsize=10)
    f2 = C.save(fig, args, "claim8_cap_tail")
    # spectrum under the cap, N = nmax, fair f: measured diagonal, cap-aware prediction (+)
    unc = stormsim.Fleet.identical(nmax, T=1.0, d=0.3)
    J_unc, _, _ = C.overlap_jacobian(unc, rel_step=1e-2, seed=args.seed)
    jj = np.arange(1, nmax)
    fig = plots.spectrum({"uncapped": ((nmax - jj) / jj, np.abs(np.diag(J_unc)), lambda z: z),
                          **{k: (x, y, None) for k, (x, y, _) in spec_series.items()}},
                         title=f"Fully-overlapping map under a cap, N = {nmax}, fair f")
    ax = fig.axes[0]
    for (k, (x, _, pred)), c in zip(spec_series.items(), plots.COLORS[1:]):
        ax.scatter(x, pred, marker="+", s=60, color=c, label=f"{k}: prediction")
    ax.legend(fontsize=8)
    f3 = C.save(fig, args, "claim8_cap_spectrum")
    fig, axes = plots.grid(len(DET_HORIZONS), 1, size=(4.6, 3.8))
    for ax, K in zip(axes[0], DET_HORIZONS):
        for (key, ld), c in zip([(k, v) for k, v in det_samples.items() if k[2] == K],
                                plots.COLORS * 3):
            if ld.size == 0:
                continue
            x = np.sort(ld)
            ls = "-" if key[0] == "uncapped" else ("--" if key[0].endswith("0.5") else ":")
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", ls=ls,
                    color=plots.COLORS[det_ns.index(key[1])], label=f"N = {key[1]}, {key[0]}")
        ax.axvline(0.0, color="k", lw=0.8)
        ax.axvline(1.0, color="0.5", lw=0.8, ls="-.")
        ax.set_xlabel(r"$\log_{10} \det J$ of the firing-time map over K cycles")
        ax.set_ylabel("fraction of configurations at or below")
        ax.set_title(f"K = {K} (solid: uncapped; dashed: C/N = 0.5; dotted: 0.75)", fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(f"det J of the map of write-start intervals, {n_det} random configurations per "
                 f"curve (L = {DET_LOAD}, not fully overlapping); 0: volume-preserving, "
                 "1 (dash-dot): det = 10", fontsize=9)
    f4 = C.save(fig, args, "claim8_det_generic")

    s = c45.summary(res)
    definition = f"""
As claims 4 and 5 (same definitions, same null models), for identical jobs T = 1 s, d = L T/N,
fair f, behind a binding cap C = (C/N) N with C/N in {{{', '.join(f'{c:g}' for c in fracs)}}}
(computers run at min(1, C/n_c)), N in {{{', '.join(map(str, ns))}}}, L in
{{{', '.join(f'{x:g}' for x in loads)}}}; {fleets} random launches per cell, {cycles} cycles,
occupancy after {cycles // 4} cycles of burn-in. Jacobian of the fully-overlapping map as in
claim 2 (T = 1 s, d = 0.3 s, N = 3..{nmax}, the measured first-firing intervals used for dA
because the cap also slows the launch). Prediction (our derivation, not MODEL.md's): the map
stays diagonal with lambda_j = (N - j) f(j) / (j f(N - j)) x r_c(j) / r_c(N - j), r_c(n) =
min(1, C/n): after the write cluster the j jobs that have finished compute at r_c(j) while
job j still writes, and before the next firing cluster the N - j still computing run at
r_c(N - j). The product of the r_c ratios over j is 1, so det J = 1 still.
The firing-time map of a generic configuration (what the paper's det J can be): {n_det} random
launches per cell (L = {DET_LOAD}, N in {{{', '.join(map(str, det_ns))}}}, uncapped and C/N in
{{0.5, 0.75}}); coordinates the N - 1 intervals a_i = t_(i,k) - t_(0,k) of the k-th firings,
k = {DET_K0} -> {DET_K0} + K, K in {{{', '.join(map(str, DET_HORIZONS))}}}; J by central
differences of the launch phases of jobs 1..N-1 (C.firing_map_jacobians), with steps
{DET_STEPS[0]:g} and {DET_STEPS[1]:g}; a configuration counts only when both give log10 |det J| within
{DET_AGREE:g} (else the step crossed a branch boundary of the piecewise-linear map; the
share measured is given). The map of absolute firing times has the same determinant (its
extra eigenvalue, the time translation, is 1); the map of phases at job 0's firings
differs (job 0's period rescales), its median |det| is shown."""
    body = ("Fully-overlapping map under the cap (max over N):\n\n"
            + C.md_table(["C/N", "f", "N", "max abs(det J - 1)",
                          "max eigenvalue deviation from the uncapped theory",
                          "max deviation from the cap-aware prediction",
                          "expanding directions measured/uncapped, N = 3.."], jac_rows)
            + "\n\nThe firing-time map of generic configurations (random launches, not fully "
              f"overlapping; L = {DET_LOAD}), over K cycles from the first firings: 5 % / 50 % / "
              "95 % quantiles of det J, shares (Wilson 95 %), mean log10 det J [bootstrap CI], "
              "and the median |det| of the same map in phases:\n\n"
            + C.md_table(["cap", "N", "K (cycles)", "measured (both steps agree)",
                          "det J: 5 % / 50 % / 95 %", f"|det - 1| < {DET_ONE:g}",
                          f"det > {DET_BIG:g}", f"det < 1/{DET_BIG:g}", "mean log10 det [CI]",
                          "median |det| in phases", f"|det| > {DET_BIG:g} in phases"], det_rows)
            + "\n\nLocking and clustering:\n\n" + c45.locking_table(res)
            + "\n\nDaido moments at the end:\n\n" + c45.daido_table(res)
            + "\n\nUpper tail, per cell:\n\n" + c45.tail_summary_table(res)
            + "\n\nUpper tail, every (cell, k):\n\n" + c45.tail_table(res))
    det_ok = all(float(r[3]) < c2.TOL for r in jac_rows)
    pred_ok = all(float(r[5]) < c2.TOL for r in jac_rows)
    worst_det = max(float(r[3]) for r in jac_rows)

    def share_big(samples, capped: bool, K: int):
        xs = [v for (cap_, n, k), v in samples.items()
              if k == K and (cap_ != "uncapped") == capped]
        x = np.concatenate(xs) if xs else np.array([])
        return int(np.sum(x > np.log10(DET_BIG))), int(np.sum(np.abs(x) > np.log10(1 + DET_ONE))), \
            int(x.size)

    Kmax = max(DET_HORIZONS)
    bc, nc, mc = share_big(det_samples, True, Kmax)
    bu, nu, mu = share_big(det_samples, False, Kmax)
    b1c, n1c, m1c = share_big(det_samples, True, 1)
    b1u, n1u, m1u = share_big(det_samples, False, 1)
    pc, _, pmc = share_big(det_phase, True, Kmax)
    pu, _, pmu = share_big(det_phase, False, Kmax)
    lo_c, hi_c = C.wilson(bc, mc)
    lo_u, hi_u = C.wilson(bu, mu)
    cmp_cap = ("as often without the cap (the Wilson intervals overlap)" if lo_c <= hi_u and
               lo_u <= hi_c else "more often with the cap" if lo_c > hi_u else
               "less often with the cap than without")
    l1c, h1c = C.wilson(n1c, m1c)
    l1u, h1u = C.wilson(n1u, m1u)
    cmp_one = ("more often with the cap" if l1c > h1u else "less often with the cap"
               if h1c < l1u else "as often with as without the cap")
    gen_text = (f"one cycle: det != 1 in {C.fmt_prop(n1c, m1c)} capped and "
                f"{C.fmt_prop(n1u, m1u)} uncapped, det > {DET_BIG:g} in {C.fmt_prop(b1c, m1c)} / "
                f"{C.fmt_prop(b1u, m1u)}; over {Kmax} cycles det > {DET_BIG:g} in "
                f"{C.fmt_prop(bc, mc)} capped and {C.fmt_prop(bu, mu)} uncapped (in phases "
                f"instead of times: {C.fmt_prop(pc, pmc)} / {C.fmt_prop(pu, pmu)})")
    det_text = (f"fully-overlapping map under the cap: |det J - 1| <= {C.fmt(worst_det)}; generic "
                f"configurations, " + gen_text)
    vrows = [("behind a binding cap, det J >> 1 for identical jobs",
              det_text,
              "both hold, for different maps: det J = 1 exactly for the fully-overlapping map "
              "(all N writes overlapping; MODEL.md check 3, also under the cap); the firing-time "
              "map of a configuration that is not fully overlapping, over one or more cycles, has "
              f"det J != 1 ({cmp_one} over one cycle) and sometimes > {DET_BIG:g}, {cmp_cap}: "
              "det J >> 1 is not a consequence of the binding cap")]
    vrows.append(("(not in the paper's cells) identical jobs behind a binding cap: no locking, no "
                  "clustering",
                  f"{s['locked']} of {s['fleets']} fleets locked; Daido vs the launch (Holm over "
                  f"{s['z_n']} tests): {len(s['l_above'])} excesses, {len(s['l_below'])} deficits; "
                  f"vs iid phases {len(s['z_above'])} excesses",
                  ("no locking; no coherence survives the change of null" if not s["l_above"]
                   else "no locking; coherence grows from launch to end in "
                   + "; ".join(s["l_above"]))
                  + " (finite time: 800 cycles)"))
    vrows += c45.tail_rows(res, " behind the cap", paper="(not in the paper's cells) the upper "
                           "tail of n_w behind a binding cap stays above its binomial value")
    verdict = (
        "The contradiction is one of maps, not of dynamics. (i) The fully-overlapping map (all N "
        f"write windows overlapping, claim 2) keeps det J = 1 under the cap (max |det - 1| "
        f"{C.fmt(worst_det)}{'' if det_ok else ', NOT within tolerance'}) while its spectrum "
        f"departs from (N - j) f(j)/(j f(N - j)) by up to {C.fmt(max(float(r[4]) for r in jac_rows))}"
        f" relative; the cap-aware prediction matches to {C.fmt(max(float(r[5]) for r in jac_rows))}"
        f"{'' if pred_ok else ' (NOT within tolerance)'}. (ii) The same map of write-start "
        "intervals measured on a configuration that is not fully overlapping (random launches), "
        f"over one cycle or several, is not volume-preserving in general: {gen_text}. So the "
        "paper's det J >> 1 can come from a finite-difference Jacobian of the return map over a "
        "generic (partially overlapping) configuration or several cycles, and cannot come from "
        f"the fully-overlapping map (det 1 exactly). det != 1 there is "
        f"{cmp_one} over one cycle, and det > {DET_BIG:g} is {cmp_cap}. Measured in phases "
        "(intervals over job 0's period) instead of absolute times, det differs again (a change "
        "of the period stretches every interval alike); the shares above give both. Which is "
        "right: both measurements, each for its map; the paper's attribution of det J >> 1 to "
        "the binding cap is not supported by ours. "
        f"Locking and clustering behind the cap: {s['locked']} of {s['fleets']} fleets locked; "
        f"Daido moments against iid phases {s['sign_iid']}, Holm rejections above: "
        f"{s['z_above'] or 'none'}, below: {s['z_below'] or 'none'}; against the launch "
        f"{s['sign_launch']}, above: {s['l_above'] or 'none'}, below: {s['l_below'] or 'none'}; "
        f"the phases at job 0's first firing against iid phases: {s['sign_at_launch']}, Holm "
        f"excesses {len(s['at_launch'])}: the excess over iid phases is already there at launch "
        "(seen from job 0's first firing, after the capped first compute), so it is not "
        "clustering. "
        "Upper tail behind the cap: " + c45.tail_verdict(res))
    C.append_results(args, "8", "binding cap: det J, locking, clustering, tail", definition,
                     body, verdict, [f1, f2, f3, f4], t0,
                     seeds=f"cells (C/N, N, L) with seed {args.seed} + 1000 C/N + 10 N + 100 L; "
                           f"det-J launches from seed {args.seed} + 7 N + 100 C/N; null draws and "
                           f"bootstrap from seed {args.seed}", rows=vrows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

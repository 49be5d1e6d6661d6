"""Claim 5x: the upper tail is the product form of a contended fleet.

Claim 5 measured an upper tail of n_w far above independent phases (the
binomial) and the paper calls its explanation open. MODEL.md's stationary law
answers it: the long-run law of a jittered base fleet is the product form of
a closed network of two symmetric stations (``stormsim.stationary``, exact).
This overlays, for N = 16, 32, 64 (L = 0.6, sigma = 0.01 T, fair, uncapped),
P(n_w >= k) and nu_k against k down to 1e-15: the law, plain simulation
(where it resolves), forward flux sampling at a few deep levels of N = 32,
and the Poisson-binomial baseline with the law's own per-job writing
probabilities. Control: ideal f (f(n) = n), where the law IS the binomial.

    .venv/bin/python scripts/e4_product_form.py [--quick] [--split-seconds 360] [--data cache.pkl]
"""
from __future__ import annotations

import pickle
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

import _common as C
import stormsim
from stormsim import plots
from stormsim.risk.splitting import TOP_SHARE_WARN, storm_split_until
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

T = 1.0
LOAD = 0.6
SIGMA = 0.01
#: A level counts as resolved by plain simulation with at least this many storms.
MIN_STORMS = 30
#: |z| bound of simulation (and splitting) against the exact law: Bonferroni
#: over the ~150 levels tested at 1 % family-wise is 3.9; 4 is used.
Z_TOL = 4.0
#: The exact identities (ideal f: the law is the binomial) hold to this, in log.
EXACT_TOL = 1e-12
#: The figure's floor.
FLOOR = 1e-15
#: Jitter of the ideal-f control: without contention nothing but the jitter
#: moves the phases, so a launch is forgotten only after ~(T / sigma)^2 cycles;
#: 0.1 T makes that ~100 cycles, well inside the burn-in (as in E3s).
SIGMA_IDEAL = 0.1
#: Deep levels of N = 32 estimated by splitting.
SPLIT_LEVELS = (16, 20, 24, 27)


def binomial_rate(law):
    """nu_k of the independent-phase baseline: jobs alternating independently
    between compute (mean T_i) and writing (the law's mean write duration),
    i.e. Poisson-binomial n_w with the law's p_i; identical jobs: up-crossings
    into k = (N - k + 1) P_bin(k - 1) / T."""
    n = law.n_jobs
    k = np.arange(n + 1)
    out = np.zeros(n + 1)
    out[1:] = (n - k[1:] + 1) * law.binomial_pmf[:-1] / law.mean_compute[0]
    return out


def plain(fleet, fleets, cycles, burn_in, seed):
    run = stormsim.simulate(fleet, fleets=fleets, cycles=cycles, burn_in=burn_in, seed=seed)
    return tail_estimate(run.occupancy), storm_estimate(run.upcrossings, run.occupancy), run


def compare(law, te, st, label, rows_out):
    """z of simulation against the exact law at every level plain simulation
    resolves (>= MIN_STORMS storms): P on the log scale (its interval's
    half-width / 1.96), nu_k with the storm estimate's relative error."""
    n = law.n_jobs
    zs = []
    for k in range(1, n + 1):
        if st.storms[k] < MIN_STORMS:
            continue
        se_p = np.log(te.p_ge_hi[k] / te.p_ge_lo[k]) / (2 * 1.96)
        zp = np.log(te.p_ge[k] / law.p_ge[k]) / se_p
        zr = (st.storms_per_s[k] / law.storms_per_s[k] - 1.0) / st.storms_per_s_rel_error[k]
        zs += [zp, zr]
        rows_out.append([label, k, C.fmt(law.p_ge[k]), C.fmt_ci(te.p_ge[k], te.p_ge_lo[k], te.p_ge_hi[k]),
                         f"{zp:+.1f}", C.fmt(law.storms_per_s[k]),
                         C.fmt_ci(st.storms_per_s[k], st.storms_per_s_lo[k], st.storms_per_s_hi[k]), f"{zr:+.1f}",
                         int(st.storms[k])])
    return np.array(zs)


def sign_pattern(log_law, log_bin):
    """Indices where the law is above / below the binomial, and the sign changes."""
    d = log_law - log_bin
    above = np.flatnonzero(d > 0)
    below = np.flatnonzero(d < 0)
    changes = int(np.sum(np.diff(np.sign(d[d != 0])) != 0))
    return above, below, changes


def ranges(idx):
    """'0, 9..16' from sorted integers."""
    if idx.size == 0:
        return "none"
    out, start, prev = [], idx[0], idx[0]
    for i in list(idx[1:]) + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}..{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--split-seconds", type=float, default=None,
                   help="wall seconds for the splitting estimate at N = 32 (0: skip)")
    p.add_argument("--data", default=None,
                   help="pickle cache of the simulations (read if it exists, else written)")
    args = p.parse_args(argv)
    t0 = C.start(args)
    ns = C.pick(args, (16, 32), (16, 32, 64))
    fleets = C.pick(args, 64, 1024)
    cycles = C.pick(args, 400, 10000)
    burn_in = C.pick(args, 150, 500)
    split_seconds = args.split_seconds if args.split_seconds is not None else C.pick(args, 0, 360)

    cache = {}
    cached = bool(args.data and Path(args.data).exists())
    if cached:
        with open(args.data, "rb") as fh:
            cache = pickle.load(fh)
    cells, vrows, zs_all = {}, [], []
    for n in ns:
        fleet = stormsim.Fleet.identical(n, T=T, load=LOAD, jitter=SIGMA)
        law = stormsim.stationary(fleet)
        c0 = time.process_time()
        if n not in cache:
            cache[n] = plain(fleet, fleets, cycles, burn_in, args.seed + n)[:2]
        te, st = cache[n]
        print(f"N = {n}: plain simulation {time.process_time() - c0:.0f} CPU s", flush=True)
        zs = compare(law, te, st, f"N = {n}", vrows)
        zs_all.append(zs)
        cells[n] = dict(law=law, te=te, st=st, zs=zs, bin_rate=binomial_rate(law))

    # splitting, a few deep levels of N = 32
    sp = None
    if split_seconds > 0 and 32 in cells:
        fleet = stormsim.Fleet.identical(32, T=T, load=LOAD, jitter=SIGMA)
        if "split" not in cache:
            cache["split"] = storm_split_until(fleet, list(SPLIT_LEVELS), rel_error=0.1,
                                               max_seconds=split_seconds, seed=args.seed + 32)
        sp = cache["split"]
        print(f"splitting: {sp.cpu_seconds:.0f} CPU s, {sp.replicates} replicates", flush=True)
    split_rows, zsplit = [], []
    if sp is not None:
        law = cells[32]["law"]
        for j, k in enumerate(sp.levels):
            zp = (sp.p_ge[j] / law.p_ge[k] - 1) / sp.p_ge_rel_error[j]
            zr = (sp.storms_per_s[j] / law.storms_per_s[k] - 1) / sp.storms_per_s_rel_error[j]
            if sp.top_share[j] <= TOP_SHARE_WARN:      # else one replicate carries it: no test
                zsplit += [zp, zr]
            split_rows.append([k, C.fmt(law.p_ge[k]), C.fmt_ci(sp.p_ge[j], sp.p_ge_lo[j], sp.p_ge_hi[j]),
                               f"{zp:+.1f}", C.fmt(law.storms_per_s[k]),
                               C.fmt_ci(sp.storms_per_s[j], sp.storms_per_s_lo[j], sp.storms_per_s_hi[j]), f"{zr:+.1f}",
                               f"{sp.top_share[j]:.2f}"])

    # the ideal-f control: the law is the binomial exactly, and the simulation agrees
    n_ctl = 16
    ideal = stormsim.Fleet.identical(n_ctl, T=T, load=LOAD, jitter=SIGMA_IDEAL, throughput="ideal")
    law_i = stormsim.stationary(ideal)
    q = (LOAD * T / n_ctl) / (law_i.mean_compute[0] + LOAD * T / n_ctl)
    exact_bin = binom.logsf(np.arange(n_ctl + 1) - 1, n_ctl, q)
    dev_law_bin = np.max(np.abs(law_i.log_p_ge - law_i.log_binomial_p_ge))
    dev_law_closed = np.max(np.abs(law_i.log_p_ge - exact_bin))
    assert dev_law_bin <= EXACT_TOL, f"ideal f: law vs its binomial {dev_law_bin:.2e}"
    assert dev_law_closed <= 1e-9, f"ideal f: law vs Binomial(N, d/(T+d)) {dev_law_closed:.2e}"
    if "ideal" not in cache:
        cache["ideal"] = plain(ideal, fleets, cycles, burn_in, args.seed + 1000 + n_ctl)[:2]
    te_i, st_i = cache["ideal"]
    if args.data:
        with open(args.data, "wb") as fh:
            pickle.dump(cache, fh)
    irows = []
    zs_i = compare(law_i, te_i, st_i, f"ideal f, N = {n_ctl}", irows)

    zs = np.concatenate(zs_all + [zs_i] + [np.array(zsplit)])
    worst = float(np.max(np.abs(zs)))
    assert worst <= Z_TOL, f"simulation or splitting disagrees with the exact law: |z| = {worst:.1f}"

    # -- tables -------------------------------------------------------------------
    summary, pat_rows = [], []
    for n, c in cells.items():
        law = c["law"]
        kdeep = [k for k in (n // 4, n // 2, 3 * n // 4, n) if k >= 2]
        ratio = {k: np.exp(law.log_p_ge[k] - law.log_binomial_p_ge[k]) for k in kdeep}
        rratio = {k: law.storms_per_s[k] / c["bin_rate"][k] for k in kdeep}
        dur = law.write_stretch[0]
        summary.append([n, C.fmt(law.mean_writers / n), C.fmt(dur)]
                       + ["; ".join(f"k = {k}: {C.fmt(ratio[k])} / {C.fmt(rratio[k])}" for k in kdeep)]
                       + [C.fmt(law.pmf[0]), C.fmt(law.binomial_pmf[0])])
        above, below, changes = sign_pattern(law.log_pmf, law.log_binomial_pmf)
        t_above, t_below, _ = sign_pattern(law.log_p_ge[1:], law.log_binomial_p_ge[1:])
        c.update(ratio=ratio, above=above, below=below, changes=changes, t_below=t_below + 1)
        pat_rows.append([n, ranges(above), ranges(below), changes, ranges(t_above + 1),
                         ranges(t_below + 1)])
    body = ("Law against its binomial (the same per-job writing probability p = E[n_w] / N):\n\n"
            + C.md_table(["N", "p", "write stretch (mean write / d)",
                          "P(n_w >= k) law / binomial; nu_k law / binomial",
                          "P(n_w = 0) law", "P(n_w = 0) binomial"], summary)
            + "\n\nWhere the law lies above / below the binomial (exact), for P(n_w = n) and for the "
            "tail P(n_w >= k), k >= 1 (claim 5's quantity):\n\n"
            + C.md_table(["N", "P(n_w = n) above at n", "below at n", "sign changes",
                          "P(n_w >= k) above at k", "below at k"], pat_rows)
            + f"\n\nPlain simulation against the law, every level with >= {MIN_STORMS} storms "
            f"({fleets} fleets x {cycles} cycles, burn-in {burn_in}):\n\n"
            + C.md_table(["cell", "k", "P law", "P simulated [95 %]", "z", "nu law",
                          "nu simulated [95 %]", "z", "storms"], vrows + irows))
    if split_rows:
        body += (f"\n\nForward flux sampling at N = 32 (`stormsim.risk.splitting.storm_split_until`, {sp.replicates} "
                 f"replicates of {sp.trials} trials, {sp.cpu_seconds:.0f} CPU s):\n\n"
                 + C.md_table(["k", "P law", "P splitting [95 %]", "z", "nu law",
                               "nu splitting [95 %]", "z", "top replicate share"], split_rows))
    body += (f"\n\nIdeal-f control (N = {n_ctl}): max |log P_law(n_w >= k) - log P_binomial| = "
             f"{dev_law_bin:.1e} over k = 0..{n_ctl} (down to P = {C.fmt(law_i.p_ge[-1])}); against "
             f"the closed form Binomial(N, d / (T + d)): {dev_law_closed:.1e}; simulation against "
             f"both: worst |z| = {np.max(np.abs(zs_i)):.1f} over {zs_i.size // 2} levels.")

    # -- figure -----------------------------------------------------------------------
    fig, axes = plots.grid(2, 2, size=(5.6, 4.4))
    colors = dict(zip(ns, plots.palette(len(ns))))
    for ax, what in ((axes[0][0], "tail"), (axes[0][1], "rate")):
        for n, c in cells.items():
            law, te, st = c["law"], c["te"], c["st"]
            k = np.arange(1, n + 1)
            exact = law.p_ge[k] if what == "tail" else law.storms_per_s[k]
            base = np.exp(law.log_binomial_p_ge[k]) if what == "tail" else c["bin_rate"][k]
            col = colors[n]
            ax.plot(k, exact, color=col, label=f"N = {n}: law (exact)")
            ax.plot(k, base, color=col, ls=":", label=f"N = {n}: binomial")
            seen = st.storms[k] >= MIN_STORMS
            y = (te.p_ge if what == "tail" else st.storms_per_s)[k][seen]
            lo = (te.p_ge_lo if what == "tail" else st.storms_per_s_lo)[k][seen]
            hi = (te.p_ge_hi if what == "tail" else st.storms_per_s_hi)[k][seen]
            ax.errorbar(k[seen], y, yerr=[y - lo, hi - y], fmt="o", ms=3, mfc="none", color=col,
                        label=f"N = {n}: simulation (95 %)")
        if sp is not None:
            y = sp.p_ge if what == "tail" else sp.storms_per_s
            lo = sp.p_ge_lo if what == "tail" else sp.storms_per_s_lo
            hi = sp.p_ge_hi if what == "tail" else sp.storms_per_s_hi
            ax.errorbar(sp.levels, y, yerr=[y - lo, hi - y], fmt="D", ms=5, color="k", mfc="none",
                        label="N = 32: splitting (95 %)")
        ax.set_yscale("log")
        ax.set_ylim(FLOOR, 2.0 if what == "tail" else 50.0)
        kmax = max(int(np.max(np.flatnonzero(c["law"].p_ge >= FLOOR))) for c in cells.values())
        ax.set_xlim(0, kmax + 2)
        ax.set_xlabel("level k (jobs writing at once)")
        ax.set_ylabel("P(n_w >= k), share of time" if what == "tail" else
                      "storm rate nu_k (up-crossings of k per second, T = 1 s)")
        ax.set_title(f"L = {LOAD:g}, sigma = {SIGMA:g} T, fair f, uncapped")
        plots.readable_log_ticks(ax)
    axes[0][0].legend(fontsize=6, ncol=2, loc="upper right")
    ax = axes[1][0]
    for n, c in cells.items():
        law = c["law"]
        x = np.arange(n + 1) / n
        ax.plot(x, np.exp(law.log_pmf - law.log_binomial_pmf), color=colors[n],
                label=f"N = {n}: P(n_w = n)")
        ax.plot(x[1:], np.exp(law.log_p_ge[1:] - law.log_binomial_p_ge[1:]), color=colors[n],
                ls="--", label=f"N = {n}: P(n_w >= n)")
    ax.axhline(1.0, color="k", lw=0.6)
    ax.set_yscale("log")
    ins = ax.inset_axes([0.12, 0.45, 0.38, 0.4])
    for n, c in cells.items():
        law = c["law"]
        m = n // 8 + 2
        ins.plot(np.arange(m) / n, np.exp(law.log_pmf[:m] - law.log_binomial_pmf[:m]),
                 color=colors[n], marker=".")
    ins.axhline(1.0, color="k", lw=0.6)
    ins.set_ylim(0.0, 2.0)
    ins.set_title("P(n_w = n) law / binomial, lowest levels (linear)", fontsize=7)
    ins.tick_params(labelsize=6)
    ax.set_xlabel("n / N (share of the fleet writing)")
    ax.set_ylabel("law / binomial (exact)")
    ax.set_title("above the binomial at both ends, below in between")
    ax.legend(fontsize=6, loc="lower left", bbox_to_anchor=(0.01, 0.15))
    plots.readable_log_ticks(ax)
    ax = axes[1][1]
    k = np.arange(1, n_ctl + 1)
    ax.plot(k, law_i.p_ge[k], color="C0", lw=3, alpha=0.5, label="law (exact)")
    ax.plot(k, np.exp(law_i.log_binomial_p_ge[k]), color="k", ls=":",
            label="binomial (law's p)")
    ax.plot(k, np.exp(exact_bin[k]), color="C3", ls="--", lw=0.8, label="Binomial(N, d/(T+d))")
    seen = st_i.storms[k] >= MIN_STORMS
    y, lo, hi = te_i.p_ge[k][seen], te_i.p_ge_lo[k][seen], te_i.p_ge_hi[k][seen]
    ax.errorbar(k[seen], y, yerr=[y - lo, hi - y], fmt="o", ms=3, mfc="none", color="C1",
                label="simulation (95 %)")
    ax.set_yscale("log")
    ax.set_ylim(max(FLOOR, law_i.p_ge[-1] / 10), 2.0)
    ax.set_xlabel("level k (jobs writing at once)")
    ax.set_ylabel("P(n_w >= k), share of time")
    ax.set_title(f"control: ideal f (f(n) = n), N = {n_ctl}, sigma = {SIGMA_IDEAL:g} T")
    ax.legend(fontsize=7)
    plots.readable_log_ticks(ax)
    f1 = C.save(fig, args, "e4_product_form")

    # -- entry ------------------------------------------------------------------------
    deep = {n: (n // 2, c["ratio"][n // 2]) for n, c in cells.items()}
    pats = {n: (ranges(c["above"]), ranges(c["below"]), c["changes"]) for n, c in cells.items()}
    resolved = [int(np.sum(c["st"].storms[1:] >= MIN_STORMS)) for c in cells.values()]
    split_txt = (f"splitting at N = 32, k = {', '.join(str(k) for k in sp.levels)} (P down to "
                 f"{C.fmt(cells[32]['law'].p_ge[sp.levels[-1]])}): worst |z| = "
                 + (f"{np.max(np.abs(zsplit)):.1f} over the {len(zsplit) // 2} levels whose replicates "
                    "agree enough to test" if zsplit else "n/a (every level carried by one replicate)")
                 if sp is not None else
                 "splitting: not run (no CPU budget in this run)")
    rows = [
        ("the tail above independent phases: an open problem",
         "; ".join(f"N = {n}: P(n_w >= {k}) law / binomial = {C.fmt(r)}" for n, (k, r) in deep.items())
         + f"; simulation vs law: worst |z| = {np.max(np.abs(np.concatenate(zs_all))):.1f} over "
         f"{sum(resolved)} resolved levels; {split_txt}",
         "explained: the product form of a contended fleet (exact)"),
        ("(no paper figure) ideal f (f(n) = n): independent phases",
         f"law = binomial to {dev_law_bin:.0e} in log; simulation vs both: worst |z| = "
         f"{np.max(np.abs(zs_i)):.1f}", "the binomial, exactly"),
    ]
    definition = f"""
Identical fleets, T = 1 s, L = {LOAD:g} (d = L T / N), sigma = {SIGMA:g} T, fair f, uncapped, random launch.
Law: `stormsim.stationary` (exact, log space; P(n_w >= k) = `p_ge`, nu_k = `storms_per_s`). Binomial
baseline: n_w Poisson-binomial with the law's own per-job writing probabilities (`binomial_tail`; for
identical jobs Binomial(N, p) with p = E[n_w] / N under the law), and its storm rate (N - k + 1)
P_bin(n_w = k - 1) / T (independent jobs alternating between compute, mean T, and writing, mean the
law's stretched write). Plain simulation: `simulate` over {fleets} independent fleets x {cycles} cycles
after a burn-in of {burn_in} (the mixing entry E4m: a random launch at sigma = 0.01 T mixes well within it),
P with stormsim.stats.tails' interval, nu_k with stormsim.stats.storms'; a level is shown and tested where >=
{MIN_STORMS} storms were seen. z: P on the log scale (interval half-width / 1.96 as its se), nu_k with
its relative error; agreement asserted at |z| <= {Z_TOL:g} for every tested level of every cell
(Bonferroni over ~150 tests at 1 %). Splitting: `storm_split_until` (forward flux sampling, defaults)
at N = 32, levels {', '.join(map(str, SPLIT_LEVELS))}, rounds of replicates until 10 % or {split_seconds:g} s of wall
time (this run: {sp.replicates if sp is not None else 0} replicates); its z from the
replicates' relative error, tested only where no replicate holds more than {TOP_SHARE_WARN:.0%} of
the replicates' sum (else the replicate distribution is too heavy-tailed for its interval). Control: ideal f (f(n) = n) at N = {n_ctl}, sigma = {SIGMA_IDEAL:g} T (without contention only the
jitter moves phases, so a launch is forgotten after ~(T / sigma)^2 cycles: 100 here), where the law must
equal the binomial exactly (asserted to {EXACT_TOL:g} in log)."""
    verdict = (
        "What is now known: the upper tail of n_w above independent phases (claim 5's heavy tail) is "
        "the long-run law itself - the product form of a contended fleet, exact, with no coupling of "
        "phases. Against the binomial with the same per-job writing probability the law is MORE SPREAD: "
        + "; ".join(f"at N = {n} it is above at n = {a}, below at n = {b}" for n, (a, b, _) in pats.items())
        + " - above at both ends (P(n_w = 0) too: "
        + ", ".join(f"{C.fmt(c['law'].pmf[0])} against {C.fmt(c['law'].binomial_pmf[0])} at N = {n}"
                    for n, c in cells.items())
        + "), below in between (MODEL.md's sentence that \"the lowest levels [lie] below it\" is wrong "
        "at n = 0). In claim 5's terms (the tail P(n_w >= k)) this is below the binomial at k = "
        + "; ".join(f"{ranges(c['t_below'])} (N = {n})" for n, c in cells.items())
        + " and above beyond: the deficit at the lowest k that claim 5 measured (k <= 2 at N = 16, "
        "L = 0.6) is the same law, not a second effect. Deep in the tail the excess is large: "
        + "; ".join(f"N = {n}: {C.fmt(r)} x at k = {k}" for n, (k, r) in deep.items())
        + ". Contention stretches storms (a write slows down when many write, so time with many "
        "writers grows); it does not couple phases: with ideal f (no contention) the same dynamics "
        f"gives exactly the binomial (to {dev_law_bin:.0e}), and the simulation agrees with both "
        f"(worst |z| {np.max(np.abs(zs_i)):.1f}). Simulation agrees with the law at every level it "
        f"resolves (worst |z| {np.max(np.abs(np.concatenate(zs_all))):.1f}); {split_txt}"
        + (f" (the deepest, k = {sp.levels[-1]}, is {sp.p_ge[-1] / cells[32]['law'].p_ge[sp.levels[-1]]:.2g}"
           " x the law: the low side, as splitting's heavy-tailed replicates make likely at its "
           "deepest levels)" if sp is not None else "") + ". "
        "Where we differ from the paper: the paper calls the tail's explanation an open problem; it is "
        "closed for the base model with jitter. What this does not answer: sigma = 0 (a single fleet "
        "keeps its launch's memory; E4m finds the average over random launches at the law at N = 16, "
        "L = 0.6, but nothing here proves it in general); finite windows from a given launch (E4m: "
        "the law is the long-run limit); asynchronous checkpoints (E1), unequal weights (E2) and writer caps "
        "with a queue, where no closed form holds and simulation is the answer.")
    if cached:
        definition += ("\n\nThe simulations were read from the `--data` cache written by an earlier full run "
                       "of this script (the same parameters and seeds); the wall time above is the "
                       "analysis alone.")
    C.append_results(args, "5x", "the upper tail is the product form of a contended fleet",
                     definition, body, verdict, [f1], t0, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

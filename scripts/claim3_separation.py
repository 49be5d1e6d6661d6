"""Claim 3: trajectories launched 1e-9 apart separate (sensitive dependence).

For each (N, L) cell, identical uncapped jobs (T = 1, fair f), many random
launches; each launch is run twice, the second with job N-1's phase moved by
1e-9. Separation at cycle k = max over jobs of the circular difference of the
two runs' phases at job 0's k-th firing (cycles of job 0, so the neutral
time-translation mode is removed). Reported: decades gained, the fitted growth
rate per cycle over the growth window, and their spread across launches.

    .venv/bin/python scripts/claim3_separation.py [--quick]
"""
from __future__ import annotations

import numpy as np
from scipy import stats

import _common as C
import stormsim
from stormsim import plots
from stormsim.analysis import phases

CELLS = [(4, 0.4), (4, 0.7), (8, 0.4), (8, 0.9), (16, 0.6)]
EPS = 1e-9
#: The growth window ends when the separation first exceeds this (before saturation,
#: which sits near 0.1-0.5 cycles).
GROWN = 1e-3
#: Separations below this are rounding, not signal (firing times ~1e3 s, eps ~2e-16).
FLOOR = 1e-15


def separation(fleet, launches, cycles, seed):
    """log10 phase separation (launches, cycles - 1) of launch pairs EPS apart, and
    whether each launch ever had three or more concurrent writers (launches,)."""
    n = fleet.n_jobs
    rng = np.random.default_rng(seed)
    theta = rng.random((launches, n))
    twin = theta.copy()
    j = n - 1
    twin[:, j] = np.where(theta[:, j] < 0.5, theta[:, j] + EPS, theta[:, j] - EPS)
    run = stormsim.simulate(fleet, launch=np.concatenate([theta, twin]), fleets=2 * launches,
                            cycles=cycles, seed=seed, record_firings=True)
    pa = phases(run.firings[:launches])
    pb = phases(run.firings[launches:])
    sep = np.abs(C.circ(pa - pb)).max(axis=2)
    had3 = run.occupancy[:launches, 3:].sum(axis=1) > 0
    return np.log10(np.maximum(sep, FLOOR)), had3


def growth_fit(y):
    """Per launch: decades gained, and the slope (decades/cycle) of log10 sep on k
    from k = 0 to the first k with sep >= GROWN (NaN if never grown)."""
    gained = y.max(axis=1) - y[:, 0]
    grown = y >= np.log10(GROWN)
    reached = grown.any(axis=1)
    first = np.where(reached, grown.argmax(axis=1), -1)
    slope = np.full(y.shape[0], np.nan)
    for i in np.nonzero(reached & (first >= 2))[0]:
        k = np.arange(first[i] + 1)
        slope[i] = stats.linregress(k, y[i, :first[i] + 1]).slope
    return gained, slope, reached, first


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--launches", type=int, default=None, help="launch pairs per cell")
    p.add_argument("--cycles", type=int, default=800)
    args = p.parse_args(argv)
    t0 = C.start(args)
    launches = args.launches or C.pick(args, 24, 500)
    rng = np.random.default_rng(args.seed)

    curves, rows = {}, []
    for c, (n, load) in enumerate(CELLS):
        fleet = stormsim.Fleet.identical(n, T=1.0, load=load)
        y, had3 = separation(fleet, launches, args.cycles, args.seed + 100 * c)
        curves[f"N = {n}, L = {load}"] = y
        gained, slope, reached, first = growth_fit(y)
        ok = np.isfinite(slope)
        # median-curve fit: the rate of the typical launch, k up to the median's GROWN
        med = np.median(y, axis=0)
        hit = np.nonzero(med >= np.log10(GROWN))[0]
        kmax = hit[0] if hit.size else y.shape[1] - 1
        fit = stats.linregress(np.arange(kmax + 1), med[:kmax + 1]) if kmax >= 2 else None
        idx = C.bootstrap_indices(launches, rng)
        boot_gain = np.median(gained[idx], axis=1)
        g_lo, g_hi = C.percentile_ci(boot_gain)
        q = np.nanquantile(slope, [0.25, 0.5, 0.75]) if ok.any() else [np.nan] * 3
        rows.append([n, load, C.fmt(float(fleet.d[0]), 3),
                     C.fmt_ci(float(np.median(gained)), g_lo, g_hi),
                     f"{reached.mean():.0%}", f"{had3.mean():.0%}",
                     f"{(reached == had3).mean():.0%}",
                     C.fmt(float(np.median(first[reached]))) if reached.any() else "n/a",
                     f"{C.fmt(q[1])} ({C.fmt(q[0])}, {C.fmt(q[2])})",
                     C.fmt(q[1] * np.log(10)),
                     (f"{C.fmt(fit.slope)} +- {C.fmt(fit.stderr)} (k <= {kmax})" if fit else "n/a")])

    fig, axes = plots.grid(3, 2, size=(4.6, 3.6))
    axes = axes.ravel()
    for ax, (label, y), color in zip(axes, curves.items(), plots.COLORS):
        plots.separation({label: y}, ax=ax, examples=8)
        ax.lines[0].set_color(color)
        ax.axhline(np.log10(GROWN), color="0.5", ls=":", lw=0.8)
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    plots.separation({f"{k} (median)": v for k, v in curves.items()}, ax=axes[-1], band=False,
                     title="medians of all cells")
    axes[-1].legend(fontsize=7, loc="lower right")
    for ax in axes:
        ax.set_ylim(np.log10(EPS) - 1.5, 0.3)
    fig.suptitle(f"Separation of launches {EPS:g} apart in one phase ({launches} per cell, "
                 "uncapped, fair f; thin: single launches; dotted: growth-window end)",
                 fontsize=10)
    f1 = C.save(fig, args, "claim3_separation")

    definition = f"""
Identical jobs, T = 1 s, uncapped, fair f, d = L T / N. {launches} random launches per cell
(theta iid uniform); each launch is run a second time with job N-1's phase moved by
{EPS:g} (towards the middle of [0, 1]), {args.cycles} cycles. Separation at cycle k =
max_i |theta_i^a - theta_i^b| (circular, in cycles of job 0) with theta the phases at job
0's k-th firing (analysis.phases; differences below {FLOOR:g} are counted as {FLOOR:g}).
Decades gained = log10(max_k sep_k) - log10(sep_0) (median over launches, 95 % bootstrap
interval). "Grown" = separation reached {GROWN:g} within the run; rate = least-squares
slope of log10 sep_k on k from k = 0 to that cycle, per grown launch (median and
interquartile range; x ln 10 = Lyapunov exponent per cycle); the last column fits the
median curve (over launches) the same way, with its standard error. "n_w >= 3 ever" =
the unperturbed run spent time with three or more concurrent writers (exact occupancy);
"grown iff" = share of launches where grown and n_w >= 3 ever agree."""
    body = C.md_table(["N", "L", "d (s)", "decades gained, median [95 % CI]", "launches grown",
                       "launches with n_w >= 3 ever", "grown iff n_w >= 3 ever",
                       f"median cycle reaching {GROWN:g}", "rate (decades/cycle), median (IQR)",
                       "exponent (per cycle, natural log)", "rate of the median curve"], rows)
    gains = [float(r[3].split()[0]) for r in rows]
    agree = [r[6] for r in rows]
    verdict = ("Reproduced where the fleet keeps colliding three at a time: in "
               + ", ".join(f"({n}, {L})" for (n, L), g in zip(CELLS, gains) if g > 4)
               + f" the median launch gains more than 4 decades within {args.cycles} cycles, "
               "growing exponentially (positive rate, table) until the separation saturates at "
               "a fraction of a cycle. "
               + ("Fewer decades in "
                  + ", ".join(f"({n}, {L}) (median {g:.1f})" for (n, L), g in zip(CELLS, gains)
                              if g <= 4)
                  + ": there a large share of launches never separates. "
                  if min(gains) <= 4 else "")
               + "Whether a launch separates is, in " + "/".join(agree) + " of launches (cells in "
               "table order), whether its fleet ever had three or more concurrent writers: an "
               "overlap of two identical writers is neutral (claim 1, and the N = 2 spectrum is "
               "{1}), so a fleet whose writes meet only in pairs (or not at all) keeps its "
               "1e-9 perturbation. This is our reading of the table, not a claim of the paper.")
    C.append_results(args, "3", "trajectory separation", definition, body, verdict, [f1], t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

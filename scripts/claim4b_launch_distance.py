"""Claim 4b: how far a random launch travels, against an independent launch in its order sector.

Identical uncapped jobs (T = 1, fair f), random launches, phases at job 0's
firings (job 0 at phase 0). Distance between two configurations x, y = mean
over jobs i = 1..N-1 of |x_i - y_i| (circular, cycles). After the run: the
distance of the end configuration to its own launch; to an independent
uniform launch relabelled into the launch's cyclic order (its sorted phases
given to the jobs in the launch's order: the same "order sector", which the
dynamics never leaves, MODEL.md check 2); and to the independent launch as
drawn (unrelabelled). The paper: to the launch 7-14 % of a cycle, equal to the
relabelled distance cell by cell within a standard error; unrelabelled 22-26 %.

    .venv/bin/python scripts/claim4b_launch_distance.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _common as C
import stormsim
from stormsim import plots

NS = (4, 8, 16)
LOADS = (0.4, 0.7)
PAPER_LAUNCH = (0.07, 0.14)
PAPER_UNRELABELLED = (0.22, 0.26)
#: Independent launches drawn per fleet for the two references (their mean is the
#: fleet's reference distance; more draws only shrink the reference's own noise).
DRAWS = 32
#: Cycles between the points of the distance-against-time curves.
STRIDE = 10


def distance(x, y):
    """Mean over jobs 1..N-1 of the circular |x_i - y_i| (last axis: jobs)."""
    return np.abs(C.circ(x[..., 1:] - y[..., 1:])).mean(axis=-1)


def references(theta0, rng, draws):
    """(draws, F, N) independent launches in job 0's frame: relabelled into the launch's
    order, and as drawn."""
    F, n = theta0.shape
    ind = rng.random((draws, F, n))
    ind[..., 0] = 0.0
    order = np.argsort(theta0, axis=1, kind="stable")             # job 0 first (phase 0)
    srt = np.sort(ind, axis=2)
    rel = np.empty_like(ind)
    np.put_along_axis(rel, np.broadcast_to(order, ind.shape), srt, axis=2)
    return rel, ind


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--fleets", type=int, default=None, help="random launches per cell")
    p.add_argument("--cycles", type=int, default=None)
    args = p.parse_args(argv)
    t0 = C.start(args)
    fleets = args.fleets or C.pick(args, 40, 500)
    cycles = args.cycles or C.pick(args, 200, 800)
    rng = np.random.default_rng(args.seed)
    rows, vrows, curves = [], [], {}
    in_launch, equal, in_unrel, zs = [], [], [], []
    for c, (n, load) in enumerate([(n, L) for n in NS for L in LOADS]):
        fleet = stormsim.Fleet.identical(n, T=1.0, load=load)
        th = C.launch_phases(fleet, fleets, cycles, args.seed + 1000 * c)
        th0, th1 = th[:, 0, :], th[:, -1, :]
        rel, ind = references(th0, rng, DRAWS)
        d_launch = distance(th1, th0)
        d_rel = distance(th1[None], rel).mean(axis=0)
        d_ind = distance(th1[None], ind).mean(axis=0)
        diff = d_launch - d_rel
        idx = C.bootstrap_indices(fleets, rng)
        ci = lambda x: C.fmt_ci(float(x.mean()), *C.percentile_ci(x[idx].mean(axis=1)))
        se = float(diff.std(ddof=1) / np.sqrt(fleets))
        z = float(diff.mean() / se)
        dl_lo, dl_hi = C.percentile_ci(d_launch[idx].mean(axis=1))
        du_lo, du_hi = C.percentile_ci(d_ind[idx].mean(axis=1))
        in_launch.append(PAPER_LAUNCH[0] <= dl_lo and dl_hi <= PAPER_LAUNCH[1])
        in_unrel.append(PAPER_UNRELABELLED[0] <= du_lo and du_hi <= PAPER_UNRELABELLED[1])
        equal.append(abs(z) <= 1.0)
        zs.append(z)
        frozen = int(np.sum(d_launch < 1e-9))
        rows.append([n, load, ci(d_launch), ci(d_rel), ci(d_ind),
                     f"{diff.mean():+.4f} +- {se:.4f} (z = {z:+.1f})", C.fmt_prop(frozen, fleets)])
        ks = np.arange(0, th.shape[1], STRIDE)
        curves[f"N={n}, L={load}"] = (ks, distance(th[:, ks, :], th0[:, None, :]).mean(axis=0),
                                      float(d_rel.mean()), float(d_ind.mean()))
        vrows.append((f"N={n}, L={load}: distance to the launch 7-14 % of a cycle, equal to the "
                      "order-relabelled independent launch within a standard error; "
                      "unrelabelled 22-26 %",
                      f"to the launch {100 * d_launch.mean():.1f} % [{100 * dl_lo:.1f}, "
                      f"{100 * dl_hi:.1f}]; relabelled {100 * d_rel.mean():.1f} %; difference "
                      f"{100 * diff.mean():+.2f} +- {100 * se:.2f} % (z = {z:+.1f}); unrelabelled "
                      f"{100 * d_ind.mean():.1f} % [{100 * du_lo:.1f}, {100 * du_hi:.1f}]",
                      None))

    signif = C.holm(C.two_sided_p(zs), 0.05)
    for i, row in enumerate(vrows):
        word = ("launch distance inside 7-14 %" if in_launch[i] else
                "launch distance outside 7-14 % (interval)")
        if equal[i]:
            word += "; equal to the relabelled within 1 se (the paper's criterion)"
        else:
            word += (f"; launch and relabelled {abs(zs[i]):.1f} se apart ("
                     + ("significant" if signif[i] else "not significant") + " at 5 % after Holm "
                     "over the cells)")
        word += ("; unrelabelled inside 22-26 %" if in_unrel[i] else "; unrelabelled outside 22-26 %")
        vrows[i] = (row[0], row[1], word)
    fig, axes = plots.grid(len(NS), 1, size=(4.6, 3.8))
    for ax, n in zip(axes[0], NS):
        for (key, (ks, dk, dr, di)), col in zip([(k, v) for k, v in curves.items()
                                                  if k.startswith(f"N={n},")], plots.COLORS):
            lab = key.split(", ")[1]
            ax.plot(ks, dk, color=col, lw=1.4, label=f"{lab}: to its launch")
            ax.axhline(dr, color=col, ls="--", lw=0.9, label=f"{lab}: relabelled independent")
            ax.axhline(di, color=col, ls=":", lw=0.9, label=f"{lab}: unrelabelled")
        ax.axhspan(*PAPER_LAUNCH, color="0.85", zorder=0, label="paper: to the launch")
        ax.axhspan(*PAPER_UNRELABELLED, color="0.93", zorder=0, label="paper: unrelabelled")
        ax.set_ylim(0, 0.3)
        ax.set_xlabel("cycle k (firings of job 0)")
        ax.set_ylabel("mean phase distance (cycles)")
        ax.set_title(f"N = {n}", fontsize=9)
        if n == NS[0]:          # same styles in every panel: one legend, clear of the curves
            ax.legend(fontsize=6, loc="lower right")
    fig.suptitle(f"Distance of the configuration to its launch against independent launches "
                 f"({fleets} launches per cell, uncapped, fair f; mean over fleets)", fontsize=10)
    f1 = C.save(fig, args, "claim4b_launch_distance")

    definition = f"""
Identical jobs, T = 1 s, d = L T / N, uncapped, fair f; {fleets} random launches per cell,
{cycles} cycles; phases theta at job 0's firings (job 0 at 0). Distance D(x, y) = mean over
i = 1..N-1 of |x_i - y_i| (circular, cycles). "To the launch" = D(theta(end), theta(0)), end = cycle
{cycles - 2}. References, {DRAWS} independent uniform launches per fleet (their mean distance
is the fleet's reference): "relabelled" = the independent phases sorted and given to the jobs
in the launch's cyclic order (same order sector); "unrelabelled" = as drawn. Means over
fleets with 95 % bootstrap intervals; the difference (launch - relabelled) is paired per fleet,
with its standard error (sd / sqrt(fleets)): "equal within a standard error" = |z| <= 1, the
paper's criterion. "Frozen" = distance to the launch below 1e-9 (Wilson interval). The paper does
not define its distance; this one (mean absolute circular difference in job 0's frame) gives
its unrelabelled 22-26 % (1/4 in expectation), which an RMS distance (0.29) or one including job 0
(N = 4: 0.19) would not."""
    body = C.md_table(["N", "L", "to the launch [CI]", "to a relabelled independent launch [CI]",
                       "to an unrelabelled one [CI]", "launch - relabelled +- se (z)",
                       "fleets frozen"], rows)
    verdict = (f"Launch distance inside the paper's 7-14 % in {sum(in_launch)} of {len(rows)} "
               f"cells; equal to the relabelled reference within one standard error in "
               f"{sum(equal)} of {len(rows)} (apart with significance at 5 % after Holm over the "
               f"cells in {int(signif.sum())}); unrelabelled inside 22-26 % in {sum(in_unrel)} of "
               f"{len(rows)} (rows above say which). The unrelabelled distance of two independent "
               "configurations is 1/4 of a cycle in expectation (mean circular distance of two "
               "uniform phases), so that figure reproduces by construction; the informative "
               "comparison is launch against relabelled: where the fleet mixes within its order "
               "sector they agree, where fleets stay frozen (writes meeting only in pairs are "
               "neutral) the launch distance is smaller. A finite-time statement "
               f"({cycles} cycles).")
    C.append_results(args, "4b", "distance to the launch against an independent launch",
                     definition, body, verdict, [f1], t0,
                     seeds=f"cell c (table order) runs with seed {args.seed} + 1000 c; references "
                           f"and bootstrap from seed {args.seed}", rows=vrows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

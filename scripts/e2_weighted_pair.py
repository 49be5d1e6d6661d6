"""E2 (c): the identical pair with unequal weights -- does the identity gap map
survive, and where does it end?

Two identical jobs (T = 1 s, d = 0.3 s, uncapped, sigma = 0) that share the
storage in proportion to weights (1, w) (MODEL.md E2), w in {1, 1.01, 1.1, 2,
10}, with fair f (aggregate 1) and ideal f (aggregate n), blocking and async
(eps = 0.2, `block`); and the control async eps = 0, which never waits here
(two persists last at most 2 d < T), so MODEL.md A2 makes it neutral for any
weights. The gap map g(delta) from random launches: its largest |g|, the
largest |g| outside the contention band (the writes cannot overlap there), the
widest gap at which |g| is above rounding, and the direction (collision
distance D shrinking or growing, as in e1_async_pair).

    .venv/bin/python scripts/e2_weighted_pair.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _common as C
import e1_async_pair as P
import stormsim
from stormsim import plots

T, D = 1.0, 0.3
WEIGHTS = (1.0, 1.01, 1.1, 2.0, 10.0)
THROUGHPUTS = ("fair", "ideal")
MODES = {"blocking": dict(),
         "async eps=0.2 block": dict(checkpoint="async", slowdown=0.2, on_busy="block")}
CONTROL = dict(checkpoint="async", slowdown=0.0, on_busy="block")
#: Outside the band: min(delta, 1 - delta) above the band edge by this much (cycles),
#: so that the rounding of delta cannot put a contended step outside.
BAND_MARGIN = 1e-6


def band(fleet) -> float:
    """Contention band half-width in phase (cycles): the write that starts first
    drains alone at rate 1 until the other fires, so the two overlap iff the time
    between the firings is below d; d / lone cycle in phase (exact for the
    uncoupled period, approximate where the period is coupled)."""
    return float(fleet.d[0]) / P.lone_cycle(fleet)


def stats(fleet, theta, cycles, seed) -> dict:
    st = P.pair_stats(fleet, theta, cycles, seed)
    st["dir"] = P.direction(st)
    x, g = st["x"], st["g"]
    dist = np.minimum(x, 1.0 - x)
    st["band"] = band(fleet)
    out = dist > st["band"] + BAND_MARGIN
    st["max_g_out"] = float(np.abs(g[out]).max()) if out.any() else np.nan
    hit = np.abs(g) > P.COUPLED_MIN
    st["g_neg"] = int(np.sum(g < -P.COUPLED_MIN))
    st["g_pos"] = int(np.sum(g > P.COUPLED_MIN))
    st["edge"] = float(dist[hit].max()) if hit.any() else np.nan
    return st


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--launches", type=int, default=None, help="random launches per condition")
    p.add_argument("--cycles", type=int, default=None, help="cycles per launch")
    args = p.parse_args(argv)
    t0 = C.start(args)
    launches = args.launches or C.pick(args, 40, 300)
    cycles = args.cycles or C.pick(args, 40, 300)
    rng = np.random.default_rng(args.seed)
    theta = rng.random((launches, 2))

    res, rows = {}, []
    conds = [(mode, f, kw) for mode, kw in MODES.items() for f in THROUGHPUTS]
    conds.append(("control async eps=0", "fair", CONTROL))
    for i, (mode, f, kw) in enumerate(conds):
        for j, w in enumerate(WEIGHTS):
            fleet = stormsim.Fleet(T=[T, T], d=[D, D], throughput=f, weights=[1.0, w], **kw)
            st = stats(fleet, theta, cycles, args.seed + 10 * i + j)
            res[mode, f, w] = st
            rows.append([mode, f, f"{w:g}", C.fmt(st["max_g"]), C.fmt(st["max_g_out"]),
                         C.fmt(st["band"], 4), C.fmt(st["edge"], 4), C.fmt(st["waits"], 3),
                         C.fmt_prop(st["shrink"], st["n"]), C.fmt_prop(st["grow"], st["n"]),
                         C.fmt_prop(st["locked"], st["n"]), f"{st['g_neg']} / {st['g_pos']}",
                         f"{C.fmt_prop(st['in_contention0'], st['n'])} -> "
                         f"{C.fmt_prop(st['in_contention1'], st['n'])}", st["dir"]])

    # -- figure
    fig, axes = plots.grid(len(conds), 1, size=(3.4, 3.2))
    for i, (mode, f, kw) in enumerate(conds):
        ax = axes[0, i]
        plots.gap_increment({f"w = (1, {w:g})": res[mode, f, w]["delta"] for w in WEIGHTS},
                            ax=ax, max_points=8000)
        ax.set_yscale("symlog", linthresh=P.SYMLOG_LIN)
        ax.set_ylim(-0.55, 0.55)
        b = res[mode, f, 1.0]["band"]
        for xv in (b, 1 - b):
            ax.axvline(xv, color="0.5", ls=":", lw=1)
        ax.set_title(f"{mode}, {f} f", fontsize=9)
        if i:
            ax.set_ylabel("")
            ax.get_legend().remove()
        else:
            ax.legend(fontsize=6, markerscale=2)
    fig.suptitle(f"Identical pair with weights (1, w): T = 1 s, d = {D} s, uncapped; gap map "
                 f"(symlog, linear within +-{P.SYMLOG_LIN:g}); dotted: contention band d / lone "
                 f"cycle; {launches} launches x {cycles} cycles", fontsize=9)
    f1 = C.save(fig, args, "e2_weighted_pair")

    # -- results
    definition = f"""
Identical pair T = (1, 1) s, d = ({D}, {D}) s, uncapped, sigma = 0 (no randomness drawn),
weights (1, w): writers share f(n_w) in proportion to weight (MODEL.md E2). {launches} random
launches theta ~ U[0, 1)^2 (one set from the root seed), {cycles} cycles each. g(delta), D,
"shrank"/"grew"/"locked" and the direction word as in E1a (e1_async_pair.py: steps from k =
{P.BURN}, neutral at max |g| <= {P.NEUTRAL_TOL:g}). Band = d / lone cycle (T + d blocking, T +
eps d async): with min(delta, 1 - delta) above it the uncoupled pair's writes do not overlap.
"max |g| outside" = over steps with min(delta, 1 - delta) > band + {BAND_MARGIN:g}; "edge" =
the largest min(delta, 1 - delta) among the sampled steps with |g| > {P.COUPLED_MIN:g} (a
lower bound on where the coupling ends). Shares: Wilson 95 % over launches."""
    body = C.md_table(["mode", "f", "w", "max abs g", "max abs g outside band", "band",
                       "edge of g != 0", "waits / cycle", "D shrank", "D grew", "locked",
                       "steps g < 0 / g > 0", "in contention start -> end", "coupling"], rows)

    eq_max = max(res[m, f, 1.0]["max_g"] for m, f, _ in conds)
    ctl_max = max(res["control async eps=0", "fair", w]["max_g"] for w in WEIGHTS)
    uneq = {k: st for k, st in res.items() if k[2] != 1.0 and not k[0].startswith("control")}
    broken = [k for k, st in uneq.items() if st["max_g"] > P.COUPLED_MIN]
    kept = [k for k, st in uneq.items() if st["max_g"] <= P.NEUTRAL_TOL]
    out_max = max((st["max_g_out"] for st in uneq.values() if np.isfinite(st["max_g_out"])),
                  default=np.nan)
    edges = [st["edge"] / st["band"] for st in uneq.values() if np.isfinite(st["edge"])]
    dirs = {}
    for k in broken:
        dirs.setdefault(uneq[k]["dir"], []).append(k)
    lab = lambda ks: ", ".join(f"{m}/{f}/w={w:g}" for m, f, w in sorted(ks))
    tot = lambda key: sum(uneq[k][key] for k in broken)
    one_way = [k for k in broken if min(uneq[k]["g_neg"], uneq[k]["g_pos"]) == 0]
    # where the launches that started in contention end: D_end / band
    ends = np.concatenate([uneq[k]["D1"][uneq[k]["D0"] < uneq[k]["band"]]
                           / uneq[k]["band"] for k in broken]) if broken else np.array([np.nan])
    small = {(m, f): res[m, f, 1.01]["max_g"] for m, f, _ in conds[:-1]}
    big = {(m, f): res[m, f, 10.0]["max_g"] for m, f, _ in conds[:-1]}
    locked_all = sum(st["locked"] for st in uneq.values())
    c0 = sum(st["in_contention0"] for st in uneq.values())
    c1 = sum(st["in_contention1"] for st in uneq.values())
    n_all = sum(st["n"] for st in uneq.values())
    verdict = (
        f"Equal weights keep the identity (max |g| {C.fmt(eq_max)} over every mode and f). "
        f"Unequal weights end it: {len(broken)} of {len(uneq)} unequal-weight conditions are "
        f"coupled (max |g| > {P.COUPLED_MIN:g}), {len(kept)} stay neutral"
        + (f" ({lab(kept)})" if kept else "") + ". "
        + "The identity ends at the contention band: outside it (the writes do not overlap) "
          f"|g| <= {C.fmt(out_max)}, and the widest gap with |g| above rounding is "
          f"{C.fmt(min(edges), 3)} to {C.fmt(max(edges), 3)} band widths. "
        + "It ends at once in w: max |g| at w = 1.01 is "
        + ", ".join(f"{C.fmt(v)} ({m}, {f})" for (m, f), v in small.items())
        + "; at w = 10 " + ", ".join(f"{C.fmt(v)} ({m}, {f})" for (m, f), v in big.items())
        + " (ideal f couples too: with weights a writer drains at n w_i / W, not 1). "
        + ("Direction: " + "; ".join(f"{k} in {len(v)} ({lab(v)})" for k, v in sorted(dirs.items()))
           + f"; pooled D shrank {C.fmt_prop(tot('shrink'), tot('n'))}, grew "
             f"{C.fmt_prop(tot('grow'), tot('n'))}. "
           + f"In {len(one_way)} of {len(broken)} coupled conditions g has one sign on every "
             f"coupled step ({tot('g_neg')} steps g < 0, {tot('g_pos')} g > 0 pooled; with weights "
             "(1, w > 1), g < 0 means the heavier job 1 gains on job 0 at every shared "
             "write): the gap "
             "drifts one way through the collision, so a pair that starts just after the "
             "other is first drawn in (D shrinks), passes through and is then pushed back to "
             "the edge of the band on the other side (D grows), where the writes just touch: "
             f"launches that started in contention end at D / band = median "
             f"{C.fmt(float(np.median(ends)), 4)} (5-95 %: {C.fmt(float(np.quantile(ends, 0.05)), 4)}"
             f"-{C.fmt(float(np.quantile(ends, 0.95)), 4)}); a collision is a transient, not a "
             "lock. "
           if broken else "")
        + f"locked at the end: {C.fmt_prop(locked_all, n_all, pct=False)} of launches; in "
          f"contention (D < band) at the start {C.fmt_prop(c0, n_all)}, at the end "
          f"{C.fmt_prop(c1, n_all)} (unequal weights pooled). "
        + f"Control (async eps = 0, no waits: MODEL.md A2): max |g| {C.fmt(ctl_max)} for every w: "
        + ("neutral, as A2 requires." if ctl_max <= P.NEUTRAL_TOL else "NOT neutral: FAILS."))
    main_dir = max(dirs, key=lambda k: len(dirs[k])) if dirs else "none"
    vrows = [
        ("open question: does an identical pair with unequal weights keep the identity gap map?",
         f"coupled in {len(broken)}/{len(uneq)} unequal-weight conditions (w = 1.01 to 10, fair "
         f"and ideal f, blocking and async eps = 0.2); equal weights max abs g {C.fmt(eq_max)}",
         "no: any unequal weight breaks it where the writes overlap" if len(broken) == len(uneq)
         else "partly (see the table)"),
        ("open question: where does the weighted pair's identity end?",
         f"outside the contention band max abs g {C.fmt(out_max)}; coupling edge "
         f"{C.fmt(min(edges), 3)}-{C.fmt(max(edges), 3)} band widths",
         "at the contention band (gaps whose writes overlap); identity outside it"),
        ("open question: is the weighted pair's coupling attractive or repulsive?",
         ("; ".join(f"{k} in {len(v)}" for k, v in sorted(dirs.items())) + "; ")
         + f"locked {C.fmt_prop(locked_all, n_all, pct=False)}; in contention start "
           f"{C.fmt_prop(c0, n_all)} -> end {C.fmt_prop(c1, n_all)}",
         (f"one-way drift through the collision in {len(one_way)}/{len(broken)}: transient, "
          "never locking") if one_way else f"{main_dir} (where coupled)"),
        ("MODEL.md A2 control: async eps = 0, no waits, any weights",
         f"max abs g {C.fmt(ctl_max)}",
         "neutral (holds)" if ctl_max <= P.NEUTRAL_TOL else "FAILS"),
    ]
    C.append_results(args, "E2c", "the identical pair with unequal weights", definition, body,
                     verdict, [f1], t0,
                     seeds=f"launches from root seed {args.seed}; condition (mode/f index i, "
                           f"weight index j) runs with seed {args.seed} + 10 i + j (sigma = 0: "
                           "no randomness drawn in the runs)", rows=vrows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``stormsim report RESULTS.h5 -o DIR``: the standard figures of any sweep.

Reads a sweep result with :func:`stormsim.open_results` (a finished HDF5 file,
or the parts of an unfinished sweep) and writes to DIR:

- ``tail.png``: P(n_w >= k) against k for every cell whose occupancy is
  measured, one panel per N, with the binomial law of independent jobs that
  write the measured fraction of the time (dashed), and 95 % bootstrap
  intervals over fleets when the sweep stored per-fleet occupancy;
- ``tail_vs_<key>.png``: P(n_w >= k) at k = N/4, N/2 (as ``stormsim inspect``)
  against the main grid key, with the binomial baseline;
- ``survival.png``: Kaplan-Meier curves of the first passage (cells with a
  passage level), censored fleets included;
- ``median_vs_<key>.png``: the Kaplan-Meier median first passage (95 %
  Brookmeyer-Crowley interval) against the main grid key; medians beyond the
  cycle cap are drawn as triangles at the cap;
- ``report.md``: the sweep, the ``stormsim inspect`` table, and the figures
  with what each shows.

The "main grid key" is the numeric, finite grid key with the most values; the
other grid keys label the lines. Cells one at a time are read, so any sweep
size fits in memory.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ._format import fmt_value

#: Bootstrap resamples for the tail intervals (per-fleet occupancy only).
N_BOOT = 400
#: Most cells drawn in one panel before lines are thinned to every k-th cell.
MAX_LINES = 16


def _label(params: dict, keys) -> str:
    return ", ".join(f"{k}={fmt_value(params[k])}" for k in keys) or "all cells"


def _main_key(res) -> str | None:
    """The numeric grid key with the most distinct finite values (None if none)."""
    best, best_n = None, 1
    for k in res.grid_keys:
        col = np.asarray(res.params.get(k))
        if col.dtype.kind not in "if":
            continue
        if not np.all(np.isfinite(col.astype(float))):
            continue
        n = len(np.unique(col))
        # ties go to a key other than N (N also moves the tail levels k)
        if n > best_n or (n == best_n and best == "N"):
            best, best_n = k, n
    return best


def _cell_summary(c, rng) -> dict:
    """What the figures need from one cell; its per-fleet arrays are dropped after."""
    from scipy.stats import binom

    from .survival import kaplan_meier, passage_times

    p = c.params
    n = int(c.T.size)
    level = int(p.get("passage_level", 0) or 0)
    stops = bool(p.get("stop_at_passage", True))
    occ_sum = np.asarray(c.occupancy_sum, float)
    total = occ_sum.sum()
    out = dict(index=c.index, params=p, N=n, fleets=c.fleets_done, level=level)
    # Occupancy is only informative when fleets are not stopped at their passage
    # (then the time at n_w >= level is zero by construction).
    out["has_occ"] = bool(total > 0 and c.fleets_done > 0 and not (level > 0 and stops))
    if out["has_occ"]:
        ks = np.arange(n + 1)
        tail = np.cumsum(occ_sum[::-1])[::-1] / total
        pw = float((occ_sum * ks).sum() / (n * total))
        out.update(tail=tail, p_write=pw, binom=binom.sf(ks - 1, n, pw),
                   tail_ci=None)
        if c.occupancy is not None and c.fleets_done > 1:
            occ = np.asarray(c.occupancy, float)
            idx = rng.integers(0, occ.shape[0], size=(N_BOOT, occ.shape[0]))
            b = occ[idx].sum(axis=1)
            bt = np.cumsum(b[:, ::-1], axis=1)[:, ::-1] / b.sum(axis=1, keepdims=True)
            out["tail_ci"] = (np.quantile(bt, 0.025, axis=0), np.quantile(bt, 0.975, axis=0))
    if level > 0 and c.fleets_done > 0:
        t, obs = passage_times(c.passage_cycle, c.cycles)
        km = kaplan_meier(t, obs)
        out.update(t=t, obs=obs, median=km.median, cycles=c.cycles,
                   censored=int((~obs).sum()))
    return out


def _groups(cells, res, xkey):
    """{line label: [cells sorted by x]} over the grid keys other than xkey."""
    others = [k for k in res.grid_keys if k != xkey]
    groups: dict[str, list] = {}
    for s in cells:
        groups.setdefault(_label(s["params"], others), []).append(s)
    if xkey is not None:
        for v in groups.values():
            v.sort(key=lambda s: float(s["params"][xkey]))
    return groups


def _thin(items: list) -> list:
    if len(items) <= MAX_LINES:
        return items
    step = math.ceil(len(items) / MAX_LINES)
    return items[::step]


def _xaxis(vals):
    vals = np.asarray(vals, float)
    return bool(np.all(vals > 0) and vals.max() / vals.min() >= 10)


def main(path: str, outdir: str) -> int:
    """Draw the standard figures of the sweep result at ``path`` into ``outdir``.

    Returns 0. Raises ``stormsim.SweepError`` (a ValueError) when ``path`` is
    not a stormsim sweep result.
    """
    from . import plots
    from .results import open_results

    res = open_results(path)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    cells = [_cell_summary(c, rng) for c in res]
    xkey = _main_key(res)
    label_keys = list(res.grid_keys)
    figs: list[tuple[str, str]] = []

    def save(fig, name, caption):
        fig.savefig(out / name, dpi=110)
        figs.append((name, caption))

    # -- occupancy tails against k, one panel per N
    occ_cells = [s for s in cells if s["has_occ"]]
    if occ_cells:
        ns = sorted({s["N"] for s in occ_cells})[:6]
        fig, axes = plots.grid(len(ns), 1, size=(5.0, 4.2))
        for ax, n in zip(axes[0], ns):
            sel = _thin([s for s in occ_cells if s["N"] == n])
            colors = plots.palette(len(sel))
            for s, col in zip(sel, colors):
                k = np.arange(1, n + 1)
                ci = s["tail_ci"]
                ci = (ci[0][1:], ci[1][1:]) if ci is not None else (s["tail"][1:], s["tail"][1:])
                plots.tail_vs_binomial(k, s["tail"][1:], ci, s["binom"][1:], ax=ax, color=col,
                                       label=_label(s["params"],
                                                    [q for q in label_keys if q != "N"]))
            lo = min(min(x for x in s["tail"][1:] if x > 0) for s in sel)
            ax.set_ylim(max(lo / 3, 1e-12), 1.5)
            ax.set_title(f"N = {n}", fontsize=9)
            ax.legend(fontsize=6)
        fig.suptitle(f"{res.name}: share of time with at least k writers (points) vs independent "
                     "jobs with the same writing fraction (dashed)", fontsize=10)
        save(fig, "tail.png",
             "P(n_w >= k): the fraction of measured time with at least k concurrent writers, from "
             "the exact occupancy summed over each cell's fleets (points; 95 % bootstrap "
             "intervals over fleets when per-fleet occupancy is stored), against the binomial "
             "law of N independent jobs each writing the measured fraction of the time (dashed).")

        if xkey is not None:
            groups = _groups(occ_cells, res, xkey)
            fig, axes = plots.grid(2, 1, size=(5.4, 4.2))
            logx = _xaxis([s["params"][xkey] for s in occ_cells])
            for ax, q in zip(axes[0], (4, 2)):
                shown = _thin(list(groups.items()))
                for (lab, grp), col in zip(shown, plots.palette(len(shown))):
                    xs = [float(s["params"][xkey]) for s in grp]
                    kq = [max(1, math.ceil(s["N"] / q)) for s in grp]
                    indep = f"{lab} (independent)"
                    plots.series(xs, {lab: ([s["tail"][k] for s, k in zip(grp, kq)], None, None),
                                      indep: ([s["binom"][k] for s, k in zip(grp, kq)],
                                              None, None)},
                                 ax=ax, logx=logx, logy=True,
                                 styles={lab: dict(color=col),
                                         indep: dict(color=col, ls="--", marker="")})
                sim = [s["tail"][max(1, math.ceil(s["N"] / q))] for s in occ_cells]
                pos = [v for v in sim if v > 0]
                if pos:
                    ax.set_ylim(max(1e-12, 0.3 * min(pos)), 1.5)
                ax.set_xlabel(xkey)
                ax.set_ylabel(f"P(n_w >= ceil(N/{q}))")
                ax.set_title(f"k = ceil(N/{q})", fontsize=9)
                ax.legend(fontsize=6)
            fig.suptitle(f"{res.name}: upper tail against {xkey}", fontsize=10)
            save(fig, f"tail_vs_{xkey}.png",
                 f"P(n_w >= k) at k = ceil(N/4) and ceil(N/2) against {xkey}, one line per value "
                 "of the other grid keys; dashed: independent jobs (binomial).")

    # -- first passage
    pass_cells = [s for s in cells if "t" in s]
    if pass_cells:
        sel = _thin(pass_cells)
        fig = plots.survival({_label(s["params"], label_keys): (s["t"], s["obs"]) for s in sel},
                             title=f"{res.name}: first passage to n_w >= passage level",
                             xlabel="fleet cycles until the first passage",
                             ylabel="fraction of fleets not yet passed")
        save(fig, "survival.png",
             "Kaplan-Meier survival of the first passage to n_w >= passage_level (the share of "
             "fleets that have not reached it), fleets censored at the cycle cap included.")
        if xkey is not None:
            groups = _groups(pass_cells, res, xkey)
            ys = {}
            xs_all = sorted({float(s["params"][xkey]) for s in pass_cells})
            for lab, grp in groups.items():
                y = np.full(len(xs_all), np.nan)
                lo, hi = y.copy(), y.copy()
                for s in grp:
                    i = xs_all.index(float(s["params"][xkey]))
                    med, mlo, mhi = s["median"]
                    y[i] = med
                    lo[i] = mlo if math.isfinite(mlo) else (s["cycles"] if math.isinf(med)
                                                            else np.nan)
                    hi[i] = mhi
                ys[lab] = (y, lo, hi)
            fig = plots.series(xs_all, ys, xlabel=xkey, ylabel="median fleet cycles to the passage",
                               logx=_xaxis(xs_all), logy=True,
                               title=f"{res.name}: Kaplan-Meier median (95 % CI; triangle: beyond the cycle cap)")
            save(fig, f"median_vs_{xkey}.png",
                 f"Kaplan-Meier median first passage (95 % Brookmeyer-Crowley interval) against "
                 f"{xkey}; a triangle marks a median beyond the cycle cap (more than half the "
                 "fleets censored), drawn at the cap.")

    _write_markdown(res, out, figs, xkey)
    print(f"stormsim report: wrote {len(figs)} figures and report.md to {out}")
    return 0


def _write_markdown(res, out: Path, figs, xkey) -> None:
    state = "complete" if res.complete else "UNFINISHED (read from the parts written so far)"
    lines = [f"# Sweep report: {res.name}", "",
             f"- result: `{res.path}` ({state}), stormsim {res.version}",
             f"- {res.n_cells} cells, {int(res.fleets_done.sum())}/{int(res.fleets.sum())} fleets; "
             f"grid keys: {', '.join(res.grid_keys) or 'none'}"
             + (f"; figures against `{xkey}`" if xkey else ""), ""]
    if res.description:
        lines += [res.description, ""]
    lines += ["## Cells", "", "```", res.table(), "```", ""]
    lines += ["## Figures", ""]
    for name, caption in figs:
        lines += [f"![{name}]({name})", "", caption, ""]
    if not figs:
        lines += ["No figure applies: no cell has a measured occupancy or a passage level.", ""]
    lines += ["## The sweep file", "", "```toml", res.sweep_toml.rstrip(), "```", ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")

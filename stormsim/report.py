"""``stormsim report RESULTS.h5 -o DIR``: the standard figures of any sweep.

Reads a sweep result with :func:`stormsim.open_results` (a finished HDF5 file,
or the parts of an unfinished sweep) and writes to DIR:

- ``tail.png``: P(n_w >= k) against k for every cell whose occupancy is
  measured, one panel per N, with its 95 % interval over the independent
  fleets (stormsim.stats.tails) and the law of independent jobs that write the
  measured fractions of the time (dashed; binomial for identical jobs, not
  drawn for unlike jobs, whose per-job fractions are not recorded); where no
  fleet reached k a hollow downward triangle, never joined to the points,
  marks an upper bound at the first such k, at the measured scale
  (stormsim.stats.tails.monotone_bound: P(n_w >= k) does not grow with k);
- ``tail_vs_<key>.png``: P(n_w >= k) at k = ceil(N/4), ceil(N/2) against the
  main grid key, with intervals, bounds and the baseline;
- ``storms.png``: the storm rate nu_k against k (storms per day for a job
  table's real times, else per second), one panel per N, with its 95 %
  interval, and the Poisson bound (hollow) at the first level without a storm;
- ``survival.png``: Kaplan-Meier curves of the first passage (cells with a
  passage level) with their 95 % bands, censored fleets included; one panel
  per value of the other grid keys, one colour per value of the main key;
- ``median_vs_<key>.png``: the Kaplan-Meier median first passage (95 %
  Brookmeyer-Crowley interval) against the main grid key; medians beyond the
  cycle cap are drawn as triangles at the cap; against ``m_over_sigma`` (or
  ``jitter``) with the (m/sigma)^2 law as a reference line;
- ``goodput_vs_<key>.png``: for a sweep whose jobs fail (MODEL.md E8: mtbf,
  outage_mtbf), the goodput G with its 95 % interval against the numeric grid
  key with the most values among those cells (ties: ``mtbf``);
- ``ramp_events_vs_<key>.png``: for a sweep whose jobs have power (MODEL.md E6:
  busy_power, idle_power), the ramp events per day with their 95 % intervals
  against the numeric grid key with the most values among those cells, a
  panel per ramp window D, a line per threshold X (with an event somewhere);
- ``report.md``: the sweep, the ``stormsim inspect`` table and the storms at
  the levels asked (``--levels``), the storm risk
  of the cells that ask for it (``risk_levels``: P(n_w >= k) and storms per
  second and per day with intervals and methods), goodput and its parts per
  cell with failures, mean power and ramps per cell with power, and the
  figures with what each shows.

The "main grid key" is the numeric, finite grid key with the most values; the
other grid keys label the lines. Cells are read one at a time and only their
summaries kept (no resampling), so memory stays bounded by one cell.
"""
from __future__ import annotations

import errno
import math
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from . import plots
from ._format import fmt_count, fmt_value
from .engine.units import SECONDS_PER_DAY
from .errors import ResourceError, os_error_sentence
from .stats.survival import kaplan_meier, passage_times
from .stats.tails import monotone_bound
from .store.results import DEFAULT_TAIL_LEVELS, open_results
from .store.tables import (durations_table_text, goodput_table_text, physical_units,
                           power_table_text, risk_table_text, storms_table_text)

#: Most curves of one panel: the qualitative palette has 8 distinguishable
#: colours; beyond that cells are thinned to every k-th one (and the caption says so).
MAX_LINES = 8
#: Most panels of one figure.
MAX_PANELS = 6
#: Reference laws of the median first passage against a grid key: exponent.
REFERENCE_LAWS = {"m_over_sigma": (2.0, r"$\propto (m/\sigma)^2$"),
                  "jitter": (-2.0, r"$\propto \sigma^{-2}$")}


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


#: The per-level numbers of a cell the figures draw (stormsim.stats.summary's names).
FIGURE_NUMBERS = ("p_ge", "p_ge_lo", "p_ge_hi", "p_ge_method", "p_ge_independent", "p_ge_law",
                  "independent_law", "storms_per_s", "storms_per_s_lo", "storms_per_s_hi",
                  "storms_method")


def _cell_summary(c) -> dict:
    """What the figures need from one cell; its per-fleet arrays are dropped after."""

    cs = c.summary()
    p = c.params
    n = int(c.T.size)
    level = int(p.get("passage_level", 0) or 0)
    stops = bool(p.get("stop_at_passage", True))
    out = dict(index=c.index, params=p, N=n, fleets=c.fleets_done, level=level)
    # Occupancy is only informative when fleets are not stopped at their passage
    # (then the time at n_w >= level is zero by construction).
    out["has_occ"] = bool(np.isfinite(cs["p_write"]) and c.fleets_done > 0
                          and not (level > 0 and stops))
    if out["has_occ"]:
        out.update({name: cs[name] for name in FIGURE_NUMBERS})
    if cs["failures"] >= 0:               # a cell with failures (MODEL.md E8)
        out["goodput"] = tuple(cs[f"goodput{e}"] for e in ("", "_lo", "_hi"))
    if cs["ramps"] is not None:           # a cell with power (MODEL.md E6)
        out["ramps"] = cs["ramps"]
    if level > 0 and c.fleets_done > 0:
        t, obs = passage_times(c.passage_cycle, c.cycles)
        out.update(t=t, obs=obs, median=kaplan_meier(t, obs).median, cycles=c.cycles,
                   censored=int((~obs).sum()))
    return out


def _groups(cells, keys, xkey):
    """{label over ``keys``: [cells sorted by xkey]}."""
    groups: dict[str, list] = {}
    for s in cells:
        groups.setdefault(_label(s["params"], keys), []).append(s)
    if xkey is not None:
        for v in groups.values():
            v.sort(key=lambda s: float(s["params"][xkey]))
    return groups


def _thin(items: list, most: int = MAX_LINES) -> list:
    if len(items) <= most:
        return items
    step = math.ceil(len(items) / most)
    return items[::step]


def _xaxis(vals):
    vals = np.asarray(vals, float)
    return bool(np.all(vals > 0) and vals.max() / vals.min() >= 10)


def _suptitle(fig, text: str, fontsize: float = 10.0) -> None:

    fig.suptitle(plots.wrap(text, fig.get_figwidth() * 0.95, fontsize), fontsize=fontsize)


def _zero_marker(ax, x, bound, color, label=None):
    """A hollow downward triangle at a one-sided upper bound (no fleet reached k)."""
    ax.scatter([x], [bound], marker="v", s=36, facecolors="none", edgecolors=[color],
               linewidths=1.2, zorder=3, label=label)


def _style_legend(ax, extra, below: bool = False):
    """The axes' own legend entries plus proxies saying what the styles mean;
    ``below``: under the axes, where it can hide no point."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    for text, kw in extra:
        handles.append(Line2D([], [], color="0.35", **kw))
        labels.append(text)
    if below:
        ax.legend(handles, labels, fontsize=6, loc="upper center", ncols=2,
                  bbox_to_anchor=(0.5, -0.16))
    else:
        ax.legend(handles, labels, fontsize=6)


_BOUND_STYLE = ("no fleet reached k: an upper bound (not data)",
                dict(marker="v", ls="", mfc="none"))
#: The exact law on the tail figure: a thin solid line with crosses, unlike the
#: points (data) and the dashed independent-jobs line; its lines carry EXACT_GID.
_EXACT_STYLE = ("exact law (product form)", dict(ls="-", lw=0.9, marker="x", ms=3.5))
EXACT_GID = "exact-law"


def _tail_figure(res, occ_cells):

    ns = sorted({s["N"] for s in occ_cells})[:MAX_PANELS]
    fig, axes = plots.grid(len(ns), 1, size=(5.0, 4.2))
    thinned = exact = False
    lows = []
    for ax, n in zip(axes[0], ns):
        allsel = [s for s in occ_cells if s["N"] == n]
        sel = _thin(allsel)
        thinned |= len(sel) < len(allsel)
        k = np.arange(n + 1)
        for s, col in zip(sel, plots.palette(len(sel))):
            p, lo, hi = s["p_ge"], s["p_ge_lo"], s["p_ge_hi"]
            ok = (k >= 1) & (p > 0) & np.isfinite(lo) & np.isfinite(hi)
            pts = (k >= 1) & (p > 0)
            ax.errorbar(k[ok], p[ok], yerr=[p[ok] - lo[ok], hi[ok] - p[ok]], fmt="o", ms=4,
                        color=col, capsize=2,
                        label=_label(s["params"], [q for q in res.grid_keys if q != "N"]))
            ax.plot(k[pts & ~ok], p[pts & ~ok], "o", ms=4, color=col)
            lows.append(p[pts].min() if pts.any() else 1.0)
            zeros = np.flatnonzero((k >= 1) & (s["p_ge_method"] == "zero-bound"))
            if zeros.size:             # at the measured scale: P(n_w >= k) falls with k
                _zero_marker(ax, zeros[0], monotone_bound(s["p_ge_hi"], s["p_ge_method"])[zeros[0]], col)
            if np.any(np.isfinite(s["p_ge_independent"][1:])):
                ax.plot(k[1:], s["p_ge_independent"][1:], color=col, lw=1.2, ls="--")
            if np.any(np.isfinite(s["p_ge_law"][1:])):     # NaN: the law does not cover the cell
                ax.plot(k[1:], s["p_ge_law"][1:], **_EXACT_STYLE[1], color=col, gid=EXACT_GID)
                exact = True
        ax.set_yscale("log")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(max(min(lows) / 3, 1e-12), 1.5)
        plots.readable_log_ticks(ax)
        ax.set_xlabel("k (concurrent writers)")
        ax.set_ylabel(r"$P(n_w \geq k)$ (fraction of time)")
        ax.set_title(f"N = {n}", fontsize=9)
    for ax in axes[0][:len(ns)]:       # after every panel: the law's entry wherever one drew it
        _style_legend(ax, [("independent jobs (dashed)", dict(ls="--")), _BOUND_STYLE]
                      + ([_EXACT_STYLE] if exact else []), below=True)
    _suptitle(fig, f"{res.name}: share of time with at least k writers (points, 95% interval) "
              "vs independent jobs with the same writing fraction (dashed)"
              + (" and the exact law (crosses)" if exact else ""))
    unlike = any(s["independent_law"] == "none" for s in occ_cells)
    caption = ("P(n_w >= k): the fraction of measured time with at least k concurrent writers, "
               "from the exact occupancy summed over each cell's fleets (points), with its 95 % "
               "interval from the spread between independent fleets (delta method of the ratio "
               "estimator, logit scale; blocks of fleets in occupancy = 'sum' mode); a hollow "
               "triangle, never joined to the points, marks an upper bound where no fleet "
               "reached k: the smaller of 1 - 0.05^(1/fleets) and the upper end of the interval "
               "at the deepest level reached (P(n_w >= k) falls with k). Dashed: "
               "N independent jobs each writing the measured fraction of the time (binomial for "
               "identical jobs; the Poisson-binomial of per-job fractions where recorded).")
    if unlike:
        caption += (" Cells whose jobs differ have no dashed line: their independent law is "
                    "the Poisson-binomial of the per-job writing fractions, which this "
                    "result does not record.")
    if exact:
        caption += (" Thin solid line with crosses: the exact long-run law of the cell's fleet "
                    "(the product form, stormsim.stationary), drawn for the cells it covers "
                    "(blocking checkpoints, equal weights, no writer cap, jitter on every job); "
                    "the points approach it as the fleets mix from their launch.")
    if thinned:
        caption += f" Panels with more than {MAX_LINES} cells show every k-th cell."
    return fig, caption


def _storm_figure(res, cells, per_day: bool):
    """Storm rates nu_k against k, one panel per N: storms per day for a job
    table's real times, else per second of simulated time."""
    from matplotlib.ticker import MaxNLocator

    scale, unit = (SECONDS_PER_DAY, "storms per day") if per_day else (1.0, "storms per second")
    ns = sorted({s["N"] for s in cells})[:MAX_PANELS]
    fig, axes = plots.grid(len(ns), 1, size=(5.0, 4.2))
    for ax, n in zip(axes[0], ns):
        sel = _thin([s for s in cells if s["N"] == n])
        k = np.arange(n + 1)
        lows = []
        for s, col in zip(sel, plots.palette(len(sel))):
            r, lo, hi = (np.asarray(s[x], float) * scale
                         for x in ("storms_per_s", "storms_per_s_lo", "storms_per_s_hi"))
            ok = (k >= 1) & (r > 0) & np.isfinite(lo) & np.isfinite(hi)
            ax.errorbar(k[ok], r[ok], yerr=[r[ok] - lo[ok], hi[ok] - r[ok]], fmt="o", ms=4,
                        color=col, capsize=2,
                        label=_label(s["params"], [q for q in res.grid_keys if q != "N"]))
            lows += [r[ok].min()] if ok.any() else []
            zeros = np.flatnonzero((k >= 1) & (s["storms_method"] == "zero-bound"))
            if zeros.size:           # the first level without a storm: its Poisson bound
                _zero_marker(ax, zeros[0], hi[zeros[0]], col)
        ax.set_yscale("log")
        if lows:
            ax.set_ylim(bottom=min(lows) / 3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        plots.readable_log_ticks(ax)
        ax.set_xlabel("k (concurrent writers)")
        ax.set_ylabel(f"{unit} with n_w >= k")
        ax.set_title(f"N = {n}", fontsize=9)
        _style_legend(ax, [("no storm at k: an upper bound (not data)",
                            dict(marker="v", ls="", mfc="none"))], below=True)
    _suptitle(fig, f"{res.name}: storm rate (episodes with at least k writers, 95% interval)")
    caption = (f"The storm rate nu_k in {unit} (episodes with at least k concurrent writers, "
               "counted at their up-crossings, MODEL.md E3"
               + (", per day of the jobs' real time: a job table" if per_day else "")
               + "), with its 95 % interval over the independent fleets (delta method of the "
               "ratio estimator, log scale); a hollow triangle, never joined to the points, "
               "marks the one-sided 95 % Poisson upper bound over the whole measured time at "
               "the first level without a storm.")
    return fig, caption


def _tail_vs_figure(res, occ_cells, xkey):

    others = [k for k in res.grid_keys if k != xkey]
    groups = _groups(occ_cells, others, xkey)
    fig, axes = plots.grid(2, 1, size=(5.4, 4.2))
    logx = _xaxis([s["params"][xkey] for s in occ_cells])
    shown = _thin(list(groups.items()))
    for ax, q in zip(axes[0], (4, 2)):
        lows = []
        for (lab, grp), col in zip(shown, plots.palette(len(shown))):
            xs = np.array([float(s["params"][xkey]) for s in grp])
            kq = [max(1, math.ceil(s["N"] / q)) for s in grp]
            y = np.array([s["p_ge"][k] for s, k in zip(grp, kq)])
            lo = np.array([s["p_ge_lo"][k] for s, k in zip(grp, kq)])
            hi = np.array([monotone_bound(s["p_ge_hi"], s["p_ge_method"])[k] for s, k in zip(grp, kq)])
            ind = np.array([s["p_ge_independent"][k] for s, k in zip(grp, kq)])
            zero = np.array([s["p_ge_method"][k] == "zero-bound" for s, k in zip(grp, kq)])
            plots.series(xs, {lab: (np.where(zero, np.nan, y), np.where(zero, np.nan, lo),
                                    np.where(zero, np.nan, hi))}, ax=ax, logx=logx,
                         logy=True, styles={lab: dict(color=col)})
            if np.any(np.isfinite(ind)):
                ax.plot(xs, ind, color=col, ls="--", lw=1.2)
            for x, b in zip(xs[zero], hi[zero]):
                _zero_marker(ax, x, b, col)
            lows += [v for v in y if v > 0]
        if lows:
            ax.set_ylim(max(1e-12, 0.3 * min(lows)), 1.5)
        plots.readable_log_ticks(ax)
        ax.set_xlabel(xkey)
        ax.set_ylabel(f"P(n_w >= ceil(N/{q}))")
        ax.set_title(f"k = ceil(N/{q})", fontsize=9)
        _style_legend(ax, [("independent jobs (dashed)", dict(ls="--")), _BOUND_STYLE])
    _suptitle(fig, f"{res.name}: upper tail against {xkey} (95% intervals)")
    caption = (f"P(n_w >= k) at k = ceil(N/4) and ceil(N/2) against {xkey}, one line per value "
               "of the other grid keys, with 95 % intervals over fleets; a hollow triangle: no "
               "fleet reached k, an upper bound (the smaller of 1 - 0.05^(1/fleets) and the "
               "upper end at the deepest level reached); dashed: independent jobs.")
    if len(shown) < len(groups):
        caption += f" Only every k-th of {len(groups)} lines is drawn."
    return fig, caption


def _survival_figure(res, pass_cells, xkey):

    others = [k for k in res.grid_keys if k != xkey]
    panels = list(_groups(pass_cells, others, xkey).items())
    shown = _thin(panels, MAX_PANELS)
    fig, axes = plots.grid(len(shown), 1, size=(5.0, 4.2))
    thinned = len(shown) < len(panels)
    for ax, (lab, grp) in zip(axes[0], shown):
        sel = _thin(grp)
        thinned |= len(sel) < len(grp)
        key = [xkey] if xkey is not None else [k for k in res.grid_keys]
        curves = {_label(s["params"], key): (s["t"], s["obs"]) for s in sel}
        plots.survival(curves, ax=ax, band=True, xlabel="fleet cycles until the first passage",
                       ylabel="fraction of fleets not yet passed")
        ax.set_title(plots.wrap(lab, ax.figure.get_figwidth() / len(shown), 9), fontsize=9)
    _suptitle(fig, f"{res.name}: first passage to n_w >= passage level (Kaplan-Meier, 95% band)")
    caption = ("Kaplan-Meier survival of the first passage to n_w >= passage_level (the share of "
               "fleets that have not reached it), fleets censored at the cycle cap included; "
               "shaded: pointwise 95 % log-log band. One panel per value of "
               f"{', '.join(others) or 'the sweep'}, one colour per {xkey or 'cell'}.")
    if thinned:
        caption += " Only every k-th panel or curve is drawn (too many to tell apart)."
    return fig, caption


def _by_group(res, cells, xkey, value) -> tuple[list, dict]:
    """(the x values, {label: (y, lo, hi)}): ``value(summary)`` -> (y, lo, hi) of each
    cell at its x, one series per value of the other keys (thinned)."""
    others = [k for k in res.grid_keys if k != xkey]
    groups = _groups(cells, others, xkey)
    xs_all = sorted({float(s["params"][xkey]) for s in cells})
    ys = {}
    for lab, grp in _thin(list(groups.items())):
        y = np.full(len(xs_all), np.nan)
        lo, hi = y.copy(), y.copy()
        for s in grp:
            i = xs_all.index(float(s["params"][xkey]))
            y[i], lo[i], hi[i] = value(s)
        ys[lab] = (y, lo, hi)
    return xs_all, ys


def _median_point(s) -> tuple[float, float, float]:
    """A cell's median passage and its interval; a median past the cap drawn at the cap."""
    med, mlo, mhi = s["median"]
    return med, mlo if math.isfinite(mlo) else (s["cycles"] if math.isinf(med) else np.nan), mhi


def _median_figure(res, pass_cells, xkey):
    xs_all, ys = _by_group(res, pass_cells, xkey, _median_point)
    fig = plots.series(xs_all, ys, xlabel=xkey, ylabel="median fleet cycles to the passage",
                       logx=_xaxis(xs_all), logy=True)
    ax = fig.axes[0]
    caption = (f"Kaplan-Meier median first passage (95 % Brookmeyer-Crowley interval) against "
               f"{xkey}; a triangle marks a median beyond the cycle cap (more than half the "
               "fleets censored), drawn at the cap.")
    if xkey in REFERENCE_LAWS:
        power, text = REFERENCE_LAWS[xkey]
        x = np.asarray(xs_all)
        fin = [(xi, yi) for v in ys.values() for xi, yi in zip(x, v[0])
               if np.isfinite(yi) and yi > 0 and xi > 0]
        if fin:
            # the law's constant from every finite median (least squares in log)
            c = math.exp(np.mean([math.log(yi) - power * math.log(xi) for xi, yi in fin]))
            ax.plot(x, c * x ** power, color="0.45", ls=":", lw=1.3, label=text, zorder=0)
            ax.legend(fontsize=7)
            caption += (f" Dotted: the law {text.strip('$')} through the finite medians "
                        "(least squares in log), the stagger's diffusive break-up.")
    plots.readable_log_ticks(ax)
    ax.set_title(plots.wrap(f"{res.name}: Kaplan-Meier median first passage (95% CI; "
                            "triangle: beyond the cycle cap)", fig.get_figwidth() * 0.9, 10),
                 fontsize=10)
    return fig, caption


def _goodput_key(res, fail_cells) -> str | None:
    """The grid key to draw goodput against: the numeric key with the most distinct
    finite values among the cells with failures (ties: ``mtbf``), or None."""
    best, best_n = None, 1
    for k in res.grid_keys:
        vals = [s["params"][k] for s in fail_cells]
        try:
            x = np.asarray(vals, dtype=float)
        except (TypeError, ValueError):
            continue
        if not np.all(np.isfinite(x)):
            continue
        n = len(np.unique(x))
        if n > best_n or (n == best_n and k == "mtbf"):
            best, best_n = k, n
    return best


def _goodput_figure(res, fail_cells, xkey):
    """Goodput G (95 % interval) against ``xkey``, one line per value of the other keys."""
    xs_all, ys = _by_group(res, fail_cells, xkey, lambda s: s["goodput"])
    unit = " (s)" if xkey in ("mtbf", "restart", "outage_mtbf", "T", "d") else ""
    fig = plots.series(xs_all, ys, xlabel=xkey + unit, ylabel="goodput G",
                       logx=_xaxis(xs_all))
    fig.axes[0].set_title(plots.wrap(f"{res.name}: goodput against {xkey} (95% CI)",
                                     fig.get_figwidth() * 0.9, 10), fontsize=10)
    caption = (f"Goodput G (committed work over N x the measured window, MODEL.md E8) against "
               f"{xkey}, with its 95 % interval over the independent fleets (ratio estimator, "
               "delta method; stormsim.stats.goodput), for the cells whose jobs fail. Its "
               "parts (writing, lost, down, cap, uncommitted) are in report.md's goodput table.")
    return fig, caption


def _ramp_events(s, window: float, threshold: float) -> tuple:
    """A power cell's (events per day, lo, hi) at a window and threshold (NaN
    where it has no such D and X)."""
    r = s["ramps"]
    if window not in r.windows or threshold not in r.thresholds:
        return (math.nan,) * 3
    a, b = r.windows.index(window), r.thresholds.index(threshold)
    return (r.ramp_events_per_day[a, b], r.ramp_events_per_day_lo[a, b],
            r.ramp_events_per_day_hi[a, b])


def _ramp_figure(res, power_cells, xkey):
    """Ramp events per day (95 % interval) against ``xkey``: a panel per window D,
    a line per threshold X and value of the other grid keys (those with an event
    in some cell)."""
    others = [k for k in res.grid_keys if k != xkey]
    groups = _groups(power_cells, others, xkey)
    xs_all = sorted({float(s["params"][xkey]) for s in power_cells})
    windows = sorted({w for s in power_cells for w in s["ramps"].windows})
    thresholds = sorted({x for s in power_cells for x in s["ramps"].thresholds})
    shown_windows = _thin(windows, MAX_PANELS)
    thinned = len(shown_windows) < len(windows)
    fig, axes = plots.grid(len(shown_windows), 1, size=(5.0, 4.2))
    unit = " (s)" if xkey in ("T", "d", "jitter") else " (W)" if xkey.endswith("_power") else ""
    for ax, window in zip(axes[0], shown_windows):
        lines = [(lab, grp, x) for lab, grp in groups.items() for x in thresholds
                 if any(_ramp_events(s, window, x)[0] > 0 for s in grp)]
        shown = _thin(lines)
        thinned |= len(shown) < len(lines)
        ys = {}
        for lab, grp, threshold in shown:
            y = np.full((3, len(xs_all)), np.nan)
            for s in grp:
                y[:, xs_all.index(float(s["params"][xkey]))] = _ramp_events(s, window, threshold)
            name = f"X={threshold / 1e6:.4g} MW"
            ys[name if lab == "all cells" else f"{lab}, {name}"] = tuple(y)
        pos = [v for y, _, _ in ys.values() for v in y if v > 0]
        plots.series(xs_all, ys, ax=ax, xlabel=xkey + unit, ylabel="ramp events per day",
                     logx=_xaxis(xs_all), logy=bool(pos) and max(pos) >= 10 * min(pos))
        ax.set_title(f"D = {window:g} s", fontsize=9)
    _suptitle(fig, f"{res.name}: power ramps against {xkey} (95% CI)")
    caption = (f"Ramp events per day (the fleet's draw falling by X or more within D seconds, "
               f"MODEL.md E6) against {xkey}, a panel per window D, with their 95 % intervals "
               "over the independent fleets (stormsim.stats.power.ramp_estimate_of), for the "
               "cells with power; a threshold with no event in any cell is left out (its upper "
               "bound is in report.md's power table, with the mean draw and the time shares "
               "with R_D >= X).")
    if thinned:
        caption += " Only every k-th panel or line is drawn (too many to tell apart)."
    return fig, caption


def figures(res) -> list:
    """The report's figures of a Results: [(file name, Figure, caption)]."""
    cells = [_cell_summary(c) for c in res]
    xkey = _main_key(res)
    out = []
    occ_cells = [s for s in cells if s["has_occ"]]
    if occ_cells:
        out.append(("tail.png", *_tail_figure(res, occ_cells)))
        if xkey is not None:
            out.append((f"tail_vs_{xkey}.png", *_tail_vs_figure(res, occ_cells, xkey)))
        stormy = [s for s in occ_cells if np.any(s["storms_method"][1:] == "ratio-log")]
        if stormy:
            out.append(("storms.png", *_storm_figure(res, stormy, physical_units(res))))
    pass_cells = [s for s in cells if "t" in s]
    if pass_cells:
        out.append(("survival.png", *_survival_figure(res, pass_cells, xkey)))
        if xkey is not None:
            out.append((f"median_vs_{xkey}.png", *_median_figure(res, pass_cells, xkey)))
    fail_cells = [s for s in cells if "goodput" in s and np.isfinite(s["goodput"][0])]
    gkey = _goodput_key(res, fail_cells) if fail_cells else None
    if gkey is not None:
        out.append((f"goodput_vs_{gkey}.png", *_goodput_figure(res, fail_cells, gkey)))
    power_cells = [s for s in cells if "ramps" in s]
    rkey = _goodput_key(res, power_cells) if power_cells else None
    if rkey is not None:
        out.append((f"ramp_events_vs_{rkey}.png", *_ramp_figure(res, power_cells, rkey)))
    return out


def main(path: str, outdir: str, levels=DEFAULT_TAIL_LEVELS) -> int:
    """Draw the standard figures of the sweep result at ``path`` into ``outdir``;
    the tables at the tail ``levels`` (integers, 'N' or 'N/q').

    Returns 0. Raises ``stormsim.SweepError`` (a ValueError) when ``path`` is
    not a stormsim sweep result.
    """

    res = open_results(path)
    out = Path(outdir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(os_error_sentence(exc, f"report -o {out}: cannot create the "
                                              "folder")) from None
    figs = []
    for name, fig, caption in figures(res):
        with _writing(out / name):
            fig.savefig(out / name, dpi=110)
        figs.append((name, caption))
    with _writing(out / "report.md"):
        _write_markdown(res, out, figs, _main_key(res), tuple(levels))
    print(f"stormsim report: wrote {fmt_count(len(figs), 'figure')} and report.md to {out}")
    return 0


@contextmanager
def _writing(path: Path):
    """A write of ``path`` that the disk refuses (full, quota, I/O) becomes one
    ResourceError naming the file and what to do; the partial file is removed,
    as a truncated figure or report.md would pass for a whole one."""
    try:
        yield
    except OSError as exc:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            what = "no space left on device" if exc.errno == errno.ENOSPC else "disk quota exceeded"
            raise ResourceError(f"{what} while writing {path}; free space and run the same "
                                "command again") from None
        raise ResourceError(os_error_sentence(exc, "could not write")) from None


def _write_markdown(res, out: Path, figs, xkey, levels) -> None:
    state = "complete" if res.complete else "UNFINISHED (read from the parts written so far)"
    lines = [f"# Sweep report: {res.name}", "",
             f"- result: `{res.path}` ({state}), stormsim {res.version}",
             f"- {res.n_cells} cells, {int(res.fleets_done.sum())}/{int(res.fleets.sum())} fleets; "
             f"grid keys: {', '.join(res.grid_keys) or 'none'}"
             + (f"; figures against `{xkey}`" if xkey else ""), ""]
    if res.description:
        lines += [res.description, ""]
    lines += ["## Cells", "", "```", res.table(levels=levels), "```", ""]
    storms = storms_table_text(res, levels)
    if storms is not None:
        per = "day" if physical_units(res) else "second of simulated time"
        lines += ["## Storms", "",
                  f"Per cell and level k: the storm rate (storms, episodes with at least k jobs "
                  f"writing, counted at their up-crossings, per {per}) and the mean storm "
                  "duration, each with its 95 % interval over the independent fleets (delta "
                  "method of the ratio estimator, log scale). `< b (no storm)`: b a one-sided "
                  "95 % Poisson upper bound over the whole measured time.", "",
                  "```", storms, "```", ""]
    s = res.summary(levels=())
    if np.any(s["checkpoints"] > 0):      # a result written before E7 has none
        lines += ["## Checkpoint durations", "",
                  "Per cell: how long a checkpoint writes (firing to write end) and waits "
                  "(due to firing: a writer cap's queue, MODEL.md E5), over the checkpoints "
                  "that ended in the measured window, with 95 % intervals over the "
                  "independent fleets (`stormsim.stats.durations`).", "",
                  "```", durations_table_text(res, s), "```", ""]
    goodput = goodput_table_text(res, s)
    if goodput is not None:               # cells with failures (MODEL.md E8)
        lines += ["## Goodput", "",
                  "Per cell whose jobs fail (mtbf, outage_mtbf): the goodput G, the share of "
                  "the fleet's time that became durable progress, with its 95 % interval over "
                  "the independent fleets, and the shares that split the rest.", "",
                  "```", goodput, "```", ""]
    power = power_table_text(res, s)
    if power is not None:                 # cells with power (MODEL.md E6)
        lines += ["## Power", "",
                  "Per cell with power (busy_power, idle_power): the fleet's mean draw with its "
                  "95 % interval over the independent fleets, its lowest and highest draw, and "
                  "per ramp window D and threshold X the ramp events per day and the time "
                  "share with R_D >= X, with their intervals.", "",
                  "```", power, "```", ""]
    risk = risk_table_text(res)
    if risk is not None:
        lines += ["## Storm risk", "",
                  "Per cell and level k (`risk_levels`): P(n_w >= k), the storm rate nu_k "
                  "(per second of simulated time, and per day), each with its 95 % interval "
                  "and method, from `stormsim.storm_risk` with the fixed effort shown (exact: "
                  "the product-form law; plain: Monte Carlo over independent fleets; "
                  "splitting: forward flux sampling, over independent replicates). "
                  "`< b (not reached)`: b a one-sided 95 % bound.", "", "```", risk, "```", ""]
    lines += ["## Figures", ""]
    for name, caption in figs:
        lines += [f"![{name}]({name})", "", caption, ""]
    if not figs:
        lines += ["No figure applies: no cell has a measured occupancy or a passage level.", ""]
    lines += ["## The sweep file", "", "```toml", res.sweep_toml.rstrip(), "```", ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")

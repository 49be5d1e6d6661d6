"""matplotlib figures from arrays (fleets on axis 0, as everywhere in stormsim).

Every function draws into ``ax`` when one is given, else into a new
``matplotlib.figure.Figure`` (no pyplot, so no GUI backend and no global
state), and returns the figure. matplotlib is imported only when a figure is
drawn: ``import stormsim`` never needs it. Save with ``fig.savefig(path)``.

Units follow MODEL.md: times in seconds (T = 1 s of compute at full rate
unless the caller says otherwise), phases in cycles (0..1).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

#: Colours cycled by the series of one panel (colour-blind safe, Okabe-Ito).
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#F0E442")
MARKERS = "os^vD<>p"


def _styled(items):
    """(item, colour, marker) for every item, however many: no series is dropped."""
    items = list(items)
    colors = palette(len(items))
    return [(it, c, MARKERS[i % len(MARKERS)]) for i, (it, c) in enumerate(zip(items, colors))]


def _new_figure(ncols: int = 1, nrows: int = 1, size=(6.4, 4.4)):
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("stormsim.plots needs matplotlib: pip install 'stormsim[plots]'") from exc
    fig = Figure(figsize=(size[0] * ncols, size[1] * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _thin(a: np.ndarray, max_points: int) -> np.ndarray:
    """At most max_points of a, evenly spread over it (so every fleet is represented)."""
    if a.size <= max_points:
        return a
    return a[np.linspace(0, a.size - 1, max_points).astype(np.int64)]


def palette(n: int):
    """n distinguishable colours: the qualitative palette, or viridis beyond it."""
    if n <= len(COLORS):
        return list(COLORS[:max(n, 1)])
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(x) for x in np.linspace(0.0, 0.92, n)]


#: A log axis spanning fewer decades than this gets 1-2-5 ticks with plain
#: labels; a wider one one label per decade (or fewer), so labels never crowd.
PLAIN_DECADES = 2.0
#: Most labelled major ticks on a log axis (matplotlib thins by whole decades).
MAX_LOG_LABELS = 8


def _readable_log_locator():
    """A log locator that decides at draw time, from the final view limits,
    between 1-2-5 ticks (narrow axes) and decades (wide ones): limits set after
    the ticks (e.g. a report widening an axis) cannot leave 1-2-5 labels
    crowded over many decades."""
    from matplotlib.ticker import LogLocator

    class ReadableLogLocator(LogLocator):
        def tick_values(self, vmin, vmax):
            lo, hi = sorted((vmin, vmax))
            narrow = lo > 0 and np.log10(hi / lo) < PLAIN_DECADES
            self.set_params(subs=(1.0, 2.0, 5.0) if narrow else (1.0,),
                            numticks=MAX_LOG_LABELS + 2)
            return super().tick_values(vmin, vmax)

    return ReadableLogLocator()


def _readable_log_formatter(axis):
    from matplotlib.ticker import LogFormatterSciNotation

    class ReadableLogFormatter(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            lo, hi = sorted(axis.get_view_interval())
            if lo > 0 and np.log10(hi / lo) < PLAIN_DECADES:
                return f"{x:g}"
            return super().__call__(x, pos)

    return ReadableLogFormatter(labelOnlyBase=False)


def readable_log_ticks(ax):
    """Readable log-axis labels whatever limits the axis ends with: plain
    1, 2, 5 x 10^k under PLAIN_DECADES decades, else at most MAX_LOG_LABELS
    decade labels; no labels on minor ticks (matplotlib's own overlap there)."""
    from matplotlib.ticker import NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log":
            continue
        axis.set_major_locator(_readable_log_locator())
        axis.set_major_formatter(_readable_log_formatter(axis))
        axis.set_minor_formatter(NullFormatter())


def wrap(text: str, width_inches: float, fontsize: float = 10.0) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize``
    (a character is at most ~0.6 em wide in the default sans-serif font)."""
    import textwrap

    chars = max(20, int(width_inches * 72.0 / (0.6 * fontsize)))
    return textwrap.fill(text, chars)


def _ax(ax, size=(6.4, 4.4)):
    if ax is not None:
        return ax.figure, ax
    fig, axes = _new_figure(size=size)
    return fig, axes[0, 0]


def circular_increment(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (delta_k, g_k) with g_k = delta_{k+1} - delta_k wrapped to [-1/2, 1/2).

    delta : (fleets, K) phase gaps (``analysis.phase_gap``). Steps where either
    gap is outside [0, 1) (job 1 skipped a cycle of job 0, so two consecutive
    gaps refer to one firing) or NaN are dropped. Returns two flat arrays.
    """
    delta = np.asarray(delta, dtype=np.float64)
    a, b = delta[:, :-1], delta[:, 1:]
    ok = np.isfinite(a) & np.isfinite(b) & (a >= 0) & (a < 1) & (b >= 0) & (b < 1)
    g = (b - a + 0.5) % 1.0 - 0.5
    return a[ok], g[ok]


def return_map(gaps: Mapping[str, np.ndarray], ax=None, title: str | None = None,
               max_points: int = 20000):
    """delta_{k+1} against delta_k, one colour per series, with the identity.

    gaps : {label: (fleets, K) phase gaps}
    """
    fig, ax = _ax(ax)
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="identity", zorder=0)
    for (label, delta), c, mk in _styled(gaps.items()):
        delta = np.asarray(delta)
        x, y = delta[:, :-1].ravel(), delta[:, 1:].ravel()
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = _thin(x[ok], max_points), _thin(y[ok], max_points)
        ax.scatter(x, y, s=6, color=c, marker=mk, alpha=0.6, label=label, lw=0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel(r"phase gap $\delta_k$ (cycles of job 0)")
    ax.set_ylabel(r"next phase gap $\delta_{k+1}$ (cycles)")
    ax.legend(loc="upper left", fontsize=8, markerscale=2)
    if title:
        ax.set_title(title)
    return fig


def gap_increment(gaps: Mapping[str, np.ndarray], ax=None, log: bool = False,
                  title: str | None = None, floor: float = 1e-17, max_points: int = 40000):
    """The increment g(delta) = delta_{k+1} - delta_k (mod 1) against delta_k.

    gaps : {label: (fleets, K) phase gaps}. With ``log``, |g| on a log axis
    (exact zeros drawn at ``floor``), to show neutrality at rounding level.
    """
    fig, ax = _ax(ax)
    lo, hi = np.inf, -np.inf
    for (label, delta), c, mk in _styled(gaps.items()):
        x, g = circular_increment(delta)
        x, g = _thin(x, max_points), _thin(g, max_points)
        if g.size:
            lo, hi = min(lo, g.min()), max(hi, g.max())
        y = np.maximum(np.abs(g), floor) if log else g
        ax.scatter(x, y, s=5, color=c, marker=mk, alpha=0.6, label=label, lw=0)
    ax.set_xlim(0, 1)
    ax.set_xlabel(r"phase gap $\delta_k$ (cycles of job 0)")
    if log:
        ax.set_yscale("log")
        ax.set_ylabel(rf"$|g(\delta)| = |\delta_{{k+1}} - \delta_k|$ (cycles; 0 drawn at {floor:.0e})")
    else:
        if lo < 0 < hi:
            ax.axhline(0, color="0.6", lw=1, ls="--", zorder=0)
        ax.set_ylabel(r"$g(\delta) = \delta_{k+1} - \delta_k$ (cycles)")
    ax.legend(fontsize=8, markerscale=2)
    if title:
        ax.set_title(title)
    return fig


def spectrum(series: Mapping[str, tuple], ax=None, title: str | None = None):
    """Eigenvalue moduli against the theory's ratio, log-log.

    series : {label: (x, moduli, theory_fn)}, x the abscissa (e.g. (N-j)/j),
        moduli the measured |lambda| at each x, theory_fn(x) the prediction
        (drawn as a line) or None.
    """
    fig, ax = _ax(ax)
    for (label, (x, y, theory)), c, mk in _styled(series.items()):
        x, y = np.asarray(x, float), np.asarray(y, float)
        ax.scatter(x, y, s=28, color=c, marker=mk, facecolors="none", label=f"{label}: measured")
        if theory is not None:
            xs = np.geomspace(x.min(), x.max(), 200)
            ax.plot(xs, theory(xs), color=c, lw=1.2, label=f"{label}: theory")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1, color="0.7", lw=0.8, ls=":")
    readable_log_ticks(ax)
    ax.set_xlabel(r"$(N-j)/j$")
    ax.set_ylabel(r"eigenvalue modulus $|\lambda|$")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def separation(log10_sep: Mapping[str, np.ndarray], ax=None, title: str | None = None,
               examples: int = 0, band: bool = True):
    """log10 separation against cycle: median and interquartile band per series.

    log10_sep : {label: (launches, K)} log10 of the separation (cycles).
    examples : also draw this many single launches per series, thin.
    band : draw the interquartile band (else the median only).
    """
    fig, ax = _ax(ax, size=(7.2, 4.6))
    for (label, y), c, _ in _styled(log10_sep.items()):
        y = np.asarray(y, float)
        k = np.arange(y.shape[1])
        q25, q50, q75 = np.nanquantile(y, [0.25, 0.5, 0.75], axis=0)
        if band:
            ax.fill_between(k, q25, q75, color=c, alpha=0.18, lw=0)
        ax.plot(k, q50, color=c, lw=1.6, label=f"{label} (median, IQR)" if band else label)
        for row in y[:examples]:
            ax.plot(k, row, color=c, lw=0.4, alpha=0.5)
    ax.set_xlabel("cycle k (firings of job 0)")
    ax.set_ylabel(r"$\log_{10}$ separation (phase, cycles)")
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    return fig


def gap_opening(gap_launch: Mapping[str, np.ndarray], gap_end: Mapping[str, np.ndarray],
                ax=None, title: str | None = None):
    """Gap of the pair tightest at launch: at the end against at launch, log-log.

    gap_launch, gap_end : {label: (fleets,)} gaps in cycles.
    """
    fig, ax = _ax(ax)
    lo = hi = None
    for (label, g0), c, mk in _styled(gap_launch.items()):
        g0 = np.asarray(g0, float)
        g1 = np.asarray(gap_end[label], float)
        ok = (g0 > 0) & (g1 > 0)
        ax.scatter(g0[ok], g1[ok], s=6, color=c, marker=mk, alpha=0.5, lw=0, label=label)
        if ok.any():
            lo = min(lo or np.inf, g0[ok].min(), g1[ok].min())
            hi = max(hi or 0, g0[ok].max(), g1[ok].max())
    if lo is not None:
        ax.plot([lo, hi], [lo, hi], color="0.5", ls="--", lw=1, label="unchanged")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("gap of the tightest pair at launch (cycles)")
    ax.set_ylabel("same pair's gap at the end (cycles)")
    ax.legend(fontsize=8, markerscale=2)
    if title:
        ax.set_title(title)
    return fig


def ecdf(samples: Mapping[str, np.ndarray], ax=None, xlabel: str = "", log: bool = True,
         title: str | None = None, styles: Mapping[str, dict] | None = None):
    """Empirical distribution functions of several samples."""
    fig, ax = _ax(ax)
    for (label, x), c, _ in _styled(samples.items()):
        x = np.sort(np.asarray(x, float)[np.isfinite(x)])
        if x.size == 0:
            continue
        kw = dict(color=c, lw=1.4)
        kw.update((styles or {}).get(label, {}))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label, **kw)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of fleets at or below")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def daido_vs_null(labels: Sequence[str], sim: np.ndarray, sim_ci: tuple, null: np.ndarray,
                  null_ci: tuple, orders=(1, 2, 3, 4), ax=None, title: str | None = None):
    """Mean Daido moments Z_m per cell against independent uniform phases.

    sim, null : (cells, len(orders)) means over fleets; sim_ci, null_ci: (lo, hi)
    arrays of the same shape (intervals of the mean).
    """
    fig, ax = _ax(ax, size=(max(6.4, 0.9 * len(labels) + 2), 4.4))
    sim, null = np.asarray(sim, float), np.asarray(null, float)
    x = np.arange(len(labels))
    width = 0.8 / len(orders)
    for m, (order, c) in enumerate(zip(orders, COLORS)):
        xm = x - 0.4 + width * (m + 0.5)
        ax.errorbar(xm, sim[:, m], yerr=[sim[:, m] - sim_ci[0][:, m], sim_ci[1][:, m] - sim[:, m]],
                    fmt="o", color=c, ms=4, capsize=2, label=f"$Z_{order}$ simulated")
        ax.bar(xm, null_ci[1][:, m] - null_ci[0][:, m], bottom=null_ci[0][:, m], width=width * 0.9,
               color=c, alpha=0.25, lw=0, label=f"$Z_{order}$ null (95 %)" if m == 0 else None)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("cell")
    ax.set_ylabel(r"mean Daido moment $Z_m$ over fleets")
    ax.legend(fontsize=7, ncols=2)
    if title:
        ax.set_title(title)
    return fig


def tail_vs_binomial(k: np.ndarray, p_sim: np.ndarray, ci: tuple, p_binom: np.ndarray,  # noqa: PLR0913 (figure options: the caller's surface)
                     ax=None, label: str = "", color=None, title: str | None = None,
                     binom_ci: tuple | None = None):
    """P(n_w >= k) against k: simulated (with interval) and the binomial baseline."""
    fig, ax = _ax(ax)
    c = color or COLORS[0]
    p_sim = np.asarray(p_sim, float)
    ok = p_sim > 0
    ax.errorbar(np.asarray(k)[ok], p_sim[ok], yerr=[p_sim[ok] - np.asarray(ci[0])[ok],
                                                    np.asarray(ci[1])[ok] - p_sim[ok]],
                fmt="o", ms=4, color=c, capsize=2, label=f"{label} simulated".strip())
    ax.plot(k, p_binom, color=c, lw=1.2, ls="--", label=f"{label} independent (binomial)".strip())
    if binom_ci is not None:
        ax.fill_between(k, binom_ci[0], binom_ci[1], color=c, alpha=0.15, lw=0)
    ax.set_yscale("log")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("k (concurrent writers)")
    ax.set_ylabel(r"$P(n_w \geq k)$ (fraction of time)")
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def survival(times: Mapping[str, tuple], ax=None, title: str | None = None,
             xlabel: str = "fleet cycles until the first collision",
             styles: Mapping[str, dict] | None = None,
             ylabel: str = "fraction of fleets without collision", band: bool = False):
    """Kaplan-Meier survival curves of right-censored first-passage times.

    times : {label: (t (n,), observed (n,) bool)}; censored where not observed.
    styles : optional {label: matplotlib line keywords}.
    band : shade each curve's pointwise 95 % log-log confidence band.
    The time axis is logarithmic: events at t <= 0 are drawn at the left edge.
    """
    from .stats.survival import kaplan_meier

    fig, ax = _ax(ax)
    colors = palette(len(times))
    for (label, (t, obs)), c in zip(times.items(), colors):
        t = np.asarray(t, float)
        obs = np.asarray(obs, bool)
        km = kaplan_meier(t, obs)
        tt, S = km.time, km.survival
        pos = t[t > 0]
        start = 0.5 * pos.min() if pos.size else 0.5
        kw = dict(color=c, lw=1.3)
        kw.update((styles or {}).get(label, {}))
        # the curve runs to the last time known (the censoring cap, if any)
        end = max(float(t.max()) if t.size else start, start)
        ax.step(np.concatenate([[start], np.maximum(tt, start), [end]]),
                np.concatenate([[1.0], S, [S[-1] if S.size else 1.0]]), where="post",
                label=label, **kw)
        if band and S.size:
            xs = np.concatenate([[start], np.maximum(tt, start), [end]])
            lo = np.concatenate([[1.0], km.lower, [km.lower[-1]]])
            hi = np.concatenate([[1.0], km.upper, [km.upper[-1]]])
            ax.fill_between(xs, lo, hi, step="post", color=kw["color"], alpha=0.18, lw=0)
    ax.axhline(0.5, color="0.6", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def power_law_fit(x: Mapping[str, np.ndarray], y: Mapping[str, tuple], fits: Mapping[str, tuple],
                  ax=None, xlabel: str = "", ylabel: str = "", title: str | None = None):
    """Points with intervals and fitted power laws y = c x^p, log-log.

    x : {label: (n,)}; y : {label: (est, lo, hi)} each (n,); fits :
    {label: (c, p)} (or None) drawn as lines over the label's x range.
    """
    fig, ax = _ax(ax)
    for (label, xs), c, mk in _styled(x.items()):
        xs = np.asarray(xs, float)
        est, lo, hi = (np.asarray(v, float) for v in y[label])
        ok = np.isfinite(est) & (est > 0)
        lo_err = np.where(np.isfinite(lo), est - lo, 0)[ok]
        hi_err = np.where(np.isfinite(hi), hi - est, 0)[ok]
        ax.errorbar(xs[ok], est[ok], yerr=[lo_err, hi_err], fmt=mk, color=c, ms=5, capsize=2,
                    mfc="none", label=label)
        fit = fits.get(label)
        if fit is not None:
            cc, p = fit
            xx = np.geomspace(xs.min(), xs.max(), 100)
            ax.plot(xx, cc * xx ** p, color=c, lw=1.1,
                    label=f"{label}: fit {cc:.3g} x^{p:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def occupancy(occ: Mapping[str, np.ndarray], ax=None, title: str | None = None,
              baseline: bool = True):
    """Share of time with exactly n writers, pooled over fleets, log scale.

    occ : {label: (fleets, N + 1) occupancy times (s)}. With ``baseline``,
    the binomial law of independent jobs with the same writing fraction is
    drawn dashed.
    """
    from scipy.stats import binom

    fig, ax = _ax(ax)
    for (label, o), c, _ in _styled(occ.items()):
        o = np.asarray(o, float)
        frac = o.sum(axis=0) / o.sum()
        n = np.arange(frac.size)
        ax.plot(n, np.where(frac > 0, frac, np.nan), "o-", ms=3, color=c, lw=1, label=label)
        if baseline:
            p = float(np.dot(n, frac)) / (frac.size - 1)
            ax.plot(n, binom.pmf(n, frac.size - 1, p), color=c, ls="--", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel(r"concurrent writers $n_w$")
    ax.set_ylabel("fraction of time (dashed: independent jobs)")
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def heatmap(z: np.ndarray, x: Sequence, y: Sequence, ax=None, xlabel: str = "", ylabel: str = "",  # noqa: PLR0913 (figure options: the caller's surface)
            zlabel: str = "", title: str | None = None, log: bool = False, fmt: str = "{:.2g}"):
    """A labelled grid of values z[y, x] with the numbers written in the cells."""
    from matplotlib.colors import LogNorm

    fig, ax = _ax(ax, size=(max(5.0, 0.8 * len(x) + 2), max(3.5, 0.5 * len(y) + 1.5)))
    z = np.asarray(z, float)
    norm = None
    if log and np.any(z > 0):
        norm = LogNorm(vmin=np.nanmin(z[z > 0]), vmax=np.nanmax(z))
    im = ax.imshow(np.ma.masked_invalid(z), origin="lower", aspect="auto", cmap="viridis",
                   norm=norm)
    ax.set_xticks(range(len(x)), [str(v) for v in x], fontsize=8)
    ax.set_yticks(range(len(y)), [str(v) for v in y], fontsize=8)
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            if np.isfinite(z[i, j]):
                ax.text(j, i, fmt.format(z[i, j]), ha="center", va="center", fontsize=7,
                        color="w")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(im, ax=ax, label=zlabel)
    if title:
        ax.set_title(title)
    return fig


def series(x, ys: Mapping[str, tuple], ax=None, xlabel: str = "", ylabel: str = "",  # noqa: PLR0913 (figure options: the caller's surface)
           title: str | None = None, logx: bool = False, logy: bool = False,
           styles: Mapping[str, dict] | None = None, xticklabels: Sequence[str] | None = None):
    """Lines with optional error bars against one abscissa.

    x : (n,) abscissa (finite); ys : {label: (y, lo, hi)} each (n,), lo/hi may be
    None or NaN where there is no interval; ``y = +inf`` (e.g. a median beyond
    the cycle cap) is drawn as an upward triangle at ``lo`` when that is finite.
    """
    fig, ax = _ax(ax)
    x = np.asarray(x, float)
    colors = palette(len(ys))
    for (label, (y, lo, hi)), c in zip(ys.items(), colors):
        y = np.asarray(y, float)
        lo = np.full_like(y, np.nan) if lo is None else np.asarray(lo, float)
        hi = np.full_like(y, np.nan) if hi is None else np.asarray(hi, float)
        kw = dict(color=c, ms=5, lw=1.2, marker="o", mfc="none")
        kw.update((styles or {}).get(label, {}))
        fin = np.isfinite(y) & ((y > 0) if logy else True)
        ax.plot(x[fin], y[fin], label=label, **kw)
        err = fin & np.isfinite(lo) & np.isfinite(hi)
        if err.any():
            ax.errorbar(x[err], y[err], yerr=[y[err] - lo[err], hi[err] - y[err]], fmt="none",
                        ecolor=kw["color"], capsize=2, lw=0.9)
        beyond = np.isposinf(y) & np.isfinite(lo)
        if beyond.any():
            ax.scatter(x[beyond], lo[beyond], marker="^", color=kw["color"], s=30)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if xticklabels is not None:
        ax.set_xticks(x, xticklabels, rotation=30, ha="right", fontsize=8)
    readable_log_ticks(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ys:
        ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def grid(ncols: int, nrows: int = 1, size=(5.0, 4.0)):
    """A new figure with a (nrows, ncols) array of axes, for composite figures."""
    return _new_figure(ncols, nrows, size)


def mosaic(layout, size=(12.0, 8.0)):
    """A new figure from a matplotlib mosaic layout, e.g. [["a", "b"], ["c", "c"]];
    returns (fig, {name: axes})."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplot_mosaic(layout)

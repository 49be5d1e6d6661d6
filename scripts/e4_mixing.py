"""E4m: mixing: how long until the long-run law applies.

The base model's long-run law is known exactly (``stormsim.stationary``,
MODEL.md "The stationary law"), but a fleet starts from a launch. For
identical fleets (fair f, uncapped) this measures, from a stagger, a sync and
a random launch, the storm rate nu_k (k = 2, 4, 6) in consecutive windows of
cycles against the law's nu_k, for sigma / T from 0.002 to 0.05, and reports
the cycles until the rate stays within 10 % of the law, with its scaling in
sigma. With sigma = 0 it measures what a random launch keeps instead.

Windows: the grid 0 = b_0 < b_1 < ... (geometric, ratio GRID_RATIO). Window
i is [b_i, b_(i+1)] cycles, from ``simulate(fleet, cycles=b_(i+1),
burn_in=b_i, seed=s)`` with the SAME seed for every i: fleet j's trajectory
depends only on (seed, j), so the windows tile one history of the same fleets
(checked: their occupancies add up to one run's over [0, b_last] to 1e-9).

    .venv/bin/python scripts/e4_mixing.py [--quick] [--data cache.npz]
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

import _common as C
import stormsim
from stormsim import plots

T = 1.0
LEVELS = (2, 4, 6)
LAUNCHES = ("stagger", "sync", "random")
#: Within this relative distance of the law's nu_k a window counts as mixed.
BAND = 0.10
#: Geometric ratio of the window grid (windows widen with the time since launch).
GRID_RATIO = 1.4
#: |z| bound of the final check (the last windows pooled against the law):
#: Bonferroni over every (cell, launch, level) test of the entry at 1 % family-wise.
Z_TOL = 4.0


def horizon(sigma: float) -> int:
    """The last cycle measured: 0.2 (T / sigma)^2 (the time for phases to
    diffuse over ~0.45 T), at least 200 cycles."""
    return int(max(200, round(0.2 * (T / sigma) ** 2)))


def window_grid(b_max: int) -> np.ndarray:
    b = [0, 1, 2, 3, 4]
    while b[-1] < b_max:
        b.append(max(b[-1] + 1, int(round(b[-1] * GRID_RATIO))))
    return np.array(b, dtype=np.int64)


def windows(fleet, launch, grid, fleets, seed):
    """Per fleet and window: measured seconds (F, W) and up-crossings (F, W, N + 1)."""
    secs, ups = [], []
    for b0, b1 in zip(grid[:-1], grid[1:]):
        r = stormsim.simulate(fleet, launch=launch, fleets=fleets, cycles=int(b1),
                              burn_in=int(b0), seed=seed)
        secs.append(r.occupancy.sum(axis=1))
        ups.append(r.upcrossings)
    secs, ups = np.stack(secs, axis=1), np.stack(ups, axis=1)
    # the windows tile one history: their times add up to one run over [0, b_last]
    whole = stormsim.simulate(fleet, launch=launch, fleets=fleets, cycles=int(grid[-1]),
                              seed=seed)
    err = np.abs(secs.sum(axis=1) - whole.occupancy.sum(axis=1)) / whole.occupancy.sum(axis=1)
    assert err.max() < 1e-9, f"windows are not one history: {err.max():.2e}"
    return secs, ups


def mixing_cycles(ratio, grid):
    """Start of the first window from which every later window's ratio is
    within BAND of 1 (ratio: (..., W)); inf where the last window is outside."""
    out_band = np.abs(ratio - 1.0) > BAND
    w = ratio.shape[-1]
    # index of the last window outside the band (-1: none)
    last_out = np.where(out_band.any(axis=-1), w - 1 - np.argmax(out_band[..., ::-1], axis=-1), -1)
    start = np.where(last_out + 1 < w, grid[np.minimum(last_out + 1, w - 1)], np.inf)
    return np.where(last_out == w - 1, np.inf, start).astype(float)


def analyse(secs, ups, law_nu, grid, rng, n_boot):
    """Window ratios nu_hat / nu_law, their bootstrap intervals, the mixing
    cycles and theirs, and the pooled final-window z against the law."""
    ks = np.array(LEVELS)
    cnt = ups[:, :, ks]                                   # (F, W, L)
    nu = cnt.sum(axis=0) / secs.sum(axis=0)[:, None]      # (W, L)
    ratio = nu / law_nu[ks]
    f = secs.shape[0]
    wts = rng.multinomial(f, np.full(f, 1.0 / f), size=n_boot).astype(float)   # (B, F)
    num = np.einsum("bf,fwl->bwl", wts, cnt)
    den = wts @ secs
    rboot = num / den[:, :, None] / law_nu[ks]            # (B, W, L)
    lo, hi = C.percentile_ci(rboot)
    cmix = mixing_cycles(np.moveaxis(ratio, -1, 0), grid)            # (L,)
    cboot = mixing_cycles(np.moveaxis(rboot, -1, 1), grid)           # (B, L)
    # worst over levels: the fleet's mixing time at these levels
    cmix_all = cmix.max()
    cboot_all = cboot.max(axis=1)
    # final check: windows from half the horizon on, pooled
    tail = grid[:-1] >= grid[-1] / 2
    fin = cnt[:, tail].sum(axis=1) / secs[:, tail].sum(axis=1)[:, None]    # per fleet (F, L)
    pooled = cnt[:, tail].sum(axis=(0, 1)) / secs[:, tail].sum()
    # ratio-of-means standard error over fleets (delta method)
    t_f = secs[:, tail].sum(axis=1)
    resid = cnt[:, tail].sum(axis=1) - pooled[None, :] * t_f[:, None]
    se = np.sqrt((resid ** 2).sum(axis=0) / (f * (f - 1))) / t_f.mean()
    z = (pooled - law_nu[ks]) / se
    del fin
    return dict(ratio=ratio, lo=lo, hi=hi, cmix=cmix, cboot=cboot, cmix_all=cmix_all,
                cboot_all=cboot_all, final=pooled / law_nu[ks], z=z)


def ci_cycles(boot):
    """Percentile interval of bootstrap mixing times (inf kept: an upper end of
    inf means some resamples never mixed within the horizon)."""
    b = np.sort(np.asarray(boot, dtype=float))
    a = (1.0 - C.CI_LEVEL) / 2.0
    return b[int(math.floor(a * (b.size - 1)))], b[int(math.ceil((1 - a) * (b.size - 1)))]


def fit_power(x, y):
    """Least squares log y = a + alpha log x: (alpha, lo, hi, prefactor)."""
    from scipy.stats import t as student

    lx, ly = np.log(x), np.log(y)
    A = np.vstack([np.ones_like(lx), lx]).T
    coef, res, *_ = np.linalg.lstsq(A, ly, rcond=None)
    n = lx.size
    if n <= 2:
        return coef[1], np.nan, np.nan, math.exp(coef[0])
    s2 = float(((ly - A @ coef) ** 2).sum()) / (n - 2)
    se = math.sqrt(s2 / ((lx - lx.mean()) ** 2).sum())
    q = student.ppf(0.5 + C.CI_LEVEL / 2, n - 2)
    return coef[1], coef[1] - q * se, coef[1] + q * se, math.exp(coef[0])


def deterministic(n, load, fleets, cycles, burn_in, seed):
    """sigma = 0: per-fleet nu_k over [burn_in, cycles] from each launch."""
    fleet = stormsim.Fleet.identical(n, T=T, load=load, jitter=0.0)
    out = {}
    for launch in LAUNCHES:
        r = stormsim.simulate(fleet, launch=launch, fleets=fleets, cycles=cycles,
                              burn_in=burn_in, seed=seed)
        secs = r.occupancy.sum(axis=1)
        out[launch] = r.upcrossings[:, list(LEVELS)] / secs[:, None]      # (F, L)
    return out


def compute(args):
    cells = {}
    for (n, load, sigmas, fleets) in args.cells:
        law = stormsim.stationary(stormsim.Fleet.identical(n, T=T, load=load, jitter=0.01))
        for sigma in sigmas:
            fleet = stormsim.Fleet.identical(n, T=T, load=load, jitter=sigma)
            grid = window_grid(args.horizon(sigma))
            for launch in LAUNCHES:
                c0 = time.process_time()
                secs, ups = windows(fleet, launch, grid, fleets, args.seed + n)
                cells[(n, load, sigma, launch)] = dict(secs=secs, ups=ups, grid=grid,
                                                       law=law.storms_per_s.copy())
                print(f"N={n} L={load} sigma={sigma} {launch}: {time.process_time() - c0:.1f} "
                      "CPU s", flush=True)
    det = deterministic(16, 0.6, args.det_fleets, args.det_cycles, args.det_cycles // 10,
                        args.seed)
    return cells, det


def save_data(path, cells, det):
    flat = {}
    for i, (key, c) in enumerate(cells.items()):
        flat[f"key{i}"] = np.array([str(x) for x in key])
        for name, v in c.items():
            flat[f"{name}{i}"] = v
    for launch, v in det.items():
        flat[f"det_{launch}"] = v
    np.savez_compressed(path, **flat)


def load_data(path):
    z = np.load(path)
    cells, det, i = {}, {}, 0
    while f"key{i}" in z:
        k = z[f"key{i}"]
        key = (int(k[0]), float(k[1]), float(k[2]), str(k[3]))
        cells[key] = {name: z[f"{name}{i}"] for name in ("secs", "ups", "grid", "law")}
        i += 1
    for launch in LAUNCHES:
        det[launch] = z[f"det_{launch}"]
    return cells, det


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--data", default=None,
                   help="npz cache of the simulations (read if it exists, else written)")
    args = p.parse_args(argv)
    t0 = C.start(args)
    sig_main = C.pick(args, (0.02, 0.05), (0.002, 0.005, 0.01, 0.02, 0.05))
    sig_other = C.pick(args, (), (0.005, 0.01, 0.02, 0.05))
    args.cells = [(16, 0.6, sig_main, C.pick(args, 64, 512))]
    if sig_other:
        args.cells += [(64, 0.6, sig_other, 256), (16, 0.9, sig_other, 512)]
    args.horizon = (lambda s: 120) if args.quick else horizon
    args.det_fleets = C.pick(args, 32, 256)
    args.det_cycles = C.pick(args, 200, 2000)
    rng = np.random.default_rng(args.seed)
    n_boot = C.pick(args, 100, 400)

    cached = bool(args.data and Path(args.data).exists())
    if cached:
        cells, det = load_data(args.data)
    else:
        cells, det = compute(args)
        if args.data:
            save_data(args.data, cells, det)

    res = {key: analyse(c["secs"], c["ups"], c["law"], c["grid"], rng, n_boot)
           for key, c in cells.items()}

    # -- tables ----------------------------------------------------------------
    table = []
    for (n, load, sigma, launch), r in res.items():
        grid = cells[(n, load, sigma, launch)]["grid"]
        row = [n, f"{load:g}", f"{sigma:g}", launch, cells[(n, load, sigma, launch)]["secs"].shape[0],
               int(grid[-1])]
        for j in range(len(LEVELS)):
            lo, hi = ci_cycles(r["cboot"][:, j])
            row.append(f"{C.fmt(r['cmix'][j])} [{C.fmt(lo)}, {C.fmt(hi)}]")
        lo, hi = ci_cycles(r["cboot_all"])
        row.append(f"{C.fmt(r['cmix_all'])} [{C.fmt(lo)}, {C.fmt(hi)}]")
        row.append(", ".join(f"{x:.3f}" for x in r["final"]))
        row.append(", ".join(f"{x:+.1f}" for x in r["z"]))
        table.append(row)
    body = C.md_table(["N", "L", "sigma/T", "launch", "fleets", "horizon (cycles)"]
                      + [f"mixed at k = {k}" for k in LEVELS]
                      + ["mixed (all three k)", "final nu / law (k = 2, 4, 6)",
                         "final z (k = 2, 4, 6)"], table)

    # scaling fits: cycles to mix against T / sigma, per cell and launch, for all three
    # levels together and for k = 2 alone (the level with the least noise)
    fits, fits2, fit_rows = {}, {}, []
    for (n, load, sigmas, _) in args.cells:
        for launch in LAUNCHES:
            s = np.array(sigmas)
            row = [n, f"{load:g}", launch]
            for store, col in ((fits, None), (fits2, 0)):
                cm = np.array([res[(n, load, sg, launch)]["cmix_all"] if col is None
                               else res[(n, load, sg, launch)]["cmix"][col] for sg in sigmas])
                ok = np.isfinite(cm) & (cm > 0)
                if launch == "random":      # starts near the law: a transient, not a scaling
                    row += [int(ok.sum()), "n/a (no scaling)", "n/a"]
                elif ok.sum() >= 2:
                    a, alo, ahi, pre = fit_power(T / s[ok], cm[ok])
                    store[(n, load, launch)] = (a, alo, ahi, pre, s[ok], cm[ok])
                    row += [int(ok.sum()), C.fmt_ci(a, alo, ahi), C.fmt(pre)]
                else:
                    row += [int(ok.sum()), "n/a (mixed in the first window or never)", "n/a"]
            fit_rows.append(row)
    body += ("\n\nScaling: cycles to mix = A (T / sigma)^alpha, least squares on the log scale over "
             "the sigma values where it is finite and > 0 (Student-t 95 % interval on alpha), for all "
             "three levels and for k = 2 alone (not fitted for the random launch: it starts near the "
             "law, its mixing time is the launch transient, 0-3 cycles at k = 2 and 4, plus the noise "
             "of the k = 6 windows, with no trend in sigma):\n\n"
             + C.md_table(["N", "L", "launch", "sigma values", "alpha (all k)", "A (all k)",
                           "sigma values (k = 2)", "alpha (k = 2)", "A (k = 2)"], fit_rows))

    # sigma = 0
    law16 = cells[next(k for k in cells if k[0] == 16 and k[1] == 0.6)]["law"]
    ks = np.array(LEVELS)
    det_rows = []
    for launch in LAUNCHES:
        v = det[launch] / law16[ks]                        # (F, L) per-fleet ratios
        m = v.mean(axis=0)
        idx = C.bootstrap_indices(v.shape[0], rng)
        lo, hi = C.percentile_ci(v[idx].mean(axis=1))
        q05, q95 = np.quantile(v, 0.05, axis=0), np.quantile(v, 0.95, axis=0)
        det_rows.append([launch] + [f"{C.fmt_ci(m[j], lo[j], hi[j])}; fleets 5-95 %: "
                                    f"{C.fmt(q05[j])}..{C.fmt(q95[j])}" for j in range(len(LEVELS))])
    body += (f"\n\nsigma = 0 (N = 16, L = 0.6; {args.det_fleets} fleets, cycles "
             f"{args.det_cycles // 10}..{args.det_cycles}): each fleet's nu_k over the window / the "
             "law's nu_k; mean over fleets [95 % bootstrap CI] and the central 90 % of fleets:\n\n"
             + C.md_table(["launch"] + [f"k = {k}" for k in LEVELS], det_rows))
    rdet = det["random"] / law16[ks]
    rdet_mean = rdet.mean(axis=0)

    # -- checks -------------------------------------------------------------------
    zs = [(key, j, r["z"][j]) for key, r in res.items() for j in range(len(LEVELS))
          if np.isfinite(r["cmix"][j]) and r["cmix"][j] <= cells[key]["grid"][-1] / 4]
    worst = max(abs(z) for *_, z in zs)
    assert worst <= Z_TOL, f"a mixed cell disagrees with the law: {max(zs, key=lambda x: abs(x[2]))}"

    # -- figure -----------------------------------------------------------------------
    fig, axes = plots.grid(2, 2, size=(6.2, 4.4))
    main_cell = args.cells[0]
    colors = plots.palette(len(main_cell[2]))
    j4 = LEVELS.index(4)
    for ax, launch in zip((axes[0][0], axes[0][1], axes[1][0]), ("sync", "stagger", "random")):
        for sigma, col in zip(main_cell[2], colors):
            key = (main_cell[0], main_cell[1], sigma, launch)
            g = cells[key]["grid"]
            r = res[key]
            ax.plot(g[1:], r["ratio"][:, j4], color=col, marker=".", ms=3,
                    label=f"sigma = {sigma:g} T")
            ax.fill_between(g[1:], r["lo"][:, j4], r["hi"][:, j4], color=col, alpha=0.2, lw=0)
        ax.axhspan(1 - BAND, 1 + BAND, color="0.85", zorder=0, label="law +- 10 %")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xscale("log")
        ax.set_ylim(0, 2)
        ax.set_xlabel("cycles since launch (end of the window)")
        ax.set_ylabel(f"nu_{LEVELS[j4]} in the window / the law's nu_{LEVELS[j4]}")
        ax.set_title(f"{launch} launch, N = {main_cell[0]}, L = {main_cell[1]:g}, k = {LEVELS[j4]} "
                     "(band: 95 % CI)")
        plots.readable_log_ticks(ax)
    axes[0][0].legend(fontsize=7, loc="lower right")
    ax = axes[1][1]
    cell_colors = dict(zip([(c[0], c[1]) for c in args.cells], plots.palette(len(args.cells))))
    marks = {"stagger": "s", "sync": "o", "random": "x"}
    lines = {"stagger": ":", "sync": "-"}
    for (n, load, sigmas, _) in args.cells:
        col = cell_colors[(n, load)]
        for launch in LAUNCHES:
            s = np.array(sigmas)
            cm = np.array([res[(n, load, sg, launch)]["cmix_all"] for sg in sigmas])
            shown = np.isfinite(cm) & (cm > 0)
            ax.plot(T / s[shown], cm[shown], marker=marks[launch], lw=0, color=col,
                    mfc="none" if launch != "random" else col)
            f = fits.get((n, load, launch))
            if f is not None and launch in lines:
                a, _lo, _hi, pre, fs, _cm = f
                xx = np.geomspace((T / fs).min(), (T / fs).max(), 20)
                ax.plot(xx, pre * xx ** a, color=col, ls=lines[launch],
                        label=f"N={n}, L={load:g}, {launch} ({'circles' if launch == 'sync' else 'squares'})"
                              f": alpha = {a:.2f}")
    ax.plot([], [], marker="x", lw=0, color="0.4", label="x: random launch (no trend, no fit)")
    xr = np.array([T / max(main_cell[2]), T / min(main_cell[2])])
    ax.plot(xr, 0.5 * xr, color="0.6", lw=0.8, ls="-.", label="slope 1")
    ax.plot(xr, 0.5 * xr ** 2 / xr[0], color="0.6", lw=0.8, ls=(0, (1, 3)),
            label="slope 2 (diffusive guess)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T / sigma")
    ax.set_ylabel("cycles until nu_2, nu_4, nu_6 all stay within 10 %")
    ax.set_title("cycles to mix against jitter (fit A (T/sigma)^alpha)")
    ax.legend(fontsize=6, loc="upper left")
    plots.readable_log_ticks(ax)
    f1 = C.save(fig, args, "e4_mixing")

    # -- entry ------------------------------------------------------------------------
    def verdict_word(a, alo, ahi):
        if ahi < 2:
            return f"faster than diffusive: ~ (T/sigma)^{a:.2f}, not (T/sigma)^2"
        if alo > 2:
            return f"slower than diffusive: ~ (T/sigma)^{a:.2f}"
        return "consistent with diffusive (T/sigma)^2"

    rows = []
    for launch in ("sync", "stagger"):
        f = fits.get((16, 0.6, launch))
        if f is None:
            continue
        a, alo, ahi, pre, s, cm = f
        rows.append((f"(no paper figure) N = 16, L = 0.6, {launch} launch: cycles to mix against "
                     "sigma",
                     f"{', '.join(f'{C.fmt(c)} at {sg:g} T' for c, sg in zip(cm, s))}; "
                     f"alpha = {C.fmt_ci(a, alo, ahi)}", verdict_word(a, alo, ahi)))
    rmix = [res[(16, 0.6, sg, "random")]["cmix"] for sg in args.cells[0][2]]

    def span(j):
        lo, hi = int(min(r[j] for r in rmix)), int(max(r[j] for r in rmix))
        return f"{lo}" if lo == hi else f"{lo}-{hi}"

    rows.append(("(no paper figure) N = 16, L = 0.6, random launch: cycles to mix",
                 f"k = 2: {span(0)}, k = 4: {span(1)} cycles over sigma = "
                 f"{min(args.cells[0][2]):g}..{max(args.cells[0][2]):g} T",
                 "starts near the law: only the launch transient, no trend in sigma"))
    rows.append(("(no paper figure) sigma = 0, random launch: average over launches against the law",
                 f"nu_k / law = {', '.join(f'{x:.3f}' for x in rdet_mean)} (k = 2, 4, 6); single "
                 f"fleets at k = 6: {C.fmt(np.quantile(rdet[:, -1], 0.05))}..."
                 f"{C.fmt(np.quantile(rdet[:, -1], 0.95))} (central 90 %)",
                 "the average over launches is the law; no single fleet's is"
                 if np.all(np.abs(rdet_mean - 1) < BAND) else "not the law"))

    definition = f"""
Identical fleets (T = 1 s, fair f, uncapped; N = 16 at L = 0.6 for sigma / T in
{', '.join(f'{s:g}' for s in args.cells[0][2])}{'; N = 64 at L = 0.6 and N = 16 at L = 0.9 for '
+ ', '.join(f'{s:g}' for s in sig_other) if sig_other else ''}), launched in a stagger, in sync, or at
random (a fresh draw per fleet). Windows of cycles [b_i, b_(i+1)]: b = 0, 1, 2, 3, 4, then x{GRID_RATIO}
(rounded) up to the horizon max(200, 0.2 (T / sigma)^2) cycles; window i is `simulate(fleet, launch,
cycles=b_(i+1), burn_in=b_i, seed)` with the same seed for every i, so the windows tile one history of the
same fleets (asserted: their times add up to one run's over [0, b_last] to 1e-9). nu_k of a window =
up-crossings into n_w >= k summed over fleets / measured seconds summed over fleets; the law's nu_k is
`stormsim.stationary` (exact). **Cycles to mix** at level k = the start b_j of the first window from which
every later window's nu_k is within {BAND:.0%} of the law's (inf: the last window is outside); "all three
k" = the largest of the three. Its interval: percentile bootstrap over fleets ({n_boot} resamples; the
fleets are resampled jointly for all windows and the mixing time recomputed), so it carries the sampling
noise and the grid's resolution (one grid step is {GRID_RATIO}x); k = 6 is the noisiest level (few
storms, and at small sigma the fleets' rates differ for a long time), which widens the upper ends.
Final check: the windows from half the horizon on, pooled, against the law (z with the ratio-of-means
standard error over fleets), asserted |z| <= {Z_TOL:g} wherever the level mixed before a quarter of the
horizon (Bonferroni: ~120 tests at 1 % family-wise). sigma = 0: each fleet's nu_k over cycles
{args.det_cycles // 10}..{args.det_cycles}, {args.det_fleets} fleets per launch."""

    def fit_text(f, name):
        if f is None:
            return f"{name}: no fit"
        a, alo, ahi, pre, s, cm = f
        return (f"{name}: {', '.join(f'{C.fmt(c)}' for c in cm)} cycles at sigma = "
                f"{', '.join(f'{sg:g}' for sg in s)} T, i.e. {C.fmt(pre)} (T / sigma)^{a:.2f} (alpha "
                f"95 % CI [{alo:.2f}, {ahi:.2f}])")

    others = [f"N = {n}, L = {load:g} {launch}: alpha = {C.fmt_ci(*fits[(n, load, launch)][:3])}"
              for (n, load, _, _) in args.cells[1:] for launch in ("sync", "stagger")
              if (n, load, launch) in fits]
    verdict = (
        "From a launch the storm rates reach the long-run law as the jitter mixes the phases, and how "
        "long that takes depends on the launch and on sigma. At N = 16, L = 0.6 (all three levels "
        "within 10 %): " + "; ".join(fit_text(fits.get((16, 0.6, lw)), lw) for lw in ("sync", "stagger"))
        + (". k = 2 alone (the least noisy level): " + "; ".join(
            f"{lw} alpha = {C.fmt_ci(*fits2[(16, 0.6, lw)][:3])}" for lw in ("sync", "stagger")
            if (16, 0.6, lw) in fits2))
        + (". Other cells (all three levels): " + "; ".join(others)
           + " (where this and the k = 2 exponent in the table differ, k = 6's window noise sets "
           "the all-level times)" if others else "")
        + ". So a fleet started in sync or in a stagger mixes in about T / sigma cycles (alpha near 1; "
        "about 80 cycles at sigma = 0.01 T from sync), far faster than the diffusive guess (T / sigma)^2 "
        "(phases diffusing as sigma sqrt(cycles) over a whole cycle: 10 000 cycles at sigma = 0.01 T). "
        "Why the exponent is near 1 is not established here. The random launch starts near the law: "
        "k = 2 and 4 are within 10 % after its first 0-3 cycles whatever sigma, and its k = 6 times "
        "(up to ~200 cycles) are set by window noise, not a trend. With sigma = 0 no fleet mixes: the "
        "sync launch keeps one storm of every level per cycle (nu_2 0.157 x the law's, nu_6 3.3 x) and "
        "the stagger never collides; each random launch keeps its own rates (k = 6: "
        f"{C.fmt(np.quantile(rdet[:, -1], 0.05))} to {C.fmt(np.quantile(rdet[:, -1], 0.95))} x the law "
        f"over the central 90 % of fleets), but their average over launches is "
        f"{', '.join(f'{x:.3f}' for x in rdet_mean)} x the law's nu_2, nu_4, nu_6 (95 % CIs in the "
        "table): MODEL.md allows the law to be at most that average at sigma = 0, and here it is, "
        f"within the intervals. Final windows against the law, where mixed: worst |z| = {worst:.1f} over {len(zs)} "
        f"tests (bound {Z_TOL:g}).")
    if cached:
        definition += ("\n\nThe simulations were read from the `--data` cache written by an earlier full run "
                       "of this script (the same parameters and seeds); the wall time above is the "
                       "analysis alone.")
    C.append_results(args, "E4m", "mixing: how long until the long-run law applies", definition,
                     body, verdict, [f1], t0, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

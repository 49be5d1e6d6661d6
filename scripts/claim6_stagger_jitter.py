"""Claim 6: how long a stagger survives compute jitter.

Identical uncapped jobs (T = 1, fair f, load L) launched in a stagger: write
starts equally spaced by (T + d)/N, margin m = (T + d)/N - d between the end of
one write and the start of the next. Each compute interval after the first is
T + sigma xi. For m/sigma over more than two decades and N in {4, 8, 16}: the
median number of fleet cycles until the first collision (n_w reaches 2), by
Kaplan-Meier over right-censored fleets, and the fit median = c(N) (m/sigma)^p.

    .venv/bin/python scripts/claim6_stagger_jitter.py [--quick]
"""
from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import ndtri

import _common as C
import stormsim
from stormsim import plots

NS = (4, 8, 16)
#: Medians below this many cycles are dominated by the integer cycle count and the
#: jitter-free first interval; they are shown but not fitted.
FIT_MIN_MEDIAN = 10.0
#: The joint fit is repeated over m/sigma >= this, nearer the large-m/sigma limit.
ASYMPTOTIC = 32.0


def independent_gap_c(n: int) -> float:
    """c(N) of median ~ c (m/sigma)^2 if the N gaps were independent random walks.

    A gap between consecutive write starts moves by sigma (xi_j+1 - xi_j) per cycle
    (variance 2 sigma^2) and collides when it has lost m. One gap survives k cycles
    with probability 2 Phi(m / (sigma sqrt(2 k))) - 1 (reflection principle); N
    independent ones all survive with its N-th power. Setting that to 1/2 gives
    k = (m/sigma)^2 / (2 z^2), z = Phi^-1((1 + 2^(-1/N)) / 2). An approximation of
    ours (the gaps are not independent: they sum to the period), not the paper's.
    """
    z = ndtri((1.0 + 2.0 ** (-1.0 / n)) / 2.0)
    return 1.0 / (2.0 * z * z)


def fit_loglog(x, y):
    """log10 y = log10 c + p log10 x; returns c, p, se(log10 c), se(p), dof."""
    r = stats.linregress(np.log10(x), np.log10(y))
    return 10 ** r.intercept, r.slope, r.intercept_stderr, r.stderr, len(x) - 2


def joint_fit(ratios, pts, min_ratio):
    """One exponent p and one c(N) per N, least squares in log10, over the points with
    median >= FIT_MIN_MEDIAN and m/sigma >= min_ratio. Returns p, se(p), beta, dof
    (beta[1:] = log10 c(N)); NaNs when there are too few points."""
    X, Y = [], []
    for j, n in enumerate(NS):
        est = pts[f"N = {n}"][0]
        use = np.isfinite(est) & (est >= FIT_MIN_MEDIAN) & (ratios >= min_ratio)
        for r, e in zip(ratios[use], est[use]):
            X.append([np.log10(r)] + [1.0 if k == j else 0.0 for k in range(len(NS))])
            Y.append(np.log10(e))
    X, Y = np.array(X), np.array(Y)
    dof = len(Y) - len(NS) - 1
    if dof < 1 or np.linalg.matrix_rank(X) < X.shape[1]:
        return np.nan, np.nan, np.full(len(NS) + 1, np.nan), dof
    beta, resid, *_ = np.linalg.lstsq(X, Y, rcond=None)
    s2 = float(np.sum((Y - X @ beta) ** 2)) / dof
    cov = s2 * np.linalg.inv(X.T @ X)
    return beta[0], float(np.sqrt(cov[0, 0])), beta, dof


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--fleets", type=int, default=None, help="stagger launches per cell")
    p.add_argument("--load", type=float, default=0.6)
    p.add_argument("--max-ratio-exp", type=int, default=None,
                   help="m/sigma runs over 2^0 .. 2^this")
    p.add_argument("--cycle-cap", type=int, default=None,
                   help="fleets still collision-free here are censored")
    args = p.parse_args(argv)
    t0 = C.start(args)
    fleets = args.fleets or C.pick(args, 60, 400)
    top = args.max_ratio_exp or C.pick(args, 6, 9)
    cap = args.cycle_cap or C.pick(args, 20_000, 300_000)
    ratios = 2.0 ** np.arange(0, top + 1)
    rng = np.random.default_rng(args.seed)

    rows, curves, styles, pts, fits, boot_fits = [], {}, {}, {}, {}, {}
    shown = ratios[-3:]
    for n in NS:
        f0 = stormsim.Fleet.identical(n, T=1.0, load=args.load)
        m = stormsim.stagger_margin(f0)
        est, lo, hi, reps = [], [], [], []
        for i, r in enumerate(ratios):
            fleet = stormsim.Fleet.identical(n, T=1.0, load=args.load, jitter=m / r)
            run = stormsim.simulate(fleet, launch="stagger", fleets=fleets, cycles=cap,
                                    seed=args.seed + 100 * n + i, passage_level=2)
            obs = run.passed
            t = np.where(obs, run.passage_cycle, cap).astype(float)
            med, mlo, mhi, rep = C.km_median_ci(t, obs, rng)
            est.append(med), lo.append(mlo), hi.append(mhi), reps.append(rep)
            if r in shown:
                key = f"N={n}, m/sigma={r:g}"
                curves[key] = (t, obs)
                styles[key] = dict(color=plots.COLORS[NS.index(n)],
                                   ls=("-", "--", ":")[list(shown).index(r)])
            rows.append([n, f"{r:g}", C.fmt(m, 4), C.fmt(m / r, 4), fleets,
                         f"{1 - obs.mean():.0%}", C.fmt_ci(med, mlo, mhi),
                         C.fmt(med / r ** 2, 3)])
        est, lo, hi = map(np.array, (est, lo, hi))
        reps = np.array(reps)                               # (ratios, B)
        use = np.isfinite(est) & (est >= FIT_MIN_MEDIAN)
        pts[f"N = {n}"] = (est, lo, hi)
        if use.sum() >= 3:
            fits[n] = fit_loglog(ratios[use], est[use])
            ok_b = np.all(np.isfinite(reps[use]) & (reps[use] > 0), axis=0)
            bp = np.array([fit_loglog(ratios[use], reps[use][:, b])[:2]
                           for b in np.nonzero(ok_b)[0]])
            boot_fits[n] = (C.percentile_ci(bp[:, 0]), C.percentile_ci(bp[:, 1]), use.sum())

    joint = joint_fit(ratios, pts, 0.0)
    joint_p, joint_p_se, beta, dof = joint
    asym = joint_fit(ratios, pts, ASYMPTOTIC)

    # -- figures
    fig, axes = plots.grid(2, 1, size=(6.0, 4.6))
    plots.survival(curves, ax=axes[0, 0], styles=styles,
                   title="Kaplan-Meier survival, the three largest m/sigma")
    axes[0, 0].legend(fontsize=6, ncols=1)
    xs = {k: ratios for k in pts}
    plots.power_law_fit(xs, pts, {f"N = {n}": fits[n][:2] for n in fits}, ax=axes[0, 1],
                        xlabel=r"margin / jitter, $m/\sigma$",
                        ylabel="median fleet cycles to the first collision",
                        title=f"Median (95 % CI) and fits (medians >= {FIT_MIN_MEDIAN:g})")
    fig.suptitle(f"Stagger under compute jitter: L = {args.load}, T = 1 s, uncapped, fair f, "
                 f"{fleets} fleets per point", fontsize=10)
    f1 = C.save(fig, args, "claim6_stagger_survival")

    fit_rows = []
    for n in NS:
        if n not in fits:
            fit_rows.append([n, "too few points"] + [""] * 7)
            continue
        c, pp, se_lc, se_p, dof_n = fits[n]
        tq = stats.t.ppf(0.975, dof_n) if dof_n > 0 else np.nan
        (c_lo, c_hi), (p_lo, p_hi), npts = boot_fits[n]
        est = pts[f"N = {n}"][0]
        local = np.log2(est[-1] / est[-2])
        fit_rows.append([n, npts, f"{c:.3g}", f"[{c / 10 ** (tq * se_lc):.3g}, "
                         f"{c * 10 ** (tq * se_lc):.3g}]", f"[{c_lo:.3g}, {c_hi:.3g}]",
                         f"{pp:.3f} +- {se_p:.3f}", f"[{pp - tq * se_p:.3f}, {pp + tq * se_p:.3f}]",
                         f"[{p_lo:.3f}, {p_hi:.3f}]", f"{local:.2f}",
                         f"{independent_gap_c(n):.3g} / {est[-1] / ratios[-1] ** 2:.3g}"])
    definition = f"""
Identical jobs, T = 1 s, L = {args.load} (d = L/N), uncapped, fair f, jitter sigma: every
compute interval after the first is max(0, T + sigma xi). Launch "stagger" (sigma = 0
margin m = (T + d)/N - d). Collision = first passage to n_w >= 2; its fleet cycle = firings
up to and including it, integer-divided by N (Run.passage_cycle). {fleets} fleets per
(N, m/sigma), m/sigma = 2^0 .. 2^{top}, runs capped at {cap} cycles (fleets still
collision-free are right-censored there). Median = Kaplan-Meier median (stormsim.survival; with one
common censoring time it equals the sample median whenever fewer than half are censored), 95 % percentile bootstrap over fleets. Fit: least squares of
log10 median on log10(m/sigma) over the points with median >= {FIT_MIN_MEDIAN:g} cycles;
standard errors and Student-t 95 % intervals from the fit, and a bootstrap interval
(refitting each bootstrap replicate of the medians). "Independent-gap c" =
1/(2 z^2), z = Phi^-1((1 + 2^(-1/N))/2): the c(N) of p = 2 if the N gaps were independent
random walks (our approximation, for scale)."""
    body = (C.md_table(["N", "m/sigma", "m (s)", "sigma (s)", "fleets", "censored",
                        "median cycles [95 % CI]", "median / (m/sigma)^2"], rows)
            + "\n\nFits median = c(N) (m/sigma)^p per N:\n\n"
            + C.md_table(["N", "points", "c", "c: t 95 % CI", "c: bootstrap CI", "p +- se",
                          "p: t 95 % CI", "p: bootstrap CI", "local slope, last two points",
                          "independent-gap c / median (m/sigma)^-2 at the largest m/sigma"],
                         fit_rows)
            + f"\n\nJoint fit (one p, one c per N): p = {joint_p:.3f} +- {joint_p_se:.3f} "
              f"(standard error, {dof} degrees of freedom); c = "
            + ", ".join(f"{10 ** b:.3g} (N = {n})" for n, b in zip(NS, beta[1:]))
            + f". Over m/sigma >= {ASYMPTOTIC:g} only: p = {asym[0]:.3f} +- {asym[1]:.3f} "
              f"({asym[3]} degrees of freedom); c = "
            + ", ".join(f"{10 ** b:.3g} (N = {n})" for n, b in zip(NS, asym[2][1:])) + ".")
    ps = [fits[n][1] for n in fits]
    locals_ = [float(r[8]) for r in fit_rows if r[1] != "too few points"]
    verdict = (f"Measured (the issue states no value to reproduce): the median survival is a power "
               f"law in m/sigma over the {np.log10(ratios[-1]):.1f} decades for every N, with "
               f"p = {min(ps):.2f} to {max(ps):.2f} per N (joint fit {joint_p:.2f} +- "
               f"{joint_p_se:.2f}; {asym[0]:.2f} +- {asym[1]:.2f} over m/sigma >= {ASYMPTOTIC:g}) and c(N) falling with N (more gaps that can close). The local "
               f"slope between the two largest m/sigma is {min(locals_):.2f} to {max(locals_):.2f}: "
               "the diffusive p = 2 of a gap random walk is the large-m/sigma limit; at small "
               "m/sigma the first, jitter-free interval and the integer cycle count flatten the "
               "curve. The independent-gap approximation gives c(N) of the right size. "
               + ("No median was censored." if all(np.isfinite(pts[k][0]).all() for k in pts)
                  else "Some medians were censored (shown as n/a)."))
    C.append_results(args, "6", "stagger survival under jitter", definition, body, verdict, [f1],
                     t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

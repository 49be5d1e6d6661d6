"""Shared helpers of the claim scripts: command line, RESULTS.md entries,
bootstrap intervals, Kaplan-Meier medians and the fully-overlapping map.

Every script runs with one command from the repository root, e.g.
``.venv/bin/python scripts/claim1_pair_return_map.py [--quick]``, writes PNGs to
``figures/`` and appends one entry (claim, definitions, command, seeds, commit,
numbers, the paper's figures beside the project's, verdicts) to ``RESULTS.md``.
``make results`` deletes RESULTS.md and figures/*.png, runs every script in
order and then ``scripts/summarize_results.py``, which puts the table of all
verdicts at the top.

Analysis helpers that stormsim.stats.analysis does not (yet) offer live here too:
Wilson intervals, Holm's correction, quantile placement, the circular-gap
bookkeeping and the finite-difference Jacobian of the firing-time map.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

import stormsim  # noqa: E402

#: Two-sided level of every confidence interval in RESULTS.md.
CI_LEVEL = 0.95
#: Bootstrap resamples (percentile intervals over iid fleets).
N_BOOT = 1000


# -- command line ------------------------------------------------------------
def parser(description: str) -> argparse.ArgumentParser:
    """The options every claim script shares."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="a fast pass (well under a minute): fewer launches and cycles")
    p.add_argument("--seed", type=int, default=2024, help="root seed of every simulation")
    p.add_argument("--figures", default=str(ROOT / "figures"), help="directory for the PNGs")
    p.add_argument("--results", default=str(ROOT / "RESULTS.md"),
                   help="markdown file the entry is appended to")
    p.add_argument("--no-record", action="store_true", help="do not append to the results file")
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads (default: numba's, i.e. all cores)")
    return p


def start(args: argparse.Namespace) -> float:
    """Apply the shared options; return the start time."""
    global N_BOOT
    if args.quick:
        N_BOOT = 200  # a check, not a result: coarser intervals
    if args.threads is not None:
        import numba

        numba.set_num_threads(args.threads)
    Path(args.figures).mkdir(parents=True, exist_ok=True)
    return time.perf_counter()


def command_line() -> str:
    """The command that ran this script, relative to the repository root."""
    argv = list(sys.argv)
    try:
        argv[0] = os.path.relpath(os.path.abspath(argv[0]), ROOT)
    except ValueError:
        pass
    return shlex.join([".venv/bin/python", *argv])


def pick(args, quick, full):
    """``quick`` under --quick, else ``full``."""
    return quick if args.quick else full


# -- RESULTS.md ----------------------------------------------------------------
RESULTS_HEADER = """\
# stormsim: the paper's claims, measured

Generated from scratch by `make results` (2 min 50 s of CPU time; 11.6 min wall
on this shared 2-core machine under a load average of ~12):
it deletes this file and `figures/*.png`, runs every script of `scripts/` in
order (each appends one or more entries; the command, seeds and commit are
given with each entry) and then `scripts/summarize_results.py`, which writes
the table below from the entries' verdict rows. Do not edit by hand.

Conventions for every entry unless it says otherwise: times in seconds with
T = 1 (one lone cycle is T + d); uncapped means C = inf; "fair" storage
f(n) = 1; a "cycle" is one firing of every job (job 0's period when phases are
used). Intervals are 95 %: percentile bootstrap over fleets for means, medians
and ratios (fleets are independent and identically distributed; 1000
resamples, 200 under --quick), Wilson score intervals for proportions,
Student-t intervals for least-squares fits. "Typical" places a paper figure
inside the central 90 % of the per-launch distribution of the same quantity
(5 % <= quantile <= 95 %), "atypical" outside it but inside the range of the
launches, "not reproduced" outside every launch. The figures are PNGs in
`figures/`.

The paper's text is the only source of its figures; each
entry puts them beside the project's measurement.

<!-- summary -->
"""


def md_table(headers, rows) -> str:
    """A GitHub markdown table."""
    out = ["| " + " | ".join(str(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def git_commit() -> str:
    """Short hash of HEAD, with "-dirty" when tracked files other than the
    outputs (RESULTS.md, figures/) differ from it; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)RESULTS.md", ":(exclude)figures"], cwd=ROOT,
                               text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def verdict_table(rows) -> str:
    """The entry's 'paper vs project' table: rows of (paper's figure, project's
    number, verdict)."""
    return md_table(["the paper reports", "the project measures", "verdict"], rows)


def append_results(args, claim: str, title: str, definition: str, body: str,
                   verdict: str, figures=(), started: float | None = None,
                   seeds: str | None = None, rows=()) -> None:
    """Append one entry to the results file.

    ``rows``: (paper's figure, project's number, one-line verdict) triples,
    shown as the entry's first table and collected by summarize_results.py
    into the summary at the top (as hidden JSON comments).
    """
    if args.no_record:
        return
    path = Path(args.results)
    stamp = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    mode = " (--quick: small sample, for a check only)" if args.quick else ""
    seeds = seeds or f"root seed {args.seed} (per-cell seeds derived from it in the script)"
    lines = [f"## Claim {claim}: {title}{mode}", "",
             f"*{stamp}; commit {git_commit()}; stormsim {stormsim.__version__}, Python "
             f"{platform.python_version()}, numpy {np.__version__}"
             + (f"; {time.perf_counter() - started:.0f} s wall" if started else "")
             + f"; seeds: {seeds}*", "",
             "```sh", command_line(), "```", ""]
    if rows:
        lines += ["**Paper vs project.**", "", verdict_table(rows), ""]
        lines += ["<!-- verdict " + json.dumps(dict(claim=claim, paper=str(a), project=str(b),
                                                    verdict=str(c))) + " -->" for a, b, c in rows]
        lines += [""]
    lines += ["**Measured.** " + definition.strip(), "", body.strip(), "",
              "**Verdict.** " + verdict.strip(), ""]
    for fig in figures:
        rel = os.path.relpath(os.path.abspath(fig), path.parent.resolve())
        lines += [f"![{Path(fig).stem}]({rel})", ""]
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", encoding="utf-8") as fh:
        if new:
            fh.write(RESULTS_HEADER + "\n")
        fh.write("\n".join(lines) + "\n")
    print(f"appended claim {claim} to {path}")


def save(fig, args, name: str) -> str:
    """Save a matplotlib Figure as figures/<name>.png; return its path."""
    path = str(Path(args.figures) / f"{name}.png")
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")
    return path


def fmt(x, digits: int = 3) -> str:
    """A number for a markdown table."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "n/a"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{max(digits - 1, 1)}e}"
    return f"{x:.{digits}g}"


def fmt_ci(est, lo, hi, digits: int = 3) -> str:
    return f"{fmt(est, digits)} [{fmt(lo, digits)}, {fmt(hi, digits)}]"


# -- statistics ----------------------------------------------------------------
def circ(x):
    """Signed circular difference in [-0.5, 0.5)."""
    return (np.asarray(x) + 0.5) % 1.0 - 0.5


def bootstrap_indices(n: int, rng: np.random.Generator, n_boot: int | None = None) -> np.ndarray:
    """(n_boot, n) resampling indices over iid fleets (default N_BOOT resamples)."""
    return rng.integers(0, n, size=(n_boot or N_BOOT, n))


def percentile_ci(samples, level: float = CI_LEVEL, axis: int = 0):
    """Percentile interval of bootstrap replicates along ``axis``."""
    a = (1.0 - level) / 2.0
    return (np.nanquantile(samples, a, axis=axis), np.nanquantile(samples, 1.0 - a, axis=axis))


def km_median(times, observed) -> float:
    """Kaplan-Meier median (stormsim.stats.survival): the first event time with S <= 1/2;
    inf when more than half are censored."""
    from stormsim.stats.survival import median_survival

    return float(median_survival(times, observed)[0])


def km_median_ci(times, observed, rng, n_boot: int | None = None):
    """KM median, its percentile bootstrap interval over iid fleets, and the replicates."""
    times = np.asarray(times)
    observed = np.asarray(observed)
    est = km_median(times, observed)
    idx = bootstrap_indices(times.size, rng, n_boot)
    reps = np.array([km_median(times[i], observed[i]) for i in idx])
    lo, hi = percentile_ci(reps[np.isfinite(reps)]) if np.isfinite(reps).mean() > 0.975 else (
        np.nan, np.nan)
    return est, float(lo), float(hi), reps


def wilson(k, n, level: float = CI_LEVEL):
    """Wilson score interval of a proportion k/n."""
    from scipy.stats import norm

    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    z = norm.ppf(0.5 + level / 2.0)
    p = k / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = np.where(k <= 0, 0.0, np.clip(mid - half, 0.0, 1.0))    # exact ends, no rounding dust
    hi = np.where(k >= n, 1.0, np.clip(mid + half, 0.0, 1.0))
    return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)


def fmt_prop(k, n, pct: bool = True) -> str:
    """'k/n = p% [lo, hi]' with the Wilson 95 % interval."""
    lo, hi = wilson(k, n)
    if pct:
        return f"{int(k)}/{int(n)} = {100 * k / n:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"
    return f"{int(k)}/{int(n)} = {k / n:.3g} [{lo:.3g}, {hi:.3g}]"


def holm(pvalues, alpha: float = 1.0 - CI_LEVEL) -> np.ndarray:
    """Holm's step-down rejections (bool, same shape) controlling the
    family-wise error rate at ``alpha``."""
    p = np.asarray(pvalues, dtype=float).ravel()
    order = np.argsort(p)
    reject = np.zeros(p.size, dtype=bool)
    for rank, i in enumerate(order):
        if p[i] <= alpha / (p.size - rank):
            reject[i] = True
        else:
            break
    return reject.reshape(np.shape(pvalues))


def two_sided_p(z):
    from scipy.stats import norm

    return 2.0 * norm.sf(np.abs(np.asarray(z, dtype=float)))


def quantile_of(value: float, sample, decimals: int | None = None) -> tuple[float, float, float]:
    """Where ``value`` falls in ``sample``: the mid-rank empirical quantile
    (share below + half the share equal) and its Wilson 95 % interval.
    ``decimals``: compare at the precision the value was reported with (the
    sample is rounded to it first, so a reported 8.7 ties with 8.699)."""
    x = np.asarray(sample, dtype=float)
    x = x[np.isfinite(x)]
    if decimals is not None:
        x = np.round(x, decimals)
    below = np.sum(x < value) + 0.5 * np.sum(x == value)
    lo, hi = wilson(below, x.size)
    return float(below / x.size), float(lo), float(hi)


#: A paper figure inside the central 90 % of the per-launch distribution is
#: "typical"; outside it but inside the launches' range, "atypical".
TYPICAL = (0.05, 0.95)


def placement(value: float, sample, unit: str = "", decimals: int | None = None
              ) -> tuple[str, str]:
    """(quantile text, word) placing a paper figure in a per-launch distribution
    (``decimals``: the precision the paper reports, see quantile_of)."""
    x = np.asarray(sample, dtype=float)
    x = x[np.isfinite(x)]
    if decimals is not None:
        x = np.round(x, decimals)
    q, lo, hi = quantile_of(value, x)
    text = f"quantile {q:.2f} [{lo:.2f}, {hi:.2f}]"
    if value < x.min() or value > x.max():
        word = "not reproduced (outside all {} launches: {}..{}{})".format(
            x.size, fmt(x.min()), fmt(x.max()), unit)
    elif TYPICAL[0] <= q <= TYPICAL[1]:
        word = "typical"
    else:
        word = f"atypical ({'low' if q < 0.5 else 'high'} tail, quantile {q:.3f})"
    return text, word


# -- the fully-overlapping map (claims 2 and 8) --------------------------------
def overlap_jacobian(fleet, interval: float = 0.01, rel_step: float = 1e-3, seed: int = 0):
    """Jacobian of the map of write-start intervals on a fully-overlapping launch.

    Job j first fires at tau_j = sum_{l<=j} a_l (uncapped; a binding cap slows
    the launch compute uniformly, so the *measured* first-firing intervals are
    used), with a_0 = 2 ``interval`` d and a_l = ``interval`` d (1 + 0.3 sin l),
    unequal so that no symmetry hides an off-diagonal term. The new intervals
    a'_j are the differences of consecutive jobs' second firings. Each a_j is
    moved by +-h (h = ``rel_step`` min a); J = dA' dA^{-1}, with dA, dA' the
    measured first- and second-firing interval differences of the central
    differences (exact up to rounding: the map is linear on this region).

    Returns
    -------
    J : (N-1, N-1)
    a : (N-1,) measured first-firing intervals of the unperturbed launch
    a_new : (N-1,) their images
    """
    n = fleet.n_jobs
    T, d = float(fleet.T[0]), float(fleet.d[0])
    a = interval * d * (1.0 + 0.3 * np.sin(np.arange(n)))
    a[0] = 2.0 * interval * d
    h = rel_step * a[1:].min()
    rows = [a]
    for j in range(1, n):
        for s in (1.0, -1.0):
            b = a.copy()
            b[j] += s * h
            rows.append(b)
    tau = np.cumsum(np.array(rows), axis=1)
    theta = 1.0 - tau / T
    run = stormsim.simulate(fleet, launch=theta, fleets=theta.shape[0], cycles=2, seed=seed,
                            record_firings=True)
    first = np.diff(run.firings[:, :, 0], axis=1)    # (rows, N-1)
    second = np.diff(run.firings[:, :, 1], axis=1)
    if not np.all(np.diff(run.firings[:, :, 1], axis=1) > 0):
        raise RuntimeError("the perturbed launches changed the firing order; lower interval")
    dA = (first[1::2] - first[2::2]).T               # column j: perturbation of a_{j+1}
    dAn = (second[1::2] - second[2::2]).T
    J = dAn @ np.linalg.inv(dA)
    return J, first[0], second[0]


def overlap_theory(fleet) -> np.ndarray:
    """Diagonal of the fully-overlapping map, j = 1..N-1.

    MODEL.md check 3 (C >= N): (N - j) f(j) / (j f(N - j)). With a cap, the
    j jobs that have finished writing compute at r_c(j) = min(1, C/j) and the
    N - j still to fire at r_c(N - j), which multiplies the interval by
    r_c(j) / r_c(N - j) (our derivation, checked numerically in claim 8; the
    product over j is still 1).
    """
    n = fleet.n_jobs
    j = np.arange(1, n)
    f = fleet.f
    rc = fleet.computer_rate
    return (n - j) * f[j] / (j * f[n - j]) * rc[j] / rc[n - j]


# -- the firing-time map of any configuration (claim 8) ---------------------------
def firing_map_jacobians(fleet, theta, k0: int, horizons, h: float, seed: int = 0):
    """Finite-difference Jacobians of the firing-time map t_(., k0) -> t_(., k0 + K).

    For each launch theta[l] (launches, N), 2 (N - 1) + 1 runs: the launch and
    job i's phase moved by +-h, i = 1..N-1. Coordinates: the intervals
    a_i = t_(i,k) - t_(0,k), i = 1..N-1, of the k-th firings (the
    time-translation mode removed; the determinant equals that of the N x N
    absolute-time map, whose extra eigenvalue is 1). J = dA_(k0+K) dA_(k0)^-1
    from central differences. Also the same map in phases at job 0's firings
    (analysis.phases; job 0's period rescales the intervals, so its determinant
    differs). k0 >= 1 so that every job has fired once: the state is then a
    function of the k-th firing times (no launch memory).

    Returns dict K -> (det intervals (launches,), det phases (launches,),
    largest |eigenvalue| (launches,)).
    """
    from stormsim.stats.analysis import phases

    theta = np.atleast_2d(np.asarray(theta, dtype=float))
    L, n = theta.shape
    rows = [theta]
    for i in range(1, n):
        for s in (1.0, -1.0):
            b = theta.copy()
            b[:, i] = b[:, i] + s * h
            rows.append(b)
    allth = np.concatenate(rows)                    # block r: launches l = 0..L-1
    kmax = k0 + max(horizons) + 2
    run = stormsim.simulate(fleet, launch=allth, fleets=allth.shape[0], cycles=kmax, seed=seed,
                            record_firings=True)
    F = run.firings.reshape(2 * (n - 1) + 1, L, n, kmax)
    ph = phases(run.firings).reshape(2 * (n - 1) + 1, L, kmax - 1, n)
    out = {}

    def diffs(x):                                   # x: (blocks, L, n-1) -> (L, n-1, n-1)
        return np.transpose(x[1::2] - x[2::2], (1, 2, 0))

    a0 = F[:, :, 1:, k0] - F[:, :, :1, k0]
    p0 = ph[:, :, k0, 1:]
    for K in horizons:
        aK = F[:, :, 1:, k0 + K] - F[:, :, :1, k0 + K]
        pK = ph[:, :, k0 + K, 1:]
        J = diffs(aK) @ np.linalg.inv(diffs(a0))
        Jp = diffs(pK) @ np.linalg.inv(diffs(p0))
        out[K] = (np.linalg.det(J), np.linalg.det(Jp), np.abs(np.linalg.eigvals(J)).max(axis=1))
    return out


# -- random launches and their phases (claims 4b, 4c, corollary 10) -----------------
def launch_phases(fleet, fleets: int, cycles: int, seed: int, chunk: int | None = None):
    """Phases (fleets, cycles - 1, N) at job 0's firings of ``fleets`` random launches
    (stormsim.simulate with record_firings; fleet j depends on (seed, j) only, so
    running in chunks of ``chunk`` fleets changes nothing but the memory used)."""
    from stormsim.stats.analysis import phases

    chunk = chunk or fleets
    out = []
    for lo in range(0, fleets, chunk):
        m = min(chunk, fleets - lo)
        run = stormsim.simulate(fleet, launch="random", fleets=m, cycles=cycles, seed=seed,
                                record_firings=True, fleet_start=lo)
        out.append(phases(run.firings))
    return np.concatenate(out)


def sorted_circular_gaps(theta: np.ndarray):
    """theta (..., N) -> (order, gaps): the jobs in phase order and the circular gap
    after each of them in that order (the gaps sum to 1)."""
    order = np.argsort(theta, axis=-1, kind="stable")
    s = np.take_along_axis(theta, order, axis=-1)
    gaps = np.diff(np.concatenate([s, s[..., :1] + 1.0], axis=-1), axis=-1)
    return order, gaps

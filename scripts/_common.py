"""Shared helpers of the claim scripts: command line, RESULTS.md entries,
bootstrap intervals, Kaplan-Meier medians and the fully-overlapping map.

Every script runs with one command from the repository root, e.g.
``.venv/bin/python scripts/claim1_pair_return_map.py [--quick]``, writes PNGs to
``figures/`` and appends one entry (claim, definitions, command, numbers, date)
to ``RESULTS.md``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shlex
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
# stormsim: the paper's claims, reproduced

Each entry below was appended by one script of `scripts/` (one command each,
shown with the entry). Entries are never edited by hand: rerun a script to add a
new one. Conventions for every entry unless it says otherwise: times in seconds
with T = 1 (so one lone cycle is T + d), uncapped means C = inf, "fair" storage
f(n) = 1; confidence intervals are 95 % percentile bootstrap intervals over
fleets (fleets are independent and identically distributed), 1000 resamples
(200 under --quick); fit uncertainties are standard errors of the least-squares
fit (and 95 % intervals from Student's t). The figures are PNGs in `figures/`.

To reproduce everything (about three minutes on two cores; add `--quick` to any
script for a check in seconds, `--help` for its options):

```sh
for s in claim1_pair_return_map claim2_spectrum claim3_separation claim4_5_locking_tail \\
         claim6_stagger_jitter claim7_stagger_feasibility claim8_cap; do
    .venv/bin/python scripts/$s.py
done
```

The standard figures of any sweep result: `stormsim report results.h5 -o DIR`.
"""


def md_table(headers, rows) -> str:
    """A GitHub markdown table."""
    out = ["| " + " | ".join(str(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def append_results(args, claim: str, title: str, definition: str, body: str,
                   verdict: str, figures=(), started: float | None = None) -> None:
    """Append one entry (claim, definitions, command, numbers, date) to the results file."""
    if args.no_record:
        return
    path = Path(args.results)
    stamp = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    mode = " (--quick: small sample, for a check only)" if args.quick else ""
    lines = [f"## Claim {claim}: {title}{mode}", "",
             f"*{stamp}; stormsim {stormsim.__version__}, Python {platform.python_version()}, "
             f"numpy {np.__version__}"
             + (f"; {time.perf_counter() - started:.0f} s wall" if started else "") + "*", "",
             "```sh", command_line(), "```", "",
             "**Measured.** " + definition.strip(), "", body.strip(), "",
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
    """Kaplan-Meier median (stormsim.survival): the first event time with S <= 1/2;
    inf when more than half are censored."""
    from stormsim.survival import median_survival

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

"""The exact law's cost against simulation, and against N.

``python -m benchmarks.stationary [--quick] [--repeats 5] [--mc-seconds 40] [--replicates 64]``

(a) Cell: N = 32, L = 0.6, sigma = 0.01 T, fair, uncapped (the validation
cell of benchmarks.splitting). For each target P ~ 1e-6, 1e-9, 1e-12 the
level k is the one whose exact P(n_w >= k) is nearest it (read from the law).
Per level, the seconds to a 10 % relative error:

- the law: ``stationary`` wall seconds, median of ``--repeats`` (it is exact:
  no error to reach, one call answers every level);
- plain Monte Carlo: one ``storm_risk(method="plain", rel_error=0.1)`` run of
  ``--mc-seconds``; at 1e-6 its CPU seconds if it resolved the level
  (measured), else its own ``cpu_seconds_needed`` (extrapolated). Where no
  fleet reached the level that is only a lower bound (printed), and the
  figure used is the 1e-6 level's need scaled by the law's storm rates,
  nu_k(1e-6) / nu_k: plain Monte Carlo's error is set by the storms it sees,
  so its cost to a given RE goes as 1 / nu_k (extrapolated; optimistic if
  deep storms come more clustered);
- splitting: one ``storm_split`` run of ``--replicates`` replicates over all
  three levels, W = RE^2 x CPU, and W / 0.1^2 the CPU seconds to 10 %
  (extrapolated from that run at 1e-6 and 1e-9); at 1e-12 the replicates are
  heavy-tailed, so the figure is the measured 10-minute run of
  docs/SPLITTING.md (581 CPU s to RE 0.100 at k = 25, seed 1), the run's own
  extrapolation printed beside it.

The gains are the ratios simulation / law, from this one run.

(b) The law's wall seconds against N (median of repeats): identical jobs
(one type, the closed form, O(N)) up to N = 1e5, and heterogeneous jobs
(every job its own T, N distinct types, the O(N^2) sweep) up to
``--max-hetero``; the exponent b of seconds ~ N^b by log-log least squares
(scipy.stats.linregress) over the sizes where the call takes >= 1 ms
(below, fixed overheads dominate).
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from scipy.stats import linregress

import stormsim
from stormsim.risk.splitting import storm_split

TARGETS = (1e-6, 1e-9, 1e-12)
RE_GOAL = 0.1
#: docs/SPLITTING.md, the 10-minute demo (k = 25, P = 1.83e-12, seed 1): CPU
#: seconds storm_risk took to reach RE 0.100 by splitting, measured.
SPLIT_1E12_CPU_MEASURED = 581.0
#: Below this a call's time is its fixed overheads, not its scaling.
MIN_FIT_SECONDS = 1e-3


def law_seconds(fleet, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        stormsim.stationary(fleet)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def part_a(args) -> None:
    fleet = stormsim.Fleet.identical(32, load=0.6, jitter=0.01)
    law = stormsim.stationary(fleet)
    ks = [int(np.argmin(np.abs(law.log_p_ge - np.log(t)))) for t in TARGETS]
    t_law = law_seconds(fleet, args.repeats)
    print(f"(a) N = 32, L = 0.6, sigma = 0.01 T, fair, uncapped; law {t_law * 1e3:.3g} ms "
          f"(median of {args.repeats}), every level at once")
    print("    levels: " + ", ".join(f"P ~ {t:.0e}: k = {k} (law {law.p_ge[k]:.3e})"
                                     for t, k in zip(TARGETS, ks)), flush=True)
    mc = stormsim.storm_risk(fleet, ks, rel_error=RE_GOAL, max_seconds=args.mc_seconds,
                             method="plain", seed=1)
    print(f"    plain Monte Carlo: {mc.cpu_seconds:.1f} CPU s, {mc.fleets} fleets; RE "
          + ", ".join(f"{r:.3g}" for r in mc.p_ge_rel_error), flush=True)
    sp = storm_split(fleet, ks, replicates=args.replicates, seed=1)
    w_split = sp.p_ge_rel_error ** 2 * sp.cpu_seconds
    print(f"    splitting: {sp.replicates} replicates, {sp.cpu_seconds:.1f} CPU s; RE "
          + ", ".join(f"{r:.3g}" for r in sp.p_ge_rel_error) + "; P "
          + ", ".join(f"{p:.3g}" for p in sp.p_ge), flush=True)
    print(f"{'target':>7} {'k':>3} {'P law':>10} {'law s':>9} {'plain CPU s':>12} {'':>13} "
          f"{'split CPU s':>12} {'':>13} {'plain/law':>10} {'split/law':>10}")
    need0 = float(mc.cpu_seconds if mc.resolved[0] else mc.cpu_seconds_needed[0])
    for j, (t, k) in enumerate(zip(TARGETS, ks)):
        bound = ""
        if mc.resolved[j]:
            plain, how = float(mc.cpu_seconds), "measured"
        elif not mc.needed_is_lower_bound[j]:
            plain, how = float(mc.cpu_seconds_needed[j]), "extrapolated"
        else:
            plain = float(need0 * law.storms_per_s[ks[0]] / law.storms_per_s[k])
            how = "extrap. nu"
            bound = f" (storm_risk's own need: >= {float(mc.cpu_seconds_needed[j]):.3g})"
        split_run = float(w_split[j] / RE_GOAL ** 2)
        if t == 1e-12:
            split, show = SPLIT_1E12_CPU_MEASURED, "docs (meas.)"
        else:
            split, show = split_run, "extrapolated"
        print(f"{t:7.0e} {k:3d} {law.p_ge[k]:10.3e} {t_law:9.2e} {plain:12.3g} {how:>13} "
              f"{split:12.3g} {show:>13} {plain / t_law:10.3g} {split / t_law:10.3g}{bound}")
        if t == 1e-12:
            print(f"        (this run's splitting extrapolation at 1e-12: {split_run:.3g} CPU s, "
                  f"optimistic with {sp.replicates} heavy-tailed replicates)")
    print("    law vs splitting's P: " + ", ".join(
        f"k = {k}: {sp.p_ge[j] / law.p_ge[k]:.3f}" for j, k in enumerate(ks)), flush=True)


def fit(ns, secs) -> str:
    ns, secs = np.asarray(ns, float), np.asarray(secs, float)
    use = secs >= MIN_FIT_SECONDS
    r = linregress(np.log(ns[use]), np.log(secs[use]))
    # the slope between the two largest sizes: the asymptotic order, where
    # per-call and per-type overheads no longer flatten the fit
    top = math.log(secs[-1] / secs[-2]) / math.log(ns[-1] / ns[-2])
    return (f"exponent {r.slope:.2f} +- {r.stderr:.2f} (r^2 {r.rvalue ** 2:.3f}, "
            f"N = {int(ns[use].min())}..{int(ns[use].max())}); between the two largest {top:.2f}")


def part_b(args) -> None:
    rng = np.random.default_rng(7)
    print("(b) the law's wall seconds against N (median of repeats)")
    ident = [100, 1000, 3000, 10_000, 30_000, 100_000]
    secs = []
    for n in ident:
        secs.append(law_seconds(stormsim.Fleet.identical(n, load=0.6, jitter=0.01), args.repeats))
        print(f"    identical     N = {n:6d}: {secs[-1]:.3g} s", flush=True)
    print(f"    identical: {fit(ident, secs)}")
    hetero = [n for n in (100, 300, 1000, 3000, 10_000, 20_000) if n <= args.max_hetero]
    secs = []
    for n in hetero:
        T = rng.uniform(0.5, 2.0, n)
        d = 0.6 * T / n
        fleet = stormsim.Fleet(T=T, d=d, jitter=0.01 * T)
        secs.append(law_seconds(fleet, args.repeats if n <= 3000 else 1))
        print(f"    heterogeneous N = {n:6d}: {secs[-1]:.3g} s"
              + ("" if n <= 3000 else " (one run)"), flush=True)
    print(f"    heterogeneous: {fit(hetero, secs)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small pass (about a minute)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--mc-seconds", type=float, default=40.0)
    ap.add_argument("--replicates", type=int, default=64)
    ap.add_argument("--max-hetero", type=int, default=10_000)
    ap.add_argument("--skip-a", action="store_true", help="part (b) only")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.mc_seconds, args.replicates, args.max_hetero = 3, 5.0, 16, 3000
    if not args.skip_a:
        part_a(args)
    part_b(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

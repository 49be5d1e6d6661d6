"""Command line: thin wrappers that parse, make one library call, and print."""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np


def _demo(args: argparse.Namespace) -> int:
    import stormsim
    from scipy.stats import binom

    n, load = 16, 0.6
    fleet = stormsim.Fleet.identical(n, T=1.0, load=load, jitter=0.01)
    print(f"stormsim {stormsim.__version__} demo: {n} identical jobs, T = 1 s of compute "
          f"between checkpoints, d = {fleet.d[0]:.4f} s to write alone (load L = {load}),")
    print("fair sharing of one storage fabric, no power cap, compute jitter sigma = 0.01 s.\n")

    t0 = time.perf_counter()
    run = stormsim.simulate(fleet, launch="random", fleets=args.fleets, cycles=args.cycles,
                            seed=args.seed, burn_in=args.cycles // 4)
    wall = time.perf_counter() - t0
    frac = run.occupancy.sum(axis=0) / run.occupancy.sum()
    p_write = float(np.dot(np.arange(n + 1), frac)) / n
    base = binom.pmf(np.arange(n + 1), n, p_write)
    print(f"1) {args.fleets} fleets from random launches, {args.cycles} checkpoint cycles each "
          f"({wall:.1f} s, {run.events.sum() / wall / 1e6:.1f} M events/s incl. compile):")
    print("   share of time with n jobs writing at once, against independent jobs")
    print("   (binomial with the measured writing fraction "
          f"{p_write:.3f}):")
    print("    n   simulated   independent")
    for k in range(n + 1):
        if frac[k] < 1e-7 and base[k] < 1e-7:
            continue
        print(f"   {k:2d}   {frac[k]:9.2e}   {base[k]:11.2e}")
    tail = 4
    print(f"   P(n_w >= {tail}) = {frac[tail:].sum():.3e} simulated vs "
          f"{base[tail:].sum():.3e} independent: writes pile up into storms.\n")

    m = stormsim.stagger_margin(fleet)
    sigma = m / 8
    fleet = stormsim.Fleet.identical(n, T=1.0, load=load, jitter=sigma)
    print(f"2) A perfect stagger (a gap of m = {m:.4f} s between one write's end and the next "
          f"one's start) under jitter sigma = m/8 = {sigma:.4f} s:")
    run = stormsim.simulate(fleet, launch="stagger", fleets=args.fleets, cycles=20000,
                            seed=args.seed, passage_level=2)
    cyc = run.passage_cycle
    hit = cyc >= 0
    med = float(np.median(np.where(hit, cyc, np.iinfo(np.int64).max)))
    print(f"   {hit.mean():.0%} of {args.fleets} fleets collided within 20000 cycles;")
    if math.isfinite(med) and med < np.iinfo(np.int64).max:
        print(f"   median number of cycles until two jobs first write at once: {med:.0f}")
    else:
        print("   the median fleet had not collided within 20000 cycles")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stormsim", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a small real case and explain the result")
    demo.add_argument("--fleets", type=int, default=400)
    demo.add_argument("--cycles", type=int, default=800)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"stormsim: error: {exc}", file=sys.stderr)
        return 2

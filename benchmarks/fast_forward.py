"""The fast-forward against the pure event loop, and both against the reference kernel.

``NUMBA_NUM_THREADS=1 python -m benchmarks.fast_forward [--rounds 7] [--scale 1]``

In ONE process, round after round: each workload with ``fast_forward=False``
(the pure event loop: the old figure) and with ``fast_forward=True`` (what
"auto" does for the first passages; (a), an occupancy run, needs True), the
order flipped every round, and the independent reference kernel
(``/work/shared/reference-kernel/limit.py``, imported, not copied; skipped
where absent) on workload (a). Every run is on 1 thread with the same seed,
so repeats do the same work; rates are fleet-cycles per CPU second (what a
busy machine distorts least) and per wall second. Per workload it prints the
median new/old ratio with its min and max over the rounds, and new over the
reference's (a) rate (the issue's yardstick), with the load average before
and after.

Workloads: (f) stagger, N = 16, m/sigma = 30, to the first collision;
f256-16 and f256-256: the same at m/sigma = 256 with N = 16 and 256; and
(a) (random launch, occupancy over a fixed number of cycles), where
collisions are frequent, to show what the fast-forward costs there.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import stormsim

from .harness import SEED, fleet_cycles
from .workloads import LOAD, N_REF, PASSAGE_CYCLE_CAP, SIGMA, all_workloads, passage_workloads

REFERENCE = Path("/work/shared/reference-kernel")

#: Fleets (and cycles) per run, at --scale 1: about 0.3-1 s of the event loop
#: each on a quiet core.
SIZES = {"f": (4000, PASSAGE_CYCLE_CAP), "f256-16": (64, PASSAGE_CYCLE_CAP),
         "f256-256": (12, PASSAGE_CYCLE_CAP), "a": (256, 400)}
REFERENCE_SIZE = (256, 400)  # fleets, cycles of (a) for the reference kernel


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def load_reference():
    if not (REFERENCE / "limit.py").exists():
        return None
    sys.path.insert(0, str(REFERENCE))
    import limit  # noqa: E402  (the yardstick, used as its README says)

    return limit


def reference_run(limit, fleets: int, cycles: int):
    """Workload (a) on the reference kernel; returns its fleet-cycles."""
    theta = np.random.default_rng(SEED).random((fleets, N_REF))
    r = limit.run([1.0] * N_REF, [LOAD / N_REF] * N_REF, sigma=SIGMA, theta=theta,
                  cycles=cycles, seed=SEED)
    return int(r["fired"].sum()) / N_REF


def commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def spread(values) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--scale", type=float, default=1.0, help="multiply every run's fleets")
    p.add_argument("--only", default="f,f256-16,f256-256,a")
    p.add_argument("--json", default=None, help="write the raw figures here")
    a = p.parse_args(argv)
    W = dict(passage_workloads(), a=all_workloads()["a"])
    keys = [k.strip() for k in a.only.split(",") if k.strip()]
    sizes = {k: (max(1, int(SIZES[k][0] * a.scale)), SIZES[k][1]) for k in keys}
    limit = load_reference()
    out = {"commit": commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_before": load_average(), "rounds": a.rounds, "workloads": {}}

    def run(key, ff):
        w = W[key]
        fleets, cycles = sizes[key]
        r, cpu, wall = timed(lambda: stormsim.simulate(
            w.fleet, fleets=fleets, cycles=cycles, seed=SEED, threads=1, fast_forward=ff,
            **w.kwargs))
        return r, fleet_cycles(r) / cpu, fleet_cycles(r) / wall

    # Warm up (compile or load the cache) outside the timed rounds.
    for key in keys:
        for ff in (False, True):
            w = W[key]
            stormsim.simulate(w.fleet, fleets=2, cycles=50, seed=SEED, threads=1,
                              fast_forward=ff, **w.kwargs)
    if limit is not None:
        reference_run(limit, 2, 10)
    rates = {k: {"old_cpu": [], "new_cpu": [], "old_wall": [], "new_wall": []} for k in keys}
    ref = {"cpu": [], "wall": []}
    for rnd in range(a.rounds):
        for key in keys:
            order = (False, True) if rnd % 2 == 0 else (True, False)
            runs = {}
            for ff in order:
                r, per_cpu, per_wall = run(key, ff)
                tag = "old" if ff is False else "new"
                rates[key][f"{tag}_cpu"].append(per_cpu)
                rates[key][f"{tag}_wall"].append(per_wall)
                runs[tag] = r
            if key != "a":  # first passages: the same cycles on both paths
                assert np.array_equal(runs["old"].passage_cycle, runs["new"].passage_cycle)
        if limit is not None:
            fc, cpu, wall = timed(lambda: reference_run(limit, *REFERENCE_SIZE))
            ref["cpu"].append(fc / cpu)
            ref["wall"].append(fc / wall)
        print(f"round {rnd}: " + ", ".join(
            f"{k} {rates[k]['new_cpu'][-1] / rates[k]['old_cpu'][-1]:.2f}x" for k in keys)
            + f"  load {load_average()}", flush=True)
    out["load_after"] = load_average()
    for key in keys:
        r = rates[key]
        row = {"title": W[key].title, "fleets": sizes[key][0],
               "old_fc_per_cpu_s": spread(r["old_cpu"]), "new_fc_per_cpu_s": spread(r["new_cpu"]),
               "ratio_cpu": spread([n / o for n, o in zip(r["new_cpu"], r["old_cpu"])]),
               "ratio_wall": spread([n / o for n, o in zip(r["new_wall"], r["old_wall"])]),
               "cores": statistics.median([c / w for c, w in zip(r["old_wall"], r["old_cpu"])])}
        if ref["cpu"]:
            row["new_over_reference_a_cpu"] = spread(
                [n / x for n, x in zip(r["new_cpu"], ref["cpu"])])
            row["old_over_reference_a_cpu"] = spread(
                [o / x for o, x in zip(r["old_cpu"], ref["cpu"])])
        out["workloads"][key] = row
    if ref["cpu"]:
        out["reference_a_fc_per_cpu_s"] = spread(ref["cpu"])
        out["reference_a_fc_per_wall_s"] = spread(ref["wall"])
    print(f"\ncommit {out['commit']}, {out['date']}, load average {out['load_before']} -> "
          f"{out['load_after']} (1, 5, 15 min; {os.cpu_count()} CPUs)")
    print(f"{'workload':<10} {'old fc/cpu-s':>13} {'new fc/cpu-s':>13} "
          f"{'new/old (min-max)':>22} {'new/ref(a) (min-max)':>24}")
    for key, row in out["workloads"].items():
        rc = row["ratio_cpu"]
        line = (f"{key:<10} {row['old_fc_per_cpu_s']['median']:>13.4g} "
                f"{row['new_fc_per_cpu_s']['median']:>13.4g} "
                f"{rc['median']:>8.2f} ({rc['min']:.2f}-{rc['max']:.2f})      ")
        if "new_over_reference_a_cpu" in row:
            x = row["new_over_reference_a_cpu"]
            line += f"{x['median']:>8.2f} ({x['min']:.2f}-{x['max']:.2f})"
        print(line)
    if ref["cpu"]:
        print(f"reference kernel, (a): {out['reference_a_fc_per_cpu_s']['median']:.4g} "
              "fleet-cycles per CPU second")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

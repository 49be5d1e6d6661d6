"""Timing, sizing and subprocess probes. Everything goes through stormsim's public API."""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import stormsim

from .workloads import PASSAGE_CYCLE_CAP, Workload

ROOT = Path(__file__).resolve().parent.parent

#: One seed per workload, the same for every repetition: each repetition does
#: exactly the same work, so their spread is the machine's noise alone.
SEED = 12345


def summary(values) -> dict:
    """Median, min and max (and the values) of a list of numbers."""
    values = [float(v) for v in values]
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values), "values": values}


def busy(s: dict, threads: int) -> bool:
    """A figure taken on a busy machine: the 1-minute load average around its
    runs went above the cores (other work queued for them), or the runs got
    under 90% of the cores their threads asked for."""
    return (s["loadavg"]["max"] > (os.cpu_count() or 1) + 0.25
            or s["cpu_per_wall"]["median"] < 0.9 * threads)


def fleet_cycles(run: stormsim.Run) -> float:
    """Fleet-cycles a run integrated (N firings each): K per fleet, or the
    cycle of its passage for a fleet that stopped there."""
    stopped = run.passage_cycle >= 0
    return float(np.where(stopped, run.passage_cycle, run.cycles).sum())


def time_one(w: Workload, fleets: int, cycles: int, threads: int) -> dict:
    """One timed simulate() call: wall seconds, events, fleet-cycles."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    run = stormsim.simulate(w.fleet, fleets=fleets, cycles=cycles, seed=SEED, threads=threads,
                            **w.kwargs)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    # cpu / wall: how many cores the run actually had (the machine is shared).
    return {"wall": wall, "cpu": cpu, "cpu_per_wall": cpu / wall, "events": int(run.events.sum()),
            "fleet_cycles": fleet_cycles(run), "run": run}


def nice(x: float) -> int:
    """x rounded down to two significant digits (for readable sizes)."""
    if x < 10:
        return max(1, int(x))
    p = 10 ** (int(math.log10(x)) - 1)
    return int(x // p * p)


def size_cycles(w: Workload, fleets: int, threads: int, target_s: float,
                lo: int, hi: int) -> int:
    """Cycles for one run of about target_s seconds (also warms the kernel up)."""
    probe = 20
    while True:
        one = time_one(w, fleets, probe, threads)
        if one["wall"] > 0.05 or probe >= hi:
            break
        probe = min(hi, probe * 4)
    rate = one["fleet_cycles"] / one["wall"]
    return int(min(hi, max(lo, nice(target_s * rate / fleets))))


def measure(w: Workload, fleets: int, cycles: int, threads: tuple[int, ...],
            repeats: int) -> dict:
    """Repeat the run ``repeats`` times for each thread count, interleaved
    (1, 2, 1, 2, ...) so that slow spells of the machine hit all alike.

    Returns, per thread count: fleet-cycles/s, events/s, wall and CPU ns per
    event and the cores obtained (median, min, max), and, for 2 threads, the
    speed-up of each repetition's pair.
    """
    return measure_many([(w, fleets, cycles, threads)], repeats)[0]


def measure_many(specs, repeats: int) -> list[dict]:
    """``measure`` for several (workload, fleets, cycles, threads) at once,
    their runs interleaved repetition by repetition (for comparisons across
    them, e.g. cost against N)."""
    raw = [{t: {"wall": [], "cpu": [], "cores": [], "load": []} for t in spec[3]}
           for spec in specs]
    last = [{} for _ in specs]
    for _ in range(repeats):
        for k, (w, fleets, cycles, threads) in enumerate(specs):
            for t in threads:
                load = os.getloadavg()[0]
                one = time_one(w, fleets, cycles, t)
                raw[k][t]["wall"].append(one["wall"])
                raw[k][t]["cpu"].append(one["cpu"])
                raw[k][t]["cores"].append(one["cpu_per_wall"])
                raw[k][t]["load"].append(max(load, os.getloadavg()[0]))
                last[k][t] = one
    return [_summarize(spec, raw[k], last[k]) for k, spec in enumerate(specs)]


def _summarize(spec, raw, last) -> dict:
    w, fleets, cycles, threads = spec
    out = {"workload": w.key, "title": w.title, "n_jobs": w.n_jobs, "fleets": fleets,
           "cycles": cycles, "by_threads": {}}
    for t in threads:
        ev, fc = last[t]["events"], last[t]["fleet_cycles"]
        walls = raw[t]["wall"]
        out["by_threads"][str(t)] = {
            "events": ev, "fleet_cycles": fc, "wall_s": summary(walls),
            "fleet_cycles_per_s": summary([fc / x for x in walls]),
            "events_per_s": summary([ev / x for x in walls]),
            "ns_per_event": summary([1e9 * x / ev for x in walls]),
            "cpu_per_wall": summary(raw[t]["cores"]),
            # CPU time per event: the kernel's cost while it held a core, which
            # a busy machine inflates less than wall time (1 thread: per thread).
            "cpu_ns_per_event": summary([1e9 * x / ev for x in raw[t]["cpu"]]),
            "fleet_cycles_per_cpu_s": summary([fc / x for x in raw[t]["cpu"]]),
            # the 1-minute load average around each run (this run included)
            "loadavg": summary(raw[t]["load"]),
        }
    if 1 in threads:
        for t in threads:
            if t != 1:
                sp = [a / b for a, b in zip(raw[1]["wall"], raw[t]["wall"])]
                out["by_threads"][str(t)]["speedup_vs_1"] = summary(sp)
                out["by_threads"][str(t)]["parallel_efficiency"] = summary([x / t for x in sp])
    run = last[threads[0]]["run"]
    if w.kwargs.get("passage_level"):
        pc = run.passage_cycle[run.passage_cycle >= 0]
        per_fleet = run.events
        out["passage"] = {
            "passed_fraction": float((run.passage_cycle >= 0).mean()),
            "cycle_median": float(np.median(pc)) if pc.size else None,
            "cycle_p99": float(np.percentile(pc, 99)) if pc.size else None,
            "cycle_max": int(pc.max()) if pc.size else None,
            "events_per_fleet_max_over_mean": float(per_fleet.max() / per_fleet.mean()),
        }
    return out


def size_fleets_for_passage(w: Workload, threads: int, target_s: float, lo: int) -> int:
    """Fleets for a first-passage run of about target_s seconds."""
    time_one(w, 64, PASSAGE_CYCLE_CAP, threads)  # warm up
    one = time_one(w, 256, PASSAGE_CYCLE_CAP, threads)
    per_fleet = one["wall"] / 256
    return int(max(lo, 64 * round(target_s / per_fleet / 64)))


# -- subprocess probes -----------------------------------------------------------

def _probe(args: list[str], cache_dir: str | None = None, timeout: float = 300) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["STORMSIM_CACHE_DIR"] = cache_dir
        env.pop("NUMBA_CACHE_DIR", None)
        env.pop("STORMSIM_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "benchmarks._probe", *args], cwd=str(ROOT),
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"probe {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_times(cold_repeats: int, cached_repeats: int) -> dict:
    """Cold: a fresh interpreter and an empty cache directory; cached: a fresh
    interpreter reusing that directory. Times the first simulate() call."""
    cold, cached = [], []
    with tempfile.TemporaryDirectory(prefix="stormsim-bench-cache-") as base:
        for r in range(cold_repeats):
            cache = os.path.join(base, f"cold{r}")
            os.makedirs(cache)
            cold.append(_probe(["compile"], cache))
            if r == cold_repeats - 1:
                for _ in range(cached_repeats):
                    cached.append(_probe(["compile"], cache))
    return {
        "cold_first_call_s": summary([x["first_call_s"] for x in cold]),
        "cold_first_call_cpu_s": summary([x["first_call_cpu_s"] for x in cold]),
        "cached_first_call_cpu_s": summary([x["first_call_cpu_s"] for x in cached]),
        "cold_import_s": summary([x["import_s"] for x in cold]),
        "cached_first_call_s": summary([x["first_call_s"] for x in cached]),
        "cached_import_s": summary([x["import_s"] for x in cached]),
        "second_call_s": summary([x["second_call_s"] for x in cached]),
        "raw": {"cold": cold, "cached": cached},
    }


def memory_profile(cycles_list: tuple[int, ...], fleets: int = 16) -> dict:
    """Peak memory of workload (a) against the number of cycles, each in a
    fresh interpreter (ru_maxrss only grows)."""
    rows = [_probe(["memory", str(c), str(fleets)]) for c in cycles_list]
    growth = [r["maxrss_growth_mib"] for r in rows]
    traced = [r["traced_peak_kib"] for r in rows]
    return {"rows": rows,
            "maxrss_growth_spread_mib": max(growth) - min(growth),
            "traced_peak_ratio": max(traced) / max(min(traced), 1e-9)}


# -- peers -------------------------------------------------------------------------

def time_peer(name: str, w: Workload, fleets: int, cycles: int, repeats: int) -> dict:
    """Time peer ``name`` on workload w (random launches), ``repeats`` times.

    The rate counts the peer's own simulation loop only (no interpreter start,
    no import, no platform set-up for SimGrid).
    """
    from . import peers

    rng = np.random.default_rng(SEED)
    case = peers.make_case(w.fleet, rng.uniform(0.0, 1.0, size=(fleets, w.n_jobs)), cycles,
                           seed=SEED)
    runner = peers.peer_runner(name)
    walls, cpus, events = [], [], 0
    for _ in range(repeats):
        res = runner([case])[0]
        walls.append(res["wall"])
        cpus.append(res["cpu"])
        events = int(np.sum(res["events"]))
    fc = fleets * cycles
    return {"peer": name, "workload": w.key, "fleets": fleets, "cycles": cycles,
            "events": events, "wall_s": summary(walls),
            "fleet_cycles_per_s": summary([fc / x for x in walls]),
            "fleet_cycles_per_cpu_s": summary([fc / x for x in cpus]),
            "events_per_s": summary([events / x for x in walls]),
            "cpu_per_wall": summary([c / x for c, x in zip(cpus, walls)])}

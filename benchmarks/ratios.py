"""The kernel's three yardstick ratios, measured side by side in ONE process.

``python -m benchmarks.ratios [--pairs 21] [--fleets 1024] [--cycles 1000] [--durations off]
[--reference PATH] [--json PATH]``

1. (a) on stormsim's blocking kernel over (a) on the independent reference
   kernel, 1 thread, in fleet-cycles per CPU second;
2. the same on 2 threads, in fleet-cycles per wall second (what a user waits
   for; CPU time would hide a thread that idles);
3. the general kernel per event, (g) over (a), 1 thread, CPU ns per event.

Workloads (a) and (g) as in ``benchmarks/workloads.py``; ``--durations off``
runs (a) with ``simulate(durations=False)``, occupancy without the write
durations' maxima and histograms (MODEL.md E7), as the reference kernel
measures it ((g) is unchanged: the general kernel always records them). The reference kernel
(``limit.py``, a measuring stick of the same model written independently) is
imported from ``--reference`` (default: ``shared/reference-kernel`` beside
this checkout or beside one of its parents), never copied; where it is absent
ratios 1 and 2 are skipped with a message. numba's thread count is per
process but ``numba.set_num_threads`` lowers it per call: simulate() sets it
from ``threads=``, and the reference kernel is called under the same setting;
each run's *threads* column counts the threads of this process that did its
work (from /proc, so the machine's load does not blur it).

Every round runs the same jobs (same seeds: the same work), in one order on
even rounds and reversed on odd ones, so each ratio's two runs are adjacent
and their order alternates; a ratio is formed per round and reported as the
median (min-max, and quartiles) of the rounds. Runs seconds apart see the
same machine load.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

import stormsim

from .harness import SEED, fleet_cycles
from .workloads import LOAD, N_REF, SIGMA, all_workloads

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = Path("shared") / "reference-kernel"
#: (g) per fleet-cycle costs ~4-5x (a): it runs this fraction of the cycles.
G_CYCLES_FRACTION = 0.25


def default_reference() -> Path:
    """``shared/reference-kernel`` beside the checkout or beside the nearest
    parent that has it (a worktree one level down finds the shared copy)."""
    for d in ROOT.parents:
        if (d / REFERENCE_DIR / "limit.py").exists():
            return d / REFERENCE_DIR
    return ROOT.parent / REFERENCE_DIR


def load_reference(path: Path):
    """The reference kernel's module, imported from its file; None if absent."""
    src = Path(path) / "limit.py"
    if not src.exists():
        return None
    spec = importlib.util.spec_from_file_location("reference_kernel_limit", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def thread_ticks() -> dict[int, int]:
    """CPU clock ticks (user + system) of each thread of this process, from
    /proc; empty where there is no /proc."""
    out = {}
    for task in Path("/proc/self/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(task.name)] = int(fields[11]) + int(fields[12])
    return out


def workers(before: dict, after: dict) -> int | None:
    """Threads that did at least a fifth of the busiest one's work."""
    used = [after[k] - before.get(k, 0) for k in after]
    top = max(used, default=0)
    return sum(u >= 0.2 * top for u in used) if top > 0 else None


def timed(job) -> dict:
    """One run: its fleet-cycles and events, CPU and wall seconds, the load
    average around it and the threads that worked."""
    load, ticks = os.getloadavg()[0], thread_ticks()
    c0, t0 = time.process_time(), time.perf_counter()
    fc, events = job()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"fleet_cycles": fc, "events": events, "cpu": cpu, "wall": wall,
            "load": max(load, os.getloadavg()[0]), "threads": workers(ticks, thread_ticks())}


def stormsim_job(w, fleets: int, cycles: int, threads: int, **extra):
    def job():
        run = stormsim.simulate(w.fleet, fleets=fleets, cycles=cycles, seed=SEED,
                                threads=threads, **w.kwargs, **extra)
        return fleet_cycles(run), int(run.events.sum())
    return job


def reference_job(limit, fleets: int, cycles: int, threads: int):
    """(a) on the reference kernel (as its time_reference.py runs it), under
    ``threads`` numba threads."""
    theta = np.random.default_rng(SEED).random((fleets, N_REF))

    def job():
        saved = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            r = limit.run([1.0] * N_REF, [LOAD / N_REF] * N_REF, sigma=SIGMA, theta=theta,
                          cycles=cycles, seed=SEED)
        finally:
            numba.set_num_threads(saved)
        return int(r["fired"].sum()) / N_REF, int(r["changes"].sum())
    return job


#: name -> (numerator, denominator, clock, unit): a ratio of rates per round.
RATIOS = {
    "(a) / reference, 1 thread": ("a@1", "ref@1", "cpu", "fleet_cycles"),
    "(a) / reference, 2 threads": ("a@2", "ref@2", "wall", "fleet_cycles"),
    "(g) / (a) cost per event, 1 thread": ("a@1", "g@1", "cpu", "events"),
}


def build_jobs(a, limit) -> dict:
    """The round's jobs in their forward order: each ratio's two runs adjacent."""
    W = all_workloads()
    g_cycles = max(2, int(a.cycles * G_CYCLES_FRACTION))
    jobs = {}
    if limit is not None:
        jobs["ref@1"] = reference_job(limit, a.fleets, a.cycles, 1)
    extra = {"durations": False} if a.durations == "off" else {}
    jobs["a@1"] = stormsim_job(W["a"], a.fleets, a.cycles, 1, **extra)
    jobs["g@1"] = stormsim_job(W["g"], a.fleets, g_cycles, 1)
    if limit is not None and numba.config.NUMBA_NUM_THREADS >= 2:
        jobs["ref@2"] = reference_job(limit, a.fleets, a.cycles, 2)
        jobs["a@2"] = stormsim_job(W["a"], a.fleets, a.cycles, 2, **extra)
    return jobs


def rounds(jobs: dict, pairs: int) -> dict[str, list[dict]]:
    raw = {k: [] for k in jobs}
    for r in range(pairs):
        names = list(jobs) if r % 2 == 0 else list(jobs)[::-1]
        for name in names:
            raw[name].append(timed(jobs[name]))
    return raw


def spread(values) -> dict:
    values = [float(v) for v in values]
    q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "quartiles": [q[0], q[2]], "values": values}


def summarize(raw: dict) -> dict:
    rates = {}
    for name, runs in raw.items():
        rates[name] = {
            "fleet_cycles_per_cpu_s": spread([r["fleet_cycles"] / r["cpu"] for r in runs]),
            "fleet_cycles_per_s": spread([r["fleet_cycles"] / r["wall"] for r in runs]),
            "events_per_cpu_s": spread([r["events"] / r["cpu"] for r in runs]),
            "events_per_s": spread([r["events"] / r["wall"] for r in runs]),
            "cores": spread([r["cpu"] / r["wall"] for r in runs]),
            "threads": [r["threads"] for r in runs],
            "load": spread([r["load"] for r in runs])}
    ratios = {}
    for label, (num, den, clock, unit) in RATIOS.items():
        if num in raw and den in raw:
            ratios[label] = dict(spread(
                [(x[unit] / x[clock]) / (y[unit] / y[clock]) for x, y in zip(raw[num], raw[den])]),
                clock=clock, unit=unit)
    return {"rates": rates, "ratios": ratios}


def fmt(s: dict, scale: float = 1.0) -> str:
    return f"{s['median'] / scale:.3g} ({s['min'] / scale:.3g}–{s['max'] / scale:.3g})"


def report(res: dict) -> str:
    names = {"a": "(a) stormsim", "ref": "(a) reference kernel", "g": "(g) stormsim"}
    lines = ["| run | threads asked / worked | M fleet-cycles/s | M events/s | by | cores | load |",
             "|---|---|---|---|---|---:|---|"]
    for name, r in res["rates"].items():
        key, t = name.split("@")
        by = "cpu" if t == "1" else "wall"
        fc = r["fleet_cycles_per_cpu_s" if by == "cpu" else "fleet_cycles_per_s"]
        ev = r["events_per_cpu_s" if by == "cpu" else "events_per_s"]
        worked = statistics.median([w for w in r["threads"] if w is not None] or [0])
        lines.append(f"| {names[key]} | {t} / {worked:g} | {fmt(fc, 1e6)} | {fmt(ev, 1e6)} "
                     f"| {by} | {r['cores']['median']:.2f} | {fmt(r['load'])} |")
    lines += ["", "| ratio | by | median (min–max) | quartiles |", "|---|---|---|---|"]
    for label, s in res["ratios"].items():
        lines.append(f"| {label} | {s['clock']} time, {s['unit'].replace('_', '-')} "
                     f"| {fmt(s)}× | {s['quartiles'][0]:.3g}–{s['quartiles'][1]:.3g} |")
    return "\n".join(lines)


def warm_up(limit, durations: str = "on") -> None:
    """Load or compile both kernels (the reference compiles in each process)."""
    for job in build_jobs(argparse.Namespace(fleets=2, cycles=8, durations=durations), limit).values():
        job()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=21, help="rounds (each ratio once per round)")
    p.add_argument("--fleets", type=int, default=1024)
    p.add_argument("--cycles", type=int, default=1000, help="(a)'s; (g) runs a quarter")
    p.add_argument("--durations", default="on", choices=("on", "off"),
                   help="(a) with the write durations' maxima and histograms (E7) or without")
    p.add_argument("--reference", default=None, help="the reference kernel's folder")
    p.add_argument("--json", default=None, help="write the raw figures here")
    a = p.parse_args(argv)
    path = Path(a.reference) if a.reference else default_reference()
    limit = load_reference(path)
    if limit is None:
        print(f"reference kernel: no limit.py in {path}: ratios 1 and 2 skipped", flush=True)
    elif numba.config.NUMBA_NUM_THREADS < 2:
        print("NUMBA_NUM_THREADS < 2: the 2-thread ratio skipped", flush=True)
    jobs = build_jobs(a, limit)
    warm_up(limit, a.durations)
    start = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "load_before": os.getloadavg(), "cpus": os.cpu_count(),
             "threading_layer": numba.threading_layer(), "pairs": a.pairs,
             "fleets": a.fleets, "cycles": a.cycles, "durations": a.durations,
             "reference": str(path) if limit else None}
    res = dict(start, **summarize(rounds(jobs, a.pairs)))
    print(f"{start['date']}, {a.pairs} rounds, {a.fleets} fleets x {a.cycles} cycles "
          f"((g): x {G_CYCLES_FRACTION:g}), (a) durations {a.durations}, numba {numba.__version__} "
          f"({start['threading_layer']}), load before {start['load_before'][0]:.2f}")
    print(report(res))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

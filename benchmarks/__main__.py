"""``python -m benchmarks [--quick] [--json PATH] [--only SECTIONS]``: run the
benchmarks, print a table, write JSON (default benchmarks/results/latest.json).

Sections: throughput (a, b, c, g, each on 1 and 2 threads), breakdown,
scaling (d, 1 thread), passage (f), reference (issue 12: (a) against the
independent reference kernel, and the first passages f, f256-16, f256-256
with and without the fast-forward, alternated run by run), compile, memory,
peers. Figures are medians of repeated runs with min and max; every ratio is
between figures measured in this same invocation. Beside every figure: the
cores its runs obtained (CPU over wall time) and the 1-minute load average
around them; a figure taken on a busy machine (load above the cores, or
under 90% of the cores asked for) is flagged BUSY.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import stormsim

from . import harness
from .workloads import SCALING_N, all_workloads, identical

SECTIONS = ("throughput", "breakdown", "scaling", "passage", "reference", "compile", "memory",
            "peers")

#: Targets (issue 12 for the first five), on this 2-core machine. The peers'
#: ratios are reported as measured figures, with no goal: the old goals
#: (1000x SimPy, 40x NumPy at 1.5 M fleet-cycles/s) could not be met together.
TARGETS = {
    "a_vs_reference": 1.25,         # (a) over the reference kernel, 1 and 2 threads
    # f, f256-16, f256-256 with the fast-forward: >= 3x the event loop *as the issue found
    # it*, which ran at 0.86-0.88x the reference kernel; a fixed yardstick of that is the
    # reference kernel's (a) rate, so the goal is 3.2x that. The ratio over today's event
    # loop (which has since got faster itself) is reported as a measured figure.
    "ff_vs_reference_a": 3.2,
    "fleet_cycles_per_s_per_thread": 1.5e6,   # (a), on a quiet core
    "ns_per_event": 20.0,
    "speedup_2_threads": 1.8,
    "cold_compile_s": 10.0,
    "cached_first_call_s": 0.5,
    "memory_growth_spread_mib": 2.0,
}

FULL = {"repeats": 5, "target_s": 1.0, "fleets": 1024, "scaling_target_s": 0.5,
        "passage_target_s": 1.0, "cold": 3, "cached": 5,
        "memory_cycles": (1_000, 10_000, 100_000),
        "peers": {"numpy": (1024, 20), "simpy": (8, 40), "simgrid": (2, 100)},
        "peer_repeats": 5, "peer_workloads": ("a", "b"), "ref_size": (1024, 400),
        "ff_scale": 1.0}
QUICK = {"repeats": 3, "target_s": 0.25, "fleets": 512, "scaling_target_s": 0.15,
         "passage_target_s": 0.25, "cold": 1, "cached": 2,
         "memory_cycles": (1_000, 10_000),
         "peers": {"numpy": (512, 10), "simpy": (4, 20), "simgrid": (2, 40)},
         "peer_repeats": 3, "peer_workloads": ("a",), "ref_size": (256, 400),
         "ff_scale": 0.25}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine_info() -> dict:
    import numba

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=harness.ROOT,
                                capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "stormsim"],
                                    cwd=harness.ROOT, capture_output=True,
                                    text=True).stdout.strip())
    except OSError:
        commit, dirty = "", False
    info = {"cpu": cpu, "cores": os.cpu_count(), "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "threading_layer": None, "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__,
            "stormsim": stormsim.__version__, "commit": commit, "stormsim_dirty": dirty,
            "os": platform.platform(), "loadavg_start": os.getloadavg(),
            "env": {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER",
                                                "NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
                    if k in os.environ}}
    try:
        import simpy

        info["simpy"] = simpy.__version__
    except ImportError:
        info["simpy"] = None
    return info


def fmt_rate(s: dict, scale: float = 1e6, digits: int = 3) -> str:
    return (f"{s['median'] / scale:.{digits}g} [{s['min'] / scale:.{digits}g}-"
            f"{s['max'] / scale:.{digits}g}]")


# -- sections ----------------------------------------------------------------------

def run_throughput(cfg, W, threads_all, out):
    rows = out.setdefault("throughput", {})
    for key in ("a", "b", "c", "g"):
        w = W[key]
        threads = threads_all
        cycles = harness.size_cycles(w, cfg["fleets"], 1, cfg["target_s"], 100, 200_000)
        log(f"({key}) {w.title}: {cfg['fleets']} fleets x {cycles} cycles, threads {threads}")
        rows[key] = harness.measure(w, cfg["fleets"], cycles, threads, cfg["repeats"])


def run_breakdown(cfg, W, out):
    """Where an event's time goes, from a variant of (a): sigma = 0, so no
    normal is drawn (and, the firing order being frozen, a new target always
    lands behind the others). With the fit of cost against log2 N from (d),
    this splits an event into a fixed part, random numbers and a part growing
    with N."""
    import dataclasses

    base = W["a"]
    nojit = dataclasses.replace(base, key="a-nojitter", title="(a) with sigma = 0",
                                fleet=identical(jitter=0.0))
    cycles = out["throughput"]["a"]["cycles"] if "a" in out.get("throughput", {}) else \
        harness.size_cycles(base, cfg["fleets"], 1, cfg["target_s"], 100, 200_000)
    log(f"breakdown: (a) and (a) with sigma = 0, {cfg['fleets']} x {cycles}, interleaved")
    rows = harness.measure_many([(base, cfg["fleets"], cycles, (1,)),
                                 (nojit, cfg["fleets"], cycles, (1,))], cfg["repeats"])
    res = {"a": rows[0], "a-nojitter": rows[1]}
    cpu = [r["by_threads"]["1"]["cpu_ns_per_event"]["median"] for r in rows]
    res["rng_cpu_ns_per_event"] = cpu[0] - cpu[1]
    out["breakdown"] = res


def run_scaling(cfg, W, out):
    specs = []
    for n in SCALING_N:
        w = W[f"d{n}"]
        fleets = max(32, 4096 // n)
        cycles = harness.size_cycles(w, fleets, 1, cfg["scaling_target_s"], 10, 200_000)
        specs.append((w, fleets, cycles, (1,)))
    log("(d) N = " + ", ".join(f"{s[0].n_jobs}: {s[1]} x {s[2]}" for s in specs)
        + " (fleets x cycles), 1 thread, interleaved")
    rows = harness.measure_many(specs, cfg["repeats"])
    out["scaling"] = scaling_summary({str(n): r for n, r in zip(SCALING_N, rows)})


def scaling_summary(rows: dict) -> dict:
    """Cost per event against N, relative to the smallest N, next to the
    ratio of logarithms; judged on CPU time per event (1 thread), which the
    other work on the machine inflates less than wall time."""
    ns_ = sorted(int(n) for n in rows)
    cpu = np.array([rows[str(n)]["by_threads"]["1"]["cpu_ns_per_event"]["median"] for n in ns_])
    wall = np.array([rows[str(n)]["by_threads"]["1"]["ns_per_event"]["median"] for n in ns_])
    n_arr = np.array(ns_, dtype=float)
    growth = {str(n): {"cost_ratio": float(c / cpu[0]), "cost_ratio_wall": float(x / wall[0]),
                       "log_ratio": float(math.log(n) / math.log(ns_[0]))}
              for n, c, x in zip(ns_, cpu, wall)}
    lin = np.polyfit(n_arr, cpu, 1)
    lg = np.polyfit(np.log2(n_arr), cpu, 1)
    return {"rows": rows, "growth_vs_N4": growth,
            "fit_linear_cpu_ns": {"per_event": float(lin[1]), "per_job": float(lin[0])},
            "fit_log2_cpu_ns": {"per_event": float(lg[1]), "per_doubling": float(lg[0])}}


def run_passage(cfg, W, threads_all, out):
    w = W["f"]
    fleets = harness.size_fleets_for_passage(w, 1, cfg["passage_target_s"], 256)
    log(f"(f) {w.title}: {fleets} fleets, stop at first collision, threads {threads_all}")
    from .workloads import PASSAGE_CYCLE_CAP

    out["passage"] = harness.measure(w, fleets, PASSAGE_CYCLE_CAP, threads_all, cfg["repeats"])


def run_reference(cfg, W, threads_all, out):
    """Issue 12's yardsticks, alternated run by run in this one process: (a)
    on stormsim and on the independent reference kernel
    (/work/shared/reference-kernel, imported as its README says, skipped where
    absent), and the first passages f, f256-16, f256-256 with the pure event
    loop and with the fast-forward; each on every thread count, the order
    flipped every repetition. Ratios are formed per repetition."""
    import dataclasses

    import numba

    from .fast_forward import SIZES as FF_SIZES, load_reference, reference_run
    from .workloads import passage_workloads

    limit = load_reference()
    fleets_a, cycles_a = cfg["ref_size"]
    ff = {}
    for key, w in passage_workloads().items():
        for on in (False, True):
            ff[key, on] = dataclasses.replace(w, key=f"{key}{'+ff' if on else ''}",
                                              kwargs={**w.kwargs, "fast_forward": on})
    ff_fleets = {k: max(1, int(FF_SIZES[k][0] * cfg["ff_scale"])) for k, _ in ff}
    log(f"reference: (a) {fleets_a} x {cycles_a} on stormsim and on the reference kernel"
        f"{'' if limit else ' (absent: skipped)'}; first passages "
        + ", ".join(f"{k} {n} fleets" for k, n in ff_fleets.items())
        + f" with and without the fast-forward; threads {threads_all}")

    def ref_once(t):
        saved = numba.get_num_threads()
        numba.set_num_threads(t)
        try:
            load = os.getloadavg()[0]
            c0, t0 = time.process_time(), time.perf_counter()
            fc = reference_run(limit, fleets_a, cycles_a)
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
            return {"fleet_cycles": fc, "cpu": cpu, "wall": wall,
                    "load": max(load, os.getloadavg()[0])}
        finally:
            numba.set_num_threads(saved)

    def ours_once(w, fleets, cycles, t):
        load = os.getloadavg()[0]
        one = harness.time_one(w, fleets, cycles, t)
        one["load"] = max(load, os.getloadavg()[0])
        return one

    from .workloads import PASSAGE_CYCLE_CAP

    # warm up (the reference kernel compiles in each new process)
    if limit is not None:
        for t in threads_all:
            numba.set_num_threads(t)
            reference_run(limit, 2, 10)
        numba.set_num_threads(max(threads_all))
    for w in ff.values():
        stormsim.simulate(w.fleet, fleets=2, cycles=50, seed=harness.SEED, **w.kwargs)
    raw: dict = {}
    for rep in range(cfg["repeats"]):
        for t in threads_all:
            jobs = [("a", lambda t=t: ours_once(W["a"], fleets_a, cycles_a, t))]
            if limit is not None:
                jobs.append(("reference", lambda t=t: ref_once(t)))
            for key, on in ff:
                jobs.append((ff[key, on].key, lambda w=ff[key, on], n=ff_fleets[key], t=t:
                             ours_once(w, n, PASSAGE_CYCLE_CAP, t)))
            for name, job in (jobs if rep % 2 == 0 else jobs[::-1]):
                one = job()
                raw.setdefault(f"{name}@{t}", []).append(
                    {k: one[k] for k in ("fleet_cycles", "cpu", "wall", "load")})
    res = {"fleets_cycles_a": [fleets_a, cycles_a], "ff_fleets": ff_fleets, "rates": {},
           "ratio_unit": "firings (fleet-cycles x N) per second",
           "ratios": {}, "reference_present": limit is not None}
    for name, runs in raw.items():
        res["rates"][name] = {
            "fleet_cycles_per_cpu_s": harness.summary([r["fleet_cycles"] / r["cpu"] for r in runs]),
            "fleet_cycles_per_s": harness.summary([r["fleet_cycles"] / r["wall"] for r in runs]),
            "cpu_per_wall": harness.summary([r["cpu"] / r["wall"] for r in runs]),
            "loadavg": harness.summary([r["load"] for r in runs])}

    n_jobs = {"a": W["a"].n_jobs, "reference": W["a"].n_jobs,
              **{w.key: w.n_jobs for w in ff.values()}, **{k: w.n_jobs for (k, _), w in ff.items()}}

    def ratio(num, den, t):
        """Per repetition: by CPU time on 1 thread, by wall time on more; in
        firings (fleet-cycles x N), which for N = 16 against (a) is fleet-cycles."""
        field = "cpu" if t == 1 else "wall"
        a, b = raw.get(f"{num}@{t}"), raw.get(f"{den}@{t}")
        if not a or not b:
            return None
        scale = n_jobs[num] / n_jobs[den]
        return harness.summary([scale * (x["fleet_cycles"] / x[field])
                                / (y["fleet_cycles"] / y[field]) for x, y in zip(a, b)])

    for t in threads_all:
        res["ratios"][f"a/reference@{t}"] = ratio("a", "reference", t)
        for key, on in ff:
            if on:
                res["ratios"][f"{key}:ff/loop@{t}"] = ratio(f"{key}+ff", key, t)
                res["ratios"][f"{key}+ff/reference(a)@{t}"] = ratio(f"{key}+ff", "reference", t)
                res["ratios"][f"{key}/reference(a)@{t}"] = ratio(key, "reference", t)
    out["reference"] = res


def run_compile(cfg, out):
    log(f"compile: {cfg['cold']} cold (empty cache dir) + {cfg['cached']} cached, "
        "fresh interpreters")
    out["compile"] = harness.compile_times(cfg["cold"], cfg["cached"])


def run_memory(cfg, out):
    log(f"memory: (a), 16 fleets, cycles {cfg['memory_cycles']}, fresh interpreters")
    out["memory"] = harness.memory_profile(cfg["memory_cycles"])


def run_peers(cfg, W, out):
    from . import peers

    res = {"verify": {}, "timing": {}, "skipped": {}}
    names = ["numpy", "simpy"]
    try:
        import simpy  # noqa: F401
    except ImportError:
        names.remove("simpy")
        res["skipped"]["simpy"] = "simpy is not installed (pip install simpy)"
    if peers.simgrid_available():
        names.append("simgrid")
    else:
        res["skipped"]["simgrid"] = (f"{peers.SIMGRID_PYTHON} cannot import simgrid "
                                     "(apt-get install python3-simgrid)")
    for name in names:
        log(f"peers: verifying {name} against stormsim on deterministic cases")
        try:
            rows = peers.verify(name)
        except Exception as exc:  # a peer that crashes or hangs is reported, not fatal
            res["skipped"][name] = f"verification failed to run: {exc!r}"[:2000]
            log(f"peers: {name} could not be verified: {exc!r}"[:500])
            continue
        res["verify"][name] = rows
        if not all(r["ok"] for r in rows):
            bad = [r for r in rows if not r["ok"]]
            res["skipped"][name] = f"disagrees with stormsim: {bad}"
            log(f"peers: {name} FAILED verification, not timed: {bad}")
            continue
        for key in cfg["peer_workloads"]:
            fleets, cycles = cfg["peers"][name]
            log(f"peers: timing {name} on ({key}), {fleets} fleets x {cycles} cycles")
            try:
                res["timing"].setdefault(name, {})[key] = harness.time_peer(
                    name, W[key], fleets, cycles, cfg["peer_repeats"])
            except Exception as exc:
                res["skipped"][f"{name} ({key})"] = f"timing failed: {exc!r}"[:2000]
                log(f"peers: timing {name} on ({key}) failed: {exc!r}"[:500])
        if not res["timing"].get(name):
            res["timing"].pop(name, None)
    out["peers"] = res


# -- targets and report --------------------------------------------------------------

def evaluate(out) -> list[dict]:
    rows = []

    def add(name, measured, threshold, met, unit="", note=""):
        rows.append({"target": name, "measured": measured, "threshold": threshold,
                     "met": None if measured is None or met is None else bool(met),
                     "unit": unit, "note": note})

    def contention(res, t):
        """A note when the machine was busy around the runs on t threads."""
        s = res["by_threads"][str(t)]
        got = s["cpu_per_wall"]["median"]
        if "loadavg" in s and harness.busy(s, t):
            return (f"BUSY: load average up to {s['loadavg']['max']:.2f}, runs got {got:.2f} "
                    f"of {t} cores; by CPU time {s['cpu_ns_per_event']['median']:.1f} ns/event")
        if got < 0.9 * t:
            return (f"runs got {got:.2f} of {t} cores (machine busy); by CPU time "
                    f"{s['cpu_ns_per_event']['median']:.1f} ns/event")
        return ""

    a = out.get("throughput", {}).get("a")
    a1 = a["by_threads"]["1"] if a else None
    if a1:
        v = a1["fleet_cycles_per_s"]["median"]
        add("(a) fleet-cycles/s per thread", v, TARGETS["fleet_cycles_per_s_per_thread"],
            v >= TARGETS["fleet_cycles_per_s_per_thread"], "", contention(a, 1))
        v = a1["ns_per_event"]["median"]
        add("(a) ns per event, 1 thread (about)", v, TARGETS["ns_per_event"],
            v <= TARGETS["ns_per_event"] * 1.1, "ns", contention(a, 1))
        two = a["by_threads"].get("2")
        if two:
            v = two["speedup_vs_1"]["median"]
            add("(e) speed-up 1 -> 2 threads", v, TARGETS["speedup_2_threads"],
                v >= TARGETS["speedup_2_threads"], "x", contention(a, 2))
    ref = out.get("reference")
    if ref and ref.get("reference_present"):
        for name, r in ref["ratios"].items():
            if r is None:
                continue
            t = int(name.rsplit("@", 1)[1])
            how = "CPU time" if t == 1 else "wall time"
            what, thr = None, None
            if name.startswith("a/reference"):
                what, thr = f"(a) / reference kernel (a), {t} thread(s), by {how}", \
                    TARGETS["a_vs_reference"]
            elif ":ff/loop" in name and t == 1:
                what = f"{name.split(':')[0]}: fast-forward / event loop, 1 thread"
            elif "+ff/reference" in name and t == 1:
                what, thr = f"{name.split('+')[0]} with fast-forward / reference kernel (a), " \
                    "1 thread", TARGETS["ff_vs_reference_a"]
            if what is None:
                continue
            rates = ref["rates"].get(f"{name.split('/')[0].split(':')[0]}@{t}", {})
            note = f"min {r['min']:.3g}, max {r['max']:.3g}"
            lv = rates.get("loadavg", {}).get("max")
            if lv is not None:
                note += f"; load average up to {lv:.2f}"
                if lv > (os.cpu_count() or 1) + 0.25:
                    note = "BUSY: " + note
            if thr is None:
                note += "; a measured figure (the goal is the row over the reference kernel)"
            add(what, r["median"], thr, None if thr is None else r["median"] >= thr, "x", note)
    timing = out.get("peers", {}).get("timing", {})
    if a1:
        for name in ("simpy", "numpy", "simgrid"):
            if "a" in timing.get(name, {}):
                v, v_cpu = peer_ratios(out["throughput"], "a", timing[name]["a"])
                add(f"stormsim (1 thread) / {name}, (a)", v, None, None, "x",
                    f"by CPU time {v_cpu:.0f}x (a measured figure, no goal)")
    sc = out.get("scaling")
    if sc:
        worst = max(g["cost_ratio"] / g["log_ratio"] for n, g in sc["growth_vs_N4"].items()
                    if int(n) != SCALING_N[0])
        add("(d) CPU cost/event(N)/cost(4) over ln N/ln 4, worst N", worst, 1.0,
            worst <= 1.0)
    comp = out.get("compile")
    if comp:
        v = comp["cold_first_call_s"]["median"]
        add("cold compile (first call, empty cache)", v, TARGETS["cold_compile_s"],
            v < TARGETS["cold_compile_s"], "s",
            f"CPU {comp['cold_first_call_cpu_s']['median']:.2f} s")
        v = comp["cached_first_call_s"]["median"]
        add("cached first call", v, TARGETS["cached_first_call_s"],
            v < TARGETS["cached_first_call_s"], "s",
            f"CPU {comp['cached_first_call_cpu_s']['median']:.2f} s; import "
            f"{comp['cached_import_s']['median']:.2f} s more")
    mem = out.get("memory")
    if mem:
        v = mem["maxrss_growth_spread_mib"]
        add("peak RSS growth, spread over cycles", v, TARGETS["memory_growth_spread_mib"],
            v <= TARGETS["memory_growth_spread_mib"] and mem["traced_peak_ratio"] <= 1.1, "MiB")
    return rows


def peer_ratios(tp: dict, key: str, t: dict) -> tuple[float, float]:
    """stormsim (1 thread) / peer on workload ``key``: by wall time and by CPU time."""
    ref = tp.get(key, {}).get("by_threads", {}).get("1")
    if not ref:
        return float("nan"), float("nan")
    wall = ref["fleet_cycles_per_s"]["median"] / t["fleet_cycles_per_s"]["median"]
    cpu = ref["fleet_cycles_per_cpu_s"]["median"] / t["fleet_cycles_per_cpu_s"]["median"]
    return wall, cpu


def report(out) -> str:
    m = out["machine"]
    lines = [
        f"stormsim benchmarks  {out['started']}  ({out['mode']})",
        f"machine: {m['cpu']}, {m['cores']} cores, numba {m['numba']} "
        f"({m['numba_threads']} threads), Python {m['python']}, NumPy {m['numpy']}, "
        f"threading layer {m.get('threading_layer')} {m.get('env') or ''}, "
        f"commit {m['commit']}{' + uncommitted stormsim/' if m['stormsim_dirty'] else ''}, "
        f"load avg {m['loadavg_start'][0]:.2f} -> {out.get('loadavg_end', [float('nan')])[0]:.2f}",
        "Figures: median [min-max] of the repeats; Mfc/s = million fleet-cycles (N firings) "
        "per second; ns/event = wall time per phase change (cpu ns/ev: CPU time); "
        "cpu/wall = cores the run actually got (the machine is shared).",
        "",
        f"{'workload':<52} {'N':>5} {'thr':>3} {'fleets x cycles':>17} "
        f"{'Mfc/s':>22} {'Mevents/s':>20} {'ns/event':>9} {'cpu ns/ev':>9} {'cpu/wall':>8} "
        f"{'load':>5}",
    ]

    def row(label, n, t, res, tb):
        s = res["by_threads"][str(t)] if tb else res
        size = f"{res['fleets']} x {res['cycles']}" if res["cycles"] < 10**6 else \
            f"{res['fleets']} x passage"
        lines.append(f"{label:<52} {n:>5} {t:>3} {size:>17} "
                     f"{fmt_rate(s['fleet_cycles_per_s']):>22} "
                     f"{fmt_rate(s['events_per_s'], digits=3):>20} "
                     f"{s['ns_per_event']['median']:>9.1f} {s['cpu_ns_per_event']['median']:>9.1f} "
                     f"{s['cpu_per_wall']['median']:>8.2f} {_load(s, t)}")

    tp = out.get("throughput", {})
    for key in ("a", "b", "c", "g"):
        if key in tp:
            for t in tp[key]["by_threads"]:
                label = f"({key}) {tp[key]['title']}" if t == "1" else \
                    ("(e) = (a) on 2 threads" if key == "a" else f"({key}) on {t} threads")
                row(label, tp[key]["n_jobs"], int(t), tp[key], True)
    if "a" in tp and "2" in tp["a"]["by_threads"]:
        sp = tp["a"]["by_threads"]["2"]["speedup_vs_1"]
        lines.append(f"{'':<52} speed-up 1 -> 2 threads: {fmt_rate(sp, 1, 3)} "
                     f"(paired repeats), parallel efficiency {sp['median'] / 2:.0%}")
    sc = out.get("scaling")
    if sc:
        for n in SCALING_N:
            r = sc["rows"][str(n)]
            g = sc["growth_vs_N4"][str(n)]
            row(f"(d) (a) with N={n}  [CPU cost x{g['cost_ratio']:.2f}, ln x{g['log_ratio']:.2f}]",
                n, 1, r, True)
        lf = sc["fit_log2_cpu_ns"]
        lines.append(f"{'':<52} fit: CPU ns/event = {lf['per_event']:.1f} + "
                     f"{lf['per_doubling']:.2f} log2 N")
    ps = out.get("passage")
    if ps:
        for t in ps["by_threads"]:
            row("(f) first passage, stagger, m/sigma=30", ps["n_jobs"], int(t), ps, True)
        p = ps["passage"]
        extra = ""
        if "2" in ps["by_threads"]:
            extra = f"; speed-up 1 -> 2 threads {fmt_rate(ps['by_threads']['2']['speedup_vs_1'], 1, 3)}"
        lines.append(f"{'':<52} passage cycle median {p['cycle_median']:.0f}, p99 "
                     f"{p['cycle_p99']:.0f}, max {p['cycle_max']}; passed "
                     f"{p['passed_fraction']:.3f}{extra}")
    ref = out.get("reference")
    if ref:
        lines.append("")
        lines.append("issue 12, alternated run by run (fc/s: fleet-cycles per CPU second on 1 "
                     "thread, per wall second on 2):")
        for name, r in ref["rates"].items():
            key, t = name.rsplit("@", 1)
            rate = r["fleet_cycles_per_cpu_s"] if t == "1" else r["fleet_cycles_per_s"]
            lines.append(f"  {key:<16} {t} thr  {fmt_rate(rate):>24} Mfc/s  cores "
                         f"{r['cpu_per_wall']['median']:.2f}  load {_load(r, int(t))}")
        for name, r in ref["ratios"].items():
            if r is not None:
                lines.append(f"  {name:<32} {fmt_rate(r, 1, 3)}")
    bd = out.get("breakdown")
    if bd:
        a_ = bd["a"]["by_threads"]["1"]["cpu_ns_per_event"]["median"]
        z_ = bd["a-nojitter"]["by_threads"]["1"]["cpu_ns_per_event"]["median"]
        lines.append("")
        text = (f"breakdown (1 thread, CPU time): (a) {a_:.1f} ns/event, with sigma = 0 "
                f"{z_:.1f} ns/event -> random normals ~{bd['rng_cpu_ns_per_event']:.1f} ns/event")
        if sc:
            lf = sc["fit_log2_cpu_ns"]
            text += (f"; against N: {lf['per_event']:.1f} + {lf['per_doubling']:.2f} log2 N "
                     f"ns/event ({lf['per_doubling'] * 4:.1f} ns of it at N = 16)")
        lines.append(text)
    comp = out.get("compile")
    if comp:
        lines.append("")
        lines.append(f"compile: cold first call {fmt_rate(comp['cold_first_call_s'], 1, 3)} s "
                     f"(CPU {comp['cold_first_call_cpu_s']['median']:.2f} s; import "
                     f"{comp['cold_import_s']['median']:.2f} s); cached first call "
                     f"{fmt_rate(comp['cached_first_call_s'], 1, 3)} s (CPU "
                     f"{comp['cached_first_call_cpu_s']['median']:.2f} s; import "
                     f"{comp['cached_import_s']['median']:.2f} s); second call "
                     f"{comp['second_call_s']['median'] * 1e3:.1f} ms")
    mem = out.get("memory")
    if mem:
        parts = ", ".join(f"{r['cycles']:.0e} cycles: +{r['maxrss_growth_mib']:.1f} MiB "
                          f"(traced {r['traced_peak_kib']:.0f} KiB)" for r in mem["rows"])
        lines.append(f"memory, peak RSS growth during simulate() of (a), 16 fleets: {parts}; "
                     f"baseline RSS {mem['rows'][0]['maxrss_before_mib']:.0f} MiB")
    pe = out.get("peers")
    if pe:
        lines.append("")
        lines.append(f"{'peer':<10} {'workload':>8} {'fleets x cycles':>16} {'fc/s':>24} "
                     f"{'events/s':>24} {'stormsim/peer':>14} {'(by CPU)':>9}  "
                     "verified (max rel. diff)")
        for name, by_w in pe["timing"].items():
            worst = max(max(r["firings"], r["end_time"], r["occupancy"])
                        for r in pe["verify"][name])
            for key, t in by_w.items():
                ratio, ratio_cpu = peer_ratios(tp, key, t)
                lines.append(f"{name:<10} {'(' + key + ')':>8} "
                             f"{str(t['fleets']) + ' x ' + str(t['cycles']):>16} "
                             f"{fmt_rate(t['fleet_cycles_per_s'], 1, 3):>24} "
                             f"{fmt_rate(t['events_per_s'], 1, 3):>24} {ratio:>13.0f}x "
                             f"{ratio_cpu:>8.0f}x  "
                             f"{len(pe['verify'][name])} cases ({worst:.1e})")
        for name, why in pe["skipped"].items():
            lines.append(f"{name:<10} skipped: {why}")
    tg = out.get("targets", [])
    if tg:
        lines.append("")
        lines.append("targets:")
        for r in tg:
            mark = {True: "met", False: "NOT MET", None: "info"}[r["met"]]
            meas = "-" if r["measured"] is None else f"{r['measured']:.4g}{r['unit']}"
            thr = "-" if r["threshold"] is None else f"{r['threshold']:.4g}{r['unit']}"
            note = f"  {r['note']}" if r.get("note") else ""
            lines.append(f"  {mark:<8} {r['target']:<62} {meas:>12}  (target {thr}){note}")
    return "\n".join(lines)


def _load(s: dict, t: int) -> str:
    """The 1-minute load average around a figure's runs (max), BUSY if it was."""
    if "loadavg" not in s:
        return "-"
    busy = harness.busy(s, t) if "cpu_per_wall" in s else False
    return f"{s['loadavg']['max']:.2f}{' BUSY' if busy else ''}"


def _md_rate(s: dict, scale: float, digits: int = 3) -> str:
    return (f"{s['median'] / scale:.{digits}g} ({s['min'] / scale:.{digits}g}–"
            f"{s['max'] / scale:.{digits}g})")


def markdown(out) -> str:
    """The README's performance section, from one set of results."""
    m = out["machine"]
    tp = out.get("throughput", {})
    lines = [
        "## Performance",
        "",
        f"`{out['command'].strip()}` ({out['mode']}; `make bench` runs the same), "
        f"{out['started'][:10]}, commit {m['commit']}"
        f"{' with uncommitted kernel changes' if m['stormsim_dirty'] else ''}: "
        f"{m['cpu']}, {m['cores']} cores shared with other work (load average "
        f"{m['loadavg_start'][0]:.1f}), Python {m['python']}, numba {m['numba']}, "
        f"NumPy {m['numpy']}. Medians of {out['config']['repeats']} runs (min–max); "
        "a fleet-cycle is N firings, an event one phase change; *cores* is CPU time "
        "over wall time, the share of the machine the run actually got.",
        "",
        "| workload | N | threads | fleets × cycles | M fleet-cycles/s | M events/s "
        "| ns/event | CPU ns/event | cores | load |",
        "|---|---:|---:|---|---|---|---:|---:|---:|---|",
    ]

    def row(label, n, t, res):
        s = res["by_threads"][str(t)]
        size = f"{res['fleets']} × {res['cycles']}" if res["cycles"] < 10**6 else \
            f"{res['fleets']} × to passage"
        lines.append(f"| {label} | {n} | {t} | {size} | {_md_rate(s['fleet_cycles_per_s'], 1e6)} "
                     f"| {_md_rate(s['events_per_s'], 1e6)} | {s['ns_per_event']['median']:.1f} "
                     f"| {s['cpu_ns_per_event']['median']:.1f} "
                     f"| {s['cpu_per_wall']['median']:.2f} | {_load(s, t)} |")

    labels = {"a": "(a) identical, L = 0.6, fair, σ = 0.01 T, random launch",
              "b": "(b) = (a) behind a cap C = 0.75 N", "c": "(c) heterogeneous T, d ±30%",
              "g": "(g) = (a) with async checkpoints (s = 0.01 T, slowdown 0.2)"}
    for key in ("a", "b", "c", "g"):
        if key in tp:
            for t in tp[key]["by_threads"]:
                label = labels[key] if t == "1" else \
                    ("(e) = (a) on 2 threads" if key == "a" else f"{labels[key][:3]} on {t} threads")
                row(label, tp[key]["n_jobs"], int(t), tp[key])
    sc = out.get("scaling")
    if sc:
        for n in SCALING_N:
            row(f"(d) = (a) with N = {n}", n, 1, sc["rows"][str(n)])
    ps = out.get("passage")
    if ps:
        for t in ps["by_threads"]:
            row("(f) first passage, stagger, m/σ = 30", ps["n_jobs"], int(t), ps)
    lines.append("")
    notes = []
    if "a" in tp and "2" in tp["a"]["by_threads"]:
        sp = tp["a"]["by_threads"]["2"]["speedup_vs_1"]
        notes.append(f"1 → 2 threads on (a): {_md_rate(sp, 1)}× (paired runs)")
    if sc:
        g = sc["growth_vs_N4"]
        notes.append("cost per event against N = 4: " + ", ".join(
            f"N = {n}: ×{g[str(n)]['cost_ratio']:.2f} (ln N/ln 4 = {g[str(n)]['log_ratio']:.2f})"
            for n in SCALING_N[1:]))
    bd = out.get("breakdown")
    if bd and sc:
        lf = sc["fit_log2_cpu_ns"]
        notes.append(f"where an event's time goes (CPU time, 1 thread): "
                     f"{lf['per_event']:.1f} + {lf['per_doubling']:.2f} log2 N ns, of which "
                     f"random normals (σ > 0 against σ = 0 at N = 16) "
                     f"~{bd['rng_cpu_ns_per_event']:.1f} ns")
    if ps:
        p = ps["passage"]
        notes.append(f"(f) fleets stop at cycle {p['cycle_median']:.0f} (median), "
                     f"{p['cycle_p99']:.0f} (99th percentile), {p['cycle_max']} (max)")
    comp = out.get("compile")
    if comp:
        notes.append(f"compile: cold {_md_rate(comp['cold_first_call_s'], 1)} s (first call, "
                     f"empty cache); from the cache {_md_rate(comp['cached_first_call_s'], 1)} s "
                     f"(first call), plus {comp['cached_import_s']['median']:.2f} s to import")
    mem = out.get("memory")
    if mem:
        notes.append("peak memory of (a), 16 fleets: " + ", ".join(
            f"{r['cycles']:,} cycles +{r['maxrss_growth_mib']:.1f} MiB" for r in mem["rows"])
            + f" over a {mem['rows'][0]['maxrss_before_mib']:.0f} MiB process (flat in cycles)")
    lines += [f"- {x}" for x in notes]
    ref = out.get("reference")
    if ref and ref.get("reference_present"):
        fa, ka = ref["fleets_cycles_a"]
        lines += ["", "Issue 12's yardsticks, alternated run by run in the same process "
                  f"(median (min–max) of {out['config']['repeats']} repetitions; 1 thread by CPU "
                  "time, 2 threads by wall time): (a) on stormsim and on the independent "
                  f"reference kernel (`/work/shared/reference-kernel`, {fa} × {ka}), and the "
                  "first passages to the first collision (stagger, L = 0.6) with the event loop "
                  "and with the fast-forward (`fast_forward=True`, what `\"auto\"` takes for "
                  "them; the sweep key `fast_forward = true`):", "",
                  "| figure | threads | M fleet-cycles/s | cores | load |", "|---|---:|---|---:|---|"]
        names = {"a": "(a) stormsim", "reference": "(a) reference kernel"}
        for name, r in ref["rates"].items():
            key, t = name.rsplit("@", 1)
            label = names.get(key, key.replace("+ff", " with fast-forward")
                              if key.endswith("+ff") else f"{key} event loop")
            rate = r["fleet_cycles_per_cpu_s"] if t == "1" else r["fleet_cycles_per_s"]
            lines.append(f"| {label} | {t} | {_md_rate(rate, 1e6)} | "
                         f"{r['cpu_per_wall']['median']:.2f} | {_load(r, int(t))} |")
        lines += ["", "Ratios in firings per second (fleet-cycles × N: for N = 16, fleet-cycles; "
                  "f256-256 has N = 256 against (a)'s 16):", "",
                  "| ratio | threads | median (min–max) |", "|---|---:|---|"]
        for name, r in ref["ratios"].items():
            if r is not None:
                what, t = name.rsplit("@", 1)
                lines.append(f"| {what} | {t} | {_md_rate(r, 1)}× |")
    pe = out.get("peers")
    if pe and pe.get("timing"):
        lines += ["", "Peers, the same model written as their users would write it "
                  "(benchmarks/peers/), each first checked to give stormsim's firing times "
                  "on deterministic cases, timed on fewer fleets and cycles, per fleet-cycle:", "",
                  "| peer | workload | fleets × cycles | fleet-cycles/s | stormsim (1 thread) / peer "
                  "| same, by CPU time |",
                  "|---|---|---|---|---:|---:|"]
        for name, by_w in pe["timing"].items():
            for key, t in by_w.items():
                ratio, ratio_cpu = peer_ratios(tp, key, t)
                label = {"simpy": "SimPy", "numpy": "NumPy event loop",
                         "simgrid": "SimGrid (Python)"}.get(name, name)
                fc = t["fleet_cycles_per_s"]
                lines.append(f"| {label} | ({key}) | {t['fleets']} × {t['cycles']} | "
                             f"{fc['median']:,.0f} ({fc['min']:,.0f}–{fc['max']:,.0f}) "
                             f"| {ratio:,.0f}× "
                             f"| {ratio_cpu:,.0f}× |")
        for name, why in pe.get("skipped", {}).items():
            lines.append(f"\n{name}: skipped ({why})")
    tg = out.get("targets", [])
    if tg:
        lines += ["", "| target | measured | goal | | |", "|---|---:|---:|---|---|"]
        for r in tg:
            mark = {True: "met", False: "not met", None: "(no goal)"}[r["met"]]
            meas = "–" if r["measured"] is None else f"{r['measured']:.3g}{r['unit']}"
            thr = "–" if r["threshold"] is None else f"{r['threshold']:.3g}{r['unit']}"
            lines.append(f"| {r['target']} | {meas} | {thr} | {mark} | {r.get('note', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a fast pass: fewer, shorter repeats")
    ap.add_argument("--json", default=str(harness.ROOT / "benchmarks" / "results" / "latest.json"),
                    help="where to write the JSON results (default: %(default)s)")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections out of {','.join(SECTIONS)}")
    ap.add_argument("--render", metavar="JSON", default=None,
                    help="print the table and the README section of an earlier JSON, run nothing")
    ap.add_argument("--repeats", type=int, default=None, help="repeats per figure (>= 5 for "
                    "the published table; default 5, 3 with --quick)")
    args = ap.parse_args(argv)
    if args.render:
        out = json.loads(Path(args.render).read_text())
        if "scaling" in out:
            out["scaling"] = scaling_summary(out["scaling"]["rows"])
        out["targets"] = evaluate(out)
        print(report(out))
        print()
        print(markdown(out))
        return 0
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        ap.error(f"--only {','.join(unknown)}: unknown section(s); choose from {','.join(SECTIONS)}")
    cfg = dict(QUICK if args.quick else FULL)
    if args.repeats is not None:
        if args.repeats < 1:
            ap.error(f"--repeats {args.repeats}: must be >= 1")
        cfg["repeats"] = cfg["peer_repeats"] = args.repeats

    import numba

    threads_all = tuple(sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}))
    t_start = time.perf_counter()
    out = {"command": "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]),
           "started": _dt.datetime.now().isoformat(timespec="seconds"),
           "mode": "quick" if args.quick else "full",
           "config": {k: v for k, v in cfg.items()}, "machine": machine_info(),
           "targets_spec": TARGETS}
    W = all_workloads()
    log(f"warming up (compiling if the cache is cold); sections: {','.join(sections)}")
    stormsim.simulate(W["a"].fleet, fleets=8, cycles=10, seed=0)
    try:
        out["machine"]["threading_layer"] = numba.threading_layer()
    except ValueError:
        pass
    if "throughput" in sections:
        run_throughput(cfg, W, threads_all, out)
    if "breakdown" in sections:
        run_breakdown(cfg, W, out)
    if "scaling" in sections:
        run_scaling(cfg, W, out)
    if "passage" in sections:
        run_passage(cfg, W, threads_all, out)
    if "reference" in sections:
        run_reference(cfg, W, threads_all, out)
    if "peers" in sections:
        if "throughput" not in sections:
            log("peers: the ratios need (a); running it at 1 thread")
            w = W["a"]
            cycles = harness.size_cycles(w, cfg["fleets"], 1, cfg["target_s"], 100, 200_000)
            out.setdefault("throughput", {})["a"] = harness.measure(
                w, cfg["fleets"], cycles, (1,), cfg["repeats"])
        run_peers(cfg, W, out)
    if "compile" in sections:
        run_compile(cfg, out)
    if "memory" in sections:
        run_memory(cfg, out)
    out["loadavg_end"] = os.getloadavg()
    out["elapsed_s"] = time.perf_counter() - t_start
    out["targets"] = evaluate(out)
    text = report(out)
    print(text)
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=float) + "\n")
    md = path.with_suffix(".md")
    md.write_text(markdown(out))
    log(f"done in {out['elapsed_s']:.0f} s; JSON written to {path}, README section to {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Measurements that need a fresh interpreter; run as ``python -m benchmarks._probe``.

    compile            time ``import stormsim`` and the first simulate() call
                       (cold or cached, by the cache directory the caller gives
                       in STORMSIM_CACHE_DIR)
    memory CYCLES      peak memory of one simulate() call of workload (a)

Prints one JSON object on stdout.
"""
from __future__ import annotations

import json
import resource
import sys
import time


def _rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _current_rss_mib() -> float:
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return float("nan")


def compile_probe() -> dict:
    t0 = time.perf_counter()
    import stormsim

    t1 = time.perf_counter()
    from benchmarks.workloads import identical

    fleet = identical()
    c2 = time.process_time()
    t2 = time.perf_counter()
    stormsim.simulate(fleet, launch="random", fleets=4, cycles=10, seed=0)
    t3 = time.perf_counter()
    c3 = time.process_time()
    stormsim.simulate(fleet, launch="random", fleets=4, cycles=10, seed=0)
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "first_call_s": t3 - t2, "first_call_cpu_s": c3 - c2,
            "second_call_s": t4 - t3,
            "maxrss_mib": _rss_mib()}


def memory_probe(cycles: int, fleets: int) -> dict:
    import tracemalloc

    import stormsim
    from benchmarks.workloads import identical

    fleet = identical()
    stormsim.simulate(fleet, launch="random", fleets=fleets, cycles=10, seed=0)  # compile/load
    before_peak = _rss_mib()
    before_now = _current_rss_mib()
    tracemalloc.start()
    t0 = time.perf_counter()
    run = stormsim.simulate(fleet, launch="random", fleets=fleets, cycles=cycles, seed=0)
    wall = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"cycles": cycles, "fleets": fleets, "wall_s": wall,
            "events": int(run.events.sum()),
            "rss_before_mib": before_now, "maxrss_before_mib": before_peak,
            "maxrss_after_mib": _rss_mib(),
            "maxrss_growth_mib": _rss_mib() - before_peak,
            "traced_peak_kib": traced_peak / 1024.0}


def main(argv: list[str]) -> None:
    if argv[:1] == ["compile"]:
        out = compile_probe()
    elif argv[:1] == ["memory"]:
        out = memory_probe(int(argv[1]), int(argv[2]) if len(argv) > 2 else 16)
    else:
        raise SystemExit("usage: python -m benchmarks._probe compile | memory CYCLES [FLEETS]")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])

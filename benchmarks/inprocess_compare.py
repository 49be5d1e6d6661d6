"""Old against new in ONE process, alternating short runs (finer than subprocesses).

``python -m benchmarks.inprocess_compare OLD_TREE [--pairs 40] [--workload a]``

The old tree's package is imported under the name ``stormsim_old`` next to
this tree's ``stormsim``; each pair times one simulate() call of each (order
flipped every pair) on the same workload and seed, by CPU time, and forms
the ratio new/old. Pairs seconds apart see the same machine load, so the
median ratio is robust to other tenants; its spread is printed. Beside it,
``python -m benchmarks.ratios`` times this tree against the independent
reference kernel (1 and 2 threads) and (g) against (a), the same way.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

import stormsim


def load_old(tree: str):
    init = Path(tree) / "stormsim" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "stormsim_old", init, submodule_search_locations=[str(init.parent)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["stormsim_old"] = mod
    spec.loader.exec_module(mod)
    return mod


WORKLOADS = {
    "a": ({"n_jobs": 16, "T": 1.0, "load": 0.6, "jitter": 0.01}, {}),
    "g": ({"n_jobs": 16, "T": 1.0, "load": 0.6, "jitter": 0.01},
          {"checkpoint": "async", "snapshot": 0.01, "slowdown": 0.2}),
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old_tree")
    p.add_argument("--pairs", type=int, default=40)
    p.add_argument("--workload", default="a", choices=sorted(WORKLOADS))
    p.add_argument("--fleets", type=int, default=128)
    p.add_argument("--cycles", type=int, default=300)
    p.add_argument("--same", action="store_true",
                   help="the workload's options on the old tree too (old (g) against new (g); "
                        "without it the old tree runs the base model, (a))")
    a = p.parse_args(argv)
    old = load_old(a.old_tree)
    base, extra = WORKLOADS[a.workload]
    n = base.pop("n_jobs")
    fleets = {"old": old.Fleet.identical(n, **base, **(extra if a.same else {})),
              "new": stormsim.Fleet.identical(n, **base, **extra)}
    sims = {"old": old.simulate, "new": stormsim.simulate}
    args = dict(launch="random", fleets=a.fleets, cycles=a.cycles, seed=12345, threads=1)
    for k in sims:  # load or compile
        sims[k](fleets[k], **dict(args, fleets=4, cycles=20))
    ns = {"old": [], "new": []}
    ratios = []
    for r in range(a.pairs):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        got = {}
        for k in order:
            c0 = time.process_time()
            run = sims[k](fleets[k], **args)
            got[k] = 1e9 * (time.process_time() - c0) / int(run.events.sum())
            ns[k].append(got[k])
        ratios.append(got["new"] / got["old"])
    q = statistics.quantiles(ratios, n=4)
    print(json.dumps({"workload": a.workload, "same": a.same, "pairs": a.pairs,
                      "old_ns_median": statistics.median(ns["old"]),
                      "new_ns_median": statistics.median(ns["new"]),
                      "ratio_median": statistics.median(ratios),
                      "ratio_quartiles": [q[0], q[2]], "ratio_min": min(ratios),
                      "ratio_max": max(ratios), "old_file": old.__file__}))


if __name__ == "__main__":
    main()

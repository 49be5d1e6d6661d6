"""Side-by-side timing of one workload on two source trees (an old commit and this one).

``python -m benchmarks.side_by_side OLD_TREE [--workload a] [--rounds 11]``

Each round runs one fresh interpreter per tree, alternating old and new (the
order flips every round), each timing ``--reps`` simulate() calls after a
warm-up, and reports its best CPU ns per event (the machine is shared: CPU
time is inflated less by other tenants than wall time, the best of a few
repetitions less than their mean). The ratio new/old is formed per round;
the median and the spread of those ratios are printed. Only the public API
that both trees share is used (Fleet.identical, simulate).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
import stormsim
kw = json.loads(sys.argv[1])
fleet = stormsim.Fleet.identical(kw["n"], T=1.0, load=kw["load"], jitter=kw["sigma"],
                                 **kw.get("extra", {}))
args = dict(launch="random", fleets=kw["fleets"], cycles=kw["cycles"], seed=12345, threads=1)
stormsim.simulate(fleet, **dict(args, fleets=8, cycles=50))  # load or compile the kernel
best = None
for _ in range(kw["reps"]):
    c0 = time.process_time()
    run = stormsim.simulate(fleet, **args)
    cpu = time.process_time() - c0
    ns = 1e9 * cpu / int(run.events.sum())
    best = ns if best is None else min(best, ns)
print(json.dumps({"ns_per_event": best, "file": stormsim.__file__,
                  "events": int(run.events.sum())}))
"""

WORKLOADS = {
    # (a): N = 16 identical, L = 0.6, fair, uncapped, sigma = 0.01 T, random launch.
    "a": {"n": 16, "load": 0.6, "sigma": 0.01},
    # (g): (a) with asynchronous checkpoints (see workloads.py, ASYNC).
    "g": {"n": 16, "load": 0.6, "sigma": 0.01,
          "extra": {"checkpoint": "async", "snapshot": 0.01, "slowdown": 0.2}},
}


def child(tree: str, spec: dict) -> dict:
    # -S: no site processing, so an editable install of either tree cannot
    # shadow the other; the dependencies come from this interpreter's
    # site-packages, named explicitly.
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, site]))
    out = subprocess.run([sys.executable, "-S", "-c", CHILD, json.dumps(spec)], env=env,
                         capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old_tree", help="a checkout of the old commit (its root directory)")
    p.add_argument("--new-tree", default=str(ROOT))
    p.add_argument("--workload", default="a", choices=sorted(WORKLOADS))
    p.add_argument("--old-workload", default=None, help="workload for the old tree (default: same)")
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--fleets", type=int, default=256)
    p.add_argument("--cycles", type=int, default=400)
    a = p.parse_args(argv)
    spec_new = dict(WORKLOADS[a.workload], fleets=a.fleets, cycles=a.cycles, reps=a.reps)
    spec_old = dict(WORKLOADS[a.old_workload or a.workload], fleets=a.fleets, cycles=a.cycles,
                    reps=a.reps)
    ratios, olds, news = [], [], []
    for r in range(a.rounds):
        order = [("old", a.old_tree, spec_old), ("new", a.new_tree, spec_new)]
        if r % 2:
            order.reverse()
        got = {name: child(tree, spec) for name, tree, spec in order}
        olds.append(got["old"]["ns_per_event"])
        news.append(got["new"]["ns_per_event"])
        ratios.append(news[-1] / olds[-1])
        print(f"round {r}: old {olds[-1]:.2f} ns/event, new {news[-1]:.2f} ns/event, "
              f"ratio {ratios[-1]:.4f}", flush=True)
    print(json.dumps({"workload": a.workload, "old_workload": a.old_workload or a.workload,
                      "rounds": a.rounds,
                      "old_ns_median": statistics.median(olds),
                      "new_ns_median": statistics.median(news),
                      "ratio_median": statistics.median(ratios),
                      "ratio_min": min(ratios), "ratio_max": max(ratios),
                      "old_file": got["old"]["file"], "new_file": got["new"]["file"]}))


if __name__ == "__main__":
    main()

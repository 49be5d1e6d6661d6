"""A SimGrid model (Python bindings, S4U), written the way a SimGrid user would.

Run by the system Python that has Debian's python3-simgrid (pip's simgrid does
not build here), as a script: a JSON list of cases on stdin, a JSON list of
results on stdout. Standard library only: that Python has no NumPy.

The platform: one host per fleet, with C cores of speed 1 Pflop/s (N cores
when uncapped), so that n computing jobs each get min(1, C/n) of a core; on it
one disk, the storage, of write bandwidth 1 PB/s (see BANDWIDTH), shared
among concurrent writes (linear sharing is fair, f = 1; any other f goes
through the disk's nonlinear sharing callback, which returns the capacity
f(n)). Each job is an
actor: execute(T), write(d), repeat. All fleets run side by side in one
engine (SimGrid allows one engine per process). A fleet stops recording at
its slowest job's K-th firing; its actors then finish their activity and exit.
"""
from __future__ import annotations

import json
import random
import sys
import time

#: Units: 1 s of compute is SPEED flops, 1 s of lone write is BANDWIDTH bytes.
#: SimGrid counts I/O in whole bytes (the remaining size is truncated at every
#: update): at 1 GB/s that shifts each write end by up to 1 ns (~1e-9 relative
#: here), so the storage runs at 1 PB/s, a byte being 1e-15 s; compute alike.
SPEED = 1e15
BANDWIDTH = 1e15

#: Extra --cfg items for the engine (none needed at these units).
CONFIG = ()


class FleetState:
    def __init__(self, case, theta, index, record):
        self.N = len(case["T"])
        self.K = int(case["cycles"])
        self.count = [0] * self.N
        self.n_done = 0
        self.done = False
        self.end_time = None
        self.firings = [[] for _ in range(self.N)] if record else None
        self.events = 0
        self.nw = 0
        self.last = 0.0
        self.occupancy = [0.0] * (self.N + 1)
        self.theta = theta
        self.rng = random.Random(int(case.get("seed", 0)) * 1000003 + index)

    def tick(self, now):
        """Accumulate time with the current number of writers."""
        self.occupancy[self.nw] += now - self.last
        self.last = now


def build_and_run(cases, record, config=()):
    from simgrid import Actor, Disk, Engine, NetZone, this_actor

    engine = Engine(["stormsim-simgrid-peer", "--log=root.thres:critical"]
                    + [f"--cfg={item}" for item in config])
    zone = NetZone.create_full_zone("fleets")
    fleets = []  # (case index, FleetState)

    def job(state, case, disk, i, work):
        T, d, sigma = case["T"][i], case["d"][i], case["sigma"][i]
        volume = int(round(d * BANDWIDTH))
        while True:
            if work > 0.0:
                this_actor.execute(work * SPEED)
            if state.done:
                return
            now = Engine.clock
            state.tick(now)
            state.events += 1
            k = state.count[i]
            if state.firings is not None and k < state.K:
                state.firings[i].append(now)
            state.count[i] = k + 1
            state.nw += 1
            if k + 1 == state.K:
                state.n_done += 1
                if state.n_done == state.N:
                    state.done = True
                    state.end_time = now
                    return
            disk.write(volume)
            if state.done:
                return
            state.tick(Engine.clock)
            state.nw -= 1
            state.events += 1
            work = T if sigma <= 0.0 else max(0.0, T + sigma * state.rng.gauss(0.0, 1.0))

    for c, case in enumerate(cases):
        N = len(case["T"])
        cap = float(case["cap"])
        cores = N if cap >= N else int(cap)
        if cores != cap and cap < N:
            raise ValueError(f"cap = {cap}: SimGrid models a cap as a host's core count, "
                             "so it must be an integer")
        f = [float(x) for x in case["f"]]
        for j, theta in enumerate(case["theta"]):
            host = zone.create_host(f"case{c}-fleet{j}", SPEED)
            host.core_count = cores
            disk = host.create_disk("storage", BANDWIDTH, BANDWIDTH)
            if any(x != 1.0 for x in f[1:]):
                # A write uses both the disk's WRITE and READWRITE constraints:
                # both get the callback, or the READWRITE one caps f(n) at 1.
                share = (lambda capacity, n, f=f: BANDWIDTH * f[min(n, len(f) - 1)])
                for op in (Disk.Operation.WRITE, Disk.Operation.READWRITE):
                    disk.set_sharing_policy(op, Disk.SharingPolicy.NONLINEAR, share)
            host.seal()
            state = FleetState(case, theta, len(fleets), record)
            fleets.append((c, state))
            for i in range(N):
                Actor.create(f"job{i}", host, job, state, case, disk, i,
                             (1.0 - float(theta[i])) * float(case["T"][i]))
    zone.seal()
    c0 = time.process_time()
    t0 = time.perf_counter()
    engine.run()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    results = []
    for c in range(len(cases)):
        mine = [s for cc, s in fleets if cc == c]
        results.append({
            "firings": [s.firings for s in mine] if record else None,
            "occupancy": [s.occupancy for s in mine],
            "end_time": [s.end_time for s in mine],
            "events": [s.events for s in mine],
            "wall": wall,
            "cpu": cpu,
        })
    del engine  # SimGrid's own examples do this before exit (callback cleanup)
    return results


def main():
    request = json.load(sys.stdin)
    results = build_and_run(request["cases"], bool(request.get("record", False)),
                            request.get("config", CONFIG))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()

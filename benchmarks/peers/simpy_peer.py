"""A SimPy model, written the way a SimPy user would write it.

One process per job (compute, fire, write, repeat) and one environment per
fleet. SimPy has no processor-sharing resource, so the storage (and, under a
binding cap, the power budget) is the usual hand-written one: it keeps each
user's remaining amount, and on every arrival and departure brings them up to
date at the old rate, recomputes the rate for the new number of users and
schedules a timeout for the next completion (superseded timeouts are ignored).
Without a binding cap compute is a plain ``env.timeout``.
"""
from __future__ import annotations

import random
import time

import simpy

#: MODEL.md tie rule: an amount within this fraction of the job's T_i or d_i
#: of zero has reached zero.
TIE_RTOL = 1e-12


class ProcessorSharing:
    """A resource shared by its n current users, each served at ``rate(n)``.

    ``use(amount, scale)`` returns an event that succeeds when ``amount`` has
    been served; ``scale`` sets the tolerance of the tie rule. ``occupancy[n]``
    accumulates the time spent with n users.
    """

    def __init__(self, env: simpy.Environment, rate, n_max: int):
        self.env = env
        self.rate = rate
        self.users = {}          # event -> [remaining, tolerance]
        self.last = env.now
        self.generation = 0
        self.occupancy = [0.0] * (n_max + 1)

    def use(self, amount: float, scale: float) -> simpy.Event:
        self._advance()
        done = self.env.event()
        self.users[done] = [amount, TIE_RTOL * scale]
        self._reschedule()
        return done

    def _advance(self) -> None:
        now = self.env.now
        dt = now - self.last
        if dt > 0.0:
            n = len(self.users)
            self.occupancy[n] += dt
            if n:
                served = self.rate(n) * dt
                for user in self.users.values():
                    user[0] -= served
        self.last = now

    def _reschedule(self) -> None:
        self.generation += 1
        if not self.users:
            return
        first = min(user[0] for user in self.users.values())
        timer = self.env.timeout(max(first, 0.0) / self.rate(len(self.users)))
        timer.callbacks.append(lambda _event, g=self.generation: self._complete(g))

    def _complete(self, generation: int) -> None:
        if generation != self.generation:
            return  # superseded by a later arrival or departure
        self._advance()
        finished = [ev for ev, (left, tol) in self.users.items() if left <= tol]
        for ev in finished:
            del self.users[ev]
            ev.succeed()
        self._reschedule()


class Fleet:
    """One fleet: N job processes, a storage and (capped) a power budget."""

    def __init__(self, env, T, d, cap, f, sigma, theta, cycles, rng, record):
        self.env = env
        self.N = N = len(T)
        self.T, self.d, self.sigma = T, d, sigma
        self.cycles = cycles
        self.rng = rng
        self.storage = ProcessorSharing(env, lambda n: f[n] / n, N)
        self.cpu = ProcessorSharing(env, lambda n: min(1.0, cap / n), N) if cap < N else None
        self.firings = [[] for _ in range(N)] if record else None
        self.count = [0] * N
        self.n_done = 0
        self.events = 0
        self.done = env.event()
        for i in range(N):
            env.process(self.job(i, (1.0 - theta[i]) * T[i]))

    def job(self, i: int, work: float):
        env = self.env
        while True:
            if work > 0.0:
                if self.cpu is None:
                    yield env.timeout(work)
                else:
                    yield self.cpu.use(work, self.T[i])
            # Fire: a checkpoint write starts.
            self.events += 1
            k = self.count[i]
            if self.firings is not None and k < self.cycles:
                self.firings[i].append(env.now)
            self.count[i] = k + 1
            if k + 1 == self.cycles:
                self.n_done += 1
                if self.n_done == self.N:
                    self.done.succeed()
            yield self.storage.use(self.d[i], self.d[i])
            self.events += 1
            work = self.T[i]
            if self.sigma[i] > 0.0:
                work = max(0.0, work + self.sigma[i] * self.rng.gauss(0.0, 1.0))


def run(case: dict) -> dict:
    """Simulate ``case`` fleet after fleet; return firings, occupancy, end
    times, event counts and the wall time of the simulation."""
    T = [float(x) for x in case["T"]]
    d = [float(x) for x in case["d"]]
    sigma = [float(x) for x in case["sigma"]]
    f = [float(x) for x in case["f"]]
    cap = float(case["cap"])
    K = int(case["cycles"])
    record = bool(case.get("record", False))
    rng = random.Random(case.get("seed", 0))
    out = {"firings": [], "occupancy": [], "end_time": [], "events": []}
    c0 = time.process_time()
    t0 = time.perf_counter()
    for theta in case["theta"]:
        env = simpy.Environment()
        fleet = Fleet(env, T, d, cap, f, sigma, [float(x) for x in theta], K, rng, record)
        env.run(until=fleet.done)
        fleet.storage._advance()
        out["firings"].append(fleet.firings)
        out["occupancy"].append(fleet.storage.occupancy)
        out["end_time"].append(env.now)
        out["events"].append(fleet.events)
    out["wall"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    if not record:
        out["firings"] = None
    return out

"""A short, obviously-correct reference integrator of MODEL.md, in plain Python.

It shares no code with the kernel: it keeps every job's remaining amount
directly and, at each event, recomputes the rates from the counts, advances
every job, and applies the phase changes of the instant. It is slow and
meant for small fleets and short horizons.

Its random numbers re-implement the engine's documented streams (SplitMix64
on Python integers, a ziggurat for normals) so that jittered runs can be
compared draw for draw.
"""
from __future__ import annotations

import math

import numpy as np

TIE_RTOL = 1e-12  # MODEL.md: ties within 1e-12 relative to T_i or d_i

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
FLEET_MUL = 0xD1B54A32D192ED03
JOB_MUL = 0xAEF17502108EF2D9


def mix64(z: int) -> int:
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def stream_base(key0: int, key1: int, fleet: int, job: int) -> int:
    h = mix64(key0 + fleet * FLEET_MUL)
    return mix64(h ^ ((key1 + job * JOB_MUL) & MASK))


def uniform(base: int, n: int) -> float:
    return (mix64(base + n * GOLDEN) >> 11) * 2.0 ** -53


def ziggurat_tables(layers=128, r=3.442619855899, v=9.91256303526217e-3):
    """Doornik's ZIGNOR tables (2005) for Marsaglia & Tsang's ziggurat."""
    x = [0.0] * (layers + 1)
    f = math.exp(-0.5 * r * r)
    x[0], x[1] = v / f, r
    for i in range(2, layers):
        x[i] = math.sqrt(-2.0 * math.log(v / x[i - 1] + f))
        f = math.exp(-0.5 * x[i] * x[i])
    return x, r


# The engine freezes its tables as exact literals (the last bits of exp and
# log differ between maths libraries); the reference draws with that data and
# a test checks it against ``ziggurat_tables`` to a few ulp.
from stormsim._kernel import _ZIG_X as _FROZEN  # noqa: E402  (data, not code)

ZIG_X, ZIG_R = [float(x) for x in _FROZEN], float(_FROZEN[1])


def normal(base: int, k: int) -> float:
    """k-th standard normal of a stream: ziggurat on outputs (k << 12) + 1, ..."""
    n = (k << 12) + 1

    def output():
        nonlocal n
        n += 1
        return mix64(base + (n - 1) * GOLDEN)

    while True:
        h = output()
        i = h & 127
        u = 2.0 * ((h >> 11) * 2.0 ** -53) - 1.0
        if abs(u) < ZIG_X[i + 1] / ZIG_X[i]:
            return u * ZIG_X[i]
        if i == 0:
            while True:
                a = math.log(1.0 - (output() >> 11) * 2.0 ** -53) / ZIG_R
                b = math.log(1.0 - (output() >> 11) * 2.0 ** -53)
                if -2.0 * b >= a * a:
                    return a - ZIG_R if u < 0 else ZIG_R - a
        x0 = u * ZIG_X[i]
        f0 = math.exp(-0.5 * (ZIG_X[i] ** 2 - x0 * x0))
        f1 = math.exp(-0.5 * (ZIG_X[i + 1] ** 2 - x0 * x0))
        if f1 + (output() >> 11) * 2.0 ** -53 * (f0 - f1) < 1.0:
            return x0


def simulate_reference(T, d, sigma, cap, f, theta, cycles, burn_in=0, level=0,
                       stop_at_passage=True, key=(0, 0), fleet=0):
    """One fleet. f: f(n) for n = 0..N (f[0] unused). Returns a dict like a Run row."""
    N = len(T)
    writing = [False] * N
    rem = [(1.0 - theta[i]) * T[i] for i in range(N)]
    count = [0] * N
    firings = [[math.nan] * cycles for _ in range(N)]
    occ = [0.0] * (N + 1)
    bases = [stream_base(key[0], key[1], fleet, i) for i in range(N)]
    t = 0.0
    fired_total = 0
    passage_time, passage_cycle = math.inf, -1
    measuring = burn_in == 0
    while True:
        fired = False
        for i in range(N):
            if writing[i] and rem[i] <= TIE_RTOL * d[i]:
                w = T[i]
                if sigma[i] > 0:
                    w = max(0.0, T[i] + sigma[i] * normal(bases[i], count[i] - 1))
                writing[i], rem[i] = False, w
            if not writing[i] and rem[i] <= TIE_RTOL * T[i]:
                if count[i] < cycles:
                    firings[i][count[i]] = t
                count[i] += 1
                writing[i], rem[i] = True, d[i]
                fired_total += 1
                fired = True
        nw = sum(writing)
        measuring = measuring or min(count) >= burn_in
        if fired and level > 0 and passage_cycle < 0 and nw >= level:
            passage_time, passage_cycle = t, fired_total // N
            if stop_at_passage:
                break
        if min(count) >= cycles:
            break
        r_w = f[nw] / nw if nw else 0.0
        r_c = min(1.0, cap / (N - nw)) if nw < N else 0.0
        rate = [r_w if writing[i] else r_c for i in range(N)]
        dt, j = min((rem[i] / rate[i], i) for i in range(N))
        for i in range(N):
            rem[i] -= rate[i] * dt
        rem[j] = 0.0
        if measuring:
            occ[nw] += dt
        t += dt
    return {"firings": np.array(firings), "occupancy": np.array(occ),
            "passage_time": passage_time, "passage_cycle": passage_cycle, "end_time": t}

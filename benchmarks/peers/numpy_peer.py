"""A NumPy event loop vectorized across fleets: how a NumPy user would write it.

State is one (F, N) array per quantity (phase, remaining amount, firing
count); each pass of the loop advances every fleet to its own next event at
once: rates from the writer count, time to the next event per job, the
smallest per fleet, advance everything, then switch every job whose remaining
amount reached zero (within a relative 1e-12, MODEL.md's tie rule). Fleets that
have finished are frozen with dt = 0 until the slowest one finishes.
"""
from __future__ import annotations

import time

import numpy as np

#: MODEL.md tie rule: an amount within this fraction of T_i (compute) or d_i
#: (write) of zero has reached zero.
TIE_RTOL = 1e-12


def run(case: dict) -> dict:
    """Simulate ``case`` (see ``benchmarks.peers.make_case``); return firings,
    occupancy, end times, event counts and the wall time of the loop."""
    T = np.asarray(case["T"], dtype=float)
    d = np.asarray(case["d"], dtype=float)
    sigma = np.asarray(case["sigma"], dtype=float)
    f = np.asarray(case["f"], dtype=float)                # f[n], n = 0..N
    cap = float(case["cap"])
    theta = np.asarray(case["theta"], dtype=float)        # (F, N)
    K = int(case["cycles"])
    record = bool(case.get("record", False))
    rng = np.random.default_rng(case.get("seed", 0))
    F, N = theta.shape
    n = np.arange(N + 1, dtype=float)
    rw = np.ones(N + 1)
    rw[1:] = f[1:] / n[1:]                                # each writer's rate
    rc = np.ones(N + 1)
    rc[1:] = np.minimum(1.0, cap / n[1:])                 # each computer's rate
    jittered = bool(np.any(sigma > 0))

    c0 = time.process_time()
    t0 = time.perf_counter()
    writing = np.zeros((F, N), dtype=bool)
    rem = (1.0 - theta) * T
    count = np.zeros((F, N), dtype=np.int64)
    t = np.zeros(F)
    occ = np.zeros((F, N + 1))
    events = np.zeros(F, dtype=np.int64)
    firings = np.full((F, N, K), np.nan) if record else None
    active = np.ones(F, dtype=bool)
    rows = np.arange(F)
    tol_c = TIE_RTOL * T
    tol_w = TIE_RTOL * d
    while True:
        # Phase changes at this instant: writes that ended, then firings
        # (a job whose new compute interval is 0 fires at once).
        ends = writing & (rem <= tol_w) & active[:, None]
        if ends.any():
            writing &= ~ends
            fi, ji = np.nonzero(ends)
            work = T[ji]
            if jittered:
                work = np.maximum(0.0, work + sigma[ji] * rng.standard_normal(ji.size))
            rem[fi, ji] = work
            events += ends.sum(axis=1)
        fires = ~writing & (rem <= tol_c) & active[:, None]
        if fires.any():
            if record:
                fi, ji = np.nonzero(fires)
                k = count[fi, ji]
                ok = k < K
                firings[fi[ok], ji[ok], k[ok]] = t[fi[ok]]
            writing |= fires
            rem = np.where(fires, d, rem)
            count += fires
            events += fires.sum(axis=1)
            active &= ~(count >= K).all(axis=1)
            if not active.any():
                break
        nw = writing.sum(axis=1)
        rate = np.where(writing, rw[nw][:, None], rc[N - nw][:, None])
        dt = (rem / rate).min(axis=1)
        dt[~active] = 0.0
        occ[rows, nw] += dt
        t += dt
        rem -= rate * dt[:, None]
    wall = time.perf_counter() - t0
    return {"firings": firings, "occupancy": occ, "end_time": t, "events": events,
            "wall": wall, "cpu": time.process_time() - c0}

"""The numba kernels: plain arrays in, caller-allocated buffers out.

Nothing here validates or raises: ``stormsim.engine`` validates every input
first. Every jitted function of the package lives in this one file because
numba's cache invalidation hashes only the file that holds the cached
function, not its callees elsewhere (a helper changed in another file would
leave a stale cache).

How an event costs O(N) and not more
------------------------------------
All writers drain at one common rate r_w = f(n_w)/n_w and all computers
advance at one common rate r_c = min(1, C/n_c) (anonymous sharing). So the
kernel keeps two *virtual clocks*: P_w, the volume any writer has drained, and
P_c, the work any computer has done. A writer stores the value of P_w at which
it finishes (its target), a computer the value of P_c at which it fires; the
remaining amount of job i is ``target[i] - P``. Between events only the two
clocks move: the next event is one scan for the smallest writer target and
smallest computer target, with no per-job update. The clocks are rebased to 0
every few instants so that ``target - P`` keeps full relative precision.

Random numbers
--------------
Counter-based and per job: the k-th standard normal of job i in fleet j is a
pure function of (root key, j, i, k) (SplitMix64 outputs on a per-(fleet, job)
stream, Box-Muller in pairs). Results therefore depend on neither the thread
count, the batch, nor the order of events in the instant.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._numba_cache import CACHE

#: Two remaining amounts within this fraction of the job's own T_i (compute)
#: or d_i (write) of zero are treated as reaching zero at the same instant
#: (MODEL.md, "Floating-point ties"). It is far above the rounding of one
#: event (~1e-16 relative, the clocks being rebased) and far below any
#: physical interval a user can ask for.
TIE_RTOL = 1e-12

COMPUTE = 0
WRITE = 1

# SplitMix64 constants (Steele, Lea, Flood 2014).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_FLEET_MUL = np.uint64(0xD1B54A32D192ED03)
_JOB_MUL = np.uint64(0xAEF17502108EF2D9)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0
_TWO_PI = 2.0 * np.pi

#: Rebase the virtual clocks after this many instants per job (amortised O(1)).
_REBASE_EVERY = 2


@njit(cache=CACHE, nogil=True, inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit mix."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=CACHE, nogil=True)
def stream_base(key0, key1, fleet, job):
    """Base of the random stream of (fleet, job) under root key (key0, key1)."""
    h = mix64(key0 + np.uint64(fleet) * _FLEET_MUL)
    return mix64(h ^ (key1 + np.uint64(job) * _JOB_MUL))


@njit(cache=CACHE, nogil=True, inline="always")
def stream_uniform(base, n):
    """n-th uniform in [0, 1) of a stream: SplitMix64 output n, 53 bits."""
    return np.float64(mix64(base + np.uint64(n) * _GOLDEN) >> _S11) * _TWO_M53


@njit(cache=CACHE, nogil=True)
def stream_normal(base, k, spare, i):
    """k-th standard normal of a stream (k = 0, 1, ... consumed in order).

    Box-Muller on uniforms 2m+1 and 2m+2 gives normals 2m (cosine) and 2m+1
    (sine, kept in ``spare[i]``). Uniform 0 of each stream is the launch phase.
    """
    if k & 1:
        return spare[i]
    m = k >> 1
    u1 = stream_uniform(base, 2 * m + 1)
    u2 = stream_uniform(base, 2 * m + 2)
    r = np.sqrt(-2.0 * np.log(1.0 - u1))
    a = _TWO_PI * u2
    spare[i] = r * np.sin(a)
    return r * np.cos(a)


@njit(cache=CACHE, nogil=True, parallel=True)
def random_theta(key0, key1, fleet0, out):
    """Fill out (F, N) with iid uniform launch phases: uniform 0 of each stream."""
    F, N = out.shape
    for f in prange(F):
        for i in range(N):
            out[f, i] = stream_uniform(stream_base(key0, key1, fleet0 + f, i), 0)


@njit(cache=CACHE, nogil=True)
def run_fleet(T, d, sigma, rw, rc, theta, key0, key1, fleet, cycles, burn_in,
              level, stop_at_passage, record, firings, occupancy,
              target, phase, count, base, spare):
    """Integrate one fleet exactly, event to event (see MODEL.md).

    Parameters are validated arrays: T, d, sigma (N,); rw (N+1,) writer rate
    f(n)/n by writer count; rc (N+1,) computer rate min(1, C/n) by computer
    count; theta (N,) launch phases. firings (N, cycles) is written only when
    ``record``; occupancy (N+1,) is overwritten. target, phase, count, base,
    spare are (N,) scratch. Returns (passage_time, passage_cycle, end_time,
    events).
    """
    N = T.shape[0]
    for i in range(N):
        count[i] = 0
        phase[i] = COMPUTE
        target[i] = (1.0 - theta[i]) * T[i]
        base[i] = stream_base(key0, key1, fleet, i)
    for n in range(N + 1):
        occupancy[n] = 0.0

    t = 0.0
    pw = 0.0  # writer virtual clock: volume drained by any writer
    pc = 0.0  # computer virtual clock: work done by any computer
    nw = 0
    n_done = 0  # jobs that have fired >= cycles times
    n_burn = N if burn_in == 0 else 0  # jobs that have fired >= burn_in times
    measuring = burn_in == 0
    fired_total = 0
    events = 0
    p_time = np.inf
    p_cycle = -1
    instants = 0
    while True:
        # Every job whose remaining amount is (within the tie rule) zero
        # changes phase now, before the rates are recomputed.
        fired = False
        for i in range(N):
            ph = phase[i]
            if ph == WRITE and target[i] - pw <= TIE_RTOL * d[i]:
                nw -= 1
                events += 1
                w = T[i]
                if sigma[i] > 0.0:
                    w += sigma[i] * stream_normal(base[i], count[i] - 1, spare, i)
                    if w < 0.0:
                        w = 0.0
                phase[i] = COMPUTE
                target[i] = pc + w
                ph = COMPUTE
            if ph == COMPUTE and target[i] - pc <= TIE_RTOL * T[i]:
                k = count[i]
                if record and k < cycles:
                    firings[i, k] = t
                count[i] = k + 1
                if k + 1 == cycles:
                    n_done += 1
                if k + 1 == burn_in:
                    n_burn += 1
                phase[i] = WRITE
                target[i] = pw + d[i]
                nw += 1
                fired_total += 1
                events += 1
                fired = True
        if not measuring and n_burn == N:
            measuring = True
        if fired and level > 0 and p_cycle < 0 and nw >= level:
            p_time = t
            p_cycle = fired_total // N
            if stop_at_passage:
                break
        if n_done == N:
            break

        instants += 1
        if instants >= _REBASE_EVERY * N:
            # Keep remaining amounts exact to full relative precision.
            instants = 0
            for i in range(N):
                if phase[i] == WRITE:
                    target[i] -= pw
                else:
                    target[i] -= pc
            pw = 0.0
            pc = 0.0

        # Next event: the smallest target on each clock.
        best_w = np.inf
        best_c = np.inf
        for i in range(N):
            x = target[i]
            if phase[i] == WRITE:
                if x < best_w:
                    best_w = x
            elif x < best_c:
                best_c = x
        r_w = rw[nw]
        r_c = rc[N - nw]
        dt_w = (best_w - pw) / r_w
        dt_c = (best_c - pc) / r_c
        if dt_w <= dt_c:
            dt = dt_w
            pw = best_w
            pc += r_c * dt
        else:
            dt = dt_c
            pc = best_c
            pw += r_w * dt
        if measuring:
            occupancy[nw] += dt
        t += dt
    return p_time, p_cycle, t, events


@njit(cache=CACHE, nogil=True, parallel=True)
def run_fleets(T, d, sigma, rw, rc, theta, key0, key1, fleet0, cycles, burn_in,
               level, stop_at_passage, record, firings, occupancy,
               passage_time, passage_cycle, end_time, events,
               target, phase, count, base, spare):
    """Run F independent fleets in parallel; fleet f has global index fleet0 + f.

    theta, target, phase, count, base, spare: (F, N); firings (F, N, cycles)
    when ``record`` (else any (F, 1, 1) placeholder); occupancy (F, N+1);
    passage_time, passage_cycle, end_time, events: (F,).
    """
    F = theta.shape[0]
    for f in prange(F):
        p_t, p_c, t_end, n_ev = run_fleet(
            T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
            level, stop_at_passage, record, firings[f], occupancy[f],
            target[f], phase[f], count[f], base[f], spare[f])
        passage_time[f] = p_t
        passage_cycle[f] = p_c
        end_time[f] = t_end
        events[f] = n_ev

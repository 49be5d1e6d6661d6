"""A short, obviously-correct reference integrator of MODEL.md, in plain Python.

It shares no code with the kernel: it keeps every job's remaining amount
directly and, at each event, recomputes the rates from the counts, advances
every job, and applies the phase changes of the instant. It is slow and
meant for small fleets and short horizons.

Its random numbers re-implement the engine's documented streams (SplitMix64
on Python integers, a ziggurat for normals, and the failure and outage
streams of stormsim/failures.py, MODEL.md E8) so that jittered runs, and runs
with failures, can be compared draw for draw.
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
from stormsim.engine._kernel import _ZIG_X as _FROZEN  # noqa: E402  (data, not code)

ZIG_X, ZIG_R = [float(x) for x in _FROZEN], float(_FROZEN[1])

# The histogram edges of MODEL.md E7 are data of the engine's, as the tables are.
from stormsim.engine.run import DURATION_EDGES, WAIT_EDGES  # noqa: E402

# The failure streams of MODEL.md E8 are defined in stormsim/failures.py (the
# salts and the exponential draw: constants the kernels use too).
from stormsim.failures import FAILURE_SALT, OUTAGE_SALT, exponential  # noqa: E402


def histogram_bin(edges, x: float) -> int:
    """0 below edges[0], j for edges[j-1] <= x < edges[j], len(edges) at or above the last."""
    return int(np.searchsorted(edges, x, side="right"))


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
                       stop_at_passage=True, key=(0, 0), fleet=0, checkpoint=None,
                       snapshot=None, slowdown=None, on_busy=None, weights=None,
                       max_writers=None, mtbf=None, restart=None, outage_mtbf=math.inf,
                       busy_power=None, idle_power=None, ramp_x=(), ramp_d=()):
    """One fleet. f: f(n) for n = 0..N (f[0] unused). Returns a dict like a Run row.

    checkpoint, snapshot, slowdown, on_busy, weights: per job (MODEL.md E1,
    E2), default the base model; max_writers: K of E5 (None: N). Every job
    keeps its remaining amounts directly: compute work ``work``, persist or
    write volume ``vol``, snapshot time ``snap``; the rates are recomputed
    from the phases at every event.

    The writer cap: every checkpoint ready to write joins a first-come
    first-served list (this instant's arrivals by job index, as the jobs are
    visited); after the instant's phase changes its head starts writing
    while fewer than K write. A blocking job waits there in phase "queue"
    (neither computing nor writing); an async job computes with its persist
    "queued", in flight for the rule on a busy persist and the slowdown.

    Failures (MODEL.md E8): mtbf M_i per job (None: all inf, never), restart
    R_i per job (None: all 0), outage_mtbf M_0. Failure instants are drawn
    from the streams of ``stormsim.failures`` (a job with M_i = inf, or
    M_0 = inf, takes no draw: F1). An instant's failures (outages first, then
    each job's, by index) come before its other changes: a failed job
    abandons a write or persist in flight (it leaves the writers), leaves the
    writer queue, abandons a snapshot or wait, loses the work since its last
    durable checkpoint and is DOWN for R_i (remaining time ``down``); then
    the instant's DOWN ends (a fresh compute interval, the next normal of
    its jitter stream), then the rest as before. A failure counts one event
    for each job it fails, a DOWN end one event.

    Work is accounted in the measured window only: ``pending`` (done since
    the last capture) and ``captured`` (made durable when the write or persist
    in flight or queued completes; a capture is the instant the checkpoint
    joins the writer queue: a blocking job's work done, an async job's
    snapshot end). Per job over the window: checkpoint time (write, queue,
    snapshot, wait, and the slowdown's share r_c eps_i of a computing async
    job with its persist in flight), down time, the cap's share (1 - r_c) of
    computing time, and work done = committed + lost + uncommitted (at the
    window's end). These add up to the window; divided by N x window they are
    the goodput and its parts.

    Power (MODEL.md E6): busy_power, idle_power per job (None: off). Every
    step [t, t + dt) of positive length appends a level (t, its end, P) with
    P the sum of idle + r (busy - idle) over computing jobs at rate r and
    idle over the others; ``power_outputs`` then reads the ramps for each
    window D of ``ramp_d`` and threshold X of ``ramp_x`` off that list.
    """
    N = len(T)
    asy = [False] * N if checkpoint is None else [c == "async" for c in checkpoint]
    s = [0.0] * N if snapshot is None else [float(x) for x in snapshot]
    eps = [0.0] * N if slowdown is None else [float(x) for x in slowdown]
    skip = [False] * N if on_busy is None else [r == "skip" for r in on_busy]
    wt = [1.0] * N if weights is None else [float(x) for x in weights]
    # phase: "compute", "snapshot", "wait" (async) or "write", "queue" (blocking)
    phase = ["compute"] * N
    persist = [False] * N  # an async job's persist is in flight
    queued = [False] * N  # an async job's persist waits for a writer slot
    K = N if max_writers is None else int(max_writers)
    line = []  # the writer queue: job indices, first come first
    line_since = [0.0] * N
    work = [(1.0 - theta[i]) * T[i] for i in range(N)]
    vol = [0.0] * N
    snap = [0.0] * N
    count = [0] * N
    drawn = [0] * N  # compute intervals started after the launch interval
    firings = [[math.nan] * cycles for _ in range(N)]
    occ = [0.0] * (N + 1)
    up = [0] * (N + 1)
    writing_time = [0.0] * N
    bases = [stream_base(key[0], key[1], fleet, i) for i in range(N)]
    # E8: failures, outages, DOWN and the work's accounting
    M = [math.inf] * N if mtbf is None else [float(x) for x in mtbf]
    R = [0.0] * N if restart is None else [float(x) for x in restart]
    fbase = [stream_base(key[0], key[1] ^ FAILURE_SALT, fleet, i) for i in range(N)]
    obase = stream_base(key[0], key[1] ^ OUTAGE_SALT, fleet, 0)
    fdrawn = [0] * (N + 1)  # draws taken: job i's failures, and (index N) outages

    def next_gap(i):  # the next gap of job i's failures (i = N: the outages)
        base, mean = (obase, float(outage_mtbf)) if i == N else (fbase[i], M[i])
        fdrawn[i] += 1
        return mean * exponential(uniform(base, fdrawn[i] - 1))

    fail_at = [next_gap(i) if M[i] < math.inf else math.inf for i in range(N)]
    outage_at = next_gap(N) if outage_mtbf < math.inf else math.inf
    down = [0.0] * N  # remaining DOWN time
    pending = [0.0] * N  # window work since the last capture
    captured = [0.0] * N  # window work a write or persist in flight or queued holds
    failures, abandoned = [0] * N, [0] * N
    lost, committed, down_time, ckpt_time, cap_time = ([0.0] * N for _ in range(5))
    window = 0.0
    t = 0.0
    fired_total = 0
    passage_time, passage_cycle = math.inf, -1
    measuring = burn_in == 0
    waits = skips = events = 0
    wait_time = 0.0
    # E7: per checkpoint, its firing instant, and the wait before it (time in
    # WAIT), recorded with its duration when its write ends in the window.
    started = [0.0] * N
    wait_began = [0.0] * N
    wait_next = [0.0] * N  # the wait of the job's next firing, so far
    wait_now = [0.0] * N  # the wait of the checkpoint in flight
    durations, waited = [], []  # (x, x / scale) per recorded checkpoint
    dur_hist = [0] * (len(DURATION_EDGES) + 1)
    wait_hist = [0] * (len(WAIT_EDGES) + 1)
    # E6: the power levels (start, end, watts, measured), the whole run
    levels = []

    def writes(i):
        return phase[i] == "write" or persist[i]

    def busy(i):  # a persist writing or queued (E1 rule and slowdown)
        return persist[i] or queued[i]

    def fail(i):
        nonlocal events
        events += 1
        if measuring:
            failures[i] += 1
            abandoned[i] += writes(i)
            lost[i] += pending[i] + captured[i]
        pending[i] = captured[i] = 0.0
        if i in line:
            line.remove(i)
        persist[i] = queued[i] = False
        vol[i] = snap[i] = wait_next[i] = 0.0
        phase[i], down[i] = "down", R[i]

    def account(i, dt, computes, r_c):
        """Split one job's dt of the window (E8): checkpointing, down, cap, work."""
        if phase[i] == "down":
            down_time[i] += dt
        elif computes:
            slowed = eps[i] if busy(i) else 0.0
            pending[i] += r_c * (1.0 - slowed) * dt
            cap_time[i] += (1.0 - r_c) * dt
            ckpt_time[i] += r_c * slowed * dt
        else:  # write, queue, snapshot, wait, or a compute stopped by its persist (eps = 1)
            ckpt_time[i] += dt

    def interval(i):
        w = T[i]
        if sigma[i] > 0:
            w = max(0.0, T[i] + sigma[i] * normal(bases[i], drawn[i]))
        drawn[i] += 1
        return w

    while True:
        nw_before = sum(writes(i) for i in range(N))
        fired = False
        entered = skipped = 0
        # E8: the instant's failures, then its DOWN ends.
        while outage_at <= t:
            for i in range(N):
                fail(i)
            outage_at += next_gap(N)
        for i in range(N):
            while fail_at[i] <= t:
                fail(i)
                fail_at[i] += next_gap(i)
        for i in range(N):
            if phase[i] == "down" and down[i] <= TIE_RTOL * R[i]:
                events += 1
                phase[i], work[i] = "compute", interval(i)
        # Writes and persists that end now come first (a checkpoint due at
        # that instant then proceeds).
        for i in range(N):
            if writes(i) and vol[i] <= TIE_RTOL * d[i]:
                events += 1
                if measuring:
                    durations.append(t - started[i])
                    waited.append(wait_now[i])
                    # binned as the engine scales: x * (1 / d_i), x * (1 / T_i)
                    dur_hist[histogram_bin(DURATION_EDGES, (t - started[i]) * (1.0 / d[i]))] += 1
                    wait_hist[histogram_bin(WAIT_EDGES, wait_now[i] * (1.0 / T[i]))] += 1
                committed[i] += captured[i]
                captured[i] = 0.0
                if phase[i] == "write":
                    phase[i], work[i] = "compute", interval(i)
                else:
                    persist[i] = False
                    if phase[i] == "wait":
                        wait_next[i] += t - wait_began[i]
                        phase[i], snap[i] = "snapshot", s[i]
        # Then every job's own chain of instantaneous changes.
        for i in range(N):
            while True:
                if phase[i] == "snapshot" and snap[i] <= TIE_RTOL * s[i]:
                    pass  # fires, below
                elif phase[i] == "compute" and work[i] <= TIE_RTOL * T[i]:
                    if not asy[i]:
                        pass  # a blocking job fires when its work is done
                    elif busy(i):
                        events += 1
                        if skip[i]:
                            skipped += 1
                            work[i] = interval(i)
                        else:
                            phase[i] = "wait"
                            wait_began[i] = t
                            entered += 1
                        continue
                    elif s[i] > 0.0:
                        events += 1
                        phase[i], snap[i] = "snapshot", s[i]
                        continue
                else:
                    break
                # ready to write: into the writer queue (admitted below)
                captured[i], pending[i] = pending[i], 0.0
                line.append(i)
                line_since[i] = t
                if asy[i]:
                    queued[i] = True
                    phase[i], work[i] = "compute", interval(i)
                else:
                    phase[i] = "queue"
                    break
        # Admissions: the queue's head starts writing while fewer than K write.
        while line and sum(writes(j) for j in range(N)) < K:
            i = line.pop(0)
            events += 1  # the firing
            if count[i] < cycles:
                firings[i][count[i]] = t
            count[i] += 1
            fired_total += 1
            fired = True
            vol[i] = d[i]
            started[i] = t
            wait_next[i] += t - line_since[i]
            wait_now[i], wait_next[i] = wait_next[i], 0.0
            if asy[i]:
                queued[i], persist[i] = False, True
            else:
                phase[i] = "write"
        events += sum(line_since[j] == t for j in line)  # entered QUEUE now, still there
        nw = sum(writes(i) for i in range(N))
        measuring = measuring or min(count) >= burn_in
        if measuring:
            waits += entered
            skips += skipped
            for k in range(nw_before + 1, nw + 1):
                up[k] += 1
        if fired and level > 0 and passage_cycle < 0 and nw >= level:
            passage_time, passage_cycle = t, fired_total // N
            if stop_at_passage:
                break
        if min(count) >= cycles:
            break
        wsum = sum(wt[i] for i in range(N) if writes(i))
        computing = [phase[i] == "compute" and not (busy(i) and eps[i] == 1.0)
                     for i in range(N)]
        nc = sum(computing)
        r_c = min(1.0, cap / nc) if nc else 0.0
        cands = []
        for i in range(N):
            if writes(i):
                cands.append((vol[i] / (f[nw] * wt[i] / wsum), i, "vol"))
            if computing[i]:
                rate = r_c * ((1.0 - eps[i]) if busy(i) else 1.0)
                cands.append((work[i] / rate, i, "work"))
            if phase[i] == "snapshot":
                cands.append((snap[i], i, "snap"))
            if phase[i] == "down":
                cands.append((down[i], i, "down"))
            if fail_at[i] < math.inf:
                cands.append((fail_at[i] - t, i, "fail"))
        if outage_at < math.inf:
            cands.append((outage_at - t, N, "fail"))
        dt, j, what = min(cands)
        if busy_power is not None:
            watts = 0.0
            for i in range(N):
                rate = r_c * ((1.0 - eps[i]) if busy(i) else 1.0) if computing[i] else 0.0
                watts += idle_power[i] + rate * (busy_power[i] - idle_power[i])
            levels.append([t, math.nan, watts, measuring])
        for i in range(N):
            if writes(i):
                vol[i] -= f[nw] * wt[i] / wsum * dt
                if measuring:
                    writing_time[i] += dt
            if computing[i]:
                work[i] -= r_c * ((1.0 - eps[i]) if busy(i) else 1.0) * dt
            if phase[i] == "snapshot":
                snap[i] -= dt
            if phase[i] == "down":
                down[i] -= dt
            if measuring:
                account(i, dt, computing[i], r_c)
        if what != "fail":
            {"vol": vol, "work": work, "snap": snap, "down": down}[what][j] = 0.0
        if measuring:
            occ[nw] += dt
            wait_time += dt * sum(phase[i] == "wait" for i in range(N))
            window += dt
        # a failure's instant is its own, exactly (not t plus a difference)
        t = (outage_at if j == N else fail_at[j]) if what == "fail" else t + dt
        if busy_power is not None:
            levels[-1][1] = t
            if levels[-1][1] == levels[-1][0]:
                levels.pop()  # held for no time: not drawn
    power = {} if busy_power is None else power_outputs(levels, ramp_x, ramp_d)
    return {**power, "firings": np.array(firings), "occupancy": np.array(occ),
            "passage_time": passage_time, "passage_cycle": passage_cycle, "end_time": t,
            "upcrossings": np.array(up), "writing_time": np.array(writing_time),
            "waits": waits, "skips": skips, "wait_time": wait_time, "events": events,
            "durations_count": len(durations), "durations_sum": math.fsum(durations),
            "durations_max": max(durations, default=0.0), "durations_hist": np.array(dur_hist),
            "wait_sum": math.fsum(waited), "wait_max": max(waited, default=0.0),
            "wait_hist": np.array(wait_hist),
            **failure_outputs(N, window, failures, abandoned, lost, down_time, committed,
                              [p + c for p, c in zip(pending, captured)], ckpt_time, cap_time)}


def power_outputs(levels, ramp_x, ramp_d):
    """MODEL.md E6 over the measured window, from the power levels
    [(start, end, watts, measured)] (consecutive, each of positive length).

    R_D(t) = max of P over [t - D, t] minus P(t). P is right-continuous, so
    level j (on [a_j, b_j)) is in the window of t exactly while
    a_j <= t < b_j + D: R_D is constant between consecutive points of the
    union of the starts a_k and the exits b_j + D. An exit is the float
    fl(b_j + D) and compared as such (not u - D against b_j, which rounds
    differently): a streaming kernel sees the same instants. Each such segment [u, v)
    inside the measured window adds v - u to the time with R_D >= X where its
    value is, and an up-crossing where its value is >= X and the segment
    before it (measured or not) was < X. The levels before the window
    (burn-in) count for the window's maxima.
    """
    a = np.array([lv[0] for lv in levels])
    b = np.array([lv[1] for lv in levels])
    p = np.array([lv[2] for lv in levels])
    measured = [k for k, lv in enumerate(levels) if lv[3]]
    out = {"power_levels": (a, b, p)}
    nx, nd = len(ramp_x), len(ramp_d)
    if not measured:
        nan = math.nan
        return {**out, "power_start": nan, "power_window": 0.0, "power_mean": nan, "power_min": nan,
                "power_max": nan, "power_p01": nan, "power_p99": nan,
                "ramp_share": np.full((nd, nx), nan), "ramp_events": np.zeros((nd, nx), int)}
    t0, t1 = a[measured[0]], b[-1]
    span = b[measured] - a[measured]
    watts = p[measured]
    window = t1 - t0
    out.update(power_start=t0, power_window=window, power_mean=math.fsum(span * watts) / window,
               power_min=float(watts.min()), power_max=float(watts.max()),
               power_p01=time_quantile(watts, span, 0.01),
               power_p99=time_quantile(watts, span, 0.99))
    share = np.zeros((nd, nx))
    events = np.zeros((nd, nx), dtype=np.int64)
    for jd, D in enumerate(ramp_d):
        exits = b + D  # as floats: level j is in the window of u iff a_j <= u < fl(b_j + D)
        points = np.unique(np.concatenate([a, exits]))
        points = points[points < t1]
        ramp = np.empty(points.size)
        for k, u in enumerate(points):
            first = int(np.searchsorted(exits, u, side="right"))  # the first with exit > u
            last = int(np.searchsorted(a, u, side="right")) - 1   # a_j <= u
            ramp[k] = p[first:last + 1].max() - p[last]
        ends = np.append(points[1:], t1)
        for jx, X in enumerate(ramp_x):
            above = ramp >= X
            inside = points >= t0
            share[jd, jx] = math.fsum((ends - points)[above & inside]) / window
            events[jd, jx] = int(np.sum(above[1:] & ~above[:-1] & inside[1:]))
    out.update(ramp_share=share, ramp_events=events)
    return out


def time_quantile(values, weights, q):
    """The least value x with (time at values <= x) >= q (total time)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(np.asarray(weights)[order])
    at = min(int(np.searchsorted(cum, q * cum[-1], side="left")), order.size - 1)
    return float(np.asarray(values)[order[at]])


#: The parts of goodput's complement (MODEL.md E8), in the order of the model.
GOODPUT_PARTS = ("writing", "lost", "down", "cap", "uncommitted")


def failure_outputs(N, window, failures, abandoned, lost, down_time, committed, uncommitted,
                    ckpt_time, cap_time):
    """E8's per-job observables over the window, goodput, and its parts (each
    a fraction of N x window; with goodput they add up to 1 to rounding)."""
    per_job = {"failures": np.array(failures), "abandoned_writes": np.array(abandoned),
               "lost_work": np.array(lost), "down_time": np.array(down_time),
               "committed_work": np.array(committed), "uncommitted_work": np.array(uncommitted),
               "checkpoint_time": np.array(ckpt_time), "cap_time": np.array(cap_time)}
    scale = N * window
    share = (lambda x: math.fsum(x) / scale) if scale > 0 else (lambda x: math.nan)
    parts = {"writing": share(ckpt_time), "lost": share(lost), "down": share(down_time),
             "cap": share(cap_time), "uncommitted": share(uncommitted)}
    return {**per_job, "window": window, "goodput": share(committed), "goodput_parts": parts}

"""What a run costs before it runs: events, seconds, memory and batch sizes.

One home for each formula: a sweep's estimate, its dry-run table, storm
risk's budget and ``simulate``'s memory check all ask here.
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..errors import SpecError

#: Peak bytes per job while ``Fleet.identical`` builds a fleet: two Python
#: lists of N pointers (T, d), the float64 arrays T, d, jitter, f(0..N),
#: snapshot, slowdown and weights, the checkpoint and on_busy string arrays,
#: and throughput_table's arange and temporaries (128 B measured with
#: tracemalloc at N = 1e5; tests/engine/test_limits.py holds it below this bound).
FLEET_BYTES_PER_JOB = 160


def memory_limit() -> int:
    """Bytes a single request may need: ``$STORMSIM_MEMORY_LIMIT`` when set,
    else this machine's physical memory, or its cgroup's limit when lower.

    A request estimated above it is refused with a SpecError before anything
    is allocated; one below it may still fail if other programs hold the memory.
    """
    env = os.environ.get("STORMSIM_MEMORY_LIMIT", "").strip()
    if env:
        try:
            value = float(env)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise SpecError(f"STORMSIM_MEMORY_LIMIT = {env!r}: must be a number of bytes > 0 "
                            "(e.g. 8e9), or unset for this machine's memory")
        return int(value)
    limit = None
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        pass
    for name in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(name) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and (limit is None or int(text) < limit):
            limit = int(text)
    return int(limit) if limit else 2**63 - 1


def format_bytes(n: float) -> str:
    """1.5 GiB, 7.28 TiB: binary units, three significant figures."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError("unreachable")


def check_memory(what: str, need: float, advice: str) -> None:
    """Refuse (SpecError) a request whose estimated memory ``need`` (bytes)
    exceeds ``memory_limit()``; ``what`` names the request, ``advice`` what to do."""
    limit = memory_limit()
    if need > limit:
        raise SpecError(f"{what} needs about {format_bytes(need)} of memory, more than the "
                        f"limit of {format_bytes(limit)} (this machine's memory, or "
                        f"$STORMSIM_MEMORY_LIMIT): {advice}")


#: Events per kernel call when the caller does not choose a batch size:
#: ~0.5 s of work at ~25 ns per event (NS_PER_EVENT below). Large enough that the Python loop
#: costs nothing, small enough that Ctrl-C is honoured within a second
#: (EVIDENCE.md: a monolithic numba call ignored it for 11 s) and progress
#: is reported often. Results do not depend on it.
BATCH_EVENTS = 20_000_000
#: The largest kernel call next_batch chooses (fleets); memory_needed counts it.
MAX_BATCH = 65536

#: Events per job per cycle: a job changes phase twice a cycle (COMPUTE ->
#: WRITE -> COMPUTE), so a fleet that runs its K cycles takes ~2 N K events.
EVENTS_PER_JOB_CYCLE = 2

#: The kernel's wall time per event on one core (ns) against N, identical
#: jobs: `make bench`, workloads (a) and (d), as recorded in benchmarks/README.md;
#: heterogeneous jobs cost ~1.5x. For estimates before anything is measured (a
#: sweep's expected time); measured costs replace it.
NS_PER_EVENT = ((4, 16.9), (16, 21.2), (64, 24.6), (256, 32.7), (1024, 35.8))


def seconds_per_event(n_jobs: int) -> float:
    """NS_PER_EVENT interpolated in log2 N (held constant beyond its ends), in s."""
    ns, cost = zip(*NS_PER_EVENT)
    return float(np.interp(math.log2(n_jobs), np.log2(ns), cost)) * 1e-9


def default_batch(n_jobs: int, cycles: int) -> int:
    """Fleets in the first kernel call: about BATCH_EVENTS events if every
    fleet runs its full ``cycles``, 16..4096 fleets."""
    per_fleet = EVENTS_PER_JOB_CYCLE * n_jobs * cycles
    return int(min(4096, max(16, BATCH_EVENTS // per_fleet)))


def next_batch(events_done: int, fleets_done: int) -> int:
    """Fleets in the next kernel call, from the events per fleet seen so far.

    First-passage runs stop long before their cycle cap, so the first batch
    (sized for the cap) can be tiny; growing it keeps each call near
    BATCH_EVENTS, where thread start-up and load imbalance cost nothing.
    """
    per_fleet = max(1.0, events_done / max(1, fleets_done))
    return int(min(MAX_BATCH, max(16, BATCH_EVENTS / per_fleet)))


#: Bins of the checkpoint histograms of MODEL.md E7 (their edges:
#: ``run.DURATION_EDGES``, ``run.WAIT_EDGES``); here because the memory
#: estimate counts them.
HIST_BINS = 64

#: Per fleet, the E7 observables' cells: the kernels' two rows of
#: HIST_BINS + 4 floats (sum, maximum, counts), the Run's two histograms of
#: HIST_BINS + 2 counts and its five per-fleet arrays of them.
E7_CELLS_PER_FLEET = 2 * (HIST_BINS + 4) + 2 * (HIST_BINS + 2) + 5

#: Bytes of Python objects and small arrays of any call (the Run, seeds,
#: slices): tracemalloc saw ~10 KiB above the arrays counted below.
CALL_OVERHEAD = 64 * 1024

#: A kernel's work space per job and thread, allocated per fleet, at most:
#: the anonymous kernel (``run_fleet``) has four queues of up to 2N entries
#: (64 B), ten arrays of N (80 B), a block of _NB = 16 normals per job (128 B),
#: two rate tables of N + 1 and the launch order (2 x 8 (N + 1) + 16 N B):
#: <= 304 N + 16 B; the general one (``run_fleet_general``) eight queues of
#: up to 2N, the writer cap's FIFO included (128 B), twenty-one arrays of N
#: (168 B), two of bools and four tables of N + 1: <= 330 N + 32 B. 368 B per
#: job bounds both for every N >= 1.
KERNEL_BYTES_PER_JOB = 368


def memory_needed(n_jobs: int, fleets: int, cycles: int, record_firings: bool = False,
                  batch_size: int | None = None, threads: int = 1) -> int:
    """Bytes ``simulate`` allocates at most (an upper bound, before any is).

    The Run's arrays: occupancy and upcrossings fleets x (N + 1), writing_time
    fleets x N, seven per-fleet arrays, the E7 observables
    (``E7_CELLS_PER_FLEET`` a fleet), and firings fleets x N x cycles when
    recorded (8 B each); one batch's launch phases (batch x N); the per-job
    kernel inputs (at most eight arrays of N) and the rate tables; and each
    thread's kernel work space (``KERNEL_BYTES_PER_JOB``).
    """
    n, F = int(n_jobs), int(fleets)
    batch = min(F, batch_size or MAX_BATCH)
    cells = (2 * F * (n + 1) + F * n + (7 + E7_CELLS_PER_FLEET) * F
             + (F * n * int(cycles) if record_firings else 0)
             + batch * n + 8 * n + 2 * (n + 1))
    return 8 * cells + KERNEL_BYTES_PER_JOB * n * int(threads) + CALL_OVERHEAD


def run_events(n_jobs: int, fleets: float, cycles: float) -> float:
    """Events of ``fleets`` fleets of N jobs run for their full ``cycles``
    (EVENTS_PER_JOB_CYCLE per job and cycle); first-passage runs stop sooner."""
    return float(EVENTS_PER_JOB_CYCLE) * float(n_jobs) * float(fleets) * float(cycles)


def run_seconds(n_jobs: int, fleets: float, cycles: float) -> float:
    """One core's seconds for ``run_events(...)`` at ``seconds_per_event(N)``."""
    return run_events(n_jobs, fleets, cycles) * seconds_per_event(max(int(n_jobs), 1))

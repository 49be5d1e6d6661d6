"""simulate(): validate, seed, batch, call the kernel, gather a Run."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from .._args import check_flag, check_int, check_progress, stderr_line
from ..errors import SpecError
from . import door
from . import launch as _launch
from .cost import HIST_BINS, check_memory, default_batch, memory_needed, next_batch
from .model import Fleet

#: The checkpoint histograms (MODEL.md E7) have fixed bins, so that fleets,
#: runs and sweeps add up: HIST_BINS (``cost.HIST_BINS``, which the memory
#: estimate counts) log-spaced bins, with bin 0 below the first edge
#: (underflow) and bin HIST_BINS + 1 at or above the last (overflow), so a
#: histogram has HIST_BINS + 2 counts.

#: Edges of the write-duration histogram, as multiples of the job's d_i: 16
#: bins a decade, centred on 10**(j / 16), j = 0..63, so 0.931 .. 9.3e3. A
#: write alone lasts d_i (to rounding) and falls in the middle of bin 1,
#: never on an edge; the underflow holds writes faster than d_i (a heavy
#: writer under weighted sharing, E2).
DURATION_EDGES = 10.0 ** ((np.arange(HIST_BINS + 1) - 0.5) / 16.0)

#: Edges of the wait histogram, as multiples of the job's T_i: 8 bins a
#: decade, centred on 10**(j / 8 - 6), so 8.7e-7 .. 87. Most checkpoints do
#: not wait: a wait of 0 is in the underflow bin. Centred, not starting, on
#: powers of ten: a jitter-free fleet waits exact multiples of T_i or d_i
#: (a wait of T_i is common), which must not sit on an edge.
WAIT_EDGES = 10.0 ** ((np.arange(HIST_BINS + 1) - 0.5) / 8.0 - 6.0)

# The edges as the kernels take them (``door.histogram_cells``).
_DURATION_CELLS = door.histogram_cells(DURATION_EDGES)
_WAIT_CELLS = door.histogram_cells(WAIT_EDGES)


@dataclass(frozen=True)
class Run:
    """The result of ``simulate``. Fleets are axis 0.

    Attributes
    ----------
    firings : float64 (fleets, N, cycles) or None
        t[f, i, k], the k-th write start of job i (s), when ``record_firings``;
        NaN where a run stopped (at its passage) before that firing.
    occupancy : float64 (fleets, N + 1)
        Time (s) with exactly n writers over the measured window.
    passage_time : float64 (fleets,)
        First passage to n_w >= passage_level (s); inf where never reached or
        when no passage_level was given.
    passage_cycle : int64 (fleets,)
        Firings up to and including the passage, integer-divided by N; -1
        where never reached. It can exceed ``cycles`` (fast jobs fire more
        than K times before the slowest job's K-th firing ends the run):
        survival estimates censor every fleet at ``cycles``.
    end_time : float64 (fleets,)
        Instant each fleet's run stopped (s).
    events : int64 (fleets,)
        Phase changes integrated: a firing, a write or persist ending, and
        for async jobs a checkpoint falling due into SNAPSHOT or WAIT or
        being skipped (with s_i = 0 the due checkpoint is its firing: one);
        with failures (MODEL.md E8) a job failing (an outage: each job) and a
        DOWN ending.
    upcrossings : int64 (fleets, N + 1)
        E[f, k], k = 0..N (MODEL.md E3): instants in the measured window,
        its ends included, at which n_w goes from below k to k or more (the
        writers before the instant against those once all its phase changes
        are applied). E[:, 0] = 0. Storm rate nu_k = E[k] / window length.
    writing_time : float64 (fleets, N)
        Time (s) each job spent writing (blocking write or persist in
        flight) over the measured window; its sum over jobs is
        sum_n n occupancy[n].
    waits : int64 (fleets,)
        Times an async job entered WAIT (a checkpoint fell due with its
        persist in flight, rule ``block``) in the measured window; 0 for
        blocking fleets.
    wait_time : float64 (fleets,)
        Job-seconds spent in WAIT over the measured window (summed over jobs).
    skips : int64 (fleets,)
        Checkpoints skipped (rule ``skip``) in the measured window.
    durations_count : int64 (fleets,)
        Checkpoints whose write (for async jobs: persist) ends in the measured
        window after the instant it opens (E7); writes still in flight at the
        end are not counted. The same checkpoints carry the wait fields.
    durations_sum : float64 (fleets,)
        Sum of their write durations, firing to write end (s): a float64 sum
        per fleet (the anonymous kernel forms it from the window's writing
        time and the writes cut by its ends: the same sum to rounding).
    durations_max : float64 (fleets,)
        Their longest write duration (s); 0 where durations_count is 0.
    durations_hist : int64 (fleets, HIST_BINS + 2)
        Their durations / d_i on ``DURATION_EDGES``: bin 0 below edges[0],
        bin j for edges[j-1] <= x < edges[j], bin HIST_BINS + 1 at or above
        the last edge. Sums over axis 1 to durations_count.
    wait_sum : float64 (fleets,)
        Sum of the same checkpoints' waits, due to firing (s): the time the
        job spent in WAIT (E1) and the writer queue (E5) before the
        checkpoint's firing; 0 for a checkpoint that did not wait (every
        checkpoint of a blocking fleet without a writer cap).
    wait_max : float64 (fleets,)
        Their longest wait (s).
    wait_hist : int64 (fleets, HIST_BINS + 2)
        Their waits / T_i on ``WAIT_EDGES`` (a wait of 0 is in bin 0).
    duration_edges, wait_edges : float64 (HIST_BINS + 1,)
        The histograms' edges (class attributes), on d_i and T_i.
    failures, abandoned_writes : float64 (fleets, N) or None
        MODEL.md E8, for a fleet with failures (``Fleet.has_failures``; None
        otherwise), over the measured window: each job's failures (outages
        included) and the writes they abandoned.
    lost_work : float64 (fleets, N) or None
        Compute (s of work) done in the window and lost to a failure.
    down_time : float64 (fleets, N) or None
        Time (s) each job spent DOWN (restarting) in the window.
    committed_work : float64 (fleets, N) or None
        Compute (s of work) done in the window that a completed checkpoint
        made durable in it.
    uncommitted_work : float64 (fleets, N) or None
        Compute done in the window, not yet durable at its end.
    outages : float64 (fleets,) or None
        Outages (every job failing at once) in the window.
    checkpoint_time : float64 (fleets, N) or None
        Time (s) each job spent checkpointing in the window (goodput's
        ``writing`` part): blocking writes (abandoned ones included),
        snapshots, waits (E1), time queued for a writer slot (E5), and for an
        async job computing with its persist in flight or queued the share
        r_c eps_i of that time its slowdown costs. For blocking fleets
        without a writer cap it is ``writing_time``.
    power_mean, power_min, power_max : float64 (fleets,) or None
        MODEL.md E6, for a fleet with power (``Fleet.has_power``; None
        otherwise), either kernel: the fleet's power P(t) (W) over the
        measured window, time-weighted mean, minimum and maximum.
    power_p01, power_p99 : float64 (fleets,) or None
        P's time-weighted 1st and 99th percentiles over the measured window
        (W): the least level x with the time at P <= x at least 1 % (99 %)
        of the window, from a histogram of PW_BINS = 4096 equal bins over
        [sum of idle_power, sum of busy_power] (``door.PW_BINS``): the
        highest level in the bin that holds the exact percentile, so off by
        less than one bin, (sum busy - sum idle) / 4096, and exact where
        that bin holds a single level (as with equal drops uncapped, N <=
        2048: levels a drop apart).
    ramp_share : float64 (fleets, len D, len X) or None
        For each window D and threshold X of ``simulate(ramps=(D, X))``: the
        fraction of the measured window with R_D(t) >= X, where R_D(t) is the
        highest power of [t - D, t] less P(t) (burn-in levels count for the
        window's maxima).
    ramp_events : int64 (fleets, len D, len X) or None
        The up-crossings of R_D through X in the measured window (one at its
        opening counts if R_D was below X just before).
    ramp_windows, ramp_thresholds : tuple of float or None
        The D (s) and X (W) those axes stand for.
    power_trace_t, power_trace_p : float64 (fleets, m) or None
        For ``simulate(power_trace=m)``, m >= 1, and a fleet with power
        (None otherwise): the first m steps of P over the measured window,
        each its start (s, an exact event instant) and its P (W); the first
        is P at the window's start. A step is the interval between two
        consecutive instants of the event loop (of positive length), so a
        step can repeat the one before where an instant changed no job's
        draw (an uncontended persist ending, a write ending into a zero
        compute interval). NaN beyond the steps a fleet had (a window with
        fewer than m, or none).

    The goodput G = committed work / (N x window) and its decomposition
    (``goodput_parts``: writing, lost, down, cap, uncommitted; with G they
    sum to 1) follow, per fleet; ``stormsim.stats.goodput.goodput`` gives
    them over the fleets with their intervals.
    """

    fleet: Fleet
    launch: object
    seed: int
    cycles: int
    burn_in: int
    passage_level: int | None
    fleet_start: int
    firings: np.ndarray | None
    occupancy: np.ndarray
    passage_time: np.ndarray
    passage_cycle: np.ndarray
    end_time: np.ndarray
    events: np.ndarray = field(repr=False)
    upcrossings: np.ndarray = field(repr=False)
    writing_time: np.ndarray = field(repr=False)
    waits: np.ndarray = field(repr=False)
    wait_time: np.ndarray = field(repr=False)
    skips: np.ndarray = field(repr=False)
    durations_count: np.ndarray = field(repr=False)
    durations_sum: np.ndarray = field(repr=False)
    durations_max: np.ndarray = field(repr=False)
    durations_hist: np.ndarray = field(repr=False)
    wait_sum: np.ndarray = field(repr=False)
    wait_max: np.ndarray = field(repr=False)
    wait_hist: np.ndarray = field(repr=False)
    failures: np.ndarray | None = field(default=None, repr=False)
    abandoned_writes: np.ndarray | None = field(default=None, repr=False)
    lost_work: np.ndarray | None = field(default=None, repr=False)
    down_time: np.ndarray | None = field(default=None, repr=False)
    committed_work: np.ndarray | None = field(default=None, repr=False)
    uncommitted_work: np.ndarray | None = field(default=None, repr=False)
    outages: np.ndarray | None = field(default=None, repr=False)
    checkpoint_time: np.ndarray | None = field(default=None, repr=False)
    power_mean: np.ndarray | None = field(default=None, repr=False)
    power_min: np.ndarray | None = field(default=None, repr=False)
    power_max: np.ndarray | None = field(default=None, repr=False)
    power_p01: np.ndarray | None = field(default=None, repr=False)
    power_p99: np.ndarray | None = field(default=None, repr=False)
    ramp_share: np.ndarray | None = field(default=None, repr=False)
    ramp_events: np.ndarray | None = field(default=None, repr=False)
    ramp_windows: tuple | None = field(default=None, repr=False)
    ramp_thresholds: tuple | None = field(default=None, repr=False)
    power_trace_t: np.ndarray | None = field(default=None, repr=False)
    power_trace_p: np.ndarray | None = field(default=None, repr=False)

    #: The histograms' edges (``DURATION_EDGES`` on d_i, ``WAIT_EDGES`` on T_i).
    duration_edges = DURATION_EDGES
    wait_edges = WAIT_EDGES

    @property
    def fleets(self) -> int:
        return int(self.occupancy.shape[0])

    def __repr__(self) -> str:
        level = "" if self.passage_level is None else (
            f", passage_level={self.passage_level}: {int(self.passed.sum())} passed")
        rec = ", firings recorded" if self.firings is not None else ""
        return (f"<stormsim.Run: {self.fleets} fleets of {self.fleet.n_jobs} jobs, "
                f"{self.cycles} cycles, launch {self.launch!r}, seed={self.seed}"
                f"{level}{rec}, {int(self.events.sum())} events>")

    __str__ = __repr__

    @property
    def wait_count(self) -> np.ndarray:
        """int64 (fleets,): checkpoints whose wait is in wait_sum and wait_hist,
        the same as ``durations_count`` (every checkpoint has a wait, often 0)."""
        return self.durations_count

    @property
    def passed(self) -> np.ndarray:
        """bool (fleets,): the fleet reached the passage level."""
        return self.passage_cycle >= 0

    @property
    def window(self) -> np.ndarray:
        """float64 (fleets,): the measured window's length (s)."""
        return self.occupancy.sum(axis=1)

    def _job_share(self, per_job: np.ndarray) -> np.ndarray:
        return per_job.sum(axis=1) / (self.fleet.n_jobs * self.window)

    @property
    def goodput(self) -> np.ndarray:
        """float64 (fleets,): G = committed work / (N x window) (MODEL.md E8);
        None for a fleet without failures."""
        if self.committed_work is None:
            return None
        return self._job_share(self.committed_work)

    @property
    def goodput_parts(self) -> dict | None:
        """G's complement, split exactly (MODEL.md E8), per fleet: shares of
        the N x window job-seconds spent ``writing`` (``checkpoint_time``:
        blocking writes, abandoned ones included, snapshots, waits, queues
        and an async persist's slowdown), computing work then ``lost``, ``down``,
        computing below full rate under the cap (``cap``), and computing
        work still ``uncommitted`` at the window's end; with ``goodput`` they
        sum to 1 (``cap`` is the rest, 0 to rounding when uncapped). None for
        a fleet without failures."""
        if self.committed_work is None:
            return None
        parts = {"goodput": self.goodput, "writing": self._job_share(self.checkpoint_time),
                 "lost": self._job_share(self.lost_work), "down": self._job_share(self.down_time),
                 "uncommitted": self._job_share(self.uncommitted_work)}
        parts["cap"] = 1.0 - sum(parts.values())
        return {k: parts[k] for k in ("goodput", "writing", "lost", "down", "cap", "uncommitted")}


QUEUE_KINDS = ("auto", "heap", "ring")
KERNELS = ("auto", "anonymous", "general")


def choose_kernel(fleet: Fleet, kernel: str = "auto") -> bool:
    """True for the general kernel (MODEL.md E1, E2, E5), False for the anonymous one.

    The anonymous kernel integrates the base model (blocking jobs, equal
    weights) with two virtual clocks and sorted queues; the general one adds
    asynchronous checkpoints, weights (indexed heaps, a wall-time clock
    for snapshots) and the writer cap's queue. "general" runs a base-model fleet through the general
    kernel too: the same trajectories to rounding (a test checks it), not
    bit for bit, since they round differently.
    """
    if kernel not in KERNELS:
        raise SpecError(f"kernel = {kernel!r}: must be one of {', '.join(KERNELS)}")
    if kernel == "anonymous" and not fleet.runs_anonymous:
        raise SpecError("kernel = 'anonymous' integrates blocking jobs with equal weights and no "
                        "writer cap only; this fleet has async jobs, unequal weights or "
                        f"max_writers < N ({fleet!r}). Use 'auto'")
    return kernel == "general" or not fleet.runs_anonymous


def choose_queues(fleet: Fleet, queues: str = "auto") -> tuple[bool, bool]:
    """(ring for writers, ring for computers): which priority queue the kernel uses.

    A ring buffer filled from the back costs one step per job a new target
    overtakes; a heap costs ~log2 N steps of ~4.5 ns (benchmarks). A new
    compute target pc + T_i overtakes about N (spread of T + 2 sigma) / cycle
    others, a new write target about N (spread of d) / cycle: the ring wins
    while that stays under ~4 log2 N. Results do not depend on the choice.
    """
    if queues == "heap":
        return False, False
    if queues == "ring":
        return True, True
    n = fleet.n_jobs
    cycle = float(np.min(fleet.T + fleet.d))
    budget = 4.0 * math.log2(max(n, 2))
    ring_c = n * (np.ptp(fleet.T) + 2.0 * float(np.max(fleet.jitter))) / cycle <= budget
    ring_w = n * np.ptp(fleet.d) / cycle <= budget
    return bool(ring_w), bool(ring_c)


FAST_FORWARD = ("auto", True, False)


def _uncapped(fleet: Fleet) -> bool:
    return float(fleet.computer_rate[fleet.n_jobs]) == 1.0


def fast_forward_applies(fleet: Fleet, kernel: str = "auto") -> bool:
    """True when ``simulate(fleet, fast_forward=True, kernel=kernel)`` is allowed:
    the anonymous kernel runs the fleet and its cap does not bind (C >= N)."""
    return not choose_kernel(fleet, kernel) and _uncapped(fleet) and not fleet.has_failures


def choose_fast_forward(fleet: Fleet, general: bool, fast_forward="auto",
                        first_passage: bool = True) -> bool:
    """True when the anonymous kernel fast-forwards through collision-free stretches.

    While no two writes overlap and the cap does not bind (C >= N), every
    rate is 1 and each job's next firing follows from its own compute draw:
    the kernel advances firing by firing (or a round of N at a time) with
    one normal each and hands every close case (a gap or compute interval
    under ``door.FF_MARGIN`` of a cycle) to the event loop. The results
    are the event loop's to rounding (~1e-16 per firing: the two paths add
    the same intervals in a different order), not bit for bit.

    "auto": for first-passage runs (stopped at a passage to level >= 2) of
    fleets where that premise holds. Up to such a passage every collision
    involves two writers, which do not amplify rounding, so each fleet's
    result is the event loop's to 1e-9. A run that goes on through storms
    of three or more writers is chaotic there (MODEL.md check 3): rounding
    differences grow until fleets part ways, with the same statistics but
    other digits, so occupancy runs keep the event loop's numbers unless
    asked. True: every run of such a fleet (refused where the premise cannot
    hold); False: the pure event loop.
    """
    if not (isinstance(fast_forward, bool) or fast_forward == "auto"):
        raise SpecError(f"fast_forward = {fast_forward!r}: must be 'auto', True or False")
    eligible = not general and _uncapped(fleet) and not fleet.has_failures
    if fast_forward is True and not eligible:
        why = ("it runs through the general kernel (async jobs, unequal weights or a writer cap)"
               if general
               else "its jobs fail (MODEL.md E8: the event loop integrates failures)"
               if fleet.has_failures
               else f"its cap C = {fleet.cap:g} binds (C < N = {fleet.n_jobs})")
        raise SpecError(f"fast_forward = True needs the base model uncapped (C >= N); {why}. "
                        "Use 'auto'")
    if fast_forward == "auto":
        return bool(eligible and first_passage)
    return bool(fast_forward and eligible)


def choose_general_queues(fleet: Fleet, queues: str = "auto") -> tuple[bool, bool, bool]:
    """(ring for writers, computers, snapshots) in the general kernel.

    The same rule as ``choose_queues`` on the keys that kernel pushes: a
    write lasts d_i / w_i on the writer clock, a compute interval T_i (plus
    jitter) stretched by 1 / (1 - eps_i) while the job's persist is in
    flight, a snapshot s_i. A ring also pays for the re-keying of a slowed
    job when its persist ends: it moves past the jobs between its two keys.
    """
    if queues in ("heap", "ring"):
        return (queues == "ring",) * 3
    n = fleet.n_jobs
    cycle = float(np.min(fleet.T + fleet.d))
    budget = 4.0 * math.log2(max(n, 2))
    a = fleet.is_async
    eps = np.where(a, fleet.slowdown, 0.0)
    stretch = 1.0 / np.maximum(1.0 - eps, 1e-300)
    keys_c = np.concatenate([fleet.T, np.where(eps < 1.0, fleet.T * stretch, fleet.T)])
    ring_c = n * (np.ptp(keys_c) + 2.0 * float(np.max(fleet.jitter * np.max(stretch[eps < 1.0],
                                                                             initial=1.0)))) / cycle <= budget
    ring_w = n * np.ptp(fleet.d / fleet.weights) / cycle <= budget
    ring_s = n * np.ptp(np.where(a, fleet.snapshot, 0.0)) / cycle <= budget
    return bool(ring_w), bool(ring_c), bool(ring_s)


#: A job whose uncontended cycle T_i + d_i is this many of its failure-free
#: stretches (1 / (1/M_i + 1/M_0)) long commits one attempt in e**20 = 5e8:
#: its run would practically never end.
MAX_CYCLES_PER_MTBF = 20.0


def _check_failure_rates(fleet: Fleet) -> None:
    """Refuse a fleet whose jobs fail so often that a checkpoint (practically)
    never completes (MODEL.md E8: a cycle of T + d commits with probability
    e^{-(T + d)/M} even without contention)."""
    if not fleet.has_failures:
        return
    rate = 1.0 / fleet.mtbf + 1.0 / fleet.outage_mtbf
    x = (fleet.T + fleet.d) * rate
    bad = np.nonzero(x > MAX_CYCLES_PER_MTBF)[0]
    if bad.size:
        i = int(bad[0])
        raise SpecError(
            f"mtbf[{i}] = {float(fleet.mtbf[i])!r} (outage_mtbf = {fleet.outage_mtbf!r}): job {i}'s "
            f"cycle T + d = {float(fleet.T[i] + fleet.d[i]):.6g} s is {float(x[i]):.3g} mean times "
            f"between its failures, so it completes a checkpoint once in e^{float(x[i]):.3g} "
            "attempts (MODEL.md E8): the run would never end. Give a longer mtbf or a shorter "
            "compute interval")


def _check_memory(n, fleets, cycles, record_firings, batch_size, threads) -> None:
    if threads is None:
        threads = numba.get_num_threads()
    need = memory_needed(n, fleets, cycles, record_firings, batch_size, threads)
    if record_firings and 8 * fleets * n * cycles > need / 2:
        what = (f"record_firings=True with fleets = {fleets}, N = {n}, cycles = {cycles} "
                f"(firings: fleets x N x cycles x 8 B)")
        advice = ("record fewer fleets or cycles per call (fleet_start continues a run in "
                  "pieces), or run without record_firings")
    else:
        what = f"simulate with fleets = {fleets}, N = {n}"
        advice = ("run fewer fleets per call (fleet_start continues a run in pieces, with "
                  "the same numbers)")
    check_memory(what, need, advice)


def _batch_line(done: int, total: int) -> None:
    """simulate's progress=True: one line per batch."""
    stderr_line(f"simulate: {done}/{total} fleets")


def simulate(fleet: Fleet, launch="random", fleets: int = 1000, cycles: int = 800,  # noqa: PLR0913 (keywords: the user surface)
             seed: int | None = 0, record_firings: bool = False,
             passage_level: int | None = None, burn_in: int = 0, *,
             stop_at_passage: bool = True, fleet_start: int = 0,
             batch_size: int | None = None, threads: int | None = None,
             progress=None, queues: str = "auto", kernel: str = "auto",
             fast_forward="auto", durations: bool = True, ramps=None,
             power_trace: int = 0) -> Run:
    """Simulate independent fleets exactly, event to event (MODEL.md).

    Parameters
    ----------
    fleet : Fleet
    launch : "random" | "sync" | "stagger" | array (N,) or (fleets, N)
        Initial phases. "random" draws theta from the seed, per fleet.
    fleets : int >= 1
        Number of independent fleets.
    cycles : int >= 1
        K: each fleet stops at its slowest job's K-th firing (or its passage).
    seed : int >= 0, or None for fresh entropy (recorded in ``Run.seed``)
        Fleet j's result depends only on (seed, fleet_start + j).
    record_firings : bool
        Return every job's first K firing times (memory fleets x N x K x 8 B).
        A call whose arrays would exceed ``cost.memory_limit()`` (this
        machine's memory) is refused with a SpecError before allocating;
        ``memory_needed`` gives the estimate.
    passage_level : int in 1..N, optional
        Record the first passage to n_w >= passage_level (2: first collision).
    burn_in : int in 0..cycles-1
        Occupancy is measured from the first instant every job has fired
        burn_in times.
    stop_at_passage : bool
        With a passage_level, stop each fleet at its passage (default), so
        ``cycles`` is a cap.
    fleet_start : int >= 0
        Global index of the first fleet (to continue a run in pieces).
    batch_size : int, optional
        Fleets per kernel call (default: adaptive, ~0.5 s of work per call);
        results do not depend on it.
    threads : int, optional
        numba threads for this call; results do not depend on it.
    progress : callable, True, False or None
        A callable is called as ``progress(fleets_done, fleets)`` after each
        batch; True prints a short line per batch on stderr; False or None
        (the default): no progress.
    queues : "auto" | "heap" | "ring"
        The kernel's event queues (a speed choice; results are identical,
        except that with unequal weights the general kernel may sum weights
        in another order: to rounding).
    kernel : "auto" | "anonymous" | "general"
        "auto": the anonymous kernel for the base model (every job blocking,
        equal weights, no writer cap), the general one for any other fleet:
        an async job, unequal weights or a capped fleet (max_writers < N)
        (see ``choose_kernel``). "general" runs any fleet through the general
        kernel; "anonymous" takes the base model only.
    fast_forward : "auto" | True | False
        Integrate collision-free stretches of uncapped base-model fleets a
        round of firings at a time (a speed choice: the event loop's results
        to rounding, see ``choose_fast_forward``). "auto" (the default): in
        first-passage runs (a passage_level >= 2, stop_at_passage), which
        therefore take it; True: in every run (a SpecError where it cannot
        apply: a binding cap, async jobs or weights); False: the pure event
        loop. Sweeps pass their cells' key ``fast_forward`` ("auto" unless
        the sweep file sets it; true becomes "auto" in a cell where
        ``fast_forward_applies`` is false).
    ramps : (windows, thresholds) or None
        MODEL.md E6, for a fleet with power: the windows D (s, each > 0 and
        finite) and thresholds X (W, finite) of the ramp observables
        ``ramp_share`` and ``ramp_events`` (None: none, power's mean, min and
        max only). A job computing at rate r draws idle + r (busy - idle):
        an async job computing while its persist is in flight or queued
        at its slowed rate r_c (1 - eps_i); snapshotting, writing
        (blocking), queued (E5), waiting (E1 WAIT) or DOWN (restarting
        after a failure, MODEL.md E8: a job that fails stops computing at
        once, an outage every job) it draws idle. Power runs through the
        event loop of either kernel, with failures or without
        (``run_fleets_power``, ``run_fleets_general_power`` and their
        ``_fail_`` variants; no fast-forward).
    power_trace : int >= 0
        For a fleet with power: record per fleet the first ``power_trace``
        steps of P over the measured window (``Run.power_trace_t``,
        ``power_trace_p``; memory fleets x power_trace x 16 B). 0 (the
        default): none, those fields None.
    durations : bool
        Record the checkpoints' write durations and waits (MODEL.md E7:
        ``durations_count``, ``_sum``, ``_max``, ``_hist`` and ``wait_*``;
        the default). False: those fields are None and the event loop of a
        base-model run without failures or fast-forward compiles their
        recording out (``run_fleets_nodur``); every other output is the
        same bits.

    Returns
    -------
    Run
        Per fleet (axis 0): time at each writer level over the measured
        window, first passage (time and cycle), up-crossings, each job's
        writing time, the write durations and waits (sums, maxima,
        histograms), events, and with ``record_firings`` every firing time;
        with the fleet, launch, seed (the one drawn when ``seed`` is None)
        and counts that produced them. Times in seconds when T and d are.

    Raises
    ------
    SpecError
        Bad input, before any fleet runs: ``fleet`` is not a Fleet; a count,
        ``seed``, ``passage_level``, ``batch_size``, ``threads`` or
        ``power_trace`` that is not an integer in its range (``fleet_start + fleets`` at most 2**63,
        ``threads`` at most numba's thread count); a flag that is not True or
        False; a ``progress`` that is not a callable, True, False or None; an
        unknown ``queues``, ``kernel`` or ``fast_forward``; ``kernel =
        "anonymous"`` for a fleet outside the base model; ``fast_forward =
        True`` where it cannot apply; a launch the fleet cannot take (an
        unknown name, a stagger of jobs that are not identical or that cannot
        be placed, phases of the wrong shape or outside [0, 1]); or arrays
        that would exceed ``cost.memory_limit()``.
    Exception
        Whatever a ``progress`` callable raises, unchanged: the run stops
        after the batch it was called for and returns nothing.
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    fleets, cycles, burn_in, fleet_start = _check_counts(fleets, cycles, burn_in, fleet_start)
    n = fleet.n_jobs
    if passage_level is not None:
        passage_level = check_int("passage_level", passage_level, 1, n)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    seed = check_int("seed", seed, 0)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, 1)
    if threads is not None:
        threads = check_int("threads", threads, 1, numba.config.NUMBA_NUM_THREADS)
    progress = check_progress("progress", progress, _batch_line)
    record_firings = check_flag("record_firings", record_firings)
    stop_at_passage = check_flag("stop_at_passage", stop_at_passage)
    durations = check_flag("durations", durations)
    if queues not in QUEUE_KINDS:
        raise SpecError(f"queues = {queues!r}: must be one of {', '.join(QUEUE_KINDS)}")
    _check_memory(n, fleets, cycles, bool(record_firings), batch_size, threads)
    _check_failure_rates(fleet)
    ramps = _check_ramps(fleet, ramps)
    power_trace = check_int("power_trace", power_trace, 0)
    if power_trace and not fleet.has_power:
        raise SpecError(f"power_trace = {power_trace}: the fleet has no power "
                        "(Fleet(busy_power=, idle_power=), MODEL.md E6)")
    if power_trace:
        check_memory(f"power_trace = {power_trace} with fleets = {fleets} (fleets x power_trace "
                     "x 16 B)", 16.0 * fleets * power_trace,
                     "record fewer steps, or fewer fleets per call (fleet_start continues a run "
                     "in pieces)")
    general, ff, rings = _choose_engine(fleet, queues, kernel, fast_forward,
                                        bool(stop_at_passage) and (passage_level or 0) >= 2)
    power = fleet.has_power
    if power and ff:
        if fast_forward is True:
            raise SpecError("fast_forward = True: a fleet with power (MODEL.md E6) runs through "
                            "the event loop; use 'auto' or False")
        ff = False
    theta_spec = _launch.resolve(launch, fleet, fleets)
    plan = _Plan(fleets=fleets, cycles=cycles, burn_in=burn_in,
                 level=0 if passage_level is None else passage_level,
                 stop_at_passage=stop_at_passage, record_firings=record_firings,
                 fleet_start=fleet_start, batch_size=batch_size, general=general,
                 fast_forward=ff, rings=rings, durations=bool(durations),
                 power=ramps if power else None, power_trace=power_trace if power else 0)
    inputs = door.prepare(fleet, seed)
    out = _Outputs.empty(fleets, n, cycles, record_firings, failures=fleet.has_failures,
                         ramps=plan.power, trace=plan.power_trace)
    with door.numba_threads(threads):
        _run_batches(inputs, theta_spec, plan, out, progress)
    launch_label = launch if isinstance(launch, str) else "explicit"
    return out.run(fleet, launch_label, seed, plan, passage_level)


def _check_ramps(fleet: Fleet, ramps) -> tuple[np.ndarray, np.ndarray]:
    """simulate's ramps, checked: (windows D, thresholds X) as float64 arrays."""
    if ramps is None:
        ramps = ((), ())
    elif not fleet.has_power:
        raise SpecError("ramps: the fleet has no power (Fleet(busy_power=, idle_power=), "
                        "MODEL.md E6)")
    try:
        windows, thresholds = ramps
        D = np.atleast_1d(np.asarray(windows, dtype=np.float64))
        X = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise SpecError(f"ramps = {ramps!r}: must be (windows D, thresholds X), two sequences "
                        "of numbers") from err
    if D.ndim != 1 or X.ndim != 1:
        raise SpecError(f"ramps = {ramps!r}: windows and thresholds must be flat sequences")
    for k, x in enumerate(D):
        if not (math.isfinite(x) and x > 0.0):
            raise SpecError(f"ramps window D[{k}] = {float(x)!r} s: must be finite and > 0")
    for k, x in enumerate(X):
        if not math.isfinite(x):
            raise SpecError(f"ramps threshold X[{k}] = {float(x)!r} W: must be finite")
    return D, X


def _check_counts(fleets, cycles, burn_in, fleet_start) -> tuple[int, int, int, int]:
    """simulate's fleets, cycles, burn_in and fleet_start, checked."""
    fleets = check_int("fleets", fleets, 1)
    cycles = check_int("cycles", cycles, 1)
    burn_in = check_int("burn_in", burn_in, 0, cycles - 1)
    fleet_start = check_int("fleet_start", fleet_start, 0)
    if fleet_start + fleets > 2**63:
        raise SpecError(f"fleet_start + fleets = {fleet_start + fleets}: fleet indices must stay "
                        "below 2**63")
    return fleets, cycles, burn_in, fleet_start


def _choose_engine(fleet: Fleet, queues: str, kernel: str, fast_forward,
                   first_passage: bool) -> tuple[bool, bool, tuple]:
    """(general kernel, fast-forward, ring flags of the kernel's queues): the
    anonymous kernel's (ring_w, ring_c), the general one's (ring_w, ring_c, ring_s)."""
    rings = choose_queues(fleet, queues)
    general = choose_kernel(fleet, kernel)
    ff = choose_fast_forward(fleet, general, fast_forward, first_passage=first_passage)
    if general:
        rings = choose_general_queues(fleet, queues)
    return general, ff, rings


@dataclass(frozen=True)
class _Plan:
    """simulate's checked arguments and engine choices, as each batch takes them."""

    fleets: int
    cycles: int
    burn_in: int
    level: int               # passage level, 0 for none
    stop_at_passage: bool
    record_firings: bool
    fleet_start: int
    batch_size: int | None   # None: adaptive
    general: bool            # the general kernel (else the anonymous one)
    fast_forward: bool
    rings: tuple             # ring flags of the kernel's queues
    durations: bool = True   # record the write durations and waits (E7)
    power: tuple | None = None  # (D, X) of the ramps when power runs (E6), else None
    power_trace: int = 0     # steps of P recorded per fleet (E6), 0 for none


@dataclass(frozen=True)
class _Outputs:
    """The kernels' output arrays, fleets on axis 0, filled batch by batch."""

    firings: np.ndarray | None
    occupancy: np.ndarray
    upcross: np.ndarray
    writing: np.ndarray
    passage_time: np.ndarray
    passage_cycle: np.ndarray
    end_time: np.ndarray
    events: np.ndarray
    waits: np.ndarray
    wait_time: np.ndarray
    skips: np.ndarray
    # Per fleet: sum (s), maximum (s), then the histogram's counts (``_kernel._OUT_SUM``).
    dur_out: np.ndarray
    wait_out: np.ndarray
    # Per fleet and job (row N: the fleet), MODEL.md E8 (``_kernel._FO_FAIL``); None: no failures.
    fail_out: np.ndarray | None = None
    # Per fleet, MODEL.md E6 (``_kernel.PO_SUM``), and (D, X, share time or up-crossings); None: no power.
    pw_out: np.ndarray | None = None
    ramp_out: np.ndarray | None = None
    # Per fleet, the power trace's step starts (s) and levels (W); (fleets, 0) for none.
    trace_t: np.ndarray | None = None
    trace_p: np.ndarray | None = None

    @classmethod
    def empty(cls, fleets: int, n: int, cycles: int, record_firings: bool,
              failures: bool = False, ramps: tuple | None = None,
              trace: int = 0) -> "_Outputs":
        return cls(firings=np.full((fleets, n, cycles), np.nan) if record_firings else None,
                   occupancy=np.empty((fleets, n + 1)),
                   upcross=np.empty((fleets, n + 1), dtype=np.int64),
                   writing=np.empty((fleets, n)), passage_time=np.empty(fleets),
                   passage_cycle=np.empty(fleets, dtype=np.int64), end_time=np.empty(fleets),
                   events=np.empty(fleets, dtype=np.int64), waits=np.zeros(fleets, dtype=np.int64),
                   wait_time=np.zeros(fleets), skips=np.zeros(fleets, dtype=np.int64),
                   dur_out=np.zeros((fleets, HIST_BINS + 4)),
                   wait_out=np.zeros((fleets, HIST_BINS + 4)),
                   fail_out=np.zeros((fleets, n + 1, door.FAIL_COLUMNS)) if failures else None,
                   pw_out=None if ramps is None else np.zeros((fleets, door.PW_COLUMNS)),
                   ramp_out=None if ramps is None else np.zeros((fleets, ramps[0].size,
                                                                 ramps[1].size, 2)),
                   trace_t=None if ramps is None else np.full((fleets, trace), np.nan),
                   trace_p=None if ramps is None else np.full((fleets, trace), np.nan))

    def run(self, fleet: Fleet, launch, seed: int, plan: _Plan, passage_level) -> Run:
        """The filled arrays as a Run (the E7 fields None where durations were off)."""
        return Run(fleet=fleet, launch=launch, seed=seed, cycles=plan.cycles, burn_in=plan.burn_in,
                   passage_level=passage_level, fleet_start=plan.fleet_start, firings=self.firings,
                   occupancy=self.occupancy, passage_time=self.passage_time,
                   passage_cycle=self.passage_cycle, end_time=self.end_time, events=self.events,
                   upcrossings=self.upcross, writing_time=self.writing, waits=self.waits,
                   wait_time=self.wait_time, skips=self.skips, **self._durations(plan),
                   **self._failure_fields(plan.general), **self._power_fields(plan))

    def _power_fields(self, plan: _Plan) -> dict:
        """The E6 fields (none where power did not run)."""
        if self.pw_out is None:
            return {}
        window = self.pw_out[:, door.PO_WINDOW]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(window > 0, self.pw_out[:, door.PO_SUM] / window, np.nan)
            share = np.where(window[:, None, None] > 0,
                             self.ramp_out[:, :, :, 0] / window[:, None, None], np.nan)
        return {"power_mean": mean, "power_min": self.pw_out[:, door.PO_MIN].copy(),
                "power_max": self.pw_out[:, door.PO_MAX].copy(),
                "power_p01": self.pw_out[:, door.PO_P01].copy(),
                "power_p99": self.pw_out[:, door.PO_P99].copy(), "ramp_share": share,
                "ramp_events": self.ramp_out[:, :, :, 1].astype(np.int64),
                "ramp_windows": tuple(float(x) for x in plan.power[0]),
                "ramp_thresholds": tuple(float(x) for x in plan.power[1]),
                "power_trace_t": self.trace_t if plan.power_trace else None,
                "power_trace_p": self.trace_p if plan.power_trace else None}

    def _durations(self, plan: _Plan) -> dict:
        """The E7 fields: each checkpoint's duration and wait, counted, summed, their
        maxima and histograms; None each where ``plan.durations`` is off."""
        names = ("durations_count", "durations_sum", "durations_max", "durations_hist",
                 "wait_sum", "wait_max", "wait_hist")
        if not plan.durations:
            return dict.fromkeys(names)
        dur_hist = self.dur_out[:, 2:].astype(np.int64)
        wait_hist = self.wait_out[:, 2:].astype(np.int64)
        count = dur_hist.sum(axis=1)
        if not plan.general:  # a blocking checkpoint fires when it falls due: no wait
            wait_hist[:, 0] = count
        return dict(zip(names, (count, self.dur_out[:, 0].copy(), self.dur_out[:, 1].copy(),
                                dur_hist, self.wait_out[:, 0].copy(),
                                self.wait_out[:, 1].copy(), wait_hist)))

    def _failure_fields(self, general: bool) -> dict:
        if self.fail_out is None:
            return {}
        fo = self.fail_out[:, :-1]
        names = ("failures", "abandoned_writes", "lost_work", "down_time", "committed_work",
                 "uncommitted_work", "checkpoint_time")
        out = {name: fo[:, :, c].copy() for c, name in enumerate(names)}
        if not general:  # blocking jobs, no queue: checkpointing is writing
            out["checkpoint_time"] = self.writing.copy()
        out["outages"] = self.fail_out[:, -1, 0].copy()
        return out


def _run_batches(inputs, theta_spec, plan: _Plan, out: _Outputs, progress) -> None:
    """Run the fleets through the kernel in batches, into ``out``."""
    lo = 0
    batch = plan.batch_size or default_batch(out.writing.shape[1], plan.cycles)
    while lo < plan.fleets:
        hi = min(plan.fleets, lo + batch)
        _run_batch(inputs, door.phases(inputs, theta_spec, lo, hi, plan.fleet_start), plan, out,
                   lo, hi)
        if progress is not None:
            progress(hi, plan.fleets)
        if plan.batch_size is None:
            batch = next_batch(int(out.events[:hi].sum()), hi)
        lo = hi


def _run_batch(inputs, theta, plan: _Plan, out: _Outputs, lo: int, hi: int) -> None:
    """One kernel call: fleets lo..hi-1 from their phases theta."""
    fire_buf = out.firings[lo:hi] if plan.record_firings else np.empty((hi - lo, 1, 1))
    common = (inputs.key0, inputs.key1, np.int64(plan.fleet_start + lo), plan.cycles, plan.burn_in,
              plan.level, plan.stop_at_passage, plan.record_firings)
    outputs = (out.occupancy[lo:hi], out.upcross[lo:hi], out.writing[lo:hi],
               out.passage_time[lo:hi], out.passage_cycle[lo:hi], out.end_time[lo:hi],
               out.events[lo:hi])
    if plan.general:
        extra = inputs.general
        args = (inputs.T, inputs.d, inputs.sigma, extra[0], inputs.rc, theta, *extra[1:],
                *common, *plan.rings, fire_buf, *outputs,
                out.waits[lo:hi], out.skips[lo:hi], out.wait_time[lo:hi], _DURATION_CELLS,
                _WAIT_CELLS, out.dur_out[lo:hi], out.wait_out[lo:hi])
        if out.pw_out is not None and out.fail_out is not None:
            door.run_fleets_general_fail_power(*args, *inputs.failures, out.fail_out[lo:hi],
                                               inputs.power, plan.power[0], plan.power[1],
                                               out.pw_out[lo:hi], out.ramp_out[lo:hi],
                                               out.trace_t[lo:hi], out.trace_p[lo:hi])
        elif out.pw_out is not None:
            door.run_fleets_general_power(*args, None, None, None, inputs.power, plan.power[0],
                                          plan.power[1], out.pw_out[lo:hi], out.ramp_out[lo:hi],
                                          out.trace_t[lo:hi], out.trace_p[lo:hi])
        elif out.fail_out is None:
            door.run_fleets_general(*args)
        else:
            door.run_fleets_general_fail(*args, *inputs.failures, out.fail_out[lo:hi])
    elif out.fail_out is not None and out.pw_out is not None:
        door.run_fleets_fail_power(*inputs.base, theta, *common, *plan.rings, fire_buf, *outputs,
                                   _DURATION_CELLS, out.dur_out[lo:hi], *inputs.failures,
                                   out.fail_out[lo:hi], inputs.power, plan.power[0],
                                   plan.power[1], out.pw_out[lo:hi], out.ramp_out[lo:hi],
                                   out.trace_t[lo:hi], out.trace_p[lo:hi])
    elif out.fail_out is not None:
        door.run_fleets_fail(*inputs.base, theta, *common, *plan.rings, fire_buf, *outputs,
                             _DURATION_CELLS, out.dur_out[lo:hi], *inputs.failures,
                             out.fail_out[lo:hi])
    elif out.pw_out is not None:
        door.run_fleets_power(*inputs.base, theta, *common, *plan.rings, fire_buf, *outputs,
                              _DURATION_CELLS, out.dur_out[lo:hi], None, None, None,
                              inputs.power, plan.power[0], plan.power[1], out.pw_out[lo:hi],
                              out.ramp_out[lo:hi], out.trace_t[lo:hi], out.trace_p[lo:hi])
    else:
        if plan.fast_forward:
            run_fleets = door.run_fleets_ff
        else:
            run_fleets = door.run_fleets if plan.durations else door.run_fleets_nodur
        run_fleets(*inputs.base, theta, *common, *plan.rings, fire_buf, *outputs,
                   _DURATION_CELLS, out.dur_out[lo:hi])

"""``stormsim plan``'s costs beyond the storms: the GPU time a scenario loses
to its checkpoints (blocked, slowed, queued) and a mixed fleet's numbers per
job class, from the exact law where it applies, else from the plan's
checkpoint-durations run (MODEL.md E7) with 95 % intervals over fleets.

GPU time is counted per job: a share is job-seconds lost over N x the
measured window, so 1 % means each job, on average, loses 1 % of its wall
time. Every checkpoint mean is per write.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .engine.model import Fleet
from .stats.durations import ratio
from .stats.interval import Interval
from .stats.stationary import mean_compute_work

__all__ = ["ClassRow", "gpu_shares", "job_classes", "class_rows", "law_reason", "SHARES"]

#: The GPU shares of a PlanRow: what each counts (job-seconds over N x the window).
SHARES = {
    "blocked_share": "the share of each job's time stopped for a checkpoint: a blocking write "
                     "(firing to write end) or an async snapshot",
    "slowed_share": "the share of each job's time lost to compute slowed while its async "
                    "persist is in flight (slowdown x the persist's time, queued ones included)",
    "queued_share": "the share of each job's time stopped waiting for a checkpoint to start: a "
                    "writer cap's queue (blocking jobs) or an async WAIT (the previous persist "
                    "still in flight)",
    "gpu_lost_share": "the GPU time the checkpoints cost: blocked_share + slowed_share + "
                      "queued_share",
}
#: How a simulated share or mean's interval is made.
RATIO = "ratio over fleets, delta method"
#: The engine's duration histogram pools every job's writes (in multiples of
#: each job's d_i): no per-class quantile.
POOLED = ("not estimated per class: the simulation's duration histogram pools every job's "
          "writes (in multiples of each job's lone time)")


def law_reason(fleet: Fleet) -> str:
    """Why the exact law does not give this fleet's costs ('' where it does)."""
    why = []
    if np.any(fleet.is_async):
        why.append("async checkpoints")
    if fleet.max_writers < fleet.n_jobs:
        why.append(f"a writer cap of {fleet.max_writers}")
    if not np.all(fleet.weights == fleet.weights[0]):
        why.append("unequal weights")
    if not np.all(fleet.jitter > 0.0):
        why.append("a job without jitter")
    if not why and not fleet.is_anonymous:
        why.append("a model the law does not cover")
    return ("the exact law does not cover " + ", ".join(why)) if why else ""


def _interval(num: np.ndarray, den: np.ndarray) -> Interval:
    """sum num / sum den over fleets, its delta-method interval (a share: lo >= 0)."""
    if den.shape[0] < 2 or not float(den.sum()) > 0:
        return Interval(math.nan, math.nan, math.nan, "not estimated: fewer than 2 fleets")
    r = ratio(num, den)
    return Interval(r.value, max(0.0, r.lo), r.hi, RATIO)


def _exact(v: float, unit: str = "") -> Interval:
    return Interval(float(v), float(v), float(v), "exact", unit=unit)


def _missing(why: str) -> Interval:
    return Interval(math.nan, math.nan, math.nan, why)


def gpu_shares(fleet: Fleet, law, run, lost: str = "") -> dict:
    """SHARES' Intervals: exact from ``law`` (a blocking uncapped fleet: only
    its writes cost), else from ``run`` (the durations run; None: each NaN
    with the reason ``lost``). A share the run does not separate (a mixed
    blocking and async fleet's snapshots or capped queue) is NaN with why."""
    if law is not None:
        w = float(np.mean(law.writing_probability))
        return {"blocked_share": _exact(w), "slowed_share": _exact(0.0),
                "queued_share": _exact(0.0), "gpu_lost_share": _exact(w)}
    if run is None:
        return {name: _missing(lost) for name in SHARES}
    den = fleet.n_jobs * run.occupancy.sum(axis=1)
    nums = {"blocked_share": _blocked(fleet, run), "slowed_share": _slowed(fleet, run),
            "queued_share": _queued(fleet, run)}
    out = {name: (_missing(num) if isinstance(num, str) else _interval(num, den))
           for name, num in nums.items()}
    bad = [n for n, v in out.items() if math.isnan(v.value)]
    out["gpu_lost_share"] = (_missing(f"not estimated: {', '.join(bad)} not estimated") if bad
                             else _interval(sum(nums.values()), den))
    return out


def _blocked(fleet: Fleet, run):
    """Per fleet: job-seconds of blocking writes and async snapshots (or why not)."""
    blocking = run.writing_time[:, ~fleet.is_async].sum(axis=1)
    snaps = fleet.snapshot[fleet.is_async]
    if snaps.size == 0 or np.all(snaps == 0.0):
        return blocking
    if np.all(fleet.is_async) and np.all(snaps == snaps[0]):
        return blocking + snaps[0] * run.durations_count      # one snapshot per checkpoint
    return ("not estimated: the run counts checkpoints over all jobs, not per job, and these "
            "jobs' snapshots differ")


def _slowed(fleet: Fleet, run):
    """Per fleet: compute lost while async persists are in flight, slowdown x
    their time; behind a writer cap a queued persist is in flight too (E5):
    its queue time is the waits less the WAITs (all jobs async, one slowdown)."""
    eps = np.where(fleet.is_async, fleet.slowdown, 0.0)
    out = (run.writing_time * eps).sum(axis=1)
    if fleet.max_writers >= fleet.n_jobs or not np.any(eps > 0):
        return out
    if np.all(fleet.is_async) and np.all(eps == eps[0]):
        return out + eps[0] * np.maximum(0.0, run.wait_sum - run.wait_time)
    return ("not estimated: a persist queued behind the writer cap slows its job too, and the "
            "run records the queue over all jobs, whose slowdowns differ")


def _queued(fleet: Fleet, run):
    """Per fleet: job-seconds stopped in a writer cap's queue or an async WAIT (or why not)."""
    if not np.any(fleet.is_async):
        return run.wait_sum                                     # a blocking job queues stopped
    if fleet.max_writers >= fleet.n_jobs or np.all(fleet.is_async):
        return run.wait_time           # WAIT; an async persist queues while its job computes
    return ("not estimated: blocking and async jobs share the writer cap's queue, which the "
            "run records over all jobs")


@dataclass(frozen=True)
class ClassRow:
    """One job class of a fleet: jobs alike in every parameter (T, d,
    jitter, weight, checkpoint mode and its options).

    Attributes
    ----------
    jobs : int
        How many jobs of the fleet are of this class.
    compute_interval : float
        T_i, the compute work between two checkpoints (s).
    lone_checkpoint_seconds : float
        d_i, the write's duration alone (s).
    checkpoint_seconds : Interval
        The mean write duration under contention, per write (firing to write
        end), s: exact where the law applies, else simulated (a ratio over
        fleets) or NaN with why in its ``method``.
    write_stretch : Interval
        checkpoint_seconds / lone_checkpoint_seconds.
    checkpoint_p99 : Interval
        The 99th percentile of the class's write durations, s (the fleet's
        where it has one class; else NaN: POOLED).
    gpu_lost_share : Interval
        The share of a job's time its checkpoints cost (per job of the class):
        exact where the law applies (its writing share), else NaN with why.
    method : str
        How checkpoint_seconds was made.
    """

    jobs: int
    compute_interval: float
    lone_checkpoint_seconds: float
    checkpoint_seconds: Interval
    write_stretch: Interval
    checkpoint_p99: Interval
    gpu_lost_share: Interval
    method: str


def job_classes(fleet: Fleet) -> list[np.ndarray]:
    """The job indices of each class (jobs alike in every parameter), in the
    order of each class's first job."""
    keys = list(zip(fleet.T, fleet.d, fleet.jitter, fleet.weights, fleet.checkpoint,
                    fleet.snapshot, fleet.slowdown, fleet.on_busy))
    groups: dict = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return [np.array(g, dtype=np.int64) for g in groups.values()]


def class_rows(fleet: Fleet, law, run, p99: Interval, lost: str = "") -> list[ClassRow]:
    """One ClassRow per job class: from ``law`` (StationaryLaw) where it
    applies, else from ``run`` (the durations run: per-class means where
    every job blocks and no cap queues them, the checkpoints counted from
    each job's compute time), else NaN with why (``lost`` where no run)."""
    classes = job_classes(fleet)
    out = []
    for idx in classes:
        d = float(fleet.d[idx[0]])
        if law is not None:
            mean = _exact(np.mean(np.asarray(law.mean_write_duration)[idx]), "s")
            lost_share = _exact(np.mean(np.asarray(law.writing_probability)[idx]))
        else:
            mean, lost_share = _simulated_mean(fleet, run, idx, lost), _missing(
                "not estimated per class: the run records GPU time over all jobs")
        stretch = (_missing(mean.method) if math.isnan(mean.value) else
                   Interval(mean.value / d, mean.lo / d, mean.hi / d, mean.method))
        out.append(ClassRow(jobs=int(idx.size), compute_interval=float(fleet.T[idx[0]]),
                            lone_checkpoint_seconds=d, checkpoint_seconds=mean,
                            write_stretch=stretch,
                            checkpoint_p99=p99 if len(classes) == 1 else _missing(POOLED),
                            gpu_lost_share=lost_share, method=mean.method))
    return out


def _simulated_mean(fleet: Fleet, run, idx: np.ndarray, lost: str) -> Interval:
    """A class's mean write duration from the durations run: its writing time
    over its checkpoints, counted as compute time / mean compute work (a
    blocking job of an uncapped fleet computes or writes, nothing else)."""
    if run is None:
        return _missing(lost)
    if np.any(fleet.is_async) or fleet.max_writers < fleet.n_jobs:
        return _missing("not estimated per class: the run counts checkpoints over all jobs, and "
                        "with " + ("async jobs" if np.any(fleet.is_async) else "a writer cap")
                        + " a job's checkpoints cannot be told from its compute time")
    window = run.occupancy.sum(axis=1)[:, None]
    writing = run.writing_time[:, idx]
    work = mean_compute_work(fleet.T[idx], fleet.jitter[idx])
    count = ((window - writing) / work).sum(axis=1)
    out = _interval(writing.sum(axis=1), count)
    return Interval(out.value, out.lo, out.hi,
                    f"{out.method} (checkpoints counted from each job's compute time)", unit="s")

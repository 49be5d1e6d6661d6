"""Goodput over fleets (MODEL.md E8): G and the parts of its complement, each
with its interval, from a Run of a fleet with failures.

G = committed work / (N x window); writing, lost, down, cap and uncommitted
split the rest exactly (``Run.goodput_parts`` per fleet). Over fleets each is
a ratio of sums, fleets the independent units (``durations.ratio``: the
delta-method standard error, normal quantile).
"""
from __future__ import annotations

from .durations import ratio
from .interval import CONFIDENCE, Interval

__all__ = ["PARTS", "goodput"]

#: G and its parts, in the order they are shown.
PARTS = ("goodput", "writing", "lost", "down", "cap", "uncommitted")


def goodput(run, confidence: float = CONFIDENCE) -> dict[str, Interval] | None:
    """G and its parts (``PARTS``) over the run's fleets, each an Interval
    (shares of N x window job-seconds); None for a fleet without failures."""
    if run.committed_work is None:
        return None
    den = run.fleet.n_jobs * run.window
    nums = {"goodput": run.committed_work.sum(axis=1), "writing": run.checkpoint_time.sum(axis=1),
            "lost": run.lost_work.sum(axis=1), "down": run.down_time.sum(axis=1),
            "uncommitted": run.uncommitted_work.sum(axis=1)}
    nums["cap"] = den - sum(nums.values())
    return {name: ratio(nums[name], den, confidence) for name in PARTS}

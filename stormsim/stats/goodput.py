"""Goodput over fleets (MODEL.md E8): G and the parts of its complement, each
with its interval, from a Run of a fleet with failures (:func:`goodput`) or
from the per-fleet sums a sweep stores (:func:`goodput_of_sums`).

G = committed work / (N x window); writing, lost, down, cap and uncommitted
split the rest exactly (``Run.goodput_parts`` per fleet). Over fleets each is
a ratio of sums, fleets the independent units (``durations.ratio``: the
delta-method standard error, normal quantile).
"""
from __future__ import annotations

import numpy as np

from .durations import ratio
from .interval import CONFIDENCE, Interval

__all__ = ["PARTS", "goodput", "goodput_of_sums"]

#: G and its parts, in the order they are shown.
PARTS = ("goodput", "writing", "lost", "down", "cap", "uncommitted")


def goodput(run, confidence: float = CONFIDENCE) -> dict[str, Interval] | None:
    """G and its parts (``PARTS``) over the run's fleets, each an Interval
    (shares of N x window job-seconds); None for a fleet without failures."""
    if run.committed_work is None:
        return None
    return goodput_of_sums(run.fleet.n_jobs, run.window, run.committed_work.sum(axis=1),
                           run.checkpoint_time.sum(axis=1), run.lost_work.sum(axis=1),
                           run.down_time.sum(axis=1), run.uncommitted_work.sum(axis=1),
                           confidence)


def goodput_of_sums(n_jobs: int, window, committed, writing, lost, down, uncommitted,
                    confidence: float = CONFIDENCE) -> dict[str, Interval]:
    """:func:`goodput` from per-fleet sums over the jobs (each float64 (fleets,);
    ``window`` the measured window's length per fleet): the one estimator of
    ``goodput(run)`` and of a sweep's cells (stormsim.stats.summary)."""
    den = n_jobs * np.asarray(window, dtype=np.float64)
    nums = {"goodput": committed, "writing": writing, "lost": lost, "down": down,
            "uncommitted": uncommitted}
    nums = {k: np.asarray(v, dtype=np.float64) for k, v in nums.items()}
    nums["cap"] = den - sum(nums.values())
    return {name: ratio(nums[name], den, confidence) for name in PARTS}

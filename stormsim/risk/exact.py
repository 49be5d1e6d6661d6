"""Storm risk from the exact law: when it applies, and the StormRisk it gives.

A base-model fleet (blocking checkpoints, equal weights, no writer cap) whose
every job has jitter has a long-run law known in closed form (MODEL.md, "The
stationary law"; ``stormsim.stationary``). For it, the long-run P(n_w >= k),
storm rate and mean storm duration need no simulation: ``storm_risk`` answers
them from the law (``method="exact"``, or ``"auto"`` with a random launch,
which asks the long-run question). A fleet launched in a given state (a
stagger, a synchronized restart), an asynchronous, weighted or capped fleet,
or one without jitter (whose averages depend on its launch) is simulated.
"""
from __future__ import annotations

import time

import numpy as np

from ..engine.model import Fleet
from ..stats.stationary import stationary
from .result import StormRisk

__all__ = ["EXACT_METHOD", "exact_applies", "exact_risk"]

#: How an exact level reads (``p_ge_method``, ``storms_method``, ``level_method``).
EXACT_METHOD = "exact"


def exact_applies(fleet: Fleet, launch) -> bool:
    """Whether ``storm_risk(..., method="auto")`` answers from the exact law:
    the base model with jitter on every job, asked from a random launch."""
    cap = getattr(fleet, "max_writers", None)
    return (isinstance(launch, str) and launch == "random" and fleet.is_anonymous
            and bool(np.all(fleet.jitter > 0.0)) and (cap is None or cap >= fleet.n_jobs))


def exact_risk(fleet: Fleet, ks: np.ndarray, target: float, seed: int, batch: int) -> StormRisk:
    """The StormRisk of levels ``ks`` from ``stationary(fleet)``: intervals of
    zero width (no sampling error; the law's own error is below 1e-10
    relative), every level resolved, no fleet run. Raises SpecError where the
    law does not exist (``stationary``'s refusals)."""
    t0, c0 = time.perf_counter(), time.process_time()
    law = stationary(fleet)
    p, rate, duration = (np.array(a[ks], dtype=np.float64)
                         for a in (law.p_ge, law.storms_per_s, law.storm_duration))
    zero = np.zeros(ks.size)
    word = np.full(ks.size, EXACT_METHOD)
    return StormRisk(
        levels=ks, rel_error_target=target, seed=int(seed), batch_fleets=int(batch),
        p_ge=p, p_ge_lo=p.copy(), p_ge_hi=p.copy(), p_ge_method=word.copy(),
        p_ge_rel_error=zero.copy(), storms_per_s=rate, storms_per_s_lo=rate.copy(),
        storms_per_s_hi=rate.copy(), storms_method=word.copy(),
        storms_per_s_rel_error=zero.copy(), storm_duration=duration,
        storm_duration_lo=duration.copy(), storm_duration_hi=duration.copy(),
        hits=np.zeros(ks.size, dtype=np.int64),
        resolved=np.ones(ks.size, dtype=bool), fleets_needed=zero.copy(),
        cpu_seconds_needed=zero.copy(), needed_is_lower_bound=np.zeros(ks.size, dtype=bool),
        cpu_seconds=time.process_time() - c0, wall_seconds=time.perf_counter() - t0,
        stopped="exact", level_method=word.copy(),
        method=("exact (product form): the long-run law of the base model (MODEL.md, 'The "
                "stationary law'; stormsim.stationary), no sampling error; from a given launch, "
                "or for async, weighted or capped fleets, storm_risk simulates"))

"""The random streams of failures and outages (MODEL.md E8), as plain constants.

Both the kernels and the reference integrator (tests/reference.py) draw
failures from these definitions, so that a run with failures can be compared
draw for draw. On the engine's SplitMix64 streams (``stream_base`` and
``stream_uniform`` of ``stormsim.engine._kernel``):

- job i's failures: stream ``stream_base(key0, key1 ^ FAILURE_SALT, fleet, i)``;
- the fleet's outages: stream ``stream_base(key0, key1 ^ OUTAGE_SALT, fleet, 0)``;
- the m-th gap (m = 0, 1, ...) of either: ``M * exponential(u_m)``, with
  ``u_m = stream_uniform(base, m)`` (uniform m of the stream, 53 bits in
  [0, 1)), ``exponential(u) = -log(1.0 - u)`` (1.0 - u is exact: u is a
  multiple of 2**-53) and M = M_i (job) or M_0 (outages);
- the instants, in wall time from the launch (t = 0): ``F_0 = gap_0``,
  ``F_{m+1} = F_m + gap_{m+1}``, a running float sum in that order.

The salts are the ASCII words "failures" and "outages!"; they differ from each
other and from every multiplier of the jitter streams, so a failure stream is
never a jitter stream (key1 is the jitter streams' own word). A stream with
M = inf is never drawn from: a job that never fails takes no draw (F1).
"""
from __future__ import annotations

import math

__all__ = ["FAILURE_SALT", "OUTAGE_SALT", "exponential"]

#: key1 of job i's failure streams is key1 ^ FAILURE_SALT (ASCII "failures").
FAILURE_SALT = 0x6661696C75726573

#: key1 of the fleet's outage stream (job 0) is key1 ^ OUTAGE_SALT (ASCII "outages!").
OUTAGE_SALT = 0x6F75746167657321


def exponential(u: float) -> float:
    """A standard exponential from a uniform u in [0, 1): -log(1 - u), in [0, 36.8]."""
    return -math.log(1.0 - u)

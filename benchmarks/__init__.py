"""stormsim benchmarks: ``python -m benchmarks`` (or ``make bench``).

Not tests: they print figures and write JSON (benchmarks/results/latest.json).
Workloads (a)-(f) are in ``workloads``, timing and probes in ``harness``, and
the peers (SimPy, a NumPy event loop, SimGrid), each verified against stormsim
before it is timed, in ``peers``.
"""

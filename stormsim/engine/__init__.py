"""The engine: a fleet in, exact trajectories out.

What lives here: the fleet (``model``: Fleet, throughput rules; ``units``:
physical units to the model's seconds; ``jobcsv``: CSV job tables), what a
run costs before it runs (``cost``: events, seconds, memory, batch sizes),
launches (``launch``), the numba kernels (``_kernel``) and their cache
directory (``_numba_cache``), the one door into them (``door``: arrays,
keys, phases and threads for every driver) and ``simulate`` (``run``).

It imports only the root modules (``errors``, ``_format``, ``_version``):
nothing here knows of statistics, storm risk, sweeps or stores.
"""

"""Results on disk and in memory: files that survive a kill, parts, the HDF5
layout, the stores that write it, the reader and its views.

What lives here: the atomic-write recipe and the lock (``files``), the
parts of an unfinished sweep (``parts``), what a stored result was made
from, checked on resume (``identity``), one cell's arrays and their
assembly from parts (``cellresult``), the HDF5 result layout (``layout``),
the memory and HDF5 stores (``stores``), the reader (``results``), data
views (``export``) and text tables (``tables``).

It imports every wing below it (engine, stats, risk, sweep) and the root
modules; the driver, the figures, the report and the CLI sit above it.
"""

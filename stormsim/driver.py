"""Sweeps: run a sweep file's cells into a store, resuming whatever is done (the driver).

Data flows one way::

    sweep file --spec.parse_sweep--> Sweep (cells: Fleet + simulate kwargs + seed)
               --work.Planner------> units: pieces (cell, fleets [a, b)); small cells packed
               --executors---------> work.run_unit -> stormsim.simulate(..., fleet_start=a)
               --store-------------> parts on disk -> one HDF5 file, assembled once

This module only drives: it asks the planner for units, hands them to an
executor, commits what comes back to the store, reports progress, and stops
on request. The pieces live one floor down: stormsim.sweep.spec (the sweep file,
cells and seeds), stormsim.sweep.work (units, parts, exact sums), stormsim.sweep.executors
(where units run), stormsim.store (where results go).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ._args import check_flag, check_progress_mode, is_path
from ._version import __version__
from .errors import SpecError, SweepError
from .store.stores import HDF5Store, Store
from .sweep.executors import executor_from
from .sweep.planner import Planner, WorkEstimate
from .sweep.progress import MODES as PROGRESS_MODES
from .sweep.progress import Progress
from .sweep.spec import Sweep, load_sweep
from .sweep.work import run_unit

__all__ = ["SweepOutcome", "run_sweep"]

#: After a stop request, how long to wait for units already running, to keep
#: them (units last ~0.25 s locally, ~1 s on Dask): the process still exits
#: within a second of Ctrl-C or SIGTERM.
STOP_GRACE_SECONDS = 0.4


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

@dataclass
class SweepOutcome:
    """What ``run_sweep`` did.

    Attributes
    ----------
    status : str
        "complete" (finished now), "already complete" (nothing to do) or
        "interrupted" (stopped on request; finished units are kept).
    output : str
        Where the result is (the store's location).
    n_cells, cells_done : int
        The sweep's cells, and those finished (now or before).
    fleets_total, fleets_done : int
        The sweep's fleets, and those finished (now or before).
    fleets_before : int
        Fleets already finished when this call started (a resume).
    fleets_run, fleet_cycles : int
        Fleets run by this call, and their checkpoint cycles.
    seconds : float
        Wall time of this call: its units and the final assembly (0 when
        the result was already complete).
    version : str
        The stormsim version that wrote the result.
    executor : str
        Where the units ran ("" when none ran).
    """

    status: str
    output: str
    n_cells: int
    cells_done: int
    fleets_total: int
    fleets_done: int
    fleets_before: int = 0
    fleets_run: int = 0
    fleet_cycles: int = 0
    seconds: float = 0.0
    version: str = ""
    executor: str = ""


def _refuse_input_as_output(sweep: Sweep, output) -> None:
    """The sweep file is never an output (``-o X.toml --overwrite`` would replace it)."""
    src, out = Path(sweep.source), Path(output)
    try:
        same = src.exists() and out.exists() and os.path.samefile(src, out)
    except OSError:
        same = False
    if same or (src.exists() and src.resolve() == out.resolve()):
        raise SweepError(f"output {output} is the sweep file {sweep.source} itself: give "
                         "another output, e.g. -o " + src.with_suffix(".h5").name)


def run_sweep(sweep, output, *, executor=None, overwrite: bool = False,
              progress: str | bool | None = "auto", stop: threading.Event | None = None,
              stream=None) -> SweepOutcome:
    """Run a sweep into an output, resuming whatever is already done.

    Parameters
    ----------
    sweep : Sweep, or the path of a sweep file
    output : path of the HDF5 result, or a store (``MemoryStore``, ``HDF5Store``)
    executor : None (local, this process), ``LocalExecutor``, ``DaskExecutor``,
        a ``dask.distributed.Client``, ``"local:W"`` (a LocalCluster of W
        workers) or a scheduler address
    overwrite : discard an existing output (a finished result or finished
        units) instead of refusing a different sweep or resuming this one
    progress : "auto" (a bar on a terminal, else lines), "bar", "lines" or "none";
        True is "auto" and False or None "none" (as for ``simulate``)
    stop : set it (e.g. from a signal handler) to stop at the next unit
        boundary; finished units are kept and the outcome is "interrupted"
    stream : where progress goes (default sys.stderr)

    Notes
    -----
    The sweep file is validated, and an output from another sweep refused,
    before any output is created or touched.
    """
    progress = check_progress_mode("progress", progress, PROGRESS_MODES)
    overwrite = check_flag("overwrite", overwrite)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise SpecError(f"stop = {stop!r}: must be a threading.Event (or None)")
    if stream is not None and not callable(getattr(stream, "write", None)):
        raise SpecError(f"stream = {stream!r}: must be a text stream with write() (or None: "
                        "stderr)")
    if not (isinstance(output, Store) or is_path(output)):
        raise SpecError(f"output = {output!r}: must be the path of the HDF5 result (a str or "
                        "Path) or a store (MemoryStore, HDF5Store)")
    if not isinstance(sweep, (Sweep, str, os.PathLike)):
        raise SpecError(f"sweep = {sweep!r}: must be a Sweep (load_sweep, parse_sweep) or the "
                        "path of a sweep file")
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    ex = executor_from(executor)       # validates the spec; connects nothing yet
    if not isinstance(output, Store):
        _refuse_input_as_output(sweep, output)
    store = output if isinstance(output, Store) else HDF5Store(output)
    state = store.open(sweep, overwrite=overwrite)
    try:
        done = state.done                 # grows as units are kept
        fleets_before = done.total()
        if state.complete:
            return SweepOutcome("already complete", store.location, sweep.n_cells,
                                sweep.n_cells, sweep.total_fleets, sweep.total_fleets,
                                fleets_before=sweep.total_fleets, version=state.version)
        out = SweepOutcome("complete", store.location, sweep.n_cells,
                           sum(done.count(c.index) == c.fleets
                               and (not c.has_risk or c.index in state.risk_done)
                               for c in sweep.cells),
                           sweep.total_fleets, fleets_before, fleets_before=fleets_before,
                           version=__version__)
        t0 = time.perf_counter()
        prog = Progress(progress, total_cells=sweep.n_cells, total_fleets=sweep.total_fleets,
                        cells_done=out.cells_done, fleets_done=fleets_before, stream=stream,
                        total_risk=sum(c.has_risk for c in sweep.cells),
                        risk_done=len(state.risk_done))

        work = WorkEstimate(sweep, done)

        risk_done = set(state.risk_done)

        def cell_done(i: int) -> bool:
            c = sweep.cells[i]
            return done.count(i) == c.fleets and (not c.has_risk or i in risk_done)

        def keep(parts):
            store.commit(parts)
            if parts and parts[0].kind == "risk":
                risk_done.add(parts[0].cell)
                out.cells_done += cell_done(parts[0].cell)
                prog.update(0, 0, out.cells_done, events=parts[0].events,
                            events_left=work.events_left, risk=True)
                return
            for part in parts:
                n = part.stop - part.start
                done.add(part.cell, part.start, part.stop)
                work.add(part)
                out.fleets_done += n
                out.fleets_run += n
                out.fleet_cycles += part.fleet_cycles
                if done.count(part.cell) == sweep.cells[part.cell].fleets \
                        and cell_done(part.cell):
                    out.cells_done += 1
                prog.update(n, part.fleet_cycles, out.cells_done,
                            events=int(part.arrays["events"].sum()),
                            events_left=work.events_left)

        planner = Planner(sweep, done, target_seconds=ex.target_seconds,
                          threads=ex.task_threads, risk_done=state.risk_done)

        try:
            if planner.remaining:             # else only the assembly is left to do
                ex.start()
                out.executor = ex.describe()
                prog.describe(out.executor)
            in_flight = 0
            while True:
                while in_flight < ex.slots and not (stop is not None and stop.is_set()):
                    task = planner.next()
                    if task is None:
                        break
                    ex.submit(run_unit, task)
                    in_flight += 1
                if in_flight == 0:
                    break
                for parts in ex.poll(timeout=0.1):
                    in_flight -= 1
                    keep(parts)
                    planner.feedback(parts)
                if stop is not None and stop.is_set():
                    # keep the units that finish within a short grace; drop the rest
                    deadline = time.monotonic() + STOP_GRACE_SECONDS
                    while in_flight and time.monotonic() < deadline:
                        for parts in ex.poll(timeout=min(0.05, deadline - time.monotonic())):
                            in_flight -= 1
                            keep(parts)
                    break
            if in_flight or planner.remaining:
                out.status = "interrupted"
        finally:
            ex.cancel()
            prog.close()
        if out.status == "complete":
            store.finish()
        out.seconds = time.perf_counter() - t0
        return out
    finally:
        try:
            ex.close()
        finally:
            store.close()

"""Sweeps: run a sweep file's cells into a store, resuming whatever is done (the driver).

Data flows one way::

    sweep file --spec.parse_sweep--> Sweep (cells: Fleet + simulate kwargs + seed)
               --planner.Planner---> units: pieces (cell, fleets [a, b)); small cells packed
               --executors---------> work.run_unit -> stormsim.simulate(..., fleet_start=a)
               --store-------------> parts on disk -> one HDF5 file, assembled once

This module only drives: it asks the planner for units, hands them to an
executor, commits what comes back to the store, reports progress, and stops
on request. The pieces live one floor down: stormsim.sweep.spec (the sweep file,
cells and seeds), stormsim.sweep.planner (what is left, cut into units),
stormsim.sweep.work (units, parts), stormsim.sweep.executors (where units run),
stormsim.store (where results go, and the record of what is done).
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

    Returns
    -------
    SweepOutcome
        ``status`` "complete" (every fleet and storm risk is in; the output is
        written now), "already complete" (the output was finished before:
        nothing run) or "interrupted" (stopped by ``stop``: the finished units
        are kept and the same call resumes); the cells and fleets done, and
        what this call ran.

    Raises
    ------
    SpecError
        An argument is not one of the kinds above (named, with its rule).
    SweepError
        The sweep file is invalid, or the output is refused: the results or
        units of another sweep (without ``overwrite``), the sweep file itself,
        a directory.
    ResourceError
        The environment refused: another process runs into the same output,
        the disk is full or read-only, a Dask scheduler cannot be reached.
        What is finished is kept; the same call resumes.
    AssemblyError
        Writing the finished output failed for a reason that is neither the
        disk's nor a bad unit's (a bug); the units are kept.

    Notes
    -----
    The sweep file is validated, and an output from another sweep refused,
    before any output is created or touched.
    """
    progress = check_progress_mode("progress", progress, PROGRESS_MODES)
    overwrite = check_flag("overwrite", overwrite)
    _check_arguments(sweep, output, stop, stream)
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    ex = executor_from(executor)       # validates the spec; connects nothing yet
    if not isinstance(output, Store):
        _refuse_input_as_output(sweep, output)
    store = output if isinstance(output, Store) else HDF5Store(output)
    state = store.open(sweep, overwrite=overwrite)
    try:
        if state.complete:
            return SweepOutcome("already complete", store.location, sweep.n_cells,
                                sweep.n_cells, sweep.total_fleets, sweep.total_fleets,
                                fleets_before=sweep.total_fleets, version=state.version)
        return _SweepRun(sweep, store, state, ex, progress, stream).run(stop)
    finally:
        try:
            ex.close()
        finally:
            store.close()


def _check_arguments(sweep, output, stop, stream) -> None:
    """SpecError unless run_sweep's sweep, output, stop and stream are of their kinds."""
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


class _SweepRun:
    """One run of an unfinished sweep: units from the planner to the executor,
    what comes back to the store. What is done is the store's record alone
    (``state.done``, ``state.risk_done``, which grow as units are committed);
    the cells done, the work left and the progress are read from it."""

    def __init__(self, sweep: Sweep, store: Store, state, ex, progress: str, stream):
        self.sweep, self.store, self.ex = sweep, store, ex
        self.done, self.risk_done = state.done, state.risk_done
        fleets_before = self.done.total()
        self.cells_done = sum(self._cell_done(c.index) for c in sweep.cells)
        self.out = SweepOutcome("complete", store.location, sweep.n_cells, self.cells_done,
                                sweep.total_fleets, fleets_before, fleets_before=fleets_before,
                                version=__version__)
        self.prog = Progress(progress, total_cells=sweep.n_cells,
                             total_fleets=sweep.total_fleets, cells_done=self.cells_done,
                             fleets_done=fleets_before, stream=stream,
                             total_risk=sum(c.has_risk for c in sweep.cells),
                             risk_done=len(self.risk_done))
        self.work = WorkEstimate(sweep, self.done)
        self.planner = Planner(sweep, self.done, target_seconds=ex.target_seconds,
                               threads=ex.task_threads, risk_done=frozenset(self.risk_done))

    def _cell_done(self, i: int) -> bool:
        c = self.sweep.cells[i]
        return self.done.count(i) == c.fleets and (not c.has_risk or i in self.risk_done)

    def run(self, stop) -> SweepOutcome:
        """Run what is left (until ``stop`` is set), then assemble the output."""
        t0 = time.perf_counter()
        try:
            if self.planner.remaining:         # else only the assembly is left to do
                self.ex.start()
                self.out.executor = self.ex.describe()
                self.prog.describe(self.out.executor)
                self._run_units(stop)
            if self.ex.in_flight or self.planner.remaining:
                self.out.status = "interrupted"
        finally:
            self.ex.cancel()
            self.prog.close()
        if self.out.status == "complete":
            self.store.finish()
        self.out.fleets_done = self.done.total()
        self.out.fleets_run = self.out.fleets_done - self.out.fleets_before
        self.out.cells_done = self.cells_done
        self.out.seconds = time.perf_counter() - t0
        return self.out

    def _run_units(self, stop) -> None:
        """Keep the executor's slots full and keep what comes back, until nothing is
        left or ``stop`` is set (then keep what finishes within STOP_GRACE_SECONDS)."""
        stopped = (lambda: False) if stop is None else stop.is_set
        while True:
            while self.ex.in_flight < self.ex.slots and not stopped():
                task = self.planner.next()
                if task is None:
                    break
                self.ex.submit(run_unit, task)
            if self.ex.in_flight == 0:
                return
            for parts in self.ex.poll(timeout=0.1):
                self._keep(parts)
                self.planner.feedback(parts)
            if stopped():
                deadline = time.monotonic() + STOP_GRACE_SECONDS
                while self.ex.in_flight and time.monotonic() < deadline:
                    for parts in self.ex.poll(timeout=min(0.05, deadline - time.monotonic())):
                        self._keep(parts)
                return

    def _keep(self, parts) -> None:
        """Commit a finished unit to the store; count it in the work left and the progress."""
        self.store.commit(parts)
        if parts and parts[0].kind == "risk":
            self.cells_done += self._cell_done(parts[0].cell)
            self._report(events=parts[0].events)
            return
        for part in parts:
            self.work.add(part)
            self.out.fleet_cycles += part.fleet_cycles
            if self.done.count(part.cell) == self.sweep.cells[part.cell].fleets:
                self.cells_done += self._cell_done(part.cell)
            self._report(events=int(part.arrays["events"].sum()))

    def _report(self, events: int) -> None:
        self.prog.update(fleets_done=self.done.total(), cells_done=self.cells_done,
                         risk_done=len(self.risk_done), fleet_cycles=self.out.fleet_cycles,
                         events=events, events_left=self.work.events_left)

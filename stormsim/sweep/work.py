"""Units of work: which fleets of which cells to run next, how to run them, what comes back.

    Sweep --Planner (sweep.planner)--> Unit (pieces: fleets [a, b) of a cell; small cells packed)
          --run_unit--> [Part, ...] (the result arrays of each piece)
    Sweep --Planner--> RiskUnit (a cell's storm risk, risk_levels; one per cell)
          --run_unit--> [RiskPart] (stormsim.sweep.cellrisk)

Unit boundaries never change a result: fleet j of a cell depends only on
(the cell's run seed, j), and sums over fleets are exact integers
(:func:`stormsim.stats.exact_sums.exact_column_sums`), so any cut adds up to
the same bits.

The result arrays of a fleet are listed once, in :data:`RESULT_ARRAYS`; unit
files, the HDF5 result and the reader all follow that table.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..engine.cost import HIST_BINS
from ..engine.model import Fleet
from ..engine.run import simulate
from ..stats.exact_sums import exact_column_sums
from ..stats.tails import block_sums_exact
from .cellrisk import RiskUnit, run_risk
from .executors import layer_guard
from .spec import Sweep

__all__ = ["FAILURE_ARRAYS", "POWER_ARRAYS", "RESULT_ARRAYS", "FleetRanges", "Part", "Piece",
           "ResultArray", "Unit", "make_piece", "make_unit", "run_unit"]


# ---------------------------------------------------------------------------
# The result arrays
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ResultArray:
    """One array that simulate() returns per fleet and a sweep keeps.

    per_level : False: shape (fleets,); True: shape (fleets, N + 1), n = 0..N
    bins : the name of a fixed histogram dimension ("duration_bin" or
        "wait_bin", HIST_BINS + 2 wide, MODEL.md E7): shape (fleets, HIST_BINS + 2)
    summed : its exact column sum over the cell's fleets is kept as
        ``NAME_sum`` (its row's shape); the per-fleet array only when the sweep's
        ``occupancy = "fleet"`` (in ``"sum"`` mode it is None, and its sums
        per block of fleets are kept instead)
    failures : kept only for a cell whose fleet has failures (MODEL.md E8,
        ``Fleet.has_failures``; None, and no dataset, for the others): the
        Run's per-job array summed over the fleet's jobs, one float per fleet
        (``window``: ``Run.window``, kept for cells with power too)
    power : kept only for a cell whose fleet has power (MODEL.md E6,
        ``Fleet.has_power``; None, and no dataset, for the others): the Run's
        array of that name as it is
    ramps : shape (fleets, len ramp_windows, len ramp_thresholds) (the cell's
        ``Cell.ramp_shape``; dimensions ``ramp_window``, ``ramp_threshold``)
    """

    name: str
    dtype: type
    units: str
    doc: str
    per_level: bool = False
    summed: bool = False
    bins: str = ""
    failures: bool = False
    power: bool = False
    ramps: bool = False

    def kept(self, fleet) -> bool:
        """Whether a cell of this fleet keeps the array (``failures``: only with
        failures, ``power``: only with power; ``window``: with either)."""
        if self.name == "window":
            return fleet.has_failures or fleet.has_power
        if self.power:
            return fleet.has_power
        return not self.failures or fleet.has_failures

    def of_run(self, run):
        """The fleets' row of this array from a simulate() Run (None: not kept)."""
        if self.power:
            value = getattr(run, self.name, None)
            return None if value is None else np.asarray(value, dtype=self.dtype)
        if self.name == "window":
            if run.committed_work is None and getattr(run, "power_mean", None) is None:
                return None
            return np.asarray(run.window, dtype=np.float64)
        if self.failures:
            if run.committed_work is None:
                return None
            value = np.asarray(getattr(run, self.name), dtype=np.float64)
            return value.sum(axis=1) if value.ndim == 2 else value
        return getattr(run, self.name)

    def width(self, n_jobs: int, ramps: tuple = (0, 0)) -> tuple:
        """Shape of one fleet's row (``ramps``: the cell's (len D, len X), for the
        ramp arrays)."""
        if self.ramps:
            return tuple(ramps)
        if self.bins:
            return (HIST_BINS + 2,)
        return (n_jobs + 1,) if self.per_level else ()

    def columns(self, n_jobs: int) -> int:
        """Values in one fleet's row (its exact sums' length)."""
        return int(np.prod(self.width(n_jobs), dtype=np.int64))

    def dims(self) -> tuple:
        """Names of a row's dimensions (after ``fleet``)."""
        if self.ramps:
            return ("ramp_window", "ramp_threshold")
        return (self.bins,) if self.bins else ("n_w",) if self.per_level else ()


#: Every per-fleet result array, in order. Add a new one here (and to Run):
#: the unit files, the HDF5 writer, the reader and CellResult follow.
RESULT_ARRAYS: tuple[ResultArray, ...] = (
    ResultArray("passage_time", np.float64, "s",
                "time of the first passage to n_w >= passage_level (inf: none by the end)"),
    ResultArray("passage_cycle", np.int64, "cycles",
                "completed cycles of the fleet at its first passage (-1: none)"),
    ResultArray("end_time", np.float64, "s", "time at which the fleet's run ended"),
    ResultArray("events", np.int64, "1", "events the kernel processed for the fleet"),
    ResultArray("occupancy", np.float64, "s",
                "time with exactly n jobs writing, n = 0..N, after the burn-in",
                per_level=True, summed=True),
    ResultArray("upcrossings", np.int64, "1",
                "storms: up-crossings of n_w to k or more, k = 0..N, in the measured window "
                "(MODEL.md E3)", per_level=True, summed=True),
    # MODEL.md E7, per checkpoint that ended in the measured window. Count, sum
    # and histogram are summed (so that "sum" mode keeps them per block of
    # fleets: the units of the intervals of stormsim.stats.durations); the
    # maximum is no sum and is kept per fleet (one float, like end_time).
    # The waits' count is the durations' (every checkpoint has a wait).
    ResultArray("durations_count", np.int64, "1",
                "checkpoints that ended in the measured window (MODEL.md E7)", summed=True),
    ResultArray("durations_sum", np.float64, "s",
                "sum of their write durations, firing to write end", summed=True),
    ResultArray("durations_max", np.float64, "s",
                "their longest write duration (0: none)"),
    ResultArray("durations_hist", np.int64, "1",
                "their write durations / d_i on fixed log bins (duration_edge): bin 0 below "
                "the first edge, the last at or above the last edge", summed=True,
                bins="duration_bin"),
    ResultArray("wait_sum", np.float64, "s",
                "sum of their waits, due to firing (MODEL.md E1 WAIT, E5 QUEUE)", summed=True),
    ResultArray("wait_max", np.float64, "s", "their longest wait (0: none)"),
    ResultArray("wait_hist", np.int64, "1",
                "their waits / T_i on fixed log bins (wait_edge): bin 0 below the first "
                "edge (a wait of 0 among them), the last at or above the last edge",
                summed=True, bins="wait_bin"),
    # MODEL.md E8, for cells whose fleet has failures only: per fleet, the sums
    # over its jobs that goodput and its parts need (stormsim.stats.goodput:
    # each a ratio over fleets with the window; cap is the rest)
    ResultArray("window", np.float64, "s",
                "length of the measured window (MODEL.md E8; cells with failures)",
                failures=True),
    ResultArray("committed_work", np.float64, "s",
                "compute done in the window that a completed checkpoint made durable, summed "
                "over the fleet's jobs (MODEL.md E8)", failures=True),
    ResultArray("checkpoint_time", np.float64, "s",
                "time the fleet's jobs spent checkpointing in the window (blocking writes, "
                "abandoned ones included, snapshots, waits, queues, an async job's slowdown "
                "share), goodput's writing part, summed over its jobs (MODEL.md E8)",
                failures=True),
    ResultArray("lost_work", np.float64, "s",
                "compute done in the window and lost to a failure, summed over the fleet's "
                "jobs (MODEL.md E8)", failures=True),
    ResultArray("down_time", np.float64, "s",
                "time the fleet's jobs spent DOWN (restarting) in the window, summed over its "
                "jobs (MODEL.md E8)", failures=True),
    ResultArray("uncommitted_work", np.float64, "s",
                "compute done in the window, not yet durable at its end, summed over the "
                "fleet's jobs (MODEL.md E8)", failures=True),
    ResultArray("failures", np.float64, "1",
                "failures of the fleet's jobs in the window, outages included (one per job "
                "failed), summed over its jobs (MODEL.md E8)", failures=True),
    ResultArray("abandoned_writes", np.float64, "1",
                "writes a failure stopped before they ended, summed over the fleet's jobs "
                "(MODEL.md E8)", failures=True),
    ResultArray("outages", np.float64, "1",
                "outages (every job failing at once) in the window (MODEL.md E8)",
                failures=True),
    # MODEL.md E6, for cells whose fleet has power only: the Run's power fields
    # (per fleet, over the measured window) and its ramps on the cell's windows
    # D and thresholds X (stormsim.stats.power.ramp_estimate: ratios over fleets
    # with the window)
    ResultArray("power_mean", np.float64, "W",
                "the fleet's power P(t), time-weighted mean over the measured window "
                "(MODEL.md E6)", power=True),
    ResultArray("power_min", np.float64, "W",
                "the fleet's lowest power over the measured window (MODEL.md E6)", power=True),
    ResultArray("power_max", np.float64, "W",
                "the fleet's highest power over the measured window (MODEL.md E6)", power=True),
    ResultArray("power_p01", np.float64, "W",
                "the fleet's power's time-weighted 1st percentile over the measured window "
                "(MODEL.md E6; to one of 4096 bins over [sum idle, sum busy], exact where the "
                "bin holds one level)", power=True),
    ResultArray("power_p99", np.float64, "W",
                "the fleet's power's time-weighted 99th percentile over the measured window "
                "(MODEL.md E6; as power_p01)", power=True),
    ResultArray("ramp_share", np.float64, "1",
                "share of the measured window with R_D(t) >= X, R_D(t) the highest power of "
                "[t - D, t] less P(t), per window D and threshold X (MODEL.md E6)",
                power=True, ramps=True),
    ResultArray("ramp_events", np.int64, "1",
                "ramp events: up-crossings of R_D through X in the measured window, per "
                "window D and threshold X (MODEL.md E6)", power=True, ramps=True),
)
#: The RESULT_ARRAYS of cells with failures only (MODEL.md E8; ``window`` also
#: with power).
FAILURE_ARRAYS: tuple[str, ...] = tuple(a.name for a in RESULT_ARRAYS if a.failures)
#: The RESULT_ARRAYS of cells with power only (MODEL.md E6), besides ``window``.
POWER_ARRAYS: tuple[str, ...] = tuple(a.name for a in RESULT_ARRAYS if a.power)
RESULT_ARRAY: dict[str, ResultArray] = {a.name: a for a in RESULT_ARRAYS}


# ---------------------------------------------------------------------------
# Fleet ranges
# ---------------------------------------------------------------------------

class FleetRanges:
    """Which fleets [a, b) of each cell are done: the one bookkeeping of ranges
    (a store keeps it; a sweep run reads its counts, each O(1))."""

    def __init__(self, ranges: dict | None = None):
        self._r: dict[int, list] = {}
        self._count: dict[int, int] = {}      # cell -> fleets done
        self._total = 0
        for cell, rs in (ranges or {}).items():
            for a, b in rs:
                self.add(cell, a, b)

    @classmethod
    def full(cls, sweep: Sweep) -> "FleetRanges":
        return cls({c.index: [(0, c.fleets)] for c in sweep.cells})

    def overlaps(self, cell: int, a: int, b: int) -> bool:
        return any(a < y and x < b for x, y in self._r.get(cell, []))

    def add(self, cell: int, a: int, b: int) -> None:
        """Record fleets [a, b) of a cell; RuntimeError if any is already there."""
        if self.overlaps(cell, a, b):
            raise RuntimeError(f"cell {cell}: fleets {a}..{b} committed twice")
        self._r.setdefault(cell, []).append((a, b))
        self._count[cell] = self._count.get(cell, 0) + (b - a)
        self._total += b - a

    def count(self, cell: int) -> int:
        """Fleets of a cell done."""
        return self._count.get(cell, 0)

    def total(self) -> int:
        """Fleets done in all."""
        return self._total

    def gaps(self, cell: int, fleets: int) -> list:
        """The ranges of fleets 0..fleets-1 of a cell not yet done, in order."""
        out, pos = [], 0
        for a, b in sorted(self._r.get(cell, [])):
            if a > pos:
                out.append((pos, a))
            pos = max(pos, b)
        if pos < fleets:
            out.append((pos, fleets))
        return out

    def check_tiling(self, sweep: Sweep) -> None:
        """RuntimeError unless every cell's fleets are there exactly once (at assembly)."""
        for c in sweep.cells:
            pos = 0
            for a, b in sorted(self._r.get(c.index, [])):
                if a != pos:
                    raise RuntimeError(f"cell {c.index}: fleets {pos}..{a} missing or "
                                       "overlapping at assembly (a bug: please report it)")
                pos = b
            if pos != c.fleets:
                raise RuntimeError(f"cell {c.index}: only {pos} of {c.fleets} fleets at "
                                   "assembly")

    def as_dict(self) -> dict:
        """cell -> sorted list of (start, stop), cells with fleets only."""
        return {c: sorted(r) for c, r in self._r.items() if r}

    def __repr__(self) -> str:
        return f"FleetRanges({self.as_dict()!r})"


# ---------------------------------------------------------------------------
# Pieces, units, parts
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Piece:
    """Fleets [start, stop) of one cell, with everything needed to run them
    (plain, picklable data: a Fleet and the simulate keyword arguments)."""

    cell: int
    start: int
    stop: int
    fleet: Fleet
    kwargs: dict = field(hash=False)
    cell_fleets: int = 0     # the cell's fleets: they fix its blocks (stormsim.stats.tails)

    @property
    def run_seed(self) -> int:
        return self.kwargs["seed"]


@dataclass(frozen=True)
class Unit:
    """A unit of work: one or more pieces (a big cell is cut into several
    units; small cells are packed several to a unit)."""

    kind: ClassVar[str] = "fleets"  # a cell's storm risk is the other kind (cellrisk.RiskUnit)
    sweep_hash: str
    pieces: tuple
    keep_per_fleet: bool        # the sweep's occupancy = "fleet"
    threads: int | None = None

    @property
    def fleets(self) -> int:
        return sum(p.stop - p.start for p in self.pieces)

    @property
    def key(self) -> str:
        p = self.pieces[0]
        return f"stormsim-unit-{self.sweep_hash[:12]}-c{p.cell}-{p.start}"


def make_piece(sweep: Sweep, cell: int, start: int, stop: int) -> Piece:
    c = sweep.cells[cell]
    return Piece(cell=cell, start=start, stop=stop, fleet=c.fleet, kwargs=c.simulate_kwargs(),
                 cell_fleets=c.fleets)


def make_unit(sweep: Sweep, cell: int, start: int, stop: int, threads=None) -> Unit:
    """A unit of a single piece: fleets [start, stop) of one cell."""
    return Unit(sweep_hash=sweep.hash, pieces=(make_piece(sweep, cell, start, stop),),
                keep_per_fleet=sweep.occupancy == "fleet", threads=threads)


@dataclass(eq=False)
class Part:
    """Fleets [start, stop) of one cell, as ``run_unit`` returns them (kind "fleets";
    a cell's storm risk comes back as a ``cellrisk.RiskPart``, kind "risk").

    ``arrays``: name -> array, one row per fleet in fleet order, for each of
    :data:`RESULT_ARRAYS` (a summed one is None when the sweep keeps only its
    sum); ``sums``: summed name -> its exact column sums over these fleets
    (stormsim.stats.exact_sums); ``blocks``: when only the sums are kept, summed
    name -> ((block, exact sums), ...) of these fleets per fixed block of the
    cell's fleets (stormsim.stats.tails.block_sums_exact: the independent units of
    the tail intervals). ``part.NAME`` reads ``part.arrays[NAME]``.
    """

    kind: ClassVar[str] = "fleets"
    cell: int
    start: int
    stop: int
    sweep_hash: str
    run_seed: int
    arrays: dict
    sums: dict
    seconds: float = 0.0
    fleet_cycles: int = 0
    blocks: dict = field(default_factory=dict)

    def __getattr__(self, name):
        arrays = self.__dict__.get("arrays")
        if arrays is not None and name in arrays:
            return arrays[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def n(self) -> int:
        return self.stop - self.start

    @classmethod
    def from_run(cls, piece: Piece, run, *, sweep_hash: str, keep_per_fleet: bool,
                 seconds: float = 0.0) -> "Part":
        """The part of a piece from its simulate() Run."""
        arrays, sums, blocks = {}, {}, {}
        for a in RESULT_ARRAYS:
            value = a.of_run(run)
            if a.summed:
                sums[a.name] = tuple(exact_column_sums(value))
                if not keep_per_fleet:
                    blocks[a.name] = block_sums_exact(value, piece.start, piece.cell_fleets)
                value = value if keep_per_fleet else None
            arrays[a.name] = value
        kw = piece.kwargs
        n = piece.stop - piece.start
        if kw["passage_level"] is not None and kw["stop_at_passage"]:
            fc = int(np.where(run.passage_cycle >= 0, run.passage_cycle, kw["cycles"]).sum())
        else:
            fc = n * kw["cycles"]
        return cls(cell=piece.cell, start=piece.start, stop=piece.stop, sweep_hash=sweep_hash,
                   run_seed=piece.run_seed, arrays=arrays, sums=sums, seconds=seconds,
                   fleet_cycles=fc, blocks=blocks)


def _simulate_threadsafe(fleet, **kw):
    """simulate(), serialized if numba's layer is not thread-safe (a threaded
    Dask worker, or the local thread pool, could run two at once)."""

    with layer_guard():
        return simulate(fleet, **kw)


def run_unit(unit: Unit | RiskUnit) -> list:
    """Run one unit: a pure function of the unit (seeds, fleet ranges, parameters).

    Returns one :class:`Part` per piece, in order; for a :class:`RiskUnit`,
    ``[RiskPart]``.
    """
    if unit.kind == "risk":
        return [run_risk(unit)]
    out = []
    for p in unit.pieces:
        t0 = time.perf_counter()
        n = p.stop - p.start
        run = _simulate_threadsafe(p.fleet, fleets=n, fleet_start=p.start, batch_size=n,
                                   threads=unit.threads, **p.kwargs)
        out.append(Part.from_run(p, run, sweep_hash=unit.sweep_hash,
                                 keep_per_fleet=unit.keep_per_fleet,
                                 seconds=time.perf_counter() - t0))
    return out

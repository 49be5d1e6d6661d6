"""What a sweep still has to run, and how it is cut into units of work.

:class:`WorkEstimate` counts the events left from those measured;
:class:`Planner` cuts the fleets not yet done into units (``sweep.work``) of
about a target duration. Neither changes a result: unit boundaries never do.
"""
from __future__ import annotations

import numpy as np

from ..engine.cost import run_events
from .cellrisk import RiskUnit, make_risk_unit
from .spec import Sweep
from .work import RESULT_ARRAYS, FleetRanges, Unit, make_piece

__all__ = ["Planner", "WorkEstimate", "fleet_events_bound"]


# ---------------------------------------------------------------------------
# How much work is left
# ---------------------------------------------------------------------------

def fleet_events_bound(cell) -> int:
    """Events of one fleet that runs all its cycles (an upper bound when it
    stops at its passage, where ``cycles`` is a cap)."""
    return int(run_events(cell.n_jobs, 1, cell.cycles))


def _stops_early(cell) -> bool:
    return cell.passage_level is not None and cell.stop_at_passage


class WorkEstimate:
    """The events a sweep still has to run, estimated from those measured.

    A cell's fleets cost its measured events per fleet once some are done;
    before that, :func:`fleet_events_bound` times the ratio measured / bound
    seen so far in cells of its kind (stopping at their passage or not;
    1 before any is measured). So costs are counted in events, whatever the
    cells' sizes, and a cell that stops early is not charged its cycle cap
    once its kind is measured.

    The fleets left are read from ``done`` (the store's record of the fleets
    done, which grows as units are committed); ``add`` counts a part's events
    once its fleets are in ``done``. ``events_left`` is O(1) (the progress
    line asks at every unit): the unmeasured cells' bounds are kept summed
    per kind, the measured cells' events left summed, each updated as a part
    comes in.
    """

    def __init__(self, sweep: Sweep, done: FleetRanges):
        self.cells = sweep.cells
        self.done = done
        self.measured = [[0, 0] for _ in sweep.cells]         # cell -> [events, fleets]
        self.kind = {False: [0, 0], True: [0, 0]}              # stops early -> [events, bound]
        self.unmeasured = {False: 0, True: 0}                  # kind -> sum left x bound
        for c in sweep.cells:
            self.unmeasured[_stops_early(c)] += self.left(c.index) * fleet_events_bound(c)
        self.measured_left = 0.0                               # measured cells' events left
        self.share = [0.0] * len(sweep.cells)                  # cell -> its term of that sum

    def left(self, i: int) -> int:
        """Fleets of cell i not done."""
        return self.cells[i].fleets - self.done.count(i)

    def add(self, part) -> None:
        """Count a finished part, whose fleets are in ``done`` (no longer left)."""
        i, c = part.cell, self.cells[part.cell]
        events = int(np.sum(part.arrays["events"]))
        left = self.left(i)
        if not self.measured[i][1]:            # its first part: from the bounds to the measured
            self.unmeasured[_stops_early(c)] -= (left + part.n) * fleet_events_bound(c)
        self.measured[i][0] += events
        self.measured[i][1] += part.n
        k = self.kind[_stops_early(c)]
        k[0] += events
        k[1] += part.n * fleet_events_bound(c)
        share = left * self.measured[i][0] / self.measured[i][1]
        self.measured_left += share - self.share[i]
        self.share[i] = share

    def events_left(self) -> float:
        """The events left: measured cells at their events per fleet, the others
        at their bound times their kind's measured ratio, in O(1)."""
        out = max(self.measured_left, 0.0)     # float sums: never a negative remnant
        for stops, summed in self.unmeasured.items():
            seen, bound = self.kind[stops]
            out += summed * (seen / bound if bound else 1.0)
        return out


# ---------------------------------------------------------------------------
# The planner
# ---------------------------------------------------------------------------

class Planner:
    """Cuts the fleets not yet done into units of about ``target_seconds``.

    Unit boundaries never change a result (fleet j depends on (seed, j) only),
    so the planner sizes units from measured speed: a cell's fleets are first
    estimated pessimistically (``assumed_rate`` job-cycles per second against
    N x cycles per fleet, an upper bound of the work), then from that cell's
    measured seconds per fleet, growing at most ``growth`` times per unit. Small
    cells are packed several to a unit (at most ``max_pieces``). A unit never
    holds more than ``max_fleets`` fleets of a cell or about ``max_bytes`` of
    results: memory stays bounded by one unit, whatever the number of cells.
    """

    def __init__(self, sweep: Sweep, done: FleetRanges, target_seconds: float = 0.25,  # noqa: PLR0913 (tuning knobs, each with its default)
                 assumed_rate: float = 1e6, growth: float = 4.0, max_fleets: int = 4096,
                 max_bytes: int = 32 << 20, max_pieces: int = 64, threads: int | None = None,
                 risk_done=frozenset()):
        self.sweep = sweep
        self.target = float(target_seconds)
        self.assumed_rate = float(assumed_rate)
        self.growth = growth
        self.max_fleets = max_fleets
        self.max_bytes = max_bytes
        self.max_pieces = max_pieces
        self.threads = threads
        self.queue = []
        for c in sweep.cells:
            for a, b in done.gaps(c.index, c.fleets):
                self.queue.append([c.index, a, b])
        self.queue.reverse()                  # pop() from the end = cell order
        # each cell's storm risk (risk_levels), first: the longest tasks start early
        self.risk_queue = [c.index for c in reversed(sweep.cells)
                           if c.has_risk and c.index not in risk_done]
        self.per_fleet: dict[int, float] = {}  # cell -> measured seconds per fleet
        self.last: dict[int, int] = {}         # cell -> size of its last piece

    @property
    def remaining(self) -> int:
        """Fleets not yet handed out, plus storm-risk tasks (0: nothing left to run)."""
        return sum(b - a for _, a, b in self.queue) + len(self.risk_queue)

    def _seconds_per_fleet(self, cell: int) -> float:
        if cell in self.per_fleet:
            return max(self.per_fleet[cell], 1e-9)
        c = self.sweep.cells[cell]
        return c.n_jobs * c.cycles / self.assumed_rate

    def bytes_per_fleet(self, cell: int) -> int:
        """Bytes of one fleet's results (the per-fleet arrays), plus some overhead."""
        c = self.sweep.cells[cell]
        n = c.n_jobs
        return 64 + sum(np.dtype(a.dtype).itemsize * int(np.prod(a.width(n, c.ramp_shape)))
                        for a in RESULT_ARRAYS if a.kept(c.fleet))

    def next(self) -> Unit | RiskUnit | None:
        if self.risk_queue:
            return make_risk_unit(self.sweep, self.risk_queue.pop(), self.threads)
        pieces, budget, room = [], self.target, self.max_bytes
        while self.queue and len(pieces) < self.max_pieces:
            item = self.queue[-1]
            cell, a, b = item
            per = self._seconds_per_fleet(cell)
            n = budget / per
            if cell in self.per_fleet:
                n = min(n, self.growth * self.last.get(cell, 1))
            n = min(n, self.max_fleets, room // self.bytes_per_fleet(cell), b - a)
            if n < 1:
                if pieces:
                    break
                n = 1                         # a unit always makes progress
            n = int(n)
            pieces.append(make_piece(self.sweep, cell, a, a + n))
            self.last[cell] = n
            budget -= n * per
            room -= n * self.bytes_per_fleet(cell)
            if a + n < b:
                item[1] = a + n
                break                         # this cell fills the unit
            self.queue.pop()
        if not pieces:
            return None
        return Unit(sweep_hash=self.sweep.hash, pieces=tuple(pieces),
                    keep_per_fleet=self.sweep.occupancy == "fleet", threads=self.threads)

    def feedback(self, parts) -> None:
        for part in parts:
            if part.kind == "risk":
                continue
            rate = part.seconds / (part.stop - part.start)
            old = self.per_fleet.get(part.cell)
            self.per_fleet[part.cell] = rate if old is None else 0.5 * (old + rate)

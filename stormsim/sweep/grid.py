"""A sweep's grid before its cells are resolved: how many, what they cost, the limit.

Counting needs no cell: the grid is a product of lists, so its size and the
sums of fleets, fleet-cycles and events over its cells follow from the lists
alone. ``spec.read_sweep`` makes an Outline; ``spec.parse_sweep`` refuses one
beyond MAX_CELLS before resolving any cell.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

from .._args import check_path
from .._format import fmt_toml
from ..engine.cost import run_events, run_seconds
from ..errors import SweepError

__all__ = ["MAX_CELLS", "Outline", "read_text"]

#: The most cells a sweep file may have. Every cell is resolved and checked
#: before anything runs (~0.3 ms each: ~30 s at the limit), hashed into the
#: sweep's identity, and becomes a group of the result and a row of its
#: tables; a grid beyond this is a mistake or needs splitting into files.
MAX_CELLS = 100_000


@dataclass(frozen=True, eq=False)
class Outline:
    """A sweep file read and its keys checked, no cell resolved yet: what the
    grid holds and costs, known at once however large it is.

    ``grid`` and ``fixed`` hold checked values; ``grid_in`` and ``fixed_in``
    the values as given; ``defaults`` those of the keys given nowhere;
    ``table_n`` each job table's (``jobs``) number of jobs, read once per table.
    """

    grid: dict
    fixed: dict
    grid_in: dict
    fixed_in: dict
    name: str
    description: str
    occupancy: str
    text: str
    source: str
    defaults: dict
    table_n: dict = field(default_factory=dict)

    @property
    def n_cells(self) -> int:
        return math.prod(len(v) for v in self.grid.values())

    def cell_values(self, index: int) -> dict:
        """Every key's value (given or default) of cell ``index``, in grid
        order (the last key varies fastest), without visiting the others."""
        combo, rest = {}, index
        for key in reversed(list(self.grid)):
            rest, i = divmod(rest, len(self.grid[key]))
            combo[key] = self.grid[key][i]
        return {**self.defaults, **self.fixed, **{k: combo[k] for k in self.grid}}

    def where(self, values: dict) -> str:
        """' (load = 0.5, m_over_sigma = 16)': a cell's grid values, for messages."""
        shown = ", ".join(f"{k} = {fmt_toml(list(v) if isinstance(v, tuple) else v)}"
                          for k, v in ((k, values[k]) for k in self.grid))
        return f" ({shown})" if shown else ""

    def _values(self, key) -> list:
        return self.grid[key] if key in self.grid else [self.fixed.get(key, self.defaults.get(key))]

    def _sum(self, term) -> float:
        """Sum over the cells of term(N, fleets, cycles), by the grid's product
        structure (each factor varies on its own): no cell is visited. A job
        table gives N (``table_n``): then its key, ``jobs``, is the factor."""
        by = "jobs" if self.table_n and "N" not in self.grid and "N" not in self.fixed else "N"
        keys = (by, "fleets", "cycles")
        lists = [self._values(k) for k in keys]
        n_of = (lambda j: self.table_n.get(j, 0)) if by == "jobs" else (lambda n: n or 0)
        others = math.prod(len(v) for k, v in self.grid.items() if k not in keys)
        return float(others) * sum(term(n_of(n), f or 0, c or 0)
                                   for n, f, c in itertools.product(*lists))

    def stops_early(self) -> bool:
        """Some cell stops its fleets at their passage (``cycles`` is then a cap)."""
        return (any(bool(v) for v in self._values("passage_level"))
                and any(bool(v) for v in self._values("stop_at_passage")))

    @property
    def risk_cells(self) -> int:
        """Cells that ask for their storm risk (``risk_levels``)."""
        asks = sum(bool(v) for v in self._values("risk_levels"))
        return asks * (self.n_cells // len(self._values("risk_levels")))

    @property
    def total_fleets(self) -> int:
        return int(self._sum(lambda n, f, c: f))

    @property
    def fleet_cycles(self) -> float:
        return self._sum(lambda n, f, c: f * c)

    @property
    def events(self) -> float:
        """A bound of the phase changes to integrate: 2 per job per cycle, K
        cycles (a fleet stopping at its passage integrates fewer)."""
        return self._sum(run_events)

    @property
    def seconds(self) -> float:
        """Those events' time on one core at the benchmarked cost per event of
        each cell's N (``engine.cost.run_seconds``)."""
        return self._sum(run_seconds)

    def shape(self) -> str:
        """'load 1000 x T 1000 x jitter 3000'."""
        return " x ".join(f"{k} {len(v)}" for k, v in self.grid.items()) or "one cell"

    def check_size(self) -> None:
        """Refuse a grid of more than MAX_CELLS cells, naming its size and what to do."""
        n = self.n_cells
        if n > MAX_CELLS:
            big = max(self.grid, key=lambda k: len(self.grid[k]))
            raise SweepError(
                f"{self.source}: the grid has {n} cells ({self.shape()}), more than a sweep "
                f"file may have: at most {MAX_CELLS} cells (each is checked before anything "
                f"runs, and is a group of the result). Make the grid coarser, or split the "
                f"grid into several sweep files (e.g. one per value of {big}) written to "
                "separate outputs")


def read_text(path) -> tuple[str, str]:
    """(text, source) of a sweep file, or a SweepError saying why it cannot be read."""
    p = Path(check_path("path", path, "a sweep file", SweepError))
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except FileNotFoundError:
        raise SweepError(f"{p}: no such sweep file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{p}: cannot read the sweep file: {exc}") from None

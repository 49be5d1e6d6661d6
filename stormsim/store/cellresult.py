"""One cell's arrays (:class:`CellResult`), and the one way a cell is assembled
from its parts (:func:`cell_from_parts`): the HDF5 writer writes what it
builds, the reader of an unfinished sweep returns it. :class:`CellRisk` is
a cell's storm risk without its arrays (what the storm-risk table keeps).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._deprecated import UNSET, old_keyword
from ..engine.run import DURATION_EDGES, WAIT_EDGES
from ..stats.interval import CONFIDENCE
from ..stats.exact_sums import add_exact, exact_to_float
from ..stats.summary import cell_summary
from ..stats.survival import kaplan_meier, passage_times
from .._args import tail_level
from ..sweep.work import RESULT_ARRAYS

__all__ = ["FAILURE_FLEET_ARRAYS", "FLEET_ARRAYS", "POWER_FLEET_ARRAYS", "CellResult", "CellRisk",
           "cell_from_parts"]

#: The per-job arrays of a cell's fleet, as stored: dataset name -> Fleet attribute.
FLEET_ARRAYS = {"T": "T", "d": "d", "jitter": "jitter", "f": "f", "snapshot": "snapshot",
                "slowdown": "slowdown", "weights": "weights"}
#: The per-job arrays stored only for a cell whose fleet has failures (MODEL.md E8)
#: -> their value without (a cell of a fleet that never fails, a file written before).
FAILURE_FLEET_ARRAYS = {"mtbf": math.inf, "restart": 0.0}
#: The per-job arrays stored only for a cell whose fleet has power (MODEL.md E6);
#: None in a cell without.
POWER_FLEET_ARRAYS = ("busy_power", "idle_power")


@dataclass(eq=False)
class CellResult:
    """One cell's stored arrays; fleets are axis 0 (only the fleets done so far
    when the sweep is unfinished: ``fleet_index`` says which).

    Each array of :data:`stormsim.sweep.work.RESULT_ARRAYS` is an attribute
    (``cell.passage_time``, ``cell.occupancy``: None when only its sum is
    kept), and each summed one's exact sum over the fleets is ``NAME_sum``
    (``cell.occupancy_sum``, float64 (N+1,)); when only the sum is kept (and
    the file is layout 2), its sums per block of fleets are ``NAME_blocks``
    (``cell.occupancy_blocks``, float64 (blocks, N+1); None otherwise).
    ``cell.risk``: its storm risk (risk_levels; see the attribute).
    The checkpoint durations and waits (MODEL.md E7) are such arrays too
    (``durations_hist``, ``wait_sum``, ...; ``wait_count`` is ``durations_count``),
    None in a file written before they were recorded. So are the per-fleet
    sums of a cell with failures (MODEL.md E8; ``has_failures``) and the power
    arrays of a cell with power (E6; ``has_power``: ``power_mean``, ...,
    ``ramp_events`` on ``ramp_windows`` x ``ramp_thresholds``), None in others.
    """

    index: int
    params: dict
    T: np.ndarray
    d: np.ndarray
    jitter: np.ndarray
    f: np.ndarray
    fleets: int
    fleet_index: np.ndarray
    arrays: dict
    sums: dict
    blocks: dict = field(default_factory=dict)
    snapshot: np.ndarray = None  # (N,) MODEL.md E1 / E2 per-job options
    slowdown: np.ndarray = None
    weights: np.ndarray = None
    mtbf: np.ndarray = None      # (N,) MODEL.md E8 per-job options (inf, 0: never fails)
    restart: np.ndarray = None
    busy_power: np.ndarray = None  # (N,) MODEL.md E6 per-job draws (W; None: power off)
    idle_power: np.ndarray = None
    #: The ramp windows D (s) and thresholds X (W) of ``ramp_share`` and
    #: ``ramp_events`` (MODEL.md E6; None: power off)
    ramp_windows: tuple = None
    ramp_thresholds: tuple = None
    #: The cell's storm risk (risk_levels), None without one (or not yet done):
    #: ``levels`` (int64) and each of stormsim.sweep.cellrisk.RISK_ARRAYS (per level) and
    #: RISK_SCALARS (0-d), e.g. ``cell.risk["risk_p_ge"]``
    risk: dict | None = None

    #: Edges of the checkpoint histograms (MODEL.md E7), multiples of each job's
    #: d (durations_hist) and T (wait_hist): the fixed bins every run uses.
    duration_edges = DURATION_EDGES
    wait_edges = WAIT_EDGES

    def __getattr__(self, name):
        d = self.__dict__
        if name == "sigma":                    # the name of 0.2.0, kept one release
            warnings.warn("CellResult.sigma is now CellResult.jitter; the old name goes in the "
                          "next release", DeprecationWarning, stacklevel=2)
            return d["jitter"]
        if name.startswith("wait_count"):      # the waits' count is the durations'
            name = "durations_count" + name[len("wait_count"):]
        if name in d.get("arrays", ()):
            return d["arrays"][name]
        if name.endswith("_sum") and name[:-4] in d.get("sums", ()):
            return d["sums"][name[:-4]]
        if name.endswith("_blocks") and name[:-7] in d.get("sums", ()):
            return d.get("blocks", {}).get(name[:-7])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def has_failures(self) -> bool:
        """The cell's fleet can fail (MODEL.md E8): its goodput arrays are stored."""
        return self.arrays.get("committed_work") is not None

    @property
    def has_power(self) -> bool:
        """The cell's fleet has power (MODEL.md E6): its power and ramp arrays are stored."""
        return self.arrays.get("power_mean") is not None

    @property
    def fleets_done(self) -> int:
        return int(self.fleet_index.size)

    @property
    def cycles(self) -> int:
        return int(self.params["cycles"])

    @property
    def passage_level(self) -> int:
        return int(self.params["passage_level"])

    def survival(self, unit: str = "cycle", confidence: float = CONFIDENCE, *, level=UNSET):
        """Kaplan-Meier curve of the first passage, censored fleets included, its
        band at ``confidence`` (``level=`` warns one release)."""
        confidence = old_keyword("CellResult.survival", "level", "confidence", level, confidence)

        if unit == "cycle":
            t, obs = passage_times(self.passage_cycle, self.cycles)
        elif unit == "time":
            t, obs = passage_times(self.passage_cycle, self.cycles, self.passage_time,
                                   self.end_time)
        else:
            raise ValueError(f"unit = {unit!r}: must be 'cycle' or 'time'")
        return kaplan_meier(t, obs, confidence)

    def median(self, unit: str = "cycle", confidence: float = CONFIDENCE, *,
               level=UNSET) -> tuple[float, float, float]:
        """(median, lower, upper) first passage; NaN without a passage level or fleets."""
        confidence = old_keyword("CellResult.median", "level", "confidence", level, confidence)
        if self.passage_level == 0 or self.fleets_done == 0:
            return (math.nan,) * 3
        return self.survival(unit, confidence).median

    def tail(self, k) -> float:
        """P(n_w >= k): ``p_ge``, its one name (this one warns one release)."""
        warnings.warn("CellResult.tail is now CellResult.p_ge; the old name goes in the next "
                      "release", DeprecationWarning, stacklevel=2)
        return self.p_ge(k)

    def p_ge(self, k) -> float:
        """P(n_w >= k) over the cell's summed occupancy (k: int, 'N' or 'N/q');
        NaN where it is zero by construction (a fleet stopped at its passage
        to n_w >= passage_level <= k; see stormsim.stats.summary)."""
        k = tail_level(k, self.T.size)
        if bool(self.params.get("stop_at_passage", True)) and 0 < self.passage_level <= k:
            return math.nan
        total = float(self.occupancy_sum.sum())
        return float(self.occupancy_sum[k:].sum() / total) if total > 0 else math.nan

    def summary(self, confidence: float = CONFIDENCE, *, level=UNSET) -> dict:
        """The cell's numbers (stormsim.stats.summary.cell_summary): medians with
        intervals at ``confidence``, P(n_w >= k) for k = 0..N with intervals, the
        baseline (``level=`` warns one release)."""
        confidence = old_keyword("CellResult.summary", "level", "confidence", level, confidence)
        return cell_summary(self, confidence)


@dataclass(frozen=True, eq=False)
class CellRisk:
    """A cell's storm risk (``CellResult.risk``) with its index and parameters:
    what the storm-risk table shows of a cell, without the cell's arrays."""

    index: int
    params: dict
    risk: dict


def cell_from_parts(c, parts, *, keep_per_fleet: bool, risk=None) -> CellResult:
    """The CellResult of a sweep's cell ``c`` (a ``Sweep.cells`` entry) from its parts.

    parts : the cell's Parts (``stormsim.sweep.work.Part``), fleet ranges that
        do not overlap, in any order, read one at a time (an iterator holds
        one part in memory besides the cell's arrays); those of a finished
        cell tile its fleets, those of an unfinished one give the fleets done
        (``fleet_index``, in fleet order)
    keep_per_fleet : the sweep keeps each fleet's summed arrays (``occupancy
        = "fleet"``); else only their exact sums over the fleets and per
        block of fleets (the blocks begun by some part)
    risk : the cell's storm risk (a ``RiskPart``), or None
    """
    n = c.n_jobs
    rows = {a.name: np.empty((c.fleets,) + a.width(n, c.ramp_shape), dtype=a.dtype)
            for a in RESULT_ARRAYS if (keep_per_fleet or not a.summed) and a.kept(c.fleet)}
    summed = [a.name for a in RESULT_ARRAYS if a.summed]
    totals = {a.name: [0] * a.columns(n) for a in RESULT_ARRAYS if a.summed}
    per_block: dict = {name: {} for name in summed}
    ranges = []
    for part in parts:
        for name, arr in rows.items():
            arr[part.start:part.stop] = part.arrays[name]
        for name in summed:
            totals[name] = add_exact(totals[name], part.sums[name])
            for b, sums in part.blocks.get(name, ()):
                per_block[name][b] = add_exact(per_block[name].get(b), sums)
        ranges.append((part.start, part.stop))
    index = (np.concatenate([np.arange(a, b) for a, b in sorted(ranges)]) if ranges
             else np.empty(0, np.int64))
    if index.size < c.fleets:             # unfinished: the fleets done, in order
        rows = {name: arr[index] for name, arr in rows.items()}
    arrays = {a.name: rows.get(a.name) for a in RESULT_ARRAYS}
    sums, blocks = {}, {}
    for a in RESULT_ARRAYS:
        if not a.summed:
            continue
        sums[a.name] = exact_to_float(totals[a.name]).reshape(a.width(n))
        if not keep_per_fleet:
            per = per_block[a.name]
            blocks[a.name] = (np.array([exact_to_float(per[b]) for b in sorted(per)])
                              .reshape((len(per),) + a.width(n)))
    return CellResult(index=c.index, params=dict(c.values), fleets=c.fleets, fleet_index=index,
                      arrays=arrays, sums=sums, blocks=blocks,
                      risk=None if risk is None else {"levels": risk.levels, **risk.arrays},
                      **{k: getattr(c.fleet, attr).copy() for k, attr in FLEET_ARRAYS.items()},
                      **{k: getattr(c.fleet, k).copy() for k in FAILURE_FLEET_ARRAYS},
                      **_power_of(c))


def _power_of(c) -> dict:
    """The E6 keywords of a CellResult from its sweep cell (none without power)."""
    if not c.fleet.has_power:
        return {}
    windows, thresholds = c.ramps
    return {"busy_power": c.fleet.busy_power.copy(), "idle_power": c.fleet.idle_power.copy(),
            "ramp_windows": tuple(windows), "ramp_thresholds": tuple(thresholds)}

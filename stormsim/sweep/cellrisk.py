"""A sweep cell's storm risk (``risk_levels``): its numbers, its unit of work, its part.

    Cell.risk_kwargs --make_risk_unit--> RiskUnit (one per cell asking for it;
                                         its kwargs: risk_call, the settings
                                         with split=SplitSettings(...))
                     --run_risk--------> stormsim.storm_risk(fleet, **kwargs)
                                         (a fixed effort: max_seconds=None)
                     --risk_part-------> RiskPart (RISK_ARRAYS per level, RISK_SCALARS)

The numbers a sweep keeps of a StormRisk are listed once, in
:data:`RISK_ARRAYS` and :data:`RISK_SCALARS`: the unit files
(stormsim.store.parts), the HDF5 layout, the readers and the exports follow them.
Nothing here depends on timing: ``storm_risk`` with a fixed effort is a
function of (seed, inputs, effort), so threads, Dask, units and resume give
the same bits.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..engine.model import Fleet
from ..engine.units import SECONDS_PER_DAY
from ..risk.settings import SplitSettings
from ..risk.stormrisk import storm_risk
from .executors import layer_guard
from .keys import RISK_SPLIT_KEYS
from .spec import Sweep

__all__ = ["PER_DAY", "RISK_ARRAYS", "RISK_SCALARS", "RiskArray", "RiskPart",
           "RiskUnit", "asked_levels", "make_risk_unit", "per_day", "risk_call", "risk_fill",
           "risk_part", "risk_table", "run_risk"]


@dataclass(frozen=True)
class RiskArray:
    """One number of a cell's storm risk: per level k (RISK_ARRAYS)
    or per cell (RISK_SCALARS).

    source : the StormRisk attribute it is read from (a callable of the
        StormRisk for the scalars); column : its pandas column, ``{k}`` the level
    dtype : np.float64, np.int64, np.int8 (0/1 flags) or str
    """

    name: str
    source: object
    dtype: type
    units: str | None
    doc: str
    column: str = ""


def _split_attr(name, empty=0):
    return lambda r: getattr(r.split, name) if r.split is not None else empty


_F, _I, _B = np.float64, np.int64, np.int8
#: Per level k of a cell's storm risk, in order: the HDF5 datasets (/cells/<i>
#: on dimension ``risk_k``; the top-level table and /grid on ``k``, NaN / '' / -1
#: where k is not asked), the readers and the exports follow this table.
RISK_ARRAYS: tuple[RiskArray, ...] = (
    RiskArray("risk_p_ge", "p_ge", _F, "1", "storm risk: P(n_w >= k), the share of time with at "
              "least k jobs writing (see risk_p_ge_method, risk_level_method)", "risk_p_ge_{k}"),
    RiskArray("risk_p_ge_lo", "p_ge_lo", _F, "1", "lower end of the 95% interval of risk_p_ge",
              "risk_p_ge_{k}_lo"),
    RiskArray("risk_p_ge_hi", "p_ge_hi", _F, "1", "upper end of the 95% interval of risk_p_ge "
              "(a bound where no fleet or replicate reached k)", "risk_p_ge_{k}_hi"),
    RiskArray("risk_p_ge_rel_error", "p_ge_rel_error", _F, "1", "relative standard error of "
              "risk_p_ge (NaN: none)", "risk_p_ge_{k}_rel_error"),
    RiskArray("risk_p_ge_method", "p_ge_method", str, None, "how the risk_p_ge interval was made: "
              "ratio-logit, zero-bound, one-bound, none (plain Monte Carlo, stormsim.stats.tails), "
              "splitting, monotone-bound (stormsim.risk.stormrisk)", "risk_p_ge_{k}_method"),
    RiskArray("risk_storms_per_s", "storms_per_s", _F, "1/s", "storm risk: storm rate nu_k, storms "
              "(up-crossings of n_w to k or more) per second (NaN: not reached, no bound)",
              "risk_storms_per_s_ge_{k}"),
    RiskArray("risk_storms_per_s_lo", "storms_per_s_lo", _F, "1/s", "lower end of the 95% interval of "
              "risk_storms_per_s", "risk_storms_per_s_ge_{k}_lo"),
    RiskArray("risk_storms_per_s_hi", "storms_per_s_hi", _F, "1/s", "upper end of the 95% interval of "
              "risk_storms_per_s (no storm: a one-sided Poisson bound)",
              "risk_storms_per_s_ge_{k}_hi"),
    RiskArray("risk_storms_per_s_rel_error", "storms_per_s_rel_error", _F, "1", "relative standard "
              "error of risk_storms_per_s (NaN: none)", "risk_storms_per_s_ge_{k}_rel_error"),
    RiskArray("risk_storms_method", "storms_method", str, None, "how the risk_storms_per_s "
              "interval was made: ratio-log, zero-bound, none (plain Monte Carlo, "
              "stormsim.stats.storms), splitting, not-reached (stormsim.risk.stormrisk)",
              "risk_storms_ge_{k}_method"),
    RiskArray("risk_storm_duration", "storm_duration", _F, "s", "storm risk: mean storm duration "
              "(time at n_w >= k per storm; NaN: no storm)", "risk_storm_duration_ge_{k}"),
    RiskArray("risk_storm_duration_lo", "storm_duration_lo", _F, "s", "lower end of the 95% interval "
              "of risk_storm_duration", "risk_storm_duration_ge_{k}_lo"),
    RiskArray("risk_storm_duration_hi", "storm_duration_hi", _F, "s", "upper end of the 95% interval "
              "of risk_storm_duration", "risk_storm_duration_ge_{k}_hi"),
    RiskArray("risk_level_method", "level_method", str, None, "the estimator of level k: exact "
              "(the product-form law: no sampling), plain (Monte Carlo over independent fleets) "
              "or splitting (forward flux sampling, interval over independent replicates)",
              "risk_level_method_ge_{k}"),
    RiskArray("risk_resolved", "resolved", _B, "1", "1: both relative errors <= "
              "risk_rel_error_target (plain: with >= MIN_HITS fleets at k), else 0",
              "risk_resolved_ge_{k}"),
    RiskArray("risk_hits", "hits", _I, "1", "plain Monte Carlo fleets of the storm risk that "
              "reached k", "risk_hits_ge_{k}"),
    RiskArray("risk_fleets_needed", "fleets_needed", _F, "1", "estimated plain Monte Carlo "
              "fleets to reach risk_rel_error_target at k (see risk_needed_is_lower_bound)",
              "risk_fleets_needed_ge_{k}"),
    RiskArray("risk_needed_is_lower_bound", "needed_is_lower_bound", _B, "1", "1: no fleet "
              "reached k, risk_fleets_needed is a lower bound", "risk_needed_is_lower_bound_ge_{k}"),
)
#: Per cell: the effort the storm risk spent (the same for any threads or resume).
RISK_SCALARS: tuple[RiskArray, ...] = (
    RiskArray("risk_seed", lambda r: r.seed, _I, "1", "seed of the storm risk (the cell's "
              "run seed)", "risk_seed"),
    RiskArray("risk_rel_error_target", lambda r: r.rel_error_target, _F, "1", "the storm "
              "risk's target relative error (risk_rel_error)", "risk_rel_error_target"),
    RiskArray("risk_fleets_run", lambda r: r.fleets, _I, "1", "plain Monte Carlo fleets the storm "
              "risk ran (whole batches)", "risk_fleets_run"),
    RiskArray("risk_batch_fleets", lambda r: r.batch_fleets, _I, "1", "fleets per plain "
              "Monte Carlo batch of the storm risk", "risk_batch_fleets"),
    RiskArray("risk_replicates_run", _split_attr("replicates"), _I, "1", "splitting replicates "
              "the storm risk ran (0: no level split)", "risk_replicates_run"),
    RiskArray("risk_trials_run", _split_attr("trials"), _I, "1", "splitting clones per stage (0: "
              "no level split)", "risk_trials_run"),
    RiskArray("risk_events", lambda r: r.events, _I, "1", "events the storm risk integrated "
              "(plain and splitting)", "risk_events"),
    RiskArray("risk_stopped", lambda r: r.stopped, str, None, "why the storm risk stopped: "
              "rel_error (every level resolved), max_fleets (plain effort spent), replicates "
              "(splitting effort spent), exact (answered from the exact law)", "risk_stopped"),
)


def risk_fill(a: RiskArray):
    """What a table holds where a level (or a cell) has no storm risk."""
    return "" if a.dtype is str else -1 if a.dtype in (np.int64, np.int8) else np.nan


def risk_table(risks, kmax: int) -> dict:
    """The storm-risk table of the cells whose risk (a dict: ``levels`` and
    each RiskArray's value, or None) ``risks`` lists in cell order: name ->
    (cells, kmax) for RISK_ARRAYS at k = 1..kmax, (cells,) for RISK_SCALARS;
    risk_fill where a level is not asked or a cell has no storm risk."""
    risks = list(risks)
    n = len(risks)
    out = {}
    for a in RISK_ARRAYS + RISK_SCALARS:
        shape = (n, kmax) if a in RISK_ARRAYS else (n,)
        dtype = object if a.dtype is str else a.dtype
        out[a.name] = np.full(shape, risk_fill(a), dtype=dtype)
    for i, r in enumerate(risks):
        if r is None:
            continue
        at = np.asarray(r["levels"], dtype=np.int64) - 1
        for a in RISK_ARRAYS:
            out[a.name][i, at] = r[a.name]
        for a in RISK_SCALARS:
            out[a.name][i] = r[a.name][()]
    for a in RISK_ARRAYS + RISK_SCALARS:
        if a.dtype is str:
            out[a.name] = out[a.name].astype(str)
    return out



def risk_call(settings: dict) -> dict:
    """storm_risk()'s keyword arguments (but the fleet) of a storm risk's
    resolved settings (Cell.risk_kwargs): splitting's (the fields RISK_SPLIT_KEYS
    name) gathered into ``split=SplitSettings(...)``, the rest as they are."""
    fields = set(RISK_SPLIT_KEYS.values())
    return {**{k: v for k, v in settings.items() if k not in fields},
            "split": SplitSettings(**{k: v for k, v in settings.items() if k in fields})}


@dataclass(frozen=True)
class RiskUnit:
    """A unit of work: one cell's storm risk, ``storm_risk(fleet, **kwargs)``
    (``risk_call`` of Cell.risk_kwargs: a fixed effort), run whole."""

    kind: ClassVar[str] = "risk"    # what a driver, planner and store tell units and parts by
    sweep_hash: str
    cell: int
    fleet: Fleet
    kwargs: dict = field(hash=False)
    threads: int | None = None

    @property
    def run_seed(self) -> int:
        return self.kwargs["seed"]

    @property
    def key(self) -> str:
        return f"stormsim-risk-{self.sweep_hash[:12]}-c{self.cell}"


def make_risk_unit(sweep: Sweep, cell: int, threads=None) -> RiskUnit:
    c = sweep.cells[cell]
    return RiskUnit(sweep_hash=sweep.hash, cell=cell, fleet=c.fleet,
                    kwargs=risk_call(c.risk_kwargs()), threads=threads)


@dataclass(eq=False)
class RiskPart:
    """A cell's storm risk, as ``run_unit`` returns it: ``levels`` (int64, the
    levels asked, resolved for the cell's N) and ``arrays``: name -> value of
    each of RISK_ARRAYS (an array per level) and RISK_SCALARS (a 0-d array)."""

    kind: ClassVar[str] = "risk"
    cell: int
    sweep_hash: str
    run_seed: int
    levels: np.ndarray
    arrays: dict
    seconds: float = 0.0
    fleet_cycles: int = 0

    @property
    def events(self) -> int:
        return int(self.arrays["risk_events"])


def risk_part(unit: RiskUnit, risk, seconds: float = 0.0) -> RiskPart:
    """The RiskPart of a StormRisk (stormsim.storm_risk's result)."""
    arrays = {}
    for a in RISK_ARRAYS:
        v = np.asarray(getattr(risk, a.source))
        arrays[a.name] = v.astype(str) if a.dtype is str else v.astype(a.dtype)
    for a in RISK_SCALARS:
        v = np.asarray(a.source(risk))
        arrays[a.name] = v.astype(str) if a.dtype is str else v.astype(a.dtype)
    return RiskPart(cell=unit.cell, sweep_hash=unit.sweep_hash, run_seed=unit.run_seed,
                    levels=np.asarray(risk.levels, dtype=np.int64), arrays=arrays,
                    seconds=seconds, fleet_cycles=int(risk.fleet_cycles))


def run_risk(unit: RiskUnit) -> RiskPart:
    """Run a cell's storm risk: a pure function of the unit."""
    t0 = time.perf_counter()
    with layer_guard():
        risk = storm_risk(unit.fleet, threads=unit.threads, **unit.kwargs)
    return risk_part(unit, risk, time.perf_counter() - t0)


#: The views' storms per day (not stored: nu_k x SECONDS_PER_DAY, the sweep's
#: time unit being the second): view name -> (stored per-second name, long name).
PER_DAY = {
    "risk_storms_per_day": ("risk_storms_per_s", "storm risk: storm rate nu_k, storms per day"),
    "risk_storms_per_day_lo": ("risk_storms_per_s_lo", "lower end of the 95% interval of "
                               "risk_storms_per_day"),
    "risk_storms_per_day_hi": ("risk_storms_per_s_hi", "upper end of the 95% interval of "
                               "risk_storms_per_day"),
}


def per_day(table: dict) -> dict:
    """PER_DAY's arrays of a risk_table (or a cell's risk dict)."""
    return {name: np.asarray(table[src], dtype=np.float64) * SECONDS_PER_DAY
            for name, (src, _) in PER_DAY.items()}


def asked_levels(risks) -> list[int]:
    """The levels k asked by any of the cells' risks (dicts or None), sorted."""
    return sorted({int(k) for r in risks if r is not None for k in r["levels"]})

"""The quantities stormsim reports, each with its one name.

One table, :data:`QUANTITIES`: a quantity's name is the same in the Python
objects, the HDF5 files, the per-cell table and its exports; interval ends
add ``_lo`` and ``_hi``, the way an interval was made ``_method``, a relative
standard error ``_rel_error``. ``docs/gen_reference.py`` writes the docs'
glossary page from it, and tests/test_glossary.py checks that every place
listed has the name and that every old name still reads (with a
DeprecationWarning) for one release.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["QUANTITIES", "Quantity"]


@dataclass(frozen=True)
class Quantity:
    """One quantity and where it appears.

    name : the one name; symbol : how MODEL.md writes it; unit : its unit
    ("1": a share or probability); meaning : one sentence
    api : "Class.attribute" or "function(parameter)" of the public API
    files : names in results: "summary:<key>" (the per-cell table,
        ``stormsim.stats.summary``), "risk:<dataset>" (a cell's storm risk,
        ``stormsim.sweep.cellrisk``), "key:<sweep key>", "file:<dataset>" (the
        HDF5 layout, ``stormsim.store.layout``: a cell's per-job arrays, its
        per-fleet sums over the jobs of MODEL.md E8 in a cell with failures, and
        its power arrays and ramp dimensions of MODEL.md E6 in a cell with power)
    old : "Class.attribute" names of 0.2.0 that still read, with a warning
    """

    name: str
    symbol: str
    unit: str
    meaning: str
    api: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    old: tuple[str, ...] = ()


QUANTITIES: tuple[Quantity, ...] = (
    Quantity(
        "p_ge", "P(n_w >= k)", "1",
        "the share of time with at least k jobs writing at once (the storm risk at level k)",
        api=("StormRisk.p_ge", "SplitEstimate.p_ge", "StationaryLaw.p_ge", "PlanRow.p_ge",
             "CellResult.p_ge"),
        files=("summary:p_ge", "risk:risk_p_ge"),
        old=("StormRisk.p", "SplitEstimate.p", "StationaryLaw.tail", "PlanRow.time_share")),
    Quantity(
        "storms_per_s", "nu_k", "1/s",
        "the storm rate: up-crossings of n_w into k or more writers per second",
        api=("StormRisk.storms_per_s", "SplitEstimate.storms_per_s", "StationaryLaw.storms_per_s"),
        files=("summary:storms_per_s", "risk:risk_storms_per_s"),
        old=("StormRisk.rate", "SplitEstimate.rate", "StationaryLaw.storm_rate")),
    Quantity(
        "storms_per_day", "86400 nu_k", "1/day",
        "the storm rate per day, for fleets in physical units",
        api=("StormRisk.storms_per_day", "StationaryLaw.storms_per_day", "PlanRow.storms_per_day"),
        files=("risk:risk_storms_per_day",)),
    Quantity(
        "storm_duration", "P(n_w >= k) / nu_k", "s",
        "the mean duration of a storm: time at k or more writers per up-crossing",
        api=("StormRisk.storm_duration", "StationaryLaw.storm_duration", "PlanRow.storm_duration"),
        files=("summary:storm_duration", "risk:risk_storm_duration"),
        old=("StormRisk.duration", "PlanRow.storm_seconds")),
    Quantity(
        "levels", "k", "1",
        "the storm levels asked: at least k jobs writing at once (integers, 'N' or 'N/q')",
        api=("storm_risk(levels)", "plan(levels)", "storm_split(levels)", "StormRisk.levels",
             "FleetPlan.levels", "SplitEstimate.levels", "Results.summary(levels)",
             "Results.table(levels)", "Results.to_dataframe(levels)"),
        files=("key:risk_levels",)),
    Quantity(
        "lo, hi", "", "as the value",
        "the ends of an estimate's interval at the confidence (a bound where nothing was seen)",
        api=("Interval.lo", "Interval.hi"),
        files=("summary:p_ge_lo", "summary:p_ge_hi", "risk:risk_p_ge_lo", "risk:risk_p_ge_hi"),
        old=("Interval.low", "Interval.high", "Interval.lower", "Interval.upper")),
    Quantity(
        "confidence", "", "1",
        "the two-sided confidence of every interval (0.95)",
        api=("Interval.confidence", "StormRisk.confidence", "SplitEstimate.confidence",
             "Results.summary(confidence)", "Results.to_dataframe(confidence)",
             "kaplan_meier(confidence)"),
        old=("Interval.level", "StormRisk.level", "SplitEstimate.level")),
    Quantity(
        "rel_error", "se / estimate", "1",
        "an estimate's relative standard error; as a target, the one a storm risk runs to",
        api=("storm_risk(rel_error)", "StormRisk.p_ge_rel_error",
             "StormRisk.storms_per_s_rel_error"),
        files=("key:risk_rel_error", "risk:risk_p_ge_rel_error")),
    Quantity(
        "write_stretch", "mean write duration_i / d_i", "1",
        "how much contention stretches a write: its mean duration (firing to write end, per "
        "write) over its duration alone",
        api=("StationaryLaw.write_stretch", "ClassRow.write_stretch")),
    Quantity(
        "gpu_lost_share", "blocked + slowed + queued", "1",
        "the share of each job's time its checkpoints cost: stopped for a blocking write or a "
        "snapshot, slowed by an async persist, or queued (plan's blocked_share, slowed_share, "
        "queued_share)",
        api=("PlanRow.gpu_lost_share", "ClassRow.gpu_lost_share")),
    Quantity(
        "jitter", "sigma_i", "s",
        "the standard deviation of a job's compute interval per cycle",
        api=("Fleet(jitter)", "Fleet.identical(jitter)", "Fleet.from_jobs(jitter)", "Fleet.jitter",
             "CellResult.jitter"),
        files=("key:jitter", "file:jitter")),
    Quantity(
        "mtbf", "M_i", "s",
        "a job's mean time between failures, in wall time (MODEL.md E8; inf: never fails)",
        api=("Fleet(mtbf)", "Fleet.identical(mtbf)", "Fleet.from_jobs(mtbf)", "Fleet.mtbf",
             "CellResult.mtbf"),
        files=("key:mtbf", "file:mtbf")),
    Quantity(
        "restart", "R_i", "s",
        "a job's downtime after a failure until it computes again (MODEL.md E8)",
        api=("Fleet(restart)", "Fleet.identical(restart)", "Fleet.from_jobs(restart)",
             "Fleet.restart", "CellResult.restart"),
        files=("key:restart", "file:restart")),
    Quantity(
        "outage_mtbf", "M_0", "s",
        "the mean time between outages, each failing every job at once (MODEL.md E8)",
        api=("Fleet(outage_mtbf)", "Fleet.identical(outage_mtbf)", "Fleet.from_jobs(outage_mtbf)",
             "Fleet.from_csv(outage_mtbf)", "Fleet.outage_mtbf"),
        files=("key:outage_mtbf",)),
    Quantity(
        "busy_power", "P_i^busy", "W",
        "a job's power draw computing at full rate (MODEL.md E6; at rate r it draws "
        "idle_power + r (busy_power - idle_power))",
        api=("Fleet(busy_power)", "Fleet.identical(busy_power)", "Fleet.from_jobs(busy_power)",
             "Fleet.busy_power", "power_law(busy_power)", "CellResult.busy_power"),
        files=("key:busy_power", "file:busy_power")),
    Quantity(
        "idle_power", "P_i^idle", "W",
        "a job's power draw while it does not compute: writing, queued, waiting, snapshotting "
        "or down (MODEL.md E6)",
        api=("Fleet(idle_power)", "Fleet.identical(idle_power)", "Fleet.from_jobs(idle_power)",
             "Fleet.idle_power", "power_law(idle_power)", "CellResult.idle_power"),
        files=("key:idle_power", "file:idle_power")),
    Quantity(
        "power", "P(t)", "W",
        "the fleet's power draw over the measured window (MODEL.md E6): its time-weighted "
        "mean, minimum, maximum and 1st and 99th percentiles per fleet; a job DOWN after a "
        "failure (E8) draws idle, so an outage drops every computing job at once; in a sweep's "
        "table the mean over fleets with its interval (stats.power.mean_power) and the "
        "extremes over fleets",
        api=("Run.power_mean", "Run.power_min", "Run.power_max", "Run.power_p01",
             "Run.power_p99", "PowerRow.power_mean"),
        files=("file:power_mean", "file:power_min", "file:power_max", "file:power_p01",
               "file:power_p99", "summary:power_mean", "summary:power_mean_lo",
               "summary:power_mean_hi", "summary:power_min", "summary:power_max")),
    Quantity(
        "power_trace", "P(t)", "W",
        "the first m steps of the fleet's power P over the measured window, per fleet: each "
        "step's start (s, an event instant) and its P (MODEL.md E6)",
        api=("simulate(power_trace)", "Run.power_trace_t", "Run.power_trace_p")),
    Quantity(
        "ramp_window", "D", "s",
        "a ramp's window: R_D(t) is the highest power of [t - D, t] less P(t) (MODEL.md E6)",
        api=("simulate(ramps)", "Run.ramp_windows", "CellResult.ramp_windows"),
        files=("key:ramp_windows", "file:ramp_window")),
    Quantity(
        "ramp_threshold", "X", "W",
        "a ramp's threshold: the time share with R_D >= X and the up-crossings of R_D through X "
        "(MODEL.md E6)",
        api=("simulate(ramps)", "Run.ramp_thresholds", "plan(drops)",
             "CellResult.ramp_thresholds"),
        files=("key:ramp_thresholds", "file:ramp_threshold")),
    Quantity(
        "ramp_share", "", "1",
        "the fraction of the measured window with R_D(t) >= X, per fleet, window D and "
        "threshold X",
        api=("Run.ramp_share", "RampEstimate.ramp_share"),
        files=("file:ramp_share", "summary:ramp_share", "summary:ramp_share_lo",
               "summary:ramp_share_hi")),
    Quantity(
        "ramp_events", "", "1",
        "the up-crossings of R_D through X in the measured window, per fleet, window D and "
        "threshold X",
        api=("Run.ramp_events",),
        files=("file:ramp_events",)),
    Quantity(
        "ramp_events_per_day", "", "1/day",
        "ramp events (up-crossings of R_D through X) per day of measured time, over fleets "
        "with a 95 % interval (stats.power.ramp_estimate, ramp_estimate_of for a sweep's "
        "cells; plan's drops per day)",
        api=("RampEstimate.ramp_events_per_day",),
        files=("summary:ramp_events_per_day", "summary:ramp_events_per_day_lo",
               "summary:ramp_events_per_day_hi", "summary:ramp_method")),
    Quantity(
        "gpus", "", "1",
        "a job's accelerators: with gpu_power and gpu_idle_power, its busy_power and idle_power "
        "are gpus times each",
        api=("Fleet.from_jobs(gpus)",)),
    Quantity(
        "gpu_power", "", "W",
        "one accelerator's draw computing at full rate (MODEL.md E6, per accelerator)",
        api=("Fleet.from_jobs(gpu_power)", "Fleet.from_csv(gpu_power)")),
    Quantity(
        "gpu_idle_power", "", "W",
        "one accelerator's draw while its job does not compute (MODEL.md E6, per accelerator)",
        api=("Fleet.from_jobs(gpu_idle_power)", "Fleet.from_csv(gpu_idle_power)")),
    Quantity(
        "goodput", "G", "1",
        "committed work over N x the measured window: the share of the fleet's time that "
        "became durable progress (MODEL.md E8); over fleets with its interval: "
        "stormsim.stats.goodput.goodput(run)",
        api=("Run.goodput", "PlanRow.goodput"),
        files=("summary:goodput", "summary:goodput_lo", "summary:goodput_hi",
               "summary:goodput_method")),
    Quantity(
        "goodput_parts", "1 - G", "1",
        "G's complement split exactly into writing, lost, down, cap and uncommitted shares "
        "(with G they sum to 1)",
        api=("Run.goodput_parts",),
        files=("summary:goodput_writing", "summary:goodput_lost", "summary:goodput_down",
               "summary:goodput_cap", "summary:goodput_uncommitted")),
    Quantity(
        "failures", "", "1",
        "a job's failures in the measured window, outages included (MODEL.md E8)",
        api=("Run.failures",),
        files=("summary:failures", "file:failures")),
    Quantity(
        "failures_per_day", "", "1/day",
        "a fleet's failures (all its jobs, outages included) per day of measured time, with "
        "its interval over fleets",
        files=("summary:failures_per_day", "summary:failures_per_day_lo",
               "summary:failures_per_day_hi")),
    Quantity(
        "outages", "", "1",
        "outages (every job failing at once) in the measured window",
        api=("Run.outages",),
        files=("summary:outages", "file:outages")),
    Quantity(
        "abandoned_writes", "", "1",
        "writes a failure stopped before they ended (the job left the writers at that instant)",
        api=("Run.abandoned_writes",),
        files=("summary:abandoned_writes", "file:abandoned_writes")),
    Quantity(
        "lost_work", "", "s",
        "compute done in the window and lost to a failure (since the last durable checkpoint)",
        api=("Run.lost_work",),
        files=("file:lost_work",)),
    Quantity(
        "down_time", "", "s",
        "time a job spent DOWN, restarting after a failure, in the window",
        api=("Run.down_time",),
        files=("file:down_time",)),
    Quantity(
        "committed_work", "", "s",
        "compute done in the window that a completed checkpoint made durable",
        api=("Run.committed_work",),
        files=("file:committed_work",)),
    Quantity(
        "uncommitted_work", "", "s",
        "compute done in the window and not yet durable at its end",
        api=("Run.uncommitted_work",),
        files=("file:uncommitted_work",)),
    Quantity(
        "checkpoint_time", "", "s",
        "time a job spent checkpointing in the window, goodput's writing part: blocking writes "
        "(abandoned ones included), snapshots, waits, time queued for a writer slot, and an "
        "async job's slowdown share while its persist is in flight or queued",
        api=("Run.checkpoint_time",),
        files=("file:checkpoint_time",)),
)

"""``stormsim plan``'s power section (MODEL.md E6): for a fleet with power, each
scenario's mean draw and its power drops per day: how often the fleet's draw
falls by X watts or more within D seconds, as its jobs stop to checkpoint.

The drops come from the scenario's checkpoint-durations run (the same fleets,
``simulate(fleet, ramps=(windows, thresholds))``), so they cost the plan no
extra run; their intervals are ``stats.power.ramp_estimate``'s (a ratio over
fleets, or a one-sided bound where no fleet saw one). The mean draw is the
exact law's where it applies (``stats.power.power_law``), else the run's.
Every scenario uses the fleet's windows and thresholds, so the rows compare.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._format import fmt_interval, fmt_value
from .engine.model import Fleet
from .stats.interval import Interval
from .stats.power import RampEstimate, mean_power, power_law, ramp_estimate

__all__ = ["POWER_COLUMNS", "POWER_NOTE", "POWER_WINDOWS", "PowerRow", "default_thresholds", "outage_note",
           "power_lines", "power_records", "power_row", "ramps_for"]

#: The windows D (s) of the drops: within a second (a step, as a utility's
#: ramp-rate limit sees it) and within a minute.
POWER_WINDOWS = (1.0, 60.0)
#: The thresholds by default: one job's drop (its largest), and a quarter and
#: a half of the fleet's whole swing (sum over jobs of busy - idle).
SWING_SHARES = (0.25, 0.5)
#: Thresholds per block of the text table (it stays within 100 columns).
PER_BLOCK = 3
#: The power CSV's columns (``power_records``): one row per scenario, window and threshold.
POWER_COLUMNS = ("scenario", "power_mean", "power_mean_lo", "power_mean_hi", "power_mean_method",
                 "window", "threshold", "ramp_events_per_day", "ramp_events_per_day_lo",
                 "ramp_events_per_day_hi", "ramp_share", "ramp_share_lo", "ramp_share_hi",
                 "method", "reason")
#: The note under a table with a power section.
POWER_NOTE = ("Power: mean MW is the fleet's mean draw (exact: the law; else a 95 % interval "
              "over fleets); a drop of X within D is the draw falling by X or more from its "
              "highest of the last D seconds (MODEL.md E6's ramp), counted once per episode; "
              "0 (< b): none seen in the run, b the one-sided 95 % bound.")


def _nice(x: float) -> float:
    """x rounded to two significant digits (the table's thresholds read as given)."""
    if not x > 0:
        return 0.0
    digits = 1 - int(math.floor(math.log10(x)))
    return float(round(x, digits))


def default_thresholds(fleet: Fleet) -> tuple[float, ...]:
    """The drops X (W) the plan counts by default: the largest job's drop and
    SWING_SHARES of the fleet's swing, each to two significant digits, once
    each, ascending; () for a fleet without power, or one that never drops."""
    if not fleet.has_power:
        return ()
    drop = fleet.busy_power - fleet.idle_power
    swing = float(drop.sum())
    xs = {_nice(float(drop.max()))} | {_nice(s * swing) for s in SWING_SHARES}
    return tuple(sorted(x for x in xs if x > 0))


def ramps_for(fleet: Fleet, thresholds=None, windows=POWER_WINDOWS) -> tuple | None:
    """The ``simulate(ramps=...)`` of the plan: (windows, thresholds), the
    thresholds by default ``default_thresholds``; None without power."""
    if not fleet.has_power:
        return None
    xs = default_thresholds(fleet) if thresholds is None else tuple(thresholds)
    return (tuple(float(d) for d in windows), xs) if xs else None


@dataclass(frozen=True)
class PowerRow:
    """One scenario's power: its mean draw (W, exact where the law applies,
    else over the run's fleets) and its drops (``stats.power.RampEstimate``,
    None where not simulated: ``reason`` says why)."""

    scenario: str
    power_mean: Interval
    drops: RampEstimate | None
    reason: str = ""

    def to_dict(self) -> dict:
        """The JSON's object: scenario, power_mean (an Interval's fields), and
        per window and threshold the drops per day and the time share with
        their ends and method (or ``reason``)."""
        out = {"scenario": self.scenario, "power_mean": _plain(self.power_mean),
               "reason": self.reason or None, "drops": []}
        if self.drops is None:
            return out
        e = self.drops
        for a, d in enumerate(e.windows):
            for b, x in enumerate(e.thresholds):
                out["drops"].append({
                    "window": d, "threshold": x,
                    **{name: float(getattr(e, name)[a, b]) for name in (
                        "ramp_events_per_day", "ramp_events_per_day_lo",
                        "ramp_events_per_day_hi", "ramp_share", "ramp_share_lo",
                        "ramp_share_hi")},
                    "method": str(e.method[a, b])})
        return out


def power_records(rows: list) -> list[dict]:
    """One flat record per scenario, window and threshold (POWER_COLUMNS; a
    scenario without drops: one record with its reason)."""
    out = []
    for r in rows:
        m = r.power_mean
        head = {"scenario": r.scenario, "power_mean": m.value, "power_mean_lo": m.lo,
                "power_mean_hi": m.hi, "power_mean_method": m.method}
        if r.drops is None:
            out.append(head | {"reason": r.reason})
            continue
        out += [head | cell | {"reason": ""} for cell in r.to_dict()["drops"]]
    return out


def _plain(x: Interval) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in x.__dict__.items()}


def _mean_power(fleet: Fleet, run, exact: bool) -> Interval:
    if exact:
        m = power_law(fleet, fleet.busy_power, fleet.idle_power).mean
        return Interval(m, m, m, "exact", unit="W")
    if run is None:
        return Interval(math.nan, math.nan, math.nan, "not simulated", unit="W")
    return mean_power(run.window, run.power_mean)


def power_row(name: str, fleet: Fleet, run, exact: bool, missing: str) -> PowerRow:
    """Scenario ``name``'s PowerRow from its durations run (``run``, None if
    the budget bought none: then ``missing`` is the reason); ``exact``: the
    law gives the mean."""
    mean = _mean_power(fleet, run, exact)
    if run is None:
        return PowerRow(name, mean, None, missing)
    return PowerRow(name, mean, ramp_estimate(run))


def outage_note(failing: Fleet | None, row: PowerRow | None) -> list[str]:
    """The note on an outage's power step (MODEL.md E6 with E8): every job stops
    at once, so the draw falls from the fleet's mean to the sum of the idle
    draws, once per outage; [] without outages or power."""
    if failing is None or row is None or not math.isfinite(failing.outage_mtbf):
        return []
    idle = float(np.sum(failing.idle_power))
    m = row.power_mean
    if math.isnan(m.value):
        return []
    per_day = 86400.0 / failing.outage_mtbf
    return [f"Outages (one every {fmt_value(failing.outage_mtbf / 86400.0, digits=3)} days, "
            f"{fmt_value(per_day, digits=3)} a day): each stops every job at once, a step from "
            f"the fleet's draw (mean {_mw(m.value)} MW) down to its idle draw of {_mw(idle)} MW, "
            f"about {_mw(m.value - idle)} MW within an instant; the jobs restart together, so "
            "their first checkpoints fall close together again (the settling above)."]


def _mw(x: float) -> str:
    return fmt_value(x / 1e6, digits=3)


def _cell(e: RampEstimate, a: int, b: int) -> str:
    v, lo, hi = (float(getattr(e, n)[a, b]) for n in
                 ("ramp_events_per_day", "ramp_events_per_day_lo", "ramp_events_per_day_hi"))
    if e.method[a, b] == "zero-bound":
        return f"0 (< {fmt_value(hi, digits=2)})"
    return fmt_interval(v, lo, hi)


def _window(d: float) -> str:
    return f"{fmt_value(d, digits=3)} s" if d < 60 or d % 60 else f"{d / 60:g} min"


def power_lines(rows: list, why) -> list[str]:
    """The text table's power section: per scenario, its mean draw, then per
    window a line of drops per day at each threshold; '-(a)' (``why``) where
    a scenario has none. Empty where no row has drops."""
    shown = next((r.drops for r in rows if r.drops is not None), None)
    if shown is None:
        return []
    lines = ["", "Power: drops per day (the fleet's draw falling by X or more within D), "
             "95 % interval"]
    for start in range(0, len(shown.thresholds), PER_BLOCK):
        xs = list(range(start, min(start + PER_BLOCK, len(shown.thresholds))))
        head = ["scenario", "mean MW", "within"] + [f">= {_mw(shown.thresholds[b])} MW"
                                                   for b in xs]
        body = []
        for r in rows:
            m = r.power_mean
            mean = why(m.method) if math.isnan(m.value) else (
                f"{_mw(m.value)} (exact)" if m.method == "exact" else
                f"{_mw(m.value)} [{_mw(m.lo)}, {_mw(m.hi)}]")
            for a, d in enumerate(shown.windows):
                cells = [why(r.reason) if r.drops is None else _cell(r.drops, a, b) for b in xs]
                body.append([r.scenario if a == 0 else "", mean if a == 0 else "",
                             _window(d), *cells])
        widths = [max(len(str(c)) for c in col) for col in zip(head, *body)]
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip()
                  for line in [head, *body]]
    return lines

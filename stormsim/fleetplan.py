"""``stormsim plan``: an operator's fleet in; how often it storms, what it
costs and what each change would buy out.

For the fleet and each what-if (bandwidth halved and doubled, the
checkpoint interval halved and doubled, asynchronous checkpoints with the
snapshot and slowdown assumed, a writer cap of N/4 or each cap asked), one
row: storms per day and mean storm duration at the levels asked, the
share of time with k or more writers, the mean and 99th percentile
checkpoint duration and the share of writes longer than a
watchdog, the waits, the GPU time the checkpoints cost (blocked, slowed,
queued) and how much contention adds, and how long a launch stagger holds; then how long storms
take to settle after a synchronized restart. Each number says how it was made: "exact" (the
product-form law, ``stormsim.stationary``: blocking jobs with jitter, no
sampling error), "plain" (simulation, a 95 % interval over independent
fleets) or "splitting". The long-run numbers of a blocking fleet are exact
and instant; the rest is simulated within the time budget. A number that
cannot be had says why (``PlanRow.reasons``; '-(a)' and note (a) in the
text table), and a fleet of several kinds of jobs is also given per job
class (``FleetPlan.by_class``, ``plan_costs``).

Times are in seconds, rates per day: the model's time unit is the second
when the fleet comes from physical units (``Fleet.from_jobs``, a job table).
"""
from __future__ import annotations

import csv
import io
import json
import math
import textwrap
import time
from numbers import Real
from dataclasses import dataclass, field, replace

import numpy as np

from ._deprecated import renamed
from ._args import (check_flag, check_int, check_levels, check_progress, check_real,
                    stderr_line, tail_level)
from ._format import fmt_estimate, fmt_interval, fmt_percent, fmt_share, fmt_value
from .engine.cost import (BATCH_EVENTS, default_batch, run_events, run_seconds,
                          seconds_per_event)
from .engine.launch import stagger_theta
from .engine.model import Fleet
from .engine.run import simulate
from .engine.units import SECONDS_PER_DAY, magnitudes, seconds, time_seconds
from .errors import SpecError
from .checkpointing import (GOODPUT_CYCLES, GOODPUT_FLEETS, GOODPUT_LEAST, Recommendation,
                            recommend, simulated_goodput)
from .plan_costs import SHARES, ClassRow, class_rows, gpu_shares, law_reason
from .plan_power import (POWER_COLUMNS, POWER_NOTE, PowerRow, outage_note, power_lines,
                         power_records, power_row, ramps_for)
from .plots import series
from .risk.exact import exact_applies
from .risk.stormrisk import storm_risk
from .settling import TOLERANCE, Settling, restart_storms, settle_hours  # noqa: F401 (its old home)
from .stats import durations
from .stats.interval import CONFIDENCE, Interval
from .stats.physical import time_to_passage
from .stats.stationary import SATURATED_SHARE, saturated, stationary

__all__ = ["PlanRow", "FleetPlan", "plan", "what_ifs"]

#: The levels asked when none are: a pair, a quarter and half of the fleet.
DEFAULT_LEVELS = ("2", "N/4", "N/2")
#: Fleets and the cycle cap of the stagger's first-collision runs: enough for
#: a median with a useful interval, cheap with the fast-forward.
STAGGER_FLEETS, STAGGER_CYCLES = 200, 20_000
#: The share of the time budget each simulated scenario's storm risk may spend
#: at most (less where many scenarios share BUDGET_SHARES["risk"]).
SCENARIO_SHARE = 1.0 / 8
#: How plan's ``max_seconds`` is split, named shares adding up to 1: the storm
#: risk of the scenarios without an exact law (shared equally), the checkpoint
#: durations and the stagger runs of every scenario (shared equally), and the
#: settling after a synchronized restart. Every simulation is sized from its
#: share with ``engine.cost.run_seconds`` (one core, the benchmarked cost per
#: event) before it runs; what no share can buy is "not estimated in the budget".
BUDGET_SHARES = {"risk": 0.55, "durations": 0.15, "stagger": 0.15, "settle": 0.15}
#: With failures (``plan(mtbf=...)``), the goodput runs and the recommended
#: interval's take this share, and the others shrink in proportion.
GOODPUT_SHARE = 0.15
#: A row's goodput where no failures were given.
NO_FAILURES = "no failures given (plan --mtbf, plan(mtbf=...))"
#: The checkpoint durations and waits of each scenario (E7) come from this
#: fixed effort: fleets x cycles after a burn-in, a random launch; a few
#: tenths of a second at N = 12, and a function of the seed alone. Where the
#: budget's share cannot buy it: fewer fleets (down to DURATION_LEAST[0]),
#: then fewer cycles (down to DURATION_LEAST[1]); below that, not estimated.
DURATION_FLEETS, DURATION_CYCLES, DURATION_BURN_IN = 128, 400, 40
DURATION_LEAST = (4, 20)
#: The stagger runs' least effort (fleets, cycle cap): the cap is cut first.
STAGGER_LEAST = (20, 4)
#: storm_risk's cycles and burn-in per fleet (its defaults), and the least
#: effort (fleets per batch, cycles) a budget-sized storm risk may run.
RISK_CYCLES, RISK_BURN_IN, RISK_LEAST = 800, 80, (2, 160)
#: The upper quantile of checkpoint durations and waits reported.
QUANTILE = 0.99
#: After a synchronized restart: "settled" is the storm rate of every block from
#: there on within this share of its long-run value (``stormsim.settling``).
SETTLE_TOLERANCE = TOLERANCE
#: How a level reads (``PlanRow.regime``): storms are episodes with a rate and a
#: duration, or the level is saturated (``stats.stationary.saturated``: k or
#: more write most of the time, in storms that outlast a job's cycle).
EPISODES, SATURATED = "episodes", "saturated"


@dataclass(frozen=True)
class Output:
    """One field of ``plan``'s JSON and CSV, named as the API names it.

    kind: "plan" a FleetPlan attribute (the JSON's top level; with ``csv``, a
    column repeated on every CSV row), "scenario" a PlanRow attribute (one
    per scenario), "level" a PlanRow array (one value per level k: a JSON
    list, a CSV row per level), "interval" a PlanRow Interval (the JSON: an
    object of its fields; the CSV: ``name``, ``name_lo``, ``name_hi``,
    ``name_method``). The docs' Plan outputs page is written from this table.
    """

    name: str
    unit: str
    meaning: str
    kind: str
    csv: bool = True


#: The FleetPlan's fields in the JSON (and the CSV where ``csv``).
PLAN_OUTPUTS: tuple[Output, ...] = (
    Output("levels", "1", "the levels k asked, sorted: k or more jobs writing at once "
           "(the CSV: the column k, a row per level)", "plan", csv=False),
    Output("seconds", "s", "the wall time plan took", "plan", csv=False),
    Output("settle_hours", "h", "after a synchronized restart, the start of the first block "
           f"(contiguous, of equal length) after which the rate of storms of n_w >= 2 stays within "
           f"{SETTLE_TOLERANCE:.0%} of its long-run value (null: not settled, or saturated)",
           "plan"),
    Output("settle_hours_lo", "h", "the earliest such start the blocks' 95 % bands allow", "plan"),
    Output("settle_hours_hi", "h", "the latest such start the blocks' 95 % bands allow (inf: a "
           "band reaches out of the tolerance up to the horizon)", "plan"),
    Output("settle_method", "text", "how the long-run value was known (the law, or a run from a "
           "random launch), the fleets and blocks run, and what the budget cut; starts with "
           "'saturated' where storms of n_w >= 2 never end", "plan"),
    Output("settling", "text", "storms per block after a synchronized restart at n_w >= 2 and "
           "each level asked (``stormsim.settling.Settling``: block_hours, storms_per_day with "
           "_lo and _hi per block and level, the long-run rates, the settling time per level)",
           "plan", csv=False),
    Output("recommendation", "text", "with failures: the recommended checkpoint interval "
           "(stormsim.checkpointing.Recommendation: intervals per job, goodput_now, "
           "goodput_then and the gain, each with its interval), or null", "plan", csv=False),
    Output("watchdog", "s", "the watchdog: over_watchdog is the share of writes longer than this",
           "plan"),
    Output("notes", "text", "the notes under the table (levels not resolved, the async row's "
           "assumptions, the load, saturated levels)", "plan", csv=False),
    Output("durations_effort", "text", "the checkpoint-durations runs' effort per scenario "
           "(fleets x cycles), as the budget allowed", "plan", csv=False),
    Output("by_class", "list", "the fleet's job classes (jobs alike in every parameter), one object "
           "each with the fields of CLASS_OUTPUTS (the CSV: plan --by-class)", "plan", csv=False),
    Output("power", "list", "for a fleet with power (MODEL.md E6), one object per scenario "
           "(stormsim.plan_power.PowerRow): power_mean (W, an interval's fields) and drops, per "
           "window (s) and threshold (W) the drops per day and the time share with the draw "
           "that far below its highest of the window, each with _lo, _hi and method; null "
           "without power", "plan", csv=False),
)

#: A PlanRow's fields, in the JSON's rows and the CSV's columns (after k).
ROW_OUTPUTS: tuple[Output, ...] = (
    Output("scenario", "text", "the fleet, or the what-if's name", "scenario"),
    Output("change", "text", "what the what-if changes", "scenario"),
    Output("storms_per_day", "1/day", "storms of n_w >= k per day (up-crossings into k or more "
           "writers)", "level"),
    Output("storms_per_day_lo", "1/day", "its interval's lower end (the value where exact)",
           "level"),
    Output("storms_per_day_hi", "1/day", "its interval's upper end (the value where exact)",
           "level"),
    Output("storm_duration", "s", "the mean storm duration: time at n_w >= k per storm", "level"),
    Output("storm_duration_lo", "s", "its interval's lower end", "level"),
    Output("storm_duration_hi", "s", "its interval's upper end", "level"),
    Output("p_ge", "1", "P(n_w >= k): the share of time with k or more jobs writing", "level"),
    Output("p_ge_lo", "1", "its interval's lower end", "level"),
    Output("p_ge_hi", "1", "its interval's upper end", "level"),
    Output("method", "text", "how the level's numbers were made: exact (the product-form law), "
           "plain or splitting (simulated, a 95 % interval), cap (a writer cap rules the level "
           "out)", "level"),
    Output("regime", "text", f"{EPISODES} (storms come and go), or {SATURATED} (the level is "
           "almost never left: storms_per_day counts the rare ends of calms)", "level"),
    Output("checkpoint_seconds", "s", "the mean write duration per write, firing to write end",
           "scenario"),
    Output("checkpoint_seconds_lo", "s", "its interval's lower end (the value where exact)",
           "scenario"),
    Output("checkpoint_seconds_hi", "s", "its interval's upper end (the value where exact)",
           "scenario"),
    Output("lone_checkpoint_seconds", "s", "the mean write duration of a job writing alone",
           "scenario"),
    Output("checkpoint_p99", "s", f"the {QUANTILE:.0%} quantile of write durations", "interval"),
    Output("over_watchdog", "1", "the share of writes longer than the watchdog", "interval"),
    Output("wait_mean", "s", "the mean time from a checkpoint falling due to its write starting "
           "(a writer cap's queue, an async WAIT)", "scenario"),
    Output("wait_mean_lo", "s", "its interval's lower end", "scenario"),
    Output("wait_mean_hi", "s", "its interval's upper end", "scenario"),
    Output("wait_p99", "s", f"the {QUANTILE:.0%} quantile of those waits", "interval"),
    Output("writing_share", "1", "the share of GPU time spent writing (exact only: null where "
           "the law does not apply, gpu_lost_share then simulated)",
           "scenario"),
    Output("contention_share", "1", "the part of writing_share contention adds (exact only)",
           "scenario"),
    Output("stagger_hours", "h", "the median time to the first collision from a stagger launch "
           "(null: the jobs differ, or no stagger is collision-free; its method says which)",
           "interval"),
    Output("cost_method", "text", "how checkpoint_seconds and the GPU shares were made (exact, "
           "else the storm risk's method)", "scenario"),
    Output("load", "1", "sum_i d_i / T_i: write time asked per second of compute", "scenario"),
    Output("goodput", "1", "with failures (mtbf, restart): the share of the fleet's time that "
           "became committed work (MODEL.md E8), simulated with its 95 % interval", "interval"),
    *(Output(name, "1", meaning, "interval") for name, meaning in SHARES.items()),
    Output("reasons", "text", "why each null above is null, one 'field: why' each (the CSV: "
           "joined by ' | ')", "scenario"),
)

#: A ClassRow's fields (plan's per-class view: the JSON's by_class, the CSV of --by-class).
CLASS_OUTPUTS: tuple[Output, ...] = (
    Output("jobs", "1", "how many jobs of the fleet are of this class", "class"),
    Output("compute_interval", "s", "T_i: the compute work between two checkpoints", "class"),
    Output("lone_checkpoint_seconds", "s", "d_i: the write's duration alone", "class"),
    Output("checkpoint_seconds", "s", "the mean write duration under contention, per write",
           "interval"),
    Output("write_stretch", "1", "checkpoint_seconds / lone_checkpoint_seconds", "interval"),
    Output("checkpoint_p99", "s", f"the {QUANTILE:.0%} quantile of the class's write durations",
           "interval"),
    Output("gpu_lost_share", "1", "the share of a job's time its checkpoints cost (per job)",
           "interval"),
    Output("method", "text", "how checkpoint_seconds was made", "class"),
)


def class_columns() -> list[str]:
    """The per-class CSV's columns: class (1, 2, ...), then CLASS_OUTPUTS (an
    interval as four)."""
    out = ["class"]
    for o in CLASS_OUTPUTS:
        out += ([o.name, f"{o.name}_lo", f"{o.name}_hi", f"{o.name}_method"]
                if o.kind == "interval" else [o.name])
    return out


def _flat(rec: dict, name: str, v) -> None:
    """rec[name] = v, an Interval as four columns (value, lo, hi, method)."""
    if isinstance(v, Interval):
        rec.update({name: v.value, f"{name}_lo": v.lo, f"{name}_hi": v.hi,
                    f"{name}_method": v.method})
    else:
        rec[name] = " | ".join(v) if isinstance(v, tuple) else v


def csv_columns() -> list[str]:
    """The CSV's columns: scenario, change, k, the rest of ROW_OUTPUTS (an
    interval as four), then PLAN_OUTPUTS' CSV ones."""
    out = ["scenario", "change", "k"]
    for o in ROW_OUTPUTS[2:]:
        out += ([o.name, f"{o.name}_lo", f"{o.name}_hi", f"{o.name}_method"]
                if o.kind == "interval" else [o.name])
    return out + [o.name for o in PLAN_OUTPUTS if o.csv]


def _plain(v):
    """A value as JSON holds it: an Interval as its fields, arrays as lists, NaN as null."""
    if isinstance(v, Interval):
        return {k: _plain(x) for k, x in v.__dict__.items()}
    if isinstance(v, Settling):
        return v.to_dict()
    if isinstance(v, Recommendation):
        return {"intervals": _plain(v.intervals), "goodput_now": _plain(v.goodput_now),
                "goodput_then": _plain(v.goodput_then), "gain": _plain(v.gain),
                "text": v.lines()}
    if isinstance(v, PowerRow):
        return v.to_dict()
    if isinstance(v, ClassRow):
        return {o.name: _plain(getattr(v, o.name)) for o in CLASS_OUTPUTS}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, (np.ndarray, tuple, list)):
        return [None if (isinstance(x, float) and math.isnan(x)) else x
                for x in np.asarray(v).tolist()]
    return None if isinstance(v, float) and math.isnan(v) else v


@dataclass(frozen=True)
class PlanRow:
    """One scenario's numbers (levels like ``FleetPlan.levels``).

    ``regime[j]`` is SATURATED where level k is almost never left
    (``stats.stationary.saturated``; on the intervals' lower bounds where
    simulated): there ``storms_per_day`` counts the rare ends of calms and
    ``storm_duration`` outlasts a job's cycle, numbers that read as "no
    storms" where the fabric never stops storming; the text table says
    "saturated" instead. Elsewhere EPISODES: storms come and go, and their
    rate and duration mean what they say. Each field's unit and meaning:
    ROW_OUTPUTS (the docs' Plan outputs page).
    """

    scenario: str
    change: str
    storms_per_day: np.ndarray
    storms_per_day_lo: np.ndarray
    storms_per_day_hi: np.ndarray
    storm_duration: np.ndarray     # s: mean time at n_w >= k per storm
    p_ge: np.ndarray               # P(n_w >= k): the share of time with at least k writing
    method: np.ndarray
    checkpoint_seconds: float
    lone_checkpoint_seconds: float
    checkpoint_p99: Interval       # s: the QUANTILE of write durations
    over_watchdog: Interval        # P(a write lasts longer than the watchdog)
    wait_mean: float               # s a checkpoint waits (async WAIT, a writer cap's queue)
    wait_p99: Interval             # s
    writing_share: float
    contention_share: float
    stagger_hours: Interval        # median hours to the first collision from a stagger launch
    cost_method: str
    regime: np.ndarray = None      # per level: EPISODES, or SATURATED where storms do not end
    load: float = math.nan         # sum_i d_i / T_i (MODEL.md): write time asked per compute time
    p_ge_lo: np.ndarray = None     # the interval ends of p_ge and storm_duration, per level
    p_ge_hi: np.ndarray = None
    storm_duration_lo: np.ndarray = None
    storm_duration_hi: np.ndarray = None
    blocked_share: Interval = None  # the GPU time lost (plan_costs.SHARES), per job
    slowed_share: Interval = None
    queued_share: Interval = None
    gpu_lost_share: Interval = None
    reasons: tuple = ()             # "field: why" for each NaN field
    checkpoint_seconds_lo: float = math.nan   # the interval ends of the two means
    checkpoint_seconds_hi: float = math.nan
    wait_mean_lo: float = math.nan
    wait_mean_hi: float = math.nan
    goodput: Interval = Interval(math.nan, math.nan, math.nan, NO_FAILURES)

    __getattr__ = renamed("PlanRow", {"storm_seconds": "storm_duration", "time_share": "p_ge",
                                      "stagger_hours_lo": "stagger_hours.lo",
                                      "stagger_hours_hi": "stagger_hours.hi"})


@dataclass(frozen=True)
class FleetPlan:
    """What ``plan`` found: the fleet's row first, then each what-if.

    ``str()`` (``table()``) is the text table, at most 100 columns wide;
    ``table(wide=True)`` puts each scenario on one line. ``to_json()`` and
    ``to_csv()`` (``records()``, ``to_frame()``) carry every field of
    PLAN_OUTPUTS and ROW_OUTPUTS, named as the attributes are, each
    interval with its ends (the docs' Plan outputs page).
    """

    levels: np.ndarray
    rows: list
    seconds: float
    settle_hours: float = math.nan
    settle_method: str = ""
    settle_hours_lo: float = math.nan
    settle_hours_hi: float = math.nan
    settling: object = None     # the stormsim.settling.Settling: storms per block after a restart
    watchdog: float = math.nan
    notes: list = field(default_factory=list)
    durations_effort: str = ""
    by_class: list = field(default_factory=list)   # the fleet's ClassRows (plan_costs)
    recommendation: Recommendation | None = None    # with failures: the interval to use
    power: list | None = None     # with power: a plan_power.PowerRow per scenario

    def to_dict(self) -> dict:
        """The JSON's document: each field of PLAN_OUTPUTS, then ``rows``, one
        object per scenario with each field of ROW_OUTPUTS (an Interval as its
        fields; NaN as null)."""
        doc = {o.name: _plain(getattr(self, o.name)) for o in PLAN_OUTPUTS}
        doc["rows"] = [{o.name: _plain(getattr(r, o.name)) for o in ROW_OUTPUTS} for r in self.rows]
        return doc

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    def records(self) -> list[dict]:
        """One flat record per scenario and level (the CSV's rows): the
        columns of ``csv_columns()``, named as the API names them."""
        plan = {o.name: getattr(self, o.name) for o in PLAN_OUTPUTS if o.csv}
        out = []
        for r in self.rows:
            for j, k in enumerate(self.levels):
                rec = {"scenario": r.scenario, "change": r.change, "k": int(k)}
                for o in ROW_OUTPUTS[2:]:
                    v = getattr(r, o.name)
                    _flat(rec, o.name, v[j] if o.kind == "level" else v)
                out.append(rec | plan)
        return out

    def class_records(self) -> list[dict]:
        """One flat record per job class of the fleet (``class_columns()``)."""
        out = []
        for i, c in enumerate(self.by_class):
            rec = {"class": i + 1}
            for o in CLASS_OUTPUTS:
                _flat(rec, o.name, getattr(c, o.name))
            out.append(rec)
        return out

    def class_csv(self) -> str:
        """The per-class view as CSV (``stormsim plan --by-class --format csv``)."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=class_columns(), lineterminator="\n")
        w.writeheader()
        w.writerows(self.class_records())
        return buf.getvalue()

    def power_csv(self) -> str:
        """The power section as CSV (``stormsim plan --power --format csv``): a
        row per scenario, window and threshold (``plan_power.POWER_COLUMNS``);
        a header alone for a plan without power."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=POWER_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(power_records(self.power or []))
        return buf.getvalue()

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=csv_columns(), lineterminator="\n")
        w.writeheader()
        w.writerows(self.records())
        return buf.getvalue()

    def figure(self):
        """Storms per day against the level k, one line per scenario, with the
        simulated ones' 95 % intervals (matplotlib: the ``plots`` extra); a
        saturated level, whose storms do not end, is left out."""
        ys = {r.scenario: (np.where(r.regime == SATURATED, np.nan, r.storms_per_day),
                           np.where(r.method == "exact", np.nan, r.storms_per_day_lo),
                           np.where(r.method == "exact", np.nan, r.storms_per_day_hi))
              for r in self.rows}
        return series(self.levels, ys, xlabel="k: jobs writing at once (at least)",
                      ylabel="storms per day (bars: 95 % interval, simulated rows)", logy=True,
                      title="Storms per day, the fleet and each what-if",
                      xticklabels=[str(k) for k in self.levels])

    def to_frame(self):
        """The records as a pandas DataFrame (pandas: the ``data`` extra)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.records(), columns=csv_columns())

    def table(self, wide: bool = False, by_class: bool = False) -> str:
        """The text table: by default at most WIDTH (100) columns wide, storms
        with one line per scenario and level, then the costs, one line per
        scenario (in as many blocks as the width needs); ``wide``: one line
        per scenario with every number (``stormsim plan --wide``); ``by_class``:
        then the fleet's numbers per job class (``--by-class``). A number
        that could not be had prints as '-(a)', its reason in note (a)."""
        why = _Why()
        lines = _wide_lines(self, why) if wide else _narrow_lines(self, why)
        if by_class:
            lines += _class_lines(self, why)
        shown = power_lines(self.power or [], why)
        lines += shown
        notes = [_WIDE_NOTE.format(k=self.levels[-1], effort=self.durations_effort) if wide
                 else _NARROW_NOTE.format(effort=self.durations_effort),
                 _settle_note(self.settle_hours, self.settle_method, self.settle_hours_lo,
                              self.settle_hours_hi), *self.notes,
                 *(self.recommendation.lines() if self.recommendation is not None else [])]
        if shown:
            notes.append(POWER_NOTE)
        if len(self.by_class) > 1 and not by_class:
            notes.append(f"The fleet has {len(self.by_class)} job classes: stormsim plan --by-class "
                         "(FleetPlan.table(by_class=True)) shows each one's numbers.")
        notes += why.lines()
        return "\n".join(lines + [textwrap.fill(n, WIDTH, subsequent_indent="    "
                                                 if n.startswith("-(") else "")
                                   for n in notes])

    def __str__(self) -> str:
        return self.table()


#: The text table's width (columns), the wide layout aside.
WIDTH = 100

_COMMON_NOTE = (
    "checkpoint s: mean write duration, per write (firing to write end; exact where the law is, "
    "else simulated), alone in brackets; p99 s: its 99th percentile (simulated: {effort}); "
    "P(> watchdog): the share of writes longer than the watchdog; wait s: from a checkpoint "
    "falling due to its write starting (a writer cap's queue, an async WAIT), mean and 99th "
    "percentile; GPU lost: the share of each job's time its checkpoints cost, what contention "
    "adds in round brackets (exact rows) or its 95 % interval in square ones (simulated rows); "
    "blocked, slowed, queued: that time stopped for a blocking write or an async snapshot, lost "
    "to compute slowed by an async persist, stopped in a writer cap's queue or an async WAIT; "
    "stagger holds: median time to the first collision from a stagger launch. (exact): the "
    "product-form law, no sampling error; [lo, hi]: 95 % interval over independent fleets.")
_WIDE_NOTE = "storm s: mean storm duration at n_w >= {k}; " + _COMMON_NOTE
_NARROW_NOTE = (
    "k: k or more jobs writing at once (n_w >= k); storm s: mean storm duration; share of time: "
    "P(n_w >= k), the share of the time with k or more writing. " + _COMMON_NOTE)


class _Why:
    """The text table's reasons: each cell that has no number prints '-(a)',
    and (a) is one note line under the table, once per distinct reason."""

    def __init__(self):
        self.reasons: list[str] = []

    def __call__(self, reason: str) -> str:
        if reason not in self.reasons:
            self.reasons.append(reason)
        return f"-({_letter(self.reasons.index(reason))})"

    def lines(self) -> list[str]:
        return [f"-({_letter(i)}): {r}" for i, r in enumerate(self.reasons)]


def _letter(i: int) -> str:
    return chr(ord("a") + i) if i < 26 else f"z{i - 25}"


def _num(x: float, why: _Why | None = None, reason: str = "") -> str:
    return why(reason) if why is not None and math.isnan(x) else fmt_value(x, digits=3)


def _interval(x: Interval, why: _Why | None = None) -> str:
    return why(x.method) if why is not None and math.isnan(x.value) else \
        fmt_interval(x.value, x.lo, x.hi)


#: An exact number below float64's range (the law's log is finite: it is not
#: 0, and no storm is impossible; the JSON holds 0.0, its float).
UNDERFLOW = "< 1e-300"


def _storms_cell(r: PlanRow, j: int, why: _Why, k: int) -> str:
    if r.regime[j] == SATURATED:
        return f"{SATURATED} ({fmt_share(r.p_ge[j])} of the time)"
    if math.isnan(r.storms_per_day[j]) and r.method[j] != "budget":   # budget: in words
        return why(_reason(r, "storms_per_day", k))
    if r.method[j] == "exact" and r.storms_per_day[j] == 0.0:
        return f"{UNDERFLOW} (exact)"
    if r.method[j] not in ("exact", "cap") and r.storms_per_day[j] == 0.0 \
            and r.p_ge[j] >= SATURATED_SHARE:
        # no storm began or ended in the run: the level was never left (too few
        # fleets for the verdict "saturated" at 95 %, which rests on lower bounds)
        return f"never left in the run ({fmt_share(r.p_ge[j])} of the time)"
    return fmt_estimate(r.storms_per_day[j], r.storms_per_day_lo[j], r.storms_per_day_hi[j],
                        r.method[j])


def _reason(r: PlanRow, name: str, k: int | None = None) -> str:
    """Row ``r``'s reason for its NaN ``name`` (at level k), from ``r.reasons``."""
    head = f"{name}: " if k is None else f"{name} at k = {k}: "
    return next((x[len(head):] for x in r.reasons if x.startswith(head)), "not estimated")


def _duration_cell(r: PlanRow, j: int, why: _Why, k: int) -> str:
    if r.regime[j] == SATURATED:
        return SATURATED
    return _num(r.storm_duration[j], why, _reason(r, "storm_duration", k))


def _share_cell(r: PlanRow, j: int, why: _Why | None = None, k: int = 0) -> str:
    """P(n_w >= k) as a percentage; '< hi' where a simulation saw none."""
    if r.p_ge[j] == 0.0 and r.p_ge_hi is not None and r.p_ge_hi[j] > 0:
        return f"< {fmt_percent(r.p_ge_hi[j])}"
    if why is not None and math.isnan(r.p_ge[j]):
        return why(_reason(r, "p_ge", k))
    if r.p_ge[j] == 0.0 and r.method[j] == "exact":
        return UNDERFLOW
    return fmt_percent(r.p_ge[j])


def _stagger_cell(h: Interval, why: _Why | None = None) -> str:
    if math.isnan(h.value):
        return "-" if why is None else why(h.method)
    return f"{_num(h.value)} h [{_num(h.lo)}, {_num(h.hi)}]"


def _pct3(x: float) -> str:
    """A share as a percentage, 3 significant digits ('1.31%'; '> 99.99%' as fmt_share)."""
    return fmt_share(x) if x >= 0.995 else f"{100 * x:.3g}%"


def _pct(x: Interval, why: _Why) -> str:
    return why(x.method) if math.isnan(x.value) else _pct3(x.value)


def _lost_cell(r: PlanRow, why: _Why) -> str:
    """GPU lost: 'v (contention)' where exact, else 'v [lo, hi]' (v alone where lo = hi)."""
    g = r.gpu_lost_share
    if math.isnan(g.value):
        return why(g.method)
    if g.method == "exact":
        return f"{_pct3(g.value)} ({_pct3(r.contention_share)})"
    return _pct3(g.value) if g.lo == g.hi else f"{_pct3(g.value)} [{_pct3(g.lo)}, {_pct3(g.hi)}]"


def _parts_cell(r: PlanRow, why: _Why) -> str:
    return ", ".join(_pct(getattr(r, name), why) for name in
                     ("blocked_share", "slowed_share", "queued_share"))


def _mean_cell(r: PlanRow, name: str, why: _Why) -> str:
    """A mean: 'v' where exact (or its interval empty), else 'v [lo, hi]'."""
    v, lo, hi = (getattr(r, name + x) for x in ("", "_lo", "_hi"))
    if math.isnan(v):
        return why(_reason(r, name))
    return _num(v) if not lo < hi else f"{_num(v)} [{_num(lo)}, {_num(hi)}]"


def _checkpoint_cell(r: PlanRow, why: _Why) -> str:
    return f"{_mean_cell(r, 'checkpoint_seconds', why)} ({_num(r.lone_checkpoint_seconds)})"


def _wait_cell(r: PlanRow, why: _Why) -> str:
    return f"{_mean_cell(r, 'wait_mean', why)}, {_interval(r.wait_p99, why)}"


def _grid(head: list, rows: list) -> list[str]:
    """Columns two spaces apart, right-aligned."""
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(head)]
    return ["  ".join(c.rjust(w) for c, w in zip(line, widths)).rstrip() for line in [head, *rows]]


def _packed(key: tuple, columns: list) -> list[str]:
    """The key column (head, cells) beside each of ``columns`` (head, cells),
    as many beside it as fit WIDTH; a block per fit, a blank line between."""
    def width(col):
        return max(len(col[0]), *map(len, col[1]))
    blocks, used = [[]], width(key)
    for col in columns:
        if blocks[-1] and used + 2 + width(col) > WIDTH:
            blocks.append([])
            used = width(key)
        blocks[-1].append(col)
        used += 2 + width(col)
    out = []
    for block in blocks:
        head = [key[0], *(c[0] for c in block)]
        out += [*_grid(head, [list(x) for x in zip(key[1], *(c[1] for c in block))]), ""]
    return out


def _cost_columns(p: FleetPlan, why: _Why) -> list[tuple[str, list[str]]]:
    """The costs' columns (head, a cell per scenario)."""
    rs = p.rows
    return [("checkpoint s", [_checkpoint_cell(r, why) for r in rs]),
            (f"p{QUANTILE * 100:.0f} s", [_interval(r.checkpoint_p99, why) for r in rs]),
            (f"P(> {_num(p.watchdog)} s)", [_interval(r.over_watchdog, why) for r in rs]),
            ("GPU lost", [_lost_cell(r, why) for r in rs]),
            ("blocked, slowed, queued", [_parts_cell(r, why) for r in rs]),
            ("wait s: mean, p99", [_wait_cell(r, why) for r in rs]),
            ("stagger holds", [_stagger_cell(r.stagger_hours, why) for r in rs])] + (
        [("goodput [95% CI]", [_goodput_cell(r.goodput, why) for r in rs])]
        if any(r.goodput.method != NO_FAILURES for r in rs) else [])


def _goodput_cell(g: Interval, why: _Why) -> str:
    return why(g.method) if math.isnan(g.value) else f"{g.value:.4f} [{g.lo:.4f}, {g.hi:.4f}]"


def _narrow_lines(p: FleetPlan, why: _Why) -> list[str]:
    """Storms, one line per scenario and level; then the costs, one line per scenario."""
    storms = [[r.scenario if j == 0 else "", str(k), _storms_cell(r, j, why, k),
               _duration_cell(r, j, why, k), _share_cell(r, j, why, k)]
              for r in p.rows for j, k in enumerate(p.levels)]
    head = ["scenario", "k", "storms/day [95% CI]", "storm s", "share of time"]
    return [*_grid(head, storms), "",
            *_packed(("scenario", [r.scenario for r in p.rows]), _cost_columns(p, why))]


def _wide_lines(p: FleetPlan, why: _Why) -> list[str]:
    """The wide table: one line per scenario, every number on it."""
    head = ["scenario"] + [f"storms/day n_w>={k} [95% CI]" for k in p.levels] + ["storm s"]
    k = int(p.levels[-1])
    rows = [[r.scenario, *(_storms_cell(r, j, why, int(kj)) for j, kj in enumerate(p.levels)),
             _duration_cell(r, p.levels.size - 1, why, k)] for r in p.rows]
    for h, cells in _cost_columns(p, why):
        head.append(h)
        for row, c in zip(rows, cells):
            row.append(c)
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(head)]
    return ["  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [head, *rows]]


def _class_lines(p: FleetPlan, why: _Why) -> list[str]:
    """The fleet's numbers per job class (``table(by_class=True)``)."""
    def share(x: Interval) -> str:
        if math.isnan(x.value):
            return why(x.method)
        return _pct3(x.value) + ("" if x.method == "exact" else
                                 f" [{_pct3(x.lo)}, {_pct3(x.hi)}]")

    def value(x: Interval) -> str:
        if math.isnan(x.value):
            return why(x.method)
        return f"{_num(x.value)} (exact)" if x.method == "exact" else _interval(x)

    head = ["class", "jobs", "T s", "alone s", "checkpoint s", "stretch",
            f"p{QUANTILE * 100:.0f} s", "GPU lost"]
    rows = [[str(i + 1), str(c.jobs), f"{c.compute_interval:.6g}",
             f"{c.lone_checkpoint_seconds:.6g}",
             value(c.checkpoint_seconds), value(c.write_stretch), _interval(c.checkpoint_p99, why),
             share(c.gpu_lost_share)] for i, c in enumerate(p.by_class)]
    return ["The fleet by job class (jobs alike in every parameter): per write, checkpoint s is "
            "the mean write", "duration under contention, stretch that over its time alone; GPU "
            "lost per job of the class.", *_grid(head, rows), ""]


def _settle_note(hours: float, method: str, lo: float = math.nan, hi: float = math.nan) -> str:
    """The table's sentence on a synchronized restart (``settle_hours`` and its ends)."""
    if method.startswith(SATURATED):
        return ("After a synchronized restart, storms of n_w >= 2 do not settle into episodes: "
                f"the fleet is {method}, one storm from the restart on.")
    if math.isnan(hours):
        return (f"After a synchronized restart, the time for storms to settle within "
                f"{SETTLE_TOLERANCE:.0%} of their long-run rate (n_w >= 2): {method}.")
    top = "beyond the horizon" if math.isinf(hi) else fmt_value(hi, digits=3)
    ends = "" if math.isnan(lo) else f" [{fmt_value(lo, digits=3)}, {top}]"
    return (f"After a synchronized restart, storms settle within {SETTLE_TOLERANCE:.0%} of their "
            f"long-run rate (n_w >= 2) after about {fmt_value(hours, digits=3)} h{ends} "
            f"(the first block from which every block's rate stays within it; [the earliest, "
            f"the latest] the blocks' 95 % bands allow; {method}).")


def _scaled(fleet: Fleet, *, T=1.0, d=1.0, **options) -> Fleet:
    """The fleet with T (and its jitter, so that jitter stays a share of the
    interval) and d scaled, and any Fleet option replaced."""
    kw = dict(T=fleet.T * T, d=fleet.d * d, cap=fleet.cap, throughput=fleet.throughput,
              jitter=fleet.jitter * T, weights=fleet.weights,
              max_writers=fleet.max_writers, busy_power=fleet.busy_power,
              idle_power=fleet.idle_power)
    if np.any(fleet.is_async) and "checkpoint" not in options:
        kw.update(checkpoint=fleet.checkpoint.tolist(), snapshot=fleet.snapshot,
                  slowdown=fleet.slowdown, on_busy=fleet.on_busy.tolist())
    kw.update(options)
    return Fleet(**kw)


#: The async what-if's assumptions when none are given: a snapshot of 0 s
#: and no compute slowdown while the persist is in flight (its best case).
ASYNC_SNAPSHOT, ASYNC_SLOWDOWN = 0.0, 0.0


def _writer_caps(fleet: Fleet, max_writers) -> list[int]:
    """The K of the writer-cap what-ifs, sorted, each once: ``max_writers``
    (an integer, a sequence of them, or text such as '2,N/4'), each in 1..N;
    None: K = N // 4 (at least 1) where it caps more than the fleet does."""
    n = fleet.n_jobs
    if max_writers is None:
        k = max(1, n // 4)
        return [k] if k < fleet.max_writers else []
    rule = f"each K must be an integer in 1..N = {n}, 'N' or 'N/q' (K = ceil(N/q)), once each"
    try:
        if isinstance(max_writers, str):
            ks = {tail_level(x.strip(), n) for x in max_writers.split(",") if x.strip()}
            if not ks:
                raise SpecError("no K given")
            return sorted(ks)
        return check_levels("max_writers", [max_writers] if np.ndim(max_writers) == 0
                            else max_writers, n).tolist()
    except SpecError:
        raise SpecError(f"max_writers = {max_writers!r}: {rule}") from None


def _async_what_if(fleet: Fleet, snapshot: float, slowdown: float) -> Fleet:
    """Every job asynchronous: the blocking ones with ``snapshot`` and
    ``slowdown`` (and on_busy 'block'), the async ones with their own."""
    own = fleet.is_async
    return _scaled(fleet, checkpoint="async", snapshot=np.where(own, fleet.snapshot, snapshot),
                   slowdown=np.where(own, fleet.slowdown, slowdown),
                   on_busy=np.where(own, fleet.on_busy, "block").tolist())


def what_ifs(fleet: Fleet, *, max_writers=None, snapshot=ASYNC_SNAPSHOT,
             slowdown=ASYNC_SLOWDOWN) -> list[tuple[str, str, Fleet]]:
    """(name, change, fleet) for the fleet and each what-if.

    ``max_writers``: the writer caps K of the writer-cap rows, one row per K
    (an integer, a sequence of them or text such as '2,N/4'; each in 1..N);
    None: one row at K = N // 4 (at least 1) where it caps more than the
    fleet does. ``snapshot`` (s, or a time such as "10 s") and ``slowdown``
    (in [0, 1]): what the async row assumes for the jobs it makes
    asynchronous (default 0 and 0: a free snapshot and no slowdown while the
    persist is in flight, async's best case); jobs already async keep their
    own. A fleet whose jobs are all async has no async row, and refuses a
    snapshot or slowdown other than the defaults (they would change nothing).
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    caps = _writer_caps(fleet, max_writers)
    snapshot = time_seconds("snapshot", snapshot)
    slowdown = check_real("slowdown", slowdown, 0.0, 1.0, what="the async row's compute "
                          "slowdown while a persist is in flight")
    if np.all(fleet.is_async):
        for name, value, default in (("snapshot", snapshot, ASYNC_SNAPSHOT),
                                     ("slowdown", slowdown, ASYNC_SLOWDOWN)):
            if value != default:
                raise SpecError(f"{name} = {value!r}: an assumption of the async what-if, but "
                                "every job of the fleet is async already (no async row); the "
                                f"fleet's own {name} is its Fleet's")
    out = [("fleet", "as given", fleet),
           ("bandwidth x0.5", "half the fabric's bandwidth (writes twice as long)",
            _scaled(fleet, d=2.0)),
           ("bandwidth x2", "twice the bandwidth", _scaled(fleet, d=0.5)),
           ("interval x0.5", "checkpoint twice as often", _scaled(fleet, T=0.5)),
           ("interval x2", "checkpoint half as often", _scaled(fleet, T=2.0))]
    if not np.all(fleet.is_async):
        out.append(("async", "asynchronous checkpoints (the persist in the background), "
                    f"assuming a snapshot of {fmt_value(snapshot, digits=3)} s and a compute "
                    f"slowdown of {fmt_value(slowdown, digits=3)} while it is in flight",
                    _async_what_if(fleet, snapshot, slowdown)))
    for k in caps:
        change = (f"at most {k} checkpoints write at once (a queue)" if k < fleet.n_jobs
                  else f"no writer cap (all {k} jobs may write at once)")
        out.append((f"writers <= {k}", change, _scaled(fleet, max_writers=k)))
    return out


def _async_note(fleet: Fleet, snapshot: float, slowdown: float) -> str:
    """What the async row assumes, for the notes under the table."""
    return (f"async: every blocking job made asynchronous, assuming a snapshot of "
            f"{fmt_value(snapshot, digits=3)} s and a compute slowdown of "
            f"{fmt_value(slowdown, digits=3)} while its persist is in flight "
            f"(set them with snapshot= and slowdown=, on the command line --snapshot and "
            f"--slowdown" + ("; jobs already async keep their own)" if np.any(fleet.is_async)
                             else ")"))


def _costs(fleet: Fleet, risk_method: str, law=None) -> tuple[float, float, float, float, str]:
    """(mean checkpoint s, alone, GPU writing share, contention's part, method).

    Both checkpoint means are per write: each job's weighted by its checkpoint
    rate (the law's, where it applies; else its rate alone, 1 / (T_i + d_i)),
    so that a mixed fleet's "alone" is the same average as its mean. The GPU
    shares are per job."""
    if exact_applies(fleet, "random"):
        law = stationary(fleet) if law is None else law
        lam = np.asarray(law.checkpoint_rate)
        lone = float(np.sum(lam * fleet.d) / np.sum(lam))
        mean = float(np.sum(lam * law.mean_write_duration) / np.sum(lam))
        share = float(np.mean(law.writing_probability))
        lone_share = float(np.mean(fleet.d / (law.mean_compute + fleet.d)))
        return mean, lone, share, share - lone_share, "exact"
    alone = 1.0 / (fleet.T + fleet.d)
    return math.nan, float(np.sum(alone * fleet.d) / np.sum(alone)), math.nan, math.nan, risk_method


#: The events of the timed run that measures a scenario's cost per event
#: (``_Budget.speed``): ~10 ms at N = 12, ~30 ms at N = 5000.
CALIBRATION_EVENTS = 500_000
#: What a budget could not buy, in words (never a bare number).
NOT_IN_BUDGET = "not estimated in the budget"


def _effort(n_jobs: int, seconds: float, fleets: int, cycles: int, least: tuple[int, int],
            cut_cycles_first: bool = False) -> tuple[int, int] | None:
    """(fleets, cycles), at most ``fleets`` x ``cycles``, that ``engine.cost.run_seconds``
    says one core runs in ``seconds``: all of it if affordable, else fewer fleets
    then fewer cycles (``cut_cycles_first``: the other way round), each down to
    ``least``; None where even ``least`` costs more."""
    afford = seconds / run_seconds(n_jobs, 1, 1)            # fleet-cycles
    if fleets * cycles <= afford:
        return fleets, cycles
    if cut_cycles_first:
        c = max(least[1], int(afford // fleets))
        f = max(least[0], min(fleets, int(afford // c)))
    else:
        f = max(least[0], min(fleets, int(afford // cycles)))
        c = max(least[1], min(cycles, int(afford // f)))
    return (f, c) if f * c <= afford else None


def _batch(n_jobs: int, cycles: int) -> int:
    """Fleets per kernel call: about BATCH_EVENTS events, so Ctrl-C and the
    clock are heard every half second or so (results do not depend on it)."""
    return max(1, int(BATCH_EVENTS // run_events(n_jobs, 1, cycles)))


@dataclass(frozen=True)
class PlanStep:
    """What ``plan(progress=...)`` is told as each stage starts: the scenario
    (or "settling"), the stage, and the seconds spent of the budget."""

    scenario: str
    stage: str
    seconds: float
    max_seconds: float

    def __str__(self) -> str:
        return (f"stormsim plan: {self.scenario}: {self.stage} ({self.seconds:.1f} s of "
                f"{self.max_seconds:g} s)")


class _Budget:
    """plan's clock: its named shares (BUDGET_SHARES) and its progress."""

    def __init__(self, max_seconds: float, progress, failures: bool = False):
        self.max_seconds, self.progress, self.failures = max_seconds, progress, failures
        self.t0 = time.perf_counter()

    def share(self, name: str, among: int = 1) -> float:
        """A named share of the budget (BUDGET_SHARES; with failures, "goodput"
        is GOODPUT_SHARE and the others shrink in proportion), split ``among``."""
        if name == "goodput":
            part = GOODPUT_SHARE
        else:
            part = BUDGET_SHARES[name] * ((1.0 - GOODPUT_SHARE) if self.failures else 1.0)
        return self.max_seconds * part / max(1, among)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    @staticmethod
    def speed(fleet: Fleet) -> float:
        """This fleet's cost per event over ``engine.cost``'s estimate (at least
        1: the benchmark is held constant past N = 1024, where events cost more,
        and a general kernel costs more): a warm-up call, then a run of about
        CALIBRATION_EVENTS events, timed. Every size below divides by it."""
        simulate(fleet, fleets=1, cycles=1, seed=0)          # the kernel loaded
        cycles = max(2, int(CALIBRATION_EVENTS // run_events(fleet.n_jobs, 1, 1)))
        t = time.perf_counter()
        run = simulate(fleet, fleets=1, cycles=cycles, seed=0)
        took = time.perf_counter() - t
        return max(1.0, took / (float(run.events.sum()) * seconds_per_event(fleet.n_jobs)))

    def step(self, scenario: str, stage: str) -> None:
        if self.progress is not None:
            self.progress(PlanStep(scenario, stage, self.elapsed(), self.max_seconds))


def _durations(fleet: Fleet, seed: int, watchdog: float, seconds: float = math.inf,
               ramps: tuple | None = None) -> dict:
    """Mean and QUANTILE of write durations (s), P(a write > watchdog) and the
    waits, from DURATION_FLEETS fleets (intervals over fleets: stats.durations),
    fewer where ``seconds`` cannot buy them (``_effort``; "effort" says what
    ran), NOT_IN_BUDGET where it cannot buy DURATION_LEAST; NaN where the
    jobs differ in d (the histogram is then in multiples of d_i). With
    ``ramps`` the same run records the power drops (plan_power)."""
    effort = _effort(fleet.n_jobs, seconds, DURATION_FLEETS, DURATION_CYCLES, DURATION_LEAST)
    if effort is None:
        none = Interval(math.nan, math.nan, math.nan, NOT_IN_BUDGET)
        return {"mean": none, "p99": none, "over": none, "wait_mean": none,
                "wait_p99": none, "effort": None, "run": None}
    fleets, cycles = effort
    run = simulate(fleet, fleets=fleets, cycles=cycles, burn_in=min(DURATION_BURN_IN, cycles // 10),
                   seed=seed, batch_size=_batch(fleet.n_jobs, cycles), ramps=ramps)
    none = Interval(math.nan, math.nan, math.nan, f"{MIXED} write durations in multiples of "
                    "its own lone time d_i, and the d_i differ (plan --by-class: the means per "
                    "class)")
    out = {"mean": durations.mean(run), "p99": none, "over": none,
           "wait_mean": durations.mean(run, "wait"), "effort": effort, "run": run,
           "wait_p99": Interval(math.nan, math.nan, math.nan, f"{MIXED} waits in multiples "
                                "of its own interval T_i, and the T_i differ")}
    if np.all(fleet.d == fleet.d[0]):
        out["p99"] = durations.quantile(run, QUANTILE)
        edges = durations.checkpoints(run).edges
        if watchdog <= edges[-1]:
            out["over"] = durations.exceedance(run, watchdog)
        elif float(np.max(run.durations_max)) < watchdog:
            # past the histogram's last edge, and no write that long: none seen,
            # a one-sided bound over the checkpoints counted
            n = int(np.sum(run.durations_count))
            out["over"] = Interval(0.0, 0.0, 1.0 - (1.0 - CONFIDENCE) ** (1.0 / max(n, 1)),
                                   f"no write of {n} that long: one-sided bound")
        else:
            out["over"] = Interval(math.nan, math.nan, math.nan,
                                   "not estimated: the watchdog is past the histogram's last edge")
    if np.all(fleet.T == fleet.T[0]):
        w = durations.quantile(run, QUANTILE, "wait")
        # in the histogram's first bin, which holds the waits of 0: at most its edge
        out["wait_p99"] = w if w.lo > 0 else Interval(0.0, 0.0, w.hi, w.method, unit=w.unit)
    return out


def _means(exact: float | None, dur: dict) -> dict:
    """PlanRow's checkpoint_seconds and wait_mean with their interval ends: the
    law's mean where ``exact`` (ends equal to it), else the durations run's
    (a ratio over fleets; a wait of 0 seen everywhere is exactly 0)."""
    m, w = dur["mean"], dur["wait_mean"]
    if exact is not None:
        m = Interval(exact, exact, exact, "exact")
    out = {"checkpoint_seconds": m.value, "checkpoint_seconds_lo": m.lo,
           "checkpoint_seconds_hi": m.hi, "wait_mean": w.value}
    out["wait_mean_lo"], out["wait_mean_hi"] = (w.lo, w.hi) if w.value != 0 else (0.0, 0.0)
    return out


#: Why a mixed fleet has no quantile of its durations or waits.
MIXED = "not estimated for a mixed fleet: the simulation pools every job's"


def _reasons(row: PlanRow, f: Fleet, ks: np.ndarray, lost: str) -> tuple[str, ...]:
    """'field: why' for each NaN field of ``row`` (``lost``: the durations run's
    reason, where it did not run)."""
    out = []
    for name in ("storms_per_day", "storm_duration", "p_ge"):
        for j in np.flatnonzero(np.isnan(getattr(row, name))):
            out.append(f"{name} at k = {ks[j]}: {_level_reason(row, f, ks, j)}")
    for name in ("checkpoint_seconds", "wait_mean"):
        if math.isnan(getattr(row, name)):
            out.append(f"{name}: {lost}")
    why = law_reason(f)
    for name in ("writing_share", "contention_share"):
        if math.isnan(getattr(row, name)):
            out.append(f"{name}: exact only, and {why} (gpu_lost_share is simulated)")
    for o in ROW_OUTPUTS:
        v = getattr(row, o.name)
        if o.kind == "interval" and math.isnan(v.value):
            out.append(f"{o.name}: {v.method}")
    return tuple(out)


def _level_reason(row: PlanRow, f: Fleet, ks: np.ndarray, j: int) -> str:
    """Why level ``ks[j]``'s storm numbers are NaN."""
    if row.method[j] == "cap":
        return f"no storm: the writer cap lets at most {f.max_writers} write at once"
    if row.method[j] == "budget":
        return f"{NOT_IN_BUDGET} (the storm risk)"
    if row.storms_per_day[j] == 0.0:
        return "no storm seen in the simulation (storms_per_day_hi bounds their rate)"
    return "not estimated"


def _bounds(risk, capped: np.ndarray, n_levels: int) -> dict:
    """The interval ends of P(n_w >= k) (0 where a writer cap rules the level
    out) and of the mean storm duration, per level (PlanRow's ``*_lo``, ``*_hi``;
    NaN where no storm risk fitted in the budget, ``risk`` None)."""
    names = ("p_ge_lo", "p_ge_hi", "storm_duration_lo", "storm_duration_hi")
    out = {name: (np.full(n_levels, math.nan) if risk is None else
                  np.array(getattr(risk, name), dtype=np.float64)) for name in names}
    out["p_ge_lo"][capped] = out["p_ge_hi"][capped] = 0.0
    return out


def _lone_cycle(fleet: Fleet) -> float:
    """The longest lone cycle max_i (T_i + d_i) (s): a job's compute and write alone."""
    return float(np.max(fleet.T + fleet.d))


def _regimes(risk, capped: np.ndarray, fleet: Fleet) -> np.ndarray:
    """Per level, SATURATED or EPISODES (``stats.stationary.saturated``) on the
    lower bounds of P(n_w >= k) and of the mean storm duration (the exact
    values where the law gives them). Where a simulation saw no storm begin,
    the duration's bound is P's lower bound over the rate's upper one (a
    storm lasts P(n_w >= k) / nu_k); a level a writer cap rules out is no storm."""
    p_lo = np.where(capped, 0.0, np.asarray(risk.p_ge_lo, dtype=np.float64))
    d_lo = np.asarray(risk.storm_duration_lo, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_lo = np.where(np.isnan(d_lo), p_lo / np.asarray(risk.storms_per_s_hi, dtype=np.float64), d_lo)
    return np.where(saturated(p_lo, d_lo, _lone_cycle(fleet)), SATURATED, EPISODES)


def _regime_notes(rows: list, ks: np.ndarray, n: int) -> list[str]:
    """The table's notes on the load and saturated levels: none where every
    scenario's load allows a collision-free stagger and no level is saturated."""
    top = n / (n - 1) if n > 1 else math.inf
    sat = [f"{r.scenario} at n_w >= {', '.join(map(str, ks[r.regime == SATURATED]))}"
           for r in rows if np.any(r.regime == SATURATED)]
    if not sat and all(r.load <= top for r in rows):
        return []
    loads = ", ".join(f"{r.load:.3g} ({r.scenario})" for r in rows)
    out = [f"Load (the sum of d_i / T_i, write time asked per second of compute): {loads}; "
           f"above N/(N-1) = {top:.6g} identical uncapped jobs cannot be staggered without "
           "collisions."]
    if sat:
        out.append(f"{SATURATED}: {'; '.join(sat)}: k or more jobs write at least "
                   f"{SATURATED_SHARE:.0%} of the time, in storms that outlast a job's whole cycle "
                   "(T + d alone). The storm is the fabric's usual state: storms per day would "
                   "count the rare ends of calms and read as 'no storms' (the JSON and CSV keep "
                   "those numbers, with regime 'saturated').")
    return out


def _stagger(fleet: Fleet, seed: int, seconds: float = math.inf) -> Interval:
    """Median hours to the first collision from a stagger launch, with its
    interval: STAGGER_FLEETS fleets up to STAGGER_CYCLES cycles, the cap cut
    (then the fleets) to what ``seconds`` buys at the full cap's cost (fleets
    that outlast the cap are censored: the interval says so, hi = inf where
    it cannot bound the median); NOT_IN_BUDGET where it buys less than STAGGER_LEAST."""
    if not fleet.is_identical:
        return Interval(math.nan, math.nan, math.nan, "no stagger: the jobs differ (a stagger "
                        "launch spaces identical jobs)")
    try:
        stagger_theta(fleet)
    except SpecError:                   # no collision-free stagger (a high load)
        return Interval(math.nan, math.nan, math.nan, "no collision-free stagger: at this load "
                        "the writes cannot all fit apart in a cycle")
    effort = _effort(fleet.n_jobs, seconds, STAGGER_FLEETS, STAGGER_CYCLES, STAGGER_LEAST,
                     cut_cycles_first=True)
    if effort is None:
        return Interval(math.nan, math.nan, math.nan, NOT_IN_BUDGET)
    fleets, cycles = effort
    run = simulate(fleet, launch="stagger", fleets=fleets, cycles=cycles, seed=seed,
                   passage_level=2, batch_size=_batch(fleet.n_jobs, cycles))
    out = time_to_passage(run, unit="h")
    if cycles < STAGGER_CYCLES and not np.all(run.passed):    # the budget's cap censored some
        out = replace(out, method=f"{out.method}; cycle cap {cycles} (the budget's)")
    return out


def _plan_levels(levels, n: int) -> np.ndarray:
    """The levels k of the table: those asked, or by default 2, N/4 and N/2
    resolved for this N to the distinct ones >= 2 (a level 1 is no storm)."""
    if n < 2:
        raise SpecError("fleet has 1 job: no storm of 2 writers is possible with one job "
                        "(a storm is 2 or more jobs writing at once); plan a fleet of 2 or "
                        "more jobs")
    if not (isinstance(levels, tuple) and levels == DEFAULT_LEVELS):
        return check_levels("levels", levels, n, text=True)
    return np.array(sorted({tail_level(k, n) for k in DEFAULT_LEVELS} - {1}), dtype=np.int64)


def _scenarios(fleet: Fleet, what_if: bool, options: dict) -> tuple[list, list]:
    """(scenarios, notes): ``what_ifs(fleet, **options)`` and what its async
    row assumes, or the fleet alone without ``what_if`` (then an option away
    from its default is refused: it would change nothing)."""
    scenarios = what_ifs(fleet, **options)           # the options checked either way
    snapshot = time_seconds("snapshot", options["snapshot"])
    slowdown = float(options["slowdown"])
    if not what_if:
        given = {"max_writers": options["max_writers"] is not None,
                 "snapshot": snapshot != ASYNC_SNAPSHOT, "slowdown": slowdown != ASYNC_SLOWDOWN}
        for name in (name for name, on in given.items() if on):
            raise SpecError(f"{name} = {options[name]!r}: an option of the what-if rows, but "
                            "what_if = False (the fleet alone)")
        return scenarios[:1], []
    if any(name == "async" for name, _, _ in scenarios):
        return scenarios, [_async_note(fleet, snapshot, slowdown)]
    return scenarios, []


def plan(fleet: Fleet, levels=DEFAULT_LEVELS, *, what_if: bool = True, watchdog=600.0,  # noqa: PLR0913 (the operator's options, keyword-only)
         max_seconds: float = 60.0, seed: int = 0, max_writers=None, snapshot=ASYNC_SNAPSHOT,
         slowdown=ASYNC_SLOWDOWN, mtbf=None, restart=None, outage_mtbf=None, drops=None,
         progress=None) -> FleetPlan:
    """The operator's table for ``fleet`` and, with ``what_if``, each change.

    Parameters
    ----------
    fleet : Fleet
        The fleet, in seconds (``Fleet.from_jobs``, ``Fleet.from_csv``).
    levels : sequence of int or str, optional
        The levels k: integers, 'N' or 'N/q'. Default: 2, N/4 and N/2, the
        distinct ones >= 2 for this N (N = 2 to 4: 2 alone; a fleet of one
        job, which has no storm, raises a SpecError).
    what_if : bool, optional
        Add the what-if rows (``what_ifs``); default True.
    watchdog : float or str, optional
        Seconds, or a time such as "10 min": the share of writes longer than
        this is reported. Default 600 s, a common collective timeout past
        which a blocking save can kill a training run.
    max_seconds : float, optional
        The time budget of the whole plan (default 60), split in named shares
        (BUDGET_SHARES): the storm risk of the scenarios without an exact law
        (each at most an eighth of the budget), the checkpoint durations and
        stagger runs of every scenario, and the settling after a restart (with
        what the rest left over). Each simulation is sized from its share
        before it runs (``engine.cost``); what a share cannot buy is said in
        words ("not estimated in the budget"), and ``notes`` say what the
        budget bought.
    seed : int, optional
        The seed of every simulation: results are a function of it and the
        inputs, and of the time budget where a level is simulated.
    max_writers : int, sequence of int or str, optional
        The writer caps K of the writer-cap rows, one row per K: an integer,
        a sequence of them or text such as "2,N/4", each in 1..N. None
        (default): one row at K = N // 4 where it caps more than the fleet
        does.
    snapshot : float or str, optional
        What the async row assumes for the jobs it makes asynchronous: the
        snapshot's time (s, or a time such as "10 s"); default 0. Stated in
        ``notes``.
    slowdown : float, optional
        What the async row assumes: the compute slowdown while the persist is
        in flight, in [0, 1]; default 0 (async's best case). Stated in
        ``notes``.
    mtbf, restart, outage_mtbf : float or str, optional
        Failures (MODEL.md E8): every job's mean time between failures and
        restart time, and the mean time between outages of the whole fleet
        (s, or a time such as "24 h"); default: the fleet's own (a job
        table's ``mtbf`` and ``restart`` columns), else none. With failures
        every row gets its simulated ``goodput`` and the plan a
        ``recommendation``: the checkpoint interval to use
        (``stormsim.checkpointing.recommend``). The storms stay the long
        run's, without failures.
    drops : sequence or str, optional
        For a fleet with power (MODEL.md E6: busy_power and idle_power, or
        gpus, gpu_power and gpu_idle_power): the thresholds X of the power
        drops counted, powers ("1 MW", or W as numbers; text such as
        "1MW,5MW"). Default: the largest job's drop and a quarter and a half
        of the fleet's swing (``plan_power.default_thresholds``). Each row
        then has its mean draw and its drops of X or more within 1 s and
        60 s per day (``power``).
    progress : callable, bool or None, optional
        ``progress(step)`` as each stage starts (a ``PlanStep``: scenario,
        stage, seconds spent, the budget; ``str(step)`` is a line); True: that
        line on stderr; False or None (default): none.

    Returns
    -------
    FleetPlan
        ``levels`` (the k asked, sorted); ``rows``, one per scenario (the
        fleet first, then each what-if): storms per day with their 95 %
        intervals, mean storm durations and time shares per level, each
        level's ``method`` ("exact", "plain", "splitting", or "cap" where a
        writer cap keeps the level out of reach), checkpoint durations and
        waits with the share over ``watchdog`` (means per write, with their
        intervals where simulated), the GPU time the checkpoints cost per
        job (``gpu_lost_share``: blocked, slowed, queued) and how long a
        stagger holds; ``reasons``, why each number a row lacks (NaN) is
        missing; ``by_class``, the fleet per job class (``ClassRow``: count,
        lone and contended write time per write, stretch, p99, GPU lost);
        ``settle_hours`` after a synchronized restart, with
        ``settle_hours_lo`` and ``_hi``, and ``settling``, its storms per block
        at each level (``stormsim.settling.Settling``; ``settling.table()``);
        with failures (``mtbf``) each row's ``goodput`` and the plan's
        ``recommendation`` (``checkpointing.Recommendation``); with power,
        ``power``, a ``plan_power.PowerRow`` per scenario (mean draw, drops
        per day per window and threshold, with their intervals);
        ``notes`` on levels left unresolved, and on the load and the saturated levels where a
        scenario's load exceeds N/(N-1) or a level is saturated. Each row's
        ``regime`` says per level whether storms are episodes or the level
        is saturated (almost never left: its storm rate counts the rare ends
        of calms), and ``load`` is sum_i d_i / T_i. Times in seconds and
        hours, rates per day.

    Raises
    ------
    SpecError
        ``fleet`` is not a Fleet (or has one job, with the default levels),
        or ``levels``, ``what_if``, ``watchdog``, ``max_seconds``, ``seed``,
        ``max_writers``, ``snapshot``, ``slowdown``, ``mtbf``, ``restart`` or
        ``outage_mtbf`` or ``drops`` breaks its rule (named
        with the value and the rule; a what-if option with ``what_if``
        False); or a scenario needs more memory than this machine has.
    """
    if not isinstance(fleet, Fleet):
        raise SpecError(f"fleet = {fleet!r}: must be a stormsim.Fleet (build one with "
                        "stormsim.Fleet.from_jobs or Fleet.from_csv)")
    seed = check_int("seed", seed, 0)
    max_seconds = check_real("max_seconds", max_seconds, 0.0, open_lo=True, what="a time budget, s")
    what_if = check_flag("what_if", what_if)
    watchdog = time_seconds("watchdog", watchdog, positive=True)
    progress = check_progress("progress", progress, stderr_line_of)
    ks = _plan_levels(levels, fleet.n_jobs)
    failing, fleet = _failures(fleet, mtbf, restart, outage_mtbf)
    ramps = ramps_for(fleet, _drops(fleet, drops))
    clock = _Budget(float(max_seconds), progress, failures=failing is not None)
    scenarios, notes = _scenarios(fleet, what_if, dict(max_writers=max_writers,
                                                       snapshot=snapshot, slowdown=slowdown))
    simulated = sum(not exact_applies(f, "random") for _, _, f in scenarios)
    risk_each = min(max_seconds * SCENARIO_SHARE, clock.share("risk", simulated))
    rows, bought = [], {"risk": [], "durations": [], "stagger": []}
    for i, (name, change, f) in enumerate(scenarios):
        where = f"{name} ({i + 1}/{len(scenarios)})"
        row, unresolved = _row(name, change, f, ks, seed, watchdog, risk_each, clock, where,
                               len(scenarios), bought, failing, ramps)
        rows.append(row)
        if unresolved is not None:
            notes.append(unresolved)
    notes += _regime_notes(rows, ks, fleet.n_jobs)
    chosen = _recommendation(failing, seed, clock, len(scenarios), notes)
    clock.step("settling", "after a synchronized restart")
    settling = restart_storms(fleet, ks, seed=seed, max_seconds=max(
        clock.share("settle"), max_seconds - clock.elapsed()), progress=None if progress is None
        else (lambda text: clock.step("settling", text)))
    settle, how = settling.hours(2), settling.method
    notes += outage_note(failing, (bought.get("power") or [None])[0])
    notes += _budget_note(max_seconds, clock.elapsed(), bought, how)
    return FleetPlan(levels=ks, rows=rows, seconds=clock.elapsed(), settle_hours=settle.value,
                     settle_method=how, settle_hours_lo=settle.lo, settle_hours_hi=settle.hi,
                     settling=settling, watchdog=watchdog, notes=notes,
                     durations_effort=_effort_text(bought["durations"]),
                     by_class=bought.get("by_class", []), recommendation=chosen,
                     power=bought.get("power"))


def _drops(fleet: Fleet, drops) -> tuple | None:
    """plan's ``drops``, checked: thresholds in W (None: the defaults)."""
    if drops is None:
        return None
    if not fleet.has_power:
        raise SpecError(f"drops = {drops!r}: the fleet has no power (busy_power and idle_power, "
                        "or gpus, gpu_power and gpu_idle_power)")
    given = drops
    if isinstance(drops, str):
        drops = [x.strip() for x in drops.split(",") if x.strip()]
    elif np.ndim(drops) == 0:
        drops = [drops]
    drops = [f"{float(x)!r} W" if isinstance(x, Real) and not isinstance(x, bool) else x
             for x in drops]
    if not drops:
        raise SpecError(f"drops = {given!r}: give at least one threshold, e.g. '1MW,5MW'")
    values = magnitudes("drops", drops, "power", "watt", "positive")
    return tuple(sorted({float(x) for x in values}))


def _failures(fleet: Fleet, mtbf, restart, outage_mtbf) -> tuple[Fleet | None, Fleet]:
    """(the fleet with its failures, None where it never fails; the fleet
    without them, whose long run the storms are)."""
    changes = {name: time_seconds(name, value, positive=name != "restart")
               for name, value in (("mtbf", mtbf), ("restart", restart),
                                   ("outage_mtbf", outage_mtbf)) if value is not None}
    failing = fleet.replace(**changes)
    if not failing.has_failures:
        if changes:
            raise SpecError(f"restart = {restart!r}: a restart time without failures; give mtbf "
                            "(or outage_mtbf) too")
        return None, fleet
    return failing, fleet.replace(mtbf=math.inf, restart=0.0, outage_mtbf=math.inf)


def _recommendation(failing: Fleet | None, seed: int, clock: _Budget, among: int,
                    notes: list) -> Recommendation | None:
    """With failures, the recommended interval (``checkpointing.recommend``) in
    two shares of the goodput budget; else None (a note says why where failing)."""
    if failing is None:
        return None
    clock.step("fleet", "the best checkpoint interval")
    effort = _effort(failing.n_jobs, clock.share("goodput", among + 2), GOODPUT_FLEETS,
                     GOODPUT_CYCLES, GOODPUT_LEAST)
    if effort is None:
        notes.append(f"Checkpoint interval: {NOT_IN_BUDGET} (its goodput runs).")
        return None
    try:
        return recommend(failing, seed, *effort)
    except SpecError as exc:
        notes.append(f"Checkpoint interval: not recommended: {exc}")
        return None


def _effort_text(efforts: list) -> str:
    """The durations runs' effort, as they ran: 'F fleets x C cycles' (ranges
    where the budget cut some scenarios' runs), or what it could not buy."""
    got = [e for e in efforts if e is not None]
    span = lambda xs: f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)} to {max(xs)}"  # noqa: E731
    text = (f"{span([e[0] for e in got])} fleets x {span([e[1] for e in got])} cycles"
            if got else "")
    if len(got) < len(efforts):
        text += ("; " if text else "") + f"{NOT_IN_BUDGET} for {len(efforts) - len(got)} of " \
            f"{len(efforts)} scenarios"
    return text


def stderr_line_of(step) -> None:
    """plan's progress=True: the step's line on stderr."""
    stderr_line(str(step))


def _full_effort_is_cheap(f: Fleet, clock: _Budget, among: int) -> bool:
    """Whether the durations' and stagger runs' full efforts cost under a tenth
    of their shares at the benchmarked cost (then no calibration is needed)."""
    return (run_seconds(f.n_jobs, DURATION_FLEETS, DURATION_CYCLES)
            < clock.share("durations", among) / 10
            and run_seconds(f.n_jobs, STAGGER_FLEETS, STAGGER_CYCLES)
            < clock.share("stagger", among) / 10)


def _risk_effort(f: Fleet, seconds: float) -> dict | None:
    """storm_risk's cycles and batch for ``seconds``: its defaults where
    MIN_BATCHES of them fit in half of it (a function of the inputs alone),
    else batches of a quarter of it (``_effort`` down to RISK_LEAST); None
    where even that is too dear."""
    batch = default_batch(f.n_jobs, RISK_CYCLES)
    if exact_applies(f, "random") or run_seconds(f.n_jobs, 2 * batch, RISK_CYCLES) <= seconds / 2:
        return {}
    effort = _effort(f.n_jobs, seconds / 4, batch, RISK_CYCLES, RISK_LEAST)
    if effort is None:
        return None
    return {"batch_fleets": effort[0], "cycles": effort[1], "burn_in": RISK_BURN_IN}


def _row_goodput(f: Fleet, failing: Fleet | None, seed: int, seconds: float) -> Interval:
    """A scenario's goodput with ``failing``'s failures (each job's mtbf and
    restart, the outages): simulated, or why not."""
    if failing is None:
        return Interval(math.nan, math.nan, math.nan, NO_FAILURES)
    effort = _effort(f.n_jobs, seconds, GOODPUT_FLEETS, GOODPUT_CYCLES, GOODPUT_LEAST)
    if effort is None:
        return Interval(math.nan, math.nan, math.nan, f"{NOT_IN_BUDGET} (the goodput run)")
    g = f.replace(mtbf=failing.mtbf, restart=failing.restart, outage_mtbf=failing.outage_mtbf)
    try:
        return simulated_goodput(g, seed, *effort)[0]
    except SpecError as exc:   # e.g. failures too frequent to commit: the engine says why
        return Interval(math.nan, math.nan, math.nan, f"not simulated: {exc}")


def _row(name, change, f, ks, seed, watchdog, risk_each, clock, where, among, bought,  # noqa: PLR0913 (one scenario's inputs)
         failing=None, ramps=None):
    """One scenario's PlanRow, and its note on levels left unresolved (or None)."""
    day = SECONDS_PER_DAY / seconds("s")
    capped = ks > f.max_writers          # a writer cap: never more writers than K
    slow = 1.0 if exact_applies(f, "random") and _full_effort_is_cheap(f, clock, among) \
        else clock.speed(f)
    effort = _risk_effort(f, risk_each / slow)
    if effort is None:
        risk = None
        nan = np.full(ks.size, math.nan)
        rate, lo, hi, method = nan.copy(), nan.copy(), nan.copy(), np.full(ks.size, "budget")
        duration, p_ge, regime = nan, nan, np.full(ks.size, EPISODES)
        bought["risk"].append(f"{name}: {NOT_IN_BUDGET}")
    else:
        clock.step(where, "storm risk" + ("" if exact_applies(f, "random")
                                          else f" (up to {risk_each:.2g} s)"))
        # What-ifs beyond the base model (async, weights, a writer cap) stay on
        # plain Monte Carlo: splitting them is new, and the plan's regimes read
        # plain Monte Carlo's one-sided bounds (a saturated capped fleet split
        # reads "episodes"); the base model as storm_risk chooses.
        risk = storm_risk(f, ks, max_seconds=risk_each, seed=seed, **effort,
                          method="auto" if f.is_anonymous else "plain")
        method = np.asarray(risk.level_method, dtype=str)
        rate, lo, hi = (np.array(a, dtype=np.float64)
                        for a in (risk.storms_per_s, risk.storms_per_s_lo, risk.storms_per_s_hi))
        duration = np.asarray(risk.storm_duration, dtype=np.float64)
        p_ge, regime = risk.p_ge, _regimes(risk, capped, f)
        if method[0] != "exact":
            cycles = risk.fleet_cycles // max(risk.fleets, 1)
            bought["risk"].append(f"{name}: {risk.fleets} fleets x {cycles} cycles in "
                                  f"{risk.wall_seconds:.2g} s")
    rate[capped], lo[capped], hi[capped], method[capped] = 0.0, 0.0, 0.0, "cap"
    law = stationary(f) if exact_applies(f, "random") else None
    mean, lone, share, contention, how = _costs(f, str(method[0]), law)
    clock.step(where, "checkpoint durations")
    dur = _durations(f, seed, watchdog, clock.share("durations", among) / slow,
                     ramps if f.has_power else None)
    bought["durations"].append(dur["effort"])
    lost = f"{NOT_IN_BUDGET} (the checkpoint durations' run)"
    if ramps is not None:
        bought.setdefault("power", []).append(power_row(name, f, dur["run"], law is not None, lost))
    shares = gpu_shares(f, law, dur["run"], lost)
    clock.step(where, "stagger")
    stagger = _stagger(f, seed, clock.share("stagger", among) / slow)
    bought["stagger"].append(stagger.method)
    if failing is not None:
        clock.step(where, "goodput with failures")
    good = _row_goodput(f, failing, seed, clock.share("goodput", among + 2) / slow)
    row = PlanRow(
        scenario=name, change=change, storms_per_day=rate * day,
        storms_per_day_lo=lo * day, storms_per_day_hi=hi * day, storm_duration=duration,
        p_ge=np.where(capped, 0.0, p_ge), method=method,
        **_means(mean if how == "exact" else None, dur),
        lone_checkpoint_seconds=lone, checkpoint_p99=dur["p99"], over_watchdog=dur["over"],
        wait_p99=dur["wait_p99"], writing_share=share,
        contention_share=contention, stagger_hours=stagger, cost_method=how,
        regime=regime, load=float(np.sum(f.d / f.T)), **_bounds(risk, capped, ks.size), **shares,
        goodput=good)
    row = replace(row, reasons=_reasons(row, f, ks, NOT_IN_BUDGET if dur["effort"] is None
                                        else ""))
    if name == "fleet":
        bought["by_class"] = class_rows(f, law, dur["run"], row.checkpoint_p99, lost)
    if risk is None:
        return row, f"{name}: storms per day {NOT_IN_BUDGET} (a storm risk of N = {f.n_jobs} " \
                    f"costs more than the {risk_each:.2g} s it had)"
    done = risk.resolved | capped | (regime == SATURATED)   # no rate shown there
    if done.all():
        return row, None
    return row, (f"{name}: levels {ks[~done].tolist()} not resolved to 10 % within "
                 f"{risk_each:.2g} s (their interval is wide or a bound)")


def _budget_note(max_seconds: float, spent: float, bought: dict, settle: str) -> list[str]:
    """The note on what the time budget bought: none where nothing depended
    on it (exact storm risk, the durations and stagger runs in full, settling
    checked to the end), so that such a table is a function of its inputs."""
    durs = set(bought["durations"])
    full = (DURATION_FLEETS, DURATION_CYCLES)
    caps = sorted({m.rsplit("cycle cap ", 1)[1] for m in bought["stagger"] if "cycle cap " in m},
                  key=lambda c: int(c.split()[0]))
    lost = any(NOT_IN_BUDGET in m for m in bought["stagger"])
    if not (bought["risk"] or durs - {full} or caps or lost or "budget" in settle):
        return []
    got = sorted(e for e in durs if e is not None)
    span = lambda xs: f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)} to {max(xs)}"  # noqa: E731
    dur = "; ".join(([f"{span([e[0] for e in got])} fleets x {span([e[1] for e in got])} cycles"]
                     if got else []) + (["not estimated"] if None in durs else []))
    stagger = ("not all estimated" if lost else
               f"cut to a cycle cap of {', '.join(caps)}" if caps else "in full")
    risk = "; ".join(bought["risk"]) or "exact, none simulated"
    return [f"Budget: {max_seconds:g} s ({spent:.1f} s spent). It bought: storm risk: {risk}; "
            f"checkpoint durations: {dur} per scenario; stagger runs: {stagger}; settling: "
            f"{settle}."]

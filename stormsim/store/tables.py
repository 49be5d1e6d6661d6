"""Text tables: ``stormsim inspect`` (a result's cells) and ``stormsim sweep --dry-run``.

Each takes what it shows (a Results, a Sweep) as an argument and imports
neither: the readers sit above this module.
"""
from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass

import numpy as np

from .._format import (fmt_ci, fmt_duration, fmt_law, fmt_p_ge, fmt_passage, fmt_storm_duration,
                       fmt_storms, fmt_value)
from ..engine.cost import run_events, run_seconds
from ..engine.units import SECONDS_PER_DAY
from ..risk.stormrisk import FIXED_REPLICATES, fixed_batch
from ..stats.summary import GOODPUT_PARTS, level_column, ramp_column
from ..stats.tails import monotone_bound
from .cellresult import CellRisk

__all__ = ["cells_table", "grid_value", "inspect_table", "outline_table", "physical_units", "render",
           "durations_table_text", "goodput_table_text", "power_table_text", "risk_table_text",
           "storms_table_text", "sweep_figures"]


def grid_value(res, key: str, i: int):
    """Cell i's value of the grid key ``key``: its parameter column's, or for a key
    without a column (``fast_forward``, ``ramp_windows``, ``risk_levels``, ...)
    the value as the sweep file gives it, as JSON text."""
    col = res.params.get(key)
    if col is not None:
        return col[i]
    try:
        grid = tomllib.loads(res.sweep_toml).get("grid", {})
        shape = tuple(len(grid[k]) for k in res.grid_keys)
        at = np.unravel_index(i, shape)[list(res.grid_keys).index(key)]
        return json.dumps(grid[key][at])
    except (tomllib.TOMLDecodeError, KeyError, ValueError):  # the stored text is informative only
        return "?"


def render(header: list, rows: list) -> list[str]:
    """Right-aligned columns: the header line, then one line per row."""
    widths = [max(len(h), *(len(r[j]) for r in rows)) if rows else len(h)
              for j, h in enumerate(header)]
    return (["  ".join(h.rjust(w) for h, w in zip(header, widths))]
            + ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in rows])


def sweep_figures(source, name, n_cells: int, fleets: int, fleet_cycles: float,
                  events: float, seconds: float) -> str:
    """The first line of a dry run: size and cost of a sweep. ``seconds`` is the
    events' time on one core at the benchmarked cost per event for each cell's N
    (``engine.cost.run_seconds``)."""
    return (f"{source}: sweep {name!r}, {n_cells} cells, {fleets} fleets, at most "
            f"{fleet_cycles:.3g} fleet-cycles ({events:.3g} events: ~"
            f"{fmt_duration(seconds)} on one core at the benchmarked cost per event)")


def _cell_rows(keys: list, cells) -> list:
    return [[str(c.index)] + [fmt_value(c.values[k]) for k in keys] + [str(c.fleets)]
            for c in cells]


def cells_table(sweep) -> str:
    """The cells of a sweep, as ``stormsim sweep --dry-run`` lists them."""
    keys = sweep.grid_keys + ["run_seed"]
    head = sweep_figures(sweep.source, sweep.name, sweep.n_cells, sweep.total_fleets,
                         sum(float(c.fleets) * c.cycles for c in sweep.cells),
                         sum(run_events(c.n_jobs, c.fleets, c.cycles) for c in sweep.cells),
                         sum(run_seconds(c.n_jobs, c.fleets, c.cycles) for c in sweep.cells))
    lines = [f"{head}; identity {sweep.hash[:16]}"]
    risky = [c for c in sweep.cells if c.has_risk]
    if risky:
        lines.append(_risk_line(risky))
    return "\n".join(lines + render(["cell"] + keys + ["fleets"], _cell_rows(keys, sweep.cells)))


def _risk_line(risky: list) -> str:
    """The dry run's storm-risk line: the plain Monte Carlo part as storm_risk runs
    it (risk_fleets rounded up to whole batches, risk.stormrisk.fixed_batch; none with
    risk_method = 'splitting'), costed like the fleets; the splitting part
    (risk_replicates per cell that may split) counted, not costed."""
    fleets, events, seconds, after, every, reps = 0, 0.0, 0.0, 0, 0, set()
    for c in risky:
        kw = c.risk_kwargs()
        method = kw.get("method", "auto")
        if method != "splitting":
            batch = fixed_batch(c.n_jobs, c.cycles, kw["max_fleets"])
            n = batch * -(-kw["max_fleets"] // batch)
            fleets, events = fleets + n, events + run_events(c.n_jobs, n, c.cycles)
            seconds += run_seconds(c.n_jobs, n, c.cycles)
        if method == "splitting" or (method == "auto" and not c.fleet.has_failures):
            after += method == "auto"
            every += method == "splitting"
            reps.add(kw.get("replicates", FIXED_REPLICATES))
    text = f"plus the storm risk of {len(risky)} cells (risk_levels), a fixed effort: "
    if fleets:
        text += (f"at most {fleets} plain fleets in all (risk_fleets rounded up to whole "
                 f"batches; fewer if every level resolves first): {events:.3g} events, ~"
                 f"{fmt_duration(seconds)} on one core at the benchmarked cost per event")
    else:
        text += "no plain fleets (risk_method = 'splitting')"
    if reps:
        cells = (lambda n: f"{n} cell{'s' if n != 1 else ''}")
        where = [f"for the levels plain Monte Carlo leaves unresolved in {cells(after)}"] \
            * bool(after) + [f"for every level in {cells(every)} (risk_method = "
                             "'splitting')"] * bool(every)
        text += (f"; then {'/'.join(str(x) for x in sorted(reps))} splitting replicates "
                 f"{' and '.join(where)}, not costed here (their cost depends on how deep the "
                 "levels are)")
    return text + ". None of it is in the estimates above or below"


def outline_table(outline, first: list, last: list, limit: int) -> str:
    """A dry run of a sweep too large to resolve at once: its figures, then
    the cells ``first`` and ``last`` (resolved) with '...' between them."""
    n = outline.n_cells
    keys = list(outline.grid) + ["run_seed"]
    lines = [sweep_figures(outline.source, outline.name, n, outline.total_fleets,
                           outline.fleet_cycles, outline.events, outline.seconds)]
    if n > limit:
        return "\n".join(lines)
    lines.append(f"cells 0..{len(first) - 1} and {n - len(last)}..{n - 1} of {n}, checked; "
                 "every cell is checked when the sweep runs (about 0.3 ms each), and its "
                 "identity computed")
    rows = _cell_rows(keys, first) + [["..."] * (len(keys) + 2)] + _cell_rows(keys, last)
    return "\n".join(lines + render(["cell"] + keys + ["fleets"], rows))


def physical_units(res) -> bool:
    """Every cell's fleet comes from a job table (``jobs``): its times are real
    seconds, so rates read per day and durations in s, min or h."""
    jobs = res.params.get("jobs")
    return res.n_cells > 0 and jobs is not None and all(str(j) for j in np.asarray(jobs).tolist())


def risk_table_text(res, cells=None) -> str | None:
    """The storm risk of the cells that have one (risk_levels): one row per cell
    and level, P(n_w >= k), storms per second and per day, each with its 95 %
    interval and method, and the effort spent. None when no cell has one.
    ``cells``: the cells (anything with index, params and risk; default: read
    every cell of ``res``)."""

    head = ["cell", *res.grid_keys, "k", "method", "P(n_w>=k) [95% CI]", "P method",
            "storms/s [95% CI]", "storms/day [95% CI]", "rate method", "effort"]
    head = list(dict.fromkeys(head))
    rows = []
    for c in (res if cells is None else cells):
        r = c.risk
        if r is None:
            continue
        effort = (f"{int(r['risk_fleets_run'])} fleets"
                  + (f", {int(r['risk_replicates_run'])} replicates x {int(r['risk_trials_run'])}"
                     if int(r["risk_replicates_run"]) else ""))
        bound = monotone_bound(r["risk_p_ge_hi"], r["risk_p_ge_method"])
        for j, k in enumerate(r["levels"].tolist()):
            pm, rm = str(r["risk_p_ge_method"][j]), str(r["risk_storms_method"][j])
            p = (f"< {bound[j]:.2e} (not reached)" if pm in ("zero-bound", "monotone-bound")
                 else fmt_p_ge(r["risk_p_ge"][j], r["risk_p_ge_lo"][j], r["risk_p_ge_hi"][j], pm))
            rate = [float(r[f"risk_storms_per_s{e}"][j]) * f for f in (1.0, SECONDS_PER_DAY)
                    for e in ("", "_lo", "_hi")]
            per_s = ("not reached, no bound" if rm == "not-reached" else
                     fmt_storms(*rate[:3], rm))
            per_day = ("-" if rm == "not-reached" else fmt_storms(*rate[3:], rm))
            rows.append([str(c.index), *(fmt_value(c.params[g]) for g in res.grid_keys),
                         str(k), str(r["risk_level_method"][j]), p, pm, per_s, per_day, rm, effort])
    if not rows:
        return None
    return "\n".join(render(head, rows))


def storms_table_text(res, tail) -> str | None:
    """The storms of every cell at the tail levels: storms per day (a fleet
    from a job table) or per second, and their mean duration, each with its
    95 % interval; None when no cell measured its storms at those levels."""
    s = res.summary(levels=tail)
    per_day = physical_units(res)
    unit, scale, fmt = ("storms/day", SECONDS_PER_DAY, ".3g") if per_day else ("storms/s", 1.0, ".3e")
    same_n = len(set(res.params["N"].tolist())) == 1
    head, rows = ["cell", *res.grid_keys], []
    for lv in tail:
        lab = f"n_w>={s[level_column('k', lv)][0]}" if same_n and res.n_cells else f"n_w>={lv}"
        head += [f"{unit}({lab}) [95% CI]", f"storm duration({lab}) [95% CI]"]
    for i in range(res.n_cells):
        row = [str(i), *(fmt_value(grid_value(res, g, i)) for g in res.grid_keys)]
        for lv in tail:
            rate, dur = _at(s, "storms_per_s", lv, i), _at(s, "storm_duration", lv, i)
            m = s[level_column("storms_method", lv)][i]
            if m in ("structural", "not-recorded", "none") or math.isnan(rate[0]):
                row += ["-", "-"]
                continue
            row += [fmt_storms(*(x * scale for x in rate), m, fmt), fmt_storm_duration(*dur, unit=True)]
        rows.append(row)
    if all(x == "-" for r in rows for x in r[1 + len(res.grid_keys):]):
        return None
    return "\n".join(render(head, rows))


def _keeping_risk(res, kept: list):
    """Each cell of ``res``, read once; of those with a storm risk, a CellRisk
    (its index, params and risk, not its arrays) kept in ``kept``."""

    for c in res:
        if c.risk is not None:
            kept.append(CellRisk(c.index, c.params, c.risk))
        yield c


def durations_table_text(res, s) -> str:
    """The checkpoint durations and waits of every cell (MODEL.md E7), from the
    Results.summary ``s``: checkpoints, mean write duration, its 99th
    percentile, P(duration >= watchdog), the longest, the mean and longest wait."""
    watch = bool(np.any(np.isfinite(s["duration_p_watchdog"])))
    header = (["cell"] + list(res.grid_keys) + ["checkpoints", "mean s [95% CI]",
              "p99 s [95% CI]"] + (["P(>=watchdog) [95% CI]"] if watch else [])
              + ["max s", "mean wait s [95% CI]", "max wait s"])
    rows = []
    for i in range(res.n_cells):
        c = s["checkpoints"][i]
        row = [str(i)] + [fmt_value(grid_value(res, k, i)) for k in res.grid_keys]
        row.append("-" if not c >= 0 else str(int(c)))
        row += [fmt_ci(*(s[f"{k}{e}"][i] for e in ("", "_lo", "_hi")))
                for k in ("duration_mean", "duration_p99")]
        if watch:
            p = s["duration_p_watchdog"][i]
            row.append("-" if math.isnan(p) else fmt_p_ge(
                p, s["duration_p_watchdog_lo"][i], s["duration_p_watchdog_hi"][i], "wilson")
                + f" at {s['duration_watchdog_at'][i]:.4g} s")
        row.append(fmt_law(s["duration_max"][i], ".4g"))
        row.append(fmt_ci(*(s[f"wait_mean{e}"][i] for e in ("", "_lo", "_hi"))))
        row.append(fmt_law(s["wait_max"][i], ".4g"))
        rows.append(row)
    return "\n".join(render(header, rows) + [
        "", "Checkpoint durations (firing to write end) and waits (due to firing), MODEL.md E7, "
        "of the checkpoints that ended in the measured window; 95% CI over the independent "
        + ("fleets" if res.occupancy == "fleet" else "blocks of fleets")
        + " (stormsim.stats.durations: the mean as a ratio estimator, the 99th percentile from "
        "the pooled histogram with a bootstrap widened to its bins"
        + ("; P(>=watchdog): the share at or above the first histogram edge at or above the "
           "watchdog key (shown after 'at'), Wilson" if watch else "")
        + "); '-': none recorded, or (p99) the jobs' d differ (the histogram is in multiples "
        "of d)."])


def goodput_table_text(res, s) -> str | None:
    """Goodput and its parts per cell with failures (MODEL.md E8), from the
    Results.summary ``s``; None when no cell has failures."""
    cells = [i for i in range(res.n_cells) if s["failures"][i] >= 0]
    if not cells:
        return None
    header = (["cell"] + list(res.grid_keys) + ["goodput [95% CI]"]
              + GOODPUT_PARTS_SHOWN + ["failures/day [95% CI]", "abandoned writes", "outages"])
    rows = []
    for i in cells:
        row = [str(i)] + [fmt_value(grid_value(res, k, i)) for k in res.grid_keys]
        row.append(fmt_ci(*(s[f"goodput{e}"][i] for e in ("", "_lo", "_hi"))))
        row += [f"{s[f'goodput_{p}'][i]:.3g}" for p in GOODPUT_PARTS]
        row.append(fmt_ci(*(s[f"failures_per_day{e}"][i] for e in ("", "_lo", "_hi"))))
        row += [str(int(s["abandoned_writes"][i])), str(int(s["outages"][i]))]
        rows.append(row)
    return "\n".join(render(header, rows) + [
        "", "Goodput G (MODEL.md E8): committed work over N x the measured window; the other "
        "shares split 1 - G exactly (writing, work lost to failures, DOWN restarting, slowed by "
        "the cap, uncommitted at the window's end); 95% CI over the independent fleets "
        "(stormsim.stats.goodput: ratio estimators, delta method). Every column with its "
        "interval: --format csv/json (goodput_lost_lo, ...)."])


def _power_unit(x: float) -> tuple[float, str]:
    """(scale, unit) to show a power of x watts in: MW, kW or W."""
    for unit, scale in (("MW", 1e6), ("kW", 1e3)):
        if abs(x) >= scale:
            return scale, unit
    return 1.0, "W"


def _watts(x: float) -> str:
    """A power in W, kW or MW, 4 significant digits."""
    if not math.isfinite(x):
        return "-"
    scale, unit = _power_unit(x)
    return f"{x / scale:.4g} {unit}"


def _ci_watts(x: float, lo: float, hi: float) -> str:
    """A power and its interval, in the unit of the power ('no CI' without one)."""
    if math.isnan(x):
        return "-"
    if not math.isfinite(lo):
        return f"{_watts(x)} no CI"
    scale, unit = _power_unit(x)
    return f"{x / scale:.4g} [{lo / scale:.4g}, {hi / scale:.4g}] {unit}"


def power_table_text(res, s) -> str | None:
    """Mean power and ramps per cell with power (MODEL.md E6), from the
    Results.summary ``s``; None when no cell has power."""
    cells = [i for i in range(res.n_cells) if math.isfinite(s["power_mean"][i])]
    if not cells:
        return None
    header = (["cell"] + list(res.grid_keys) + ["mean power [95% CI]", "min", "max"])
    rows = [[str(i)] + [fmt_value(grid_value(res, k, i)) for k in res.grid_keys]
            + [_ci_watts(*(s[f"power_mean{e}"][i] for e in ("", "_lo", "_hi"))),
               _watts(s["power_min"][i]), _watts(s["power_max"][i])] for i in cells]
    pairs = sorted({(float(m.group(1)), float(m.group(2))) for k in s
                    if (m := re.fullmatch(r"ramp_share_D([^_]+)_X([^_]+)", k))})
    ramp_header = ["cell", "D (s)", "X", "ramp events/day [95% CI]", "ramp share [95% CI]",
                   "method"]
    ramp_rows = []
    for i in cells:
        for window, threshold in pairs:
            method = s[ramp_column("ramp_method", window, threshold)][i]
            if not method:
                continue
            ramp_rows.append([str(i), f"{window:g}", _watts(threshold)] + [
                fmt_ci(*(s[ramp_column(f"{name}{e}", window, threshold)][i]
                         for e in ("", "_lo", "_hi")))
                for name in ("ramp_events_per_day", "ramp_share")] + [str(method)])
    return "\n".join(render(header, rows) + [""] + render(ramp_header, ramp_rows) + [
        "", "Power (MODEL.md E6): the fleet's mean draw over the measured window with its 95% "
        "CI over the independent fleets (energy over time, delta method), and its lowest and "
        "highest draw; a ramp event is the draw falling by X or more within D seconds (an "
        "up-crossing of R_D through X), counted per day of measured time, the share the time "
        "with R_D >= X (stormsim.stats.power.ramp_estimate_of). Every column: --format csv/json "
        "(ramp_events_per_day_D60_X614400_lo, ...)."])


#: The column headers of the goodput parts (GOODPUT_PARTS), shares of N x window.
GOODPUT_PARTS_SHOWN = ["writing", "lost", "down", "cap", "uncommitted"]


@dataclass(frozen=True)
class _Columns:
    """What the inspect table shows of a result, decided once from its summary:
    the tail levels shown, whether a passage median and the exact law's columns
    are there, and the unit the storm rates are in."""

    tail: list
    unit: str
    storms: bool
    has_passage: bool
    per_day: bool
    law: dict               # tail level -> whether some cell has the exact law's value

    @property
    def rate(self) -> tuple:
        """(label, scale, format) of the storm rates: per day or per second."""
        return ("storms/day", SECONDS_PER_DAY, ".3g") if self.per_day else ("storms/s", 1.0, ".3e")


def _structural_zero(P: dict, s: dict, lv, i: int) -> bool:
    """Cell i's P(n_w >= level) is zero by construction: its fleets stop at their
    passage, so they never spend time at n_w >= its level."""
    return bool(P["stop_at_passage"][i]) and 0 < P["passage_level"][i] <= s[level_column("k", lv)][i]


def _columns(res, s: dict, tail, unit: str, storms: bool) -> _Columns:
    P, n = res.params, res.n_cells
    tail = [lv for lv in tail if not all(_structural_zero(P, s, lv, i) for i in range(n))]
    return _Columns(tail=tail, unit=unit, storms=storms,
                    has_passage=bool(np.any(P["passage_level"] > 0)),
                    per_day=physical_units(res),
                    law={lv: bool(np.any(np.isfinite(s[level_column("p_ge_law", lv)]))) for lv in tail})


def _intro(res) -> list[str]:
    """The table's first lines: the result, its state, what every cell shares."""
    P, n = res.params, res.n_cells
    cells_done = int((res.fleets_done == res.fleets).sum())
    if res.complete:
        state = "complete"
    elif res.running:
        state = (f"RUNNING ({res.writer} is writing it): {cells_done}/{n} cells done so far; "
                 "inspect it again later")
    else:
        state = (f"UNFINISHED: {cells_done}/{n} cells done; run the same sweep command again "
                 "to resume")
    lines = [f"{res.path}: sweep {res.name!r}, {n} cells, {state}",
             f"stormsim {res.version}; occupancy stored "
             + ("per fleet" if res.occupancy == "fleet" else "as its sum over fleets")]
    fixed = [k for k in P if k not in res.grid_keys and k not in ("run_seed",)
             and len(set(map(str, P[k].tolist()))) == 1]
    if n:
        shown = ", ".join(f"{k} = {fmt_value(P[k][0])}" for k in fixed
                          if k in res.fixed or k in ("N", "T", "d", "jitter", "launch", "cycles", "fleets"))
        if shown:
            lines.append("same in every cell: " + shown)
    return lines


def _header(res, s: dict, cols: _Columns) -> list[str]:
    header = ["cell"] + list(res.grid_keys) + ["fleets"]
    if cols.has_passage:
        header += ["censored", f"median {cols.unit} [95% CI]"]
    same_n = len(set(res.params["N"].tolist())) == 1
    for lv in cols.tail:
        label = f"P(n_w>={s[level_column('k', lv)][0]})" if same_n and res.n_cells else f"P(n_w>={lv})"
        header.append(label + " [95% CI]")
        header += ["law"] if cols.law[lv] else []
        if cols.storms:
            lab = label[2:-1]                 # n_w>=k
            header += [f"{cols.rate[0]}({lab}) [95% CI]"] + (["law"] if cols.law[lv] else [])
            header += [f"storm duration({lab}) [95% CI]" if cols.per_day
                       else f"storm s({lab}) [95% CI]"]
    return header


def _passage_cells(res, s: dict, cols: _Columns, i: int) -> list[str]:
    """Cell i's censored fleets and median first passage with its interval."""
    P = res.params
    if not (P["passage_level"][i] > 0 and s["fleets_done"][i] > 0):
        return ["-", "-"]
    cap = "cap" if cols.unit == "time" else int(P["cycles"][i])
    med, lo, hi = (fmt_passage(s[k][i], cap) for k in ("median", "median_lo", "median_hi"))
    return [str(int(s["censored"][i])), f"{med} [{lo}, {hi}]"]


def _level_cells(res, s: dict, cols: _Columns, lv, i: int) -> list[str]:
    """Cell i's columns of one tail level: P(n_w >= k) (and the law), and with
    ``storms`` the storm rate (and the law) and mean storm duration."""
    zero = _structural_zero(res.params, s, lv, i)
    p = _at(s, "p_ge", lv, i)
    out = ["-" if math.isnan(p[0]) or zero else fmt_p_ge(
        *p, s[level_column("p_ge_method", lv)][i], s[level_column("p_ge_bound", lv)][i])]
    out += [fmt_law(s[level_column("p_ge_law", lv)][i])] if cols.law[lv] else []
    if not cols.storms:
        return out
    _, scale, fmt = cols.rate
    m = s[level_column("storms_method", lv)][i]
    exact = ([fmt_law(s[level_column("storms_per_s_law", lv)][i] * scale, fmt)]
             if cols.law[lv] else [])
    if zero or m in ("structural", "not-recorded"):
        return out + ["-"] + exact + ["-"]
    rate = _at(s, "storms_per_s", lv, i)
    return (out + [fmt_storms(*(x * scale for x in rate), m, fmt)]
            + exact + [fmt_storm_duration(*_at(s, "storm_duration", lv, i), unit=cols.per_day)])


def _at(s: dict, name: str, lv, i: int) -> tuple[float, float, float]:
    """Cell i's (value, lo, hi) of a per-level number of Results.summary ``s``."""
    return tuple(s[level_column(name + end, lv)][i] for end in ("", "_lo", "_hi"))


def _row(res, s: dict, cols: _Columns, i: int) -> list[str]:
    row = [str(i)] + [fmt_value(grid_value(res, k, i)) for k in res.grid_keys]
    row.append(f"{s['fleets_done'][i]}/{s['fleets'][i]}")
    if cols.has_passage:
        row += _passage_cells(res, s, cols, i)
    for lv in cols.tail:
        row += _level_cells(res, s, cols, lv, i)
    return row


def _notes(res, s: dict, cols: _Columns) -> list[str]:
    """What the columns mean, below the table."""
    lines = []
    if cols.has_passage:
        if cols.unit == "time":
            lines.append("median time: first passage to n_w >= passage_level, in seconds, "
                         "Kaplan-Meier with the fleets without a passage included, censored at "
                         "the end of their run (the K-cycle cap); 95% CI by Brookmeyer-Crowley "
                         "(log-log band); '>cap': not reached by the end of the runs.")
        else:
            lines.append(f"median {cols.unit}: first passage to n_w >= passage_level, Kaplan-Meier "
                         "with the fleets censored at the cycle cap K included (a passage at a "
                         "cycle >= K counts as censored); 95% CI by Brookmeyer-Crowley (log-log "
                         "band); '>K': not reached within the K-cycle cap.")
    for lv in cols.tail:
        if not np.all(s[level_column("k", lv)] > 0):
            lines.append(f"'-' in P(n_w>={lv}): the cell has N < {lv} (no such level there).")
    if any(cols.law.values()):
        lines.append("law: the exact long-run value (the product form, stormsim.stationary) of a "
                     "cell it covers (blocking, equal weights, jitter on every job; '-' elsewhere): "
                     "a simulated value far from it has not mixed yet, or its window is a "
                     "transient from its launch.")
    units = "fleets" if res.occupancy == "fleet" else "blocks of fleets"
    if cols.tail:
        lines.append("P(n_w>=k): share of the cell's total measured time with at least k jobs "
                     "writing, from the occupancy summed over its fleets; 95% CI from the "
                     f"spread between its independent {units}"
                     " (delta method of the ratio estimator, on the logit scale); '< b (none "
                     "reached k)': no fleet reached k; b the smaller of two one-sided 95% upper "
                     "bounds (jointly >= 90%): 1 - 0.05^(1/fleets), and the upper end of the "
                     "interval of the deepest level below k that fleets reached (P(n_w>=k) "
                     "falls with k); 'no CI': one independent unit only.")
    if cols.tail and cols.storms:
        lines.append(f"{cols.rate[0]}(n_w>=k): storms (episodes with at least k jobs writing, "
                     "counted at their up-crossings, MODEL.md E3) per "
                     + ("day of measured time (the jobs' times are real: a job table); storm "
                        "duration: their mean duration; " if cols.per_day else
                        "second of measured time; storm s: their mean duration in seconds; ")
                     + "95% CI from the same independent units "
                     "(delta method of the ratio estimator, on the log scale); '< b (no "
                     "storm)': b = -ln(0.05)/measured time, a one-sided 95% Poisson upper bound; "
                     "'-': not recorded (a result written before storms were counted).")
    if not cols.tail:
        lines.append("(no P(n_w>=k) columns: every fleet stops at its passage, so the time at "
                     "those levels is zero by construction; choose levels with --levels)")
    return lines


def inspect_table(res, tail, unit: str, storms: bool = False, risk: bool = False,
                  durations: bool = False) -> str:
    """The text table of ``stormsim inspect`` for a Results (``storms``: also
    the storm rate and mean storm duration at each tail level; ``risk``: then
    the storm risk of the cells that have one, risk_table_text; ``durations``:
    then the checkpoint durations and waits, durations_table_text)."""
    risky: list = []
    s = res.summary(levels=tail, unit=unit, cells=_keeping_risk(res, risky) if risk else None)
    cols = _columns(res, s, tail, unit, storms)
    rows = [_row(res, s, cols, i) for i in range(res.n_cells)]
    lines = _intro(res) + [""] + render(_header(res, s, cols), rows) + [""] + _notes(res, s, cols)
    if durations:
        lines += ["", "Checkpoint durations and waits, per cell:", "", durations_table_text(res, s)]
    text = goodput_table_text(res, s)
    if text is not None:          # cells with failures (MODEL.md E8)
        lines += ["", "Goodput and failures, per cell with failures:", "", text]
    text = power_table_text(res, s)
    if text is not None:          # cells with power (MODEL.md E6)
        lines += ["", "Power and ramps, per cell with power:", "", text]
    text = risk_table_text(res, risky) if risky else None
    if text is not None:
        lines += ["", "Storm risk (risk_levels), per cell and level k asked:", "", text, "",
                  "From stormsim.storm_risk with the fixed effort shown; method: plain (Monte "
                  "Carlo over independent fleets) or splitting (forward flux sampling, its "
                  "interval over independent replicates); storms/day = storms/s x 86400; "
                  "'< b (not reached)', '< b (no storm)': b a one-sided 95% upper bound. "
                  "Every column: "
                  "--format csv/json (risk_p_ge_K, ...)."]
    return "\n".join(lines)

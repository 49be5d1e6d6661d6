"""The numbers every view of a sweep shows per cell, computed in one place.

``stormsim inspect``, ``Results.summary()``, ``Results.to_dataframe()``,
``Results.to_xarray()``, the result file's top-level table and ``stormsim
report`` all take a cell's numbers from :func:`cell_summary`:

- the Kaplan-Meier median first passage with its 95 % Brookmeyer-Crowley
  interval, censored fleets included (``stormsim.stats.survival``), in fleet cycles
  and in seconds;
- P(n_w >= k) for every k = 1..N with a 95 % interval from the independent
  fleets (``stormsim.stats.tails``: ratio estimator, delta method on the logit
  scale; a one-sided bound where no fleet reached k);
- the independent-jobs baseline: the Poisson-binomial of the per-job
  writing fractions where the cell records each job's writing time
  (:func:`job_write_fractions`), else the binomial for identical jobs (the
  same law), else NaN: unlike jobs without per-job fractions have no
  honest baseline (Binomial(N, mean p) is not theirs).

Cells whose jobs fail (MODEL.md E8) add goodput and its parts
(``stormsim.stats.goodput``); cells with power (E6) add the mean draw with its
interval and, per ramp window D and threshold X, ramp events per day and the
time share with R_D >= X with their intervals (``stormsim.stats.power``:
``mean_power``, ``ramp_estimate_of``; the row's ``ramps``, a RampEstimate,
and :func:`ramp_table` for the table on (cell, ramp_window, ramp_threshold)).

Structural NaN: a fleet stopped at its first passage to n_w >= L
(``stop_at_passage`` with ``passage_level = L``) never spends time at
n_w >= L: the run ends the instant it gets there. Its P(n_w >= k) for k >= L
is zero by construction, not a measurement, so it is NaN (method
``structural``), not 0.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..engine.model import Fleet
from ..engine.run import DURATION_EDGES, WAIT_EDGES
from .analysis import writing_fraction
from ..engine.units import SECONDS_PER_DAY
from .durations import Checkpoints, exceedance, exceedance_edge, mean, quantile, ratio
from .goodput import goodput_of_sums
from .power import mean_power, ramp_estimate_of
from .stationary import stationary
from .storms import STORM_METHODS, storm_estimate
from .survival import kaplan_meier, passage_times
from .interval import CONFIDENCE
from .tails import independent_tail, tail_estimate

__all__ = ["GOODPUT_KEYS", "GOODPUT_PARTS", "METHOD_CODES", "POWER_KEYS", "RAMP_ARRAYS",
           "ramp_column", "cell_summary", "level_column",
           "job_write_fractions", "summary_table", "table_of_rows"]

#: How each P(n_w >= k) was estimated, as stored in the result file (int8).
#: -1: no such level (k > the cell's N; the table is padded to the largest N).
METHOD_CODES = {"ratio-logit": 0, "zero-bound": 1, "one-bound": 2, "none": 3, "structural": 4}

#: The parts of 1 - G (stormsim.stats.goodput.PARTS but G), as goodput_<part> columns.
GOODPUT_PARTS = ("writing", "lost", "down", "cap", "uncommitted")
_PART_DOCS = {"writing": "writing (blocking writes, abandoned ones included, snapshots, waits, "
                         "queues)",
              "lost": "computing work later lost to a failure",
              "down": "DOWN, restarting after a failure",
              "cap": "computing below full rate under the power cap",
              "uncommitted": "computing work not yet durable at the window's end"}


def _goodput_scalars() -> dict:
    """The SCALARS of failures and goodput (MODEL.md E8), in order."""
    ends = "95% interval (ratio over fleets, delta method)"
    out = {"goodput": (np.float64, "1", "goodput G: committed work over N x the measured "
                       "window (MODEL.md E8; NaN: a cell without failures)"),
           "goodput_lo": (np.float64, "1", f"lower end of its {ends}"),
           "goodput_hi": (np.float64, "1", f"upper end of its {ends}"),
           "goodput_method": (str, None, "how the goodput intervals were made: ratio-delta "
                              "(ratio over fleets, delta method) or none (no failures, or "
                              "fewer than 2 fleets)")}
    for part in GOODPUT_PARTS:
        out[f"goodput_{part}"] = (np.float64, "1", f"share of N x the window spent "
                                  f"{_PART_DOCS[part]} (with goodput and the other parts it "
                                  "sums to 1)")
        out[f"goodput_{part}_lo"] = (np.float64, "1", f"lower end of its {ends}")
        out[f"goodput_{part}_hi"] = (np.float64, "1", f"upper end of its {ends}")
    out.update({
        "failures": (np.int64, "1", "failures in the measured windows, outages included (one "
                     "per job failed), summed over the jobs and fleets (-1: a cell without "
                     "failures)"),
        "failures_per_day": (np.float64, "1/d", "failures of the fleet (all its jobs) per day of "
                             "measured time"),
        "failures_per_day_lo": (np.float64, "1/d", f"lower end of its {ends}"),
        "failures_per_day_hi": (np.float64, "1/d", f"upper end of its {ends}"),
        "abandoned_writes": (np.int64, "1", "writes a failure abandoned, summed over the jobs "
                             "and fleets (-1: a cell without failures)"),
        "outages": (np.int64, "1", "outages, summed over the fleets (-1: a cell without "
                    "failures)"),
    })
    return out


def _power_scalars() -> dict:
    """The SCALARS of power (MODEL.md E6), in order."""
    ends = "95% interval (ratio of energy to time over fleets, delta method)"
    return {"power_mean": (np.float64, "W", "the fleet's mean power draw over the measured "
                           "windows (MODEL.md E6; NaN: a cell without power)"),
            "power_mean_lo": (np.float64, "W", f"lower end of its {ends}"),
            "power_mean_hi": (np.float64, "W", f"upper end of its {ends}"),
            "power_min": (np.float64, "W", "the lowest draw of any fleet in its measured window"),
            "power_max": (np.float64, "W", "the highest draw of any fleet in its measured "
                          "window")}


#: Per-(cell, ramp window D, ramp threshold X) arrays of the table (MODEL.md E6,
#: stormsim.stats.power.ramp_estimate_of; cells with power): name -> (units, long
#: name); NaN ('' for the method) where a cell has no such D and X.
RAMP_ARRAYS = {
    "ramp_events_per_day": ("1/d", "ramp events per day of measured time: up-crossings of "
                            "R_D (the highest power of the last D seconds less the power now) "
                            "through X"),
    "ramp_events_per_day_lo": ("1/d", "lower end of its 95% interval (see ramp_method)"),
    "ramp_events_per_day_hi": ("1/d", "upper end of its 95% interval (see ramp_method)"),
    "ramp_share": ("1", "share of measured time with R_D >= X"),
    "ramp_share_lo": ("1", "lower end of its 95% interval (see ramp_method)"),
    "ramp_share_hi": ("1", "upper end of its 95% interval (see ramp_method)"),
    "ramp_method": (None, "how the ramp intervals were made (stormsim.stats.power.RampEstimate): "
                    "ratio-log, garwood or zero-bound"),
}


def _num(x: float) -> str:
    """A window or threshold in a column name: an integer's digits, else repr."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e18 else repr(x)


def ramp_column(name: str, window: float, threshold: float) -> str:
    """The column of a RAMP_ARRAYS name at window D (s) and threshold X (W) in the
    flat views (pandas, CSV, JSON): e.g. ``ramp_events_per_day_D60_X614400``, its
    interval's ends ``ramp_events_per_day_D60_X614400_lo`` and ``_hi``."""
    stem, end = (name[:-3], name[-3:]) if name.endswith(("_lo", "_hi")) else (name, "")
    return f"{stem}_D{_num(window)}_X{_num(threshold)}{end}"


#: Per-cell scalars of the table, in order: name -> (dtype, units, long name).
SCALARS = {
    "fleets_done": (np.int64, "1", "fleets simulated"),
    "passed": (np.int64, "1", "fleets whose first passage was seen (below the cycle cap)"),
    "censored": (np.int64, "1", "fleets censored at the cycle cap (no passage seen)"),
    "median": (np.float64, "cycles", "Kaplan-Meier median first passage, fleet cycles "
               "(inf: beyond the cap)"),
    "median_lo": (np.float64, "cycles", "lower end of its 95% Brookmeyer-Crowley interval"),
    "median_hi": (np.float64, "cycles", "upper end of its 95% Brookmeyer-Crowley interval "
                  "(inf: unbounded)"),
    "median_time": (np.float64, "s", "Kaplan-Meier median first passage time"),
    "median_time_lo": (np.float64, "s", "lower end of its 95% Brookmeyer-Crowley interval"),
    "median_time_hi": (np.float64, "s", "upper end of its 95% Brookmeyer-Crowley interval"),
    "p_write": (np.float64, "1", "mean share of time a job writes (mean n_w / N)"),
    "interval_units": (np.int64, "1", "independent units behind the P(n_w>=k) intervals "
                       "(fleets, or blocks of fleets in occupancy='sum' mode)"),
    # checkpoint durations and waits (MODEL.md E7; stormsim.stats.durations), over
    # the checkpoints that ended in the measured window; NaN without any (or in a
    # file written before they were recorded)
    "checkpoints": (np.int64, "1", "checkpoints that ended in the measured window, summed "
                    "over the fleets (-1: not recorded)"),
    "duration_mean": (np.float64, "s", "mean checkpoint write duration, firing to write end"),
    "duration_mean_lo": (np.float64, "s", "lower end of its 95% interval (ratio over fleets)"),
    "duration_mean_hi": (np.float64, "s", "upper end of its 95% interval (ratio over fleets)"),
    "duration_p99": (np.float64, "s", "99th percentile of the write durations (NaN where "
                     "the jobs' d differ: the histogram is kept in multiples of d_i)"),
    "duration_p99_lo": (np.float64, "s", "lower end of its 95% interval (bootstrap over "
                        "fleets, widened to bin edges)"),
    "duration_p99_hi": (np.float64, "s", "upper end of its 95% interval (inf: beyond the "
                        "last bin)"),
    "duration_max": (np.float64, "s", "longest write duration of any fleet (NaN in "
                     "occupancy='sum' mode files that lack it)"),
    "duration_p_watchdog": (np.float64, "1", "P(duration >= duration_watchdog_at), the first "
                            "histogram edge at or above the watchdog key: a lower bound of "
                            "P(duration > watchdog) (NaN: no watchdog, or the jobs' d differ)"),
    "duration_p_watchdog_lo": (np.float64, "1", "lower end of its 95% interval (Wilson)"),
    "duration_p_watchdog_hi": (np.float64, "1", "upper end of its 95% interval (Wilson)"),
    "duration_watchdog_at": (np.float64, "s", "the threshold duration_p_watchdog used"),
    "wait_mean": (np.float64, "s", "mean wait of a checkpoint, due to firing (MODEL.md E1 "
                  "WAIT, E5 QUEUE)"),
    "wait_mean_lo": (np.float64, "s", "lower end of its 95% interval (ratio over fleets)"),
    "wait_mean_hi": (np.float64, "s", "upper end of its 95% interval (ratio over fleets)"),
    "wait_max": (np.float64, "s", "longest wait of any fleet"),
    # failures and goodput (MODEL.md E8; stormsim.stats.goodput), cells whose
    # fleet has failures only: NaN (-1, 'none') for the others
    **_goodput_scalars(),
    # power (MODEL.md E6; stormsim.stats.power), cells whose fleet has power
    # only: NaN for the others
    **_power_scalars(),
}
#: The SCALARS of the checkpoint durations (computed by _checkpoint_summary).
CHECKPOINT_KEYS = tuple(k for k in SCALARS if k == "checkpoints" or k.startswith(("duration_",
                                                                                   "wait_")))
#: The SCALARS of failures and goodput (computed by _goodput_summary).
GOODPUT_KEYS = tuple(_goodput_scalars())
#: The SCALARS of power (computed by _power_summary).
POWER_KEYS = tuple(_power_scalars())
#: Per-(cell, k) arrays of the table: name -> (units, long name).
BY_LEVEL = {
    "p_ge": ("1", "P(n_w >= k): share of measured time with at least k jobs writing"),
    "p_ge_lo": ("1", "lower end of the 95% interval of P(n_w >= k) (see p_ge_method)"),
    "p_ge_hi": ("1", "upper end of the 95% interval of P(n_w >= k) (see p_ge_method)"),
    "p_ge_independent": ("1", "P(n_w >= k) for independent jobs with the measured writing "
                         "fractions (see independent_law)"),
    "p_ge_law": ("1", "P(n_w >= k) of the exact long-run law (the product form, "
                 "stormsim.stationary) where it exists: a base-model cell with jitter on every "
                 "job (NaN elsewhere); beside p_ge, it shows whether the run has mixed"),
    # storms (MODEL.md E3; stormsim.stats.storms): episodes with n_w >= k
    "storms": ("1", "storms at level k (up-crossings of n_w to k or more) counted in the "
               "measured window, summed over the fleets"),
    "storms_per_s": ("1/s", "storm rate nu_k: storms per second of measured time"),
    "storms_per_s_lo": ("1/s", "lower end of the 95% interval of nu_k (see storms_method)"),
    "storms_per_s_hi": ("1/s", "upper end of the 95% interval of nu_k (see storms_method; "
                        "no storm: a one-sided Poisson upper bound)"),
    "storm_duration": ("s", "mean storm duration: time at n_w >= k per storm (NaN: no storm)"),
    "storm_duration_lo": ("s", "lower end of the 95% interval of the mean storm duration"),
    "storm_duration_hi": ("s", "upper end of the 95% interval of the mean storm duration"),
    "storms_per_s_law": ("1/s", "storm rate nu_k of the exact long-run law where it exists "
                         "(see p_ge_law; NaN elsewhere)"),
}
#: The BY_LEVEL entries of the storms (computed by _storm_summary).
STORM_KEYS = ("storms", "storms_per_s", "storms_per_s_lo", "storms_per_s_hi", "storm_duration",
              "storm_duration_lo", "storm_duration_hi")


def level_column(name: str, level) -> str:
    """The one name of a per-level number at one level, in every view (Results.summary,
    to_dataframe, the CSV and JSON of ``stormsim inspect``): ``name`` a BY_LEVEL key
    (or ``k``, the level's k, or ``p_ge_bound``, the upper end shown), ``level`` an
    integer k or a spec ('N/4' -> 'N_4'). ``p_ge_lo`` -> ``p_ge_4_lo``,
    ``storms_per_s_hi`` -> ``storms_per_s_ge_4_hi``, ``storms`` -> ``storms_ge_4``,
    ``k`` -> ``k_N_4``."""
    lab = re.sub(r"\W+", "_", str(level).strip())
    if name == "k":
        return f"k_{lab}"
    if name.startswith("p_ge"):
        return name.replace("p_ge", f"p_ge_{lab}", 1)
    for end in ("_lo", "_hi", "_method", "_law"):
        if name.endswith(end):
            return f"{name[:-len(end)]}_ge_{lab}{end}"
    return f"{name}_ge_{lab}"


def _alike(c) -> bool:
    return all(np.all(np.asarray(a) == np.asarray(a)[0]) for a in (c.T, c.d, c.jitter)
               if np.size(a))


def job_write_fractions(c):
    """Each job's share of the measured time spent writing, where the cell
    records it (a per-job writing time, summed over fleets as
    ``writing_time_sum`` (N,) or per fleet as ``writing_time`` (fleets, N)),
    else None. The measured time is the occupancy's total."""
    total = float(np.sum(c.occupancy_sum))
    wt = getattr(c, "writing_time_sum", None)
    if wt is None and getattr(c, "writing_time", None) is not None:
        wt = np.asarray(c.writing_time, dtype=np.float64).sum(axis=0)
    if wt is None or not total > 0:
        return None
    return np.clip(np.asarray(wt, dtype=np.float64) / total, 0.0, 1.0)


def _median(t, obs, confidence):

    return kaplan_meier(t, obs, confidence).median


def cell_summary(c, confidence: float = CONFIDENCE) -> dict:
    """One cell's numbers (see the module notes).

    ``c`` has the fields of ``stormsim.store.results.CellResult``: params, T, d, sigma,
    passage_cycle, passage_time, end_time, occupancy (per fleet, or None),
    occupancy_blocks (per block of fleets, or None), occupancy_sum and
    fleets_done. Arrays indexed by k run over k = 0..N.
    """

    p = c.params
    n = int(np.size(c.T))
    F = int(c.fleets_done)
    lvl = int(p.get("passage_level", 0) or 0)
    stops = bool(p.get("stop_at_passage", True))
    nan3 = (math.nan,) * 3
    out = {"N": n, "fleets_done": F, "passed": 0, "censored": 0}
    med, medt = nan3, nan3
    if lvl > 0 and F > 0:
        cycles = int(p["cycles"])
        t, obs = passage_times(c.passage_cycle, cycles)
        out["censored"] = int((~obs).sum())
        out["passed"] = F - out["censored"]
        med = _median(t, obs, confidence)
        tt, ot = passage_times(c.passage_cycle, cycles, c.passage_time, c.end_time)
        medt = _median(tt, ot, confidence)
    out["median"], out["median_lo"], out["median_hi"] = med
    out["median_time"], out["median_time_lo"], out["median_time_hi"] = medt

    occ_sum = np.asarray(c.occupancy_sum, dtype=np.float64)
    if getattr(c, "occupancy", None) is not None:
        units = c.occupancy
    elif getattr(c, "occupancy_blocks", None) is not None:
        units = c.occupancy_blocks
    else:                       # a version-1 sum-mode file: the total only, no spread
        units = occ_sum[None, :]
    est = tail_estimate(units if F else np.zeros((0, n + 1)), fleets=F, confidence=confidence,
                        occupancy_sum=occ_sum)
    out["interval_units"] = est.units if F else 0
    pge, lo, hi, method = est.p_ge, est.p_ge_lo, est.p_ge_hi, est.method
    total = occ_sum.sum()
    out["p_write"] = float(writing_fraction(occ_sum)) if total > 0 else math.nan
    indep, law = independent_tail(occ_sum, _alike(c), job_write_fractions(c))
    if lvl > 0 and stops:
        s = slice(lvl, None)
        pge[s] = lo[s] = hi[s] = indep[s] = np.nan
        method[s] = "structural"
    out.update(p_ge=pge, p_ge_lo=lo, p_ge_hi=hi, p_ge_method=method, p_ge_independent=indep,
               independent_law=law)
    out.update(_storm_summary(c, n, F, confidence, lvl if stops else 0))
    out["p_ge_law"], out["storms_per_s_law"] = _law(c, n)
    out.update(_checkpoint_summary(c, confidence))
    out.update(_goodput_summary(c, confidence))
    out.update(_power_summary(c, confidence))
    return out


def _power_summary(c, confidence: float) -> dict:
    """The POWER_KEYS of a cell and ``ramps``, its RampEstimate (MODEL.md E6,
    stormsim.stats.power: mean_power, ramp_estimate_of), over its fleets: NaN
    and None for a cell without power (or a file written before it)."""
    out = {k: math.nan for k in POWER_KEYS}
    out["ramps"] = None
    pm = getattr(c, "power_mean", None)
    if pm is None or np.size(pm) == 0:
        return out
    window = np.asarray(c.window, dtype=np.float64)
    if np.size(pm) >= 2:
        iv = mean_power(window, pm, confidence)
        out["power_mean"], out["power_mean_lo"], out["power_mean_hi"] = iv.value, iv.lo, iv.hi
    else:                                  # one fleet: its value, no interval
        out["power_mean"] = float(np.asarray(pm, dtype=np.float64)[0])
    out["power_min"] = float(np.min(c.power_min))
    out["power_max"] = float(np.max(c.power_max))
    if np.size(c.ramp_events):
        out["ramps"] = ramp_estimate_of(window, c.ramp_events, c.ramp_share, c.ramp_windows,
                                        c.ramp_thresholds, confidence)
    return out


def ramp_table(ramps: list) -> dict | None:
    """The RAMP_ARRAYS of the cells' RampEstimates (None: a cell without) on the
    union of their windows and thresholds: {"ramp_window": (D,), "ramp_threshold":
    (X,), name: (cells, D, X)} (NaN, '' where a cell has no such D and X); None
    when no cell has one."""
    have = [r for r in ramps if r is not None]
    if not have:
        return None
    windows = np.array(sorted({w for r in have for w in r.windows}), dtype=np.float64)
    thresholds = np.array(sorted({x for r in have for x in r.thresholds}), dtype=np.float64)
    shape = (len(ramps), windows.size, thresholds.size)
    out = {"ramp_window": windows, "ramp_threshold": thresholds}
    for name in RAMP_ARRAYS:
        out[name] = (np.full(shape, "", dtype=object) if name == "ramp_method"
                     else np.full(shape, np.nan))
    for i, r in enumerate(ramps):
        if r is None:
            continue
        a = np.searchsorted(windows, r.windows)
        b = np.searchsorted(thresholds, r.thresholds)
        for name in RAMP_ARRAYS:
            value = r.method if name == "ramp_method" else getattr(r, name)
            out[name][i][np.ix_(a, b)] = value
    out["ramp_method"] = out["ramp_method"].astype(str)
    return out


def _goodput_summary(c, confidence: float) -> dict:
    """The GOODPUT_KEYS of a cell (stormsim.stats.goodput), over its fleets: NaN,
    -1 and 'none' for a cell without failures (or a file written before them)."""
    out = {k: -1 if SCALARS[k][0] is np.int64 else math.nan for k in GOODPUT_KEYS}
    out["goodput_method"] = "none"
    committed = getattr(c, "committed_work", None)
    if committed is None or np.size(committed) == 0:
        return out
    for name in ("failures", "abandoned_writes", "outages"):
        out[name] = int(round(float(np.sum(getattr(c, name)))))
    window = np.asarray(c.window, dtype=np.float64)
    two = np.size(committed) >= 2          # an interval needs a spread over fleets
    per_fleet = [window] * 2 if two else [window.sum(keepdims=True)] * 2   # one: its value only
    arrays = [np.asarray(a, dtype=np.float64) for a in (
        committed, c.checkpoint_time, c.lost_work, c.down_time, c.uncommitted_work, c.failures)]
    if not two:
        arrays = [a.sum(keepdims=True) for a in arrays]
        per_fleet = [np.concatenate([w, w]) for w in per_fleet]
        arrays = [np.concatenate([a, a]) for a in arrays]
    g = goodput_of_sums(int(np.size(c.T)), per_fleet[0], *arrays[:5], confidence=confidence)
    f = ratio(arrays[5] * SECONDS_PER_DAY, per_fleet[1], confidence)
    for name, iv in ([("goodput", g["goodput"])] + [(f"goodput_{p}", g[p]) for p in GOODPUT_PARTS]
                     + [("failures_per_day", f)]):
        out[name] = iv.value
        out[f"{name}_lo"], out[f"{name}_hi"] = (iv.lo, iv.hi) if two else (math.nan, math.nan)
    out["goodput_method"] = "ratio-delta" if two else "none"
    return out


def _units_of(c, name):
    """A summed array's independent units: per fleet, else per block, else None."""
    per = getattr(c, name, None)
    return per if per is not None else getattr(c, f"{name}_blocks", None)


def _checkpoint_summary(c, confidence: float) -> dict:
    """The CHECKPOINT_KEYS of a cell (stormsim.stats.durations), over the same
    independent units as P(n_w >= k): fleets, or blocks of fleets in "sum" mode."""
    out = {k: math.nan for k in CHECKPOINT_KEYS}
    out["checkpoints"] = -1
    count = _units_of(c, "durations_count")
    if count is None:                      # a file written before they were recorded
        return out
    out["checkpoints"] = int(np.sum(count))
    for what in ("duration", "wait"):
        mx = getattr(c, "durations_max" if what == "duration" else "wait_max", None)
        if mx is not None and np.size(mx):
            out[f"{what}_max"] = float(np.max(mx))
    if np.size(count) < 2 or out["checkpoints"] == 0:
        return out                         # no spread to measure, or nothing to measure
    d, T = np.asarray(c.d, dtype=np.float64), np.asarray(c.T, dtype=np.float64)
    same_d = bool(np.all(d == d[0]))
    arrays = {}
    for what, hist, total, edges, scale in (
            ("duration", "durations_hist", "durations_sum", DURATION_EDGES, d),
            ("wait", "wait_hist", "wait_sum", WAIT_EDGES, T)):
        alike = bool(np.all(scale == scale[0]))
        arrays[what] = Checkpoints(np.asarray(count, np.float64),
                                   np.asarray(_units_of(c, total), np.float64),
                                   np.asarray(_units_of(c, hist), np.float64),
                                   edges * float(scale[0]) if alike else edges,
                                   "s" if alike else ("d_i" if what == "duration" else "T_i"))
        m = mean(arrays[what], confidence=confidence)
        out[f"{what}_mean"], out[f"{what}_mean_lo"], out[f"{what}_mean_hi"] = m.value, m.lo, m.hi
    if same_d:
        q = quantile(arrays["duration"], 0.99, confidence=confidence)
        out["duration_p99"], out["duration_p99_lo"], out["duration_p99_hi"] = q.value, q.lo, q.hi
        watchdog = c.params.get("watchdog")
        if watchdog is not None and math.isfinite(watchdog) and watchdog <= DURATION_EDGES[-1] * d[0]:
            e = exceedance(arrays["duration"], watchdog, confidence=confidence)
            out["duration_p_watchdog"], out["duration_p_watchdog_lo"] = e.value, e.lo
            out["duration_p_watchdog_hi"] = e.hi
            out["duration_watchdog_at"] = exceedance_edge(arrays["duration"], watchdog)
    return out


def _law(c, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact law's P(n_w >= k) and nu_k, k = 0..N, of a cell it covers
    (the base model: blocking, equal weights, no writer cap, jitter on every
    job; ``risk.exact``'s rule without the launch), else NaN: the law is the
    long-run value a run from any launch approaches as it mixes."""
    nan = np.full(n + 1, np.nan)
    p = c.params
    weights = getattr(c, "weights", None)
    sigma = np.asarray(c.jitter, dtype=np.float64)
    mtbf = getattr(c, "mtbf", None)
    fails = (mtbf is not None and bool(np.any(np.isfinite(mtbf)))) or math.isfinite(
        float(p.get("outage_mtbf", math.inf)))   # MODEL.md E8: no stationary law with failures
    if (fails or p.get("checkpoint", "blocking") != "blocking" or n == 0 or not np.all(sigma > 0)
            or (weights is not None and np.any(np.asarray(weights) != np.asarray(weights)[0]))
            or (p.get("max_writers") or n) < n):
        return nan, nan.copy()
    fleet = Fleet(T=c.T, d=c.d, cap=float(p.get("cap", math.inf)), jitter=sigma,
                  throughput=np.asarray(c.f, dtype=np.float64)[1:])
    law = stationary(fleet)
    return np.array(law.p_ge), np.array(law.storms_per_s)


def _storm_summary(c, n: int, F: int, confidence: float, structural_from: int) -> dict:
    """The STORM_KEYS and ``storms_method`` of a cell (stormsim.stats.storms), k = 0..N,
    over the same independent units as P(n_w >= k)."""
    e_sum = getattr(c, "upcrossings_sum", None)
    occ_sum = np.asarray(c.occupancy_sum, dtype=np.float64)
    if e_sum is None or F == 0:
        out = {k: np.full(n + 1, np.nan) for k in STORM_KEYS}
        out["storms_method"] = np.full(n + 1, "not-recorded" if e_sum is None else "none",
                                       dtype=object)
        return out
    e, occ = getattr(c, "upcrossings", None), getattr(c, "occupancy", None)
    if e is None or occ is None:
        e, occ = getattr(c, "upcrossings_blocks", None), getattr(c, "occupancy_blocks", None)
    if e is None or occ is None:
        e, occ = np.asarray(e_sum)[None, :], occ_sum[None, :]
    est = storm_estimate(e, occ, fleets=F, confidence=confidence, upcrossings_sum=e_sum,
                         occupancy_sum=occ_sum)
    out = {k: np.array(getattr(est, k), dtype=np.float64) for k in STORM_KEYS}
    method = est.method.copy()
    if structural_from > 0:
        s = slice(structural_from, None)
        for k in STORM_KEYS:
            out[k][s] = np.nan
        method[s] = "structural"
    out["storms_method"] = method
    return out


def summary_table(cells, n_cells: int, confidence: float = CONFIDENCE) -> dict:
    """The per-cell table from an iterable of cells (each once, any order).

    Returns {name: array}: the SCALARS (n_cells,), ``k`` (1..max N), the
    BY_LEVEL arrays and ``p_ge_method`` (int8 METHOD_CODES) of shape
    (n_cells, max N), NaN (-1) where k > the cell's N, and
    ``independent_law`` (n_cells,) str.
    """
    rows = [None] * n_cells
    for c in cells:
        rows[c.index] = cell_summary(c, confidence)
    return table_of_rows(rows)


def table_of_rows(rows: list) -> dict:
    """:func:`summary_table` from the cells' :func:`cell_summary` rows (None: no row)."""
    n_cells = len(rows)
    kmax = max((r["N"] for r in rows if r is not None), default=0)
    out = {"k": np.arange(1, kmax + 1, dtype=np.int64)}
    for name, (dtype, _, _) in SCALARS.items():
        fill = np.nan if dtype is np.float64 else "none" if dtype is str else 0
        out[name] = np.array([fill if r is None else r[name] for r in rows], dtype=dtype)
    for name in BY_LEVEL:
        a = np.full((n_cells, kmax), np.nan)
        for i, r in enumerate(rows):
            if r is not None:
                a[i, :r["N"]] = r[name][1:]
        out[name] = a
    m = np.full((n_cells, kmax), -1, dtype=np.int8)
    for i, r in enumerate(rows):
        if r is not None:
            m[i, :r["N"]] = [METHOD_CODES[x] for x in r["p_ge_method"][1:]]
    out["p_ge_method"] = m
    sm = np.full((n_cells, kmax), -1, dtype=np.int8)
    for i, r in enumerate(rows):
        if r is not None:
            sm[i, :r["N"]] = [STORM_METHODS[x] for x in r["storms_method"][1:]]
    out["storms_method"] = sm
    out["independent_law"] = np.array(["none" if r is None else r["independent_law"]
                                       for r in rows], dtype=object).astype(str)
    ramps = ramp_table([None if r is None else r.get("ramps") for r in rows])
    if ramps is not None:           # cells with power (MODEL.md E6)
        out["ramps"] = ramps
    return out

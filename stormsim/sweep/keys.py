"""The keys of a sweep file, one table: each key's doc, check, default, column
dtype, aliases and how it enters the run seed (see ``stormsim.sweep.spec``, "How to
add a key"). ``spec`` reads sweep files with it and resolves their cells.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..risk.settings import FIELDS as SPLIT_FIELDS
from ..risk.settings import SplitSettings
from ..risk.splitting import BASIN_RULES, MIN_ENTRIES, MIN_REPLICATES, SCORE_EVERY
from ..risk.stormrisk import (DEFAULT_MAX_SECONDS, DEFAULT_METHOD, DEFAULT_REL_ERROR,
                              FIXED_REPLICATES)
from ..risk.stormrisk import METHODS as RISK_METHODS
from . import checks as ck
from . import jobtable

__all__ = ["ABSENT", "COLUMNS", "DEFAULTS", "KEY", "KEYS", "OCCUPANCY_MODES", "PARAMS", "PARAM_ATTRS",
           "REFUSED_KEYS", "REQUIRED", "RISK_DEFAULTS", "RISK_KEYS", "RISK_SPLIT_KEYS", "SEED_DOMAIN",
           "SEED_ROLES", "SWEEP_KEYS", "TABLES", "Key", "unknown_key"]

#: Version of the cell-seed derivation (part of the hashed bytes).
SEED_DOMAIN = b"stormsim.sweep.cell-seed/1\0"

#: How a key enters a cell's run seed:
#: "fleet": through the fleet's canonical encoding (N, T, d, cap, f, sigma);
#: "always": its value is in the seed's canonical JSON (the keys of version 1);
#: "unless-default": in it only when not at its default (every key added later);
#: "no": not at all (``fleets``: more fleets extend a cell);
#: "identity": not in the run seed (the same draws), but in the sweep's
#: identity (``fast_forward``: another engine's digits, which a resume must
#: not mix with the first one's; the storm risk's settings);
#: "observed": not in the run seed (it moves no draw), in the sweep's identity
#: where the cell observes it (power, MODEL.md E6: ``Cell.identity``).
SEED_ROLES = ("fleet", "always", "unless-default", "no", "identity", "observed")


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


#: ``Key.default`` for a key the file must give.
REQUIRED = _Marker("REQUIRED")
#: ``Key.default`` for a key whose absence means something (e.g. ``load`` vs ``d``).
ABSENT = _Marker("ABSENT")


@dataclass(frozen=True)
class Key:
    """One key of a cell (see the module docstring: "How to add a key")."""

    name: str
    doc: str
    check: Callable | None          # None: derived, a column only (not accepted in a file)
    default: object = ABSENT
    dtype: object = None            # column dtype in the parameter table; None: no column
    aliases: tuple = ()
    seed: str = "fleet"
    kwarg: bool = False             # passed to stormsim.simulate under its own name
    units: str | None = None        # of its column in results (UDUNITS; None: text)
    long_name: str = ""             # of its column in results (netCDF long_name)

    def __post_init__(self):
        assert self.seed in SEED_ROLES, self.seed


# -- storm risk defaults: storm_risk's constants and SplitSettings' fields ----------

_SPLIT = SplitSettings()
#: The defaults of the settings a sweep's risk_* keys (and ``stormsim risk``)
#: set: storm_risk's own (``stormsim.risk.stormrisk``) and splitting's
#: (``SplitSettings``; replicates: a fixed effort's, FIXED_REPLICATES).
RISK_DEFAULTS = {"method": DEFAULT_METHOD, "rel_error": DEFAULT_REL_ERROR,
                 "max_seconds": DEFAULT_MAX_SECONDS, "max_fleets": None,
                 "replicates": FIXED_REPLICATES, "trials": _SPLIT.trials,
                 "flux_cycles": _SPLIT.flux_cycles, "horizon": _SPLIT.horizon,
                 "basin": _SPLIT.basin, "score_every": _SPLIT.score_every}

# -- THE table of keys ------------------------------------------------------------

_f8, _i8 = np.float64, np.int64

#: Every key of a cell, in order (the order of error messages and of the
#: parameter table). The only place a key is described.
KEYS: tuple[Key, ...] = (
    Key("N", "the number of jobs, an integer >= 1", ck.n_jobs, REQUIRED, _i8,
        aliases=("n", "n_jobs"),
        units="1", long_name="number of jobs"),
    Key("T", "compute work between two checkpoints (s at full rate): a number > 0, or a list "
        "with one per job", ck.per_job(False), 1.0, _f8,
        units="s", long_name="compute work between checkpoints at full rate (NaN where jobs differ)"),
    Key("d", "checkpoint volume (s writing alone): a number > 0, or a list with one per job",
        ck.per_job(False), ABSENT, _f8,
        units="s", long_name="checkpoint volume, seconds writing alone (NaN where jobs differ)"),
    Key("load", "the write load L = sum_i d_i / T_i, a number > 0 (identical jobs: d = L T / N)",
        ck.positive, ABSENT, _f8, aliases=("L",),
        units="1", long_name="write load L = sum d_i / T_i"),
    Key("cap", "the power cap C in full-rate jobs: a number > 0, or inf (uncapped)",
        ck.positive_or_inf, ABSENT, _f8, aliases=("C",),
        units="1", long_name="power cap C in full-rate jobs (inf: uncapped)"),
    Key("cap_fraction", "the power cap as a fraction of N (C = cap_fraction * N): a number > 0, "
        "or inf (uncapped)", ck.positive_or_inf, ABSENT, _f8,
        units="1", long_name="power cap as a fraction of N (C / N)"),
    Key("throughput", "'fair', 'ideal', 'power:ALPHA' (or {power = ALPHA}) with ALPHA in [0, 1], "
        "or a table [f(1), ..., f(N)]", ck.throughput, "fair", str, aliases=("f",),
        units=None, long_name="storage throughput f(n): fair, ideal, power:ALPHA or table"),
    Key("jitter", "the per-cycle compute jitter sigma (s): a number >= 0, a percentage of each "
        "job's T such as '2%' (at most '100%'), or a list with one per job", ck.jitter, ABSENT,
        _f8, aliases=("sigma",),
        units="s", long_name="compute jitter sigma (NaN where jobs differ)"),
    Key("margin", "the stagger margin m = s - d of the fleet (derived; NaN unless the jobs are "
        "identical and a stagger fits)", None, ABSENT, _f8,
        units="s", long_name="stagger margin m (NaN where no stagger exists)"),
    Key("m_over_sigma", "the stagger margin over the jitter, m/sigma: a number > 0 (inf: no "
        "jitter); sets sigma = m / (m/sigma), m = stagger_margin of the fleet",
        lambda v: ck.positive(v, allow_inf=True), ABSENT, _f8,
        aliases=("m/sigma", "margin_over_sigma"),
        units="1", long_name="stagger margin over jitter m/sigma (inf: no jitter)"),
    Key("jobs", "a CSV job table (path relative to the sweep file; units in its header): gives "
        "N, T, d, jitter", jobtable.check_path, ABSENT, str,
        units=None, long_name="CSV job table giving the jobs (relative to the sweep file; empty: none)"),
    Key("bandwidth", "the fabric's bandwidth with 'jobs', e.g. '80 GB/s'",
        jobtable.check_bandwidth, ABSENT, str,
        units=None, long_name="the fabric's bandwidth with its unit, with jobs (empty: none)"),
    Key("checkpoint", "'blocking' (the default) or 'async' (a snapshot, then a background persist "
        "while computing; MODEL.md E1)", ck.one_of("blocking", "async"), "blocking", str,
        units=None, long_name="checkpoint mode: blocking or async (MODEL.md E1)"),
    Key("snapshot", "the async snapshot time s (s): a number >= 0, or a list with one per job",
        ck.per_job(True), 0.0, _f8,
        units="s", long_name="async snapshot time s (NaN where jobs differ)"),
    # (the E1/E2 options above and below are seeded through Fleet.canonical)
    Key("slowdown", "the compute slowdown eps of an async job while its persist is in flight: a "
        "number in [0, 1], or a list with one per job", ck.per_job_in(0.0, 1.0), 0.0, _f8,
        aliases=("eps",),
        units="1",
        long_name="async compute slowdown eps while the job's persist is in flight (NaN where jobs differ)"),
    Key("on_busy", "'block' or 'skip': an async checkpoint due with its persist in flight waits, "
        "or is skipped", ck.one_of("block", "skip"), "block", str, aliases=("rule",),
        units=None, long_name="async checkpoint due with its persist in flight: block or skip"),
    Key("weights", "storage weights w_i (MODEL.md E2): a number > 0, or a list with one per job",
        ck.per_job(False), 1.0, _f8, aliases=("weight", "w"),
        units="1", long_name="storage weight w (MODEL.md E2; NaN where jobs differ)"),
    Key("max_writers", "the writer admission cap K (MODEL.md E5): an integer in 1..N, at most K "
        "checkpoints write at once and the others queue; 'none' (the default): no cap",
        ck.writer_cap, 0, _i8, aliases=("writers", "writer_cap", "K_w"),
        units="1", long_name="writer admission cap K, MODEL.md E5 (0: no cap)"),
    # MODEL.md E8, seeded through Fleet.canonical (only away from never-fail)
    Key("mtbf", "each job's mean time between failures M (wall time; MODEL.md E8): seconds or "
        "a time with its unit such as '24 h', 'inf' or 'none' (the default: never fails), or a "
        "list with one per job", ck.time_or_inf(True, True), math.inf, _f8,
        units="s", long_name="a job's mean time between failures M, MODEL.md E8 (inf: never "
        "fails; NaN where jobs differ)"),
    Key("restart", "each job's restart time R after a failure (MODEL.md E8): seconds >= 0 or a "
        "time with its unit such as '10 min' (default 0), or a list with one per job",
        ck.time_or_inf(False, False), 0.0, _f8,
        units="s", long_name="a job's restart time R after a failure, MODEL.md E8 (NaN where "
        "jobs differ)"),
    Key("outage_mtbf", "the mean time between outages M_0, each failing every job at once "
        "(MODEL.md E8): seconds or a time such as '30 d', 'inf' or 'none' (the default: no "
        "outages)", ck.time_or_inf(True, True, per_job=False), math.inf, _f8,
        units="s", long_name="mean time between outages M_0, MODEL.md E8 (inf: none)"),
    # MODEL.md E6: observed only (power moves no draw), so in no run seed; a
    # cell's identity has them where power is on (seed "observed", Cell.identity)
    Key("busy_power", "each job's draw computing at full rate P^busy (MODEL.md E6): watts or "
        "a power with its unit such as '716.8 kW', or a list with one per job; with "
        "idle_power (both or neither); 'none' (the default): power off",
        ck.power_or_none, None, _f8, seed="observed",
        units="W", long_name="a job's draw computing at full rate, MODEL.md E6 (NaN: power off "
        "or jobs differ)"),
    Key("idle_power", "each job's draw while writing or stopped P^idle (MODEL.md E6): watts or "
        "a power with its unit such as '102.4 kW' (at most busy_power), or a list with one per "
        "job; with busy_power; 'none' (the default): power off",
        ck.power_or_none, None, _f8, seed="observed",
        units="W", long_name="a job's draw writing or stopped, MODEL.md E6 (NaN: power off or "
        "jobs differ)"),
    Key("ramp_windows", "the windows D of the power ramps (MODEL.md E6; cells with power): a "
        "time > 0 (seconds or with its unit such as '1 min') or a list of them (default "
        "[1, 60])", ck.ramp_windows, (1.0, 60.0), seed="observed", aliases=("windows",)),
    Key("ramp_thresholds", "the thresholds X of the power ramps (MODEL.md E6; cells with "
        "power): a power > 0 (watts or with its unit such as '1 MW') or a list of them; "
        "'none' (the default): one job's drop, the largest busy_power - idle_power of the "
        "cell's jobs", ck.ramp_thresholds, None, seed="observed",
        aliases=("thresholds", "drops")),
    Key("launch", "'random', 'sync' or 'stagger'", ck.one_of("random", "sync", "stagger"),
        "random", str, aliases=("theta",), seed="always", kwarg=True,
        units=None, long_name="initial phases: random, sync or stagger"),
    Key("passage_level", "record the first passage to n_w >= k: an integer k in 1..N, or 0 "
        "(or 'none') for no passage", ck.passage_level, 0, _i8, aliases=("level", "passage"),
        seed="always", kwarg=True,
        units="1", long_name="first passage recorded to n_w >= this level (0: none)"),
    Key("stop_at_passage", "true (stop each fleet at its passage: cycles is then a cap) or false",
        ck.boolean, True, np.bool_, seed="always", kwarg=True,
        units="1", long_name="each fleet stops at its passage"),
    Key("fleets", "independent fleets per cell, an integer >= 1", ck.int_at_least(1), REQUIRED,
        _i8, aliases=("n_fleets",), seed="no",
        units="1", long_name="independent fleets"),
    Key("cycles", "cycles K per fleet (a cap when stopping at the passage), an integer >= 1",
        ck.int_at_least(1), REQUIRED, _i8, aliases=("K",), seed="always", kwarg=True,
        units="cycles", long_name="cycles K per fleet (the cap with a passage)"),
    Key("burn_in", "cycles before the occupancy is measured, an integer in 0..cycles-1",
        ck.int_at_least(0), 0, _i8, aliases=("burnin", "B"), seed="always", kwarg=True,
        units="cycles", long_name="cycles before the occupancy is measured"),
    Key("watchdog", "a checkpoint-duration threshold x (s) whose exceedance P(duration > x) "
        "the results show (MODEL.md E7): a number > 0, or 'none' (the default); changes nothing "
        "simulated", ck.seconds_or_none, float("nan"), _f8, aliases=("timeout",), seed="no",
        units="s", long_name="checkpoint-duration threshold of duration_p_watchdog (NaN: none)"),
    Key("fast_forward", "'auto' (simulate's default: integrate collision-free stretches with the "
        "exact fast-forward in first-passage runs of uncapped base-model cells), true (in every "
        "run where it applies) or false (the event loop only); the fast-forward's numbers are "
        "the event loop's to rounding, not bit for bit", ck.auto_or_boolean, "auto",
        seed="identity", kwarg=True),
    # storm risk: stormsim.storm_risk per cell with a fixed effort (max_seconds
    # = None), run once per cell besides its fleets; the cell's run seed, cycles, burn_in and
    # launch (Cell.risk_kwargs). None: the default (RISK_DEFAULTS): storm_risk's, or
    # SplitSettings' for the keys of RISK_SPLIT_KEYS.
    Key("risk_levels", "the storm risk's levels k: a list of integers, 'N' or 'N/q' (e.g. "
        "[4, 'N/2', 'N']); [] (the default): no storm risk", ck.tail_level_list, (),
        aliases=("storm_risk", "risk", "risk_level"), seed="identity"),
    Key("risk_method", "'auto' (plain Monte Carlo, then forward flux sampling with "
        "risk_replicates for the levels it left unresolved), 'plain' or 'splitting'",
        ck.one_of(*RISK_METHODS), "auto", seed="identity"),
    Key("risk_fleets", "plain Monte Carlo fleets of the storm risk, an integer >= 1 (at least "
        "2 batches, rounded up to whole ones: stormsim.risk.stormrisk.fixed_batch); needed unless "
        "risk_method = 'splitting'", ck.int_at_least(1), None, aliases=("max_fleets",),
        seed="identity"),
    Key("risk_replicates", f"splitting replicates of the storm risk, an integer >= "
        f"{MIN_REPLICATES} (its interval comes from their spread; default "
        f"{RISK_DEFAULTS['replicates']})", ck.int_at_least(MIN_REPLICATES), None,
        aliases=("replicates",), seed="identity"),
    Key("risk_rel_error", "the storm risk's target relative error, a number > 0 (default "
        f"{RISK_DEFAULTS['rel_error']}): plain Monte Carlo stops early once every level "
        "reaches it, and 'auto' splits the levels that do not", ck.positive, None,
        aliases=("rel_error",), seed="identity"),
    Key("risk_trials", "splitting clones per stage, an integer >= 1 (default "
        f"{RISK_DEFAULTS['trials']})", ck.int_at_least(1), None, aliases=("trials",),
        seed="identity"),
    Key("risk_flux_cycles", "cycles of each splitting replicate's flux run, an integer > burn_in "
        f"(default {RISK_DEFAULTS['flux_cycles']})", ck.int_at_least(1), None,
        aliases=("flux_cycles",), seed="identity"),
    Key("risk_horizon", "the splitting score's look-ahead in cycles, an integer >= 0 (default "
        f"{RISK_DEFAULTS['horizon']})", ck.int_at_least(0), None, aliases=("horizon",),
        seed="identity"),
    Key("risk_basin", "the splitting basin's edge L_0: an integer level, 'raised' (the highest "
        f"level a flux run enters >= {MIN_ENTRIES} times) or 'most-entries' (the level entered "
        f"most often); default {RISK_DEFAULTS['basin']!r}", ck.int_or_one_of(1, *BASIN_RULES),
        None, aliases=("basin",), seed="identity"),
    Key("risk_score_every", "when the splitting score is looked at: 'cycle' (once a cycle, and "
        "at every write end near the next interface) or 'write-end' (at every write end); "
        f"default {RISK_DEFAULTS['score_every']!r}", ck.one_of(*SCORE_EVERY), None,
        aliases=("score_every",), seed="identity"),
    Key("seed", "an integer >= 0; each cell's run seed derives from it and the cell's parameters",
        ck.int_at_least(0, below=2**63), 0, _i8, seed="always",
        units="1", long_name="the user's seed"),
    Key("run_seed", "the cell's run seed, passed to stormsim.simulate(seed=...) (derived)",
        None, ABSENT, _i8, seed="no",
        units="1", long_name="the seed given to stormsim.simulate"),
)

KEY: dict[str, Key] = {k.name: k for k in KEYS}
#: Keys a sweep file may give ([fixed] or [grid]) -> what is allowed.
PARAMS: dict[str, str] = {k.name: k.doc for k in KEYS if k.check is not None}
DEFAULTS: dict[str, object] = {k.name: k.default for k in KEYS
                               if k.check is not None and k.default not in (REQUIRED, ABSENT)}
#: Columns of the parameter table, in order, with their numpy dtype (str: text).
COLUMNS: dict[str, object] = {k.name: k.dtype for k in KEYS if k.dtype is not None}
#: Column -> (units, long name), the attributes of its dataset in results.
PARAM_ATTRS: dict[str, tuple] = {k.name: (k.units, k.long_name) for k in KEYS if k.dtype is not None}
_HINTS = {a: k.name for k in KEYS for a in k.aliases}
#: The risk_* keys -> the setting each sets: a storm_risk argument (risk_levels:
#: ``levels``) or, for RISK_SPLIT_KEYS, a SplitSettings field.
RISK_KEYS: dict[str, str] = {k.name: k.name[len("risk_"):] for k in KEYS
                             if k.name.startswith("risk_")}
RISK_KEYS["risk_fleets"] = "max_fleets"
#: The risk_* keys that set splitting's settings -> their SplitSettings field.
RISK_SPLIT_KEYS: dict[str, str] = {k: f for k, f in RISK_KEYS.items() if f in SPLIT_FIELDS}
#: Keys refused with a reason (not merely unknown).
REFUSED_KEYS: dict[str, str] = {
    name: ("a sweep's storm risk has a fixed effort, never a time budget: a result must not "
           "depend on the machine's speed, threads or a resume. Give risk_fleets (plain Monte "
           "Carlo fleets) and risk_replicates (splitting replicates) instead; for a time budget "
           "use stormsim risk FILE --cell I --max-seconds S")
    for name in ("risk_max_seconds", "max_seconds")}

#: [sweep] table: key -> what is allowed (every value is a string).
SWEEP_KEYS: dict[str, str] = {
    "name": "a string naming the sweep (default: the file's name)",
    "description": "a string",
    "occupancy": "'fleet' (store each fleet's occupancy, the default) or 'sum' (store only "
                 "its exact sum over the cell's fleets)",
}
OCCUPANCY_MODES = ("fleet", "sum")

TABLES = {"sweep": "options of the sweep", "fixed": "parameters shared by every cell",
          "grid": "parameters to vary: each a list of values; cells are every combination"}


def unknown_key(key: str, allowed) -> str:
    allowed = list(allowed)
    hint = _HINTS.get(key) if _HINTS.get(key) in allowed else None
    if hint is None:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = close[0] if close else None
    did = f" (did you mean {hint!r}?)" if hint else ""
    return f"unknown key{did}; allowed keys: {', '.join(allowed)}"


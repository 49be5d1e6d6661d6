"""A cell: one point of a sweep's grid, resolved from its keys' values and seeded.

``resolve_values(index, values)`` checks the rules between keys (load or d,
cap or cap_fraction, jitter or m_over_sigma, the storm risk's), builds the
:class:`~stormsim.Fleet` and derives the run seed (see ``stormsim.sweep.spec``,
"Seeding"); :class:`Cell` hands ``simulate`` and ``storm_risk`` their keyword
arguments.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

import numpy as np

from .._format import fmt_toml
from ..engine.launch import stagger_margin, stagger_theta
from ..engine.model import Fleet, throughput_label
from ..engine.run import choose_kernel, fast_forward_applies
from ..errors import SpecError
from ..risk.splitting import check_splittable
from .._args import tail_level
from . import checks as ck
from . import jobtable
from .checks import Bad
from .keys import (
    KEY,
    KEYS,
    PARAMS,
    REQUIRED,
    RISK_DEFAULTS,
    RISK_KEYS,
    SEED_DOMAIN,
)

__all__ = ["Cell", "cell_seed", "resolve_values", "seed_canon"]

# -- seeding ---------------------------------------------------------------------

def _canon(v):
    """A key's value in the seed's canonical JSON: floats exactly, as hex."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v).hex()
    if isinstance(v, (tuple, list)):
        return [_canon(x) for x in v]
    return v


fleet_canon = Fleet.canonical  # the one canonical encoding of a fleet


def seed_canon(fleet: Fleet, values: dict) -> dict:
    """What a run seed hashes: the fleet's encoding and the seeded keys' values."""
    canon = fleet_canon(fleet)
    for k in KEYS:
        if k.seed == "always":
            canon[k.name] = _canon(values[k.name])
        elif k.seed == "unless-default" and values.get(k.name, k.default) != k.default:
            canon[k.name] = _canon(values[k.name])
    return canon


def cell_seed(fleet: Fleet, **values) -> int:
    """The run seed of a cell: a pure function of what is simulated.

    ``run_seed = int.from_bytes(sha256(SEED_DOMAIN + canonical)[:8], "big") >> 1``
    where ``canonical`` is the compact, key-sorted JSON of the fleet (N, T, d,
    cap, f(0..N), sigma as float.hex strings) and of the keys seeded "always"
    (launch, cycles, burn_in, passage_level (0 = none), stop_at_passage and
    the user's ``seed``); keys seeded "unless-default" join it only away from
    their default. It is a 63-bit integer, passed to ``stormsim.simulate(seed=...)``.
    ``fleets`` is not part of it: more fleets extend a cell, they do not
    change its first ones.
    """
    blob = json.dumps(seed_canon(fleet, values), sort_keys=True, separators=(",", ":")).encode()
    return int.from_bytes(hashlib.sha256(SEED_DOMAIN + blob).digest()[:8], "big") >> 1


# -- cells -----------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Cell:
    """One point of a sweep: a fleet, the simulate keyword arguments, a seed.

    ``stormsim.simulate(cell.fleet, fleets=cell.fleets, **cell.simulate_kwargs())``
    reproduces the cell's stored arrays bit for bit. ``values`` holds every
    column of the parameter table (given, default or derived).
    """

    index: int
    fleet: Fleet
    values: dict = field(repr=False)

    @property
    def n_jobs(self) -> int:
        return self.fleet.n_jobs

    @property
    def fleets(self) -> int:
        return self.values["fleets"]

    @property
    def cycles(self) -> int:
        return self.values["cycles"]

    @property
    def burn_in(self) -> int:
        return self.values["burn_in"]

    @property
    def launch(self) -> str:
        return self.values["launch"]

    @property
    def stop_at_passage(self) -> bool:
        return self.values["stop_at_passage"]

    @property
    def passage_level(self) -> int | None:
        return self.values["passage_level"] or None

    @property
    def seed(self) -> int:
        return self.values["seed"]

    @property
    def run_seed(self) -> int:
        return self.values["run_seed"]

    def simulate_kwargs(self) -> dict:
        """simulate()'s keyword arguments but fleets.

        ``fast_forward`` is the cell's key, simulate()'s own values and default
        ("auto"), except that true in a grid of mixed cells asks for the
        fast-forward where the engine has one (``engine.run.fast_forward_applies``)
        and leaves the others at "auto" (which is the event loop for them)."""
        kw = {k.name: self.values[k.name] for k in KEYS if k.kwarg}
        kw["passage_level"] = self.passage_level
        if kw["fast_forward"] is True and not fast_forward_applies(self.fleet):
            kw["fast_forward"] = "auto"
        kw["seed"] = self.run_seed
        if self.fleet.has_power:          # MODEL.md E6: the ramps, through the event loop
            kw["ramps"] = self.ramps
            if kw["fast_forward"] is True:
                kw["fast_forward"] = "auto"
        return kw

    @property
    def ramps(self) -> tuple | None:
        """(windows D, thresholds X) of the cell's power ramps (MODEL.md E6), as
        simulate's ``ramps``; None for a cell without power."""
        if not self.fleet.has_power:
            return None
        return (tuple(self.values["ramp_windows"]), tuple(self.values["ramp_thresholds"]))

    @property
    def ramp_shape(self) -> tuple:
        """(len D, len X) of the cell's ramp arrays; (0, 0) without power."""
        r = self.ramps
        return (0, 0) if r is None else (len(r[0]), len(r[1]))

    @property
    def has_risk(self) -> bool:
        """Whether the cell asks for its storm risk (``risk_levels``)."""
        return bool(self.values["risk_levels"])

    def risk_levels(self) -> np.ndarray:
        """The storm risk's levels k for this cell's N, sorted, each once ('N/q' resolved)."""
        return np.array(sorted({tail_level(x, self.n_jobs) for x in self.values["risk_levels"]}),
                        dtype=np.int64)

    def risk_kwargs(self) -> dict | None:
        """The storm risk's settings, every one resolved (None: no storm risk):
        storm_risk()'s keyword arguments but the fleet, with splitting's
        settings (the risk_* keys of RISK_SPLIT_KEYS) under their SplitSettings
        field names beside them; a result records them as they are.

        ``stormsim.storm_risk(cell.fleet, **cellrisk.risk_call(cell.risk_kwargs()))``
        (``risk_call`` gathers splitting's settings into ``split=SplitSettings``)
        reproduces the cell's stored storm risk bit for bit: a fixed effort
        (``max_seconds=None``), the cell's run seed, cycles, burn_in and launch,
        and each risk_* key at its value, its default (RISK_DEFAULTS) where not
        given. Its plain fleets are fleets 0.. of ``simulate(cell.fleet,
        seed=cell.run_seed)`` run for all ``cycles`` (no passage stop;
        simulate's default engine)."""
        if not self.has_risk:
            return None
        kw = {"levels": self.risk_levels(), "max_seconds": None, "seed": self.run_seed,
              "cycles": self.cycles, "burn_in": self.burn_in, "launch": self.launch}
        for key, param in RISK_KEYS.items():
            if key != "risk_levels":
                value = self.values[key]
                kw[param] = RISK_DEFAULTS[param] if value is None else value
        return kw

    def identity(self) -> dict:
        """What is simulated, exactly (floats as hex): hashed into the sweep's identity.
        Keys seeded "identity" (``fast_forward``, the storm risk's) are in it too,
        at their resolved values."""
        extra = {k.name: _canon(self.values[k.name]) for k in KEYS if k.seed == "identity"}
        if self.fleet.has_power:   # MODEL.md E6: observed, in no seed, but in what is stored
            extra["power"] = {"busy_power": _canon(tuple(self.fleet.busy_power)),
                              "idle_power": _canon(tuple(self.fleet.idle_power)),
                              "ramps": _canon(self.ramps)}
        return {**seed_canon(self.fleet, self.values), **extra, "fleets": self.fleets,
                "run_seed": self.run_seed}


def resolve_values(index: int, v: dict, folder=".") -> Cell:
    """Values of every key (given or default) -> a validated Cell, or raise Bad.

    Here live the rules between keys (load or d, cap or cap_fraction, jitter
    or m_over_sigma) and the derived columns."""
    table = jobtable.read(v, folder)          # Fleet.from_jobs keywords, or None
    n = _check_given(v, table)
    cap = v["cap_fraction"] * n if "cap_fraction" in v else v.get("cap", math.inf)
    thr = v["throughput"]
    if isinstance(thr, tuple) and thr[0] != "power" and len(thr) != n:
        raise Bad(f"throughput table has {len(thr)} values but N = {n}: give f(1), ..., f(N)")
    options = _options(v, n, table)
    failures = _failure_options(v, n, table)
    writers = v["max_writers"] or None       # 0: no cap
    if writers is not None and writers > n:
        raise Bad(f"max_writers = {writers} is above N = {n}: must be in 1..N (at most N jobs "
                  "write at once), or 'none' for no cap")
    jobs = _table_fleet(table, v, cap, thr, writers, failures) if table else None
    T = _per_job(v, "T", n) if jobs is None else jobs.T
    d = jobs.d if jobs else v["load"] * T / n if "load" in v else _per_job(v, "d", n)
    spec = dict(T=T, d=d, cap=cap, throughput=thr, max_writers=writers, **options, **failures)
    try:
        fleet, margin = _fleet_and_margin(v, spec, jobs, n)
    except SpecError as exc:
        raise Bad(str(exc)) from None
    fleet = _with_power(v, n, table, fleet)
    if v["passage_level"] > n:
        raise Bad(f"passage_level = {v['passage_level']} is above N = {n}: must be in 1..N, "
                  "or 0 for none")
    if v["burn_in"] >= v["cycles"]:
        raise Bad(f"burn_in = {v['burn_in']} must be below cycles = {v['cycles']}")
    _check_risk(v, n, fleet)
    derived = _derived(v, n, T, fleet, margin)
    values = {k.name: derived[k.name] if k.name in derived else v.get(k.name) for k in KEYS}
    values["run_seed"] = cell_seed(fleet, **values)
    return Cell(index=index, fleet=fleet, values=values)


def _check_given(v: dict, table) -> int:
    """The required keys and the pairs of keys of which at most one (or exactly
    one) is given, or raise Bad; N (the job table's length where there is one)."""
    for key in (k.name for k in KEYS if k.default is REQUIRED):
        if key not in v and not (key == "N" and table):
            raise Bad(f"missing key {key!r}: give it in [fixed] or [grid] ({PARAMS[key]})")
    n = v["N"] if table is None else len(table["size"])
    if table is None and ("load" in v) == ("d" in v):
        raise Bad("give exactly one of 'load' and 'd' (in [fixed] or [grid]); got "
                  + ("both" if "load" in v else "neither"))
    if "cap" in v and "cap_fraction" in v:
        raise Bad("give at most one of 'cap' and 'cap_fraction'")
    if "jitter" in v and "m_over_sigma" in v:
        raise Bad("give at most one of 'jitter' and 'm_over_sigma'")
    return n


def _per_job(v: dict, key: str, n: int) -> np.ndarray:
    """A numeric key's value, one number or one per job, as N numbers."""
    x = v[key]
    if isinstance(x, tuple):
        if len(x) != n:
            raise Bad(f"{key} = {fmt_toml(list(x))} has {len(x)} values but N = {n}: "
                      "give one per job, or a single number")
        return np.array(x)
    return np.full(n, float(x))


def _options(v: dict, n: int, table) -> dict:
    """The E1 / E2 options as Fleet's keywords (a scalar stays one, so that
    Fleet's messages quote it as given); with a job table they are its columns."""
    options = {k: _per_job(v, k, n) if isinstance(v[k], tuple) else v[k] for k in Fleet.OPTIONS}
    if table and any(np.any(np.asarray(v[k]) != Fleet.OPTIONS[k]) for k in Fleet.OPTIONS):
        raise Bad("with a job table ('jobs'), give the asynchronous-checkpoint and weight options "
                  "as its columns, not as keys: "
                  + ", ".join(k for k in Fleet.OPTIONS if np.any(np.asarray(v[k]) != Fleet.OPTIONS[k])))
    return options


def _failure_options(v: dict, n: int, table) -> dict:
    """The E8 keys as Fleet's keywords (mtbf and restart: one value, or one per job);
    with a job table, a key its columns give (mtbf, restart) must stay at its default."""
    out = {k: _per_job(v, k, n) if isinstance(v[k], tuple) else v[k]
           for k in ("mtbf", "restart", "outage_mtbf")}
    both = [k for k in ("mtbf", "restart")
            if table and k in table and np.any(np.asarray(v[k]) != KEY[k].default)]
    if both:
        raise Bad(f"the job table ('jobs') has the column{'s' if len(both) > 1 else ''} "
                  f"{', '.join(both)}: leave the key{'s' if len(both) > 1 else ''} "
                  f"{', '.join(repr(k) for k in both)} out, or drop the column")
    return out


def _table_fleet(table: dict, v: dict, cap, thr, writers, failures: dict) -> Fleet:
    """A job table's fleet, behind the cell's writer cap (a Fleet option, seeded
    through Fleet.canonical only where it caps) and its failure keys (MODEL.md E8:
    mtbf and restart where the table has no such column, outage_mtbf)."""
    jobs = jobtable.fleet(table, v, cap, thr)
    fails = {k: x for k, x in failures.items() if not (k in table and k != "outage_mtbf")}
    if writers is None and all(np.all(np.asarray(x) == KEY[k].default)
                               for k, x in fails.items()):
        return jobs
    fails = {"mtbf": jobs.mtbf, "restart": jobs.restart, **fails}
    try:
        return Fleet(T=jobs.T, d=jobs.d, cap=jobs.cap, throughput=jobs.throughput,
                     jitter=jobs.jitter, checkpoint=jobs.checkpoint, snapshot=jobs.snapshot,
                     slowdown=jobs.slowdown, on_busy=jobs.on_busy, weights=jobs.weights,
                     max_writers=writers, busy_power=jobs.busy_power, idle_power=jobs.idle_power,
                     **fails)
    except SpecError as exc:
        raise Bad(str(exc)) from None


def _with_power(v: dict, n: int, table, fleet: Fleet) -> Fleet:
    """The cell's fleet with the E6 keys busy_power and idle_power (W; both or
    neither), or a job table's power columns; observed only, so the fleet's
    seed and every other output stay as they are. Raises Bad."""
    busy, idle = v["busy_power"], v["idle_power"]
    if table and fleet.has_power and (busy is not None or idle is not None):
        raise Bad("the job table ('jobs') gives the jobs' power (its busy_power and idle_power, "
                  "or gpus, columns): leave the keys 'busy_power' and 'idle_power' out, or drop "
                  "the columns")
    if busy is None and idle is None:
        powered = fleet
    else:
        if busy is None or idle is None:
            given, other = ("busy_power", "idle_power") if idle is None else \
                ("idle_power", "busy_power")
            raise Bad(f"{other} is missing with {given} given: give both (W per job; a job "
                      "computing at rate r draws idle + r (busy - idle)), or neither (power off)")
        try:
            powered = fleet.replace(busy_power=_per_job(v, "busy_power", n) if isinstance(
                busy, tuple) else busy, idle_power=_per_job(v, "idle_power", n) if isinstance(
                idle, tuple) else idle)
        except SpecError as exc:
            raise Bad(str(exc)) from None
    if v["launch"] == "stagger" and powered.has_power and not powered.is_identical:
        raise Bad("busy_power, idle_power: launch = 'stagger' places identical jobs, and the "
                  "engine counts per-job power among what makes jobs identical; give one "
                  "busy_power and one idle_power, or launch = 'random' or 'sync'")
    return powered


def _thresholds(v: dict, fleet: Fleet):
    """The cell's ramp thresholds X (W): as given, or one job's drop (the largest
    busy_power - idle_power); None without power. Raises Bad."""
    if not fleet.has_power:
        return v["ramp_thresholds"]
    if v["ramp_thresholds"] is not None:
        return v["ramp_thresholds"]
    drop = float(np.max(fleet.busy_power - fleet.idle_power))
    if not drop > 0.0:
        raise Bad("ramp_thresholds: the default, one job's drop busy_power - idle_power, is 0 W "
                  "here (the jobs draw the same computing and stopped): give ramp_thresholds")
    return (drop,)


def _fleet_and_margin(v: dict, spec: dict, jobs: Fleet | None, n: int) -> tuple[Fleet, float]:
    """The cell's fleet (``jobs``, a job table's, or one from ``spec``: Fleet's
    keywords but the jitter) and the stagger margin m of its jitter-free fleet
    (NaN where its jobs differ or no margin exists). Raises SpecError or Bad."""
    base = Fleet(jitter=0.0, **spec)
    margin = math.nan
    if base.is_identical:
        try:
            margin = stagger_margin(base)
        except SpecError as exc:
            if "m_over_sigma" in v:
                raise Bad(f"m_over_sigma needs a stagger margin m, and here {exc}") from None
    elif "m_over_sigma" in v:
        raise Bad("m_over_sigma needs identical jobs (one T and d); give jitter instead")
    if "m_over_sigma" in v:
        if not margin > 0.0:
            raise Bad(f"the stagger margin is m = {float(margin)!r} here, so m_over_sigma "
                      "cannot set the jitter; give jitter instead")
        sigma = margin / v["m_over_sigma"]
    else:
        sigma = _sigma(v["jitter"], spec["T"], n) if "jitter" in v else 0.0
    fleet = jobs or Fleet(jitter=sigma, **spec)
    if fleet.has_failures:      # a kernel must run its failures (MODEL.md E8): say so now
        choose_kernel(fleet)
    if v["launch"] == "stagger":
        _check_stagger(fleet)
    return fleet, margin


def _check_stagger(fleet: Fleet) -> None:
    """launch = 'stagger' needs identical jobs and a stagger that can be placed."""
    if not fleet.is_identical:
        # (launch.py's message suggests explicit phases, which a sweep
        # file cannot give)
        differ = [k for k in ("T", "d", "jitter", "snapshot", "slowdown", "weights")
                  if not np.all((a := getattr(fleet, k)) == a[0])]
        what = ("one T, d and jitter" if set(differ) <= {"T", "d", "jitter"}
                else "one T, d, jitter, snapshot, slowdown and weight")
        raise Bad(f"launch = 'stagger' needs identical jobs ({what}), but "
                  f"{' and '.join(differ)} differ{'s' if len(differ) == 1 else ''} "
                  "between jobs here; a sweep file has no explicit phases: give one "
                  "value each, or use launch = 'random' or 'sync'")
    stagger_theta(fleet)  # raises when no stagger can be placed


def _derived(v: dict, n: int, T: np.ndarray, fleet: Fleet, margin: float) -> dict:
    """The cell's derived columns: each quantity as the fleet has it (one value
    where every job shares it, else NaN)."""
    sig = fleet.jitter

    def same(a):
        return float(a[0]) if np.all(a == a[0]) else math.nan

    if "m_over_sigma" in v:
        mos = v["m_over_sigma"]
    elif not margin >= 0.0 or not np.all(sig == sig[0]):
        mos = math.nan
    else:
        mos = math.inf if sig[0] == 0.0 else margin / float(sig[0])
    return {
        "N": n, "jobs": v.get("jobs", ""), "bandwidth": v.get("bandwidth", ""),
        "T": same(T), "d": same(fleet.d),
        "load": v["load"] if "load" in v else fleet.load,
        "cap": fleet.cap,
        "cap_fraction": v["cap_fraction"] if "cap_fraction" in v else fleet.cap / n,
        "throughput": throughput_label(v["throughput"]), "jitter": same(sig), "margin": margin,
        "m_over_sigma": mos, "snapshot": same(fleet.snapshot), "slowdown": same(fleet.slowdown),
        "weights": same(fleet.weights), "mtbf": same(fleet.mtbf), "restart": same(fleet.restart),
        "outage_mtbf": fleet.outage_mtbf,
        "busy_power": same(fleet.busy_power) if fleet.has_power else None,
        "idle_power": same(fleet.idle_power) if fleet.has_power else None,
        "ramp_thresholds": _thresholds(v, fleet),
    }


def _sigma(x, T: np.ndarray, n: int) -> np.ndarray:
    """The jitter key (seconds, '2%' of each job's T, or one of them per job) in seconds."""
    items = list(x) if isinstance(x, tuple) else [x] * n
    if len(items) != n:
        raise Bad(f"jitter = {fmt_toml(list(x))} has {len(items)} values but N = {n}: give one "
                  "per job, or a single value")
    share = [ck.percent(s) for s in items]
    return np.array([T[i] * f if f is not None else float(items[i]) for i, f in enumerate(share)])


def _check_risk(v: dict, n: int, fleet: Fleet) -> None:
    """The rules between the risk_* keys (and with N, burn_in, the fleet), or raise Bad."""
    given = [k for k in RISK_KEYS if k != "risk_levels" and v.get(k) != KEY[k].default]
    if not v["risk_levels"]:
        if given:
            raise Bad(f"{', '.join(given)} without risk_levels: give risk_levels (the levels "
                      f"k of the storm risk, e.g. risk_levels = [4, 'N/2']), or leave "
                      f"{'them' if len(given) > 1 else 'it'} out")
        return
    for x in v["risk_levels"]:
        try:
            tail_level(x, n)
        except SpecError as exc:
            raise Bad(f"risk_levels: {exc}") from None
    method = v["risk_method"]
    if method == "splitting":
        try:
            check_splittable(fleet)
        except SpecError as exc:
            raise Bad(f"risk_method = 'splitting': {exc}; use risk_method = 'plain' or "
                      "'auto' (plain Monte Carlo for such fleets)") from None
    elif v["risk_fleets"] is None:
        raise Bad(f"risk_levels given without risk_fleets: a sweep's storm risk runs a fixed "
                  f"effort; give risk_fleets (plain Monte Carlo fleets per cell, e.g. "
                  f"risk_fleets = 256) and, for risk_method = {method!r}, risk_replicates "
                  f"(splitting replicates, default {RISK_DEFAULTS['replicates']})")
    top = max(tail_level(x, n) for x in v["risk_levels"])
    if isinstance(v["risk_basin"], int) and method != "plain" and v["risk_basin"] > top:
        raise Bad(f"risk_basin = {v['risk_basin']} is above the deepest risk level {top}: the "
                  "basin's edge L_0 must be a level in 1..max(risk_levels); lower it, or use "
                  "'raised' or 'most-entries'")
    flux = v["risk_flux_cycles"] or RISK_DEFAULTS["flux_cycles"]
    if method != "plain" and not fleet.has_failures and v["burn_in"] >= flux:
        raise Bad(f"burn_in = {v['burn_in']} must be below risk_flux_cycles = {flux} (each "
                  "splitting replicate's flux run is measured after the burn-in): raise "
                  "risk_flux_cycles, or use risk_method = 'plain'")

"""The sweep file: its keys (one table), its grammar, and the seeded cells it resolves to.

    sweep file (TOML) --parse_sweep--> Sweep (cells: Fleet + simulate kwargs + run seed)

A cell is one point of the grid: a :class:`~stormsim.Fleet` and the keyword
arguments of :func:`stormsim.simulate`. Fleet j of a cell depends only on
(the cell's run seed, j), so a cell can be cut into units of fleets [a, b)
anywhere and the pieces concatenate to one big call, bit for bit.

Seeding
-------
Each cell's run seed is a pure function of its resolved parameters and the
``seed`` key (see :func:`cell_seed`); it does not depend on the cell's place
in the grid, on the other cells, or on ``fleets``. Adding values to a grid
therefore leaves the existing cells' numbers unchanged, and a sweep with more
fleets per cell extends one with fewer.

How to add a key
----------------
Add one :class:`Key` to :data:`KEYS` (its place there is its place in error
messages and in the parameter table), and nothing else in this module:

- ``doc``: what is allowed, as a sentence fragment ("an integer >= 1");
- ``check``: raw TOML value -> normalized value, raising :class:`Bad` with the
  rule broken (reuse those of ``stormsim._checks``: ``int_at_least``, ``positive``, ``one_of``, ...);
- ``default``: the value when the key is not given (``REQUIRED``: the file must
  give it; ``ABSENT``: not given means something, decided in ``_resolve_cell``);
- ``dtype``: its column in the parameter table (``None``: no column);
- ``aliases``: names people type for it, answered with "did you mean";
- ``seed``: how it enters the run seed (:data:`SEED_ROLES`). A new key MUST
  be ``"unless-default"`` (or ``"no"`` if it changes nothing simulated):
  at its default it is left out of the seed's canonical bytes, so every
  existing sweep keeps its run seeds, its identity and its numbers (a Fleet
  option is ``"fleet"``: ``Fleet.canonical`` leaves it out at its default).

Then pass it to the kernel: ``Cell.simulate_kwargs`` and the piece of a unit
(``stormsim.work.Piece``) take the values of every key whose ``kwarg`` is set.
"""
from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import _checks as ck
from ._checks import Bad
from ._format import fmt_toml
from .errors import SpecError, SweepError
from .launch import stagger_margin, stagger_theta
from .model import Fleet, throughput_label

__all__ = ["ABSENT", "KEYS", "REQUIRED", "SEED_DOMAIN", "Bad", "Cell", "Key", "Sweep",
           "cell_seed", "load_sweep", "parse_sweep"]

#: Version of the cell-seed derivation (part of the hashed bytes).
SEED_DOMAIN = b"stormsim.sweep.cell-seed/1\0"

#: How a key enters a cell's run seed:
#: "fleet": through the fleet's canonical encoding (N, T, d, cap, f, sigma);
#: "always": its value is in the seed's canonical JSON (the keys of version 1);
#: "unless-default": in it only when not at its default (every key added later);
#: "no": not at all (``fleets``: more fleets extend a cell).
SEED_ROLES = ("fleet", "always", "unless-default", "no")


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

    def __post_init__(self):
        assert self.seed in SEED_ROLES, self.seed


# -- THE table of keys ------------------------------------------------------------

_f8, _i8 = np.float64, np.int64

#: Every key of a cell, in order (the order of error messages and of the
#: parameter table). The only place a key is described.
KEYS: tuple[Key, ...] = (
    Key("N", "the number of jobs, an integer >= 1", ck.int_at_least(1), REQUIRED, _i8,
        aliases=("n", "n_jobs", "jobs")),
    Key("T", "compute work between two checkpoints (s at full rate): a number > 0, or a list "
        "with one per job", ck.per_job(False), 1.0, _f8),
    Key("d", "checkpoint volume (s writing alone): a number > 0, or a list with one per job",
        ck.per_job(False), ABSENT, _f8),
    Key("load", "the write load L = sum_i d_i / T_i, a number > 0 (identical jobs: d = L T / N)",
        ck.positive, ABSENT, _f8, aliases=("L",)),
    Key("cap", "the power cap C in full-rate jobs: a number > 0, or inf (uncapped)",
        ck.positive_or_inf, ABSENT, _f8, aliases=("C",)),
    Key("cap_fraction", "the power cap as a fraction of N (C = cap_fraction * N): a number > 0, "
        "or inf (uncapped)", ck.positive_or_inf, ABSENT, _f8),
    Key("throughput", "'fair', 'ideal', 'power:ALPHA' (or {power = ALPHA}) with ALPHA in [0, 1], "
        "or a table [f(1), ..., f(N)]", ck.throughput, "fair", str, aliases=("f",)),
    Key("jitter", "the per-cycle compute jitter sigma (s): a number >= 0, or a list with one per "
        "job", ck.per_job(True), ABSENT, _f8, aliases=("sigma",)),
    Key("margin", "the stagger margin m = s - d of the fleet (derived; NaN unless the jobs are "
        "identical and a stagger fits)", None, ABSENT, _f8),
    Key("m_over_sigma", "the stagger margin over the jitter, m/sigma: a number > 0 (inf: no "
        "jitter); sets sigma = m / (m/sigma), m = stagger_margin of the fleet",
        lambda v: ck.positive(v, allow_inf=True), ABSENT, _f8,
        aliases=("m/sigma", "margin_over_sigma")),
    Key("checkpoint", "'blocking' (the default) or 'async' (a snapshot, then a background persist "
        "while computing; MODEL.md E1)", ck.one_of("blocking", "async"), "blocking", str),
    Key("snapshot", "the async snapshot time s (s): a number >= 0, or a list with one per job",
        ck.per_job(True), 0.0, _f8),  # E1/E2 options: seeded through Fleet.canonical
    Key("slowdown", "the compute slowdown eps of an async job while its persist is in flight: a "
        "number in [0, 1], or a list with one per job", ck.per_job_in(0.0, 1.0), 0.0, _f8,
        aliases=("eps",)),
    Key("on_busy", "'block' or 'skip': an async checkpoint due with its persist in flight waits, "
        "or is skipped", ck.one_of("block", "skip"), "block", str, aliases=("rule",)),
    Key("weights", "storage weights w_i (MODEL.md E2): a number > 0, or a list with one per job",
        ck.per_job(False), 1.0, _f8, aliases=("weight", "w")),
    Key("launch", "'random', 'sync' or 'stagger'", ck.one_of("random", "sync", "stagger"),
        "random", str, aliases=("theta",), seed="always", kwarg=True),
    Key("passage_level", "record the first passage to n_w >= k: an integer k in 1..N, or 0 "
        "(or 'none') for no passage", ck.passage_level, 0, _i8, aliases=("level", "passage"),
        seed="always", kwarg=True),
    Key("stop_at_passage", "true (stop each fleet at its passage: cycles is then a cap) or false",
        ck.boolean, True, np.bool_, seed="always", kwarg=True),
    Key("fleets", "independent fleets per cell, an integer >= 1", ck.int_at_least(1), REQUIRED,
        _i8, aliases=("n_fleets",), seed="no"),
    Key("cycles", "cycles K per fleet (a cap when stopping at the passage), an integer >= 1",
        ck.int_at_least(1), REQUIRED, _i8, aliases=("K",), seed="always", kwarg=True),
    Key("burn_in", "cycles before the occupancy is measured, an integer in 0..cycles-1",
        ck.int_at_least(0), 0, _i8, aliases=("burnin", "B"), seed="always", kwarg=True),
    Key("seed", "an integer >= 0; each cell's run seed derives from it and the cell's parameters",
        ck.int_at_least(0, below=2**63), 0, _i8, seed="always"),
    Key("run_seed", "the cell's run seed, passed to stormsim.simulate(seed=...) (derived)",
        None, ABSENT, _i8, seed="no"),
)

KEY: dict[str, Key] = {k.name: k for k in KEYS}
#: Keys a sweep file may give ([fixed] or [grid]) -> what is allowed.
PARAMS: dict[str, str] = {k.name: k.doc for k in KEYS if k.check is not None}
DEFAULTS: dict[str, object] = {k.name: k.default for k in KEYS
                               if k.check is not None and k.default not in (REQUIRED, ABSENT)}
#: Columns of the parameter table, in order, with their numpy dtype (str: text).
COLUMNS: dict[str, object] = {k.name: k.dtype for k in KEYS if k.dtype is not None}
_HINTS = {a: k.name for k in KEYS for a in k.aliases}

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


def _unknown(key: str, allowed) -> str:
    allowed = list(allowed)
    hint = _HINTS.get(key) if _HINTS.get(key) in allowed else None
    if hint is None:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = close[0] if close else None
    did = f" (did you mean {hint!r}?)" if hint else ""
    return f"unknown key{did}; allowed keys: {', '.join(allowed)}"


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
        """simulate()'s keyword arguments but fleets; no fast-forward: digits stay bit-identical."""
        kw = {k.name: self.values[k.name] for k in KEYS if k.kwarg}
        kw["passage_level"] = self.passage_level
        kw.update(seed=self.run_seed, fast_forward=False)
        return kw

    def identity(self) -> dict:
        """What is simulated, exactly (floats as hex): hashed into the sweep's identity."""
        return {**seed_canon(self.fleet, self.values), "fleets": self.fleets,
                "run_seed": self.run_seed}


def _resolve_cell(index: int, v: dict) -> Cell:
    """Values of every key (given or default) -> a validated Cell, or raise Bad.

    Here live the rules between keys (load or d, cap or cap_fraction, jitter
    or m_over_sigma) and the derived columns."""
    for key in (k.name for k in KEYS if k.default is REQUIRED):
        if key not in v:
            raise Bad(f"missing key {key!r}: give it in [fixed] or [grid] ({PARAMS[key]})")
    n = v["N"]
    if ("load" in v) == ("d" in v):
        raise Bad("give exactly one of 'load' and 'd' (in [fixed] or [grid]); got "
                  + ("both" if "load" in v else "neither"))
    if "cap" in v and "cap_fraction" in v:
        raise Bad("give at most one of 'cap' and 'cap_fraction'")
    if "jitter" in v and "m_over_sigma" in v:
        raise Bad("give at most one of 'jitter' and 'm_over_sigma'")

    def per_job(key):
        x = v[key]
        if isinstance(x, tuple):
            if len(x) != n:
                raise Bad(f"{key} = {fmt_toml(list(x))} has {len(x)} values but N = {n}: "
                          "give one per job, or a single number")
            return np.array(x)
        return np.full(n, float(x))

    T = per_job("T")
    d = v["load"] * T / n if "load" in v else per_job("d")
    cap = v["cap_fraction"] * n if "cap_fraction" in v else v.get("cap", math.inf)
    thr = v["throughput"]
    if isinstance(thr, tuple) and thr[0] != "power" and len(thr) != n:
        raise Bad(f"throughput table has {len(thr)} values but N = {n}: give f(1), ..., f(N)")
    # E1 / E2 options (a scalar stays one, so that Fleet's messages quote it as given)
    options = {k: per_job(k) if isinstance(v[k], tuple) else v[k] for k in Fleet.OPTIONS}
    try:
        base = Fleet(T=T, d=d, cap=cap, throughput=thr, jitter=0.0, **options)
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
            sigma = per_job("jitter") if "jitter" in v else 0.0
        fleet = Fleet(T=T, d=d, cap=cap, throughput=thr, jitter=sigma, **options)
        if v["launch"] == "stagger":
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
    except SpecError as exc:
        raise Bad(str(exc)) from None
    if v["passage_level"] > n:
        raise Bad(f"passage_level = {v['passage_level']} is above N = {n}: must be in 1..N, "
                  "or 0 for none")
    if v["burn_in"] >= v["cycles"]:
        raise Bad(f"burn_in = {v['burn_in']} must be below cycles = {v['cycles']}")
    sig = fleet.jitter

    def same(a):
        return float(a[0]) if np.all(a == a[0]) else math.nan

    if "m_over_sigma" in v:
        mos = v["m_over_sigma"]
    elif not margin >= 0.0 or not np.all(sig == sig[0]):
        mos = math.nan
    else:
        mos = math.inf if sig[0] == 0.0 else margin / float(sig[0])
    derived = {
        "T": same(T), "d": same(fleet.d), "load": v["load"] if "load" in v else fleet.load,
        "cap": fleet.cap,
        "cap_fraction": v["cap_fraction"] if "cap_fraction" in v else fleet.cap / n,
        "throughput": throughput_label(thr), "jitter": same(sig), "margin": margin,
        "m_over_sigma": mos, "snapshot": same(fleet.snapshot), "slowdown": same(fleet.slowdown),
        "weights": same(fleet.weights),
    }
    values = {k.name: derived[k.name] if k.name in derived else v.get(k.name) for k in KEYS}
    values["run_seed"] = cell_seed(fleet, **values)
    return Cell(index=index, fleet=fleet, values=values)


# -- the sweep -------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Sweep:
    """A validated sweep: every cell resolved, seeded and ready to run.

    Attributes
    ----------
    cells : list of Cell, in grid order (the last [grid] key varies fastest)
    grid : dict key -> list of values, as given (file order)
    fixed : dict key -> value, as given
    name, description : str
    occupancy : "fleet" | "sum"
    text : the sweep file's text (stored in the output)
    source : where it came from (for messages)
    hash : hex sha256 of what is simulated (cells and occupancy mode): the
        sweep's identity. Comments, key order and the name do not change it.
    """

    cells: list
    grid: dict
    fixed: dict
    name: str
    description: str
    occupancy: str
    text: str
    source: str
    hash: str

    @property
    def grid_keys(self) -> list[str]:
        return list(self.grid)

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def total_fleets(self) -> int:
        return sum(c.fleets for c in self.cells)

    def columns(self) -> dict[str, np.ndarray]:
        """The parameter table: key -> array (n_cells,), see COLUMNS."""
        out = {}
        for key, dtype in COLUMNS.items():
            vals = [c.values[key] for c in self.cells]
            out[key] = np.array(vals, dtype=object if dtype is str else dtype)
            if dtype is str:
                out[key] = out[key].astype(str)
        return out


def parse_sweep(text: str, source: str = "<sweep>") -> Sweep:
    """Validate a sweep file's text; raise SweepError naming key, value and rule."""
    def fail(msg):
        raise SweepError(f"{source}: {msg}") from None

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        fail(f"not valid TOML: {exc}")
    for key, val in doc.items():
        if key not in TABLES:
            if key in PARAMS:
                fail(f"{key} = {fmt_toml(val)} is outside any table: put it under [fixed] "
                     "(same for every cell) or [grid] (a list of values to vary)")
            fail(f"[{key}]: unknown table; allowed tables: "
                 + ", ".join(f"[{t}] ({d})" for t, d in TABLES.items()))
        if not isinstance(val, dict):
            fail(f"{key} = {fmt_toml(val)}: must be a table [{key}]")
    opts = doc.get("sweep", {})
    for key, val in opts.items():
        if key not in SWEEP_KEYS:
            fail(f"[sweep] {key} = {fmt_toml(val)}: {_unknown(key, SWEEP_KEYS)}")
        if not isinstance(val, str):
            fail(f"[sweep] {key} = {fmt_toml(val)}: must be {SWEEP_KEYS[key]}")
    occupancy = opts.get("occupancy", "fleet")
    if occupancy not in OCCUPANCY_MODES:
        fail(f"[sweep] occupancy = {fmt_toml(occupancy)}: must be {SWEEP_KEYS['occupancy']}")
    name = opts.get("name") or (Path(source).stem if source != "<sweep>" else "sweep")

    fixed_in, grid_in = doc.get("fixed", {}), doc.get("grid", {})
    fixed, grid = {}, {}
    for key, val in fixed_in.items():
        if key not in PARAMS:
            fail(f"[fixed] {key} = {fmt_toml(val)}: {_unknown(key, PARAMS)}")
        try:
            fixed[key] = KEY[key].check(val)
        except Bad as exc:
            fail(f"[fixed] {key} = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
    for key, vals in grid_in.items():
        if key not in PARAMS:
            fail(f"[grid] {key} = {fmt_toml(vals)}: {_unknown(key, PARAMS)}")
        if key in fixed:
            fail(f"{key} is in both [fixed] and [grid]: keep one")
        if not isinstance(vals, list) or not vals:
            fail(f"[grid] {key} = {fmt_toml(vals)}: a grid key takes a non-empty list of "
                 f"values, e.g. {key} = [a, b]; {key} is {PARAMS[key]}")
        out, seen = [], {}
        for i, val in enumerate(vals):
            try:
                norm = KEY[key].check(val)
            except Bad as exc:
                fail(f"[grid] {key}[{i}] = {fmt_toml(val)}: {exc}; {key} is {PARAMS[key]}")
            if repr(norm) in seen:
                fail(f"[grid] {key} lists {fmt_toml(val)} twice (positions {seen[repr(norm)]} "
                     f"and {i}): the cells would repeat; vary seed for replicates")
            seen[repr(norm)] = i
            out.append(norm)
        grid[key] = out

    cells = []
    keys = list(grid)
    for index, combo in enumerate(itertools.product(*(grid[k] for k in keys))):
        values = {**DEFAULTS, **fixed, **dict(zip(keys, combo))}
        try:
            cells.append(_resolve_cell(index, values))
        except Bad as exc:
            where = ", ".join(f"{k} = {fmt_toml(list(v) if isinstance(v, tuple) else v)}"
                              for k, v in zip(keys, combo))
            fail(f"cell {index}" + (f" ({where})" if where else "") + f": {exc}")
    ident = {"format": 1, "occupancy": occupancy, "cells": [c.identity() for c in cells]}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":"))
                            .encode()).hexdigest()
    return Sweep(cells=cells, grid={k: grid_in[k] for k in keys}, fixed=dict(fixed_in),
                 name=name, description=opts.get("description", ""), occupancy=occupancy,
                 text=text, source=source, hash=digest)


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file (TOML); see docs/FORMAT.md and README "Sweeps"."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"{p}: no such sweep file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{p}: cannot read the sweep file: {exc}") from None
    return parse_sweep(text, str(p))

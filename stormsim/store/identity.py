"""What a stored result was made from, against the sweep being run: the
refusal of a resume, naming what differs (the algorithm version, the grid,
or each key with its values there and here)."""
from __future__ import annotations

import json

from .._format import fmt_toml
from .._version import ALGORITHM_VERSION
from ..sweep.keys import KEYS, RISK_KEYS
from ..sweep.spec import Sweep, parse_sweep

__all__ = ["other_sweep", "settings_json"]

#: What to do when only these keys differ, beside the general rule (a resume
#: runs the very settings the stored units were made with).
_ADVICE = {
    "fleets": "An output cannot be extended to more (or cut to fewer) fleets (another output's "
              "first fleets will be the same numbers).",
    "fast_forward": "The fast-forward's digits agree with the event loop's to rounding, not bit "
                    "for bit, so one output cannot mix them.",
    "risk": "Each cell's storm risk is computed once, with its fixed effort, and stored whole: "
            "one output cannot hold two settings.",
}


def settings_json(sweep: Sweep) -> str:
    """Every resolved setting of every cell (keys at their values or defaults,
    the storm risk's as storm_risk will run it) and the algorithm version: what
    a result records beside its numbers."""
    cells = [{"values": {k: _plain(v) for k, v in c.values.items()},
              "risk": {k: _plain(v) for k, v in (c.risk_kwargs() or {}).items()}}
             for c in sweep.cells]
    return json.dumps({"algorithm_version": ALGORITHM_VERSION, "occupancy": sweep.occupancy,
                       "cells": cells}, sort_keys=True, default=str)


def _plain(v):
    if hasattr(v, "tolist"):
        return v.tolist()
    return list(v) if isinstance(v, tuple) else v


def other_sweep(meta: dict, sweep: Sweep) -> str:
    """'a different sweep (...) than ...; KEY differs (...)': what an output's
    identity or manifest says it was made from, against ``sweep``."""
    head = (f"a different sweep ({meta.get('sweep_name')!r}, {meta.get('n_cells')} cells, from "
            f"{meta.get('sweep_source')}) than {sweep.source} ({sweep.name!r}, "
            f"{sweep.n_cells} cells)")
    return head + _what_differs(meta, sweep)


def _what_differs(meta: dict, sweep: Sweep) -> str:
    version = meta.get("algorithm_version")
    if version is None or int(version) != ALGORITHM_VERSION:
        made = meta.get("stormsim_version", "an older stormsim")
        return (f"; the algorithm version differs ({version if version is not None else 1} "
                f"there, made by stormsim {made}; {ALGORITHM_VERSION} here): the same input "
                "gives other numbers, so its units cannot be resumed")
    try:
        other = parse_sweep(str(meta.get("sweep_toml")), "<stored>")
    except Exception:  # unreadable here: the hash alone says they differ
        return ""
    if other.n_cells != sweep.n_cells or other.grid_keys != sweep.grid_keys:
        return (f"; the grid differs ({other.n_cells} cells over {other.grid_keys or 'no key'} "
                f"there, {sweep.n_cells} over {sweep.grid_keys or 'no key'} here)")
    # the keys a file gives (derived ones, such as run_seed, follow from them)
    differ = [k.name for k in KEYS if k.check is not None and any(
        _show(a.values[k.name]) != _show(b.values[k.name]) for a, b in zip(other.cells, sweep.cells))]
    if other.occupancy != sweep.occupancy:
        differ.insert(0, "occupancy")
    if not differ:
        return ""
    shown = "; ".join(f"{k} = {_values(other, k)} there, {_values(sweep, k)} here" for k in differ)
    kinds = {"risk" if k in RISK_KEYS else k for k in differ}
    advice = "".join(" " + _ADVICE[k] for k in sorted(kinds) if k in _ADVICE)
    return (f"; {'key' if len(differ) == 1 else 'keys'} {', '.join(map(repr, differ))} "
            f"{'differs' if len(differ) == 1 else 'differ'} ({shown}).{advice} A resume runs "
            "the settings its units were made with: run with the stored settings to resume "
            "that output, or write this one to another output")


def _show(v) -> str:
    return fmt_toml(list(v) if isinstance(v, tuple) else v)


def _values(sw: Sweep, key: str) -> str:
    if key == "occupancy":
        return repr(sw.occupancy)
    vals = sorted({_show(c.values[key]) for c in sw.cells})
    return vals[0] if len(vals) == 1 else "[" + ", ".join(vals) + "]"

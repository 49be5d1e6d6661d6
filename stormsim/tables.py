"""Text tables: ``stormsim inspect`` (a result's cells) and ``stormsim sweep --dry-run``.

Each takes what it shows (a Results, a Sweep) as an argument and imports
neither: the readers sit above this module.
"""
from __future__ import annotations

import math

import numpy as np

from ._format import fmt_value

__all__ = ["cells_table", "inspect_table", "render"]


def render(header: list, rows: list) -> list[str]:
    """Right-aligned columns: the header line, then one line per row."""
    widths = [max(len(h), *(len(r[j]) for r in rows)) if rows else len(h)
              for j, h in enumerate(header)]
    return (["  ".join(h.rjust(w) for h, w in zip(header, widths))]
            + ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in rows])


def _fmt_passage(x: float, cap) -> str:
    """A first-passage median: '-' (none), '>CAP' (beyond the cycle cap), else 6 digits."""
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return f">{cap}"
    return fmt_value(x)


def cells_table(sweep) -> str:
    """The cells of a sweep, as ``stormsim sweep --dry-run`` lists them."""
    cols = sweep.columns()
    keys = sweep.grid_keys + ["run_seed"]
    rows = [[str(i)] + [fmt_value(cols[k][i]) for k in keys] + [str(c.fleets)]
            for i, c in enumerate(sweep.cells)]
    work = sum(c.fleets * c.cycles for c in sweep.cells)
    lines = [f"{sweep.source}: sweep {sweep.name!r}, {sweep.n_cells} cells, "
             f"{sweep.total_fleets} fleets, at most {work:.3g} fleet-cycles; identity "
             f"{sweep.hash[:16]}"]
    return "\n".join(lines + render(["cell"] + keys + ["fleets"], rows))


def inspect_table(res, tail, unit: str) -> str:
    """The text table of ``stormsim inspect`` for a Results."""
    s = res.summary(tail=tail, unit=unit)
    P = res.params
    n = res.n_cells
    lines = []
    state = ("complete" if res.complete else
             f"UNFINISHED: {int((res.fleets_done == res.fleets).sum())}/{n} cells done; "
             "run the same sweep command again to resume")
    lines.append(f"{res.path}: sweep {res.name!r}, {n} cells, {state}")
    lines.append(f"stormsim {res.version}; occupancy stored "
                 + ("per fleet" if res.occupancy == "fleet" else "as its sum over fleets"))
    fixed = [k for k in P if k not in res.grid_keys and k not in ("run_seed",)
             and len(set(map(str, P[k].tolist()))) == 1]
    if n:
        shown = ", ".join(f"{k} = {fmt_value(P[k][0])}" for k in fixed
                          if k in res.fixed or k in ("N", "T", "d", "launch", "cycles", "fleets"))
        if shown:
            lines.append("same in every cell: " + shown)
    header = ["cell"] + list(res.grid_keys) + ["fleets"]
    has_passage = bool(np.any(P["passage_level"] > 0))
    if has_passage:
        header += ["censored", f"median {unit} [95% CI]"]
    same_n = len(set(P["N"].tolist())) == 1

    def structural_zero(lv, i):
        # a fleet stopped at its passage never spends time at n_w >= its level
        return bool(P["stop_at_passage"][i]) and 0 < P["passage_level"][i] <= s[f"k:{lv}"][i]

    tail = [lv for lv in tail if not all(structural_zero(lv, i) for i in range(n))]
    for lv in tail:
        label = f"P(n_w>={s[f'k:{lv}'][0]})" if same_n and n else f"P(n_w>={lv})"
        header.append(label)
    rows = []
    for i in range(n):
        row = [str(i)] + [fmt_value(P[k][i]) for k in res.grid_keys]
        row.append(f"{s['fleets_done'][i]}/{s['fleets'][i]}")
        if has_passage:
            if P["passage_level"][i] > 0 and s["fleets_done"][i] > 0:
                cap = "cap" if unit == "time" else int(P["cycles"][i])
                med, lo, hi = (_fmt_passage(s[k][i], cap)
                               for k in ("median", "median_lo", "median_hi"))
                row += [str(int(s["censored"][i])), f"{med} [{lo}, {hi}]"]
            else:
                row += ["-", "-"]
        for lv in tail:
            p = s[f"P(n_w>={lv})"][i]
            row.append("-" if math.isnan(p) or structural_zero(lv, i) else f"{p:.3e}")
        rows.append(row)
    lines.append("")
    lines += render(header, rows)
    lines.append("")
    if has_passage:
        if unit == "time":
            lines.append("median time: first passage to n_w >= passage_level, in seconds, "
                         "Kaplan-Meier with the fleets without a passage included, censored at "
                         "the end of their run (the K-cycle cap); 95% CI by Brookmeyer-Crowley "
                         "(log-log band); '>cap': not reached by the end of the runs.")
        else:
            lines.append(f"median {unit}: first passage to n_w >= passage_level, Kaplan-Meier "
                         "with the fleets censored at the cycle cap K included (a passage at a "
                         "cycle >= K counts as censored); 95% CI by Brookmeyer-Crowley (log-log "
                         "band); '>K': not reached within the K-cycle cap.")
    if tail:
        lines.append("P(n_w>=k): share of the cell's total measured time with at least k jobs "
                     "writing, from the occupancy summed over its fleets.")
    else:
        lines.append("(no P(n_w>=k) columns: every fleet stops at its passage, so the time at "
                     "those levels is zero by construction; choose levels with --tail)")
    return "\n".join(lines)

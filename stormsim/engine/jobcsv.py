"""CSV job tables: one row per job, each column's unit in its header
(``size [GB]``), read into the keywords of ``units.fleet_arguments``.

A table is input from outside (a spreadsheet export, a script, a hand edit),
so everything a file can get wrong is refused with one SpecError naming the
file, the line and the column: a missing, misspelled (with the nearest
name) or repeated column, no rows, a unit of the wrong dimension, a cell
that is no number, negative, zero, NaN, infinite or implausibly large
(``units.CEILINGS``), a row with the wrong number of cells, bytes that are
not UTF-8. A UTF-8 byte-order mark and CRLF line ends (Excel's) are read.

Numbers are parsed cell by cell but converted a column at a time (one pint
Quantity per column), so a table of 10**6 jobs reads in seconds and in
memory of the order of its text; a file whose reading could exceed the
machine's memory is refused before it is read (``cost.check_memory``).
"""
from __future__ import annotations

import csv
import difflib
import re
from pathlib import Path

import numpy as np

from .._args import check_path
from ..errors import SpecError
from .cost import FLEET_BYTES_PER_JOB, check_memory
from .units import CHOICES, JOB_COLUMNS, KINDS, UNITS, first_bad, is_percent, quantity, registry

__all__ = ["BYTES_PER_TEXT_BYTE", "read_jobs"]

#: Memory while reading, per byte of the file: the text, its lines, the csv
#: cells (Python strings, ~50 B each for a few characters) and the floats;
#: measured ~60 (peak RSS) at 10**6 rows of 3 short columns, rounded up.
BYTES_PER_TEXT_BYTE = 80

_HEADER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[\s*(.*?)\s*\])?\s*$")


def _text(path: Path, where: str) -> str:
    """The file's text: UTF-8 (a BOM dropped), or a SpecError naming the first
    byte that is not, with its line and its position in that line."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SpecError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    check_memory(f"{where} ({size} bytes)", BYTES_PER_TEXT_BYTE * float(size),
                 "split the fleet into smaller tables")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError(f"{where} is UTF-16 text (its byte-order mark): save it as UTF-8 "
                        "(a spreadsheet's 'CSV UTF-8')")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise SpecError(f"{where} line {line}, byte "
                        f"{exc.start - start + 1} (0x{data[exc.start]:02x}): not UTF-8 text; save "
                        "the table as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SpecError(f"{where} line {line}: a NUL byte; the table must be UTF-8 text")
    return text


def _lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines that are neither blank nor comments;
    LF, CRLF or CR line ends (str.splitlines would also split inside a cell,
    at form feeds and Unicode line separators, and misnumber the lines)."""
    rows = text.replace("\r\n", "\n").split("\n") if "\n" in text else text.split("\r")
    return [(no, line.rstrip("\r")) for no, line in enumerate(rows, start=1)
            if line.strip() and not line.lstrip().startswith("#")]


def _header(cells: list[str], line: int, where: str) -> list[tuple[str, str | None]]:
    """[(column name, its unit or None)], each checked against JOB_COLUMNS."""
    columns: list[tuple[str, str | None]] = []
    for j, cell in enumerate(cells):
        at = f"{where} line {line}, column {j + 1}"
        sep = next((c for c in ";\t|" if c in cell), None)
        if sep and len(cells) == 1:
            raise SpecError(f"{at}: header {cell!r} is one column: columns are separated by "
                            f"commas, and this looks {sep!r}-separated (save it as CSV with commas)")
        m = _HEADER.match(cell)
        if not m:
            raise SpecError(f"{at}: header {cell!r} must be a name and an optional unit in "
                            "brackets, e.g. 'size [GB]'")
        name, unit = m.group(1), m.group(2)
        if name not in JOB_COLUMNS:
            near = [n for n in JOB_COLUMNS if n == name.lower()] or difflib.get_close_matches(
                name.lower(), list(JOB_COLUMNS), n=1)
            raise SpecError(f"{at}: unknown column {name!r}"
                            + (f" (did you mean {near[0]!r}?)" if near else "")
                            + "; the columns are " + ", ".join(JOB_COLUMNS))
        if name in [c for c, _ in columns]:
            first = [c for c, _ in columns].index(name) + 1
            raise SpecError(f"{at}: column {name!r} appears twice (also column {first}): give "
                            "each column once")
        kind = JOB_COLUMNS[name][0]
        if unit is not None and not unit:
            raise SpecError(f"{at} ({name}): empty brackets: give the unit, e.g. "
                            f"{name} [{'s' if kind in ('time', 'jitter') else 'GB'}], or none")
        if unit and kind in ("text", "number"):
            raise SpecError(f"{at} ({name}): takes no unit (got [{unit}]): it is "
                            f"{JOB_COLUMNS[name][2]}")
        if unit and not (kind == "jitter" and is_percent("1 " + unit)):
            try:
                quantity("unit", "1 " + unit, kind)
            except SpecError as exc:
                rest = str(exc).removeprefix(f"unit = {'1 ' + unit!r}").lstrip(": ")
                rest, _, meant = rest.partition("; did you mean '1 ")
                meant = meant.rstrip("'?")            # the unit it guessed, e.g. GB
                raise SpecError(f"{at} ({name} [{unit}]): the unit {unit!r} "
                                + (rest if rest.startswith("is ") else f"is wrong: {rest}")
                                + f" for {name} ({JOB_COLUMNS[name][2]})"
                                + (f"; did you mean [{meant}]?"
                                   if meant else "")) from None
        columns.append((name, unit))
    return columns


def read_jobs(path, names: bool = True) -> dict:
    """A CSV job table -> keyword arguments of ``units.fleet_arguments`` (one row per job).

    Lines starting with ``#`` are comments (put the sources there). The first
    other line is the header: each column is a name of ``JOB_COLUMNS`` with
    its unit in brackets, ``size [GB]``; cells are then plain numbers. A
    physical column without a unit in its header takes one in every cell.
    Every table gives ``jitter`` (a time, ``jitter [s]``, or a percentage of
    the compute interval, ``jitter [%]`` or cells ``1%``; 0 for a
    deterministic fleet). Returns per-job pint Quantities (one array per
    column), numbers and strings, plus ``names`` (the ``name`` column, or
    job-0, job-1, ...) unless ``names`` is False.
    """
    path = Path(check_path("path", path, "a CSV job table"))
    where = f"job table {str(path)!r}"
    numbered = _lines(_text(path, where))
    if not numbered:
        raise SpecError(f"{where} is empty: it needs a header line naming the columns and "
                        "their units, then one row per job")
    try:
        rows = list(csv.reader(line for _, line in numbered))
    except csv.Error as exc:
        raise SpecError(f"{where}: not a CSV table ({exc})") from None
    header_no = numbered[0][0]
    columns = _header(rows[0], header_no, where)
    given = [c for c, _ in columns]
    at = f"{where} line {header_no} (the header)"
    if "size" not in given:
        raise SpecError(f"{at}: missing column 'size' (bytes per checkpoint, e.g. 'size [GB]')")
    if ("compute_interval" in given) == ("checkpoint_period" in given):
        raise SpecError(f"{at}: give exactly one of the columns 'compute_interval' (compute "
                        "time between checkpoints at full speed) and 'checkpoint_period' "
                        "(wall-clock period of a job alone)"
                        + ("; it has both" if "compute_interval" in given else "; it has neither"))
    if "jitter" not in given:
        raise SpecError(f"{at}: missing column 'jitter', the standard deviation of each compute "
                        "interval: give it as a time ('jitter [s]') or a percentage of the "
                        "compute interval ('jitter [%]'); 0 for a deterministic fleet")
    if len(rows) < 2:
        raise SpecError(f"{where} has a header (line {header_no}) but no jobs: give one row "
                        "per job")
    check_memory(f"{where} ({len(rows) - 1} jobs)", FLEET_BYTES_PER_JOB * float(len(rows)),
                 "split the fleet into smaller tables")
    lines = [no for no, _ in numbered[1:]]
    for no, row in zip(lines, rows[1:]):
        if len(row) != len(columns):
            raise SpecError(f"{where} line {no}: {len(row)} cells, but the header (line "
                            f"{header_no}) names {len(columns)} columns: " + ", ".join(given)
                            + ("; a decimal comma or a comma inside a cell? write 0.5, and "
                               "quote a cell with a comma" if len(row) > len(columns) else ""))
    out: dict[str, object] = {}
    # jitter last: a jitter in time is checked against its row's compute interval
    for j, (name, unit) in sorted(enumerate(columns), key=lambda c: c[1][0] == "jitter"):
        cells = [row[j].strip() for row in rows[1:]]
        label = lambda i, j=j, name=name: f"{where} line {lines[i]}, column {j + 1} ({name})"  # noqa: E731
        empty = next((i for i, c in enumerate(cells) if c == ""), None)
        if empty is not None:
            raise SpecError(f"{label(empty)}: empty cell; every job needs every column")
        out[name] = _column(name, unit, cells, label, out)
    labels = out.pop("name", None)
    if names:
        out["names"] = labels or [f"job-{i}" for i in range(len(rows) - 1)]
    return out


def _floats(cells, label, rule_text: str) -> np.ndarray:
    try:
        return np.array([float(c) for c in cells])
    except ValueError:
        i = next(i for i, c in enumerate(cells) if not _is_float(c))
        raise SpecError(f"{label(i)} = {cells[i]!r}: must be a plain number {rule_text}") from None


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _column(name, unit, cells, label, done):
    """One column's cells -> what fleet_arguments takes for it (checked, each
    error naming its line and column)."""
    kind, rule, _ = JOB_COLUMNS[name]
    if kind == "text":
        if name in CHOICES:
            bad = next((i for i, c in enumerate(cells) if c not in CHOICES[name]), None)
            if bad is not None:
                raise SpecError(f"{label(bad)} = {cells[bad]!r}: must be one of "
                                + ", ".join(repr(a) for a in CHOICES[name]))
        return cells
    ureg = registry()
    if kind == "number":
        values = _floats(cells, label, f"({JOB_COLUMNS[name][2]})")
        _check(values, rule, "dimensionless", cells, label)
        return values
    if unit:
        mags = _floats(cells, label, f"(the unit, {unit}, is in the header)")
        if kind == "jitter" and is_percent("1 " + unit):
            _percent(ureg.Quantity(mags, unit).to("percent").magnitude, cells, label)
            return ureg.Quantity(mags, unit)
        q = ureg.Quantity(mags, unit)
        with np.errstate(over="ignore"):      # 1e308 GB in bytes: inf, refused by _check
            model = np.asarray(q.to(UNITS[kind]).magnitude, dtype=np.float64)
        _check(model, rule, UNITS[kind], cells, label)
        _below_interval(name, q, cells, label, done)
        return q
    # a unit in every cell: parsed one by one (a slower path, for hand-written tables)
    values = []
    for i, cell in enumerate(cells):
        if kind == "jitter" and is_percent(cell):
            _percent(np.array([float(ureg.Quantity(cell).to("percent").magnitude)]), [cell],
                     lambda _, i=i: label(i))
            values.append(ureg.Quantity(cell))
            continue
        try:
            float(cell)
        except ValueError:
            pass
        else:
            raise SpecError(f"{label(i)} = {cell!r} is a plain number: give its unit, in the cell "
                            f"(e.g. {KINDS[kind][1]}) or in the header ('{name} [s]')")
        q = quantity(label(i), cell, kind)
        _check(np.atleast_1d(np.asarray(q.to(UNITS[kind]).magnitude, dtype=np.float64)), rule,
               UNITS[kind], [cell], lambda _, i=i: label(i))
        values.append(q)
    if not any(is_percent(v) for v in values):
        values = ureg.Quantity(np.array([v.to(UNITS[kind]).magnitude for v in values],
                                        dtype=np.float64), UNITS[kind])
        _below_interval(name, values, cells, label, done)
    return values


def _check(mags, rule, unit, cells, label) -> None:
    bad = first_bad(mags, rule, unit)
    if bad is not None:
        raise SpecError(f"{label(bad[0])} = {cells[bad[0]]!r}: {bad[1]}")


def _percent(pct, cells, label) -> None:
    bad = np.nonzero(~(np.isfinite(pct) & (pct >= 0.0) & (pct <= 100.0)))[0]
    if bad.size:
        i = int(bad[0])
        raise SpecError(f"{label(i)} = {cells[i]!r}: a jitter as a percentage of the compute "
                        "interval must be finite and in [0, 100] (above, most intervals would "
                        "clip to 0)")


def _below_interval(name, q, cells, label, done) -> None:
    """A jitter in time above its row's compute interval is refused here, with
    its line (a checkpoint_period's T needs the bandwidth: fleet_arguments)."""
    if name != "jitter" or "compute_interval" not in done:
        return
    sigma = np.asarray(q.to("second").magnitude, dtype=np.float64)
    T = np.asarray(done["compute_interval"].to("second").magnitude, dtype=np.float64)
    bad = np.nonzero(sigma > T)[0]
    if bad.size:
        i = int(bad[0])
        raise SpecError(f"{label(i)} = {cells[i]!r}: above the row's compute interval "
                        f"({T[i]:.6g} s): give at most the interval (100%)")

"""Hostile CSV job tables: each mistake a file can carry is one SpecError
naming the file, the line and the column (never a traceback, a NaN or a
silently wrong number), in Python, in a sweep file's ``jobs`` key and at the
command line; what spreadsheets write (a BOM, CRLF) reads as meant."""
from __future__ import annotations

import re

import numpy as np
import pytest

import stormsim
from stormsim import SpecError
from stormsim.cli import main
from stormsim.engine import jobcsv

from conftest import ROOT

HEADER = "compute_interval [min],size [GB],jitter [s]\n"

#: Conversions between units go through pint's float factors: equal to rounding.
CONVERSION_RTOL = 1e-12


def write(tmp_path, content, name="jobs.csv"):
    path = tmp_path / name
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


# (the table, the message; None: no line to name (no header either), else the
# line and the column number each message must name)
HOSTILE = [
    # columns
    ("compute_interval [min],jitter [s]\n30,1\n", r"line 1 \(the header\): missing column 'size'"),
    ("size [GB],jitter [s]\n10,1\n", r"line 1 \(the header\): give exactly one of the columns "
                                     r"'compute_interval'.*; it has neither"),
    ("compute_interval [min],checkpoint_period [min],size [GB],jitter [s]\n1,2,3,0\n",
     r"line 1 \(the header\): give exactly one of the columns .*; it has both"),
    ("compute_interval [min],size [GB]\n30,10\n", r"line 1 \(the header\): missing column "
                                                  r"'jitter'.*'jitter \[s\]'.*'jitter \[%\]'.*0 for a "
                                                  r"deterministic fleet"),
    ("compute_interval [min],siz [GB],jitter [s]\n30,10,1\n",
     r"line 1, column 2: unknown column 'siz' \(did you mean 'size'\?\); the columns are name, "),
    ("compute_interval [min],Size [GB],jitter [s]\n30,10,1\n", r"line 1, column 2: unknown column "
                                                              r"'Size' \(did you mean 'size'\?\)"),
    ("compute_interval [min],size [GB],jiter [s]\n30,10,1\n", r"line 1, column 3: unknown column "
                                                             r"'jiter' \(did you mean 'jitter'\?\)"),
    ("compute_interval [min],size [GB],colour,jitter [s]\n30,10,red,1\n",
     r"line 1, column 3: unknown column 'colour'; the columns are"),
    ("compute_interval [min],size [GB],size [GB],jitter [s]\n30,10,10,1\n",
     r"line 1, column 3: column 'size' appears twice \(also column 2\)"),
    ("compute interval [min],size [GB],jitter [s]\n30,10,1\n",
     r"line 1, column 1: header 'compute interval \[min\]' must be a name"),
    # empty
    ("", r"is empty: it needs a header line"),
    ("# only comments\n\n", r"is empty"),
    (HEADER, r"has a header \(line 1\) but no jobs"),
    ("# c\n" + HEADER + "\n# no rows\n", r"has a header \(line 2\) but no jobs"),
    # units in the header
    ("compute_interval [min],size [s],jitter [s]\n30,10,1\n",
     r"line 1, column 2 \(size \[s\]\): the unit 's' is a time: must be a size"),
    ("compute_interval [GB],size [GB],jitter [s]\n30,10,1\n",
     r"line 1, column 1 \(compute_interval \[GB\]\): the unit 'GB' is a size: must be a time"),
    ("compute_interval [min],size [GB],jitter [GB/s]\n30,10,1\n",
     r"line 1, column 3 \(jitter \[GB/s\]\): the unit 'GB/s' is a bandwidth"),
    ("compute_interval [min],size [G],jitter [s]\n30,10,1\n",      # G: pint's gauss
     r"line 1, column 2 \(size \[G\]\): the unit 'G' is in gauss \(G\), not a unit of time, "
     r"size or bandwidth: must be a size, e.g. '156 GB' \(bytes or bits: [^)]*\) for size "
     r"\(bytes per checkpoint\); did you mean \[GB\]\?$"),
    ("compute_interval [min],size [GBB],jitter [s]\n30,10,1\n",
     r"line 1, column 2 \(size \[GBB\]\): the unit 'GBB' is wrong: not a quantity pint can read"),
    ("compute_interval [min],size [],jitter [s]\n30,10,1\n",
     r"line 1, column 2 \(size\): empty brackets"),
    ("compute_interval [min],size [GB],jitter [s],weight [kg]\n30,10,1,1\n",
     r"line 1, column 4 \(weight\): takes no unit \(got \[kg\]\)"),
    # cells
    ("compute_interval,size [GB],jitter [s]\n40GB,10,1\n",
     r"line 2, column 1 \(compute_interval\) = '40GB' is a size: must be a time"),
    ("compute_interval,size [GB],jitter [s]\n30,10,1\n",
     r"line 2, column 1 \(compute_interval\) = '30' is a plain number: give its unit"),
    ("compute_interval [min],size,jitter [s]\n30,10 GB/s,1\n",
     r"line 2, column 2 \(size\) = '10 GB/s' is a bandwidth: must be a size"),
    (HEADER + "30,10,1\n30,-10,1\n", r"line 3, column 2 \(size\) = '-10': must be finite and > 0"),
    (HEADER + "30,0,1\n", r"line 2, column 2 \(size\) = '0': must be finite and > 0"),
    (HEADER + "0,10,1\n", r"line 2, column 1 \(compute_interval\) = '0': must be finite and > 0"),
    (HEADER + "30,nan,1\n", r"line 2, column 2 \(size\) = 'nan': must be finite"),
    (HEADER + "30,10,NaN\n", r"line 2, column 3 \(jitter\) = 'NaN': must be finite"),
    (HEADER + "inf,10,1\n", r"line 2, column 1 \(compute_interval\) = 'inf': must be finite"),
    (HEADER + "30,1e400,1\n", r"line 2, column 2 \(size\) = '1e400': must be finite"),
    (HEADER + "30,1e308,1\n", r"line 2, column 2 \(size\) = '1e308': must be finite and at most "
                              r"1e18 B \(an exabyte\): not a plausible value, check its unit"),
    (HEADER + "1e12,10,1\n", r"line 2, column 1 \(compute_interval\) = '1e12': must be finite and at "
                             r"most 1e9 s"),
    ("compute_interval [min],size,jitter [s]\n30,1e308 GB,1\n",
     r"line 2, column 2 \(size\) = '1e308 GB': must be finite and at most 1e18 B"),
    (HEADER + "30,10,-1\n", r"line 2, column 3 \(jitter\) = '-1': must be finite and >= 0"),
    (HEADER + "30,ten,1\n", r"line 2, column 2 \(size\) = 'ten': must be a plain number \(the "
                            r"unit, GB, is in the header\)"),
    (HEADER + "30,,1\n", r"line 2, column 2 \(size\): empty cell"),
    (HEADER + "30,10\n", r"line 2: 2 cells, but the header \(line 1\) names 3 columns: "
                         r"compute_interval, size, jitter"),
    (HEADER + "30,10,1\n30,10,1,1\n", r"line 3: 4 cells, but the header \(line 1\) names 3"),
    (HEADER + "30,0,5,1\n", r"line 2: 4 cells, .*; a decimal comma or a comma inside a cell\?"),
    ("compute_interval [min];size [GB];jitter [s]\n30;10;1\n",
     r"line 1, column 1: header .* this looks ';'-separated"),
    ("compute_interval [min],size [GB],jitter [s],\n30,10,1,\n",
     r"line 1, column 4: header '' must be a name"),
    (HEADER + ",,\n", r"line 2, column 1 \(compute_interval\): empty cell"),
    (HEADER + '"30","1,000","1"\n', r"line 2, column 2 \(size\) = '1,000': must be a plain number"),
    ("compute_interval [min],size [GB],jitter [s],slowdown\n30,10,1,x\n",
     r"line 2, column 4 \(slowdown\) = 'x': must be a plain number"),
    ("compute_interval [min],size [GB],jitter [s],slowdown\n30,10,1,1.5\n",
     r"line 2, column 4 \(slowdown\) = '1.5': must be in \[0, 1\]"),
    ("compute_interval [min],size [GB],jitter [s],checkpoint\n30,10,1,sync\n",
     r"line 2, column 4 \(checkpoint\) = 'sync': must be one of 'blocking', 'async'"),
    # jitter beyond the interval, as a time or a percentage
    ("compute_interval [min],size [GB],jitter [s]\n1,10,90\n",
     r"line 2, column 3 \(jitter\) = '90': above the row's compute interval \(60 s\)"),
    ("compute_interval [min],size [GB],jitter [%]\n30,10,150\n",
     r"line 2, column 3 \(jitter\) = '150': a jitter as a percentage of the compute interval must "
     r"be finite and in \[0, 100\]"),
    ("compute_interval [min],size [GB],jitter\n30,10,1%\n30,10,150%\n",
     r"line 3, column 3 \(jitter\) = '150%': a jitter as a percentage"),
    # bytes
    (HEADER.encode() + b"# caf\xe9\n30,10,1\n", r"line 2, byte 6 \(0xe9\): not UTF-8 text; save "
                                                 r"the table as UTF-8"),
    (b"name," + HEADER.encode() + b"job-\xff,30,10,1\n", r"line 2, byte 5 \(0xff\): not UTF-8"),
    (HEADER.encode("utf-16"), r"is UTF-16 text"),
    (HEADER.encode() + b"30,1\x000,1\n", r"line 2: a NUL byte"),
]


def _where(message):
    """The line a message names, or None (an empty file names none)."""
    m = re.search(r"\bline (\d+)", message)
    return int(m.group(1)) if m else None


@pytest.mark.parametrize("content, message", HOSTILE,
                         ids=[f"{i}" for i in range(len(HOSTILE))])
def test_a_hostile_table_is_one_clear_error_naming_file_line_and_column(tmp_path, content,
                                                                        message):
    path = write(tmp_path, content)
    with pytest.raises(SpecError, match=message) as info:
        stormsim.Fleet.from_csv(path, bandwidth="1 GB/s")
    text = str(info.value)
    assert text.startswith(f"job table {str(path)!r}") and "\n" not in text
    if "is empty" not in text and "UTF-16" not in text:
        assert _where(text) is not None                      # the line is named


def test_a_missing_file_or_a_folder_cannot_be_read(tmp_path):
    with pytest.raises(SpecError, match=r"nope.csv'.*cannot be read"):
        stormsim.Fleet.from_csv(tmp_path / "nope.csv", bandwidth="1 GB/s")
    with pytest.raises(SpecError, match=r"cannot be read"):
        stormsim.Fleet.from_csv(tmp_path, bandwidth="1 GB/s")


POD = ROOT / "examples" / "gpu_pod.csv"


@pytest.mark.parametrize("transform", [
    lambda b: b"\xef\xbb\xbf" + b,                               # Excel's "CSV UTF-8": a BOM
    lambda b: b.replace(b"\n", b"\r\n"),                         # Windows line ends
    lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"),       # both
    lambda b: b.replace(b"\n", b"\r"),                           # old Mac line ends
], ids=["bom", "crlf", "bom-crlf", "cr"])
def test_what_spreadsheets_write_reads_as_meant(tmp_path, transform):
    path = write(tmp_path, transform(POD.read_bytes()))
    assert stormsim.Fleet.from_csv(path, bandwidth="80 GB/s") == \
        stormsim.Fleet.from_csv(POD, bandwidth="80 GB/s")
    assert jobcsv.read_jobs(path)["names"][0] == "pod-job-0"


def test_bom_and_crlf_errors_still_name_the_right_line(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf" + (HEADER + "30,10,1\r\n30,-1,1\r\n").encode())
    with pytest.raises(SpecError, match=r"line 3, column 2 \(size\) = '-1'"):
        stormsim.Fleet.from_csv(path, bandwidth="1 GB/s")


@pytest.mark.slow      # ~2 s alone, ~10 s on a loaded 2-core machine
def test_a_million_rows_read_in_memory_of_the_order_of_the_text(tmp_path):
    """Decided: a table of 10**6 jobs is a fleet like any other (read a column at a
    time); only a file whose reading would exceed the memory limit is refused."""
    n = 10**6
    path = write(tmp_path, HEADER + "15,96,9\n" * n)
    fleet = stormsim.Fleet.from_csv(path, bandwidth="80 GB/s")
    assert fleet.n_jobs == n
    np.testing.assert_allclose(fleet.d, 96e9 / 80e9, rtol=CONVERSION_RTOL)
    np.testing.assert_array_equal(fleet.jitter, 9.0)


def test_a_table_too_large_for_the_memory_limit_is_refused_before_it_is_read(tmp_path,
                                                                            monkeypatch):
    path = write(tmp_path, HEADER + "15,96,9\n" * 1000)
    monkeypatch.setenv("STORMSIM_MEMORY_LIMIT", "10000")       # bytes: far below the table's
    with pytest.raises(SpecError, match=r"job table .*jobs.csv' \(8\d{3} bytes\) needs about .* "
                                        r"of memory, more than the limit.*split the fleet"):
        stormsim.Fleet.from_csv(path, bandwidth="80 GB/s")


# -- jitter as a percentage of the compute interval -------------------------------

def test_jitter_as_a_percentage_in_the_header_in_cells_and_in_python(tmp_path):
    pod = stormsim.Fleet.from_csv(POD, bandwidth="80 GB/s")          # 15 min, jitter 9 s = 1%
    header = write(tmp_path, "compute_interval [min],size [GB],jitter [%]\n" + "15,96,1\n" * 8,
                   "header.csv")
    cells = write(tmp_path, "compute_interval [min],size [GB],jitter\n" + "15,96,1%\n" * 4
                  + "15,96,9 s\n" * 4, "cells.csv")
    for path in (header, cells):
        fleet = stormsim.Fleet.from_csv(path, bandwidth="80 GB/s")
        np.testing.assert_allclose(fleet.jitter, pod.jitter, rtol=CONVERSION_RTOL)
    py = stormsim.Fleet.from_jobs(n_jobs=8, compute_interval="15 min", size="96 GB",
                                  bandwidth="80 GB/s", jitter="1%")
    np.testing.assert_allclose(py.jitter, pod.jitter, rtol=CONVERSION_RTOL)
    mixed = stormsim.Fleet.from_jobs(compute_interval=["10 min", "20 min"], size="96 GB",
                                     bandwidth="80 GB/s", jitter=["1%", "3 s"])
    np.testing.assert_allclose(mixed.jitter, [6.0, 3.0], rtol=CONVERSION_RTOL)


def test_a_percentage_jitter_is_of_the_compute_interval_not_the_period():
    # period 30 min, write 336 s alone: T = 1800 - 336 = 1464 s; 1% of it
    fleet = stormsim.Fleet.from_jobs(n_jobs=2, checkpoint_period="30 min", size="840 GB",
                                     bandwidth="2.5 GB/s", jitter="1%")
    np.testing.assert_allclose(fleet.jitter, 14.64, rtol=CONVERSION_RTOL)


@pytest.mark.parametrize("jitter, message", [
    ("150%", r"jitter = '150%': a percentage of the compute interval must be finite and in "
             r"\[0%, 100%\]"),
    ("-1%", r"jitter = '-1%': a percentage"),
    ("20 min", r"jitter = 1200 s is above the compute interval T = 900 s"),
    (["1%", "200%"], r"jitter\[1\] = '200%': a percentage"),
    (0.01, r"jitter = 0.01: a plain number is ambiguous; give its unit, e.g. '9 s' or a "
           r"percentage of the compute interval, '1%'"),
    ("2 GB", r"jitter = '2 GB' is a size: must be a jitter"),
])
def test_a_jitter_above_the_interval_or_without_a_unit_is_refused(jitter, message):
    with pytest.raises(SpecError, match=message):
        stormsim.Fleet.from_jobs(n_jobs=2, compute_interval="15 min", size="96 GB",
                                 bandwidth="80 GB/s", jitter=jitter)


# -- the same tables in a sweep file, and at the command line --------------------------

SWEEP = '[fixed]\njobs = "jobs.csv"\nbandwidth = "80 GB/s"\nlaunch = "random"\nfleets = 4\ncycles = 10\n'

#: Missing size, missing jitter, misspelled, header only, 'size [s]', '40GB' for a time,
#: 1e400, 'ten', Latin-1 bytes.
IN_SWEEPS = [h for h in HOSTILE if any(m in h[1] for m in (
    "missing column 'size'", "missing column 'jitter'", "'siz'", "but no jobs",
    "size \\[s\\]", "'40GB'", "'1e400'", "'ten'", "0xe9"))]


@pytest.mark.parametrize("content, message", IN_SWEEPS, ids=[f"{i}" for i in range(len(IN_SWEEPS))])
def test_a_hostile_table_in_a_sweep_file(tmp_path, content, message):
    assert len(IN_SWEEPS) == 10          # every pattern above picked its case
    write(tmp_path, content)
    (tmp_path / "s.toml").write_text(SWEEP)
    with pytest.raises(stormsim.SweepError, match=message) as info:
        stormsim.load_sweep(tmp_path / "s.toml")
    assert "jobs.csv" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("content, message", IN_SWEEPS, ids=[f"{i}" for i in range(len(IN_SWEEPS))])
def test_a_hostile_table_at_the_command_line_exits_2_with_one_line(tmp_path, capsys, content,
                                                                   message):
    write(tmp_path, content)
    (tmp_path / "s.toml").write_text(SWEEP)
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out.h5"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("stormsim: error: ")
    assert re.search(message, err) and not (tmp_path / "out.h5").exists()

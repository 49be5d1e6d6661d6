"""A full disk on a real small tmpfs (a private mount namespace): while a
finished sweep's result is assembled, and while `stormsim report` writes its
figures. Each is one message and exit 3 (EXIT_ENVIRONMENT), never a traceback
or a signal, and the same command, once there is room, finishes the work."""
from __future__ import annotations

import mmap
import shlex
import subprocess
import sys

import pytest

from h5compare import datasets
from namespace import FULL_DISK_SWEEP, needs_namespace, run_in_namespace, tmpfs
from procs import env
from stormsim.errors import EXIT_ENVIRONMENT
from stormsim.sweep.spec import parse_sweep
from stormsim.driver import run_sweep

#: Room enough for anything here: the units of work (about 11 MiB) on their
#: own tmpfs, and the output's disk once space is freed.
ROOMY = "64m"
#: tmpfs counts whole memory pages of this many bytes (sweep.toml takes one).
PAGE = mmap.PAGESIZE
#: How far below the complete result's size the output's disk ends (None:
#: half of it), so that the assembly fails at three kinds of write: among the
#: second cell's arrays; among the small datasets of the table at the file's
#: end (96 KiB short); in the metadata that closing the file writes (one page
#: short). Datasets under 64 KiB (HDF5's sieve buffer) are in the first two:
#: the full disk crashed there (SIGSEGV), when h5py closed them.
SHORT_BY = {"a cell's arrays": None, "the table": 96 * 1024, "closing the file": PAGE}
#: Generous bound on one namespace script (two sweeps of ~1 s each, and the
#: interpreter's and numba's start), so a hang fails instead of holding CI.
SCRIPT_TIMEOUT_S = 300


def _folders(tmp_path):
    """The work folder (the disk that fills) and the results folder, their
    quoted paths, and the sweep command the scripts run in the work folder."""
    work, res = tmp_path / "work", tmp_path / "res"
    work.mkdir()
    res.mkdir()
    sweep = shlex.join([sys.executable, "-m", "stormsim", "sweep", "sweep.toml", "-o", "out.h5",
                        "--progress", "none"])
    return work, res, shlex.quote(str(work)), shlex.quote(str(res)), sweep


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run's result."""
    d = tmp_path_factory.mktemp("ref")
    (d / "sweep.toml").write_text(FULL_DISK_SWEEP)
    run_sweep(parse_sweep(FULL_DISK_SWEEP, "sweep.toml"), d / "out.h5", progress="none")
    return d / "out.h5"


@pytest.mark.slow
@needs_namespace
@pytest.mark.parametrize("where", list(SHORT_BY))
def test_a_full_disk_at_assembly_is_one_message_and_the_same_command_resumes(tmp_path, reference,
                                                                             where):
    size = reference.stat().st_size
    short = SHORT_BY[where] if SHORT_BY[where] is not None else size // 2
    # whole pages for the output's directory: the result minus ``short``, and sweep.toml
    small = (size - short) // PAGE * PAGE + PAGE
    work, res, w, r, sweep = _folders(tmp_path)
    # The units of work go to a roomy tmpfs of their own: they all fit, and
    # only the assembly meets the small disk, however the fleets were cut.
    script = f"""
cd {w}
printf '%s' {shlex.quote(FULL_DISK_SWEEP)} > sweep.toml
rc=0; {sweep} > {r}/1.out 2> {r}/1.err || rc=$?; echo $rc > {r}/1.rc
ls -A {w} > {r}/1.ls; ls -A {w}/out.h5.parts > {r}/1.parts
mount -o remount,size={ROOMY} {w}
rc=0; {sweep} > {r}/2.out 2> {r}/2.err || rc=$?; echo $rc > {r}/2.rc
ls -A {w}/out.h5.parts > {r}/2.parts
cp {w}/out.h5 {r}/out.h5
"""
    p = run_in_namespace([tmpfs(work, str(small)), f"mkdir {w}/out.h5.parts",
                          tmpfs(work / "out.h5.parts", ROOMY)], ["sh", "-ec", script],
                         env=env(), timeout=SCRIPT_TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    got = {f.name: f.read_text() for f in res.iterdir() if f.suffix != ".h5"}
    rc, err = int(got["1.rc"]), got["1.err"]
    units = [n for n in got["1.parts"].split() if n.endswith(".npz")]
    assert rc == EXIT_ENVIRONMENT, f"exit {rc} (a shell's 128 + N is signal N)\n{err}"
    assert "Traceback" not in err and "RuntimeError" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "stormsim: error: no space left on device while writing out.h5;" in err, err
    assert (f" {len(units)} units of work are kept in out.h5.parts; free space and run the "
            "same command to resume") in err, err
    assert units, "no unit of work was kept"
    assert "out.h5" not in got["1.ls"].split() and "out.h5.tmp" not in got["1.ls"].split(), \
        got["1.ls"]
    # once there is room, the same command only assembles, and the result is the same
    assert got["2.rc"].strip() == "0", got["2.err"]
    assert "(8000 fleets were already done)" in got["2.out"], got["2.out"]
    assert got["2.parts"].split() == []     # (the directory itself is a mount point here)
    assert datasets(res / "out.h5") == datasets(reference)


@pytest.mark.slow
@needs_namespace
def test_a_full_disk_while_report_writes_is_one_message_and_leaves_no_partial_file(tmp_path,
                                                                                   reference):
    p = subprocess.run([sys.executable, "-m", "stormsim", "report", str(reference), "-o",
                        str(tmp_path / "whole")], env=env(), capture_output=True, text=True,
                       timeout=SCRIPT_TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    whole = {f.name: f.read_bytes() for f in (tmp_path / "whole").iterdir()}
    assert len(whole) >= 2, sorted(whole)     # a figure, and report.md
    # a disk one page short of the report: it fills while the last file is written
    small = sum(-(-len(b) // PAGE) * PAGE for b in whole.values()) - PAGE
    work, res = tmp_path / "work", tmp_path / "res"
    work.mkdir()
    res.mkdir()
    w, r = shlex.quote(str(work)), shlex.quote(str(res))
    run = shlex.join([sys.executable, "-m", "stormsim", "report", str(reference), "-o", "rep"])
    script = f"""
cd {w}
rc=0; {run} > {r}/1.out 2> {r}/1.err || rc=$?; echo $rc > {r}/1.rc
cp -r {w}/rep {r}/rep1
mount -o remount,size={ROOMY} {w}
rc=0; {run} > {r}/2.out 2> {r}/2.err || rc=$?; echo $rc > {r}/2.rc
cp -r {w}/rep {r}/rep2
"""
    p = run_in_namespace([tmpfs(work, str(small))], ["sh", "-ec", script], env=env(),
                         timeout=SCRIPT_TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    rc, err = int((res / "1.rc").read_text()), (res / "1.err").read_text()
    assert rc == EXIT_ENVIRONMENT, f"exit {rc}\n{err}"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "stormsim: error: no space left on device while writing rep/" in err, err
    assert "; free space and run the same command again" in err, err
    named = err.split("while writing rep/")[1].split(";")[0]
    left = {f.name: f.read_bytes() for f in (res / "rep1").iterdir()}
    assert named not in left, f"the partial {named} was left"
    assert all(whole.get(k) == v for k, v in left.items()), "a file left is not whole"
    assert (res / "2.rc").read_text().strip() == "0", (res / "2.err").read_text()
    assert sorted(f.name for f in (res / "rep2").iterdir()) == sorted(whole)


@pytest.mark.slow
@needs_namespace
def test_a_full_disk_before_the_first_unit_is_one_message(tmp_path, reference):
    """A disk with room for LOCK and no more: MANIFEST.json fails, and the
    message says where (it was a bare '[Errno 28] No space left on device')."""
    work, res, w, r, sweep = _folders(tmp_path)
    script = f"""
cd {w}
printf '%s' {shlex.quote(FULL_DISK_SWEEP)} > sweep.toml
rc=0; {sweep} > {r}/1.out 2> {r}/1.err || rc=$?; echo $rc > {r}/1.rc
mount -o remount,size={ROOMY} {w}/out.h5.parts
rc=0; {sweep} > {r}/2.out 2> {r}/2.err || rc=$?; echo $rc > {r}/2.rc
cp {w}/out.h5 {r}/out.h5
"""
    p = run_in_namespace([tmpfs(work, ROOMY), f"mkdir {w}/out.h5.parts",
                          tmpfs(work / "out.h5.parts", str(PAGE))], ["sh", "-ec", script],
                         env=env(), timeout=SCRIPT_TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    rc, err = int((res / "1.rc").read_text()), (res / "1.err").read_text()
    assert rc == EXIT_ENVIRONMENT, f"exit {rc}\n{err}"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert ("stormsim: error: no space left on device while writing LOCK and MANIFEST.json into "
            "out.h5.parts; 0 units of work are kept in out.h5.parts; free space and run the "
            "same command to resume") in err, err
    assert (res / "2.rc").read_text().strip() == "0", (res / "2.err").read_text()
    assert datasets(res / "out.h5") == datasets(reference)

"""The command line at the edges: a full disk during the final
write, grids too large to run, an empty output name, refused runs and odd
files where the parts directory should be. Real processes, real full disks
(a small tmpfs in a private mount namespace)."""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from h5compare import datasets
from conftest import ROOT
from namespace import FULL_DISK_SWEEP, needs_namespace
from procs import env
from stormsim.sweep.spec import parse_sweep
from stormsim.driver import run_sweep



def _stormsim(cwd, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "stormsim", *args], cwd=cwd, env=env(),
                          capture_output=True, text=True, timeout=timeout)


# -- a full disk ------------------------------------------------------------------

#: The disk that fills is a tmpfs this small; the other one (the output's
#: directory, or OUTPUT.parts mounted on its own) is roomy, so the disk fills
#: exactly where asked however the fleets were cut into units: "final" while
#: the ~4.4 MB result is written, "units" while a unit (~0.2 MB) is.
SMALL_DISK = "1m"
ROOMY_DISK = "64m"


@pytest.mark.slow
@needs_namespace
@pytest.mark.parametrize("full", ["final", "units"])
def test_a_full_disk_is_one_message_and_the_same_command_resumes(tmp_path, full):
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "sweep.toml").write_text(FULL_DISK_SWEEP)
    run_sweep(parse_sweep(FULL_DISK_SWEEP, "sweep.toml"), tmp_path / "ref" / "out.h5",
              progress="none")
    work, res = tmp_path / "work", tmp_path / "res"
    work.mkdir()
    res.mkdir()
    w, r = shlex.quote(str(work)), shlex.quote(str(res))
    small = f"{w}/out.h5.parts" if full == "units" else w
    out_size, parts_size = (ROOMY_DISK, SMALL_DISK) if full == "units" else (SMALL_DISK, ROOMY_DISK)
    sweep = shlex.join([sys.executable, "-m", "stormsim", "sweep", "sweep.toml", "-o", "out.h5",
                        "--progress", "none"])
    script = f"""
mount --make-rprivate /
mount -t tmpfs -o size={out_size} tmpfs {w}
mkdir {w}/out.h5.parts
mount -t tmpfs -o size={parts_size} tmpfs {w}/out.h5.parts
cp {shlex.quote(str(tmp_path / "ref" / "sweep.toml"))} {w}/
cd {w}
rc=0; {sweep} > {r}/1.out 2> {r}/1.err || rc=$?; echo $rc > {r}/1.rc
ls -A {w} > {r}/1.ls; ls -A {w}/out.h5.parts > {r}/1.parts
mount -o remount,size={ROOMY_DISK} {small}
rc=0; {sweep} > {r}/2.out 2> {r}/2.err || rc=$?; echo $rc > {r}/2.rc
ls -A {w} > {r}/2.ls; ls -A {w}/out.h5.parts > {r}/2.parts
cp {w}/out.h5 {r}/out.h5
"""
    p = subprocess.run(["unshare", "-m", "sh", "-ec", script], env=env(), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = {f.name: f.read_text() for f in res.iterdir() if f.suffix != ".h5"}
    rc, err = int(got["1.rc"]), got["1.err"]
    units = [n for n in got["1.parts"].split() if n.endswith(".npz")]
    assert 0 < rc < 128, f"exit {rc} (a signal, or success?)\n{err}"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    writing = "out.h5" if full == "final" else "a unit of work into out.h5.parts"
    assert f"no space left on device while writing {writing};" in err, err
    assert f" {len(units)} unit{'s' if len(units) != 1 else ''} of work " in err, err
    assert "kept in out.h5.parts; free space and run the same command to resume" in err, err
    assert "out.h5.tmp" not in got["1.ls"].split(), "out.h5.tmp was left"
    assert not [n for n in got["1.parts"].split() if ".tmp" in n], "a unit's .tmp was left"
    if full == "final":
        assert len(units) > 0
    # once there is room, the same command resumes
    assert got["2.rc"].strip() == "0", got["2.err"]
    if full == "final":
        assert "(8000 fleets were already done)" in got["2.out"]
    assert got["2.parts"].split() == []     # (the directory itself is a mount point here)
    assert datasets(res / "out.h5") == datasets(tmp_path / "ref" / "out.h5")


# -- grids too large to run ---------------------------------------------------------

def _grid_toml(sizes: dict) -> str:
    """A sweep file whose grid lists ``n`` distinct values for each key."""
    vals = {"load": lambda i: 0.1 + 1e-6 * i, "T": lambda i: 1.0 + 1e-6 * i,
            "jitter": lambda i: 1e-6 * i, "seed": lambda i: i}
    lines = ["[sweep]", 'name = "huge"', "[fixed]", "N = 8", "fleets = 10", "cycles = 100",
             "[grid]"]
    for key, n in sizes.items():
        lines.append(f"{key} = [{', '.join(repr(vals[key](i)) for i in range(n))}]")
    return "\n".join(lines) + "\n"


#: A dry run of a large sweep answers at once because it resolves only the
#: cells it shows (a cell costs ~0.3 ms; 90000 of them ~30 s): the command
#: counts the cells it resolved, and that count is what the tests hold.
#: A hang is cut off here (a guard, not a measurement).
HANG_S = 60.0
#: A refused sweep file allocates no more than this while it is read and refused.
REFUSE_PEAK_BYTES = 16 << 20

_COUNTED = ("import sys, stormsim.cli, stormsim.sweep.spec as spec\n"
            "resolve, seen = spec.resolve_values, []\n"
            "def counted(*a, **k):\n"
            "    seen.append(1)\n"
            "    return resolve(*a, **k)\n"
            "spec.resolve_values = counted\n"
            "rc = stormsim.cli.main(sys.argv[1:])\n"
            "print(f'RESOLVED {len(seen)}', file=sys.stderr)\n"
            "sys.exit(rc)\n")


def _counted(cwd, *args):
    def limit_memory():          # a runaway before the fix must not take the machine
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    try:
        p = subprocess.run([sys.executable, "-c", _COUNTED, *args], cwd=cwd, env=env(),
                           capture_output=True, text=True, timeout=HANG_S,
                           preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"stormsim {' '.join(args)} gave no answer within {HANG_S} s")
    resolved = int(p.stderr.rsplit("RESOLVED", 1)[1]) if "RESOLVED" in p.stderr else None
    return p, resolved


@pytest.mark.slow
def test_a_grid_of_three_billion_cells_is_refused_at_once(tmp_path):
    (tmp_path / "huge.toml").write_text(_grid_toml({"load": 1000, "T": 1000, "jitter": 3000}))
    for args in (["sweep", "huge.toml", "-o", "huge.h5"], ["sweep", "huge.toml", "--dry-run"]):
        p, resolved = _counted(tmp_path, *args)
        assert p.returncode == 2, p.stderr
        assert resolved == 0, (resolved, p.stderr)       # refused from the grid's size alone
        assert "3000000000 cells" in p.stderr, p.stderr
        assert "at most 100000 cells" in p.stderr, p.stderr
        assert "split the grid" in p.stderr, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["huge.toml"]


@pytest.mark.slow
def test_a_dry_run_of_a_large_sweep_answers_at_once_with_the_count_and_the_cost(tmp_path):
    (tmp_path / "large.toml").write_text(_grid_toml({"load": 300, "seed": 300}))
    p, resolved = _counted(tmp_path, "sweep", "large.toml", "--dry-run")
    assert p.returncode == 0, p.stderr
    from stormsim.cli import DRY_RUN_SHOWN
    assert resolved is not None and resolved <= 2 * DRY_RUN_SHOWN, (resolved, p.stderr)
    assert "90000 cells, 900000 fleets, at most 9e+07 fleet-cycles" in p.stdout, p.stdout
    # the cost, in time: 90000 x 10 fleets x 100 cycles x 2 x 8 jobs = 1.44e9 events
    # the cost is each cell's events at the benchmarked cost per event of its N (= 8 here)
    from stormsim.engine.cost import seconds_per_event
    secs = 1.44e9 * seconds_per_event(8)
    assert (f"(1.44e+09 events: ~{secs:.2g} s on one core at the benchmarked cost per event)"
            in p.stdout), p.stdout
    assert "89999" in p.stdout                      # the last cells are listed too
    assert sorted(x.name for x in tmp_path.iterdir()) == ["large.toml"]


def test_the_cell_limit_is_exact_and_counted_before_any_cell_is_resolved():
    from stormsim.sweep.grid import MAX_CELLS
    from stormsim.sweep.spec import read_sweep
    from stormsim.errors import SweepError

    for page in ("FORMAT.md", "sweeps.md"):          # the figure the documentation states
        assert re.search(rf"at most \**{MAX_CELLS} cells", (ROOT / "docs" / page).read_text()), page
    at = read_sweep(_grid_toml({"load": 400, "seed": 250}), "at.toml")
    assert at.n_cells == MAX_CELLS
    at.check_size()
    over = read_sweep(_grid_toml({"load": 400, "seed": 251}), "over.toml")
    with pytest.raises(SweepError, match=r"over\.toml: the grid has 100400 cells \(load 400 x seed "
                       r"251\), more than a sweep file may have: at most 100000 cells"):
        over.check_size()


def test_the_outline_figures_are_the_sums_over_the_resolved_cells():
    """The dry run's figures come from the grid's product structure, without
    resolving a cell: they equal the sums over every resolved cell."""
    from stormsim.sweep.spec import parse_sweep, read_sweep

    text = """
[fixed]
load = 0.5
[grid]
N = [4, 8, 12]
fleets = [3, 7]
jitter = [0.0, 0.01]
cycles = [10, 25, 40]
"""
    out, sw = read_sweep(text, "g.toml"), parse_sweep(text, "g.toml")
    assert out.n_cells == sw.n_cells == 36
    assert out.total_fleets == sw.total_fleets
    assert out.fleet_cycles == sum(c.fleets * c.cycles for c in sw.cells)
    assert out.events == sum(2 * c.n_jobs * c.fleets * c.cycles for c in sw.cells)
    assert [out.cell_values(c.index) for c in sw.cells] == \
        [{k: v for k, v in c.values.items() if k in out.cell_values(0)} for c in sw.cells]


def test_a_trillion_jobs_in_a_sweep_file_is_refused_with_the_figure(tmp_path, capsys):
    from stormsim.cli import main

    (tmp_path / "big.toml").write_text(SMALL.replace("N = 4", "N = 1000000000000"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    tracemalloc.start()
    try:
        rc = main(["sweep", "big.toml", "-q"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        os.chdir(cwd)
    assert rc == 2 and peak < REFUSE_PEAK_BYTES, peak     # refused before allocating
    err = capsys.readouterr().err
    from stormsim.engine.cost import FLEET_BYTES_PER_JOB, format_bytes
    need = format_bytes(FLEET_BYTES_PER_JOB * 10**12)
    assert (f"big.toml: [fixed] N = 1000000000000: needs about {need} of memory, more than the "
            "limit of") in err, err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["big.toml"]


# -- an empty output name -----------------------------------------------------------

SMALL = """
[fixed]
N = 4
load = 0.5
fleets = 3
cycles = 10
"""


def test_an_empty_output_name_is_an_error(tmp_path, capsys):
    from stormsim.cli import main

    (tmp_path / "bad.toml").write_text(SMALL)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc = main(["sweep", "bad.toml", "-o", "", "-q"])
    finally:
        os.chdir(cwd)
    assert rc == 2
    assert "-o/--output is empty" in capsys.readouterr().err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.toml"]


# -- refused runs and odd files ------------------------------------------------------

LONG = """
[fixed]
T = 1.0
jitter = 0.01
cycles = 1500
fleets = 2000
[grid]
N = [8, 16]
load = [0.4, 0.8]
"""


def _wait_for_units(parts: Path, proc, n=1, timeout=120.0):
    t0 = time.monotonic()
    while not (parts.is_dir() and len(list(parts.glob("*.npz"))) >= n):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < timeout
        time.sleep(0.01)


@pytest.mark.slow
def test_a_refused_run_leaves_the_lock_file_alone(tmp_path):
    """A stopped run leaves units and LOCK (naming it); a run of another sweep
    file is refused, and LOCK still names the run that made the units."""
    (tmp_path / "a.toml").write_text(LONG)
    (tmp_path / "b.toml").write_text(LONG.replace("fleets = 2000", "fleets = 2001"))
    a = subprocess.Popen([sys.executable, "-m", "stormsim", "sweep", "a.toml", "-o", "out.h5",
                          "-q"], cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    _wait_for_units(tmp_path / "out.h5.parts", a)
    a.send_signal(signal.SIGTERM)
    a.communicate(timeout=60)
    lock = tmp_path / "out.h5.parts" / "LOCK"
    before = lock.read_bytes()
    assert before == f"pid {a.pid}\n".encode()
    b = _stormsim(tmp_path, "sweep", "b.toml", "-o", "out.h5", "-q")
    assert b.returncode == 2 and "holds finished units of" in b.stderr, b.stderr
    assert lock.read_bytes() == before


def test_a_regular_file_where_the_parts_directory_goes_is_named(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL)
    (tmp_path / "out.h5.parts").write_text("not a directory\n")
    p = _stormsim(tmp_path, "sweep", "s.toml", "-o", "out.h5", "-q")
    assert p.returncode != 0
    assert "[Errno 17]" not in p.stderr, p.stderr
    assert "out.h5.parts exists and is not a directory" in p.stderr, p.stderr
    assert (tmp_path / "out.h5.parts").read_text() == "not a directory\n"
    assert not (tmp_path / "out.h5").exists()

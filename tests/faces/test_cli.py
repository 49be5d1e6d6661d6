"""The command line as a user meets it: sweep, inspect, report, demo."""
from __future__ import annotations

import fcntl
import os
import pty
import re
import shlex
import shutil
import struct
import subprocess
import sys
import termios
import types
from pathlib import Path

import h5py
import numpy as np
import pytest

import stormsim
from procs import env
from stormsim.cli import main


SWEEP = """
[sweep]
name = "cli test"
[fixed]
T = 1.0
load = 0.6
cycles = 300
fleets = 30
launch = "stagger"
passage_level = 2
stop_at_passage = false
[grid]
N = [8, 16]
m_over_sigma = [4, 400]
"""


@pytest.fixture
def toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep.toml").write_text(SWEEP)
    return tmp_path / "sweep.toml"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    d = tmp_path_factory.mktemp("done")
    (d / "sweep.toml").write_text(SWEEP)
    assert main(["sweep", str(d / "sweep.toml"), "-o", str(d / "out.h5"), "-q"]) == 0
    return d / "out.h5"


def test_sweep_prints_lines_when_not_a_terminal(toml, capsys):
    assert main(["sweep", "sweep.toml", "-o", "out.h5"]) == 0
    out, err = capsys.readouterr()
    assert "stormsim sweep: wrote out.h5: 4 cells, 120 fleets" in out
    assert "See it with: stormsim inspect out.h5" in out
    assert "stormsim sweep: 4 cells, 120 fleets; running on this machine" in err
    assert "fleets 120/120 (100.0%), cells done 4/4" in err and "fleet-cycles/s" in err
    assert "\r" not in err
    assert main(["sweep", "sweep.toml", "-o", "out.h5"]) == 0
    out, _ = capsys.readouterr()
    assert "out.h5 is already complete (4 cells, 120 fleets, from this sweep file" in out
    assert "nothing to do" in out


def test_sweep_reads_its_file_once_per_command(toml, capsys, monkeypatch):
    import stormsim.sweep.spec as spec

    reads = []

    def counted(path):
        reads.append(str(path))
        return read_text(path)

    read_text = spec.read_text
    monkeypatch.setattr(spec, "read_text", counted)
    assert main(["sweep", "sweep.toml", "--dry-run"]) == 0
    assert reads == ["sweep.toml"]
    assert main(["sweep", "sweep.toml", "-o", "once.h5", "-q"]) == 0
    assert reads == ["sweep.toml"] * 2
    capsys.readouterr()


def test_default_output_name_and_quiet(toml, capsys):
    assert main(["sweep", "sweep.toml", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert (toml.parent / "sweep.h5").exists()


@pytest.mark.slow
def test_live_bar_on_a_terminal(tmp_path):
    """On a real terminal the bar is redrawn in place. A pty turns every "\n"
    into "\r\n", so a "\r" alone proves nothing: count the carriage returns
    that do not end a line, i.e. the bar's redraws."""
    pytest.importorskip("tqdm", reason="the live bar needs the 'progress' extra (tqdm)")
    (tmp_path / "sweep.toml").write_text(SWEEP.replace("fleets = 30", "fleets = 200"))
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 110, 0, 0))   # 24 x 110
    p = subprocess.Popen([sys.executable, "-m", "stormsim", "sweep", "sweep.toml", "-o", "o.h5"],
                         cwd=tmp_path, env=env(), stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:             # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert p.wait(timeout=60) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    redraws = len(re.findall(r"\r(?!\n)", screen))
    assert redraws >= 2, screen                             # redrawn in place, several times
    assert "cells done 4/4" in screen and "800/800 fleets" in screen
    assert "fleet-cycles/s" in screen and "100%" in screen
    assert "wrote o.h5" in screen


def test_inspect_table(finished, capsys):
    assert main(["inspect", str(finished)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "sweep 'cli test', 4 cells, complete" in lines[0]
    assert "same in every cell:" in out and "launch = stagger" in out
    head = next(line for line in lines if line.lstrip().startswith("cell"))
    for col in ("N", "m_over_sigma", "fleets", "censored", "median cycle [95% CI]",
                "P(n_w>=N/4)", "P(n_w>=N/2)", "P(n_w>=N)"):
        assert col in head
    res = stormsim.open_results(finished)
    s = res.summary()
    row = next(line for line in lines if line.split()[:3] == ["0", "8", "4"])
    assert f"{int(s['median'][0])} [" in row and "30/30" in row
    # m/sigma = 400 leaves (nearly) every fleet uncollided in 300 cycles: censored
    row3 = next(line for line in lines if line.split()[:3] == ["3", "16", "400"])
    assert ">300 [>300, >300]" in row3
    assert "Kaplan-Meier" in out


def test_inspect_options_and_python_api_agree(finished, capsys):
    assert main(["inspect", str(finished), "--levels", "2,3", "--unit", "time"]) == 0
    out = capsys.readouterr().out
    assert "P(n_w>=2)" in out and "P(n_w>=3)" in out and "median time [95% CI]" in out
    # the footnote explains what the table shows in seconds: '>cap', not '>K'
    assert ">cap [>cap, >cap]" in out
    assert "'>cap': not reached by the end of the runs" in out and "'>K'" not in out
    res = stormsim.open_results(finished)
    p2 = res.summary(levels=(2,))["p_ge_2"]
    for i in range(4):
        occ = res.cell(i).occupancy_sum
        assert p2[i] == occ[2:].sum() / occ.sum()
        # a zero is shown with its one-sided bound, never as a bare 0
        assert (f"{p2[i]:.3e} [" if p2[i] > 0 else "(none reached k)") in out
    assert main(["inspect", str(finished), "--levels", "half"]) == 2
    assert "tail level 'half': must be an integer k, 'N' or 'N/q'" in capsys.readouterr().err


def test_open_results_arrays(finished):
    res = stormsim.open_results(finished)
    assert res.complete and res.n_cells == 4 and res.grid_keys == ["N", "m_over_sigma"]
    assert res.params["N"].tolist() == [8, 8, 16, 16]
    assert res.params["m_over_sigma"].tolist() == [4.0, 400.0, 4.0, 400.0]
    assert res.params["launch"].dtype.kind == "U"
    c = res.cell(2)
    assert c.occupancy.shape == (30, 17) and c.passage_cycle.dtype == np.int64
    assert c.params["N"] == 16 and c.fleets_done == 30


def test_bad_sweep_file_touches_nothing(toml, capsys):
    out = toml.parent / "out.h5"
    with h5py.File(out, "w") as f:
        f["keep"] = np.arange(3)
    before = (out.read_bytes(), out.stat().st_mtime_ns)
    (toml.parent / "bad.toml").write_text(SWEEP.replace("m_over_sigma = [4, 400]",
                                                        "m_over_sigma = [4, 0]"))
    assert main(["sweep", "bad.toml", "-o", "out.h5", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert ("stormsim: error: bad.toml: [grid] m_over_sigma[1] = 0: must be > 0 (inf allowed); "
            "m_over_sigma is the stagger margin over the jitter") in err
    assert (out.read_bytes(), out.stat().st_mtime_ns) == before
    assert not (toml.parent / "out.h5.parts").exists()
    assert main(["sweep", "bad.toml", "-o", "new.h5"]) == 2
    assert not (toml.parent / "new.h5").exists() and not (toml.parent / "new.h5.parts").exists()


def test_other_sweeps_output_is_refused_unless_overwrite(toml, capsys):
    assert main(["sweep", "sweep.toml", "-o", "out.h5", "-q"]) == 0
    (toml.parent / "other.toml").write_text(SWEEP.replace("fleets = 30", "fleets = 31"))
    assert main(["sweep", "other.toml", "-o", "out.h5"]) == 2
    err = capsys.readouterr().err
    assert ("out.h5 holds the results of a different sweep ('cli test', 4 cells, from "
            "sweep.toml) than other.toml") in err
    assert "Use --overwrite" in err
    assert main(["sweep", "other.toml", "-o", "out.h5", "--overwrite", "-q"]) == 0
    assert stormsim.open_results("out.h5").fleets.tolist() == [31] * 4


def test_dry_run_lists_cells(toml, capsys):
    assert main(["sweep", "sweep.toml", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "sweep 'cli test', 4 cells, 120 fleets" in out
    assert "m_over_sigma" in out and "run_seed" in out
    assert not (toml.parent / "sweep.h5").exists()


def test_inspect_an_unfinished_sweep(toml, capsys):
    sw = stormsim.load_sweep("sweep.toml")
    import threading

    from stormsim.sweep.executors import LocalExecutor

    class OneUnit(LocalExecutor):
        def poll(self, timeout):
            out = super().poll(timeout)
            stop.set()
            return out

    stop = threading.Event()
    o = stormsim.run_sweep(sw, "out.h5", executor=OneUnit(workers=1, target_seconds=1e-4),
                           stop=stop, progress="none")
    assert o.status == "interrupted"
    assert main(["inspect", "out.h5"]) == 0
    out = capsys.readouterr().out
    assert "UNFINISHED: 0/4 cells done; run the same sweep command again to resume" in out
    assert "1/30" in out and "0/30" in out


def test_report_is_lazy_and_explains_a_missing_dependency(finished, capsys, monkeypatch):
    def no_matplotlib(path, outdir, levels):
        try:
            import matplotlib_not_installed  # noqa: F401
        except ImportError as exc:           # as stormsim.plots raises it
            raise ImportError("stormsim.plots needs matplotlib") from exc

    fake = types.ModuleType("stormsim.report")
    fake.main = no_matplotlib
    monkeypatch.setitem(sys.modules, "stormsim.report", fake)
    assert main(["report", str(finished)]) == 3             # the installation lacks it
    assert ("'stormsim report' needs matplotlib_not_installed, which is not installed: "
            "pip install 'stormsim[plots]'") in capsys.readouterr().err
    calls = []
    fake = types.ModuleType("stormsim.report")
    fake.main = lambda path, outdir, levels: calls.append((path, outdir))
    monkeypatch.setitem(sys.modules, "stormsim.report", fake)
    assert main(["report", str(finished), "-o", "figs"]) == 0
    assert main(["report", str(finished)]) == 0
    assert calls == [(str(finished), "figs"), (str(finished), str(finished.with_suffix("")) + "_report")]


@pytest.mark.slow  # the README's fleet planned (~10 s), a real 1200-fleet sweep (~10 s)
def test_demo_plans_a_fleet_then_runs_a_real_sweep_and_shows_its_table(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    plan, sweep = out.index("== 1/2 An operator's question"), out.index("== 2/2 A researcher's")
    assert plan < out.index(" plan --jobs 12 ") < out.index("async") < sweep
    assert out.count("\n== ") == 1 and out.index("         fleet   ") < sweep
    assert f"stormsim sweep {tmp_path / 'demo.toml'} -o {tmp_path / 'demo.h5'}" in out[sweep:]
    assert "sweep 'demo: stagger survival', 6 cells, complete" in out
    assert "median cycle [95% CI]" in out and "P(n_w>=4)" in out
    assert stormsim.open_results(tmp_path / "demo.h5").complete
    assert main(["demo", "-o", str(tmp_path)]) == 0
    assert "already complete: nothing to recompute" in capsys.readouterr().out


def test_demo_names_the_command_as_it_is_typed_here(tmp_path, monkeypatch):
    """After `make demo` the shell does not find `stormsim`: the demo shows
    .venv/bin/stormsim; once the venv is active, plain `stormsim`."""
    from stormsim.cli import _program

    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "stormsim").touch()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.executable", str(tmp_path / ".venv" / "bin" / "python"))
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert _program() == ".venv/bin/stormsim"
    monkeypatch.setattr("shutil.which", lambda name: str(tmp_path / ".venv" / "bin" / name))
    assert _program() == "stormsim"
    monkeypatch.setattr("shutil.which", lambda name: "/elsewhere/bin/stormsim")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    assert _program() == str(tmp_path / ".venv" / "bin" / "stormsim")   # from elsewhere: its path
    monkeypatch.setattr("sys.executable", str(tmp_path / "bin" / "python 3"))
    assert _program() == f"'{tmp_path / 'bin' / 'python 3'}' -m stormsim"    # no command beside it


def test_public_api():
    for name in ("open_results", "run_sweep", "load_sweep", "parse_sweep", "Sweep", "SweepError",
                 "MemoryStore", "HDF5Store", "LocalExecutor", "DaskExecutor", "Results",
                 "kaplan_meier", "median_survival"):
        assert name in stormsim.__all__ and hasattr(stormsim, name)
    assert issubclass(stormsim.SweepError, stormsim.SpecError)


@pytest.mark.slow  # a subprocess
def test_inspect_into_a_closed_pipe_is_quiet(finished):
    """`stormsim inspect x.h5 | head -1`: the reader leaves; no traceback, no error."""
    p = subprocess.Popen([sys.executable, "-m", "stormsim", "inspect", str(finished)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    p.stdout.close()  # before the table is written (the import alone takes ~0.3 s)
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=60) == 0, err
    assert err == ""


def test_an_output_that_is_the_sweep_file_is_refused(toml, capsys):
    """`-o SWEEP.toml --overwrite` once replaced the sweep file with the result:
    the input is never an output, however it is spelled."""
    before = toml.read_bytes()
    os.symlink(toml, toml.with_name("link.toml"))
    for out in ("sweep.toml", "./sweep.toml", str(toml), "link.toml"):
        assert main(["sweep", "sweep.toml", "-o", out, "--overwrite", "-q"]) == 2
        err = capsys.readouterr().err
        assert f"output {out} is the sweep file sweep.toml itself" in err, err
    assert toml.read_bytes() == before and not toml.with_name("sweep.toml.parts").exists()
    with pytest.raises(stormsim.SweepError, match="is the sweep file"):
        stormsim.run_sweep(str(toml), str(toml), overwrite=True, progress="none")
    assert toml.read_bytes() == before


# -- a local cluster closes cleanly --------------------------------------------

def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"stormsim {stormsim.__version__}"


def test_report_into_an_existing_file_names_the_problem(finished, tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("not a directory")
    assert main(["report", str(finished), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"report -o {target}: exists and is not a directory" in err and "Errno" not in err
    assert target.read_text() == "not a directory"


def test_inspect_a_running_sweep_says_running_not_resume(toml, capsys):
    """While another process holds the output's lock, inspect says it runs
    (and by whom), instead of telling the user to resume it."""
    from stormsim.store.stores import HDF5Store
    from stormsim.sweep.work import make_unit, run_unit

    sw = stormsim.load_sweep("sweep.toml")
    store = HDF5Store("out.h5")
    store.open(sw)                                 # holds OUTPUT.parts/LOCK, as a run does
    store.commit(run_unit(make_unit(sw, 0, 0, 5)))
    try:
        assert main(["inspect", "out.h5"]) == 0
        out = capsys.readouterr().out
        assert f"RUNNING (pid {os.getpid()} is writing it): 0/4 cells done so far" in out
        assert "resume" not in out and "5/30" in out
        assert stormsim.open_results("out.h5").running
    finally:
        store.close()
    assert main(["inspect", "out.h5"]) == 0
    out = capsys.readouterr().out
    assert "UNFINISHED: 0/4 cells done; run the same sweep command again to resume" in out
    assert not stormsim.open_results("out.h5").running


def test_worker_count_option(toml, capsys):
    assert main(["sweep", "sweep.toml", "-o", "out.h5", "--workers", "1",
                 "--progress", "lines"]) == 0
    assert "running on this machine, 1 worker thread" in capsys.readouterr().err
    assert main(["sweep", "sweep.toml", "-o", "b.h5", "--workers", "0"]) == 2
    assert "--workers 0: must be an integer >= 1" in capsys.readouterr().err
    assert main(["sweep", "sweep.toml", "-o", "b.h5", "--workers", "2", "--dask",
                 "local:2"]) == 2
    assert "--workers is for this machine" in capsys.readouterr().err
    assert not Path("b.h5").exists() and not Path("b.h5.parts").exists()


@pytest.mark.slow
def test_a_read_only_output_directory_names_the_problem(tmp_path):
    """A real read-only mount (unshare -m, as root): exit 3 (the environment),
    a message naming the output and what to do, no raw [Errno 30]."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a read-only mount")
    ro = tmp_path / "ro"
    ro.mkdir()
    (tmp_path / "sweep.toml").write_text(SWEEP)
    script = (f"mount -t tmpfs tmpfs {ro} && mount -o remount,ro {ro} && "
              f"{shlex.quote(sys.executable)} -m stormsim sweep {tmp_path / 'sweep.toml'} "
              f"-o {ro / 'out.h5'} -q")
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                       env=env(), timeout=120)
    assert p.returncode == 3, p.stderr
    assert (f"output {ro / 'out.h5'}: cannot create out.h5.parts in {ro}: the file system is "
            "read-only: choose an output on a writable one (-o)") in p.stderr, p.stderr
    assert "Errno" not in p.stderr and "Traceback" not in p.stderr

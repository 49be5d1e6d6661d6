"""numba's cache goes to a writable directory the package chooses, or is skipped."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from namespace import needs_namespace, read_only, run_in_namespace, writable
from conftest import ROOT

CODE = (
    "import warnings; warnings.simplefilter('always')\n"
    "import stormsim, stormsim.engine._numba_cache as c\n"
    "run = stormsim.simulate(stormsim.Fleet.identical(3, load=0.5), fleets=2, cycles=3)\n"
    "print('CACHE', c.CACHE_DIR, run.occupancy.shape)\n"
)


def run_python(env_update, prelude=""):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "STORMSIM_CACHE_DIR")}
    env.update(env_update)
    return subprocess.run([sys.executable, "-c", prelude + CODE], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.slow  # a fresh interpreter that compiles the kernel
def test_cache_goes_to_the_chosen_directory(tmp_path):
    out = run_python({"STORMSIM_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    assert f"CACHE {tmp_path / 'cache'} (2, 4)" in out.stdout
    assert list((tmp_path / "cache").rglob("*.nbi")), "no numba index files were written"


@pytest.mark.slow  # a fresh interpreter that compiles the kernel
def test_unwritable_first_choice_falls_through(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    xdg = tmp_path / "xdg"
    out = run_python({"STORMSIM_CACHE_DIR": str(blocker / "sub"), "XDG_CACHE_HOME": str(xdg)})
    assert out.returncode == 0, out.stderr
    assert f"CACHE {xdg / 'stormsim' / 'numba'}" in out.stdout
    assert Path(xdg / "stormsim" / "numba").is_dir()




@pytest.mark.slow
@needs_namespace
@pytest.mark.parametrize("cwd_writable", [False, True], ids=["nothing-writable", "only-cwd-writable"])
def test_read_only_install_warns_once_runs_and_leaves_the_working_directory_alone(
        tmp_path, cwd_writable):
    """A real read-only install: in a private mount namespace HOME, the cache
    directories, TMPDIR, every temporary-directory fallback and the install
    itself are read-only bind mounts. stormsim must warn once and compile
    without a cache; it must not fall back to the working directory (which
    tempfile.gettempdir() does last) even when that is the one place it could
    write."""
    home = Path(os.path.expanduser("~"))
    tmpdir = tmp_path / "tmpdir"
    cwd = tmp_path / "cwd"
    tmpdir.mkdir()
    cwd.mkdir()
    ro = [home, tmp_path, ROOT] + [Path(p) for p in ("/tmp", "/var/tmp", "/usr/tmp")
                                     if os.path.isdir(p)]
    setup = [read_only(p) for p in ro]
    if cwd_writable:
        setup.append(writable(cwd))
    probe = f"touch {shlex.quote(str(cwd / 'probe'))} && rm {shlex.quote(str(cwd / 'probe'))}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "STORMSIM_CACHE_DIR", "XDG_CACHE_HOME", "TEMP", "TMP")}
    env.update(TMPDIR=str(tmpdir), HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    # the setup itself is checked: the cwd is writable exactly when asked, HOME is not
    check = run_in_namespace(setup, ["sh", "-c", f"({probe}) 2>/dev/null && echo CWD-RW; "
                                     f"touch {shlex.quote(str(home / '.probe'))} 2>/dev/null "
                                     "&& echo HOME-RW; true"], env=env, timeout=60)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == (["CWD-RW"] if cwd_writable else []), check.stdout
    out = run_in_namespace(setup, [sys.executable, "-c", CODE], env=env, cwd=cwd, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "CACHE None (2, 4)" in out.stdout, out.stdout + out.stderr
    assert out.stderr.count("no writable numba cache directory") == 1, out.stderr
    assert list(cwd.iterdir()) == [], "stormsim wrote into the working directory"

"""numba's cache goes to a writable directory the package chooses, or is skipped."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CODE = (
    "import warnings; warnings.simplefilter('always')\n"
    "import stormsim, stormsim._numba_cache as c\n"
    "run = stormsim.simulate(stormsim.Fleet.identical(3, load=0.5), fleets=2, cycles=3)\n"
    "print('CACHE', c.CACHE_DIR, run.occupancy.shape)\n"
)


def run_python(env_update, prelude=""):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "STORMSIM_CACHE_DIR")}
    env.update(env_update)
    return subprocess.run([sys.executable, "-c", prelude + CODE], capture_output=True, text=True, env=env,
                          timeout=300)


def test_cache_goes_to_the_chosen_directory(tmp_path):
    out = run_python({"STORMSIM_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    assert f"CACHE {tmp_path / 'cache'} (2, 4)" in out.stdout
    assert list((tmp_path / "cache").rglob("*.nbi")), "no numba index files were written"


def test_no_writable_directory_falls_back_to_no_cache(tmp_path):
    # A path below a regular file can never be created, even by root.
    blocker = tmp_path / "file"
    blocker.write_text("")
    bad = str(blocker / "sub")
    # tempfile ignores an unusable TMPDIR and falls back to /tmp, which root
    # can always write: point its choice at the blocked path as well.
    out = run_python({"STORMSIM_CACHE_DIR": bad, "XDG_CACHE_HOME": bad, "HOME": bad},
                     prelude=f"import tempfile; tempfile.tempdir = {bad!r}\n")
    assert out.returncode == 0, out.stderr
    assert "CACHE None (2, 4)" in out.stdout
    assert "no writable numba cache directory" in out.stderr


def test_unwritable_first_choice_falls_through(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    xdg = tmp_path / "xdg"
    out = run_python({"STORMSIM_CACHE_DIR": str(blocker / "sub"), "XDG_CACHE_HOME": str(xdg)})
    assert out.returncode == 0, out.stderr
    assert f"CACHE {xdg / 'stormsim' / 'numba'}" in out.stdout
    assert Path(xdg / "stormsim" / "numba").is_dir()

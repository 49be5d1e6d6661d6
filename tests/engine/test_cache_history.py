"""The bits never depend on the numba cache's history.

numba names a compiled function by module, qualname, flags, argument types and
a per-process counter. Two kernel variants made by one factory (a closure)
shared a qualname, so two processes could give them one symbol; a later
process that loaded both from the cache ran whichever it loaded first for
both calls (docs/performance.md, "Bits independent of the cache's history").

The slow test fills private caches in several orders, with first compiles
SIGKILLed part-way among them, and compares every output array of the later
runs bit for bit with an uncached run (``STORMSIM_NO_CACHE=1``).
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest

from procs import POLL_KILL_S, env

from stormsim.engine import _kernel

#: A step "sim" runs the event loop (random launch, run_fleets), "pass" the
#: fast-forward (stagger, first passage: run_fleets_ff). Saves every array of
#: every Run to OUT.
CODE = """
import sys
import numpy as np
import stormsim
fleet = stormsim.Fleet.identical(8, load=0.6, jitter=0.01)
out = {}
for step in sys.argv[2:]:
    if step == "sim":
        run = stormsim.simulate(fleet, fleets=16, cycles=200, seed=3, record_firings=True)
    else:
        run = stormsim.simulate(fleet, launch="stagger", fleets=16, cycles=2000, seed=5,
                                passage_level=2)
    out.update({f"{step}.{k}": v for k, v in vars(run).items() if isinstance(v, np.ndarray)})
np.savez(sys.argv[1], **out)
"""

#: The longest a step may take (a cold compile of both kernels: ~30 s here).
TIMEOUT_S = 600.0


def _env(cache: Path | None) -> dict:
    e = {k: v for k, v in env().items()
         if k not in ("NUMBA_CACHE_DIR", "STORMSIM_CACHE_DIR", "STORMSIM_NO_CACHE")}
    if cache is None:
        e["STORMSIM_NO_CACHE"] = "1"
    else:
        e["STORMSIM_CACHE_DIR"] = str(cache)
    return e


def start(cache: Path | None, out: Path, *steps: str) -> subprocess.Popen:
    """Start the steps in a fresh interpreter on ``cache`` (None: uncached)."""
    return subprocess.Popen([sys.executable, "-c", CODE, str(out), *steps], env=_env(cache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def arrays(p: subprocess.Popen, out: Path) -> dict:
    """Wait for ``p`` (started to write ``out``); the arrays it saved."""
    try:
        _, err = p.communicate(timeout=TIMEOUT_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def run(cache: Path | None, out: Path, *steps: str) -> dict:
    """Run the steps in a fresh interpreter on ``cache`` (None: uncached); its arrays."""
    return arrays(start(cache, out, *steps), out)


def kill_when_cached(cache: Path, pattern: str, *steps: str) -> bool:
    """Start the steps on ``cache``; SIGKILL the process as soon as a cache file
    matching ``pattern`` exists (the compile it belongs to has just been saved,
    the next one is under way). Whether it was killed (False: it ended first)."""
    p = subprocess.Popen([sys.executable, "-c", CODE, str(cache / "killed.npz"), *steps],
                         env=_env(cache), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while p.poll() is None and not list(cache.rglob(pattern)):
            assert time.monotonic() < deadline, f"no {pattern} in {cache} within {TIMEOUT_S:g} s"
            time.sleep(POLL_KILL_S)
        if p.poll() is not None:
            return False
        p.send_signal(signal.SIGKILL)
        return True
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()


def assert_bits(ref: dict, got: dict, history: str) -> None:
    assert sorted(got) == sorted(k for k in ref if k.split(".")[0] in {k.split(".")[0] for k in got})
    bad = [k for k in got if got[k].dtype != ref[k].dtype or got[k].shape != ref[k].shape
           or got[k].tobytes() != ref[k].tobytes()]
    assert not bad, f"after {history}: differ from the uncached run: {bad}"


def test_every_kernel_variant_has_its_own_name():
    """One qualname per compiled variant: numba's symbol then names one code
    whatever process compiled it (a closure's name is not enough)."""
    dispatchers = {name: d for name, d in vars(_kernel).items()
                   if isinstance(d, numba.core.registry.CPUDispatcher)}
    variants = {"run_fleet_no_lone": _kernel._make_run_fleet(False, LONE=False),
                "run_fleet_ff_no_lone": _kernel._make_run_fleet(True, LONE=False)}
    qualnames = [d.py_func.__qualname__ for d in [*dispatchers.values(), *variants.values()]]
    assert not [q for q in qualnames if "<locals>" in q]
    assert len(set(qualnames)) == len(qualnames), sorted(qualnames)
    for name, d in {**dispatchers, **variants}.items():
        assert d.py_func.__qualname__ == name


@pytest.mark.slow  # ~1.5-3 min: fresh interpreters that compile the kernels, some SIGKILLed
def test_outputs_do_not_depend_on_the_cache_history(tmp_path):
    # The uncached reference compiles beside the first history (2 cores).
    uncached = start(None, tmp_path / "ref.npz", "sim", "pass")

    # (1) A first run killed once its first kernel is cached; then each call
    # compiled alone in its own process: before the fix the two variants got
    # the same symbols, and the later runs below ran one's code for both.
    cache = tmp_path / "c1"
    try:
        assert kill_when_cached(cache, "*random_theta*.nbc", "sim"), "it ended before the kill"
        a = run(cache, tmp_path / "a.npz", "pass")
        ref = arrays(uncached, tmp_path / "ref.npz")
    finally:
        if uncached.poll() is None:
            uncached.kill()
            uncached.wait()
    assert ref["sim.firings"].size and np.isfinite(ref["pass.passage_time"]).all()
    history = "sim killed, pass, sim"
    assert_bits(ref, a, "sim killed, pass")
    assert_bits(ref, run(cache, tmp_path / "b.npz", "sim"), history)
    assert_bits(ref, run(cache, tmp_path / "c.npz", "sim", "pass"), history)
    assert_bits(ref, run(cache, tmp_path / "d.npz", "pass", "sim"), history)

    # (2) The shape: first runs of both calls killed part-way, at
    # three points of their compiles (each loads what the earlier ones saved).
    cache = tmp_path / "c2"
    points = ["*random_theta*.nbc", "*run_fleet*.nbc", "*fast_forward*.nbc"]
    killed = [kill_when_cached(cache, p, "sim", "pass") for p in points]
    assert killed[0], "the first run ended before its first kernel was cached"
    history = f"sim+pass killed at {[p for p, k in zip(points, killed) if k]}"
    assert_bits(ref, run(cache, tmp_path / "e.npz", "pass", "sim"), history)
    assert_bits(ref, run(cache, tmp_path / "f.npz", "sim", "pass"), history)

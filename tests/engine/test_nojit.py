"""The kernel's Python source is its meaning: with numba's JIT disabled (the
way coverage of jitted code is counted) it gives the compiled results, bit for bit."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import stormsim

CODE = """
import warnings, numpy as np, stormsim
warnings.simplefilter("ignore")  # uint64 wrap-around warns in pure Python
FLEETS = [
    stormsim.Fleet(T=[1.0, 0.8, 1.3, 1.1], d=[0.2, 0.3, 0.1, 0.25], cap=3.0,
                   throughput=("power", 0.5), jitter=0.05),
    # MODEL.md E1, E2: the general kernel, each of its paths
    stormsim.Fleet(T=[1.0, 0.8, 1.3, 1.1], d=[0.9, 1.2, 0.1, 0.25], cap=3.0,
                   throughput=("power", 0.5), jitter=0.05,
                   checkpoint=["async", "async", "async", "blocking"],
                   snapshot=[0.02, 0.0, 0.05, 0.0], slowdown=[0.3, 0.0, 1.0, 0.0],
                   on_busy=["block", "skip", "block", "block"], weights=[1.0, 2.0, 0.5, 1.0]),
    # uncapped: the anonymous kernel's fast-forward takes the collision-free stretches
    stormsim.Fleet.identical(5, T=1.0, load=0.4, jitter=0.004),
    # MODEL.md E5: the writer queue, blocking and async jobs in it
    stormsim.Fleet(T=[1.0, 0.8, 1.3, 1.1], d=[0.5, 0.6, 0.4, 0.5], jitter=0.05,
                   checkpoint=["async", "blocking", "async", "blocking"], snapshot=0.01,
                   slowdown=0.2, max_writers=2),
]
def outputs(queues):
    out = []
    for f in FLEETS:
        r = stormsim.simulate(f, fleets=3, cycles=15, seed=9, record_firings=True,
                              passage_level=3, stop_at_passage=False, burn_in=2, queues=queues,
                              fast_forward="auto" if f.cap < f.n_jobs or not f.is_anonymous
                              else True)
        out += [r.firings.ravel(), r.occupancy.ravel(), r.passage_time,
                r.passage_cycle.astype(float), r.end_time, r.upcrossings.ravel().astype(float),
                r.writing_time.ravel(), r.waits.astype(float), r.wait_time, r.skips.astype(float),
                r.durations_sum, r.durations_max, r.durations_hist.ravel().astype(float),
                r.wait_sum, r.wait_max, r.wait_hist.ravel().astype(float)]
    return np.concatenate(out)
np.save(OUT, np.stack([outputs("heap"), outputs("ring")]))
"""


@pytest.mark.slow  # the kernel as plain Python, in a subprocess
def test_pure_python_kernel_equals_compiled(tmp_path):
    out = tmp_path / "nojit.npy"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + CODE], env=env,
                   check=True, timeout=300)
    compiled = tmp_path / "jit.npy"
    subprocess.run([sys.executable, "-c", f"OUT = {str(compiled)!r}\n" + CODE], check=True,
                   timeout=300)
    np.testing.assert_array_equal(np.load(out), np.load(compiled))
    # The uncapped fleet does take the fast-forward (it rounds differently).
    g = stormsim.Fleet.identical(5, T=1.0, load=0.4, jitter=0.004)
    kw = dict(fleets=3, cycles=15, seed=9, record_firings=True, passage_level=3,
              stop_at_passage=False, burn_in=2)
    assert not np.array_equal(stormsim.simulate(g, fast_forward=True, **kw).firings,
                              stormsim.simulate(g, fast_forward=False, **kw).firings)


FFS_CODE = """
import warnings, numpy as np, stormsim
from stormsim.risk.splitting import storm_split
warnings.simplefilter("ignore")  # uint64 wrap-around warns in pure Python
f = stormsim.Fleet.identical(5, T=1.0, load=0.6, jitter=0.01)
out = []
for horizon in (0, 1):
    s = storm_split(f, [2, 3, 4], trials=6, replicates=3, flux_cycles=40, burn_in=5, seed=4,
                    basin=2, reservoir=16, horizon=horizon)
    out += [s.rep_p_ge.ravel(), s.rep_storms_per_s.ravel(), s.p_stage.ravel(), s.flux,
            np.array([s.events], dtype=float)]
np.save(OUT, np.concatenate(out))
"""


@pytest.mark.slow  # the forward flux sampling kernels (ffs_*) as plain Python, in a subprocess
def test_pure_python_splitting_kernels_equal_compiled(tmp_path):
    res = {}
    for name, env in (("nojit", dict(os.environ, NUMBA_DISABLE_JIT="1")), ("jit", None)):
        res[name] = tmp_path / f"{name}.npy"
        subprocess.run([sys.executable, "-c", f"OUT = {str(res[name])!r}\n" + FFS_CODE], env=env,
                       check=True, timeout=300)
    a, b = np.load(res["nojit"]), np.load(res["jit"])
    assert a.size > 0 and np.any(a[:-1] > 0)      # the case does split (not all zeros)
    np.testing.assert_array_equal(a, b)

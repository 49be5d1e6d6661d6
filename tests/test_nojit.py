"""The kernel's Python source is its meaning: with numba's JIT disabled (the
way coverage of jitted code is counted) it gives the compiled results, bit for bit."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import stormsim

CODE = """
import warnings, numpy as np, stormsim
warnings.simplefilter("ignore")  # uint64 wrap-around warns in pure Python
f = stormsim.Fleet(T=[1.0, 0.8, 1.3, 1.1], d=[0.2, 0.3, 0.1, 0.25], cap=3.0,
                   throughput=("power", 0.5), jitter=0.05)
r = stormsim.simulate(f, fleets=3, cycles=15, seed=9, record_firings=True,
                      passage_level=3, stop_at_passage=False, burn_in=2)
# Uncapped: the fast-forward takes the collision-free stretches.
g = stormsim.Fleet.identical(5, T=1.0, load=0.4, jitter=0.004)
s = stormsim.simulate(g, fleets=3, cycles=40, seed=9, record_firings=True,
                      passage_level=2, stop_at_passage=False, burn_in=3)
np.save(OUT, np.concatenate([x.ravel().astype(float) for x in (
    r.firings, r.occupancy, r.passage_time, r.passage_cycle, r.end_time, r.upcrossings,
    r.writing_time, s.firings, s.occupancy, s.passage_time, s.passage_cycle, s.end_time,
    s.events, s.upcrossings, s.writing_time)]))
"""


def test_pure_python_kernel_equals_compiled(tmp_path):
    out = tmp_path / "nojit.npy"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + CODE], env=env,
                   check=True, timeout=300)
    f = stormsim.Fleet(T=[1.0, 0.8, 1.3, 1.1], d=[0.2, 0.3, 0.1, 0.25], cap=3.0,
                       throughput=("power", 0.5), jitter=0.05)
    r = stormsim.simulate(f, fleets=3, cycles=15, seed=9, record_firings=True,
                          passage_level=3, stop_at_passage=False, burn_in=2)
    g = stormsim.Fleet.identical(5, T=1.0, load=0.4, jitter=0.004)
    s = stormsim.simulate(g, fleets=3, cycles=40, seed=9, record_firings=True,
                          passage_level=2, stop_at_passage=False, burn_in=3)
    compiled = np.concatenate([x.ravel().astype(float) for x in (
        r.firings, r.occupancy, r.passage_time, r.passage_cycle, r.end_time, r.upcrossings,
        r.writing_time, s.firings, s.occupancy, s.passage_time, s.passage_cycle, s.end_time,
        s.events, s.upcrossings, s.writing_time)])
    np.testing.assert_array_equal(np.load(out), compiled)
    # The uncapped fleet did take the fast-forward (it rounds differently).
    pure = stormsim.simulate(g, fleets=3, cycles=40, seed=9, record_firings=True,
                             passage_level=2, stop_at_passage=False, burn_in=3,
                             fast_forward=False)
    assert not np.array_equal(pure.firings, s.firings)

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
np.save(OUT, np.concatenate([r.firings.ravel(), r.occupancy.ravel(), r.passage_time,
                             r.passage_cycle.astype(float), r.end_time]))
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
    compiled = np.concatenate([r.firings.ravel(), r.occupancy.ravel(), r.passage_time,
                               r.passage_cycle.astype(float), r.end_time])
    np.testing.assert_array_equal(np.load(out), compiled)

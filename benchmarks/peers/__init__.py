"""Peers: the same model written with the tools users would otherwise use.

Each peer takes a *case*, a dict of plain Python values (JSON-able, so that the
SimGrid peer can run in another interpreter):

    T, d, sigma : list (N,)     f : list (N + 1,), f[0] unused
    cap : float (>= N: uncapped; JSON has no inf)
    theta : list (F, N)         cycles : int     seed : int     record : bool

and returns a dict: firings (F, N, cycles) when ``record``, occupancy (F, N + 1),
end_time (F,), events (F,), and ``wall`` and ``cpu``, the wall and CPU seconds
spent simulating.

``verify`` checks a peer against stormsim on deterministic cases before it is
timed: sigma = 0, explicit launches, N = 2 and N = 4, fair, ideal and power f,
with and without a binding cap.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

import stormsim

#: Firing times, end times and occupancies must agree to this relative
#: tolerance (of max(1, |value|)): the peers integrate the same exact model,
#: but advance remaining amounts in a different order, so they differ by
#: rounding only (~1e-15 per event, ~1e-13 over a few hundred events).
VERIFY_RTOL = 1e-9

#: The interpreter that has Debian's python3-simgrid (override with
#: STORMSIM_SIMGRID_PYTHON).
SIMGRID_PYTHON = os.environ.get("STORMSIM_SIMGRID_PYTHON", "/usr/bin/python3")
SIMGRID_SCRIPT = Path(__file__).with_name("simgrid_peer.py")


def make_case(fleet: stormsim.Fleet, theta, cycles: int, seed: int = 0,
              record: bool = False) -> dict:
    """A peer case from a stormsim Fleet and launch phases theta (F, N)."""
    theta = np.atleast_2d(np.asarray(theta, dtype=float))
    cap = float(fleet.cap)
    return {
        "T": fleet.T.tolist(), "d": fleet.d.tolist(), "sigma": fleet.jitter.tolist(),
        "f": fleet.f.tolist(), "cap": cap if np.isfinite(cap) else float(fleet.n_jobs),
        "theta": theta.tolist(), "cycles": int(cycles), "seed": int(seed),
        "record": bool(record),
    }


def simgrid_available() -> bool:
    """True when SIMGRID_PYTHON can import simgrid."""
    if shutil.which(SIMGRID_PYTHON) is None and not Path(SIMGRID_PYTHON).exists():
        return False
    try:
        done = subprocess.run([SIMGRID_PYTHON, "-c", "import simgrid"], capture_output=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def run_simgrid(cases: list[dict], record: bool = False, timeout: float = 300,
                config=None) -> list[dict]:
    """Run cases in one SimGrid engine, in a subprocess of SIMGRID_PYTHON."""
    request = {"cases": cases, "record": record}
    if config is not None:
        request["config"] = list(config)
    done = subprocess.run([SIMGRID_PYTHON, str(SIMGRID_SCRIPT)], input=json.dumps(request),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"SimGrid peer failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def peer_runner(name: str):
    """A function cases -> results for peer ``name`` ('simpy', 'numpy', 'simgrid')."""
    if name == "simgrid":
        return lambda cases, record=False: run_simgrid(cases, record)
    if name == "simpy":
        from . import simpy_peer as mod
    elif name == "numpy":
        from . import numpy_peer as mod
    else:
        raise ValueError(f"peer = {name!r}: must be 'simpy', 'numpy' or 'simgrid'")
    return lambda cases, record=False: [mod.run(dict(c, record=record)) for c in cases]


def verification_cases() -> list[tuple[str, stormsim.Fleet, np.ndarray, int]]:
    """Deterministic cases (sigma = 0, explicit launches): (label, fleet, theta, cycles).

    Chosen so that writes overlap (sharing matters) and, for SimGrid, so that
    every d is a whole number of bytes and every cap a whole number of cores.
    """
    rng = np.random.default_rng(20240611)
    T4 = [1.0, 1.1, 0.9, 1.2]
    d4 = [0.25, 0.125, 0.375, 0.2]
    th4 = rng.uniform(0.0, 1.0, size=(3, 4))
    return [
        ("N=2 identical, fair", stormsim.Fleet.identical(2, T=1.0, d=0.3),
         np.array([[0.1, 0.25], [0.0, 0.9]]), 8),
        ("N=2 heterogeneous, fair", stormsim.Fleet(T=[1.0, 1.3], d=[0.2, 0.25]),
         np.array([[0.0, 0.6], [0.5, 0.45]]), 8),
        ("N=4 fair, uncapped", stormsim.Fleet(T=T4, d=d4), th4, 10),
        ("N=4 fair, cap C=3", stormsim.Fleet(T=T4, d=d4, cap=3.0), th4, 10),
        ("N=4 power(0.5), cap C=2", stormsim.Fleet(T=T4, d=d4, cap=2.0,
                                                    throughput=("power", 0.5)), th4, 10),
        ("N=4 ideal, cap C=3", stormsim.Fleet(T=T4, d=d4, cap=3.0, throughput="ideal"), th4, 10),
        ("N=4 identical sync (ties), cap C=3",
         stormsim.Fleet.identical(4, T=1.0, d=0.25, cap=3.0), np.zeros((1, 4)), 6),
        ("N=16 identical L=0.6, fair", stormsim.Fleet.identical(16, T=1.0, d=0.0375),
         rng.uniform(0.0, 1.0, size=(2, 16)), 6),
        ("N=16 identical L=0.6, cap C=12", stormsim.Fleet.identical(16, T=1.0, d=0.0375, cap=12.0),
         rng.uniform(0.0, 1.0, size=(2, 16)), 6),
    ]


def _max_rel(a, b) -> float:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return np.inf
    both_nan = np.isnan(a) & np.isnan(b)
    diff = np.abs(a - b) / np.maximum(1.0, np.abs(b))
    diff[both_nan] = 0.0
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff))) if diff.size else 0.0


def verify(name: str) -> list[dict]:
    """Run peer ``name`` and stormsim on every verification case.

    Returns one row per case: label, the largest relative differences of the
    firing times, end times and occupancies, and ``ok`` (all within
    VERIFY_RTOL).
    """
    cases = verification_cases()
    peer_cases = [make_case(fl, th, K, record=True) for _, fl, th, K in cases]
    results = peer_runner(name)(peer_cases, record=True)
    rows = []
    for (label, fl, th, K), res in zip(cases, results):
        ref = stormsim.simulate(fl, launch=th, fleets=th.shape[0], cycles=K, seed=0,
                                record_firings=True)
        fire = _max_rel(res["firings"], ref.firings)
        end = _max_rel(res["end_time"], ref.end_time)
        occ = _max_rel(res["occupancy"], ref.occupancy)
        worst = max(fire, end, occ)
        rows.append({"case": label, "firings": fire, "end_time": end, "occupancy": occ,
                     "ok": bool(worst <= VERIFY_RTOL)})
    return rows

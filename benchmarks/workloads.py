"""The benchmark workloads (the issue's (a)-(f)), built through the public API.

Every workload is a fleet and the keyword arguments of ``stormsim.simulate``
except ``fleets``, ``cycles`` and ``threads``, which the harness sizes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import stormsim

#: N, load and jitter of the reference workload (a).
N_REF = 16
LOAD = 0.6
SIGMA = 0.01  # in units of T = 1
#: The binding cap of (b), as a fraction of N.
CAP_FRACTION = 0.75
#: Spread of T_i and d_i in (c): uniform in (1 - SPREAD, 1 + SPREAD) times the mean.
SPREAD = 0.30
#: Job counts of the scaling workload (d).
SCALING_N = (4, 16, 64, 256, 1024)
#: m / sigma of the first-passage workload (f).
M_OVER_SIGMA = 30.0
#: Asynchronous checkpoints of (g) (MODEL.md E1): snapshot s = 0.01 T, compute
#: slowed by 20% while a job's own persist is in flight, rule ``block``.
ASYNC = {"checkpoint": "async", "snapshot": 0.01, "slowdown": 0.2, "on_busy": "block"}
#: Cycle cap of (f): far beyond any passage seen (a stagger at m/sigma = 30
#: collides within a few hundred cycles), so every fleet stops at its passage.
PASSAGE_CYCLE_CAP = 1_000_000


@dataclass(frozen=True)
class Workload:
    key: str
    title: str
    fleet: stormsim.Fleet
    kwargs: dict = field(default_factory=dict)

    @property
    def n_jobs(self) -> int:
        return self.fleet.n_jobs


def identical(n_jobs: int = N_REF, cap: float = math.inf,
              jitter: float = SIGMA, **extra) -> stormsim.Fleet:
    """(a) / (b) / (d) / (g): identical jobs, L = 0.6, fair, sigma = 0.01 T."""
    return stormsim.Fleet.identical(n_jobs, T=1.0, load=LOAD, jitter=jitter, cap=cap,
                                    throughput="fair", **extra)


def heterogeneous(n_jobs: int = N_REF, seed: int = 7) -> stormsim.Fleet:
    """(c): T_i and d_i spread +-30% around the means of (a), independently."""
    rng = np.random.default_rng(seed)
    T = 1.0 * rng.uniform(1.0 - SPREAD, 1.0 + SPREAD, n_jobs)
    d = (LOAD / n_jobs) * rng.uniform(1.0 - SPREAD, 1.0 + SPREAD, n_jobs)
    return stormsim.Fleet(T=T, d=d, throughput="fair", jitter=SIGMA)


def first_passage(n_jobs: int = N_REF,
                  m_over_sigma: float = M_OVER_SIGMA) -> tuple[stormsim.Fleet, float]:
    """(f): identical jobs as in (a), jitter set by m / sigma (30 for (f))."""
    margin = stormsim.stagger_margin(stormsim.Fleet.identical(n_jobs, T=1.0, load=LOAD))
    sigma = margin / m_over_sigma
    return stormsim.Fleet.identical(n_jobs, T=1.0, load=LOAD, jitter=sigma), margin


#: m / sigma and job counts of the long first-passage workloads (issue 12):
#: a stagger at m/sigma = 256 survives ~8e3 cycles (N = 16), ~4e3 (N = 256).
LONG_M_OVER_SIGMA = 256.0
LONG_N = (16, 256)


def passage_workloads() -> dict[str, Workload]:
    """(f) and the long first passages f256-16, f256-256, each to its first collision."""
    kwargs = {"launch": "stagger", "record_firings": False, "passage_level": 2}
    out = {}
    for key, n, ms in [("f", N_REF, M_OVER_SIGMA)] + [
            (f"f{LONG_M_OVER_SIGMA:g}-{n}", n, LONG_M_OVER_SIGMA) for n in LONG_N]:
        fleet, margin = first_passage(n, ms)
        out[key] = Workload(key, f"first passage, stagger, N={n}, m/sigma={ms:g} "
                            f"(m={margin:.4g})", fleet, kwargs)
    return out


def all_workloads() -> dict[str, Workload]:
    random = {"launch": "random", "record_firings": False}
    fp_fleet, margin = first_passage()
    out = {
        "a": Workload("a", f"identical N={N_REF}, L={LOAD}, uncapped, fair, sigma={SIGMA}T",
                      identical(), random),
        "b": Workload("b", f"(a) behind a cap C={CAP_FRACTION}N={CAP_FRACTION * N_REF:g}",
                      identical(cap=CAP_FRACTION * N_REF), random),
        "c": Workload("c", f"heterogeneous T_i, d_i +-{SPREAD:.0%}, N={N_REF}",
                      heterogeneous(), random),
        "g": Workload("g", f"(a) with async checkpoints, s={ASYNC['snapshot']}T, "
                      f"slowdown={ASYNC['slowdown']}, {ASYNC['on_busy']}",
                      identical(**ASYNC), random),
        "f": Workload("f", f"first passage, stagger, m/sigma={M_OVER_SIGMA:g} "
                      f"(m={margin:.4g})", fp_fleet,
                      {"launch": "stagger", "record_firings": False, "passage_level": 2}),
    }
    for n in SCALING_N:
        out[f"d{n}"] = Workload(f"d{n}", f"(a) with N={n}", identical(n), random)
    return out

"""stormsim: exact event-driven Monte Carlo of checkpoint storms.

Jobs are integrate-and-fire oscillators that alternate compute and blocking
checkpoint writes through one shared storage fabric (and optionally one power
cap); see MODEL.md for the normative model.
"""
import os as _os

# The program: Ctrl-C while the package loads is one line and exit 130 (not a traceback).
from . import _interrupt

# numba's OpenMP layer busy-waits at the end of each parallel kernel call by
# default; on a shared or oversubscribed machine a 2-thread call then ran 4-5x
# slower than 1 thread (benchmarks, workload f). Sleeping costs ~50 us per
# call, nothing at ~0.5 s per call. Set before libgomp starts; users may override.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .engine import _numba_cache  # noqa: E402,F401  (must run before the kernels are imported)
from ._version import __version__
from .engine.run import Run, simulate
from .errors import ResourceError, SpecError, SweepError
from .sweep.executors import DaskExecutor, LocalExecutor
from .engine.launch import stagger_margin, stagger_spacing, stagger_theta
from .engine.model import Fleet, throughput_table
from .store.results import Results, open_results
from .risk.stormrisk import StormRisk, storm_risk
from .risk.splitting import SplitEstimate, SplitSettings, storm_split
from .sweep.spec import Sweep, load_sweep, parse_sweep
from .stats.stationary import DeterministicFleetWarning, StationaryLaw, stationary
from .stats.interval import Interval
from .stats.power import PowerLaw, RampEstimate, power_law, ramp_estimate
from .store.stores import HDF5Store, MemoryStore
from .stats.survival import kaplan_meier, median_survival
from .driver import SweepOutcome, run_sweep
from .fleetplan import FleetPlan, plan
from .checkpointing import BestInterval, ClassInterval, best_interval

_interrupt.loaded()

__all__ = [
    "BestInterval",
    "ClassInterval",
    "DaskExecutor",
    "DeterministicFleetWarning",
    "Fleet",
    "FleetPlan",
    "HDF5Store",
    "Interval",
    "LocalExecutor",
    "MemoryStore",
    "PowerLaw",
    "RampEstimate",
    "ResourceError",
    "Results",
    "Run",
    "SpecError",
    "SplitEstimate",
    "SplitSettings",
    "StationaryLaw",
    "StormRisk",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "best_interval",
    "kaplan_meier",
    "load_sweep",
    "median_survival",
    "open_results",
    "parse_sweep",
    "plan",
    "power_law",
    "ramp_estimate",
    "run_sweep",
    "simulate",
    "stagger_margin",
    "stagger_spacing",
    "stagger_theta",
    "stationary",
    "storm_risk",
    "storm_split",
    "throughput_table",
    "__version__",
]

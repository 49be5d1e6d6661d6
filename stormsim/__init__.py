"""stormsim: exact event-driven Monte Carlo of checkpoint storms.

Jobs are integrate-and-fire oscillators that alternate compute and blocking
checkpoint writes through one shared storage fabric (and optionally one power
cap); see MODEL.md for the normative model.
"""
from . import _numba_cache  # noqa: F401  (must run before the kernels are imported)
from .engine import Run, simulate
from .launch import stagger_margin, stagger_spacing, stagger_theta
from .model import Fleet, SpecError, throughput_table

__version__ = "0.1.0"

__all__ = [
    "Fleet",
    "Run",
    "SpecError",
    "simulate",
    "stagger_margin",
    "stagger_spacing",
    "stagger_theta",
    "throughput_table",
    "__version__",
]

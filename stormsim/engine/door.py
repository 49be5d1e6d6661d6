"""The one door into the kernels: what every driver hands them, set up once.

``simulate`` (``engine.run``) and forward flux sampling (``risk.splitting``)
both reach the numba kernels through here: a fleet's arrays as the kernels
take them, the seed's two key words, each fleet's launch phases, and the
numba thread count for a call. The kernels themselves are re-exported by
name, so no driver imports ``_kernel``.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from .._args import check_int
from ..failures import FAILURE_SALT, OUTAGE_SALT
from . import _kernel
from .model import Fleet

#: The kernels, by name: the event loop (anonymous, fast-forwarding, general),
#: forward flux sampling's flux runs and stages, the settling's replay of
#: recorded firings block by block, and their constants.
run_fleets = _kernel.run_fleets
run_fleets_ff = _kernel.run_fleets_ff
run_fleets_fail = _kernel.run_fleets_fail
run_fleets_nodur = _kernel.run_fleets_nodur
FAIL_COLUMNS = _kernel.FAIL_COLUMNS
run_fleets_power = _kernel.run_fleets_power
run_fleets_fail_power = _kernel.run_fleets_fail_power
PW_COLUMNS = _kernel.PW_COLUMNS
PO_SUM, PO_MIN, PO_MAX, PO_WINDOW = (_kernel.PO_SUM, _kernel.PO_MIN, _kernel.PO_MAX,
                                     _kernel.PO_WINDOW)
PO_P01, PO_P99, PW_BINS = _kernel.PO_P01, _kernel.PO_P99, _kernel.PW_BINS
run_fleets_general = _kernel.run_fleets_general
run_fleets_general_fail = _kernel.run_fleets_general_fail
run_fleets_general_power = _kernel.run_fleets_general_power
run_fleets_general_fail_power = _kernel.run_fleets_general_fail_power
ffs_flux = _kernel.ffs_flux
ffs_stage = _kernel.ffs_stage
FFS_MAX_EVENTS = _kernel.FFS_MAX_EVENTS
FF_MARGIN = _kernel.FF_MARGIN
replay_blocks = _kernel.replay_blocks


def histogram_cells(edges) -> np.ndarray:
    """A histogram's edges as the kernels bin on them (MODEL.md E7, ``_cell_bin``).

    Parameters
    ----------
    edges : float64 (B + 1,), increasing, > 0, each at least 1 + 2**-5 times
        the one before (so that no cell of 1/64 octave holds two).

    Returns
    -------
    table : int64 (2 L + 1,)
        table[0]: the first cell's key (a float's bits >> ``CELL_SHIFT``)
        less one; then per cell the bin of its lower end and the bits of the
        edge strictly inside it (int64 max where none): first one cell for
        every value below (bin 0), then the cells from the one holding
        edges[0] to the one holding edges[B] (which takes every value above).
    """
    edges = np.ascontiguousarray(edges, dtype=np.float64)
    if not (edges[0] > 0.0 and np.all(edges[1:] >= edges[:-1] * (1.0 + 2.0 ** -5))):
        raise ValueError("histogram edges must be > 0 and grow by at least 1 + 2**-5 a bin")
    shift = _kernel.CELL_SHIFT
    k0 = int(edges[:1].view(np.int64)[0]) >> shift
    k1 = int(edges[-1:].view(np.int64)[0]) >> shift
    keys = np.arange(k0, k1 + 2, dtype=np.int64) << shift
    lows, highs = keys[:-1].view(np.float64), keys[1:].view(np.float64)
    bins = np.searchsorted(edges, lows, side="right")  # the bin of each cell's lower end
    inside = np.full(lows.size, np.iinfo(np.int64).max)
    has = bins < edges.size
    has[has] = edges[bins[has]] < highs[has]
    inside[has] = edges[bins[has]].view(np.int64)
    cells = np.stack([np.concatenate([[0], bins]),
                      np.concatenate([[np.iinfo(np.int64).max], inside])], axis=1)
    return np.concatenate([[k0 - 1], cells.ravel()]).astype(np.int64)


def root_key(seed: int) -> tuple[np.uint64, np.uint64]:
    """Two 64-bit words from the seed (numpy SeedSequence); fleet j's streams
    are derived from them and j alone."""
    words = np.random.SeedSequence(seed).generate_state(2, dtype=np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


@dataclass(frozen=True)
class Inputs:
    """A fleet's arrays as every kernel takes them (contiguous float64), and
    the seed's key words. ``base`` is the two-clock kernels' argument list;
    ``general`` the general kernel's extra arrays."""

    fleet: Fleet
    key0: np.uint64
    key1: np.uint64
    T: np.ndarray
    d: np.ndarray
    sigma: np.ndarray
    rw: np.ndarray
    rc: np.ndarray

    @property
    def base(self) -> tuple:
        """(T, d, sigma, r_w, r_c): the anonymous kernels' fleet arguments."""
        return self.T, self.d, self.sigma, self.rw, self.rc

    @property
    def general(self) -> tuple:
        """(f, weight, snapshot, slowdown, skip, is_async, max_writers) of the
        general kernel.

        A blocking job is the async job with s = 0, eps = 1 and rule block
        (MODEL.md E1, check A1); max_writers is K (E5), N for no cap."""
        fleet = self.fleet
        is_async = np.ascontiguousarray(fleet.is_async)
        snap = np.where(is_async, fleet.snapshot, 0.0)
        slow = np.where(is_async, fleet.slowdown, 1.0)
        skip = np.ascontiguousarray(is_async & (fleet.on_busy == "skip"))
        return (np.ascontiguousarray(fleet.f), np.ascontiguousarray(fleet.weights), snap, slow,
                skip, is_async, np.int64(fleet.max_writers))

    @property
    def failures(self) -> tuple:
        """(fail_in, fail_keys) of the kernels with failures (MODEL.md E8):
        fail_in (N + 1, 2) float64, rows (M_i, R_i) and (M_0, 0); fail_keys
        (2,) uint64, key1 of the failure and of the outage streams
        (``stormsim.failures``)."""
        fleet = self.fleet
        n = fleet.n_jobs
        fail_in = np.zeros((n + 1, 2))
        fail_in[:n, 0] = fleet.mtbf
        fail_in[:n, 1] = fleet.restart
        fail_in[n, 0] = fleet.outage_mtbf
        keys = np.array([self.key1 ^ np.uint64(FAILURE_SALT), self.key1 ^ np.uint64(OUTAGE_SALT)],
                        dtype=np.uint64)
        return fail_in, keys

    @property
    def power(self) -> np.ndarray:
        """pw_in of the kernel with power (MODEL.md E6): (N + 1,) float64, the
        drops busy_i - idle_i (W) and, last, the sum of the idle powers."""
        fleet = self.fleet
        busy = np.asarray(fleet.busy_power, dtype=np.float64)
        idle = np.asarray(fleet.idle_power, dtype=np.float64)
        return np.append(busy - idle, math.fsum(idle))


def prepare(fleet: Fleet, seed: int) -> Inputs:
    """The kernels' inputs for a validated fleet and seed."""
    key0, key1 = root_key(seed)
    return Inputs(fleet, key0, key1, np.ascontiguousarray(fleet.T), np.ascontiguousarray(fleet.d),
                  np.ascontiguousarray(fleet.jitter), fleet.writer_rate, fleet.computer_rate)


def phases(inputs: Inputs, spec, lo: int, hi: int, first: int = 0) -> np.ndarray:
    """Launch phases of fleets [lo, hi) as a (hi - lo, N) array.

    ``spec`` is what ``launch.resolve`` gave: None draws each fleet's phases
    from its own stream (global index ``first + j``); an (N,) array is every
    fleet's; a (fleets, N) array is sliced."""
    n = inputs.fleet.n_jobs
    if spec is None:
        out = np.empty((hi - lo, n))
        _kernel.random_theta(inputs.key0, inputs.key1, first + lo, out)
        return out
    if spec.ndim == 1:
        return np.broadcast_to(spec, (hi - lo, n)).copy()
    return np.ascontiguousarray(spec[lo:hi])


@contextmanager
def numba_threads(threads: int | None):
    """numba's thread count for the calls inside (None: leave it); results
    never depend on it."""
    if threads is None:
        yield
        return
    threads = check_int("threads", threads, 1, numba.config.NUMBA_NUM_THREADS)
    saved = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(saved)


# -- forward flux sampling on the general dynamics (E1, E2, E5; risk.splitting) --
gffs_flux = _kernel.gffs_flux
gffs_stage = _kernel.gffs_stage
gffs_layout = _kernel.gffs_layout


def gffs_fleet(inputs: Inputs) -> tuple:
    """The general FFS kernels' fleet tuple: (T, sigma, f, r_c, weight,
    snapshot, slowdown, skip, is_async, max_writers) as the general kernel
    takes them (``Inputs.general``), then its constants (``gffs_consts``)."""
    f, weight, snap, slow, skip, is_async, max_writers = inputs.general
    snap = np.ascontiguousarray(snap, dtype=np.float64)
    slow = np.ascontiguousarray(slow, dtype=np.float64)
    jobp, tabs, tol3, uniform = _kernel.gffs_consts(inputs.T, inputs.d, f, inputs.rc, weight,
                                                    snap, slow)
    return (inputs.T, inputs.sigma, f, inputs.rc, weight, snap, slow, skip, is_async, max_writers,
            jobp, tabs, tol3, bool(uniform))

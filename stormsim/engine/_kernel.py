"""The numba kernels: plain arrays in, caller-allocated buffers out.

Nothing here validates or raises: ``stormsim.engine`` validates every input
first. Every jitted function of the package lives in this one file because
numba's cache invalidation hashes only the file that holds the cached
function, not its callees elsewhere (a helper changed in another file would
leave a stale cache).

How an event costs O(log N), or O(1) for alike jobs
------------------------------------
All writers drain at one common rate r_w = f(n_w)/n_w and all computers
advance at one common rate r_c = min(1, C/n_c) (anonymous sharing). So the
kernel keeps two *virtual clocks*: P_w, the volume any writer has drained, and
P_c, the work any computer has done. A writer stores the value of P_w at which
it finishes (its target), a computer the value of P_c at which it fires; the
remaining amount of job i is ``target[i] - P``. Between events only the two
clocks move, never the targets: writers and computers sit in two priority
queues keyed by target, the next event is a queue head, and an event pops
and pushes one job. A queue is a binary heap (O(log N)), or, when the jobs
are alike enough that new targets arrive nearly in order, a sorted ring
buffer filled from the back (O(1) expected; chosen by the driver). The clocks
are rebased to 0 every few instants so that
``target - P`` keeps full relative precision.

The general kernel (MODEL.md E1, E2)
------------------------------------
``run_fleet_general`` runs asynchronous checkpoints and weighted sharing
with three clocks: the writer clock advances at f(n_w) / W (W the writers'
weight sum, recomputed exactly at every rebase and exact with one writer or
none), so writer i finishes d_i / w_i after its firing; a job whose own
persist is in flight sits on the compute clock at its remaining work
stretched by 1 / (1 - eps_i) and is re-keyed (an indexed queue's
decrease-key) when the persist ends, or parked outside the queue for
eps_i = 1; snapshots sit on a wall-time clock. Still O(log N) per event (O(1)
expected with rings), no allocation in the loop. Up-crossings of each level
(E3) are counted at the firings that cause them.
``run_fleet_general_fail`` adds failures, restarts and outages (MODEL.md E8)
as the anonymous kernel's FAIL variant does: a fourth, wall-time queue of
each job's next failure or end of DOWN; a failing job leaves whatever queue
it is in (writers, the E5 queue, snapshots, computers) at that instant.

Random numbers
--------------
Counter-based and per job: the k-th standard normal of job i in fleet j is a
pure function of (root key, j, i, k) (SplitMix64 outputs on a per-(fleet, job)
stream, read at random positions; a ziggurat turns them into normals). Results
therefore depend on neither the thread
count, the batch, nor the order of events in the instant.
"""
from __future__ import annotations

import math
import struct

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, prange, types
from numba.extending import intrinsic

from ._numba_cache import CACHE

#: Two remaining amounts within this fraction of the job's own T_i (compute)
#: or d_i (write) of zero are treated as reaching zero at the same instant
#: (MODEL.md, "Floating-point ties"). It is far above the rounding of one
#: event (~1e-16 relative, the clocks being rebased) and far below any
#: physical interval a user can ask for.
TIE_RTOL = 1e-12

# SplitMix64 constants (Steele, Lea, Flood 2014).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_FLEET_MUL = np.uint64(0xD1B54A32D192ED03)
_JOB_MUL = np.uint64(0xAEF17502108EF2D9)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0
_TWO_PI = 2.0 * np.pi

#: Rebase the virtual clocks after this many instants per job (amortised O(1)).
_REBASE_EVERY = 2

#: The fast-forward (``_fast_forward``) hands over to the event loop whenever
#: a gap between one write's end and the next write's start, or a compute
#: interval, is below this fraction of the fleet's longest lone cycle
#: max_i (T_i + d_i). Far above the tie rule (TIE_RTOL of T_i or d_i) and
#: above the rounding of both paths: ~1e-16 of a cycle per firing on clocks
#: rebased every few cycles, and the two paths' trajectories drift apart by
#: ~1e-16 * sqrt(firings) (1e-13 cycles after 1e6 cycles), so every close or
#: tied case is decided by the event loop; far below any physical margin.
FF_MARGIN = 1e-8

#: A fast-forward that advanced fewer than _FF_LONG * N firings doubles the
#: number of instants with no writer the event loop lets pass before the
#: next attempt (up to _FF_BACKOFF_MAX * N); a longer one resets it. Where
#: collisions come every few firings (workload (a)) a call's fixed cost
#: exceeds what it saves; where stretches are long it runs at once.
_FF_LONG = 1
_FF_BACKOFF_MAX = 64

@njit(cache=CACHE, nogil=True, inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit mix."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=CACHE, nogil=True)
def stream_base(key0, key1, fleet, job):
    """Base of the random stream of (fleet, job) under root key (key0, key1)."""
    h = mix64(key0 + np.uint64(fleet) * _FLEET_MUL)
    return mix64(h ^ (key1 + np.uint64(job) * _JOB_MUL))


@njit(cache=CACHE, nogil=True, inline="always")
def stream_uniform(base, n):
    """n-th uniform in [0, 1) of a stream: SplitMix64 output n, 53 bits."""
    return np.float64(mix64(base + np.uint64(n) * _GOLDEN) >> _S11) * _TWO_M53


def _ziggurat_tables(layers=128, r=3.442619855899, v=9.91256303526217e-3):
    """Layer edges x[0..layers] and ratios x[i+1]/x[i] of the normal ziggurat.

    Marsaglia & Tsang (2000), in Doornik's ZIGNOR form (2005): 128 layers of
    area v each; x[0] = v / f(r) is the base strip's pseudo-width, x[1] = r.
    """
    x = np.empty(layers + 1)
    f = np.exp(-0.5 * r * r)
    x[0] = v / f
    x[1] = r
    x[layers] = 0.0
    for i in range(2, layers):
        x[i] = np.sqrt(-2.0 * np.log(v / x[i - 1] + f))
        f = np.exp(-0.5 * x[i] * x[i])
    return x, x[1:] / x[:-1], r


#: The ziggurat's layer edges x[0..128] as exact binary64 literals, made once
#: by ``_ziggurat_tables()`` (a test checks them against it). Frozen because
#: numpy's exp and log may differ by an ulp between CPUs, and an ulp in a
#: table changes some draws: every machine must draw the same normals.
_ZIG_X = np.array([float.fromhex(h) for h in (
    "0x1.db4668fe7e4a4p+1", "0x1.b8a7c476d2be8p+1", "0x1.9c8e0c7c8098fp+1", "0x1.8aa73e440ffbcp+1",
    "0x1.7d45eb36eb842p+1", "0x1.7279dd4ac3f9dp+1", "0x1.695c2be68edc9p+1", "0x1.616dff7c8f54ap+1",
    "0x1.5a61edf7e8f32p+1", "0x1.54052012a04a4p+1", "0x1.4e3456b0e3a1bp+1", "0x1.48d61806d6010p+1",
    "0x1.43d75b60bca1dp+1", "0x1.3f29848d3b416p+1", "0x1.3ac11b8e206d6p+1", "0x1.3694f3a3740d9p+1",
    "0x1.329d9725e32f7p+1", "0x1.2ed4df8099571p+1", "0x1.2b35aa5ebee3ep+1", "0x1.27bba2b5dbc92p+1",
    "0x1.246317a6b53c0p+1", "0x1.2128dd36bdf09p+1", "0x1.1e0a342cf08f6p+1", "0x1.1b04b731f6bccp+1",
    "0x1.18164be0c1c39p+1", "0x1.153d16d45743dp+1", "0x1.12777201834f3p+1", "0x1.0fc3e4d95f278p+1",
    "0x1.0d211dd28b00fp+1", "0x1.0a8ded0ec371ap+1", "0x1.08093fe3e40e1p+1", "0x1.05921d1c4d769p+1",
    "0x1.0327a1cc4cf5ep+1", "0x1.00c8fea1720d4p+1", "0x1.fceaeb2ca5f17p+0", "0x1.f858aff31cbf0p+0",
    "0x1.f3da097460823p+0", "0x1.ef6dcddc7d392p+0", "0x1.eb12e91486bbcp+0", "0x1.e6c85a849b015p+0",
    "0x1.e28d331c6723cp+0", "0x1.de609397e09b9p+0", "0x1.da41aaf79a344p+0", "0x1.d62fb52580b86p+0",
    "0x1.d229f9bfeefdbp+0", "0x1.ce2fcb05f8c34p+0", "0x1.ca4084e091e34p+0", "0x1.c65b8c04dbac2p+0",
    "0x1.c2804d2c6b16fp+0", "0x1.beae3c60cd0e4p+0", "0x1.bae4d457ee119p+0", "0x1.b72395df5b73bp+0",
    "0x1.b36a075498d64p+0", "0x1.afb7b428fe7a1p+0", "0x1.ac0c2c6fc6382p+0", "0x1.a867047516e4fp+0",
    "0x1.a4c7d45d01a31p+0", "0x1.a12e37c983369p+0", "0x1.9d99cd86b58b4p+0", "0x1.9a0a373c73f21p+0",
    "0x1.967f1924c7b06p+0", "0x1.92f819c682bf5p+0", "0x1.8f74e1b37c6b8p+0", "0x1.8bf51b49ef337p+0",
    "0x1.88787278810a6p+0", "0x1.84fe9484873b9p+0", "0x1.81872fd21db73p+0", "0x1.7e11f3adaeb92p+0",
    "0x1.7a9e90168b8eep+0", "0x1.772cb58a39dd6p+0", "0x1.73bc14d01a2c9p+0", "0x1.704c5ec50cb81p+0",
    "0x1.6cdd4426b88a5p+0", "0x1.696e755e16b84p+0", "0x1.65ffa248e016dp+0", "0x1.62907a0176ebfp+0",
    "0x1.5f20aaa4dfc1ap+0", "0x1.5bafe11654817p+0", "0x1.583dc8bff3219p+0", "0x1.54ca0b4ffd349p+0",
    "0x1.515450720f455p+0", "0x1.4ddc3d83a5b84p+0", "0x1.4a617543306cdp+0", "0x1.46e39778de063p+0",
    "0x1.436240982ad9dp+0", "0x1.3fdd09591d2a4p+0", "0x1.3c538647ef792p+0", "0x1.38c54749b9033p+0",
    "0x1.3531d7146a43ep+0", "0x1.3198ba982d911p+0", "0x1.2df97057e7efbp+0", "0x1.2a536fae30e33p+0",
    "0x1.26a627fb9d120p+0", "0x1.22f0ffbaa1e55p+0", "0x1.1f335374a10f8p+0", "0x1.1b6c7492c9735p+0",
    "0x1.179ba80463fecp+0", "0x1.13c024b2c7ec6p+0", "0x1.0fd911b97f236p+0", "0x1.0be58456ff4aep+0",
    "0x1.07e47d87a40f6p+0", "0x1.03d4e7391c5b7p+0", "0x1.ff6b21fffe31ap-1", "0x1.f70a5866c8f46p-1",
    "0x1.ee848e956826fp-1", "0x1.e5d6909f51b6ap-1", "0x1.dcfccc51c59f0p-1", "0x1.d3f340dda611cp-1",
    "0x1.cab56ac6a38d3p-1", "0x1.c13e2b014e85cp-1", "0x1.b787a7c516f3bp-1", "0x1.ad8b2506a137cp-1",
    "0x1.a340d1baf5b18p-1", "0x1.989f85c753b2cp-1", "0x1.8d9c6a9d35e3dp-1", "0x1.822a858af0e7dp-1",
    "0x1.763a1600eec74p-1", "0x1.69b7b213f3f69p-1", "0x1.5c8afdbf0217bp-1", "0x1.4e94c08c0bab7p-1",
    "0x1.3fabee1911cd7p-1", "0x1.2f98d6bb4f41fp-1", "0x1.1e0ce6b5969b3p-1", "0x1.0a936da5e55adp-1",
    "0x1.e8e576e43fbefp-2", "0x1.b4c8fece48e83p-2", "0x1.73949184db9dfp-2", "0x1.16db47e193e1ap-2",
    "0x0.0p+0",
)])
_ZIG_RATIO = _ZIG_X[1:] / _ZIG_X[:-1]  # IEEE division: the same everywhere
_ZIG_R = float(_ZIG_X[1])  # r = 3.442619855899, the base strip's edge
_ZIG_MASK = np.uint64(127)
_ZIG_STRIDE = 12  # normal k uses stream outputs (k << 12) + 1 + c, c = 0, 1, ...


@njit(cache=CACHE, nogil=True, inline="always")
def stream_normal(base, k):
    """k-th standard normal of a stream, a pure function of (base, k).

    Ziggurat (Marsaglia & Tsang 2000, ZIGNOR form): one stream output gives
    the layer (low 7 bits) and a signed uniform (top 53 bits); 97.2% of draws
    (the mean of _ZIG_RATIO) end there. Normal k reads outputs (k << 12) + 1, + 2, ... so each draw has
    its own block of counters; output 0 is the launch phase.
    """
    n = (np.int64(k) << _ZIG_STRIDE) + 1
    while True:
        h = mix64(base + np.uint64(n) * _GOLDEN)
        n += 1
        i = np.int64(h & _ZIG_MASK)
        u = 2.0 * (np.float64(h >> _S11) * _TWO_M53) - 1.0
        if abs(u) < _ZIG_RATIO[i]:
            return u * _ZIG_X[i]
        if i == 0:
            # Tail beyond r (Marsaglia 1964), with uniforms in (0, 1].
            while True:
                a = np.log(1.0 - stream_uniform(base, n)) / _ZIG_R
                b = np.log(1.0 - stream_uniform(base, n + 1))
                n += 2
                if -2.0 * b >= a * a:
                    return a - _ZIG_R if u < 0.0 else _ZIG_R - a
        x0 = u * _ZIG_X[i]
        f0 = np.exp(-0.5 * (_ZIG_X[i] * _ZIG_X[i] - x0 * x0))
        f1 = np.exp(-0.5 * (_ZIG_X[i + 1] * _ZIG_X[i + 1] - x0 * x0))
        if f1 + stream_uniform(base, n) * (f0 - f1) < 1.0:
            return x0
        n += 1


@njit(cache=CACHE, nogil=True, inline="always")
def _exact_inverse(r):
    """1 / r if that is exact and x * (1 / r) is x / r for every x, else 0.0.

    So iff r > 0 is a power of two whose inverse is a normal number: 1 / r
    is then exact, and x * (1 / r) and x / r are both the correctly rounded
    value of the same real number x / r (IEEE 754), the same bits.
    """
    if not (r > 0.0) or r == np.inf:
        return 0.0
    m, e = math.frexp(r)
    inv = 1.0 / r
    if m == 0.5 and inv * r == 1.0 and 2.2250738585072014e-308 <= inv <= 8.98846567431158e307:
        return inv
    return 0.0


#: Histogram cells (MODEL.md E7): a float's exponent and top 6 mantissa bits,
#: its bits shifted right by this, name a cell 1/64 of an octave wide, at
#: most one bin edge inside (``door.histogram_cells`` checks the edges).
CELL_SHIFT = 46

if numba.config.DISABLE_JIT:
    def _float_bits(x):
        """The IEEE 754 bits of a float64, as int64."""
        return struct.unpack("<q", struct.pack("<d", x))[0]
else:
    @intrinsic
    def _float_bits(typingctx, x):
        """The IEEE 754 bits of a float64, as int64: a register move, not a
        store and a load through a scratch array."""
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], llvm_ir.IntType(64))
        return types.int64(types.float64), codegen


@njit(cache=CACHE, nogil=True, inline="always")
def _cell_bin(table, x):
    """The bin of x on a histogram's edges: 0 below edges[0], j for
    edges[j-1] <= x < edges[j], B + 1 at or above edges[B].

    table (2 L + 1,) int64 (``door.histogram_cells``): table[0] the first
    cell's key less one, then per cell (the first for every x below the
    cells, the last holding edges[B] and every x above) the bin of its lower
    end and the bits of the edge inside it (int64 max where none): for
    floats >= 0 the order of their bits is theirs. x's bin is its cell's or
    the next, decided by one comparison: O(1), one array, no branch (a branch
    on "is it the common bin" mispredicts), no logarithm; the edges, not a
    formula's rounding, define the bins.
    """
    xb = _float_bits(x)
    c = min(max((xb >> CELL_SHIFT) - table[0], 0), (table.shape[0] - 3) >> 1)
    return table[np.uintp(2 * c + 1)] + (xb >= table[np.uintp(2 * c + 2)])


#: A fleet's row of one checkpoint observable (E7), float64 (B + 4,): its
#: sum (s), its maximum (s), then its histogram's B + 2 counts (exact as
#: float64 below 2**53): one array, so one pointer in the event loop.
_OUT_SUM = 0
_OUT_MAX = 1
_OUT_HIST = 2


@njit(cache=CACHE, nogil=True, inline="always")
def _record(out, table, x, inv_scale):
    """One checkpoint's duration (or wait) x (s) into a fleet's row ``out``,
    binned as x * inv_scale."""
    out[_OUT_SUM] += x
    out[_OUT_MAX] = max(out[_OUT_MAX], x)
    out[np.uintp(_OUT_HIST + _cell_bin(table, x * inv_scale))] += 1.0


#: Normals drawn per job at once by the event loop (``_normal_block``).
_NB = 16


@njit(cache=CACHE, nogil=True, inline="always")
def _normal_block(base, k, out, o):
    """out[o + b] = normal k + b of the stream (``stream_normal``) for b < _NB
    where that draw ends at its first stream output (97.2% of draws), else NaN.

    The same operations as ``stream_normal``'s first step, on each of _NB
    counters at once (no branch between them: the CPU overlaps them, the
    compiler may vectorize them), so an accepted value is the same bits; a
    NaN sends the caller to ``stream_normal`` for the draw.
    """
    for b in range(_NB):
        h = mix64(base + np.uint64(((np.int64(k) + b) << _ZIG_STRIDE) + 1) * _GOLDEN)
        i = h & _ZIG_MASK
        u = 2.0 * (np.float64(h >> _S11) * _TWO_M53) - 1.0
        out[o + b] = u * _ZIG_X[i] if abs(u) < _ZIG_RATIO[i] else np.nan


@njit(cache=CACHE, nogil=True, parallel=True)
def random_theta(key0, key1, fleet0, out):
    """Fill out (F, N) with iid uniform launch phases: uniform 0 of each stream."""
    F, N = out.shape
    for f in prange(F):
        for i in range(N):
            out[f, i] = stream_uniform(stream_base(key0, key1, fleet0 + f, i), 0)


@njit(cache=CACHE, nogil=True, inline="always")
def _heap_push(key, idx, size, k, j):
    """Insert (k, j) into the binary min-heap key[:size]; return the new size.

    (Indices cast to np.uintp, here and in the queue functions below: no
    negative-index wrap-around, see ``run_fleet``.)
    """
    pos = size
    while pos > 0:
        parent = (pos - 1) >> 1
        if key[np.uintp(parent)] <= k:
            break
        key[np.uintp(pos)] = key[np.uintp(parent)]
        idx[np.uintp(pos)] = idx[np.uintp(parent)]
        pos = parent
    key[np.uintp(pos)] = k
    idx[np.uintp(pos)] = j
    return size + 1


@njit(cache=CACHE, nogil=True, inline="always")
def _heap_pop(key, idx, size):
    """Remove the top of the binary min-heap key[:size]; return the new size."""
    size -= 1
    k = key[np.uintp(size)]
    j = idx[np.uintp(size)]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and key[np.uintp(child + 1)] < key[np.uintp(child)]:
            child += 1
        if key[np.uintp(child)] >= k:
            break
        key[np.uintp(pos)] = key[np.uintp(child)]
        idx[np.uintp(pos)] = idx[np.uintp(child)]
        pos = child
    key[np.uintp(pos)] = k
    idx[np.uintp(pos)] = j
    return size


@njit(cache=CACHE, nogil=True, inline="always")
def _q_push(key, idx, head, size, mask, ring, k, j):
    """Insert (k, j) into a queue; return its new size.

    ring: a sorted ring buffer key[head .. head+size) (indices & mask),
    inserted from the back: O(1) when keys arrive nearly in order, as they
    do for alike jobs (a new target is pc + T_i, behind almost every other).
    Otherwise a binary heap in key[:size] (head stays 0): O(log N) always.
    """
    if ring:
        pos = head + size
        while pos > head:
            p = (pos - 1) & mask
            if key[np.uintp(p)] <= k:
                break
            q = pos & mask
            key[np.uintp(q)] = key[np.uintp(p)]
            idx[np.uintp(q)] = idx[np.uintp(p)]
            pos -= 1
        q = pos & mask
        key[np.uintp(q)] = k
        idx[np.uintp(q)] = j
        return size + 1
    return _heap_push(key, idx, size, k, j)


@njit(cache=CACHE, nogil=True, inline="always")
def _q_pop(key, idx, head, size, mask, ring):
    """Remove a queue's smallest key (at key[head]); return (head, size)."""
    if ring:
        return (head + 1) & mask, size - 1
    return head, _heap_pop(key, idx, size)


@njit(cache=CACHE, nogil=True, inline="always")
def _q_second(key, head, size, mask, ring):
    """The second-smallest key of a queue of size >= 2."""
    if ring:
        return key[np.uintp((head + 1) & mask)]
    if size > 2 and key[2] < key[1]:
        return key[2]
    return key[1]


@njit(cache=CACHE, nogil=True)
def _fast_forward(T, d, sigma, base, count, ckey, cidx, ch, nch, mask, ring_c, pc, t, margin,
                  cycles, burn_in, n_done, n_burn, measuring, fired_total, events, record,
                  firings, occupancy, upcross, writing, old_key, c0, table, dur_out):
    """Advance a base-model fleet through a stretch in which every write is alone.

    Called by ``run_fleet`` at an instant with no writer (all N jobs in the
    compute queue ckey, keyed on the computer clock pc) when the cap does not
    bind (C >= N) and f(1) = 1. While writes do not overlap, every rate is 1,
    so the computer clock is wall time shifted, and job i's next firing is
    its firing + d_i + its next compute interval max(0, T_i + sigma_i xi)
    (the event loop's normal: same stream, same index k, its firing count).

    Two ways, both committing only what their checks prove. (1) A round, on
    a ring (the queue in firing order): the next N firings are the ring's N
    keys; each job's next firing is computed (no branch between jobs, so the
    N normals overlap in the CPU), and the round is committed, the new keys
    written in place, iff every gap from a write's end to the next firing
    (the last one to the next round's first) and every compute interval
    exceeds ``margin``, the firing order does not change, and no firing of
    the round reaches K or opens the measured window. (2) Otherwise firing
    by firing: the head (at F) is committed iff the gap from the previous
    write's end to F, the gap from its write's end to the queue's second key
    and its new compute interval exceed ``margin`` (its own next firing is
    then checked as the next head); N such firings come first, and again
    after a round fails, before a round is tried. When (2) fails it returns,
    leaving the state at the last committed write's end (no write in
    flight, every job in the compute queue) for the event loop, which
    decides the close case exactly. A round commits exactly what N firings
    of (2) would: the same arithmetic, the same sums in the same order, and
    the rebase at the same firing (rounds start only at a multiple of N
    firings since the last rebase), so results do not depend on the queue.

    The firing and the write's end count two events, as in the event loop.
    A firing that would end the run (the last job's K-th) is left to the
    event loop. Every write it commits lasts exactly d_i (it is alone), so
    the durations (E7) take n lone writes in the bin of 1 and d_i into the
    maximum (their sum is the writing time's). old_key (N,) float64, c0 (N,)
    int64: work space. Returns the updated (ch, nch, pc, t, n_done, n_burn,
    measuring, fired_total, events); the arrays are updated in place.
    """
    N = T.shape[0]
    tb = t - pc  # wall time at clock value 0
    e_last = pc  # end of the last write (the current instant)
    moved = False
    since_rebase = 0
    # The measured window's sums are formed once, at the end: each job's
    # writes since the window (or this call) began are count - c0, each of
    # length d_i, and the time without a writer is the rest of the span.
    for b in range(N):
        c0[b] = count[b]
    span = 0.0  # measured time before the last rebase
    x0 = e_last  # where the measured span begins, on the current clock
    single = N  # firings to take one by one before a round is tried
    k_range_stale = True  # k_min, k_max: the firing counts' range, for rounds
    k_min = 0
    k_max = 0
    # Alike jobs (one T, d, sigma): rounds read them once.
    alike = True
    for b in range(1, N):
        alike &= (T[b] == T[0]) & (d[b] == d[0]) & (sigma[b] == sigma[0])
    T0 = T[0]
    d0 = d[0]
    s0 = sigma[0]
    while True:
        if ring_c and single <= 0 and since_rebase % N == 0:
            # (1) A round: all checks folded into one flag, no early exit;
            # applied as it goes, undone below if a check fails (rare).
            # Every job fires once, so the counts' range moves up by one:
            # no firing reaches K or opens the window iff k_max + 1 < K and
            # (measuring or burn_in is outside k_min + 1 .. k_max + 1).
            if k_range_stale:
                k_min = count[0]
                k_max = count[0]
                for b in range(1, N):
                    k_min = min(k_min, count[b])
                    k_max = max(k_max, count[b])
                k_range_stale = False
            ok = k_max + 1 < cycles and (measuring or not (k_min < burn_in <= k_max + 1))
            e_prev = e_last
            fn_prev = -np.inf
            for j in range(N):
                q = (ch + j) & mask
                i = cidx[q]
                f_at = ckey[q]
                k = count[i]
                if alike:
                    e = f_at + d0
                    w = T0
                    if s0 > 0.0:
                        w += s0 * stream_normal(base[i], k)
                else:
                    e = f_at + d[i]
                    w = T[i]
                    if sigma[i] > 0.0:
                        w += sigma[i] * stream_normal(base[i], k)
                if w < 0.0:
                    w = 0.0
                fn = e + w
                old_key[j] = f_at
                ckey[q] = fn
                count[i] = k + 1
                if record and k < cycles:
                    firings[i, k] = tb + f_at
                ok &= (f_at - e_prev > margin) & (w > margin) & (fn >= fn_prev)
                e_prev = e
                fn_prev = fn
            if ok and ckey[ch] - e_prev > margin:  # ckey[ch]: the next round's first firing
                k_min += 1
                k_max += 1
                moved = True
                fired_total += N
                events += 2 * N
                e_last = e_prev
                since_rebase += N
                if since_rebase >= _REBASE_EVERY * N:
                    since_rebase = 0
                    for b in range(nch):
                        ckey[(ch + b) & mask] -= e_last
                    tb += e_last
                    span += e_last - x0
                    x0 = 0.0
                    e_last = 0.0
                continue
            for j in range(N):  # undo the round
                q = (ch + j) & mask
                i = cidx[q]
                ckey[q] = old_key[j]
                count[i] -= 1
                if record and count[i] < cycles:
                    firings[i, count[i]] = np.nan  # not fired yet (simulate's fill)
            single = N
        k_range_stale = True
        # (2) One firing. The checks that need no draw come first: an
        # attempt that fails costs O(1).
        f_at = ckey[ch]
        if f_at - e_last <= margin:
            break
        i = cidx[ch]
        k = count[i]
        if k + 1 == cycles and n_done == N - 1:
            break  # this firing ends the run: the event loop's
        e = f_at + d[i]
        if nch > 1 and _q_second(ckey, ch, nch, mask, ring_c) - e <= margin:
            break
        w = T[i]
        if sigma[i] > 0.0:
            w += sigma[i] * stream_normal(base[i], k)
            if w < 0.0:
                w = 0.0
        if w <= margin:
            break  # (the job's own next firing, at e + w, is checked as the next head)
        # Commit the firing at f_at and the write's end at e.
        moved = True
        single -= 1
        ch, nch = _q_pop(ckey, cidx, ch, nch, mask, ring_c)
        nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, e + w, i)
        if record and k < cycles:
            firings[i, k] = tb + f_at
        count[i] = k + 1
        if k + 1 == cycles:
            n_done += 1
        if k + 1 == burn_in:
            n_burn += 1
            if n_burn == N and not measuring:  # the window opens at this firing
                measuring = True
                for b in range(N):
                    writing[b] = 0.0
                    c0[b] = count[b]
                c0[i] = k  # this firing's write is in the window
                span = 0.0
                x0 = f_at
        fired_total += 1
        events += 2
        e_last = e
        since_rebase += 1
        if since_rebase >= _REBASE_EVERY * N:
            since_rebase = 0
            for b in range(nch):
                ckey[(ch + b) & mask] -= e_last
            tb += e_last
            span += e_last - x0
            x0 = 0.0
            e_last = 0.0
    if moved:
        pc = e_last
        t = tb + e_last
        if measuring:
            busy = 0.0
            crossings = 0
            lone = _OUT_HIST + _cell_bin(table, 1.0)
            for b in range(N):
                n = count[b] - c0[b]
                busy += n * d[b]
                writing[b] += n * d[b]
                crossings += n
                if n > 0:
                    dur_out[_OUT_MAX] = max(dur_out[_OUT_MAX], d[b])
            dur_out[lone] += crossings
            occupancy[0] += span + (e_last - x0) - busy
            occupancy[1] += busy
            upcross[1] += crossings
    return ch, nch, pc, t, n_done, n_burn, measuring, fired_total, events


def _variant(name):
    """Name a kernel variant made by a factory (``__name__`` and ``__qualname__``).

    numba's symbol for a compiled function is its module, qualname, argument
    types, flags and a per-process counter (``[abi:vN]``); the counter alone
    tells two closures of one factory apart, and only within a process. Two
    variants compiled in different processes can share a counter value and so
    a symbol; a later process that loads both from the cache links every call
    to the one loaded first (their callee copies are weak definitions), and a
    run gets the other variant's code: bits that depended on the cache's
    history (docs/performance.md, "Bits independent of the cache's
    history"). A distinct qualname per variant makes every symbol name one
    code, and gives each variant its own cache index file.
    tests/engine/test_cache_history.py checks the names are distinct.
    """

    def rename(fn):
        fn.__name__ = fn.__qualname__ = name
        return fn

    return rename


# -- failures, restarts and outages (MODEL.md E8) in the anonymous kernel --

#: Columns of a fleet's per-job failure outputs ``fail_out`` (N + 1, FAIL_COLUMNS),
#: each summed over the measured window: failures (outages included),
#: abandoned writes, lost work (s of compute done in the window), down time
#: (s), committed work (s of compute done in the window that a completed
#: write made durable), uncommitted work at the window's end (s, done in the
#: window). Row N: the fleet's outages in the window (column 0).
_FO_FAIL = 0
_FO_ABANDON = 1
_FO_LOST = 2
_FO_DOWN = 3
_FO_COMMIT = 4
_FO_UNCOMMIT = 5
#: (public: the door allocates fail_out; the general kernel fills one column
#: more, ``_FO_CKPT``, which the anonymous kernel leaves 0)
FAIL_COLUMNS = 7

@njit(cache=CACHE, nogil=True, inline="always")
def stream_exponential(base, m):
    """m-th unit-mean exponential of a stream: -log(1 - u), u its m-th uniform
    (a multiple of 2**-53 in [0, 1): 1 - u is exact and > 0), as
    ``stormsim.failures.exponential``."""
    return -math.log(1.0 - stream_uniform(base, m))


@njit(cache=CACHE, nogil=True, inline="always")
def _q_remove(key, idx, head, size, mask, ring, j):
    """Remove job j from a queue of ``_q_push``; return (its key, new size),
    (NaN, size) where j is not in it.

    O(size): a failure (MODEL.md E8) is rare next to the events. A ring
    closes the gap (the order stays sorted); a heap moves its last entry
    into the hole and sifts it up or down.
    """
    p = 0
    while p < size and idx[(head + p) & mask] != j:
        p += 1
    if p == size:
        return np.nan, size
    k = key[(head + p) & mask]
    if ring:
        for q in range(p, size - 1):
            key[(head + q) & mask] = key[(head + q + 1) & mask]
            idx[(head + q) & mask] = idx[(head + q + 1) & mask]
        return k, size - 1
    size -= 1
    if p < size:
        kl = key[size]
        jl = idx[size]
        pos = p
        while pos > 0:
            parent = (pos - 1) >> 1
            if key[parent] <= kl:
                break
            key[pos] = key[parent]
            idx[pos] = idx[parent]
            pos = parent
        if pos == p:
            while True:
                child = 2 * pos + 1
                if child >= size:
                    break
                if child + 1 < size and key[child + 1] < key[child]:
                    child += 1
                if key[child] >= kl:
                    break
                key[pos] = key[child]
                idx[pos] = idx[child]
                pos = child
        key[pos] = kl
        idx[pos] = jl
    return k, size


@njit(cache=CACHE, nogil=True)
def _xh_set(key, idx, pos, size, j, k):
    """Set job j's key to k in an indexed min-heap of fixed size (every job in it)."""
    p = pos[j]
    if p > 0 and key[(p - 1) >> 1] > k:
        _ih_up(key, idx, pos, p, k, j)
        return
    while True:
        child = 2 * p + 1
        if child >= size:
            break
        if child + 1 < size and key[child + 1] < key[child]:
            child += 1
        if key[child] >= k:
            break
        key[p] = key[child]
        idx[p] = idx[child]
        pos[idx[p]] = p
        p = child
    key[p] = k
    idx[p] = j
    pos[j] = p


@njit(cache=CACHE, nogil=True, inline="always")
def _fail_job(i, t, pc, measuring, t0, restart, wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask,
              ring_w, ring_c, shift, wcur, pre, since, opened, writing, dstart, de, fo):
    """Job i fails at t (MODEL.md E8): it leaves its queue, loses its work
    since its last completed write, and enters DOWN until t + R_i. Its state
    is where it is: DOWN (de[i] finite), in the writers' queue or in the
    computers'. Returns the queues' (nwh, nch) (a ring's head does not move)."""
    lost = 0.0
    down = de[i] < np.inf
    nw0 = nwh
    if not down:
        k, nwh = _q_remove(wkey, widx, wh, nwh, mask, ring_w, i)
    if down:
        pass
    elif nwh == nw0:  # computing
        k, nch = _q_remove(ckey, cidx, ch, nch, mask, ring_c, i)
        lost = wcur[i] - (k - pc)
    else:  # writing: the write is abandoned, its normal not used
        shift[i] -= 1
        lost = wcur[i]
        if measuring:
            fo[i, _FO_ABANDON] += 1.0
            x = t - max(since[i], t0)
            writing[i] += x
            # Not a write duration (E7): out of the durations' sum, which is
            # formed from the writing time and the writes cut by the window.
            opened[i] -= x
            if since[i] < t0:
                opened[i] -= t0 - since[i]
    if down and measuring:
        fo[i, _FO_DOWN] += t - max(dstart[i], t0)
    if measuring:
        fo[i, _FO_FAIL] += 1.0
        fo[i, _FO_LOST] += lost - pre[i]
        pre[i] = 0.0
    dstart[i] = t
    de[i] = t + restart[i]
    return nwh, nch



# -- power and ramps (MODEL.md E6) in the anonymous kernel --

#: Columns of a fleet's power outputs ``pw_out``: the time-weighted sum of P
#: over the measured window (W s; the door divides by the window), P's
#: minimum and maximum over it (W), the window's length (s), and P's
#: time-weighted 1st and 99th percentiles over it (W, ``_pw_quantile``).
PO_SUM = 0
PO_MIN = 1
PO_MAX = 2
PO_WINDOW = 3
PO_P01 = 4
PO_P99 = 5
PW_COLUMNS = 6

#: Bins of the time-at-power histogram behind the percentiles: PW_BINS equal
#: bins over [sum of idle, sum of busy] (W), P's whole range.
PW_BINS = 4096


@njit(cache=CACHE, nogil=True, inline="always")
def _pw_hist(ph, p, span, lo, scale):
    """Level p held span (s) in the window: its time into p's bin
    (``PW_BINS`` equal bins from lo, scale = bins per W), ph[2 j], and the
    bin's highest level so far, ph[2 j + 1] (side by side: one cache line
    per level)."""
    x = (p - lo) * scale
    j = 0
    if x > 0.0:
        j = min(int(x), PW_BINS - 1)
    ph[2 * j] += span
    if p > ph[2 * j + 1]:
        ph[2 * j + 1] = p


@njit(cache=CACHE, nogil=True)
def _pw_quantile(ph, q):
    """The time-weighted q-quantile of P from ``_pw_hist``'s bins: the highest
    level seen in the first bin at which the time at or below it reaches q of
    the total (tests/reference.py ``time_quantile``: the least level x with
    time at P <= x >= q of the total). That level is in the same bin as the
    exact quantile, so the error is below one bin's width (sum of busy - sum
    of idle) / PW_BINS, and 0 where the bin holds one level value (as with
    equal drops uncapped, whose levels are a drop apart, in a fleet of at
    most PW_BINS / 2 jobs)."""
    total = 0.0
    for j in range(PW_BINS):
        total += ph[2 * j]
    target = q * total
    cum = 0.0
    last = np.nan
    for j in range(PW_BINS):
        if ph[2 * j] > 0.0:
            cum += ph[2 * j]
            last = ph[2 * j + 1]
            if cum >= target:
                return last
    return last


@njit(cache=CACHE, nogil=True)
def _pw_grow(dq_e, dq_p, dq_h, dq_n):
    """The ramps' deques (``_pw_level``) in rings twice as long, each from slot 0."""
    nd, cap = dq_e.shape
    ne = np.empty((nd, 2 * cap))
    npp = np.empty((nd, 2 * cap))
    for jd in range(nd):
        for b in range(dq_n[jd]):
            ne[jd, b] = dq_e[jd, (dq_h[jd] + b) & (cap - 1)]
            npp[jd, b] = dq_p[jd, (dq_h[jd] + b) & (cap - 1)]
        dq_h[jd] = 0
    return ne, npp


@njit(cache=CACHE, nogil=True)
def _pw_level(a, b, p, measured, dq_e, dq_p, dq_h, dq_n, ramp_d, ramp_x, above, ramp_out):
    """Power level p on [a, b) (a < b): its ramps, then it joins the windows.

    Per window D a monotone deque (ring ``dq_e``, ``dq_p`` row jd, head
    ``dq_h``, size ``dq_n``; a free slot guaranteed): the earlier levels
    still in the window, as (exit fl(b_j + D), P_j), P strictly decreasing
    and exits increasing. Level j is in the window of u iff a_j <= u < exit_j
    (tests/reference.py ``power_outputs``), so over [a, b) R_D is
    max(front's P, p) - p between the fronts' exits, each expiring in time
    order. Each such segment [u, v) adds v - u to ramp_out[jd, jx, 0] where
    R_D >= X and the level is measured, and an up-crossing
    (ramp_out[jd, jx, 1]) where R_D >= X and the segment before it (measured
    or not; ``above``) was below.
    """
    mask = dq_e.shape[1] - 1
    for jd in range(ramp_d.shape[0]):
        h = dq_h[jd]
        n = dq_n[jd]
        u = a
        while True:
            while n > 0 and dq_e[jd, h] <= u:
                h = (h + 1) & mask
                n -= 1
            v = b
            r = 0.0
            if n > 0:
                if dq_e[jd, h] < b:
                    v = dq_e[jd, h]
                if dq_p[jd, h] > p:
                    r = dq_p[jd, h] - p
            for jx in range(ramp_x.shape[0]):
                hit = r >= ramp_x[jx]
                if measured and hit:
                    ramp_out[jd, jx, 0] += v - u
                    if not above[jd, jx]:
                        ramp_out[jd, jx, 1] += 1.0
                above[jd, jx] = hit
            if v >= b:
                break
            u = v
        while n > 0 and dq_p[jd, (h + n - 1) & mask] <= p:
            n -= 1
        dq_e[jd, (h + n) & mask] = b + ramp_d[jd]
        dq_p[jd, (h + n) & mask] = p
        dq_h[jd] = h
        dq_n[jd] = n + 1


def _make_run_fleet(FAST, LONE=True, FAIL=False, DUR=True, POWER=False):
    """The anonymous kernel's fleet integrator, with the fast-forward (FAST) or without.

    One source, two compiled functions: FAST is a closure constant and every
    use of the fast path sits under a bare ``if FAST:``, which numba prunes
    before typing, so ``run_fleet`` (FAST = False) is the event loop alone,
    neither typed nor compiled with ``_fast_forward`` (the
    fast-forward must cost the plain event loop nothing), and
    ``run_fleet_ff`` has it.

    POWER (MODEL.md E6; never with FAST; ``run_fleet_power``, with FAIL
    ``run_fleet_fail_power``): the fleet's power P(t) and its ramps over the
    measured window. Every use sits under a bare ``if POWER:``, pruned
    before typing. Every job here blocks, so P = sum of idle + r_c(n_c) x
    (sum of busy - idle over the n_c computing jobs; a DOWN job does not
    compute): with equal drops busy - idle a function of n_c (exact), else
    a running sum of the computing jobs' drops, updated at firings, write
    ends, failures and DOWN ends and summed afresh in job order at every
    rebase (~1 ulp of drift at most between; 0 with no job computing).
    Each level of positive length goes through ``_pw_level``. The extra
    arguments: pw_in (N + 1,) the drops busy_i - idle_i (rows i < N) and the
    sum of idle (row N); ramp_d (nd,) the windows D (> 0); ramp_x (nx,) the
    thresholds X; pw_out (``PW_COLUMNS``,) and ramp_out (nd, nx, 2) (time
    with R_D >= X, s; up-crossings), overwritten; trace_t, trace_p (m,)
    (m >= 0): the start (s) and P (W) of the first m levels of positive
    length in the measured window (one per interval between consecutive
    instants, so a level can repeat the one before where an instant changed
    no draw), NaN beyond.
    Each variant has its own name (``_variant``), so its own symbols and
    cache entries.

    LONE (the default) takes an instant at which one job alone changes phase
    (almost every instant where sigma > 0 or launches differ) by a short
    path; ``LONE=False`` sends every instant through the general path, which
    tests compare it with, bit for bit (tests/engine/test_event_loop.py).

    FAIL (MODEL.md E8; never with FAST): failures, restarts and outages, and
    their observables. Every use sits under a bare ``if FAIL:``, pruned
    before typing, so a fleet without failures runs the code of today.

    DUR (the default; always with FAST or FAIL): the write durations'
    maximum and histogram (MODEL.md E7), recorded at every write end.
    ``DUR=False`` (``run_fleet_nodur``) compiles them out of the event loop,
    each ``if DUR:`` pruned before typing: dur_out is then left as zeros but
    for its sum (``_OUT_SUM``, formed from the writing time at the window's
    ends, nothing per event), and ``simulate(durations=False)`` returns none
    of them.
    Each job's next failure and end of DOWN, on wall time, sit in an indexed
    heap (the outage's time beside it): the next event is the earlier of
    the queues' head and that, and at a failure the clocks are settled at
    its instant like at any other event. A failing job leaves its queue
    (``_q_remove``, O(N), rare). The extra arguments: fail_in (N + 1, 2)
    float64, rows i < N (M_i, R_i) and row N (M_0, unused); fail_keys (2,)
    uint64, the second key word of the failure and of the outage streams;
    fail_out (N + 1, ``FAIL_COLUMNS``), overwritten (``_FO_FAIL``). The compute
    intervals' normals are indexed by the intervals a job has started since
    its launch (MODEL.md E1), which is its firing count without failures.
    """

    # error_model "numpy": no zero-division checks in the loop. Every divisor
    # is a validated rate (f(n)/n > 0, min(1, C/n) > 0) or N >= 1, so the
    # results are the same bits; only impossible inputs would differ.
    @njit(cache=CACHE, nogil=True, error_model="numpy")
    @_variant("run_fleet" + ("_ff" if FAST else "") + ("" if LONE else "_no_lone")
              + ("_fail" if FAIL else "") + ("" if DUR else "_nodur")
              + ("_power" if POWER else ""))
    def run_fleet(T, d, sigma, rw, rc, theta, key0, key1, fleet, cycles, burn_in,
                  level, stop_at_passage, record, ring_w, ring_c, firings,
                  occupancy, upcross, writing, table, dur_out, fail_in=None, fail_keys=None,
                  fail_out=None, pw_in=None, ramp_d=None, ramp_x=None, pw_out=None,
                  ramp_out=None, trace_t=None, trace_p=None):
        """Integrate one fleet exactly, event to event (see MODEL.md).

        Parameters are validated arrays: T, d, sigma (N,); rw (N+1,) writer rate
        f(n)/n by writer count; rc (N+1,) computer rate min(1, C/n) by computer
        count; theta (N,) launch phases. firings (N, cycles) is written only when
        ``record``; occupancy (N+1,) is overwritten. ring_w, ring_c choose the
        writers' and computers' queue (see ``_q_push``); results do not depend
        on them. table: the histogram of write durations / d_i (E7), as
        ``_cell_bin`` takes it; dur_out (B + 4,) is overwritten with the
        sum and maximum (s) of the durations of the writes that end in the
        measured window and their histogram's B + 2 counts (``_OUT_SUM``).
        FAST (``run_fleet_ff``): integrate collision-free stretches
        with ``_fast_forward`` where it is exact (C >= N; ignored otherwise):
        the same results to rounding (~1e-16 per firing), not bit for bit. Returns
        (passage_time, passage_cycle, end_time, events).

        Writers and computers sit in two priority queues keyed by their target
        on their own virtual clock: the next event is a queue's head, and only
        the jobs that change phase are touched.
        """
        N = T.shape[0]
        # Per-fleet work space (allocated once per fleet, never in the event loop).
        cap = 1
        while cap < N:
            cap *= 2
        if FAIL:  # every job DOWN leaves both queues empty: a heap's _q_second reads slot 1
            cap = max(cap, 2)
        mask = cap - 1
        wkey = np.empty(cap)
        widx = np.empty(cap, dtype=np.int64)
        ckey = np.empty(cap)
        cidx = np.empty(cap, dtype=np.int64)
        popped = np.empty(N, dtype=np.int64)
        popkey = np.empty(N)
        tofire = np.empty(N, dtype=np.int64)
        count = np.zeros(N, dtype=np.int64)
        base = np.empty(N, dtype=np.uint64)
        since = np.zeros(N)  # wall time at which each job's current write started
        wnext = np.empty(N)  # the compute interval after each writer's write, drawn at its firing
        inv_w = np.empty(N + 1)  # 1 / r where that is exact (r a power of two), else 0.0
        inv_c = np.empty(N + 1)
        for n in range(N + 1):
            inv_w[n] = _exact_inverse(rw[n])
            inv_c[n] = _exact_inverse(rc[n])
        nbuf = np.empty(N * _NB)  # job i's normals nbk[i] .. nbk[i] + _NB - 1 (``_normal_block``)
        nbk = np.full(N, -_NB, dtype=np.int64)

        tol_d = 0.0  # the largest tie tolerance on each clock: heap tops within
        tol_T = 0.0  # it are candidates, each then checked against its own
        nwh = 0  # queue sizes
        nch = 0
        wh = 0  # queue heads (always 0 for a heap)
        ch = 0
        first = (1.0 - theta) * T  # remaining work at t = 0
        for i in range(N):
            base[i] = stream_base(key0, key1, fleet, i)
            tol_d = max(tol_d, TIE_RTOL * d[i])
            tol_T = max(tol_T, TIE_RTOL * T[i])
        # In increasing order: each push is then O(1) on either queue kind (a ring
        # filled in job order would cost O(N^2) for a random launch). Sorted by
        # a heap in the writer queue's arrays (empty until the first firing),
        # not np.argsort, whose sort numba compiles for ~2.5 s of a cold start.
        # Jobs with equal keys may enter in another order than argsort's;
        # no result depends on that order (tied jobs change phase at one
        # instant, and each job's outcome is its own).
        for i in range(N):
            nwh = _heap_push(wkey, widx, nwh, first[i], i)
        if FAIL:
            wcur = first.copy()  # each job's current (or last) compute interval's work
            pre_w = np.zeros(N)  # uncommitted work done before the window opened
            committed = np.zeros(N)  # committed work done in the window
            # the compute intervals a job has started since its launch, less its firings
            shift = np.zeros(N, dtype=np.int64)
            dstart = np.zeros(N)
            de = np.full(N, np.inf)  # end of DOWN
            ft = np.empty(N)  # next failure
            nfd = np.ones(N, dtype=np.int64)  # failure gaps drawn
            fbase = np.empty(N, dtype=np.uint64)
            restart = fail_in[:N, 1].copy()
            xk = np.empty(N)  # indexed heap of min(ft, de) on wall time
            xi = np.empty(N, dtype=np.int64)
            xpos = np.empty(N, dtype=np.int64)
            for i in range(N):
                fbase[i] = stream_base(key0, fail_keys[0], fleet, i)
                ft[i] = np.inf
                if fail_in[i, 0] < np.inf:  # M_i = inf takes no draw
                    ft[i] = fail_in[i, 0] * stream_exponential(fbase[i], 0)
                _ih_up(xk, xi, xpos, i, ft[i], i)
            obase = stream_base(key0, fail_keys[1], fleet, 0)
            xev = False  # the instant is a failure's, an outage's or a DOWN's end
            xdone = False  # that instant's failures are applied, its phase changes not yet
            xnw_prev = 0  # the writers before it
            xfire = 0  # the jobs it makes fire (DOWN ends into zero work), in tofire
            onext = np.empty(2)  # next outage, outage gaps drawn - 1
            onext[0] = np.inf
            onext[1] = 0.0
            if fail_in[N, 0] < np.inf:
                onext[0] = fail_in[N, 0] * stream_exponential(obase, 0)
            tnext = min(xk[0], onext[0])  # the next failure, outage or DOWN's end
            for r in range(fail_out.shape[0]):
                for c in range(fail_out.shape[1]):
                    fail_out[r, c] = 0.0
        while nwh > 0:
            k = wkey[0]
            i = widx[0]
            nwh = _heap_pop(wkey, widx, nwh)
            nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, k, i)
        if POWER:  # every job computes at t = 0
            nd = ramp_d.shape[0]
            pcap = 2  # doubled as needed (``_pw_grow``): the tests grow it
            dq_e = np.empty((nd, pcap))
            dq_p = np.empty((nd, pcap))
            dq_h = np.zeros(nd, dtype=np.int64)
            dq_n = np.zeros(nd, dtype=np.int64)
            above = np.ones((nd, ramp_x.shape[0]), dtype=np.bool_)  # no crossing at t = 0
            for jd in range(nd):
                for jx in range(ramp_x.shape[0]):
                    ramp_out[jd, jx, 0] = 0.0
                    ramp_out[jd, jx, 1] = 0.0
            pidle = pw_in[N]
            pequal = True
            dsum = 0.0
            for i in range(N):
                dsum += pw_in[i]
                if pw_in[i] != pw_in[0]:
                    pequal = False
            pflag = np.empty(N, dtype=np.bool_)
            if pequal:
                pnow = pidle + rc[N] * (N * pw_in[0])
            else:
                pnow = pidle + rc[N] * dsum
            psum = 0.0
            pmin = np.inf
            pmax = -np.inf
            ph = np.zeros(2 * PW_BINS)  # time at power and highest level, by bin (``_pw_hist``)
            for b in range(PW_BINS):
                ph[2 * b + 1] = -np.inf
            ph_lo = pidle
            ph_scale = 0.0
            if dsum > 0.0:
                ph_scale = PW_BINS / dsum
            ntr = 0  # levels of the window recorded in trace_t, trace_p (NaN beyond)
            for b in range(trace_t.shape[0]):
                trace_t[b] = np.nan
                trace_p[b] = np.nan
        for n in range(N + 1):
            occupancy[n] = 0.0
            upcross[n] = 0
        for i in range(N):
            writing[i] = 0.0
        for b in range(dur_out.shape[0]):
            dur_out[b] = 0.0
        # The durations' sum is the writing time's, corrected at the window's
        # ends (writes in flight as it opens count whole, those in flight as
        # the run stops not at all): O(N) twice, nothing per event. Their
        # count is the histogram's. Each job's correction is kept apart and
        # summed in job order at the end: the writers' queue order differs
        # between the heap and the ring, and the sum must not.
        opened = np.zeros(N)
        # Bins of x * (1 / d_i), not x / d_i: a division's latency on every
        # write end cost ~1 % of the event loop (measured); both kernels and
        # the reference scale so.
        inv_d = 1.0 / d

        t = 0.0
        t0 = 0.0  # where the measured window opened
        nw_prev = 0
        pw = 0.0  # writer virtual clock: volume drained by any writer
        pc = 0.0  # computer virtual clock: work done by any computer
        n_done = 0  # jobs that have fired >= cycles times
        n_burn = N if burn_in == 0 else 0  # jobs that have fired >= burn_in times
        measuring = burn_in == 0
        fired_total = 0
        events = 0
        p_time = np.inf
        p_cycle = -1
        instants = 0
        # While no two writes overlap every rate is 1 iff C >= N (r_c = 1 for N
        # and N - 1 computers) and f(1) = 1: the fast-forward's premise.
        # (Every use of the fast path sits under a bare ``if FAST:``, which
        # numba prunes before typing: run_fleet does not even compile it.)
        ff = False
        if FAST:
            ff = rc[N] == 1.0 and rw[1] == 1.0
        ff_wait = 0  # instants with no writer to let pass before the next attempt
        ff_backoff = 0
        margin = 0.0
        for i in range(N):
            margin = max(margin, FF_MARGIN * (T[i] + d[i]))
        finished = False
        advance = False  # the instant at t = 0 comes before any advance
        # On the hot paths (the next event, lone instants, firings, queues)
        # array indices are cast to np.uintp: numba then omits its
        # negative-index wrap-around (three instructions and a register per
        # access, ~1/8 of an event's time on workload (a)). Every index is
        # >= 0 by construction (job numbers, counts, masked slots). Not on
        # the rare paths: each cast costs compile time.
        lone = 0  # 1: this instant is one write's end alone, 2: one firing alone
        nw = 0
        while True:
            while True:
                if advance:
                    instants += 1
                    if instants >= _REBASE_EVERY * N:
                        # Keep remaining amounts exact to full relative
                        # precision. A constant shift keeps every queue ordered.
                        instants = 0
                        for b in range(nwh):
                            wkey[np.uintp((wh + b) & mask)] -= pw
                        for b in range(nch):
                            ckey[np.uintp((ch + b) & mask)] -= pc
                        pw = 0.0
                        pc = 0.0
                        if POWER:  # the computing jobs' drops summed afresh, in job order
                            for b in range(N):
                                pflag[b] = True
                            for b in range(nwh):
                                pflag[widx[(wh + b) & mask]] = False
                            if FAIL:  # DOWN jobs neither write nor compute
                                for b in range(N):
                                    pflag[b] = False
                                for b in range(nch):
                                    pflag[cidx[(ch + b) & mask]] = True
                            dsum = 0.0
                            for b in range(N):
                                if pflag[b]:
                                    dsum += pw_in[b]

                    # Next event: the head of either queue, whichever is reached
                    # first (remaining / rate compared as cross products: one division).
                    r_w = rw[np.uintp(nw)]
                    ncomp = N - nw
                    if FAIL:
                        ncomp = nch  # DOWN jobs do not compute
                    r_c = rc[np.uintp(ncomp)]
                    if FAIL:
                        pw0 = pw
                        pc0 = pc
                    if nch == 0 or (nwh > 0 and (wkey[np.uintp(wh)] - pw) * r_c
                                    <= (ckey[np.uintp(ch)] - pc) * r_w):
                        # x / r as x * (1 / r) where 1 / r is exact (r a power
                        # of two, ``inv_w``): both are the correctly rounded
                        # x / r, the same bits, without the division's latency
                        # on the clocks' chain.
                        if inv_w[np.uintp(nw)] != 0.0:
                            dt = (wkey[np.uintp(wh)] - pw) * inv_w[np.uintp(nw)]
                        else:
                            dt = (wkey[np.uintp(wh)] - pw) / r_w
                        pw = wkey[np.uintp(wh)]
                        pc += r_c * dt
                        # The head's remaining amount is now exactly 0.0: it ends
                        # now. A lone event iff no other job is within the tie
                        # rule's widest tolerance on either clock.
                        if LONE:
                            if (nwh == 1 or _q_second(wkey, wh, nwh, mask, ring_w) - pw > tol_d) and (
                                    nch == 0 or ckey[np.uintp(ch)] - pc > tol_T):
                                lone = 1
                    else:
                        if inv_c[np.uintp(ncomp)] != 0.0:
                            dt = (ckey[np.uintp(ch)] - pc) * inv_c[np.uintp(ncomp)]
                        else:
                            dt = (ckey[np.uintp(ch)] - pc) / r_c
                        pc = ckey[np.uintp(ch)]
                        pw += r_w * dt
                        if LONE:
                            if (nch == 1 or _q_second(ckey, ch, nch, mask, ring_c) - pc > tol_T) and (
                                    nwh == 0 or wkey[np.uintp(wh)] - pw > tol_d):
                                lone = 2
                    if FAIL:
                        # A failure, an outage or a DOWN's end first? (With
                        # every job DOWN, the queues are empty: it is.)
                        xev = False
                        tx = tnext
                        if nwh + nch == 0 or tx - t < dt:
                            xev = True
                            lone = 0
                            dt = tx - t
                            pw = pw0 + r_w * dt
                            pc = pc0 + r_c * dt
                            # rounding must not carry a clock past a head
                            if nwh > 0 and pw > wkey[wh]:
                                pw = wkey[wh]
                            if nch > 0 and pc > ckey[ch]:
                                pc = ckey[ch]
                    if measuring:
                        occupancy[np.uintp(nw)] += dt
                    if POWER:  # the level held since the last instant, on [t, t + dt)
                        tb = t + dt
                        if FAIL:
                            if xev:  # the failure's own instant, as t below
                                tb = tx
                        if tb != t:
                            grow = False
                            for jd in range(nd):
                                if dq_n[jd] == pcap:
                                    grow = True
                            if grow:
                                dq_e, dq_p = _pw_grow(dq_e, dq_p, dq_h, dq_n)
                                pcap *= 2
                            _pw_level(t, tb, pnow, measuring, dq_e, dq_p, dq_h, dq_n, ramp_d,
                                      ramp_x, above, ramp_out)
                            if measuring:
                                psum += pnow * (tb - t)
                                _pw_hist(ph, pnow, tb - t, ph_lo, ph_scale)
                                if ntr < trace_t.shape[0]:
                                    trace_t[ntr] = t
                                    trace_p[ntr] = pnow
                                    ntr += 1
                                pmin = min(pmin, pnow)
                                pmax = max(pmax, pnow)
                    t += dt
                    if FAIL:
                        if xev:
                            t = tx
                if FAIL:
                    if xev:
                        break  # handled after this loop, which keeps the loop's registers its own
                advance = True
                nw_prev = nwh  # writers before this instant (for up-crossings)
                n_fire = 0
                nf0 = 0  # tofire[nf0:n_fire] fire in the loop below (a lone firing: fired already)
                if FAIL:
                    if xdone:  # the rest of a failure's instant (below the loop)
                        xdone = False
                        nw_prev = xnw_prev
                        n_fire = xfire
                # A lone instant takes the short path; it does what the general
                # path (the ``else`` below) does then, the same operations on the
                # same operands in the same order, so the same bits: (i) the
                # head just reached has key - clock exactly 0.0 (the clock was
                # set to its key), so it is a candidate and passes its own tie
                # test (0.0 <= TIE_RTOL * d_i, or * T_i); (ii) fl(key - clock)
                # is monotone in key, so the general path's pop loops take no
                # other job iff the same queue's second key and the other
                # queue's head are beyond the widest tolerance (tol_d, tol_T),
                # which is the test above; (iii) with one candidate its loops
                # run once, on that job, as written out here.
                if lone == 1:
                    # One write ends, alone.
                    lone = 0
                    i = widx[np.uintp(wh)]
                    wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, ring_w)
                    events += 1
                    if POWER:
                        dsum += pw_in[i]
                    if measuring:
                        # since[i] is its firing: writing time counts from
                        # the window's opening, a duration from the firing.
                        s = since[np.uintp(i)]
                        writing[np.uintp(i)] += t - max(s, t0)
                        if DUR:
                            x = t - s
                            if x > dur_out[_OUT_MAX]:  # (rarely true: predicted)
                                dur_out[_OUT_MAX] = x
                            dur_out[np.uintp(_OUT_HIST + _cell_bin(table, x * inv_d[np.uintp(i)]))] += 1.0
                        if FAIL:
                            committed[np.uintp(i)] += wcur[np.uintp(i)] - pre_w[np.uintp(i)]
                            pre_w[np.uintp(i)] = 0.0
                    w = wnext[np.uintp(i)]
                    if FAIL:
                        wcur[np.uintp(i)] = w
                    if w <= TIE_RTOL * T[np.uintp(i)]:  # a zero compute interval: fire again at once
                        tofire[0] = i
                        n_fire = 1
                    else:
                        nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, pc + w, i)
                elif lone == 2:
                    # One job fires, alone (its key - pc is 0.0).
                    # (Fired here, not through tofire and the loop below.)
                    lone = 0
                    i = cidx[np.uintp(ch)]
                    n_fire = 1
                    nf0 = 1
                    ch, nch = _q_pop(ckey, cidx, ch, nch, mask, ring_c)
                    ks = 0
                    if FAIL:
                        ks = shift[np.uintp(i)]
                    k = count[np.uintp(i)]
                    if record and k < cycles:
                        firings[i, k] = t
                    count[np.uintp(i)] = k + 1
                    if POWER:
                        dsum -= pw_in[i]
                    if k + 1 == cycles:
                        n_done += 1
                    if k + 1 == burn_in:
                        n_burn += 1
                    since[np.uintp(i)] = t
                    nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, pw + d[np.uintp(i)], i)
                    # Its next compute interval (normal k of its stream), drawn now,
                    # off the write end's critical path: the same value then.
                    # (With failures: normal k + shift[i], the intervals started.)
                    kn = k + ks
                    w = T[np.uintp(i)]
                    if sigma[np.uintp(i)] > 0.0:
                        # From the job's block of _NB normals (k - nbk[i] in
                        # 0.._NB-1), refilled when k leaves it; NaN: not
                        # ended at the first output, drawn here.
                        o = kn - nbk[np.uintp(i)]
                        if o >= _NB or o < 0:
                            nbk[np.uintp(i)] = kn
                            _normal_block(base[np.uintp(i)], kn, nbuf, i * _NB)
                            o = 0
                        z = nbuf[np.uintp(i * _NB + o)]
                        if z != z:
                            z = stream_normal(base[np.uintp(i)], kn)
                        w += sigma[np.uintp(i)] * z
                        if w < 0.0:
                            w = 0.0
                    wnext[np.uintp(i)] = w
                    # Writes that end now were applied first, so level nwh is crossed
                    # at this instant iff it is above the writers before it. (Counted
                    # here, per firing, not per instant: a branch per instant on
                    # "did n_w rise" mispredicts and cost ~8% per event.)
                    if measuring and nwh > nw_prev:
                        upcross[np.uintp(nwh)] += 1
                    events += 1
                else:
                    # Every job whose remaining amount is (within the tie rule) zero
                    # changes phase now, before the rates are recomputed. Pop all
                    # candidates first, so that jobs entering a heap now are not seen.
                    n_w_pop = 0
                    while nwh > 0 and wkey[wh] - pw <= tol_d:
                        popped[n_w_pop] = widx[wh]
                        popkey[n_w_pop] = wkey[wh]
                        n_w_pop += 1
                        wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, ring_w)
                    n_pop = n_w_pop
                    while nch > 0 and ckey[ch] - pc <= tol_T:
                        popped[n_pop] = cidx[ch]
                        popkey[n_pop] = ckey[ch]
                        n_pop += 1
                        ch, nch = _q_pop(ckey, cidx, ch, nch, mask, ring_c)
                    for b in range(n_w_pop):  # writes that end now
                        i = popped[b]
                        if popkey[b] - pw > TIE_RTOL * d[i]:
                            nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, popkey[b], i)
                            continue
                        events += 1
                        if POWER:
                            dsum += pw_in[i]
                        if measuring:
                            writing[i] += t - max(since[i], t0)
                            if DUR:
                                x = t - since[i]
                                if x > dur_out[_OUT_MAX]:
                                    dur_out[_OUT_MAX] = x
                                dur_out[_OUT_HIST + _cell_bin(table, x * inv_d[i])] += 1.0
                            if FAIL:
                                committed[i] += wcur[i] - pre_w[i]
                                pre_w[i] = 0.0
                        w = wnext[i]
                        if FAIL:
                            wcur[i] = w
                        if w <= TIE_RTOL * T[i]:  # a zero compute interval: fire again at once
                            tofire[n_fire] = i
                            n_fire += 1
                        else:
                            nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, pc + w, i)
                    for b in range(n_w_pop, n_pop):  # computers that fire now
                        i = popped[b]
                        if popkey[b] - pc > TIE_RTOL * T[i]:
                            nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, popkey[b], i)
                            continue
                        tofire[n_fire] = i
                        n_fire += 1
                for b in range(nf0, n_fire):
                    i = tofire[np.uintp(b)]
                    ks = 0
                    if FAIL:
                        ks = shift[np.uintp(i)]
                    k = count[np.uintp(i)]
                    if record and k < cycles:
                        firings[i, k] = t
                    count[np.uintp(i)] = k + 1
                    if POWER:
                        dsum -= pw_in[i]
                    if k + 1 == cycles:
                        n_done += 1
                    if k + 1 == burn_in:
                        n_burn += 1
                    since[np.uintp(i)] = t
                    nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, pw + d[np.uintp(i)], i)
                    # Its next compute interval (normal k of its stream), drawn now,
                    # off the write end's critical path: the same value then.
                    # (With failures: normal k + shift[i], the intervals started.)
                    kn = k + ks
                    w = T[np.uintp(i)]
                    if sigma[np.uintp(i)] > 0.0:
                        # From the job's block of _NB normals (k - nbk[i] in
                        # 0.._NB-1), refilled when k leaves it; NaN: not
                        # ended at the first output, drawn here.
                        o = kn - nbk[np.uintp(i)]
                        if o >= _NB or o < 0:
                            nbk[np.uintp(i)] = kn
                            _normal_block(base[np.uintp(i)], kn, nbuf, i * _NB)
                            o = 0
                        z = nbuf[np.uintp(i * _NB + o)]
                        if z != z:
                            z = stream_normal(base[np.uintp(i)], kn)
                        w += sigma[np.uintp(i)] * z
                        if w < 0.0:
                            w = 0.0
                    wnext[np.uintp(i)] = w
                    # Writes that end now were applied first, so level nwh is crossed
                    # at this instant iff it is above the writers before it. (Counted
                    # here, per firing, not per instant: a branch per instant on
                    # "did n_w rise" mispredicts and cost ~8% per event.)
                    if measuring and nwh > nw_prev:
                        upcross[np.uintp(nwh)] += 1
                    events += 1
                fired_total += n_fire
                nw = nwh
                if POWER:  # the level from this instant on
                    ncp = N - nwh
                    if FAIL:  # DOWN jobs do not compute
                        ncp = nch
                        if nch == 0:
                            dsum = 0.0
                    if pequal:
                        pnow = pidle + rc[ncp] * (ncp * pw_in[0])
                    else:
                        pnow = pidle + rc[ncp] * dsum
                if not measuring and n_burn == N:
                    measuring = True
                    for b in range(nw_prev + 1, nw + 1):  # the opening instant's crossings
                        upcross[b] += 1
                    # Open the window: writing time counts from now (t0).
                    t0 = t
                    for b in range(nwh):
                        i = widx[(wh + b) & mask]
                        opened[i] = t - since[i]
                    if FAIL:  # the work each job has not made durable yet
                        for b in range(nwh):
                            i = widx[(wh + b) & mask]
                            pre_w[i] = wcur[i]
                        for b in range(nch):
                            i = cidx[(ch + b) & mask]
                            pre_w[i] = wcur[i] - (ckey[(ch + b) & mask] - pc)
                if n_fire > 0 and level > 0 and p_cycle < 0 and nw >= level:
                    p_time = t
                    p_cycle = fired_total // N
                    if stop_at_passage:
                        finished = True
                        break
                if n_done == N:
                    finished = True
                    break
                if FAST:
                    if ff and nwh == 0 and (level != 1 or p_cycle >= 0):
                        # No write in flight: a consistent state to hand to the
                        # fast-forward and to take back (a level-1 passage is the event
                        # loop's: it happens at a firing). Its first checks, inline:
                        # the next firing is clear of now and its write of the one after.
                        # Where stretches prove short (collisions every few firings) the
                        # attempts back off, so that they cost the event loop nothing.
                        # The call itself is outside this loop, which keeps the event
                        # loop's registers its own.
                        if ff_wait > 0:
                            ff_wait -= 1
                        elif ckey[ch] - pc > margin and (nch == 1 or _q_second(ckey, ch, nch, mask, ring_c)
                                                         - (ckey[ch] + d[cidx[ch]]) > margin):
                            break
            if finished:
                break
            if FAIL:
                if xev:
                    xev = False
                    xdone = True
                    advance = False  # the instant is reached: process it
                    xnw_prev = nwh
                    xfire = 0
                    # Every failure, outage and end of DOWN at this instant
                    # (here, not in a call: a call's dozens of array arguments
                    # cost more than the rest; outside the event loop, which keeps
                    # its registers). A DOWN that ends starts a
                    # fresh compute interval, the job's next normal: index
                    # count[i] + shift[i], the compute intervals it has
                    # started since its launch (its completed writes and
                    # restarts); one of zero work fires at once. Then the
                    # loop applies the instant's phase changes (xdone) by its
                    # general path: any head within the tie rule of this instant.
                    while True:
                        if onext[0] <= t:  # an outage: every job fails at once
                            if measuring:
                                fail_out[N, 0] += 1.0
                            j0 = 0
                            j1 = N
                        elif xk[0] <= t:
                            j0 = xi[0]
                            j1 = j0 + 1
                            if ft[j0] > t:  # DOWN ends
                                i = j0
                                events += 1
                                if measuring:
                                    fail_out[i, _FO_DOWN] += t - max(dstart[i], t0)
                                de[i] = np.inf
                                w = _draw(T, sigma, base, i, count[i] + shift[i])
                                shift[i] += 1
                                wcur[i] = w
                                if POWER:  # it computes (or fires at once: taken off there)
                                    dsum += pw_in[i]
                                if w <= TIE_RTOL * T[i]:
                                    tofire[xfire] = i
                                    xfire += 1
                                else:
                                    nch = _q_push(ckey, cidx, ch, nch, mask, ring_c, pc + w, i)
                                _xh_set(xk, xi, xpos, N, i, ft[i])
                                continue
                        else:
                            break
                        events += j1 - j0  # one a job failing
                        for i in range(j0, j1):
                            nc0 = nch
                            nwh, nch = _fail_job(i, t, pc, measuring, t0, restart, wkey, widx, wh,
                                                 nwh, ckey, cidx, ch, nch, mask, ring_w, ring_c,
                                                 shift, wcur, pre_w, since, opened, writing,
                                                 dstart, de, fail_out)
                            if POWER:
                                if nch < nc0:  # it was computing: it draws idle now
                                    dsum -= pw_in[i]
                        if j1 - j0 == N and onext[0] <= t:
                            for i in range(N):
                                _xh_set(xk, xi, xpos, N, i, min(ft[i], de[i]))
                            onext[1] += 1.0
                            onext[0] = t + fail_in[N, 0] * stream_exponential(
                                obase, np.int64(onext[1]))
                        else:
                            i = j0
                            ft[i] = t + fail_in[i, 0] * stream_exponential(fbase[i], nfd[i])
                            nfd[i] += 1
                            _xh_set(xk, xi, xpos, N, i, min(ft[i], de[i]))
                    tnext = min(xk[0], onext[0])
            if FAST:
                before = fired_total
                ch, nch, pc, t, n_done, n_burn, measuring, fired_total, events = _fast_forward(
                    T, d, sigma, base, count, ckey, cidx, ch, nch, mask, ring_c, pc, t, margin,
                    cycles, burn_in, n_done, n_burn, measuring, fired_total, events, record,
                    firings, occupancy, upcross, writing, popkey, tofire, table, dur_out)
                if fired_total - before >= _FF_LONG * N:
                    ff_backoff = 0
                else:
                    ff_backoff = min(2 * ff_backoff + 1, _FF_BACKOFF_MAX * N)
                ff_wait = ff_backoff
        if measuring:  # writes still in flight when the run stops
            for b in range(nwh):
                i = widx[(wh + b) & mask]
                if since[i] < t0:  # counted whole as the window opened: not ended, out
                    opened[i] = 0.0
            pre = 0.0
            for b in range(N):
                pre += opened[b]
            dur_out[_OUT_SUM] = pre
            for b in range(N):
                dur_out[_OUT_SUM] += writing[b]
            for b in range(nwh):
                i = widx[(wh + b) & mask]
                writing[i] += t - max(since[i], t0)
            if FAIL:  # work not yet durable, DOWN still going
                for b in range(nwh):
                    i = widx[(wh + b) & mask]
                    fail_out[i, _FO_UNCOMMIT] += wcur[i] - pre_w[i]
                for i in range(N):
                    fail_out[i, _FO_COMMIT] = committed[i]
                for b in range(nch):
                    i = cidx[(ch + b) & mask]
                    fail_out[i, _FO_UNCOMMIT] += wcur[i] - (ckey[(ch + b) & mask] - pc) - pre_w[i]
                for i in range(N):
                    if de[i] < np.inf:
                        fail_out[i, _FO_DOWN] += t - max(dstart[i], t0)
        if POWER:
            pw_out[PO_SUM] = psum
            pw_out[PO_MIN] = pmin if measuring else np.nan
            pw_out[PO_MAX] = pmax if measuring else np.nan
            pw_out[PO_WINDOW] = t - t0 if measuring else 0.0
            pw_out[PO_P01] = _pw_quantile(ph, 0.01) if measuring else np.nan
            pw_out[PO_P99] = _pw_quantile(ph, 0.99) if measuring else np.nan
        return p_time, p_cycle, t, events

    return run_fleet


run_fleet = _make_run_fleet(False)
run_fleet_ff = _make_run_fleet(True)
run_fleet_fail = _make_run_fleet(False, FAIL=True)
run_fleet_nodur = _make_run_fleet(False, DUR=False)
run_fleet_power = _make_run_fleet(False, POWER=True)
run_fleet_fail_power = _make_run_fleet(False, FAIL=True, POWER=True)


def _make_run_fleets(FAST, FAIL=False, DUR=True, POWER=False):
    """``run_fleets`` over ``run_fleet_ff`` (FAST) or ``run_fleet``: each its own
    compiled function (the other branch pruned before typing), so a plain run
    compiles and loads the event loop alone, and the fast-forward's code is
    compiled only when first asked for. DUR=False (``run_fleets_nodur``, the
    event loop alone): over ``run_fleet_nodur``, no write-duration maxima or
    histograms (E7). POWER (``run_fleets_power``, the event loop alone): over
    ``run_fleet_power``, power and ramps (E6); with FAIL
    (``run_fleets_fail_power``) over ``run_fleet_fail_power``."""

    @njit(cache=CACHE, nogil=True, parallel=True)
    @_variant("run_fleets" + ("_ff" if FAST else "") + ("_fail" if FAIL else "")
              + ("" if DUR else "_nodur") + ("_power" if POWER else ""))
    def run_fleets(T, d, sigma, rw, rc, theta, key0, key1, fleet0, cycles, burn_in,
                   level, stop_at_passage, record, ring_w, ring_c, firings,
                   occupancy, upcross, writing, passage_time, passage_cycle, end_time, events,
                   table, dur_out, fail_in=None, fail_keys=None, fail_out=None, pw_in=None,
                   ramp_d=None, ramp_x=None, pw_out=None, ramp_out=None, trace_t=None,
                   trace_p=None):
        """Run F independent fleets in parallel; fleet f has global index fleet0 + f.

        theta: (F, N); firings (F, N, cycles)
        when ``record`` (else any (F, 1, 1) placeholder); occupancy (F, N+1);
        upcross (F, N+1); writing (F, N); passage_time, passage_cycle, end_time, events: (F,);
        table: the histogram (``_cell_bin``); dur_out (F, B + 4) (``run_fleet``).
        FAIL (``run_fleets_fail``): fail_in, fail_keys as ``run_fleet`` takes
        them, fail_out (F, N + 1, ``FAIL_COLUMNS``). POWER
        (``run_fleets_power``): pw_in, ramp_d, ramp_x as ``run_fleet`` takes
        them, pw_out (F, ``PW_COLUMNS``), ramp_out (F, nd, nx, 2), trace_t,
        trace_p (F, m).
        """
        F = theta.shape[0]
        for f in prange(F):
            if POWER and FAIL:
                p_t, p_c, t_end, n_ev = run_fleet_fail_power(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f], fail_in, fail_keys,
                    fail_out[f], pw_in, ramp_d, ramp_x, pw_out[f], ramp_out[f], trace_t[f],
                    trace_p[f])
            elif POWER:
                p_t, p_c, t_end, n_ev = run_fleet_power(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f], None, None, None,
                    pw_in, ramp_d, ramp_x, pw_out[f], ramp_out[f], trace_t[f], trace_p[f])
            elif FAIL:
                p_t, p_c, t_end, n_ev = run_fleet_fail(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f], fail_in, fail_keys,
                    fail_out[f])
            elif not DUR:
                p_t, p_c, t_end, n_ev = run_fleet_nodur(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f])
            elif FAST:
                p_t, p_c, t_end, n_ev = run_fleet_ff(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f])
            else:
                p_t, p_c, t_end, n_ev = run_fleet(
                    T, d, sigma, rw, rc, theta[f], key0, key1, fleet0 + f, cycles, burn_in,
                    level, stop_at_passage, record, ring_w, ring_c, firings[f],
                    occupancy[f], upcross[f], writing[f], table, dur_out[f])
            passage_time[f] = p_t
            passage_cycle[f] = p_c
            end_time[f] = t_end
            events[f] = n_ev

    return run_fleets


#: The event loop alone, and with the fast-forward (``simulate(fast_forward=...)``).
run_fleets = _make_run_fleets(False)
run_fleets_ff = _make_run_fleets(True)
#: The event loop with failures, restarts and outages (MODEL.md E8).
run_fleets_fail = _make_run_fleets(False, FAIL=True)
#: The event loop without the write durations' maxima and histograms (E7).
run_fleets_nodur = _make_run_fleets(False, DUR=False)
#: The event loop with power and ramps (MODEL.md E6), and with failures too (E8).
run_fleets_power = _make_run_fleets(False, POWER=True)
run_fleets_fail_power = _make_run_fleets(False, FAIL=True, POWER=True)


# -- the general kernel: asynchronous checkpoints and weighted sharing (E1, E2) --

@njit(cache=CACHE, nogil=True, inline="always")
def _ih_up(key, idx, pos, p, k, j):
    """Sift (k, j) up from slot p of the indexed min-heap; pos[job] = its slot."""
    while p > 0:
        parent = (p - 1) >> 1
        if key[parent] <= k:
            break
        key[p] = key[parent]
        idx[p] = idx[parent]
        pos[idx[p]] = p
        p = parent
    key[p] = k
    idx[p] = j
    pos[j] = p


@njit(cache=CACHE, nogil=True, inline="always")
def _ih_pop(key, idx, pos, size):
    """Remove the top of the indexed min-heap key[:size]; return the new size."""
    size -= 1
    k = key[size]
    j = idx[size]
    p = 0
    while True:
        child = 2 * p + 1
        if child >= size:
            break
        if child + 1 < size and key[child + 1] < key[child]:
            child += 1
        if key[child] >= k:
            break
        key[p] = key[child]
        idx[p] = idx[child]
        pos[idx[p]] = p
        p = child
    if size > 0:
        key[p] = k
        idx[p] = j
        pos[j] = p
    return size


@njit(cache=CACHE, nogil=True, inline="always")
def _ring_sift(key, idx, pos, head, mask, p, k, j):
    """Place (k, j) in a sorted ring at logical place p or before it, moving
    the larger keys in head..p one place back (pos[job] follows each)."""
    while p > head:
        q = np.uintp((p - 1) & mask)  # unsigned: no negative-index wrap
        if key[q] <= k:
            break
        r = np.uintp(p & mask)
        key[r] = key[q]
        idx[r] = idx[q]
        pos[np.uintp(idx[r])] = p & mask
        p -= 1
    r = np.uintp(p & mask)
    key[r] = k
    idx[r] = j
    pos[np.uintp(j)] = p & mask


@njit(cache=CACHE, nogil=True, inline="always")
def _iq_push(key, idx, pos, head, size, mask, ring, k, j):
    """``_q_push`` for an indexed queue (pos[job] = its slot); return the new size."""
    if ring:
        _ring_sift(key, idx, pos, head, mask, head + size, k, j)
    else:
        _ih_up(key, idx, pos, size, k, j)
    return size + 1


@njit(cache=CACHE, nogil=True, inline="always")
def _iq_pop(key, idx, pos, head, size, mask, ring):
    """Remove an indexed queue's smallest key (at key[head]); return (head, size)."""
    if ring:
        return (head + 1) & mask, size - 1
    return head, _ih_pop(key, idx, pos, size)


@njit(cache=CACHE, nogil=True, inline="always")
def _iq_decrease(key, idx, pos, head, mask, ring, j, k):
    """Lower job j's key to k (k <= its key) in an indexed queue."""
    p = pos[j]
    if ring:
        # from its logical place, counted from the head
        _ring_sift(key, idx, pos, head, mask, head + ((p - head) & mask), k, j)
    else:
        _ih_up(key, idx, pos, p, k, j)


@njit(cache=CACHE, nogil=True, inline="always")
def _draw(T, sigma, base, i, m):
    """Compute work of job i's m-th interval after its launch interval."""
    w = T[i]
    if sigma[i] > 0.0:
        w += sigma[i] * stream_normal(base[i], m)
        if w < 0.0:
            w = 0.0
    return w


_COMPUTE = 0
_SNAPSHOT = 1
_WAIT = 2


@njit(cache=CACHE, nogil=True)
def _iq_remove(key, idx, pos, head, size, mask, ring, j):
    """Remove job j from an indexed queue (``_iq_push``); return the new size
    (a ring's head does not move). A failure (MODEL.md E8) is rare next to
    the events: a ring closes the gap, O(size); a heap moves its last entry
    into the hole and sifts it, O(log size)."""
    p = pos[j]
    if ring:
        for q in range((p - head) & mask, size - 1):
            s = (head + q) & mask
            r = (head + q + 1) & mask
            key[s] = key[r]
            idx[s] = idx[r]
            pos[idx[s]] = s
        return size - 1
    size -= 1
    if p < size:
        kl = key[size]
        jl = idx[size]
        if p > 0 and key[(p - 1) >> 1] > kl:
            _ih_up(key, idx, pos, p, kl, jl)
            return size
        while True:
            child = 2 * p + 1
            if child >= size:
                break
            if child + 1 < size and key[child + 1] < key[child]:
                child += 1
            if key[child] >= kl:
                break
            key[p] = key[child]
            idx[p] = idx[child]
            pos[idx[p]] = p
            p = child
        key[p] = kl
        idx[p] = jl
        pos[jl] = p
    return size


#: A column of the general kernel's ``fail_out`` beyond the anonymous
#: kernel's: each job's checkpointing time in the window (s), MODEL.md E8's
#: "writing" part: blocking writes, snapshots, waits, queues, and the share
#: r_c eps_i of an async job's computing time while its persist is in
#: flight or queued (the anonymous kernel leaves it 0: there it is the
#: writing time).
_FO_CKPT = 6


def _make_run_fleet_general(FAIL=False, POWER=False):
    """The general kernel's fleet integrator, without failures or with them (FAIL).

    FAIL (MODEL.md E8): failures, restarts and outages, as ``run_fleet``'s
    FAIL variant takes and gives them (fail_in, fail_keys, fail_out; fail_out
    has the column ``_FO_CKPT`` more). Every use sits under a bare ``if
    FAIL:``, pruned before typing, so ``run_fleet_general`` (FAIL = False) is
    the code of before. Each job's next failure and end of DOWN, on wall
    time, sit in an indexed heap (the outage's time beside it): the next
    event is the earliest of the three clocks' heads and that one. An
    instant with a failure applies its failures and DOWN ends first (the
    reference's order), then the phase changes of the instant as any other:
    a failing job leaves the writers (W and the writer clock's rate change
    at that instant), the writer queue (E5), its snapshot or wait, or the
    computers; a freed writer slot admits the queue's head at once. Its
    next compute interval is the next normal of its stream (a blocking
    job's interval, drawn at its firing, is given back when its write is
    abandoned: the reference draws it at the write's end).

    POWER (MODEL.md E6; with FAIL or without, ``run_fleet_general_power``,
    ``run_fleet_general_fail_power``; pw_in .. trace_p as ``run_fleet``
    takes them): the fleet's power P(t) and
    its ramps over the measured window, as ``run_fleet``'s POWER variant
    takes and gives them (pw_in, ramp_d, ramp_x, pw_out, ramp_out). Every
    use sits under a bare ``if POWER:``, pruned before typing. The jobs
    computing are those in the computers' queue (n_c of them): job i there
    computes at r_c(n_c) (1 - eps_i) while its own persist is in flight or
    queued, else at r_c(n_c); every other job (snapshot, WAIT, a blocking
    write or queue, parked, DOWN: a failure takes the job out of the
    computers' queue, an outage every job) draws idle. So P = sum of idle + r_c(n_c)
    x S, S the sum over the computing jobs of (busy_i - idle_i) x (1 - eps_i
    or 1): with equal drops and every eps_i 0 or 1 (no job computes slowed)
    S is n_c times the drop (exact, as the anonymous kernel's), else a
    running sum updated where a job enters or leaves the computers' queue or
    its persist ends, summed afresh in job order at every rebase and 0 with
    no job computing (~1 ulp of drift at most between).
    """

    # LONE: a lone instant (one key reached, none other within the tie rule's
    # widest tolerance on any clock; no writer cap), known at the next-event
    # choice, takes a short path that does what the general path does then,
    # the same operations in the same order (so the same bits), and nothing
    # else: a compute end off a ring whose job goes to its snapshot (the
    # whole instant); a persist's end not followed by a firing (steps 1 and
    # 2 for it alone; steps 3 on only if a compute key is then due); a
    # snapshot's end (its firing put on the stack; steps 3 on). Only without
    # failures and power (FAIL, POWER): those variants keep the code of before.
    LONE = not FAIL and not POWER

    @njit(cache=CACHE, nogil=True)
    @_variant("run_fleet_general" + ("_fail" if FAIL else "") + ("_power" if POWER else ""))
    def run_fleet_general(T, d, sigma, f, rc, theta, weight, snap, slow, skip, is_async,
                          max_writers, key0, key1, fleet, cycles, burn_in, level, stop_at_passage, record,
                          ring_w, ring_c, ring_s, firings, occupancy, upcross, writing,
                          table, wtable, dur_out, wait_out, fail_in=None, fail_keys=None,
                          fail_out=None, pw_in=None, ramp_d=None, ramp_x=None, pw_out=None,
                          ramp_out=None, trace_t=None, trace_p=None):
        """Integrate one fleet with asynchronous checkpoints and weights (MODEL.md E1, E2).

        T, d, sigma, weight (w_i > 0), snap (s_i >= 0), slow (eps_i in [0, 1]):
        (N,) float64; skip, is_async (N,) bool; f (N+1,) aggregate throughput
        f(n); rc (N+1,) computer rate min(1, C/n). A blocking job is passed as an
        async job with s = 0, eps = 1 and the rule ``block`` (E1 check A1 says
        they are the same job) and is_async False, which keeps its zero-length
        compute intervals out of the wait counts. ring_w, ring_c, ring_s choose
        each queue's kind (``_q_push``); with unit weights results do not depend
        on them (other weights: sums of W in another order, to rounding).
        Outputs as ``run_fleet``; wtable, wait_out: the same for each
        checkpoint's wait (due to firing: its time in WAIT, E1, and queued, E5) on
        the scale T_i, recorded with its duration when its write (persist) ends
        in the measured window. max_writers: K of MODEL.md E5 (N: no cap).
        Returns (passage_time, passage_cycle, end_time, events, waits, skips,
        wait_time).

        Writer cap (K < N): a checkpoint ready to write (a blocking job's
        compute done, an async job's snapshot done) joins a FIFO queue (ties at
        one instant by job index) and counts as in flight for the rule on a
        busy persist and for the slowdown: its next compute interval begins at
        once (a blocking job's is parked, eps = 1, so it neither computes nor
        writes). After every phase change of an instant the queue's head is
        admitted while fewer than K write: the admission is the firing, and its
        wait (E7) includes the time queued. Entering the queue and not being
        admitted at that instant is an event. K = N takes none of this path.

        Three virtual clocks: P_w, advancing at f(n_w) / W (W the writers'
        weight sum), on which writer i finishes d_i / w_i after its firing; P_c,
        the work done by a computer at full rate r_c = min(1, C / n_c), on which
        a job whose own persist is in flight sits at its remaining work stretched
        by 1 / (1 - eps_i) (re-keyed in an indexed heap when the persist ends;
        eps_i = 1 parks the job outside the heap, so it is not counted in n_c);
        and P_s, wall time, for snapshots. At one instant, persists that end are
        applied before snapshots that end and checkpoints that fall due, so a
        checkpoint due at the instant its previous persist ends proceeds.
        """
        N = T.shape[0]
        cap = 1
        while cap < N:
            cap *= 2
        mask = cap - 1
        wkey = np.empty(cap)
        widx = np.empty(cap, dtype=np.int64)
        skey = np.empty(cap)
        sidx = np.empty(cap, dtype=np.int64)
        ckey = np.empty(cap)
        cidx = np.empty(cap, dtype=np.int64)
        cpos = np.empty(N, dtype=np.int64)
        popped = np.empty(N, dtype=np.int64)
        popkey = np.empty(N)
        stack = np.empty(N, dtype=np.int64)  # 2 i + 1: job i fires now; 2 i: falls due now
        count = np.zeros(N, dtype=np.int64)
        drawn = np.zeros(N, dtype=np.int64)  # compute intervals started after the launch
        base = np.empty(N, dtype=np.uint64)
        since = np.zeros(N)
        phase = np.zeros(N, dtype=np.int64)
        inflight = np.zeros(N, dtype=np.bool_)
        parked = np.zeros(N, dtype=np.bool_)
        rem = np.zeros(N)  # a parked job's remaining work
        dw = np.empty(N)  # d_i / w_i: a write's length on the writer clock
        stretch = np.empty(N)  # 1 / (1 - eps_i): compute clock units per unit of work
        tol_w = np.empty(N)  # tie tolerances on each clock, per job (MODEL.md)
        tol_c = np.empty(N)
        tol_cs = np.empty(N)  # ... for a job slowed by its own persist
        tol_s = np.empty(N)
        wstart = np.zeros(N)  # when the job's current wait began
        wacc = np.zeros(N)  # the wait of the job's next firing so far (s)
        cwait = np.zeros(N)  # the wait of the checkpoint now in flight (s)
        capped = max_writers < N
        inv_d = 1.0 / d  # the histograms' scales, as ``run_fleet`` applies them
        inv_T = 1.0 / T
        qidx = np.empty(cap, dtype=np.int64)  # the writer queue (E5): a FIFO ring
        qtime = np.empty(cap)  # ... and when each entered it
        qh = 0
        qn = 0

        # Equal weights are the anonymous model (E2): writers then drain at the
        # tabled f(n)/n with targets d_i, as in ``run_fleet`` (no division per
        # event; W is not used). Otherwise the writer clock runs at f(n)/W.
        uniform = True
        for i in range(N):
            if weight[i] != weight[0]:
                uniform = False
        inv_f = np.empty(N + 1)  # 1 / f(n), n / f(n), f(n) / n and 1 / r_c(n)
        per_tab = np.empty(N + 1)
        rw_tab = np.empty(N + 1)
        inv_rc = np.empty(N + 1)
        inv_f[0] = 0.0
        per_tab[0] = 0.0
        rw_tab[0] = 0.0
        for n in range(N + 1):
            inv_rc[n] = 1.0 / rc[n]
            if n > 0:
                inv_f[n] = 1.0 / f[n]
                rw_tab[n] = f[n] / n
                per_tab[n] = 1.0 / rw_tab[n]
        tw = 0.0
        tc = 0.0
        ts = 0.0
        for i in range(N):
            base[i] = stream_base(key0, key1, fleet, i)
            dw[i] = d[i] if uniform else d[i] / weight[i]
            stretch[i] = 1.0 / (1.0 - slow[i]) if slow[i] < 1.0 else 1.0
            tol_w[i] = TIE_RTOL * dw[i]
            tol_c[i] = TIE_RTOL * T[i]
            tol_cs[i] = tol_c[i] * stretch[i]
            tol_s[i] = TIE_RTOL * snap[i]
            tw = max(tw, tol_w[i])
            tc = max(tc, tol_cs[i])
            ts = max(ts, tol_s[i])
        for n in range(N + 1):
            occupancy[n] = 0.0
            upcross[n] = 0
        for i in range(N):
            writing[i] = 0.0
        for b in range(dur_out.shape[0]):
            dur_out[b] = 0.0
        for b in range(wait_out.shape[0]):
            wait_out[b] = 0.0

        nwh = 0
        nsh = 0
        nch = 0
        wh = 0  # queue heads (0 for a heap)
        sh = 0
        ch = 0
        first = (1.0 - theta) * T
        for i in np.argsort(first):
            nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c, first[i], i)
        if POWER:  # every job computes at t = 0, no persist in flight
            nd = ramp_d.shape[0]
            pcap = 2  # doubled as needed (``_pw_grow``)
            dq_e = np.empty((nd, pcap))
            dq_p = np.empty((nd, pcap))
            dq_h = np.zeros(nd, dtype=np.int64)
            dq_n = np.zeros(nd, dtype=np.int64)
            above = np.ones((nd, ramp_x.shape[0]), dtype=np.bool_)  # no crossing at t = 0
            for jd in range(nd):
                for jx in range(ramp_x.shape[0]):
                    ramp_out[jd, jx, 0] = 0.0
                    ramp_out[jd, jx, 1] = 0.0
            pidle = pw_in[N]
            dfull = pw_in[:N].copy()  # a computing job's drop, at full rate ...
            dslow = np.empty(N)  # ... and with its persist in flight
            pequal = True
            dsum = 0.0
            for i in range(N):
                dslow[i] = dfull[i] * (1.0 - slow[i])
                dsum += dfull[i]
                if dfull[i] != dfull[0] or (slow[i] != 0.0 and slow[i] != 1.0):
                    pequal = False
            pflag = np.empty(N, dtype=np.bool_)
            psum = 0.0
            pmin = np.inf
            pmax = -np.inf
            ph = np.zeros(2 * PW_BINS)  # time at power and highest level, by bin (``_pw_hist``)
            for b in range(PW_BINS):
                ph[2 * b + 1] = -np.inf
            ph_lo = pidle
            ph_scale = 0.0
            if dsum > 0.0:
                ph_scale = PW_BINS / dsum
            ntr = 0  # levels of the window recorded in trace_t, trace_p (NaN beyond)
            for b in range(trace_t.shape[0]):
                trace_t[b] = np.nan
                trace_p[b] = np.nan
        if FAIL:
            # Work (MODEL.md E8): wcur, the current compute interval's work
            # (0 once done); acc, the work of the intervals done since the
            # last capture (a checkpoint joining the writer queue); capw, the
            # work the persist (write) in flight or queued holds; pre_p,
            # pre_c, their parts done before the window opened.
            wcur = first.copy()
            acc = np.zeros(N)
            capw = np.zeros(N)
            pre_p = np.zeros(N)
            pre_c = np.zeros(N)
            committed = np.zeros(N)
            # Checkpointing time: the window less DOWN less the time in the
            # computers' queue (incomp, entered at cin), plus the slowdown's
            # share slowed = eps_i x the compute clock's advance while the
            # persist is in flight (from wst, the key's distance then).
            cin = np.zeros(N)
            incomp = np.zeros(N)
            wst = np.zeros(N)
            slowed = np.zeros(N)
            dstart = np.zeros(N)
            de = np.full(N, np.inf)  # end of DOWN
            ft = np.empty(N)  # next failure
            nfd = np.ones(N, dtype=np.int64)  # failure gaps drawn
            fbase = np.empty(N, dtype=np.uint64)
            restart = fail_in[:N, 1].copy()
            xk = np.empty(N)  # indexed heap of min(ft, de) on wall time
            xi = np.empty(N, dtype=np.int64)
            xpos = np.empty(N, dtype=np.int64)
            for i in range(N):
                fbase[i] = stream_base(key0, fail_keys[0], fleet, i)
                ft[i] = np.inf
                if fail_in[i, 0] < np.inf:  # M_i = inf takes no draw
                    ft[i] = fail_in[i, 0] * stream_exponential(fbase[i], 0)
                _ih_up(xk, xi, xpos, i, ft[i], i)
            obase = stream_base(key0, fail_keys[1], fleet, 0)
            o_at = np.inf  # next outage
            o_drawn = 1
            if fail_in[N, 0] < np.inf:
                o_at = fail_in[N, 0] * stream_exponential(obase, 0)
            tnext = min(xk[0], o_at)  # the next failure, outage or DOWN's end
            xev = False
            for b in range(fail_out.shape[0]):
                for c in range(fail_out.shape[1]):
                    fail_out[b, c] = 0.0

        t = 0.0
        t0 = 0.0
        pw = 0.0
        pc = 0.0
        ps = 0.0
        W = 0.0  # weight sum of the writers
        r_w = 0.0  # writer clock rate f(n_w) / W, and its inverse
        per_w = 0.0
        nw_prev = 0
        nwait = 0  # async jobs in WAIT
        n_done = 0
        n_burn = N if burn_in == 0 else 0
        measuring = burn_in == 0
        fired_total = 0
        events = 0
        waits = 0
        skips = 0
        wait_time = 0.0
        p_time = np.inf
        p_cycle = -1
        instants = 0
        lone = 0  # the next instant is a lone persist's (1), snapshot's (2), compute's (3) end (LONE)
        nw = 0
        while True:
            nw_prev = nwh
            wset = False  # the writer set changed at this instant
            entered = 0
            skipped = 0
            n_fire = 0
            top = 0
            quick = 0  # 1: the instant done in short; 2: a persist's end done, steps 3 on
            if LONE and lone == 3:
                i = cidx[np.uintp(ch)]
                if snap[np.uintp(i)] > 0.0 and not inflight[np.uintp(i)]:
                    # Its key less the clock is exactly 0.0: it passes its own
                    # tolerance; to its snapshot (the general path's step 3).
                    quick = 1
                    ch = (ch + 1) & mask
                    nch -= 1
                    events += 1
                    phase[np.uintp(i)] = _SNAPSHOT
                    nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, ps + snap[np.uintp(i)], i)
            elif LONE and lone == 2:
                # A snapshot ends alone: it passes its own tolerance and fires
                # (step 2); no compute key is due (step 3 finds none).
                stack[0] = 2 * sidx[np.uintp(sh)] + 1
                top = 1
                sh, nsh = _q_pop(skey, sidx, sh, nsh, mask, ring_s)
                quick = 2
            elif LONE and lone == 1:
                i = widx[np.uintp(wh)]
                if phase[np.uintp(i)] != _WAIT or snap[np.uintp(i)] > 0.0:
                    # Its key less the clock is exactly 0.0: step 1 for it alone
                    # (no firing follows); steps 3 on only if a compute key is
                    # now due (a re-keyed or unparked job).
                    wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, ring_w)
                    events += 1
                    wset = True
                    inflight[np.uintp(i)] = False
                    W -= weight[np.uintp(i)]
                    if measuring:
                        writing[np.uintp(i)] += t - max(since[np.uintp(i)], t0)
                        _record(dur_out, table, t - since[np.uintp(i)], inv_d[np.uintp(i)])
                        if cwait[np.uintp(i)] > 0.0:
                            _record(wait_out, wtable, cwait[np.uintp(i)], inv_T[np.uintp(i)])
                    if phase[np.uintp(i)] == _WAIT:
                        if is_async[np.uintp(i)]:
                            nwait -= 1
                            wacc[np.uintp(i)] += t - wstart[np.uintp(i)]
                        phase[np.uintp(i)] = _SNAPSHOT
                        nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, ps + snap[np.uintp(i)], i)
                    elif parked[np.uintp(i)]:
                        parked[np.uintp(i)] = False
                        nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c, pc + rem[np.uintp(i)], i)
                    elif slow[np.uintp(i)] > 0.0 and phase[np.uintp(i)] == _COMPUTE:
                        cp = np.uintp(cpos[np.uintp(i)])
                        _iq_decrease(ckey, cidx, cpos, ch, mask, ring_c, i,
                                     pc + (ckey[cp] - pc) * (1.0 - slow[np.uintp(i)]))
                    if nch > 0 and ckey[np.uintp(ch)] - pc <= tc:
                        quick = 2
                    else:
                        quick = 1
                        nw = nwh
                        if nw == 0:  # as below
                            W = 0.0
                        elif nw == 1:
                            W = weight[np.uintp(widx[np.uintp(wh)])]
            if quick == 0:
                if FAIL:
                    if xev:
                        xev = False
                        # 0. Every failure, outage and end of DOWN at this instant.
                        while True:
                            if o_at <= t:  # an outage: every job fails at once
                                if measuring:
                                    fail_out[N, 0] += 1.0
                                j0 = 0
                                j1 = N
                            elif xk[0] <= t:
                                j0 = xi[0]
                                j1 = j0 + 1
                                if ft[j0] > t:  # DOWN ends: a fresh compute interval
                                    i = j0
                                    events += 1
                                    if measuring:
                                        fail_out[i, _FO_DOWN] += t - max(dstart[i], t0)
                                    de[i] = np.inf
                                    w = _draw(T, sigma, base, i, drawn[np.uintp(i)])
                                    drawn[np.uintp(i)] += 1
                                    phase[np.uintp(i)] = _COMPUTE
                                    if w <= tol_c[np.uintp(i)]:
                                        acc[i] += w
                                        wcur[i] = 0.0
                                        stack[np.uintp(top)] = 2 * i  # due at once
                                        top += 1
                                    else:
                                        wcur[i] = w
                                        cin[i] = t
                                        nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c, pc + w, i)
                                        if POWER:
                                            dsum += dfull[i]
                                    _xh_set(xk, xi, xpos, N, i, ft[i])
                                    continue
                            else:
                                break
                            for i in range(j0, j1):
                                events += 1
                                lost = acc[i] + capw[i]
                                if de[i] < np.inf:  # DOWN again
                                    if measuring:
                                        fail_out[i, _FO_DOWN] += t - max(dstart[i], t0)
                                else:
                                    busy = inflight[np.uintp(i)]
                                    if busy:  # its persist (write) leaves the writers or the queue
                                        nw0 = nwh
                                        kx, nwh = _q_remove(wkey, widx, wh, nwh, mask, ring_w, i)
                                        if nwh < nw0:
                                            W -= weight[np.uintp(i)]
                                            wset = True
                                            if measuring:
                                                fail_out[i, _FO_ABANDON] += 1.0
                                                writing[np.uintp(i)] += t - max(since[np.uintp(i)], t0)
                                        else:
                                            p = 0
                                            while p < qn and qidx[(qh + p) & mask] != i:
                                                p += 1
                                            for q in range(p, qn - 1):
                                                qidx[(qh + q) & mask] = qidx[(qh + q + 1) & mask]
                                                qtime[(qh + q) & mask] = qtime[(qh + q + 1) & mask]
                                            qn -= 1
                                        if not is_async[np.uintp(i)]:  # its next interval: not begun
                                            drawn[np.uintp(i)] -= 1
                                        inflight[np.uintp(i)] = False
                                    if phase[np.uintp(i)] == _SNAPSHOT:
                                        kx, nsh = _q_remove(skey, sidx, sh, nsh, mask, ring_s, i)
                                    elif phase[np.uintp(i)] == _WAIT:
                                        if is_async[np.uintp(i)]:
                                            nwait -= 1
                                    elif parked[np.uintp(i)]:
                                        parked[np.uintp(i)] = False
                                    else:  # computing
                                        r = ckey[np.uintp(cpos[np.uintp(i)])] - pc
                                        nch = _iq_remove(ckey, cidx, cpos, ch, nch, mask, ring_c, i)
                                        if POWER:
                                            dsum -= dslow[i] if busy else dfull[i]
                                        if busy and slow[np.uintp(i)] > 0.0:
                                            if measuring:
                                                slowed[i] += slow[np.uintp(i)] * (wst[i] - r)
                                            r *= 1.0 - slow[np.uintp(i)]
                                        lost += wcur[i] - r
                                        if measuring:
                                            incomp[i] += t - max(cin[i], t0)
                                    phase[np.uintp(i)] = _COMPUTE
                                    wacc[np.uintp(i)] = 0.0
                                if measuring:
                                    fail_out[i, _FO_FAIL] += 1.0
                                    fail_out[i, _FO_LOST] += lost - pre_p[i] - pre_c[i]
                                acc[i] = 0.0
                                capw[i] = 0.0
                                wcur[i] = 0.0
                                pre_p[i] = 0.0
                                pre_c[i] = 0.0
                                dstart[i] = t
                                de[i] = t + restart[i]
                            if j1 - j0 == N and o_at <= t:
                                for i in range(N):
                                    _xh_set(xk, xi, xpos, N, i, min(ft[i], de[i]))
                                o_at = t + fail_in[N, 0] * stream_exponential(obase, o_drawn)
                                o_drawn += 1
                            else:
                                i = j0
                                ft[i] = t + fail_in[i, 0] * stream_exponential(fbase[i], nfd[i])
                                nfd[i] += 1
                                _xh_set(xk, xi, xpos, N, i, min(ft[i], de[i]))
                        tnext = min(xk[0], o_at)
                # 1. Persists (and blocking writes) that end now. The snapshot
                # candidates are popped first, so that a snapshot begun now (however
                # short) ends at a later instant.
                n_pop = 0
                while nwh > 0 and wkey[np.uintp(wh)] - pw <= tw:
                    popped[np.uintp(n_pop)] = widx[np.uintp(wh)]
                    popkey[np.uintp(n_pop)] = wkey[np.uintp(wh)]
                    n_pop += 1
                    wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, ring_w)
                n_wpop = n_pop
                while nsh > 0 and skey[np.uintp(sh)] - ps <= ts:
                    popped[np.uintp(n_pop)] = sidx[np.uintp(sh)]
                    popkey[np.uintp(n_pop)] = skey[np.uintp(sh)]
                    n_pop += 1
                    sh, nsh = _q_pop(skey, sidx, sh, nsh, mask, ring_s)
                for b in range(n_wpop):
                    i = popped[np.uintp(b)]
                    if popkey[np.uintp(b)] - pw > tol_w[np.uintp(i)]:
                        nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, popkey[np.uintp(b)], i)
                        continue
                    events += 1
                    wset = True
                    inflight[np.uintp(i)] = False
                    W -= weight[np.uintp(i)]
                    if FAIL:
                        if measuring:
                            committed[i] += capw[i] - pre_c[i]
                        capw[i] = 0.0
                        pre_c[i] = 0.0
                    if measuring:
                        writing[np.uintp(i)] += t - max(since[np.uintp(i)], t0)
                        _record(dur_out, table, t - since[np.uintp(i)], inv_d[np.uintp(i)])
                        if cwait[np.uintp(i)] > 0.0:  # most checkpoints do not wait: counted at the end
                            _record(wait_out, wtable, cwait[np.uintp(i)], inv_T[np.uintp(i)])
                    if phase[np.uintp(i)] == _WAIT:
                        if is_async[np.uintp(i)]:
                            nwait -= 1
                            wacc[np.uintp(i)] += t - wstart[np.uintp(i)]
                        if snap[np.uintp(i)] > 0.0:
                            phase[np.uintp(i)] = _SNAPSHOT
                            nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, ps + snap[np.uintp(i)], i)
                        else:
                            stack[np.uintp(top)] = 2 * i + 1
                            top += 1
                    elif parked[np.uintp(i)]:
                        parked[np.uintp(i)] = False
                        if FAIL:
                            cin[i] = t
                        nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c, pc + rem[np.uintp(i)], i)
                        if POWER:
                            dsum += dfull[i]
                    elif slow[np.uintp(i)] > 0.0 and phase[np.uintp(i)] == _COMPUTE:
                        cp = np.uintp(cpos[np.uintp(i)])
                        if POWER:  # back to full rate
                            dsum += dfull[i] - dslow[i]
                        if FAIL:
                            if measuring:
                                slowed[i] += slow[np.uintp(i)] * (wst[i] - (ckey[cp] - pc))
                        # Back to full rate: the remaining work w sat at w / (1 - eps)
                        # on the compute clock; the key can only decrease.
                        _iq_decrease(ckey, cidx, cpos, ch, mask, ring_c, i,
                                     pc + (ckey[cp] - pc) * (1.0 - slow[np.uintp(i)]))
                # 2. Snapshots that end now: firings.
                for b in range(n_wpop, n_pop):
                    i = popped[np.uintp(b)]
                    if popkey[np.uintp(b)] - ps > tol_s[np.uintp(i)]:
                        nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, popkey[np.uintp(b)], i)
                        continue
                    stack[np.uintp(top)] = 2 * i + 1
                    top += 1
            if quick != 1:
                # 3. Checkpoints that fall due now.
                n_pop = 0
                while nch > 0 and ckey[np.uintp(ch)] - pc <= tc:
                    popped[np.uintp(n_pop)] = cidx[np.uintp(ch)]
                    popkey[np.uintp(n_pop)] = ckey[np.uintp(ch)]
                    n_pop += 1
                    # ``_iq_pop`` and ``_ih_pop`` written out: inlined, their
                    # branches kept the three arrays' references counted (atomic
                    # NRT_incref and NRT_decref) at every pop, ~40% of (g)'s time
                    # with the draw's.
                    if ring_c:
                        ch = (ch + 1) & mask
                        nch -= 1
                    else:
                        nch -= 1
                        hk = ckey[nch]
                        hj = cidx[nch]
                        hp = 0
                        while True:
                            hc = 2 * hp + 1
                            if hc >= nch:
                                break
                            if hc + 1 < nch and ckey[hc + 1] < ckey[hc]:
                                hc += 1
                            if ckey[hc] >= hk:
                                break
                            ckey[hp] = ckey[hc]
                            cidx[hp] = cidx[hc]
                            cpos[cidx[hp]] = hp
                            hp = hc
                        if nch > 0:
                            ckey[hp] = hk
                            cidx[hp] = hj
                            cpos[hj] = hp
                for b in range(n_pop):
                    i = popped[np.uintp(b)]
                    ui = np.uintp(i)
                    if popkey[np.uintp(b)] - pc > (tol_cs[ui] if inflight[ui] else tol_c[ui]):
                        nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c, popkey[np.uintp(b)], i)
                        continue
                    if POWER:  # it stops computing
                        dsum -= dslow[i] if inflight[ui] else dfull[i]
                    if FAIL:  # the interval is done
                        if measuring:
                            incomp[i] += t - max(cin[i], t0)
                            if inflight[np.uintp(i)] and slow[np.uintp(i)] > 0.0:
                                slowed[i] += slow[np.uintp(i)] * (wst[i] - (popkey[np.uintp(b)] - pc))
                        acc[i] += wcur[i]
                        wcur[i] = 0.0
                    if snap[np.uintp(i)] > 0.0 and not inflight[np.uintp(i)]:  # common: off the stack
                        events += 1
                        phase[np.uintp(i)] = _SNAPSHOT
                        nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, ps + snap[np.uintp(i)], i)
                        continue
                    stack[np.uintp(top)] = 2 * i
                    top += 1
                # 4. What they set off at this same instant (each job at most once
                # on the stack: an item pushes at most its own follow-up).
                while top > 0:
                    top -= 1
                    i = stack[np.uintp(top)] >> 1
                    if capped and stack[np.uintp(top)] & 1:
                        # Ready to write under a cap: queue (by index among this
                        # instant's arrivals); admitted below, its compute interval
                        # begins now, as after a firing.
                        p = qh + qn
                        while p > qh and qtime[(p - 1) & mask] == t and qidx[(p - 1) & mask] > i:
                            qidx[p & mask] = qidx[(p - 1) & mask]
                            qtime[p & mask] = qtime[(p - 1) & mask]
                            p -= 1
                        qidx[p & mask] = i
                        qtime[p & mask] = t
                        qn += 1
                        inflight[np.uintp(i)] = True
                        phase[np.uintp(i)] = _COMPUTE
                        if FAIL:  # captured: the work the checkpoint will make durable
                            capw[i] = acc[i]
                            pre_c[i] = pre_p[i]
                            acc[i] = 0.0
                            pre_p[i] = 0.0
                    elif stack[np.uintp(top)] & 1:  # a firing: the persist starts, a compute interval begins
                        events += 1
                        k = count[np.uintp(i)]
                        if record and k < cycles:
                            firings[i, k] = t
                        count[np.uintp(i)] = k + 1
                        if k + 1 == cycles:
                            n_done += 1
                        if k + 1 == burn_in:
                            n_burn += 1
                        n_fire += 1
                        since[np.uintp(i)] = t
                        cwait[np.uintp(i)] = wacc[np.uintp(i)]
                        wacc[np.uintp(i)] = 0.0
                        inflight[np.uintp(i)] = True
                        if FAIL:
                            capw[i] = acc[i]
                            pre_c[i] = pre_p[i]
                            acc[i] = 0.0
                            pre_p[i] = 0.0
                        wset = True
                        W += weight[np.uintp(i)]
                        nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, pw + dw[np.uintp(i)], i)
                        # Persists that end now were applied first: level nwh is
                        # crossed now iff above the writers before this instant.
                        if measuring and nwh > nw_prev:
                            upcross[np.uintp(nwh)] += 1
                        phase[np.uintp(i)] = _COMPUTE
                    elif inflight[np.uintp(i)]:  # due with the previous persist in flight
                        if is_async[np.uintp(i)]:  # (a blocking job's zero-length interval is no event)
                            events += 1
                        if not skip[np.uintp(i)]:
                            phase[np.uintp(i)] = _WAIT
                            if is_async[np.uintp(i)]:
                                # (a blocking job with a zero compute interval waits
                                # for its own write: it fires again at once, no wait)
                                entered += 1
                                nwait += 1
                                wstart[np.uintp(i)] = t
                            continue
                        skipped += 1  # skipped: a new compute interval, as after a firing
                    elif snap[np.uintp(i)] > 0.0:  # due, no persist in flight: snapshot
                        events += 1
                        phase[np.uintp(i)] = _SNAPSHOT
                        nsh = _q_push(skey, sidx, sh, nsh, mask, ring_s, ps + snap[np.uintp(i)], i)
                        continue
                    else:  # s = 0: the firing is at this instant
                        stack[np.uintp(top)] = 2 * i + 1
                        top += 1
                        continue
                    # A new compute interval (after a firing or a skip), drawn at one
                    # place in the loop (two inlined copies of the ziggurat cost
                    # ~20 ns per draw more, measured). ``_draw`` written out: inlined,
                    # it kept sigma's and base's references counted at every draw.
                    w = T[np.uintp(i)]
                    if sigma[np.uintp(i)] > 0.0:
                        w += sigma[np.uintp(i)] * stream_normal(base[np.uintp(i)], drawn[np.uintp(i)])
                        if w < 0.0:
                            w = 0.0
                    drawn[np.uintp(i)] += 1
                    if FAIL:
                        wcur[i] = w
                    if w <= tol_c[np.uintp(i)]:
                        if FAIL:
                            acc[i] += w
                            wcur[i] = 0.0
                        stack[np.uintp(top)] = 2 * i  # due again at once
                        top += 1
                    elif slow[np.uintp(i)] >= 1.0:
                        parked[np.uintp(i)] = True
                        rem[np.uintp(i)] = w
                    else:
                        if FAIL:
                            cin[i] = t
                            wst[i] = w * stretch[np.uintp(i)]
                        nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, ring_c,
                                       pc + w * stretch[np.uintp(i)], i)
                        if POWER:
                            dsum += dslow[i] if inflight[np.uintp(i)] else dfull[i]
                if capped:
                    # Admissions (E5), first come first served, while fewer than K write.
                    while qn > 0 and nwh < max_writers:
                        i = qidx[qh]
                        # Its time queued, from its own entry time: the job may have
                        # entered WAIT since (for its next checkpoint, wstart).
                        queued = t - qtime[qh]
                        qh = (qh + 1) & mask
                        qn -= 1
                        events += 1
                        k = count[np.uintp(i)]
                        if record and k < cycles:
                            firings[i, k] = t
                        count[np.uintp(i)] = k + 1
                        if k + 1 == cycles:
                            n_done += 1
                        if k + 1 == burn_in:
                            n_burn += 1
                        n_fire += 1
                        since[np.uintp(i)] = t
                        cwait[np.uintp(i)] = wacc[np.uintp(i)] + queued
                        wacc[np.uintp(i)] = 0.0
                        wset = True
                        W += weight[np.uintp(i)]
                        nwh = _q_push(wkey, widx, wh, nwh, mask, ring_w, pw + dw[np.uintp(i)], i)
                        if measuring and nwh > nw_prev:
                            upcross[np.uintp(nwh)] += 1
                    # Arrivals of this instant left waiting entered QUEUE: an event each.
                    for b in range(qn - 1, -1, -1):
                        if qtime[(qh + b) & mask] != t:
                            break
                        events += 1
                fired_total += n_fire
                nw = nwh
                if nw == 0:  # W must not drift: exact when one writer or none
                    W = 0.0
                elif nw == 1:
                    W = weight[np.uintp(widx[np.uintp(wh)])]
                if not measuring and n_burn == N:
                    measuring = True
                    t0 = t
                    for b in range(nw_prev + 1, nw + 1):  # the opening instant's crossings
                        upcross[b] += 1
                    if FAIL:  # the work each job has not made durable yet
                        for i in range(N):
                            pre_p[i] = acc[i]
                            pre_c[i] = capw[i]
                        for b in range(nch):
                            q = (ch + b) & mask
                            i = cidx[q]
                            r = ckey[q] - pc
                            if inflight[np.uintp(i)] and slow[np.uintp(i)] > 0.0:
                                wst[i] = r  # the slowdown's share counts from here
                                r *= 1.0 - slow[np.uintp(i)]
                            pre_p[i] += wcur[i] - r
                if measuring:
                    waits += entered
                    skips += skipped
                if n_fire > 0 and level > 0 and p_cycle < 0 and nw >= level:
                    p_time = t
                    p_cycle = fired_total // N
                    if stop_at_passage:
                        break
                if n_done == N:
                    break

            instants += 1
            if instants >= _REBASE_EVERY * N:
                instants = 0
                W = 0.0
                for b in range(nwh):
                    q = (wh + b) & mask
                    wkey[q] -= pw
                    W += weight[widx[q]]  # recomputed: no drift across rebases
                if nwh == 1:
                    W = weight[np.uintp(widx[np.uintp(wh)])]
                wset = True
                for b in range(nch):
                    ckey[(ch + b) & mask] -= pc
                for b in range(nsh):
                    skey[(sh + b) & mask] -= ps
                pw = 0.0
                pc = 0.0
                ps = 0.0
                if POWER:  # the computing jobs' drops summed afresh, in job order
                    for b in range(N):
                        pflag[b] = False
                    for b in range(nch):
                        pflag[cidx[(ch + b) & mask]] = True
                    dsum = 0.0
                    for b in range(N):
                        if pflag[b]:
                            dsum += dslow[b] if inflight[b] else dfull[b]

            # Next event: the earliest head of the three clocks. The writer
            # clock's rate changes only with the writers (one division then).
            if wset:
                if nwh == 0:
                    r_w = 0.0
                elif uniform:
                    r_w = rw_tab[np.uintp(nw)]
                    per_w = per_tab[np.uintp(nw)]
                else:
                    r_w = f[nw] / W
                    per_w = W * inv_f[nw]
            # Branch-free: which clock is next alternates unpredictably, and a
            # mispredicted branch costs more than computing all three.
            r_c = rc[np.uintp(nch)]
            dtw = (wkey[np.uintp(wh)] - pw) * per_w if nwh > 0 else np.inf
            dtc = (ckey[np.uintp(ch)] - pc) * inv_rc[np.uintp(nch)] if nch > 0 else np.inf
            dts = skey[np.uintp(sh)] - ps if nsh > 0 else np.inf
            dt = min(dtw, min(dtc, dts))
            if FAIL:
                # A failure, an outage or a DOWN's end first (on wall time;
                # with every job DOWN the queues are empty: it is).
                if tnext - t <= dt:
                    xev = True
                    dt = tnext - t
            pw = wkey[np.uintp(wh)] if dt == dtw else pw + r_w * dt
            pc = ckey[np.uintp(ch)] if dt == dtc else pc + r_c * dt
            ps = skey[np.uintp(sh)] if dt == dts else ps + dt
            if LONE:
                lone = 0
                if not capped and (nsh == 0 or skey[np.uintp(sh)] - ps > ts):
                    if dt == dtc and ring_c:
                        if nch == 1 or ckey[np.uintp((ch + 1) & mask)] - pc > tc:
                            if nwh == 0 or wkey[np.uintp(wh)] - pw > tw:
                                lone = 3
                    elif dt == dtw and nwh > 0 and (nch == 0 or ckey[np.uintp(ch)] - pc > tc):
                        if nwh == 1:
                            lone = 1
                        elif ring_w:
                            if wkey[np.uintp((wh + 1) & mask)] - pw > tw:
                                lone = 1
                        elif (wkey[2] if nwh > 2 and wkey[2] < wkey[1] else wkey[1]) - pw > tw:
                            lone = 1
                elif (not capped and dt == dts and (nwh == 0 or wkey[np.uintp(wh)] - pw > tw)
                        and (nch == 0 or ckey[np.uintp(ch)] - pc > tc)):
                    if nsh == 1:
                        lone = 2
                    elif ring_s:
                        if skey[np.uintp((sh + 1) & mask)] - ps > ts:
                            lone = 2
                    elif (skey[2] if nsh > 2 and skey[2] < skey[1] else skey[1]) - ps > ts:
                        lone = 2
            if measuring:
                occupancy[np.uintp(nw)] += dt
                wait_time += nwait * dt
            ta = t
            t += dt
            if FAIL:
                if xev:
                    t = tnext
            if POWER:  # the level from this instant on, held on [ta, t)
                if nch == 0:
                    dsum = 0.0
                    pnow = pidle
                elif pequal:
                    pnow = pidle + rc[nch] * (nch * dfull[0])
                else:
                    pnow = pidle + rc[nch] * dsum
                if t != ta:
                    grow = False
                    for jd in range(nd):
                        if dq_n[jd] == pcap:
                            grow = True
                    if grow:
                        dq_e, dq_p = _pw_grow(dq_e, dq_p, dq_h, dq_n)
                        pcap *= 2
                    _pw_level(ta, t, pnow, measuring, dq_e, dq_p, dq_h, dq_n, ramp_d, ramp_x,
                              above, ramp_out)
                    if measuring:
                        psum += pnow * (t - ta)
                        _pw_hist(ph, pnow, t - ta, ph_lo, ph_scale)
                        if ntr < trace_t.shape[0]:
                            trace_t[ntr] = ta
                            trace_p[ntr] = pnow
                            ntr += 1
                        pmin = min(pmin, pnow)
                        pmax = max(pmax, pnow)
        if POWER:
            pw_out[PO_SUM] = psum
            pw_out[PO_MIN] = pmin if measuring else np.nan
            pw_out[PO_MAX] = pmax if measuring else np.nan
            pw_out[PO_WINDOW] = t - t0 if measuring else 0.0
            pw_out[PO_P01] = _pw_quantile(ph, 0.01) if measuring else np.nan
            pw_out[PO_P99] = _pw_quantile(ph, 0.99) if measuring else np.nan
        if measuring:
            for b in range(nwh):
                i = widx[(wh + b) & mask]
                writing[i] += t - max(since[i], t0)
            if FAIL:  # work not yet durable, DOWN still going, checkpointing time
                for b in range(nch):
                    q = (ch + b) & mask
                    i = cidx[q]
                    r = ckey[q] - pc
                    if inflight[i] and slow[i] > 0.0:
                        slowed[i] += slow[i] * (wst[i] - r)
                        r *= 1.0 - slow[i]
                    acc[i] += wcur[i] - r
                    incomp[i] += t - max(cin[i], t0)
                for i in range(N):
                    if de[i] < np.inf:
                        fail_out[i, _FO_DOWN] += t - max(dstart[i], t0)
                    fail_out[i, _FO_COMMIT] = committed[i]
                    fail_out[i, _FO_UNCOMMIT] = acc[i] + capw[i] - pre_p[i] - pre_c[i]
                    fail_out[i, _FO_CKPT] = (t - t0) - fail_out[i, _FO_DOWN] - incomp[i] + slowed[i]
        # The checkpoints that did not wait: a wait of 0, in bin 0.
        unwaited = 0.0
        for b in range(_OUT_HIST, dur_out.shape[0]):
            unwaited += dur_out[b] - wait_out[b]
        wait_out[_OUT_HIST] += unwaited
        return p_time, p_cycle, t, events, waits, skips, wait_time

    return run_fleet_general


run_fleet_general = _make_run_fleet_general()
#: The general kernel with failures, restarts and outages (MODEL.md E8).
run_fleet_general_fail = _make_run_fleet_general(True)
#: The general kernel with power and ramps (MODEL.md E6).
run_fleet_general_power = _make_run_fleet_general(POWER=True)
run_fleet_general_fail_power = _make_run_fleet_general(True, POWER=True)


def _make_run_fleets_general(FAIL=False, POWER=False):
    """``run_fleets`` for ``run_fleet_general`` (FAIL: ``run_fleet_general_fail``;
    POWER: ``run_fleet_general_power``, pw_out (F, ``PW_COLUMNS``), ramp_out
    (F, nd, nx, 2), trace_t, trace_p (F, m))."""

    @njit(cache=CACHE, nogil=True, parallel=True)
    @_variant("run_fleets_general" + ("_fail" if FAIL else "") + ("_power" if POWER else ""))
    def run_fleets_general(T, d, sigma, f, rc, theta, weight, snap, slow, skip, is_async,
                           max_writers, key0, key1, fleet0, cycles, burn_in, level, stop_at_passage,
                           record, ring_w, ring_c, ring_s, firings, occupancy, upcross, writing,
                           passage_time, passage_cycle, end_time, events, waits, skips, wait_time,
                           table, wtable, dur_out, wait_out, fail_in=None, fail_keys=None,
                           fail_out=None, pw_in=None, ramp_d=None, ramp_x=None, pw_out=None,
                           ramp_out=None, trace_t=None, trace_p=None):
        """``run_fleets`` for ``run_fleet_general``; waits, skips (F,) int64, wait_time (F,);
        dur_out, wait_out (F, B + 4) (``_OUT_SUM``); FAIL: fail_in, fail_keys as
        ``run_fleet`` takes them, fail_out (F, N + 1, ``FAIL_COLUMNS``)."""
        F = theta.shape[0]
        for g in prange(F):
            if POWER and FAIL:
                p_t, p_c, t_end, n_ev, n_wait, n_skip, t_wait = run_fleet_general_fail_power(
                    T, d, sigma, f, rc, theta[g], weight, snap, slow, skip, is_async, max_writers,
                    key0, key1,
                    fleet0 + g, cycles, burn_in, level, stop_at_passage, record, ring_w, ring_c,
                    ring_s, firings[g], occupancy[g], upcross[g], writing[g], table, wtable,
                    dur_out[g], wait_out[g], fail_in, fail_keys, fail_out[g], pw_in, ramp_d,
                    ramp_x, pw_out[g], ramp_out[g], trace_t[g], trace_p[g])
            elif POWER:
                p_t, p_c, t_end, n_ev, n_wait, n_skip, t_wait = run_fleet_general_power(
                    T, d, sigma, f, rc, theta[g], weight, snap, slow, skip, is_async, max_writers,
                    key0, key1,
                    fleet0 + g, cycles, burn_in, level, stop_at_passage, record, ring_w, ring_c,
                    ring_s, firings[g], occupancy[g], upcross[g], writing[g], table, wtable,
                    dur_out[g], wait_out[g], None, None, None, pw_in, ramp_d, ramp_x, pw_out[g],
                    ramp_out[g], trace_t[g], trace_p[g])
            elif FAIL:
                p_t, p_c, t_end, n_ev, n_wait, n_skip, t_wait = run_fleet_general_fail(
                    T, d, sigma, f, rc, theta[g], weight, snap, slow, skip, is_async, max_writers,
                    key0, key1,
                    fleet0 + g, cycles, burn_in, level, stop_at_passage, record, ring_w, ring_c,
                    ring_s, firings[g], occupancy[g], upcross[g], writing[g], table, wtable,
                    dur_out[g], wait_out[g], fail_in, fail_keys, fail_out[g])
            else:
                p_t, p_c, t_end, n_ev, n_wait, n_skip, t_wait = run_fleet_general(
                    T, d, sigma, f, rc, theta[g], weight, snap, slow, skip, is_async, max_writers,
                    key0, key1,
                    fleet0 + g, cycles, burn_in, level, stop_at_passage, record, ring_w, ring_c,
                    ring_s, firings[g], occupancy[g], upcross[g], writing[g], table, wtable,
                    dur_out[g], wait_out[g])
            passage_time[g] = p_t
            passage_cycle[g] = p_c
            end_time[g] = t_end
            events[g] = n_ev
            waits[g] = n_wait
            skips[g] = n_skip
            wait_time[g] = t_wait

    return run_fleets_general


run_fleets_general = _make_run_fleets_general()
run_fleets_general_fail = _make_run_fleets_general(True)
run_fleets_general_power = _make_run_fleets_general(POWER=True)
run_fleets_general_fail_power = _make_run_fleets_general(True, POWER=True)


# -- forward flux sampling on the base model (stormsim.risk.splitting) --
#
# A separate driver: ``run_fleet`` above is untouched (every result of
# ``simulate`` stays bit-identical). A fleet's state between instants is, per
# job, its phase (0 computing, 1 writing), its remaining amount (work or
# volume) and its firing count (which also counts its normals drawn: the
# interval after the k-th write is normal k - 1 of its stream, as in
# ``run_fleet``). Stored in banks of rows, a state can be continued any
# number of times, each continuation (a clone) with its own stream base, so
# clones share the committed past and differ from their first new draw on.

#: A walk that has integrated this many events without reaching its next
#: interface or returning to the basin stops and is reported (``truncated``):
#: excursions out of the basin last about a cycle (2 N events), so this is
#: only a guard against a basin chosen where the fleet does not return.
FFS_MAX_EVENTS = 50_000_000

_FFS_STAGE_MUL = np.uint64(0x8CB92BA72F3D8DD7)


@njit(cache=CACHE, nogil=True)
def ffs_committed_max(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, d, rw, rc,
                      lo, hi, buf):
    """The importance score: the largest n_w of the committed future, to class precision.

    The committed future is the exact dynamics in which the jobs computing
    now fire at their already-drawn targets and no compute interval that
    starts later ends (so r_c = rc[N - n_w] as in the fleet). It starts at
    the present n_w, so the score is >= n_w. Only its class matters to the
    caller (< lo, in [lo, hi), >= hi): the walk stops once the answer is
    known (returns a value >= hi, or a value whose class cannot change as no
    more computers than ``n_w + left`` can write at once). Both queues must
    be rings (sorted in memory), buf a scratch array of >= N entries.
    """
    N = rw.shape[0] - 1
    nw = nwh
    best = nw
    if best >= hi:
        return best
    qw = pw
    qc = pc
    iw = 0  # existing writers passed
    jc = 0  # computers fired
    hb = 0  # new writers (buf[hb:nb], sorted, targets on the writer clock)
    nb = 0
    while jc < nch:
        need = lo if best < lo else hi
        if nw + (nch - jc) < need:
            return best
        kc = ckey[(ch + jc) & mask]
        kw = np.inf
        if iw < nwh:
            kw = wkey[(wh + iw) & mask]
        new = False
        if hb < nb and buf[hb] < kw:
            kw = buf[hb]
            new = True
        r_c = rc[N - nw]
        if nw > 0 and (kw - qw) * r_c <= (kc - qc) * rw[nw]:
            dt = (kw - qw) / rw[nw]
            qw = kw
            qc += r_c * dt
            nw -= 1
            if new:
                hb += 1
            else:
                iw += 1
        else:
            r_w = rw[nw]
            dt = (kc - qc) / r_c
            qc = kc
            if nw > 0:
                qw += r_w * dt
            x = qw + d[cidx[(ch + jc) & mask]]
            p = nb
            while p > hb and buf[p - 1] > x:
                buf[p] = buf[p - 1]
                p -= 1
            buf[p] = x
            nb += 1
            jc += 1
            nw += 1
            if nw > best:
                best = nw
                if best >= hi:
                    return best
    return best


@njit(cache=CACHE, nogil=True, inline="always")
def _sorted_insert(key, idx, head, size, mask, x, i):
    """Insert (x, i) into the sorted ring key/idx[head .. head + size); returns size + 1."""
    p = size
    while p > 0 and key[(head + p - 1) & mask] > x:
        key[(head + p) & mask] = key[(head + p - 1) & mask]
        idx[(head + p) & mask] = idx[(head + p - 1) & mask]
        p -= 1
    key[(head + p) & mask] = x
    idx[(head + p) & mask] = i
    return size + 1


@njit(cache=CACHE, nogil=True)
def ffs_lookahead_max(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, T, d, rw, rc,
                      hi, horizon, lw, lwi, lc, lci, lo=-1):
    """A longer look-ahead score: the largest n_w of the mean future over
    ``horizon`` more cycles.

    The mean future is the exact dynamics from the present state in which
    the jobs computing now fire at their already-drawn targets and every
    compute interval that starts later lasts exactly T_i (its mean, no new
    draw), stopped after nch + horizon * N firings. It starts at the present
    n_w, so the score is >= n_w; with the fleet's own sharing it follows a
    cluster's growth over the next cycles (jobs that fire inside a long shared
    write window leave it together), which the committed future (one firing
    per computer) cannot. Returns once it reaches ``hi``. lw, lwi, lc, lci:
    scratch rings of the queues' capacity (mask + 1).

    Only its class matters to the caller (< lo, in [lo, hi), >= hi; lo = -1:
    no lower bound): n_w rises by one at each firing and by nothing else, so
    once n_w + (firings left) is below the next bound the best so far has
    not reached (lo if best < lo, else hi), no later instant can change the
    class and the walk returns its best so far: a value of the full walk's
    class, so the same decisions and bit-identical results, without the
    last (bound - n_w) firings of every walk that does not reach hi.
    """
    N = rw.shape[0] - 1
    nw = nwh
    best = nw
    if best >= hi:
        return best
    for b in range(nwh):
        lw[b] = wkey[(wh + b) & mask] - pw
        lwi[b] = widx[(wh + b) & mask]
    for b in range(nch):
        lc[b] = ckey[(ch + b) & mask] - pc
        lci[b] = cidx[(ch + b) & mask]
    hw = 0
    hc = 0
    nc = nch
    qw = 0.0
    qc = 0.0
    budget = nch + horizon * N
    fired = 0
    while fired < budget and nw + nc > 0:
        if nw + (budget - fired) < (lo if best < lo else hi):
            return best
        r_c = rc[N - nw]
        if nc == 0 or (nw > 0 and (lw[hw] - qw) * r_c <= (lc[hc] - qc) * rw[nw]):
            dt = (lw[hw] - qw) / rw[nw]
            qw = lw[hw]
            qc += r_c * dt
            i = lwi[hw]
            hw = (hw + 1) & mask
            nw -= 1
            nc = _sorted_insert(lc, lci, hc, nc, mask, qc + T[i], i)
        else:
            dt = (lc[hc] - qc) / r_c
            qc = lc[hc]
            if nw > 0:
                qw += rw[nw] * dt
            i = lci[hc]
            hc = (hc + 1) & mask
            nc -= 1
            nw = _sorted_insert(lw, lwi, hw, nw, mask, qw + d[i], i)
            fired += 1
            if nw > best:
                best = nw
                if best >= hi:
                    return best
    return best


@njit(cache=CACHE, nogil=True)
def _ffs_score(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, T, d, rw, rc, lo, hi,
               buf, horizon, lw, lwi, lc, lci):
    if horizon == 0:
        return ffs_committed_max(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, d, rw,
                                 rc, lo, hi, buf)
    return ffs_lookahead_max(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, T, d, rw,
                             rc, hi, horizon, lw, lwi, lc, lci, lo)


@njit(cache=CACHE, nogil=True)
def ffs_walk(T, d, sigma, rw, rc, rem, ph, cnt, k0, k1, stream, lo, hi, plain, burn_in,
             cycles, max_events, occupancy, upcross, out_rem, out_ph, out_cnt, res_rem,
             res_ph, res_cnt, res_key, horizon, sparse, near, due_io):
    """Continue one fleet from a state (rem, ph, cnt: (N,)) with its own streams.

    Job i's normals come from ``stream_base(k0, k1, stream, i)``, read at its
    firing count as in ``run_fleet``. The score (``_ffs_score``) can change
    only where a write ends (a new compute interval is drawn). sparse False:
    it is looked at every such instant. sparse True: a *common* look (basin
    and interface) comes only at the last instant before the first compute
    interval drawn since the previous common look could end, at its drawn
    end or at its mean T_i, whichever is first (``due``, on the compute
    clock; due_io[0] carries it, relative, from a bank state and to the
    state reached); until then the fleet follows the look-ahead walked at
    that look exactly (the same firings, the same write ends), so n_w stays
    below its score: time with n_w >= k still falls outside the basin. A
    trial also looks at every write end while its last score was >= hi -
    near, for the interface only (the basin is judged at common looks, so
    the excursions, and the flux runs' entries, are those of one rule,
    whatever the stage).

    plain False (a trial): occupancy (N+1,) and upcross (N+1,) accumulate
    the segment from the start to the stop (the stopping instant's
    up-crossings included, the interval after it not); stops at the first
    instant with score >= hi (status 1, the state written to out_*), or
    score < lo (status 0: back in the basin), or after max_events (status -1).

    plain True (the flux run): the fleet runs from its state until every job
    has fired ``cycles`` times, measuring after every job has fired
    ``burn_in`` times. Each entry into {score >= lo} from the basin in the
    measured window is counted and kept in a reservoir (Vitter's algorithm
    R over res_rem/res_ph/res_cnt rows, uniforms from stream ``res_key``),
    so every entry is equally likely to be in it. Status: the entries.

    Returns (status, events, measured time).
    """
    N = T.shape[0]
    cap = 1
    while cap < N:
        cap *= 2
    mask = cap - 1
    wkey = np.empty(cap)
    widx = np.empty(cap, dtype=np.int64)
    ckey = np.empty(cap)
    cidx = np.empty(cap, dtype=np.int64)
    popped = np.empty(N, dtype=np.int64)
    popkey = np.empty(N)
    tofire = np.empty(N, dtype=np.int64)
    buf = np.empty(N + 1)
    lw = np.empty(cap)
    lwi = np.empty(cap, dtype=np.int64)
    lc = np.empty(cap)
    lci = np.empty(cap, dtype=np.int64)
    count = np.empty(N, dtype=np.int64)
    base = np.empty(N, dtype=np.uint64)
    tol_d = 0.0
    tol_T = 0.0
    for i in range(N):
        base[i] = stream_base(k0, k1, stream, i)
        count[i] = cnt[i]
        tol_d = max(tol_d, TIE_RTOL * d[i])
        tol_T = max(tol_T, TIE_RTOL * T[i])
    nwh = 0
    nch = 0
    wh = 0
    ch = 0
    for i in np.argsort(rem, kind="mergesort"):
        if ph[i] == 1:
            nwh = _q_push(wkey, widx, wh, nwh, mask, True, rem[i], i)
        else:
            nch = _q_push(ckey, cidx, ch, nch, mask, True, rem[i], i)
    R = res_rem.shape[0]
    n_res = 0  # entries seen (plain)
    measuring = not plain or burn_in == 0
    n_burn = 0
    n_done = 0
    if plain:
        for i in range(N):
            if count[i] >= burn_in:
                n_burn += 1
            if count[i] >= cycles:
                n_done += 1
        measuring = n_burn == N
    pw = 0.0
    pc = 0.0
    window = 0.0
    events = 0
    instants = 0
    status = 0
    due = due_io[0]
    s = _ffs_score(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, T, d, rw, rc, lo,
                   hi, buf, horizon, lw, lwi, lc, lci)
    in_basin = s < lo
    if not plain:
        if s >= hi:
            status = 1
        elif s < lo:
            status = 0
    if plain or (lo <= s < hi):
        while True:
            nw_prev = nwh
            n_w_pop = 0
            while nwh > 0 and wkey[wh] - pw <= tol_d:
                popped[n_w_pop] = widx[wh]
                popkey[n_w_pop] = wkey[wh]
                n_w_pop += 1
                wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, True)
            n_pop = n_w_pop
            while nch > 0 and ckey[ch] - pc <= tol_T:
                popped[n_pop] = cidx[ch]
                popkey[n_pop] = ckey[ch]
                n_pop += 1
                ch, nch = _q_pop(ckey, cidx, ch, nch, mask, True)
            n_fire = 0
            ended = 0
            for b in range(n_w_pop):
                i = popped[b]
                if popkey[b] - pw > TIE_RTOL * d[i]:
                    nwh = _q_push(wkey, widx, wh, nwh, mask, True, popkey[b], i)
                    continue
                events += 1
                ended += 1
                w = T[i]
                if sigma[i] > 0.0:
                    w += sigma[i] * stream_normal(base[i], count[i] - 1)
                    if w < 0.0:
                        w = 0.0
                if w <= TIE_RTOL * T[i]:
                    tofire[n_fire] = i
                    n_fire += 1
                    due = pc
                else:
                    nch = _q_push(ckey, cidx, ch, nch, mask, True, pc + w, i)
                    due = min(due, pc + min(w, T[i]))
            for b in range(n_w_pop, n_pop):
                i = popped[b]
                if popkey[b] - pc > TIE_RTOL * T[i]:
                    nch = _q_push(ckey, cidx, ch, nch, mask, True, popkey[b], i)
                    continue
                tofire[n_fire] = i
                n_fire += 1
            for b in range(n_fire):
                i = tofire[b]
                k = count[i]
                count[i] = k + 1
                if plain:
                    if k + 1 == cycles:
                        n_done += 1
                    if k + 1 == burn_in:
                        n_burn += 1
                nwh = _q_push(wkey, widx, wh, nwh, mask, True, pw + d[i], i)
                if measuring and nwh > nw_prev:
                    upcross[nwh] += 1
                events += 1
            nw = nwh
            if plain and not measuring and n_burn == N:
                measuring = True
                for b in range(nw_prev + 1, nw + 1):
                    upcross[b] += 1
            r_w = rw[nw]
            r_c = rc[N - nw]
            to_write = nwh > 0 and (nch == 0 or (wkey[wh] - pw) * r_c <= (ckey[ch] - pc) * r_w)
            if sparse:
                nxt = ckey[ch]
                if to_write:
                    nxt = pc + r_c * ((wkey[wh] - pw) / r_w)
                common = due <= nxt + tol_T
                extra = not plain and ended > 0 and s >= hi - near
            else:
                common = ended > 0
                extra = False
            if common or extra:
                if common:
                    due = np.inf
                s = _ffs_score(wkey, widx, wh, nwh, ckey, cidx, ch, nch, mask, pw, pc, T, d,
                               rw, rc, lo, hi, buf, horizon, lw, lwi, lc, lci)
                if plain:
                    if in_basin and s >= lo:
                        in_basin = False
                        if measuring:
                            # an entry: keep it with probability R / (entries so far)
                            slot = n_res
                            if n_res >= R:
                                slot = np.int64(stream_uniform(res_key, n_res) * (n_res + 1))
                            if slot < R:
                                for b in range(nch):
                                    q = (ch + b) & mask
                                    j = cidx[q]
                                    res_rem[slot, j] = ckey[q] - pc
                                    res_ph[slot, j] = 0
                                    res_cnt[slot, j] = count[j]
                                for b in range(nwh):
                                    q = (wh + b) & mask
                                    j = widx[q]
                                    res_rem[slot, j] = wkey[q] - pw
                                    res_ph[slot, j] = 1
                                    res_cnt[slot, j] = count[j]
                            n_res += 1
                    elif s < lo:
                        in_basin = True
                else:
                    if s >= hi:
                        status = 1
                        break
                    if common and s < lo:
                        status = 0
                        break
            if plain and n_done == N:
                break
            if not plain and events >= max_events:
                status = -1
                break
            instants += 1
            if instants >= _REBASE_EVERY * N:
                instants = 0
                for b in range(nwh):
                    wkey[(wh + b) & mask] -= pw
                for b in range(nch):
                    ckey[(ch + b) & mask] -= pc
                due -= pc
                pw = 0.0
                pc = 0.0
            if to_write:
                dt = (wkey[wh] - pw) / r_w
                pw = wkey[wh]
                pc += r_c * dt
            else:
                dt = (ckey[ch] - pc) / r_c
                pc = ckey[ch]
                pw += r_w * dt
            if measuring:
                occupancy[nw] += dt
                window += dt
    if plain:
        return n_res, events, window
    if status == 1:
        due_io[0] = due - pc
        for b in range(nch):
            q = (ch + b) & mask
            j = cidx[q]
            out_rem[j] = ckey[q] - pc
            out_ph[j] = 0
            out_cnt[j] = count[j]
        for b in range(nwh):
            q = (wh + b) & mask
            j = widx[q]
            out_rem[j] = wkey[q] - pw
            out_ph[j] = 1
            out_cnt[j] = count[j]
    return status, events, window


@njit(cache=CACHE, nogil=True)
def ffs_stage_key(key0, stage):
    """The root word of a stage's clone streams (stage -1: the flux runs)."""
    return mix64(key0 ^ (np.uint64(stage + 2) * _FFS_STAGE_MUL))


@njit(cache=CACHE, nogil=True, parallel=True)
def ffs_flux(T, d, sigma, rw, rc, theta, key0, key1, rep0, lo, burn_in, cycles, occupancy,
             upcross, res_rem, res_ph, res_cnt, entries, events, window, horizon, sparse):
    """The flux runs of replicates rep0 + r, r < R: one fleet each from theta[r]
    (its streams those of fleet rep0 + r under (key0, key1), as in ``simulate``).

    occupancy, upcross (R, N+1); res_* (R, M, N) reservoirs; entries,
    events (R,) int64, window (R,) float64.
    """
    R, N = theta.shape
    rkey = ffs_stage_key(key0, -1)
    dummy_r = np.empty(N)
    dummy_p = np.empty(N, dtype=np.int8)
    dummy_c = np.empty(N, dtype=np.int64)
    for r in prange(R):
        rem = (1.0 - theta[r]) * T
        ph = np.zeros(N, dtype=np.int8)
        cnt = np.zeros(N, dtype=np.int64)
        n, ev, w = ffs_walk(T, d, sigma, rw, rc, rem, ph, cnt, key0, key1, rep0 + r, lo, lo,
                            True, burn_in, cycles, 0, occupancy[r], upcross[r], dummy_r,
                            dummy_p, dummy_c, res_rem[r], res_ph[r], res_cnt[r],
                            stream_base(rkey, key1, rep0 + r, 0), horizon, sparse, 0,
                            np.full(1, np.inf))
        entries[r] = n
        events[r] = ev
        window[r] = w


@njit(cache=CACHE, nogil=True, parallel=True)
def ffs_stage(T, d, sigma, rw, rc, bank_rem, bank_ph, bank_cnt, bank_lo, bank_n, key0, key1,
              stage, rep0, lo, hi, max_events, occupancy, upcross, out_rem, out_ph, out_cnt,
              status, events, horizon, sparse, near, bank_due, out_due):
    """M trials per replicate of one stage, each from a state drawn uniformly
    from its replicate's bank rows bank_lo[r] .. bank_lo[r] + bank_n[r] - 1.

    Trial m of replicate r: start row and streams from ``ffs_stage_key(key0,
    stage)`` with fleet index ((rep0 + r) << 32) + m (a pure function of
    (seed, replicate, stage, m)). Outputs per trial (R, M, ...): occupancy,
    upcross (N+1), the state reached (out_*: N), status and events.
    """
    R, M = status.shape
    skey = ffs_stage_key(key0, stage)
    for g in prange(R * M):
        r = g // M
        m = g % M
        for n in range(occupancy.shape[2]):
            occupancy[r, m, n] = 0.0
            upcross[r, m, n] = 0
        if bank_n[r] == 0:
            status[r, m] = 0
            events[r, m] = 0
            continue
        sid = ((rep0 + r) << 32) + m
        u = stream_uniform(stream_base(skey, key1, sid, 0), 0)
        row = bank_lo[r] + min(np.int64(u * bank_n[r]), bank_n[r] - 1)
        out_due[r, m] = bank_due[row]
        st, ev, _ = ffs_walk(T, d, sigma, rw, rc, bank_rem[row], bank_ph[row], bank_cnt[row],
                             skey, key1 ^ _FLEET_MUL, sid, lo, hi, False, 0, 0, max_events,
                             occupancy[r, m], upcross[r, m], out_rem[r, m], out_ph[r, m],
                             out_cnt[r, m], bank_rem[:1], bank_ph[:1], bank_cnt[:1],
                             np.uint64(0), horizon, sparse, near, out_due[r, m:m + 1])
        status[r, m] = st
        events[r, m] = ev


# -- time-resolved storms, replayed from recorded firings (stormsim.settling) ------------

@njit(cache=CACHE, nogil=True, inline="always")
def _rp_occupy(acc, a, b, n):
    """Add the stretch [a, b) at n writers to busy[block, level] where n >= k
    (acc: tau, levels, busy)."""
    tau, levels, busy = acc
    nb = busy.shape[0]
    if b <= a:
        return
    j0 = min(int(a / tau), nb - 1)             # a, b >= 0: the floor
    j1 = min(int(b / tau), nb - 1)
    for li in range(levels.size):
        if n < levels[li]:
            continue
        for j in range(j0, j1 + 1):
            lo = max(a, j * tau)
            hi = min(b, (j + 1) * tau) if j < nb - 1 else b
            if hi > lo:
                busy[j, li] += hi - lo


@njit(cache=CACHE, nogil=True, inline="always")
def _rp_push(hk, hv, n, key, val):
    """Push (key, val) on the binary min-heap hk, hv of n entries."""
    i = n
    while i > 0:
        up = (i - 1) // 2
        if hk[up] <= key:
            break
        hk[i], hv[i] = hk[up], hv[up]
        i = up
    hk[i], hv[i] = key, val


@njit(cache=CACHE, nogil=True, inline="always")
def _rp_pop(hk, hv, n):
    """Remove the least entry of the heap of n entries (n - 1 remain)."""
    key, val = hk[n - 1], hv[n - 1]
    i, m = 0, n - 1
    while True:
        c = 2 * i + 1
        if c >= m:
            break
        if c + 1 < m and hk[c + 1] < hk[c]:
            c += 1
        if key <= hk[c]:
            break
        hk[i], hv[i] = hk[c], hv[c]
        i = c
    if m > 0:
        hk[i], hv[i] = key, val


@njit(cache=CACHE, nogil=True, inline="always")
def _rp_drain(heap, state, until, job, acc):
    """End the writes that end before ``until`` (not within the tie rule of it).
    heap: the writers' virtual finish and job (a binary heap of n entries);
    state: [t, v (the virtual clock), n, W (the writers' weight)]; job: each
    job's d_i / w_i and w_i, and f (n = 0..N)."""
    size, weight, f = job
    hk, hv = heap
    while state[2] > 0:
        vf, j = hk[0], hv[0]
        n = int(state[2])
        rate = f[n] / state[3]                       # the virtual clock's speed
        if vf >= state[1] + (until - state[0]) * rate - TIE_RTOL * size[j]:
            break
        te = state[0] + (vf - state[1]) / rate
        _rp_occupy(acc, state[0], te, n)
        _rp_pop(hk, hv, n)
        state[0], state[1], state[2] = te, vf, n - 1
        state[3] = state[3] - weight[j] if n > 1 else 0.0


@njit(cache=CACHE, nogil=True, inline="always")
def _rp_instant(heap, state, tf, job, acc):
    """Advance to the firing instant tf; end the writes that end at it (the tie
    rule); return the writers before the instant."""
    size, weight, f = job
    hk, hv = heap
    n = int(state[2])
    vt = state[1] + ((tf - state[0]) * f[n] / state[3] if n > 0 else 0.0)
    _rp_occupy(acc, state[0], tf, n)
    state[0], state[1] = tf, vt
    before = n
    while state[2] > 0 and hk[0] - vt <= TIE_RTOL * size[hv[0]]:
        j = hv[0]
        _rp_pop(hk, hv, int(state[2]))
        state[2] -= 1
        state[3] = state[3] - weight[j] if state[2] > 0 else 0.0
    return before


@njit(cache=CACHE, nogil=True)
def _rp_one_fleet(times, jobs, job, acc, up):
    """One fleet's storms and time at n_w >= k per block, from its firings
    (times sorted, jobs their job), up to the blocks' end."""
    size, weight, f = job
    tau, levels, busy = acc
    horizon = tau * up.shape[0]
    heap = (np.empty(size.size), np.empty(size.size, dtype=np.int64))
    state = np.zeros(4)                            # t, v, n, W
    p, m = 0, times.size
    while p < m and times[p] < horizon:
        tf = times[p]
        _rp_drain(heap, state, tf, job, acc)
        before = _rp_instant(heap, state, tf, job, acc)
        while p < m and times[p] == tf:           # every firing of the instant
            i = jobs[p]
            _rp_push(heap[0], heap[1], int(state[2]), state[1] + size[i], i)
            state[2] += 1
            state[3] += weight[i]
            p += 1
        j = min(int(tf / tau), up.shape[0] - 1)
        for li in range(levels.size):
            if before < levels[li] <= state[2]:
                up[j, li] += 1
    _rp_drain(heap, state, horizon, job, acc)
    _rp_occupy(acc, state[0], horizon, int(state[2]))


@njit(cache=CACHE, nogil=True)
def replay_blocks(firings, job, tau, levels, up, busy, reach):
    """Storms (up) and time at n_w >= k (busy) per block of tau s, per fleet, from
    recorded firings (fleets, N, cycles), and each fleet's reach: the writes
    replayed through the fabric from their firings (``settling.blocks_of_firings``)."""
    for r in range(firings.shape[0]):
        flat = firings[r].ravel()
        order = np.argsort(flat, kind="mergesort")
        jobs = order // firings.shape[2]
        _rp_one_fleet(flat[order], jobs, job, (tau, levels, busy[r]), up[r])
        reach[r] = np.min(firings[r][:, -1])


# -- forward flux sampling on the general dynamics (E1 async, E2 weights, E5 caps) --
#
# A driver of its own, like the base model's above: ``run_fleet_general`` is
# untouched. ``_gffs_run`` integrates the general kernel's dynamics (no
# failures, no durations or waits recorded) with binary heaps only, on a
# fleet state held in two flat arrays, so that a state can be banked,
# continued by any number of clones (each with its own stream base,
# continuing each job's counter of compute intervals drawn), and copied for
# the importance score, which is the same integrator run on the copy with
# the draws replaced (``future``). Layout, cap = N rounded up to a power of 2:
#   sf (float64): wkey, skey, ckey, qtime (cap each), rem (N), then _GF_N scalars;
#   si (int64): widx, sidx, cidx, qidx (cap each), cpos, count, drawn, phase,
#       inflight, parked (N each), then _GI_N scalars.

_GF_PW = 0
_GF_PC = 1
_GF_PS = 2
_GF_W = 3
_GF_T = 4
_GF_DUE = 5
_GF_N = 6
_GI_WH = 0
_GI_NWH = 1
_GI_SH = 2
_GI_NSH = 3
_GI_CH = 4
_GI_NCH = 5
_GI_QH = 6
_GI_QN = 7
_GI_INST = 8
_GI_N = 9

#: ``_gffs_run``'s returns in the real mode (future = 0).
GW_LOOK = 1     # an instant drew a compute interval: look at the score
GW_DONE = 2     # plain: every job has fired ``cycles`` times
GW_MAXEV = 3    # a trial reached max_events
GW_IDLE = 4     # no event left (never in a real fleet)
GW_XLOOK = 5    # an instant drew a compute interval, before the common look is due

#: ctr's slots (int64): events, jobs past burn-in, jobs done, measuring (0/1).
_GC_EV = 0
_GC_BURN = 1
_GC_DONE = 2
_GC_MEAS = 3


def gffs_layout(n: int) -> tuple[int, int, int]:
    """(cap, length of sf, length of si) of a general FFS state of n jobs."""
    cap = 1
    while cap < n:
        cap *= 2
    return cap, 4 * cap + n + _GF_N, 4 * cap + 6 * n + _GI_N


@njit(cache=CACHE, nogil=True)
def gffs_consts(T, d, f, rc, weight, snap, slow):
    """The general kernel's per-job and per-count constants, computed as
    ``run_fleet_general`` computes them: jobp (6, N) rows dw, stretch,
    tol_w, tol_c, tol_cs, tol_s; tabs (4, N + 1) rows 1 / f, per_w (n / f),
    r_w (f / n), 1 / r_c; tol3 (3,) the clocks' tolerances; uniform."""
    N = T.shape[0]
    uniform = True
    for i in range(N):
        if weight[i] != weight[0]:
            uniform = False
    tabs = np.zeros((4, N + 1))
    for n in range(N + 1):
        tabs[3, n] = 1.0 / rc[n]
        if n > 0:
            tabs[0, n] = 1.0 / f[n]
            tabs[2, n] = f[n] / n
            tabs[1, n] = 1.0 / tabs[2, n]
    jobp = np.empty((6, N))
    tol3 = np.zeros(3)
    for i in range(N):
        jobp[0, i] = d[i] if uniform else d[i] / weight[i]
        jobp[1, i] = 1.0 / (1.0 - slow[i]) if slow[i] < 1.0 else 1.0
        jobp[2, i] = TIE_RTOL * jobp[0, i]
        jobp[3, i] = TIE_RTOL * T[i]
        jobp[4, i] = jobp[3, i] * jobp[1, i]
        jobp[5, i] = TIE_RTOL * snap[i]
        tol3[0] = max(tol3[0], jobp[2, i])
        tol3[1] = max(tol3[1], jobp[4, i])
        tol3[2] = max(tol3[2], jobp[5, i])
    return jobp, tabs, tol3, uniform


@njit(cache=CACHE, nogil=True)
def _gffs_run(T, sigma, f, rc, weight, snap, slow, skip, is_async, max_writers, jobp, tabs, tol3,
              uniform, base, sf, si, popped, popkey, stack, future, advance, hi, budget, plain,
              burn_in, cycles, max_events, occupancy, upcross, ctr, window, look):
    """Integrate the general dynamics (``run_fleet_general`` without failures)
    on the state (sf, si), event to event, with the same arithmetic in the
    same order (heaps for every queue), so from a launch it gives
    ``run_fleet_general``'s occupancy and up-crossings with ring_w = ring_c =
    ring_s = False, bit for bit.

    advance: first move to the next instant (a state saved after its instant
    was applied); False: apply the present instant first (a launch).

    future = 0 (real): compute intervals drawn from the job's stream
    ``base[i]`` at its counter ``drawn[i]``. The score can rise only at an
    instant that draws a compute interval (a firing, a skip, a queue entry).
    look = 0: returns GW_LOOK after every such instant. look = 1 (once a
    cycle): returns GW_LOOK (and sets ``due`` to +inf) only after the last
    instant before the first compute interval drawn since then could end;
    look = 2: the same, and GW_XLOOK after the other instants that draw.
    ``due`` (in the state, on the compute clock) is the earliest end of an
    interval drawn since the last common look, at its draw or at its mean:
    pc + min(w, T_i) at its draw, stretched or not (a slowdown only delays a
    compute interval's end), so until the instant before it the fleet
    follows the mean future walked at that look exactly. Also GW_DONE
    (plain, every job fired ``cycles`` times), GW_MAXEV (ctr's events reached
    max_events) or GW_IDLE. Measures (occupancy, upcross, window[0]) while
    ctr[_GC_MEAS]; plain: measuring starts once every job has fired burn_in
    times, with the opening instant's crossings, as ``run_fleet_general``.

    future = 1 (the committed future): every compute interval started from
    here never ends (+inf: the job still counts as computing);
    future = 2 (the mean future): each lasts exactly T_i. Returns the
    largest n_w seen from the present state on, stopping once it is >= hi,
    after the instant at which ``budget`` firings have been made, or when no
    event is left. Nothing is measured.
    """
    N = T.shape[0]
    cap = (sf.shape[0] - N - _GF_N) // 4
    mask = cap - 1
    wkey = sf[0:cap]
    skey = sf[cap:2 * cap]
    ckey = sf[2 * cap:3 * cap]
    qtime = sf[3 * cap:4 * cap]
    rem = sf[4 * cap:4 * cap + N]
    of = 4 * cap + N
    widx = si[0:cap]
    sidx = si[cap:2 * cap]
    cidx = si[2 * cap:3 * cap]
    qidx = si[3 * cap:4 * cap]
    j0 = 4 * cap
    cpos = si[j0:j0 + N]
    count = si[j0 + N:j0 + 2 * N]
    drawn = si[j0 + 2 * N:j0 + 3 * N]
    phase = si[j0 + 3 * N:j0 + 4 * N]
    inflight = si[j0 + 4 * N:j0 + 5 * N]
    parked = si[j0 + 5 * N:j0 + 6 * N]
    oi = j0 + 6 * N
    pw = sf[of + _GF_PW]
    pc = sf[of + _GF_PC]
    ps = sf[of + _GF_PS]
    W = sf[of + _GF_W]
    t = sf[of + _GF_T]
    due = sf[of + _GF_DUE]
    wh = si[oi + _GI_WH]
    nwh = si[oi + _GI_NWH]
    sh = si[oi + _GI_SH]
    nsh = si[oi + _GI_NSH]
    ch = si[oi + _GI_CH]
    nch = si[oi + _GI_NCH]
    qh = si[oi + _GI_QH]
    qn = si[oi + _GI_QN]
    instants = si[oi + _GI_INST]
    dw = jobp[0]
    stretch = jobp[1]
    tol_w = jobp[2]
    tol_c = jobp[3]
    tol_cs = jobp[4]
    tol_s = jobp[5]
    inv_f = tabs[0]
    per_tab = tabs[1]
    rw_tab = tabs[2]
    inv_rc = tabs[3]
    tw = tol3[0]
    tc = tol3[1]
    ts = tol3[2]
    capped = max_writers < N
    events = ctr[_GC_EV]
    n_burn = ctr[_GC_BURN]
    n_done = ctr[_GC_DONE]
    measuring = ctr[_GC_MEAS] != 0
    best = nwh
    fired = 0
    result = 0
    while True:
        if advance:
            instants += 1
            if instants >= _REBASE_EVERY * N:
                instants = 0
                W = 0.0
                for b in range(nwh):
                    q = (wh + b) & mask
                    wkey[q] -= pw
                    W += weight[widx[q]]
                if nwh == 1:
                    W = weight[widx[wh]]
                for b in range(nch):
                    ckey[(ch + b) & mask] -= pc
                for b in range(nsh):
                    skey[(sh + b) & mask] -= ps
                due -= pc
                pw = 0.0
                pc = 0.0
                ps = 0.0
            nw = nwh
            r_w = 0.0
            per_w = 0.0
            if nwh > 0:
                if uniform:
                    r_w = rw_tab[nw]
                    per_w = per_tab[nw]
                else:
                    r_w = f[nw] / W
                    per_w = W * inv_f[nw]
            r_c = rc[nch]
            dtw = (wkey[wh] - pw) * per_w if nwh > 0 else np.inf
            dtc = (ckey[ch] - pc) * inv_rc[nch] if nch > 0 else np.inf
            dts = skey[sh] - ps if nsh > 0 else np.inf
            dt = min(dtw, min(dtc, dts))
            if dt == np.inf:
                result = GW_IDLE
                break
            pw = wkey[wh] if dt == dtw else pw + r_w * dt
            pc = ckey[ch] if dt == dtc else pc + r_c * dt
            ps = skey[sh] if dt == dts else ps + dt
            if measuring:
                occupancy[nw] += dt
                window[0] += dt
            t += dt
        advance = True
        nw_prev = nwh
        n_fire = 0
        top = 0
        drew = 0
        # 1. Persists (and blocking writes) that end now; snapshot candidates popped first.
        n_pop = 0
        while nwh > 0 and wkey[wh] - pw <= tw:
            popped[n_pop] = widx[wh]
            popkey[n_pop] = wkey[wh]
            n_pop += 1
            wh, nwh = _q_pop(wkey, widx, wh, nwh, mask, False)
        n_wpop = n_pop
        while nsh > 0 and skey[sh] - ps <= ts:
            popped[n_pop] = sidx[sh]
            popkey[n_pop] = skey[sh]
            n_pop += 1
            sh, nsh = _q_pop(skey, sidx, sh, nsh, mask, False)
        for b in range(n_wpop):
            i = popped[b]
            if popkey[b] - pw > tol_w[i]:
                nwh = _q_push(wkey, widx, wh, nwh, mask, False, popkey[b], i)
                continue
            events += 1
            inflight[i] = 0
            W -= weight[i]
            if phase[i] == _WAIT:
                if snap[i] > 0.0:
                    phase[i] = _SNAPSHOT
                    nsh = _q_push(skey, sidx, sh, nsh, mask, False, ps + snap[i], i)
                else:
                    stack[top] = 2 * i + 1
                    top += 1
            elif parked[i] != 0:
                parked[i] = 0
                nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, False, pc + rem[i], i)
            elif slow[i] > 0.0 and phase[i] == _COMPUTE:
                cp = cpos[i]
                _iq_decrease(ckey, cidx, cpos, ch, mask, False, i,
                             pc + (ckey[cp] - pc) * (1.0 - slow[i]))
        # 2. Snapshots that end now: firings.
        for b in range(n_wpop, n_pop):
            i = popped[b]
            if popkey[b] - ps > tol_s[i]:
                nsh = _q_push(skey, sidx, sh, nsh, mask, False, popkey[b], i)
                continue
            stack[top] = 2 * i + 1
            top += 1
        # 3. Checkpoints that fall due now.
        n_pop = 0
        while nch > 0 and ckey[ch] - pc <= tc:
            popped[n_pop] = cidx[ch]
            popkey[n_pop] = ckey[ch]
            n_pop += 1
            ch, nch = _iq_pop(ckey, cidx, cpos, ch, nch, mask, False)
        for b in range(n_pop):
            i = popped[b]
            if popkey[b] - pc > (tol_cs[i] if inflight[i] != 0 else tol_c[i]):
                nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, False, popkey[b], i)
                continue
            if snap[i] > 0.0 and inflight[i] == 0:
                events += 1
                phase[i] = _SNAPSHOT
                nsh = _q_push(skey, sidx, sh, nsh, mask, False, ps + snap[i], i)
                continue
            stack[top] = 2 * i
            top += 1
        # 4. What they set off at this same instant.
        while top > 0:
            top -= 1
            i = stack[top] >> 1
            if capped and stack[top] & 1:
                p = qh + qn
                while p > qh and qtime[(p - 1) & mask] == t and qidx[(p - 1) & mask] > i:
                    qidx[p & mask] = qidx[(p - 1) & mask]
                    qtime[p & mask] = qtime[(p - 1) & mask]
                    p -= 1
                qidx[p & mask] = i
                qtime[p & mask] = t
                qn += 1
                inflight[i] = 1
                phase[i] = _COMPUTE
            elif stack[top] & 1:
                events += 1
                k = count[i]
                count[i] = k + 1
                if k + 1 == cycles:
                    n_done += 1
                if k + 1 == burn_in:
                    n_burn += 1
                n_fire += 1
                inflight[i] = 1
                W += weight[i]
                nwh = _q_push(wkey, widx, wh, nwh, mask, False, pw + dw[i], i)
                if measuring and nwh > nw_prev:
                    upcross[nwh] += 1
                phase[i] = _COMPUTE
            elif inflight[i] != 0:
                if is_async[i]:
                    events += 1
                if not skip[i]:
                    phase[i] = _WAIT
                    continue
            elif snap[i] > 0.0:
                events += 1
                phase[i] = _SNAPSHOT
                nsh = _q_push(skey, sidx, sh, nsh, mask, False, ps + snap[i], i)
                continue
            else:
                stack[top] = 2 * i + 1
                top += 1
                continue
            # A new compute interval (after a firing, a queue entry or a skip).
            drew += 1
            if future == 0:
                w = T[i]
                if sigma[i] > 0.0:
                    w += sigma[i] * stream_normal(base[i], drawn[i])
                    if w < 0.0:
                        w = 0.0
            elif future == 1:
                w = np.inf
            else:
                w = T[i]
            drawn[i] += 1
            if future == 0:
                due = min(due, pc + min(w, T[i]))
            if w <= tol_c[i]:
                stack[top] = 2 * i
                top += 1
            elif slow[i] >= 1.0:
                parked[i] = 1
                rem[i] = w
            else:
                nch = _iq_push(ckey, cidx, cpos, ch, nch, mask, False, pc + w * stretch[i], i)
        if capped:
            while qn > 0 and nwh < max_writers:
                i = qidx[qh]
                qh = (qh + 1) & mask
                qn -= 1
                events += 1
                k = count[i]
                count[i] = k + 1
                if k + 1 == cycles:
                    n_done += 1
                if k + 1 == burn_in:
                    n_burn += 1
                n_fire += 1
                W += weight[i]
                nwh = _q_push(wkey, widx, wh, nwh, mask, False, pw + dw[i], i)
                if measuring and nwh > nw_prev:
                    upcross[nwh] += 1
            for b in range(qn - 1, -1, -1):
                if qtime[(qh + b) & mask] != t:
                    break
                events += 1
        nw = nwh
        if nw == 0:
            W = 0.0
        elif nw == 1:
            W = weight[widx[wh]]
        if future != 0:
            fired += n_fire
            if nw > best:
                best = nw
                if best >= hi:
                    break
            if fired >= budget:
                break
            continue
        if plain and not measuring and n_burn == N:
            measuring = True
            for b in range(nw_prev + 1, nw + 1):
                upcross[b] += 1
        if plain and n_done == N:
            result = GW_DONE
            break
        if drew > 0 and look == 0:
            result = GW_LOOK
            break
        if look != 0 and due < np.inf:
            # the next instant's compute clock: is an interval drawn since the
            # common look due there (within the pops' tolerance)?
            nxt = pc
            if nch > 0:
                dtw = np.inf
                if nwh > 0:
                    dtw = (wkey[wh] - pw) * (per_tab[nwh] if uniform else W * inv_f[nwh])
                dtc = (ckey[ch] - pc) * inv_rc[nch]
                dts = skey[sh] - ps if nsh > 0 else np.inf
                nxt = ckey[ch] if dtc <= min(dtw, dts) else pc + rc[nch] * min(dtw, dts)
            if due <= nxt + 2.0 * tc:
                due = np.inf
                result = GW_LOOK
                break
        if drew > 0 and look == 2:
            result = GW_XLOOK
            break
        if events >= max_events:
            result = GW_MAXEV
            break
    sf[of + _GF_PW] = pw
    sf[of + _GF_PC] = pc
    sf[of + _GF_PS] = ps
    sf[of + _GF_W] = W
    sf[of + _GF_T] = t
    sf[of + _GF_DUE] = due
    si[oi + _GI_WH] = wh
    si[oi + _GI_NWH] = nwh
    si[oi + _GI_SH] = sh
    si[oi + _GI_NSH] = nsh
    si[oi + _GI_CH] = ch
    si[oi + _GI_NCH] = nch
    si[oi + _GI_QH] = qh
    si[oi + _GI_QN] = qn
    si[oi + _GI_INST] = instants
    ctr[_GC_EV] = events
    ctr[_GC_BURN] = n_burn
    ctr[_GC_DONE] = n_done
    ctr[_GC_MEAS] = 1 if measuring else 0
    if future != 0:
        return best
    return result


@njit(cache=CACHE, nogil=True)
def _gffs_call(g, base, sf, si, popped, popkey, stack, future, advance, hi, budget, plain, burn_in,
               cycles, max_events, occupancy, upcross, ctr, window, look=0):
    """``_gffs_run`` with the fleet's arrays from the tuple g (``gffs_walk``)."""
    T, sigma, f, rc, weight, snap, slow, skip, is_async, max_writers, jobp, tabs, tol3, uniform = g
    return _gffs_run(T, sigma, f, rc, weight, snap, slow, skip, is_async, max_writers, jobp,
                     tabs, tol3, uniform, base, sf, si, popped, popkey, stack, future, advance, hi,
                     budget, plain, burn_in, cycles, max_events, occupancy, upcross, ctr, window,
                     look)


#: A bound no walk reaches (events, firings).
_GFFS_NEVER = np.int64(1) << 62


@njit(cache=CACHE, nogil=True)
def gffs_score(g, base, sf, si, sf2, si2, popped, popkey, stack, ctr2, advance, hi, horizon,
               none):
    """The importance score of the state (sf, si), to class precision (>= hi
    stops the walk): the largest n_w of its predicted future, integrated on
    the copy (sf2, si2) by ``_gffs_run``. horizon = 0: the committed future
    (every compute interval drawn from now on never ends, so the persists in
    flight or queued, the snapshots under way, the waits and the compute
    intervals already drawn play out and nothing more fires). horizon = H >=
    1: the mean future (each later interval lasts exactly T_i), stopped
    after the instant at which (H + 1) N firings have been made. Either way
    the score is >= n_w and is a function of the state alone. ctr2 (4,)
    int64 and none (an empty float64 array) are the caller's scratch: no
    allocation per look."""
    N = g[0].shape[0]
    sf2[:] = sf
    si2[:] = si
    for c in range(ctr2.shape[0]):
        ctr2[c] = 0
    future = 1 if horizon == 0 else 2
    budget = _GFFS_NEVER if horizon == 0 else (horizon + 1) * N
    return _gffs_call(g, base, sf2, si2, popped, popkey, stack, future, advance, hi, budget, False,
                      0, 0, _GFFS_NEVER, none, ctr2[:0], ctr2, none)


@njit(cache=CACHE, nogil=True)
def gffs_save(sf, si, out_f, out_i):
    """Bank the state (sf, si) in (out_f, out_i), its clocks moved to 0 (every
    key made relative, wall time and the queue's entry times from its t)."""
    N = (si.shape[0] - sf.shape[0] + _GF_N - _GI_N) // 5
    cap = (sf.shape[0] - N - _GF_N) // 4
    mask = cap - 1
    of = 4 * cap + N
    oi = 4 * cap + 6 * N
    out_f[:] = sf
    out_i[:] = si
    for b in range(si[oi + _GI_NWH]):
        out_f[(si[oi + _GI_WH] + b) & mask] -= sf[of + _GF_PW]
    for b in range(si[oi + _GI_NSH]):
        out_f[cap + ((si[oi + _GI_SH] + b) & mask)] -= sf[of + _GF_PS]
    for b in range(si[oi + _GI_NCH]):
        out_f[2 * cap + ((si[oi + _GI_CH] + b) & mask)] -= sf[of + _GF_PC]
    for b in range(si[oi + _GI_QN]):
        out_f[3 * cap + ((si[oi + _GI_QH] + b) & mask)] -= sf[of + _GF_T]
    out_f[of + _GF_PW] = 0.0
    out_f[of + _GF_PC] = 0.0
    out_f[of + _GF_PS] = 0.0
    out_f[of + _GF_T] = 0.0
    out_f[of + _GF_DUE] -= sf[of + _GF_PC]
    out_i[oi + _GI_INST] = 0


@njit(cache=CACHE, nogil=True)
def gffs_launch(T, theta, sf, si):
    """The launch state: every job computing (1 - theta_i) T_i, pushed in the
    order ``run_fleet_general`` pushes them, no persist in flight."""
    N = T.shape[0]
    cap = (sf.shape[0] - N - _GF_N) // 4
    mask = cap - 1
    sf[:] = 0.0
    si[:] = 0
    first = (1.0 - theta) * T
    nch = 0
    for i in np.argsort(first):
        nch = _iq_push(sf[2 * cap:3 * cap], si[2 * cap:3 * cap], si[4 * cap:4 * cap + N], 0, nch,
                       mask, False, first[i], i)
    si[4 * cap + 6 * N + _GI_NCH] = nch
    sf[4 * cap + N + _GF_DUE] = np.inf


@njit(cache=CACHE, nogil=True)
def gffs_walk(g, sf, si, base, lo, hi, plain, burn_in, cycles, max_events, occupancy, upcross,
              out_f, out_i, res_f, res_i, res_key, horizon, advance, sparse, near):
    """Continue one fleet from the state (sf, si; changed in place) with the
    stream bases ``base`` (job i's compute intervals read at its counter of
    intervals drawn, continued from the state's), looking at the score
    (``gffs_score``), which can rise only at an instant that draws a compute
    interval (a firing, a queue entry, a skip). sparse False: at every such
    instant. sparse True: a *common* look (basin and interface) only after
    the last instant before the first interval drawn since the previous
    common look could end (``_gffs_run``'s ``due``, in the state, so it
    travels with a banked state); until then the fleet follows the future
    walked at that look, so n_w stays at or below its score. A trial whose
    last score was >= hi - near also looks at every instant that draws, for
    the interface only. The score can fall where a persist ends, not looked
    at: a return to the basin is seen at the next common look, the same rule
    in flux runs and trials. advance: False for a launch (its instant t = 0
    is applied first).

    plain False (a trial): occupancy and upcross accumulate the segment from
    the start to the stop (the stopping instant's up-crossings included);
    stops at the first look with score >= hi (status 1, the state banked in
    out_f, out_i), score < lo (status 0) or after max_events (status -1).

    plain True (a flux run): runs until every job has fired ``cycles``
    times, measuring once every job has fired ``burn_in`` times; each entry
    into {score >= lo} from the basin in the measured window is counted and
    kept in the reservoir res_f, res_i (algorithm R, uniforms from stream
    ``res_key``). Status: the entries.

    Returns (status, events, measured time).
    """
    N = g[0].shape[0]
    popped = np.empty(N, dtype=np.int64)
    popkey = np.empty(N)
    stack = np.empty(N, dtype=np.int64)
    sf2 = np.empty_like(sf)
    si2 = np.empty_like(si)
    ctr2 = np.zeros(4, dtype=np.int64)
    ctr = np.zeros(4, dtype=np.int64)
    window = np.zeros(1)
    none = np.empty(0)
    cap = (sf.shape[0] - N - _GF_N) // 4
    count = si[4 * cap + N:4 * cap + 2 * N]
    if plain:
        for i in range(N):
            if count[i] >= burn_in:
                ctr[_GC_BURN] += 1
            if count[i] >= cycles:
                ctr[_GC_DONE] += 1
        ctr[_GC_MEAS] = 1 if ctr[_GC_BURN] == N else 0
    else:
        ctr[_GC_MEAS] = 1
    R = res_f.shape[0]
    n_res = 0
    s = gffs_score(g, base, sf, si, sf2, si2, popped, popkey, stack, ctr2, advance, hi, horizon,
                   none)
    in_basin = s < lo
    status = 0
    if not plain and s >= hi:
        status = 1
    if plain or (lo <= s < hi):
        while True:
            look = 0
            if sparse:
                look = 2 if not plain and s >= hi - near else 1
            r = _gffs_call(g, base, sf, si, popped, popkey, stack, 0, advance, hi, _GFFS_NEVER,
                           plain, burn_in, cycles, max_events, occupancy, upcross, ctr, window,
                           look)
            advance = True
            if r == GW_DONE or r == GW_IDLE:
                break
            if r == GW_MAXEV:
                status = -1
                break
            s = gffs_score(g, base, sf, si, sf2, si2, popped, popkey, stack, ctr2, True, hi, horizon,
                           none)
            if plain:
                if in_basin and s >= lo:
                    in_basin = False
                    if ctr[_GC_MEAS] != 0:
                        slot = n_res
                        if n_res >= R:
                            slot = np.int64(stream_uniform(res_key, n_res) * (n_res + 1))
                        if slot < R:
                            gffs_save(sf, si, res_f[slot], res_i[slot])
                        n_res += 1
                elif s < lo:
                    in_basin = True
            elif s >= hi:
                status = 1
                break
            elif s < lo and r == GW_LOOK:
                status = 0
                break
    if plain:
        return n_res, ctr[_GC_EV], window[0]
    if status == 1:
        gffs_save(sf, si, out_f, out_i)
    return status, ctr[_GC_EV], window[0]


@njit(cache=CACHE, nogil=True, parallel=True)
def gffs_flux(g, theta, key0, key1, rep0, lo, burn_in, cycles, occupancy, upcross, res_f, res_i,
              entries, events, window, horizon, sparse):
    """``ffs_flux`` on the general dynamics: the flux run of replicate rep0 + r,
    r < R, one fleet from theta[r] with the streams of fleet rep0 + r under
    (key0, key1), as in ``simulate``. occupancy, upcross (R, N+1); res_f,
    res_i (R, M, len sf / len si) reservoirs; entries, events (R,) int64,
    window (R,)."""
    R, N = theta.shape
    rkey = ffs_stage_key(key0, -1)
    nf = res_f.shape[2]
    ni = res_i.shape[2]
    for r in prange(R):
        sf = np.empty(nf)
        si = np.empty(ni, dtype=np.int64)
        gffs_launch(g[0], theta[r], sf, si)
        base = np.empty(N, dtype=np.uint64)
        for i in range(N):
            base[i] = stream_base(key0, key1, rep0 + r, i)
        n, ev, w = gffs_walk(g, sf, si, base, lo, lo, True, burn_in, cycles, _GFFS_NEVER,
                             occupancy[r], upcross[r], sf[:0], si[:0], res_f[r], res_i[r],
                             stream_base(rkey, key1, rep0 + r, 0), horizon, False, sparse, 0)
        entries[r] = n
        events[r] = ev
        window[r] = w


@njit(cache=CACHE, nogil=True, parallel=True)
def gffs_stage(g, bank_f, bank_i, bank_lo, bank_n, key0, key1, stage, rep0, lo, hi, max_events,
               occupancy, upcross, out_f, out_i, status, events, horizon, sparse, near):
    """``ffs_stage`` on the general dynamics: M trials per replicate, trial m
    of replicate r from a bank row drawn uniformly from its replicate's rows
    bank_lo[r] .. + bank_n[r] - 1, with its row and streams a pure function
    of (seed, stage, replicate, m) (the base model's keys)."""
    R, M = status.shape
    N = g[0].shape[0]
    skey = ffs_stage_key(key0, stage)
    nf = bank_f.shape[1]
    ni = bank_i.shape[1]
    for gi in prange(R * M):
        r = gi // M
        m = gi % M
        for n in range(occupancy.shape[2]):
            occupancy[r, m, n] = 0.0
            upcross[r, m, n] = 0
        if bank_n[r] == 0:
            status[r, m] = 0
            events[r, m] = 0
            continue
        sid = ((rep0 + r) << 32) + m
        u = stream_uniform(stream_base(skey, key1, sid, 0), 0)
        row = bank_lo[r] + min(np.int64(u * bank_n[r]), bank_n[r] - 1)
        sf = np.empty(nf)
        si = np.empty(ni, dtype=np.int64)
        sf[:] = bank_f[row]
        si[:] = bank_i[row]
        base = np.empty(N, dtype=np.uint64)
        for i in range(N):
            base[i] = stream_base(skey, key1 ^ _FLEET_MUL, sid, i)
        st, ev, _ = gffs_walk(g, sf, si, base, lo, hi, False, 0, 0, max_events, occupancy[r, m],
                              upcross[r, m], out_f[r, m], out_i[r, m], bank_f[:0], bank_i[:0],
                              np.uint64(0), horizon, True, sparse, near)
        status[r, m] = st
        events[r, m] = ev

"""Fleet: a validated, immutable description of N jobs sharing storage and power.

Units follow MODEL.md: the storage's aggregate bandwidth is 1 and a job's full
compute rate is 1, so T (compute work per cycle) and d (checkpoint volume) are
both in seconds at full rate.
"""
from __future__ import annotations

import inspect
import math
from numbers import Real
from typing import Sequence, Union

import numpy as np

from .._format import fmt_array
from .._args import check_int, keywords_of
from .._args import check_jobs as _check_jobs
from .._args import job_array as _job_array
from ..errors import SpecError
from .cost import FLEET_BYTES_PER_JOB, check_memory
from .jobcsv import read_jobs
from .units import fleet_arguments

__all__ = ["Fleet", "SpecError", "canonical_throughput", "throughput_label", "throughput_table"]

ThroughputSpec = Union[str, tuple, Sequence[float]]


#: What a throughput rule may be, in every error about one.
THROUGHPUT_RULE = ("'fair', 'ideal', 'power:ALPHA' (or ('power', ALPHA), {'power': ALPHA}) "
                   "with ALPHA a number in [0, 1], or a sequence f(1..N)")


def canonical_throughput(spec: ThroughputSpec):
    """A throughput rule in its one canonical form: "fair", "ideal",
    ("power", alpha) or a tuple of floats f(1..N) (its values are checked
    against N by :func:`throughput_table`).

    Accepts every spelling of the model and the sweep file: "fair", "ideal",
    "power:ALPHA", ("power", ALPHA), {"power": ALPHA}, a sequence of numbers.
    Raises SpecError whose message is the rule broken (no "throughput = ..."
    prefix: the caller names where the value came from).
    """
    alpha = None
    if isinstance(spec, str):
        s = spec.strip().lower()
        if s in ("fair", "ideal"):
            return s
        if not s.startswith("power:"):
            raise SpecError(f"must be {THROUGHPUT_RULE}")
        alpha = s.split(":", 1)[1].strip()
        try:
            alpha = float(alpha)
        except ValueError:
            raise SpecError(f"power needs a number ALPHA in [0, 1], e.g. 'power:0.5'; got "
                            f"{alpha!r}") from None
    elif isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "power":
        alpha = spec[1]
    elif isinstance(spec, dict):
        if set(spec) != {"power"}:
            raise SpecError("a table must be {power = ALPHA} with ALPHA a number in [0, 1]")
        alpha = spec["power"]
    if alpha is not None:
        if (not isinstance(alpha, Real) or isinstance(alpha, bool)
                or not 0.0 <= float(alpha) <= 1.0):
            raise SpecError(f"power alpha = {alpha!r}: alpha must be a number in [0, 1]")
        return ("power", float(alpha))
    if isinstance(spec, (str, bytes)) or not np.iterable(spec):
        raise SpecError(f"must be {THROUGHPUT_RULE}")
    try:
        table = np.array(spec, dtype=np.float64)
    except (TypeError, ValueError):
        raise SpecError(f"must be {THROUGHPUT_RULE}") from None
    if table.ndim != 1 or table.size == 0:
        raise SpecError(f"a throughput table has shape {table.shape}: must list f(1), ..., f(N)")
    return tuple(float(x) for x in table)


def throughput_label(spec) -> str:
    """The label of a canonical rule in a sweep's parameter table: 'fair',
    'ideal', 'power:ALPHA' (ALPHA as repr(float)) or 'table'."""
    if isinstance(spec, str):
        return spec
    if len(spec) == 2 and spec[0] == "power":
        return f"power:{spec[1]!r}"
    return "table"


def throughput_table(spec: ThroughputSpec, n_jobs: int) -> tuple[np.ndarray, object]:
    """Aggregate storage throughput f(n), n = 0..N, for a rule of MODEL.md.

    Parameters
    ----------
    spec : "fair" | "ideal" | "power:alpha" | ("power", alpha) | sequence of f(1..N)
    n_jobs : N

    Returns
    -------
    f : float64 (N + 1,), f[0] = 0 (unused), f[1] = 1
    normalized : the rule in canonical form ("fair", "ideal", ("power", a) or a tuple)
    """
    n_jobs = check_int("n_jobs", n_jobs, 1)
    try:
        canon = canonical_throughput(spec)
    except SpecError as exc:
        raise SpecError(f"throughput = {fmt_array(spec)}: {exc}") from None
    n = np.arange(n_jobs + 1, dtype=np.float64)
    if canon == "fair":
        f = np.ones(n_jobs + 1)
    elif canon == "ideal":
        f = n.copy()
    elif canon[0] == "power":
        f = n ** canon[1]
    else:
        table = np.array(canon, dtype=np.float64)
        if table.size != n_jobs:
            raise SpecError(f"throughput table has shape {table.shape}: must give f(n) for "
                            f"n = 1..N, N = {n_jobs} values")
        if not np.all(np.isfinite(table)):
            raise SpecError(f"throughput table = {fmt_array(table)}: every f(n) must be finite")
        if table[0] != 1.0:
            raise SpecError(f"throughput table f(1) = {float(table[0])!r}: must be exactly 1 "
                            "(one writer gets the whole bandwidth)")
        bad = np.nonzero((table <= 0.0) | (table > n[1:]))[0]
        if bad.size:
            j = int(bad[0]) + 1
            raise SpecError(f"throughput table f({j}) = {float(table[j - 1])!r}: must be in "
                            f"(0, {j}] (0 < f(n) <= n)")
        return np.concatenate([[0.0], table]), canon
    f[0] = 0.0
    return f, canon


#: Checkpoint modes (MODEL.md E1) and the rules for a checkpoint that falls
#: due while the job's previous persist is still in flight.
CHECKPOINT_MODES = ("blocking", "async")
ON_BUSY_RULES = ("block", "skip")

#: The default of every asynchronous option: a fleet that leaves them all
#: here is a base-model fleet (MODEL.md: the paper's model, bit for bit).
ASYNC_DEFAULTS = {"snapshot": 0.0, "slowdown": 0.0, "on_busy": "block"}


def _job_choice(name: str, value, n: int, allowed: tuple[str, ...]) -> np.ndarray:
    """A string, or one string per job, from ``allowed`` -> read-only (N,) array."""
    if isinstance(value, str):
        if value not in allowed:
            raise SpecError(f"{name} = {value!r}: must be one of {', '.join(repr(a) for a in allowed)}")
        return np.full(n, value, dtype=f"<U{max(len(a) for a in allowed)}")
    else:
        try:
            values = list(value)
        except TypeError:
            raise SpecError(f"{name} = {value!r}: must be one of "
                            f"{', '.join(repr(a) for a in allowed)}, or one per job") from None
        if len(values) != n:
            raise SpecError(f"{name} has {len(values)} values but the fleet has {n} jobs: "
                            "lengths must match")
    for i, v in enumerate(values):
        if not isinstance(v, str) or v not in allowed:
            where = name if isinstance(value, str) else f"{name}[{i}]"
            raise SpecError(f"{where} = {v!r}: must be one of {', '.join(repr(a) for a in allowed)}")
    return np.array(values, dtype=f"<U{max(len(a) for a in allowed)}")


def _check_cap(cap) -> float:
    """The fabric's cap as a float > 0 (inf: uncapped)."""
    if isinstance(cap, (bool, np.bool_)) or not isinstance(cap, Real):
        raise SpecError(f"cap = {cap!r}: must be a number > 0 (inf = uncapped)")
    cap_f = float(cap)
    if math.isnan(cap_f) or cap_f <= 0.0:
        raise SpecError(f"cap = {cap!r}: must be > 0 (inf = uncapped)")
    return cap_f


def _check_async_options(given: dict, is_async: np.ndarray) -> None:
    """Asynchronous options on blocking jobs: an error, never silently ignored.
    ``given`` maps each option to (its value as given, its per-job array); a
    scalar given to a mixed fleet is reset, in the array, to its default on
    the blocking jobs."""
    for name, (raw, arr) in given.items():
        default = ASYNC_DEFAULTS[name]
        off = arr != default
        if not off.any():
            continue
        if not is_async.any():
            raise SpecError(
                f"{name} = {fmt_array(raw)}: an option of asynchronous checkpoints, but every job "
                "has checkpoint = 'blocking'. Set checkpoint = 'async' (for all jobs or per "
                f"job), or leave {name} at its default {default!r}")
        if np.ndim(raw) == 0:  # a scalar applies to the async jobs of a mixed fleet
            arr[~is_async] = default
            continue
        bad = np.nonzero(off & ~is_async)[0]
        if bad.size:
            i = int(bad[0])
            raise SpecError(
                f"{name}[{i}] = {arr[i].item()!r} but job {i} has checkpoint = 'blocking': "
                f"asynchronous options need an async job; give it {default!r} or make it async")


def _writer_cap(value, n: int) -> int:
    """MODEL.md E5's K from ``max_writers``: an integer in 1..N, None for N."""
    if value is None:
        return n
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise SpecError(f"max_writers = {value!r}: must be an integer in 1..N = {n} "
                        "(or None: no cap)")
    if not 1 <= int(value) <= n:
        raise SpecError(f"max_writers = {value!r}: must be in 1..N = {n} (at most N jobs "
                        "write at once; None: no cap)")
    return int(value)


def _check_failures(mtbf, restart, outage_mtbf, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """MODEL.md E8's M_i (> 0, inf: never), R_i (finite, >= 0) and M_0 (> 0, inf: none)."""
    mtbf_arr = _job_array("mtbf", mtbf, n)
    _check_jobs("mtbf", mtbf_arr, mtbf_arr > 0.0,
                "> 0 (mean time between failures, s of wall time; inf: never fails)")
    restart_arr = _job_array("restart", restart, n)
    _check_jobs("restart", restart_arr, np.isfinite(restart_arr) & (restart_arr >= 0.0),
                "finite and >= 0 (s of downtime after a failure)")
    if isinstance(outage_mtbf, (bool, np.bool_)) or not isinstance(outage_mtbf, Real):
        raise SpecError(f"outage_mtbf = {outage_mtbf!r}: must be a number > 0 (inf: no outages)")
    outage_f = float(outage_mtbf)
    if not outage_f > 0.0:
        raise SpecError(f"outage_mtbf = {outage_mtbf!r}: must be > 0 (mean time between "
                        "outages, s; inf: no outages)")
    return mtbf_arr, restart_arr, outage_f


def check_power(busy_power, idle_power, n: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """MODEL.md E6's P_i^busy and P_i^idle (W): both None (power off), or both
    given, finite, >= 0, idle <= busy per job."""
    if busy_power is None and idle_power is None:
        return None, None
    if busy_power is None or idle_power is None:
        given, other = ("busy_power", "idle_power") if idle_power is None else \
            ("idle_power", "busy_power")
        raise SpecError(f"{other} = None with {given} given: give both (W per job; a job computing at "
                        "rate r draws idle + r (busy - idle)), or neither (power off)")
    busy = _job_array("busy_power", busy_power, n)
    idle = _job_array("idle_power", idle_power, n)
    for name, arr in (("busy_power", busy), ("idle_power", idle)):
        _check_jobs(name, arr, np.isfinite(arr) & (arr >= 0.0), "a finite power >= 0 (W)")
    above = np.nonzero(idle > busy)[0]
    if above.size:
        i = int(above[0])
        raise SpecError(f"idle_power[{i}] = {float(idle[i])!r} W > busy_power[{i}] = "
                        f"{float(busy[i])!r} W: a job writing draws no more than one computing "
                        "at full rate")
    return busy, idle


class Fleet:
    """N jobs that alternate compute and checkpoints through shared storage and power.

    Parameters
    ----------
    T : sequence of float, shape (N,)
        Compute work between two checkpoints, s at full rate; finite, > 0.
    d : sequence of float, shape (N,)
        Checkpoint volume, s when writing alone; finite, > 0.
    cap : float
        Power cap C in full-rate jobs, > 0; ``inf`` (default) = uncapped.
    throughput : "fair" | "ideal" | "power:alpha" | ("power", alpha) | sequence of f(1..N)
        Aggregate storage throughput with n concurrent writers.
    jitter : float or sequence of float
        Per-cycle compute jitter sigma_i (s), >= 0: each compute interval after
        the first is max(0, T_i + sigma_i * xi), xi standard normal.
    checkpoint : "blocking" | "async", or one per job
        MODEL.md E1. "blocking" (default): the job stops computing while it
        writes. "async": a blocking snapshot of ``snapshot`` seconds, then a
        background persist of d_i through the fabric while the job computes.
    snapshot : float or sequence of float
        s_i, the snapshot's wall time (s), finite, >= 0 (default 0).
    slowdown : float or sequence of float
        eps_i in [0, 1] (default 0): the job computes at (1 - eps_i) of its
        rate while its own persist is in flight; 1 stops it (as blocking).
    on_busy : "block" | "skip", or one per job
        A checkpoint falls due while the previous persist is in flight:
        "block" (default) waits for it, "skip" skips the checkpoint (counted)
        and starts the next compute interval at once.
    weights : float or sequence of float
        w_i > 0, finite (default 1), MODEL.md E2: writers share f(n_w) in
        proportion to weight (equal weights: the anonymous base model).
    max_writers : int or None
        K, MODEL.md E5: at most K checkpoints write at once, 1 <= K <= N; a
        checkpoint that finds K writing queues (first come, first served,
        ties by lower job index) until a writer finishes. None (default) is
        K = N, no cap: the base model (``max_writers`` then reads N).
    mtbf : float or sequence of float
        M_i, MODEL.md E8: each job's mean time between failures (s of wall
        time), > 0; ``inf`` (default) never fails. A failure abandons what
        the job is doing, loses its work since its last durable checkpoint,
        and holds it DOWN for ``restart`` seconds.
    restart : float or sequence of float
        R_i >= 0, finite (default 0): the downtime (s) from a failure until
        the job computes again.
    outage_mtbf : float
        M_0 > 0: the mean time (s) between outages, each of which fails every
        job at once; ``inf`` (default): none.
    busy_power, idle_power : float or sequence of float, or None
        P_i^busy and P_i^idle, MODEL.md E6 (W, finite, >= 0, idle <= busy):
        a job computing at rate r draws idle + r (busy - idle); writing,
        queued, waiting, snapshotting or DOWN it draws idle. Give both or
        neither; None (default): power off (no power observables).

    Notes
    -----
    The asynchronous options apply to async jobs: given on a fleet with no
    async job, or per job with a non-default value on a blocking job, they
    raise SpecError; a scalar given to a mixed fleet applies to its async
    jobs (its blocking jobs keep the defaults). Instances are immutable;
    arrays are read-only.
    """

    __slots__ = ("T", "d", "cap", "throughput", "jitter", "f", "checkpoint", "snapshot",
                 "slowdown", "on_busy", "weights", "max_writers", "mtbf", "restart",
                 "outage_mtbf", "busy_power", "idle_power", "_frozen")

    def __init__(self, T, d, cap: float = math.inf, throughput: ThroughputSpec = "fair",  # noqa: PLR0913 (the model's parameters)
                 jitter=0.0, checkpoint="blocking", snapshot=0.0, slowdown=0.0,
                 on_busy="block", weights=1.0, max_writers=None, mtbf=math.inf, restart=0.0,
                 outage_mtbf=math.inf, busy_power=None, idle_power=None):
        T_arr = _job_array("T", T, None)
        n = T_arr.size
        d_arr = _job_array("d", d, n)
        for name, arr in (("T", T_arr), ("d", d_arr)):
            _check_jobs(name, arr, np.isfinite(arr) & (arr > 0.0),
                        "finite and > 0 (seconds at full rate)")
        cap_f = _check_cap(cap)
        sigma = _job_array("jitter", jitter, n)
        _check_jobs("jitter", sigma, np.isfinite(sigma) & (sigma >= 0.0), "finite and >= 0 (seconds)")
        f, spec = throughput_table(throughput, n)
        mode = _job_choice("checkpoint", checkpoint, n, CHECKPOINT_MODES)
        snap = _job_array("snapshot", snapshot, n)
        _check_jobs("snapshot", snap, np.isfinite(snap) & (snap >= 0.0),
                    "finite and >= 0 (seconds of wall time)")
        eps = _job_array("slowdown", slowdown, n)
        _check_jobs("slowdown", eps, (eps >= 0.0) & (eps <= 1.0), "in [0, 1] (the fraction "
                    "of compute rate lost while the job's own persist is in flight)")
        rule = _job_choice("on_busy", on_busy, n, ON_BUSY_RULES)
        wts = _job_array("weights", weights, n)
        _check_jobs("weights", wts, np.isfinite(wts) & (wts > 0.0), "finite and > 0 "
                    "(a writer's share of the bandwidth is w_i / sum of writers' w)")
        _check_async_options({"snapshot": (snapshot, snap), "slowdown": (slowdown, eps),
                              "on_busy": (on_busy, rule)}, mode == "async")
        mtbf_arr, restart_arr, outage_f = _check_failures(mtbf, restart, outage_mtbf, n)
        for name, value in (("T", T_arr), ("d", d_arr), ("jitter", sigma), ("f", f),
                            ("checkpoint", mode), ("snapshot", snap), ("slowdown", eps),
                            ("on_busy", rule), ("weights", wts), ("mtbf", mtbf_arr),
                            ("restart", restart_arr)):
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        busy, idle = check_power(busy_power, idle_power, n)
        for name, value in (("busy_power", busy), ("idle_power", idle)):
            if value is not None:
                value.flags.writeable = False
            object.__setattr__(self, name, value)
        object.__setattr__(self, "cap", cap_f)
        object.__setattr__(self, "max_writers", _writer_cap(max_writers, n))
        object.__setattr__(self, "outage_mtbf", outage_f)
        object.__setattr__(self, "throughput", spec)
        object.__setattr__(self, "_frozen", True)

    @classmethod
    def identical(cls, n_jobs: int, *, T: float = 1.0, load: float | None = None,  # noqa: PLR0913 (Fleet's keywords)
                  d: float | None = None, cap: float = math.inf,
                  throughput: ThroughputSpec = "fair", jitter: float = 0.0,
                  checkpoint: str = "blocking", snapshot: float = 0.0, slowdown: float = 0.0,
                  on_busy: str = "block", weights: float = 1.0,
                  max_writers: int | None = None, mtbf: float = math.inf, restart: float = 0.0,
                  outage_mtbf: float = math.inf, busy_power: float | None = None,
                  idle_power: float | None = None) -> "Fleet":
        """N identical jobs, given either the load L = N d / T or the volume d.

        The other keywords are ``Fleet``'s, one value for every job."""
        n_jobs = check_int("n_jobs", n_jobs, 1)
        check_memory(f"n_jobs = {n_jobs}", FLEET_BYTES_PER_JOB * float(n_jobs),
                     "use fewer jobs")
        if (load is None) == (d is None):
            raise SpecError(f"load = {load!r}, d = {d!r}: give exactly one of them")
        for name, value in dict(T=T, load=load, d=d, jitter=jitter, snapshot=snapshot,
                                slowdown=slowdown, weights=weights, mtbf=mtbf,
                                restart=restart).items():
            if (value is not None or name not in ("load", "d")) and (
                    isinstance(value, (bool, np.bool_)) or not isinstance(value, Real)):
                raise SpecError(f"{name} = {value!r}: must be a number (one value for every job; "
                                "Fleet(...) takes one per job)")
        if d is None:
            if not (load > 0 and math.isfinite(load)):
                raise SpecError(f"load = {load!r}: must be finite and > 0")
            d = float(load) * float(T) / n_jobs
        return cls(T=[T] * n_jobs, d=[d] * n_jobs, cap=cap, throughput=throughput,
                   jitter=jitter, checkpoint=checkpoint, snapshot=snapshot, slowdown=slowdown,
                   on_busy=on_busy, weights=weights, max_writers=max_writers, mtbf=mtbf,
                   restart=restart, outage_mtbf=outage_mtbf, busy_power=busy_power,
                   idle_power=idle_power)

    #: The options of MODEL.md E1 / E2 and their defaults: a fleet that leaves
    #: them all there is the paper's base model.
    OPTIONS = {"checkpoint": "blocking", **ASYNC_DEFAULTS, "weights": 1.0}

    #: The per-job failure options of MODEL.md E8 and their defaults (never fails).
    FAILURE_OPTIONS = {"mtbf": math.inf, "restart": 0.0}

    def canonical(self) -> dict:
        """The one canonical encoding of the fleet (what a sweep's run seed
        hashes): N, T, d, cap, f(0..N), sigma as float.hex strings, and each
        option of OPTIONS only where some job differs from its default, and
        max_writers only where it caps (K < N), so every base-model fleet
        has the encoding of the base model alone (its run seeds do not move);
        the failure options (MODEL.md E8) only where some job fails."""
        def hexlist(a):
            return [float(x).hex() for x in np.asarray(a, dtype=np.float64).ravel()]

        canon = {"N": self.n_jobs, "T": hexlist(self.T), "d": hexlist(self.d),
                 "cap": float(self.cap).hex(), "f": hexlist(self.f), "sigma": hexlist(self.jitter)}
        # a restart time of a fleet that never fails changes nothing: not in its seed
        options = self.OPTIONS | (self.FAILURE_OPTIONS if self.has_failures else {})
        for name, default in options.items():
            if np.any((arr := getattr(self, name)) != default):
                canon[name] = arr.tolist() if arr.dtype.kind == "U" else hexlist(arr)
        if self.max_writers < self.n_jobs:
            canon["max_writers"] = self.max_writers
        if self.outage_mtbf != math.inf:
            canon["outage_mtbf"] = float(self.outage_mtbf).hex()
        # power (MODEL.md E6) is observed, it moves nothing: a fleet draws the
        # same trajectories with it on or off, so it is not in the seed
        return canon

    @classmethod
    @keywords_of("Fleet.from_jobs", fleet_arguments)
    def from_jobs(cls, *, size, bandwidth, compute_interval=None, checkpoint_period=None, n_jobs=None,  # noqa: PLR0913 (the physical keywords are the surface)
                  jitter=None, cap: float = math.inf, throughput: ThroughputSpec = "fair",
                  checkpoint=None, snapshot=None, slowdown=None, on_busy=None, weight=None,
                  max_writers=None, mtbf=None, restart=None, outage_mtbf=None,
                  busy_power=None, idle_power=None, gpus=None, gpu_power=None,
                  gpu_idle_power=None) -> "Fleet":
        """A fleet from physical units (MODEL.md E4; ``stormsim.engine.units.fleet_arguments``),
        T and d in seconds. A missing, unknown or bad keyword is a SpecError naming it.

        Parameters
        ----------
        size, bandwidth : quantity (a unit always), e.g. "156 GB" (or one per job), "5 TB/s"
        compute_interval, checkpoint_period : quantity or sequence, exactly one of them
            T, e.g. "30 min", or instead the wall-clock period of a job alone.
        n_jobs : int, needed when every per-job value is a single one
        jitter : sigma >= 0, a time ("9 s") or a share of T ("1%"); default 0
        cap, throughput, checkpoint, snapshot, slowdown, on_busy, weight : optional
            As in ``Fleet`` (``weight`` is its ``weights``; ``snapshot`` a time).
        max_writers : int in 1..N, optional
            The writer cap K (MODEL.md E5), as in ``Fleet``; None (default): no cap.
        mtbf, restart : time or sequence, optional
            Each job's mean time between failures and downtime after one
            (MODEL.md E8), e.g. "24 h", "10 min"; default: never fails.
        outage_mtbf : time, optional
            The mean time between outages of the whole fleet; default: none.
        busy_power, idle_power : power or sequence, optional
            Each job's draw computing at full rate and stopped (MODEL.md E6),
            e.g. "700 kW", "100 kW"; both or neither (default: power off).
        gpus, gpu_power, gpu_idle_power : number, power, power (or sequences), optional
            Instead of busy_power and idle_power: each job's accelerators and
            one accelerator's draw computing and stopped, e.g. 1024, "700 W",
            "100 W"; the job draws gpus times each. All three or none.
        """
        return cls(**fleet_arguments(
            size=size, bandwidth=bandwidth, compute_interval=compute_interval, n_jobs=n_jobs,
            checkpoint_period=checkpoint_period, jitter=jitter, cap=cap, throughput=throughput,
            checkpoint=checkpoint, snapshot=snapshot, slowdown=slowdown, on_busy=on_busy,
            weight=weight, max_writers=max_writers, mtbf=mtbf, restart=restart,
            outage_mtbf=outage_mtbf, busy_power=busy_power, idle_power=idle_power, gpus=gpus,
            gpu_power=gpu_power, gpu_idle_power=gpu_idle_power))

    @classmethod
    def from_csv(cls, path, *, bandwidth, cap: float = math.inf,  # noqa: PLR0913 (the fleet-level keywords)
                 throughput: ThroughputSpec = "fair", max_writers=None,
                 outage_mtbf=None, gpu_power=None, gpu_idle_power=None) -> "Fleet":
        """A fleet from a CSV job table (one row per job, each column's unit in its
        header) and the fabric's bandwidth: ``stormsim.engine.jobcsv.read_jobs``.
        The fleet-level options (``cap``, ``throughput``, ``max_writers``, the
        writer cap K in 1..N) are keywords, as in ``from_jobs``; the per-job
        ones (checkpoint, snapshot, slowdown, on_busy, weight, mtbf, restart)
        are columns; ``outage_mtbf`` (a time) is a keyword. A table with a
        ``gpus`` column takes one accelerator's draw from its ``gpu_power``
        and ``gpu_idle_power`` columns or, for every job, from the keywords
        of those names (a column and its keyword both: a SpecError)."""
        columns = read_jobs(path, names=False)
        for name, value in (("gpu_power", gpu_power), ("gpu_idle_power", gpu_idle_power)):
            if value is None:
                continue
            if name in columns:
                raise SpecError(f"{name} = {value!r}: the table {path} has a {name} column "
                                "already; give it in one place")
            columns[name] = value
        return cls.from_jobs(**columns, bandwidth=bandwidth, cap=cap, throughput=throughput,
                             max_writers=max_writers, outage_mtbf=outage_mtbf)

    def __setattr__(self, name, value):
        raise AttributeError("Fleet is immutable; build a new one")

    def __reduce__(self):  # picklable (Dask, multiprocessing) despite __setattr__
        return (Fleet, (self.T.copy(), self.d.copy(), self.cap, self.throughput,
                        self.jitter.copy(), self.checkpoint.tolist(), self.snapshot.copy(),
                        self.slowdown.copy(), self.on_busy.tolist(), self.weights.copy(),
                        self.max_writers, self.mtbf.copy(), self.restart.copy(),
                        self.outage_mtbf,
                        None if self.busy_power is None else self.busy_power.copy(),
                        None if self.idle_power is None else self.idle_power.copy()))

    # -- derived quantities -------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return int(self.T.size)

    @property
    def load(self) -> float:
        """L = sum_i d_i / T_i, write demand per unit compute time."""
        return float(np.sum(self.d / self.T))

    @property
    def is_identical(self) -> bool:
        """All jobs share T, d, sigma and the checkpoint options and weight."""
        return all(bool(np.all(a == a[0])) for a in self._per_job())

    def _per_job(self) -> tuple:
        """Every per-job array (the power pair only where power is on)."""
        power = (self.busy_power, self.idle_power) if self.has_power else ()
        return (self.T, self.d, self.jitter, self.checkpoint, self.snapshot, self.slowdown,
                self.on_busy, self.weights, self.mtbf, self.restart, *power)

    @property
    def has_power(self) -> bool:
        """Per-job busy and idle power are given (MODEL.md E6)."""
        return self.busy_power is not None

    def job_classes(self) -> list[np.ndarray]:
        """The job indices of each class (jobs alike in every per-job parameter),
        in the order of each class's first job."""
        groups: dict = {}
        for i, key in enumerate(zip(*(a.tolist() for a in self._per_job()))):
            groups.setdefault(key, []).append(i)
        return [np.array(g, dtype=np.int64) for g in groups.values()]

    @property
    def is_async(self) -> np.ndarray:
        """bool (N,): the job checkpoints asynchronously."""
        return self.checkpoint == "async"

    @property
    def has_failures(self) -> bool:
        """Some job can fail (MODEL.md E8): a finite mtbf or outage_mtbf."""
        return bool(np.isfinite(self.mtbf).any() or math.isfinite(self.outage_mtbf))

    @property
    def is_anonymous(self) -> bool:
        """The paper's base model: every job blocking, all weights equal, no
        writer cap (E5), no failures (E8)."""
        return self.runs_anonymous and not self.has_failures

    @property
    def runs_anonymous(self) -> bool:
        """The anonymous kernel's scope: every job blocking, all weights
        equal, no writer cap (E5); failures (E8) allowed."""
        return bool(not self.is_async.any() and np.all(self.weights == self.weights[0])
                    and self.max_writers == self.n_jobs)

    def replace(self, **changes) -> "Fleet":
        """This fleet with some of Fleet's parameters changed (``T=``, ``jitter=``,
        ...), every other one as it is; an unknown name is a SpecError."""
        names = list(inspect.signature(Fleet).parameters)
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise SpecError(f"{unknown[0]} = {changes[unknown[0]]!r}: not a parameter of Fleet "
                            f"(its parameters: {', '.join(names)})")
        return Fleet(**{name: changes.get(name, getattr(self, name)) for name in names})

    @property
    def writer_rate(self) -> np.ndarray:
        """r_w[n] = f(n)/n, the drain rate of each of n writers; r_w[0] = 1 (unused)."""
        n = np.arange(self.n_jobs + 1, dtype=np.float64)
        out = np.ones(self.n_jobs + 1)
        out[1:] = self.f[1:] / n[1:]
        return out

    @property
    def computer_rate(self) -> np.ndarray:
        """r_c[n] = min(1, C/n), the rate of each of n computers; r_c[0] = 1 (unused)."""
        n = np.arange(self.n_jobs + 1, dtype=np.float64)
        out = np.ones(self.n_jobs + 1)
        out[1:] = np.minimum(1.0, self.cap / n[1:])
        return out

    def __eq__(self, other):
        if not isinstance(other, Fleet):
            return NotImplemented
        return (self.cap == other.cap and np.array_equal(self.f, other.f)
                and self.max_writers == other.max_writers
                and self.outage_mtbf == other.outage_mtbf
                and self.has_power == other.has_power
                and all(np.array_equal(a, b) for a, b in zip(self._per_job(), other._per_job())))

    def __hash__(self):
        return hash((self.cap, self.max_writers, self.outage_mtbf, self.f.tobytes())
                    + tuple(a.tobytes() for a in self._per_job()))

    def _extra_repr(self, identical: bool) -> str:
        """The keywords that differ from their defaults (none: today's repr)."""
        out = []
        defaults = self.OPTIONS | self.FAILURE_OPTIONS
        for name in ("checkpoint", "snapshot", "slowdown", "on_busy", "weights", "mtbf", "restart"):
            arr = getattr(self, name)
            if np.all(arr == defaults[name]):
                continue
            if identical or np.all(arr == arr[0]):
                out.append(f", {name}={arr[0].item()!r}")
            elif arr.dtype.kind == "f":
                out.append(f", {name}={fmt_array(arr)}")
            else:
                out.append(f", {name}={arr.tolist()!r}")
        if self.max_writers < self.n_jobs:
            out.append(f", max_writers={self.max_writers}")
        if self.outage_mtbf != math.inf:
            out.append(f", outage_mtbf={self.outage_mtbf!r}")
        for name in ("busy_power", "idle_power") if self.has_power else ():
            arr = getattr(self, name)
            if identical or np.all(arr == arr[0]):
                out.append(f", {name}={arr[0].item()!r}")
            else:
                out.append(f", {name}={fmt_array(arr)}")
        return "".join(out)

    def __repr__(self) -> str:
        if self.is_identical:
            return (f"Fleet.identical({self.n_jobs}, T={float(self.T[0])!r}, "
                    f"d={float(self.d[0])!r}, cap={self.cap!r}, "
                    f"throughput={self.throughput!r}, jitter={float(self.jitter[0])!r}"
                    f"{self._extra_repr(True)})")
        return (f"Fleet(T={fmt_array(self.T)}, d={fmt_array(self.d)}, cap={self.cap!r}, "
                f"throughput={self.throughput!r}, jitter={fmt_array(self.jitter)}"
                f"{self._extra_repr(False)})")

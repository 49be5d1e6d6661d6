"""Storms after a synchronized restart, block by block (MODEL.md E7, time-resolved).

Every job of F independent fleets fires its first checkpoint at one instant
(``launch="sync"``: the restart). The time after it is cut into contiguous
blocks of equal length tau (seconds); in each block and at each level k the
storms that begin (up-crossings of n_w into k or more, MODEL.md E3) are
counted per fleet, and the time spent at n_w >= k. The storm rate of a block
is its storms over F tau, with a 95 % interval over the fleets (independent
units: the "ratio-log" interval of ``stats.storms``, a t quantile on the log
scale); where fewer than FEW_FLEETS fleets saw a storm in the block,
Garwood's Poisson interval on its count (the zero-count bound
``[0, -ln 0.05 / (F tau)]`` where none did). Their coverage of the law's
rate, once settled, is checked by a test.

How the blocks are counted: ``simulate(launch="sync", record_firings=True)``
gives every write start (firing) exactly; n_w between them follows from the
write volumes and the sharing rule alone (a write of job i drains at
f(n_w) w_i / sum of the writers' w: MODEL.md, E2; the writer cap and the
power cap act on firings, which are given). ``blocks_of_firings`` replays
those writes with the kernel's tie rule and counts per block; on the
instants a run ends it agrees with the engine's own counts exactly (a test
checks it, every kind of fleet).

The long-run rate per level: the exact law's (``stats.stationary``) where it
applies, else a run from a random launch with its interval. The settling
time at level k, from the blocks' rates r_j, bands [lo_j, hi_j] and the
long-run rate nu (its interval [nu_lo, nu_hi]; nu_lo = nu_hi = nu where
exact), tolerance TOLERANCE:

- value: the start of the first block after which every block up to the
  horizon has |r_j / nu - 1| <= TOLERANCE;
- lo: the same, with "within" read as "the band meets the tolerance band":
  hi_j >= nu_lo (1 - TOLERANCE) and lo_j <= nu_hi (1 + TOLERANCE) (the
  earliest the bands allow);
- hi: the end of the first block after which every band lies inside it:
  lo_j >= nu_hi (1 - TOLERANCE) and hi_j <= nu_lo (1 + TOLERANCE) (the
  latest the bands allow; its end, since a block whose mean rate is within
  the tolerance may begin outside it); inf where some block's band up to the
  horizon pokes out (more fleets would say).

lo <= value <= hi always. The bands are pointwise 95 % intervals, so
[lo, hi] is the range the blocks' bands allow, not a joint 95 % interval; a
test checks it holds the settling time that direct engine runs (three times
the fleets, no replay) find. A level whose blocks expect fewer than
LEAST_BLOCK_STORMS storms at the long-run rate is "not resolved" (its rates
and bands are still given).

The blocks are a fixed share of a horizon (BLOCKS of them) that doubles from
FIRST_HORIZON cycles until the settling time at n_w >= 2 is at most half the
horizon (so the rates were checked for at least as long again), or the bands
allow that but the rates do not show it (a longer horizon would only coarsen
the blocks), or MAX_HORIZON cycles, or the time budget ends (each horizon's
first 1/PILOT of fleets decides whether the rest is worth running).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from ._args import check_levels, check_real
from ._format import fmt_share, fmt_value
from .engine import door
from .engine.cost import run_seconds
from .engine.model import Fleet
from .engine.run import simulate
from .engine.units import SECONDS_PER_DAY
from .risk.exact import exact_applies
from .stats.interval import CONFIDENCE, Interval
from .stats.stationary import saturated, stationary
from .stats.storms import ratio_of_means, storm_estimate

__all__ = ["Settling", "restart_storms", "settle_hours", "settle_time", "blocks_of_firings"]

#: "Settled": a block's storm rate within this share of the long-run rate.
TOLERANCE = 0.10
#: Blocks per horizon (contiguous, of equal length): the settling time's resolution
#: is the horizon / BLOCKS (1/32 of it; 2 cycles of the first horizon).
BLOCKS = 32
#: Storms of n_w >= 2 each block expects at the long-run rate, over its fleets:
#: storms cluster within a fleet (the README's fleet: twice a Poisson count's
#: variance), so a block's 95 % band is then ~3 % each side, under a third of
#: TOLERANCE: a settled block's band lies inside the tolerance (the interval's
#: hi) but for a fluctuation of some 3 standard errors.
BLOCK_STORMS = 8000
#: A level's settling time is not resolved where its blocks expect fewer storms
#: than this at the long-run rate (its bands would be wider than the tolerance).
LEAST_BLOCK_STORMS = 400
#: Fewer fleets than this with a storm in a block: Garwood's Poisson interval on
#: the block's count (rare storms arrive as a Poisson stream, to first order)
#: instead of the ratio-log interval over fleets, whose t quantile on so few
#: degrees of freedom says nothing.
FEW_FLEETS = 10
#: Fleets per horizon (those BLOCK_STORMS ask, within these bounds); fewer, down
#: to LEAST_FLEETS, where the budget cannot buy them (wider bands, said).
FLEETS = (64, 8192)
LEAST_FLEETS = 8
#: The first horizon and the last, in mean lone cycles (T_i + d_i): a horizon
#: doubles until the settling time is at most 1/CONFIRM of it.
FIRST_HORIZON, MAX_HORIZON, CONFIRM = 64, 8192, 2
#: Each horizon runs its first 1/PILOT of fleets first: where their bands already
#: say the rates are out of tolerance past half the horizon, the next horizon
#: follows without the rest (the fleets are the same either way: fleet j is a
#: function of the seed and j, so the answer does not depend on it).
PILOT = 8
#: The random-launch run that gives the long-run rate where no law does:
#: fleets x cycles after a burn-in, fewer fleets (down to LEAST_FLEETS) in a budget.
LONG_RUN_FLEETS, LONG_RUN_CYCLES, LONG_RUN_BURN_IN = 256, 400, 40
#: A synchronized run's cost over ``engine.cost.run_seconds`` before one is timed:
#: recording the firings and replaying them (``blocks_of_firings``) costs some
#: four times the kernel (the README's fleet: 0.5 s of replay for 0.12 s of kernel);
#: each batch's measured cost replaces it.
FIRST_SCALE = 5.0
#: The firings held at once (fleets x N x cycles), 8 B each: 64 MB.
FIRINGS_AT_ONCE = 8_000_000
NOT_IN_BUDGET = "not estimated in the budget"
SATURATED = "saturated"


# -- the blocks, from the firings -------------------------------------------------------

def blocks_of_firings(fleet: Fleet, firings: np.ndarray, tau: float, n_blocks: int,
                      levels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per fleet, block and level: (storms, time at n_w >= k, reach) from a run's
    ``firings`` (fleets, N, cycles) (``simulate(record_firings=True)``).

    storms (fleets, n_blocks, L) int64: the up-crossings into n_w >= k at the
    instants t in [j tau, (j + 1) tau) (MODEL.md E3: writers before the
    instant against those once its phase changes are applied); time (same
    shape, float64, s); reach (fleets,): each fleet's last instant whose
    firings are all known (its fastest job's last recorded firing): the
    counts of a block that ends after it are incomplete.
    """
    levels = np.asarray(levels, dtype=np.int64)
    fir = np.ascontiguousarray(firings, dtype=np.float64)
    shape = (fir.shape[0], int(n_blocks), levels.size)
    up, busy = np.zeros(shape, dtype=np.int64), np.zeros(shape)
    reach = np.empty(fir.shape[0])
    job = tuple(np.ascontiguousarray(a, dtype=np.float64)
                for a in (fleet.d / fleet.weights, fleet.weights, fleet.f))
    door.replay_blocks(fir, job, float(tau), levels, up, busy, reach)
    return up, busy, reach


# -- the result ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Settling:
    """Storms after a synchronized restart, block by block (``restart_storms``).

    Attributes
    ----------
    levels : int64 (L,)
        The levels k.
    block_hours : float64 (B,)
        Each block's start (h after the restart); blocks are ``tau_hours`` long.
    tau_hours, horizon_hours : float
        The blocks' length and their end (h).
    fleets : int
        The fleets counted (independent, ``launch="sync"``).
    storms_per_day, storms_per_day_lo, storms_per_day_hi : float64 (B, L)
        Each block's storm rate at each level with its 95 % interval over fleets.
    long_run_per_day, long_run_lo, long_run_hi : float64 (L,)
        The long-run rate (its interval; zero width where exact).
    long_run_method : str
        "exact (the law)" or "from a random launch" (then its interval).
    settle : tuple of Interval (L,)
        The settling time per level (h; value, lo, hi as in the module's
        docstring; NaN with the reason where none).
    method : str
        How the blocks were made (fleets, horizon, what the budget cut).
    tolerance : float
        TOLERANCE.
    """

    levels: np.ndarray
    block_hours: np.ndarray
    tau_hours: float
    horizon_hours: float
    fleets: int
    storms_per_day: np.ndarray
    storms_per_day_lo: np.ndarray
    storms_per_day_hi: np.ndarray
    long_run_per_day: np.ndarray
    long_run_lo: np.ndarray
    long_run_hi: np.ndarray
    long_run_method: str
    settle: tuple
    method: str
    tolerance: float = TOLERANCE

    def hours(self, level: int = 2) -> Interval:
        """The settling time (h) at ``level`` (one of ``levels``)."""
        where = np.flatnonzero(self.levels == level)
        if where.size == 0:
            raise KeyError(f"level {level} not among {self.levels.tolist()}")
        return self.settle[int(where[0])]

    def to_dict(self) -> dict:
        """Every field, arrays as lists, NaN as None (JSON)."""
        def plain(v):
            if isinstance(v, Interval):
                return {k: plain(x) for k, x in v.__dict__.items()}
            if isinstance(v, (np.ndarray, tuple, list)):
                return [plain(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
            return None if isinstance(v, float) and math.isnan(v) else v
        return {name: plain(getattr(self, name)) for name in self.__dataclass_fields__}

    def table(self) -> str:
        """One line per block: its start (h) and, per level, storms per day with
        the 95 % band and the ratio to the long-run rate; the settling times last."""
        head = ["hours"] + [f"n_w>={k} storms/day [95% CI] (x long run)" for k in self.levels]
        rows = []
        for j, h in enumerate(self.block_hours):
            cells = [fmt_value(h, digits=3)]
            for li in range(self.levels.size):
                r, lo, hi = (a[j, li] for a in (self.storms_per_day, self.storms_per_day_lo,
                                                self.storms_per_day_hi))
                ratio = r / self.long_run_per_day[li] if self.long_run_per_day[li] > 0 else math.nan
                cells.append(f"{fmt_value(r, digits=3)} [{fmt_value(lo, digits=3)}, "
                             f"{fmt_value(hi, digits=3)}] (x{fmt_value(ratio, digits=3)})")
            rows.append(cells)
        widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [head, *rows]]
        lines.append("long run: " + ", ".join(
            f"n_w>={k} {fmt_value(v, digits=3)}/day" for k, v in zip(self.levels,
                                                                     self.long_run_per_day))
                     + f" ({self.long_run_method})")
        lines += [f"settled within {self.tolerance:.0%} at n_w>={k}: {_hours_text(s)}"
                  for k, s in zip(self.levels, self.settle)]
        lines.append(self.method)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _hours_text(s: Interval) -> str:
    if math.isnan(s.value):
        return s.method
    return (f"{fmt_value(s.value, digits=3)} h [{fmt_value(s.lo, digits=3)}, "
            f"{fmt_value(s.hi, digits=3)}] ({s.method})")


# -- the settling time ------------------------------------------------------------------

def _first_after_last_failure(ok: np.ndarray) -> int:
    """The first index from which every entry of ``ok`` is True (ok.size: none)."""
    bad = np.flatnonzero(~ok)
    return 0 if bad.size == 0 else int(bad[-1]) + 1


def settle_time(starts, rate, lo, hi, long_run: tuple, tolerance: float = TOLERANCE,  # noqa: PLR0913 (the blocks, then options)
                unit: str = "h", length: float | None = None) -> Interval:
    """The settling time from contiguous blocks (the module's docstring): the
    start of the first block after which every block's rate stays within
    ``tolerance`` of ``nu``, with the earliest and latest such start the blocks'
    bands [lo, hi] (and ``long_run``'s, (nu, nu_lo, nu_hi)) allow. NaN where the rates are
    not within it in the last block (not settled by the horizon); hi = inf where
    some band pokes out of the tolerance up to the horizon. hi is the *end* of
    its block (``length``: the blocks' length, by default the starts' step), so
    that [lo, hi] holds a settling time measured on a finer grid: a block
    whose mean rate is within the tolerance may still begin outside it."""
    starts, rate, lo, hi = (np.asarray(a, dtype=np.float64) for a in (starts, rate, lo, hi))
    nu, nu_lo, nu_hi = (float(x) for x in long_run)
    b = starts.size
    low, top = 1.0 - tolerance, 1.0 + tolerance
    point = _first_after_last_failure(np.abs(rate / nu - 1.0) <= tolerance)
    early = _first_after_last_failure((hi >= nu_lo * low) & (lo <= nu_hi * top))
    if point == b:
        if early == b:
            return Interval(math.nan, math.nan, math.nan, "not settled by the horizon", unit=unit)
        return Interval(math.nan, float(starts[early]), math.inf, "the last block's rate is out of "
                        "the tolerance, its band is not: more fleets would say", unit=unit)
    late = _first_after_last_failure((lo >= nu_hi * low) & (hi <= nu_lo * top))
    how = "blocks' 95 % bands"
    if late == b:
        how += "; hi: some band reaches out of the tolerance up to the horizon"
    step = (float(starts[1] - starts[0]) if b > 1 else 0.0) if length is None else float(length)
    return Interval(float(starts[point]), float(starts[early]),
                    math.inf if late == b else float(starts[late]) + step, how, unit=unit)


# -- the runs -----------------------------------------------------------------------------

class _Clock:
    """What is left of a budget (inf: none), and the measured cost per estimated second."""

    def __init__(self, max_seconds):
        self.budget = math.inf if max_seconds is None else float(max_seconds)
        self.t0 = time.perf_counter()
        self.scale = FIRST_SCALE

    def left(self) -> float:
        return self.budget - (time.perf_counter() - self.t0)

    def afford(self, n_jobs: int, cycles: int) -> float:
        """Fleets of ``cycles`` that 90 % of what is left buys."""
        return 0.9 * self.left() / (self.scale * run_seconds(n_jobs, 1, cycles))


def _long_run(fleet: Fleet, levels: np.ndarray, seed: int, clock: _Clock):
    """(nu, nu_lo, nu_hi per level (1/s), method, P(n_w >= 2), storm duration at 2),
    or None where the budget cannot buy the random-launch run."""
    if exact_applies(fleet, "random"):
        law = stationary(fleet)
        nu = np.array([law.storms_per_s[k] for k in levels], dtype=np.float64)
        return nu, nu, nu, "exact (the law)", float(law.p_ge[2]), float(law.storm_duration[2])
    fleets = int(min(LONG_RUN_FLEETS, clock.afford(fleet.n_jobs, LONG_RUN_CYCLES) / 3))
    if fleets < LEAST_FLEETS:
        return None
    run = simulate(fleet, fleets=fleets, cycles=LONG_RUN_CYCLES, burn_in=LONG_RUN_BURN_IN,
                   seed=seed)
    est = storm_estimate(run.upcrossings, run.occupancy)
    p2 = float(run.occupancy[:, 2:].sum() / run.occupancy.sum())
    nu = est.storms_per_s[levels]
    lo, hi = est.storms_per_s_lo[levels], est.storms_per_s_hi[levels]
    duration = p2 / nu[levels == 2][0] if (levels == 2).any() and nu[levels == 2][0] > 0 \
        else math.inf
    return nu, lo, hi, f"from a random launch ({fleets} fleets x {LONG_RUN_CYCLES} cycles)", \
        p2, duration


def _cycles_for(fleet: Fleet, horizon: float) -> int:
    """Cycles whose firings cover [0, horizon] in every fleet: a job's cycle is at
    least its compute interval, ~T_i, short by a few sigma_i sqrt(cycles) at most."""
    t = float(np.min(fleet.T))
    c = horizon / t
    return int(math.ceil(c + 8.0 * float(np.max(fleet.jitter)) * math.sqrt(c) / t)) + 2


def _sync_counts(fleet: Fleet, levels, fleets: tuple, tau: float, seed: int, clock: _Clock):  # noqa: PLR0913 (one run's inputs)
    """(storms, time at n_w >= k) per fleet, block and level over BLOCKS blocks of
    ``tau`` s of fleets [start, end) (``fleets``), and the fleets counted
    (fewer where the clock runs out). Fleet j is a function of (seed, j)."""
    cycles = _cycles_for(fleet, BLOCKS * tau)
    start, fleets = fleets[0], fleets[1] - fleets[0]
    batch = max(1, min(fleets, FIRINGS_AT_ONCE // (fleet.n_jobs * cycles)))
    ups, busys, done = [np.zeros((0, BLOCKS, len(levels)), dtype=np.int64)], [], 0
    while done < fleets:
        b = min(batch, fleets - done)
        if done and clock.afford(fleet.n_jobs, cycles) < b:
            break
        t = time.perf_counter()
        run = simulate(fleet, launch="sync", fleets=b, cycles=cycles, seed=seed,
                       fleet_start=start + done, record_firings=True)
        up, busy, reach = blocks_of_firings(fleet, run.firings, tau, BLOCKS, levels)
        if float(np.min(reach)) < BLOCKS * tau:
            raise RuntimeError(f"settling: {cycles} cycles did not cover {BLOCKS * tau:g} s")
        clock.scale = max(1.0, (time.perf_counter() - t) / run_seconds(fleet.n_jobs, b, cycles))
        ups.append(up)
        busys.append(busy)
        done += b
    return np.concatenate(ups), busys, done


def _plausibly_settled(up: np.ndarray, tau: float, long_run: tuple) -> bool:
    """Whether the bands of n_w >= 2 (column 0 of ``up``) allow a settling time
    of at most the horizon / CONFIRM (else a longer horizon is needed)."""
    nu, nu_lo, nu_hi = (float(x[0]) for x in long_run[:3])
    _, lo, hi = _bands(up[:, :, :1], tau)
    ok = (hi[:, 0] >= nu_lo * (1 - TOLERANCE)) & (lo[:, 0] <= nu_hi * (1 + TOLERANCE))
    return _first_after_last_failure(ok) <= BLOCKS // CONFIRM


def _bands(up: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each block's rate (1/s) with its 95 % interval over fleets: ratio-log where
    at least FEW_FLEETS fleets saw a storm, else Garwood's on the total count
    (the zero-count bound where none did)."""
    f, b, L = up.shape
    num = up.reshape(f, b * L).astype(np.float64)
    rate, lo, hi, _ = ratio_of_means(num, np.full_like(num, tau))
    total, few = num.sum(axis=0), (num > 0).sum(axis=0) < FEW_FLEETS
    rate[few] = total[few] / (f * tau)
    alpha = 1.0 - CONFIDENCE
    lo[few] = np.where(total[few] > 0, chi2.ppf(alpha / 2, 2 * total[few]) / 2, 0.0) / (f * tau)
    hi[few] = np.where(total[few] > 0, chi2.ppf(1 - alpha / 2, 2 * total[few] + 2) / 2,
                       -math.log(alpha)) / (f * tau)
    return rate.reshape(b, L), lo.reshape(b, L), hi.reshape(b, L)


def _empty(levels: np.ndarray, why: str, long_run=None) -> Settling:
    """A Settling with no blocks: ``why`` (saturated, or not in the budget)."""
    none = np.empty((0, levels.size))
    nan = np.full(levels.size, math.nan)
    nu, lo, hi, how = long_run if long_run is not None else (nan, nan, nan, "")
    day = SECONDS_PER_DAY
    return Settling(levels=levels, block_hours=np.empty(0), tau_hours=math.nan,
                    horizon_hours=math.nan, fleets=0, storms_per_day=none,
                    storms_per_day_lo=none.copy(), storms_per_day_hi=none.copy(),
                    long_run_per_day=nu * day, long_run_lo=lo * day, long_run_hi=hi * day,
                    long_run_method=how,
                    settle=tuple(Interval(math.nan, math.nan, math.nan, why, unit="h")
                                 for _ in levels), method=why)


def _result(levels, up, tau, long_run, method: str) -> Settling:
    """The Settling of one horizon's counts ``up`` (fleets, BLOCKS, L)."""
    nu, nu_lo, nu_hi, how = long_run
    rate, lo, hi = _bands(up, tau)
    starts = np.arange(up.shape[1]) * tau / 3600.0
    expect = nu * up.shape[0] * tau
    settle = tuple(settle_time(starts, rate[:, i], lo[:, i], hi[:, i], (nu[i], nu_lo[i], nu_hi[i]),
                               length=tau / 3600.0)
                   if expect[i] >= LEAST_BLOCK_STORMS else
                   Interval(math.nan, math.nan, math.nan, f"not resolved: a block expects "
                            f"{fmt_value(expect[i], digits=2)} storms at the long-run rate "
                            f"(fewer than {LEAST_BLOCK_STORMS})", unit="h")
                   for i in range(levels.size))
    day = SECONDS_PER_DAY
    return Settling(levels=levels, block_hours=starts, tau_hours=tau / 3600.0,
                    horizon_hours=up.shape[1] * tau / 3600.0, fleets=int(up.shape[0]),
                    storms_per_day=rate * day, storms_per_day_lo=lo * day,
                    storms_per_day_hi=hi * day, long_run_per_day=nu * day,
                    long_run_lo=nu_lo * day, long_run_hi=nu_hi * day, long_run_method=how,
                    settle=settle, method=method)


def _horizons(fleet: Fleet, nu2: float, fleets, clock: _Clock):
    """(horizon cycles, tau s, fleets wanted, fleets afforded) for each horizon in
    turn, while the budget buys LEAST_FLEETS of it."""
    cycle = float(np.mean(fleet.T + fleet.d))
    h = FIRST_HORIZON
    while h <= MAX_HORIZON:
        tau = h * cycle / BLOCKS
        want = fleets if fleets is not None else int(np.clip(
            math.ceil(BLOCK_STORMS / (nu2 * tau)), *FLEETS))
        afford = clock.afford(fleet.n_jobs, _cycles_for(fleet, BLOCKS * tau))
        if afford < LEAST_FLEETS:
            return
        yield h, tau, want, int(min(want, afford))
        h *= 2


def _method(how: str, got: Settling, last: tuple, why: str) -> str:
    """What the blocks were: fleets, blocks, horizon, and why the search ended
    (``_stop``'s reasons, "budget" or "max")."""
    h, want = last
    text = (f"{how}; {got.fleets} fleets, {BLOCKS} blocks of {fmt_value(got.tau_hours, digits=3)} h "
            f"to {fmt_value(got.horizon_hours, digits=3)} h")
    if got.fleets < want:
        text += f" (fewer fleets than the {want} that {BLOCK_STORMS} storms a block need)"
    s = got.hours(2)
    if why == "settled":
        return text
    if why == "bands":
        return f"{text}; n_w >= 2: " + (s.method if math.isnan(s.value) else
                                        "the bands allow settling in the first half, the rates "
                                        "do not show it")
    if why == "budget" and math.isnan(s.value):
        return f"{NOT_IN_BUDGET}: n_w >= 2 {s.method}, in the first " \
               f"{fmt_value(got.horizon_hours, 3)} h it bought ({text})"
    if why == "budget":
        return f"{text}; checked to the horizon only, as far as the budget reached"
    return f"not settled by {h} cycles ({text})"


def restart_storms(fleet: Fleet, levels=(2,), *, seed: int = 0, max_seconds=None,  # noqa: PLR0913 (keywords: the user surface)
                   fleets: int | None = None, progress=None) -> Settling:
    """Storm rates per block after a synchronized restart, and the settling time.

    Parameters
    ----------
    fleet : Fleet
    levels : sequence of int
        The levels k (2 is always added: the headline's).
    seed : int
        The seed of every run: the result is a function of it and the inputs
        (and of ``max_seconds`` where the budget cuts the fleets).
    max_seconds : float or None
        The time budget (None: none). Each horizon's fleets are sized from what
        is left (``engine.cost.run_seconds``, scaled by the measured cost).
    fleets : int or None
        Fleets per horizon (None: those BLOCK_STORMS ask, within FLEETS).
    progress : callable or None
        Told a line of text before each horizon.

    Returns
    -------
    Settling
        The blocks of the last horizon run, their rates with 95 % bands per
        level, the long-run rates, and the settling time per level (h).
    """
    if not isinstance(fleet, Fleet):
        raise TypeError(f"fleet = {fleet!r}: must be a stormsim.Fleet")
    if max_seconds is not None:
        check_real("max_seconds", max_seconds, 0.0, open_lo=True)
    ks = np.array(sorted({2, *check_levels("levels", levels, fleet.n_jobs).tolist()}),
                  dtype=np.int64)
    clock = _Clock(max_seconds)
    got = _long_run(fleet, ks, seed, clock)
    if got is None:
        return _empty(ks, f"{NOT_IN_BUDGET} (the long-run rate to settle to)")
    nu, nu_lo, nu_hi, how, p2, duration = got
    long_run = (nu, nu_lo, nu_hi, how)
    if saturated(p2, duration, float(np.max(fleet.T + fleet.d))):
        return _empty(ks, f"{SATURATED} at n_w >= 2 ({fmt_share(p2)} of the time; {how})",
                      long_run)
    nu2 = float(nu[ks == 2][0])
    if not nu2 > 0:
        return _empty(ks, how, long_run)
    result, last, why = None, None, "budget"
    for h, tau, want, n in _horizons(fleet, nu2, fleets, clock):
        if progress is not None:
            progress(f"blocks to {h} cycles, {n} fleets")
        pilot = min(n, max(LEAST_FLEETS, n // PILOT))
        up, _, done = _sync_counts(fleet, ks, (0, pilot), tau, seed, clock)
        if done < LEAST_FLEETS:
            break
        result, last = _result(ks, up, tau, long_run, ""), (h, want)
        if h < MAX_HORIZON and not _plausibly_settled(up, tau, long_run):
            continue                       # clearly not settled by h / 2: the next horizon
        if done == pilot < n:
            more, _, extra = _sync_counts(fleet, ks, (pilot, n), tau, seed, clock)
            up, done = np.concatenate([up, more]), done + extra
            result = _result(ks, up, tau, long_run, "")
        why = _stop(result, up, tau, long_run, n < want)
        if why != "next":
            break
    if result is None:
        return _empty(ks, f"{NOT_IN_BUDGET} (no horizon after the restart fit in what was "
                          "left)", long_run)
    if why == "next":
        why = "max" if last[0] >= MAX_HORIZON else "budget"
    return _replace_method(result, _method(how, result, last, why))


def _stop(result: Settling, up: np.ndarray, tau: float, long_run: tuple, short: bool) -> str:
    """Why a horizon ends the search: "settled" (by half of it), "budget" (n_w >= 2
    not resolved in fleets the budget cut: ``short``), "bands" (the bands allow
    settling by half of it but the rates do not show it: a longer horizon would
    only make the blocks coarser, more fleets would say), or "next" (a longer
    horizon is needed)."""
    s = result.hours(2)
    if not math.isnan(s.value) and s.value <= result.horizon_hours / CONFIRM:
        return "settled"
    if short and s.method.startswith("not resolved"):
        return "budget"
    return "bands" if _plausibly_settled(up, tau, long_run) else "next"


def _replace_method(s: Settling, method: str) -> Settling:
    from dataclasses import replace

    return replace(s, method=method)


def settle_hours(fleet: Fleet, seed: int = 0, max_seconds: float | None = None,
                 progress=None) -> tuple[float, str]:
    """(hours, how): the settling time of storms of n_w >= 2 after a
    synchronized restart (``restart_storms``) and how it was made; NaN and
    the reason where there is none (saturated: the method starts with
    SATURATED; the budget: with NOT_IN_BUDGET)."""
    s = restart_storms(fleet, (2,), seed=seed, max_seconds=max_seconds, progress=progress)
    return s.hours(2).value, s.method

"""What forward flux sampling found: its replicates combined (stormsim.risk.splitting).

``summarise`` turns the per-replicate estimates of ``splitting._run`` into a
:class:`SplitEstimate` (mean, standard error over independent replicates,
interval on the log scale, the work-normalised variance and the gain over
plain Monte Carlo); ``merge`` does the same for the replicates of several calls.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student_t

from .._deprecated import renamed
from ..engine.cost import seconds_per_event
from ..engine.model import Fleet
from ..stats.interval import CONFIDENCE
from .settings import SplitSettings

__all__ = ["SplitEstimate", "summarise", "merge", "MIN_REPLICATES", "TOP_SHARE_WARN",
           "interval", "INTERVALS", "DEFAULT_INTERVAL",
           "lognormal_rel_error"]

#: Replicates below which no relative error is reported (a spread needs units).
MIN_REPLICATES = 3
#: A level whose largest replicate holds more than this share of the
#: replicates' sum is flagged (``top_share``): its estimate rests on one
#: replicate (heavy tail; measured at N = 32, k = 24: 32-replicate runs gave
#: 2.7-4.9e-13 where a 600 s run of 1664 replicates gave 5.5e-12).
TOP_SHARE_WARN = 0.5
#: How the interval is formed from the replicates (``interval``).
INTERVALS = ("lognormal-floor", "t-log")
DEFAULT_INTERVAL = "lognormal-floor"


@dataclass
class SplitEstimate:
    """What ``storm_split`` found. Level arrays are indexed like ``levels``.

    storms_per_s, storms_per_s_lo, storms_per_s_hi, storms_per_s_rel_error :
        nu_k (storms per second)
    p_ge, p_ge_lo, p_ge_hi, p_ge_rel_error : P(n_w >= k) (time fraction)
    rep_storms_per_s, rep_p_ge : (replicates, levels) each replicate's own estimate
    from_flux : bool per level: below the basin edge, a plain estimate from
        the flux runs (no splitting)
    interfaces : L_0 .. k_max; p_stage (replicates, J) each stage's success
        fraction; truncated : clones stopped by the event guard (0 expected)
    work_relvar : RE^2 x CPU seconds of each level's storms_per_s (s)
    mc_work_relvar : plain Monte Carlo's RE^2 x CPU s for the same rate, a
        lower bound (Poisson counting of storms, 1 / (nu_k x simulated seconds
        per CPU second of ``simulate``, engine.cost.NS_PER_EVENT)); storms come in
        clusters, which only adds to it
    gain : mc_work_relvar / work_relvar (>= the true gain at equal work)
    top_share : per level, the largest share one replicate holds of the sum of
        the replicates' estimates (of P or nu_k, the larger). Near 1 / R the
        replicates agree; above TOP_SHARE_WARN one replicate carries the
        estimate: the replicate distribution is heavy-tailed there, the
        typical run lies below the mean and the interval may be too narrow
    confidence : the intervals' confidence (0.95)

    The names of 0.2.0 (p, rate, rep_p, rep_rate, level and their _lo, _hi,
    _rel_error) still read, with a DeprecationWarning, for one release.
    """

    levels: np.ndarray
    seed: int
    trials: int
    replicates: int
    flux_cycles: int
    burn_in: int
    interfaces: np.ndarray
    storms_per_s: np.ndarray
    storms_per_s_lo: np.ndarray
    storms_per_s_hi: np.ndarray
    storms_per_s_rel_error: np.ndarray
    p_ge: np.ndarray
    p_ge_lo: np.ndarray
    p_ge_hi: np.ndarray
    p_ge_rel_error: np.ndarray
    rep_storms_per_s: np.ndarray
    rep_p_ge: np.ndarray
    from_flux: np.ndarray
    p_stage: np.ndarray
    flux: np.ndarray
    entries: np.ndarray
    events: int
    truncated: int
    cpu_seconds: float
    wall_seconds: float
    work_relvar: np.ndarray
    mc_work_relvar: np.ndarray
    gain: np.ndarray
    top_share: np.ndarray
    horizon: int
    score_every: str
    confidence: float = CONFIDENCE
    _sim_per_event: float = field(default=float("nan"), repr=False)
    method: str = field(default=(
        "forward flux sampling on the committed-future score with a mean look-ahead of "
        "`horizon` cycles, fixed effort per stage; "
        "95% interval over independent replicates (t, log scale; its relative error at least "
        "the zero-inflated lognormal one of the replicates' spread, split_estimate.interval)"),
        repr=False)

    # the names of 0.2.0, kept one release
    __getattr__ = renamed("SplitEstimate", {
        "p": "p_ge", "p_lo": "p_ge_lo", "p_hi": "p_ge_hi", "p_rel_error": "p_ge_rel_error",
        "rate": "storms_per_s", "rate_lo": "storms_per_s_lo", "rate_hi": "storms_per_s_hi",
        "rate_rel_error": "storms_per_s_rel_error", "rep_p": "rep_p_ge",
        "rep_rate": "rep_storms_per_s", "level": "confidence"})

    def __str__(self) -> str:
        lines = [f"storm_split: {self.replicates} replicates x {self.trials} clones per stage, "
                 f"look-ahead {self.horizon}, score every {self.score_every}, "
                 f"interfaces {self.interfaces.tolist()}, "
                 f"{self.events:.4g} events, "
                 f"{self.cpu_seconds:.3g} CPU s"]
        for j, k in enumerate(self.levels.tolist()):
            src = "flux run" if self.from_flux[j] else "splitting"
            lines.append(f"  k={k:3d}  nu_k={self.storms_per_s[j]:.3e} "
                         f"[{self.storms_per_s_lo[j]:.3e}, {self.storms_per_s_hi[j]:.3e}] "
                         f"RE {self.storms_per_s_rel_error[j]:.3f}   "
                         f"P={self.p_ge[j]:.3e} [{self.p_ge_lo[j]:.3e}, {self.p_ge_hi[j]:.3e}] "
                         f"RE {self.p_ge_rel_error[j]:.3f}  ({src}, gain >= {self.gain[j]:.3g})"
                         + (f"  ONE REPLICATE HOLDS {self.top_share[j]:.0%}: heavy tail, the "
                            "interval may be too narrow" if self.top_share[j] > TOP_SHARE_WARN
                            else ""))
        return "\n".join(lines)


def _log_interval(m, rel, R, confidence):
    q = float(student_t.ppf(0.5 + confidence / 2.0, max(R - 1, 1)))
    return m * np.exp(-q * rel), m * np.exp(q * rel)


def lognormal_rel_error(x) -> np.ndarray:
    """Per column of x (R, levels) >= 0: the relative standard error with which
    the mean of R replicates drawn from a zero-inflated lognormal of x's spread
    could be known at best (the delta method for Cox's estimate
    log(pi) + mu + s^2 / 2: sqrt(s^2 / n_+ + s^4 / (2 (n_+ - 1)) + (1 - pi) / (R pi)),
    mu, s^2 the mean and variance of log x over its n_+ positive entries, pi =
    n_+ / R); inf with fewer than 3 positive entries. It rests on the spread
    of log x, which a sample lacking the rare large replicates estimates well,
    where the sample variance of x itself is then far too small."""
    x = np.asarray(x, dtype=np.float64)
    R = x.shape[0]
    pos = x > 0
    n1 = pos.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.where(pos, np.log(np.where(pos, x, 1.0)), 0.0)
        mu = lx.sum(axis=0) / n1
        s2 = (np.where(pos, lx - mu, 0.0) ** 2).sum(axis=0) / (n1 - 1)
        pi = n1 / R
        v = s2 / n1 + s2 ** 2 / (2.0 * (n1 - 1)) + (1.0 - pi) / (R * pi)
    return np.where(n1 >= 3, np.sqrt(v), np.inf)


def interval(x, confidence=CONFIDENCE, method=DEFAULT_INTERVAL):
    """Mean m, interval (lo, hi) and reported relative error of replicate
    estimates x (R, levels), per level; lo, hi, RE are nan below MIN_REPLICATES.

    method "t-log" (the rule before, kept for comparison): RE = se / m (se the
    standard error over replicates), the interval m exp(+-t_{R-1} RE).
    "lognormal-floor" (the default): the same with RE = max(se / m,
    lognormal_rel_error(x)). The replicates' heavy upper tail makes se / m
    usually too small and the mean usually low (a sample without its rare
    large replicates); the spread of log x is not fooled that way. The floor
    is a judgement checked against the exact law (docs/SPLITTING.md, "Against
    the exact law"), not a theorem: storm_split's log replicates are skewed to
    the left (lighter-tailed than a lognormal), where it covers 95-100 %; on
    exactly lognormal replicates of log sd 2 it covers ~90 % (t-log: 73 %)."""
    if method not in INTERVALS:
        raise ValueError(f"interval method {method!r}: one of {INTERVALS}")
    x = np.asarray(x, dtype=np.float64)
    R = x.shape[0]
    m = x.mean(axis=0)
    if R < MIN_REPLICATES:
        return (m,) + (np.full(m.shape, np.nan),) * 3
    se = x.std(axis=0, ddof=1) / math.sqrt(R)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(m > 0, se / m, np.nan)
    if method == "lognormal-floor":
        rel = np.where(m > 0, np.fmax(rel, lognormal_rel_error(x)), np.nan)
    lo, hi = _log_interval(m, rel, R, confidence)
    return m, lo, hi, rel


def summarise(fleet, ks, o, split: SplitSettings, R, seed, cpu, wall):
    """The SplitEstimate of the per-replicate estimates ``o`` of R replicates run with
    ``split``'s trials, flux_cycles, burn_in, horizon and score_every (recorded in it)."""
    def combine(x):
        return interval(x)

    rate, rate_lo, rate_hi, rate_re = combine(o["rep_storms_per_s"])
    p, p_lo, p_hi, p_re = combine(o["rep_p_ge"])
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.fmax(o["rep_p_ge"].max(axis=0) / o["rep_p_ge"].sum(axis=0),
                      o["rep_storms_per_s"].max(axis=0) / o["rep_storms_per_s"].sum(axis=0))
    work = rate_re ** 2 * cpu
    # plain MC: one storm per 1 / nu_k simulated seconds, a simulated second
    # costing (events per simulated second) x (CPU s per event of simulate)
    cpu_per_sim_s = seconds_per_event(fleet.n_jobs) / o["sim_per_event"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mc = cpu_per_sim_s / rate
        gain = mc / work
    return SplitEstimate(levels=ks, seed=seed, trials=split.trials, replicates=R,
                         flux_cycles=split.flux_cycles, burn_in=split.burn_in,
                         interfaces=o["interfaces"], storms_per_s=rate,
                         storms_per_s_lo=rate_lo, storms_per_s_hi=rate_hi,
                         storms_per_s_rel_error=rate_re, p_ge=p, p_ge_lo=p_lo, p_ge_hi=p_hi,
                         p_ge_rel_error=p_re, rep_storms_per_s=o["rep_storms_per_s"],
                         rep_p_ge=o["rep_p_ge"], from_flux=o["from_flux"], p_stage=o["p_stage"],
                         flux=o["flux"], entries=o["entries"], events=o["events"],
                         truncated=o["truncated"], cpu_seconds=cpu, wall_seconds=wall,
                         work_relvar=work, mc_work_relvar=mc, gain=gain, top_share=top,
                         horizon=split.horizon, score_every=split.score_every,
                         _sim_per_event=o["sim_per_event"])


def merge(parts, fleet: Fleet, cpu: float | None = None, wall: float | None = None):
    """One SplitEstimate of the replicates of several calls (same inputs, seed, basin)."""
    first = parts[0]
    o = dict(interfaces=first.interfaces,
             rep_storms_per_s=np.concatenate([p.rep_storms_per_s for p in parts]),
             rep_p_ge=np.concatenate([p.rep_p_ge for p in parts]), from_flux=first.from_flux,
             p_stage=np.concatenate([p.p_stage for p in parts]),
             flux=np.concatenate([p.flux for p in parts]),
             entries=np.concatenate([p.entries for p in parts]),
             events=sum(p.events for p in parts), truncated=sum(p.truncated for p in parts),
             sim_per_event=first._sim_per_event)
    R = o["rep_storms_per_s"].shape[0]
    cpu = sum(p.cpu_seconds for p in parts) if cpu is None else cpu
    wall = sum(p.wall_seconds for p in parts) if wall is None else wall
    split = SplitSettings(trials=first.trials, flux_cycles=first.flux_cycles,
                          burn_in=first.burn_in, horizon=first.horizon,
                          score_every=first.score_every)
    return summarise(fleet, first.levels, o, split, R, first.seed, cpu, wall)

"""``StormRisk``: what ``storm_risk`` found, level by level, and how it reads;
``with_split``: a StormRisk with levels replaced by a splitting estimate."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._deprecated import renamed
from ..engine.units import SECONDS_PER_DAY
from ..stats.storms import ratio_of_means
from ..stats.interval import CONFIDENCE
from ..stats.tails import monotone_bound
from .splitting import TOP_SHARE_WARN

__all__ = ["StormRisk", "with_split"]


def _re(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


@dataclass
class StormRisk:
    """What ``storm_risk`` found. Arrays are indexed like ``levels``.

    p_ge, p_ge_lo, p_ge_hi, p_ge_method, p_ge_rel_error : P(n_w >= k), its
        interval and method (stormsim.stats.tails), its relative standard error
        (NaN without one)
    storms_per_s, storms_per_s_lo, storms_per_s_hi, storms_per_s_rel_error :
        nu_k, storms per second of measured time (stormsim.stats.storms);
        storms_method : how its interval was made
    storms_per_day, storms_per_day_lo, storms_per_day_hi : nu_k and its interval
        in storms per day (properties: the rates times 86400)
    storm_duration, storm_duration_lo, storm_duration_hi : mean storm duration (s)
    hits : fleets that reached each level
    resolved : both relative errors <= rel_error (with >= MIN_HITS hits)
    fleets_needed, cpu_seconds_needed : estimated plain Monte Carlo cost to
        reach rel_error at each level (the work done for resolved levels);
        ``needed_is_lower_bound`` where no fleet reached the level
    fleets, fleet_cycles, events, cpu_seconds, wall_seconds, batches : effort
    stopped : "rel_error" (every level resolved), "max_seconds", "max_fleets",
        "replicates" (a fixed effort's splitting replicates done), or "exact"
        (answered from the exact law, ``risk.exact``: nothing run)
    level_method : "exact", "plain" or "splitting" per level; split : the
        stormsim.risk.splitting.SplitEstimate of the split levels (or None)
    confidence : the intervals' confidence (0.95)

    A split level no replicate reached has p_ge = 0, p_ge_method
    "monotone-bound": p_ge_hi is the upper end of the interval of the deepest
    lower level asked (P(n_w >= k) falls with k), or 1; its storms_per_s is
    NaN, storms_method "not-reached" (no such bound). Ask for intermediate
    levels, or more time.

    The names of 0.2.0 (p, rate, duration, level and their _lo, _hi, ...)
    still read, with a DeprecationWarning, for one release.
    """

    levels: np.ndarray
    rel_error_target: float
    seed: int
    batch_fleets: int
    p_ge: np.ndarray
    p_ge_lo: np.ndarray
    p_ge_hi: np.ndarray
    p_ge_method: np.ndarray
    p_ge_rel_error: np.ndarray
    storms_per_s: np.ndarray
    storms_per_s_lo: np.ndarray
    storms_per_s_hi: np.ndarray
    storms_method: np.ndarray
    storms_per_s_rel_error: np.ndarray
    storm_duration: np.ndarray
    storm_duration_lo: np.ndarray
    storm_duration_hi: np.ndarray
    hits: np.ndarray
    resolved: np.ndarray
    fleets_needed: np.ndarray
    cpu_seconds_needed: np.ndarray
    needed_is_lower_bound: np.ndarray
    fleets: int = 0
    fleet_cycles: int = 0
    events: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    batches: int = 0
    stopped: str = "running"
    level_method: np.ndarray | None = None
    split: object = field(default=None, repr=False)
    confidence: float = CONFIDENCE
    method: str = field(default=(
        "plain Monte Carlo over independent fleets; P(n_w>=k): ratio estimator, delta method "
        "on the logit scale (stormsim.stats.tails); storms/s and duration: ratio estimators, delta "
        "method on the log scale (stormsim.stats.storms); no event: one-sided 95% bounds"), repr=False)

    # the names of 0.2.0, kept one release
    __getattr__ = renamed("StormRisk", {
        "p": "p_ge", "p_lo": "p_ge_lo", "p_hi": "p_ge_hi", "p_method": "p_ge_method",
        "p_rel_error": "p_ge_rel_error", "rate": "storms_per_s", "rate_lo": "storms_per_s_lo",
        "rate_hi": "storms_per_s_hi", "rate_rel_error": "storms_per_s_rel_error",
        "rate_method": "storms_method", "duration": "storm_duration",
        "duration_lo": "storm_duration_lo", "duration_hi": "storm_duration_hi",
        "level": "confidence"})

    @property
    def storms_per_day(self) -> np.ndarray:
        """nu_k in storms per day (the model's time unit being the second)."""
        return self.storms_per_s * SECONDS_PER_DAY

    @property
    def storms_per_day_lo(self) -> np.ndarray:
        """The lower end of nu_k's interval, in storms per day."""
        return self.storms_per_s_lo * SECONDS_PER_DAY

    @property
    def storms_per_day_hi(self) -> np.ndarray:
        """The upper end of nu_k's interval (a one-sided bound where no storm), per day."""
        return self.storms_per_s_hi * SECONDS_PER_DAY

    def to_dict(self) -> dict:
        """Plain lists and numbers (JSON-ready, NaN as None)."""
        def plain(v):
            if isinstance(v, np.ndarray):
                return [plain(x) for x in v.tolist()]
            if isinstance(v, float) and math.isnan(v):
                return None
            return v
        out = {k: plain(v) for k, v in self.__dict__.items() if k != "split"}
        if self.split is not None:
            sp = self.split
            out["split"] = {k: plain(getattr(sp, k)) for k in (
                "levels", "interfaces", "trials", "replicates", "flux_cycles", "burn_in", "horizon",
                "score_every", "events", "truncated", "cpu_seconds", "wall_seconds", "work_relvar",
                "mc_work_relvar", "gain", "top_share", "method")}
        return out

    def _rate_text(self, j: int, scale: float) -> str:
        """nu_k at level index j with its interval, times ``scale`` (1: per second)."""
        if self.storms_method[j] == "zero-bound":
            return f"< {self.storms_per_s_hi[j] * scale:.2e} (no storm)"
        if self.storms_method[j] == "not-reached":
            return "not reached, no bound" if scale == 1.0 else "-"
        return (f"{self.storms_per_s[j] * scale:.3e} [{self.storms_per_s_lo[j] * scale:.3e}, "
                f"{self.storms_per_s_hi[j] * scale:.3e}]")

    def __str__(self) -> str:
        lines = [f"storm_risk: {self.fleets} fleets in {self.batches} batches of "
                 f"{self.batch_fleets}, {self.fleet_cycles:.4g} fleet-cycles, "
                 f"{self.cpu_seconds:.3g} CPU s ({self.wall_seconds:.3g} s wall); stopped: "
                 f"{self.stopped}; target relative error {self.rel_error_target:g}"]
        head = ["k", "P(n_w>=k) [95% CI]", "RE", "storms/s [95% CI]", "storms/day [95% CI]",
                "RE", "storm s [95% CI]", "resolved / plain-MC cost to resolve"]
        rows = []
        bound = monotone_bound(self.p_ge_hi, self.p_ge_method)     # unreached: the measured scale
        for j, k in enumerate(self.levels.tolist()):
            p = (f"< {bound[j]:.2e} (not reached)"
                 if self.p_ge_method[j] in ("zero-bound", "monotone-bound") else
                 f"{self.p_ge[j]:.3e} [{self.p_ge_lo[j]:.3e}, {self.p_ge_hi[j]:.3e}]")
            r, per_day = (self._rate_text(j, scale) for scale in (1.0, SECONDS_PER_DAY))
            d = ("-" if math.isnan(self.storm_duration[j]) else f"{self.storm_duration[j]:.4g}" +
                 ("" if math.isnan(self.storm_duration_lo[j]) else
                  f" [{self.storm_duration_lo[j]:.4g}, {self.storm_duration_hi[j]:.4g}]"))
            if self.level_method is not None and self.level_method[j] == "splitting":
                cost = ("yes" if self.resolved[j] else "no") + " (splitting)"
            elif self.resolved[j]:
                cost = "yes"
            else:
                at_least = ">= " if self.needed_is_lower_bound[j] else "~"
                cost = (f"no: {at_least}{self.fleets_needed[j]:.3g} fleets, "
                        f"{at_least}{self.cpu_seconds_needed[j]:.3g} CPU s")
            rows.append([str(k), p, _re(self.p_ge_rel_error[j]), r, per_day,
                         _re(self.storms_per_s_rel_error[j]), d, cost])
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        lines += ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in rows]
        lines.append("RE: relative standard error. " + self.method)
        if self.split is not None:
            sp = self.split
            lines.append(f"splitting levels: {sp.replicates} replicates x {sp.trials} clones per "
                         f"stage, score every {sp.score_every}, interfaces {sp.interfaces.tolist()}, "
                         f"{sp.cpu_seconds:.3g} CPU s; " + sp.method)
            heavy = sp.levels[sp.top_share > TOP_SHARE_WARN]
            if heavy.size:
                lines.append(f"WARNING: at k = {', '.join(map(str, heavy.tolist()))} one splitting "
                             "replicate holds most of the estimate (heavy tail): the typical run "
                             "lies below the mean and the interval may be too narrow; run longer")
        return "\n".join(lines)


def _bound_unreached(ks, unreached, base) -> None:
    """Levels no replicate reached: P(n_w >= k) <= P(n_w >= k') for every
    k' < k, so the upper end of the deepest lower level's interval bounds it
    ("monotone-bound"; 1 if none was reached). nu_k has no such bound (storms
    of k need not be rarer than storms of k - 1): "not-reached", NaN."""
    base["p_ge_method"] = base["p_ge_method"].astype(object)       # room for longer names
    base["storms_method"] = base["storms_method"].astype(object)
    for j in unreached.tolist():
        lower = [i for i in range(ks.size) if ks[i] < ks[j] and base["p_ge"][i] > 0
                 and math.isfinite(base["p_ge_hi"][i])]
        base["p_ge"][j], base["p_ge_lo"][j] = 0.0, 0.0
        base["p_ge_hi"][j] = min((base["p_ge_hi"][i] for i in lower), default=1.0)
        base["p_ge_method"][j] = "monotone-bound"
        base["p_ge_rel_error"][j] = np.nan
        for name in ("storms_per_s", "storms_per_s_lo", "storms_per_s_hi",
                     "storms_per_s_rel_error"):
            base[name][j] = np.nan
        base["storms_method"][j] = "not-reached"


def with_split(risk, ks, todo, sp, target, plain_events, stopped, clocks) -> StormRisk:
    """The StormRisk ``risk`` (None: no plain Monte Carlo ran) with levels
    ``todo`` of ``ks`` replaced by the splitting estimate ``sp`` (SplitEstimate),
    ``resolved`` against ``target``; the effort: ``plain_events`` plus the
    splitting's events, ``clocks`` (CPU s, wall s) in all."""
    cpu_seconds, wall_seconds = clocks
    n = ks.size
    if risk is None:
        nan = np.full(n, np.nan)
        base = dict(p_ge=nan.copy(), p_ge_lo=nan.copy(), p_ge_hi=nan.copy(),
                    p_ge_method=np.full(n, "splitting"), p_ge_rel_error=nan.copy(),
                    storms_per_s=nan.copy(), storms_per_s_lo=nan.copy(),
                    storms_per_s_hi=nan.copy(), storms_method=np.full(n, "splitting"),
                    storms_per_s_rel_error=nan.copy(), storm_duration=nan.copy(),
                    storm_duration_lo=nan.copy(), storm_duration_hi=nan.copy(),
                    hits=np.zeros(n, dtype=np.int64),
                    resolved=np.zeros(n, dtype=bool), fleets_needed=nan.copy(),
                    cpu_seconds_needed=nan.copy(), needed_is_lower_bound=np.zeros(n, bool),
                    fleets=0, fleet_cycles=0, batches=0, batch_fleets=0, method=sp.method)
    else:
        base = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                for k, v in risk.__dict__.items() if k not in ("levels", "split")}
        base["p_ge_method"] = base["p_ge_method"].astype(object)
        base["storms_method"] = base["storms_method"].astype(object)
    idx = np.nonzero(todo)[0]
    for name in ("p_ge", "p_ge_lo", "p_ge_hi", "p_ge_rel_error", "storms_per_s",
                 "storms_per_s_lo", "storms_per_s_hi", "storms_per_s_rel_error"):
        base[name][idx] = getattr(sp, name)
    base["p_ge_method"][idx] = "splitting"
    base["storms_method"][idx] = "splitting"
    _bound_unreached(ks, idx[~(sp.p_ge > 0)], base)
    # time at >= k per storm: the ratio of the replicates' means, its interval
    # over the replicates (independent units) like every other ratio here
    d, d_lo, d_hi, _ = ratio_of_means(sp.rep_p_ge, sp.rep_storms_per_s, sp.confidence)
    base["storm_duration"][idx], base["storm_duration_lo"][idx] = d, d_lo
    base["storm_duration_hi"][idx] = d_hi
    base["resolved"][idx] = (sp.storms_per_s_rel_error <= target) & (sp.p_ge_rel_error <= target)
    lm = np.full(n, "plain", dtype=object) if risk is None or risk.level_method is None \
        else risk.level_method.astype(object)
    lm[idx] = "splitting"
    base.update(level_method=lm.astype(str), split=sp, stopped=stopped,
                cpu_seconds=cpu_seconds, wall_seconds=wall_seconds,
                events=plain_events + sp.events, rel_error_target=target, seed=sp.seed)
    base["p_ge_method"] = base["p_ge_method"].astype(str)
    base["storms_method"] = base["storms_method"].astype(str)
    return StormRisk(levels=ks, **base)

"""Splitting's settings and their defaults, in one place: :class:`SplitSettings`.

``storm_split``, ``storm_split_until``, ``choose_basin`` and ``storm_risk``
(``split=``) take them as one object; a sweep's risk_* keys map onto it
(``stormsim.sweep.keys``). The inputs of a run (the fleet, its levels, seed,
launch, threads) are not settings: they stay the functions' own arguments.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace
from numbers import Integral

from .._args import check_int
from ..engine import door
from ..errors import SpecError

__all__ = ["BASIN_RULES", "DEFAULT_BASIN", "DEFAULT_BURN_IN", "DEFAULT_HORIZON",
           "DEFAULT_SCORE_EVERY", "DEFAULT_SPLIT_BURN_IN", "FIELDS", "FIXED_REPLICATES",
           "SCORE_EVERY", "SplitSettings", "check_basin", "check_score_every", "split_settings"]

#: Storm risk's burn-in (cycles before a fleet is measured): storm_risk's
#: default, for its plain fleets and its splitting flux runs alike.
DEFAULT_BURN_IN = 80
#: A splitting flux run's burn-in when neither the settings nor a caller
#: (storm_risk) give one: storm_split's, storm_split_until's and
#: choose_basin's own default. It stays apart from DEFAULT_BURN_IN because
#: the recorded splitting entries of scripts/ and benchmarks/ (RESULTS.md 5x,
#: docs/SPLITTING.md) ran with it.
DEFAULT_SPLIT_BURN_IN = 100
#: Splitting replicates when not given: storm_split's, and a fixed effort's
#: (storm_risk with max_seconds=None, a sweep's risk_replicates).
FIXED_REPLICATES = 32
#: How the basin is placed when ``basin`` is not an integer (see choose_basin).
BASIN_RULES = ("raised", "most-entries")
DEFAULT_BASIN = "raised"
#: The score's default look-ahead (cycles of the mean future, ``horizon``):
#: 0 is the committed future alone. Measured at N = 32 (L = 0.6, sigma =
#: 0.01 T, fair), equal CPU (~100 s), P at k = 20 / 22 / 24: horizon 0
#: (200 x 192) RE 0.25 / 0.42 / 0.94, top share 0.25 / 0.30 / 0.94; horizon 2
#: (200 x 32) RE 0.14 / 0.22 / 0.26, top share 0.14 / 0.16 / 0.19.
DEFAULT_HORIZON = 2
#: When the score is looked at (``score_every``, see stormsim.risk.splitting):
#: "cycle" (the default) once a cycle, and at every write end while the last
#: look was within NEAR_LEVELS of the next interface; "write-end" at every
#: write end (the rule before "cycle" existed).
SCORE_EVERY = ("cycle", "write-end")
DEFAULT_SCORE_EVERY = "cycle"


def check_score_every(score_every) -> str:
    """Refuse a ``score_every`` that is not one of SCORE_EVERY."""
    if score_every not in SCORE_EVERY:
        raise SpecError(f"score_every = {score_every!r}: must be one of "
                        f"{', '.join(map(repr, SCORE_EVERY))}")
    return score_every


def check_basin(basin, top: int | None = None):
    """Refuse a basin that is neither None, a rule of BASIN_RULES nor an integer
    level in 1..top (top: the deepest level asked; None: not known yet)."""
    if basin is None or (isinstance(basin, str) and basin in BASIN_RULES):
        return basin
    if isinstance(basin, bool) or not isinstance(basin, Integral) or basin < 1 or \
            (top is not None and basin > top):
        where = "an integer level >= 1" if top is None else \
            f"an integer in 1..max(levels) = {top}"
        raise SpecError(f"basin = {basin!r}: must be {where} or a rule, one of "
                        f"{', '.join(map(repr, BASIN_RULES))}")
    return int(basin)


@dataclass(frozen=True)
class SplitSettings:
    """The settings of forward flux sampling (stormsim.risk.splitting), each
    checked when the object is made (a SpecError naming it).

    Parameters
    ----------
    trials : clones per stage and replicate (the fixed effort M), >= 1
    replicates : independent splitting runs; the interval comes from their
        spread. None (the default): FIXED_REPLICATES for ``storm_split`` and a
        fixed effort of ``storm_risk``; under a time budget ``storm_risk``
        runs rounds of replicates until ``rel_error`` (and needs None). The
        defaults (100 x 32) come from tuning runs at N = 32 (L = 0.6,
        sigma = 0.01 T): with horizon 0, at equal CPU, 32 x 250 and 64 x 100
        gave a work-normalised variance 2-4x below 8 x 1000; with horizon 2,
        64 x 100 beat 32 x 200 (1.2-2x): most of the variance is between
        replicates, so many short replicates beat a few rich ones
    flux_cycles : cycles of each replicate's flux run (one fleet), > burn_in
    burn_in : cycles before a flux run is measured, in 0..flux_cycles-1.
        None (the default): the caller's: ``storm_risk``'s ``burn_in`` (one
        burn-in for its plain fleets and its flux runs), else DEFAULT_SPLIT_BURN_IN
    horizon : the score's look-ahead in cycles (0: the committed future),
        >= 0; it also places the basin
    basin : L_0, an integer level (at most the deepest level split), or the
        rule that places it from the seed (``choose_basin``): "raised" (the
        default; None too) or "most-entries"
    score_every : when the score is looked at: "cycle" (the default: once a
        cycle, and at every write end near the next interface; ~5x less CPU
        per replicate at N = 32) or "write-end" (at every write end)
    reservoir : entry states kept per flux run (uniformly, of all entries)
    max_events : a guard: events a trial may run before it is cut (and
        counted in ``truncated``)
    """

    trials: int = 100
    replicates: int | None = None
    flux_cycles: int = 2000
    burn_in: int | None = None
    horizon: int = DEFAULT_HORIZON
    basin: int | str | None = DEFAULT_BASIN
    score_every: str = DEFAULT_SCORE_EVERY
    reservoir: int = 4096
    max_events: int = door.FFS_MAX_EVENTS

    def __post_init__(self):
        put = (lambda name, value: object.__setattr__(self, name, value))
        put("trials", check_int("trials", self.trials, 1))
        if self.replicates is not None:
            put("replicates", check_int("replicates", self.replicates, 1))
        put("flux_cycles", check_int("flux_cycles", self.flux_cycles, 1))
        if self.burn_in is not None:
            put("burn_in", check_int("burn_in", self.burn_in, 0, self.flux_cycles - 1,
                                     what="cycles before each flux run is measured, below "
                                          "flux_cycles"))
        put("horizon", check_int("horizon", self.horizon, 0, what="cycles of look-ahead"))
        put("basin", check_basin(self.basin))
        check_score_every(self.score_every)
        put("reservoir", check_int("reservoir", self.reservoir, 1))
        put("max_events", check_int("max_events", self.max_events, 1))

    def with_burn_in(self, burn_in: int) -> SplitSettings:
        """These settings with ``burn_in`` where theirs is None (the caller's
        default); checked against flux_cycles."""
        return self if self.burn_in is not None else replace(self, burn_in=burn_in)


#: SplitSettings' field names: what ``split_settings`` accepts as keywords.
FIELDS = tuple(f.name for f in fields(SplitSettings))


def split_settings(split, given: dict, where: str, deprecated: bool = False) -> SplitSettings:
    """``split`` (a SplitSettings, or None: the defaults) with the settings
    ``given`` as keywords set on it. ``where`` names the function for the
    messages; ``deprecated``: the keywords warn (DeprecationWarning) that
    ``split=SplitSettings(...)`` is their spelling."""
    if split is None:
        split = SplitSettings()
    elif not isinstance(split, SplitSettings):
        raise SpecError(f"split = {split!r}: must be a stormsim.SplitSettings (or None: its "
                        "defaults)")
    for key in given:
        if key not in FIELDS:
            raise SpecError(f"{key} = {given[key]!r}: {where} has no argument {key!r}; its "
                            f"splitting settings are {', '.join(FIELDS)}")
    if given and deprecated:
        spelled = ", ".join(f"{k}={v!r}" for k, v in given.items())
        warnings.warn(f"{where}({', '.join(given)}=...) is deprecated: give "
                      f"split=SplitSettings({spelled})", DeprecationWarning, stacklevel=3)
    return replace(split, **given) if given else split

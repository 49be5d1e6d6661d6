"""Every public function refuses a wrong argument up front: a SpecError whose
message starts with the argument's name, never a TypeError, AttributeError
or KeyError from deep inside (nor a silently coerced value: "3" is not 3,
True is not 1, 2.5 is not 2).

Each function is called with good keywords (small: a bad value accepted by
mistake would run, briefly) and one of them replaced by a wrong one.
"""
from __future__ import annotations

import math
import re
import threading

import pytest

import stormsim
from stormsim import Fleet, SpecError

FLEET = Fleet.identical(4, T=1.0, load=0.5, jitter=0.01)
POWERED = FLEET.replace(busy_power=700.0, idle_power=100.0)
RAMP_RUN = stormsim.simulate(POWERED, fleets=2, cycles=5, ramps=((0.5,), (500.0,)))

SWEEP_TEXT = "[fixed]\nN = 2\nT = 1.0\nd = 0.1\nlaunch = 'random'\nfleets = 2\ncycles = 10\n"

#: Wrong values by what the argument is.
COUNT = ["3", 2.5, True, None, [3], math.nan]          # an integer
COUNT_OPT = [v for v in COUNT if v is not None]          # ... where None means "the default"
NUMBER = ["0.5", True, None, [0.5], math.nan, math.inf]  # a finite number
NUMBER_OPT = [v for v in NUMBER if v is not None]
FLAG = ["yes", 1, None, [True]]
CHOICE = [3, None, "nonsense", ["auto"]]
NOT_A_FLEET = ["fleet", None, 3, [FLEET]]
PROGRESS = ["yes", 3, [print]]
LAUNCH = [3, "nonsense", [0.5], [math.nan] * 4]
PER_JOB = ["1.0", True, None, [[1.0, 1.0]], ["1", "2"], [math.nan, 1.0], [1.0, math.inf]]


def _csv(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text("compute_interval [min],size [GB],jitter [s]\n30,10,1\n30,10,1\n")
    return path


#: (label, function, good keywords, {argument: wrong values}); a good keyword
#: given as a callable of tmp_path is built per test.
CASES = [
    ("simulate", stormsim.simulate, dict(fleet=FLEET, fleets=2, cycles=10), dict(
        fleet=NOT_A_FLEET, launch=LAUNCH, fleets=COUNT, cycles=COUNT, seed=COUNT_OPT,
        record_firings=FLAG, passage_level=COUNT_OPT + [0, 5], burn_in=COUNT + [10],
        stop_at_passage=FLAG, fleet_start=COUNT + [-1], batch_size=COUNT_OPT + [0],
        threads=COUNT_OPT + [0], progress=PROGRESS, queues=CHOICE, kernel=CHOICE,
        fast_forward=["yes", 1, None, ["auto"]])),
    ("simulate", stormsim.simulate, dict(fleet=POWERED, fleets=2, cycles=10), dict(
        ramps=["x", (1.0,), ((0.0,), (1.0,)), ((1.0,), (math.nan,))],
        power_trace=COUNT + [-1])),
    ("plan", stormsim.plan, dict(fleet=FLEET, levels=[2], what_if=False, max_seconds=1.0),
     dict(fleet=NOT_A_FLEET, levels=["x", "N/0", 2.5, True, None, [0], [5], [[2]]],
          what_if=FLAG, max_seconds=NUMBER + [0.0], seed=COUNT,
          max_writers=[0, 5, 2.5, True, "x", [[2]], [2, 2]],
          snapshot=NUMBER + ["5", "5 GB", -1.0], slowdown=NUMBER + [1.5, -0.1])),
    ("storm_risk", stormsim.storm_risk,
     dict(fleet=FLEET, levels=[2], max_seconds=None, max_fleets=4, cycles=20, burn_in=2,
          method="plain"), dict(
        fleet=NOT_A_FLEET, levels=["2", 2.5, True, None, [[2]], [0], [], [2, 2], [5]],
        rel_error=NUMBER + [0.0, -0.1], max_seconds=NUMBER_OPT + [0.0], seed=COUNT,
        cycles=COUNT, burn_in=COUNT + [20], launch=LAUNCH, batch_fleets=COUNT_OPT,
        max_fleets=COUNT_OPT + [0], min_hits=COUNT, threads=COUNT_OPT, progress=PROGRESS,
        method=CHOICE, split=[3, "auto", {"trials": 2}])),
    ("SplitSettings", stormsim.SplitSettings, dict(), dict(
        trials=COUNT, replicates=COUNT_OPT + [0], flux_cycles=COUNT,
        burn_in=COUNT_OPT + [-1, 2000], horizon=COUNT + [-1],
        basin=[2.5, True, "nonsense", [2], 0], score_every=CHOICE, reservoir=COUNT,
        max_events=COUNT)),
    ("storm_split", stormsim.storm_split,
     dict(fleet=FLEET, levels=[2], trials=2, replicates=2, flux_cycles=50, burn_in=5), dict(
        fleet=NOT_A_FLEET, levels=["2", 2.5, True, None, [0], [5]], trials=COUNT,
        replicates=COUNT_OPT, flux_cycles=COUNT, burn_in=COUNT_OPT + [50], seed=COUNT,
        basin=[2.5, True, "nonsense", [2], 0, 3], reservoir=COUNT, launch=LAUNCH,
        rep0=COUNT + [-1], threads=COUNT_OPT, max_events=COUNT, horizon=COUNT,
        score_every=CHOICE)),
    ("run_sweep", stormsim.run_sweep,
     dict(sweep=stormsim.parse_sweep(SWEEP_TEXT), output=stormsim.MemoryStore, progress="none"),
     dict(sweep=[3, None, ["sweep.toml"]], output=[3, None, "", ["out.h5"]],
          executor=[3, "", "local:x", [1]], overwrite=FLAG, progress=["yes", 3, print],
          stop=["stop", 3], stream=[3, "stderr"])),
    ("Fleet", Fleet, dict(T=[1.0, 1.0], d=[0.1, 0.1]), dict(
        T=PER_JOB, d=PER_JOB, cap=["3", True, None, [1.0], math.nan, 0.0],
        throughput=[3, None, "nonsense", [math.nan, 1.0]], jitter=PER_JOB[:2] + PER_JOB[3:],
        checkpoint=[3, None, "nonsense", ["async"]], weights=PER_JOB[:2] + PER_JOB[3:])),
    ("Fleet async", Fleet, dict(T=[1.0, 1.0], d=[0.1, 0.1], checkpoint="async"), dict(
        snapshot=PER_JOB[:2] + PER_JOB[3:], slowdown=PER_JOB[:2] + PER_JOB[3:],
        on_busy=[3, None, "nonsense", ["skip"]])),
    ("Fleet.identical", Fleet.identical, dict(n_jobs=4, T=1.0, load=0.5), dict(
        n_jobs=COUNT + [0], T=NUMBER, load=["0.5", True, [0.5], math.nan, math.inf, 0.0],
        cap=["3", True, None, [1.0], math.nan], jitter=NUMBER[:2] + NUMBER[3:],
        throughput=[3, None, "nonsense"])),
    ("Fleet.identical d", Fleet.identical, dict(n_jobs=4, T=1.0, d=0.1), dict(
        d=["0.1", True, [0.1], math.nan, math.inf, 0.0])),
    ("Fleet.from_jobs", Fleet.from_jobs,
     dict(n_jobs=2, compute_interval="30 min", size="10 GB", bandwidth="1 GB/s"), dict(
        n_jobs=COUNT_OPT + [0], compute_interval=[30, "30", None, True, [], "nan min", "inf min",
                                                  "30 GB", "-1 min"],
        size=[10, "10", None, True, "1e400 GB", "10 s", "0 GB"],
        bandwidth=[80, None, "80 GB", True, ["1 GB/s", "2 GB/s"], "0 GB/s"],
        jitter=[1, "1", True, "nan s", "-1 s", "1 GB"], cap=["3", True, None, [1.0], math.nan],
        throughput=[3, "nonsense"], checkpoint=[3, "nonsense"], on_busy=[3, "nonsense"],
        weight=["w", True, math.nan, -1.0], max_writers=COUNT_OPT + [0, 3], sizee=["10 GB"])),
    ("Fleet.from_csv", Fleet.from_csv, dict(path=_csv, bandwidth="1 GB/s"), dict(
        path=[3, None, ["jobs.csv"]], bandwidth=[80, None, "80 GB", True],
        cap=["3", True, None, math.nan], throughput=[3, "nonsense"],
        max_writers=COUNT_OPT + [0, 3])),
    ("kaplan_meier", stormsim.kaplan_meier, dict(time=[1.0, 2.0], observed=[True, False]), dict(
        time=["abc", None, [math.nan, 1.0], ["1", "2"], [1.0, math.inf]],
        observed=["yes", [0.5, 1.0], [2, 0]], confidence=NUMBER + [0.0, 1.0, 1.5])),
    ("median_survival", stormsim.median_survival, dict(time=[1.0, 2.0]), dict(
        time=["abc", [math.nan, 1.0]], observed=["yes", [0.5, 1.0]], confidence=NUMBER + [1.5])),
    ("stationary", stormsim.stationary, dict(fleet=FLEET), dict(fleet=NOT_A_FLEET)),
    ("power_law", stormsim.power_law, dict(fleet=FLEET, busy_power=700.0, idle_power=100.0), dict(
        fleet=NOT_A_FLEET, busy_power=PER_JOB + [-1.0, [1.0] * 3],
        idle_power=PER_JOB + [800.0, [800.0] * 4],
        law=["law", 3, stormsim.stationary(Fleet.identical(3, load=0.5, jitter=0.01))])),
    ("ramp_estimate", stormsim.ramp_estimate, dict(run=RAMP_RUN), dict(
        run=["run", 3, stormsim.simulate(POWERED, fleets=2, cycles=3)],
        confidence=NUMBER + [0.0, 1.5])),
    ("best_interval", stormsim.best_interval, dict(fleet=FLEET, mtbf="24 h"), dict(
        fleet=NOT_A_FLEET, mtbf=NUMBER + ["24 GB", "-1 h", 0.0], restart=NUMBER_OPT + ["1 GB", -1.0])),
    ("stagger_spacing", stormsim.stagger_spacing, dict(fleet=FLEET), dict(fleet=NOT_A_FLEET)),
    ("stagger_margin", stormsim.stagger_margin, dict(fleet=FLEET), dict(fleet=NOT_A_FLEET)),
    ("stagger_theta", stormsim.stagger_theta, dict(fleet=FLEET), dict(fleet=NOT_A_FLEET)),
    ("throughput_table", stormsim.throughput_table, dict(spec="fair", n_jobs=3), dict(
        spec=[3, None, "nonsense"], n_jobs=COUNT + [0])),
    ("load_sweep", stormsim.load_sweep, dict(path="x.toml"), dict(path=[3, None, "", ["x.toml"]])),
    ("parse_sweep", stormsim.parse_sweep, dict(text=SWEEP_TEXT), dict(
        text=[3, None, SWEEP_TEXT.encode(), [SWEEP_TEXT]], source=[3, None])),
    ("LocalExecutor", stormsim.LocalExecutor, dict(), dict(
        workers=COUNT_OPT + [0], target_seconds=NUMBER + [0.0])),
    ("DaskExecutor", stormsim.DaskExecutor, dict(address="local:1"), dict(
        address=[3, None, "", "local:x", ["local:1"]], threads_per_task=COUNT + [0],
        target_seconds=NUMBER + [0.0])),
    ("open_results", stormsim.open_results, dict(path="x.h5"), dict(path=[3, None, ["x.h5"]])),
    ("HDF5Store", stormsim.HDF5Store, dict(path="x.h5"), dict(path=[3, None, ["x.h5"]])),
    ("Interval", stormsim.Interval, dict(value=0.5, lo=0.25, hi=0.75, method="m"), dict(
        value=["0.5", True, None, [0.5]], lo=["0.25", None], hi=["0.75", None],
        method=[3, None], confidence=NUMBER + [0.0, 1.0], unit=[3, None])),
]

#: In store/ (another engineer's wing): the wrong arguments they still let
#: through to Python's own errors. Known, listed, and checked to stay so
#: (strict xfail) so that the fix flips this list.


def _expand(cases, marks=()):
    for label, fn, good, bad in cases:
        for arg, values in bad.items():
            for value in values:
                yield pytest.param(fn, good, arg, value, marks=marks,
                                   id=f"{label}-{arg}-{value!r}"[:80])


#: Arguments whose messages use the name the rest of the API gives them.
SPELLED = {"spec": "throughput"}


def _call(fn, good, arg, value, tmp_path):
    kwargs = {k: (v(tmp_path) if callable(v) and not isinstance(v, type) else
                  v() if isinstance(v, type) else v) for k, v in good.items()}
    kwargs[arg] = value
    with pytest.raises(SpecError, match=rf"^{re.escape(SPELLED.get(arg, arg))}\b") as info:
        fn(**kwargs)
    return info


@pytest.mark.parametrize("fn, good, arg, value", list(_expand(CASES)))
def test_a_wrong_argument_is_a_spec_error_naming_it(fn, good, arg, value, tmp_path):
    _call(fn, good, arg, value, tmp_path)


def test_the_cases_cover_every_public_function_with_arguments():
    # Results, Run, StormRisk, SplitEstimate, StationaryLaw, PowerLaw, FleetPlan, Sweep and
    # SweepOutcome are what the functions return (never built by a caller); MemoryStore
    # takes no argument; the errors and the warning are raised, never called.
    returned = {"Results", "Run", "StormRisk", "SplitEstimate", "StationaryLaw", "PowerLaw",
                "RampEstimate",
                "FleetPlan", "BestInterval", "ClassInterval",
                "Sweep", "SweepOutcome", "MemoryStore",
                "SpecError", "SweepError", "ResourceError", "DeterministicFleetWarning",
                "__version__"}
    covered = {getattr(fn, "__name__", "") for _, fn, _, _ in CASES} | {"Fleet"}
    assert set(stormsim.__all__) - returned - covered == set()


# -- progress: a callable, True (a line per step on stderr), False or None -----------

def test_progress_false_none_and_true(capsys):
    for quiet in (False, None):
        stormsim.storm_risk(FLEET, [2], max_seconds=None, max_fleets=4, cycles=20, burn_in=2,
                            method="plain", progress=quiet)
        stormsim.simulate(FLEET, fleets=2, cycles=10, progress=quiet)
    assert capsys.readouterr().err == ""
    stormsim.storm_risk(FLEET, [2], max_seconds=None, max_fleets=4, cycles=20, burn_in=2,
                        method="plain", progress=True)
    stormsim.simulate(FLEET, fleets=2, cycles=10, batch_size=1, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("storm_risk: ") and "levels resolved" in err[0]
    assert err[-2:] == ["simulate: 1/2 fleets", "simulate: 2/2 fleets"]


def test_progress_true_in_splitting_rounds(capsys):
    from stormsim.risk.splitting import storm_split_until
    storm_split_until(FLEET, [2], 0.5, 60.0, stormsim.SplitSettings(trials=2, flux_cycles=50,
                                                                     burn_in=5),
                      round_replicates=2, max_replicates=2, progress=True)
    assert capsys.readouterr().err.startswith("storm_split: 2 replicates")


def test_run_sweep_progress_true_and_false(capsys):
    sweep = stormsim.parse_sweep(SWEEP_TEXT)
    stormsim.run_sweep(sweep, stormsim.MemoryStore(), progress=False)
    assert capsys.readouterr().err == ""
    stream = _Lines()
    stormsim.run_sweep(sweep, stormsim.MemoryStore(), progress=True, stream=stream,
                       stop=threading.Event())
    assert stream.text                                  # "auto" off a terminal: lines


class _Lines:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

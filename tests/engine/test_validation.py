"""Bad input: a SpecError (ValueError) naming the parameter, the value and the rule."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import stormsim
from stormsim import Fleet, SpecError, simulate

GOOD = dict(T=[1.0, 1.0, 1.0], d=[0.1, 0.1, 0.1])


@pytest.mark.parametrize("kwargs,match", [
    (dict(T=[], d=[]), r"T = \[\]: a fleet needs at least one job"),
    (dict(T=[1.0, -1.0], d=[0.1, 0.1]), r"T\[1\] = -1.0: must be finite and > 0"),
    (dict(T=[1.0, math.inf], d=[0.1, 0.1]), r"T\[1\] = inf: must be finite"),
    (dict(T=[1.0, 1.0], d=[0.1, 0.0]), r"d\[1\] = 0.0: must be finite and > 0"),
    (dict(T=[1.0, 1.0], d=[0.1, math.nan]), r"d\[1\] = nan"),
    (dict(T=[1.0, 1.0], d=[0.1, 0.1, 0.1]), r"d has 3 values but the fleet has 2 jobs"),
    (dict(T=[[1.0]], d=[0.1]), r"T has shape \(1, 1\)"),
    (dict(T="abc", d=[0.1]), r"T = 'abc': must be a number"),
    (dict(GOOD, cap=0.0), r"cap = 0.0: must be > 0"),
    (dict(GOOD, cap=-2), r"cap = -2: must be > 0"),
    (dict(GOOD, cap=math.nan), r"cap = nan"),
    (dict(GOOD, jitter=-0.1), r"jitter\[0\] = -0.1: must be finite and >= 0"),
    (dict(GOOD, jitter=[0.0, 0.1]), r"jitter has 2 values but the fleet has 3 jobs"),
    (dict(GOOD, throughput="fast"), r"throughput = 'fast': must be 'fair', 'ideal'"),
    (dict(GOOD, throughput=("power", 1.5)), r"alpha must be a number in \[0, 1\]"),
    (dict(GOOD, throughput=("power", -0.1)), r"alpha must be a number in \[0, 1\]"),
    (dict(GOOD, throughput=[1.0, 1.5]), r"must give f\(n\) for n = 1..N, N = 3 values"),
    (dict(GOOD, throughput=[0.9, 1.5, 2.0]), r"f\(1\) = 0.9: must be exactly 1"),
    (dict(GOOD, throughput=[1.0, 2.5, 2.0]), r"f\(2\) = 2.5: must be in \(0, 2\]"),
    (dict(GOOD, throughput=[1.0, 1.0, 0.0]), r"f\(3\) = 0.0: must be in \(0, 3\]"),
    # MODEL.md E1 / E2 options
    (dict(GOOD, checkpoint="lazy"), r"checkpoint = 'lazy': must be one of 'blocking', 'async'"),
    (dict(GOOD, checkpoint=["async", "x", "async"]), r"checkpoint\[1\] = 'x': must be one of"),
    (dict(GOOD, checkpoint=["async", "async"]), r"checkpoint has 2 values but the fleet has 3 jobs"),
    (dict(GOOD, checkpoint="async", snapshot=-0.1), r"snapshot\[0\] = -0.1: must be finite and >= 0"),
    (dict(GOOD, checkpoint="async", snapshot=math.inf), r"snapshot\[0\] = inf: must be finite"),
    (dict(GOOD, checkpoint="async", snapshot=[0.1, math.nan, 0.1]), r"snapshot\[1\] = nan"),
    (dict(GOOD, checkpoint="async", slowdown=1.5), r"slowdown\[0\] = 1.5: must be in \[0, 1\]"),
    (dict(GOOD, checkpoint="async", slowdown=-0.1), r"slowdown\[0\] = -0.1: must be in \[0, 1\]"),
    (dict(GOOD, checkpoint="async", slowdown=math.nan), r"slowdown\[0\] = nan: must be in \[0, 1\]"),
    (dict(GOOD, checkpoint="async", on_busy="drop"), r"on_busy = 'drop': must be one of 'block', 'skip'"),
    (dict(GOOD, weights=0.0), r"weights\[0\] = 0.0: must be finite and > 0"),
    (dict(GOOD, weights=[1.0, -2.0, 1.0]), r"weights\[1\] = -2.0: must be finite and > 0"),
    (dict(GOOD, weights=[1.0, math.inf, 1.0]), r"weights\[1\] = inf"),
    (dict(GOOD, weights=[1.0, 2.0]), r"weights has 2 values but the fleet has 3 jobs"),
    (dict(GOOD, snapshot=0.1), r"snapshot = 0.1: an option of asynchronous checkpoints, but every "
                               r"job has checkpoint = 'blocking'. Set checkpoint = 'async'"),
    (dict(GOOD, slowdown=0.2), r"slowdown = 0.2: an option of asynchronous checkpoints"),
    (dict(GOOD, on_busy="skip"), r"on_busy = 'skip': an option of asynchronous checkpoints"),
    (dict(GOOD, checkpoint=["async", "blocking", "async"], slowdown=[0.1, 0.2, 0.1]),
     r"slowdown\[1\] = 0.2 but job 1 has checkpoint = 'blocking'"),
])
def test_bad_fleet(kwargs, match):
    with pytest.raises(SpecError, match=match):
        Fleet(**kwargs)


def test_spec_error_is_a_value_error():
    with pytest.raises(ValueError):
        Fleet(T=[1.0], d=[-1.0])


FLEET = Fleet(**GOOD)


@pytest.mark.parametrize("kwargs,match", [
    (dict(cycles=0), r"cycles = 0: must be an integer >= 1"),
    (dict(cycles=2.5), r"cycles = 2.5: must be an integer"),
    (dict(fleets=0), r"fleets = 0: must be an integer >= 1"),
    (dict(passage_level=0), r"passage_level = 0: must be an integer in 1..3"),
    (dict(passage_level=4), r"passage_level = 4: must be an integer in 1..3"),
    (dict(burn_in=10, cycles=10), r"burn_in = 10: must be an integer in 0..9"),
    (dict(burn_in=-1), r"burn_in = -1"),
    (dict(seed=-5), r"seed = -5: must be an integer >= 0"),
    (dict(fleet_start=2**63 - 1), r"fleet_start \+ fleets = 9223372036854775809: fleet indices"),
    (dict(queues="tree"), r"queues = 'tree': must be one of auto, heap, ring"),
    (dict(kernel="fast"), r"kernel = 'fast': must be one of auto, anonymous, general"),
    (dict(launch="staggered"), r"launch = 'staggered': must be 'random', 'sync', 'stagger'"),
    (dict(launch=[0.1, 0.2]), r"launch theta has shape \(2,\): must be \(N,\) = \(3,\)"),
    (dict(launch=np.zeros((5, 3)), fleets=4), r"must be \(N,\) = \(3,\) or \(fleets, N\) = \(4, 3\)"),
    (dict(launch=[0.1, 1.2, 0.3]), r"launch theta\[1\] = 1.2: phases must be in \[0, 1\]"),
    (dict(launch=[0.1, -0.2, 0.3]), r"launch theta\[1\] = -0.2"),
    (dict(launch=[0.1, math.nan, 0.3]), r"launch theta\[1\] = nan"),
])
def test_bad_run(kwargs, match):
    args = dict(fleets=2, cycles=10)
    args.update(kwargs)
    with pytest.raises(SpecError, match=match):
        simulate(FLEET, **args)


def test_stagger_needs_identical_jobs():
    fleet = Fleet(T=[1.0, 1.1], d=[0.1, 0.1])
    with pytest.raises(SpecError, match="'stagger' needs identical jobs"):
        simulate(fleet, launch="stagger", fleets=1, cycles=2)


def test_stagger_beyond_critical_load_uncapped():
    fleet = Fleet.identical(4, load=4 / 3 * 1.01)
    with pytest.raises(SpecError, match=r"cannot be placed: load L = 1.34667 .* L\* = N/\(N-1\) = 1.33333"):
        simulate(fleet, launch="stagger", fleets=1, cycles=2)


def test_stagger_beyond_critical_load_is_placed_when_a_cap_binds():
    fleet = Fleet.identical(4, load=4 / 3 * 1.2, cap=2.0)
    run = simulate(fleet, launch="stagger", fleets=1, cycles=50, passage_level=2)
    assert run.passage_cycle[0] == -1


def test_fleet_is_not_a_fleet():
    with pytest.raises(SpecError, match="must be a stormsim.Fleet"):
        simulate({"T": [1.0]}, fleets=1, cycles=1)


def test_identical_needs_load_or_d():
    with pytest.raises(SpecError, match="give exactly one of them"):
        Fleet.identical(3)
    with pytest.raises(SpecError, match=r"n_jobs = 0: must be an integer >= 1"):
        Fleet.identical(0, load=0.5)


@pytest.mark.slow  # a subprocess
def test_errors_come_before_any_compilation():
    """Validation runs first: a bad call compiles nothing (and so returns at once)."""
    code = (
        "import stormsim, stormsim.engine._kernel as k\n"
        "f = stormsim.Fleet.identical(3, load=0.5)\n"
        "try:\n    stormsim.simulate(f, fleets=1, cycles=0)\nexcept ValueError: pass\n"
        "try:\n    stormsim.simulate(f, launch=[2.0, 0, 0], fleets=1, cycles=5)\nexcept ValueError: pass\n"
        "print(len(k.run_fleets.signatures) + len(k.random_theta.signatures))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_fleet_is_immutable():
    fleet = Fleet.identical(3, load=0.5)
    with pytest.raises(AttributeError):
        fleet.cap = 2.0
    with pytest.raises(ValueError):
        fleet.T[0] = 5.0


@pytest.mark.parametrize("n,cap", [(8, 5.0), (8, 4.0), (5, math.inf), (16, 12.0), (7, 6.0)])
def test_stagger_at_its_threshold_load_is_placed(n, cap):
    """At L = N / min(N-1, C) the writes touch; rounding of d must not refuse it."""
    load = n / min(n - 1, cap)
    fleet = Fleet.identical(n, load=load, cap=cap)
    assert stormsim.stagger_margin(fleet) == pytest.approx(0.0, abs=1e-12)
    run = simulate(fleet, launch="stagger", fleets=1, cycles=500, passage_level=2)
    assert run.passage_cycle[0] == -1


# -- the API as a new user meets it ---------------------------

def test_throughput_is_spelled_as_in_a_sweep_file():
    """Fleet(throughput="power:0.5") was refused although the sweep file spells it so."""
    for spec in ("power:0.5", ("power", 0.5), {"power": 0.5}):
        fleet = Fleet.identical(4, load=0.5, throughput=spec)
        assert fleet.throughput == ("power", 0.5)
        assert fleet.f.tolist() == (np.arange(5) ** 0.5 * (np.arange(5) > 0)).tolist()
    with pytest.raises(SpecError, match=r"throughput = 'power:x': power needs a number ALPHA"):
        Fleet.identical(4, load=0.5, throughput="power:x")


@pytest.mark.parametrize("flag", ["record_firings", "stop_at_passage"])
@pytest.mark.parametrize("value", ["yes", 1, None, "false"])
def test_flags_must_be_booleans(flag, value):
    with pytest.raises(SpecError, match=rf"{flag} = {value!r}: must be True or False"):
        simulate(FLEET, fleets=1, cycles=3, passage_level=2, **{flag: value})
    simulate(FLEET, fleets=1, cycles=3, passage_level=2, **{flag: np.bool_(True)})


def test_reprs_are_short_and_plain():
    fleet = Fleet.identical(3, load=0.6, jitter=0.01)
    assert repr(fleet) == ("Fleet.identical(3, T=1.0, d=0.19999999999999998, cap=inf, "
                           "throughput='fair', jitter=0.01)")      # no np.float64(...)
    run = simulate(fleet, fleets=500, cycles=20, record_firings=True, passage_level=2, seed=1)
    text = repr(run)
    assert len(text) < 400 and "\n" not in text, text                 # no array dump
    assert text.startswith("<stormsim.Run: 500 fleets of 3 jobs, 20 cycles, launch 'random'")
    assert "passage_level=2" in text and "firings recorded" in text
    assert str(run) == text


def test_async_options_default_on_blocking_jobs_of_a_mixed_fleet():
    """A scalar option on a mixed fleet applies to its async jobs only."""
    fleet = Fleet(T=[1.0, 1.0], d=[0.1, 0.1], checkpoint=["async", "blocking"], snapshot=0.1,
                  slowdown=0.5, on_busy="skip")
    assert fleet.snapshot.tolist() == [0.1, 0.0]
    assert fleet.slowdown.tolist() == [0.5, 0.0]
    assert fleet.on_busy.tolist() == ["skip", "block"]


def test_identical_takes_the_async_keywords():
    fleet = Fleet.identical(3, load=0.5, checkpoint="async", snapshot=0.01, slowdown=0.2,
                            on_busy="skip", weights=2.0)
    assert fleet.is_identical and fleet.is_async.all() and not fleet.is_anonymous
    with pytest.raises(SpecError, match=r"snapshot\[0\] = -1.0: must be finite and >= 0"):
        Fleet.identical(3, load=0.5, checkpoint="async", snapshot=-1.0)


def test_the_anonymous_kernel_refuses_an_async_fleet():
    fleet = Fleet.identical(3, load=0.5, checkpoint="async")
    with pytest.raises(SpecError, match=r"kernel = 'anonymous' integrates blocking jobs"):
        simulate(fleet, fleets=1, cycles=2, kernel="anonymous")


def test_new_fields_survive_pickling_and_equality():
    import pickle

    fleet = Fleet(T=[1.0, 1.2], d=[0.1, 0.2], checkpoint=["async", "blocking"], snapshot=0.1,
                  weights=[1.0, 3.0])
    again = pickle.loads(pickle.dumps(fleet))
    assert again == fleet and hash(again) == hash(fleet)
    assert again != Fleet(T=[1.0, 1.2], d=[0.1, 0.2], checkpoint=["async", "blocking"],
                          snapshot=0.1, weights=[1.0, 2.0])
    # The base model's repr is unchanged; options show only where set.
    assert "checkpoint" not in repr(Fleet.identical(3, load=0.5))
    assert "weights=[1. 3.]" in repr(fleet)


@pytest.mark.parametrize("kw,match", [
    (dict(cap=3.0), r"'stagger' for async jobs is derived for uncapped fleets only: cap = 3.0 < N = 4"),
    (dict(load=4 * 1.5), r"a lone persist \(d = 1.5\) outlasts the compute interval"),
    (dict(load=4 * 0.4, slowdown=1.0), r"the persists overlap \(d = 0.4 > cycle / N"),
    (dict(load=0.4, snapshot=0.5), r"the first job would fire \(N-1\) spacing"),
])
def test_async_stagger_refusals(kw, match):
    args = dict(load=0.4, checkpoint="async")
    args.update(kw)
    fleet = Fleet.identical(4, **args)
    with pytest.raises(SpecError, match=match):
        simulate(fleet, launch="stagger", fleets=1, cycles=2)


def test_replace_changes_what_is_named_and_keeps_the_rest():
    fleet = stormsim.Fleet(T=[1.0, 2.0], d=[0.1, 0.3], jitter=0.02, checkpoint=["async", "blocking"],
                           snapshot=[0.01, 0.0], weights=[1.0, 4.0], max_writers=1, cap=1.5)
    moved = fleet.replace(T=[3.0, 4.0])
    assert np.array_equal(moved.T, [3.0, 4.0])
    assert moved.replace(T=fleet.T) == fleet
    with pytest.raises(SpecError, match=r"^mtbff = 3: not a parameter of Fleet"):
        fleet.replace(mtbff=3)
    with pytest.raises(SpecError, match=r"^T\b"):
        fleet.replace(T=[1.0, -1.0])

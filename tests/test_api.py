"""The public API is curated: adding or removing a name is a decision."""
import stormsim

PUBLIC = {
    "Fleet", "Run", "SpecError", "simulate", "stagger_margin", "stagger_spacing",
    "stagger_theta", "throughput_table", "__version__",
}


def test_public_api_is_pinned():
    assert PUBLIC <= set(stormsim.__all__)
    for name in stormsim.__all__:
        assert hasattr(stormsim, name)


def test_run_shapes_and_dtypes():
    fleet = stormsim.Fleet(T=[1.0, 1.2, 0.9], d=[0.05, 0.04, 0.06])
    run = stormsim.simulate(fleet, fleets=4, cycles=7, record_firings=True, passage_level=2)
    assert run.firings.shape == (4, 3, 7) and run.firings.dtype == "float64"
    assert run.occupancy.shape == (4, 4) and run.occupancy.dtype == "float64"
    assert run.passage_time.shape == (4,) and run.passage_time.dtype == "float64"
    assert run.passage_cycle.shape == (4,) and run.passage_cycle.dtype == "int64"
    unrecorded = stormsim.simulate(fleet, fleets=2, cycles=3)
    assert unrecorded.firings is None
    assert (unrecorded.passage_time == float("inf")).all()
    assert (unrecorded.passage_cycle == -1).all()

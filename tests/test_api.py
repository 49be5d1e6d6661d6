"""The public API is curated: adding or removing a name is a decision."""
import stormsim

PUBLIC = {
    "Fleet", "Run", "SpecError", "simulate", "stagger_margin", "stagger_spacing",
    "stagger_theta", "throughput_table", "__version__",
    # sweeps (docs/FORMAT.md)
    "DaskExecutor", "HDF5Store", "LocalExecutor", "MemoryStore", "Results", "Sweep",
    "SweepError", "kaplan_meier", "load_sweep", "median_survival", "open_results",
    "parse_sweep", "run_sweep",
    # storm risk (issue 11)
    "StormRisk", "storm_risk", "SplitEstimate", "storm_split",
}


def test_public_api_is_pinned():
    assert set(stormsim.__all__) == PUBLIC
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


def test_progress_is_reported_per_batch():
    seen = []
    fleet = stormsim.Fleet.identical(3, load=0.5)
    stormsim.simulate(fleet, fleets=10, cycles=5, batch_size=4,
                      progress=lambda done, total: seen.append((done, total)))
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_default_batch_bounds_the_work_per_kernel_call():
    from stormsim.engine import BATCH_EVENTS, default_batch, next_batch

    assert default_batch(16, 800) == BATCH_EVENTS // (2 * 16 * 800)
    assert default_batch(1024, 100000) == 16      # never fewer than 16 fleets
    assert default_batch(2, 10) == 4096           # nor more than 4096
    # a first-passage run that stopped after ~1000 events per fleet grows
    assert next_batch(16 * 1000, 16) == BATCH_EVENTS // 1000


def test_adaptive_batches_grow_for_early_stopping_runs():
    seen = []
    fleet = stormsim.Fleet.identical(4, load=0.6)
    stormsim.simulate(fleet, launch="sync", fleets=200, cycles=10**7, passage_level=2,
                      progress=lambda done, total: seen.append(done))
    # sync collides at once: the first batch is sized for 10^7 cycles (16
    # fleets), the next for the few events actually seen.
    assert seen == [16, 200]

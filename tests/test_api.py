"""The public API is curated: adding or removing a name is a decision."""
import stormsim

PUBLIC = {
    "Fleet", "Run", "SpecError", "ResourceError", "simulate", "stagger_margin", "stagger_spacing",
    "stagger_theta", "throughput_table", "__version__",
    # sweeps (docs/FORMAT.md)
    "DaskExecutor", "HDF5Store", "LocalExecutor", "MemoryStore", "Results", "Sweep",
    "SweepError", "kaplan_meier", "load_sweep", "median_survival", "open_results",
    "parse_sweep", "run_sweep", "SweepOutcome",
    # storm risk
    "StormRisk", "storm_risk", "SplitEstimate", "SplitSettings", "storm_split",
    # the exact stationary law of the base model (MODEL.md)
    "StationaryLaw", "stationary", "DeterministicFleetWarning",
    # a fleet's long-run power from that law (MODEL.md E6)
    "PowerLaw", "power_law", "RampEstimate", "ramp_estimate",
    # every estimate shown to a user: a number with its interval
    "Interval",
    # the operator's table: a fleet and its what-ifs
    "FleetPlan", "plan",
    # the best checkpoint interval when jobs fail (MODEL.md E8)
    "BestInterval", "ClassInterval", "best_interval",
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


def test_power_fields_shapes_and_dtypes():
    fleet = stormsim.Fleet(T=[1.0, 1.2, 0.9], d=[0.05, 0.04, 0.06], busy_power=700.0,
                           idle_power=100.0)
    run = stormsim.simulate(fleet, fleets=4, cycles=7, ramps=((1.0, 2.0), (50.0,)),
                            power_trace=5)
    for name in ("power_mean", "power_min", "power_max", "power_p01", "power_p99"):
        assert getattr(run, name).shape == (4,) and getattr(run, name).dtype == "float64", name
    assert run.ramp_share.shape == (4, 2, 1) and run.ramp_events.dtype == "int64"
    for name in ("power_trace_t", "power_trace_p"):
        assert getattr(run, name).shape == (4, 5) and getattr(run, name).dtype == "float64", name
    assert stormsim.simulate(fleet, fleets=1, cycles=3).power_trace_t is None


def test_progress_is_reported_per_batch():
    seen = []
    fleet = stormsim.Fleet.identical(3, load=0.5)
    stormsim.simulate(fleet, fleets=10, cycles=5, batch_size=4,
                      progress=lambda done, total: seen.append((done, total)))
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_default_batch_bounds_the_work_per_kernel_call():
    """A heuristic, held to its bounds (not its formula): a first kernel call
    does at most ~BATCH_EVENTS events when fleets run their cycles, and holds
    16..4096 fleets; next batches aim at BATCH_EVENTS from the events seen."""
    from stormsim.engine.cost import BATCH_EVENTS, EVENTS_PER_JOB_CYCLE, default_batch, next_batch

    for n, cycles in ((16, 800), (1024, 100000), (2, 10), (64, 3000), (1, 1)):
        b = default_batch(n, cycles)
        assert 16 <= b <= 4096
        work = b * EVENTS_PER_JOB_CYCLE * n * cycles
        assert work <= BATCH_EVENTS or b == 16           # more only when 16 fleets are more
        assert work >= BATCH_EVENTS / 2 or b == 4096     # less only when 4096 fleets are less
    for per_fleet in (1, 1000, 16 * 1000, 10**6, 10**9):
        b = next_batch(per_fleet * 16, 16)
        assert 16 <= b <= 65536
        assert b * per_fleet <= BATCH_EVENTS or b == 16
        assert b * per_fleet >= BATCH_EVENTS / 2 or b == 65536


def test_adaptive_batches_grow_for_early_stopping_runs():
    seen = []
    fleet = stormsim.Fleet.identical(4, load=0.6)
    stormsim.simulate(fleet, launch="sync", fleets=200, cycles=10**7, passage_level=2,
                      progress=lambda done, total: seen.append(done))
    # sync collides at once: the first batch is sized for 10^7 cycles (few
    # fleets), the next for the few events actually seen, so two calls suffice
    assert seen[0] <= 32 and seen[-1] == 200 and len(seen) <= 3


def test_from_jobs_shows_the_keywords_of_fleet_arguments():
    """``help(Fleet.from_jobs)`` lists its keywords, the same (names, kinds,
    defaults) as those of the function it delegates to."""
    import inspect

    from stormsim.engine.units import fleet_arguments

    def keywords(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert keywords(stormsim.Fleet.from_jobs) == keywords(fleet_arguments)
    assert all(kind is inspect.Parameter.KEYWORD_ONLY
               for _, kind, _ in keywords(stormsim.Fleet.from_jobs))

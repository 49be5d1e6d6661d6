"""Three fleets in physical units, each read in hours, days and probabilities.

    python examples/physical_fleets.py hpc            # HPC all-flash file system
    python examples/physical_fleets.py pod            # enterprise GPU pod (a CSV job table)
    python examples/physical_fleets.py object-store   # remote object store: blocking storms

Each runs in a few seconds (after the kernels are compiled or cached) and
prints every estimate with its 95% interval (docs/guide-operators.md, "Three
fleets from public figures", reads them). The seeds are fixed: the output is reproducible.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import stormsim
from stormsim.stats import physical
from stormsim.engine import units
from stormsim.stats.interval import Interval

HERE = Path(__file__).resolve().parent
DAY_CYCLES_30MIN = 48


def hpc():
    # HPC all-flash file system: 24 jobs of 13B parameters, checkpointing every
    # 30 minutes of compute through 5 TB/s.
    # Sources:
    # - 5 TB/s: NERSC, "Perlmutter Scratch" (docs.nersc.gov/filesystems/perlmutter-scratch/):
    #   an all-flash Lustre file system, 35 PB, "aggregate bandwidth of >5 TB/sec".
    # - 13B parameters: Llama 2 13B (Touvron et al., "Llama 2: Open Foundation and
    #   Fine-Tuned Chat Models", 2023).
    # - 12 bytes per parameter: mixed-precision Adam's fp32 master weights and two
    #   fp32 moments, K = 12 of its 16 bytes per parameter of model states
    #   (Rajbhandari et al., "ZeRO", SC20, section 3.1): 13e9 x 12 B = 156 GB.
    # - jitter: 1% of the interval (18 s), an assumption for step-time variation.
    fleet = stormsim.Fleet.from_jobs(n_jobs=24, compute_interval="30 min", size="156 GB",
                                     bandwidth="5 TB/s", jitter="18 s")
    header("HPC all-flash file system: 24 jobs x 156 GB every 30 min through 5 TB/s", fleet)
    first = stormsim.simulate(fleet, launch="random", fleets=2000, cycles=7 * DAY_CYCLES_30MIN,
                              passage_level=2, seed=1)
    long = stormsim.simulate(fleet, launch="random", fleets=200, cycles=30 * DAY_CYCLES_30MIN,
                             seed=2)
    row("median time to the first collision", physical.time_to_passage(first, unit="h"))
    row("P(a collision within one day)", physical.passage_probability(first, within="1 day"))
    row("time with >= 2 jobs writing", physical.storm_time_per_day(long, level=2, unit="ms"))
    row("storms (>= 2 writing) per day", physical.storms_per_day(long, level=2))
    row("mean storm duration", physical.storm_duration(long, level=2, unit="ms"))
    writing(fleet, long, "s")


def pod():
    # Enterprise GPU pod: 8 jobs of 8B parameters every 15 minutes through ~80 GB/s.
    # The jobs are a CSV job table; its sources are in its comment lines.
    fleet = stormsim.Fleet.from_csv(HERE / "gpu_pod.csv", bandwidth="80 GB/s")
    header("Enterprise GPU pod: 8 jobs x 96 GB every 15 min through 80 GB/s (gpu_pod.csv)", fleet)
    first = stormsim.simulate(fleet, launch="random", fleets=2000, cycles=14 * 2 * DAY_CYCLES_30MIN,
                              passage_level=2, seed=1)
    long = stormsim.simulate(fleet, launch="random", fleets=200, cycles=30 * 2 * DAY_CYCLES_30MIN,
                             seed=2)
    row("median time to the first collision", physical.time_to_passage(first, unit="h"))
    row("P(a collision within one day)", physical.passage_probability(first, within="1 day"))
    row("time with >= 2 jobs writing", physical.storm_time_per_day(long, level=2, unit="s"))
    row("storms (>= 2 writing) per day", physical.storms_per_day(long, level=2))
    row("mean storm duration", physical.storm_duration(long, level=2, unit="s"))
    writing(fleet, long, "s")


def object_store():
    # Remote object store: 4 jobs of 70B parameters, 840 GB every 30 minutes of
    # compute through 2.5 GB/s. A lone write takes 336 s: blocking storms.
    # Sources:
    # - 70B parameters: Llama 2 70B (Touvron et al. 2023); x 12 bytes per parameter
    #   (ZeRO, as above) = 840 GB = 782 GiB (the "780 GB" often quoted is GiB:
    #   782 GiB through 2.5 GiB/s would take 313 s; pint keeps the prefixes apart).
    # - 2.5 GB/s = 20 Gbit/s to a remote S3-compatible store: D. Vassallo's
    #   s3-benchmark (github.com/dvassallo/s3-benchmark, 2019) measured at most
    #   ~2.9 GB/s between S3 and one 25 Gbit/s EC2 instance (c5n.2xlarge, c5n.4xlarge).
    # - jitter: 1% of the interval (18 s), an assumption.
    fleet = stormsim.Fleet.from_jobs(n_jobs=4, compute_interval="30 min", size="840 GB",
                                     bandwidth="20 Gbit/s", jitter="18 s")
    header("Remote object store: 4 jobs x 840 GB every 30 min through 2.5 GB/s", fleet)
    long = stormsim.simulate(fleet, launch="random", fleets=400, cycles=30 * DAY_CYCLES_30MIN,
                             burn_in=DAY_CYCLES_30MIN, seed=2)
    row("time with >= 2 jobs writing", physical.storm_time_per_day(long, level=2, unit="h"))
    row("storms (>= 2 writing) per day", physical.storms_per_day(long, level=2))
    row("mean storm duration", physical.storm_duration(long, level=2, unit="min"))
    row("time with all 4 jobs writing", physical.storm_time_per_day(long, level=4, unit="min"))
    writing(fleet, long, "h")
    stagger = stormsim.simulate(fleet, launch="stagger", fleets=2000,
                                cycles=30 * DAY_CYCLES_30MIN, passage_level=2, seed=1)
    print(f"  a stagger launch (margin {stormsim.stagger_margin(fleet):.0f} s between writes):")
    row("median time to its first collision", physical.time_to_passage(stagger, unit="h"))
    row("P(it collides within one day)", physical.passage_probability(stagger, within="1 day"))


def header(title: str, fleet: stormsim.Fleet) -> None:
    n = fleet.n_jobs
    print(title)
    print(f"  a lone write takes {fleet.d.max():.4g} s; load L = {100 * fleet.load:.3g}% "
          f"(collision-free stagger possible up to L* = {100 * n / (n - 1):.3g}%)")


def row(label: str, est: Interval, digits: int = 3) -> None:
    unit = f" {est.unit}" if est.unit else ""
    print(f"  {label:<36} {est.value:.{digits}g}{unit} [{est.lo:.{digits}g}, "
          f"{est.hi:.{digits}g}]")


def writing(fleet: stormsim.Fleet, run: stormsim.Run, unit: str) -> None:
    """Time each job spends writing, against the same job with the fabric to
    itself (d / (T + d) of the day, exact): the excess is compute time lost."""
    est = physical.write_time_per_day(run, unit=unit)
    share = float((fleet.d / (fleet.T + fleet.d)).mean())
    lone = units.registry().Quantity(share * 86400.0, "s").to(unit).magnitude
    row("time each job spends writing", est, digits=4)
    print(f"  {'  alone it would write':<36} {lone:.4g} {unit}/day per job")
    lost = Interval(est.value - lone, est.lo - lone, est.hi - lone, est.method, unit=est.unit)
    row("  compute lost to contention", lost)


FLEETS = {"hpc": hpc, "pod": pod, "object-store": object_store}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fleet", choices=sorted(FLEETS))
    FLEETS[parser.parse_args(argv).fleet]()


if __name__ == "__main__":
    main()

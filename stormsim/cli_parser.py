"""The ``stormsim`` command's options (stormsim.cli runs them).

    stormsim sweep SWEEP.toml -o results.h5   run (or resume) a sweep into HDF5
    stormsim inspect results.h5               the table of its cells
    stormsim report results.h5                figures and a report (stormsim.report)
    stormsim demo                             the README's fleet planned, then a small real sweep
    stormsim risk FILE.toml --levels 2,4      storm rates of one cell, to a relative error
    stormsim plan --jobs 12 --size 840GB ...  a fleet and its what-ifs in one table (also JOBS.csv)

exit codes:
    0    done (or nothing to do)
    1    a bug: an unexpected error (its traceback is printed; please report it)
    2    bad input: a parameter, a sweep file, an output holding another sweep
    3    the environment refused: the output is locked by another run, the Dask
         scheduler is unreachable, the disk failed (a read-only or full disk)
    130  interrupted by Ctrl-C (143: by SIGTERM); the finished work is kept
"""
from __future__ import annotations

import argparse
import sys

from ._version import __version__
from .risk.settings import SplitSettings
from .risk.stormrisk import DEFAULT_MAX_SECONDS, DEFAULT_REL_ERROR
from .store.results import DEFAULT_TAIL_LEVELS
from .sweep.progress import MODES
from .fleetplan import ASYNC_SLOWDOWN, ASYNC_SNAPSHOT, DEFAULT_LEVELS

#: ``stormsim risk``'s levels for a cell without risk_levels when none are given (its
#: other defaults are storm_risk's and SplitSettings').
RISK_LEVELS = "2,N/4,N/2"
#: The levels of ``stormsim inspect``'s and ``stormsim report``'s tables when none are given.
LEVELS = ",".join(DEFAULT_TAIL_LEVELS)


#: ``stormsim plan``'s options that take a value: a value that looks like an
#: option ('--size -840GB') is theirs all the same (refused later with what
#: is wrong with it, not argparse's "expected one argument"). Other commands
#: that share a name (--levels, --seed, --max-seconds) read it as before.
PLAN_VALUE_OPTIONS = ("--bandwidth", "--size", "--interval", "--period", "--jitter",
                      "--snapshot", "--slowdown", "--watchdog", "--max-seconds", "--jobs",
                      "--seed", "--max-writers", "--levels", "--fleet-max-writers",
                      "--mtbf", "--restart", "--outage-mtbf", "--gpus", "--gpu-power",
                      "--gpu-idle-power", "--drops")


def attach_values(argv: list[str]) -> list[str]:
    """``argv`` with each of PLAN_VALUE_OPTIONS followed by a value that
    starts with '-' and a digit or a point ('-840GB', '-.5') written as one
    word, '--size=-840GB' (argparse reads '-840GB' as an unknown option)."""
    out: list[str] = []
    values = iter(argv)
    for word in values:
        if word in PLAN_VALUE_OPTIONS:
            value = next(values, None)
            if value is not None and len(value) > 1 and value[0] == "-" and (
                    value[1].isdigit() or value[1] == "."):
                out.append(f"{word}={value}")
                continue
            out.append(word)
            if value is not None:
                out.append(value)
            continue
        out.append(word)
    return out


class _Parser(argparse.ArgumentParser):
    """ArgumentParser reading ``attach_values(argv)``."""

    def parse_known_args(self, args=None, namespace=None):
        return super().parse_known_args(attach_values(sys.argv[1:] if args is None
                                                      else list(args)), namespace)


def parser() -> argparse.ArgumentParser:
    """The ``stormsim`` command's options; ``args.command`` names the subcommand."""
    parser = _Parser(prog="stormsim", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"stormsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    _add_sweep(sub)
    _add_inspect(sub)

    risk = sub.add_parser("risk", help="storm rates and P(n_w >= k) of one cell, simulated "
                          "until precise enough",
                          description="For one cell of a sweep file: P(n_w >= k) and the "
                          "storm rate at each level (stormsim.storm_risk; the cell's cycles, "
                          "burn_in, launch and seed). A cell with risk_* keys starts from its "
                          "own storm-risk settings, the fixed effort its stored result ran "
                          "(so with no flags it prints those numbers); any other cell from "
                          "batches of independent fleets run until every level reaches "
                          "--rel-error or --max-seconds is spent. Each flag given overrides.")
    risk.add_argument("file", help="a sweep file (TOML)")
    risk.add_argument("--cell", type=int, default=0, help="which cell (default 0)")
    risk.add_argument("--levels", default=None,
                      help=f"levels k: integers, 'N' or 'N/q' (default: the cell's risk_levels, "
                           f"else {RISK_LEVELS})")
    risk.add_argument("--rel-error", type=float, default=None,
                      help="target relative standard error (default: the cell's "
                           f"risk_rel_error, else {DEFAULT_REL_ERROR})")
    risk.add_argument("--max-seconds", type=float, default=None,
                      help="wall-time budget in seconds (default: a cell with risk_* keys "
                           f"runs its fixed effort, any other {DEFAULT_MAX_SECONDS:g}); on a "
                           "fixed effort it runs splitting replicates in rounds and drops "
                           "risk_fleets unless --max-fleets is given")
    risk.add_argument("--max-fleets", type=int, default=None,
                      help="stop after this many fleets (default: the cell's risk_fleets)")
    risk.add_argument("--method", choices=("auto", "plain", "splitting"), default=None,
                      help="auto: plain Monte Carlo, then forward flux sampling for the levels "
                           "it cannot reach in the budget (fleets without failures; with "
                           "failures: plain); plain; splitting (every level) (default: the "
                           "cell's risk_method, else auto)")
    risk.add_argument("--trials", type=int, default=None,
                      help="splitting: clones per stage and replicate (default: the cell's "
                           f"risk_trials, else {SplitSettings().trials})")
    risk.add_argument("--basin", default=None,
                      help="splitting: the basin's edge, a level or a rule: raised or "
                           "most-entries (default: the cell's risk_basin, else "
                           f"{SplitSettings().basin})")
    risk.add_argument("--score-every", default=None,
                      help="splitting: when the score is looked at: cycle (once a cycle and "
                           "near the next interface) or write-end (every write end) (default: "
                           f"the cell's risk_score_every, else {SplitSettings().score_every})")
    risk.add_argument("--format", choices=("text", "json"), default="text")
    risk.add_argument("-q", "--quiet", action="store_true", help="no progress lines")

    _add_report(sub)
    _add_plan(sub)
    _add_demo(sub)
    return parser


def _add_sweep(sub) -> None:
    """``stormsim sweep``'s options."""
    sw = sub.add_parser("sweep", help="run (or resume) a sweep file into an HDF5 result",
                        description="Run the cells of a sweep file (TOML) into one HDF5 file. "
                        "Interrupted runs (Ctrl-C, SIGTERM, a crash, a kill) resume where they "
                        "stopped when the same command is run again.")
    sw.add_argument("file", help="the sweep file (TOML; see docs/sweeps.md, 'Running sweeps' on "
                    "the docs site)")
    sw.add_argument("-o", "--output", help="the HDF5 result file (default: FILE's name with .h5, "
                    "in the current directory)")
    sw.add_argument("--overwrite", action="store_true",
                    help="discard an existing result or unfinished units at the output "
                         "(even from another sweep file) and start from scratch")
    sw.add_argument("--dask", metavar="ADDRESS",
                    help="run the cells on Dask: 'local:W' starts a LocalCluster of W "
                         "workers, else the address of a running scheduler (tcp://host:8786) "
                         "or its scheduler file")
    sw.add_argument("-j", "--workers", type=int, metavar="W",
                    help="worker threads on this machine (default: one per core)")
    sw.add_argument("--progress", choices=MODES, default="auto",
                    help="a live bar (on a terminal), plain lines, or none (default: auto)")
    sw.add_argument("-y", "--yes", action="store_true",
                    help="start a sweep estimated to take over an hour without asking (without a "
                         "terminal, one estimated above a day starts only with --yes)")
    sw.add_argument("-q", "--quiet", action="store_true", help="print nothing unless interrupted")
    sw.add_argument("--dry-run", action="store_true",
                    help="validate the file and list its cells; run nothing")


def _add_inspect(sub) -> None:
    """``stormsim inspect``'s options."""
    ins = sub.add_parser("inspect", help="print the table of a sweep result's cells",
                         description="Print the table of a sweep result's cells: fleets done, "
                         "the Kaplan-Meier median first passage and P(n_w >= k) at the --levels "
                         "asked, each with its 95% interval (and, with --storms, storm rates), "
                         "or the same as CSV or JSON rows. An unfinished sweep is read from the "
                         "parts written so far.")
    ins.add_argument("file", help="an HDF5 result of `stormsim sweep` (or the output of an "
                     "unfinished one, read from its .parts directory)")
    ins.add_argument("--levels", default=LEVELS,
                     help="levels k of the P(n_w >= k) columns: integers, 'N' or 'N/q' "
                          "(default: N/4,N/2,N)")
    ins.add_argument("--unit", choices=("cycle", "time"), default="cycle",
                     help="first-passage median in fleet cycles (default) or seconds")
    ins.add_argument("--format", choices=("text", "csv", "json"), default="text",
                     help="a table to read (default), or one row per cell as CSV or JSON, "
                          "with every interval's ends and method (and, with risk_levels, the "
                          "storm risk at each level asked: risk_p_ge_K, ..., "
                          "risk_storms_per_day_ge_K, ...)")
    ins.add_argument("--storms", action="store_true",
                     help="also the storm rate (storms per second, MODEL.md E3) and the mean "
                          "storm duration at level of --levels, with 95%% intervals")
    ins.add_argument("--durations", action="store_true",
                     help="then a table of the checkpoint durations and waits (MODEL.md E7): "
                          "their mean and 99th percentile with 95%% intervals, P(duration >= "
                          "watchdog) where the sweep sets one, the longest (every column: "
                          "--format csv/json)")


def _add_report(sub) -> None:
    """``stormsim report``'s options."""
    rep = sub.add_parser("report", help="figures and a written report of a sweep result",
                         description="Write a folder with the standard figures of a sweep "
                         "result (tail, storm rates, first passage) and report.md: the sweep, "
                         "its table and storm rates at the --levels asked, its storm risk (at "
                         "the cells' risk_levels), and what each figure shows.")
    rep.add_argument("file", help="an HDF5 result of `stormsim sweep`")
    rep.add_argument("-o", "--output", metavar="DIR",
                     help="the folder for the report (created if missing; default: FILE_report)")
    rep.add_argument("--levels", default=LEVELS,
                     help="levels k of the table's P(n_w >= k) and storm-rate columns: integers, "
                          f"'N' or 'N/q' (default: {LEVELS})")


def _add_plan(sub) -> None:
    """``stormsim plan``'s options."""
    pl = sub.add_parser("plan", help="how often a fleet storms, what it costs, what each change "
                        "buys", description="For a fleet of jobs (a CSV job table, or identical "
                        "jobs from the options): storms per day and their duration, checkpoint "
                        "durations, the GPU time spent writing, how long a stagger holds and "
                        "how long storms take to settle after a synchronized restart, for the "
                        "fleet and for each what-if (bandwidth x0.5 and x2, interval x0.5 and x2, "
                        "async checkpoints, a writer cap); each number says how it was made (exact: the "
                        "product-form law; else a 95 % interval over simulated fleets).")
    pl.add_argument("table", nargs="?", help="a CSV job table (see docs: job tables)")
    pl.add_argument("--bandwidth", required=True, help="the fabric's bandwidth, e.g. 40GB/s")
    pl.add_argument("--jobs", type=int, help="identical jobs: how many")
    pl.add_argument("--size", help="identical jobs: checkpoint size, e.g. 840GB")
    pl.add_argument("--interval", help="identical jobs: compute time between checkpoints, e.g. "
                    "30min (or --period)")
    pl.add_argument("--period", help="identical jobs, instead of --interval: the wall-clock time "
                    "from one checkpoint start to the next of a job running alone, e.g. 31min "
                    "(the interval is the period less the write alone; async: less the snapshot "
                    "and the slowed compute)")
    pl.add_argument("--jitter", help="identical jobs: the standard deviation of each compute "
                    "interval, a time (36s) or a share of the interval (2%%); 0 for none (a "
                    "deterministic fleet, whose averages depend on its launch)")
    pl.add_argument("--async", dest="is_async", action="store_true",
                    help="identical jobs: checkpoint asynchronously (a blocking snapshot, then "
                    "the persist through the fabric while training goes on; --snapshot, "
                    "--slowdown); the fleet then has no async what-if")
    pl.add_argument("--snapshot", help="the async snapshot's time, e.g. 5s: of the jobs with "
                    f"--async, else what the async what-if assumes (default {ASYNC_SNAPSHOT:g} "
                    "s: a free snapshot)")
    pl.add_argument("--slowdown", type=float, help="the share of compute speed an async job "
                    "loses while its persist is in flight, in [0, 1]: of the jobs with --async, "
                    f"else what the async what-if assumes (default {ASYNC_SLOWDOWN:g}: none)")
    pl.add_argument("--max-writers", metavar="K[,K...]",
                    help="the writer-cap what-ifs: one row per K, at most K checkpoints writing "
                    "at once (the others queue); integers, 'N' or 'N/q' (default: one row at "
                    "K = N/4, rounded down)")
    pl.add_argument("--fleet-max-writers", metavar="K", type=int,
                    help="the fleet's own writer cap: at most K of its checkpoints write at once, "
                    "the others queue (default: none; with a job table too, which has no "
                    "column for it); the what-if rows keep it")
    pl.add_argument("--mtbf", help="failures: every job's mean time between failures, e.g. 24h "
                    "(default: a job table's mtbf column, else none); adds each row's goodput "
                    "and recommends a checkpoint interval (Young's, Daly's and the contended "
                    "one, with the goodput it gains)")
    pl.add_argument("--restart", help="with --mtbf: every job's time from a failure until it "
                    "computes again, e.g. 10min (default: a job table's restart column, else 0)")
    pl.add_argument("--outage-mtbf", help="the mean time between outages of the whole fleet, "
                    "each failing every job at once, e.g. 30d (default: none)")
    _add_plan_power(pl)
    pl.add_argument("--levels", default=None, help="levels k: integers, 'N' or 'N/q' (default: "
                    f"{','.join(DEFAULT_LEVELS)}, the distinct ones >= 2)")
    pl.add_argument("--watchdog", default="600 s", help="report the share of checkpoint writes "
                    "longer than this (a time, e.g. 600s or 10min: a collective timeout)")
    pl.add_argument("--max-seconds", type=float, default=60.0,
                    help="time budget of the whole plan, s (default 60): storm risk, checkpoint "
                    "durations, stagger runs and settling are each sized from a share of it; "
                    "what it cannot buy is said so")
    pl.add_argument("--seed", type=int, default=0)
    pl.add_argument("-q", "--quiet", action="store_true",
                    help="no progress lines (else one per scenario and stage on stderr once "
                    "the plan has run for 2 s)")
    pl.add_argument("--no-what-if", action="store_true", help="the fleet alone")
    pl.add_argument("--format", choices=("text", "json", "csv"), default="text")
    pl.add_argument("--wide", action="store_true", help="the text table one line per scenario, "
                    "every number on it (some 200 columns; default: at most 100 columns)")
    pl.add_argument("--plot", help="also write a figure (PNG): storms per day against k")
    pl.add_argument("--by-class", action="store_true", help="also the fleet's numbers per job "
                    "class (jobs alike in every parameter): count, write time alone and under "
                    "contention (per write), stretch, p99 and GPU lost per job; with --format "
                    "csv, the CSV of the classes instead (the JSON always has them: by_class)")


def _add_plan_power(pl) -> None:
    """``stormsim plan``'s power options (MODEL.md E6)."""
    pl.add_argument("--gpus", help="identical jobs: accelerators per job, e.g. 1024 (with "
                    "--gpu-power and --gpu-idle-power: adds each row's mean draw and power drops; "
                    "a job table gives a gpus column, or busy_power and idle_power)")
    pl.add_argument("--gpu-power", help="one accelerator's draw computing, e.g. 700W (identical "
                    "jobs, or every job of a table with a gpus column)")
    pl.add_argument("--gpu-idle-power", help="one accelerator's draw while its job writes or "
                    "stops, e.g. 100W")
    pl.add_argument("--drops", help="with power: the drops counted per day within 1 s and 60 s, "
                    "powers, e.g. 1MW,5MW,10MW (default: one job's drop, a quarter and a half of "
                    "the fleet's swing)")
    pl.add_argument("--power", action="store_true", help="with --format csv, the CSV of the "
                    "power section instead (a row per scenario, window and threshold; the JSON "
                    "always has it: power)")


def _add_demo(sub) -> None:
    """``stormsim demo``'s options."""
    demo = sub.add_parser("demo", help="plan the README's fleet, then run a small real sweep "
                          "to HDF5 and show its table",
                          description="First the operator's question: `stormsim plan` on the "
                          "README's fleet of 12 jobs, with a small time budget (seconds). Then "
                          "the researcher's path: write a small sweep file (16 staggered jobs, "
                          "load x m/sigma), run it as `stormsim sweep` would, and print its "
                          "table with how to read it (run again, it reuses the finished result).")
    demo.add_argument("-o", "--output", metavar="DIR", default="results",
                      help="the folder for demo.toml and demo.h5 (default: results)")
    demo.add_argument("--fresh", action="store_true", help="recompute even if already done")

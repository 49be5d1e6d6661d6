"""Command line: thin wrappers that parse, make one library call, and print.

The subcommands, their options and the exit codes: stormsim.cli_parser
(``stormsim --help``).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np

from ._args import split_levels, tail_level
from ._format import fmt_duration
from .cli_parser import RISK_LEVELS, parser
from .driver import run_sweep
from .engine.cost import run_events, run_seconds
from .errors import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, ResourceError, SpecError, os_error_sentence
from .risk.stormrisk import storm_risk
from .store import export
from .store.results import open_results
from .store.tables import cells_table, outline_table
from .sweep.cellrisk import risk_call
from .sweep.executors import DaskExecutor, LocalExecutor, executor_from
from .sweep.grid import MAX_CELLS
from .sweep.keys import RISK_DEFAULTS
from .sweep.spec import load_outline, load_sweep, parse_sweep, resolve_cell, sweep_of

#: ``stormsim demo``'s first part: ``stormsim plan`` on the README's opening
#: fleet (the same options), with a small time budget for the simulated rows,
#: so it takes seconds.
DEMO_PLAN = ("--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth", "40GB/s",
             "--jitter", "1%", "--levels", "2,6", "--max-seconds", "8")

#: The sweep that ``stormsim demo`` runs second: how long does a perfect stagger of
#: 16 jobs survive compute jitter, and how stormy do the writes get after?
DEMO_TOML = """\
# stormsim demo: 16 identical jobs launched in a perfect stagger (one job's
# write ends m seconds before the next one's starts), with compute jitter
# sigma set through m/sigma. Each fleet runs 3000 checkpoint cycles; we record
# its first collision (two jobs writing at once) and how often n jobs write
# at once over the whole run.
[sweep]
name = "demo: stagger survival"

[fixed]
N = 16
T = 1.0
launch = "stagger"
passage_level = 2          # first passage to n_w >= 2: the first collision
stop_at_passage = false    # keep running after it, to measure the storms
cycles = 3000
fleets = 200
seed = 0

[grid]
load = [0.4, 0.8]
m_over_sigma = [8, 32, 128]
"""


def _install_stop_handlers(stop: threading.Event, state: dict, quiet: bool) -> dict:
    """SIGINT/SIGTERM set ``stop`` (a second one quits at once); returns the
    previous handlers, for ``_restore``."""
    def handler(signum, frame):
        if stop.is_set():                     # a second signal: quit now (parts are safe)
            raise SystemExit(128 + signum)
        state["signal"] = signum
        stop.set()
        if not quiet:
            print(f"\nstormsim sweep: {signal.Signals(signum).name} received: stopping at the "
                  "next unit boundary and keeping what is done (send it again to quit now)",
                  file=sys.stderr, flush=True)

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(previous: dict) -> None:
    for sig, h in previous.items():
        signal.signal(sig, h)


def _executor(args):
    """--dask or --workers -> what run_sweep takes (checked before anything runs)."""
    if args.workers is None:
        return args.dask
    if args.dask:
        raise SpecError(f"--workers is for this machine; with --dask give the workers in the "
                        f"address (local:{args.workers}) or start them with the cluster")
    if args.workers < 1:
        raise SpecError(f"--workers {args.workers}: must be an integer >= 1")

    return LocalExecutor(workers=args.workers)


def _run_sweep_command(args, sweep, output: str, executor) -> int:

    stop, state = threading.Event(), {}
    previous = _install_stop_handlers(stop, state, args.quiet)
    try:
        out = run_sweep(sweep, output, executor=executor, overwrite=args.overwrite,
                        progress="none" if args.quiet else args.progress, stop=stop)
    finally:
        _restore(previous)
    say = (lambda *a: None) if args.quiet else print
    if out.status == "already complete":
        say(f"stormsim sweep: {output} is already complete ({out.n_cells} cells, "
            f"{out.fleets_total} fleets, from this sweep file; made by stormsim "
            f"{out.version}): nothing to do. See it with: stormsim inspect {shlex.quote(output)}")
        return 0
    if out.status == "interrupted":
        again = ["stormsim", "sweep", args.file, "-o", output]
        if args.dask:
            again += ["--dask", args.dask]
        if args.workers:
            again += ["--workers", str(args.workers)]
        # the resume hint goes to stderr even with --quiet: it is what to do next
        print(f"stormsim sweep: interrupted after {out.cells_done}/{out.n_cells} cells, "
              f"{out.fleets_done}/{out.fleets_total} fleets; the finished work is kept in "
              f"{output}.parts/. Resume with the same command: {shlex.join(again)}",
              file=sys.stderr, flush=True)
        args.interrupted = True
        return 128 + state.get("signal", signal.SIGINT)
    resumed = (f" ({out.fleets_before} fleets were already done)" if out.fleets_before else "")
    say(f"stormsim sweep: wrote {output}: {out.n_cells} cells, {out.fleets_total} fleets in "
        f"{out.seconds:.1f} s{resumed}. See it with: stormsim inspect {shlex.quote(output)}")
    return 0


def _sweep(args: argparse.Namespace) -> int:

    if args.output is not None and not args.output.strip():
        raise SpecError(f"-o/--output is empty ({args.output!r}): give the HDF5 file to write, "
                        "e.g. -o results.h5, or leave -o out to write "
                        f"{Path(args.file).with_suffix('.h5').name} here")
    output = args.output if args.output is not None else Path(args.file).with_suffix(".h5").name
    if args.dry_run:
        return _dry_run(args, output)
    outline = load_outline(args.file)        # the keys checked, no cell resolved yet
    outline.check_size()
    executor = _executor(args)
    seconds, text = _estimate(outline, output, executor)   # from the grid: at once
    if seconds > LONG_SWEEP_SECONDS and not args.yes:
        if not _terminal():
            if seconds > UNATTENDED_SECONDS:
                raise SpecError(f"sweep {args.file}: not started: {text}; with no terminal to "
                                f"ask, a sweep estimated above {fmt_duration(UNATTENDED_SECONDS)} "
                                "starts only with --yes")
            print(f"stormsim sweep: {text}\nstormsim sweep: (no terminal to ask: starting; "
                  "--yes skips this note)", file=sys.stderr, flush=True)
        else:
            print(f"stormsim sweep: {text}", file=sys.stderr, flush=True)
            if not _confirm("Start it? [y/N] "):
                print("stormsim sweep: not started (--yes starts it without asking)",
                      file=sys.stderr)
                return 0
    sweep = sweep_of(outline)                # validated before any output is touched
    return _run_sweep_command(args, sweep, output, executor)


#: A sweep estimated to take longer than this asks before it starts (on a terminal).
LONG_SWEEP_SECONDS = 3600.0
#: Without a terminal to ask, a sweep estimated to take longer than this is
#: refused unless --yes: a batch job or a pipe must not start weeks of work by
#: a slip in a grid.
UNATTENDED_SECONDS = 86400.0


def _estimate(outline, output: str, executor) -> tuple[float, str]:
    """(seconds, a sentence): the expected wall time of what is left to run,
    from the grid (Outline: no cell resolved) less the fleets an existing
    output already holds, every fleet charged its full cycles."""

    done_events = done_seconds = 0.0
    if Path(output).exists() or Path(output + ".parts").is_dir():
        try:
            res = open_results(output)
            if res.n_cells == outline.n_cells:   # else another sweep's: refused later
                n, k, c = (np.asarray(x) for x in (res.params["N"], res.fleets_done,
                                                   res.params["cycles"]))
                done_events = float(sum(run_events(*x) for x in zip(n, k, c) if x[1]))
                done_seconds = float(sum(run_seconds(*x) for x in zip(n, k, c) if x[1]))
        except (ValueError, OSError):        # another sweep's output: refused later
            pass
    executor = executor_from(executor)      # a spec -> an executor (nothing connected)
    if isinstance(executor, DaskExecutor):
        workers = executor.local_workers or 1
        where = (f"on {workers} Dask workers" if executor.local_workers
                 else "on one core (divide by the cluster's cores)")
    else:
        workers = executor.slots
        where = f"on {workers} worker thread{'s' if workers != 1 else ''}"
    seconds = max(0.0, outline.seconds - done_seconds) / max(1, workers)
    events = max(0.0, outline.events - done_events)
    risky = outline.risk_cells
    bound = outline.stops_early()
    if seconds == 0:
        return 0.0, ("estimated time: nothing left to run" if not risky else
                     "estimated time: no fleets left to run (a storm risk not done yet is not "
                     "estimated)")
    how = "at most" if bound else "about"
    note = (" (fleets that stop at their passage are charged their cycle cap until "
            "measured)" if bound else "")
    if risky:
        note += (f"; the storm risk of {risky} cell{'s' if risky != 1 else ''} (risk_levels) "
                 "is not in it")
    return seconds, (f"estimated time: {how} {fmt_duration(seconds)} {where}, "
                     f"{events:.3g} events at the benchmarked cost per event"
                     f"{note}")


def _terminal() -> bool:
    """Whether there is someone to ask: stdin and stderr on a terminal."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _confirm(question: str) -> bool:
    """Ask on the terminal (``_terminal``): 'y' or 'yes' starts it."""
    print(question, end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


#: A dry run resolves and lists every cell of a sweep up to this many (~0.3 s);
#: of a larger one, it shows the figures and the first and last DRY_RUN_SHOWN.
DRY_RUN_ALL = 1000
DRY_RUN_SHOWN = 5


def _dry_run(args, output: str) -> int:

    outline = load_outline(args.file)        # the keys checked, no cell resolved yet
    n = outline.n_cells
    if n <= DRY_RUN_ALL:
        sweep = sweep_of(outline)
        print(cells_table(sweep))
        print(_estimate(outline, output, _executor(args))[1])
        return 0
    shown = (range(0, DRY_RUN_SHOWN), range(n - DRY_RUN_SHOWN, n)) if n <= MAX_CELLS else ((), ())
    first, last = ([resolve_cell(outline, i) for i in r] for r in shown)
    print(outline_table(outline, first, last, MAX_CELLS), flush=True)
    outline.check_size()                     # too large to run: say so, exit 2
    return 0


def _risk(args: argparse.Namespace) -> int:
    sweep = load_sweep(args.file)
    if not 0 <= args.cell < sweep.n_cells:
        raise SpecError(f"--cell {args.cell}: {args.file} has cells 0..{sweep.n_cells - 1} "
                        "(list them with: stormsim sweep FILE --dry-run)")
    c = sweep.cells[args.cell]
    kw = _risk_settings(c, args)
    r = storm_risk(c.fleet, progress=None if args.quiet else _risk_progress, **risk_call(kw))
    if args.format == "json":
        print(json.dumps({"file": args.file, "cell": args.cell, **r.to_dict()}, indent=1,
                         default=str))
    else:
        print(f"{args.file}, cell {args.cell} (N = {c.n_jobs}, seed {kw['seed']}):")
        print(r)
    return 0


def _risk_settings(c, args: argparse.Namespace) -> dict:
    """``stormsim risk``'s settings for cell ``c``: the cell's own (Cell.risk_kwargs,
    what its stored storm risk ran: a fixed effort) where it asks for a storm risk,
    else the defaults (RISK_LEVELS, a time budget); each flag given overrides them.
    A time budget (--max-seconds) on a fixed effort drops its splitting replicates
    (they then run in rounds) and, without --max-fleets, its plain fleets."""
    if c.has_risk:
        kw = c.risk_kwargs()
    else:
        sim = c.simulate_kwargs()
        kw = {"levels": _risk_levels(RISK_LEVELS, c.n_jobs), "max_seconds": RISK_DEFAULTS["max_seconds"],
              **{name: sim[name] for name in ("seed", "cycles", "burn_in", "launch")}}
    if args.levels is not None:
        kw["levels"] = _risk_levels(args.levels, c.n_jobs)
    if args.max_seconds is not None:
        kw["max_seconds"] = args.max_seconds
        kw.pop("replicates", None)
        kw["max_fleets"] = None
    basin = int(args.basin) if str(args.basin).isdigit() else args.basin
    flags = {"rel_error": args.rel_error, "max_fleets": args.max_fleets, "method": args.method,
             "trials": args.trials, "basin": basin, "score_every": args.score_every}
    kw.update({name: value for name, value in flags.items() if value is not None})
    return kw


def _risk_levels(text: str, n_jobs: int) -> list[int]:
    """Levels 'k1,k2,...' (integers, 'N' or 'N/q') for N = n_jobs, sorted, each once."""
    return sorted({tail_level(lv, n_jobs) for lv in split_levels(text)})


def _risk_progress(r) -> None:
    """``stormsim risk``'s progress line after each batch or splitting round."""
    split = "" if r.split is None else f", splitting {r.split.replicates} replicates"
    print(f"stormsim risk: {r.fleets} fleets{split}, {r.cpu_seconds:.1f} CPU s, "
          f"{int(r.resolved.sum())}/{r.levels.size} levels resolved", file=sys.stderr, flush=True)


def _inspect(args: argparse.Namespace) -> int:

    levels = split_levels(args.levels)      # the syntax, before anything is read
    res = open_results(args.file)
    if args.format == "text":
        print(res.table(levels=levels, unit=args.unit, storms=args.storms, risk=True,
                        durations=args.durations))
    else:

        show = export.inspect_csv if args.format == "csv" else export.inspect_json
        sys.stdout.write(show(res, levels, args.unit, storms=args.storms,
                              durations=args.durations).rstrip("\n") + "\n")
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import main as report_main   # at call time: the CLI starts without it

    outdir = args.output or str(Path(args.file).with_suffix("")) + "_report"
    if Path(outdir).exists() and not Path(outdir).is_dir():
        raise SpecError(f"report -o {outdir}: exists and is not a directory; give a "
                        "directory for the figures (it is created if missing)")
    levels = split_levels(args.levels)      # the syntax, before anything is read
    try:
        rc = report_main(args.file, outdir, levels=levels)
    except ImportError as exc:               # an optional dependency (matplotlib) is missing
        name = exc.name or getattr(exc.__cause__, "name", None)
        print("stormsim: error: 'stormsim report' needs "
              + (f"{name}, which is not installed" if name else f"what is missing ({exc})")
              + ": pip install 'stormsim[plots]'", file=sys.stderr)
        return EXIT_ENVIRONMENT
    return 0 if rc is None else int(rc)


#: ``stormsim plan``'s options for identical jobs (a job table gives its own).
PLAN_JOB_OPTIONS = ("jobs", "size", "interval", "period", "jitter", "is_async")


def _flag(name: str) -> str:
    return "--async" if name == "is_async" else "--" + name.replace("_", "-")


def _plan_fleet(args: argparse.Namespace):
    """``stormsim plan``'s fleet: the job table, or identical jobs from the options
    (a wrong --fleet-max-writers named as the flag, not as Fleet's max_writers)."""
    try:
        return _plan_fleet_of(args)
    except SpecError as exc:
        head = f"max_writers = {args.fleet_max_writers!r}: "
        if args.fleet_max_writers is None or not str(exc).startswith(head):
            raise
        raise SpecError(f"plan: --fleet-max-writers {args.fleet_max_writers}: "
                        f"{str(exc)[len(head):]}") from None


def _plan_fleet_of(args: argparse.Namespace):
    """_plan_fleet's fleet, as Fleet builds it."""
    from .engine.model import Fleet

    given = [k for k in PLAN_JOB_OPTIONS if getattr(args, k) not in (None, False)]
    if args.table is not None and given:
        raise SpecError(f"plan: give a job table or {', '.join(map(_flag, given))}, not both (a "
                        "table gives every job's own values)")
    if args.table is not None:
        if args.gpus is not None:
            raise SpecError(f"plan: --gpus {args.gpus} with a job table: give the table a gpus "
                            "column (one count per job)")
        return Fleet.from_csv(args.table, bandwidth=args.bandwidth,
                              max_writers=args.fleet_max_writers, gpu_power=args.gpu_power,
                              gpu_idle_power=args.gpu_idle_power)
    if args.interval is not None and args.period is not None:
        raise SpecError(f"plan: --interval {args.interval} and --period {args.period}: give one "
                        "(--interval: compute time between checkpoints; --period: wall-clock "
                        "time from one checkpoint start to the next, of a job alone)")
    missing = [f"--{k}" for k in ("jobs", "size", "interval", "jitter") if k not in given
               and not (k == "interval" and args.period is not None)]
    if missing:
        raise SpecError(f"plan: give a job table (CSV) or {', '.join(missing)} (identical "
                        "jobs, e.g. --jobs 12 --size 840GB --interval 30min "
                        "--bandwidth 40GB/s --jitter 2%; --period instead of --interval)")
    extra = {}
    if args.is_async:
        extra = dict(checkpoint="async", snapshot=args.snapshot, slowdown=args.slowdown)
    return Fleet.from_jobs(n_jobs=args.jobs, size=args.size, compute_interval=args.interval,
                           checkpoint_period=args.period, bandwidth=args.bandwidth,
                           jitter=args.jitter, max_writers=args.fleet_max_writers,
                           gpus=_gpus(args.gpus), gpu_power=args.gpu_power,
                           gpu_idle_power=args.gpu_idle_power, **extra)


def _gpus(text: str | None) -> float | None:
    """--gpus as a number (None: not given)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise SpecError(f"plan: --gpus {text}: must be a number of accelerators per job, "
                        "e.g. 1024") from None


def _plan_what_ifs(args: argparse.Namespace) -> dict:
    """``plan``'s what-if options from the command line (their defaults where
    not given); with --async, --snapshot and --slowdown went to the fleet."""
    options = {"max_writers": args.max_writers}
    if not args.is_async:
        options.update({k: getattr(args, k) for k in ("snapshot", "slowdown")
                        if getattr(args, k) is not None})
    if args.no_what_if:
        given = [k for k, v in options.items() if v is not None]
        if given:
            raise SpecError(f"plan: {', '.join(map(_flag, given))} set what-if rows, but "
                            "--no-what-if leaves them out: give one or the other")
    return options


#: ``stormsim plan`` prints its progress lines once it has run this long (s):
#: a quick plan prints its table alone.
PLAN_PROGRESS_AFTER = 2.0


class _PlanProgress:
    """``stormsim plan``'s progress: each step's line on stderr once the plan
    has run PLAN_PROGRESS_AFTER s (``clock``: its seconds, for the tests);
    ``start()`` a timer that shows then the stage still running, so that a
    long first stage is seen too."""

    def __init__(self, clock=time.perf_counter):
        self.clock, self.t0 = clock, clock()
        self.last, self.shown, self.timer = None, None, None
        self.lock = threading.Lock()

    def __call__(self, step) -> None:
        with self.lock:
            self.last = step
            if self.clock() - self.t0 >= PLAN_PROGRESS_AFTER:
                self._show()

    def _show(self) -> None:
        if self.last is not None and self.last is not self.shown:
            print(self.last, file=sys.stderr, flush=True)
            self.shown = self.last

    def _due(self) -> None:
        with self.lock:
            self._show()

    def start(self) -> _PlanProgress:
        self.timer = threading.Timer(PLAN_PROGRESS_AFTER, self._due)
        self.timer.daemon = True
        self.timer.start()
        return self

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _plan_signals(state: dict) -> dict:
    """SIGINT and SIGTERM stop the plan (KeyboardInterrupt, the signal in
    ``state``), even where the plan started with SIGINT ignored (started in
    the background), as the sweep's handlers do; returns the previous
    handlers (none off the main thread, where signals cannot be set)."""
    def handler(signum, frame):
        state["signal"] = signum
        raise KeyboardInterrupt
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _plan(args: argparse.Namespace) -> int:
    from .fleetplan import DEFAULT_LEVELS, plan

    if args.power and args.format != "csv":
        raise SpecError("plan: --power selects the power section's CSV; give --format csv (the "
                        "text table and the JSON show it already)")
    if args.power and args.by_class:
        raise SpecError("plan: --power and --by-class each select a CSV: give one")
    if args.wide and args.format != "text":
        raise SpecError(f"plan: --wide lays out the text table; --format {args.format} has none")
    fleet = _plan_fleet(args)
    progress = None if args.quiet else _PlanProgress().start()
    state: dict = {}
    previous = _plan_signals(state)
    try:
        result = plan(fleet, DEFAULT_LEVELS if args.levels is None else args.levels,
                      what_if=not args.no_what_if, watchdog=args.watchdog,
                      max_seconds=args.max_seconds, seed=args.seed, progress=progress,
                      mtbf=args.mtbf, restart=args.restart, outage_mtbf=args.outage_mtbf,
                      drops=args.drops, **_plan_what_ifs(args))
    except KeyboardInterrupt:
        # one line, no traceback: nothing is written before the table, so nothing is left
        name = "Ctrl-C" if state.get("signal", signal.SIGINT) == signal.SIGINT else "SIGTERM"
        print(f"stormsim plan: interrupted ({name}): no table printed", file=sys.stderr,
              flush=True)
        args.interrupted = True
        return 128 + state.get("signal", signal.SIGINT)
    finally:
        _restore(previous)
        if progress is not None:
            progress.stop()
    if args.format == "json":
        print(result.to_json())
    elif args.format == "csv":
        print(result.class_csv() if args.by_class else result.power_csv() if args.power
              else result.to_csv(), end="")
    else:
        print(result.table(wide=args.wide, by_class=args.by_class)
              if args.wide or args.by_class else result)
    if args.plot:
        result.figure().savefig(args.plot, dpi=120)
        print(f"stormsim plan: wrote {args.plot}", file=sys.stderr)
    return 0


def _program() -> str:
    """How to type the ``stormsim`` command here: ``stormsim`` where the shell
    finds this installation's, else its path (``.venv/bin/stormsim`` after
    ``make demo``), else ``python -m stormsim`` with this interpreter."""
    here = Path(sys.executable).parent / "stormsim"
    found = shutil.which("stormsim")
    if found and here.exists() and Path(found).resolve() == here.resolve():
        return "stormsim"
    if not here.exists():
        return f"{shlex.quote(sys.executable)} -m stormsim"
    try:
        return shlex.quote(str(here.absolute().relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(here))


def _demo_plan(program: str) -> int:
    """``stormsim demo``'s first part: the operator's question, as ``stormsim plan``."""
    print("== 1/2 An operator's question (the README's fleet): how often do 12 jobs' 840 GB "
          f"checkpoints pile up on 40 GB/s of storage?\n    {program} plan {shlex.join(DEMO_PLAN)}\n",
          flush=True)
    try:
        return _plan(parser().parse_args(["plan", *DEMO_PLAN]))
    except KeyboardInterrupt:
        print("stormsim demo: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT


def _demo(args: argparse.Namespace) -> int:

    program = _program()
    root = Path(args.output)
    toml, h5 = root / "demo.toml", root / "demo.h5"
    try:
        root.mkdir(parents=True, exist_ok=True)
        toml.write_text(DEMO_TOML, encoding="utf-8")
    except OSError as exc:
        raise ResourceError(os_error_sentence(exc, f"demo -o {root}: cannot write")) from None
    rc = _demo_plan(program)
    if rc:
        return rc
    sweep = parse_sweep(DEMO_TOML, str(toml))
    print("\n== 2/2 A researcher's sweep: how long does a perfect stagger of 16 jobs survive "
          f"compute jitter?\n    {program} sweep {shlex.quote(str(toml))} -o {shlex.quote(str(h5))}"
          f"   ({sweep.n_cells} cells: load x m/sigma, {sweep.total_fleets} fleets, "
          f"{sweep.cells[0].cycles} cycles each)\n", flush=True)
    t0 = time.perf_counter()
    stop, state = threading.Event(), {}
    previous = _install_stop_handlers(stop, state, False)
    try:
        out = run_sweep(sweep, h5, overwrite=args.fresh, progress="auto", stop=stop)
    finally:
        _restore(previous)
    if out.status == "interrupted":
        print(f"stormsim demo: interrupted; run it again to resume ({h5}.parts/ keeps "
              "the finished units)", file=sys.stderr)
        args.interrupted = True
        return 128 + state.get("signal", signal.SIGINT)
    if out.status == "already complete":
        print(f"{h5} is already complete: nothing to recompute (stormsim demo --fresh redoes it).")
    else:
        print(f"wrote {h5} in {time.perf_counter() - t0:.1f} s (numba compile included).")
    print(f"\nThen, as `{program} inspect {shlex.quote(str(h5))}`:\n")
    print(open_results(h5).table())
    k = sweep.cells[0].cycles
    print(f"""
How to read it: m is the stagger margin (the gap between one job's write end
and the next one's start), sigma the compute jitter. The median number of
cycles before two jobs first write at once grows like (m/sigma)^2. 'censored'
counts the fleets that never collided within the {k}-cycle run: the
Kaplan-Meier median counts them instead of dropping them, and '>{k}' means
the run was too short to bound it. P(n_w>=k) is the share of the run with at
least k of the 16 jobs writing: once the stagger is gone, writes pile up into
storms, far more at load 0.8 than at 0.4; where the stagger breaks late (large
m/sigma), the storms have had little time to grow.
In Python: stormsim.open_results("{h5}") gives the same numbers as arrays.
The commands above run as written from here ({program} --help lists them all).""")
    return 0


#: What runs each subcommand.
COMMANDS = {"sweep": _sweep, "inspect": _inspect, "risk": _risk, "report": _report,
            "plan": _plan, "demo": _demo}


def main(argv: list[str] | None = None) -> int:

    try:
        args = parser().parse_args(argv)
        args.func = COMMANDS[args.command]
        rc = args.func(args)
    except KeyboardInterrupt:           # Ctrl-C where no command's own handler heard it
        print("stormsim: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
        return 128 + signal.SIGINT
    except ValueError as exc:           # SpecError, SweepError: bad input, named
        print(f"stormsim: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ResourceError as exc:        # busy output, unreachable cluster
        print(f"stormsim: error: {exc}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    except BrokenPipeError:             # `stormsim inspect x.h5 | head`: the reader left
        # Point stdout at /dev/null so the interpreter's final flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:              # the disk or the system refused
        print(f"stormsim: error: {os_error_sentence(exc)}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    if argv is None and getattr(args, "interrupted", False):
        # Run as the program and stopped by a signal: everything finished is
        # on disk and the store is closed. Skip the interpreter's teardown of
        # the loaded kernels (~0.5 s) and any unit still running in a worker
        # thread (its result is not needed), so the stop takes under a second.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc

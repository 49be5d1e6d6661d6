"""Command line: thin wrappers that parse, make one library call, and print.

    stormsim sweep SWEEP.toml -o results.h5   run (or resume) a sweep into HDF5
    stormsim inspect results.h5               the table of its cells
    stormsim report results.h5                figures and a report (stormsim.report)
    stormsim demo                             a small real sweep and its table

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
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

from .errors import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, ResourceError

#: The sweep that ``stormsim demo`` runs: how long does a perfect stagger of
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


def _run_sweep_command(args, sweep, output: str) -> int:
    from .sweep import run_sweep

    stop, state = threading.Event(), {}
    previous = _install_stop_handlers(stop, state, args.quiet)
    try:
        out = run_sweep(sweep, output, executor=args.dask, overwrite=args.overwrite,
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
    from .spec import load_sweep

    sweep = load_sweep(args.file)            # validated before any output is touched
    output = args.output or Path(args.file).with_suffix(".h5").name
    if args.dry_run:
        from .tables import cells_table

        print(cells_table(sweep))
        return 0
    return _run_sweep_command(args, sweep, output)


def _tail_levels(text: str):
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _inspect(args: argparse.Namespace) -> int:
    from .results import open_results, tail_level

    res = open_results(args.file)
    levels = _tail_levels(args.tail)
    for lv in levels:
        tail_level(lv, 1)                    # check the syntax before printing anything
    print(res.table(tail=levels, unit=args.unit))
    return 0


def _report(args: argparse.Namespace) -> int:
    try:
        from stormsim.report import main as report_main
    except ModuleNotFoundError as exc:
        if exc.name in ("stormsim.report", None) or (exc.name or "").startswith("stormsim"):
            print("stormsim: error: 'stormsim report' is not available in this installation "
                  "(the module stormsim.report is missing); `stormsim inspect` prints the "
                  "table of a result", file=sys.stderr)
            return EXIT_ENVIRONMENT
        print(f"stormsim: error: 'stormsim report' needs {exc.name}, which is not installed: "
              "pip install 'stormsim[plots]'", file=sys.stderr)
        return EXIT_ENVIRONMENT
    outdir = args.outdir or str(Path(args.file).with_suffix("")) + "_report"
    rc = report_main(args.file, outdir)
    return 0 if rc is None else int(rc)


def _demo(args: argparse.Namespace) -> int:
    from .results import open_results
    from .spec import parse_sweep
    from .sweep import run_sweep

    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    toml, h5 = root / "demo.toml", root / "demo.h5"
    toml.write_text(DEMO_TOML, encoding="utf-8")
    sweep = parse_sweep(DEMO_TOML, str(toml))
    print(f"stormsim demo: the sweep file {toml} ({sweep.n_cells} cells: load x m/sigma, "
          f"{sweep.total_fleets} fleets of 16 jobs, {sweep.cells[0].cycles} cycles each), "
          f"run as\n    stormsim sweep {toml} -o {h5}\n", flush=True)
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
    print(f"\nThen, as `stormsim inspect {h5}`:\n")
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
In Python: stormsim.open_results("{h5}") gives the same numbers as arrays.""")
    return 0


def main(argv: list[str] | None = None) -> int:
    from .progress import MODES

    parser = argparse.ArgumentParser(prog="stormsim", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    sw = sub.add_parser("sweep", help="run (or resume) a sweep file into an HDF5 result",
                        description="Run the cells of a sweep file (TOML) into one HDF5 file. "
                        "Interrupted runs (Ctrl-C, SIGTERM, a crash, a kill) resume where they "
                        "stopped when the same command is run again.")
    sw.add_argument("file", help="the sweep file (TOML; see README 'Sweeps')")
    sw.add_argument("-o", "--output", help="the HDF5 result (default: FILE's name with .h5, "
                    "in the current directory)")
    sw.add_argument("--overwrite", action="store_true",
                    help="discard an existing result or unfinished units at the output "
                         "(even from another sweep file) and start from scratch")
    sw.add_argument("--dask", metavar="ADDRESS",
                    help="run the cells on Dask: 'local:W' starts a LocalCluster of W "
                         "workers, else the address of a running scheduler (tcp://host:8786) "
                         "or its scheduler file")
    sw.add_argument("--progress", choices=MODES, default="auto",
                    help="a live bar (on a terminal), plain lines, or none (default: auto)")
    sw.add_argument("-q", "--quiet", action="store_true", help="print nothing unless interrupted")
    sw.add_argument("--dry-run", action="store_true",
                    help="validate the file and list its cells; run nothing")
    sw.set_defaults(func=_sweep)

    ins = sub.add_parser("inspect", help="print the table of a sweep result's cells")
    ins.add_argument("file", help="an HDF5 result of `stormsim sweep` (or the output of an "
                     "unfinished one, read from its .parts directory)")
    ins.add_argument("--tail", default="N/4,N/2,N",
                     help="levels k of the P(n_w >= k) columns: integers, 'N' or 'N/q' "
                          "(default: N/4,N/2,N)")
    ins.add_argument("--unit", choices=("cycle", "time"), default="cycle",
                     help="first-passage median in fleet cycles (default) or seconds")
    ins.set_defaults(func=_inspect)

    rep = sub.add_parser("report", help="figures and a written report of a sweep result")
    rep.add_argument("file", help="an HDF5 result of `stormsim sweep`")
    rep.add_argument("-o", "--outdir", help="directory for the report (default: FILE_report)")
    rep.set_defaults(func=_report)

    demo = sub.add_parser("demo", help="run a small real sweep to HDF5 and show its table")
    demo.add_argument("--dir", default="results", help="where to write demo.toml and demo.h5")
    demo.add_argument("--fresh", action="store_true", help="recompute even if already done")
    demo.set_defaults(func=_demo)

    args = parser.parse_args(argv)
    try:
        rc = args.func(args)
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
        print(f"stormsim: error: {exc}", file=sys.stderr)
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

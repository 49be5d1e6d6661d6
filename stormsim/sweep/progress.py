"""Progress of a sweep: a live bar on a terminal, plain lines elsewhere, or nothing.

The bar needs tqdm (the optional extra ``progress``); without it, or when
the stream is not a terminal (a log file, CI, a pipe), progress is printed
as plain lines at most every ``interval`` seconds, and once at the end.
"""
from __future__ import annotations

import os
import sys
import time

from .._format import fmt_clock, fmt_rate

MODES = ("auto", "bar", "lines", "none")


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (whose stderr is no terminal)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


#: The ETA is shown once the event rate has been measured over this long
#: (from the first finished unit on, so a numba compile does not count, and
#: units that finished together at the start do not fake a huge rate).
MIN_RATE_SECONDS = 2.0


class Progress:
    """Reports fleets done (the percentage is of fleets), cells done (a figure
    of its own, labelled), fleet-cycles per second and the ETA.

    It counts nothing itself: each ``update`` gives the sweep's fleets, cells
    and storm risks done so far (a sweep run reads them from its store) and
    the fleet-cycles run so far.

    ETA = events left (``update(events_left=f)``, f() an estimate from the
    events measured per fleet, see stormsim.sweep.planner.WorkEstimate, O(1)) /
    events per second, both taken afresh at every update: the rate measured
    from the first finished unit of this run on (a compile before it, or work
    done by an earlier, interrupted run, is not speed).
    ``clock`` (default time.monotonic) is where time comes from.

    The cells' storm risks (``total_risk`` tasks, ``risk_done`` of them done)
    are shown, but not in the ETA, which says so (their cost is not estimated):
    while one is left, the ETA is that of the fleets ("fleets only"), or '?'
    once the fleets are done.
    """

    def __init__(self, mode: str = "auto", *, total_cells: int, total_fleets: int,  # noqa: PLR0913 (counts and test hooks, keyword-only)
                 cells_done: int = 0, fleets_done: int = 0, stream=None,
                 interval: float = 5.0, clock=time.monotonic, total_risk: int = 0,
                 risk_done: int = 0):
        if mode not in MODES:
            raise ValueError(f"progress = {mode!r}: must be one of {', '.join(MODES)}")
        self.stream = sys.stderr if stream is None else stream
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            tty = isatty is not None and isatty()
            mode = "bar" if tty or (self.stream is sys.stderr and _in_notebook()) else "lines"
        self.bar = None
        if mode == "bar":
            try:
                from tqdm.auto import tqdm  # a widget in a notebook, text elsewhere
            except ImportError:
                mode = "lines"
            else:
                try:
                    size = os.get_terminal_size(self.stream.fileno())
                    ok = size.columns > 0 and size.lines > 0
                except (AttributeError, OSError, ValueError):
                    ok = False
                # a terminal that reports no size (a bare pty) would hide the bar
                self.bar = tqdm(total=total_fleets, initial=fleets_done, file=self.stream,
                                unit=" fleets", dynamic_ncols=ok, ncols=None if ok else 100,
                                nrows=None if ok else 24, smoothing=0.1,
                                bar_format="fleets {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}"
                                           " fleets [{elapsed}{postfix}]")
                self.bar.set_postfix_str(f"cells done {cells_done}/{total_cells}", refresh=False)
        self.mode = mode
        self.clock = clock
        self.total_cells, self.total_fleets = total_cells, total_fleets
        self.cells_done, self.fleets_done = cells_done, fleets_done
        self.total_risk, self.risk_done = total_risk, risk_done
        self.fleets_before = fleets_done
        self.fleet_cycles = 0
        self.t0 = clock()
        self.t_first = None           # when the first unit of this run finished
        self.events_after_first = 0   # events of the units finished after it
        self._left = None             # the events left at the last update (estimated)
        self.interval = interval
        self.last_line = self.t0

    def _print(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def describe(self, where: str, estimate: str = "") -> None:
        if self.mode == "none":
            return
        before = (f", {self.fleets_before} already done" if self.fleets_before else "")
        risk = (f", and the storm risk of {self.total_risk} cells (not in the ETA)"
                if self.total_risk else "")
        self._print(f"stormsim sweep: {self.total_cells} cells, {self.total_fleets} fleets"
                    f"{before}{risk}; running on {where}{estimate}")

    def eta(self) -> float:
        """Seconds left (0 when done; inf while the rate is not measured yet)."""
        if self.fleets_done >= self.total_fleets:
            return 0.0 if self.risk_done >= self.total_risk else float("inf")
        if self.t_first is None or self._left is None:
            return float("inf")
        dt = self.clock() - self.t_first
        if dt < MIN_RATE_SECONDS or self.events_after_first <= 0:
            return float("inf")
        return self._left / (self.events_after_first / dt)

    def _speed(self) -> str:
        dt = max(self.clock() - self.t0, 1e-9)
        return f"{fmt_rate(self.fleet_cycles / dt)} fleet-cycles/s"

    def _eta(self) -> str:
        """'ETA 0:01:05', or 'ETA 0:01:05 (fleets only)' while a storm risk is left."""
        left = self.risk_done < self.total_risk
        return f"ETA {fmt_clock(self.eta())}{' (fleets only)' if left else ''}"

    def line(self) -> str:
        dt = max(self.clock() - self.t0, 1e-9)
        pct = 100.0 * self.fleets_done / max(self.total_fleets, 1)
        risk = (f", storm risk {self.risk_done}/{self.total_risk} cells"
                if self.total_risk else "")
        return (f"stormsim sweep: fleets {self.fleets_done}/{self.total_fleets} ({pct:.1f}%), "
                f"cells done {self.cells_done}/{self.total_cells}{risk}, "
                f"{self._speed()}, elapsed {fmt_clock(dt)}, {self._eta()}")

    def update(self, *, fleets_done: int, cells_done: int, risk_done: int, fleet_cycles: int,
               events: int = 0, events_left=None) -> None:
        """A unit is done: the sweep's fleets, cells and storm risks done now, the
        fleet-cycles run so far, the unit's events; ``events_left()`` estimates
        the fleets' events still left in the sweep."""
        now = self.clock()
        if self.t_first is None:
            self.t_first = now
        else:
            self.events_after_first += events
        if events_left is not None:
            self._left = events_left()         # afresh at every update (O(1))
        fleets = fleets_done - self.fleets_done
        self.fleets_done, self.cells_done, self.risk_done = fleets_done, cells_done, risk_done
        self.fleet_cycles = fleet_cycles
        if self.mode == "bar":
            risk_text = (f"storm risk {self.risk_done}/{self.total_risk}, "
                         if self.total_risk else "")
            self.bar.set_postfix_str(f"cells done {cells_done}/{self.total_cells}, {risk_text}"
                                     f"{self._speed()}, {self._eta()}", refresh=False)
            self.bar.update(fleets)
        elif self.mode == "lines":
            if now - self.last_line >= self.interval:
                self.last_line = now
                self._print(self.line())

    def close(self) -> None:
        if self.mode == "bar" and self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.mode == "lines":
            self._print(self.line())
        self.mode = "none"

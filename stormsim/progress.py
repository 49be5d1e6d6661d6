"""Progress of a sweep: a live bar on a terminal, plain lines elsewhere, or nothing.

The bar needs tqdm (the optional extra ``progress``); without it, or when
the stream is not a terminal (a log file, CI, a pipe), progress is printed
as plain lines at most every ``interval`` seconds, and once at the end.
"""
from __future__ import annotations

import os
import sys
import time

MODES = ("auto", "bar", "lines", "none")


def _clock(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _rate(x: float) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f}{suffix}"
    return f"{x:.0f}"


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (whose stderr is no terminal)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


class Progress:
    """Reports cells done, fleets done, fleet-cycles per second and the ETA.

    ETA = fleets left / fleets per second so far in this run (work done by an
    earlier, interrupted run is counted as done, not as speed).
    """

    def __init__(self, mode: str = "auto", *, total_cells: int, total_fleets: int,
                 cells_done: int = 0, fleets_done: int = 0, stream=None,
                 interval: float = 5.0):
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
                from tqdm.auto import tqdm       # a widget in a notebook, text elsewhere
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
                                bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}"
                                           " fleets [{elapsed}<{remaining}{postfix}]",
                                desc=f"cells {cells_done}/{total_cells}")
        self.mode = mode
        self.total_cells, self.total_fleets = total_cells, total_fleets
        self.cells_done, self.fleets_done = cells_done, fleets_done
        self.fleets_before = fleets_done
        self.fleet_cycles = 0
        self.t0 = time.monotonic()
        self.interval = interval
        self.last_line = self.t0

    def _print(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def describe(self, where: str) -> None:
        if self.mode == "none":
            return
        before = (f", {self.fleets_before} already done" if self.fleets_before else "")
        self._print(f"stormsim sweep: {self.total_cells} cells, {self.total_fleets} fleets"
                    f"{before}; running on {where}")

    def line(self) -> str:
        dt = max(time.monotonic() - self.t0, 1e-9)
        new = self.fleets_done - self.fleets_before
        left = self.total_fleets - self.fleets_done
        eta = left / (new / dt) if new else float("inf")
        pct = 100.0 * self.fleets_done / max(self.total_fleets, 1)
        return (f"stormsim sweep: {self.cells_done}/{self.total_cells} cells, "
                f"{self.fleets_done}/{self.total_fleets} fleets ({pct:.1f}%), "
                f"{_rate(self.fleet_cycles / dt)} fleet-cycles/s, elapsed {_clock(dt)}, "
                f"ETA {_clock(eta) if left else '0:00:00'}")

    def update(self, fleets: int, fleet_cycles: int, cells_done: int) -> None:
        self.fleets_done += fleets
        self.fleet_cycles += fleet_cycles
        self.cells_done = cells_done
        if self.mode == "bar":
            dt = max(time.monotonic() - self.t0, 1e-9)
            self.bar.set_description_str(f"cells {cells_done}/{self.total_cells}", refresh=False)
            self.bar.set_postfix_str(f"{_rate(self.fleet_cycles / dt)} fleet-cycles/s",
                                     refresh=False)
            self.bar.update(fleets)
        elif self.mode == "lines":
            now = time.monotonic()
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

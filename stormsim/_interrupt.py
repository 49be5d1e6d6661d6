"""Ctrl-C while the ``stormsim`` program loads: one line and exit 130.

Loading the package (numba, the kernels) takes a second or more; a Ctrl-C
then would print a traceback from deep inside an import. ``while_loading()``
installs a SIGINT handler
that says so in one line and exits 130, but only when this process is the
``stormsim`` program (the entry point, or ``python -m stormsim``), SIGINT at
its default or ignored (a start in the background: the program hears it all
the same, as the sweep and plan do): a Python session importing stormsim
keeps its own KeyboardInterrupt. Importing this module installs it (``stormsim/__init__.py``
imports it first); ``loaded()`` puts the previous handler back.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

#: The exit code of a run stopped by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 128 + signal.SIGINT


def is_program() -> bool:
    """Whether this process is the ``stormsim`` program: its script, or ``-m stormsim``."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    if name in ("stormsim", "stormsim.exe"):
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == "stormsim" for a, b in zip(argv, argv[1:]))


def _quit(signum, frame) -> None:
    print("stormsim: interrupted (Ctrl-C) while loading", file=sys.stderr, flush=True)
    os._exit(EXIT_INTERRUPTED)


def while_loading():
    """Install the one-line handler (see the module); returns what loaded() restores."""
    if (threading.current_thread() is not threading.main_thread() or not is_program()
            or signal.getsignal(signal.SIGINT) not in (signal.default_int_handler,
                                                       signal.SIG_IGN)):
        return None
    return signal.signal(signal.SIGINT, _quit)


def loaded(previous=None) -> None:
    """Put back the handler ``while_loading`` replaced (if it did; default:
    the one this module's import replaced)."""
    previous = _PREVIOUS if previous is None else previous
    if previous is not None and signal.getsignal(signal.SIGINT) is _quit:
        signal.signal(signal.SIGINT, previous)


#: What the import replaced (None: nothing, not the program or not the default).
_PREVIOUS = while_loading()

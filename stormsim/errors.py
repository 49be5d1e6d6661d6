"""The kinds of failure, so that a caller (and the CLI's exit code) can tell them apart.

- :class:`SpecError` (a ``ValueError``): the input is wrong: a parameter, a
  sweep file, an output that holds another sweep. Fix the input. CLI exit 2.
- :class:`SweepError` (a ``SpecError``): the same, for sweeps and their outputs.
- :class:`ResourceError` (not a ``ValueError``): the input is fine but the
  environment refuses: the output is locked by another process, the Dask
  scheduler cannot be reached, the disk refuses a write. Retry later or
  elsewhere. CLI exit 3.

Everything else that escapes is a bug (CLI exit 1, with its traceback).
"""
from __future__ import annotations

__all__ = ["EXIT_BAD_INPUT", "EXIT_BUG", "EXIT_ENVIRONMENT", "EXIT_OK", "ResourceError",
           "SpecError", "SweepError", "os_error_sentence",
           "os_error_why"]

#: Exit codes of the ``stormsim`` command (also listed in its --help and the README).
EXIT_OK = 0
EXIT_BUG = 1             # an unexpected exception: a bug, please report it
EXIT_BAD_INPUT = 2       # SpecError / SweepError / a usage error (argparse uses 2 too)
EXIT_ENVIRONMENT = 3     # ResourceError or an OSError: output busy, cluster down, disk


class SpecError(ValueError):
    """Invalid user input: names the parameter, the value given and the rule."""


class SweepError(SpecError):
    """A sweep file (or an output) that cannot be used: says where, what and why."""


class ResourceError(RuntimeError):
    """The environment refuses, not the input: a held lock, an unreachable
    scheduler, a disk that fails. Says what was tried and what to do."""


#: What an OS error means to a user of an output path, and what to do, by errno.
_WHY = {"EROFS": "the file system is read-only: choose an output on a writable one (-o)",
        "EACCES": "permission denied: choose an output you may write (-o), or fix its "
                  "permissions",
        "EPERM": "operation not permitted: choose an output you may write (-o)",
        "ENOENT": "no such file or directory",
        "ENOTDIR": "a part of the path is a file, not a folder: choose another output (-o)",
        "ENOSPC": "no space left on device: free space and run the same command again",
        "EDQUOT": "disk quota exceeded: free space and run the same command again"}


def os_error_why(exc: OSError) -> str:
    """What an OS error means and what to do ('the file system is read-only:
    choose an output on a writable one (-o)'), without '[Errno N]'."""
    import errno

    return _WHY.get(errno.errorcode.get(exc.errno or 0, "")) or (exc.strerror or str(exc)).lower()


def os_error_sentence(exc: OSError, doing: str = "cannot use") -> str:
    """One sentence for an OS error: ``'{doing} PATH: why, and what to do'``;
    the path is the error's own where it names one."""
    path = f" {exc.filename}" if exc.filename else ""
    return f"{doing}{path}: {os_error_why(exc)}"

"""Executors: where units of work run. Local (this process) or Dask; one interface.

``run_sweep`` drives an executor with ``submit(fn, task)`` and ``poll(timeout)``
and is the only writer of the store: workers return arrays, the driver writes
(one HDF5 writer; EVIDENCE.md). Units are pure functions of their task, so
every executor gives the same bits.

dask is an optional extra (``pip install 'stormsim[dask]'``): nothing here
imports it until a DaskExecutor starts.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numba

from .._args import check_int, check_real
from ..errors import ResourceError, SweepError

__all__ = ["DaskExecutor", "Executor", "LocalExecutor", "executor_from", "layer_guard",
           "threadsafe_layer"]

#: Longest wait for a LocalCluster we started to close: its workers hold
#: nothing (results are written by this process), and a worker process exits by
#: itself when this process does.
CLOSE_TIMEOUT_SECONDS = 3.0


def threadsafe_layer() -> bool:
    """Whether numba's threading layer lets several threads run parallel
    kernels at once: 'tbb' and 'omp' do; 'workqueue' aborts the process."""

    layer = str(numba.config.THREADING_LAYER)
    if layer in ("tbb", "omp", "threadsafe"):
        return True
    if layer == "workqueue":
        return False
    for mod in ("tbbpool", "omppool"):
        try:
            __import__(f"numba.np.ufunc.{mod}")
            return True
        except ImportError:
            continue
    return False


_layer_lock = threading.Lock()
_layer_safe: bool | None = None


def layer_guard():
    """A context for a kernel call: nothing where numba's layer is thread-safe,
    else one lock (a threaded Dask worker, or the local thread pool, could run
    two kernels at once)."""
    global _layer_safe
    if _layer_safe is None:
        _layer_safe = threadsafe_layer()
    return contextlib.nullcontext() if _layer_safe else _layer_lock


#: How long a nanny waits for its worker process to stop before killing it.
NANNY_KILL_SECONDS = 0.3


async def _close_nannies(nannies, timeout: float) -> None:
    """Close the nannies of our LocalCluster (each kills its worker after
    ``timeout``), within about twice that in all."""

    closing = asyncio.gather(*(n.close(timeout=timeout, reason="stormsim-sweep-done")
                               for n in nannies), return_exceptions=True)
    try:
        await asyncio.wait_for(closing, 2 * timeout + 0.2)
    except asyncio.TimeoutError:    # a nanny busy restarting: its process is killed below
        pass


class Executor:
    """Interface. ``slots``: units to keep in flight; ``target_seconds``: how
    long one unit should take; ``task_threads``: numba threads per unit.
    ``in_flight`` is the one count of the units submitted and not yet back."""

    slots: int = 1
    target_seconds: float = 0.25
    task_threads: int | None = None

    def start(self) -> None:
        """Connect or start workers (called once, before the first submit)."""

    def submit(self, fn, task) -> None:
        raise NotImplementedError

    def poll(self, timeout: float) -> list:
        """Results of units finished within ``timeout`` s (maybe none)."""
        raise NotImplementedError

    @property
    def in_flight(self) -> int:
        """Units submitted and not yet returned by poll (nor dropped by cancel)."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Drop every unit not yet returned by poll."""

    def close(self) -> None:
        """Release workers this executor started."""

    def describe(self) -> str:
        return type(self).__name__


class LocalExecutor(Executor):
    """Runs units on a pool of ``workers`` threads in this process (default: one
    per numba thread, i.e. per core), each unit on one core: the kernels
    release the GIL, so the threads run in parallel, and a unit of any size
    avoids the cost of waking a parallel region (milliseconds on a busy
    machine). Units last ~``target_seconds`` so that Ctrl-C and SIGTERM are
    honoured within a second.

    Where numba's threading layer is not thread-safe ('workqueue'), units run
    one at a time instead, each over all cores.
    """

    def __init__(self, workers: int | None = None, target_seconds: float = 0.25):

        n = numba.config.NUMBA_NUM_THREADS if workers is None else check_int("workers", workers, 1)
        target_seconds = check_real("target_seconds", target_seconds, 0.0, open_lo=True,
                                    what="the seconds of work per unit")
        if threadsafe_layer():
            self.slots, self.task_threads = n, 1
        else:  # pragma: no cover - depends on the machine's numba
            self.slots, self.task_threads = 1, None
        self.target_seconds = float(target_seconds)
        self._pool = None
        self._pending: set = set()

    def start(self) -> None:

        self._pool = ThreadPoolExecutor(self.slots, thread_name_prefix="stormsim-unit")

    def submit(self, fn, task) -> None:
        self._pending.add(self._pool.submit(fn, task))

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def poll(self, timeout: float) -> list:

        if not self._pending:
            return []
        done, _ = wait(self._pending, timeout=max(timeout, 0.0), return_when=FIRST_COMPLETED)
        out = []
        for fut in done:
            self._pending.discard(fut)
            out.append(fut.result())
        return out

    def cancel(self) -> None:
        for fut in self._pending:
            fut.cancel()          # a unit already running finishes; its result is dropped
        self._pending.clear()

    def close(self) -> None:
        # Wait for the units already running (each lasts ~target_seconds; a
        # kernel cannot be stopped midway), so that none keeps a core busy
        # after run_sweep returns or raises (a KeyboardInterrupt in a notebook).
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def describe(self) -> str:
        if self.task_threads == 1:
            return f"this machine, {self.slots} worker thread{'s' if self.slots != 1 else ''}"
        return "this machine, one unit at a time"


class DaskExecutor(Executor):
    """Runs units on a dask.distributed cluster; this process stays the one writer.

    Parameters
    ----------
    address : str or Client
        ``"local:W"``: start a LocalCluster of W single-threaded worker
        processes here (closed at the end); a scheduler address such as
        ``"tcp://10.0.0.5:8786"``; the path of a scheduler file (``.json``);
        or an existing ``dask.distributed.Client`` (left open at the end).
    threads_per_task : numba threads per unit (default 1: one unit per worker
        thread; the kernels release the GIL, so threaded workers scale).
    target_seconds : how long one unit should take (default 1 s: long enough
        to hide scheduling overhead, short enough that little is lost when a
        worker dies or the sweep is stopped).
    """

    def __init__(self, address, *, threads_per_task: int = 1, target_seconds: float = 1.0):
        self.address = address
        self.task_threads = check_int("threads_per_task", threads_per_task, 1)
        self.target_seconds = check_real("target_seconds", target_seconds, 0.0, open_lo=True,
                                         what="the seconds of work per unit")
        self.client = None
        self.cluster = None
        self._user_client = None     # a Client given by the user: used, never closed
        self._own_client = False
        self._ac = None
        self._pending: set = set()
        self._slots = 2
        self._slots_at = -1e9
        self._saved_log_level = None
        if isinstance(address, str):
            a = address.strip()
            if a.startswith("local"):
                w = a.partition(":")[2] or str(os.cpu_count() or 1)
                if not w.isdigit() or int(w) < 1:
                    raise SweepError(f"address = {address!r} (--dask): 'local:W' needs W, the "
                                     "number of workers, an integer >= 1 (e.g. local:2)")
                self.local_workers = int(w)
            else:
                self.local_workers = None
                if not a:
                    raise SweepError(f"address = {address!r} (--dask): give 'local:W' or a "
                                     "scheduler address (e.g. tcp://host:8786) or a scheduler file")
        elif type(address).__name__ == "Client":
            self.local_workers = None
            self._user_client = self.client = address
        else:
            raise SweepError(f"address = {address!r}: must be 'local:W', a "
                             "scheduler address, a scheduler file or a distributed.Client")

    def start(self) -> None:
        try:
            import distributed
        except ImportError:
            raise SweepError("--dask needs dask.distributed, an optional extra: "
                             "pip install 'stormsim[dask]'") from None
        self._slots_at = -1e9
        if self._user_client is not None:
            self.client, self._own_client = self._user_client, False
        else:
            # anything left from an earlier sweep was released by close()
            if self.local_workers is not None:
                # Workers inherit an ignored SIGINT and SIGTERM: Ctrl-C in a
                # terminal (or a batch system's SIGTERM) reaches the whole process
                # group, and it is this process that decides what to keep and
                # then ends the workers (a worker killed by it would be restarted
                # by its nanny, delaying the stop). Their nannies end them with
                # SIGKILL, and they exit with this process.

                saved = {sig: signal.signal(sig, signal.SIG_IGN)
                         for sig in (signal.SIGINT, signal.SIGTERM)}
                try:
                    self.cluster = distributed.LocalCluster(
                        n_workers=self.local_workers, threads_per_worker=1, processes=True,
                        dashboard_address=":0", silence_logs=logging.ERROR)
                finally:
                    for sig, handler in saved.items():
                        signal.signal(sig, handler)
                self.client = distributed.Client(self.cluster)
                self._quiet_cluster_logs(distributed)
            elif self.address.endswith(".json"):
                if not os.path.exists(self.address):
                    raise SweepError(f"--dask {self.address}: no such scheduler file")
                try:
                    self.client = distributed.Client(scheduler_file=self.address, timeout="20s")
                except OSError as exc:      # (TimeoutError is an OSError)
                    raise ResourceError(f"--dask {self.address}: cannot reach the scheduler "
                                        f"this file names ({exc}); check that it runs") from None
            else:
                try:
                    self.client = distributed.Client(self.address, timeout="20s")
                except ValueError as exc:   # a malformed address
                    raise SweepError(f"--dask {self.address}: not a scheduler address "
                                     f"({exc}); e.g. tcp://host:8786") from None
                except OSError as exc:
                    raise ResourceError(f"--dask {self.address}: cannot reach the scheduler "
                                        f"({exc}); check that it runs and the address") from None
            self._own_client = True
        self._ac = distributed.as_completed()

    def _quiet_cluster_logs(self, distributed) -> None:
        """Silence the logs of the cluster we started, here and in its workers.

        A worker that dies (killed, out of memory) makes the scheduler and
        the other workers log connection errors, some with a traceback
        (CommClosedError), although the sweep loses nothing: the scheduler
        reruns the unit, and a unit that fails for good reaches us through
        its future. A worker plugin is installed in every worker, restarted
        ones included."""
        class QuietLogs(distributed.WorkerPlugin):
            def setup(self, worker):
                logging.getLogger("distributed").setLevel(logging.CRITICAL)

        log = logging.getLogger("distributed")
        self._saved_log_level = log.level
        log.setLevel(logging.CRITICAL)
        self.client.register_plugin(QuietLogs(), name="stormsim-quiet-logs")

    @property
    def slots(self) -> int:
        now = time.monotonic()
        if now - self._slots_at > 2.0:
            threads = sum(self.client.nthreads().values())
            self._slots = max(2, 2 * threads)
            self._slots_at = now
        return self._slots

    def submit(self, fn, task) -> None:
        fut = self.client.submit(fn, task, key=task.key, pure=False, retries=1)
        self._pending.add(fut)
        self._ac.add(fut)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def poll(self, timeout: float) -> list:
        deadline = time.monotonic() + timeout
        while not self._ac.has_ready():
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.01)
        out = []
        for fut in self._ac.next_batch(block=False):
            self._pending.discard(fut)
            try:
                out.append(fut.result())
            except Exception as exc:
                raise RuntimeError(f"unit {fut.key} failed on a Dask worker: {exc!r}") from exc
            fut.release()
        return out

    def cancel(self) -> None:
        if self._pending and self.client is not None:
            try:
                self.client.cancel(list(self._pending))
            except Exception:  # the cluster may be gone; nothing to keep
                pass
        self._pending.clear()
        if self._ac is not None:
            self._ac.clear()

    def close(self) -> None:
        if self._own_client and self.client is not None:
            self.client.close(timeout=2)
        if self.cluster is not None:
            # A graceful LocalCluster close waits ~1.5 s for its workers; ours
            # hold nothing (results are written by this process), so each
            # nanny is closed first with a short kill timeout: Ctrl-C then
            # exits within a second. Closing the nanny (not killing its process
            # behind its back) marks it closing before the process dies, so it
            # neither restarts the worker nor reports a CommClosedError while
            # unregistering from a scheduler that is shutting down.
            nannies = list(self.cluster.workers.values())
            try:
                self.cluster.sync(_close_nannies, nannies, NANNY_KILL_SECONDS)
            except Exception:  # the cluster's loop is gone: kill what is left below
                pass
            for nanny in nannies:
                proc = getattr(getattr(nanny, "process", None), "process", None)
                if proc is not None:
                    try:
                        proc.kill()
                    except Exception:  # already gone
                        pass
            try:
                self.cluster.close(timeout=CLOSE_TIMEOUT_SECONDS)
            except Exception:  # a worker stuck mid-restart: it exits with this process
                pass
        if self._saved_log_level is not None:
            logging.getLogger("distributed").setLevel(self._saved_log_level)
            self._saved_log_level = None
        # Only what this executor created is closed and forgotten: a user's
        # Client stays, so the same executor can run another sweep.
        self.client, self.cluster = self._user_client, None
        self._own_client = False
        self._pending.clear()
        self._ac = None

    def describe(self) -> str:
        if self.client is None:
            return f"Dask ({self.address})"
        info = self.client.nthreads()
        where = "a local Dask cluster" if self.cluster is not None else \
            f"Dask at {self.client.scheduler.address}"
        return f"{where}, {len(info)} workers, {sum(info.values())} threads"


def executor_from(spec) -> Executor:
    """An executor from what run_sweep accepts: None (local), an Executor, a
    dask.distributed Client, 'local:W' or a scheduler address."""
    if spec is None:
        return LocalExecutor()
    if isinstance(spec, Executor):
        return spec
    if isinstance(spec, str) or type(spec).__name__ == "Client":
        try:
            return DaskExecutor(spec)
        except SweepError as exc:           # run_sweep's argument is its executor
            raise SweepError(str(exc).replace("address = ", "executor = ", 1)) from None
    raise SweepError(f"executor = {spec!r}: must be None (local), a stormsim executor, "
                     "a dask.distributed Client, 'local:W' or a scheduler address")

"""One executor for every parallel job: in this process, on a local Dask cluster, or on a
cluster someone else runs.

A job is a set of keyed tasks ``fn(*args)``: ``fn`` a module-level function, the arguments plain
picklable data (exact rationals, boxes, source text — never solver objects), the result
likewise. :meth:`Executor.as_completed` streams ``(key, result)`` pairs as tasks finish (for
progress and anytime answers) and cancels what is still outstanding when the deadline passes or
the caller stops reading. Completion order depends on the workers, so callers combine results
by key, which keeps their answers independent of how many workers there are and in what order
they finish.

Backends (chosen lazily: nothing is started before the first task):

* ``workers=1`` — plain function calls in this process, no Dask at all;
* ``workers=N`` (N >= 2) — a ``distributed.LocalCluster`` of N single-threaded worker processes;
* ``workers=0`` — automatic: in this process while the job is small (its first
  ``AUTO_AFTER_S`` seconds), then a local cluster with one worker per core;
* ``scheduler="tcp://host:port"`` (or ``DASK_SCHEDULER_ADDRESS`` in the environment) — an
  existing Dask cluster; its workers need tamp importable.

A scheduler that cannot be reached, or goes away, is an :class:`ExecutorError` (a clear message;
the commands exit 1), never a hang: connecting and waiting have time limits. A lost *worker* is
Dask's business: its tasks are recomputed on the others.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Iterator, List, Optional, Tuple

AUTO_AFTER_S = 2.0  # workers=0: run in-process for this long before starting a local cluster
CONNECT_TIMEOUT_S = 10.0  # connecting to a scheduler
LOST_AFTER_S = 20.0  # a scheduler unreachable for this long during a run is gone
POLL_S = 0.2  # how often a waiting caller checks the deadline and the connection
ENV_SCHEDULER = "DASK_SCHEDULER_ADDRESS"


class ExecutorError(RuntimeError):
    """The cluster cannot be used (scheduler unreachable or lost, a worker failing every task)."""


def scheduler_from_env() -> Optional[str]:
    return os.environ.get(ENV_SCHEDULER) or None


@dataclass(frozen=True)
class TaskTime:
    """How long one task ran (on its worker, without the transport), for the benchmarks' model of
    a larger cluster: ``batch`` numbers the calls of :meth:`Executor.as_completed` (a batch waits
    for the one before it), ``name`` is the task's function, ``key`` the caller's key (as text)."""

    batch: int
    name: str
    seconds: float
    key: str = ""
    cpu: float = 0.0  # processor time of the worker process (seconds < cpu: it waited for a core)


class Executor:
    """Submit keyed tasks, read ``(key, result)`` back in completion order. Use as a context
    manager (or call :meth:`close`) so a local cluster is shut down."""

    def __init__(
        self,
        workers: int = 1,
        scheduler: Optional[str] = None,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        lost_after: float = LOST_AFTER_S,
        auto_after: float = AUTO_AFTER_S,
        use_env: bool = True,
    ):
        if workers < 0:
            raise ValueError("workers must be >= 0")
        self.workers = workers
        # use_env=False: not DASK_SCHEDULER_ADDRESS either (a job that is already on a worker)
        self.scheduler = scheduler or (scheduler_from_env() if use_env else None)
        self.connect_timeout = connect_timeout
        self.lost_after = lost_after
        self.auto_after = auto_after
        self._t0 = time.monotonic()
        self._client: Any = None  # a distributed.Client once connected
        self._cluster: Any = None  # a distributed.LocalCluster once started
        self._local: Dict[Hashable, Tuple[Callable, tuple]] = {}  # tasks to run in this process
        self._remote: Dict[Any, Hashable] = {}  # Dask future -> key
        self._names: Dict[Hashable, str] = {}  # key -> the task's function name (for timings)
        self.timings: List[TaskTime] = []  # every finished task, in completion order
        self.batches: List[Tuple[float, float]] = []  # (start, end) of each as_completed, monotonic
        self._batch = 0

    # -- backend ---------------------------------------------------------------------------------

    @property
    def backend(self) -> str:
        """ "local" (this process), "cluster" (a local Dask cluster) or the scheduler address."""
        if self._client is None:
            return "local"
        return self.scheduler or "cluster"

    @property
    def parallel(self) -> bool:
        """Whether jobs may run elsewhere than in this process (``workers != 1`` or a scheduler)."""
        return bool(self.scheduler) or self.workers != 1

    @property
    def dashboard(self) -> Optional[str]:
        """The Dask dashboard's address, when there is one."""
        if self._client is None or self._cluster is not None:  # tamp's own cluster runs without one
            return None
        try:
            return self._client.dashboard_link
        except Exception:  # noqa: BLE001 - no dashboard (e.g. bokeh missing or disabled)
            return None

    def _dask(self):
        """The Dask client, started on first need; None while tasks run in this process."""
        if self._client is not None:
            return self._client
        if self.scheduler:
            self._client = self._connect(self.scheduler)
        elif self.workers >= 2:
            self._client = self._start_local(self.workers)
        elif self.workers == 0 and (os.cpu_count() or 1) > 1 and time.monotonic() - self._t0 >= self.auto_after:
            self._client = self._start_local(os.cpu_count() or 1)
        return self._client

    def _connect(self, address: str):
        # deferred on purpose: Dask loads only when a cluster is used
        from distributed import Client

        try:
            return Client(address, timeout=self.connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(
                f"cannot reach the Dask scheduler at {address} "
                f"(tried for {self.connect_timeout:g} s): {_first_line(exc)}"
            ) from None

    def _start_local(self, n: int):
        # deferred on purpose: Dask loads only when a cluster is used
        from distributed import Client, LocalCluster

        with warnings.catch_warnings():  # "port 8787 in use": the scheduler's HTTP port, not needed
            warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
            )
        return Client(self._cluster, set_as_default=False)

    # -- tasks -----------------------------------------------------------------------------------

    def share(self, obj):
        """A large input every task of the job needs, sent to the cluster once (workers copy it
        from each other): pass the returned handle as a task argument (tasks receive the object)."""
        client = self._dask()
        if client is None:
            return obj
        # a task holding the object (not a scatter): if every worker holding it is lost, Dask
        # recomputes it from the graph instead of failing the job
        return client.submit(_identity, obj, key=f"tamp-shared-{uuid.uuid4().hex}", pure=False)

    def submit(self, key: Hashable, fn: Callable, *args) -> None:
        """Queue ``fn(*args)`` under ``key`` (unique among the outstanding tasks)."""
        client = self._dask()
        self._names[key] = getattr(fn, "__name__", "task")
        if client is None:
            self._local[key] = (fn, args)
            return
        name = f"tamp-{self._names[key]}-{uuid.uuid4().hex}"
        self._remote[client.submit(_timed, fn, *args, key=name, pure=False)] = key

    def map(self, fn: Callable, items, deadline: Optional[float] = None) -> Iterator[Tuple[Hashable, Any]]:
        """Submit ``fn(*args)`` for every ``(key, args)`` of ``items``; stream the results."""
        for key, args in items:
            self.submit(key, fn, *args)
        return self.as_completed(deadline)

    def as_completed(self, deadline: Optional[float] = None) -> Iterator[Tuple[Hashable, Any]]:
        """``(key, result)`` of the outstanding tasks as they finish, until all are done or the
        ``deadline`` (``time.monotonic()``) passes; then (or when the caller stops reading) the
        rest is cancelled. A task's exception is raised here."""
        self._batch += 1
        t0 = time.monotonic()
        try:
            while self._local or self._remote:
                if deadline is not None and time.monotonic() >= deadline:
                    return
                if self._remote:
                    yield from self._collect(deadline)
                if self._local:
                    key, (fn, args) = next(iter(self._local.items()))
                    del self._local[key]
                    seconds, result = _timed(fn, *args)
                    self._record(key, seconds)
                    yield key, result
        finally:
            self.batches.append((t0, time.monotonic()))
            self.cancel()

    def _record(self, key: Hashable, seconds: Tuple[float, float]) -> None:
        wall, cpu = seconds
        self.timings.append(TaskTime(self._batch, self._names.pop(key, "task"), wall, str(key)[:80], cpu))

    def _collect(self, deadline: Optional[float]):
        """Wait (briefly) for Dask tasks; yield the finished ones."""
        until = time.monotonic() + (0 if self._local else max(POLL_S, min(1.0, _left(deadline))))
        while True:
            done = [f for f in self._remote if f.done()]
            if done or time.monotonic() >= until:
                break
            time.sleep(0.02)
        if not done:
            self._check_connection()
            return
        for fut in sorted(done, key=lambda f: f.key):
            key = self._remote.pop(fut)
            if fut.status == "cancelled":
                self._check_connection(now=True)
                raise ExecutorError(f"a task was cancelled by the Dask scheduler at {self.backend}")
            try:
                seconds, result = fut.result(timeout=max(self.lost_after, 1.0))
            except TimeoutError:
                raise ExecutorError(
                    f"no answer from the Dask cluster at {self.backend} for {self.lost_after:g} s"
                ) from None
            except Exception as exc:
                if type(exc).__name__ == "KilledWorker":
                    raise ExecutorError(f"a task killed every worker it ran on ({exc})") from None
                if isinstance(exc, RuntimeError) and "deserializ" in str(exc):
                    raise ExecutorError(
                        f"the Dask cluster at {self.backend} cannot load tamp's tasks: the "
                        "scheduler and the workers need tamp and its dependencies "
                        "installed (see docs/cluster.md)"
                    ) from None
                raise
            self._record(key, seconds)
            yield key, result

    def _check_connection(self, now: bool = False) -> None:
        client = self._client
        if client is None:
            return
        if client.status == "running":
            self._lost_since = None
            self._check_workers(client)
            return
        since = getattr(self, "_lost_since", None) or time.monotonic()
        self._lost_since = since
        if now or time.monotonic() - since >= self.lost_after or client.status in ("closed", "closing"):
            raise ExecutorError(f"lost the Dask scheduler at {self.backend} (connection {client.status})")

    def _check_workers(self, client) -> None:
        """A cluster without workers for ``lost_after`` seconds would wait forever: an error."""
        now = time.monotonic()
        if now - getattr(self, "_workers_checked", 0.0) < 5.0:
            return
        self._workers_checked = now
        try:
            n = len(client.nthreads())
        except Exception:  # noqa: BLE001 - the connection's own checks report a lost scheduler
            return
        if n:
            self._idle_since = None
            return
        since = getattr(self, "_idle_since", None) or now
        self._idle_since = since
        if now - since >= self.lost_after:
            raise ExecutorError(
                f"the Dask cluster at {self.backend} has had no workers for "
                f"{now - since:.0f} s (start some with `dask worker {self.backend}`)"
            )

    def cancel(self) -> None:
        """Drop every outstanding task (cancelled on the cluster)."""
        self._local.clear()
        self._names.clear()
        if self._remote and self._client is not None:
            futures = list(self._remote)
            self._remote.clear()
            try:
                self._client.cancel(futures)
            except Exception:  # noqa: BLE001 - the scheduler may be gone already
                pass

    # -- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        self.cancel()
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        for thing in (client, cluster):
            if thing is not None:
                try:
                    thing.close(timeout=10) if thing is client else thing.close()
                except Exception:  # noqa: BLE001 - closing a lost connection
                    pass

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def in_process() -> Executor:
    """An executor that runs every task here, whatever the environment says: for the engines
    inside a job that already runs on a worker (one level of parallelism, no job waiting on
    jobs of its own cluster)."""
    return Executor(1, use_env=False)


def run_all(executor: Executor, fn: Callable, items, deadline: Optional[float] = None) -> Dict[Hashable, Any]:
    """The results of ``fn(*args)`` for every ``(key, args)`` of ``items`` that finished by the
    deadline, as a dict (combine them in key order)."""
    return dict(executor.map(fn, items, deadline))


def _timed(fn: Callable, *args) -> Tuple[Tuple[float, float], Any]:
    """``fn(*args)`` and how long it took (wall and processor time, on the worker that ran it)."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn(*args)
    return (time.perf_counter() - t0, time.process_time() - c0), result


def _identity(obj):
    return obj


def _left(deadline: Optional[float]) -> float:
    return float("inf") if deadline is None else deadline - time.monotonic()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]

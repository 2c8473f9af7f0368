"""A solver call that gives control back: z3 runs in a worker thread, watched by its caller.

z3 ends a query at its resource limit, at its clock limit, or when its context is interrupted
(``Z3_interrupt``): all three set one flag that its procedures look at between steps. A few of its
nonlinear procedures do not look for long stretches (a Gröbner basis step grinding on big
numbers: z3 issues #611 and #10417, the latter only in a "warm" context after many
``push``/``check``/``pop`` rounds, as the prover's reused solvers are). Such a query of the
expected-failure engine, given 2 s, ran for minutes in a long-lived test worker, and a run of the
test suite hung until the CI's limit killed it. Python cannot stop a thread that is inside C code,
so :func:`call` runs the query in a worker thread while the caller waits for the query's clock
limit plus a slack (:func:`slack`); then it interrupts the query's context and waits
:data:`STUCK_S` more. If z3 has still not returned, the caller gives up on the query *and on its
context*: it raises :class:`SolverStuck`, which the prover's entry turns into "unknown" (the
command line into a message and the "unknown" exit status). The worker is left to finish on its
own at the lowest CPU priority (Linux: a thread has its own nice value), and the abandoned
context is never used again by this process: from then on no reference count of its terms is
decremented (those calls are skipped for it, so no other thread ever touches the context while
z3 still works in it) and the context is kept, never freed. When the abandoned context is z3's
default one (``z3.main_ctx()``, where every term built without ``ctx=`` goes), a new default is
installed at once (:func:`tamp.core.z3context.new_default_context`): otherwise the caller's next
terms — the next test of a test run, the next call of a notebook — would be built in the context
z3 is still working in, from two threads at once (seen: "canceled" errors in the next test, then
"double free or corruption" at exit). That leaks the context's memory,
once per query z3 would not stop: the price of going on at all.

Why it is sound: the only answers that change are ones that never came; a query given up is an
exception, never "unsat". Each calling thread has its own worker, so a stuck query of one thread
never holds up another's queries; a forked child (the soundness harness proves in one) starts
its own, since it inherits no thread but the one that forked.

>>> import z3
>>> x = z3.Real("x")
>>> s = z3.Solver()
>>> s.add(x > 1, x < 0)
>>> call(s.check, s.ctx, 5.0) == z3.unsat
True
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable, List, Optional, Set

import z3
import z3.z3 as _z3_module

from tamp.core.z3context import new_default_context

#: how long after interrupting a query its caller waits before giving up on it
STUCK_S = 5.0
#: the least time past its own clock limit a query may run before it is interrupted
MIN_SLACK_S = 2.0


def slack(limit_s: float) -> float:
    """How long past its own clock limit a query may run before it is interrupted: z3 polls its
    clock between steps, and on a loaded machine a step can be long (half the limit, at least
    :data:`MIN_SLACK_S`)."""
    return max(MIN_SLACK_S, 0.5 * limit_s)


class SolverStuck(BaseException):
    """z3 did not return from a query at its clock limit, nor after being interrupted.

    A :class:`BaseException` (like :class:`KeyboardInterrupt`): the engines turn an ``Exception``
    into "not provable" in many places and would go on using the abandoned context."""

    def __init__(self, limit_s: float):
        super().__init__(
            f"z3 did not stop a query {limit_s + slack(limit_s) + STUCK_S:g} s after it began, "
            f"although its limit was {limit_s:g} s and it was interrupted (a known z3 limitation in "
            "nonlinear arithmetic); the attempt was abandoned"
        )
        self.limit_s = limit_s
        self.method: Optional[str] = None  #: the proof method whose query it was (set by the portfolio)


class _Job:
    def __init__(self, fn: Callable[[], Any]):
        self.fn: Optional[Callable[[], Any]] = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            assert self.fn is not None
            self.result = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, re-raised there
            self.error = exc
        finally:
            self.fn = None
            self.done.set()


class _Worker:
    """A daemon thread running one calling thread's jobs in order."""

    def __init__(self) -> None:
        self.jobs: "queue.SimpleQueue[Optional[_Job]]" = queue.SimpleQueue()
        self.abandoned = False
        self.thread = threading.Thread(target=self._loop, name="tamp-z3", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            job.run()
            del job
            if self.abandoned:  # its caller gave up on it: a new worker has its place
                return


_local = threading.local()


def _forget_workers() -> None:
    """In a forked child: the parent's workers are not there (a process inherits only the
    thread that forked), so each thread starts a new one on its next call."""
    global _local
    _local = threading.local()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)

_dead: Set[int] = set()
#: abandoned contexts (and their workers), kept so that nothing of them is ever freed
_graveyard: List[Any] = []
_guard_lock = threading.Lock()
_guarded = False


def call(fn: Callable[[], Any], ctx: z3.Context, limit_s: Optional[float]) -> Any:
    """``fn()`` — a z3 call in ``ctx`` whose own clock limit is ``limit_s`` seconds — with the
    guarantee that control comes back: :class:`SolverStuck` when z3 has not returned
    :func:`slack` after ``limit_s`` and :data:`STUCK_S` after an interrupt. ``limit_s`` None: no
    limit, ``fn()`` runs in the calling thread. ``fn``'s exceptions are raised here."""
    if limit_s is None:
        return fn()
    worker = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = _Worker()
    job = _Job(fn)
    worker.jobs.put(job)
    try:
        if not job.done.wait(limit_s + slack(limit_s)):
            ctx.interrupt()
            if not job.done.wait(STUCK_S):
                _abandon(worker, ctx)
                raise SolverStuck(limit_s)
    except SolverStuck:
        raise
    except BaseException:  # an alarm (--timeout) or ^C in the caller: the query must stop first
        ctx.interrupt()
        if not job.done.wait(STUCK_S):
            _abandon(worker, ctx)
        raise
    if job.error is not None:
        raise job.error
    return job.result


def is_abandoned(ctx: z3.Context) -> bool:
    """Whether ``ctx`` was given up on (see the module's docstring)."""
    return _key(ctx.ref()) in _dead


def _abandon(worker: _Worker, ctx: z3.Context) -> None:
    worker.abandoned = True
    _local.worker = None
    _guard_releases()
    _dead.add(_key(ctx.ref()))
    _graveyard.append((ctx, worker))
    if getattr(_z3_module, "_main_ctx", None) is ctx:  # no later term may be built in it
        new_default_context()
    tid = getattr(worker.thread, "native_id", None)
    if tid is not None and hasattr(os, "setpriority"):
        try:
            os.setpriority(os.PRIO_PROCESS, tid, 19)  # on Linux, the thread alone
        except OSError:
            pass


def _key(c: Any) -> int:
    return int(getattr(c, "value", None) or 0)


def _guard_releases() -> None:
    """Make every reference-count decrement and context deletion of z3's Python API (the
    functions its objects' ``__del__`` call, looked up in :mod:`z3.z3`) skip abandoned contexts."""
    global _guarded
    with _guard_lock:
        if _guarded:
            return
        for name in dir(_z3_module):
            if name.startswith("Z3_") and (name.endswith("_dec_ref") or name == "Z3_del_context"):
                setattr(_z3_module, name, _skipping_dead(getattr(_z3_module, name)))
        _guarded = True


def _skipping_dead(release: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(c: Any, *args: Any) -> Any:
        if _dead and _key(c) in _dead:
            return None
        return release(c, *args)

    guarded.__name__ = getattr(release, "__name__", "release")
    return guarded

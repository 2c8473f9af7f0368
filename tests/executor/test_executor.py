"""The executor: the same results in this process and on a cluster, in any order; a lost worker
changes nothing; an unreachable scheduler is a clear error, never a hang."""

import os
import signal
import time
from fractions import Fraction

import pytest

from tamp.executor import Executor, ExecutorError, in_process, run_all

from .tasks import fail, slow_square

ITEMS = [(i, (i, 0.2)) for i in range(8)]
EXPECTED = {i: Fraction(i * i, 49) for i in range(8)}


def test_in_process_runs_plain_calls_in_order():
    with Executor(1) as ex:
        keys = [k for k, _ in ex.map(slow_square, [(i, (i, 0)) for i in range(5)])]
        assert ex.backend == "local"
    assert keys == list(range(5))


def test_cluster_gives_the_same_results(address):
    with Executor(1) as ex:
        local = run_all(ex, slow_square, ITEMS)
    with Executor(scheduler=address) as ex:
        remote = run_all(ex, slow_square, ITEMS)
        assert ex.backend == address
    assert local == remote == EXPECTED


def test_task_errors_reach_the_caller(address):
    for ex in (Executor(1), Executor(scheduler=address)):
        with ex, pytest.raises(ValueError, match="task 3 fails"):
            run_all(ex, fail, [(3, (3,))])


def test_deadline_cancels_outstanding_tasks(address):
    with Executor(1) as ex:
        assert run_all(ex, slow_square, ITEMS, deadline=time.monotonic() - 1) == {}
    with Executor(scheduler=address) as ex:
        got = run_all(ex, slow_square, [(i, (i, 60)) for i in range(4)], deadline=time.monotonic() + 1)
        assert got == {}
        assert not ex._remote  # cancelled, nothing left behind


def kill_one_worker(client):
    """SIGKILL one worker process (the cluster is on this machine); its nanny starts a new one."""
    pids = client.run(os.getpid)
    os.kill(pids[sorted(pids)[0]], signal.SIGKILL)


def test_killed_worker_loses_nothing(address):
    with Executor(scheduler=address) as ex:
        got, killed = {}, False
        for key, value in ex.map(slow_square, [(i, (i, 1.0)) for i in range(8)]):
            got[key] = value
            if not killed:  # tasks are still outstanding: one worker dies in the middle of the run
                kill_one_worker(ex._client)
                killed = True
    assert killed and got == EXPECTED


def test_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        with Executor(scheduler="tcp://127.0.0.1:1", connect_timeout=2) as ex:
            run_all(ex, slow_square, ITEMS)


def test_environment_names_the_scheduler(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:1")
    assert Executor(1).scheduler == "tcp://127.0.0.1:1"
    assert Executor(1, "tcp://h:8786").scheduler == "tcp://h:8786"


def test_task_times_are_recorded_per_batch():
    with Executor(1) as ex:
        run_all(ex, slow_square, [(i, (i, 0)) for i in range(3)])
        run_all(ex, slow_square, [(9, (9, 0))])
    assert [(t.batch, t.name, t.key) for t in ex.timings] == [
        (1, "slow_square", "0"),
        (1, "slow_square", "1"),
        (1, "slow_square", "2"),
        (2, "slow_square", "9"),
    ]
    assert all(t.seconds >= 0 for t in ex.timings) and len(ex.batches) == 2


def test_a_job_on_a_worker_ignores_the_environment(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:1")
    ex = in_process()
    assert ex.scheduler is None and not ex.parallel
    assert run_all(ex, slow_square, [(2, (2, 0))]) == {2: Fraction(4, 49)}

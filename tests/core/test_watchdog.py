"""A solver call that does not come back must not hang the run (tamp.core.watchdog).

z3 itself cannot be made to ignore its limits on demand, so the stuck call here is a Python
function that waits on an event, the way z3's Gröbner step ignores its cancel flag: the caller
must get control back at the limit plus the slack plus STUCK_S, the context must be marked
abandoned (its reference counts left alone), and the next call must run on a new worker. The
prover's entry turns a stuck query into "unknown", saying why; a command outside a proof prints
the reason and exits "unknown" (1), never with a traceback."""

from __future__ import annotations

import threading
import time

import pytest
import z3

from lang.parser import parse
from tamp.core import watchdog


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(watchdog, "MIN_SLACK_S", 0.05)
    monkeypatch.setattr(watchdog, "STUCK_S", 0.1)


def test_an_answer_comes_back_from_the_worker():
    x = z3.Real("x")
    s = z3.Solver()
    s.add(x * x < 0)
    assert watchdog.call(s.check, s.ctx, 5.0) == z3.unsat
    assert watchdog.call(lambda: threading.current_thread().name, s.ctx, 5.0) == "tamp-z3"
    assert watchdog.call(lambda: threading.current_thread().name, s.ctx, None) == threading.current_thread().name


def test_the_calls_exception_is_raised_in_the_caller():
    def bad():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        watchdog.call(bad, z3.main_ctx(), 5.0)


def test_a_call_that_ignores_the_interrupt_is_given_up(quick):
    ctx = z3.Context()
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(watchdog.SolverStuck, match="did not stop"):
        watchdog.call(lambda: release.wait(30), ctx, 0.01)
    assert time.monotonic() - started < 5
    assert watchdog.is_abandoned(ctx)
    # terms of the abandoned context are never released again (no other thread touches it)
    y = z3.Real("y", ctx)
    del y
    # the next call has a new worker
    fresh = z3.Context()
    assert watchdog.call(lambda: 41 + 1, fresh, 1.0) == 42
    assert not watchdog.is_abandoned(fresh)
    release.set()


def test_abandoning_the_default_context_installs_a_new_default(quick):
    """The stuck query ran in ``z3.main_ctx()``: the caller's next terms (the next test, the next
    notebook cell) must not be built in the context z3 is still working in."""
    ctx = z3.main_ctx()
    release = threading.Event()
    try:
        with pytest.raises(watchdog.SolverStuck):
            watchdog.call(lambda: release.wait(30), ctx, 0.01)
        assert watchdog.is_abandoned(ctx)
        assert z3.main_ctx() is not ctx
        x = z3.Real("x")
        assert x.ctx is z3.main_ctx() and not watchdog.is_abandoned(x.ctx)
        assert watchdog.call(lambda: z3.simplify(x + x).sexpr(), x.ctx, 1.0) == "(* 2.0 x)"
    finally:
        release.set()


def test_a_call_that_heeds_the_interrupt_returns_its_answer(quick):
    x = z3.Real("x")
    s = z3.Solver()
    s.add(x > 0)
    stop = threading.Event()
    ctx = s.ctx

    def waits_for_interrupt():
        stop.wait(5)
        return "interrupted"

    real_interrupt = z3.Context.interrupt
    try:
        z3.Context.interrupt = lambda self: stop.set()  # what z3 does: the call returns
        assert watchdog.call(waits_for_interrupt, ctx, 0.01) == "interrupted"
    finally:
        z3.Context.interrupt = real_interrupt
    assert not watchdog.is_abandoned(ctx)


PROGRAM = """
program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{
  y ~ bern(p);
}
"""


def test_a_stuck_query_makes_the_proof_unknown_and_says_why(quick, monkeypatch):
    from tamp.prover import prove_program

    release = threading.Event()
    real_check = z3.Solver.check

    def stuck(self, *a):  # z3 ignoring every limit, in the calls the watchdog watches
        if threading.current_thread().name == "tamp-z3":
            release.wait(60)
        return real_check(self, *a)

    monkeypatch.setattr(z3.Solver, "check", stuck)
    call = watchdog.call
    monkeypatch.setattr(watchdog, "call", lambda fn, ctx, limit: call(fn, ctx, None if limit is None else 0.01))
    r = prove_program(parse(PROGRAM).programs[0], timeout=10)
    release.set()
    assert r.verdict == "unknown"
    assert "z3 did not stop" in r.message
    assert r.message.startswith("<string>:2:9: not proved: ")  # the program's place (its name)
    monkeypatch.setattr(z3.Solver, "check", real_check)
    monkeypatch.setattr(watchdog, "call", call)
    again = prove_program(parse(PROGRAM).programs[0], timeout=10)
    assert again.verdict == "proved"  # the process goes on, in a new context


def test_the_methods_after_a_stuck_one_still_run(monkeypatch):
    from tamp.prover import portfolio, prove_program

    first = portfolio.STRATEGIES[0]

    def stuck(problem):
        raise watchdog.SolverStuck(1.0)

    monkeypatch.setattr(first, "attempt", stuck)
    r = prove_program(parse(PROGRAM).programs[0], timeout=30)
    assert r.verdict == "proved"  # by a method after the abandoned one, in a fresh context
    assert f"abandoned, the ones after it were tried: {first.name}: z3 did not stop" in r.message


def test_a_command_outside_a_proof_reports_a_stuck_query(quick, monkeypatch, tmp_path, capsys):
    from tamp import cli

    path = tmp_path / "coin.prob"
    path.write_text(PROGRAM)

    def run(args):
        raise watchdog.SolverStuck(1.0)

    monkeypatch.setattr(cli, "build_parser", _parser_running(cli.build_parser, run))
    code = cli.main(["check", str(path)])
    err = capsys.readouterr().err
    assert code == cli.EXIT_UNKNOWN and "did not stop" in err and "Traceback" not in err


def _parser_running(build, run):
    def build_parser(word):
        parser = build(word)
        parser.set_defaults(_run=run)
        for sub in getattr(parser, "commands", {}).values():
            sub.set_defaults(_run=run)
        return parser

    return build_parser


def test_a_forked_child_starts_its_own_worker():
    import os

    watchdog.call(lambda: None, z3.main_ctx(), 1.0)  # the parent has a worker now
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker thread is not here
        try:
            ok = watchdog.call(lambda: threading.current_thread().name, z3.main_ctx(), 1.0) == "tamp-z3"
        except BaseException:  # noqa: BLE001 - any failure is the child's exit status
            ok = False
        os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

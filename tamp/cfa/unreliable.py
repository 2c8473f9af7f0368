"""Unreliable operators as coins, in the program's own structure (for the pre-expectation rules).

The CFA compiles an unreliable operator ``e1 *. e2`` (any fault event of :mod:`tamp.cfa.faults` whose
failed result is the reliable value, at its kind's rate) of a statement into two edges before the
statement — ``$fK ~ bern(r); failed := failed || $fK`` (``r`` the ``rate`` clause) — and the
reliable ``*`` in the statement, with ``failed := false`` first (:mod:`tamp.cfa`). The
expected-failure rules work on the structured body instead of the CFA, so
:func:`coins_for_unreliable` writes the same desugaring as statements: every unreliable operator
of an assignment's value or element index, or of an ``if`` test, becomes one such coin right
before that statement, exactly as the CFA orders them (all of an expression's operators, also
those in an arm of ``c ? a : b`` not taken, as the CFA does). The prover and the checker
(:mod:`tamp.certificate.exp_rules`) both read programs through it.

Why this is sound: it is the CFA's semantics of ``rate`` written in the source's structure —
the same coins at the same places, so the program's runs and their probabilities are the same.
(Like the CFA, it tosses a coin also for an operator in an arm of ``c ? a : b`` that is not
evaluated, where the simulator does not: an extra coin only adds runs with ``failed`` set, so
a bound on Pr[failed] proved with it holds without it.)
Unreliable operators anywhere else (a loop's test or bounds, a distribution's parameter, an
``assume``) are refused (None): their coins are tossed at each evaluation, which a statement
placed before the loop would not model.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional

from lang import ast as A
from lang.walk import DESCEND, Transformer, rebuild
from tamp.cfa import FAILED
from tamp.cfa.faults import ARBITRARY, events, kind_of, memory_rates, op_rate, reliable_op


class _Reliable(Transformer):
    def enter(self, node):
        return DESCEND

    def Binary(self, node, kids):
        if kind_of(node.op) is not None:
            return A.Binary(reliable_op(node.op), kids[0], kids[1], pos=node.pos)
        return rebuild(node, kids)


def _has(e: A.Node, memory) -> bool:
    return bool(events(e, memory))


class _Coins:
    def __init__(self, program: A.Program) -> None:
        self.program = program
        self.memory = memory_rates(program)
        self.k = 0

    def strip(self, e: A.Expr, out: List[A.Stmt]) -> A.Expr:
        """``e`` with reliable operators; one coin appended to ``out`` per fault event, at the
        rate of its kind (``rate(OP)``, else ``rate``)."""
        for _node, kind in events(e, self.memory):
            rate = op_rate(self.program, kind)
            assert rate is not None  # coins_for_unreliable refused programs without one
            self.k += 1
            flip = A.Var(f"$u{self.k}")
            out.append(A.Sample((flip,), A.Call("bern", (rate,))))
            out.append(A.Assign((A.Var(FAILED),), A.Binary("||", A.Var(FAILED), flip)))
        new: A.Expr = _Reliable().walk(e)
        return new

    def block(self, b: A.Block) -> Optional[A.Block]:
        out: List[A.Stmt] = []
        for s in b.stmts:
            if not self.stmt(s, out):
                return None
        return A.Block(tuple(out), pos=b.pos)

    def stmt(self, s: A.Stmt, out: List[A.Stmt]) -> bool:
        if not _has(s, self.memory):
            out.append(s)
            return True
        if isinstance(s, A.Assign):
            value = self.strip(s.value, out)
            targets = []
            for t in s.targets:
                if isinstance(t, A.Index):
                    t = A.Index(t.base, self.strip(t.index, out), pos=t.pos)
                targets.append(t)
            out.append(A.Assign(tuple(targets), value, pos=s.pos))
            return True
        if isinstance(s, A.Block):
            b = self.block(s)
            if b is None:
                return False
            out.append(b)
            return True
        if isinstance(s, A.If):
            c = self.strip(s.cond, out)
            then = self.block(s.then)
            other = self.block(s.other) if s.other is not None else None
            if then is None or (s.other is not None and other is None):
                return False
            out.append(A.If(c, then, other, pos=s.pos))
            return True
        if isinstance(s, A.While):
            if _has(s.cond, self.memory) or any(_has(i, self.memory) for i in s.invariants):
                return False
            body = self.block(s.body)
            if body is None:
                return False
            out.append(A.While(s.cond, body, s.invariants, pos=s.pos))
            return True
        if isinstance(s, A.For):
            if _has(s.lo, self.memory) or _has(s.hi, self.memory):
                return False
            body = self.block(s.body)
            if body is None:
                return False
            out.append(dataclasses.replace(s, body=body))
            return True
        return False  # a sampling, an assume, … with an unreliable operator


def coins_for_unreliable(program: A.Program) -> Optional[A.Stmt]:
    """The body with every unreliable operator written as its coin (``failed := false`` first),
    the body itself when it has none, or None when an operation sits where a coin statement
    cannot model it (see the module docstring), when a failed operation's result is an arbitrary
    value (a comparison, a division, a read of unreliable memory: :data:`faults.ARBITRARY`), or
    when the claim is value-level (``reliability(x) >= E``: the CFA's per-value flags)."""
    memory = memory_rates(program)
    found = events(program.body, memory)
    if not found:
        return program.body
    if program.value_reliability is not None:
        return None
    if any(kind in ARBITRARY or op_rate(program, kind) is None for _n, kind in found):
        return None
    c = _Coins(program)
    b = c.block(program.body)
    if b is None:
        return None
    init = A.Assign((A.Var(FAILED),), A.BoolLit(False))
    return A.Block((init,) + tuple(b.stmts), pos=program.body.pos)

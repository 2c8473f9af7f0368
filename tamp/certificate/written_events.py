"""The checker's reading of a counterexample event that says ``written(a, k)``.

LANGUAGE.md: ``written(a, k)`` is true when the run wrote ``a[k]``, and a read of an element the
run did not write is false. The probability engine has no such predicate, so the checker hands it
an *instrumented* program and a rewritten event, built here (written for the checker, apart from
the privacy engine's own search):

* every write ``a[e] := …`` / ``a[e] ~ …`` of an output array ``a`` the event names is preceded by
  ``W[e] := true`` for a fresh Boolean array ``W`` (the type checker allows no whole-array
  assignment, so these are all the writes); ``W[k] := false`` at entry for every index ``k`` the
  event names; at exit an element ``a[k]`` the run did not write gets a default, so the engine can
  read it — after the program, which therefore runs unchanged;
* ``written(a, k)`` becomes ``W[k]``.

Sound because the event is accepted only in the form that makes the defaults irrelevant: a
conjunction whose every conjunct is ``written(a, k)`` for a literal ``k``, or reads elements
``a[k]`` (literal ``k``) only where ``written(a, k)`` is also a conjunct — and then the conjunction
is false on every run that did not write such an element, whatever the default, exactly as the
language says. Anything else is rejected (no verdict rests on a default value).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Set, Tuple

from lang import ast as A
from lang.typecheck import ProgramTypes

from .format import Rejected


def _conjuncts(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _literal_index(e: A.Expr) -> int:
    if isinstance(e, A.Num) and e.value.denominator == 1:
        return int(e.value)
    raise Rejected("counterexample.event: written(a, k) and a[k] need a literal index k")


def _shadow(name: str, taken: Set[str]) -> str:
    s = f"chk_written_{name}"
    while s in taken:
        s += "_"
    return s


def instrument(prog: A.Program, types: ProgramTypes, event: A.Expr) -> Tuple[A.Program, A.Expr]:
    """The program and event the probability engine reads (module doc); unchanged when the event
    does not say ``written``."""
    if not any(isinstance(n, A.Call) and n.func == "written" for n in A.walk(event)):
        return prog, event
    guards: Set[Tuple[str, int]] = set()
    for c in _conjuncts(event):
        if isinstance(c, A.Call) and c.func == "written":
            if len(c.args) != 2 or not isinstance(c.args[0], A.Var):
                raise Rejected("counterexample.event: written takes an array and an index")
            guards.add((c.args[0].name, _literal_index(c.args[1])))
    reads: Set[Tuple[str, int]] = set()
    for c in _conjuncts(event):
        for n in A.walk(c):
            if isinstance(n, A.Call) and n.func == "written" and c is not n:
                raise Rejected("counterexample.event: written(…) may only be a conjunct of the event")
            if isinstance(n, A.Index) and isinstance(n.base, A.Var):
                reads.add((n.base.name, _literal_index(n.index)))
    if not reads <= guards:
        a, k = sorted(reads - guards)[0]
        raise Rejected(f"counterexample.event reads {a}[{k}] without the conjunct written({a}, {k})")
    arrays = sorted({a for a, _ in guards})
    for a in arrays:
        t = types.locals.get(a)
        if t is None or t.name != "array":
            raise Rejected(f"counterexample.event: written({a}, …) needs an array the program writes")
    taken = set(types.locals) | {p.name for p in prog.params}
    shadow: Dict[str, str] = {}
    for a in arrays:
        shadow[a] = _shadow(a, taken)
        taken.add(shadow[a])

    def block(b: A.Block) -> A.Block:
        return dataclasses.replace(b, stmts=tuple(mark(y) for y in b.stmts))

    def mark(s: A.Stmt) -> A.Stmt:
        if isinstance(s, A.Block):
            return block(s)
        if isinstance(s, A.If):
            other = block(s.other) if s.other is not None else None
            return dataclasses.replace(s, then=block(s.then), other=other)
        if isinstance(s, (A.While, A.For)):
            return dataclasses.replace(s, body=block(s.body))
        if isinstance(s, (A.Assign, A.Sample)):
            pre = [
                A.Assign((A.Index(A.Var(shadow[t.base.name]), t.index),), A.BoolLit(True))
                for t in s.targets
                if isinstance(t, A.Index) and isinstance(t.base, A.Var) and t.base.name in shadow
            ]
            if pre:
                return A.Block((*pre, s))
        return s

    init: List[A.Stmt] = []
    fill: List[A.Stmt] = []
    for a, k in sorted(guards):
        elem = types.locals[a].elem[0]
        default: A.Expr = A.BoolLit(False) if elem == A.BOOL else A.num(0, elem == A.INT)
        idx = A.num(k, True)
        init.append(A.Assign((A.Index(A.Var(shadow[a]), idx),), A.BoolLit(False)))
        missing = A.Unary("!", A.Index(A.Var(shadow[a]), idx))
        fill.append(A.If(missing, A.Block((A.Assign((A.Index(A.Var(a), idx),), default),))))
    body = block(prog.body)
    body = dataclasses.replace(body, stmts=(*init, *body.stmts, *fill))

    def rewrite(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Binary) and e.op == "&&":
            return dataclasses.replace(e, left=rewrite(e.left), right=rewrite(e.right))
        if isinstance(e, A.Call) and e.func == "written":
            assert isinstance(e.args[0], A.Var)
            return A.Index(A.Var(shadow[e.args[0].name]), e.args[1])
        return e

    return dataclasses.replace(prog, body=body), rewrite(event)

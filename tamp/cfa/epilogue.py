"""A deterministic epilogue folded into the postcondition: ``P; S`` with claim ``φ`` becomes ``P``
with claim ``wp(S, φ)``.

A program whose body ends with top-level statements ``S`` that only assign variables and branch
(``x := e``, ``if (g) { … } else { … }``, ``skip``: no draw, no loop, no ``assume``, no array, no
division) often reads a count through a threshold test: ``if (seen >= 2) { over := true; }`` with
the claim ``!over``. The methods that bound the tail of a sum (Markov, the pairs rule, Chernoff)
read the claim as a comparison of the sum; folding ``S`` into the claim gives them one:
``(seen >= 2 && !true) || (!(seen >= 2) && !over)``, where ``over`` is the prefix's value.

Why this is sound: ``S`` is deterministic and always ends (assignments and branches over total
expressions: no division, no array read), so after it ``φ`` holds exactly when ``wp(S, φ)`` held
before it (the weakest precondition of assignments is substitution, of an ``if`` the case split).
A run of ``P; S`` therefore violates ``φ`` exactly when the run of ``P`` it extends violates
``wp(S, φ)``: the two programs have the same failure probability for every input, and a bound
proved for one is a bound for the other. The folded program keeps the name, parameters,
``requires`` and bound; every variable the new claim reads must be a parameter or written by
``P`` (else nothing is folded), so no claim reads a variable the program never set.

Used by the per-iteration composition on the iteration program
(:mod:`tamp.prover.nesting`) and re-derived by the checker (:mod:`tamp.certificate.nest_checker`)
from the number of statements folded, which is all the certificate says.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from lang import ast as A
from lang.walk import free_vars, written_vars

from .nesting import _wp

__all__ = ["fold_epilogue", "epilogue_length", "deterministic"]


def _total(e: A.Expr) -> bool:
    """``e`` has no array read and no division or remainder but by a non-zero literal (every value
    it can take is defined: ``m / 2`` is, ``m / k`` need not be)."""
    for n in A.walk(e):
        if isinstance(n, A.Index):
            return False
        if isinstance(n, A.Binary) and n.op in ("/", "%") and not (isinstance(n.right, A.Num) and n.right.value != 0):
            return False
    return True


def _deterministic(s: A.Stmt) -> bool:
    """``s`` only assigns scalar variables total expressions and branches on total tests."""
    if isinstance(s, A.Skip):
        return True
    if isinstance(s, A.Block):
        return all(_deterministic(t) for t in s.stmts)
    if isinstance(s, A.Assign):
        return len(s.targets) == 1 and isinstance(s.targets[0], A.Var) and _total(s.value)
    if isinstance(s, A.If):
        return _total(s.cond) and _deterministic(s.then) and (s.other is None or _deterministic(s.other))
    return False


#: the public name: other rooms drop such statements (:mod:`tamp.cfa.shared_rows`)
deterministic = _deterministic


def epilogue_length(prog: A.Program) -> int:
    """How many of the body's last top-level statements are deterministic (0 when none are, or
    when all are: a program without a prefix has nothing to fold into)."""
    stmts = prog.body.stmts
    k = 0
    while k < len(stmts) and _deterministic(stmts[len(stmts) - 1 - k]):
        k += 1
    return 0 if k == len(stmts) else k


def fold_epilogue(prog: A.Program, k: int) -> Optional[A.Program]:
    """``prog`` with its last ``k >= 1`` top-level statements folded into every ``ensures``
    clause (their weakest precondition), or None when they are not all deterministic, the
    program has another specification than ``ensures``/``fails`` (reliability, memory, privacy:
    their compilation reads the body), or the folded claim reads a variable the prefix does not
    write."""
    stmts = prog.body.stmts
    if k < 1 or k >= len(stmts) or not prog.ensures:
        return None
    if (
        prog.reliability is not None
        or prog.value_reliability is not None
        or prog.memory
        or prog.op_rates
        or prog.private is not None
        or prog.rate is not None
        or prog.neighbours is not None
    ):
        return None
    prefix, suffix = stmts[: len(stmts) - k], stmts[len(stmts) - k :]
    if not all(_deterministic(s) for s in suffix):
        return None
    posts = []
    for e in prog.ensures:
        got = _wp(tuple(suffix), e)
        if got is None:
            return None
        posts.append(got)
    known = {p.name for p in prog.params}
    for s in prefix:
        known |= written_vars(s)
    if any(not set(free_vars(e)) <= known for e in posts):
        return None
    body = A.Block(tuple(prefix), pos=prog.body.pos)
    return dataclasses.replace(prog, body=body, ensures=tuple(posts))

"""Statements that end surely: every run of them stops, whatever the draws.

A statement *ends surely* when each loop inside it is

- a ``for`` loop (its range is evaluated once and its counter is not written by its body), or
- a *counted* ``while``: its condition is a conjunction with a conjunct ``x > e``, ``x >= e``
  (``x < e``, ``x <= e``) where ``x`` is a variable the body writes exactly once, by the
  top-level statement ``x := x - k`` (``x := x + k``) with ``k`` a positive literal, and ``e``
  reads nothing the body writes,

and the loop's body ends surely too (the language has no ``break`` nor ``return``).

Why this is sound. A ``for`` loop runs its body a fixed number of times. In a counted ``while``,
every iteration that completes runs the top-level step once (the body ends surely, by
induction, and a top-level statement of a block runs in every pass), so after ``m`` iterations
``x`` has moved by ``m·k`` towards ``e`` while ``e`` keeps its value; the conjunct, hence the
condition, is false after at most ``(x0 - e)/k + 1`` iterations. ``assume`` does not run
forever (it conditions the run), so it does not matter here.

Used by the flag-loop composition (:mod:`tamp.cfa.nesting`): a product over iterations needs
every iteration, also one run after the flag moved, to end.
"""

from __future__ import annotations

from fractions import Fraction

from lang import ast as A
from lang.walk import free_vars, operands, written_vars

__all__ = ["ends_surely", "counted_while"]


def _positive_literal(e: A.Expr) -> bool:
    return isinstance(e, A.Num) and Fraction(e.value) > 0


def _step(st: A.Stmt, x: str, op: str) -> bool:
    """``st`` is ``x := x op k`` with ``k`` a positive literal."""
    return (
        isinstance(st, A.Assign)
        and st.targets == (A.Var(x),)
        and isinstance(st.value, A.Binary)
        and st.value.op == op
        and st.value.left == A.Var(x)
        and _positive_literal(st.value.right)
    )


def counted_while(loop: A.While) -> bool:
    """``loop``'s condition has a conjunct that a top-level step of a positive literal moves
    towards a bound the body does not write (see the module docstring)."""
    writes = written_vars(loop.body)
    for c in operands(loop.cond, "&&"):
        if not isinstance(c, A.Binary) or c.op not in ("<", "<=", ">", ">="):
            continue
        for var, bound, op in (
            (c.left, c.right, c.op),
            (c.right, c.left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[c.op]),
        ):
            if not isinstance(var, A.Var) or set(free_vars(bound)) & set(writes):
                continue
            step = "-" if op in (">", ">=") else "+"
            x = var.name
            writers = [
                n
                for n in A.walk(loop.body)
                if isinstance(n, (A.Assign, A.Sample)) and x in {A.target_name(t) for t in n.targets}
            ]
            if len(writers) == 1 and writers[0] in loop.body.stmts and _step(writers[0], x, step):
                return True
    return False


def ends_surely(s: A.Node) -> bool:
    """Every loop in ``s`` is a ``for`` or a counted ``while`` (:func:`counted_while`)."""
    for n in A.walk(s):
        if isinstance(n, A.While) and not counted_while(n):
            return False
        if isinstance(n, A.For) and n.var in written_vars(n.body):
            return False
    return True

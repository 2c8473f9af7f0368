"""The proof's bookkeeping in one line: how the failure probability adds up to the bound.

For a proved loop program, κ (the failure probability spent so far) grows by a fixed cost per
iteration; at the exit it is that cost times the number of iterations::

    n iterations × p / n = p  <=  p

(one term per loop, joined by ``+``; the bound after ``<=``). For a loop-free program the
failure spent at the exits is shown instead: ``κ at the exits: 1 / 4  <=  1 / 4``. Formulas are
simplified for reading (:mod:`tamp.report.pretty`).
"""

from __future__ import annotations

from typing import List, Optional

from lang import ast as A
from lang.walk import substitute as subst
from tamp.prover.base.exprs import iterations_done
from tamp.prover.trace.result import ProofResult

from .pretty import simplify_expr, simplify_text


def derivation_line(r) -> Optional[str]:
    """The one-line derivation of a proved failure bound, or None (not proved, or nothing to say)."""
    if not isinstance(r, ProofResult) or r.verdict != "proved":
        return None
    bound = simplify_text(r.bound) if r.bound is not None else None
    tail = f"  <=  {bound}" if bound else ""
    own = getattr(r, "derivation_text", None)  # an engine with its own derivation (expected failure)
    if callable(own):
        return own(simplify_text)
    if r.loop_terms:
        return " + ".join(_loop_term(t) for t in r.loop_terms) + tail
    costs: List[str] = []
    for aut in r.automata:
        for nid in sorted(aut.exits):
            k = simplify_expr(aut.nodes[nid].kappa)
            if k not in costs:
                costs.append(k)
    if not costs:
        return None
    shown = costs if len(costs) <= 3 else costs[:3] + ["…"]
    return "κ at the exits: " + ", ".join(shown) + tail


def _loop_term(t) -> str:
    iterations = iterations_done(t.bound, t.init, t.step)
    if getattr(t, "guarded", False) and t.total is not None:
        # the cost of an iteration depends on a guard on the counter (read at the loop's head)
        per = subst(t.per, {t.counter: A.Binary("+" if t.step > 0 else "-", A.Var(t.counter), A.num(1))})
        total = subst(t.total, {t.counter: t.bound})
        n = simplify_expr(iterations)
        word = "iteration" if n == "1" else "iterations"
        return f"{n} {word}, each {_guarded(per)} = {simplify_expr(total)}"
    total = A.Binary("*", t.per, iterations)
    n = simplify_expr(iterations)
    word = "iteration" if n == "1" else "iterations"
    return f"{n} {word} × {simplify_expr(t.per)} = {simplify_expr(total)}"


def _guarded(per: A.Expr) -> str:
    """``cost if cond`` for each guarded term of a cost (``cond ? cost : 0``), else the cost."""
    if isinstance(per, A.Cond) and isinstance(per.other, A.Num) and per.other.value == 0:
        return f"{simplify_expr(per.then)} if {simplify_expr(per.cond)}"
    if isinstance(per, A.Cond) and isinstance(per.then, A.Num) and per.then.value == 0:
        return f"{simplify_expr(per.other)} unless {simplify_expr(per.cond)}"
    return simplify_expr(per)

"""The proof's bookkeeping in one line: how the failure probability adds up to the bound.

For a proved loop program the line is read off κ at the exit (the failure probability the proof
spent, the very expression its BUDGET rule compared with the bound), summand by summand: what is
spent outside the loops as it is, each loop's term as its cost per iteration times the number of
iterations, and a cost spent at most once (``f ? A : 0``) as ``A if f``::

    p / 2 + n iterations × p / (2 * n) = p  <=  p

The total puts every loop counter at its final value and every flag at its costlier arm, so it is
at least κ at any exit the loop reaches (costs are probabilities, never negative). ``<= bound`` is
printed only when sympy shows the total is at most the bound; otherwise the bound is shown as
``(bound B)`` — the proof compared κ with it under the loop's invariants, which the line does not
show. When the exits' κ differ, or a loop term cannot be found in κ, each exit's κ is listed
(``κ at the exits: …``), as for a loop-free program: ``κ at the exits: 1 / 4  <=  1 / 4``.
Formulas are simplified for reading (:mod:`tamp.report.pretty`).
"""

from __future__ import annotations

from typing import List, Optional

from lang import ast as A
from lang.parser import parse_expr
from lang.walk import free_vars
from lang.walk import substitute as subst
from tamp.prover.base.exprs import conjuncts, iterations_done
from tamp.prover.base.simplify import to_sympy
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
        line = _exit_sum(r, bound)
        if line is not None:
            return line
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


def _exit_sum(r, bound: Optional[str]) -> Optional[str]:
    """``outside + n iterations × c + … = total  <=  bound`` from κ at the exit, or None."""
    kappas = []
    for aut in r.automata:
        for nid in sorted(aut.exits):
            if aut.nodes[nid].kappa not in kappas:
                kappas.append(aut.nodes[nid].kappa)
    if len(kappas) != 1:
        return None
    terms = list(r.loop_terms)
    # a loop term as it stands in κ: over its counter, or (after a loop whose condition fixes
    # the counter's final value) over that value
    shapes = {id(t): _shape(t) for t in terms}
    exits = {id(t): subst(shapes[id(t)], {t.counter: t.bound}) for t in terms}
    summands = _summands(kappas[0], list(shapes.values()) + list(exits.values()))
    finals = {t.counter: t.bound for t in terms}
    shown: List[str] = []
    worst: List[A.Expr] = []
    found = set()
    for s in summands:
        t = next((t for t in terms if s in (shapes[id(t)], exits[id(t)])), None)
        if t is not None:
            found.add(id(t))
            shown.append(_loop_term(t, with_total=False))
            worst.append(subst(t.total, {t.counter: t.bound}) if t.total is not None else _loop_total(t))
            continue
        if set(free_vars(s)) & set(finals):  # a term over a counter that is not a loop's own: say nothing
            return None
        shown.append(_guarded(s) if not isinstance(s, A.Cond) else f"({_guarded(s)})")
        worst.append(_costlier_arm(s))
    if len(found) != len(terms):
        return None
    total: A.Expr = worst[0]
    for w in worst[1:]:
        total = A.Binary("+", total, w)
    total_text = simplify_expr(total)
    if bound is None:
        return " + ".join(shown) + " = " + total_text
    ok = total_text == bound or _at_most(total, r.bound, _positive(getattr(r, "cfa", None)))
    return " + ".join(shown) + " = " + total_text + (f"  <=  {bound}" if ok else f"  (bound {bound})")


def _shape(t) -> A.Expr:
    """A loop term as it stands in κ (over the counter): ``per * (i - init)``, or its sum."""
    if t.total is not None:
        return t.total
    return A.Binary("*", t.per, iterations_done(A.Var(t.counter), t.init, t.step))


def _summands(e: A.Expr, shapes: List[A.Expr]) -> List[A.Expr]:
    """The top-level summands of ``e``, a loop term's own shape kept whole."""
    if e in shapes or not (isinstance(e, A.Binary) and e.op == "+"):
        return [e]
    return _summands(e.left, shapes) + _summands(e.right, shapes)


def _loop_total(t) -> A.Expr:
    return A.Binary("*", t.per, iterations_done(t.bound, t.init, t.step))


def _costlier_arm(e: A.Expr) -> A.Expr:
    """``e`` with every ``c ? a : b`` replaced by ``max(a, b)`` (``a`` when ``b`` is 0: costs are
    never negative), so it is at least ``e`` whatever the flags."""
    if isinstance(e, A.Cond):
        a, b = _costlier_arm(e.then), _costlier_arm(e.other)
        if isinstance(b, A.Num) and b.value == 0:
            return a
        if isinstance(a, A.Num) and a.value == 0:
            return b
        return A.Call("max", (a, b))
    if isinstance(e, A.Binary) and e.op == "+":
        return A.Binary("+", _costlier_arm(e.left), _costlier_arm(e.right))
    return e


def _positive(cfa) -> List[str]:
    """The inputs ``requires`` makes positive by a conjunct ``x > 0``, ``0 < x`` or ``x >= c``
    (``x > c``) with a literal ``c >= 1`` (``c >= 0``)."""
    out: List[str] = []
    for r in getattr(cfa, "requires", None) or []:
        for c in conjuncts(r):
            if not isinstance(c, A.Binary) or c.op not in ("<", "<=", ">", ">="):
                continue
            left, op, right = (
                (c.left, c.op, c.right) if c.op in (">", ">=") else (c.right, {"<": ">", "<=": ">="}[c.op], c.left)
            )
            if isinstance(left, A.Var) and isinstance(right, A.Num):
                if right.value > 0 or (op == ">" and right.value == 0):
                    out.append(left.name)
    return out


def _at_most(total: A.Expr, bound_text: Optional[str], positive: List[str]) -> bool:
    """sympy shows ``total <= bound`` for every value of the variables, those ``requires`` makes
    positive taken positive (when sympy cannot tell, False)."""
    if not bound_text:
        return False
    try:
        bound = parse_expr(bound_text)
        x, _ = to_sympy(A.Binary("-", bound, total), positive)
        return bool(x.simplify().is_nonnegative)
    except Exception:  # noqa: BLE001 - display only: when in doubt the bound is shown apart
        return False


def _loop_term(t, with_total: bool = True) -> str:
    iterations = iterations_done(t.bound, t.init, t.step)
    if getattr(t, "guarded", False) and t.total is not None:
        # the cost of an iteration depends on a guard on the counter (read at the loop's head)
        per = subst(t.per, {t.counter: A.Binary("+" if t.step > 0 else "-", A.Var(t.counter), A.num(1))})
        total = subst(t.total, {t.counter: t.bound})
        n = simplify_expr(iterations)
        word = "iteration" if n == "1" else "iterations"
        text = f"{n} {word}, each {_guarded(per)}"
        return f"{text} = {simplify_expr(total)}" if with_total else f"({text})"
    total = A.Binary("*", t.per, iterations)
    n = simplify_expr(iterations)
    word = "iteration" if n == "1" else "iterations"
    text = f"{n} {word} × {simplify_expr(t.per)}"
    return f"{text} = {simplify_expr(total)}" if with_total else text


def _guarded(per: A.Expr) -> str:
    """``cost if cond`` for each guarded term of a cost (``cond ? cost : 0``), else the cost."""
    if isinstance(per, A.Cond) and isinstance(per.other, A.Num) and per.other.value == 0:
        return f"{simplify_expr(per.then)} if {simplify_expr(per.cond)}"
    if isinstance(per, A.Cond) and isinstance(per.then, A.Num) and per.then.value == 0:
        return f"{simplify_expr(per.other)} unless {simplify_expr(per.cond)}"
    return simplify_expr(per)

"""Closed forms of the arrays a counted loop fills or counts into, as candidate loop-head facts.

The array counterpart of :mod:`.recurrence`'s scalar closed forms. For a loop with counter ``i``
(``lo`` its first value; iterations done ``lo..i``, counting down ``i+1..lo``), whose body's
paths (:func:`.recurrence.body_paths`) write the array ``a``:

* a *fill*: ``a[i] := v`` on every path, ``v`` over values the loop does not write (and ``i``):
  ``forall k in lo..i: a[k] == v[k/i]`` — the entries set so far;
* a *tally*: ``a[e] := a[e] + d`` on some paths and no write to ``a`` on the others, ``e``, ``d``
  (and the conditions of the paths, when the increments differ) over values the loop does not
  write and the counter (``cnt[x[i]] := cnt[x[i]] + 1``, a histogram built in one pass), after a
  fill of ``a`` by another counted loop over the range ``R`` with value ``v0``:
  ``forall k in R: a[k] == v0 + sum(j in lo..i: e[j/i] == k ? d[j/i] : 0)``. The sum reads the
  bound ``k``; its unfolding lemmas are stated for every ``k`` (:mod:`axioms.lemmas`).

Candidates only: Houdini keeps one when the solver proves it inductive, and the checker
re-verifies it with everything else; nothing here needs to be right for soundness.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import loop_body
from tamp.prover.base.exprs import fold, plus, subst
from tamp.prover.counting.recurrence import K, Path, _sum_over_iterations, body_paths, match_post_sums, unknown, written


def array_candidates(cfa, loops) -> List[A.Expr]:
    """Fill and tally facts for every counted loop's head (see the module docstring)."""
    fills: Dict[str, List[Tuple[A.Expr, A.Expr, bool, A.Expr]]] = {}  # array -> (lo, hi, inclusive, value)
    tallies: List[Tuple[Any, str, A.Expr]] = []  # (counter, array, summand over k)
    out: List[A.Expr] = []
    for h, lp in loops.items():
        c = lp["counter"]
        if c is None or abs(c.step) != 1:
            continue
        try:
            paths = body_paths(cfa, h, loops)
        except (RecursionError, ValueError, TypeError):
            continue
        if not paths:
            continue
        mod = written(cfa, loop_body(cfa, h))

        def allowed(e: A.Expr, mod=mod, c=c) -> bool:
            return not unknown(e) and set(free_vars(e)) <= (set(cfa.types) - mod) | {c.name}

        for a in sorted(x for x in mod if x in cfa.types and cfa.types[x].name == "array"):
            v = _fill_value(paths, a, c.name, allowed)
            if v is not None:
                i = A.Var(c.name)
                k = A.Var(K)
                lo, hi, incl = (c.init, i, False) if c.step > 0 else (A.Binary("+", i, A.num(1)), c.init, True)
                out.append(
                    A.Quant("forall", K, lo, hi, incl, A.Binary("==", A.Index(A.Var(a), k), subst(v, {c.name: k})))
                )
                if c.step > 0:
                    fills.setdefault(a, []).append((c.init, c.final(), False, v))
                else:
                    fills.setdefault(a, []).append((plus(c.final(), A.num(1)), c.init, True, v))
                continue
            summand = _tally_summand(paths, a, allowed)
            if summand is not None:
                tallies.append((c, a, summand))
    for c, a, summand in tallies:
        total = _sum_over_iterations(summand, c, c.name, cfa.types)
        if total is None:
            continue
        mine: List[A.Expr] = []
        for lo, hi, incl, v0 in fills.get(a, []):
            if c.name in set(free_vars(v0)):
                continue  # a fill that reads its own counter is not a constant start for the tally
            body = A.Binary("==", A.Index(A.Var(a), A.Var(K)), plus(v0, total))
            mine.append(A.Quant("forall", K, lo, hi, incl, body))
        out.extend(match_post_sums(cfa, mine, c))
    return list(dict.fromkeys(out))


def _fill_value(paths: List[Path], a: str, cname: str, allowed) -> Optional[A.Expr]:
    """``v`` when every path writes ``a[i] := v`` once (the same ``v``), else None."""
    vals = set()
    for p in paths:
        ws = p.writes.get(a, [])
        if len(ws) != 1 or ws[0][0] != A.Var(cname) or not allowed(ws[0][1]):
            return None
        vals.add(ws[0][1])
    return next(iter(vals)) if len(vals) == 1 else None


def _tally_summand(paths: List[Path], a: str, allowed) -> Optional[A.Expr]:
    """``e == k ? d : 0`` (k the bound variable :data:`.recurrence.K`) when the paths that write
    ``a`` add ``d`` to ``a[e]`` once, the same ``(e, d)`` on each, and the others leave it; with
    different increments on different paths, their conditions choose (when over allowed values).
    None otherwise."""
    k = A.Var(K)
    terms: List[Tuple[Path, A.Expr]] = []
    for p in paths:
        ws = p.writes.get(a, [])
        if not ws:
            terms.append((p, A.num(0)))
            continue
        if len(ws) != 1:
            return None
        e, v = ws[0]
        d = _added(v, A.Index(A.Var(a), e))
        if d is None or not allowed(e) or not allowed(d):
            return None
        terms.append((p, A.Cond(A.Binary("==", e, k), d, A.num(0))))
    distinct: List[A.Expr] = []
    for _p, t in terms:
        if t not in distinct:
            distinct.append(t)
    if distinct == [A.num(0)]:
        return None
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) != 2 or not all(allowed(cd) for p, _t in terms for cd in p.conds):
        return None
    # two increments: the paths of the first chosen by their (disjoint) conditions
    first = [p for p, t in terms if t == distinct[0]]
    cond = _or([_and(p.conds) for p in first])
    if isinstance(cond, A.Unary) and cond.op == "!":  # as the source's `if`: `c ? … : 0`
        return A.Cond(cond.operand, distinct[1], distinct[0])
    return A.Cond(cond, distinct[0], distinct[1])


def _added(v: A.Expr, old: A.Expr) -> Optional[A.Expr]:
    """``d`` when ``v`` is ``old + d``, ``d + old`` or ``old - d`` (``-d``), ``d`` free of ``old``'s
    array; else None."""
    if isinstance(v, A.Binary) and v.op == "+":
        if v.left == old:
            return v.right
        if v.right == old:
            return v.left
    if isinstance(v, A.Binary) and v.op == "-" and v.left == old:
        return A.Unary("-", v.right)
    return None


def _and(cs: List[A.Expr]) -> A.Expr:
    return fold("&&", cs) if cs else A.BoolLit(True)


def _or(cs: List[A.Expr]) -> A.Expr:
    return fold("||", cs)

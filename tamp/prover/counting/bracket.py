"""Candidate facts for search loops: bounds that close in on each other (binary search).

A loop without a unit counter whose integer variables move towards each other (``lo := mid +
1`` or ``hi := mid`` with ``mid := (lo + hi) div 2``, ended by a ranking function,
:mod:`.termination`) keeps two kinds of facts at its head:

* the *order* of its integer variables and of their values on entry: ``lo <= hi``, ``0 <= lo``,
  ``hi <= n`` — for every pair of the loop's written integers ``u <= v``, and every written
  integer against every entry value of one, ``e <= v`` and ``v <= e``;
* the *bracket*: each ``forall j in A..B: P`` of the postcondition (wherever it occurs in it)
  restricted to the part of the range the search has excluded — below one variable, ``forall j
  in A..v: P``, and from one, ``forall j in v..B: P`` (also ``v+1..B``, for a ``hi`` that is the
  last candidate left, as in ``while (lo <= hi)``). For binary search over a sorted array the
  claim ``!found ==> forall j in 0..n: x[j] != key`` gives ``forall j in 0..lo: x[j] != key`` and
  ``forall j in hi..n: x[j] != key``, inductive with the ``sorted-mono`` lemma
  (:mod:`axioms.lemmas`): the excluded part lies entirely below (above) the probe.

Candidates only: Houdini keeps what the solver proves inductive, and the checker re-verifies it.
"""

from __future__ import annotations

from typing import List, Set

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import loop_body
from tamp.prover.base.exprs import plus
from tamp.prover.counting.recurrence import entry_value, written

MAX_INTS = 6  # written integers per loop considered (pairs grow quadratically)


def bracket_candidates(cfa, loops) -> List[A.Expr]:
    """Order and bracket facts for the head of every loop without a counter (see above)."""
    quants = [q for e in cfa.ensures for q in A.walk(e) if isinstance(q, A.Quant) and q.kind == "forall"]
    out: List[A.Expr] = []
    for h, lp in loops.items():
        if lp["counter"] is not None:
            continue
        mod = written(cfa, loop_body(cfa, h))
        ints = sorted(v for v in mod if cfa.types.get(v) == A.INT and not v.startswith("$"))[:MAX_INTS]
        if not ints:
            continue
        entries: List[A.Expr] = []
        for v in ints:
            e = entry_value(cfa, h, lp["body"], v)
            if e is not None and e not in entries and set(free_vars(e)).isdisjoint(mod):
                entries.append(e)
        for u in ints:
            for v in ints:
                if u != v:
                    out.append(A.Binary("<=", A.Var(u), A.Var(v)))
            for e in entries:
                out.append(A.Binary("<=", e, A.Var(u)))
                out.append(A.Binary("<=", A.Var(u), e))
        out.extend(_brackets(quants, ints, mod))
    return list(dict.fromkeys(out))


def _brackets(quants: List[A.Quant], ints: List[str], mod: Set[str]) -> List[A.Expr]:
    """Each quantifier's range cut at each written integer (the excluded part below or above)."""
    out: List[A.Expr] = []
    for q in quants:
        if set(free_vars(q)) & mod or any(isinstance(n, A.Sum) for n in A.walk(q.body)):
            continue  # a claim about what the loop writes, or a sum: not a search's bracket
        for v in ints:
            x = A.Var(v)
            out.append(A.Quant("forall", q.var, q.lo, x, False, q.body))
            out.append(A.Quant("forall", q.var, x, q.hi, q.inclusive, q.body))
            out.append(A.Quant("forall", q.var, plus(x, A.num(1)), q.hi, q.inclusive, q.body))
    return out

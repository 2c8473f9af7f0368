"""Which axiom combinations the loop prover labels first: fewer, more informative attempts.

The loop prover (:mod:`.loops`) labels and checks at most a handful of axiom combinations, so
their order decides what it can prove. Two things waste those attempts:

* *the same axiom twice*: the proposals derived from the specification often include one
  parameter written two ways (``p`` from ``β/1`` and ``2 * (p / 2)`` from ``log(2/p)``); they
  give identical axioms. :func:`distinct_proposals` keeps the first of each family whose cost
  agrees at a few random points with an earlier one's (costs determine a tail family's
  parameter, and the bad event with it).
* *the whole budget on one sampling*: a combination that spends exactly the budget (zero
  slack) used to come first even when it gave a sampling the claim depends on only its free
  support facts — e.g. sparse vector with all of ``p`` spent on the threshold noise and nothing
  said about the query noise. Such a combination can rarely prove a claim about that
  sampling's value. :func:`idle_samplings` counts those samplings; combinations are ordered by
  (slack, idle samplings, enumeration order), so the union-bound split that says something about
  every relevant sampling is tried first.

Only an order: every combination is still labelled and checked in full by :mod:`.check`.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Dict, List, Sequence

from lang import ast as A
from lang.evaluate import EvalError, evaluate
from lang.walk import free_vars
from tamp.prover.base.exprs import assigned_names


def _values(e: A.Expr, points: Sequence[Dict[str, Fraction]]) -> tuple:
    out = []
    for env in points:
        try:
            v = evaluate(e, env)
        except (EvalError, TypeError, KeyError, ZeroDivisionError, ValueError, OverflowError):
            return ("?", e)  # not comparable numerically: only identical expressions coincide
        out.append(v)
    return tuple(out)


def _points(exprs: Sequence[A.Expr], count: int = 5) -> List[Dict[str, Fraction]]:
    names = sorted({x for e in exprs for x in set(free_vars(e))})
    rng = random.Random(11)
    return [{x: Fraction(rng.randint(1, 97), rng.randint(1, 13)) for x in names} for _ in range(count)]


def distinct_proposals(cands: List[list]) -> List[list]:
    """Each sampling's proposals without repeats: a proposal of the same family whose cost takes
    the same values as an earlier one's at random points (and has the same support joined in) is
    the same axiom written differently, and is dropped."""
    out = []
    for cs in cands:
        pts = _points([c.cost for c in cs])
        keep, seen = [], set()
        for c in cs:
            key = (c.family, _values(c.cost, pts))
            if key in seen:
                continue
            seen.add(key)
            keep.append(c)
        out.append(keep)
    return out


def _free(ax) -> bool:
    return isinstance(ax.cost, A.Num) and ax.cost.value == 0


def idle_samplings(cfa, axioms: dict, costly: Dict[object, bool], relevant: set) -> int:
    """How many samplings of ``axioms`` (CFA edge → axiom) write a variable the claim depends on
    (``relevant``, :func:`tamp.prover.trace.synthesis.relevant_names`) yet get a cost-0 axiom although a
    costly proposal was available (``costly[edge]``)."""
    n = 0
    for edge, ax in axioms.items():
        if not _free(ax) or not costly.get(edge):
            continue
        if assigned_names(cfa.graph.edges[edge]["stmt"]) & relevant:
            n += 1
    return n

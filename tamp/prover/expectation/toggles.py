"""Invariant expectations for a postcondition whose truth changes only on rare events.

A bit passes k stages and stage j flips it with chance q[j]; the claim ``v == v0`` fails with
chance at most ``Σ q[j]``. The failure event is not monotone — a second flip restores the bit —
so no flag "a bad event happened" stays raised, and the union bound's automata, which add a
failure mass per bad event and keep it, find no invariant relating v to the iterations. The
argument is a pre-expectation invariant (McIver & Morgan, *Abstraction, Refinement and Proof
for Probabilistic Systems*, 2005, ch. 2 and 7): at the loop head

    I = [¬post] + (the part of the bound the iterations left may still spend)

— where the postcondition is already violated I is at least 1 (a probability bound needs no
more), and where it holds, one iteration can violate it only on its rare event (chance q[i]),
which the budget of that iteration pays for. The proposals (:func:`budget_cores`), for a loop
whose continuation ``F = [¬post]`` reads a variable the loop changes other than the counter its
guard reads, and for each pair (counter c of the guard, integer input p of the bound β) of
:func:`tamp.prover.expectation.prove.counters`:

* c counts up:   ``F + (β - β[p := c + d])``  — the bound less its share of the iterations
  done, ``(n - i)·r`` for ``β = n·r``; when β sums over a range ``lo..p`` it is written as the
  sum of the terms left, ``sum(j in c + d..p: q[j])`` (:func:`suffix_sums`; the same number,
  but one the solver's ``sum-first`` lemma splits into this iteration's term and the next
  head's budget, without comparing two prefixes);
* c counts down: ``F + β[p := c + d]``         — the bound for the c iterations left;

with d ∈ {0, -1, 1} (a counter offset from the bound's index: ``β - β[k := i - 1]`` for a loop
``for i in 1..=k`` under ``fails k * r``). Each core is guarded by the counters' progress (``c >=
c0 ? … : 1``, :func:`tamp.prover.expectation.prove.counter_facts`) where there is one: without
it the solver finds states with a negative counter, where ``requires`` bounds no q[c].

Why this is sound: these are only proposals, like every core of
:mod:`tamp.prover.expectation.prove`. A core is accepted only when INDUCT ``g ⇒ wpe(B, g ?
cap(core) : F) <= cap(core)`` is valid in every state (the solver decides it; ``unknown`` is
failure) and TERM holds; then by Park induction the loop's failure (with what follows it) is at
most ``g ? cap(core) : F`` (the engine's theorem), and BUDGET compares the program's
pre-expectation with the claim. Here the continuation F is the exact expectation at exit, so
the core adds nothing trusted: a wrong budget (an off-by-one d, a bound that does not pay for
each flip) only fails INDUCT or BUDGET. The certificate carries the core and ``tamp
check-proof`` rebuilds every obligation from the source and the core
(:mod:`tamp.certificate.exp_rules`), so there is no new certificate section.
"""

from __future__ import annotations

import dataclasses
from typing import AbstractSet, Callable, List, Optional, Sequence, Tuple

from lang import ast as A
from lang.walk import free_vars, rebuild, substitute

ONE = A.num(1)


def moving_reads(f: A.Expr, g: A.Expr, changed: AbstractSet[str], adds: AbstractSet[str] = frozenset()) -> List[str]:
    """The variables the continuation ``f`` reads that the loop changes and its guard ``g``
    does not read (the state the postcondition is about, not the loop's progress) and whose
    truth in F can go both ways: not one of ``adds`` (variables the body only adds to, whose
    thresholds are monotone events that other cores bound), unless F reads it in an equality or
    under ``mod`` (a count's parity toggles)."""
    toggled = set()
    for n in A.walk(f):
        if (isinstance(n, A.Binary) and n.op in ("==", "!=", "mod")) or (isinstance(n, A.Call) and n.func == "mod"):
            toggled |= set(free_vars(n))
    moving = (set(free_vars(f)) & set(changed)) - set(free_vars(g))
    return sorted(x for x in moving if x not in adds or x in toggled)


def _fresh_bound(beta: A.Expr, avoid: AbstractSet[str]) -> A.Expr:
    """``beta`` with every sum or quantifier variable that is also a name of ``avoid`` (a loop
    counter put in place of an input) renamed apart: ``sum(j in 0..k: q[j])[k := j]`` must read
    ``sum(j$ in 0..j: q[j$])``, the prefix up to the counter j."""

    def rename(e: A.Expr) -> A.Expr:
        if isinstance(e, (A.Sum, A.Quant)) and e.var in avoid:
            taken = set(avoid) | set(free_vars(e.body)) | {n.var for n in A.walk(e) if isinstance(n, (A.Sum, A.Quant))}
            v = e.var + "$"
            while v in taken:
                v += "$"
            body = substitute(rename(e.body), {e.var: A.Var(v)})
            renamed: A.Expr = dataclasses.replace(e, lo=rename(e.lo), hi=rename(e.hi), body=body, var=v)
            return renamed
        kids = [rename(k) if isinstance(k, A.Expr) else k for k in A.children(e)]
        out: A.Expr = rebuild(e, kids)  # type: ignore[assignment]
        return out

    return rename(beta)


def budget_cores(
    f: A.Expr,
    g: A.Expr,
    changed: AbstractSet[str],
    beta: A.Expr,
    pairs: Sequence[Tuple[str, int, str]],
    fold: Callable[[A.Expr], A.Expr],
    facts: Optional[A.Expr] = None,
    adds: AbstractSet[str] = frozenset(),
) -> List[A.Expr]:
    """``F + (β - β[p := c + d])`` (c counting up; the suffix of a summed β, :func:`suffix_sums`)
    and ``F + β[p := c + d]`` (c counting down), under ``facts ? … : 1`` where given, for each pair (c, step, p) of ``pairs`` whose counter c the guard ``g`` reads, d ∈ {0, -1,
    1}; none when F reads no variable the loop changes apart from its guard's, or only counts
    the body adds to (``adds``) under thresholds (:func:`moving_reads`). ``fold`` folds literals (the engine's). Only proposals: INDUCT checks them."""
    if not moving_reads(f, g, changed, adds):
        return []
    out: List[A.Expr] = []
    guard = set(free_vars(g))
    for c, step, p in pairs:
        if c not in guard:
            continue
        b = _fresh_bound(beta, {c})
        for d in (0, -1, 1):
            at: A.Expr = A.Var(c) if d == 0 else A.Binary("+" if d > 0 else "-", A.Var(c), A.num(abs(d)))
            rests: List[A.Expr] = []
            if step > 0:
                suffix = suffix_sums(b, p, at, changed)  # the terms left, when β sums them
                rests.append(fold(suffix if suffix is not None else A.Binary("-", b, substitute(b, {p: at}))))
            else:
                rests.append(fold(substitute(b, {p: at})))
            for rest in rests:
                core: A.Expr = A.Binary("+", f, rest)
                if facts is not None:
                    core = A.Cond(facts, core, ONE)
                if core not in out:
                    out.append(core)
    return out


def suffix_sums(beta: A.Expr, p: str, at: A.Expr, changed: AbstractSet[str]) -> Optional[A.Expr]:
    """``beta`` with every ``sum(j in lo..H: e)`` whose upper end H reads ``p`` (and whose lower
    end the loop leaves alone) started at ``at`` instead: ``sum(j in at..H: e)``, the terms of
    the iterations left — the same number as ``β - β[p := at]`` when the range is ``lo..p``,
    written so that the solver's ``sum-first`` lemma reads it directly. None when
    ``p`` occurs in ``beta`` outside such upper ends (or in no sum)."""
    hit = False

    def walk(e: A.Expr) -> Optional[A.Expr]:
        nonlocal hit
        if isinstance(e, A.Sum) and p in set(free_vars(e.hi)) and not set(free_vars(e.lo)) & (set(changed) | {p}):
            if p in set(free_vars(e.body)) - {e.var}:
                return None
            hit = True
            return rebuild(e, [at, e.hi, e.body])  # type: ignore[return-value]
        if isinstance(e, A.Var) and e.name == p:
            return None
        kids: List[A.Node] = []
        for k in A.children(e):
            if isinstance(k, A.Expr):
                w = walk(k)
                if w is None:
                    return None
                kids.append(w)
            else:
                kids.append(k)
        return rebuild(e, kids)  # type: ignore[return-value]

    out = walk(beta)
    return out if hit else None

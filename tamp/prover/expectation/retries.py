"""Retry loops: probabilistic variants (termination) and ranking supermartingales (Markov cores).

A retry loop ``while (found < k) { dials := dials + 1; x ~ bern(w); if (x) { found := found + 1; } }``
has no rank (an iteration may change nothing) and no exit chance per iteration (it needs k
successes), yet it ends with probability 1 and its expected number of iterations is k/w.

**Termination by a probabilistic variant** (McIver & Morgan 2005, the 0-1 law of probabilistic
termination; :func:`prove.term_obligations`, kind ``"variant"``): a measure V of the state and a
chance ε over the inputs with

* ε > 0 under ``requires``;
* BOUNDED  ``g ⇒ V > 0``;
* NONINC   ``g ⇒`` after *every* outcome of the body, ``¬g`` or V' <= V;
* PROGRESS ``g ⇒ Pr[¬g' ∨ V' <= V - 1] >= ε`` (a lower pre-expectation of the body).

Why it is sound: fix a start state with V = V₀. In every iteration that starts with g, V does
not rise (NONINC), and with conditional probability at least ε (whatever happened before:
PROGRESS holds in every state satisfying g) the loop ends or V drops by at least 1. After
⌈V₀⌉ such drops without an exit V <= 0, impossible while g holds (BOUNDED), so the loop has
ended. Running n iterations therefore needs fewer than ⌈V₀⌉ successes in n trials each
succeeding with chance at least ε, whose probability is at most Pr[Bin(n, ε) < ⌈V₀⌉] → 0 as
n → ∞: the loop ends with probability 1. V need not be an integer (drops are by at least 1).
A flag loop ``while (!found)`` is V = 1 (the only progress is the exit); the exit-chance rule is
this one with V = 1.

**Expected trip counts and counters** (Chakarov & Sankaranarayanan 2013; Kaminski et al. 2016
expected run-times): with the same V and ε, R = V/ε is a ranking supermartingale — E[R after
one iteration] <= R - 1 while the loop runs when every iteration lowers V by at least 1 with
chance at least ε — so the expected number of iterations left is at most V/ε, and a count x
raised by at most d in expectation per iteration ends at most x + d·V/ε in expectation. For a
Markov claim ``Pr[x >= a] <= β`` this module proposes the core ``x >= 0 ? (x + d·V/ε)/a : 1``
(:func:`rsm_cores`). Nothing here is trusted: a core is only a proposal whose INDUCT the
engine decides with the solver like any other (the supermartingale property is exactly what
INDUCT checks for this core), and the certificate carries the core, V and ε.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars
from tamp.prover.base.exprs import and_all, conjuncts
from tamp.prover.expectation.moments import dominating, increment, markov_core, markov_pairs, side_conditions

ONE = A.num(1)
ZERO = A.num(0)
MAX_CHANCES = 4


def variants(g: A.Expr) -> List[A.Expr]:
    """Candidate variants read off the loop condition: ``b - a`` for each conjunct ``a < b``
    (``+ 1`` when not strict; ``>``, ``>=`` the other way round), then the constant 1 (a flag
    loop: the only progress is the exit)."""
    out: List[A.Expr] = []
    for c in conjuncts(g):
        if isinstance(c, A.Binary) and c.op in ("<", "<=", ">", ">="):
            lo, hi = (c.left, c.right) if c.op in ("<", "<=") else (c.right, c.left)
            v: A.Expr = A.Binary("-", hi, lo)
            if c.op in ("<=", ">="):
                v = A.Binary("+", v, ONE)
            if v not in out:
                out.append(v)
    out.append(ONE)
    return out


def chances(body: A.Stmt, params: AbstractSet[str]) -> List[A.Expr]:
    """Candidate progress chances: the parameter p of each ``bern(p)`` of the body over inputs
    only, and 1 - p."""
    out: List[A.Expr] = []
    for n in A.walk(body):
        if isinstance(n, A.Sample) and n.dist.func == "bern" and set(free_vars(n.dist.args[0])) <= set(params):
            p = n.dist.args[0]
            for e in (p, A.Binary("-", ONE, p)):
                if e not in out:
                    out.append(e)
    return out[:MAX_CHANCES]


def variant_candidates(g: A.Expr, body: A.Stmt, params: AbstractSet[str]) -> List[Tuple[A.Expr, A.Expr]]:
    """(V, ε) pairs to try for the variant rule (each decided by the solver)."""
    return [(v, e) for e in chances(body, params) for v in variants(g)]


def rsm_cores(
    f: A.Expr,
    g: A.Expr,
    body: A.Stmt,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    params: AbstractSet[str],
    pre: Callable[[A.Expr], Optional[A.Expr]],
    guard: Optional[A.Expr],
) -> List[A.Expr]:
    """Markov cores ``x >= 0 ? (x + d·V/ε)/a : 1`` for each Markov pair (x, a) of the
    continuation ``f``, d the expected increment of x per iteration (or a branch choice that
    dominates it) when it reads nothing the loop writes, and (V, ε) a variant and chance of the
    loop: the expected final x by the ranking supermartingale V/ε. Proposals only."""
    out: List[A.Expr] = []
    pairs = variant_candidates(g, body, params)
    for x, a in markov_pairs(f, changed):
        d = increment(pre, x, positive)
        if d is None:
            continue
        conds = side_conditions(pre, x)
        for dd in [d] + dominating(d, changed):
            if set(free_vars(dd)) & set(changed):
                continue
            for v, eps in pairs:
                rem = A.Binary("/", A.Binary("*", dd, v), eps)
                core = markov_core(x, a, rem, and_all(([guard] if guard is not None else []) + conds))
                if core not in out:
                    out.append(core)
    return out

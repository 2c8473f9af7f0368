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
(:func:`rsm_cores`). Nested loops compose the same way (:func:`outer_cores`, :func:`inner_cores`): a capped retry
``while (g < k && !answered)`` inside ``for h in 0..n`` adds at most d·V/ε to x in expectation
per outer iteration (V read at the inner loop's entry: 1 for the flag), so the outer loop is
proposed ``(x + (n - h)·d/ε)/a`` (its body with the inner loop summarised by that effect), and
the inner loop the outer invariant with x replaced by ``x + d·V/ε``. Nothing here is trusted: a core is only a proposal whose INDUCT the
engine decides with the solver like any other (the supermartingale property is exactly what
INDUCT checks for this core), and the certificate carries the core, V and ε.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars
from tamp.prover.base.exprs import and_all, conjuncts, subst
from tamp.prover.expectation.moments import (
    _caps,
    dominating,
    increment,
    markov_core,
    markov_pairs,
    remaining,
    side_conditions,
)

ONE = A.num(1)
ZERO = A.num(0)
MAX_CHANCES = 4


def variants(g: A.Expr) -> List[A.Expr]:
    """Candidate variants: the constant 1 (a flag loop: the only progress is the exit; first,
    as it gives the smallest expected trip count V/ε), then ``b - a`` for each conjunct ``a < b``
    of the loop condition (``+ 1`` when not strict; ``>``, ``>=`` the other way round)."""
    out: List[A.Expr] = [ONE]
    for c in conjuncts(g):
        if isinstance(c, A.Binary) and c.op in ("<", "<=", ">", ">="):
            lo, hi = (c.left, c.right) if c.op in ("<", "<=") else (c.right, c.left)
            v: A.Expr = A.Binary("-", hi, lo)
            if c.op in ("<=", ">="):
                v = A.Binary("+", v, ONE)
            if v not in out:
                out.append(v)
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


Chance = Callable[[A.Expr, A.Expr], Optional[A.Expr]]


def variant_candidates(
    g: A.Expr, body: A.Stmt, params: AbstractSet[str], chance: Optional[Chance] = None
) -> List[Tuple[A.Expr, A.Expr]]:
    """(V, ε) pairs to try for the variant rule (each decided by the solver). ``chance(g, V)``,
    when given, is the body's lower pre-expectation of progress ``[¬g' ∨ V' <= V - 1]``: when it
    reads only inputs it is the first ε tried for V (``p·q`` for two coins that must both come
    up, ``1/6`` for a die showing six)."""
    out: List[Tuple[A.Expr, A.Expr]] = []
    for v in variants(g):
        exact = chance(g, v) if chance is not None else None
        if exact is not None and set(free_vars(exact)) <= set(params):
            out.append((v, exact))
    for e in chances(body, params):
        for v in variants(g):
            if (v, e) not in out:
                out.append((v, e))
    return out


def _rate(d: A.Expr, v: A.Expr, eps: A.Expr) -> A.Expr:
    """d·V/ε, the expected total of an increment d per iteration over V/ε iterations."""
    if isinstance(v, A.Num) and v.value == 1:
        total: A.Expr = A.Binary("/", ONE, eps)
    else:
        total = A.Binary("/", v, eps)
    return total if isinstance(d, A.Num) and d.value == 1 else A.Binary("*", d, total)


def effects(
    loop: A.While,
    x: str,
    positive: AbstractSet[str],
    params: AbstractSet[str],
    pre_of: Callable[[A.Stmt], Callable[[A.Expr], Optional[A.Expr]]],
) -> List[A.Expr]:
    """Candidate expected total increments d·V/ε of ``x`` over a retry loop without inner
    loops (read in the state where it starts): d its expected increment per iteration when it
    reads nothing the loop writes."""
    from lang.walk import written_vars

    if any(isinstance(n, (A.While, A.For)) for n in A.walk(loop.body)):
        return []
    changed = written_vars(loop.body)
    d = increment(pre_of(loop.body), A.Var(x), positive)
    if d is None or set(free_vars(d)) & set(changed):
        return []
    out: List[A.Expr] = []
    for v, eps in variant_candidates(loop.cond, loop.body, params):
        e = _rate(d, v, eps)
        if e not in out:
            out.append(e)
    return out


class _Summarise(Transformer):
    """The body with each inner retry loop replaced by ``x := x + effect``."""

    def __init__(self, x: str, effect: Callable[[A.While], Optional[A.Expr]]):
        super().__init__()
        self.x, self.effect, self.failed = x, effect, False

    def enter(self, node):
        if isinstance(node, A.While):
            e = self.effect(node)
            if e is None:
                self.failed = True
                return node
            return A.Assign((A.Var(self.x),), A.Binary("+", A.Var(self.x), e))
        if isinstance(node, A.For):
            self.failed = True
            return node
        return DESCEND


MAX_CHOICES = 4


def _lookup(picked: Dict[int, Optional[A.Expr]]) -> Callable[[A.While], Optional[A.Expr]]:
    return lambda w: picked.get(id(w))


def outer_cores(
    f: A.Expr,
    s,
    body: A.Stmt,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    params: AbstractSet[str],
    pre_of: Callable[[A.Stmt], Callable[[A.Expr], Optional[A.Expr]]],
    guard: Optional[A.Expr],
    avoid: AbstractSet[str] = frozenset(),
) -> List[A.Expr]:
    """Markov cores ``(x + rem)/a`` for a counted loop ``s`` whose body holds retry loops: each
    inner loop summarised by a candidate expected effect on x (:func:`effects`, the same choice
    for every inner loop), the expected increment per outer iteration read off the summarised
    body, and the increments left by :func:`remaining`. Proposals only."""
    out: List[A.Expr] = []
    inner = [n for n in A.walk(body) if isinstance(n, A.While)]
    if not inner:
        return out
    from lang.walk import written_vars

    inner_writes = set().union(*[written_vars(w.body) for w in inner])
    for x_e, a in markov_pairs(f, changed):
        if not isinstance(x_e, A.Var):
            continue
        x = x_e.name
        # facts about what the inner loops write (a retry counter `g := 0` set inside the body)
        # do not hold where the outer loop starts: only those about x itself are kept
        keep = [c for c in (conjuncts(guard) if guard is not None else []) if set(free_vars(c)) & inner_writes <= {x}]
        g_x = and_all(keep) if keep else None
        per = {id(w): effects(w, x, positive, params, pre_of) for w in inner}
        for choice in range(MAX_CHOICES):
            picked = {k: (v[choice] if choice < len(v) else None) for k, v in per.items()}
            if any(e is None for e in picked.values()):
                break
            t = _Summarise(x, _lookup(picked))
            summary = t.walk(body)
            if t.failed:
                break
            d = increment(pre_of(summary), x_e, positive)
            if d is None:
                continue
            rem = remaining(d, s, changed, avoid)
            if rem is None:
                continue
            core = markov_core(x_e, a, rem, g_x)
            if core not in out:
                out.append(core)
    return out


def inner_cores(
    f: A.Expr,
    loop: A.While,
    positive: AbstractSet[str],
    params: AbstractSet[str],
    pre_of: Callable[[A.Stmt], Callable[[A.Expr], Optional[A.Expr]]],
) -> List[A.Expr]:
    """For a retry loop whose continuation carries the outer loop's invariant ``max(0, min(1,
    X))``: ``X`` with each variable x the retry loop writes replaced by ``x + d·V/ε`` (its
    expected final value by the ranking supermartingale, :func:`effects`). Proposals only."""
    from lang.walk import written_vars

    out: List[A.Expr] = []
    changed = written_vars(loop.body)
    for x_body in _caps(f):
        reads = sorted(set(free_vars(x_body)) & set(changed))
        if not reads:
            continue
        options = [effects(loop, x, positive, params, pre_of) for x in reads]
        if any(not o for o in options):
            continue
        for choice in range(MAX_CHOICES):
            sub = {x: A.Binary("+", A.Var(x), o[min(choice, len(o) - 1)]) for x, o in zip(reads, options)}
            cores = [subst(x_body, sub)]
            if isinstance(x_body, A.Cond):  # the guard read in the current state
                cores.insert(0, A.Cond(x_body.cond, subst(x_body.then, sub), subst(x_body.other, sub)))
            out += [c for c in cores if c not in out]
    return out


def rsm_cores(
    f: A.Expr,
    g: A.Expr,
    body: A.Stmt,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    params: AbstractSet[str],
    pre: Callable[[A.Expr], Optional[A.Expr]],
    guard: Optional[A.Expr],
    chance: Optional[Chance] = None,
) -> List[A.Expr]:
    """Markov cores ``x >= 0 ? (x + d·V/ε)/a : 1`` for each Markov pair (x, a) of the
    continuation ``f``, d the expected increment of x per iteration (or a branch choice that
    dominates it) when it reads nothing the loop writes, and (V, ε) a variant and chance of the
    loop: the expected final x by the ranking supermartingale V/ε. Proposals only."""
    out: List[A.Expr] = []
    pairs = variant_candidates(g, body, params, chance)
    for x, a in markov_pairs(f, changed):
        d = increment(pre, x, positive)
        if d is None:
            continue
        conds = side_conditions(pre, x)
        for dd in [d] + dominating(d, changed):
            if set(free_vars(dd)) & set(changed):
                continue
            for v, eps in pairs:
                rem = _rate(dd, v, eps)
                core = markov_core(x, a, rem, and_all(([guard] if guard is not None else []) + conds))
                if core not in out:
                    out.append(core)
    return out

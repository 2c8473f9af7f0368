"""Accumulated noise as candidate loop-head facts: how far an accumulator of noisy values can be
from the accumulator of their means.

A loop that adds a sample to an accumulator (``y ~ lap(x[i], b); s := s + y``) computes, in a run
where every axiom's ¬bad holds (``abs(y - x[i]) <= M``), a value within ``M`` per iteration of
the noise-free run's (``s := s + x[i]``, whose closed form :mod:`.recurrence` solves:
``sum(j in lo..i: x[j])``). The candidate is ``abs(s - F) <= T * B`` at the loop head, F the
noise-free closed form, T the iterations done and B the noise one iteration adds: for an
increment ``d0 + a1*e1 + ... + ak*ek`` (e the samplings' deviations from their means, a literal
coefficients) B = ``|a1|*M1 + ... + |ak|*Mk``. A noisy sum, average or prefix sum then follows
from the loop's invariant (``avg := s / n``: ``abs(avg - sum(…) / n) <= M``).

Each sampling's deviation is a fresh symbol ``e$y`` in a symbolic run of the body
(:func:`.recurrence.body_paths` with the sampling assigning ``mean + e$y``): an increment not
linear in them, a bound M reading a variable the loop writes, or a path with a different B
gives no candidate for that path's bound (each distinct B is proposed; Houdini keeps what is
inductive). An accumulator the postcondition reads itself gets none: the postcondition's prefix
forms (:mod:`.invariants`) already say how far it is after i iterations, and one more candidate
would only cost Houdini time. Candidates are proposals only: Houdini and :mod:`.check` decide, and a kept one is a
label of the certificate, re-checked by ``tamp check-proof``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import loop_body
from tamp.core.z3context import load_in_proof
from tamp.prover.base.exprs import iterations_done, plus, subst
from tamp.prover.base.simplify import _ToSympy
from tamp.prover.counting.recurrence import Path, body_paths, closed_forms_on, increment, match_post_sums, written
from tamp.prover.trace.labels import negated_conjuncts

NOISE = "e$"  # prefix of a sampling's deviation from its mean


def _good_facts(ax) -> List[A.Expr]:
    """The conjuncts of an axiom's ¬bad, ``!(a > b)`` written ``a <= b``."""
    flip = {">": "<=", ">=": "<"}
    out = []
    for nb in negated_conjuncts(ax.bad):
        if isinstance(nb, A.Unary) and nb.op == "!" and isinstance(nb.operand, A.Binary) and nb.operand.op in flip:
            nb = A.Binary(flip[nb.operand.op], nb.operand.left, nb.operand.right)
        out.append(nb)
    return out


def _deviation(f: A.Expr, y: str) -> Optional[Tuple[A.Expr, A.Expr]]:
    """(mean, M) for a fact ``abs(y - mean) <= M`` (or ``abs(mean - y) <= M``), else None."""
    if not (isinstance(f, A.Binary) and f.op in ("<=", "<") and isinstance(f.left, A.Call)):
        return None
    if f.left.func != "abs" or len(f.left.args) != 1:
        return None
    d = f.left.args[0]
    if not (isinstance(d, A.Binary) and d.op == "-"):
        return None
    if d.left == A.Var(y) and y not in set(free_vars(d.right)):
        return d.right, f.right
    if d.right == A.Var(y) and y not in set(free_vars(d.left)):
        return d.left, f.right
    return None


def _noise_bound(d: A.Expr, margins: Dict[str, A.Expr]) -> Optional[Tuple[A.Expr, A.Expr]]:
    """(d with every deviation at 0, B) when ``d`` is linear in the deviations with literal
    coefficients (see the module docstring), else None."""
    # deferred on purpose: sympy takes ~1 s to load and only this step needs it
    sp = load_in_proof("sympy")
    noise = [n for n in sorted(set(free_vars(d))) if n in margins]
    d0 = subst(d, {n: A.num(0) for n in noise})
    if not noise:
        return d0, A.num(0)
    conv = _ToSympy()
    try:
        diff = sp.expand(conv.conv(d) - conv.conv(d0))
    except (ValueError, TypeError):
        return None
    syms = [conv.sym(n) for n in noise]
    try:
        poly = sp.Poly(diff, *syms)
    except sp.PolynomialError:
        return None
    if poly.total_degree() > 1:
        return None
    bound: A.Expr = A.num(0)
    for n, s in zip(noise, syms):
        a = poly.coeff_monomial(s)
        if not a.is_Rational:
            return None
        k = abs(Fraction(int(a.p), int(a.q)))
        if k == 0:
            continue
        term = margins[n] if k == 1 else A.Binary("*", A.Num(k, k.denominator == 1), margins[n])
        bound = plus(bound, term)
    return d0, bound


def deviation_candidates(cfa, loops, axioms) -> List[A.Expr]:
    """The candidates of the module docstring for every counted loop of ``loops`` whose body
    samples (with a two-sided axiom in ``axioms``, keyed by sampling edge) into an accumulator."""
    out: List[A.Expr] = []
    for h, lp in sorted(loops.items()):
        c = lp["counter"]
        if c is None:
            continue
        mod = written(cfa, loop_body(cfa, h))
        noisy: Dict[A.Sample, A.Expr] = {}
        margins: Dict[str, A.Expr] = {}
        for (u, v, k), ax in axioms.items():
            if u not in lp["body"] or v not in lp["body"]:
                continue
            st = cfa.graph.edges[u, v, k]["stmt"]
            if not (isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var)):
                continue
            y = st.targets[0].name
            for f in _good_facts(ax):
                dev = _deviation(f, y)
                if dev is None or set(free_vars(dev[1])) & mod or st in noisy:
                    continue
                e = NOISE + y + str(len(margins))
                noisy[st] = A.Binary("+", dev[0], A.Var(e))
                margins[e] = dev[1]
        posted = set().union(*(set(free_vars(e)) for e in cfa.ensures)) if cfa.ensures else set()
        targets = {t.name for st in noisy for t in st.targets if isinstance(t, A.Var)}
        if not (mod - posted - targets - {c.name}):
            continue  # no accumulator the postcondition does not read itself (see the docstring)
        try:
            out.extend(_loop_deviations(cfa, h, loops, noisy, margins))
        except (RecursionError, ValueError, TypeError):
            continue
    return out


def _loop_deviations(cfa, h, loops, noisy, margins) -> List[A.Expr]:
    c = loops[h]["counter"]
    paths = body_paths(cfa, h, loops, noisy)
    if not paths:
        return []
    clean = {n: A.num(0) for n in margins}
    clean_paths = [
        Path({x: subst(v, clean) for x, v in p.env.items()}, p.writes, [subst(q, clean) for q in p.conds])
        for p in paths
    ]
    forms = closed_forms_on(cfa, h, loops, clean_paths)
    T = iterations_done(A.Var(c.name), c.init, c.step)
    mine: List[A.Expr] = []
    posted = set().union(*(set(free_vars(e)) for e in cfa.ensures)) if cfa.ensures else set()
    for x, form in sorted(forms.items()):
        if x in posted:  # the postcondition's own prefix forms relate x to the iterations
            continue
        bounds: List[A.Expr] = []
        for p in paths:
            d = increment(p.env.get(x, A.Var(x)), x)
            nb = None if d is None else _noise_bound(d, margins)
            if nb is None:
                bounds = []
                break
            if nb[1] not in bounds and not (isinstance(nb[1], A.Num) and nb[1].value == 0):
                bounds.append(nb[1])
        for b in bounds:
            fact = A.Binary("<=", A.Call("abs", (A.Binary("-", A.Var(x), form),)), A.Binary("*", T, b))
            if fact not in mine:
                mine.append(fact)
    return match_post_sums(cfa, mine, c)

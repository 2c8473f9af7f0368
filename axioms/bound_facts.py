"""Facts about powers with symbolic exponents and about sums over symbolic ranges, for the
last step of a bound proof: "derived bound <= claimed bound", or "the claim's expression is in
range".

The language has no power operator: ``b^k`` is written ``exp(k·log b)`` (``(1/q)^r`` is
``exp(-r·log q)``), and ``log``/``exp`` are uninterpreted functions of the shared encoding
(:mod:`tamp.core.encode`); an array ``sum(j in lo..hi: e)`` is an opaque function. z3 then
knows neither Bernoulli's inequality nor that a sum of positive terms is positive. The lemmas
of :mod:`axioms.lemmas` are added to every query; the ones here are a *second round*, asked
only when a query failed without them (:func:`tamp.prover.base.smt.is_valid` and the
certificate checker's :func:`tamp.certificate.solver.decide` both retry with them), so every
query that was valid before is decided exactly as before.

Instances, for each application ``t = exp(d)`` of a query whose exponent is exactly
``d = K·log b`` (checked by polynomial normal form: ``d - K·log b`` simplifies to 0, with
``K = d[log b := 1]`` and ``b`` arithmetic), writing ``P = b^K``:

===================  ============================================================================
``pow-bernoulli``    b > 0 ∧ K >= 0 ∧ K integer ⇒ t >= 1 + K·(b - 1)
``pow-bernoulli1``   b > 0 ∧ K >= 1 ∧ K integer ⇒ t >= b·(1 + (K - 1)·(b - 1))
``pow-unit``         b > 0 ∧ K >= 0 ∧ K integer ⇒ (b <= 1 ⇒ t <= 1) ∧ (b >= 1 ⇒ t >= 1)
``pow-mono``         for two such terms t = b^K, t' = b^M of one base b:
                     b > 0 ∧ K, M integers ∧ K >= M >= 0 ⇒ (b <= 1 ⇒ t <= t') ∧ (b >= 1 ⇒ t >= t')
===================  ============================================================================

and, read as ``t = 1/b^N`` with ``N = -K`` (``exp(-r·log q)`` is ``1/q^r``), the same facts
divided through by ``b^N > 0``: ``t·(1 + N·(b - 1)) <= 1``, ``t·b·(1 + (N - 1)·(b - 1)) <= 1``,
and ``pow-unit`` with the inequalities turned round. Both readings are stated for every term;
their premises (``K >= 0`` or ``N >= 0``) decide which one says anything.

For each opaque sum application ``s = sum(j in lo..hi: e)`` of the query:

===================  ============================================================================
``sum-sign``         (∀j. lo <= j < hi ⇒ e(j) >= 0) ⇒ s >= 0
``sum-pos``          lo < hi ∧ (∀j. lo <= j < hi ⇒ e(j) > 0) ⇒ s > 0
===================  ============================================================================

Why sound. exp(K·log b) = b^K for b > 0 (exp and log are inverse; (exp x)^K = exp(K x) for
integer K). Bernoulli's inequality (1 + x)^K >= 1 + K·x for x >= -1 and integer K >= 0 (induction
on K: (1 + x)^(K+1) >= (1 + K x)(1 + x) = 1 + (K + 1)x + K x² using 1 + x >= 0) at x = b - 1 >= -1
gives ``pow-bernoulli``; ``pow-bernoulli1`` is b·b^(K-1) with Bernoulli for K - 1 >= 0 and b > 0.
For 0 < b <= 1 every factor of b^K is in (0, 1], so b^K <= 1, and b^K = b^M·b^(K-M) <= b^M; for
b >= 1 the same with the inequalities turned round (``pow-unit``, ``pow-mono``). The reciprocal
forms multiply the facts about b^K by 1/b^K > 0. A finite sum of non-negative (positive, over a
non-empty range) terms is non-negative (positive). The premises — the side conditions — are
left to the solver, which must prove them from the query's hypotheses; a lemma whose premise
fails says nothing. The integrality of K is the premise ``is_int(K)`` (z3's ``IsInt``), so an
exponent that is not an integer gets no instance to lean on.
"""

from __future__ import annotations

from typing import List, Tuple

import z3

from axioms.lemmas import _is_sum, _placeholders, _sum_body_at

MAX_POWER_TERMS = 8  # the most exp applications read as powers in one query
MAX_SUMS = 8  # the most sum applications of one query


def _is(t, name: str) -> bool:
    return z3.is_app(t) and t.decl().name() == name and t.num_args() == 1


def _arithmetic(t) -> bool:
    """Whether ``t`` reads only variables, array elements and arithmetic (no log/exp/sqrt/sum)."""
    todo, seen = [t], set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_app(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED and x.num_args() > 0:
            return False
        if z3.is_quantifier(x):
            return False
        todo.extend(x.children())
    return True


def _logs_in(d) -> List[z3.ExprRef]:
    """The ``log`` applications inside ``d``, each once."""
    out: List[z3.ExprRef] = []
    todo, seen = [d], set()
    while todo:
        x = todo.pop()
        if not z3.is_app(x) or x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if _is(x, "log"):
            if not any(x.eq(y) for y in out):
                out.append(x)
            continue
        todo.extend(x.children())
    return out


def _is_zero(e) -> bool:
    """Whether ``e`` is 0 in polynomial normal form (z3's sum of monomials)."""
    v = z3.simplify(e, som=True)
    if z3.is_rational_value(v):
        return v.as_fraction() == 0
    return z3.is_int_value(v) and v.as_long() == 0


def power_form(t) -> Tuple[z3.ExprRef, z3.ExprRef] | None:
    """``(b, K)`` when ``t`` is ``exp(d)`` with ``d = K·log b`` exactly (``K`` and ``b``
    arithmetic, ``K`` not zero by its syntax), else None.

    >>> q, r = z3.Real("q"), z3.Int("r")
    >>> log = z3.Function("log", z3.RealSort(), z3.RealSort())
    >>> exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
    >>> b, k = power_form(exp(-(log(q) * z3.ToReal(r))))
    >>> b, z3.simplify(k)
    (q, -1*ToReal(r))
    """
    if not _is(t, "exp"):
        return None
    d = t.arg(0)
    logs = _logs_in(d)
    if len(logs) != 1:
        return None
    lg = logs[0]
    b = lg.arg(0)
    if not _arithmetic(b):
        return None
    k = z3.simplify(z3.substitute(d, (lg, z3.RealVal(1))))
    if not _arithmetic(k) or _is_zero(k):
        return None
    if not _is_zero(d - k * lg):
        return None
    return b, k


def _int_premise(k) -> z3.BoolRef:
    """``k`` is an integer: true by syntax for a converted integer term, else z3's ``IsInt``."""
    if z3.is_to_real(k) or z3.is_int(k):
        return z3.BoolVal(True)
    return z3.IsInt(k)


def power_facts(t, b, k) -> List[Tuple[str, z3.BoolRef]]:
    """``pow-bernoulli``, ``pow-bernoulli1``, ``pow-unit`` for ``t = exp(k·log b)`` (see the
    module docstring), both for ``k`` (t = b^k) and for ``-k`` (t = 1/b^(-k))."""
    out: List[Tuple[str, z3.BoolRef]] = []
    k = k if z3.is_real(k) else z3.ToReal(k)
    isint = _int_premise(k)
    for sign in (1, -1):
        K = z3.simplify(sign * k)
        base = z3.And(b > 0, K >= 0, isint)
        base1 = z3.And(b > 0, K >= 1, isint)
        lin = 1 + K * (b - 1)
        lin1 = b * (1 + (K - 1) * (b - 1))
        if sign == 1:  # t = b^K
            out.append(("pow-bernoulli", z3.Implies(base, t >= lin)))
            out.append(("pow-bernoulli1", z3.Implies(base1, t >= lin1)))
            out.append(("pow-unit", z3.Implies(base, z3.And(z3.Implies(b <= 1, t <= 1), z3.Implies(b >= 1, t >= 1)))))
        else:  # t = 1/b^K
            out.append(("pow-bernoulli", z3.Implies(base, t * lin <= 1)))
            out.append(("pow-bernoulli1", z3.Implies(base1, t * lin1 <= 1)))
            out.append(("pow-unit", z3.Implies(base, z3.And(z3.Implies(b <= 1, t >= 1), z3.Implies(b >= 1, t <= 1)))))
    return out


def power_order_facts(forms) -> List[Tuple[str, z3.BoolRef]]:
    """``pow-mono`` for each ordered pair of power terms ``(t, b, k)`` of one base (structurally
    equal ``b``)."""
    out: List[Tuple[str, z3.BoolRef]] = []
    for t1, b1, k1 in forms:
        for t2, b2, k2 in forms:
            if t1.eq(t2) or not b1.eq(b2):
                continue
            K, M = (x if z3.is_real(x) else z3.ToReal(x) for x in (k1, k2))
            prem = z3.And(b1 > 0, _int_premise(K), _int_premise(M), K >= M, M >= 0)
            mono = z3.And(z3.Implies(b1 <= 1, t1 <= t2), z3.Implies(b1 >= 1, t1 >= t2))
            out.append(("pow-mono", z3.Implies(prem, mono)))
            # the reciprocal powers: b^-K against b^-M
            prem2 = z3.And(b1 > 0, _int_premise(K), _int_premise(M), K <= M, M <= 0)
            mono2 = z3.And(z3.Implies(b1 <= 1, t1 >= t2), z3.Implies(b1 >= 1, t1 <= t2))
            out.append(("pow-mono", z3.Implies(prem2, mono2)))
    return out


def sum_facts(t, body_at) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-sign`` and ``sum-pos`` for the sum application ``t = s(lo, hi, …)``; ``body_at(j)``
    is its summand at index j (raises when the encoder cannot express it: no facts)."""
    j = z3.Int("bound$j")
    try:
        e = body_at(j)
    except Exception:  # noqa: BLE001 - a body the encoder cannot express: no lemma (fewer facts)
        return []
    lo, hi = t.arg(0), t.arg(1)
    rng = z3.And(lo <= j, j < hi)
    nonneg = z3.ForAll([j], z3.Implies(rng, e >= 0))
    pos = z3.ForAll([j], z3.Implies(rng, e > 0))
    return [("sum-sign", z3.Implies(nonneg, t >= 0)), ("sum-pos", z3.Implies(z3.And(lo < hi, pos), t > 0))]


def _guarded(fs) -> set:
    """The ids of the terms of ``fs`` that sit in a divisor or in the argument of a function
    application (``log``, ``exp``, ``sqrt``): where the sign of a sum decides whether an
    expression is in range, or which way a bound goes."""
    out: set = set()
    todo, seen = [(f, False) for f in fs], set()
    while todo:
        x, inside = todo.pop()
        if (x.get_id(), inside) in seen:
            continue
        seen.add((x.get_id(), inside))
        if inside:
            out.add(x.get_id())
        if z3.is_quantifier(x):
            todo.append((x.body(), inside))
            continue
        if not z3.is_app(x):
            continue
        if x.decl().kind() == z3.Z3_OP_DIV and x.num_args() == 2:
            todo += [(x.arg(0), inside), (x.arg(1), True)]
            continue
        under = inside or any(_is(x, name) for name in ("log", "exp", "sqrt"))
        todo += [(c, under) for c in x.children()]
    return out


def bound_fact_lemmas(apps, enc, where=None) -> List[Tuple[str, z3.BoolRef]]:
    """The instances of the module docstring for the applications ``apps`` of a query (those
    :func:`axioms.terms.transcendental_apps` finds; sums inside quantifiers are skipped). With
    ``where`` (the query's formulas) only the sums in a divisor or under log/exp/sqrt get facts
    (:func:`_guarded`: a search's many failing queries about a sum as a plain term, e.g. a
    Chebyshev budget, would pay for facts they do not need); either way every fact is true."""
    out: List[Tuple[str, z3.BoolRef]] = []
    forms: List[Tuple[z3.ExprRef, z3.ExprRef, z3.ExprRef]] = []
    for t in apps:
        if z3.is_quantifier(t) or not _is(t, "exp"):
            continue
        pf = power_form(t)
        if pf is not None and len(forms) < MAX_POWER_TERMS:
            forms.append((t, pf[0], pf[1]))
    for t, b, k in forms:
        out.extend(power_facts(t, b, k))
    out.extend(power_order_facts(forms))
    sums = [t for t in apps if not z3.is_quantifier(t) and _is_sum(t, enc) and not _placeholders(t)]
    if where is not None and sums:
        guarded = _guarded(where)
        sums = [t for t in sums if t.get_id() in guarded]
    sums = sums[:MAX_SUMS]
    for t in sums:
        out.extend(sum_facts(t, lambda j, t=t: _sum_body_at(t, enc, j)))
    return out

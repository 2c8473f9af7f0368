"""Lemma instances for powers written as exponentials: several independent misses, inverses.

A loop whose every iteration must miss r independent events of chances a_1, …, a_r fails with
probability at most ``Π(1 - a_i)^m``, which users write ``exp(-(a_1 + … + a_r)·m)``. The
per-step fact the induction needs is ``Π(1 - a_i) <= exp(-(a_1 + … + a_r))``; ``exp(d) >= 1 + d``
alone gives only ``1 - Σa_i``, which is smaller. The instances here (added to
:func:`axioms.lemmas.product_lemmas`, so the prover's expectation checker and the certificate
checker both get them from the same terms of a query):

=================  ==============================================================================
``exp-prod``       (∧_i -1 <= t_i <= 0) ⇒ exp(t_1 + … + t_r) >= Π_i (1 + t_i), for the exponent
                   ``d`` of an ``exp`` application read as the sum of its monomials, a monomial
                   ``c·u`` with an integer literal 2 <= |c| <= :data:`MAX_FACTORS` read as |c|
                   equal terms ``sign(c)·u`` (:func:`factors`: ``exp(-2·p)`` is ``exp(-p - p)``,
                   so ``(1 - p)² <= exp(-2·p)``), 2 <= r <= :data:`MAX_FACTORS` terms in all
                   (more copies than that: the monomials unsplit, one term each)
``exp-neg``        exp(a)·exp(b) = 1 when a + b is 0 (``1/exp(1) = exp(-1)``)
``log-inv``        log(b) + log(c) = 0 for literals b, c > 0 with b·c = 1 (``log(1/2) = -log 2``:
                   ``exp(k·log(1/2))`` is ``exp(-k·log 2)``, 2^-k either way)
``exp-pow``        b > 0 ⇒ exp(c·log b) = b^c for a literal integer c, 0 <= |c| <= :data:`MAX_POWER`
                   (``exp(2·log 2) = 4``, ``exp(-log 2) = 1/2``)
=================  ==============================================================================

Why sound: ``exp(t_i) >= 1 + t_i >= 0`` for each i (the tangent line of the convex exp, and the
premise), so multiplying these non-negative inequalities gives ``Π exp(t_i) >= Π(1 + t_i)``,
and ``Π exp(t_i) = exp(Σ t_i)``. ``exp(a)·exp(b) = exp(a + b) = exp(0) = 1``. ``exp(c·log b) =
(exp(log b))^c = b^c`` for b > 0 (exp(x)^c = exp(c·x) for integer c); ``log b + log c = log(b·c) =
log 1 = 0``. Each is an instance of a
law of the real exp and log; the premises are left to the solver.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Optional, Tuple

import z3

MAX_FACTORS = 4  # the most terms (monomials, an integer multiple counted as its copies) read as misses
MAX_POWER = 4  # the largest |c| in exp(c·log b) = b^c


def _is(t, name: str) -> bool:
    return z3.is_app(t) and t.decl().name() == name and t.num_args() == 1


def _monomials(d) -> List:
    """The summands of ``d`` (z3's ``+`` flattened; a single term for anything else)."""
    if z3.is_add(d):
        out: List = []
        for k in range(d.num_args()):
            out += _monomials(d.arg(k))
        return out
    return [d]


def _integer(c) -> Optional[int]:
    """The value of ``c`` when it is an integer literal (an integral rational too), else None."""
    v = _value(c)
    return int(v) if v is not None and v.denominator == 1 else None


def _arithmetic(t) -> bool:
    """Whether ``t`` reads only variables and arithmetic (no ``log``/``exp``/``sqrt`` or other
    function): a chance of a miss is such a term; ``2·log 2`` is not, and splitting it would
    only give the solver lemmas whose premise fails (cost, no strength)."""
    todo = [t]
    while todo:
        x = todo.pop()
        if z3.is_app(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED and x.num_args() > 0:
            return False
        todo.extend(x.children())
    return True


def factors(d) -> List:
    """The exponent ``d`` as a list of terms t_i with ``d = Σ t_i``: its monomials, where a
    monomial ``c·u`` with an integer literal ``c``, 2 <= |c| <= :data:`MAX_FACTORS`, and ``u``
    arithmetic over variables (no function application), becomes |c| copies of ``sign(c)·u`` (so ``-2·p`` is ``-p, -p`` and ``-3·p - q`` is ``-p, -p, -p, -q``).
    The sum of the list is ``d`` exactly (``c·u = u + … + u``), which is all :func:`power_lemmas`
    needs: the lemma's premise asks each listed term to be in [-1, 0].

    >>> p, q = z3.Reals("p q")
    >>> factors(z3.simplify(-2 * p - q, som=True))
    [-1*p, -1*p, -1*q]
    """
    out: List = []
    for m in _monomials(d):
        split = None
        if z3.is_mul(m) and m.num_args() >= 2:
            c = _integer(m.arg(0))
            if c is not None and 2 <= abs(c) <= MAX_FACTORS and _arithmetic(m):
                rest = m.arg(1) if m.num_args() == 2 else z3.simplify(z3.Product(*m.children()[1:]))
                split = [rest if c > 0 else -1 * rest] * abs(c)
        out += split if split is not None else [m]
    return out


def _literal_log_power(d):
    """(c, b) when ``d`` is ``c·log(b)`` (or ``log(b)``, c = 1) with c an integer literal."""
    if _is(d, "log"):
        return 1, d.arg(0)
    if z3.is_mul(d) and d.num_args() == 2:
        for c, t in ((d.arg(0), d.arg(1)), (d.arg(1), d.arg(0))):
            if _is(t, "log") and (z3.is_int_value(c) or z3.is_rational_value(c)):
                v = c.as_fraction() if z3.is_rational_value(c) else None
                n = (
                    c.as_long()
                    if z3.is_int_value(c)
                    else (v.numerator if v is not None and v.denominator == 1 else None)
                )
                if n is not None:
                    return int(n), t.arg(0)
    return None


def _value(t):
    """The value of a rational literal (None for anything else)."""
    if z3.is_rational_value(t) or z3.is_int_value(t):
        return t.as_fraction() if z3.is_rational_value(t) else Fraction(t.as_long())
    return None


def _logs_of(e, out: List) -> None:
    """The applications of ``log`` inside ``e`` (at most :data:`MAX_FACTORS`), into ``out``."""
    if _is(e, "log"):
        if len(out) < MAX_FACTORS and not any(e.eq(x) for x in out):
            out.append(e)
        return
    if z3.is_app(e):
        for k in range(e.num_args()):
            _logs_of(e.arg(k), out)


def power_lemmas(exps, diffs) -> List[Tuple[str, z3.BoolRef]]:
    """``exp-prod`` and ``exp-pow`` for each ``exp`` application of ``exps`` and each
    ``(term, exponent)`` of ``diffs`` (the differences :func:`axioms.lemmas.product_lemmas`
    introduces), and ``exp-neg`` for each pair of ``exps`` (see the module docstring)."""
    out: List[Tuple[str, z3.BoolRef]] = []
    seen = set()
    for t, d in [(t, t.arg(0)) for t in exps] + list(diffs):
        key = t.get_id()
        if key in seen:
            continue
        seen.add(key)
        som = z3.simplify(d, som=True)
        ms = factors(som)
        if len(ms) > MAX_FACTORS:  # too many copies: the monomials as they stand (as before the split)
            ms = _monomials(som)
        if 2 <= len(ms) <= MAX_FACTORS:
            prem = z3.And(*[z3.And(-1 <= m, m <= 0) for m in ms])
            prod = (1 + ms[0]) if len(ms) else 1
            for m in ms[1:]:
                prod = prod * (1 + m)
            out.append(("exp-prod", z3.Implies(prem, t >= prod)))
        cb = _literal_log_power(z3.simplify(d))
        if cb is not None and 0 < abs(cb[0]) <= MAX_POWER:
            c, b = cb
            power = b
            for _ in range(abs(c) - 1):
                power = power * b
            out.append(("exp-pow", z3.Implies(b > 0, t == power if c > 0 else t * power == 1)))
    logs: List = []
    for t in exps:
        _logs_of(t.arg(0), logs)
    for i in range(len(logs)):
        for j in range(i + 1, len(logs)):
            a, b = logs[i].arg(0), logs[j].arg(0)
            if _value(a) is not None and _value(b) is not None and _value(a) * _value(b) == 1 and _value(a) > 0:
                out.append(("log-inv", logs[i] + logs[j] == 0))
    for i in range(len(exps)):
        for j in range(i + 1, len(exps)):
            s = z3.simplify(exps[i].arg(0) + exps[j].arg(0), som=True)
            if z3.is_rational_value(s) and s.as_fraction() == 0 or z3.is_int_value(s) and s.as_long() == 0:
                out.append(("exp-neg", exps[i] * exps[j] == 1))
    return out

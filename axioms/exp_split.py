"""An exponential of a sum split into the product of the exponentials of its terms.

The expected failure of several independent draws that must all land in their tails is the
product of their exact tails (:mod:`tamp.prover.expectation.tails`): three replicas whose
exponential latencies of mean m all exceed d give ``exp(-d/m)·exp(-d/m)·exp(-d/m)``, which a
user writes ``exp(-3·d/m)``. The pair lemma ``exp-add`` of :func:`axioms.lemmas.product_lemmas`
relates two applications at a time (``exp(-3d/m) = exp(-d/m)·exp(-2d/m)``) and leaves the new
factor ``exp(-2d/m)`` unrelated to the others, so a product of three or more tails is out of its
reach. The instance here closes that gap in one step:

=============  ===================================================================================
``exp-split``  exp(t_1 + … + t_r) = exp(t_1)·…·exp(t_r), for the exponent of an ``exp``
               application of a query read as the list of :func:`terms` (its summands, an
               integer multiple ``c·u`` read as |c| copies of ``u``, a quotient ``(a1 + a2)/b``
               as ``a1/b + a2/b`` under the premise b != 0), 2 <= r <= :data:`axioms.powers.MAX_FACTORS`
=============  ===================================================================================

Why sound: exp(a + b) = exp(a)·exp(b) for all reals (the law of the real exponential), and
``terms`` returns terms whose sum is the exponent exactly (``c·u = u + … + u``, and ``(a1 +
a2)/b = a1/b + a2/b`` for b != 0, which is the fact's premise). The expected-failure engine and its certificate checker ask for these instances
only after an obligation of a loop-free program failed without them (a second round), so every
query decided before is decided as before.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Tuple

import z3

from axioms.powers import MAX_FACTORS


def _is_exp(t) -> bool:
    return z3.is_app(t) and t.decl().name() == "exp" and t.num_args() == 1


def _literal(t):
    """The value of a rational literal, or None."""
    if z3.is_int_value(t):
        return Fraction(t.as_long())
    if z3.is_rational_value(t):
        return t.as_fraction()
    return None


def terms(e, divisors: List) -> List:
    """``e`` as a list of terms whose sum is ``e`` (for every value of the divisors listed in
    ``divisors`` other than 0): sums are flattened, ``k·u`` for an integer literal 2 <= |k| <=
    MAX_FACTORS is |k| copies of ``±u`` (other literal k: k times each term of u), and ``a/b`` with
    a non-literal ``b`` is ``t/b`` for each term t of a (b is added to ``divisors``)."""
    if z3.is_add(e):
        out: List = []
        for k in range(e.num_args()):
            out += terms(e.arg(k), divisors)
        return out
    if z3.is_sub(e) and e.num_args() == 2:
        return terms(e.arg(0), divisors) + [-1 * t for t in terms(e.arg(1), divisors)]
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        return [-1 * t for t in terms(e.arg(0), divisors)]
    if z3.is_mul(e) and e.num_args() == 2 and _literal(e.arg(0)) is not None:
        k = _literal(e.arg(0))
        inner = terms(e.arg(1), divisors)
        if k.denominator == 1 and 2 <= abs(k) <= MAX_FACTORS:
            sign = 1 if k > 0 else -1
            return [t if sign > 0 else -1 * t for t in inner for _ in range(abs(int(k)))]
        return [e.arg(0) * t for t in inner]
    if z3.is_div(e) and _literal(e.arg(1)) is None:
        inner = terms(e.arg(0), divisors)
        if len(inner) > 1:
            divisors.append(e.arg(1))
            return [t / e.arg(1) for t in inner]
    return [e]


def split_lemmas(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``exp-split`` for each ``exp`` application of ``apps`` (quantified terms skipped) whose
    exponent has 2 to :data:`axioms.powers.MAX_FACTORS` terms (:func:`terms`); ``enc.exp`` builds
    the factors. Where a divisor was split over, the fact is guarded by its being non-zero."""
    out: List[Tuple[str, z3.BoolRef]] = []
    seen = set()
    for t in apps:
        if z3.is_quantifier(t) or not _is_exp(t) or t.get_id() in seen:
            continue
        seen.add(t.get_id())
        divisors: List = []
        ms = terms(z3.simplify(t.arg(0)), divisors)
        if not 2 <= len(ms) <= MAX_FACTORS:
            continue
        prod = enc.exp(ms[0])
        for m in ms[1:]:
            prod = prod * enc.exp(m)
        fact = t == prod
        if divisors:
            fact = z3.Implies(z3.And(*[b != 0 for b in divisors]), fact)
        out.append(("exp-split", fact))
    return out

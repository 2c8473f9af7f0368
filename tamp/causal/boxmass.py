"""Bounds on the biased share of a box from the symbolic linear bounds of the decision functions.

For a pair of threshold copies (g_a, g_b) the symbolic bounds give, on the box, affine functions
with L_a(x) <= g_a(x) <= U_a(x) (same for b) and L_D(x) <= g_a(x) - g_b(x) <= U_D(x). For a
truth combination (p_a, p_b) of the decision predicates under which the outputs differ:

* *inner* set (certainly biased): p_a true is implied by L_a(x) > 0, p_a false by U_a(x) < 0
  (strict or not, the threshold's strictness no longer matters); the set of points meeting both
  conditions has volume >= vol{first} + vol{second} - vol(box);
* *outer* set (possibly biased): p_a true needs U_a(x) >= 0, p_a false L_a(x) <= 0, and
  (true, false) needs U_D(x) >= 0, (false, true) L_D(x) <= 0; its volume is at most the smallest
  volume of one of these half-spaces.

The combinations are disjoint, so the biased share lies between the sum of the inner volumes
and the sum of the outer ones (divided by the box volume). Each half-space volume is an exact
rational (:func:`below_share`, 2^n terms in integer arithmetic): the affine functions are
first *coarsened* to their ``max_dims`` most influential inputs (|coefficient| × width), the
others replaced by their minimum over the box — a function below the original, whose
half-space {f <= 0} contains the original one, so every volume computed is an upper bound of
the exact one, which is all the two bounds need. Uniform inputs only; forms that depend on
opaque atoms give no bounds (None).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Optional, Tuple

import numpy as np

from tamp.core.dyadic import ceil_grid, floor_grid
from tamp.core.linear import below_share

from .threshold import bias_cases
from .tight import BoxFacts, SymbolicBounds

RealBox = Dict[str, Tuple[Fraction, Fraction]]


def _coarse(V: np.ndarray, c: float, names: Dict[int, str], box: RealBox, widths: Dict[str, float], max_dims: int):
    """(coefficients by input name, constant) of an affine function f' <= f on ``box`` that reads
    at most ``max_dims`` inputs (the others at their worst case); None if f reads a non-input."""
    nz = [int(v) for v in np.flatnonzero(V)]
    if any(v not in names for v in nz):
        return None
    nz.sort(key=lambda v: -abs(float(V[v])) * widths[names[v]])
    coef: Dict[str, Fraction] = {}
    const = Fraction(c)
    for r, v in enumerate(nz):
        k = Fraction(float(V[v]))
        name = names[v]
        if r < max_dims:
            coef[name] = k
        else:
            lo, hi = box[name]
            const += k * (lo if k > 0 else hi)
    return coef, const


def share_bounds(
    sb: SymbolicBounds, facts: BoxFacts, box: RealBox, pair: Tuple[int, int], max_dims: int = 8
) -> Optional[Tuple[Fraction, Fraction]]:
    """(lower, upper) bounds of the biased share of ``box`` (a box of real inputs, uniform
    measure) for the pair of copies ``pair``, or None when the forms read opaque atoms."""
    i, j = pair
    if pair not in sb.pairs:
        return None
    full = Fraction(1)
    names = dict(sb.model.inputs)
    if any(n not in box for n in names.values()):
        return None
    ta, tb = sb.threshold(i), sb.threshold(j)

    widths = {n: float(hi - lo) for n, (lo, hi) in box.items()}

    def form(key):
        V, c, _ = facts.forms[key]
        return _coarse(V, c, names, box, widths, max_dims)

    def g_forms(k):
        t = sb.threshold(k)
        negated = sb.dag.nodes[t.cmp_node].kind in ("<", "<=")
        lo, neg = ("cmp", t.cmp_node), ("-cmp", t.cmp_node)
        return (neg, lo) if negated else (lo, neg)

    (la, na), (lb, nb) = g_forms(i), g_forms(j)
    fs = {}
    for key in (la, na, lb, nb, ("diff", i, j), ("-diff", i, j)):
        f = form(key)
        if f is None:
            return None
        fs[key] = f
    vol_le = {key: below_share(f, box) for key, f in fs.items()}  # >= share{f <= 0}

    def neg_part(key):  # vol{lower form > 0} >= full - vol{lower form <= 0}
        return full - vol_le[key]

    lower, upper = Fraction(0), Fraction(0)
    for pa, pb in bias_cases(ta, tb):
        # inner: L_a > 0 (p_a true) is "lower form of g_a > 0"; U_a < 0 is "lower form of -g_a > 0"
        in_a = neg_part(la if pa else na)
        in_b = neg_part(lb if pb else nb)
        lower += max(Fraction(0), in_a + in_b - full)
        # outer: p_a true needs U_a >= 0, i.e. (lower form of -g_a) <= 0
        outs = [vol_le[na if pa else la], vol_le[nb if pb else lb]]
        if pa and not pb:
            outs.append(vol_le[("-diff", i, j)])
        elif pb and not pa:
            outs.append(vol_le[("diff", i, j)])
        upper += min(outs)
    return _down(lower / full), min(Fraction(1), _up(upper / full))


GRID_EXP = -40  # masses on multiples of 2^-40 keep the sums of many boxes' masses short


def _down(x: Fraction) -> Fraction:
    return floor_grid(x, GRID_EXP)


def _up(x: Fraction) -> Fraction:
    return ceil_grid(x, GRID_EXP)

"""Exact weighted model integration (WMI) over SMT(LRA) formulas.

``wmi(formula, weight, domain)`` computes Σ_A ∫_{φ(x,A)} w(x,A) dx exactly (as a
Fraction) for a pysmt formula φ over bounded real variables and Booleans and a
piecewise-polynomial weight w; ``probability`` is the exact ratio of two such
integrals; ``integrate_polytope`` integrates a :class:`Poly` over a polytope.
"""

from .api import WMIResult, probability, wmi
from .cells import WMITimeout
from .integrate import UnboundedPolytopeError, integrate_polytope, integrate_polytope_iterated
from .model import WMIInputError
from .poly import Poly

__all__ = [
    "wmi",
    "probability",
    "WMIResult",
    "WMITimeout",
    "WMIInputError",
    "integrate_polytope",
    "integrate_polytope_iterated",
    "UnboundedPolytopeError",
    "Poly",
]

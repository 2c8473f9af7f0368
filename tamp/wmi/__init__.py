"""Exact weighted model integration (WMI) over SMT(LRA) formulas."""
from .poly import Poly
from .integrate import integrate_polytope, integrate_polytope_iterated, UnboundedPolytopeError

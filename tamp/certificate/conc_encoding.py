"""The checker's own translation of obligations to z3, for the concentration checker.

Built on the one translation of the language's operators (:class:`tamp.core.z3expr.Z3Translation`),
with what the lemmas of :mod:`axioms.lemmas` read off an encoder: ``log``, ``exp`` and ``sqrt``
are the uninterpreted functions ``self.log``, ``self.exp``, ``self.sqrt``; a ``sum`` that is not
unrolled is an uninterpreted function ``sumK`` of its bounds and of the values its body reads
(:meth:`sum_info` tells the lemmas which). Sound for a validity check: uninterpreted functions
assume nothing about the values, so a formula valid here is valid for the real functions (the
lemmas added by :mod:`tamp.certificate.solver` are true facts about them).

The checker does not import the prover (:mod:`tamp.certificate.conc_checker`), so this is its
copy of the small part of the prover's encoder it needs.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import z3

from lang import ast as A
from lang.errors import UnsupportedError
from lang.walk import free_vars, substitute
from tamp.core.z3expr import Z3Translation, sort_of


class CheckEncoder(Z3Translation):
    """Expressions → z3 terms for the variables of ``types`` (one constant ``name@0`` each)."""

    def __init__(self, types: Dict[str, A.Type]):
        super().__init__(UnsupportedError, "the checker")
        self.types = types
        self.log = z3.Function("log", z3.RealSort(), z3.RealSort())
        self.exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
        self.sqrt = z3.Function("sqrt", z3.RealSort(), z3.RealSort())
        self._sums: Dict[tuple, z3.FuncDeclRef] = {}
        self._sum_defs: Dict[str, Tuple[A.Sum, List[str]]] = {}

    def initial_env(self) -> Dict[str, z3.ExprRef]:
        return {n: z3.Const(f"{n}@0", sort_of(t)) for n, t in self.types.items() if t.name != "tuple"}

    def expr(self, e: A.Expr, env: Dict[str, z3.ExprRef]) -> z3.ExprRef:
        return self.translate(e, env)

    def sum_info(self, decl: z3.FuncDeclRef):
        """(the ``Sum``, the names of its free variables in argument order) of a ``sumK``."""
        return self._sum_defs.get(decl.name())

    def transcendental(self, name: str, arg: z3.ExprRef) -> z3.ExprRef:
        return {"log": self.log, "exp": self.exp, "sqrt": self.sqrt}[name](arg)

    def opaque_sum(self, e: A.Sum, lo: z3.ExprRef, hi: z3.ExprRef) -> z3.ExprRef:
        """One function per body (up to the names of its variables) of the bounds and the free
        variables' values: a sum is a function of exactly these."""
        names: List[str] = []
        for n in A.walk(e.body):
            if isinstance(n, A.Var) and n.name in free_vars(e.body) - {e.var} and n.name not in names:
                names.append(n.name)
        holes: Dict[str, A.Expr] = {n: A.Var(f"$sum.{k}") for k, n in enumerate(names)}
        holes[e.var] = A.Var("$sum")
        sorts = [z3.IntSort(), z3.IntSort()] + [self.env[n].sort() for n in names]
        key = (substitute(e.body, holes), tuple(s.sexpr() for s in sorts))
        if key not in self._sums:
            fname = f"sum{len(self._sums)}"
            self._sums[key] = z3.Function(fname, *sorts, z3.RealSort())
            self._sum_defs[fname] = (e, names)
        return self._sums[key](lo, hi, *[self.env[n] for n in names])

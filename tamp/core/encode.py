"""The z3 encoding of the language that the prover and the certificate checker share.

:class:`Encoder` is :class:`tamp.core.z3expr.Z3Translation` over a program's variable types:
a variable ``x`` is the z3 constant ``x@v`` of its type's sort, for a *version* ``v`` (SSA: a
fresh version per assignment); ``log``, ``exp`` and ``sqrt`` are three uninterpreted functions
of the reals; a ``sum`` that is not unrolled is an uninterpreted function of its bounds and of
the values of its body's free variables. Every such application is noted (:attr:`has_apps`),
so that the lemmas of :mod:`axioms.lemmas` can be added about it.

Why this is sound: an uninterpreted function assumes nothing about its values, so a formula
valid with ``log``/``exp``/``sqrt``/``sum`` uninterpreted is valid for the real functions (the
lemmas are true facts about those, added as hypotheses). A sum is a function of its bounds and
of the values its body reads, whatever they are called, so two sums with the same body up to
the names of its variables may share one function. This module only builds terms; whether a
formula is valid is decided elsewhere (``unsat`` of its negation, never ``unknown``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import AbstractSet, Any

import z3  # type: ignore[import-untyped,unused-ignore]  # z3 ships no type information

from lang import ast as A
from lang.errors import UnsupportedError
from lang.walk import free_vars, substitute

from .counts import interval_ends
from .z3expr import Term, Z3Translation, sort_of

__all__ = ["Encoder"]


class Encoder(Z3Translation):
    """Expressions → z3 terms over an environment: log/exp/sqrt are the uninterpreted functions
    ``self.log``, ``self.exp``, ``self.sqrt``, a sum that is not unrolled is an uninterpreted
    function of its bounds and free variables, and every such application is noted
    (``has_apps``) for the lemmas."""

    def __init__(self, types: Mapping[str, A.Type]):
        super().__init__(UnsupportedError, "the prover")
        self.types = types
        self.log = z3.Function("log", z3.RealSort(), z3.RealSort())
        self.exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
        self.sqrt = z3.Function("sqrt", z3.RealSort(), z3.RealSort())
        self._fresh = 0
        self._sums: dict[tuple[A.Expr, tuple[str, ...]], Any] = {}
        # set once this encoder has built a log/exp/sqrt or opaque sum application: until then
        # no formula of it can contain one, and the search for lemma terms is skipped
        self.has_apps = False
        self._env0: dict[str, Term] | None = None
        self._memo: dict[int, Term] = {}
        self._memo_nodes: list[A.Expr] = []  # keeps the memoised nodes alive, so their ids stay theirs
        self._sum_defs: dict[str, tuple[A.Sum, list[str]]] = {}

    def sum_info(self, decl: Any) -> tuple[A.Sum, list[str]] | None:
        """(the ``Sum`` expression, the names of its free variables in argument order) for one of
        this encoder's opaque sum functions, else None (used by the ``sum-*`` lemmas)."""
        return self._sum_defs.get(decl.name())

    # ------------------------------------------------------------------ variables
    def const(self, name: str, version: object = 0) -> Term:
        """The z3 constant for version ``version`` of variable ``name`` (None: the bare name)."""
        t = self.types.get(name)
        if t is None:
            raise UnsupportedError(f"the prover does not know the type of '{name}'")
        return z3.Const(f"{name}@{version}" if version is not None else name, sort_of(t))

    def fresh(self, name: str) -> Term:
        self._fresh += 1
        return self.const(name, f"s{self._fresh}")

    def initial_env(self, suffix: str = "0") -> dict[str, Term]:
        return {n: self.const(n, suffix) for n, t in self.types.items() if t.name != "tuple"}

    @property
    def env0(self) -> dict[str, Term]:
        """The initial environment, one shared dict (callers must not change it): expressions
        encoded over it are remembered, since the prover encodes the same candidate invariants
        and labels over it again and again."""
        if self._env0 is None:
            self._env0 = self.initial_env()
        return self._env0

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, env: Mapping[str, Term]) -> Term:
        """The z3 term of ``e`` over ``env`` (remembered per node over :attr:`env0`)."""
        if env is self._env0 and env is not None:
            memo = self._memo
            hit = memo.get(id(e))
            if hit is not None:
                return hit
            # e keeps its subtree alive, whose results the walk remembers (even if it fails
            # half-way), so that their ids stay theirs
            self._memo_nodes.append(e)
            return self.translate(e, env, memo)
        return self.translate(e, env)

    def transcendental(self, name: str, arg: Term) -> Term:
        self.has_apps = True
        return {"log": self.log, "exp": self.exp, "sqrt": self.sqrt}[name](arg)

    def bound_variable(self, name: str) -> Term:
        self.has_apps = True  # a quantifier: it may be one the sorted-mono lemma is about
        self._fresh += 1
        return z3.Int(f"{name}!q{self._fresh}")

    def opaque_sum(self, e: A.Sum, lo: Term, hi: Term) -> Term:
        """A function of the bounds and of the free variables' values, one per body up to the
        names of its variables: the free variables are its arguments in the order they first
        occur in the body, so alpha-equivalent bodies share one function (``x[i] == b`` summed
        inside ``forall b`` and ``x[j] == b$`` summed inside ``forall b$``, the claim's
        quantifier renamed apart by :mod:`tamp.cfa.bound_names`, are the same function of
        ``x`` and the bound value). Sound: a sum is a function of its bounds and of the values
        its body reads, whatever they are called. A count of the integers of the range passing
        threshold tests (``sum(u in 1..=T: u <= a ? 1 : 0)``) is its exact value instead,
        ``max(0, min(U…) - max(L…) + 1)`` (:mod:`tamp.core.counts`)."""
        count = self._interval_count(e)
        if count is not None:
            return count
        self.has_apps = True
        names = _first_occurrences(e.body, free_vars(e.body) - {e.var})
        holes: dict[str, A.Expr] = {n: A.Var(f"$sum.{k}") for k, n in enumerate(names)}
        holes[e.var] = A.Var("$sum")
        sorts = [z3.IntSort(), z3.IntSort()] + [self.env[n].sort() for n in names]
        # one function per body shape and argument sorts; bounds and free values are arguments
        key = (substitute(e.body, holes), tuple(s.sexpr() for s in sorts))
        if key not in self._sums:
            fname = f"sum{len(self._sums)}"
            self._sums[key] = z3.Function(fname, *sorts, z3.RealSort())
            self._sum_defs[fname] = (e, names)
        return self._sums[key](lo, hi, *[self.env[n] for n in names])

    def _interval_count(self, e: A.Sum) -> Term | None:
        """The exact count of :func:`tamp.core.counts.interval_ends` as a z3 term, or None."""

        def is_int(x: A.Expr) -> bool:
            try:
                return bool(z3.is_int(self.translate(x, self.env)))
            except (UnsupportedError, z3.Z3Exception):
                return False

        ends = interval_ends(e, is_int)
        if ends is None:
            return None
        los = [self.translate(x, self.env) for x in ends[0]]
        his = [self.translate(x, self.env) for x in ends[1]]
        if not all(z3.is_int(x) for x in los + his):  # the range's own ends too
            return None
        lo, hi = los[0], his[0]
        for x in los[1:]:
            lo = z3.If(x > lo, x, lo)
        for x in his[1:]:
            hi = z3.If(x < hi, x, hi)
        return z3.ToReal(z3.If(hi >= lo, hi - lo + 1, 0))


def _first_occurrences(e: A.Expr, names: AbstractSet[str]) -> list[str]:
    """The names of ``names`` in the order of their first occurrence in ``e`` (pre-order)."""
    out: list[str] = []
    for n in A.walk(e):
        if isinstance(n, A.Var) and n.name in names and n.name not in out:
            out.append(n.name)
    return out + sorted(set(names) - set(out))

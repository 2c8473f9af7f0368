"""Axiom proposals for a sampling statement, derived from the specification and the bound.

For a ``"choice"`` family every choice is proposed. For a ``"real"`` family (a tail bound
with failure parameter f) the parameter is *derived*, not enumerated blindly:

* from the postcondition and bound: for every ``log(E)`` in them, ``f = 1/E`` (so that the
  family's ``log(1/f)`` becomes ``log(E)``), ``f = 2/E`` (for ``log(2/f)`` shapes) and
  ``f = 1/(2E)`` (one-sided ``log(1/(2f))``);
* from the budget: ``f = β/k`` for k = 1 … the number of real-parameter samplings;
* for a family whose ``factor_shares`` is True (the uniform range tails), also ``β`` with one
  factor of its product taken out (``n * a / M`` gives ``a / M`` and ``n / M``): a sampling
  inside a loop of ``n`` iterations whose claim sums ``n`` equal shares gets its share;
* when the budget is a sum of terms (as written, or after sympy's ``expand``) and the program
  has at most that many real-parameter samplings, the terms themselves (:func:`term_shares`):
  ``a*T + b*T`` for ``x ~ exp(0, 1/a); y ~ exp(0, 1/b)`` gives the first draw ``a*T`` and the
  second ``b*T``. A term is proposed to a sampling whose parameters read one of the term's own
  variables (those not common to every term); a sampling no term matches gets every term
  (at most ``MAX_TERMS``), so an assignment is found without trying all permutations.

A family whose ``log_parameters`` is False (its threshold is not a ``log(c/f)``, e.g. the exact
discrete-Laplace tail) gets the budget's shares only: the ``log(E)`` candidates are made for
the other shape, and every extra proposal costs time on the claims that do not prove. A family
whose ``loop_proposals`` is False is not proposed to the loop engine (``in_loop``), whose search
runs over combinations of every sampling's proposals (a false claim tries them all).

A family whose ``ratio_shares`` is True (Chebyshev, whose share of a claim is ``V/t²``) gets
only the budget's term shares and the budget itself that divide by a non-constant
(:func:`ratio_shares`), after the other families' proposals, so claims it does not fit pay
little for it.

Each proposal is joined (union bound) with the cost-0 support facts of the distribution
(families whose name starts with ``support``), so a sampling always tells what it can for free.
Proposals are ordered cost-0 first, then the term shares, then in the order above (literal
costs sorted, symbolic ones after).
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import axioms
from axioms.base import union_bound
from axioms.uniform_range import window_thresholds
from lang import ast as A
from lang.walk import free_vars, operands
from tamp.prover.base.exprs import divide, reciprocal
from tamp.prover.trace.roots import atom_polynomials


def _families(dist: A.Call):
    return axioms.families_for(dist)


def _instantiate(fam, targets, dist, param):
    try:
        return fam.instantiate(tuple(targets), dist, param)
    except (ValueError, TypeError, NotImplementedError):
        return None


def log_arguments(exprs: Sequence[A.Expr]) -> List[A.Expr]:
    """The arguments E of every ``log(E)`` in ``exprs``, without repeats."""
    out = []
    for e in exprs:
        for n in A.walk(e):
            if isinstance(n, A.Call) and n.func == "log" and n.args and n.args[0] not in out:
                out.append(n.args[0])
    return out


def real_parameters(spec_exprs: Sequence[A.Expr], beta: A.Expr, n_real: int, from_logs: bool = True) -> List[A.Expr]:
    """Candidate values of a real failure parameter f (see the module docstring); only the
    budget's shares when ``from_logs`` is False."""
    out: List[A.Expr] = []
    for E in log_arguments(spec_exprs) if from_logs else ():
        r = reciprocal(E)
        for f in (
            r,
            A.Binary("*", A.num(2), r) if not isinstance(r, A.Num) else A.Num(2 * r.value, False),
            A.Binary("/", r, A.num(2)) if not isinstance(r, A.Num) else A.Num(r.value / 2, False),
        ):
            if f not in out:
                out.append(f)
    for k in range(1, max(n_real, 1) + 1):
        f = divide(beta, k)
        if f not in out:
            out.append(f)
    return out


def factor_shares(beta: A.Expr) -> List[A.Expr]:
    """``β`` with one non-constant factor of its product (or of its quotient's numerator) taken
    out, in the order of the factors: only a proposal for ``f``, checked like any other."""
    if isinstance(beta, A.Binary) and beta.op == "/":
        shares: List[A.Expr] = [A.Binary("/", top, beta.right) for top in factor_shares(beta.left)]
        return shares + ([A.Binary("/", A.num(1), beta.right)] if _variable(beta.left) else [])
    factors = operands(beta, "*")
    out: List[A.Expr] = []
    if len(factors) < 2:
        return out
    for i, f in enumerate(factors):
        if not _variable(f):
            continue
        rest = factors[:i] + factors[i + 1 :]
        prod = rest[0]
        for g in rest[1:]:
            prod = A.Binary("*", prod, g)
        if prod not in out:
            out.append(prod)
    return out


#: the most terms of a summed budget proposed as shares (a longer sum is not split)
MAX_TERMS = 6


def budget_terms(beta: A.Expr) -> List[A.Expr]:
    """The terms of ``beta`` as a sum: its ``+`` operands as written, or else (when it has a
    ``+`` inside, e.g. ``(a + b) * T``) those of sympy's expansion; [] for a single term."""
    terms = list(operands(beta, "+"))
    if len(terms) < 2 and any(isinstance(n, A.Binary) and n.op == "+" for n in A.walk(beta)):
        from tamp.prover.base.simplify import from_sympy, to_sympy  # sympy only when needed

        x, conv = to_sympy(beta)
        ex = x.expand()
        if ex.is_Add:
            terms = [from_sympy(t, conv) for t in ex.as_ordered_terms()]
    if not 2 <= len(terms) <= MAX_TERMS:
        return []
    return terms


def term_shares(stmt: A.Sample, beta: A.Expr, n_real: int) -> List[A.Expr]:
    """Terms of a summed budget proposed as this sampling's failure parameter (see the module
    docstring): those whose own variables meet the sampling's parameters, or, when none does,
    every term. Nothing when the budget is one term or has fewer terms than real samplings."""
    terms = budget_terms(beta)
    if not terms or len(terms) < n_real:
        return []
    names = [set(free_vars(t)) for t in terms]
    common = set.intersection(*names)
    params: set = set()
    for arg in stmt.dist.args:
        params |= set(free_vars(arg))
    matched = [t for t, vs in zip(terms, names) if (vs - common) & params]
    return matched or terms


def ratio_shares(stmt: A.Sample, beta: A.Expr, n_real: int) -> List[A.Expr]:
    """The parameters proposed to a family whose ``ratio_shares`` is True (Chebyshev's
    ``V/s²``, :mod:`axioms.chebyshev`): the budget's term shares (:func:`term_shares`) and the
    budget itself, each only when it is a quotient by a non-constant (a share ``V/t²`` names the
    deviation ``t``; ``p`` or ``p/4`` names none). Only a proposal: the trace check decides."""
    out: List[A.Expr] = []
    for f in term_shares(stmt, beta, n_real) + [beta]:
        if f not in out and any(isinstance(n, A.Binary) and n.op == "/" and _variable(n.right) for n in A.walk(f)):
            out.append(f)
    return out


def _variable(e: A.Expr) -> bool:
    return bool(free_vars(e))


def support_instance(stmt: A.Sample):
    """The union of every support family's (cost-0) axiom for this sampling, or None."""
    insts = []
    for fam in _families(stmt.dist):
        if not fam.name.startswith("support"):
            continue
        params = list(fam.choices(stmt.dist)) if fam.param_kind == "choice" else [None]
        inst = _instantiate(fam, stmt.targets, stmt.dist, params[0] if params else None)
        if inst is not None:
            insts.append(inst)
    if not insts:
        return None
    if len(insts) == 1:
        return insts[0]

    return union_bound(insts)


#: window proposals per sampling (a sampling tested against many expressions would otherwise
#: get the square of their number)
MAX_WINDOWS = 32


def window_parameters(stmt: A.Sample, atoms: Sequence[A.Expr]) -> List[Tuple[A.Expr, A.Expr]]:
    """Pairs of thresholds ``(t1, t2)`` for :class:`axioms.uniform_range.UniformRangeCut`: one
    read off a test of the target in ``atoms`` (the program's conditions), the other either
    such a test too or the end of the range (nothing paid there)."""
    target = stmt.targets[0]
    if len(stmt.targets) != 1 or not isinstance(target, A.Var) or len(stmt.dist.args) != 2:
        return []
    lows, highs = window_thresholds(target.name, atoms)
    lo, hi = stmt.dist.args
    none_low: A.Expr = A.Binary("-", lo, A.num(1))
    none_high: A.Expr = A.Binary("+", hi, A.num(1))
    out: List[Tuple[A.Expr, A.Expr]] = [(t1, none_high) for t1 in lows] + [(none_low, t2) for t2 in highs]
    out += [(t1, t2) for t1 in lows for t2 in highs]
    return out[:MAX_WINDOWS]


def proposals(
    stmt: A.Sample,
    spec_exprs: Sequence[A.Expr],
    beta: A.Expr,
    n_real: int,
    in_loop: bool = False,
    atoms: Sequence[A.Expr] = (),
) -> list:
    """Axiom instances for ``stmt``, cheapest (cost 0) first, each joined with support facts;
    ``in_loop``: for the loop engine, without the families whose ``loop_proposals`` is False;
    ``atoms``: the program's conditions, from which a family whose ``window_proposals`` is True
    (the uniform range's window) reads its thresholds."""
    sup = support_instance(stmt)
    raw: list = []
    late: list = []
    for fam in _families(stmt.dist):
        if fam.name.startswith("support"):
            continue
        if in_loop and not getattr(fam, "loop_proposals", True):
            continue
        params: List[Any]
        if getattr(fam, "window_proposals", False):
            params = list(window_parameters(stmt, atoms))
        elif getattr(fam, "root_proposals", False):
            params = list(atom_polynomials(atoms))
        elif fam.param_kind == "choice":
            params = list(fam.choices(stmt.dist))
        elif getattr(fam, "ratio_shares", False):
            params = ratio_shares(stmt, beta, n_real)
        else:
            params = term_shares(stmt, beta, n_real)  # the most specific first
            params += [
                f
                for f in real_parameters(spec_exprs, beta, n_real, getattr(fam, "log_parameters", True))
                if f not in params
            ]
            if getattr(fam, "factor_shares", False):
                params += [f for f in factor_shares(beta) if f not in params]
        for prm in params:
            inst = _instantiate(fam, stmt.targets, stmt.dist, prm)
            if inst is not None:
                (late if getattr(fam, "ratio_shares", False) else raw).append(inst)
    raw += late  # the ratio-share families (Chebyshev) after the others' proposals
    out, seen = [], set()
    if sup is not None:
        out.append(sup)
        seen.add((sup.bad, sup.cost))
    for inst in raw:
        if sup is not None:
            joined = union_bound([inst, sup], inst.family)
            joined = type(inst)(inst.family, joined.bad, joined.cost, joined.side, inst.param, inst.note)
            inst = joined
        key = (inst.bad, inst.cost)
        if key in seen:
            continue
        seen.add(key)
        out.append(inst)
    zero = [i for i in out if isinstance(i.cost, A.Num) and i.cost.value == 0]
    rest = [i for i in out if not (isinstance(i.cost, A.Num) and i.cost.value == 0)]
    # literal costs in increasing order, symbolic ones after, stable
    lit = sorted([i for i in rest if isinstance(i.cost, A.Num)], key=lambda i: i.cost.value)
    sym = [i for i in rest if not isinstance(i.cost, A.Num)]
    return zero + lit + sym

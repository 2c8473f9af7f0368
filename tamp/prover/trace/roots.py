"""Proposals for the root-counting axiom (:mod:`axioms.roots`): which polynomial to name at a
uniform draw so that the union bound covers "a nonzero polynomial of the draws vanishes".

Only proposals — nothing here is trusted: the trace check asks the solver that the failure
implies the union of the axioms' events and that their costs add up to at most the bound.

Two sources:

* :func:`atom_polynomials`: the differences ``a - b`` of the program's equalities and
  disequalities (the polynomial a single draw must avoid);
* :func:`chain_polynomials`: for a straight-line program (no branch, no loop), each
  ``ensures`` clause ``a != b`` with the assignments substituted, so a polynomial ``P`` in the
  draws and inputs; at the last draw ``P`` itself, and at each earlier draw the leading
  coefficient (among those not the zero polynomial) of the polynomial proposed at the next
  draw: the Schwartz–Zippel induction, written as one union bound (see :mod:`axioms.roots`).
"""

from __future__ import annotations

from typing import List, Optional

from axioms.roots import coefficients, leading_nonzero
from lang import ast as A
from lang.walk import free_vars, substitute


def _difference(e: A.Expr) -> Optional[A.Expr]:
    if isinstance(e, A.Unary) and e.op == "!":
        return _difference(e.operand)
    if isinstance(e, A.Binary) and e.op in ("==", "!="):
        if isinstance(e.right, A.Num) and e.right.value == 0:
            return e.left
        return A.Binary("-", e.left, e.right)
    return None


def atom_polynomials(atoms) -> List[A.Expr]:
    """Candidate polynomials read off the program's conditions that are themselves an equality
    or a disequality (``a == b``, ``a != b``: ``a - b``; ``p != 0``: ``p``; also negated), the
    chain polynomials among them. A test inside a conjunction or disjunction proposes nothing:
    its point events are the other families' (and more proposals at every draw slow the search)."""
    out: List[A.Expr] = []
    for atom in atoms:
        d = _difference(atom)
        if d is not None and d not in out:
            out.append(d)
    return out


def _straight_line(cfa) -> Optional[List[A.Stmt]]:
    """The statements from entry to exit when the CFA is one path, else None."""
    out: List[A.Stmt] = []
    node, seen = cfa.entry, set()
    while node != cfa.exit:
        if node in seen:
            return None
        seen.add(node)
        outs = cfa.out_edges(node)
        if len(outs) != 1:
            return None
        _u, node, _k, d = outs[0]
        out.append(d["stmt"])
    return out


def chain_polynomials(cfa) -> List[A.Expr]:
    """The Schwartz–Zippel chain of each ``ensures`` disequality of a straight-line program."""
    stmts = _straight_line(cfa)
    if stmts is None:
        return []
    draws: List[str] = []
    for st in stmts:
        if isinstance(st, A.Sample):
            if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var) or st.targets[0].name in draws:
                return []
            draws.append(st.targets[0].name)
    out: List[A.Expr] = []
    for ens in cfa.ensures:
        p = _difference(ens) if isinstance(ens, A.Binary) and ens.op == "!=" else None
        if p is None:
            continue
        for st in reversed(stmts):  # substitute the assignments, last first
            if isinstance(st, A.Assign):
                if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var):
                    p = None
                    break
                p = substitute(p, {st.targets[0].name: st.value})
        if p is None:
            continue
        q: Optional[A.Expr] = p
        for i in range(len(draws) - 1, -1, -1):
            if q is None:
                break
            if draws[i] in free_vars(q) and coefficients(q, draws[i]) is not None and q not in out:
                out.append(q)
            if i > 0 and draws[i] in free_vars(q):
                q = leading_nonzero(q, draws[i], draws[:i])
    return out

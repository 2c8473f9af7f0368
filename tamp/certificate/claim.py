"""The claim a certificate must prove, rebuilt from the source file alone.

The checker never takes the claim from the certificate: it parses and type-checks FILE,
keeps the program's failure-bound ``ensures`` clauses (exactly as ``tamp prove`` splits them,
:func:`lang.speckind.clause_kind`), fixes ``--input`` values the same way (:func:`lang.inputs.fix_inputs`),
applies ``--bound`` if given, and compiles the CFA (:func:`tamp.cfa.build_cfa`).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional

from lang import ast as A
from lang.inputs import fix_inputs
from lang.speckind import FAILURE_BOUND, clause_kind
from lang.walk import free_vars
from tamp.cfa import build_cfa
from tamp.cfa.dependence import conditioning_assumes, describe
from tamp.show import show_expr

from .format import Rejected


def failure_program(prog: A.Program, inputs: Optional[Dict[str, object]] = None) -> A.Program:
    """``prog`` restricted to its failure-bound clauses, with inputs fixed (as ``tamp prove`` does)."""
    sub = dataclasses.replace(prog, ensures=tuple(e for e in prog.ensures if clause_kind(e) == FAILURE_BOUND))
    if inputs:
        sub = fix_inputs(sub, inputs)
    return sub


def claim_cfa(src: A.SourceFile, prog: A.Program, bound: Optional[A.Expr], inputs=None):
    """The CFA (with requires, ensures and bound β) that a proof of ``prog`` must be about."""
    return build_cfa(failure_program(prog, inputs), bound, src.path, src.text)


def checked_claim(src: A.SourceFile, prog: A.Program, proved: A.Expr, bound: Optional[A.Expr], inputs=None):
    """``(claim_bound, program, cfa)`` of the claim a certificate proving bound ``proved`` must be
    about: ``bound`` (``--bound``) when given, the certificate's own for ``fails ?``, else the
    program's ``fails``; raises :class:`Rejected` when the certificate proves another bound or the
    claim is outside the proof rules (:func:`well_formed_claim`)."""
    if bound is not None:
        claim_bound = bound
    elif isinstance(prog.fails, A.Hole):
        claim_bound = proved  # `fails ?`: the certificate's bound is the answer it proves
    elif prog.reliability is not None and prog.fails is None:
        # `reliability E`: the bound is the CFA's `1 - E` (written `D` for `reliability 1 - D`)
        claim_bound = build_cfa(failure_program(prog), None, src.path, src.text).bound
    else:
        claim_bound = prog.fails if prog.fails is not None else A.num(0)
    if proved != claim_bound:
        raise Rejected(
            f"the certificate proves the bound {show_expr(proved)}, but the claim checked is {show_expr(claim_bound)}"
        )
    sub = failure_program(dataclasses.replace(prog, fails=claim_bound), inputs)
    cfa = build_cfa(sub, claim_bound, src.path, src.text)
    problem = well_formed_claim(cfa)
    if problem:
        raise Rejected(f"the claim is outside the proof rules: {problem}")
    return claim_bound, sub, cfa


def well_formed_claim(cfa) -> str:
    """'' when the claim has the shape the proof rules assume, else the problem: ``requires``
    and β read only inputs, no statement writes an input, every assignment has one target, and
    no user ``assume`` conditions on a sampled value (the rules read a run stopped by an
    ``assume`` as not failing — the precondition meaning — which is no proof of a conditional
    bound; the dependence analysis is re-run here on the rebuilt CFA)."""
    params = {p.name for p in cfa.params}
    for r in cfa.requires:
        extra = set(free_vars(r)) - params
        if extra:
            return f"`requires` reads non-inputs {sorted(extra)}"
    extra = set(free_vars(cfa.bound)) - params
    if extra:
        return f"the bound reads non-inputs {sorted(extra)}"
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if isinstance(st, A.Assign) and len(st.targets) != 1:
            return f"CFA edge {u}->{v} assigns several targets"
        for t in getattr(st, "targets", ()):
            base = t
            while isinstance(base, A.Index):
                base = base.base
            if isinstance(base, A.Var) and base.name in params:
                return f"CFA edge {u}->{v} writes the input '{base.name}'"

    found = conditioning_assumes(cfa)
    if found:
        return (
            describe(found[0], cfa.path) + "; the certificate contains no argument for the "
            "conditional bound (a lower bound on the probability of the condition)"
        )
    return ""

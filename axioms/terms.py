"""The terms a formula's lemmas are about: the ground applications of ``log``/``exp``/``sqrt``
and of an encoder's opaque ``sumK`` functions (:class:`tamp.core.encode.Encoder`), and the
closed ``forall`` s saying an array's neighbours are in order.

:func:`transcendental_apps` finds them; :func:`axioms.lemmas.lemma_instances` states true facts
about them, which a caller adds as hypotheses. Why this is sound: the lemmas are facts about
the real functions whatever terms they are instantiated at, so *which* terms are picked only
decides how strong the hypotheses are, never whether they are true; a term left out (one
reading a quantified variable) makes a query weaker, so its answer is a proof or "unknown".
The prover and the certificate checker share this one walk.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

import z3
from z3.z3 import _to_expr_ref

from tamp.core.z3expr import raw_api

from .lemmas import sorted_shape, sum_placeholder

__all__ = ["transcendental_apps"]


_SUM_NAME = re.compile(r"sum[0-9]+")


def transcendental_apps(f: z3.ExprRef, names=("log", "exp", "sqrt")) -> List[z3.ExprRef]:
    """Every *ground* application of log/exp/sqrt (and of the encoder's opaque ``sumK``
    functions) inside ``f``, without repeats.

    An application under a quantifier that reads the quantified variable (``log(j)``, or the
    sum of ``sum(j in 0..m: q[k*m + j])`` inside ``forall k``: its function takes ``k`` as an
    argument) is left out: its lemma instances would mention a bound variable outside its
    quantifier, which z3 rejects ("Formulas should not contain unbound variables"). Without
    those instances the query is only weaker: the answer is a proof or "unknown". A sum whose
    bounds are ground but whose free values read the bound variable is returned *generalised*
    (:func:`_generalised`): its lemmas then hold for every value of those arguments. A closed
    ``forall`` saying an array's neighbours are in order (:func:`axioms.lemmas.sorted_shape`) is
    returned too, for its ``sorted-mono`` lemma.

    The walk runs on z3's C API directly (raw pointers, no Python wrapper per node: the terms
    are kept alive by ``f``); only the applications found are wrapped. Same result, in the same
    order, as walking ``children()``, about ten times faster on the prover's large queries."""
    lib, ctx = raw_api(), f.ctx_ref()
    app_kind, quant_kind = z3.Z3_APP_AST, z3.Z3_QUANTIFIER_AST
    uninterpreted = z3.Z3_OP_UNINTERPRETED
    wanted: Dict[int, Optional[bool]] = {}  # decl id -> a log/exp/sqrt (True, unary), a sumK (False), neither (None)
    var_kind = z3.Z3_VAR_AST
    seen, out, stack = set(), [], [(f.as_ast(), False)]
    general: List[tuple] = []  # sums under a quantifier whose bounds are ground, their values not
    ground: Dict[int, bool] = {}  # ast id -> no bound variable inside (asked under quantifiers only)

    def is_ground(t) -> bool:
        todo, ok = [t], True
        while todo and ok:
            x = todo.pop()
            xid = lib.Z3_get_ast_id(ctx, x)
            hit = ground.get(xid)
            if hit is not None:
                ok = hit
                continue
            k = lib.Z3_get_ast_kind(ctx, x)
            if k == var_kind or k == quant_kind:  # a quantifier inside an argument: not a term for lemmas
                ok = False
            elif k == app_kind:
                todo.extend(lib.Z3_get_app_arg(ctx, x, i) for i in range(lib.Z3_get_app_num_args(ctx, x)))
        ground[lib.Z3_get_ast_id(ctx, t)] = ok
        return ok

    while stack:
        t, quantified = stack.pop()
        tid = lib.Z3_get_ast_id(ctx, t)
        if tid in seen:
            continue
        seen.add(tid)
        kind = lib.Z3_get_ast_kind(ctx, t)
        if kind == app_kind:
            n = lib.Z3_get_app_num_args(ctx, t)
            d = lib.Z3_get_app_decl(ctx, t)
            if lib.Z3_get_decl_kind(ctx, d) == uninterpreted:
                did = lib.Z3_get_ast_id(ctx, lib.Z3_func_decl_to_ast(ctx, d))
                w = wanted.get(did)
                if w is None and did not in wanted:
                    name = lib.Z3_get_symbol_string(ctx, lib.Z3_get_decl_name(ctx, d))
                    name = name.decode() if isinstance(name, bytes) else name
                    w = True if name in names else (False if _SUM_NAME.fullmatch(name) else None)
                    wanted[did] = w
                if ((w is True and n == 1) or (w is False and n >= 2)) and (not quantified or is_ground(t)):
                    out.append(_to_expr_ref(t, f.ctx))
                elif (
                    w is False
                    and n >= 2
                    and is_ground(lib.Z3_get_app_arg(ctx, t, 0))
                    and is_ground(lib.Z3_get_app_arg(ctx, t, 1))
                ):
                    general.append((t, n))
            stack.extend((lib.Z3_get_app_arg(ctx, t, k), quantified) for k in range(n))
        elif kind == quant_kind:
            if not quantified:
                q = _to_expr_ref(t, f.ctx)
                if sorted_shape(q) is not None:  # neighbours in order: the sorted-mono lemma's trigger
                    out.append(q)
            stack.append((lib.Z3_get_quantifier_body(ctx, t), True))
    known = {t.get_id() for t in out}
    for t, n in general:
        g = _generalised(_to_expr_ref(t, f.ctx), [is_ground(lib.Z3_get_app_arg(ctx, t, k)) for k in range(n)])
        if g.get_id() not in known:
            known.add(g.get_id())
            out.append(g)
    return out


def _generalised(t: z3.ExprRef, ground: List[bool]) -> z3.ExprRef:
    """The sum application ``t`` with each free-value argument that reads a bound variable
    replaced by the placeholder of its position (:func:`axioms.lemmas.sum_placeholder`): its
    lemmas are then stated for every value of those arguments (``forall b``), which is what a
    claim ``forall b in 0..m: cnt[b] == sum(j in 0..i: x[j] == b ? 1 : 0)`` needs unfolded."""
    args = [a if ground[k] or k < 2 else sum_placeholder(k, a.sort()) for k, a in enumerate(t.children())]
    return t.decl()(*args)

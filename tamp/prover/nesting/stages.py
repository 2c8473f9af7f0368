"""The stage product (:mod:`tamp.cfa.stages`): a claim ``1 - X``, ``X`` a product of factors,
proved as a first stage (the prefix and a loop's first iteration) reaching ``I`` with chance at
least ``a`` and a second stage (the other iterations and the rest) reaching the claim from every
state satisfying ``I`` with chance at least ``b``, where ``a`` and ``b`` split ``X``'s factors.

The factors are only proposals: the rule proves the claim only when the side conditions of
:func:`tamp.cfa.stages.stage_composition` (the loop runs, ``b >= 0`` or ``a >= 0``, ``1 - a·b <= β``) are valid
under ``requires`` and both stage programs are proved, each by the whole portfolio. Why this gives
the claim is :mod:`tamp.cfa.stages`'s argument; ``tamp check-proof`` rebuilds both stages and
re-checks the side conditions and both proofs (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import itertools
import time
from typing import Callable, List, Optional, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from tamp.cfa import CFA, build_cfa
from tamp.cfa.nesting import _product as _product_of
from tamp.cfa.stages import one_minus, stage_composition, stage_cuts, stage_programs
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

from .prove import NestResult, _factors_of, _holds, _line, inner_method

__all__ = ["try_stages", "splits"]

#: at most this many factors are split (2^n - 2 ordered splits)
MAX_FACTORS = 4


def splits(x: A.Expr) -> List[Tuple[A.Expr, A.Expr]]:
    """``(a, b)`` with ``a·b`` the factors of ``x`` (both nonempty), first the splits that give
    the first stage fewer factors."""
    fs = _factors_of(x, "*")
    if len(fs) < 2 or len(fs) > MAX_FACTORS:
        return []
    out = []
    for k in range(1, len(fs)):
        for pick in itertools.combinations(range(len(fs)), k):
            a = _product_of([fs[i] for i in pick])
            b = _product_of([fs[i] for i in range(len(fs)) if i not in pick])
            out.append((a, b))
    return out


def try_stages(
    program: A.Program, cfa: CFA, t0: float, deadline: Optional[float], prove: Callable[[A.Program, CFA], ProofResult]
):
    """``(NestResult or None, why)``: the stage product on ``program`` (why '' when its bound is
    not ``1 - X`` with ``X`` a product, or it has no loop to cut)."""
    x = one_minus(cfa.bound)
    if x is None or len(program.ensures) != 1:
        return None, ""
    why = ""
    for cut in stage_cuts(program):
        for a, b in splits(x):
            if deadline is not None and time.monotonic() > deadline:
                return None, why
            got = stage_programs(program, cfa.types, cut, a, b)
            if got is None:
                continue
            one, two = got
            try:
                if not _holds(cfa, stage_composition(program, cfa.bound, cut, a, b)):
                    continue
                r2 = prove(two, build_cfa(two, None, cfa.path))
                if r2.verdict != "proved":
                    why = why or (
                        f"the stage product: the iterations after the first of the loop at line "
                        f"{_line(program.body.stmts[cut])} were not proved to keep the claim with chance "
                        f"{show_expr(b)}"
                    )
                    continue
                r1 = prove(one, build_cfa(one, None, cfa.path))
            except (TampError, z3.Z3Exception):
                continue
            if r1.verdict != "proved":
                continue
            return NestResult(
                cfa.name,
                "failure-bound",
                "proved",
                time.monotonic() - t0,
                show_expr(cfa.bound),
                f"the first iteration of the loop at line {_line(program.body.stmts[cut])} (with what precedes it) "
                f"succeeds with probability at least {show_expr(a)} (proved by {inner_method(r1)}), the rest from "
                f"there with probability at least {show_expr(b)} (proved by {inner_method(r2)}): the chances multiply",
                cfa=cfa,
                stats={**r2.stats, "method": "nesting"},
                form="stages",
                per_iteration=a,
                inner=r2,
                pieces={"iter": r2, "first": r1},
                second=b,
                cut=cut,
            ), ""
    return None, why

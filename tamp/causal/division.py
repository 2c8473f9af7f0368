"""Division by zero in an analysed program: a located error, never a hole in the analysis.

Symbolic execution (:mod:`.symexec`) notes, for every ``/``, ``div`` and ``mod``, the condition
under which it is reached with a zero divisor. :func:`check_divisions` asks z3 whether some
input allowed by ``requires`` meets that condition; if so, the program is not defined there and
the user gets ``file:line:col: error: division by zero …`` with such an input, exactly as the
simulator reports a division by zero at a concrete input.
"""

from __future__ import annotations

from typing import Dict, Sequence

import z3

from . import terms as T
from .dag import compile_dag
from .result import show
from .smt import model_value, translate, z3_var
from .symexec import Context, Final

TIMEOUT_MS = 10_000


def check_divisions(
    fin: Final,
    requires: Sequence[T.Term],
    sorts: Dict[str, str],
    fixed: Dict[str, object],
    ctx: Context,
    extra: Sequence[object] = (),
) -> None:
    """Raise a located error for the first division of ``fin`` whose divisor can be 0 at an input
    satisfying ``requires`` and the z3 constraints ``extra`` (the free inputs: ``sorts``; the
    ``fixed`` ones are shown with the input)."""
    for bad, node in fin.divisions:
        cond = T.op("and", *requires, bad)
        if cond is T.FALSE:
            continue
        dag = compile_dag([cond])
        zv = {name: z3_var(name, sort) for name, sort in sorts.items()}
        s = z3.Solver()
        s.set("timeout", TIMEOUT_MS)
        s.add(*translate(dag, zv), *extra)
        r = s.check()
        if r == z3.unsat:
            continue
        if r == z3.sat:
            m = s.model()
            point = dict(fixed)
            point.update({n: model_value(m, zv[n], sorts[n]) for n in sorted(set(dag.inputs()) & set(zv))})
            at = ", ".join(f"{n} = {show(v)}" for n, v in point.items() if v is not None)
            raise ctx.error(
                "division by zero: the divisor is 0 for an input allowed by `requires`" + (f" ({at})" if at else ""),
                node,
            )
        raise ctx.error(
            f"cannot show that this divisor is never 0 ({s.reason_unknown()}); the causal "
            "analysis needs every division to be defined on the whole region",
            node,
        )

"""Candidates at a loop's exit: the postcondition read back through the code after the loop.

A loop followed by straight-line code before the program ends (``last := i``, a count copied
out) is judged by a postcondition written in terms of that code's results (``forall j in
0..last: …``). The invariant the loop needs is the postcondition *as it reads at the loop's
exit*: pushed back through the statements between the exit and the end of the program
(``forall j in 0..i: …``). :func:`tamp.prover.loops.invariants.node_pools` pushes candidates back
too, but only into the nodes before them: the loop head gets the form, its body does not, so
Houdini cannot carry it around the loop. Offered as pool candidates (every node), the prefix
machinery applies to them like to the postcondition itself.

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

from typing import List, Optional

from lang import ast as A
from tamp.prover.base.wp import push_back

#: statements followed from a loop's exit towards the end of the program
MAX_TAIL = 16


def _tail(cfa, start: int) -> Optional[List[A.Stmt]]:
    """The statements of the one path from ``start`` to the program's exit, if it has no branch,
    sampling or loop on the way (else None)."""
    out: List[A.Stmt] = []
    n = start
    while n != cfa.exit:
        outs = list(cfa.out_edges(n))
        if len(outs) != 1 or len(out) >= MAX_TAIL or n in cfa.loop_heads:
            return None
        _u, v, _k, d = outs[0]
        st = d["stmt"]
        if isinstance(st, A.Sample) or d.get("back"):
            return None
        out.append(st)
        n = v
    return out


def exit_candidates(cfa, loops, post: List[A.Expr]) -> List[A.Expr]:
    """Each conjunct of ``post`` pushed back from the program's end to the exit of every loop
    whose exit is followed by straight-line code only, when that changes it."""
    out: List[A.Expr] = []
    for _h, lp in sorted(loops.items()):
        if lp.get("exit") is None:
            continue
        stmts = _tail(cfa, lp["exit"][1])
        if not stmts:
            continue
        for c in post:
            e: Optional[A.Expr] = c
            for st in reversed(stmts):
                e = push_back(st, e) if e is not None else None
            if e is not None and e != c and not isinstance(e, A.BoolLit) and e not in out:
                out.append(e)
    return out

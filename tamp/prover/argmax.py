"""Candidate loop invariants for *scans*: loops that compare the element at the counter with a
running best (argmax over a noisy histogram, noisy top-k, the first index above a threshold).

A scan ``while (k < n) { if (h[k] > h[b]) { b := k; } k := k + 1; }`` keeps two facts the
templates of :mod:`.invariants` do not propose, because neither comes from a sampling's axiom:

* the branch's comparison *accumulated* over the elements scanned so far: after the iterations
  ``lo..k`` every one of them lost (or won) the comparison — ``forall j in lo..k: h[j] <= h[b]``
  — for each atom of a branch condition in the body that reads an array at the counter, with
  both of its sides (the atom and its negation, ``<`` and ``<=`` forms), from the counter's start
  and from 0 (``b := 0; k := 1`` has compared ``h[0]`` with itself);
* the range of a *copy of the counter*: ``b := k`` in the body gives ``lo <= b``, ``b < k``
  (and ``b <= k``) and ``b < n`` (n the counter's final value) for lo the counter's start or
  ``b``'s value on entry — what an instance ``h[b]`` of a fact over the range needs (``b < n``
  also when b starts ahead of the counter, as the runner-up of a top-2 scan does).

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

from typing import Dict, List

from lang import ast as A
from tamp.cfa.loops import entry_value

from .exprs import conjuncts, not_, subst

_FLIP = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
_WEAK = {"<": "<=", ">": ">="}


def _sides(atom: A.Expr) -> List[A.Expr]:
    """``atom`` and its negation as comparisons, each also with ``<``/``>`` weakened."""
    out = [atom]
    if isinstance(atom, A.Binary) and atom.op in _FLIP:
        out.append(A.Binary(_FLIP[atom.op], atom.left, atom.right))
    else:
        out.append(not_(atom))
    out += [A.Binary(_WEAK[x.op], x.left, x.right) for x in list(out) if isinstance(x, A.Binary) and x.op in _WEAK]
    return out


def _reads_at(e: A.Expr, name: str) -> bool:
    """Whether ``e`` reads an array at an index mentioning ``name``."""
    return any(isinstance(x, A.Index) and name in A.free_vars(x.index) for x in A.walk(e))


def scan_candidates(cfa, loops: Dict[int, dict]) -> List[A.Expr]:
    """The candidates of the module docstring, for every counted loop counting up."""
    out: List[A.Expr] = []
    for h, lp in sorted(loops.items()):
        cnt = lp.get("counter")
        if cnt is None or cnt.step <= 0:
            continue
        body, i = lp["body"], A.Var(cnt.name)
        starts = [cnt.init] + ([A.num(0)] if cnt.init != A.num(0) else [])
        atoms, copies = [], []
        for u, v, _k, d in cfa.edges():
            st = d["stmt"]
            if u not in body or v not in body or d.get("back"):
                continue
            if isinstance(st, A.Assume):
                atoms += [a for a in conjuncts(st.cond) if _reads_at(a, cnt.name) and a not in atoms]
            elif isinstance(st, A.Assign) and st.value == i and isinstance(st.targets[0], A.Var):
                copies.append(st.targets[0])
        j = A.Var("j$")
        for a in atoms:
            for side in _sides(a):
                for lo in starts:
                    out.append(A.Quant("forall", "j$", lo, i, False, subst(side, {cnt.name: j})))
        for x in copies:
            los = starts + [e for e in [entry_value(cfa, h, body, x.name)] if e is not None and e not in starts]
            for lo in los:
                out.append(A.Binary("<=", lo, x))
            out += [A.Binary("<", x, i), A.Binary("<=", x, i), A.Binary("<", x, cnt.final())]
    return out

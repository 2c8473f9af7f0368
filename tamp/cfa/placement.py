"""Chisel's question on the syntax: which candidate operations and regions go to unreliable hardware.

A program marks *candidates*: operators ``+? -? *? /? <? <=? >? >=? ==?`` and memory regions
``unreliable? a, b``. A *placement* chooses, for each, unreliable (``+.``, ``unreliable a``) or
reliable (``+``, no region). This module lists the candidates (:func:`candidates`), builds the
program of a placement (:func:`placed`) and its source text (:func:`annotate`, the input text
with only the candidate markers rewritten, comments and layout kept), and solves the integer
program that picks the placement (:func:`optimise`).

The integer program (Chisel, OOPSLA 2014): maximise the total saving of the chosen candidates
subject to ``base + Σ cost_c · x_c <= budget``, where ``cost_c`` is the union-bound share of
candidate ``c`` (its failure bound when it alone is unreliable, minus the bound with none) and
``budget`` the claim's failure bound. It is solved exactly by z3's optimiser over rationals.
Nothing here is trusted: the union bound's additivity is what the integer program assumes,
and the chosen placement is proved again by the prover before it is reported (``tamp place``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Set, Tuple

import z3

from lang import ast as A
from lang.typecheck import CANDIDATE_OPS, RELIABLE_OP
from lang.walk import Transformer, rebuild


@dataclass(frozen=True)
class Candidate:
    """One candidate: an operator (``kind`` its unreliable spelling, ``*.``) or a region
    (``kind`` ``"memory"``, ``names`` its variables), with its source position."""

    index: int
    kind: str
    pos: Optional[A.Pos]
    names: Tuple[str, ...] = ()
    node: Optional[A.Node] = None

    def describe(self) -> str:
        where = f"{self.pos.line}:{self.pos.col}" if self.pos else "?"
        if self.kind == "memory":
            return f"region {', '.join(self.names)} (line {where})"
        return f"'{CANDIDATE_SPELLING[self.kind]}' at {where}"


#: the kinds a saving is given for (``--saving *=0.3``): a reliable operator or ``memory``
KINDS = ("+", "-", "*", "/", "<", "<=", ">", ">=", "==", "memory")


def kind_key(kind: str) -> str:
    """``*.``, ``*?`` and ``*`` all name the multiplications' kind ``*``; ``memory`` stays."""
    return kind if kind == "memory" else kind.rstrip(".?") or kind


#: the candidate spelling of each unreliable operator (``*.`` → ``*?``)
CANDIDATE_SPELLING = {u: c for c, u in CANDIDATE_OPS.items()}


class _Ops(Transformer):
    """Lists candidate operators in a fixed order (post-order over the body) and, with
    ``choose``, rewrites the k-th one to its unreliable form when k is chosen, else reliable."""

    def __init__(self, choose: Optional[Set[int]] = None, first: int = 0) -> None:
        self.choose = choose
        self.k = first
        self.found: List[A.Binary] = []

    def Binary(self, node, kids):
        if node.op in CANDIDATE_OPS:
            k = self.k
            self.k += 1
            self.found.append(node)
            if self.choose is not None:
                kind = CANDIDATE_OPS[node.op]
                op = kind if k in self.choose else RELIABLE_OP[kind]
                return A.Binary(op, kids[0], kids[1], pos=node.pos)
        return rebuild(node, kids)


def candidates(prog: A.Program) -> List[Candidate]:
    """The candidate regions (in clause order), then the candidate operators (in body order)."""
    out = [Candidate(i, "memory", m.pos, m.names, m) for i, m in enumerate(x for x in prog.memory if x.candidate)]
    walker = _Ops()
    walker.walk(prog.body)
    out += [Candidate(len(out) + j, CANDIDATE_OPS[b.op], b.pos, (), b) for j, b in enumerate(walker.found)]
    return out


def placed(prog: A.Program, chosen: Set[int]) -> A.Program:
    """``prog`` with the candidates of ``chosen`` unreliable and the others reliable."""
    regions = [m for m in prog.memory if m.candidate]
    memory = []
    k = 0
    for m in prog.memory:
        if not m.candidate:
            memory.append(m)
            continue
        if k in chosen:
            memory.append(dataclasses.replace(m, candidate=False))
        k += 1
    body = _Ops(chosen, first=len(regions)).walk(prog.body)
    return dataclasses.replace(prog, body=body, memory=tuple(memory))


def _offsets(text: str) -> List[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def annotate(text: str, cands: Sequence[Candidate], chosen: Set[int]) -> str:
    """``text`` with each candidate's marker rewritten: ``+?`` → ``+.`` (chosen) or ``+``, and
    ``unreliable? …`` → ``unreliable …`` (chosen) or commented out. Everything else is kept."""
    starts = _offsets(text)

    def off(line: int, col: int) -> int:
        return starts[line - 1] + col - 1

    edits: List[Tuple[int, int, str]] = []
    for c in cands:
        if c.kind == "memory":
            p = c.pos
            assert p is not None
            a, b = off(p.line, p.col), off(p.end_line, p.end_col)
            clause = text[a:b]
            if c.index in chosen:
                edits.append((a, a + len("unreliable?"), "unreliable"))
            else:
                edits.append((a, b, f"/* not placed: {clause.replace('*/', '* /')} */"))
            continue
        node = c.node
        assert isinstance(node, A.Binary) and node.left.pos is not None and node.right.pos is not None
        lo = off(node.left.pos.end_line, node.left.pos.end_col)
        hi = off(node.right.pos.line, node.right.pos.col)
        at = text.find(node.op, lo, hi)
        assert at >= 0, f"operator {node.op} not found between its operands"
        new = c.kind if c.index in chosen else RELIABLE_OP[c.kind]
        edits.append((at, at + len(node.op), new))
    out = text
    for a, b, new in sorted(edits, reverse=True):
        out = out[:a] + new + out[b:]
    return out


@dataclass
class Solution:
    chosen: Set[int]
    saving: Fraction
    used: Fraction  # the failure bound the integer program accounts for (base + chosen costs)


def optimise(
    costs: Dict[int, Fraction],
    savings: Dict[int, Fraction],
    base: Fraction,
    budget: Fraction,
    excluded: Sequence[Set[int]] = (),
) -> Optional[Solution]:
    """The exact optimum of the placement integer program (None when even the empty placement
    does not fit the budget); ``excluded``: placements already refuted by the prover."""
    opt = z3.Optimize()
    x = {c: z3.Bool(f"x{c}") for c in costs}

    def q(v: Fraction) -> z3.ArithRef:
        return z3.RealVal(f"{v.numerator}/{v.denominator}")

    used = q(base) + z3.Sum([z3.If(x[c], q(costs[c]), q(Fraction(0))) for c in costs] or [q(Fraction(0))])
    opt.add(used <= q(budget))
    for s in excluded:
        opt.add(z3.Or([z3.Not(x[c]) if c in s else x[c] for c in costs] or [z3.BoolVal(False)]))
    total = z3.Sum([z3.If(x[c], q(savings[c]), q(Fraction(0))) for c in costs] or [q(Fraction(0))])
    opt.maximize(total)
    if opt.check() != z3.sat:
        return None
    m = opt.model()
    chosen = {c for c in costs if z3.is_true(m.eval(x[c], model_completion=True))}
    return Solution(
        chosen, sum((savings[c] for c in chosen), Fraction(0)), base + sum((costs[c] for c in chosen), Fraction(0))
    )

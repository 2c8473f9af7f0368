"""Causal fairness of decision trees and forests, decided exactly by box refinement.

A self-composed program is *axis-aligned* when its real inputs enter it only through
comparisons with values that do not depend on a real input (``x <= c``, ``c < x``; ``c`` may
depend on categorical inputs) — what ``tamp import`` writes for decision trees and forests:
nested ``ite`` over float32 thresholds, sums of leaf values, a threshold or an argmax on the
sums. On a box where every such comparison has one truth value, every copy's output and
``requires`` are constants, so the box is biased everywhere or nowhere.

The search starts from the real box of every cell (combination of categorical values). A
box's outputs are evaluated top-down with three-valued comparisons: an ``ite`` whose condition
is decided takes its branch, one whose condition is not decided has the hull of its branches'
values, and interval comparisons of the sums decide a threshold (or argmax) before every tree
is resolved. A box left undecided is cut at the threshold of the first undecided comparison
met under an undecided output (the most uncertain tree of a sum first, a tree's root split
first), into the pieces where it is true and false: the leaf boxes of the trees are
intersected and empty intersections never made. The largest boxes are decided first, so the
boxes left at a deadline are the smallest.

Why it is sound: a box keeps exact rational ends *and which of them are open*, so a
comparison decided on it holds at every one of its points, boundary included; the pieces of a
cut partition the box exactly; a fair or biased box is so at every point; a box's mass is its
exact uniform volume (or the population's certified interval); the biased mass is the sum
over the biased boxes, exact. A biased box's centre (or its only point) is re-checked by
exact evaluation before it is reported as a witness. Boxes not decided by the deadline are
counted as unknown (in the upper bound only). Anything not of this shape raises
:class:`NotTree` with the reason, and another engine decides the claim.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Tuple

from gmpy2 import mpq

from . import terms as T
from .dag import Dag
from .region import Dim

# a real side: (lo, hi, lo_open, hi_open)
Side = Tuple[Fraction, Fraction, bool, bool]
Interval = Tuple[Any, Any]  # exact (lo, hi) of a numeric value (lo == hi: known)

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_CMP = ("<", "<=", ">", ">=", "==", "!=")
_ARITH = ("+", "-", "*", "neg", "max", "min", "abs")


class NotTree(Exception):
    """The claim is not axis-aligned (the reason is the message)."""


@dataclass
class TreeRun:
    leaves: List[Tuple[int, List[Side], str]] = field(default_factory=list)  # (cell, box, "biased" | "fair")
    left: List[Tuple[int, List[Side]]] = field(default_factory=list)  # (cell, box) not decided in time
    witness: Optional[dict] = None
    boxes: int = 0
    timed_out: bool = False


def _side_truth(side: Side, op: str, c) -> Optional[bool]:
    """The truth of ``x op c`` for every x of ``side`` (None: not the same everywhere)."""
    lo, hi, lo_open, hi_open = side
    if op in (">", ">="):  # x > c  ⇔  not x <= c
        t = _side_truth(side, "<=" if op == ">" else "<", c)
        return None if t is None else not t
    if op == "!=":
        t = _side_truth(side, "==", c)
        return None if t is None else not t
    if op == "<=":
        if hi <= c:
            return True
        return False if lo > c or (lo == c and lo_open) else None
    if op == "<":
        if hi < c or (hi == c and hi_open):
            return True
        return False if lo >= c else None
    # ==
    if lo == hi == c:
        return True
    if c < lo or c > hi or (c == lo and lo_open) or (c == hi and hi_open):
        return False
    return None


def _cut(side: Side, op: str, c) -> List[Side]:
    """The non-empty pieces of ``side`` on which ``x op c`` has one truth value."""
    lo, hi, lo_open, hi_open = side
    if op in ("<=", ">"):
        parts = [(lo, c, lo_open, False), (c, hi, True, hi_open)]
    elif op in ("<", ">="):
        parts = [(lo, c, lo_open, True), (c, hi, False, hi_open)]
    else:
        parts = [(lo, c, lo_open, True), (c, c, False, False), (c, hi, True, hi_open)]
    return [p for p in parts if p[0] < p[1] or (p[0] == p[1] and not p[2] and not p[3])]


def _icmp(op: str, a: Interval, b: Interval) -> Optional[bool]:
    """``a op b`` for every value of the intervals (None: not decided)."""
    (alo, ahi), (blo, bhi) = a, b
    if op == "<":
        return True if ahi < blo else False if alo >= bhi else None
    if op == "<=":
        return True if ahi <= blo else False if alo > bhi else None
    if op == ">":
        return True if alo > bhi else False if ahi <= blo else None
    if op == ">=":
        return True if alo >= bhi else False if ahi < blo else None
    if op == "==":
        return True if alo == ahi == blo == bhi else False if ahi < blo or bhi < alo else None
    t = _icmp("==", a, b)
    return None if t is None else not t


def _iarith(op: str, args: List[Interval]) -> Interval:
    if op == "+":
        return (args[0][0] + args[1][0], args[0][1] + args[1][1])
    if op == "-":
        return (args[0][0] - args[1][1], args[0][1] - args[1][0])
    if op == "neg":
        return (-args[0][1], -args[0][0])
    if op == "*":
        ps = [x * y for x in args[0] for y in args[1]]
        return (min(ps), max(ps))
    if op == "max":
        return (max(args[0][0], args[1][0]), max(args[0][1], args[1][1]))
    if op == "min":
        return (min(args[0][0], args[1][0]), min(args[0][1], args[1][1]))
    lo, hi = args[0]  # abs
    if lo >= 0:
        return (lo, hi)
    if hi <= 0:
        return (-hi, -lo)
    return (0, max(-lo, hi))


def _frac(q: Any) -> Fraction:
    return Fraction(int(q.numerator), int(q.denominator))


def _width(v: Any) -> Any:
    return v[1] - v[0] if isinstance(v, tuple) else 0


class TreeClaim:
    """The self-composed program (``dag``: ``nouts`` outputs, then as many validities) read as an
    axis-aligned claim over categorical cells × real boxes (see the module docstring)."""

    def __init__(self, dag: Dag, nouts: int, pairs, dims: Tuple[Dim, ...], max_cells: int = 100000):
        if not pairs:
            raise NotTree("the copies' outputs are the same term")
        self.dag, self.k, self.pairs, self.dims = dag, nouts, list(pairs), dims
        self.real = [i for i, d in enumerate(dims) if d.sort == "real"]
        self.cat = [i for i, d in enumerate(dims) if d.sort != "real"]
        self.bounds: List[Tuple[Fraction, Fraction]] = []
        for d in dims:
            if d.lo is None or d.hi is None:
                raise NotTree(f"input '{d.name}' is unbounded")
            self.bounds.append((Fraction(d.lo), Fraction(d.hi)))
        ncells = 1
        for i in self.cat:
            ncells *= int(self.bounds[i][1] - self.bounds[i][0]) + 1
        if ncells > max_cells:
            raise NotTree(f"{ncells} combinations of categorical inputs (more than {max_cells})")
        pos = {dims[i].name: t for t, i in enumerate(self.real)}
        nodes = dag.nodes
        dep: List[bool] = []  # depends on a real input at all
        num: List[bool] = []  # its value moves with a real input (not through a comparison)
        self.atom: Dict[int, Tuple[int, str, int]] = {}  # node -> (real position, op, constant node)
        for i, n in enumerate(nodes):
            if n.kind == "input":
                is_real = n.name in pos
                dep.append(is_real)
                num.append(is_real)
                continue
            dep.append(any(dep[a] for a in n.args))
            if n.kind == "ite":
                num.append(num[n.args[1]] or num[n.args[2]])
            elif n.kind in _CMP:
                a, b = n.args
                if num[a] or num[b]:
                    if nodes[a].kind == "input" and num[a] and not dep[b]:
                        self.atom[i] = (pos[nodes[a].name], n.kind, b)
                    elif nodes[b].kind == "input" and num[b] and not dep[a]:
                        self.atom[i] = (pos[nodes[b].name], _FLIP[n.kind], a)
                    else:
                        raise NotTree("a real input is compared with something other than a constant threshold")
                num.append(False)
            else:
                if any(num[a] for a in n.args):
                    raise NotTree(f"a real input is used as a number ('{n.kind}'), not only compared with thresholds")
                num.append(False)
            if dep[i] and n.kind not in _CMP + _ARITH + ("ite", "and", "or", "not"):
                raise NotTree(f"'{n.kind}' of values that depend on real inputs")
        if not self.atom:
            raise NotTree("no comparison of a real input with a threshold")
        for r in dag.roots:
            if num[r]:
                raise NotTree("an output is a real input's value, not a decision")
        self.dep = dep
        ranges = [range(int(self.bounds[i][0]), int(self.bounds[i][1]) + 1) for i in self.cat]
        self.cells: List[Dict[str, Any]] = []
        for combo in itertools.product(*ranges):
            self.cells.append(
                {dims[i].name: (bool(x) if dims[i].sort == "bool" else x) for i, x in zip(self.cat, combo)}
            )

    # ------------------------------------------------------------------ evaluation on a box
    def _const_values(self, cell: Dict[str, Any]) -> List[Any]:
        """Exact values of the nodes that do not depend on real inputs, in ``cell``."""
        vals: List[Any] = [None] * len(self.dag.nodes)
        for i, n in enumerate(self.dag.nodes):
            if self.dep[i]:
                continue
            if n.kind == "const":
                vals[i] = n.payload
            elif n.kind == "input":
                vals[i] = cell[n.name]
            elif n.kind == "and":
                vals[i] = all(vals[a] for a in n.args)
            elif n.kind == "or":
                vals[i] = any(vals[a] for a in n.args)
            else:
                try:
                    vals[i] = T.apply_value(n.kind, [vals[a] for a in n.args])
                except ZeroDivisionError:
                    vals[i] = None  # undefined: decided lazily (an untaken branch may hold it)
        # exact rationals in gmpy2 for the search (Fraction arithmetic is most of its time)
        return [mpq(v) if isinstance(v, (int, Fraction)) and not isinstance(v, bool) else v for v in vals]

    def _eval(self, sides: List[Side], consts: List[Any], memo: Dict[int, Any], i: int) -> Any:
        """A Boolean node's truth (True / False / None) or a numeric node's exact interval on the box."""
        if i in memo:
            return memo[i]
        n = self.dag.nodes[i]
        if not self.dep[i]:
            v = consts[i]
            if v is None:
                raise NotTree("a division by zero in a constant")
            r: Any = v if n.sort == "bool" else (v, v)
        elif i in self.atom:
            t, op, c = self.atom[i]
            if consts[c] is None:
                raise NotTree("a division by zero in a threshold")
            r = _side_truth(sides[t], op, consts[c])
        elif n.kind == "ite":
            cond = self._eval(sides, consts, memo, n.args[0])
            if cond is not None:
                r = self._eval(sides, consts, memo, n.args[1] if cond else n.args[2])
            else:
                a = self._eval(sides, consts, memo, n.args[1])
                b = self._eval(sides, consts, memo, n.args[2])
                if n.sort == "bool":
                    r = a if a == b else None
                else:
                    r = (min(a[0], b[0]), max(a[1], b[1]))
        elif n.kind in ("and", "or"):
            stop = n.kind == "or"  # the value that settles it
            r = not stop
            for a in n.args:
                v = self._eval(sides, consts, memo, a)
                if v is stop:
                    r = stop
                    break
                if v is None:
                    r = None
        elif n.kind == "not":
            v = self._eval(sides, consts, memo, n.args[0])
            r = None if v is None else not v
        elif n.kind in _CMP:
            r = _icmp(n.kind, *(self._eval(sides, consts, memo, a) for a in n.args))
        else:
            r = _iarith(n.kind, [self._eval(sides, consts, memo, a) for a in n.args])
        memo[i] = r
        return r

    def _known(self, v: Any) -> bool:
        return v is not None and (not isinstance(v, tuple) or v[0] == v[1])

    def classify(self, sides: List[Side], consts: List[Any]) -> Tuple[Optional[bool], Dict[int, Any]]:
        """(True: biased everywhere on the box / False: nowhere / None: not decided, memo)."""
        memo: Dict[int, Any] = {}
        roots, k = self.dag.roots, self.k
        undecided = False
        for i, j in self.pairs:
            vi = self._eval(sides, consts, memo, roots[k + i])
            vj = self._eval(sides, consts, memo, roots[k + j]) if vi is not False else False
            if vi is False or vj is False:
                continue  # a copy outside requires: this pair is not biased here
            oi = self._eval(sides, consts, memo, roots[i])
            oj = self._eval(sides, consts, memo, roots[j])
            if self.dag.nodes[roots[i]].sort == "bool":
                differ = None if oi is None or oj is None else oi != oj
            else:
                differ = _icmp("!=", oi, oj)
            if differ is False:
                continue
            if differ is True and vi is True and vj is True:
                return True, memo
            undecided = True
        return (None if undecided else False), memo

    def split_atom(self, sides: List[Side], consts: List[Any], memo: Dict[int, Any]) -> Tuple[int, str, Any]:
        """(real position, op, threshold) of the first undecided comparison under an undecided root."""
        seen = set()
        stack = list(reversed(self.dag.roots))
        while stack:
            i = stack.pop()
            if i in seen or not self.dep[i]:
                continue
            seen.add(i)
            v = memo[i] if i in memo else self._eval(sides, consts, memo, i)
            if self._known(v):
                continue
            if i in self.atom:
                t, op, c = self.atom[i]
                return t, op, consts[c]
            n = self.dag.nodes[i]
            if n.kind == "ite":
                cond = memo.get(n.args[0])
                if cond is None:
                    stack.append(n.args[0])  # the condition first
                else:
                    stack.append(n.args[1] if cond else n.args[2])
                continue
            args = list(n.args)
            if n.sort != "bool" and n.kind != "ite":
                # a sum of trees: the most uncertain one (widest interval) first
                args.sort(key=lambda a: -_width(memo.get(a)))
            stack.extend(reversed(args))
        raise NotTree("an undecided box without an undecided threshold comparison")

    # ------------------------------------------------------------------ the search
    def run(
        self,
        witness_at: Callable[[dict], Optional[dict]],
        deadline: Optional[float] = None,
    ) -> TreeRun:
        """Decide every cell's box (see the module docstring), largest boxes first (so the boxes
        left at the deadline are the smallest)."""
        res = TreeRun()
        root = [(mpq(self.bounds[i][0]), mpq(self.bounds[i][1]), False, False) for i in self.real]
        todo: List[Tuple[float, int, int, List[Side]]] = []
        seq = 0
        for c in range(len(self.cells)):
            heapq.heappush(todo, (-1.0, seq, c, list(root)))
            seq += 1
        consts_of: Dict[int, List[Any]] = {}
        tries = 0
        while todo:
            if deadline is not None and time.monotonic() >= deadline:
                res.timed_out = True
                res.left = [(c, s) for _, _, c, s in todo]
                break
            _, _, c, sides = heapq.heappop(todo)
            consts = consts_of.get(c)
            if consts is None:
                consts = consts_of[c] = self._const_values(self.cells[c])
            res.boxes += 1
            biased, memo = self.classify(sides, consts)
            if biased is None:
                t, op, thr = self.split_atom(sides, consts, memo)
                for piece in _cut(sides[t], op, thr):
                    part = sides[:t] + [piece] + sides[t + 1 :]
                    heapq.heappush(todo, (-float(self.share(part)), seq, c, part))
                    seq += 1
                continue
            res.leaves.append((c, sides, "biased" if biased else "fair"))
            if biased and res.witness is None and tries < 16:
                tries += 1
                res.witness = witness_at(self.point(c, sides))
        return res

    def share(self, sides: List[Side]) -> Any:
        """The exact uniform mass of a box in its cell (a share of the cell's real box)."""
        m = mpq(1)
        for t, i in enumerate(self.real):
            lo, hi = self.bounds[i]
            if hi > lo:
                m *= (sides[t][1] - sides[t][0]) / mpq(hi - lo)
        return m

    def uniform_mass(self, sides: List[Side]) -> Any:
        """The exact mass of a box when every input is uniform (every cell equally likely)."""
        return self.share(sides) / len(self.cells)

    def full_box(self, c: int, sides: List[Side]) -> Tuple[Any, ...]:
        """The box over every dimension (categorical ones at their cell's value), closed ends."""
        out: List[Any] = [None] * len(self.dims)
        for t, i in enumerate(self.real):
            out[i] = (_frac(sides[t][0]), _frac(sides[t][1]))
        for i in self.cat:
            v = Fraction(int(self.cells[c][self.dims[i].name]))
            out[i] = (v, v)
        return tuple(out)

    def point(self, c: int, sides: List[Side]) -> Dict[str, Any]:
        """A point of the box: the centre of every real side (its only point when degenerate)."""
        pt: Dict[str, Any] = dict(self.cells[c])
        for t, i in enumerate(self.real):
            lo, hi = sides[t][0], sides[t][1]
            pt[self.dims[i].name] = _frac((lo + hi) / 2)
        return pt

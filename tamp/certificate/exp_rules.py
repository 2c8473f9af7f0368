"""The checker's own pre-expectation calculus: the obligations of an expected-failure proof,
rebuilt from the program and the certificate's loop annotations (nothing of the prover's).

An upper bound on the failure probability is the weakest pre-expectation of ``[¬ensures]``
(McIver & Morgan), backwards over the program:

=======================  ==================================================================
``x := e``               ``F[x := e]``
``a[e] := v``            ``F`` with every read ``a[x]`` replaced by ``x == e ? v : a[x]``
``x ~ bern(p)``          ``0 <= p <= 1 ? p·F[x := true] + (1 - p)·F[x := false] : 1``
``x ~ unif(lo, hi)``     the average of ``F[x := v]`` (literal bounds, at most 64 values)
``x ~ unif({c…})``       the average over the listed (distinct, literal) values
``x ~ unif(lo, hi)``     other bounds, N = hi - lo + 1: ``N >= 1 ? q·F[φ := true] + (1 - q)·F[φ := false] : 1``
                         when F reads x only in one atom φ, q = #{v in lo..hi: φ(v)} / N
                         (closed for integer thresholds ``x <= e``…, :mod:`.exp_counts`);
                         when F reads x only in tests ``x == e``: ``min(1, F_gen + K/N)``, the
                         union bound over the K values it must avoid (:mod:`.exp_hits`);
                         else, F reading x in at most 3 atoms φᵢ: ``min(1, Σ_c q_c·F[φ := c])``
                         over the truth assignments c, q_c = #{v: φ(v) = c}/N (the all-false
                         one weighted by one minus the others: exact, they partition the range)
``x ~ lap(m, s)``        F reads x only in one tail test φ (``x > e``, ``abs(x - m) > t``, …):
                         ``s > 0 ? q·F[φ := true] + (1 - q)·F[φ := false] : 1``, q = Pr[φ]
                         exactly (``exp(-d/s)/2`` each side of m; :func:`_lap_tail`); ``x ~ exp(k, s)``
                         alike with its exact survival function (:mod:`.exp_tails`)
``if (c) S else T``      ``c ? wpe(S, F) : wpe(T, F)``;  ``assume(c)``: ``c ? F : 0``
``for`` (literal bounds, ≤ 8 iterations): its iterations written out
``while (g) B``          ``g ? max(0, min(1, core)) : F`` with the certificate's ``core``
=======================  ==================================================================

and each loop obliges INDUCT ``g ⇒ wpe(B, E) <= max(0, min(1, core))`` (split by the cases of
a staircase core, which together are exactly that formula) and TERM: a rank ``r`` with ``g ⇒
r > 0`` and ``g ⇒ r`` lower by 1 after *every* outcome of B; or an exit chance δ over inputs
with ``δ > 0`` and ``g ⇒ Pr[¬g after one iteration] >= δ`` (the *lower* pre-expectation of
``[¬g]``: out-of-range parameters give 0, no loops inside). Finally BUDGET ``wpe(body,
[¬ensures]) <= β``.

Why this is sound: Φ(X) = g ? wpe(B, X) : F bounds the true one-step transformer; with TERM
the failure probability of the loop (non-termination counted as failure) is the least fixed
point of the true transformer, at most E by Park induction (INDUCT says Φ(E) <= E and E is
[0, 1]-valued). A parameter outside its range gives 1 (an upper bound of any probability). The
simplifications (:func:`simp`) are identities of exact arithmetic and logic only. A program or
distribution outside these rules raises :class:`Outside` (the certificate is rejected).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars, substitute, written_vars
from tamp.cfa.unreliable import coins_for_unreliable
from tamp.show import show_expr

from .exp_counts import threshold_count
from .exp_extrema import split_extrema
from .exp_hits import NoHitBound, hit_bound, split_at
from .exp_tails import exp_tail

ONE, ZERO = A.num(1), A.num(0)
MAX_NODES = 40000
MAX_VALUES = 64
MAX_UNROLL = 8

Obligation = Tuple[str, str, A.Expr]


class Outside(Exception):
    """The program or an annotation is outside the expected-failure rules."""


@dataclass(frozen=True)
class LoopAnnot:
    """One loop's proof as the certificate states it."""

    core: A.Expr
    term: str  # "rank" | "exit" | "variant"
    measure: A.Expr
    chance: Optional[A.Expr] = None  # the variant's progress chance ε (only for "variant")


# ------------------------------------------------------------------------ exact simplification


def _num(e) -> Optional[Fraction]:
    return Fraction(e.value) if isinstance(e, A.Num) else None


def simp(e: A.Expr) -> A.Expr:
    """Literal folding at the top of ``e`` (exact identities only)."""
    if isinstance(e, A.Unary) and e.op == "!" and isinstance(e.operand, A.BoolLit):
        return A.BoolLit(not e.operand.value)
    if isinstance(e, A.Cond):
        if isinstance(e.cond, A.BoolLit):
            return e.then if e.cond.value else e.other
        return e.then if e.then == e.other else e
    if not isinstance(e, A.Binary):
        return e
    a, b, op = e.left, e.right, e.op
    if op in ("&&", "||"):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, A.BoolLit):
                return (y if x.value else x) if op == "&&" else (x if x.value else y)
        return e
    na, nb = _num(a), _num(b)
    if op in ("==", "!="):
        if isinstance(a, A.BoolLit) and isinstance(b, A.BoolLit):
            return A.BoolLit((a.value == b.value) == (op == "=="))
        if a == b:
            return A.BoolLit(op == "==")
        if na is not None and nb is not None:
            return A.BoolLit((na == nb) == (op == "=="))
    if op == "*" and (na == 0 or nb == 0):
        return ZERO
    if (op == "*" and na == 1) or (op == "+" and na == 0):
        return b
    if (op == "*" and nb == 1) or (op in ("+", "-") and nb == 0):
        return a
    if na is None or nb is None:
        return e
    if op == "/" and nb != 0:
        return A.Num(na / nb, False)
    if op in ("+", "-", "*"):
        v = na + nb if op == "+" else na - nb if op == "-" else na * nb
        return A.Num(v, isinstance(a, A.Num) and a.is_int and isinstance(b, A.Num) and b.is_int)
    if op in ("<", "<=", ">", ">="):
        return A.BoolLit({"<": na < nb, "<=": na <= nb, ">": na > nb, ">=": na >= nb}[op])
    return e


class _Fold(Transformer):
    def default(self, node, kids):
        return simp(super().default(node, kids))


def fold(e: A.Expr) -> A.Expr:
    out: A.Expr = _Fold().walk(e)
    return out


def _ind(c: A.Expr) -> A.Expr:
    return simp(A.Cond(c, ONE, ZERO))


def _not(e: A.Expr) -> A.Expr:
    if isinstance(e, A.Unary) and e.op == "!":
        return e.operand
    return A.BoolLit(not e.value) if isinstance(e, A.BoolLit) else A.Unary("!", e)


def _and(es) -> A.Expr:
    es = [e for e in es if e != A.BoolLit(True)]
    out = es[0] if es else A.BoolLit(True)
    for e in es[1:]:
        out = A.Binary("&&", out, e)
    return out


def _line(s) -> int:
    return s.pos.line if getattr(s, "pos", None) is not None else 0


def _binders(e: A.Expr) -> set:
    return {n.var for n in A.walk(e) if isinstance(n, (A.Quant, A.Sum))}


# ------------------------------------------------------------------------ writes


def _target(s) -> A.Expr:
    if len(s.targets) != 1:
        raise Outside(f"line {_line(s)}: assigns a tuple")
    t = s.targets[0]
    if isinstance(t, A.Var) or (isinstance(t, A.Index) and isinstance(t.base, A.Var)):
        return t
    raise Outside(f"line {_line(s)}: writes an element of something that is not an array variable")


class _ElementWrite(Transformer):
    """Every read ``a[x]`` → ``x == i ? v : a[x]`` (x rewritten first): the value after ``a[i] := v``."""

    def __init__(self, name: str, index: A.Expr, value: A.Expr):
        self.name, self.index, self.value = name, index, value

    def enter(self, node):
        return node if isinstance(node, A.Expr) and self.name not in set(free_vars(node)) else DESCEND

    def Index(self, node, kids):
        base, idx = kids
        if base == A.Var(self.name):
            return A.Cond(A.Binary("==", idx, self.index), self.value, A.Index(base, idx))
        return A.Index(base, idx)


def assign(f: A.Expr, target: A.Expr, value: A.Expr, do_fold: bool = True) -> A.Expr:
    """``f`` before ``target := value``."""
    if isinstance(target, A.Var):
        out = substitute(f, {target.name: value})
        return fold(out) if do_fold else out
    assert isinstance(target, A.Index) and isinstance(target.base, A.Var)
    name = target.base.name
    if name not in set(free_vars(f)):
        return f
    reads = sum(1 for n in A.walk(f) if isinstance(n, A.Index) and n.base == target.base)
    if sum(1 for n in A.walk(f) if n == target.base) != reads:
        raise Outside(f"the array {name} is used other than by its elements")
    if _binders(f) & (set(free_vars(target.index)) | set(free_vars(value))):
        raise Outside(f"a bound variable of the failure captures the write to {name}")
    out = _ElementWrite(name, target.index, value).walk(f)
    return fold(out) if do_fold else out


# ------------------------------------------------------------------------ distributions


def outcomes(d: A.Call) -> Tuple[Optional[A.Expr], List[Tuple[A.Expr, A.Expr]]]:
    """(the range condition or None, [(probability, value)]) of a discrete distribution with
    literal support."""
    if d.func == "bern" and len(d.args) == 1:
        p = d.args[0]
        ok = fold(A.Binary("&&", A.Binary("<=", ZERO, p), A.Binary("<=", p, ONE)))
        return ok, [(p, A.BoolLit(True)), (simp(A.Binary("-", ONE, p)), A.BoolLit(False))]
    if d.func == "unif" and len(d.args) == 2:
        lo, hi = _num(d.args[0]), _num(d.args[1])
        if lo is None or hi is None or lo.denominator != 1 or hi.denominator != 1 or hi < lo:
            raise Outside("unif(lo, hi) with bounds that are not integer literals")
        n = int(hi - lo) + 1
        if n > MAX_VALUES:
            raise Outside(f"unif over {n} values (at most {MAX_VALUES})")
        return None, [(A.Num(Fraction(1, n), False), A.Num(Fraction(int(lo) + k), True)) for k in range(n)]
    if d.func == "unif" and len(d.args) == 1 and isinstance(d.args[0], A.SetLit):
        items = d.args[0].items
        if not all(isinstance(x, (A.Num, A.BoolLit)) for x in items) or len(set(items)) != len(items):
            raise Outside("unif over a set whose values are not distinct literals")
        return None, [(A.Num(Fraction(1, len(items)), False), x) for x in items]
    raise Outside(f"the distribution {d.func} is not a discrete one the rules weight")


def _symbolic_unif(d: A.Call) -> bool:
    return d.func == "unif" and len(d.args) == 2 and (_num(d.args[0]) is None or _num(d.args[1]) is None)


def _is_int(e: A.Expr, types) -> bool:
    if isinstance(e, A.Num):
        return e.is_int
    if isinstance(e, A.Var):
        return types.get(e.name) == A.INT
    if isinstance(e, A.Index) and isinstance(e.base, A.Var):
        return types.get(e.base.name) == A.array_of(A.INT) and _is_int(e.index, types)
    if isinstance(e, A.Unary) and e.op == "-":
        return _is_int(e.operand, types)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "div", "mod"):
        return _is_int(e.left, types) and _is_int(e.right, types)
    if isinstance(e, A.Call) and e.func in ("abs", "min", "max"):
        return all(_is_int(a, types) for a in e.args)
    if isinstance(e, A.Cond):
        return _is_int(e.then, types) and _is_int(e.other, types)
    return False


def _atoms(f: A.Expr, x: str, types) -> Optional[List[A.Expr]]:
    """The distinct Boolean atoms (comparisons, elements of a ``bool[]``) of ``f`` holding every
    occurrence of ``x``, in order of first occurrence, reading no bound variable of f; else None."""
    found: List[A.Expr] = []

    def visit(e) -> None:
        if not isinstance(e, A.Expr) or x not in set(free_vars(e)):
            return
        atom = isinstance(e, A.Binary) and e.op in ("==", "!=", "<", "<=", ">", ">=")
        if isinstance(e, A.Index) and isinstance(e.base, A.Var):
            atom = types.get(e.base.name) == A.array_of(A.BOOL)
        if atom:
            found.append(e)
            return
        for c in A.children(e):
            visit(c)

    visit(f)
    inside = sum(1 for a in found for n in A.walk(a) if n == A.Var(x))
    if not found or inside != sum(1 for n in A.walk(f) if n == A.Var(x)):
        return None
    if any(set(free_vars(a)) & _binders(f) for a in found):
        return None
    out: List[A.Expr] = []
    for a in found:
        if a not in out:
            out.append(a)
    return out


def _atom(f: A.Expr, x: str, types) -> Optional[A.Expr]:
    """The one Boolean atom of ``f`` holding every occurrence of ``x`` (:func:`_atoms`); else None."""
    atoms = _atoms(f, x, types)
    return atoms[0] if atoms is not None and len(atoms) == 1 else None


MAX_ATOMS = 3


def _count(u: str, lo: A.Expr, hi: A.Expr, test: A.Expr, is_int) -> A.Expr:
    """``#{u in lo..hi: test}``: closed for integer thresholds (:func:`.exp_counts.threshold_count`,
    exact), else the sum that defines it."""
    closed = threshold_count(u, lo, hi, test, is_int)
    return closed if closed is not None else A.Sum(u, lo, hi, True, A.Cond(test, ONE, ZERO))


def _by_atoms(f: A.Expr, x: str, lo: A.Expr, hi: A.Expr, n: A.Expr, atoms: List[A.Expr], is_int) -> A.Expr:
    """The average of ``f`` over ``x ~ unif(lo, hi)`` when f reads x in the atoms φ₁…φₖ: each
    truth assignment c but the all-false one weighted by ``#{u: φ(u) = c}/N`` (:func:`_count`), the
    all-false one by one minus those — the assignments partition the range, so it is the
    average exactly — with ``f[φ := c]``; capped at 1 (f bounds a probability)."""
    inner = [substitute(a, {x: A.Var("u$")}) for a in atoms]
    acc: A.Expr = ZERO
    rest: A.Expr = ONE
    for combo in itertools.product((True, False), repeat=len(atoms)):
        g = f
        for a, v in sorted(zip(atoms, combo), key=lambda t: -sum(1 for _ in A.walk(t[0]))):
            g = _Replace(a, A.BoolLit(v)).walk(g)
        g = fold(g)
        if not any(combo):
            acc = simp(A.Binary("+", acc, simp(A.Binary("*", rest, g))))
            break
        body = _and([a if v else _not(a) for a, v in zip(inner, combo)])
        q = A.Binary("/", _count("u$", lo, hi, body, is_int), n)
        acc = simp(A.Binary("+", acc, simp(A.Binary("*", q, g))))
        rest = A.Binary("-", rest, q)
    return A.Call("min", (ONE, acc))


class _Replace(Transformer):
    def __init__(self, old: A.Expr, new: A.Expr):
        self.old, self.new = old, new

    def enter(self, node):
        return self.new if node == self.old else DESCEND


# ------------------------------------------------------------------------ the transformer


def _as_while(s) -> Tuple[A.Expr, A.Stmt, Optional[A.Stmt]]:
    if isinstance(s, A.While):
        return s.cond, s.body, None
    i = A.Var(s.var)
    g = A.Binary("<=" if s.inclusive else "<", i, s.hi)
    body = A.Block(tuple(s.body.stmts) + (A.Assign((i,), A.Binary("+", i, ONE)),))
    return g, body, A.Assign((i,), s.lo)


def _has_loop(s: A.Stmt) -> bool:
    return any(isinstance(n, (A.While, A.For)) for n in A.walk(s))


def _unrolled(s) -> Optional[A.Stmt]:
    """A ``for`` over integer literal bounds with at most MAX_UNROLL iterations, as straight-line code."""
    if not isinstance(s, A.For):
        return None
    lo, hi = _num(s.lo), _num(s.hi)
    if lo is None or hi is None or lo.denominator != 1 or hi.denominator != 1:
        return None
    last = int(hi) + (1 if s.inclusive else 0)
    if last - int(lo) > MAX_UNROLL or s.var in written_vars(s.body):
        return None
    i = A.Var(s.var)
    out: List[A.Stmt] = []
    for k in range(max(last - int(lo), 0)):
        out.append(A.Assign((i,), A.Num(Fraction(int(lo) + k), True)))
        out.extend(s.body.stmts)
    out.append(A.Assign((i,), A.Num(Fraction(max(last, int(lo))), True)))
    return A.Block(tuple(out))


def _cap(core: A.Expr) -> A.Expr:
    return A.Call("max", (ZERO, A.Call("min", (ONE, core))))


class Wpe:
    """The (upper, or with ``upper=False`` lower) pre-expectation over one program body, each
    loop by its annotation (by pre-order number); every loop's obligations are collected."""

    def __init__(self, body: A.Stmt, params, annots: Dict[int, LoopAnnot], types, upper: bool = True):
        loops = [n for n in A.walk(body) if isinstance(n, (A.While, A.For))]
        self.ids = {id(n): k for k, n in enumerate(loops)}
        self.params, self.annots, self.types, self.upper = frozenset(params), annots, dict(types), upper
        self.obligations: List[Obligation] = []
        self.used: set = set()

    def stmt(self, s: A.Stmt, f: A.Expr) -> A.Expr:
        out = self._stmt(s, f)
        if sum(1 for _ in A.walk(out)) > MAX_NODES:
            raise Outside("the expected failure grows too large to decide")
        return out

    def _stmt(self, s: A.Stmt, f: A.Expr) -> A.Expr:
        if isinstance(s, A.Block):
            for x in reversed(s.stmts):
                f = self.stmt(x, f)
            return f
        if isinstance(s, (A.Skip, A.VarDecl)):
            return f
        if isinstance(s, A.Assign):
            return assign(f, _target(s), s.value)
        if isinstance(s, A.Sample):
            t = _target(s)
            if _symbolic_unif(s.dist):
                return self._unif_by_atom(s, t, f)
            if s.dist.func in ("lap", "exp") and len(s.dist.args) == 2:  # exp: exp_tails.py
                return self._lap_by_atom(s, t, f)
            ok, outs = outcomes(s.dist)
            acc: Optional[A.Expr] = None
            for p, v in outs:
                term = simp(A.Binary("*", p, assign(f, t, v)))
                acc = term if acc is None else simp(A.Binary("+", acc, term))
            assert acc is not None
            return simp(A.Cond(ok, acc, ONE if self.upper else ZERO)) if ok is not None else acc
        if isinstance(s, A.If):
            other = self.stmt(s.other, f) if s.other is not None else f
            return simp(A.Cond(s.cond, self.stmt(s.then, f), other))
        if isinstance(s, A.Assume):
            return simp(A.Cond(s.cond, f, ZERO))
        if isinstance(s, (A.While, A.For)):
            if not self.upper:
                raise Outside("a loop inside a loop body whose exit chance is needed")
            return self._loop(s, f)
        raise Outside(f"line {_line(s)}: statement {type(s).__name__}")

    def _int(self, e: A.Expr) -> bool:
        return _is_int(e, self.types)

    def _unif_by_atom(self, s: A.Sample, target: A.Expr, f: A.Expr) -> A.Expr:
        if not isinstance(target, A.Var):  # a[e] ~ unif: the element's new value is a fresh x
            x = "x$"
            while x in set(free_vars(f)) | _binders(f) or x in self.types:
                x += "$"
            self.types[x] = A.INT
            f = assign(f, target, A.Var(x))
        else:
            x = target.name
        f = split_extrema(f, x)  # min(a, x) > c as a > c && x > c (.exp_extrema)
        lo, hi = s.dist.args
        n = fold(A.Binary("+", A.Binary("-", hi, lo), ONE))
        miss = ONE if self.upper else ZERO
        if x not in set(free_vars(f)):
            return simp(A.Cond(A.Binary(">=", n, ONE), f, miss))
        phi = _atom(f, x, self.types)
        if phi is None:
            if not self.upper:
                raise Outside(f"line {_line(s)}: the failure reads {x} ~ unif(lo, hi) other than by one test")
            if isinstance(target, A.Index):  # the written element apart from the others
                f = fold(split_at(f, target.index))
            try:  # the union bound over the values the sample must avoid (.exp_hits)
                return simp(A.Cond(A.Binary(">=", n, ONE), fold(hit_bound(f, x, n)), miss))
            except NoHitBound as exc:
                atoms = _atoms(f, x, self.types)
                if atoms is not None and len(atoms) <= MAX_ATOMS:  # exactly, atom by atom
                    return simp(A.Cond(A.Binary(">=", n, ONE), _by_atoms(f, x, lo, hi, n, atoms, self._int), miss))
                raise Outside(
                    f"line {_line(s)}: the failure reads {x} ~ unif(lo, hi) other than by one test ({exc})"
                ) from None
        if isinstance(phi, A.Binary) and phi.op in ("==", "!=") and (phi.left == A.Var(x)) != (phi.right == A.Var(x)):
            e = phi.right if phi.left == A.Var(x) else phi.left
            if x in set(free_vars(e)) or not _is_int(e, self.types):
                raise Outside(f"line {_line(s)}: {x} compared with a value that may not be an integer")
            hit = A.Cond(A.Binary("&&", A.Binary("<=", lo, e), A.Binary("<=", e, hi)), ONE, ZERO)
            cnt: A.Expr = hit if phi.op == "==" else A.Binary("-", n, hit)
        else:  # a threshold: its closed count (exact, .exp_counts), else the sum
            cnt = _count("u$", lo, hi, substitute(phi, {x: A.Var("u$")}), self._int)
        q = A.Binary("/", cnt, n)
        yes = fold(_Replace(phi, A.BoolLit(True)).walk(f))
        no = fold(_Replace(phi, A.BoolLit(False)).walk(f))
        acc = simp(A.Binary("+", simp(A.Binary("*", q, yes)), simp(A.Binary("*", simp(A.Binary("-", ONE, q)), no))))
        return simp(A.Cond(A.Binary(">=", n, ONE), acc, miss))

    def _lap_by_atom(self, s: A.Sample, target: A.Expr, f: A.Expr) -> A.Expr:
        """``x ~ lap(m, sc)``, f reading x in one tail test φ: ``sc > 0 ? q·f[φ := true] + (1 -
        q)·f[φ := false] : 1`` with q the exact Laplace probability of φ (:func:`_lap_tail`)."""
        m, sc = s.dist.args
        miss = ONE if self.upper else ZERO
        if not isinstance(target, A.Var):
            raise Outside(f"line {_line(s)}: a Laplace draw into an array element")
        x = target.name
        positive = A.Binary(">", sc, ZERO)
        if x not in set(free_vars(f)):
            return simp(A.Cond(positive, f, miss))
        f = split_extrema(f, x)  # min(a, x) > c as a > c && x > c (.exp_extrema)
        f = _one_tail_event(f, x)
        phi = _atom(f, x, self.types)
        tail = exp_tail if s.dist.func == "exp" else _lap_tail
        q = tail(phi, x, m, sc) if phi is not None else None
        if phi is None or q is None:
            raise Outside(f"line {_line(s)}: the failure reads {x} ~ lap(m, s) other than by one tail test")
        yes = fold(_Replace(phi, A.BoolLit(True)).walk(f))
        no = fold(_Replace(phi, A.BoolLit(False)).walk(f))
        acc = simp(A.Binary("+", simp(A.Binary("*", q, yes)), simp(A.Binary("*", simp(A.Binary("-", ONE, q)), no))))
        return simp(A.Cond(positive, acc, miss))

    def _loop(self, s, f: A.Expr) -> A.Expr:
        unrolled = _unrolled(s)
        if unrolled is not None:
            return self.stmt(unrolled, f)
        key = self.ids[id(s)]
        annot = self.annots.get(key)
        if annot is None:
            raise Outside(f"no proof given for the loop at line {_line(s)}")
        self.used.add(key)
        g, body, init = _as_while(s)
        e = A.Cond(g, _cap(annot.core), f)
        where = f"loop at line {_line(s)}"
        after = self.stmt(body, e)
        self.obligations.extend(("INDUCT", where + w, ob) for w, ob in _induct(g, after, annot.core))
        self.obligations.extend(_term(where, g, body, annot, self.params, self.types))
        return self.stmt(init, e) if init is not None else e


_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _one_tail_event(f: A.Expr, x: str) -> A.Expr:
    """f with every comparison reading x written as ``a > b`` (x in a) or its negation, when all
    are one event up to complement and ties (of probability 0 for a continuous x: F's
    expectation is unchanged); f itself otherwise (the rule then refuses or takes the one atom)."""
    found: List[A.Expr] = []

    def visit(e: A.Node) -> None:
        if isinstance(e, A.Expr) and x in set(free_vars(e)):
            if isinstance(e, A.Binary) and e.op in ("==", "!=", "<", "<=", ">", ">="):
                found.append(e)
            else:
                for c in A.children(e):
                    visit(c)

    visit(f)
    forms = []
    for a in found:
        if not isinstance(a, A.Binary) or a.op not in _MIRROR:
            return f
        op, lhs, rhs = a.op, a.left, a.right
        if x in set(free_vars(rhs)):
            if x in set(free_vars(lhs)):
                return f
            op, lhs, rhs = _MIRROR[op], rhs, lhs
        forms.append((A.Binary(">", lhs, rhs), op in (">", ">=")))
    if not forms or len({g for g, _ in forms}) != 1:
        return f
    phi = forms[0][0]
    for a, (_g, up) in zip(found, forms):
        f = _Replace(a, phi if up else A.Unary("!", phi)).walk(f)
    return f


def _lap_tail(phi: A.Expr, x: str, m: A.Expr, sc: A.Expr) -> Optional[A.Expr]:
    """Pr[φ(x)] for x ~ lap(m, sc), sc > 0 (density exp(-|x - m|/sc)/(2 sc)): for ``x > e``
    (``>=`` alike: x is continuous), d = e - m, ``d >= 0 ? exp(-d/sc)/2 : 1 - exp(d/sc)/2``;
    for ``abs(x - m) > t``, ``t >= 0 ? exp(-t/sc) : 1``; ``<``/``<=`` are the complements; x on
    the right is turned around. None for any other test."""
    if not isinstance(phi, A.Binary) or phi.op not in _MIRROR:
        return None
    op, a, b = phi.op, phi.left, phi.right
    if x in set(free_vars(b)):
        op, a, b = _MIRROR[op], b, a
    if x in set(free_vars(b)) | set(free_vars(m)) | set(free_vars(sc)):
        return None
    greater = op in (">", ">=")
    if a == A.Var(x):
        d = A.Binary("-", b, m)
        half = A.Binary("/", ONE, A.num(2))
        tail = A.Cond(
            A.Binary(">=", d, ZERO),
            A.Binary("*", half, A.Call("exp", (A.Unary("-", A.Binary("/", d, sc)),))),
            A.Binary("-", ONE, A.Binary("*", half, A.Call("exp", (A.Binary("/", d, sc),)))),
        )
    elif isinstance(a, A.Call) and a.func == "abs" and a.args == (A.Binary("-", A.Var(x), m),):
        tail = A.Cond(A.Binary(">=", b, ZERO), A.Call("exp", (A.Unary("-", A.Binary("/", b, sc)),)), ONE)
    else:
        return None
    return tail if greater else A.Binary("-", ONE, tail)


def _induct(g: A.Expr, after: A.Expr, core: A.Expr) -> List[Tuple[str, A.Expr]]:
    """INDUCT, one formula per case of a staircase core ``c1 ? e1 : c2 ? e2 : … : e`` (at least
    two conditions; the cases cover every state), else one formula."""
    whole = A.Binary("<=", after, _cap(core))
    conds: List[A.Expr] = []
    e = core
    while isinstance(e, A.Cond):
        conds.append(e.cond)
        e = e.other
    if len(conds) < 2:
        return [("", A.Binary("==>", g, whole))]
    out: List[Tuple[str, A.Expr]] = []
    for k in range(len(conds) + 1):
        case = _and([_not(c) for c in conds[:k]] + conds[k : k + 1])
        out.append((f" when {show_expr(case)}", A.Binary("==>", A.Binary("&&", g, case), whole)))
    return out


def _term(where, g, body, annot: LoopAnnot, params, types) -> List[Obligation]:
    if annot.term == "rank":
        r = annot.measure
        dec = substitute(_every_outcome(body, A.Binary("<=", r, A.Var("r$"))), {"r$": A.Binary("-", r, ONE)})
        return [
            (
                "TERM",
                f"{where}: rank {show_expr(r)} > 0 while the loop runs",
                A.Binary("==>", g, A.Binary(">", r, ZERO)),
            ),
            ("TERM", f"{where}: every iteration lowers the rank by 1", A.Binary("==>", g, dec)),
        ]
    if annot.term == "exit":
        if _has_loop(body):
            raise Outside("an exit chance for a loop whose body has a loop")
        delta = annot.measure
        if set(free_vars(delta)) - set(params):
            raise Outside("an exit chance that reads more than the inputs")
        lower = Wpe(body, params, {}, types, upper=False).stmt(body, _ind(_not(g)))
        return [
            ("TERM", f"{where}: exit chance {show_expr(delta)} > 0", A.Binary(">", delta, ZERO)),
            (
                "TERM",
                f"{where}: each iteration ends the loop with probability >= {show_expr(delta)}",
                A.Binary("==>", g, A.Binary(">=", lower, delta)),
            ),
        ]
    if annot.term == "variant":
        return _variant_term(where, g, body, annot, params, types)
    raise Outside(f"unknown termination argument {annot.term!r}")


def _variant_term(where, g, body, annot: LoopAnnot, params, types) -> List[Obligation]:
    """A probabilistic variant V with progress chance ε (McIver & Morgan's 0-1 law): ε > 0 over
    the inputs, ``g ⇒ V > 0``, no outcome of the body raises V unless it ends the loop, and with
    probability at least ε an iteration ends the loop or lowers V by 1. From a state with V = V₀
    the loop ends after at most ⌈V₀⌉ such drops, and n iterations with fewer than ⌈V₀⌉ of them
    have probability at most Pr[Bin(n, ε) < ⌈V₀⌉] → 0: the loop ends with probability 1."""
    if _has_loop(body):
        raise Outside("a probabilistic variant for a loop whose body has a loop")
    v, eps = annot.measure, annot.chance
    if eps is None or set(free_vars(eps)) - set(params):
        raise Outside("a progress chance that reads more than the inputs")
    before = A.Var("v$")
    noninc = _every_outcome(body, A.Binary("||", _not(g), A.Binary("<=", v, before)))
    drop = _ind(A.Binary("||", _not(g), A.Binary("<=", v, A.Binary("-", before, ONE))))
    lower = Wpe(body, params, {}, types, upper=False).stmt(body, drop)
    return [
        ("TERM", f"{where}: progress chance {show_expr(eps)} > 0", A.Binary(">", eps, ZERO)),
        (
            "TERM",
            f"{where}: variant {show_expr(v)} > 0 while the loop runs",
            A.Binary("==>", g, A.Binary(">", v, ZERO)),
        ),
        ("TERM", f"{where}: no iteration raises the variant", A.Binary("==>", g, substitute(noninc, {"v$": v}))),
        (
            "TERM",
            f"{where}: each iteration ends the loop or lowers the variant by 1 with probability >= {show_expr(eps)}",
            A.Binary("==>", g, A.Binary(">=", substitute(lower, {"v$": v}), eps)),
        ),
    ]


def _every_outcome(s: A.Stmt, q: A.Expr) -> A.Expr:
    """The weakest precondition for ``q`` after every outcome of ``s`` (samplings: all values)."""
    if isinstance(s, A.Block):
        for x in reversed(s.stmts):
            q = _every_outcome(x, q)
        return q
    if isinstance(s, (A.Skip, A.VarDecl)):
        return q
    if isinstance(s, A.Assign):
        return assign(q, _target(s), s.value, do_fold=False)
    if isinstance(s, A.Sample):
        t = _target(s)
        if A.target_name(t) not in set(free_vars(q)):
            return q
        _ok, outs = outcomes(s.dist)
        return _and([assign(q, t, v, do_fold=False) for _p, v in outs])
    if isinstance(s, A.If):
        t = _every_outcome(s.then, q)
        o = _every_outcome(s.other, q) if s.other is not None else q
        if t == o:
            return t
        return A.Binary("&&", A.Binary("==>", s.cond, t), A.Binary("==>", _not(s.cond), o))
    if isinstance(s, A.Assume):
        return A.Binary("==>", s.cond, q)
    if isinstance(s, (A.While, A.For)):
        if written_vars(s) & set(free_vars(q)):
            raise Outside("an inner loop changes the rank of the loop around it")
        return q
    raise Outside(f"statement {type(s).__name__}")


# ------------------------------------------------------------------------ the claim


@dataclass
class ExpClaim:
    body: A.Stmt
    requires: List[A.Expr]
    post: A.Expr  # [¬ensures]
    types: Dict[str, A.Type]
    params: List[str]


def claim_of(program: A.Program, cfa) -> ExpClaim:
    """The claim over the program's body, or :class:`Outside`."""
    body = coins_for_unreliable(program)  # the CFA's coins of the unreliable operators, in place
    if body is None:
        raise Outside("an unreliable operator outside an assignment or an if test")
    for n in A.walk(body):
        if isinstance(n, A.Sample) and not _symbolic_unif(n.dist) and n.dist.func not in ("lap", "exp"):
            outcomes(n.dist)
        if isinstance(n, (A.Assign, A.Sample)):
            _target(n)
    if not any(isinstance(n, A.Sample) for n in A.walk(body)):
        raise Outside("no sampling")
    if {v for e in cfa.ensures for v in _binders(e)} & set(cfa.types):
        raise Outside("a quantified variable shares its name with a program variable")
    types = dict(cfa.types)
    types.setdefault("r$", A.REAL)
    post = _ind(_not(_and(list(cfa.ensures))))
    return ExpClaim(body, list(cfa.requires), post, types, [p.name for p in cfa.params])


def obligations(claim: ExpClaim, beta: A.Expr, annots: Dict[int, LoopAnnot]) -> Tuple[set, List[Obligation]]:
    """(the loops whose annotation was used, every obligation: the loops' INDUCT and TERM, then BUDGET)."""
    w = Wpe(claim.body, claim.params, annots, claim.types)
    pre = w.stmt(claim.body, claim.post)
    obs = list(w.obligations)
    obs.append(("BUDGET", "the expected failure is at most the bound", A.Binary("<=", pre, beta)))
    return w.used, obs

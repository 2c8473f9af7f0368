"""Failure bounds by expected failure: products of probabilities over discrete samples.

The union bound adds failure masses along a trace and takes the maximum where a branch splits
the runs, so it cannot see that a retry loop fails only when *every* attempt fails, with
probability ``(1 - s)^k``, or that a second coin matters only after the first one came up tails,
``(1 - h) · 1/2``. This engine computes an upper bound on the failure probability as a weakest
pre-expectation (McIver & Morgan; Kaminski's expectation transformers), backwards over the
program's statements, starting from the indicator ``[¬ensures]``:

=======================  ==================================================================
``x := e``               ``F[x := e]``
``a[e] := v``            ``F`` with every read ``a[x]`` replaced by ``x == e ? v : a[x]``
``x ~ bern(p)``          ``0 <= p <= 1 ? p·F[x := true] + (1 - p)·F[x := false] : 1``
``x ~ unif(lo, hi)``     the average of ``F[x := v]`` over the values (literal bounds, at most 64)
``x ~ unif({c…})``       the average over the listed (distinct, literal) values
``x ~ unif(lo, hi)``     other bounds, N = hi - lo + 1: ``N >= 1 ? q·F[φ := true] + (1 - q)·F[φ := false] : 1``
                         when F reads x only in one atom φ (``x == e``, ``w[x]``…), q = #{v: φ(v)}/N
``x ~ unif(lo, hi)``     F reads x only in equalities ``x == e`` (under quantifiers): ``min(1,
                         F[tests := false] + K/N)``, K the most values the e's take (the union
                         bound over the values hit, :mod:`tamp.prover.expectation.hits`); else,
                         F reading x in at most 3 atoms φᵢ: ``min(1, Σ_c q_c·F[φ := c])`` over
                         the truth assignments c, q_c = #{v: φ(v) = c}/N (:func:`by_atoms`)
``x ~ lap(m, s)``        F reads x only in one tail test φ: ``s > 0 ? q·F[φ := true] + (1 - q)·F[φ := false] : 1``,
                         q = Pr[φ] exactly (:mod:`tamp.prover.expectation.tails`)
``if (c) S else T``      ``c ? wpe(S, F) : wpe(T, F)``
``assume(c)``            ``c ? F : 0`` (an assume on inputs only: a precondition)
``while (g) B``          ``E = g ? max(0, min(1, core)) : F`` for a loop *invariant expectation* core
=======================  ==================================================================

A distribution parameter outside its range gives 1 (failure is a probability, so 1 always
bounds it; it keeps the rules sound without a side condition). Every sampling is discrete, so
a branch on a sample *weights* its successors instead of taking their maximum or sum.

Loops. For ``while (g) B`` with continuation F, the engine proposes ``core`` (templates built
from the claimed bound, e.g. ``exp(-s·(k - att))`` from ``exp(-s·k)``, :func:`core_candidates`)
and asks the solver for two facts, each valid under ``requires`` for every state:

* INDUCT  ``g ⇒ wpe(B, E) <= max(0, min(1, core))`` — one more iteration stays below the invariant;
* TERM    every run of the loop ends with probability 1: a *rank* ``r`` with
          ``g ⇒ r > 0`` and ``r`` smaller by at least 1 after every outcome of B; or an *exit
          chance* ``δ`` over inputs with ``δ > 0`` and ``g ⇒ Pr[¬g after one iteration] >= δ``
          (computed as a lower pre-expectation; only for bodies without loops).

Why this is sound: write Φ(X) = g ? wpe(B, X) : F. The probability that the loop (and what
follows it) fails — runs that never end counted as failing — is the least fixed point of the
true transformer Φ* ≤ Φ on [0, 1]-valued expectations once TERM holds: a rank bounds the number
of iterations, an exit chance δ each iteration makes Pr[more than n iterations] <= (1 - δ)^n → 0.
E is [0, 1]-valued and INDUCT says Φ(E) <= E, so by Park induction lfp Φ* <= E. The program's
failure probability is then at most ``wpe(body, [¬ensures])`` and the last obligation is

* BUDGET  ``requires ⇒ wpe(body, [¬ensures]) <= β``.

Besides the bound with an input replaced by the iterations left, the loop search proposes
cores guarded by the settled part of a ``forall`` postcondition (``forall j in 0..i: P ? … :
1``), cores for a loop that singles one iteration out (``if (i == v)``), the exact core of a
deterministic loop that only raises a flag (``flag || exists j in i..n: test(j)``), the bound's
share of the iterations left (``event so far ? 1 : β - β[n := i]``), and staircases for a
count of events reaching a threshold (:mod:`tamp.prover.expectation.levels`), and, for a postcondition
whose truth a rare event toggles (a bit two flips restore), the continuation plus the bound's share
of the iterations left (``F + sum(j' in j..k: q[j'])``, :mod:`tamp.prover.expectation.toggles`); a staircase's INDUCT is
decided case by case (the cases cover every state, so the cases together are the one formula).
When none of these is inductive, cores are *synthesised* (:mod:`tamp.prover.expectation.synthesis`):
templates with unknown coefficients (Markov's ``x/a`` for a failure indicator ``[x >= a]``, the
bound's share of the iterations left) whose coefficients a counterexample-guided search finds;
each one is decided like any other core, so synthesis changes what is tried, never what is accepted.

Where this engine and the union bound meet: it takes only programs whose samples are all
discrete (``bern``, ``unif``) and that write no tuple and condition on nothing (an unreliable
operator counts as the coin the CFA tosses for it, written before its statement by
:func:`tamp.cfa.unreliable.coins_for_unreliable`; one in a loop test is refused) (an array element is written or sampled as above; F must use the array only
by element reads); the others are left to the union-bound prover, unchanged. Every
obligation is decided by :func:`tamp.prover.base.smt.is_valid` (``unknown`` is failure) with the
log/exp lemmas and :func:`axioms.lemmas.product_lemmas`; the certificate
(:mod:`tamp.certificate.exp_writer`) carries each loop's core, rank or exit chance, and
``tamp check-proof`` rebuilds every obligation from the source and those, never from the file.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from axioms.exp_split import split_lemmas
from axioms.lemmas import product_lemmas
from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars, written_vars
from tamp.cfa.unreliable import coins_for_unreliable
from tamp.core.counts import closed_count
from tamp.core.z3context import load_in_proof
from tamp.prover.base.exprs import and_all, conjuncts, not_, subst
from tamp.prover.base.simplify import simplify, user_form
from tamp.prover.base.smt import VALID, transcendental_apps
from tamp.prover.base.wp import element_write
from tamp.prover.concentration.proof import Checker as ConcChecker
from tamp.prover.concentration.proof import checker_stats
from tamp.prover.expectation.cases import case_cores
from tamp.prover.expectation.exits import exit_cores
from tamp.prover.expectation.hits import NoHitBound, hit_bound, split_at
from tamp.prover.expectation.levels import level_cores
from tamp.prover.expectation.moments import counted, input_starts, mean_cores, moment_cores, state_cores
from tamp.prover.expectation.nested import nested_power_cores
from tamp.prover.expectation.patterns import pattern_cores
from tamp.prover.expectation.powers import (
    capped_hit_all_cores,
    capped_power_cores,
    hit_all_cores,
    power_cores,
    split_extrema,
)
from tamp.prover.expectation.retries import inner_cores, outer_cores, rsm_cores, variant_candidates
from tamp.prover.expectation.synthesis import Cegis, markov_blocks, streak_templates, template, tmpl_size
from tamp.prover.expectation.tails import TAIL_CHANCES, one_event, tail_chance
from tamp.prover.expectation.toggles import budget_cores
from tamp.prover.loops.exits import closed_counts, settle_extrema
from tamp.prover.stages.products import stage_cores
from tamp.prover.trace.check import Obligation
from tamp.prover.trace.result import ProofResult
from tamp.prover.trace.synthesis import Timeout
from tamp.show import show_expr

ONE = A.num(1)
ZERO = A.num(0)
MAX_NODES = 40000  # a pre-expectation larger than this is given up (substitution doubles it per coin)
MAX_VALUES = 64  # the most values of a uniform distribution expanded
QUERY_MS = 4000
SEARCH_MS = 2000


class NotApplicable(Exception):
    """The program is outside this engine's rules (the message says why)."""


@dataclass(frozen=True)
class LoopAnnot:
    """The proof of one loop: its invariant expectation and its termination argument."""

    core: A.Expr
    term: str  # "rank" | "exit" | "variant"
    measure: A.Expr  # the rank r, the exit chance δ, or the variant V
    chance: Optional[A.Expr] = None  # the variant's progress chance ε (only for "variant")


@dataclass
class LoopInfo:
    """What the engine found for one loop (for ``-v`` and the JSON)."""

    line: int
    annot: LoopAnnot
    derivation: str


@dataclass
class ExpProof:
    beta: A.Expr
    pre: A.Expr  # wpe(body, [¬ensures])
    annots: Dict[int, LoopAnnot]
    obligations: List[Tuple[str, str, A.Expr]]
    loops: List[LoopInfo] = field(default_factory=list)
    shown: Optional[A.Expr] = None  # pre for reading: conditions `requires` implies dropped


# ------------------------------------------------------------------------ small expressions


def ind(c: A.Expr) -> A.Expr:
    """The indicator [c] as a number."""
    return simp(A.Cond(c, ONE, ZERO))


def _num(e) -> Optional[Fraction]:
    return Fraction(e.value) if isinstance(e, A.Num) else None


def simp(e: A.Expr) -> A.Expr:
    """Folds literals at the top of ``e`` (its children are already folded): ``!true``,
    ``true && x``, ``c ? a : a``, ``0 * x``, ``1 * x``, ``x + 0`` and literal arithmetic. Only
    identities of exact arithmetic and logic; it keeps formulas small, it proves nothing."""
    if isinstance(e, A.Unary) and e.op == "!" and isinstance(e.operand, A.BoolLit):
        return A.BoolLit(not e.operand.value)
    if isinstance(e, A.Cond):
        if isinstance(e.cond, A.BoolLit):
            return e.then if e.cond.value else e.other
        if e.then == e.other:
            return e.then
        return e
    if isinstance(e, A.Binary):
        a, b = e.left, e.right
        if e.op in ("&&", "||"):
            for x, y in ((a, b), (b, a)):
                if isinstance(x, A.BoolLit):
                    if e.op == "&&":
                        return y if x.value else x
                    return x if x.value else y
            return e
        if e.op in ("==", "!=") and isinstance(a, A.BoolLit) and isinstance(b, A.BoolLit):
            return A.BoolLit((a.value == b.value) == (e.op == "=="))
        if e.op in ("==", "!=") and a == b:  # the same expression (deterministic): equal
            return A.BoolLit(e.op == "==")
        na, nb = _num(a), _num(b)
        if e.op in ("==", "!=") and na is not None and nb is not None:
            return A.BoolLit((na == nb) == (e.op == "=="))
        if e.op == "*":
            if na == 0 or nb == 0:
                return ZERO
            if na == 1:
                return b
            if nb == 1:
                return a
        if e.op == "+":
            if na == 0:
                return b
            if nb == 0:
                return a
        if e.op == "-" and nb == 0:
            return a
        if na is not None and nb is not None and e.op == "/" and nb != 0:
            return A.Num(na / nb, False)
        if na is not None and nb is not None and e.op in ("+", "-", "*"):
            v = {"+": na + nb, "-": na - nb, "*": na * nb}[e.op]
            return A.Num(v, isinstance(a, A.Num) and a.is_int and isinstance(b, A.Num) and b.is_int)
        if na is not None and nb is not None and e.op in ("<", "<=", ">", ">="):
            return A.BoolLit({"<": na < nb, "<=": na <= nb, ">": na > nb, ">=": na >= nb}[e.op])
    return e


def _fold(e: A.Expr) -> A.Expr:
    """:func:`simp` bottom-up over the whole expression (iteratively, via the walker)."""

    class _Fold(Transformer):
        def default(self, node, kids):
            return simp(super().default(node, kids))

    out: A.Expr = _Fold().walk(e)
    return out


def size(e: A.Node) -> int:
    return sum(1 for _ in A.walk(e))


def plus(a: A.Expr, b: A.Expr) -> A.Expr:
    return simp(A.Binary("+", a, b))


def times(a: A.Expr, b: A.Expr) -> A.Expr:
    return simp(A.Binary("*", a, b))


def cond(c: A.Expr, a: A.Expr, b: A.Expr) -> A.Expr:
    return simp(A.Cond(c, a, b))


def put(f: A.Expr, name: str, value: A.Expr) -> A.Expr:
    return _fold(subst(f, {name: value}))


def _target(s) -> A.Expr:
    """The one target of an assignment or sampling: a variable or an element ``a[e]`` of an
    array variable (tuples are outside the rules)."""
    if len(s.targets) != 1:
        raise NotApplicable(f"line {_line(s)}: assigns a tuple")
    t = s.targets[0]
    if isinstance(t, A.Var) or (isinstance(t, A.Index) and isinstance(t.base, A.Var)):
        return t
    raise NotApplicable(f"line {_line(s)}: writes an element of something that is not an array variable")


def assign(f: A.Expr, target: A.Expr, value: A.Expr, fold: bool = True) -> A.Expr:
    """``f`` before ``target := value``: a substitution for a variable; for an element write
    ``a[e] := v`` every read ``a[x]`` of f becomes ``x == e ? v : a[x]`` — exactly the value
    ``a[x]`` has after the write (``x`` itself rewritten first). Refused
    (:class:`NotApplicable`) when f uses the array other than by element reads, or when e or v
    would be captured by a bound variable of f."""
    if isinstance(target, A.Var):
        return put(f, target.name, value) if fold else subst(f, {target.name: value})
    assert isinstance(target, A.Index) and isinstance(target.base, A.Var)
    name = target.base.name
    if name not in set(free_vars(f)):
        return f
    reads = sum(1 for n in A.walk(f) if isinstance(n, A.Index) and n.base == target.base)
    if sum(1 for n in A.walk(f) if n == target.base) != reads:
        raise NotApplicable(f"the array {name} is used other than by its elements")
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    if bound & (set(free_vars(target.index)) | set(free_vars(value))):
        raise NotApplicable(f"a bound variable of the failure captures the write to {name}")
    out = element_write(f, name, target.index, value)
    return _fold(out) if fold else out


# ------------------------------------------------------------------------ the transformer


def loops_of(body: A.Stmt) -> Dict[int, int]:
    """Every loop of ``body`` (by object identity) → its number in pre-order."""
    return {id(n): k for k, n in enumerate(x for x in A.walk(body) if isinstance(x, (A.While, A.For)))}


def has_loop(s: A.Stmt) -> bool:
    return any(isinstance(n, (A.While, A.For)) for n in A.walk(s))


def as_while(s) -> Tuple[A.Expr, A.Stmt, Optional[A.Stmt]]:
    """(guard, body, init) of a loop; a ``for`` is the counted while loop the CFA builds."""
    if isinstance(s, A.While):
        return s.cond, s.body, None
    i = A.Var(s.var)
    g = A.Binary("<=" if s.inclusive else "<", i, s.hi)
    body = A.Block(tuple(s.body.stmts) + (A.Assign((i,), A.Binary("+", i, A.num(1))),))
    return g, body, A.Assign((i,), s.lo)


def dist_outcomes(d: A.Call) -> Tuple[Optional[A.Expr], List[Tuple[A.Expr, A.Expr]]]:
    """(the range condition or None, [(probability, value)]) of a discrete distribution."""
    if d.func == "bern" and len(d.args) == 1:
        p = d.args[0]
        ok = _fold(A.Binary("&&", A.Binary("<=", ZERO, p), A.Binary("<=", p, ONE)))
        return ok, [(p, A.BoolLit(True)), (simp(A.Binary("-", ONE, p)), A.BoolLit(False))]
    if d.func == "unif" and len(d.args) == 2:
        lo, hi = _num(d.args[0]), _num(d.args[1])
        if lo is None or hi is None or lo.denominator != 1 or hi.denominator != 1 or hi < lo:
            raise NotApplicable("unif(lo, hi) with bounds that are not integer literals")
        n = int(hi - lo) + 1
        if n > MAX_VALUES:
            raise NotApplicable(f"unif over {n} values (at most {MAX_VALUES} are expanded)")
        w = A.Num(Fraction(1, n), False)
        return None, [(w, A.Num(Fraction(int(lo) + k), True)) for k in range(n)]
    if d.func == "unif" and len(d.args) == 1 and isinstance(d.args[0], A.SetLit):
        items = d.args[0].items
        if not all(isinstance(x, (A.Num, A.BoolLit)) for x in items) or len(set(items)) != len(items):
            raise NotApplicable("unif over a set whose values are not distinct literals")
        w = A.Num(Fraction(1, len(items)), False)
        return None, [(w, x) for x in items]
    raise NotApplicable(f"the distribution {d.func} is not a discrete one this engine weights")


def symbolic_unif(d: A.Call) -> bool:
    """``unif(lo, hi)`` whose bounds are not both integer literals (weighted by one test of the
    sample, :meth:`Wpe.unif_by_atom`, instead of value by value)."""
    if d.func != "unif" or len(d.args) != 2:
        return False
    lo, hi = _num(d.args[0]), _num(d.args[1])
    return lo is None or hi is None


def _is_int(e: A.Expr, types: Dict[str, A.Type]) -> bool:
    """``e`` surely has an integer value: integer literals and variables (array elements of
    ``int[]``) under ``+ - * div mod``, unary minus, ``abs``/``min``/``max`` and a conditional
    (each of these maps integers to an integer)."""
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


def atoms_of(f: A.Expr, x: str, types: Dict[str, A.Type]) -> Optional[List[A.Expr]]:
    """The distinct Boolean atoms of ``f`` that read ``x`` — the outermost comparisons or elements
    of a ``bool[]`` array containing x — in order of first occurrence, or None when x is read
    outside any atom or an atom reads a bound variable of f."""
    found: List[A.Expr] = []
    inside = 0

    def visit(e: A.Node) -> None:
        nonlocal inside
        if not isinstance(e, A.Expr) or x not in set(free_vars(e)):
            return
        boolean = isinstance(e, A.Binary) and e.op in ("==", "!=", "<", "<=", ">", ">=")
        if isinstance(e, A.Index) and isinstance(e.base, A.Var):
            boolean = types.get(e.base.name) == A.array_of(A.BOOL)
        if boolean:
            found.append(e)
            inside += sum(1 for n in A.walk(e) if n == A.Var(x))
            return
        for c in A.children(e):
            visit(c)

    visit(f)
    total = sum(1 for n in A.walk(f) if n == A.Var(x))
    if not found or inside != total:
        return None
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    out: List[A.Expr] = []
    for a in found:
        if set(free_vars(a)) & bound:
            return None
        if a not in out:
            out.append(a)
    return out


def the_atom(f: A.Expr, x: str, types: Dict[str, A.Type]) -> Optional[A.Expr]:
    """The one Boolean atom of ``f`` that reads ``x`` (:func:`atoms_of`, the same syntactically
    at every place x occurs), or None."""
    atoms = atoms_of(f, x, types)
    return atoms[0] if atoms is not None and len(atoms) == 1 else None


MAX_ATOMS = 3


def by_atoms(
    f: A.Expr,
    x: str,
    lo: A.Expr,
    hi: A.Expr,
    n: A.Expr,
    atoms: List[A.Expr],
    is_int: Callable[[A.Expr], bool] = lambda e: False,
) -> A.Expr:
    """The average of ``f`` over ``x ~ unif(lo, hi)`` (N = ``n`` values) when f reads x in the
    atoms φ₁…φₖ: every truth assignment c of the atoms but the all-false one is weighted by
    ``q_c = sum(u in lo..=hi: (φ₁(u) = c₁ ∧ …) ? 1 : 0)/N`` (its closed form when the literals
    are integer thresholds, :func:`range_count`), the all-false one by ``1 - Σ q_c``
    (the assignments partition the range, so this is the average exactly), each with ``f[φᵢ :=
    cᵢ]``; capped at 1 (f is a probability bound). Only for the upper transformer."""
    k = len(atoms)
    combos = list(itertools.product((True, False), repeat=k))
    inner = [subst(a, {x: A.Var("u$")}) for a in atoms]
    acc: A.Expr = ZERO
    rest: A.Expr = ONE
    for combo in combos:
        g = f
        for a, v in sorted(zip(atoms, combo), key=lambda t: -size(t[0])):
            g = replace_node(g, a, A.BoolLit(v))
        g = _fold(g)
        if all(not v for v in combo):
            acc = plus(acc, times(rest, g))
            break
        body = and_all([a if v else not_(a) for a, v in zip(inner, combo)])
        q = A.Binary("/", range_count("u$", lo, hi, body, is_int), n)
        acc = plus(acc, times(q, g))
        rest = A.Binary("-", rest, q)
    return A.Call("min", (ONE, acc))


NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _positive(e: A.Expr) -> A.Expr:
    """A negated order comparison ``!(a <= b)`` as ``a > b`` (the orders are total), conjunctions
    alike; anything else as it is."""
    if isinstance(e, A.Binary) and e.op == "&&":
        return A.Binary("&&", _positive(e.left), _positive(e.right))
    if isinstance(e, A.Unary) and e.op == "!" and isinstance(e.operand, A.Binary) and e.operand.op in NEGATED:
        return A.Binary(NEGATED[e.operand.op], e.operand.left, e.operand.right)
    return e


def range_count(u: str, lo: A.Expr, hi: A.Expr, test: A.Expr, is_int: Callable[[A.Expr], bool]) -> A.Expr:
    """The number of integers ``u`` in ``lo..=hi`` passing ``test``: ``sum(u in lo..=hi: test ?
    1 : 0)``, or its closed form ``max(0, min(U…) - max(L…) + 1)`` when the test is a
    conjunction of thresholds (``u <= e``, ``u < e``, ``e >= u``, ``!(u > e)``, ``u == e``…)
    against integer expressions e that do not read u and the range's ends are integers
    (:func:`tamp.core.counts.closed_count`). Why the closed form is exact: over the integers
    ``u < e`` is ``u <= e - 1`` and ``u > e`` is ``u >= e + 1``, so the passing values are the
    integers of one interval ``max(L…)..min(U…)`` (the range's own ends among L and U), of which
    there are ``U - L + 1``, or none when ``U < L`` (also an empty range) — hence the ``max(0,
    …)``. A threshold against a real-valued e (``u <= N/2``) is not closed (``u <= e`` is then
    ``u <= floor(e)``, which the language has no name for): the sum stays, as before."""
    body = A.Cond(test, ONE, ZERO)
    if is_int(lo) and is_int(hi):
        closed = closed_count(A.Sum(u, lo, hi, True, A.Cond(_positive(test), ONE, ZERO)), is_int)
        if closed is not None:
            return closed
    return A.Sum(u, lo, hi, True, body)


def replace_node(e: A.Expr, old: A.Expr, new: A.Expr) -> A.Expr:
    """``e`` with every subexpression equal to ``old`` replaced by ``new``."""

    class _Rep(Transformer):
        def enter(self, node):
            return new if node == old else DESCEND

    out: A.Expr = _Rep().walk(e)
    return out


Searcher = Callable[[int, A.Stmt, A.Expr, "Wpe"], LoopAnnot]


class Wpe:
    """The pre-expectation transformer over one program body. ``annots`` holds each loop's
    proof (by pre-order number); a loop without one is given to ``search`` (the prover's
    candidate search), and a checker passes none (a missing loop proof is an error). Every loop
    adds its INDUCT and TERM obligations to :attr:`obligations`. ``upper`` False gives the
    lower pre-expectation (parameters out of range give 0; loops are refused)."""

    def __init__(self, body: A.Stmt, params, annots=None, search: Optional[Searcher] = None, upper=True, types=None):
        self.ids = loops_of(body)
        self.params = frozenset(params)
        self.types: Dict[str, A.Type] = dict(types or {})
        self.annots: Dict[int, LoopAnnot] = dict(annots or {})
        self.search = search
        self.upper = upper
        self.obligations: List[Tuple[str, str, A.Expr]] = []
        self.visited: set = set()  # the loops proved by an invariant (not unrolled)

    def stmt(self, s: A.Stmt, f: A.Expr) -> A.Expr:
        out = self._stmt(s, f)
        if size(out) > MAX_NODES:
            raise NotApplicable("the expected failure grows too large to decide (too many coins in sequence)")
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
            target = _target(s)
            if symbolic_unif(s.dist):
                return self.unif_by_atom(s, target, f)
            if s.dist.func in TAIL_CHANCES and len(s.dist.args) == 2:  # lap, exp: tails.py
                return self.lap_by_atom(s, target, f)
            ok, outs = dist_outcomes(s.dist)
            acc: Optional[A.Expr] = None
            for p, v in outs:
                term = times(p, assign(f, target, v))
                acc = term if acc is None else plus(acc, term)
            assert acc is not None
            return cond(ok, acc, ONE if self.upper else ZERO) if ok is not None else acc
        if isinstance(s, A.If):
            t = self.stmt(s.then, f)
            o = self.stmt(s.other, f) if s.other is not None else f
            return cond(s.cond, t, o)
        if isinstance(s, A.Assume):
            return cond(s.cond, f, ZERO)
        if isinstance(s, (A.While, A.For)):
            if not self.upper:
                raise NotApplicable("a loop inside a loop body whose exit chance is needed")
            return self.loop(s, f)
        raise NotApplicable(f"line {_line(s)}: statement {type(s).__name__}")

    def unif_by_atom(self, s: A.Sample, target: A.Expr, f: A.Expr) -> A.Expr:
        """``x ~ unif(lo, hi)`` with bounds that are not literals, when ``f`` reads x only inside
        one Boolean atom φ(x) (:func:`the_atom`): with N = hi - lo + 1 values, of which
        ``cnt`` satisfy φ, the pre-expectation is exactly ``(cnt/N)·f[φ := true] + (1 -
        cnt/N)·f[φ := false]`` (1 for an empty range, 0 for the lower one). ``cnt`` is ``lo <= e
        && e <= hi ? 1 : 0`` for φ = ``x == e`` (``N - that`` for ``!=``), for a threshold ``x <= e``
        (``<``, ``>=``, ``>``, either way round) against an integer e the closed count ``max(0,
        min(hi, e) - lo + 1)`` and its like (:func:`range_count`, exact: see there), else ``sum(t
        in lo..=hi: φ(t) ? 1 : 0)``."""
        if not isinstance(target, A.Var):  # a[e] ~ unif: the element's new value is a fresh x
            x = "x$"
            taken = set(free_vars(f)) | {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
            while x in taken or x in self.types:
                x += "$"
            self.types[x] = A.INT
            f = assign(f, target, A.Var(x))
        else:
            x = target.name
        f = split_extrema(f, x)  # min(a, x) > c as a > c && x > c (:func:`.powers.split_extrema`)
        lo, hi = s.dist.args
        n = _fold(A.Binary("+", A.Binary("-", hi, lo), ONE))
        miss = ONE if self.upper else ZERO
        if x not in set(free_vars(f)):
            return cond(A.Binary(">=", n, ONE), f, miss)
        phi = the_atom(f, x, self.types)
        if phi is None:
            if not self.upper:
                raise NotApplicable(f"line {_line(s)}: the failure reads {x} ~ unif(lo, hi) other than by one test")
            if isinstance(target, A.Index):  # the written element apart from the others
                f = _fold(split_at(f, target.index))
            try:
                return cond(A.Binary(">=", n, ONE), _fold(hit_bound(f, x, n)), miss)
            except NoHitBound as exc:
                atoms = atoms_of(f, x, self.types)
                if atoms is not None and len(atoms) <= MAX_ATOMS:  # exactly, atom by atom
                    weighed = by_atoms(f, x, lo, hi, n, atoms, lambda e: _is_int(e, self.types))
                    return cond(A.Binary(">=", n, ONE), weighed, miss)
                raise NotApplicable(
                    f"line {_line(s)}: the failure reads {x} ~ unif(lo, hi) other than by one test ({exc})"
                ) from None
        cnt: A.Expr
        if isinstance(phi, A.Binary) and phi.op in ("==", "!=") and (phi.left == A.Var(x)) != (phi.right == A.Var(x)):
            e = phi.right if phi.left == A.Var(x) else phi.left
            if x in set(free_vars(e)) or not _is_int(e, self.types):
                raise NotApplicable(f"line {_line(s)}: {x} compared with a value that may not be an integer")
            hit = A.Cond(A.Binary("&&", A.Binary("<=", lo, e), A.Binary("<=", e, hi)), ONE, ZERO)
            cnt = hit if phi.op == "==" else A.Binary("-", n, hit)
        else:  # a threshold test: its closed count (:func:`range_count`), else the sum
            t = "u$"
            cnt = range_count(t, lo, hi, subst(phi, {x: A.Var(t)}), lambda e: _is_int(e, self.types))
        q = A.Binary("/", cnt, n)
        yes, no = replace_node(f, phi, A.BoolLit(True)), replace_node(f, phi, A.BoolLit(False))
        acc = plus(times(q, _fold(yes)), times(simp(A.Binary("-", ONE, q)), _fold(no)))
        return cond(A.Binary(">=", n, ONE), acc, miss)

    def lap_by_atom(self, s: A.Sample, target: A.Expr, f: A.Expr) -> A.Expr:
        """``x ~ lap(m, s)`` when ``f`` reads x only in one test φ of :func:`tails.lap_chance`:
        ``s > 0 ? q·f[φ := true] + (1 - q)·f[φ := false] : 1`` with q = Pr[φ] exactly."""
        m, scale = s.dist.args
        miss = ONE if self.upper else ZERO
        if not isinstance(target, A.Var):
            raise NotApplicable(f"line {_line(s)}: a Laplace draw into an array element")
        x = target.name
        positive = A.Binary(">", scale, ZERO)
        if x not in set(free_vars(f)):
            return cond(positive, f, miss)
        f = split_extrema(f, x)  # min(a, x) > c as a > c && x > c: independent tails multiply
        event = one_event(f, x)  # `abs(y - v) <= t` and `abs(y - v) > t`: one event
        if event is not None:
            f = event[0]
        phi = the_atom(f, x, self.types)
        q = tail_chance(s.dist.func, phi, x, m, scale) if phi is not None else None
        if phi is None or q is None:
            raise NotApplicable(f"line {_line(s)}: the failure reads {x} ~ lap(m, s) other than by one tail test")
        yes, no = replace_node(f, phi, A.BoolLit(True)), replace_node(f, phi, A.BoolLit(False))
        acc = plus(times(q, _fold(yes)), times(simp(A.Binary("-", ONE, q)), _fold(no)))
        return cond(positive, acc, miss)

    def loop(self, s, f: A.Expr) -> A.Expr:
        key = self.ids[id(s)]
        unrolled = unroll(s)
        if unrolled is not None:  # a `for` over literal bounds: its iterations, exactly
            return self.stmt(unrolled, f)
        self.visited.add(key)
        g, body, init = as_while(s)
        annot = self.annots.get(key)
        if annot is None:
            if self.search is None:
                raise NotApplicable(f"no proof given for the loop at line {_line(s)}")
            annot = self.search(key, s, f, self)
            self.annots[key] = annot
        self.obligations.extend(self.loop_obligations(s, g, body, f, annot))
        e = invariant(g, annot.core, f)
        return self.stmt(init, e) if init is not None else e

    def loop_obligations(self, s, g, body, f, annot: LoopAnnot) -> List[Tuple[str, str, A.Expr]]:
        where = f"loop at line {_line(s)}"
        e = invariant(g, annot.core, f)
        out = [("INDUCT", where + w, ob) for w, ob in induct_formulas(g, self.stmt(body, e), annot.core)]
        return out + term_obligations(where, g, body, annot, self.params)


def induct_formulas(g: A.Expr, after: A.Expr, core: A.Expr) -> List[Tuple[str, A.Expr]]:
    """INDUCT ``g ⇒ after <= cap(core)``, split by cases when the core is a chain of at least
    two conditionals ``c1 ? e1 : c2 ? e2 : … : e`` (a staircase): one formula under ``c1``, one
    under ``!c1 && c2``, …, one under ``!c1 && … && !ck`` — together exactly the one formula
    (the cases cover every state), each easier for the solver. (" when …", formula) pairs."""
    whole = A.Binary("<=", after, cap(core))
    conds: List[A.Expr] = []
    e = core
    while isinstance(e, A.Cond):
        conds.append(e.cond)
        e = e.other
    if len(conds) < 2:
        return [("", A.Binary("==>", g, whole))]
    out: List[Tuple[str, A.Expr]] = []
    for k in range(len(conds) + 1):
        case = and_all([not_(c) for c in conds[:k]] + conds[k : k + 1])
        out.append((f" when {show_expr(case)}", A.Binary("==>", A.Binary("&&", g, case), whole)))
    return out


MAX_UNROLL = 8


def unroll(s) -> Optional[A.Stmt]:
    """``for i in lo..hi { B }`` with integer literal bounds and at most :data:`MAX_UNROLL`
    iterations, as the straight-line code it runs (``i`` is read-only in B): ``i := lo; B;
    i := lo + 1; B; …; i := hi``. None for any other loop."""
    if not isinstance(s, A.For):
        return None
    lo, hi = _num(s.lo), _num(s.hi)
    if lo is None or hi is None or lo.denominator != 1 or hi.denominator != 1:
        return None
    last = int(hi) + (1 if s.inclusive else 0)  # the first value that ends the loop
    n = last - int(lo)
    if n > MAX_UNROLL or s.var in written_vars(s.body):
        return None
    i = A.Var(s.var)
    out: List[A.Stmt] = []
    for k in range(max(n, 0)):
        out.append(A.Assign((i,), A.Num(Fraction(int(lo) + k), True)))
        out.extend(s.body.stmts)
    out.append(A.Assign((i,), A.Num(Fraction(max(last, int(lo))), True)))
    return A.Block(tuple(out))


def invariant(g: A.Expr, core: A.Expr, f: A.Expr) -> A.Expr:
    return A.Cond(g, cap(core), f)


def cap(core: A.Expr) -> A.Expr:
    """``max(0, min(1, core))``: the invariant as a probability, so that Park induction is in
    the lattice of [0, 1]-valued expectations (a negative core would otherwise "bound" the
    failure of a loop from below its least fixed point)."""
    return A.Call("max", (ZERO, A.Call("min", (ONE, core))))


def term_obligations(where, g, body, annot: LoopAnnot, params) -> List[Tuple[str, str, A.Expr]]:
    if annot.term == "rank":
        r = annot.measure
        after = all_outcomes(body, A.Binary("<=", r, A.Var("r$")))
        dec = subst(after, {"r$": A.Binary("-", r, ONE)})
        return [
            (
                "TERM",
                f"{where}: rank {show_expr(r)} > 0 while the loop runs",
                A.Binary("==>", g, A.Binary(">", r, ZERO)),
            ),
            ("TERM", f"{where}: every iteration lowers the rank by 1", A.Binary("==>", g, dec)),
        ]
    if annot.term == "exit":
        if has_loop(body):
            raise NotApplicable("an exit chance for a loop whose body has a loop")
        delta = annot.measure
        if set(free_vars(delta)) - set(params):
            raise NotApplicable("an exit chance that reads more than the inputs")
        lower = Wpe(body, params, upper=False).stmt(body, ind(not_(g)))
        return [
            ("TERM", f"{where}: exit chance {show_expr(delta)} > 0", A.Binary(">", delta, ZERO)),
            (
                "TERM",
                f"{where}: each iteration ends the loop with probability >= {show_expr(delta)}",
                A.Binary("==>", g, A.Binary(">=", lower, delta)),
            ),
        ]
    if annot.term == "variant":  # a probabilistic variant (tamp.prover.expectation.retries)
        if has_loop(body):
            raise NotApplicable("a probabilistic variant for a loop whose body has a loop")
        v, eps = annot.measure, annot.chance
        if eps is None or set(free_vars(eps)) - set(params):
            raise NotApplicable("a progress chance that reads more than the inputs")
        before = A.Var("v$")
        noninc = all_outcomes(body, A.Binary("||", not_(g), A.Binary("<=", v, before)))
        lower = Wpe(body, params, upper=False).stmt(
            body, ind(A.Binary("||", not_(g), A.Binary("<=", v, A.Binary("-", before, ONE))))
        )
        return [
            ("TERM", f"{where}: progress chance {show_expr(eps)} > 0", A.Binary(">", eps, ZERO)),
            (
                "TERM",
                f"{where}: variant {show_expr(v)} > 0 while the loop runs",
                A.Binary("==>", g, A.Binary(">", v, ZERO)),
            ),
            ("TERM", f"{where}: no iteration raises the variant", A.Binary("==>", g, subst(noninc, {"v$": v}))),
            (
                "TERM",
                f"{where}: each iteration ends the loop or lowers the variant by 1 with probability >= {show_expr(eps)}",
                A.Binary("==>", g, A.Binary(">=", subst(lower, {"v$": v}), eps)),
            ),
        ]
    raise NotApplicable(f"unknown termination argument {annot.term!r}")


def all_outcomes(s: A.Stmt, q: A.Expr) -> A.Expr:
    """The weakest precondition for ``q`` to hold after *every* outcome of ``s`` (samplings
    quantified over all their values; a loop inside must leave q's variables alone)."""
    if isinstance(s, A.Block):
        for x in reversed(s.stmts):
            q = all_outcomes(x, q)
        return q
    if isinstance(s, (A.Skip, A.VarDecl)):
        return q
    if isinstance(s, A.Assign):
        return assign(q, _target(s), s.value, fold=False)
    if isinstance(s, A.Sample):
        target = _target(s)
        if A.target_name(target) not in set(free_vars(q)):
            return q
        _ok, outs = dist_outcomes(s.dist)
        return and_all([assign(q, target, v, fold=False) for _p, v in outs])
    if isinstance(s, A.If):
        t = all_outcomes(s.then, q)
        o = all_outcomes(s.other, q) if s.other is not None else q
        if t == o:  # the branch does not matter to q
            return t
        return A.Binary("&&", A.Binary("==>", s.cond, t), A.Binary("==>", not_(s.cond), o))
    if isinstance(s, A.Assume):
        return A.Binary("==>", s.cond, q)
    if isinstance(s, (A.While, A.For)):
        if written_vars(s) & set(free_vars(q)):
            raise NotApplicable("an inner loop changes the rank of the loop around it")
        return q
    raise NotApplicable(f"statement {type(s).__name__}")


def _line(s) -> int:
    return s.pos.line if getattr(s, "pos", None) is not None else 0


# ------------------------------------------------------------------------ the claim


@dataclass
class ExpClaim:
    body: A.Stmt
    requires: List[A.Expr]
    post: A.Expr  # [¬ensures]
    types: Dict[str, A.Type]
    params: List[str]


def claim_of(program: A.Program, cfa) -> ExpClaim:
    """The claim, or :class:`NotApplicable` when the program is outside the engine's rules."""
    body = coins_for_unreliable(program)  # an unreliable operator: its coin before its statement
    if body is None:
        raise NotApplicable(
            "an unreliable operator in a loop test, a bound or a distribution (left to the union bound)"
        )
    for n in A.walk(body):
        if isinstance(n, A.Sample):
            if not symbolic_unif(n.dist) and n.dist.func not in TAIL_CHANCES:
                dist_outcomes(n.dist)  # raises for a continuous distribution (lap: tails.py)
        if isinstance(n, (A.Assign, A.Sample)):
            _target(n)  # raises for a tuple or a nested element write
    if not any(isinstance(n, A.Sample) for n in A.walk(body)):
        raise NotApplicable("no sampling")
    bound = {n.var for e in cfa.ensures for n in A.walk(e) if isinstance(n, (A.Sum, A.Quant))}
    if bound & set(cfa.types):
        raise NotApplicable("a quantified variable shares its name with a program variable")
    post = ind(not_(and_all(list(cfa.ensures))))
    types = dict(cfa.types)
    types.setdefault("r$", A.REAL)
    return ExpClaim(body, list(cfa.requires), post, types, [p.name for p in cfa.params])


def obligations_for(
    claim: ExpClaim, beta: A.Expr, annots=None, search=None
) -> Tuple[A.Expr, Dict[int, LoopAnnot], list]:
    """(wpe(body, [¬ensures]), the loop proofs used, every obligation) — the checker calls it
    with the certificate's loop proofs, the prover with its search."""
    w = Wpe(claim.body, claim.params, annots, search, types=claim.types)
    pre = w.stmt(claim.body, claim.post)
    obs = list(w.obligations)
    obs.append(("BUDGET", "the expected failure is at most the bound", A.Binary("<=", pre, beta)))
    return pre, {k: a for k, a in w.annots.items() if k in w.visited}, obs


class Checker(ConcChecker):
    """Decides obligations under ``requires`` with the prover's encoder, its lemmas and the
    product lemmas of :func:`axioms.lemmas.product_lemmas` (the concentration engine's checker,
    :class:`tamp.prover.concentration.proof.Checker`, with those lemmas and a cache of answers)."""

    def __init__(self, claim: ExpClaim, deadline: Optional[float] = None, ms: int = QUERY_MS):
        super().__init__(claim, deadline, ms)
        self.cache: Dict[A.Expr, str] = {}

    split = False  # a second round's exp(a + b) = exp(a)·exp(b) facts (:mod:`axioms.exp_split`)

    def extra_hyps(self, f) -> list:
        import z3

        apps = transcendental_apps(z3.And(*self.hyps, f)) if self.enc.has_apps else []
        more = split_lemmas(apps, self.enc) if self.split else []
        return [lem for _n, lem in product_lemmas(apps, self.enc) + more]

    def valid_split(self, formula: A.Expr) -> str:
        """``formula`` decided again with the ``exp-split`` facts added (:mod:`axioms.exp_split`):
        a product of three or more exact tails against one exponential. Without such facts for
        the formula's exponentials nothing is asked (``""``: not decided again)."""
        import z3

        try:
            f = self.enc.expr(formula, self.env)
        except Exception:  # noqa: BLE001 - not encodable: nothing to ask again
            return ""
        apps = transcendental_apps(z3.And(*self.hyps, f)) if self.enc.has_apps else []
        if not split_lemmas(apps, self.enc):
            return ""
        self.split = True
        try:
            return ConcChecker.valid(self, formula)
        finally:
            self.split = False

    def valid(self, formula: A.Expr, ms: Optional[int] = None) -> str:
        key = formula  # syntax trees compare by structure (positions aside)
        if key in self.cache:
            return self.cache[key]
        st = self.cache[key] = super().valid(formula, ms)
        return st


# ------------------------------------------------------------------------ the search


def _atoms(e: A.Expr, types: Dict[str, A.Type]) -> List[A.Expr]:
    """The comparisons and Boolean variables of ``e``."""
    out: List[A.Expr] = []
    for n in A.walk(e):
        if isinstance(n, A.Binary) and n.op in ("==", "!=", "<", "<=", ">", ">="):
            out.append(n)
        elif isinstance(n, A.Var) and types.get(n.name) == A.BOOL:
            out.append(n)
    return out


def counters(body: A.Stmt, s) -> List[Tuple[str, int]]:
    """(variable, step) of the statements ``c := c ± d`` in the loop (d an integer literal)."""
    out = []
    if isinstance(s, A.For):
        out.append((s.var, 1))
    for n in A.walk(body):
        if isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            c = n.targets[0].name
            v = n.value
            if (
                isinstance(v, A.Binary)
                and v.op in ("+", "-")
                and v.left == A.Var(c)
                and isinstance(v.right, A.Num)
                and v.right.is_int
                and v.right.value > 0
            ):
                step = int(v.right.value) * (1 if v.op == "+" else -1)
                if (c, step) not in out:
                    out.append((c, step))
    return out


def increment_chance(claim: ExpClaim, body: A.Stmt, c: str, chk: Optional["Checker"] = None) -> Optional[A.Expr]:
    """The probability that one run of the loop body raises ``c`` by exactly 1, when it is the
    same in every state: the (lower) pre-expectation of ``[c == c₀ + 1]`` with the counter's
    old and new value both read as 0 (an increment by a literal does not depend on them), if
    what is left reads only inputs; conditions ``requires`` implies dropped for reading. Only a
    proposal for :func:`tamp.prover.expectation.levels.level_cores` (INDUCT checks the core)."""
    old = c + "$0"
    f = ind(A.Binary("==", A.Var(c), A.Binary("+", A.Var(old), ONE)))
    try:
        e = Wpe(body, claim.params, upper=False, types=claim.types).stmt(body, f)
    except NotApplicable:
        return None
    e = _fold(subst(e, {c: ZERO, old: ZERO}))
    if set(free_vars(e)) - set(claim.params):
        return None
    return readable(e, claim, chk) if chk is not None else e


def core_candidates(
    claim: ExpClaim, beta: A.Expr, s, g: A.Expr, body: A.Stmt, f: A.Expr, chk: Optional["Checker"] = None
) -> List[A.Expr]:
    """Invariant expectations to try at a loop head: the bound with an integer input replaced by
    the iterations left (``k`` → ``k - att``, with off-by-one variants; pairs of a counter and an
    input compared with each other in the guard or the postcondition first), also guarded by a
    condition of the postcondition (``lost == 0 ? (n - i)·q·q : 1``, ``cnt >= 1 ? 0 : …``) and by
    the counters' progress (``cnt >= 0 ? … : 1``), then the bound itself and 0."""
    changed = written_vars(body)
    params = [p for p in claim.params if p in set(free_vars(beta)) and claim.types.get(p) == A.INT]
    atoms = _atoms(and_all([g, f]), claim.types)

    def together(c: str, p: str) -> int:
        return 0 if any({c, p} <= set(free_vars(a)) for a in atoms) else 1

    pairs = sorted(((c, step, p) for c, step in counters(body, s) for p in params), key=lambda t: together(t[0], t[2]))
    conds: List[A.Expr] = prefix_conds(claim, body, s, f)
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    for a in _atoms(f, claim.types):
        if set(free_vars(a)) & changed and not set(free_vars(a)) & bound and a not in conds:
            conds.append(a)
    facts = counter_facts(claim, body, s)
    # a count of events reaching a threshold (few loops have one; cheap to propose first)
    lefts: List[A.Expr] = [A.Binary("-", A.Var(p), A.Var(c)) if step > 0 else A.Var(c) for c, step, p in pairs]
    out: List[A.Expr] = flag_event_cores(s, f)  # exact for a deterministic loop that raises flags
    out += level_cores(counters(body, s), f, lefts, lambda c: increment_chance(claim, body, c, chk))
    out += special_cores(claim, beta, body, pairs, conds)  # only for loops that single one out
    flags: List[A.Expr] = [a for a in conds if isinstance(a, A.Var)]  # a failure flag raised so far
    spent = spent_cores(claim, beta, f, pairs, flags)  # a union bound over the pairs sampled so far
    out += spent + ([A.Cond(facts, x, ONE) for x in spent] if facts is not None else [])
    nested = id(s) in nested_loops(claim.body)
    if nested:  # a retry inside a loop: what follows on success, plus the chance of no success
        out += flag_cores(claim, beta, s, g, body, f, pairs)
    late: List[A.Expr] = []
    for c, step, p in pairs:
        for d in (0, -1, 1):
            rep: A.Expr = A.Binary("-", A.Var(p), A.Var(c)) if step > 0 else A.Var(c)
            if d:
                rep = A.Binary("+" if d > 0 else "-", rep, A.num(abs(d)))
            b = _fold(subst(beta, {p: rep}))
            # "no failure once a holds" first: `a ? b : 1` is trivial where a fails
            forms = [b] + [A.Cond(a, ZERO, b) for a in conds] + [A.Cond(a, b, ONE) for a in conds]
            out += forms
            late += ordered_cores(conds, b)
            if facts is not None:
                out += [A.Cond(facts, x, ONE) for x in forms]
    if not nested:
        out += flag_cores(claim, beta, s, g, body, f, pairs)
    out += late + [beta, ZERO]
    seen, uniq = set(), []
    for e in out:
        k = show_expr(e)
        if k not in seen:
            seen.add(k)
            uniq.append(e)
    return uniq


def toggle_cores(claim: ExpClaim, beta: A.Expr, s, g: A.Expr, body: A.Stmt, f: A.Expr) -> List[A.Expr]:
    """``F + the bound's share of the iterations left`` (:func:`.toggles.budget_cores`) for the
    pairs of a counter and an integer input of the bound, for a loop without a loop inside (each
    proposal for an outer loop would cost a search of the inner one). Only proposals: INDUCT
    checks them."""
    if has_loop(body):
        return []
    params = [p for p in claim.params if p in set(free_vars(beta)) and claim.types.get(p) == A.INT]
    pairs = [(c, step, p) for c, step in counters(body, s) for p in params]
    adds = set(accumulators(body)) | {c for c, _step in counters(body, s)}
    return budget_cores(f, g, written_vars(body), beta, pairs, _fold, counter_facts(claim, body, s), adds)


def synth_cores(claim: ExpClaim, beta: A.Expr, s, body: A.Stmt, f: A.Expr, chk: "Checker", induct) -> Iterator[A.Expr]:
    """Cores found by synthesis (:mod:`tamp.prover.expectation.synthesis`), tried after the
    recognised ones: for a continuation with a failure indicator ``[x >= a]`` on a counter or
    accumulator x the loop raises, the template ``c >= c0 && x >= 0 ? λ₀ + λ₁·x/a +
    λ₂·β[p := p - c] : 1`` (Markov's inequality with the bound's share of the iterations
    left), its coefficients found by CEGIS. Only proposals: the search decides INDUCT for
    each one again."""
    if has_loop(body):
        return
    steps = [c for c, step in counters(body, s) if step > 0]
    raised = steps + [x for x in accumulators(body) if x not in steps]
    yield from streak_cores(claim, s, body, f, chk, induct)
    blocks = markov_blocks(f, raised, written_vars(body))
    if not blocks:
        return
    params = [p for p in claim.params if p in set(free_vars(beta)) and claim.types.get(p) == A.INT]
    lefts: List[A.Expr] = []
    for c, step in counters(body, s):
        for p in params:
            if step > 0:
                left = _fold(subst(beta, {p: A.Binary("-", A.Var(p), A.Var(c))}))
                if left not in lefts:
                    lefts.append(left)
    facts = counter_facts(claim, body, s)
    # an accumulator read by a block is read where it is not negative (Markov's inequality
    # needs x >= 0; only a guard of the proposal: INDUCT and BUDGET decide it)
    signs = [
        A.Binary(">=", A.Var(x), ZERO) for x in raised if x not in steps and any(A.Var(x) in A.walk(b) for b in blocks)
    ]
    if signs:
        facts = and_all(([facts] if facts is not None else []) + signs)
    cegis = Cegis(chk, claim.types)
    for extra in [[x] for x in lefts[:4]] + [[]]:
        terms = blocks[:2] + extra
        yield from cegis.search(template(terms, facts), len(terms) + 1, induct)


def streak_cores(claim: ExpClaim, s, body: A.Stmt, f: A.Expr, chk: "Checker", induct) -> Iterator[A.Expr]:
    """Longest-run cores (:func:`tamp.prover.expectation.synthesis.streak_templates`) of a
    counted loop, the chances its ``bern(p)`` samplings over inputs give, by CEGIS. Proposals."""
    cnt = counted(s, written_vars(body))
    if cnt is None:
        return
    i, hi, inclusive = cnt
    left = A.Binary("-", hi, A.Var(i))
    if inclusive:
        left = A.Binary("+", left, ONE)
    chances = [
        n.dist.args[0]
        for n in A.walk(body)
        if isinstance(n, A.Sample) and n.dist.func == "bern" and set(free_vars(n.dist.args[0])) <= set(claim.params)
    ][:2]
    tmpls = streak_templates(f, body, left, chances, counter_facts(claim, body, s))
    if not tmpls:
        return
    cegis = Cegis(chk, claim.types)
    for tmpl in tmpls:
        yield from cegis.search(tmpl, tmpl_size(tmpl), induct)


def body_pre(claim: ExpClaim, body: A.Stmt) -> Callable[[A.Expr], Optional[A.Expr]]:
    """The pre-expectation of one run of ``body`` (None where the transformer does not apply)."""

    def pre(x: A.Expr) -> Optional[A.Expr]:
        try:
            return Wpe(body, claim.params, types=claim.types).stmt(body, x)
        except NotApplicable:
            return None

    return pre


def first_moment_cores(claim: ExpClaim, s, body: A.Stmt, f: A.Expr) -> Iterator[A.Expr]:
    """Markov's inequality on a count or sum the loop builds, its expected increments read off
    the body by this engine's pre-expectation (:mod:`tamp.prover.expectation.moments`);
    computed only when the recognised cores are used up. Only proposals: INDUCT checks them."""
    if has_loop(body):
        return

    pre = body_pre(claim, body)
    positive = {p for p in claim.params if claim.types.get(p) in (A.INT, A.REAL)}
    guard = counter_facts(claim, body, s)
    yield from moment_cores(f, s, written_vars(body), positive, pre, guard, set(claim.types))


def retry_cores(
    claim: ExpClaim, s, g: A.Expr, body: A.Stmt, f: A.Expr, chk: Optional["Checker"] = None
) -> Iterator[A.Expr]:
    """Markov cores from a ranking supermartingale V/ε of a retry loop
    (:func:`tamp.prover.expectation.retries.rsm_cores`). Only proposals: INDUCT checks them.
    None for a counted loop (its increments left are :func:`first_moment_cores`' exactly)."""
    if has_loop(body) or counted(s, written_vars(body)) is not None:
        return
    pre = body_pre(claim, body)
    positive = {p for p in claim.params if claim.types.get(p) in (A.INT, A.REAL)}
    guard = counter_facts(claim, body, s)
    chance = progress_chance(claim, body, chk)
    yield from rsm_cores(f, g, body, written_vars(body), positive, set(claim.params), pre, guard, chance)


def composed_cores(claim: ExpClaim, beta: A.Expr, s, body: A.Stmt, f: A.Expr) -> Iterator[A.Expr]:
    """Cores of nested loops whose claim is an expectation of the state (a branching process'
    population): the bound as a function of the state for the loop that holds an inner loop
    (:func:`moments.state_cores`), the outer invariant at the inner loop's expected effect for
    the loop inside (:func:`moments.mean_cores`). Only proposals: INDUCT checks them."""
    changed = written_vars(body)
    if has_loop(body):
        params = [p for p in claim.params if p in set(free_vars(beta)) and claim.types.get(p) == A.INT]
        lefts: List[Tuple[str, A.Expr]] = [
            (p, A.Binary("-", A.Var(p), A.Var(c))) for c, step in counters(body, s) if step > 0 for p in params
        ]
        guard = set(free_vars(as_while(s)[0]))  # the input the loop counts up to first
        lefts.sort(key=lambda pl: 0 if {pl[0]} | set(free_vars(pl[1])) <= guard else 1)
        # a retry loop inside (few proposals, each a search of the loop inside) first
        yield from outer_cores(
            f,
            s,
            body,
            changed,
            {p for p in claim.params if claim.types.get(p) in (A.INT, A.REAL)},
            set(claim.params),
            lambda b: body_pre(claim, b),
            counter_facts(claim, body, s),
            set(claim.types),
        )
        yield from state_cores(beta, lefts, input_starts(claim.body, s, set(claim.params)))
        return

    pre = body_pre(claim, body)
    positive = {p for p in claim.params if claim.types.get(p) in (A.INT, A.REAL)}
    # the tests of the loops around it hold while it runs (it writes nothing they read): a core
    # for the outer loop's last generation must not be asked for generations past it
    outer = [
        as_while(n)[0]
        for n in A.walk(claim.body)
        if isinstance(n, (A.For, A.While)) and n is not s and any(m is s for m in A.walk(n.body))
    ]
    outer = [o for o in outer if not set(free_vars(o)) & changed]
    retry = (
        inner_cores(f, s, positive, set(claim.params), lambda b: body_pre(claim, b)) if isinstance(s, A.While) else []
    )
    for core in itertools.chain(mean_cores(f, s, changed, positive, pre, set(claim.types)), retry):
        if outer:
            yield A.Cond(and_all(outer), core, ONE)
        yield core


def ordered_cores(conds: List[A.Expr], b: A.Expr) -> List[A.Expr]:
    """For an equality ``l == r`` of the continuation: ``l < r ? 1 : l == r ? 0 : b`` and the
    mirror image — the target reached (no failure), passed on the wrong side (no promise), or
    still ahead with the bound for the iterations left (a minimum that must come down to r,
    Karger's repeated contraction). Only proposals: INDUCT checks them."""
    out: List[A.Expr] = []
    for a in conds:
        if isinstance(a, A.Binary) and a.op == "==":
            for op in ("<", ">"):
                out.append(A.Cond(A.Binary(op, a.left, a.right), ONE, A.Cond(a, ZERO, b)))
    return out


def accumulators(body: A.Stmt) -> List[str]:
    """Variables the loop body only adds to: every assignment to x is ``x := x + e`` (e any
    expression; a sum of draws). Candidates for a Markov block (:func:`synth_cores`)."""
    adds: List[str] = []
    other: set = set()
    for n in A.walk(body):
        if isinstance(n, A.Sample):
            other |= {A.target_name(t) for t in n.targets}
        if not isinstance(n, A.Assign) or len(n.targets) != 1 or not isinstance(n.targets[0], A.Var):
            continue
        x = n.targets[0].name
        v = n.value
        if isinstance(v, A.Binary) and v.op == "+" and v.left == A.Var(x) and x not in set(free_vars(v.right)):
            if x not in adds:
                adds.append(x)
        else:
            other.add(x)
    return [x for x in adds if x not in other]


def stage_chance(claim: ExpClaim, s: A.Stmt, flag: str, search: Optional["Search"] = None) -> Optional[A.Expr]:
    """The upper pre-expectation of ``[flag]`` over ``s`` from a state where the flag is down
    (the chance that one iteration raises a stage's flag,
    :func:`tamp.prover.stages.products.stage_cores`; a loop inside ``s`` gets its core from
    ``search``, each one checked by it), or None when ``s`` is outside this engine's rules."""
    try:
        pre = Wpe(claim.body, claim.params, search=search, types=claim.types).stmt(s, ind(A.Var(flag)))
    except (NotApplicable, Timeout):
        return None
    return put(pre, flag, A.BoolLit(False))


def product_cores(claim: ExpClaim, s, f: A.Expr, search: Optional["Search"] = None) -> Iterator[A.Expr]:
    """The stage cores of :mod:`tamp.prover.stages.products` (computed only when the usual
    candidates are used up: they need the body's chance, an inner loop's search included)."""
    for c in stage_cores(s, f, claim.types, lambda st, v: stage_chance(claim, st, v, search)):
        yield _fold(c)


def prefix_conds(claim: ExpClaim, body: A.Stmt, s, f: A.Expr) -> List[A.Expr]:
    """The part of a ``forall j in lo..hi: P`` of the continuation that the iterations so far
    have settled, for each counter of the loop: ``forall j in lo..c: P`` for a counter that goes
    up, ``forall j in c + 1..hi: P`` and ``forall j in c..hi: P`` for one that goes down (the
    usual array-filling loop; only proposals, INDUCT checks them); for ``exists j in lo..hi: B``
    (a failure event) ``!(exists j in lo..c: B)`` and so on. Only quantifiers whose bounds the
    loop leaves alone."""
    changed = written_vars(body)
    out: List[A.Expr] = []
    for q in A.walk(f):
        if not isinstance(q, A.Quant):
            continue
        if (set(free_vars(q.lo)) | set(free_vars(q.hi))) & changed:
            continue
        for c, step in counters(body, s):
            cv = A.Var(c)
            if step > 0:
                forms: List[A.Expr] = [A.Quant(q.kind, q.var, q.lo, cv, False, q.body)]
            else:
                forms = [
                    A.Quant(q.kind, q.var, _fold(A.Binary("+", cv, ONE)), q.hi, q.inclusive, q.body),
                    A.Quant(q.kind, q.var, cv, q.hi, q.inclusive, q.body),
                ]
            if q.kind == "exists":  # a failure event: settled not to have happened so far
                forms = [not_(x) for x in forms]
            out += [x for x in forms if x not in out]
    return out


def special_cores(claim: ExpClaim, beta: A.Expr, body: A.Stmt, pairs, conds: List[A.Expr]) -> List[A.Expr]:
    """One iteration singled out by a branch ``if (c == e)`` of the body (e not changed by the
    loop), which fails less than the others (the true value's bit in unary encoding): while it
    is still ahead, one of the iterations left is the cheap one — ``c <= e ? β[k := k - c] :
    β[k := k - c + 1]`` (``c >= e`` for a counter going down) — also guarded by the conditions of
    the continuation (``forall j in 0..c: … ? … : 1``)."""
    changed = written_vars(body)
    eqs: List[Tuple[str, A.Expr]] = []
    for n in A.walk(body):
        if not isinstance(n, A.If):
            continue
        for a in conjuncts(n.cond):
            if isinstance(a, A.Binary) and a.op == "==":
                for x, e in ((a.left, a.right), (a.right, a.left)):
                    if isinstance(x, A.Var) and not set(free_vars(e)) & changed and (x.name, e) not in eqs:
                        eqs.append((x.name, e))
    out: List[A.Expr] = []
    for c, step, p in pairs:
        for name, e in eqs:
            if name != c:
                continue
            ahead = A.Binary("<=" if step > 0 else ">=", A.Var(c), e)
            for d in (0, 1, -1):  # the iterations left, with off-by-one variants
                left: A.Expr = A.Binary("-", A.Var(p), A.Var(c)) if step > 0 else A.Var(c)
                if d:
                    left = A.Binary("+" if d > 0 else "-", left, A.num(abs(d)))
                cheap = _fold(subst(beta, {p: left}))
                full = _fold(subst(beta, {p: A.Binary("+", left, ONE)}))
                split = A.Cond(ahead, cheap, full)
                out += [split] + [A.Cond(a, split, ONE) for a in conds]
    return out


def spent_cores(claim: ExpClaim, beta: A.Expr, f: A.Expr, pairs, flags: List[A.Expr]) -> List[A.Expr]:
    """For a counter c going up to an input p that the bound reads: ``E[c/p] ? 1 : β - β[p :=
    c]``, where E is a failure event ``exists …`` of the continuation whose ranges read p — the
    event among the iterations so far has happened, else the bound's share of the iterations
    left (the birthday union bound: the pairs not yet drawn, ``(n(n-1) - c(c-1))/2m``); also
    ``flag ? 1 : β - β[p := c]`` for each Boolean ``flag`` of ``flags`` (a failure flag the
    iterations so far raised). Only proposals: INDUCT checks them."""
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    events = [q for q in A.walk(f) if isinstance(q, A.Quant) and q.kind == "exists" and not set(free_vars(q)) & bound]
    out: List[A.Expr] = []
    for c, step, p in pairs:
        if step <= 0:
            continue
        spent = _fold(A.Binary("-", beta, subst(beta, {p: A.Var(c)})))
        for q in events:
            if p not in set(free_vars(q.lo)) | set(free_vars(q.hi)) or c in set(free_vars(q)):
                continue
            e = _fold(subst(q, {p: A.Var(c)}))
            if e not in out:
                out.append(A.Cond(e, ONE, spent))
        out += [A.Cond(v, ONE, spent) for v in flags]
    return out


def flag_event(s: A.Stmt, flag: str, changed: "set[str] | frozenset[str]") -> Optional[A.Expr]:
    """The condition under which the deterministic statement ``s`` sets ``flag`` to true, when
    ``s`` only does that (``if (c) { flag := true; }``, nested ``for`` loops over ranges they
    leave alone) and its tests read nothing it changes but the loop counters, which the
    condition quantifies (``exists j in lo..hi: …``); None otherwise."""
    if isinstance(s, A.Block):
        parts = [flag_event(x, flag, changed) for x in s.stmts]
        if any(p is None for p in parts):
            return None
        out: A.Expr = A.BoolLit(False)
        for p in parts:
            out = simp(A.Binary("||", out, p))  # type: ignore[arg-type]
        return out
    if isinstance(s, (A.Skip, A.VarDecl)):
        return A.BoolLit(False)
    if isinstance(s, A.Assign):
        if s.targets == (A.Var(flag),) and s.value == A.BoolLit(True):
            return A.BoolLit(True)
        return None
    if isinstance(s, A.If):
        if set(free_vars(s.cond)) & changed:
            return None
        t = flag_event(s.then, flag, changed)
        o = flag_event(s.other, flag, changed) if s.other is not None else A.BoolLit(False)
        if t is None or o is None:
            return None
        return simp(A.Binary("||", simp(A.Binary("&&", s.cond, t)), simp(A.Binary("&&", not_(s.cond), o))))
    if isinstance(s, A.For):
        if (set(free_vars(s.lo)) | set(free_vars(s.hi))) & changed or s.var in written_vars(s.body):
            return None
        inner = flag_event(s.body, flag, changed - {s.var})
        if inner is None:
            return None
        v = s.var + "$e"  # a name no program variable has: the quantifier captures nothing
        return simp(A.Quant("exists", v, s.lo, s.hi, s.inclusive, subst(inner, {s.var: A.Var(v)})))
    return None


def flag_event_cores(s, f: A.Expr) -> List[A.Expr]:
    """For ``for c in lo..hi { B }`` where B, deterministic, only raises Boolean flags
    (:func:`flag_event`): the continuation with ``flag`` replaced by ``flag || exists c' in
    c..hi: E(c')`` — exactly what the iterations left do to it (the pairs of a triangular nest
    still to compare). Only a proposal: INDUCT checks it."""
    if not isinstance(s, A.For) or any(isinstance(n, A.Sample) for n in A.walk(s.body)):
        return []
    flags = sorted(
        {
            n.targets[0].name
            for n in A.walk(s.body)
            if isinstance(n, A.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], A.Var)
            and n.value == A.BoolLit(True)
        }
    )
    if s.var in written_vars(s.body):
        return []
    changed = written_vars(s.body)
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    out: List[A.Expr] = []
    for flag in flags:
        if changed - {flag} - {n.var for n in A.walk(s.body) if isinstance(n, A.For)}:
            continue  # the loop changes more than its flag and counters
        ev = flag_event(s.body, flag, changed)
        if ev is None or flag in set(free_vars(ev)):
            continue
        fresh = s.var + "$"
        while fresh in set(free_vars(ev)) | set(free_vars(f)) | bound:
            fresh += "$"
        rest = A.Quant("exists", fresh, A.Var(s.var), s.hi, s.inclusive, subst(ev, {s.var: A.Var(fresh)}))
        if set(free_vars(rest)) & bound:
            continue
        out.append(_fold(subst(f, {flag: A.Binary("||", A.Var(flag), rest)})))
    return out


def nested_loops(body: A.Stmt) -> set:
    """The ids of the loops that sit inside another loop."""
    out = set()
    for n in A.walk(body):
        if isinstance(n, (A.While, A.For)):
            out |= {id(x) for x in A.walk(n.body) if isinstance(x, (A.While, A.For))}
    return out


def flag_cores(claim: ExpClaim, beta: A.Expr, s, g: A.Expr, body: A.Stmt, f: A.Expr, pairs) -> List[A.Expr]:
    """``F[v := b] + β₁`` for a Boolean v sampled in the loop and read by its guard (a retry's
    success flag): the continuation's expected failure once v = b ends the loop, plus the
    chance that it never does — β₁ is the bound for one task (another integer input of β set to
    1) with the iterations left in place of its input (``n·exp(-s·k)`` → ``exp(-s·(k - att))``)."""
    flags = []
    for n in A.walk(body):
        if isinstance(n, A.Sample) and isinstance(n.targets[0], A.Var):
            v = n.targets[0].name
            if claim.types.get(v) == A.BOOL and v in set(free_vars(g)) and v not in flags:
                flags.append(v)
    if not flags:
        return []
    ints = [p for p in claim.params if p in set(free_vars(beta)) and claim.types.get(p) == A.INT]
    out: List[A.Expr] = []
    for c, step, p in pairs:
        for d in (0, -1, 1):
            rep: A.Expr = A.Binary("-", A.Var(p), A.Var(c)) if step > 0 else A.Var(c)
            if d:
                rep = A.Binary("+" if d > 0 else "-", rep, A.num(abs(d)))
            one: A.Expr = ONE
            ones: List[Dict[str, A.Expr]] = [{q: one} for q in ints if q != p] + [{}]  # one task first
            for m in ones:
                b1 = _fold(subst(beta, {**m, p: rep}))
                for v in flags:
                    for val in (True, False):
                        out.append(A.Binary("+", _fold(subst(f, {v: A.BoolLit(val)})), b1))
    return out


def counter_facts(claim: ExpClaim, body: A.Stmt, s) -> Optional[A.Expr]:
    """``c >= c0`` for each counter the loop only increases (``c <= c0`` for one it only
    decreases) whose every other assignment in the program is ``c := c0`` with c0 a literal or
    an expression over inputs: a candidate guard for a core (not trusted: INDUCT checks it)."""
    out = []
    for c, step in counters(body, s):
        if isinstance(s, A.For) and c == s.var:
            starts = [s.lo]
        else:
            starts = [
                n.value
                for n in A.walk(claim.body)
                if isinstance(n, A.Assign) and n.targets == (A.Var(c),) and A.Var(c) not in A.walk(n.value)
            ]
            starts += [A.Var(c)] * sum(
                1 for n in A.walk(claim.body) if isinstance(n, A.Sample) and A.Var(c) in n.targets
            )
        if len(set(starts)) != 1 or set(free_vars(starts[0])) - set(claim.params):
            continue
        if any(st != step for c2, st in counters(claim.body, None) if c2 == c):
            continue
        out.append(A.Binary(">=" if step > 0 else "<=", A.Var(c), starts[0]))
    return and_all(out) if out else None


def term_candidates(claim: ExpClaim, g: A.Expr, body: A.Stmt) -> List[Tuple[str, A.Expr]]:
    out: List[Tuple[str, A.Expr]] = []
    for a in conjuncts(g):
        if isinstance(a, A.Binary) and a.op in ("<", "<=", ">", ">="):
            lo, hi = (a.left, a.right) if a.op in ("<", "<=") else (a.right, a.left)
            r: A.Expr = A.Binary("-", hi, lo)
            if a.op in ("<=", ">="):
                r = A.Binary("+", r, ONE)
            out.append(("rank", r))
    if not has_loop(body):
        for n in A.walk(body):
            if (
                isinstance(n, A.Sample)
                and n.dist.func == "bern"
                and set(free_vars(n.dist.args[0])) <= set(claim.params)
            ):
                p = n.dist.args[0]
                for d in (p, simp(A.Binary("-", ONE, p))):
                    if ("exit", d) not in out:
                        out.append(("exit", d))
    return out


def variant_terms(claim: ExpClaim, g: A.Expr, body: A.Stmt, chk: Optional["Checker"] = None) -> List[LoopAnnot]:
    """Probabilistic-variant termination arguments to try when no rank or exit chance holds."""
    if has_loop(body):
        return []
    chance = progress_chance(claim, body, chk)
    # V = 1 (a flag loop: the only progress is the exit) is the exit-chance rule with δ = ε
    return [
        LoopAnnot(ZERO, "exit", e) if v == ONE else LoopAnnot(ZERO, "variant", v, e)
        for v, e in variant_candidates(g, body, set(claim.params), chance)
    ]


def progress_chance(
    claim: ExpClaim, body: A.Stmt, chk: Optional["Checker"] = None
) -> Callable[[A.Expr, A.Expr], Optional[A.Expr]]:
    """``(g, V) ↦`` the lower pre-expectation of ``[¬g ∨ V <= V₀ - 1]`` over one run of the
    body, V₀ the variant before it, each test of the state in it that ``g`` decides (asked of
    ``chk``) replaced by its value — a proposal for a progress chance ε over the inputs (the
    die's 1/6, two coins' p·q); None outside the rules. TERM decides the proposal."""
    params = set(claim.params)

    def decide(g: A.Expr, e: A.Expr) -> A.Expr:
        if not isinstance(e, A.Cond):
            return e
        c = e.cond
        if chk is not None:  # a test of the state, or a distribution's range under `requires`
            try:
                if chk.valid(A.Binary("==>", g, c), 500) == VALID:
                    return decide(g, e.then)
                if chk.valid(A.Binary("==>", g, not_(c)), 500) == VALID:
                    return decide(g, e.other)
            except Timeout:
                pass
            a, b = _num(e.then), _num(e.other)
            if a is not None and b is not None and set(free_vars(c)) - params:  # undecided: the smaller value
                return A.num(min(a, b))
        return A.Cond(c, decide(g, e.then), decide(g, e.other))

    class _Decide(Transformer):
        def __init__(self, g: A.Expr):
            super().__init__()
            self.g = g

        def default(self, node, kids):
            out = super().default(node, kids)
            return decide(self.g, out) if isinstance(out, A.Cond) else out

    def chance(g: A.Expr, v: A.Expr) -> Optional[A.Expr]:
        drop = ind(A.Binary("||", not_(g), A.Binary("<=", v, A.Binary("-", A.Var("v$"), ONE))))
        try:
            lower = Wpe(body, claim.params, upper=False, types=claim.types).stmt(body, drop)
        except NotApplicable:
            return None
        e = simp(subst(lower, {"v$": v}))
        if chk is None:
            return e
        # a uniform draw's count of passing values in closed form, and min/max the solver orders
        # under the guard (:mod:`tamp.prover.loops.exits`): `a/T` for `x ~ unif(1, T); x <= a`
        e = closed_counts(e, claim.types)
        decided = settle_extrema(_Decide(g).walk(e), lambda a, b: _ordered(chk, g, a, b))
        try:  # a readable ε (`p * q`, `1/6`): sympy's form, only a proposal (TERM decides it)
            return simplify(decided)
        except Exception:  # noqa: BLE001 - a form sympy does not take: the unsimplified one
            return simp(decided)

    return chance


def _ordered(chk: "Checker", g: A.Expr, a: A.Expr, b: A.Expr) -> bool:
    """``g ⇒ a <= b`` is valid under ``requires`` (False on a timeout or any other answer)."""
    try:
        return chk.valid(A.Binary("==>", g, A.Binary("<=", a, b)), 500) == VALID
    except Timeout:
        return False


class Search:
    """The prover's loop search: for each loop, a termination argument and the first core whose
    INDUCT is valid after skipping ``skip[loop]`` such cores (:func:`prove_with_bound` moves on
    to later ones when the proof fails further out, e.g. at BUDGET)."""

    def __init__(self, claim: ExpClaim, chk: Checker, beta: A.Expr, skip: Optional[Dict[int, int]] = None):
        self.claim, self.chk, self.beta = claim, chk, beta
        self.skip = dict(skip or {})
        self.order: List[int] = []  # the loops searched, in the order of the first search
        self.exhausted: set = set()  # loops with no valid core left after the skipped ones
        self.why = ""

    def _settle(self, e: A.Expr) -> A.Expr:
        """``e`` with the ``min``/``max`` that ``requires`` orders settled (a count's interval
        ends, :func:`.powers.count_chances`): only a proposal's form, INDUCT decides."""
        return simp(settle_extrema(e, lambda a, b: _ordered(self.chk, A.BoolLit(True), a, b)))

    def __call__(self, key: int, s, f: A.Expr, outer: Wpe) -> LoopAnnot:
        g, body, _init = as_while(s)
        where = f"loop at line {_line(s)}"
        term = None
        tries = [LoopAnnot(ZERO, kind, m) for kind, m in term_candidates(self.claim, g, body)]
        # the variants only when no rank or exit chance holds: proposing them asks the solver
        # (and sympy) about the body, which a counted loop must not pay for or depend on
        later = (t for _ in (0,) for t in variant_terms(self.claim, g, body, self.chk))
        for t in itertools.chain(tries, later):
            try:
                obs = term_obligations(where, g, body, t, self.claim.params)
            except NotApplicable:
                continue
            if all(self.chk.valid(o[2]) == VALID for o in obs):
                term = t
                break
        if term is None:
            self.why = self.why or f"no termination argument found for the {where}"
            raise NotApplicable(self.why)
        if key not in self.order:
            self.order.append(key)
        skip = self.skip.get(key, 0)
        usual = core_candidates(self.claim, self.beta, s, g, body, f, self.chk)
        inner_search = Search(self.claim, self.chk, self.beta)  # for the loops of a stage's body

        def induct(core: A.Expr) -> Optional[A.Expr]:
            inner = Wpe(self.claim.body, self.claim.params, outer.annots, self, types=self.claim.types)
            try:
                steps = induct_formulas(g, inner.stmt(body, invariant(g, core, f)), core)
            except NotApplicable:
                return None
            return and_all([ob for _w, ob in steps])

        synthesised = synth_cores(self.claim, self.beta, s, body, f, self.chk, induct)
        moments = itertools.chain(
            first_moment_cores(self.claim, s, body, f), retry_cores(self.claim, s, g, body, f, self.chk)
        )
        # a nested loop's composed cores first (few, and only for a population-like claim):
        # each proposal for an outer loop costs a search of the loop inside
        # "every trial so far missed": F·exp(-a·(iterations left)) (:mod:`.powers`), only for a
        # bound with an exp (the lemmas bound exp from above only by another exp: without one
        # BUDGET cannot hold, and a nested loop would pay for each proposal with an inner search)
        with_exp = any(isinstance(n, A.Call) and n.func == "exp" for n in A.walk(self.beta))
        facts = counter_facts(self.claim, body, s) if with_exp else None
        powers = (
            c
            for _ in (0,)
            if with_exp
            for c in power_cores(s, f, self.claim.params, self.claim.types, facts, self._settle)
        )
        # [¬post] + the budget left, for a postcondition whose truth a rare event toggles
        # (:mod:`.toggles`; after the recognised cores, so no earlier proof pays for them)
        toggles = (c for _ in (0,) for c in toggle_cores(self.claim, self.beta, s, g, body, f))
        cores: Iterable[A.Expr] = itertools.chain(
            usual, toggles, powers, moments, synthesised, product_cores(self.claim, s, f, inner_search)
        )
        if with_exp:  # a coin the loop only reads: one power core per value (:mod:`.cases`)
            cores = itertools.chain(case_cores(s, f, self.claim.params, self.claim.types), cores)
        if has_loop(body) or id(s) in nested_loops(self.claim.body):
            cores = itertools.chain(composed_cores(self.claim, self.beta, s, body, f), cores)
        if with_exp and (has_loop(body) or id(s) in nested_loops(self.claim.body)):
            # nested loops: a success pattern's power, power cores guarded by the counts' signs
            # (:mod:`.nested`), then a pattern's one-step miss; before the composed cores
            nested = itertools.chain(
                pattern_cores(self.claim.body, s, f, self.claim.params, self.claim.types),  # :mod:`.patterns`
                nested_power_cores(self.claim.body, s, f, self.claim.params, self.claim.types, self._settle),
                pattern_cores(self.claim.body, s, f, self.claim.params, self.claim.types, step=True),
            )
            cores = itertools.chain(nested, cores)
        # a loop that stops at a flag: F[flag := stop] + a template, last (:mod:`.exits`)
        sized = any(  # a requires sizes the loop by the log of the bound's inputs (k >= log(1/β)/q)
            isinstance(n, A.Call) and n.func == "log" and set(free_vars(n)) & set(free_vars(self.beta))
            for r in self.claim.requires
            for n in A.walk(r)
        )
        exits = exit_cores(s, f, self.beta, set(self.claim.params), self.claim.types, _fold, self._settle, sized)
        cores = itertools.chain(cores, exits)
        # every trial left must hit: an exact power, last (session 29, :func:`.powers.hit_all_cores`)
        hits = itertools.chain(
            (c for _ in (0,) for c in hit_all_cores(self.claim.body, s, f, self.claim.params, self.claim.types)),
            (
                c
                for _ in (0,)
                for c in capped_power_cores(s, f, self.beta, self.claim.params, self.claim.types, self.claim.body)
            ),
            # session 30: every trial left must hit, capped (a counter of failures reaching the count)
            (
                c
                for _ in (0,)
                for c in capped_hit_all_cores(self.claim.body, s, f, self.beta, self.claim.params, self.claim.types)
            ),
        )
        cores = itertools.chain(cores, hits)
        for core in cores:
            annot = LoopAnnot(core, term.term, term.measure, term.chance)
            inner = Wpe(self.claim.body, self.claim.params, outer.annots, self, types=self.claim.types)
            try:
                e = invariant(g, core, f)
                steps = induct_formulas(g, inner.stmt(body, e), core)
            except NotApplicable:
                continue
            if all(self.chk.valid(ob, SEARCH_MS) == VALID for _w, ob in steps):
                if skip > 0:
                    skip -= 1
                    continue
                outer.annots.update(inner.annots)
                return annot
        self.exhausted.add(key)
        self.why = self.why or f"no invariant expectation found for the {where}"
        raise NotApplicable(self.why)


def prove_with_bound(
    program: A.Program, cfa, beta: A.Expr, deadline=None
) -> Tuple[Optional[ExpProof], str, Optional[Checker]]:
    try:
        claim = claim_of(program, cfa)
    except NotApplicable:
        return None, "", None
    chk = Checker(claim, deadline)
    skip: Dict[int, int] = {}
    first_why = ""
    for _attempt in range(MAX_ATTEMPTS):
        search = Search(claim, chk, beta, skip)
        proof, why = _attempt_proof(claim, chk, beta, search)
        if proof is not None:
            return proof, "", chk
        first_why = first_why or why
        # the next combination of loop proofs (an odometer over the loops, nearest the end first)
        for key in search.order:
            if key in search.exhausted:
                skip[key] = 0
                continue
            skip[key] = skip.get(key, 0) + 1
            break
        else:
            break
    return None, first_why, chk


MAX_ATTEMPTS = 12
BUDGET_S = 60.0  # the engine's own time limit (within the prover's): a search that long is lost


def _attempt_proof(claim: ExpClaim, chk: Checker, beta: A.Expr, search: Search) -> Tuple[Optional[ExpProof], str]:
    try:
        _pre, annots, _obs = obligations_for(claim, beta, None, search)
        pre, annots, obs = obligations_for(claim, beta, annots)  # the proof, from the chosen loop proofs
    except NotApplicable as exc:
        return None, str(exc)
    for kind, where, f in obs:
        st = chk.valid(f)
        if st != VALID and not annots:  # loop-free: a second round with exp-split (axioms.exp_split)
            st = chk.valid_split(f) or st
        if st != VALID:
            why = f"{kind} at {where}: the expected failure does not fit the bound ({st})"
            if kind == "BUDGET" and annots:
                lines = ", ".join(str(li.line) for li in loop_infos(claim, annots, chk))
                why = (
                    f"no invariant expectation tamp found for the loop(s) at line {lines} gives an "
                    f"expected failure of at most {show_expr(beta)} ({st})"
                )
            elif kind == "BUDGET":
                shown = show_expr(user_form(_simplified(readable(pre, claim, chk)), claim.types))
                shown = shown if len(shown) <= 200 else shown[:200] + " …"
                why = (
                    f"the expected failure (exact for these coins) is {shown}, which is not at most "
                    f"{show_expr(beta)} for every input ({st})"
                )
            return None, why
    proof = ExpProof(beta, pre, annots, obs, loop_infos(claim, annots, chk))
    proof.shown = readable(pre, claim, chk)
    return proof, ""


def _simplified(e: A.Expr) -> A.Expr:
    """``e`` simplified by sympy for a message (never for a proof); ``e`` itself if that fails."""
    try:
        # deferred on purpose: it loads sympy (~1 s); only an unknown's message needs it
        load_in_proof("sympy")
        return simplify(e)
    except Exception:  # noqa: BLE001 - presentation only
        return e


def readable(pre: A.Expr, claim: ExpClaim, chk: Checker) -> A.Expr:
    """``pre`` for reading (``-v``), never for a proof: conditions over inputs that ``requires``
    implies (``0 <= 1 - e && 1 - e <= 1``) are dropped with their ``: 1`` branch."""

    params = set(claim.params)

    class _Drop(Transformer):
        def Cond(self, node, kids):
            c, t, o = kids
            if set(free_vars(c)) <= params:
                if chk.valid(c, 500) == VALID:
                    return t
                if chk.valid(not_(c), 500) == VALID:
                    return o
            return simp(A.Cond(c, t, o))

    try:
        out: A.Expr = _Drop().walk(pre)
    except Timeout:
        return pre
    return _fold(out)


def loop_infos(claim: ExpClaim, annots: Dict[int, LoopAnnot], chk: Checker) -> List[LoopInfo]:
    """What ``-v`` says about each loop proved by an invariant: the iterations left (a rank),
    the chance that an iteration goes on (one minus an exit chance, looked up for the text only
    when the proof used a rank), and the invariant."""
    out = []
    loops = [x for x in A.walk(claim.body) if isinstance(x, (A.While, A.For))]
    for k, s in enumerate(loops):
        a = annots.get(k)
        if a is None:
            continue
        g, body, _i = as_while(s)
        rank = a.measure if a.term == "rank" else None
        delta = a.measure if a.term == "exit" else None
        if delta is None:
            for kind, m in term_candidates(claim, g, body):
                if kind != "exit":
                    continue
                try:
                    obs = term_obligations("", g, body, LoopAnnot(ZERO, kind, m), claim.params)
                    if all(chk.valid(o[2], 500) == VALID for o in obs):
                        delta = m
                        break
                except (NotApplicable, Timeout):
                    break
        parts = []
        if rank is not None:
            parts.append(f"at most {show_expr(rank)} iterations left")
        if delta is not None:
            parts.append(f"each goes on with probability <= {show_expr(simp(A.Binary('-', ONE, delta)))}")
        head = ", ".join(parts) + ": " if parts else ""
        d = f"{head}Pr[fail] from its head <= {show_expr(a.core)} while {show_expr(g)} (one iteration keeps it below)"
        out.append(LoopInfo(_line(s), a, d))
    return out


# ------------------------------------------------------------------------ results


@dataclass(repr=False)
class ExpectationResult(ProofResult):
    """A failure bound proved by expected failure (no failure automaton)."""

    proof: Optional[ExpProof] = None

    def to_json(self):
        out = super().to_json()
        out["method"] = "expectation"
        if self.proof is not None:
            out["expectation"] = {
                "expected_failure": show_expr(self.proof.pre),
                "loops": [
                    {
                        "line": li.line,
                        "core": show_expr(li.annot.core),
                        "termination": li.annot.term,
                        "measure": show_expr(li.annot.measure),
                    }
                    for li in self.proof.loops
                ],
            }
        return out

    def derivation_text(self, simplify: Callable[[str], str] = lambda t: t) -> str:
        """The one-line derivation ``-v`` shows: each loop's invariant, then the expected
        failure at the start (``simplify`` is the report's formula simplifier)."""
        if self.proof is None:
            return ""
        parts = [f"loop at line {li.line}: {li.derivation}" for li in self.proof.loops]
        pre = show_expr(self.proof.shown if self.proof.shown is not None else self.proof.pre)
        pre = (simplify(pre) or pre) if len(pre) < 400 else pre
        if len(pre) > 160:
            pre = pre[:160] + " …"
        beta = show_expr(self.proof.beta)
        parts.append(f"expected failure {pre}  <=  {simplify(beta) or beta}")
        return "; ".join(parts)

    def render_text(self) -> str:
        lines = [ProofResult.render_text(self).split("\n  axioms:")[0]]
        if self.proof is not None:
            pre = show_expr(self.proof.pre)
            if len(pre) > 300:
                pre = pre[:300] + " …"
            lines.append("  expected failure (discrete samples weighted by their probabilities):")
            lines.append(f"    Pr[fail] <= {pre} <= {show_expr(self.proof.beta)}")
            for li in self.proof.loops:
                lines.append(f"  loop at line {li.line}: {li.derivation}")
            lines.append(
                f"  obligations: {len(self.proof.obligations)} valid under `requires` (loop steps, termination, budget)"
            )
        return "\n".join(lines)


def exp_result(program, cfa, proof: ExpProof, t0: float, chk: Optional[Checker] = None) -> ExpectationResult:
    st = checker_stats("expectation", len(proof.obligations), chk)
    return ExpectationResult(
        program.name,
        "failure-bound",
        "proved",
        time.monotonic() - t0,
        show_expr(proof.beta),
        "",
        cfa=cfa,
        stats=st,
        obligations=[Obligation(k, w, "valid") for k, w, _f in proof.obligations],
        proof=proof,
    )


def try_expectation(program, cfa, deadline, t0) -> Tuple[Optional[ExpectationResult], str]:
    """(a proved result, "") or (None, why not; "" when the program is outside the rules)."""
    budget = time.monotonic() + BUDGET_S
    deadline = budget if deadline is None else min(deadline, budget)
    try:
        proof, why, chk = prove_with_bound(program, cfa, cfa.bound, deadline)
    except Timeout:
        return None, "timeout"
    except Exception:  # noqa: BLE001 - a construct this engine does not model: no proof, and the
        return None, ""  # union bound's answer stands (never a traceback for the user)
    if proof is None:
        return None, why
    return exp_result(program, cfa, proof, t0, chk), ""

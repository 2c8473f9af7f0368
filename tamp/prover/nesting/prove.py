"""Nested loops and stages: prove one iteration by any method, then compose over the iterations.

For a *flag loop* (:mod:`tamp.cfa.nesting`: a loop whose claim is that some iteration moved a
flag — the product form — or that none did — the union form; counters and early exits included),
the claim's bound β is split into per-iteration candidates ``u``: for the union bound the trip
count ``N`` is taken out of β's product, else ``u = β / N``; for the product (β = exp(E)) the
exponent per iteration is E with ``N`` divided out, and ``u`` is ``x`` for ``E = N·log(x)``,
``1 - s`` for a per-iteration exponent ``-s``, or ``exp(e)``; a sum over the loop's range in β
or E gives its term at the iteration's counter (``u`` then reads the counter); and each
``bern(q)`` the body draws outside its inner loops proposes ``q`` (union) or ``1 - q`` (product).
For a product over a literal number ``N`` of iterations whose bound is not ``exp(E)``, the
bound's ``N``-th root read off its factors (``f * f * f`` gives ``f``) and both ``q`` and ``1 - q``
are proposed (the composition writes the product out, :func:`tamp.cfa.nesting.composition`).
The iteration program (the body with the state it starts from as inputs,
:func:`tamp.cfa.nesting.iteration_program`) is then proved with the bound ``u`` by the whole
portfolio — the union bound, expected failure, concentration, the product rule, or this rule
again for a loop nested in the body. First, every candidate's iteration program with its
deterministic epilogue folded into its claim (:mod:`tamp.cfa.epilogue`: a row's threshold test
``if (seen >= 2) { over := true; }`` becomes the claim ``seen < 2``, the same failure
probability) is offered to the methods without a search: linearity (the pairs rule, Markov)
and, for a bound with an ``exp(-s)`` tail, concentration; the certificate then says how many
statements were folded and the checker refolds them.

Why this is sound: a candidate ``u`` is only a proposal. The rule proves the claim only when
the composition's side conditions (:func:`tamp.cfa.nesting.composition`: N·u <= β, or
N·e <= E, or their sums over the range for a ``u`` that reads the counter, when the loop runs, and β >= 0 or E >= 0 when it does not) are valid under
``requires`` and the iteration program is proved with bound ``u``; the argument that these
give the claim is :mod:`tamp.cfa.nesting`'s, and ``tamp check-proof`` re-checks both parts
from the source (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from lang.speckind import FAILURE_BOUND, clause_kind
from lang.walk import free_vars, substitute
from tamp.cfa import CFA, build_cfa
from tamp.cfa.epilogue import epilogue_length, fold_epilogue
from tamp.cfa.nesting import (
    FlagLoop,
    LasVegas,
    composition,
    divide_out,
    exit_program,
    flag_loop,
    iteration_program,
    lasvegas_composition,
    lasvegas_loop,
    lasvegas_programs,
    literal_trips,
    log_lower,
    trip_count,
)
from tamp.cfa.periods import period_loop
from tamp.cfa.shared_rows import reads_shared_draws, shared_iteration_program
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

from .loop_facts import loop_facts

__all__ = ["NestResult", "try_nesting", "candidates", "exponential_tail"]


@dataclass(repr=False)
class NestResult(ProofResult):
    """A failure bound proved by composing a per-iteration bound over a flag loop: ``form``
    ("union" or "product"), the per-iteration bound ``per_iteration`` and the iteration
    program's proof ``inner`` (a proved result of any method)."""

    form: str = ""
    per_iteration: Any = None
    inner: Optional[ProofResult] = field(default=None)
    #: a Las Vegas loop's proofs by role (:func:`tamp.cfa.nesting.lasvegas_programs`; ``inner``
    #: is the "iter" one) and whether the prefix's test of the loop condition is a factor
    pieces: Dict[str, ProofResult] = field(default_factory=dict)
    lead: bool = False
    #: the stage product (form "stages", :mod:`tamp.cfa.stages`): the second stage's chance ``b``
    #: (``per_iteration`` is the first's, ``a``), the cut loop's index, and ``pieces["first"]``
    second: Any = None
    cut: int = -1
    #: how many of the iteration program's last statements ``inner`` proves folded into its claim
    #: (:func:`tamp.cfa.epilogue.fold_epilogue`; 0: the iteration program as built)
    fold: int = 0
    #: the period ``k`` when the loop was composed over blocks of ``k`` iterations
    #: (:mod:`tamp.cfa.periods`; 0: over single iterations)
    period: int = 0
    #: loop facts the iteration program assumes (:mod:`.loop_facts`: inductive, re-checked by
    #: ``check-proof``); () when it assumes none
    iteration_facts: Tuple[A.Expr, ...] = ()
    #: a product without an early exit whose ``facts`` hold while the flag is unmoved: the facts
    #: inductive along every path under which every iteration is well-defined; None otherwise
    always: Optional[Tuple[A.Expr, ...]] = None
    #: the iteration program makes the prefix's draws itself (:mod:`tamp.cfa.shared_rows`: rows
    #: that read draws made before the loop), fused into the loop that reads them
    shared: bool = False


def _negated(e: A.Expr) -> Optional[A.Expr]:
    """``s`` when ``e`` is written ``-s`` (``-a / b``, ``-a * b``), else None."""
    if isinstance(e, A.Unary) and e.op == "-":
        return e.operand
    if isinstance(e, A.Binary) and e.op in ("/", "*"):
        left = _negated(e.left)
        if left is not None:
            return e.right if left == A.num(1) and e.op == "*" else A.Binary(e.op, left, e.right)
    return None


def _per_term(e: A.Expr, loop: A.For) -> Optional[A.Expr]:
    """``e`` with a sum over the loop's range (``sum(t in lo..hi: g(t))``, possibly negated,
    scaled or divided) replaced by its term at the loop's counter ``g(c)``, else None."""
    if isinstance(e, A.Sum):
        if (e.lo, e.hi, e.inclusive) == (loop.lo, loop.hi, loop.inclusive):
            return substitute(e.body, {e.var: A.Var(loop.var)})
        return None
    if isinstance(e, A.Unary) and e.op == "-":
        inner = _per_term(e.operand, loop)
        return None if inner is None else A.Unary("-", inner)
    if isinstance(e, A.Binary) and e.op in ("*", "/"):
        left = _per_term(e.left, loop)
        if left is not None:
            return A.Binary(e.op, left, e.right)
        right = _per_term(e.right, loop) if e.op == "*" else None
        return None if right is None else A.Binary("*", e.left, right)
    return None


def _bern_chances(body: A.Block) -> List[A.Expr]:
    """The success chances ``q`` of the ``bern(q)`` draws of ``body``, outside its inner loops:
    the chance that one iteration raises a flag on such a draw is at most ``q``, that it misses
    it at most ``1 - q`` (a proposal only: the iteration program's proof decides)."""
    out: List[A.Expr] = []

    def visit(s: A.Node) -> None:
        if isinstance(s, (A.For, A.While)):
            return
        if isinstance(s, A.Sample) and isinstance(s.dist, A.Call) and s.dist.func == "bern" and len(s.dist.args) == 1:
            if s.dist.args[0] not in out:
                out.append(s.dist.args[0])
        for child in getattr(s, "stmts", ()) or ():
            visit(child)
        if isinstance(s, A.If):
            visit(s.then)
            if s.other is not None:
                visit(s.other)

    for st in body.stmts:
        visit(st)
    return out


def _factors_of(e: A.Expr, op: str) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == op:
        return _factors_of(e.left, op) + _factors_of(e.right, op)
    return [e]


def _moves_flag(st: A.Node, flag: str) -> bool:
    return isinstance(st, A.Assign) and st.targets == (A.Var(flag),)


def move_chance(s: A.Stmt, flag: str, fixed: frozenset, draws: Dict[str, A.Expr]) -> Optional[A.Expr]:
    """A proposal for the chance that ``s`` moves the union flag ``flag``: the union bound over
    the places that write it, each weighted by the chance of the path to it — a test that reads
    only ``fixed`` names (parameters, loop counters: deterministic in one iteration) keeps its
    place as ``g ? a : b``, a test of a ``bern(q)`` draw ``x`` (``!x``) weighs its branch by ``q``
    (``1 - q``), any other test counts both branches, an inner ``for`` sums its body's chance over
    its range. None for a ``while``. Only a proposal: the iteration program's proof decides."""
    zero = A.num(0)
    if isinstance(s, A.Block):
        total: A.Expr = zero
        for st in s.stmts:
            got = move_chance(st, flag, fixed, draws)
            if got is None:
                return None
            total = got if total == zero else (total if got == zero else A.Binary("+", total, got))
        return total
    if isinstance(s, A.Sample):
        d = s.dist
        if len(s.targets) == 1 and isinstance(s.targets[0], A.Var):
            name = s.targets[0].name
            draws.pop(name, None)
            if isinstance(d, A.Call) and d.func == "bern" and len(d.args) == 1 and free_vars(d.args[0]) <= fixed:
                draws[name] = d.args[0]
        return A.num(1) if flag in {A.target_name(t) for t in s.targets} else zero
    if isinstance(s, A.Assign):
        for t in s.targets:
            draws.pop(A.target_name(t), None)
        return A.num(1) if _moves_flag(s, flag) else zero
    if isinstance(s, A.If):
        yes = move_chance(s.then, flag, fixed, dict(draws))
        no = move_chance(s.other, flag, fixed, dict(draws)) if s.other is not None else zero
        if yes is None or no is None:
            return None
        if yes == zero and no == zero:
            return zero
        c = s.cond
        if free_vars(c) <= fixed:
            return A.Cond(c, yes, no)
        neg = isinstance(c, A.Unary) and c.op == "!"
        x = c.operand if isinstance(c, A.Unary) and neg else c
        if isinstance(x, A.Var) and x.name in draws:
            q = draws[x.name]
            w_yes, w_no = (A.Binary("-", A.num(1), q), q) if neg else (q, A.Binary("-", A.num(1), q))
            part = lambda w, e: zero if e == zero else (e if e == w else A.Binary("*", w, e))  # noqa: E731
            a, b = part(w_yes, yes), part(w_no, no)
            return a if b == zero else b if a == zero else A.Binary("+", a, b)
        conj = _factors_of(c, "&&")
        guard = [g for g in conj if free_vars(g) <= fixed]
        weights = [draws[g.name] for g in conj if isinstance(g, A.Var) and g.name in draws]
        if guard or weights:  # `x && i < k`: the draw's chance, kept under the guard
            for w in weights:
                yes = yes if yes == zero else A.Binary("*", w, yes)
            for g in reversed(guard):
                yes = A.Cond(g, yes, zero)
        return yes if no == zero else no if yes == zero else A.Binary("+", yes, no)
    if isinstance(s, A.For):
        inner = move_chance(s.body, flag, fixed | {s.var}, {})
        if inner is None or not (free_vars(s.lo) | free_vars(s.hi)) <= fixed:
            return None
        return zero if inner == zero else A.Sum(s.var, s.lo, s.hi, s.inclusive, inner)
    if isinstance(s, A.Skip):
        return zero
    return None


def _from_exponent(e: A.Expr) -> List[A.Expr]:
    """Per-iteration bounds for an exponent ``e`` per iteration: ``x`` for ``log(x)``, ``1 - s``
    for ``-s``, ``exp(e)``."""
    if isinstance(e, A.Call) and e.func == "log" and len(e.args) == 1:
        return [e.args[0]]
    s = _negated(e)
    if isinstance(s, A.Call) and s.func == "log" and len(s.args) == 1:  # -log(y) = log(1/y)
        return [A.Binary("/", A.num(1), s.args[0]), A.Call("exp", (e,))]
    return ([A.Binary("-", A.num(1), s)] if s is not None else []) + [A.Call("exp", (e,))]


def _product(fs: List[A.Expr]) -> A.Expr:
    out = fs[0]
    for f in fs[1:]:
        out = A.Binary("*", out, f)
    return out


def _factors(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e]


def _root(bound: A.Expr, n: int) -> Optional[A.Expr]:
    """``u`` when ``bound`` is written as a product whose factors each occur a multiple of ``n``
    times (``f * f * f`` and ``n = 3`` give ``f``; ``(p * q) * (p * q)`` and 2 give ``p * q``)."""
    fs = _factors(bound)
    counts: Dict[A.Expr, int] = {}
    for f in fs:
        counts[f] = counts.get(f, 0) + 1
    if n < 2 or any(k % n for k in counts.values()):
        return None
    picked: List[A.Expr] = []
    for f, k in counts.items():
        picked += [f] * (k // n)
    out = picked[0]
    for f in picked[1:]:
        out = A.Binary("*", out, f)
    return out


def candidates(fl: FlagLoop, bound: A.Expr, params: frozenset = frozenset()) -> List[A.Expr]:
    """Per-iteration bounds to try for the flag loop ``fl`` and the claim's ``bound``: the bound
    with the trip count divided out, a sum over the loop's range at the current iteration, the
    chances of the body's own draws, and (union form) the body's chance of moving the flag read
    off its guards (:func:`move_chance`; ``params``: the program's parameters)."""
    n = trip_count(fl.loop)
    chances = _bern_chances(fl.loop.body)
    out: List[A.Expr] = []
    if fl.form == "union":
        split = divide_out(bound, n)
        out += ([split] if split is not None else []) + [A.Binary("/", bound, n)]
        term = _per_term(bound, fl.loop)
        out += ([term] if term is not None else []) + chances
        guarded = move_chance(fl.loop.body, fl.flag, frozenset(params) | {fl.loop.var}, {})
        if guarded is not None and guarded != A.num(0) and guarded not in out:
            out.append(guarded)
    elif isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1:
        big = bound.args[0]
        e = divide_out(big, n)
        out += _from_exponent(e if e is not None else A.Binary("/", big, n))
        term = _per_term(big, fl.loop)
        out += _from_exponent(term) if term is not None else []
        out += [A.Binary("-", A.num(1), q) for q in chances]
        if len(chances) >= 2:  # an iteration of several draws (a block of a period) that all miss
            out.append(_product([A.Binary("-", A.num(1), q) for q in chances]))
    elif literal_trips(fl.loop) is not None:  # a product written out (f * f * f for 3 tries)
        root = _root(bound, literal_trips(fl.loop) or 1)
        out += ([root] if root is not None else []) + [A.Binary("-", A.num(1), q) for q in chances] + chances
    elif log_lower(bound) is not None:  # a literal bound below 1 composed as exp(L), L <= log(bound)
        out += [A.Binary("-", A.num(1), q) for q in chances]
    unique: List[A.Expr] = []
    for u in out:
        if u not in unique:
            unique.append(u)
    return unique


def _holds(cfa: CFA, formulas) -> bool:
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    return all(is_valid(enc.expr(f, env), enc, Stats(), 5000, hyps) == VALID for _rule, f in formulas)


def try_nesting(
    program: A.Program,
    cfa: CFA,
    t0: float,
    deadline: Optional[float],
    prove: Callable[[A.Program, CFA], ProofResult],
    quick: Optional[Callable[[A.Program, CFA], ProofResult]] = None,
):
    """``(NestResult or None, why)`` (why '' when the program is not a flag loop). ``prove``: the
    portfolio on the iteration program and its CFA; ``quick``: its methods that answer in a few
    queries (Markov, the pairs rule, Chernoff: no search). With ``quick``, a first pass offers
    every candidate's iteration program with its epilogue folded (:func:`_folded`) to ``quick``
    alone — a count read through a threshold test is the shape those methods bound, and a later
    candidate (a row's own term of a sum over rows) is reached before an earlier one's search
    has spent the time; the second pass is the whole portfolio on each candidate's iteration
    program as built (the union bound and expected failure read an epilogue as it is). Then,
    single iterations only, the same passes with the loop facts (:mod:`.loop_facts`) as the
    iteration program's ``requires``; last, blocks of ``k`` iterations when the body reads its
    counter modulo ``k`` (:mod:`tamp.cfa.periods`)."""
    ensures = tuple(e for e in program.ensures if clause_kind(e) == FAILURE_BOUND)
    fl = flag_loop(program, ensures, cfa.types)
    if fl is None:
        lv = lasvegas_loop(program, ensures, cfa.types)
        return (None, "") if lv is None else try_lasvegas(program, cfa, lv, t0, deadline, prove)
    params = {p.name for p in program.params}
    why = ""
    loops: List[Tuple[FlagLoop, int]] = [(fl, 0)]
    blocks = period_loop(program, fl, cfa.types)
    if blocks is not None:  # the body reads its counter modulo k: blocks of k iterations next
        loops.append(blocks)
    none: Tuple[A.Expr, ...] = ()
    single = fl
    for fl, period in loops:
        n = trip_count(fl.loop)
        us = candidates(fl, cfa.bound, frozenset(params))
        passes: List[Tuple[str, A.Expr, Tuple[A.Expr, ...]]] = (
            [("quick", u, none) for u in us] if quick is not None else []
        ) + [("full", u, none) for u in us]
        # loop facts (the loop-carried state an iteration's chance depends on) are a later pass:
        # the proofs that need none keep their history; found only once the passes without them
        # failed, and for single iterations only (a block's facts are not searched)
        facts_pending = not period
        always: Optional[Tuple[A.Expr, ...]] = None
        i = 0
        while i < len(passes) or facts_pending:
            if i == len(passes):
                facts_pending = False
                if deadline is not None and time.monotonic() > deadline:
                    break
                found, always = loop_facts(program, fl, cfa.types)
                if found:
                    passes += ([("quick", u, found) for u in us] if quick is not None else []) + [
                        ("full", u, found) for u in us
                    ]
                continue
            mode, u, facts = passes[i]
            i += 1
            if deadline is not None and time.monotonic() > deadline:
                break
            if not set(free_vars(u)) <= params | {fl.loop.var}:
                continue
            if not free_vars(u) and _holds(cfa, [("", A.Binary("<=", u, A.num(0)))]):
                continue  # a constant bound of 0 (``1 - 1`` from an exponent of -1): no iteration can meet it
            side = composition(fl, cfa.bound, u)
            it = iteration_program(program, fl, cfa.types, u, facts=facts)
            if side is None or it is None:
                continue
            try:
                if not _holds(cfa, side):
                    why = (
                        why
                        or f"the bound cannot be composed from {show_expr(u)} per iteration of the loop at line {_line(fl.loop)}"
                    )
                    continue
                it_cfa = build_cfa(it, None, cfa.path)
            except (TampError, z3.Z3Exception):
                continue
            if mode == "quick":
                assert quick is not None
                inner, fold = _folded(
                    it, cfa, quick, ProofResult(it.name, "failure-bound", "unknown", 0.0, ""), deadline
                )
                if inner.verdict != "proved":
                    continue  # the full pass tries this candidate again, and says why it failed
            else:
                inner, fold = prove(it, it_cfa), 0
            pieces: Dict[str, ProofResult] = {}
            if inner.verdict == "proved" and fl.rest is not None:
                ex = exit_program(program, fl, cfa.types)
                try:
                    done = None if ex is None else prove(ex, build_cfa(ex, None, cfa.path))
                except (TampError, z3.Z3Exception):
                    done = None
                if done is None or done.verdict != "proved":
                    why = why or (
                        f"an iteration of the loop at line {_line(fl.loop)} that raises its flag was not proved to leave "
                        f"`{show_expr(fl.rest)}` true"
                    )
                    continue
                pieces["exit"] = done
            if inner.verdict == "proved":
                how = "summed over" if fl.form == "union" else "multiplied over"
                return NestResult(
                    cfa.name,
                    "failure-bound",
                    "proved",
                    time.monotonic() - t0,
                    show_expr(cfa.bound),
                    f"one {'iteration' if not period else f'block of {period} iterations'} of the loop at line "
                    f"{_line(fl.loop)} fails with probability at most "
                    f"{show_expr(u)} (proved by {inner_method(inner)}"
                    + (f", its last {fold} statement(s) read as a condition on the state before them" if fold else "")
                    + (f", given the loop facts {', '.join(show_expr(f) for f in facts)}" if facts else "")
                    + (
                        f"), {how} its {show_expr(n)} iterations"
                        if not period
                        else f"), {how} its {show_expr(n)} blocks of {period} iterations (its body reads the counter modulo {period})"
                    ),
                    cfa=cfa,
                    stats={**inner.stats, "method": "nesting"},
                    form=fl.form,
                    per_iteration=u,
                    inner=inner,
                    pieces={"iter": inner, **pieces},
                    fold=fold,
                    period=period,
                    iteration_facts=facts,
                    always=always if facts else None,
                ), ""
            if not why:
                lines = [ln.strip() for ln in (inner.message or "").splitlines()]
                # the inner method's own reason (its first line that is not the "not proved (...)" coda)
                first = next((ln for ln in lines if ln and not ln.startswith("not proved")), "")
                why = (
                    f"one iteration of the loop at line {_line(fl.loop)} was not proved to fail with probability "
                    f"at most {show_expr(u)}" + (f": {first}" if first and len(first) < 200 else "")
                )
    if reads_shared_draws(program, single):  # rows reading the prefix's draws: a later pass
        got = _shared_rows(program, cfa, single, t0, deadline, prove, quick)
        if got is not None:
            return got, ""
    return None, why


def _shared_rows(program, cfa, fl: FlagLoop, t0, deadline, prove, quick) -> Optional[NestResult]:
    """The union over the rows of a loop whose rows read draws made before it, each row proved
    as the program that makes those draws itself (:func:`tamp.cfa.shared_rows.shared_iteration_program`):
    every candidate offered to ``quick`` with the epilogue folded first, then to the portfolio."""
    params = frozenset(p.name for p in program.params)
    us = candidates(fl, cfa.bound, params)
    for mode in ("quick", "full") if quick is not None else ("full",):
        for u in us:
            if deadline is not None and time.monotonic() > deadline:
                return None
            if not set(free_vars(u)) <= params | {fl.loop.var}:
                continue
            side = composition(fl, cfa.bound, u)
            it = shared_iteration_program(program, fl, cfa.types, u)
            if side is None or it is None:
                continue
            try:
                if not _holds(cfa, side):
                    continue
                it_cfa = build_cfa(it, None, cfa.path)
            except (TampError, z3.Z3Exception):
                continue
            if mode == "quick":
                assert quick is not None
                inner, fold = _folded(
                    it, cfa, quick, ProofResult(it.name, "failure-bound", "unknown", 0.0, ""), deadline
                )
            else:
                inner, fold = prove(it, it_cfa), 0
            if inner.verdict != "proved":
                continue
            return NestResult(
                cfa.name,
                "failure-bound",
                "proved",
                time.monotonic() - t0,
                show_expr(cfa.bound),
                f"one iteration of the loop at line {_line(fl.loop)}, with the draws made before the loop, fails "
                f"with probability at most {show_expr(u)} (proved by {inner_method(inner)}"
                + (f", its last {fold} statement(s) read as a condition on the state before them" if fold else "")
                + f"), summed over its {show_expr(trip_count(fl.loop))} iterations (the union bound needs no "
                "independence between them)",
                cfa=cfa,
                stats={**inner.stats, "method": "nesting"},
                form=fl.form,
                per_iteration=u,
                inner=inner,
                pieces={"iter": inner},
                fold=fold,
                shared=True,
            )
    return None


def exponential_tail(bound: A.Expr) -> bool:
    """``bound`` has a term ``exp(-s)`` (``exp(-2 * t * t / k)``, ``exp(-m * p / 3)``): the shape of
    a Chernoff or Hoeffding tail, the only bounds concentration's rules give. The first pass of
    :func:`try_nesting` offers a row to concentration only then (``pow(q, g)``, read as
    ``exp(g * log(q))``, is a product, not a tail): a choice of order, never of soundness."""
    return any(
        isinstance(x, A.Call) and x.func == "exp" and len(x.args) == 1 and _negated(x.args[0]) is not None
        for x in A.walk(bound)
    )


def _folded(
    it: A.Program, cfa: CFA, prove: Callable[[A.Program, CFA], ProofResult], inner: ProofResult, deadline
) -> Tuple[ProofResult, int]:
    """``(result, k)``: the iteration program ``it`` proved with its deterministic epilogue (its
    last ``k`` statements: a threshold test raising the flag, ``if (seen >= 2) { over := true; }``)
    folded into its claim (:func:`tamp.cfa.epilogue.fold_epilogue`), so that the methods bounding
    the tail of a count (Markov, the pairs rule, Chernoff) read the claim as a comparison of the
    count; ``(inner, 0)`` when there is nothing to fold or the folded program is not proved
    either. Sound: the folded program fails exactly when ``it`` does (the module's argument)."""
    k = epilogue_length(it)
    if k == 0 or (deadline is not None and time.monotonic() > deadline):
        return inner, 0
    folded = fold_epilogue(it, k)
    if folded is None:
        return inner, 0
    try:
        got = prove(folded, build_cfa(folded, None, cfa.path))
    except (TampError, z3.Z3Exception):
        return inner, 0
    return (got, k) if got.verdict == "proved" else (inner, 0)


def lasvegas_candidates(lv: LasVegas, bound: A.Expr) -> List[A.Expr]:
    """Per-iteration continue bounds to try for a Las Vegas loop and the claim's ``exp(E)``: the
    ``x`` of each ``log(x)`` in ``E`` (the claim written ``pow(x, ...)``), ``E`` with the
    iteration count divided out, and ``1 - q`` for each ``bern(q)`` the body draws."""
    if not (isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1):
        return []
    big = bound.args[0]
    out: List[A.Expr] = [
        x.args[0] for x in A.walk(big) if isinstance(x, A.Call) and x.func == "log" and len(x.args) == 1
    ]
    k = A.Binary("-", lv.limit, lv.start)
    for n in (lv.limit, k, A.Binary("+", k, A.num(1))):
        e = divide_out(big, n)
        if e is not None:
            out += _from_exponent(e)
    out += [A.Binary("-", A.num(1), q) for q in _bern_chances(lv.loop.body)]
    unique: List[A.Expr] = []
    for u in out:
        if u not in unique:
            unique.append(u)
    return unique


def try_lasvegas(
    program: A.Program,
    cfa: CFA,
    lv: LasVegas,
    t0: float,
    deadline: Optional[float],
    prove: Callable[[A.Program, CFA], ProofResult],
):
    """``(NestResult or None, why)`` for a Las Vegas loop (:func:`tamp.cfa.nesting.lasvegas_loop`):
    a per-iteration continue bound ``u`` whose composition is valid, with every part proved."""
    params = {p.name for p in program.params}
    why = ""
    for u in lasvegas_candidates(lv, cfa.bound):
        for lead in (False, True):
            if deadline is not None and time.monotonic() > deadline:
                return None, why
            if not set(free_vars(u)) <= params:
                continue
            side = lasvegas_composition(lv, cfa.bound, u, lead)
            parts = lasvegas_programs(program, lv, cfa.types, u, lead)
            if side is None or parts is None:
                continue
            try:
                if not _holds(cfa, side):
                    why = why or (
                        f"the bound cannot be composed from {show_expr(u)} per iteration of the loop at line {_line(lv.loop)}"
                    )
                    continue
                proved: Dict[str, ProofResult] = {}
                for role, it in parts.items():
                    r = prove(it, build_cfa(it, None, cfa.path))
                    if r.verdict != "proved":
                        lines = [ln.strip() for ln in (r.message or "").splitlines()]
                        first = next((ln for ln in lines if ln and not ln.startswith("not proved")), "")
                        what = {
                            "iter": f"to continue with probability at most {show_expr(u)}",
                            "start": f"to enter the loop with probability at most {show_expr(u)}",
                        }.get(role, "to leave the loop only where the rest of the postcondition holds")
                        why = why or (
                            f"{'one iteration of' if role in ('iter', 'exit') else 'the code before'} the loop at "
                            f"line {_line(lv.loop)} was not proved {what}"
                            + (f": {first}" if first and len(first) < 200 else "")
                        )
                        break
                    proved[role] = r
                else:
                    n = lv.limit if lv.start == A.num(0) else A.Binary("-", lv.limit, lv.start)
                    return NestResult(
                        cfa.name,
                        "failure-bound",
                        "proved",
                        time.monotonic() - t0,
                        show_expr(cfa.bound),
                        f"one iteration of the loop at line {_line(lv.loop)} continues with probability at most "
                        f"{show_expr(u)} (proved by {inner_method(proved['iter'])}); breaking "
                        f"`{lv.counter} <= {show_expr(lv.limit)}` needs the first {show_expr(n)} iterations"
                        + (" and the entry test" if lead else "")
                        + " all to continue",
                        cfa=cfa,
                        stats={**proved["iter"].stats, "method": "nesting"},
                        form="lasvegas",
                        per_iteration=u,
                        inner=proved["iter"],
                        pieces=proved,
                        lead=lead,
                    ), ""
            except (TampError, z3.Z3Exception):
                continue
    return None, why


def _line(s) -> str:
    return str(s.pos.line) if s.pos is not None else "?"


#: how a message names the method that proved the iteration program, by its result's class
_METHODS = {
    "ProofResult": "the union bound",
    "ExpectationResult": "expected failure",
    "ConcentrationResult": "concentration",
    "ProductResult": "the product rule",
    "NestResult": "this rule, on the loop inside it",
    "LinearityResult": "linearity of expectation",
}


def inner_method(r: ProofResult) -> str:
    if isinstance(r, NestResult) and r.form == "stages":
        return "the stage product"
    rule = getattr(getattr(r, "proof", None), "rule", None)
    if type(r).__name__ == "LinearityResult" and rule is not None:
        return {"pairs": "the pairs rule, Markov on X(X-1)", "markov": "Markov's inequality"}.get(
            rule, f"linearity of expectation ({rule})"
        )
    return _METHODS.get(type(r).__name__, "another method")

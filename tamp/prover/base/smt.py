"""Translation of :mod:`lang.ast` expressions to z3, and validity checks.

Variables are looked up in an *environment* (name → z3 term), so the same encoder serves
SSA trace formulas (fresh versions per assignment) and state-predicate obligations.
``log``, ``exp`` and ``sqrt`` are uninterpreted functions; every application that occurs
in a formula is recorded so that :mod:`axioms.lemmas` can add true facts about it.
``sum`` with literal bounds is unrolled; otherwise it is an uninterpreted function of its
bounds and free variables (sound: nothing is assumed about its value).

:func:`is_valid` is the only place a solver answer becomes a fact: ``unsat`` of the negation
is "valid"; ``sat`` is "invalid"; ``unknown`` (including timeouts) is "unknown" — never valid.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import AbstractSet, Dict, List, Optional, Tuple

import z3
from z3.z3 import _to_expr_ref

from axioms.lemmas import lemma_instances, sorted_shape, sum_placeholder
from lang import ast as A
from lang.errors import UnsupportedError
from lang.walk import free_vars
from tamp.core.validity import CLOCK_SLACK, INVALID, RLIMIT_PER_MS, UNKNOWN, VALID, budget_limits, verdict  # noqa: F401 (re-exported)
from tamp.core.z3expr import Z3Translation, conj, raw_api, sort_of, to_int, to_real, unify  # noqa: F401 (re-exported)
from tamp.prover.base.exprs import subst


@dataclass
class Stats:
    """Counters shared by one proof attempt."""

    solver_calls: int = 0
    solver_time: float = 0.0
    lemma_instances: int = 0
    unknowns: int = 0


class Encoder(Z3Translation):
    """Expressions → z3 terms over an environment (:class:`tamp.core.z3expr.Z3Translation`):
    log/exp/sqrt are the uninterpreted functions ``self.log``, ``self.exp``, ``self.sqrt``, a sum
    that is not unrolled is an uninterpreted function of its bounds and free variables, and
    every such application is noted (``has_apps``) for the lemmas."""

    def __init__(self, types: Dict[str, A.Type]):
        super().__init__(UnsupportedError, "the prover")
        self.types = types
        self.log = z3.Function("log", z3.RealSort(), z3.RealSort())
        self.exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
        self.sqrt = z3.Function("sqrt", z3.RealSort(), z3.RealSort())
        self._fresh = 0
        self._sums: Dict[tuple, z3.FuncDeclRef] = {}
        # set once this encoder has built a log/exp/sqrt or opaque sum application: until then
        # no formula of it can contain one, and the search for lemma terms is skipped
        self.has_apps = False
        self._env0: Optional[Dict[str, z3.ExprRef]] = None
        self._memo: Dict[int, z3.ExprRef] = {}
        self._memo_nodes: List[A.Expr] = []  # keeps the memoised nodes alive, so their ids stay theirs
        self._sum_defs: Dict[str, tuple] = {}

    def sum_info(self, decl: z3.FuncDeclRef):
        """(the ``Sum`` expression, the names of its free variables in argument order) for one of
        this encoder's opaque sum functions, else None (used by the ``sum-*`` lemmas)."""
        return self._sum_defs.get(decl.name())

    # ------------------------------------------------------------------ variables
    def const(self, name: str, version=0) -> z3.ExprRef:
        """The z3 constant for version ``version`` of variable ``name``."""
        t = self.types.get(name)
        if t is None:
            raise UnsupportedError(f"the prover does not know the type of '{name}'")
        return z3.Const(f"{name}@{version}" if version is not None else name, sort_of(t))

    def fresh(self, name: str) -> z3.ExprRef:
        self._fresh += 1
        return self.const(name, f"s{self._fresh}")

    def initial_env(self, suffix="0") -> Dict[str, z3.ExprRef]:
        return {n: self.const(n, suffix) for n, t in self.types.items() if t.name != "tuple"}

    @property
    def env0(self) -> Dict[str, z3.ExprRef]:
        """The initial environment, one shared dict (callers must not change it): expressions
        encoded over it are remembered, since the prover encodes the same candidate invariants
        and labels over it again and again."""
        if self._env0 is None:
            self._env0 = self.initial_env()
        return self._env0

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, env: Dict[str, z3.ExprRef]) -> z3.ExprRef:
        """The z3 term of ``e`` over ``env`` (remembered per node over :attr:`env0`)."""
        if env is self._env0 and env is not None:
            memo = self._memo
            hit = memo.get(id(e))
            if hit is not None:
                return hit
            # e keeps its subtree alive, whose results the walk remembers (even if it fails
            # half-way), so that their ids stay theirs
            self._memo_nodes.append(e)
            return self.translate(e, env, memo)
        return self.translate(e, env)

    def transcendental(self, name: str, arg: z3.ExprRef) -> z3.ExprRef:
        self.has_apps = True
        return {"log": self.log, "exp": self.exp, "sqrt": self.sqrt}[name](arg)

    def bound_variable(self, name: str) -> z3.ExprRef:
        self.has_apps = True  # a quantifier: it may be one the sorted-mono lemma is about
        self._fresh += 1
        return z3.Int(f"{name}!q{self._fresh}")

    def opaque_sum(self, e: A.Sum, lo: z3.ExprRef, hi: z3.ExprRef) -> z3.ExprRef:
        """A function of the bounds and of the free variables' values, one per body up to the
        names of its variables: the free variables are its arguments in the order they first
        occur in the body, so alpha-equivalent bodies share one function (``x[i] == b`` summed
        inside ``forall b`` and ``x[j] == b$`` summed inside ``forall b$``, the claim's
        quantifier renamed apart by :mod:`tamp.cfa.bound_names`, are the same function of
        ``x`` and the bound value). Sound: a sum is a function of its bounds and of the values
        its body reads, whatever they are called."""
        self.has_apps = True
        names = _first_occurrences(e.body, free_vars(e.body) - {e.var})
        holes: Dict[str, A.Expr] = {n: A.Var(f"$sum.{k}") for k, n in enumerate(names)}
        holes[e.var] = A.Var("$sum")
        sorts = [z3.IntSort(), z3.IntSort()] + [self.env[n].sort() for n in names]
        # one function per body shape and argument sorts; bounds and free values are arguments
        key = (subst(e.body, holes), tuple(s.sexpr() for s in sorts))
        if key not in self._sums:
            fname = f"sum{len(self._sums)}"
            self._sums[key] = z3.Function(fname, *sorts, z3.RealSort())
            self._sum_defs[fname] = (e, names)
        return self._sums[key](lo, hi, *[self.env[n] for n in names])


def _first_occurrences(e: A.Expr, names: AbstractSet[str]) -> List[str]:
    """The names of ``names`` in the order of their first occurrence in ``e`` (pre-order)."""
    out: List[str] = []
    for n in A.walk(e):
        if isinstance(n, A.Var) and n.name in names and n.name not in out:
            out.append(n.name)
    return out + sorted(set(names) - set(out))


def substitute_all(terms: List[z3.ExprRef], pairs) -> List[z3.ExprRef]:
    """``[z3.substitute(t, *pairs) for t in terms]``, with the (from, to) arrays built once and
    one C call per term (``z3.substitute`` re-checks every pair's sorts on every call). The
    pairs must have equal sorts, as the prover's (pre-state constant, post-state value) do."""
    if not pairs or not terms:
        return list(terms)
    n = len(pairs)
    src, dst = (z3.Ast * n)(), (z3.Ast * n)()
    for i, (a, b) in enumerate(pairs):
        src[i], dst[i] = a.as_ast(), b.as_ast()
    ctx = terms[0].ctx
    return [_to_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), n, src, dst), ctx) for t in terms]


# ---------------------------------------------------------------------------- validity


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


def enc_has_apps(enc) -> bool:
    """Whether formulas built by ``enc`` may contain log/exp/sqrt/sum applications (True for
    encoders that do not say)."""
    return getattr(enc, "has_apps", True)


def lemmas_for(apps: List[z3.ExprRef], enc: Encoder) -> list:
    """:func:`axioms.lemmas.lemma_instances` for ``apps``, remembered per encoder: most queries
    of one proof mention the same few log/exp terms (the lemmas are facts about the terms
    alone, so the same set of terms always gets the same lemmas). The applications are kept
    with the entry, so their ids stay theirs."""
    if not apps:
        return []
    cache = enc.__dict__.setdefault("_lemmas", {})
    key = tuple(sorted(t.get_id() for t in apps))
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (list(apps), lemma_instances(apps, enc))
    return hit[1]


def _solver_for(enc: Encoder, hyps: List[z3.BoolRef], mbqi: bool = True) -> z3.Solver:
    """One solver per set of hypotheses and encoder, with the hypotheses asserted once; each
    query runs in its own ``push``/``pop`` scope (creating a solver costs more than most of the
    prover's queries). The hypotheses are kept alive with the solver, so their ids stay theirs.
    ``mbqi=False``: a solver without model-based quantifier instantiation (see :func:`is_valid`)."""
    cache = enc.__dict__.setdefault("_solvers", {})
    key = (mbqi,) + tuple(h.get_id() for h in hyps)
    entry = cache.get(key)
    if entry is None:
        s = z3.Solver()
        if not mbqi:
            s.set("mbqi", False)
        for h in hyps:
            s.add(h)
        entry = cache[key] = (s, list(hyps))
    return entry[0]


LEMMA_FREE_MS = 200


def _limits(timeout_ms: float, clock_ms: Optional[float]) -> Tuple[int, int]:
    """z3's resource limit for a query with a budget of ``timeout_ms`` and its clock limit
    (:func:`tamp.core.validity.budget_limits`), at most ``clock_ms`` (the time the proof has left)."""
    rlimit, clock = budget_limits(timeout_ms)
    if clock_ms is not None:
        clock = min(clock, max(int(clock_ms), 1))
    return rlimit, clock


def _check(s: z3.Solver, lemmas, formula, timeout_ms, stats: Stats, clock_ms: Optional[float] = None):
    """z3's answer for ``lemmas ∧ ¬formula`` in a scope of ``s`` (popped afterwards).

    The query is bounded by z3's resource limit (a count of its steps: the same answer on every
    run, however loaded the machine is; a clock limit alone made short queries "unknown" under
    load, several times more often at a 200 ms budget); the clock limit only guards against a
    query whose steps are slow, and against running past the proof's deadline."""
    rlimit, clock = _limits(timeout_ms, clock_ms)
    s.push()
    try:
        s.set("rlimit", rlimit)
        s.set("timeout", clock)
        for _name, lem in lemmas:
            s.add(lem)
        s.add(z3.Not(formula))
        t0 = time.monotonic()
        r = s.check()
    finally:
        s.pop()
    stats.solver_calls += 1
    stats.solver_time += time.monotonic() - t0
    return r


def is_valid(
    formula: z3.BoolRef,
    enc: Encoder,
    stats: Stats,
    timeout_ms: int = 5000,
    hypotheses=(),
    clock_ms: Optional[float] = None,
) -> str:
    """Decide ``hypotheses ⇒ formula`` with lemmas about log/exp/sqrt added as hypotheses, within
    a budget of ``timeout_ms`` (z3 resource units, see :func:`_check`) and ``clock_ms`` of the
    clock where given (the time the proof has left).

    Returns VALID only when z3 answers ``unsat`` for the negation."""
    hyps = list(hypotheses)
    apps = transcendental_apps(conj(*hyps, formula) if hyps else formula) if enc_has_apps(enc) else []
    lemmas = lemmas_for(apps, enc)
    stats.lemma_instances += len(lemmas)
    s = _solver_for(enc, hyps)
    if lemmas:
        # most obligations do not need the lemmas (log is then an uninterpreted function): a
        # short query without them settles those; "unsat" without extra facts is "unsat" with
        # them, anything else is asked again with the lemmas
        if _check(s, [], formula, min(LEMMA_FREE_MS, timeout_ms), stats, clock_ms) == z3.unsat:
            return VALID
    answer = verdict(_check(s, lemmas, formula, timeout_ms, stats, clock_ms))
    if answer == UNKNOWN and _quantified(formula, hyps):
        # model-based instantiation can turn a quantified hypothesis into nonlinear facts that
        # end in "incomplete (theory arithmetic)"; pattern-based instantiation alone (as in
        # Houdini's queries) often finds the contradiction. An "unsat" is a proof either way.
        answer = verdict(_check(_solver_for(enc, hyps, mbqi=False), lemmas, formula, timeout_ms, stats, clock_ms))
    if answer == UNKNOWN:
        stats.unknowns += 1
    return answer


def _quantified(formula: z3.BoolRef, hyps: List[z3.BoolRef]) -> bool:
    """Whether ``formula`` or a hypothesis contains a quantifier."""
    stack, seen = [formula, *hyps], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_quantifier(t):
            return True
        if z3.is_app(t):
            stack.extend(t.children())
    return False

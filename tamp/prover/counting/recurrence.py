"""Closed forms of the values a loop computes (scalar evolution), as candidate loop-head facts.

A compiler's scalar evolution describes each variable a loop updates as a function of the
iteration count; here the description becomes a *candidate* label at the loop head, which
Houdini (:mod:`.invariants`) keeps only when the solver proves it inductive and the checker
(:mod:`.check`) verifies with everything else — so a wrong closed form loses a proof, never
makes one, and a kept one is written into the certificate as a label that ``tamp check-proof``
re-checks.

For a loop with a counter ``i`` (``i := lo`` before it, ``i := i ± 1`` in its body; T = ``i - lo``
iterations done, ``lo - i`` counting down), the body is executed symbolically along each of its
paths (:func:`body_paths`): every variable's value at the back edge over the values at the head,
and the path's conditions. A variable ``x`` with a known value ``x0`` on entry
(``x := x0`` on the straight-line code before the loop) and:

* ``x := x + d`` on every path, d the same and over inputs (values the loop does not write):
  ``x == x0 + d * T``; with d reading the counter, ``x == x0 + Σ d`` — the sum computed by sympy
  when d is a polynomial in the counter (``i*(i-1)/2``), else written ``sum(j in lo..i: d[j/i])``
  (``s := s + x[i]`` gives ``s == sum(j in 0..i: x[j])``); d may read variables solved
  before it (``x := x + y`` with ``y := y + 1``: a quadratic);
* different increments on different paths whose conditions read only inputs and the counter
  (``if (x[i] < c) { u := u + 1; }``): the increment is the conditional ``c ? d1 : d2`` summed
  as above (``u == sum(j in 0..i: x[j] < c ? 1 : 0)``); when a condition reads a sample, only
  bounds: ``x0 + min(d) * T <= x <= x0 + max(d) * T`` for literal increments;
* ``x := e`` on some paths and unchanged on the others (a running maximum: ``if (h[j] > best)
  { best := h[j]; b := j; }``): ``forall k in lo..i: x >= e[k/i]`` (and ``<=``, for a minimum),
  and for a variable written on the same paths with the counter (``b := j``) ``x == e[b/i]`` and
  the range of ``b``.

Candidates are proposals only: nothing in this module needs to be right for soundness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import z3

from lang import ast as A
from lang.walk import Transformer, free_vars, rebuild, replace_all
from tamp.cfa.loops import entry_value as cfa_entry_value
from tamp.cfa.loops import loop_body
from tamp.core.validity import check_fresh
from tamp.core.z3context import load_in_proof
from tamp.prover.base.exprs import and_all, iterations_done, plus, subst, sympy_atoms
from tamp.prover.base.simplify import _ToSympy, from_sympy
from tamp.prover.base.smt import Encoder

HAVOC = A.Var("?havoc")  # a value the symbolic execution does not know (a sample, an inner loop's writes)
MAX_PATHS = 32
J = "j$"  # the summation variable of the closed forms
K = "k$"


@dataclass
class Path:
    """One path through a loop body, from the head back to it: each written scalar's value and
    each written array's element writes (oldest first) over the values at the head, and the
    conditions of the path's ``assume`` edges (over the same values)."""

    env: Dict[str, A.Expr] = field(default_factory=dict)
    writes: Dict[str, List[Tuple[A.Expr, A.Expr]]] = field(default_factory=dict)
    conds: List[A.Expr] = field(default_factory=list)

    def copy(self) -> "Path":
        return Path(dict(self.env), {k: list(v) for k, v in self.writes.items()}, list(self.conds))


def unknown(e: A.Expr) -> bool:
    return HAVOC.name in set(free_vars(e))


class _Value(Transformer):
    """An expression's value on a path: scalars by their symbolic values, array reads through
    the path's element writes (``a[x]`` after ``a[e] := v`` is ``x == e ? v : a[x]``)."""

    def __init__(self, path: Path):
        self.path = path

    def Var(self, node: A.Var, kids) -> A.Expr:
        return self.path.env.get(node.name, node)

    def Index(self, node: A.Index, kids) -> A.Expr:
        base, idx = kids
        if not (isinstance(node.base, A.Var) and node.base.name in self.path.writes):
            return A.Index(base, idx)
        out: A.Expr = A.Index(node.base, idx)
        for e, v in self.path.writes[node.base.name]:
            out = A.Cond(A.Binary("==", idx, e), v, out)
        return out


def value(e: A.Expr, path: Path) -> A.Expr:
    return _Value(path).walk(e)


def written(cfa, nodes: Set[int]) -> Set[str]:
    """Names (arrays by their name) written on edges inside ``nodes``."""
    out: Set[str] = set()
    for u, v, _k, d in cfa.edges():
        if u in nodes and v in nodes:
            for t in getattr(d["stmt"], "targets", ()):
                while isinstance(t, A.Index):
                    t = t.base
                if isinstance(t, A.Var):
                    out.add(t.name)
    return out


def body_copies(cfa, nodes: Set[int]) -> List[Tuple[str, str]]:
    """The variable copies ``x := y`` on edges inside ``nodes`` (back edges too), as pairs
    ``(x, y)`` in edge order; ghost targets (``$…``) left out."""
    out: List[Tuple[str, str]] = []
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if (
            u in nodes
            and v in nodes
            and isinstance(st, A.Assign)
            and isinstance(st.targets[0], A.Var)
            and isinstance(st.value, A.Var)
            and not st.targets[0].name.startswith("$")
        ):
            out.append((st.targets[0].name, st.value.name))
    return out


def _execute(st, path: Path, noisy: Optional[Dict[A.Sample, A.Expr]] = None) -> bool:
    """Apply one statement to ``path``; False when the path is infeasible (``assume(false)``). A
    sampling in ``noisy`` assigns its one target the given expression (over the values before
    it) instead of an unknown value."""
    if isinstance(st, A.Assume):
        c = value(st.cond, path)
        if isinstance(c, A.BoolLit):
            return c.value
        path.conds.append(c)
        return True
    if isinstance(st, A.Assign):
        if len(st.targets) != 1:
            for t in st.targets:
                _havoc_target(t, path)
            return True
        t = st.targets[0]
        v = value(st.value, path)
        if isinstance(t, A.Var):
            path.env[t.name] = v
        elif isinstance(t, A.Index) and isinstance(t.base, A.Var):
            path.writes.setdefault(t.base.name, []).append((value(t.index, path), v))
        else:
            _havoc_target(t, path)
        return True
    if isinstance(st, A.Sample):
        if noisy is not None and st in noisy and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
            path.env[st.targets[0].name] = value(noisy[st], path)
            return True
        for t in st.targets:
            _havoc_target(t, path)
        return True
    return True


def _havoc_target(t, path: Path) -> None:
    if isinstance(t, A.Var):
        path.env[t.name] = HAVOC
    elif isinstance(t, A.Index) and isinstance(t.base, A.Var):
        path.writes.setdefault(t.base.name, []).append((value(t.index, path), HAVOC))
    else:
        while isinstance(t, A.Index):
            t = t.base
        if isinstance(t, A.Var):
            path.writes.setdefault(t.name, []).append((HAVOC, HAVOC))


def body_paths(
    cfa, h: int, loops, noisy: Optional[Dict[A.Sample, A.Expr]] = None, until: Optional[int] = None
) -> Optional[List[Path]]:
    """Every path through the body of the loop at ``h`` (see :class:`Path`); an inner loop on the
    way makes every variable it writes unknown and is left by its exit edge. None when there are
    more than ``MAX_PATHS`` paths. ``noisy``: samplings given a symbolic value (see
    :func:`_execute`). ``until``: the paths from the head to that node of the body instead.

    The plain question (no ``noisy``, no ``until``) is asked many times per proof: its answer is
    remembered on the CFA for this ``loops`` and handed out as copies."""
    memo = getattr(cfa, "memo", None)
    if noisy is None and until is None and memo is not None:
        kept = memo(("body_paths", h, id(loops)), lambda: (loops, _body_paths(cfa, h, loops, None, None)))
        if kept[0] is loops:  # the same description of the loops (not another dict at that id)
            return None if kept[1] is None else [p.copy() for p in kept[1]]
    return _body_paths(cfa, h, loops, noisy, until)


def _body_paths(cfa, h: int, loops, noisy, until) -> Optional[List[Path]]:
    lp = loops[h]
    body = lp["body"]
    latches = set(lp["latches"])
    out: List[Path] = []
    stack: List[Tuple[int, Path]] = [(h, Path())]
    while stack:
        n, path = stack.pop()
        if until is not None and n == until and n != h:
            out.append(path)
            if len(out) > MAX_PATHS:
                return None
            continue
        if n != h and n in loops:  # an inner loop: its closed forms at its exit, else unknown
            inner = loops[n]
            summary = _summary(cfa, n, loops, path)
            for x in written(cfa, loop_body(cfa, n)):
                if x in cfa.types and cfa.types[x].name == "array":
                    path.writes.setdefault(x, []).append((HAVOC, HAVOC))
                else:
                    path.env[x] = summary.get(x, HAVOC)
            if inner["exit"] is None:
                return None
            ex = inner["exit"]
            edges = [(u, v, d) for u, v, _k, d in cfa.out_edges(n) if (u, v) == ex]
        else:
            edges = [(u, v, d) for u, v, _k, d in cfa.out_edges(n) if v in body]
        for u, v, d in edges:
            if u == h and not d.get("back"):  # the loop's guard holds in every iteration: not a branch
                stack.append((v, path.copy()))
                continue
            if d.get("back"):
                if v == h and u in latches:
                    p = path.copy()
                    if _execute(d["stmt"], p, noisy):
                        out.append(p)
                        if len(out) > MAX_PATHS:
                            return None
                continue
            p = path.copy()
            if _execute(d["stmt"], p, noisy):
                stack.append((v, p))
        if len(stack) > 4 * MAX_PATHS:
            return None
    return out


def entry_value(cfa, h: int, body: Set[int], x: str) -> Optional[A.Expr]:
    """The value ``x`` has on entry to the loop at ``h``: the last assignment to it on the
    straight-line code before the loop (no other loop's head on the way), when the variables it
    reads are not written between that assignment and the loop (and not in the loop). None when
    there is no such assignment."""
    return cfa_entry_value(cfa, h, body, x, stop_at_loop_heads=True, unchanged=written(cfa, loop_body(cfa, h)))


# ---------------------------------------------------------------------------- sums


def _sum_over_iterations(d: A.Expr, counter, cname: str, types=None) -> Optional[A.Expr]:
    """Σ of ``d`` (an expression over the counter's value at the head of each iteration done so
    far, and inputs): a polynomial in the counter summed by sympy, else a ``sum(…)`` term."""
    i = A.Var(cname)
    if cname not in set(free_vars(d)):
        return A.Binary("*", d, iterations_done(i, counter.init, counter.step))
    if any(isinstance(n, (A.Sum, A.Quant)) for n in A.walk(d)):
        return None  # a sum of sums (an inner loop's accumulator): see _nested_sums
    j = A.Var(J)
    g = _unit_summand(d, cname, counter.step, types or {}) if abs(counter.step) > 1 else None
    if g is not None:  # k consecutive elements per iteration: one sum over the elements
        body = subst(g, {cname: j})
        if counter.step > 0:
            lo, hi, incl = counter.init, i, False
        else:
            lo, hi, incl = A.Binary("+", i, A.num(1)), counter.init, True
        return _sympy_sum(body, lo, hi, incl) or _shifted(A.Sum(J, lo, hi, incl, body))
    if abs(counter.step) > 1:  # iteration t (from 0) sees the counter at init + step * t
        at = A.Binary("+", counter.init, A.Binary("*", A.num(counter.step), j))
        body = subst(d, {cname: at})
        zero: A.Expr = A.num(0)
        top = iterations_done(i, counter.init, counter.step)
        return _sympy_sum(body, zero, top, False) or A.Sum(J, zero, top, False, body)
    body = subst(d, {cname: j})
    if counter.step > 0:
        lo, hi, incl = counter.init, i, False
    else:
        lo, hi, incl = A.Binary("+", i, A.num(1)), counter.init, True
    poly = _sympy_sum(body, lo, hi, incl)
    if poly is not None:
        return poly
    return _shifted(A.Sum(J, lo, hi, incl, body))


def _terms(e: A.Expr) -> List[A.Expr]:
    """The additive terms of ``e`` (``a + b - c`` → a, b, -c)."""
    if isinstance(e, A.Binary) and e.op == "+":
        return _terms(e.left) + _terms(e.right)
    if isinstance(e, A.Binary) and e.op == "-":
        return _terms(e.left) + [A.Unary("-", t) for t in _terms(e.right)]
    return [e]


def _unit_summand(d: A.Expr, cname: str, step: int, types: Dict[str, A.Type]) -> Optional[A.Expr]:
    """g with ``d == g[i] + g[i ± 1] + … + g[i ± (k-1)]`` (k = |step|, the sign the step's;
    i the counter), when z3 proves it for one of d's additive terms as g: an iteration of
    ``i := i + 2`` that adds ``x[i] + x[i + 1]`` adds the two elements it steps over, so the
    iterations together add ``x[init..i]``, as a unit-step loop would. None otherwise."""
    k = abs(step)
    terms = _terms(d)
    if len(terms) != k or k > 8:
        return None
    sign = 1 if step > 0 else -1
    i = A.Var(cname)
    for g in terms:
        if cname not in set(free_vars(g)):
            continue
        total: A.Expr = g
        for r in range(1, k):
            total = A.Binary("+", total, subst(g, {cname: A.Binary("+", i, A.num(sign * r))}))
        if _proved_equal(d, total, types):
            return g
    return None


def _proved_equal(a: A.Expr, b: A.Expr, types: Dict[str, A.Type]) -> bool:
    """Whether z3 proves ``a == b`` for all values of their free variables (of ``types``)."""
    if (set(free_vars(a)) | set(free_vars(b))) - set(types):
        return False
    try:
        enc = Encoder(types)
        env = enc.initial_env()
        f = enc.expr(A.Binary("==", a, b), env)
    except Exception:  # an expression the encoder cannot express: not equal for this purpose
        return False
    return check_fresh(f, budget_ms=500) == z3.unsat


def _shifted(e: A.Sum) -> A.Sum:
    """``sum(j in lo..hi: B[j + c])`` as ``sum(j in lo + c..hi + c: B[j])`` when j occurs only as
    ``j + c`` (a counter moved at the top of the body reads ``x[i + 1]``): the summand then
    matches the postcondition's ``x[j]`` (sums of different summands are unrelated to the solver)."""
    j = A.Var(J)
    shifts = set()
    for n in A.walk(e.body):
        if isinstance(n, A.Binary) and n.op in ("+", "-") and n.left == j and isinstance(n.right, A.Num):
            if n.right.is_int:
                shifts.add((n, int(n.right.value) if n.op == "+" else -int(n.right.value)))
    if not shifts:
        return _offset(e)
    if len({c for _n, c in shifts}) != 1:
        return e
    c = next(iter(shifts))[1]
    body = e.body
    for pattern, _c in shifts:
        body = replace_all(body, pattern, j)
    if J in set(free_vars(replace_all(body, j, A.num(0)))):
        return e
    lo = _add(e.lo, c)
    hi = _add(e.hi, c)
    return A.Sum(J, lo, hi, e.inclusive, body)


def _offset(e: A.Sum) -> A.Sum:
    """``sum(j in lo..hi: B[o + j])`` as ``sum(j in o + lo..o + hi: B[j])`` when j occurs only as
    ``o + j`` (or ``j + o``), o an expression free of j (an inner loop over a block's offsets
    reads ``x[b * w + j]``): the summand then matches the postcondition's ``x[j]``."""
    j = A.Var(J)
    offs = []
    for n in A.walk(e.body):
        if isinstance(n, A.Binary) and n.op == "+" and j in (n.left, n.right):
            o = n.right if n.left == j else n.left
            if J not in set(free_vars(o)):
                offs.append((n, o))
    if not offs or len({o for _n, o in offs}) != 1:
        return e
    o = offs[0][1]
    body = e.body
    for pattern, _o in offs:
        body = replace_all(body, pattern, j)
    if J in set(free_vars(replace_all(body, j, A.num(0)))):
        return e
    return A.Sum(J, plus(o, e.lo), plus(o, e.hi), e.inclusive, body)


def _add(x: A.Expr, c: int) -> A.Expr:
    if isinstance(x, A.Num):
        return A.Num(x.value + c, x.is_int)
    if isinstance(x, A.Unary) and x.op == "-" and isinstance(x.operand, A.Num) and x.operand.is_int:
        return A.num(c - int(x.operand.value))
    if isinstance(x, A.Binary) and x.op == "-" and isinstance(x.right, A.Num) and x.right.value == c:
        return x.left
    return A.Binary("+", x, A.num(c)) if c >= 0 else A.Binary("-", x, A.num(-c))


def _sympy_sum(body: A.Expr, lo: A.Expr, hi: A.Expr, incl: bool) -> Optional[A.Expr]:
    if any(J in set(free_vars(x)) for e in (body, lo, hi) for x in sympy_atoms(e)):
        return None  # sympy would see the index inside an atom (an array element): not a polynomial
    # deferred on purpose: sympy takes ~1 s to load and only this step needs it
    sp = load_in_proof("sympy")

    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    conv = _ToSympy()
    try:
        b = conv.conv(body)
        lo_s, hi_s = conv.conv(lo), conv.conv(hi)
    except (ValueError, TypeError):
        return None
    js = conv.syms.get(J)
    if js is None or any(J in set(free_vars(x)) for x in conv.atoms.values()):
        return None
    try:
        if not b.is_polynomial(js):
            return None
        total = sp.summation(b, (js, lo_s, hi_s if incl else hi_s - 1))
        out = from_sympy(sp.expand(total), conv)
    except (sp.PolynomialError, ValueError, TypeError, NotImplementedError):
        return None
    return out


# ---------------------------------------------------------------------------- candidates


def closed_form_candidates(cfa, loops) -> List[A.Expr]:
    """Candidate facts for every counter loop's head (see the module docstring). A ``sum`` whose
    summand the solver proves equal to the summand of a ``sum`` in the postcondition is written
    with the postcondition's (the solver treats sums of different summands as unrelated)."""
    out: List[A.Expr] = []
    for h, lp in loops.items():
        c = lp["counter"]
        if c is None:
            continue
        try:
            mine = _loop_candidates(cfa, h, lp, loops, c)
            for c2 in _other_counters(cfa, h, lp, loops, c):
                mine.extend(
                    f for f in match_post_sums(cfa, _loop_candidates(cfa, h, lp, loops, c2), c2) if A.contains(f, A.Sum)
                )
        except (RecursionError, ValueError, TypeError):
            continue
        out.extend(match_post_sums(cfa, mine, c))
    nested_post = any(_nested_sums(e) for e in cfa.ensures)
    seen, uniq = set(), []
    for e in out:
        if not nested_post and _nested_sums(e):
            continue  # costly to decide (literal bounds unroll), and no postcondition needs it
        if e not in seen:
            seen.add(e)
            uniq.append(e)
    return uniq


def _other_counters(cfa, h: int, lp, loops, c) -> list:
    """The loop's other unit counters, as counters of the same iterations: an integer ``y``
    moved by the same ±1 on every path (``i := i + 1`` in ``while (r > 0) { …; r := r - 1; }``),
    with a known entry value ``y0``; its final value is ``y0 ± `` the iterations ``c`` counts.
    Sums over such a ``y`` (``s == sum(j in 0..i: x[j])``) index the data as the user's
    postcondition does, where sums over ``c`` would need a reindexing (``x[n - j]``) the solver
    cannot see."""
    paths = body_paths(cfa, h, loops)
    if not paths:
        return []
    out = []
    body = lp["body"]
    for y in sorted(written(cfa, loop_body(cfa, h)) - {c.name}):
        if cfa.types.get(y) != A.INT:
            continue
        ds = {increment(p.env.get(y, A.Var(y)), y) for p in paths}
        if len(ds) != 1:
            continue
        d = next(iter(ds))
        if not (isinstance(d, A.Num) and d.is_int and abs(d.value) == 1):
            continue
        y0 = entry_value(cfa, h, body, y)
        if y0 is None:
            continue
        step = int(d.value)
        total = c.done(c.final())
        limit = A.Binary("+" if step > 0 else "-", y0, total)
        out.append(c._replace(name=y, init=y0, limit=limit, strict=True, only=False, step=step))
    return out


def _summary(cfa, g: int, loops, path: Path) -> Dict[str, A.Expr]:
    """The values the inner loop at ``g`` leaves in the variables it writes, over the values on
    ``path`` when it is entered: its closed forms with the counter at its final value (only for a
    counter that alone ends the loop), each entry value the path's."""
    c = loops[g]["counter"]
    if c is None or not c.only:
        return {}
    closed, _ = _closed_forms(cfa, g, loops[g], loops, c, lambda x: A.Var(x + "@in"))
    mod = written(cfa, loop_body(cfa, g))
    m: Dict[str, A.Expr] = {c.name: value(c.final(), path)}
    for form in closed.values():
        for v in set(free_vars(form)):
            if v.endswith("@in"):
                m[v] = value(A.Var(v[:-3]), path)
            elif v not in mod and v in cfa.types:
                m[v] = value(A.Var(v), path)
    out = {x: subst(form, m) for x, form in closed.items()}
    out[c.name] = m[c.name]
    return out


def _loop_candidates(cfa, h, lp, loops, c) -> List[A.Expr]:
    def entry(x):
        return entry_value(cfa, h, lp["body"], x) or _nested_entry(cfa, h, loops, x)

    return _closed_forms(cfa, h, lp, loops, c, entry)[1]


def closed_forms_on(cfa, h: int, loops, paths: Optional[List[Path]]) -> Dict[str, A.Expr]:
    """The closed forms (by variable) of the counted loop at ``h`` computed from the given body
    ``paths`` instead of the body's own (a run of the body with its samplings at chosen values)."""
    lp = loops[h]

    def entry(x):
        return entry_value(cfa, h, lp["body"], x) or _nested_entry(cfa, h, loops, x)

    return _closed_forms(cfa, h, lp, loops, lp["counter"], entry, paths)[0]


def over_the_counter(cfa, h: int, loops, node: int, facts: List[A.Expr], keep: Set[str]) -> List[A.Expr]:
    """``facts`` (true at ``node`` of the counted loop at ``h``) with the variables the loop writes
    (but ``keep``) replaced by their values at ``node`` — the same on every path from the head,
    an inner loop's by its closed form at its exit — and those by their closed forms at the head:
    a sampling's axiom about ``cnt`` computed by an inner loop (or ``below``, an accumulator)
    becomes one about the counter (``sum(i in 0..n: x[i] < r ? 1 : 0)``), which the loop's copies
    and iterations can then carry (:func:`tamp.prover.loops.invariants.candidate_pool`). Only the facts
    that changed and read no unknown value; candidates only. A count whose summand reads the
    counter (``sum(j in 0..n: x[j] < r ? 1 : 0)``) is kept too: the solver relates it to the
    claim's ``sum(i in 0..n: x[i] < r ? 1 : 0)`` since both are one opaque function of ``r``
    (:meth:`tamp.prover.base.smt.Encoder.opaque_sum`)."""
    mod = written(cfa, loop_body(cfa, h)) - keep
    if not any(set(free_vars(f)) & mod for f in facts):
        return []  # nothing to rewrite (and no symbolic run to pay for)
    paths = body_paths(cfa, h, loops, until=node)
    if not paths:
        return []
    vals: Dict[str, A.Expr] = {}
    for x in mod:
        seen = {p.env.get(x, A.Var(x)) for p in paths}
        v = next(iter(seen)) if len(seen) == 1 else HAVOC  # different on different paths: unknown
        if v != A.Var(x):
            vals[x] = v
    forms = closed_forms_on(cfa, h, loops, None)
    out: List[A.Expr] = []
    for f in facts:
        g = _FoldZero().walk(subst(subst(f, vals), {x: e for x, e in forms.items() if x not in keep}))
        if g != f and not unknown(g) and g not in out:
            out.append(g)
    return match_post_sums(cfa, out, loops[h]["counter"])


class _FoldZero(Transformer):
    """``0 + e`` and ``e + 0`` as ``e`` (an inner loop's count entered at 0)."""

    def Binary(self, node: A.Binary, kids) -> A.Expr:
        left, right = kids
        if node.op == "+":
            return plus(left, right)
        out = rebuild(node, kids)
        assert isinstance(out, A.Expr)
        return out


def match_post_sums(cfa, cands: List[A.Expr], c) -> List[A.Expr]:
    """``cands`` (facts at the head of the loop with counter ``c``) with each ``sum`` written with
    the postcondition's summand when the solver proves them equal over the counter's range."""
    j = A.Var(J)
    rng: List[A.Expr]
    if abs(c.step) > 1:
        rng = [A.Binary("<=", A.num(0), j)]
    elif c.step > 0:
        rng = [A.Binary("<=", c.init, j), A.Binary("<", j, c.final())]
    else:
        rng = [A.Binary("<", c.final(), j), A.Binary("<=", j, c.init)]
    return _match_sums(cfa, cands, rng)


def _nested_entry(cfa, h: int, loops, x: str) -> Optional[A.Expr]:
    """The value ``x`` has when the inner loop at ``h`` is entered, over the state at its head:
    its value along the enclosing loop's body up to ``h`` (the same on every path) with the
    enclosing loop's variables at their closed forms (``c`` entering ``for j in i+1..n`` inside
    ``for i in 0..n`` is the count after i outer iterations)."""
    outer = [g for g in loops if g != h and h in loop_body(cfa, g) and loops[g]["counter"] is not None]
    if not outer:
        return None
    g = min(outer, key=lambda k: len(loop_body(cfa, k)))  # the innermost enclosing loop
    lp = loops[g]
    at_h: List[A.Expr] = []
    stack: List[Tuple[int, Path]] = [(g, Path())]
    steps = 0
    while stack and steps < 8 * MAX_PATHS:
        steps += 1
        n, path = stack.pop()
        if n == h:
            at_h.append(path.env.get(x, A.Var(x)))
            continue
        for _u, v, _k, d in cfa.out_edges(n):
            if d.get("back") or v not in lp["body"] or (v != h and v in loops):
                continue
            p = path.copy()
            if _execute(d["stmt"], p):
                stack.append((v, p))
    if len(set(at_h)) != 1 or unknown(at_h[0]):
        return None
    outer_forms, _ = _closed_forms(
        cfa,
        g,
        lp,
        loops,
        lp["counter"],
        lambda y: entry_value(cfa, g, lp["body"], y) or _nested_entry(cfa, g, loops, y),
    )
    val = subst(at_h[0], outer_forms)
    mod = written(cfa, loop_body(cfa, g))
    if (set(free_vars(val)) & mod) - set(outer_forms) - {lp["counter"].name}:
        return None
    return val


def _closed_forms(cfa, h, lp, loops, c, entry, paths=None) -> Tuple[Dict[str, A.Expr], List[A.Expr]]:
    """(closed forms by variable, candidate facts) for the loop at ``h``; ``entry(x)`` gives the
    value of x on entry to the loop (or None); ``paths`` the body's paths (default
    :func:`body_paths`)."""
    if paths is None:
        paths = body_paths(cfa, h, loops)
    if not paths:
        return {}, []
    mod = written(cfa, loop_body(cfa, h))
    cname = c.name
    i = A.Var(cname)
    T = iterations_done(i, c.init, c.step)
    scalars = sorted(
        x
        for x in mod
        if x != cname
        and not x.startswith("$")
        and cfa.types.get(x) is not None
        and cfa.types[x].name in ("int", "real")
    )
    out: List[A.Expr] = []
    closed: Dict[str, A.Expr] = {}
    allowed = lambda e, extra=(): not unknown(e) and set(free_vars(e)) <= (set(cfa.types) - mod) | {cname} | set(extra)  # noqa: E731

    def cond_of(p: Path) -> A.Expr:
        return and_all(p.conds)

    # increments: x' = x + d_p
    incs: Dict[str, List[Tuple[Path, A.Expr]]] = {}
    for x in scalars:
        ds = []
        for p in paths:
            v = p.env.get(x, A.Var(x))
            d = increment(v, x)
            if d is None:
                break
            ds.append((p, d))
        else:
            incs[x] = ds
    for _round in range(3):
        for x, ds in incs.items():
            if x in closed:
                continue
            x0 = entry(x)
            if x0 is None:
                continue
            solved = {y: closed[y] for y in closed}
            ds2 = [(p, subst(d, solved)) for p, d in ds]
            if not all(allowed(d) for _p, d in ds2):
                continue
            distinct = []
            for _p, d in ds2:
                if d not in distinct:
                    distinct.append(d)
            if len(distinct) == 1:
                summand = distinct[0]
            elif all(allowed(cond_of(p)) for p, _d in ds2):
                summand = distinct[-1]
                for d in reversed(distinct[:-1]):
                    cond = _or([cond_of(p) for p, d2 in ds2 if d2 == d])
                    summand = _cond(cond, d, summand)
            else:
                out.extend(_literal_range(x, x0, distinct, T))
                continue
            total = _sum_over_iterations(summand, c, cname, cfa.types)
            if total is None:
                continue
            form = plus(x0, total)
            closed[x] = form
            out.append(A.Binary("==", A.Var(x), form))
            if len(distinct) > 1:  # a conditional count: its range too (the sum alone says nothing of it)
                out.extend(_literal_range(x, x0, distinct, T))
                if abs(c.step) == 1:
                    out.extend(_window_form(x, x0, distinct, c, cfa.types))
    out.extend(_scan_candidates(cfa, h, lp, paths, scalars, c, allowed))
    return closed, out


def _window_form(x: str, x0: A.Expr, incs: List[A.Expr], c, types) -> List[A.Expr]:
    """A sliding window: increments ``f(i)`` and ``f(i) - f(i - w)`` (the running sum gains
    ``x[i]`` and, once the window is full, loses ``x[i - w]``; w not written by the loop) give
    ``x == x0 + sum(j in max(init, i - w)..i: f(j))`` counting up (``min(init + 1, i + w + 1)``
    …, mirrored, counting down), the window's sum, which the sum of the whole prefix with
    conditional summands (also proposed) cannot be shown equal to by the solver. A candidate
    only (the conditions under which the element leaves are not checked here: Houdini does)."""
    if len(incs) != 2:
        return []
    # deferred on purpose: sympy takes ~1 s to load and only this step needs it
    sp = load_in_proof("sympy")
    i = A.Var(c.name)
    out: List[A.Expr] = []
    for f, d2 in (incs, incs[::-1]):
        conv = _ToSympy()
        try:
            g = from_sympy(sp.expand(conv.conv(f) - conv.conv(d2)), conv)  # f - d2: the element that leaves
        except (ValueError, TypeError):
            continue
        reads = [n for n in A.walk(f) if isinstance(n, A.Index) and n.index == i and isinstance(n.base, A.Var)]
        if not reads:
            continue
        base = reads[0].base
        for n in A.walk(g):
            if not (isinstance(n, A.Index) and n.base == base):
                continue
            conv2 = _ToSympy()
            try:
                w = from_sympy(sp.expand(conv2.conv(i) - conv2.conv(n.index)), conv2)  # i - (i - w)
            except (ValueError, TypeError):
                continue
            if c.name in set(free_vars(w)) or not _proved_equal(subst(f, {c.name: A.Binary("-", i, w)}), g, types):
                continue
            j = A.Var(J)
            if c.step > 0:
                lo: A.Expr = A.Call("max", (c.init, A.Binary("-", i, w)))
                total: A.Expr = A.Sum(J, lo, i, False, subst(f, {c.name: j}))
            else:  # counting down from init: the window is i + 1..=min(init, i + w)
                hi = A.Call("min", (c.init, A.Binary("+", i, w)))
                total = A.Sum(J, A.Binary("+", i, A.num(1)), hi, True, subst(f, {c.name: j}))
            fact = A.Binary("==", A.Var(x), plus(x0, total))
            if fact not in out:
                out.append(fact)
    return out


def _literal_range(x: str, x0: A.Expr, incs: List[A.Expr], T: A.Expr) -> List[A.Expr]:
    """``x0 + min(d) * T <= x <= x0 + max(d) * T`` when every increment d of ``x`` is a literal
    (a count ``if (…) { c := c + 1; }`` stays within ``x0..x0 + T``); else nothing."""
    lits = [d for d in incs if isinstance(d, A.Num)]
    if len(lits) != len(incs) or not lits:
        return []
    lo_d = min(lits, key=lambda n: n.value)
    hi_d = max(lits, key=lambda n: n.value)
    return [
        A.Binary("<=", plus(x0, _times(lo_d, T)), A.Var(x)),
        A.Binary("<=", A.Var(x), plus(x0, _times(hi_d, T))),
    ]


def _nested_sums(e: A.Expr) -> bool:
    """Whether a ``sum`` or quantifier of ``e`` contains a ``sum``."""
    return any(isinstance(n, (A.Sum, A.Quant)) and any(isinstance(m, A.Sum) for m in A.walk(n.body)) for n in A.walk(e))


def _cond(c: A.Expr, a: A.Expr, b: A.Expr) -> A.Expr:
    """``c ? a : b``, written ``c' ? b : a`` when c is a negation ``!c'`` (as the source's ``if``)."""
    if isinstance(c, A.Unary) and c.op == "!":
        return A.Cond(c.operand, b, a)
    return A.Cond(c, a, b)


def _or(cs: List[A.Expr]) -> A.Expr:
    out = cs[0]
    for x in cs[1:]:
        out = A.Binary("||", out, x)
    return out


def _times(n: A.Num, T: A.Expr) -> A.Expr:
    if n.value == 0:
        return A.num(0)
    if n.value == 1:
        return T
    return A.Binary("*", n, T)


def increment(v: A.Expr, x: str) -> Optional[A.Expr]:
    """d with ``v == x + d`` and d free of x (sympy decides), or None."""
    if v == A.Var(x):
        return A.num(0)
    if unknown(v):
        return None
    if isinstance(v, A.Binary) and v.op == "+" and v.left == A.Var(x) and x not in set(free_vars(v.right)):
        return v.right
    if isinstance(v, A.Binary) and v.op == "+" and v.right == A.Var(x) and x not in set(free_vars(v.left)):
        return v.left
    if isinstance(v, A.Binary) and v.op == "-" and v.left == A.Var(x) and x not in set(free_vars(v.right)):
        return A.Unary("-", v.right) if not isinstance(v.right, A.Num) else A.Num(-v.right.value, v.right.is_int)
    if x not in set(free_vars(v)):
        return None
    # deferred on purpose: sympy takes ~1 s to load and only this step needs it
    sp = load_in_proof("sympy")

    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    conv = _ToSympy()
    try:
        d = sp.expand(conv.conv(v) - conv.sym(x))
    except (ValueError, TypeError):
        return None
    if conv.sym(x) in d.free_symbols or any(x in set(free_vars(a)) for a in conv.atoms.values()):
        return None
    try:
        return from_sympy(d, conv)
    except ValueError:
        return None


def _scan_candidates(cfa, h, lp, paths, scalars, c, allowed) -> List[A.Expr]:
    """A running maximum/minimum and the index it came from (see the module docstring)."""
    out: List[A.Expr] = []
    cname = c.name
    i = A.Var(cname)
    if c.step > 0:
        ranges = [(lo, i, False) for lo in _dedupe([c.init, A.num(0)])]
    else:
        ranges = [(A.Binary("+", i, A.num(1)), c.init, True)]
    for x in scalars:
        sets = [(p, p.env[x]) for p in paths if x in p.env and p.env[x] != A.Var(x)]
        if not sets or len(sets) == len(paths) and all(s[1] == sets[0][1] for s in sets) and len(paths) == 1:
            continue
        for p, e in sets:
            if e == i:  # an index scan: if (E[i] > E[x]) { x := i; } keeps E[x] the largest so far
                out.extend(_index_scan(x, p, i, ranges, allowed))
                continue
            if not allowed(e) or e == A.Var(x):
                continue
            if not any(x in set(free_vars(cnd)) for cnd in p.conds):
                continue  # not a comparison with the value kept so far
            body_e = lambda k, e=e: subst(e, {cname: k})  # noqa: E731
            k = A.Var(K)
            for lo, hi, incl in ranges:
                for op in (">=", "<="):
                    out.append(A.Quant("forall", K, lo, hi, incl, A.Binary(op, A.Var(x), body_e(k))))
            if cname not in set(free_vars(e)):
                continue
            for y in scalars:
                if y == x or p.env.get(y) != i:
                    continue
                # y records the iteration where x was last set (b := i with best := h[i])
                if all((q.env.get(y, A.Var(y)) == i) == (q.env.get(x, A.Var(x)) != A.Var(x)) for q in paths):
                    out.append(A.Binary("==", A.Var(x), subst(e, {cname: A.Var(y)})))
                    for lo, _hi, _incl in ranges:
                        out.append(A.Binary("<=", lo, A.Var(y)))
                    out.append(A.Binary("<", A.Var(y), i) if c.step > 0 else A.Binary(">", A.Var(y), i))
    return _dedupe(out)


def _index_scan(x: str, p: Path, i: A.Var, ranges, allowed) -> List[A.Expr]:
    """For ``x := i`` on a path whose condition compares E[i] with E[x] (E an expression of the
    counter): ``forall k in lo..i: E[x] >= E[k]`` (or ``<=``), and the range of x."""
    out: List[A.Expr] = []
    xv = A.Var(x)
    for cnd in p.conds:
        if isinstance(cnd, A.Unary) and cnd.op == "!":
            continue
        if not (isinstance(cnd, A.Binary) and cnd.op in ("<", "<=", ">", ">=")):
            continue
        for mine, other in ((cnd.left, cnd.right), (cnd.right, cnd.left)):
            if i.name not in set(free_vars(mine)) or subst(mine, {i.name: xv}) != other or not allowed(mine):
                continue
            k = A.Var(K)
            for lo, hi, incl in ranges:
                for op in (">=", "<="):
                    out.append(A.Quant("forall", K, lo, hi, incl, A.Binary(op, other, subst(mine, {i.name: k}))))
                out.append(A.Binary("<=", lo, xv))
            out.append(A.Binary("<", xv, i))
    return out


def _dedupe(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def exit_forms(cfa, loops, pool: List[A.Expr]) -> List[A.Expr]:
    """Quantified candidates and sums about a counter loop's prefix ``lo..i`` restated for the
    whole range (the counter at its final value), for loops followed by more code: there the
    counter is dead, and what the loop computed is read later (a histogram filled, then scanned;
    a sum then released with noise; a count's range, ``c <= n``, for clamping it after the noise). A loop that ends the program needs none: the
    postcondition itself is its exit's candidate."""
    out: List[A.Expr] = []
    for _h, lp in loops.items():
        c0 = lp["counter"]
        if c0 is None or not c0.only or lp["exit"] is None or lp["exit"][1] == cfa.exit:
            continue
        try:
            others = _other_counters(cfa, _h, lp, loops, c0)
        except (RecursionError, ValueError, TypeError):
            others = []
        for c in [c0] + others:  # another unit counter ends at its start ± the iterations done
            for e in pool:
                if c.name in set(free_vars(e)) and (
                    any(isinstance(n, (A.Quant, A.Sum)) for n in A.walk(e)) or _range_of_count(e, c.name)
                ):
                    f = subst(e, {c.name: c.final()})
                    if c.name not in set(free_vars(f)):
                        out.append(f)
    return _dedupe(out)


def _range_of_count(e: A.Expr, cname: str) -> bool:
    """Whether ``e`` bounds a variable other than the counter by an expression of the counter
    (``c <= i - 0``, a count's range: :func:`_literal_range`)."""
    if not (isinstance(e, A.Binary) and e.op in ("<=", "<")):
        return False
    for mine, other in ((e.left, e.right), (e.right, e.left)):
        if isinstance(mine, A.Var) and mine.name != cname and cname in set(free_vars(other)):
            return True
    return False


def counter_shift(cfa, h: int, loops, name: str, node: int) -> Optional[int]:
    """How far the counter ``name`` has moved from its head value when the body of the loop at
    ``h`` reaches ``node`` (1 for ``i := i + 1`` at the top of the body), when the same on every
    path there; else None."""
    body = loops[h]["body"]
    if node not in body:
        return None
    shifts: Set[int] = set()
    stack: List[Tuple[int, Path]] = [(h, Path())]
    steps = 0
    while stack and steps < 8 * MAX_PATHS:
        steps += 1
        n, path = stack.pop()
        if n == node:
            d = increment(path.env.get(name, A.Var(name)), name)
            if not isinstance(d, A.Num) or not d.is_int:
                return None
            shifts.add(int(d.value))
            continue
        for _u, v, _k, dd in cfa.out_edges(n):
            if dd.get("back") or v not in body or (v != node and v in loops):
                continue
            p = path.copy()
            if _execute(dd["stmt"], p):
                stack.append((v, p))
    return next(iter(shifts)) if len(shifts) == 1 else None


def _match_sums(cfa, cands: List[A.Expr], rng: List[A.Expr]) -> List[A.Expr]:
    """``cands`` with each ``sum`` summand replaced by one of the postcondition's sums equal to it
    for the values ``j$`` takes (``rng``, the counter's range)."""
    theirs: List[A.Expr] = []
    for e in cfa.ensures:
        for n in A.walk(e):
            if isinstance(n, A.Sum):
                b = subst(n.body, {n.var: A.Var(J)})
                if b not in theirs:
                    theirs.append(b)
    if not theirs:
        return cands
    memo: Dict[A.Expr, A.Expr] = {}

    class _Swap(Transformer):
        def Sum(self, node: A.Sum, kids) -> A.Expr:
            lo, hi, body = kids
            if node.var == J and body not in theirs:
                if body not in memo:
                    memo[body] = next((b for b in theirs if _same_summand(cfa, body, b, rng)), body)
                body = memo[body]
            return A.Sum(node.var, lo, hi, node.inclusive, body)

    return [_Swap().walk(c) if A.contains(c, A.Sum) else c for c in cands]


def _same_summand(cfa, a: A.Expr, b: A.Expr, rng: List[A.Expr]) -> bool:
    """Whether z3 proves ``a == b`` under ``requires`` and ``rng`` (about ``j$``, an integer)."""
    if set(free_vars(a)) - {J} - set(cfa.types) or set(free_vars(b)) - {J} - set(cfa.types):
        return False
    types = dict(cfa.types)
    types[J] = A.INT
    try:
        enc = Encoder(types)
        env = enc.initial_env()
        f = enc.expr(A.Binary("==", a, b), env)
        req = [enc.expr(r, env) for r in list(cfa.requires) + rng]
    except Exception:  # an expression the encoder cannot express: not matched
        return False
    return check_fresh(f, req, budget_ms=500) == z3.unsat


def counter_sum(per: A.Expr, counter) -> Optional[A.Expr]:
    """The failure bound's loop term when one iteration costs ``per``, a polynomial in the loop's
    counter as read at the back edge (after the body moved it by the step): the sum of ``per``
    over the iterations done, by sympy; None when it is not such a polynomial or the step is not
    ±1. (A κ is checked like everything else: a wrong sum only fails the proof.)"""
    if abs(counter.step) != 1:
        return None
    name = counter.name
    j = A.Var(J)
    body = subst(per, {name: A.Binary("+", j, A.num(counter.step))})  # the head value t: per at t + step
    i = A.Var(name)
    if counter.step > 0:
        lo, hi, incl = counter.init, i, False
    else:
        lo, hi, incl = A.Binary("+", i, A.num(1)), counter.init, True
    return _sympy_sum(body, lo, hi, incl)

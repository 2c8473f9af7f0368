"""Moment invariant expectations: Markov's and Chebyshev's inequalities on what a loop builds.

A claim ``Pr[x >= a] <= β`` about a count or sum ``x`` that a loop builds (the balls in one
bin, a count-min cell's overcount, a Morris counter ``w - 1``) is proved by the first
moment: ``[x >= a] <= x/a`` for ``a > 0`` (Markov), and the expected final value of ``x`` is its
value now plus the expected increments of the iterations left. This room proposes exactly that
core, read off the loop:

* the *Markov pairs* ``(x, a)`` of the continuation: each comparison ``x >= a``, ``x > a``,
  ``x < a``, ``x <= a`` (either way round) with ``x`` an expression that reads a variable the
  loop writes and ``a`` one that reads none (:func:`markov_pairs`);
* the expected increment ``d = wpe(B, x) - x`` of one run of the body B, computed by the
  engine's own pre-expectation transformer (the caller's ``pre``), the side conditions of the
  distributions (``0 <= p <= 1``, a non-empty range) taken as holding (:func:`increment`) —
  ``1`` for Morris' ``w := 2w`` with chance ``1/w``, ``c[j]/w`` for a count-min row;
* when ``d`` reads nothing the loop writes but its counter ``i`` (``for i in lo..hi``, or a
  ``while (i < H)`` raising ``i`` by one: :func:`counted`), the
  increments left ``Σ_{k=i}^{hi-1} d[i := k]`` — ``(hi - i)·d`` when ``d`` does not read ``i``
  (:func:`remaining`);
* the core ``G ? (x + rem)/a : 1``, with ``G`` the counters' progress and ``x >= 0`` (Markov
  needs ``x`` not negative; it is also what keeps ``bern(1/w)`` a distribution in a Morris
  counter) (:func:`markov_core`).

The second moment, for a claim ``Pr[|x| >= t] <= β`` (Chebyshev: ``[|x| >= t] <= x²/t²``, x
the deviation from the mean, ``abs(s - n/4) < t``): when one iteration's expected increment
``d`` is a constant of the loop and ``wpe(B, x²) = x² + α·x + β`` identically in the variables
the loop writes, with α, β constants of the loop (solved for with sympy, :func:`square_step`),
the expected final ``x²`` after ``r`` iterations is ``x² + r·α·x + α·d·r(r - 1)/2 + r·β``
(:func:`second_moment_left`) and the core is ``G ? that / t² : 1``. The second moment is
computed by the pre-expectation of ``x²`` itself, not assumed from independence: a step whose
square depends on the state otherwise (draws that depend on earlier ones, a step scaled by the
sum) has no α, β of that form and gets no core, and INDUCT decides any core proposed. The
guard ``G`` also carries the side conditions of the body's distributions read off its
pre-expectation (``w != 0 && 0 <= 1/w && 1/w <= 1`` for ``bern(1/w)``: :func:`side_conditions`).

Costs that read the inputs, steps that read the state, populations. The increments left are
written with the claim's own sum body where sympy finds them equal (:func:`written_like`: the
solver's sum functions are per body, so ``x[l]·w[l]`` and ``w[j]·x[j]`` must be made one). An
increment whose conditionals test the state (a queue served only when not empty) is replaced by
each choice of one branch per test (:func:`dominating`): a step that dominates the true one in
every state gives a Markov core, a wrong choice fails INDUCT. For nested loops
(:func:`state_cores`, :func:`mean_cores`): the outer loop is proposed the claimed bound as a
function of the state (an input the loop starts a variable from, ``z := z0``, replaced by that
variable; the input it counts up to by the iterations left: ``z·m^(k - g)`` from ``z0·m^k``, the
solved affine recurrence ``E[z'] = m·z``), and the inner loop the outer invariant's body at the
inner loop's expected effect on the variables it writes (``nz + 2p·(z - i)``), guarded by the
outer loops' tests.

Why this is sound: nothing here is trusted. A core is only proposed; the loop search decides
its INDUCT (``g ⇒ wpe(B, E) <= max(0, min(1, core))``) with the solver like any other core
(``unknown`` is failure), TERM and BUDGET are decided as for every core, and the certificate
carries the core, so ``tamp check-proof`` rebuilds every obligation from the source and that
expression. The increment ``d`` is computed with side conditions dropped: a wrong ``d`` only
makes INDUCT fail. The guard ``G`` makes the core 1 (the trivial bound) where it fails, so it
costs nothing in soundness: INDUCT must still hold in every state, and BUDGET reads the core at
the loop's entry, where the guard must then hold for the bound to be small.
"""

from __future__ import annotations

import itertools
from typing import AbstractSet, Callable, List, Optional, Tuple

from lang import ast as A
from lang.walk import Transformer, free_vars
from tamp.prover.base.exprs import and_all, conjuncts, subst
from tamp.prover.base.simplify import from_sympy, simplify, sp, to_sympy

ZERO = A.num(0)
ONE = A.num(1)


def _fold(e: A.Expr) -> A.Expr:
    """Products with 0 and 1 and sums with 0 dropped (the shape kept: x² stays ``x * x``, so
    the solver sees the step ``x := x ± 1`` term by term, which a fully expanded polynomial
    hides)."""

    class _F(Transformer):
        def default(self, node, kids):
            out = super().default(node, kids)
            if isinstance(out, A.Binary) and out.op in ("*", "+", "/"):
                a, b = out.left, out.right
                za = isinstance(a, A.Num) and a.value == 0
                zb = isinstance(b, A.Num) and b.value == 0
                if out.op == "*" and (za or zb):
                    return ZERO
                if out.op == "/" and za:
                    return ZERO
                if out.op == "+" and (za or zb):
                    return b if za else a
                if out.op == "*" and isinstance(a, A.Num) and a.value == 1:
                    return b
                if out.op in ("*", "/") and isinstance(b, A.Num) and b.value == 1:
                    return a
            return out

    res: A.Expr = _F().walk(e)
    return res


MAX_PAIRS = 4  # Markov pairs tried per loop


def markov_pairs(f: A.Expr, changed: AbstractSet[str]) -> List[Tuple[A.Expr, A.Expr]]:
    """``(x, a)`` for each comparison ``x >= a``, ``x > a``, ``x < a``, ``x <= a`` (either way
    round) of the continuation ``f`` with ``x`` reading a variable the loop writes (``changed``)
    and ``a`` reading none and no bound variable of ``f``."""
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    out: List[Tuple[A.Expr, A.Expr]] = []
    for n in A.walk(f):
        if not isinstance(n, A.Binary) or n.op not in (">=", ">", "<=", "<"):
            continue
        for x, a in ((n.left, n.right), (n.right, n.left)):
            xs, as_ = set(free_vars(x)), set(free_vars(a))
            if not xs & changed or xs & bound or as_ & (changed | bound):
                continue
            if (x, a) not in out:
                out.append((x, a))
    return out[:MAX_PAIRS]


class _Unguard(Transformer):
    """``c ? X : 1`` → ``X``: the side condition of a distribution (its parameter in range)
    taken as holding, for reading an expectation off the body (a proposal only); the
    conditions taken are kept in :attr:`conds`."""

    def __init__(self) -> None:
        super().__init__()
        self.conds: List[A.Expr] = []

    def default(self, node, kids):
        out = super().default(node, kids)
        if isinstance(out, A.Cond) and isinstance(out.other, A.Num) and out.other.value == 1:
            if out.cond not in self.conds:
                self.conds.append(out.cond)
            return out.then
        return out


def side_conditions(pre: Callable[[A.Expr], Optional[A.Expr]], x: A.Expr) -> List[A.Expr]:
    """The conditions under which the body's distributions are distributions (``0 <= 1/w &&
    1/w <= 1`` for ``bern(1/w)``), read off the pre-expectation of ``x``: a candidate guard
    (a Morris counter's ``w >= 1``; INDUCT decides whether it is kept by the loop)."""
    e = pre(x)
    if e is None:
        return []
    u = _Unguard()
    u.walk(e)
    out: List[A.Expr] = []
    for c in u.conds:  # a divisor in a condition is not 0 (the solver's x/0 is any number)
        for n in A.walk(c):
            if isinstance(n, A.Binary) and n.op == "/" and not isinstance(n.right, A.Num):
                nz = A.Binary("!=", n.right, ZERO)
                if nz not in out:
                    out.append(nz)
        out.append(c)
    return out


def increment(pre: Callable[[A.Expr], Optional[A.Expr]], x: A.Expr, positive: AbstractSet[str]) -> Optional[A.Expr]:
    """The expected increment ``wpe(B, x) - x`` of one run of the body (``pre`` is its
    pre-expectation transformer; None: outside its rules), simplified, or None."""
    e = pre(x)
    if e is None:
        return None
    return _minus(_Unguard().walk(e), x, positive)


def _minus(e: A.Expr, x: A.Expr, positive: AbstractSet[str]) -> A.Expr:
    """``e - x`` simplified, taken into the branches of a conditional ``e`` (sympy sees a
    conditional as an opaque symbol: ``(c ? u + 1 : u) - u`` is ``c ? 1 : 0`` only branch by
    branch, and the increment of a count on a test of the data is that)."""
    if isinstance(e, A.Cond):
        return A.Cond(e.cond, _minus(e.then, x, positive), _minus(e.other, x, positive))
    return simplify(A.Binary("-", e, x), positive)


class _Pick(Transformer):
    """Each conditional whose test is in ``pick`` replaced by the branch chosen for it."""

    def __init__(self, pick) -> None:
        super().__init__()
        self.pick = pick

    def default(self, node, kids):
        res = super().default(node, kids)
        if isinstance(res, A.Cond) and res.cond in self.pick:
            return res.then if self.pick[res.cond] else res.other
        return res


MAX_CHOICES = 3  # state-dependent tests of an increment resolved branch by branch (2^3 choices)


def dominating(d: A.Expr, changed: AbstractSet[str]) -> List[A.Expr]:
    """Increments that may dominate ``d`` in every state, for Markov on a quantity whose step
    depends on the state (a queue served only when not empty: ``E[Δq] = a·(1 - s·…) - (q > 0 ?
    s·… : 0)``): each choice of one branch at each test of ``d`` that reads a written variable
    (at most :data:`MAX_CHOICES` tests), the choices reading no written variable but the loop's
    counter. ``E[x_final] <= x + Σ d⁺`` when ``d <= d⁺`` in every state, and that is exactly what
    INDUCT then checks for the core: a wrong choice (a smaller branch) fails INDUCT."""
    tests: List[A.Expr] = []
    for n in A.walk(d):
        if isinstance(n, A.Cond) and set(free_vars(n.cond)) & changed and n.cond not in tests:
            tests.append(n.cond)
    if not tests or len(tests) > MAX_CHOICES:
        return []
    out: List[A.Expr] = []
    for bits in range(2 ** len(tests)):
        e = _Pick({t: bool(bits >> k & 1) for k, t in enumerate(tests)}).walk(d)
        if any(isinstance(n, A.Cond) and set(free_vars(n.cond)) & changed for n in A.walk(e)):
            continue  # a test inside a branch that was not listed (rewritten): no choice
        try:
            e = simplify(e)
        except Exception:  # noqa: BLE001 - left as it is
            pass
        if e not in out and e != d:
            out.append(e)
    return out


def counted(s, changed: AbstractSet[str]) -> Optional[Tuple[str, A.Expr, bool]]:
    """(counter, bound, inclusive) of ``for i in lo..hi`` or of ``while (i < H) {…}`` /
    ``while (i <= H) {…}`` whose body raises ``i`` by exactly one (``i := i + 1``, once, at its
    top level) and writes nothing ``H`` reads; None for any other loop."""
    if isinstance(s, A.For):
        return s.var, s.hi, s.inclusive
    if not isinstance(s, A.While) or not isinstance(s.cond, A.Binary) or s.cond.op not in ("<", "<="):
        return None
    i, hi = s.cond.left, s.cond.right
    if not isinstance(i, A.Var) or set(free_vars(hi)) & changed:
        return None
    step = A.Assign((i,), A.Binary("+", i, ONE))
    writes = [n for n in A.walk(s.body) if isinstance(n, (A.Assign, A.Sample)) and i in n.targets]
    if writes != [step] or step not in s.body.stmts:
        return None
    return i.name, hi, s.cond.op == "<="


def remaining(d: A.Expr, s, changed: AbstractSet[str], avoid: AbstractSet[str] = frozenset()) -> Optional[A.Expr]:
    """The increments ``d`` of the iterations left of a counted loop (:func:`counted`) from the
    current counter ``i``: ``(hi - i)·d`` when ``d`` does not read ``i``, else ``sum(k in i..hi:
    d[i := k])``, factors that do not read ``i`` taken out (None: not a counted loop, or ``d``
    reads another variable the loop writes). The sum's index is a name none of ``avoid`` (the
    program's variables) and nothing ``d`` reads has."""
    c = counted(s, changed)
    if c is None:
        return None
    i, hi, inclusive = c
    if set(free_vars(d)) & (set(changed) - {i}):
        return None
    if i not in set(free_vars(d)):
        left: A.Expr = A.Binary("-", hi, A.Var(i))
        if inclusive:
            left = A.Binary("+", left, ONE)
        if isinstance(d, A.Num) and d.value == 1:
            return left
        return A.Binary("*", left, d)
    outside, inside = _factors(d, i)
    taken = set(avoid) | set(free_vars(d)) | {i}
    k = next(n for n in ("k", "l", "r") + tuple(f"k{m}" for m in range(1, 1000)) if n not in taken)
    total: A.Expr = A.Sum(k, A.Var(i), hi, inclusive, subst(inside, {i: A.Var(k)}))
    return total if outside is None else A.Binary("*", outside, total)


def same_value(a: A.Expr, b: A.Expr, positive: AbstractSet[str] = frozenset()) -> bool:
    """``a`` and ``b`` are equal as expressions (sympy simplifies their difference to 0); False
    when sympy cannot tell."""
    try:
        d = simplify(A.Binary("-", a, b), positive)
    except Exception:  # noqa: BLE001 - outside sympy's reach: not known equal
        return False
    return isinstance(d, A.Num) and d.value == 0


def written_like(e: A.Expr, known: List[A.Sum], positive: AbstractSet[str] = frozenset()) -> A.Expr:
    """``e`` with each sum whose body equals the body of a sum of ``known`` (the claim's own,
    index renamed; equal by sympy, e.g. ``x[l] * w[l]`` and ``w[j] * x[j]``) written with that
    body. The solver gives each sum body its own function (alpha-equivalent bodies share one),
    so a sum of the increments left written otherwise than the claim's sum is a different
    function to it and ``sum(…)/(k·sum(…)) = 1/k`` is out of its reach. Rewriting a body into an
    equal one changes no value: sound."""

    class _W(Transformer):
        def default(self, node, kids):
            out = super().default(node, kids)
            if not isinstance(out, A.Sum):
                return out
            for t in known:
                body = subst(t.body, {t.var: A.Var(out.var)})
                if body != out.body and same_value(body, out.body, positive):
                    return A.Sum(out.var, out.lo, out.hi, out.inclusive, body)
            return out

    res: A.Expr = _W().walk(e)
    return res


def _factors(d: A.Expr, i: str) -> Tuple[Optional[A.Expr], A.Expr]:
    """``d`` as (a factor that does not read ``i`` or None, the rest): the factors of a product
    or a quotient that do not read the counter are taken out of the sum, so that the sum left
    is the one a claim writes (``sum(j in 0..n: c[j]) / w``)."""
    if isinstance(d, A.Binary) and d.op in ("*", "/"):
        lo, li = _factors(d.left, i)
        if d.op == "/" and i not in set(free_vars(d.right)):
            outside = A.Binary("/", lo if lo is not None else ONE, d.right)
            return outside, li
        if d.op == "*":
            ro, ri = _factors(d.right, i)
            outs = [x for x in (lo, ro) if x is not None]
            both: Optional[A.Expr] = (
                None if not outs else outs[0] if len(outs) == 1 else A.Binary("*", outs[0], outs[1])
            )
            ins = [x for x in (li, ri) if not (isinstance(x, A.Num) and x.value == 1)]
            inside = ONE if not ins else ins[0] if len(ins) == 1 else A.Binary("*", ins[0], ins[1])
            return both, inside
    if isinstance(d, A.Cond) and i in set(free_vars(d.cond)):  # c ? q·e : 0 is q·(c ? e : 0)
        for arm, zero in ((d.then, d.other), (d.other, d.then)):
            if isinstance(zero, A.Num) and zero.value == 0:
                o, rest = _factors(arm, i)
                if o is not None:
                    inner = A.Cond(d.cond, rest, ZERO) if arm is d.then else A.Cond(d.cond, ZERO, rest)
                    return o, inner
    if i not in set(free_vars(d)):
        return d, ONE
    return None, d


def chebyshev_pairs(f: A.Expr, changed: AbstractSet[str]) -> List[Tuple[A.Expr, A.Expr]]:
    """``(x, t)`` for each comparison of ``abs(x)`` with ``t`` (either way round) in the
    continuation ``f``, ``x`` reading a variable the loop writes and ``t`` none and no bound
    variable of ``f``: ``[|x| >= t] <= x²/t²`` (Chebyshev, with x the deviation)."""
    bound = {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    out: List[Tuple[A.Expr, A.Expr]] = []
    for n in A.walk(f):
        if not isinstance(n, A.Binary) or n.op not in (">=", ">", "<=", "<"):
            continue
        for x, t in ((n.left, n.right), (n.right, n.left)):
            if not (isinstance(x, A.Call) and x.func == "abs" and len(x.args) == 1):
                continue
            xs, ts = set(free_vars(x)), set(free_vars(t))
            if not xs & changed or xs & bound or ts & (changed | bound):
                continue
            if (x.args[0], t) not in out:
                out.append((x.args[0], t))
    return out[:MAX_PAIRS]


def square_step(
    pre: Callable[[A.Expr], Optional[A.Expr]],
    x: A.Expr,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    allow: AbstractSet[str] = frozenset(),
) -> Optional[Tuple[A.Expr, A.Expr]]:
    """``(α, β)`` with ``wpe(B, x²) = x² + α·x + β`` identically in the variables the loop
    writes, α and β reading none of them, or None (the second moment of one iteration is not
    of that form). Found with sympy: the difference, as a polynomial in the written variables,
    must vanish coefficient by coefficient (a linear system in α, β). ``allow``: written
    variables α and β may read (the loop's counter, for steps that vary with it)."""
    changed = set(changed) - set(allow)
    e = pre(A.Binary("*", x, x))
    if e is None:
        return None
    e = _Unguard().walk(e)
    a, b = A.Var("alpha$"), A.Var("beta$")
    diff = A.Binary("-", A.Binary("-", A.Binary("-", e, A.Binary("*", x, x)), A.Binary("*", a, x)), b)
    try:
        poly, conv = to_sympy(diff, positive)
        sa, sb = conv.sym("alpha$"), conv.sym("beta$")
        if any(v.name in changed for v in conv.atoms):
            return None
        if any(set(free_vars(v)) & changed for v in conv.atoms.values()):
            return None  # the written variables inside an opaque part: no polynomial view
        syms = [conv.syms[n] for n in sorted(changed) if n in conv.syms]
        if not syms:
            return None
        num, _den = sp.fraction(sp.cancel(sp.together(poly)))
        p = sp.Poly(sp.expand(num), *syms)
        sol = sp.solve(p.coeffs(), [sa, sb], dict=True)
        if len(sol) != 1 or set(sol[0]) != {sa, sb}:
            return None
        alpha, beta = sol[0][sa], sol[0][sb]
        if alpha.free_symbols & set(syms) or beta.free_symbols & set(syms):
            return None
        return from_sympy(sp.simplify(alpha), conv), from_sympy(sp.simplify(beta), conv)
    except Exception:  # noqa: BLE001 - sympy found no polynomial form (1/w left over, …): no core
        return None


def second_moment_left(x: A.Expr, d: A.Expr, alpha: A.Expr, beta: A.Expr, r: A.Expr) -> A.Expr:
    """E[x²] after ``r`` more iterations, each with ``E[Δx] = d`` and ``E[x'²] = x² + α·x + β``
    (d, α, β constants of the loop): with m_k = x + k·d the mean after k iterations,
    s_r = x² + Σ_{k<r} (α·m_k + β) = x² + r·α·x + α·d·r(r - 1)/2 + r·β."""
    rr = A.Binary("*", r, A.Binary("-", r, ONE))
    parts = [
        A.Binary("*", x, x),
        A.Binary("*", A.Binary("*", r, alpha), x),
        A.Binary("/", A.Binary("*", A.Binary("*", alpha, d), rr), A.num(2)),
        A.Binary("*", r, beta),
    ]
    out: A.Expr = parts[0]
    for q in parts[1:]:
        out = A.Binary("+", out, q)
    return _fold(out)


def markov_core(x: A.Expr, a: A.Expr, rem: A.Expr, guard: Optional[A.Expr]) -> A.Expr:
    """``guard && x >= 0 ? (x + rem)/a : 1``: Markov's inequality on the expected final x."""
    parts = conjuncts(guard) if guard is not None else []
    sign = A.Binary(">=", x, ZERO)
    g = and_all(parts + ([sign] if sign not in parts else []))
    return A.Cond(g, A.Binary("/", A.Binary("+", x, rem), a), ONE)


def moment_cores(
    f: A.Expr,
    s,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    pre: Callable[[A.Expr], Optional[A.Expr]],
    guard: Optional[A.Expr],
    avoid: AbstractSet[str] = frozenset(),
) -> List[A.Expr]:
    """The Markov cores of the loop ``s`` (body's pre-expectation ``pre``) for the continuation
    ``f``, one per Markov pair whose increments left can be written."""
    out: List[A.Expr] = []
    known = [n for n in A.walk(f) if isinstance(n, A.Sum)]
    for x, a in markov_pairs(f, changed):
        d = increment(pre, x, positive)
        if d is None:
            continue
        conds = side_conditions(pre, x)
        for dd in [d] + dominating(d, changed):
            rem = remaining(dd, s, changed, avoid)
            if rem is None:
                continue
            rem = written_like(rem, known, positive)
            core = markov_core(x, a, rem, and_all(([guard] if guard is not None else []) + conds))
            if core not in out:
                out.append(core)
    c = counted(s, changed)
    for x, t in chebyshev_pairs(f, changed) if c is not None else []:
        d = increment(pre, x, positive)
        if d is None or set(free_vars(d)) & set(changed):
            continue
        step = square_step(pre, x, changed, positive)
        if step is None:
            continue
        assert c is not None
        i, hi, inclusive = c
        r: A.Expr = A.Binary("-", hi, A.Var(i))
        if inclusive:
            r = A.Binary("+", r, ONE)
        conds = side_conditions(pre, A.Binary("*", x, x))
        g = and_all(([guard] if guard is not None else []) + conds)
        second = second_moment_left(x, d, step[0], step[1], r)
        core = A.Cond(g, A.Binary("/", second, A.Binary("*", t, t)), ONE)
        if core not in out:
            out.append(core)
    return out


def input_starts(program_body: A.Stmt, loop, params: AbstractSet[str]) -> List[Tuple[str, str]]:
    """``(p, x)`` for each statement ``x := p`` outside the loop ``loop`` (``p`` an input, ``x``
    a variable the loop writes): the loop starts from that input (a population ``z := z0``)."""
    inside = {id(n) for n in A.walk(loop.body)}
    written = {
        t.name
        for n in A.walk(loop.body)
        if isinstance(n, (A.Assign, A.Sample))
        for t in n.targets
        if isinstance(t, A.Var)
    }
    out: List[Tuple[str, str]] = []
    for n in A.walk(program_body):
        if id(n) in inside or not isinstance(n, A.Assign) or len(n.targets) != 1:
            continue
        t, v = n.targets[0], n.value
        if isinstance(t, A.Var) and isinstance(v, A.Var) and v.name in params and t.name in written:
            if (v.name, t.name) not in out:
                out.append((v.name, t.name))
    return out


def state_cores(beta: A.Expr, lefts: List[Tuple[str, A.Expr]], starts: List[Tuple[str, str]]) -> List[A.Expr]:
    """The bound as a function of the state: each input a loop counts down replaced by the
    iterations left (``lefts``: (input, iterations left)) and the inputs the loop starts from
    replaced by the variables they start (``starts``) — ``z·m^(k - g)`` from ``z0·m^k`` for a
    population ``z := z0`` whose mean grows by ``m`` a generation (``E[Z_k] = z0·m^k``), the
    invariant expectation of an affine recurrence whose solution the claim states. Guarded by
    those variables not negative (a population, Markov's ``x >= 0``). Only proposals: INDUCT
    checks that one more iteration keeps the expected bound."""
    out: List[A.Expr] = []
    if not starts:
        return out
    inputs = sorted({p for p, _x in starts})
    # an input may start several variables (a population and its running total): one choice each
    choices = list(itertools.product(*[[x for q, x in starts if q == p] for p in inputs]))[:MAX_STARTS]
    for pick in choices:
        sub = {p: A.Var(x) for p, x in zip(inputs, pick)}
        sign = and_all([A.Binary(">=", A.Var(x), ZERO) for x in pick])
        for p, left in lefts:
            if p in sub:
                continue
            b = subst(beta, {**sub, p: left})
            for core in (A.Cond(sign, b, ONE), b):
                if core not in out:
                    out.append(core)
    return out


MAX_STARTS = 4  # choices of the variables the inputs start, per loop


def _caps(f: A.Expr) -> List[A.Expr]:
    """The bodies ``X`` of the capped invariants ``max(0, min(1, X))`` in ``f``."""
    out: List[A.Expr] = []
    for n in A.walk(f):
        if isinstance(n, A.Call) and n.func == "max" and len(n.args) == 2:
            m = n.args[1]
            if isinstance(m, A.Call) and m.func == "min" and len(m.args) == 2 and m.args[0] == ONE:
                if m.args[1] not in out:
                    out.append(m.args[1])
    return out


def mean_cores(
    f: A.Expr,
    s,
    changed: AbstractSet[str],
    positive: AbstractSet[str],
    pre: Callable[[A.Expr], Optional[A.Expr]],
    avoid: AbstractSet[str] = frozenset(),
) -> List[A.Expr]:
    """For an inner loop whose continuation carries the outer loop's invariant ``max(0, min(1,
    X))``: ``X`` with each variable ``x`` the inner loop writes replaced by its expected final
    value ``x + Σ d`` (``d`` its expected increment, reading no written variable but the counter:
    :func:`remaining`) — the inner loop's expected effect on the outer loop's variables (a
    generation's offspring ``nz + 2p·(z - i)``) composed into the outer invariant. Exact when X
    is linear in those variables, an upper bound when it is concave (Jensen); only proposals:
    INDUCT decides each one."""
    out: List[A.Expr] = []
    c = counted(s, changed)
    if c is None:
        return out
    for x_body in _caps(f):
        reads = set(free_vars(x_body)) & set(changed)
        if not reads or c[0] in reads:
            continue
        sub: dict = {}
        for x in sorted(reads):
            d = increment(pre, A.Var(x), positive)
            rem = remaining(d, s, changed, avoid) if d is not None else None
            if rem is None:
                break
            sub[x] = A.Binary("+", A.Var(x), rem)
        else:
            cores = [subst(x_body, sub)]
            if isinstance(x_body, A.Cond):  # the guard read in the current state (nz >= 0 kept)
                cores.insert(0, A.Cond(x_body.cond, subst(x_body.then, sub), subst(x_body.other, sub)))
            out += [core for core in cores if core not in out]
    return out

"""Certified closed-form bounds on finite sums, as guarded lemma instances for the solver.

Linearity of expectation and exact expected-failure computation leave symbolic sums in a
BUDGET query (``sum(i in 3..=n: 2 / i) / t <= 2 * log(n / 2) / t``); the encoder makes each
sum an uninterpreted function of its ends and of the values its body reads
(:meth:`tamp.core.encode.Encoder.opaque_sum`, the ``hi`` argument exclusive), so the solver
knows only the unfolding lemmas of :mod:`axioms.lemmas`. This module adds, for every sum
application ``t = sumK(lo, hi, …)`` of a query whose *body* has one of the shapes below, an
instance ``side ⇒ fact`` of a textbook identity or inequality about it; the side condition
is part of the instance, so the solver must prove it from the query's hypotheses before the
fact can be used (nothing is claimed outside it). Write ``a = lo + k`` and ``b = hi - 1 + k``
for the first and last value of the shifted index ``i + k``; ``c`` and ``k`` do not read the
bound variable (``k`` an integer literal; the harmonic bounds also take an integer expression
``k`` and a reversed index ``k - i``, whose values run from a = k - (hi - 1) to b = k - lo).

=====================  ===============================================================
``harmonic-upper``     body ``c / (i + k)``: hi > lo ∧ a >= 2 ∧ c >= 0 ⇒ t <= c·log(b/(a-1)).
                       Each 1/x <= ∫_{x-1}^{x} dy/y (1/y >= 1/x on the interval), and the
                       integrals over a..b add up to log(b) - log(a - 1).
``harmonic-upper1``    body ``c / (i + k)``: hi > lo ∧ a >= 1 ∧ c >= 0 ⇒ t <= c·(1/a + log(b/a)) (the
                       first term alone, the others as above: H_n <= 1 + log n).
``harmonic-lower``     body ``c / (i + k)``: hi > lo ∧ a >= 1 ∧ c >= 0 ⇒ t >= c·log((b+1)/a)
                       (1/x >= ∫_{x}^{x+1} dy/y).
``telescoping``        body ``c / ((i + k)·(i + k + 1))``: hi > lo ∧ a >= 1 ⇒
                       t = c·(1/a - 1/(b+1)) (1/(x(x+1)) = 1/x - 1/(x+1), the middle cancels).
``arithmetic``         body ``p + q·i`` (p, q free of i; also ``i``, ``q·i``, ``i·q``, ``p - q·i``, ``i/d``…):
                       hi > lo (∧ every divisor d of the body ≠ 0) ⇒ t = p·n + q·n·(lo + hi - 1)/2
                       with n = hi - lo (Gauss).
``geometric``          body ``c·exp(g·i)`` (also ``exp(g·i)``, ``exp(i·g)``, ``exp(-i)``): with r = exp(g),
                       hi > lo ⇒ t·(1 - r) = c·(exp(g·lo) - exp(g·hi)) (the exact form, true for
                       every r; for r < 1 it gives t <= c·exp(g·lo)/(1 - r)).
``shift-count``        body ``φ(M) ? 1 : 0`` with M = ``(e ± i) mod L`` (or ``i mod L``, ``(i ± e)
                       mod L``) and φ a conjunction of threshold tests of M against integers w free
                       of i: hi - lo = L ∧ L >= 1 ⇒ t = max(0, min(L-1, U…) - max(0, L…) + 1),
                       the number of values v in 0..L-1 passing φ(v) (U… and L… the upper and lower
                       ends the tests give, as in :mod:`tamp.core.counts`). Over L consecutive
                       integers i, (e ± i) mod L (Euclidean, in 0..L-1) takes every value of
                       0..L-1 exactly once: a shift modulo L is a bijection of the residues.
``root-count``         body ``P(i) == 0 ? 1 : 0`` (``roots``) or ``P(i) != 0 ? 1 : 0`` (``nonroots``)
                       with P a polynomial in i, ``P = c_0 + c_1·i + … + c_d·i^d`` (coefficients free of
                       i, :func:`axioms.roots.coefficients`), e its exact degree (:func:`axioms.roots.
                       exact_degree`): (c_0 != 0 ∨ … ∨ c_d != 0) ∧ hi >= lo ⇒ t <= e (roots), resp.
                       t >= (hi - lo) - e (nonroots). A nonzero real polynomial of degree e has at most
                       e roots, so at most e of the integers lo..hi-1 (root counting, Schwartz 1980);
                       it is what the exact mean of a root indicator of a uniform draw
                       (``sum(j in lo..=hi: P(j) == 0 ? 1 : 0) / N``) needs to be at most e/N.
=====================  ===============================================================

Why sound: each fact is a theorem about the real (or integer) numbers under its side
condition, and the side condition is a premise of the instance, not an assumption of the
proof; ``log`` and ``exp`` are the encoder's functions, about which only the guarded facts of
:mod:`axioms.lemmas` are known (the new log/exp terms get those lemmas too). A body of another
shape gets no instance (fewer facts, still sound). ``tamp check-proof`` re-derives each
instance on its own (:mod:`tamp.certificate.sum_bound_check`) and rejects one it cannot.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import z3

from lang import ast as A
from lang.walk import free_vars


def _reads(e: A.Expr, var: str) -> bool:
    return var in free_vars(e)


def _int_lit(e: A.Expr) -> Optional[int]:
    if isinstance(e, A.Num) and e.value == int(e.value):
        return int(e.value)
    if isinstance(e, A.Unary) and e.op == "-":
        v = _int_lit(e.operand)
        return None if v is None else -v
    return None


def shifted_index(e: A.Expr, var: str) -> Optional[int]:
    """k when ``e`` is ``var + k``, ``k + var`` or ``var - k`` (k an integer literal; 0 for
    ``var`` itself), else None."""
    if isinstance(e, A.Var) and e.name == var:
        return 0
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        if isinstance(e.left, A.Var) and e.left.name == var:
            k = _int_lit(e.right)
            return None if k is None else (k if e.op == "+" else -k)
        if e.op == "+" and isinstance(e.right, A.Var) and e.right.name == var:
            return _int_lit(e.left)
    return None


def _affine(e: A.Expr, var: str) -> Optional[Tuple[A.Expr, A.Expr]]:
    """(p, q) with ``e`` = p + q·var, p and q free of var, read off the syntax (+, -, a product
    with one factor free of var, unary minus); None for anything else."""
    zero, one = A.num(0), A.num(1)
    if not _reads(e, var):
        return e, zero
    if isinstance(e, A.Var):
        return zero, one
    if isinstance(e, A.Unary) and e.op == "-":
        r = _affine(e.operand, var)
        return None if r is None else (A.Unary("-", r[0]), A.Unary("-", r[1]))
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        a, b = _affine(e.left, var), _affine(e.right, var)
        if a is None or b is None:
            return None
        return A.Binary(e.op, a[0], b[0]), A.Binary(e.op, a[1], b[1])
    if isinstance(e, A.Binary) and e.op == "/" and not _reads(e.right, var):
        r = _affine(e.left, var)
        return None if r is None else (A.Binary("/", r[0], e.right), A.Binary("/", r[1], e.right))
    if isinstance(e, A.Binary) and e.op == "*":
        if not _reads(e.left, var):
            r = _affine(e.right, var)
            return None if r is None else (A.Binary("*", e.left, r[0]), A.Binary("*", e.left, r[1]))
        if not _reads(e.right, var):
            r = _affine(e.left, var)
            return None if r is None else (A.Binary("*", r[0], e.right), A.Binary("*", r[1], e.right))
    return None


def _telescope_den(e: A.Expr, var: str) -> Optional[int]:
    """k when ``e`` is ``(var + k)·(var + k + 1)`` (either factor first), else None."""
    if not (isinstance(e, A.Binary) and e.op == "*"):
        return None
    k1, k2 = shifted_index(e.left, var), shifted_index(e.right, var)
    if k1 is None or k2 is None or abs(k1 - k2) != 1:
        return None
    return min(k1, k2)


def _exp_rate(e: A.Expr, var: str) -> Optional[A.Expr]:
    """g when ``e`` is ``exp(g·var)`` or ``exp(var·g)`` (g free of var), ``exp(var)`` (g = 1)."""
    if not (isinstance(e, A.Call) and e.func == "exp" and len(e.args) == 1):
        return None
    x = e.args[0]
    if isinstance(x, A.Var) and x.name == var:
        return A.num(1)
    if isinstance(x, A.Unary) and x.op == "-":
        g = _exp_rate(A.Call("exp", (x.operand,)), var)
        return None if g is None else A.Unary("-", g)
    if isinstance(x, A.Binary) and x.op == "*":
        if isinstance(x.right, A.Var) and x.right.name == var and not _reads(x.left, var):
            return x.left
        if isinstance(x.left, A.Var) and x.left.name == var and not _reads(x.right, var):
            return x.right
    return None


def shift_modulus(e: A.Expr, var: str) -> Optional[A.Expr]:
    """L when ``e`` is ``P mod L`` with P one of ``var``, ``w + var``, ``var + w``, ``w - var``,
    ``var - w`` (w and L free of var): over L consecutive values of var, e is each residue once."""
    if not (isinstance(e, A.Binary) and e.op == "mod") or _reads(e.right, var):
        return None
    p = e.left
    if isinstance(p, A.Var) and p.name == var:
        return e.right
    if isinstance(p, A.Binary) and p.op in ("+", "-"):
        for x, w in ((p.left, p.right), (p.right, p.left)):
            if isinstance(x, A.Var) and x.name == var and not _reads(w, var):
                return e.right
    return None


FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def _conjuncts(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def shift_tests(body: A.Expr, var: str) -> Optional[Tuple[A.Expr, A.Expr, List[Tuple[str, A.Expr]]]]:
    """(the mod term M, its modulus L, the tests ``[(op, w)]`` meaning ``M op w``) when ``body``
    is ``φ(M) ? 1 : 0`` with φ a conjunction of comparisons of one shift term M (see
    :func:`shift_modulus`) with expressions free of ``var``; else None."""
    if not (isinstance(body, A.Cond) and _int_lit(body.then) == 1 and _int_lit(body.other) == 0):
        return None
    m: Optional[A.Expr] = None
    tests: List[Tuple[str, A.Expr]] = []
    for atom in _conjuncts(body.cond):
        if not (isinstance(atom, A.Binary) and atom.op in FLIP):
            return None
        if not _reads(atom.right, var):
            side, op, w = atom.left, atom.op, atom.right
        elif not _reads(atom.left, var):
            side, op, w = atom.right, FLIP[atom.op], atom.left
        else:
            return None
        if m is None:
            m = side
        elif side != m:
            return None
        tests.append((op, w))
    if m is None:
        return None
    modulus = shift_modulus(m, var)
    if modulus is None:
        return None
    return m, modulus, tests


def _shift_parts(m: A.Expr, var: str, term: Callable[[A.Expr], z3.ExprRef]) -> Optional[Tuple[z3.ExprRef, int]]:
    """(s, σ) with ``m`` = ``(s + σ·var) mod L``, σ = ±1 (``m`` accepted by :func:`shift_modulus`)."""
    assert isinstance(m, A.Binary)
    p = m.left
    if isinstance(p, A.Var):
        return z3.IntVal(0), 1
    assert isinstance(p, A.Binary)
    if isinstance(p.left, A.Var) and p.left.name == var:
        w = term(p.right)
        return (w, 1) if p.op == "+" else (-w, 1)
    w = term(p.left)
    return (w, 1) if p.op == "+" else (w, -1)


def _real(t: z3.ExprRef) -> z3.ArithRef:
    return z3.ToReal(t) if z3.is_int(t) else t


Params = Dict[str, Any]


HARMONIC = ("harmonic-upper", "harmonic-upper1", "harmonic-lower")


def index_ends(lo: z3.ArithRef, hi: z3.ArithRef, s: z3.ArithRef, sigma: int) -> Tuple[z3.ArithRef, z3.ArithRef]:
    """(a, b) as reals: the least and the greatest value of ``s + σ·i`` for i in lo..hi-1."""
    if sigma == 1:
        return z3.ToReal(s + lo), z3.ToReal(s + hi - 1)
    return z3.ToReal(s - (hi - 1)), z3.ToReal(s - lo)


def linear_index(e: A.Expr, var: str, term: Callable[[A.Expr], z3.ExprRef]) -> Optional[Tuple[z3.ArithRef, int]]:
    """(s, σ) with ``e`` = ``s + σ·var``, σ = ±1 and s an integer free of var: ``var``, ``var + w``,
    ``w + var``, ``var - w``, ``w - var``; else None."""
    if isinstance(e, A.Var) and e.name == var:
        return z3.IntVal(0), 1
    if not (isinstance(e, A.Binary) and e.op in ("+", "-")):
        return None
    if isinstance(e.left, A.Var) and e.left.name == var and not _reads(e.right, var):
        w = term(e.right)
        return None if not z3.is_int(w) else ((w, 1) if e.op == "+" else (-w, 1))
    if isinstance(e.right, A.Var) and e.right.name == var and not _reads(e.left, var):
        w = term(e.left)
        return None if not z3.is_int(w) else ((w, 1) if e.op == "+" else (w, -1))
    return None


def statement(name: str, t: z3.ExprRef, ps: Params, log, exp) -> z3.BoolRef:
    """The instance ``side ⇒ fact`` of lemma ``name`` for the sum application ``t`` with the
    parameters ``ps`` (z3 terms: ``c``, ``k`` (a Python int), ``p``, ``q``, ``g``, ``L``, ``los``,
    ``his``), as in the module's table."""
    lo, hi = t.arg(0), t.arg(1)
    nonempty = hi > lo
    if name in HARMONIC + ("telescoping",):
        c, (a, b) = ps["c"], index_ends(lo, hi, ps["s"], ps["sigma"])
        if name == "harmonic-upper":
            return z3.Implies(z3.And(nonempty, a >= 2, c >= 0), t <= c * log(b / (a - 1)))
        if name == "harmonic-upper1":
            return z3.Implies(z3.And(nonempty, a >= 1, c >= 0), t <= c * (1 / a + log(b / a)))
        if name == "harmonic-lower":
            return z3.Implies(z3.And(nonempty, a >= 1, c >= 0), t >= c * log((b + 1) / a))
        return z3.Implies(z3.And(nonempty, a >= 1), t == c * (1 / a - 1 / (b + 1)))
    if name == "arithmetic":
        p, q, n = ps["p"], ps["q"], z3.ToReal(hi - lo)
        defined = [d != 0 for d in ps.get("divisors", [])]  # p and q divide by them
        return z3.Implies(z3.And(nonempty, *defined), t == p * n + q * n * z3.ToReal(lo + hi - 1) / 2)
    if name == "geometric":
        c, g = ps["c"], ps["g"]
        first, past = exp(g * z3.ToReal(lo)), exp(g * z3.ToReal(hi))
        return z3.Implies(nonempty, t * (1 - exp(g)) == c * (first - past))
    if name == "root-count":
        coefs = ps["coefs"]
        deg: z3.ArithRef = z3.RealVal(0)
        for k in range(1, len(coefs)):
            deg = z3.If(coefs[k] != 0, z3.RealVal(k), deg)
        side = z3.And(z3.Or(*[c != 0 for c in coefs]), hi >= lo)
        if ps["roots"]:
            return z3.Implies(side, t <= deg)
        return z3.Implies(side, t >= z3.ToReal(hi - lo) - deg)
    if name == "shift-count":
        L, los, his = ps["L"], ps["los"], ps["his"]
        low, high = los[0], his[0]
        for x in los[1:]:
            low = z3.If(x > low, x, low)
        for x in his[1:]:
            high = z3.If(x < high, x, high)
        count = z3.If(high >= low, high - low + 1, 0)
        return z3.Implies(z3.And(hi - lo == L, L >= 1), t == z3.ToReal(count))
    raise ValueError(f"unknown sum lemma {name}")


def instances(
    t: z3.ExprRef, body: A.Expr, var: str, term: Callable[[A.Expr], z3.ExprRef], log, exp
) -> List[Tuple[str, z3.BoolRef, Params]]:
    """The instances ``(name, lemma, parameters)`` of the table above for the sum application
    ``t`` = ``sumK(lo, hi, …)`` whose body is ``body`` over the bound variable ``var``. ``term(x)``
    encodes an expression ``x`` free of ``var`` (raising when it cannot); ``log``/``exp`` are the
    encoder's functions. The parameters let a checker rebuild the lemma from its own statement
    and check the summand's shape (:mod:`tamp.certificate.sum_bound_check`)."""
    found: List[Tuple[str, Params]] = []
    if isinstance(body, A.Binary) and body.op == "/" and not _reads(body.left, var):
        c = _real(term(body.left))
        ix = linear_index(body.right, var, term)
        if ix is not None:  # harmonic: Σ c/x over x = a..b
            found += [(name, {"c": c, "s": ix[0], "sigma": ix[1]}) for name in HARMONIC]
        k = _telescope_den(body.right, var)
        if k is not None:
            found.append(("telescoping", {"c": c, "s": z3.IntVal(k), "sigma": 1}))
    aff = _affine(body, var)
    if aff is not None and _reads(body, var):
        divisors = [_real(term(x.right)) for x in A.walk(body) if isinstance(x, A.Binary) and x.op == "/"]
        found.append(("arithmetic", {"p": _real(term(aff[0])), "q": _real(term(aff[1])), "divisors": divisors}))
    geo: Optional[Tuple[A.Expr, A.Expr]] = None
    g0 = _exp_rate(body, var)
    if g0 is not None:
        geo = (A.num(1), g0)
    elif isinstance(body, A.Binary) and body.op == "*":
        for c_e, x in ((body.left, body.right), (body.right, body.left)):
            g1 = _exp_rate(x, var)
            if g1 is not None and not _reads(c_e, var):
                geo = (c_e, g1)
                break
    if geo is not None:
        found.append(("geometric", {"c": _real(term(geo[0])), "g": _real(term(geo[1]))}))
    shift = shift_tests(body, var)
    if shift is not None:
        m, modulus, tests = shift
        L = term(modulus)
        ws = [(op, term(w)) for op, w in tests]
        if z3.is_int(L) and all(z3.is_int(w) for _op, w in ws):
            los: List[z3.ArithRef] = [z3.IntVal(0)]
            his: List[z3.ArithRef] = [L - 1]
            for op, w in ws:
                if op in ("<=", "=="):
                    his.append(w)
                if op in (">=", "=="):
                    los.append(w)
                if op == "<":
                    his.append(w - 1)
                if op == ">":
                    los.append(w + 1)
            shape = _shift_parts(m, var, term)
            if shape is not None:
                found.append(("shift-count", {"L": L, "los": los, "his": his, "s": shape[0], "sigma": shape[1]}))
    root = root_test(body, var)
    if root is not None:
        coefs, roots = root
        found.append(("root-count", {"coefs": [_real(term(c)) for c in coefs], "roots": roots}))
    return [(name, statement(name, t, ps, log, exp), ps) for name, ps in found]


def root_test(body: A.Expr, var: str) -> Optional[Tuple[list, bool]]:
    """``(coefficients of P in var, True)`` for a body ``P == 0 ? 1 : 0`` (also ``P == Q``,
    ``P != 0 ? 0 : 1``), ``(…, False)`` for ``P != 0 ? 1 : 0`` (also ``P == 0 ? 0 : 1``): P a
    polynomial of degree >= 1 in ``var``; None for any other body."""
    from axioms.roots import coefficients  # the polynomial arithmetic of the root axioms

    if not (isinstance(body, A.Cond) and isinstance(body.then, A.Num) and isinstance(body.other, A.Num)):
        return None
    vals = (body.then.value, body.other.value)
    if vals not in ((1, 0), (0, 1)):
        return None
    cond, negated = body.cond, False
    while isinstance(cond, A.Unary) and cond.op == "!":
        cond, negated = cond.operand, not negated
    if not (isinstance(cond, A.Binary) and cond.op in ("==", "!=")):
        return None
    p = cond.left if isinstance(cond.right, A.Num) and cond.right.value == 0 else A.Binary("-", cond.left, cond.right)
    coefs = coefficients(p, var)
    if coefs is None or len(coefs) < 2:
        return None
    is_root = (cond.op == "==") != negated  # the test is "P(i) = 0"
    return coefs, is_root == (vals == (1, 0))

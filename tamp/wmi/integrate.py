"""Exact integration of polynomials over convex polytopes.

Main entry point: :func:`integrate_polytope`.

Method (Lawrence / Brion vertex-cone formula).  For a simple polytope ``P``
with vertex ``v`` and edge directions ``u_1..u_n`` (columns of ``U``) and a
generic vector ``η`` (no ``<η, u_i>`` is zero),

    ∫_P f(x) e^{s<η,x>} dx = Σ_v |det U| e^{s<η,v>} ∫_{t>=0} f(v + U t) e^{s<η,Ut>} dt

(meromorphic identity in ``s``).  With ``g(t) = f(v + U t) = Σ_β g_β t^β`` and
``∫_{t>=0} t^β e^{<w,t>} dt = Π β_i! / (-w_i)^{β_i+1}``, taking the constant
term in ``s`` gives

    ∫_P f = Σ_v |det U| (Π_i σ_i) Σ_d <η,v>^{d+n}/(d+n)! · M_d(v),
    σ_i = -1/<η,u_i>,   M_d(v) = Σ_{|β|=d} g_β β! σ^β.

``M_d`` is computed without expanding ``g``: for a monomial ``Π_a x_a^{e_a}``
the needed quantities ``β!``-weighted are the coefficients of the power series
``Π_i 1/(1 - σ_i Σ_a U_{a,i} y_a)`` (the moment generating function of
independent exponential variables of means ``σ_i``).

Vertices are enumerated by simplex pivoting (breadth-first over bases).
Degenerate (non-simple) polytopes are handled by a lexicographic symbolic
perturbation of the right-hand sides ``b_r -> b_r + ε^{π(r)}``: the perturbed
polytope is simple, contains ``P``, and its integral tends to that of ``P``;
every term of the vertex sum is continuous in ``ε``, so the sum over the
lexicographically feasible bases, evaluated at the unperturbed vertex, is the
exact integral over ``P``.  Lower-dimensional and empty polytopes give 0.

A second, independent method (:func:`integrate_polytope_iterated`, iterated
integration with bound splitting) is provided for cross-checking.
"""

from __future__ import annotations

import random
import time as _time
from collections import deque
from fractions import Fraction
from math import factorial, lcm
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import z3

from tamp.core.z3expr import rational

from .bigq import make_q, make_z, tree_sum, z3_fraction
from .poly import Poly

_ZERO = Fraction(0)
_ONE = Fraction(1)

Constraint = Tuple[Sequence, Union[int, float, Fraction], bool]


class UnboundedPolytopeError(ValueError):
    """The constraints do not bound the region (the integral may diverge)."""


class _Deadline(Exception):
    pass


# ---------------------------------------------------------------------------
# constraint preprocessing


def _normalize(constraints: Sequence[Constraint], nvars: int):
    """Rows as (dense coeff tuple, rhs); returns None if trivially infeasible.

    Rows are scaled so the first non-zero coefficient has absolute value 1 and
    duplicates are merged (keeping the tightest rhs)."""
    best: Dict[Tuple[Fraction, ...], Fraction] = {}
    for c in constraints:
        coeffs, rhs = c[0], c[1]
        if len(coeffs) != nvars:
            raise ValueError(f"constraint has {len(coeffs)} coefficients, expected {nvars}")
        a = [Fraction(x) for x in coeffs]
        b = Fraction(rhs)
        piv = next((x for x in a if x), None)
        if piv is None:
            if b < 0:
                return None
            continue
        s = abs(piv)
        if s != 1:
            a = [x / s for x in a]
            b = b / s
        key = tuple(a)
        old = best.get(key)
        if old is None or b < old:
            best[key] = b
    # opposite pairs a·x <= b, -a·x <= b' with b + b' < 0: empty; == 0: flat
    for key, b in best.items():
        neg = tuple(-x for x in key)
        b2 = best.get(neg)
        if b2 is not None and b + b2 <= 0:
            return None
    return [(k, v) for k, v in best.items()]


def _solve_interior(rows, n) -> Optional[List[Fraction]]:
    """A point strictly inside all rows, or None if the interior is empty."""
    xs = [z3.Real(f"x{i}") for i in range(n)]
    s = z3.SolverFor("QF_LRA")
    for a, b in rows:
        terms = [rational(c) * xs[i] for i, c in enumerate(a) if c]
        s.add(z3.Sum(terms) < rational(b))
    if s.check() != z3.sat:
        return None
    m = s.model()
    out = []
    for x in xs:
        v = m.eval(x, model_completion=True)
        out.append(z3_fraction(v))
    return out


def _nullspace_vector(rows: List[List[Fraction]], n: int) -> Optional[List[Fraction]]:
    """A non-zero d with r·d = 0 for all given rows (None if only d = 0)."""
    m = [list(r) for r in rows]
    pivots = []
    rank = 0
    for col in range(n):
        piv = next((i for i in range(rank, len(m)) if m[i][col]), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        pr = m[rank]
        inv = 1 / pr[col]
        for j in range(col, n):
            pr[j] *= inv
        for i in range(len(m)):
            if i != rank and m[i][col]:
                f = m[i][col]
                ri = m[i]
                for j in range(col, n):
                    ri[j] -= f * pr[j]
        pivots.append(col)
        rank += 1
    free = [c for c in range(n) if c not in pivots]
    if not free:
        return None
    fc = free[0]
    d = [_ZERO] * n
    d[fc] = _ONE
    for i, col in enumerate(pivots):
        d[col] = -m[i][fc]
    return d


def _walk_to_vertex(rows, n, p):
    """From a feasible point, move to a vertex; returns (vertex, basis rows)."""
    p = list(p)
    tight: List[int] = []
    while len(tight) < n:
        d = _nullspace_vector([rows[r][0] for r in tight], n)
        assert d is not None
        for sign in (1, -1):
            dd = d if sign == 1 else [-x for x in d]
            best = None
            best_r = None
            for r, (a, b) in enumerate(rows):
                if r in tight:
                    continue
                ad = sum(ai * di for ai, di in zip(a, dd) if ai and di)
                if ad > 0:
                    slack = b - sum(ai * pi for ai, pi in zip(a, p) if ai)
                    t = slack / ad
                    if best is None or t < best:
                        best, best_r = t, r
            if best is not None:
                p = [pi + best * di for pi, di in zip(p, dd)]
                tight.append(best_r)
                break
        else:
            raise UnboundedPolytopeError("the polytope is unbounded")
    return p, tight


def _inverse(mat: List[List[Fraction]]):
    """Inverse and determinant of a square Fraction matrix (None if singular)."""
    n = len(mat)
    m = [list(r) + [_ONE if i == j else _ZERO for j in range(n)] for i, r in enumerate(mat)]
    det = _ONE
    for col in range(n):
        piv = next((i for i in range(col, n) if m[i][col]), None)
        if piv is None:
            return None, _ZERO
        if piv != col:
            m[col], m[piv] = m[piv], m[col]
            det = -det
        pr = m[col]
        pv = pr[col]
        det *= pv
        inv = 1 / pv
        for j in range(col, 2 * n):
            if pr[j]:
                pr[j] *= inv
        for i in range(n):
            if i != col and m[i][col]:
                f = m[i][col]
                ri = m[i]
                for j in range(col, 2 * n):
                    if pr[j]:
                        ri[j] -= f * pr[j]
    return [r[n:] for r in m], det


# ---------------------------------------------------------------------------
# per-vertex moment computation


class _Integrand:
    """The polynomial with integer coefficients over a common denominator,
    grouped by support, prepared for the per-vertex moment series."""

    def __init__(self, poly: Poly):
        den = 1
        for c in poly.terms.values():
            den = lcm(den, c.denominator)
        self.den = den  # poly = (integer-coefficient poly) / den
        self.const = 0
        groups: Dict[Tuple[int, ...], List[Tuple[Tuple[int, ...], int]]] = {}
        for e, c in poly.terms.items():
            ic = c.numerator * (den // c.denominator)
            supp = tuple(i for i, k in enumerate(e) if k)
            if not supp:
                self.const += ic
                continue
            groups.setdefault(supp, []).append((tuple(e[i] for i in supp), ic))
        self.maxdeg = poly.degree()
        self.groups = []
        for supp, monos in groups.items():
            emax = [max(mo[0][j] for mo in monos) for j in range(len(supp))]
            radix = [k + 1 for k in emax]
            size = 1
            strides = []
            for r in radix:
                strides.append(size)
                size *= r
            idx = []
            for flat in range(size):
                ks = []
                f = flat
                for r in radix:
                    ks.append(f % r)
                    f //= r
                idx.append(tuple(ks))
            self.groups.append((supp, monos, strides, size, idx))

    def vertex_value(self, Vnum, delta, cols, E, n, fact):
        """The vertex-cone term (without the factor 1/(|δ| Π E_j)), i.e.

        Σ_d <η,v>^{d+n}/(d+n)! · M_d · (1/den)   with  v = Vnum/δ,
        edge weights σ_j U_{a,j} = -Adj[a][j] / E_j,  E_j = <η, Adj[:, j]>.

        Everything is integer until one division per support group; the
        result is an exact rational of :mod:`tamp.wmi.bigq` (``mpq`` when gmpy2
        is available, else ``Fraction``)."""
        # big integers as mpz when gmpy2 is available (GMP multiplication)
        E = [make_z(e) for e in E]
        Vnum = [make_z(v) for v in Vnum]
        delta = make_z(delta)
        ev = E[-1]  # <η, Vnum>
        maxdeg = self.maxdeg
        total = make_q(0)
        if self.const:
            # M_0 = const; term: ev^n / (δ^n n!) ... folded: (ev/δ)^n/n!
            total += make_q(self.const * ev**n, delta**n * fact[n])
        for supp, monos, strides, size, idx in self.groups:
            raw = []
            D = 1
            for i in range(n):
                col = cols[i]
                ws = [(j, strides[j], -col[a]) for j, a in enumerate(supp) if col[a]]
                if ws:
                    raw.append((E[i], ws))
                    D *= E[i]
            C = [0] * size
            C[0] = 1
            for Ei, ws in raw:
                f = D // Ei
                iw = [(j, st, w * f) for j, st, w in ws]
                for flat in range(1, size):
                    ks = idx[flat]
                    acc = C[flat]
                    for j, st, w in iw:
                        if ks[j]:
                            acc += w * C[flat - st]
                    C[flat] = acc
            Va = [Vnum[a] for a in supp]
            # term for monomial with total degree et and series degree d:
            #   coef * Nd * ev^{d+n} / (δ^{et-d} D^d δ^{d+n} (d+n)!)
            # common denominator for the group: δ^{maxdeg+n} D^maxdeg (maxdeg+n)!
            num = 0
            for exps, coef in monos:
                Nd = self._accumulate(C, strides, exps, Va)
                et = sum(exps)
                for d, nd in enumerate(Nd):
                    if nd:
                        num += (
                            coef
                            * nd
                            * ev ** (d + n)
                            * delta ** (maxdeg - et)
                            * D ** (maxdeg - d)
                            * (fact[maxdeg + n] // fact[d + n])
                        )
            if num:
                total += make_q(num, delta ** (maxdeg + n) * D**maxdeg * fact[maxdeg + n])
        return total / self.den

    @staticmethod
    def _accumulate(C, strides, exps, Va):
        """Integer numerators N_d = Σ_{k<=e, |k|=d} Π_a e_a!/(e_a-k_a)! V_a^{e_a-k_a} C[k]."""
        nsup = len(exps)
        tabs = []
        for j in range(nsup):
            e = exps[j]
            tabs.append([(factorial(e) // factorial(e - k)) * Va[j] ** (e - k) for k in range(e + 1)])
        Nd = [0] * (sum(exps) + 1)
        stack = [(0, 0, 0, 1)]
        while stack:
            j, flat, d, w = stack.pop()
            if j == nsup:
                c = C[flat]
                if c:
                    Nd[d] += w * c
                continue
            row = tabs[j]
            st = strides[j]
            for k in range(exps[j] + 1):
                f = row[k]
                if f:
                    stack.append((j + 1, flat + k * st, d + k, w * f))
        return Nd


# ---------------------------------------------------------------------------
# main algorithm


def _integer_rows(rows):
    out = []
    for a, b in rows:
        den = b.denominator
        for x in a:
            den = lcm(den, x.denominator)
        ia = [x.numerator * (den // x.denominator) for x in a]
        out.append((ia, b.numerator * (den // b.denominator)))
    return out


def _lawrence(poly: Poly, rows, n: int, point, deadline=None, rng_seed=0) -> Fraction:
    vertex, basis0 = _walk_to_vertex(rows, n, point)
    m = len(rows)
    # perturbation ranks: initial basis rows last (makes the initial basis
    # lexicographically feasible)
    in_b0 = set(basis0)
    order = [r for r in range(m) if r not in in_b0] + list(basis0)
    rank = [0] * m
    for pos, r in enumerate(order):
        rank[r] = pos
    irows = _integer_rows(rows)
    integrand = _Integrand(poly)
    fact = [factorial(k) for k in range(integrand.maxdeg + n + 1)]
    rng = random.Random(rng_seed)
    for _attempt in range(20):
        eta = [rng.randint(-(1 << 20), 1 << 20) for _ in range(n)]
        try:
            return _lawrence_sum(irows, n, m, basis0, rank, eta, integrand, fact, deadline)
        except _DegenerateDirection:
            continue  # η orthogonal to some edge: try another
    raise RuntimeError("could not find a generic direction")


class _DegenerateDirection(Exception):
    pass


def _lawrence_sum(irows, n, m, basis0, rank, eta, integrand, fact, deadline):
    """Breadth-first walk over the lexicographically feasible bases, all in
    integers: the inverse of a basis matrix ``A_B`` is kept as ``Adj/δ`` with
    ``Adj`` integer and ``δ = ±det A_B`` (columns keyed by basis row)."""
    sparse = [[(i, c) for i, c in enumerate(a) if c] for a, _ in irows]
    bvec = [b for _, b in irows]
    A0 = [[Fraction(x) for x in irows[r][0]] for r in basis0]
    Binv, det = _inverse(A0)
    if Binv is None:
        raise AssertionError("initial basis is singular")
    delta = int(det)
    adj0 = {r: [int(Binv[i][j] * det) for i in range(n)] for j, r in enumerate(basis0)}
    start = tuple(sorted(basis0))
    seen = {start}
    queue = deque([(start, adj0, delta)])
    terms: List[Fraction] = []
    nb = 0
    while queue:
        basis, adj, delta = queue.popleft()
        nb += 1
        if deadline is not None and nb % 16 == 0 and _time.monotonic() > deadline:
            raise _Deadline()
        cols = [adj[r] for r in basis]
        Vnum = [0] * n
        for j, r in enumerate(basis):
            br = bvec[r]
            if br:
                c = cols[j]
                for i in range(n):
                    if c[i]:
                        Vnum[i] += c[i] * br
        bset = set(basis)
        nonbasic = []
        for s in range(m):
            if s in bset:
                continue
            sp = sparse[s]
            q = [sum(c * cj[i] for i, c in sp) for cj in cols]
            S = delta * bvec[s] - sum(c * Vnum[i] for i, c in sp)  # δ·slack
            nonbasic.append((s, q, S))
        dpos = delta > 0
        for j in range(n):
            best_n = best_d = None
            cands = None
            for s, q, S in nonbasic:
                qj = q[j]
                # edge j moves along -Adj[:,j]/δ; row s is approached iff q_j/δ < 0
                if (qj < 0) if dpos else (qj > 0):
                    # ratio = S / (-q_j): normalise the denominator positive
                    if dpos:
                        rn, rd = S, -qj
                    else:
                        rn, rd = -S, qj
                    if best_n is None:
                        best_n, best_d, cands = rn, rd, [(s, q)]
                    else:
                        lhs, rhs = rn * best_d, best_n * rd
                        if lhs < rhs:
                            best_n, best_d, cands = rn, rd, [(s, q)]
                        elif lhs == rhs:
                            cands.append((s, q))
            if best_n is None:
                raise UnboundedPolytopeError("the polytope is unbounded")
            if len(cands) > 1:
                s_star, qs = _lex_min(cands, j, basis, rank, delta)
            else:
                s_star, qs = cands[0]
            nbasis = tuple(sorted(basis[:j] + basis[j + 1 :] + (s_star,)))
            if nbasis in seen:
                continue
            seen.add(nbasis)
            p = qs[j]
            cj = cols[j]
            nadj = {s_star: cj}
            for r in range(n):
                if r == j:
                    continue
                f = qs[r]
                cr = cols[r]
                if f:
                    nadj[basis[r]] = [(p * x - f * y) // delta for x, y in zip(cr, cj)]
                else:
                    nadj[basis[r]] = [(p * x) // delta for x in cr]
            queue.append((nbasis, nadj, p))
        # vertex-cone term
        E = []
        prodE = 1
        for j in range(n):
            e = 0
            cj = cols[j]
            for i in range(n):
                if cj[i]:
                    e += eta[i] * cj[i]
            if e == 0:
                raise _DegenerateDirection()
            E.append(e)
            prodE *= e
        E.append(sum(eta[i] * Vnum[i] for i in range(n)))
        # |det U| Π σ_j = (1/|δ|) Π (δ / E_j)
        val = integrand.vertex_value(Vnum, delta, cols, E, n, fact)
        terms.append(val * make_q(delta**n, abs(delta) * prodE))
    return tree_sum(terms)


def _lex_min(cands, j, basis, rank, delta):
    """Lexicographic minimum ratio among tied candidate rows (perturbation
    ``b_r -> b_r + ε^{rank r}``).  At the perturbed vertex the slack of row
    ``s`` is ``slack_s + ε^{rank s} - Σ_{r∈B} ε^{rank r} β_{s,r}`` with
    ``β_{s,r} = q_{s,r}/δ``; the step along edge ``j`` is slack/(-β_{s,j})."""

    def vec(c):
        s, q = c
        denom = Fraction(-q[j], delta)
        coeffs = {rank[s]: Fraction(1)}
        for pos, r in enumerate(basis):
            if q[pos]:
                coeffs[rank[r]] = coeffs.get(rank[r], Fraction(0)) - Fraction(q[pos], delta)
        return {k: v / denom for k, v in coeffs.items()}

    keyed = [(vec(c), c) for c in cands]
    positions = sorted({p for co, _ in keyed for p in co})
    best = keyed
    for p in positions:
        lo = min(co.get(p, Fraction(0)) for co, _ in best)
        best = [(co, c) for co, c in best if co.get(p, Fraction(0)) == lo]
        if len(best) == 1:
            return best[0][1]
    raise AssertionError("lexicographic ratio test did not break the tie")


def integrate_polytope(
    poly: Poly, constraints: Sequence[Constraint], nvars: int, deadline: Optional[float] = None
) -> Fraction:
    """Exact ``∫ poly dx`` over ``{x : coeffs·x <= rhs for every constraint}``.

    ``constraints`` are ``(coeffs, rhs, strict)`` triples (strictness does not
    change the measure).  Empty and lower-dimensional polytopes give 0; an
    unbounded full-dimensional region raises :class:`UnboundedPolytopeError`.
    ``deadline`` is a ``time.monotonic()`` value after which ``TimeoutError``
    is raised.
    """
    if poly.nvars != nvars:
        raise ValueError(f"polynomial has {poly.nvars} variables, expected {nvars}")
    rows = _normalize(constraints, nvars)
    if rows is None:
        return _ZERO
    if nvars == 0:
        return poly.const_value()
    if poly.is_zero():
        return _ZERO
    used: Set[int] = set()
    for a, _ in rows:
        used.update(i for i, c in enumerate(a) if c)
    if len(used) < nvars:
        point = _solve_interior(rows, nvars)
        if point is None:
            return _ZERO
        raise UnboundedPolytopeError("a variable is unconstrained: the region is unbounded")
    point = _solve_interior(rows, nvars)
    if point is None:
        return _ZERO
    try:
        return _integrate_rows(poly, rows, nvars, point, deadline)
    except _Deadline:
        raise TimeoutError("polytope integration ran out of time") from None


def _integrate_rows(poly: Poly, rows, n: int, point, deadline=None) -> Fraction:
    """Integral over normalised ``rows`` given a point strictly inside them."""
    if poly.is_zero():
        return _ZERO
    return _lawrence(poly, rows, n, point, deadline)


# ---------------------------------------------------------------------------
# independent reference method: iterated integration with bound splitting


def integrate_polytope_iterated(poly: Poly, constraints: Sequence[Constraint], nvars: int) -> Fraction:
    """Same as :func:`integrate_polytope`, by iterated one-dimensional
    integration: the last variable is integrated between the active lower and
    upper bounds, splitting the remaining region where the active bounds change.
    Exponential in the dimension; meant for small instances and cross-checks."""
    rows = _normalize(constraints, nvars)
    if rows is None:
        return _ZERO
    cons = [(Poly.affine(a, 0) - b, False) for a, b in rows]  # a·x - b <= 0
    return _iter(poly, cons, nvars)


def _iter(f: Poly, cons, n: int) -> Fraction:
    """∫ f over {x in R^n : c(x) <= 0 (< 0 if strict) for (c, strict) in cons}."""
    live = []
    for c, strict in cons:
        if c.is_const():
            v = c.const_value()
            if v > 0 or (strict and v == 0):
                return _ZERO
        else:
            live.append((c, strict))
    if n == 0:
        return f.const_value()
    if f.is_zero():
        return _ZERO
    i = n - 1
    e_i = tuple(1 if j == i else 0 for j in range(n))
    lowers: list = []
    uppers: list = []
    others: list = []
    for c, strict in live:
        a = c.terms.get(e_i, _ZERO)
        if a == 0:
            others.append((c, strict))
            continue
        # c = a x_i + r <= 0  ->  x_i <= -r/a (a>0)  or x_i >= -r/a (a<0)
        r = Poly._raw(n, {e: v for e, v in c.terms.items() if e != e_i})
        bound = r.scale(-1 / a)
        (uppers if a > 0 else lowers).append(bound)
    if not lowers or not uppers:
        raise UnboundedPolytopeError("the polytope is unbounded")
    F = f.antiderivative(i)
    total = _ZERO
    for li, lo in enumerate(lowers):
        for ui, hi in enumerate(uppers):
            sub = list(others)
            # lo is the largest lower bound (ties go to the first), hi the smallest upper
            for lj, lo2 in enumerate(lowers):
                if lj != li:
                    sub.append((lo2 - lo, lj < li))
            for uj, hi2 in enumerate(uppers):
                if uj != ui:
                    sub.append((hi - hi2, uj < ui))
            sub.append((lo - hi, False))
            g = (F.substitute(i, hi) - F.substitute(i, lo)).drop_var(i)
            total += _iter(g, [(c.drop_var(i), st) for c, st in sub], n - 1)
    return total

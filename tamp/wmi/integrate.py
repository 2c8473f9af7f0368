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
from collections import deque
from fractions import Fraction
from math import factorial
from typing import Dict, List, Optional, Sequence, Tuple

from .poly import Poly

_ZERO = Fraction(0)
_ONE = Fraction(1)

Constraint = Tuple[Sequence, object, bool]


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
    import z3

    xs = [z3.Real(f"x{i}") for i in range(n)]
    s = z3.SolverFor("QF_LRA")
    for a, b in rows:
        terms = [z3.RealVal(f"{c.numerator}/{c.denominator}") * xs[i] for i, c in enumerate(a) if c]
        s.add(z3.Sum(terms) < z3.RealVal(f"{b.numerator}/{b.denominator}"))
    if s.check() != z3.sat:
        return None
    m = s.model()
    out = []
    for x in xs:
        v = m.eval(x, model_completion=True)
        out.append(Fraction(v.as_fraction()))
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
    """The polynomial grouped by support, prepared for the moment series."""

    def __init__(self, poly: Poly):
        self.const = _ZERO
        groups: Dict[Tuple[int, ...], List[Tuple[Tuple[int, ...], Fraction]]] = {}
        for e, c in poly.terms.items():
            supp = tuple(i for i, k in enumerate(e) if k)
            if not supp:
                self.const += c
                continue
            groups.setdefault(supp, []).append((tuple(e[i] for i in supp), c))
        self.groups = []
        self.maxdeg = poly.degree()
        for supp, monos in groups.items():
            emax = [max(m[0][j] for m in monos) for j in range(len(supp))]
            radix = [k + 1 for k in emax]
            size = 1
            strides = []
            for r in radix:
                strides.append(size)
                size *= r
            # precompute, for every multi-index k (flat), its components
            idx = []
            for flat in range(size):
                ks = []
                f = flat
                for r in radix:
                    ks.append(f % r)
                    f //= r
                idx.append(tuple(ks))
            self.groups.append((supp, monos, emax, strides, size, idx))

    def moments(self, v, Ucols, sigma, n):
        """M_d for d = 0..maxdeg at a vertex: list of Fractions."""
        M = [_ZERO] * (self.maxdeg + 1)
        M[0] = self.const
        for supp, monos, emax, strides, size, idx in self.groups:
            C = [_ZERO] * size
            C[0] = _ONE
            nsup = len(supp)
            for i in range(n):
                col = Ucols[i]
                si = sigma[i]
                ws = [(j, strides[j], si * col[a]) for j, a in enumerate(supp) if col[a]]
                if not ws:
                    continue
                for flat in range(1, size):
                    ks = idx[flat]
                    acc = C[flat]
                    for j, st, w in ws:
                        if ks[j]:
                            acc += w * C[flat - st]
                    C[flat] = acc
            # binomial expansion of each monomial
            va = [v[a] for a in supp]
            for exps, coef in monos:
                # iterate over k <= exps
                ranges = [range(e + 1) for e in exps]
                self._accumulate(M, C, strides, exps, va, coef, nsup)
        return M

    @staticmethod
    def _accumulate(M, C, strides, exps, va, coef, nsup):
        # per-variable factor tables: fac[j][k] = C(e,k) v^(e-k) k!
        tabs = []
        for j in range(nsup):
            e = exps[j]
            row = []
            for k in range(e + 1):
                row.append(Fraction(factorial(e) // factorial(e - k)) * va[j] ** (e - k))
            tabs.append(row)
        # enumerate k <= exps
        stack = [(0, 0, 0, coef)]
        while stack:
            j, flat, d, w = stack.pop()
            if j == nsup:
                c = C[flat]
                if c:
                    M[d] += w * c
                continue
            row = tabs[j]
            st = strides[j]
            for k in range(exps[j] + 1):
                f = row[k]
                if f:
                    stack.append((j + 1, flat + k * st, d + k, w * f))


# ---------------------------------------------------------------------------
# main algorithm


def _lawrence(poly: Poly, rows, n: int, point, deadline=None, rng_seed=0) -> Fraction:
    import time as _time

    vertex, basis0 = _walk_to_vertex(rows, n, point)
    m = len(rows)
    # perturbation ranks: initial basis rows last
    in_b0 = set(basis0)
    order = [r for r in range(m) if r not in in_b0] + list(basis0)
    rank = [0] * m
    for pos, r in enumerate(order):
        rank[r] = pos
    sparse = [[(i, c) for i, c in enumerate(a) if c] for a, _ in rows]
    bvec = [b for _, b in rows]
    integrand = _Integrand(poly)
    maxdeg = integrand.maxdeg
    fact = [Fraction(factorial(k)) for k in range(maxdeg + n + 1)]

    rng = random.Random(rng_seed)
    for _attempt in range(20):
        eta = [rng.randint(-(1 << 20), 1 << 20) for _ in range(n)]
        try:
            return _lawrence_sum(rows, sparse, bvec, n, m, basis0, rank, eta, integrand, fact,
                                 deadline)
        except ZeroDivisionError:
            continue  # η orthogonal to some edge: try another
    raise RuntimeError("could not find a generic direction")


def _lawrence_sum(rows, sparse, bvec, n, m, basis0, rank, eta, integrand, fact, deadline):
    import time as _time

    A0 = [list(rows[r][0]) for r in basis0]
    Binv, det = _inverse(A0)
    if Binv is None:
        raise AssertionError("initial basis is singular")
    # Binv[i][j]: column j corresponds to basis position j (row basis[j])
    start = tuple(sorted(basis0))
    # store basis as tuple in a canonical (sorted) order with matching columns
    perm = [basis0.index(r) for r in start]
    Binv = [[row[p] for p in perm] for row in Binv]
    seen = {start}
    queue = deque([(start, Binv, det)])
    total = _ZERO
    nb = 0
    while queue:
        basis, Binv, det = queue.popleft()
        nb += 1
        if deadline is not None and nb % 16 == 0 and _time.monotonic() > deadline:
            raise _Deadline()
        bset = set(basis)
        # vertex v = Binv · b_B
        bB = [bvec[r] for r in basis]
        v = [sum((Binv[i][j] * bB[j] for j in range(n) if Binv[i][j] and bB[j]), _ZERO)
             for i in range(n)]
        # columns of Binv (edge j direction is -column j)
        cols = [[Binv[i][j] for i in range(n)] for j in range(n)]
        # beta[s][j] = a_s · Binv[:, j] for non-basic s; slack_s at v
        nonbasic = []
        for s in range(m):
            if s in bset:
                continue
            sp = sparse[s]
            bs = [sum((c * cols[j][i] for i, c in sp if cols[j][i]), _ZERO) for j in range(n)]
            slack = bvec[s] - sum((c * v[i] for i, c in sp if v[i]), _ZERO)
            nonbasic.append((s, bs, slack))
        # neighbours
        for j in range(n):
            best = None
            for s, bs, slack in nonbasic:
                bj = bs[j]
                if bj >= 0:
                    continue
                ratio = slack / (-bj)
                if best is None or ratio < best[0]:
                    best = (ratio, [(s, bs, slack)])
                elif ratio == best[0]:
                    best[1].append((s, bs, slack))
            if best is None:
                raise UnboundedPolytopeError("the polytope is unbounded")
            cands = best[1]
            if len(cands) > 1:
                s_star = _lex_min(cands, j, basis, rank)
            else:
                s_star = cands[0][0]
            nbasis = tuple(sorted(basis[:j] + basis[j + 1:] + (s_star,)))
            if nbasis in seen:
                continue
            seen.add(nbasis)
            bs = next(c[1] for c in cands if c[0] == s_star)
            piv = bs[j]  # a_s · Binv[:, j]
            # new inverse: column for s = col_j / piv; other columns r: col_r - bs[r] * newcol
            newcol = [x / piv for x in cols[j]]
            newcols = {}
            for r in range(n):
                if r == j:
                    continue
                f = bs[r]
                if f:
                    newcols[basis[r]] = [x - f * y for x, y in zip(cols[r], newcol)]
                else:
                    newcols[basis[r]] = cols[r]
            newcols[s_star] = newcol
            nB = [[newcols[r][i] for r in nbasis] for i in range(n)]
            queue.append((nbasis, nB, det * piv))
        # contribution of this vertex cone: U = -Binv
        # omega_j = <eta, u_j> = -<eta, col_j>;  sigma_j = -1/omega_j = 1/<eta, col_j>
        sigma = []
        prod_sigma = _ONE
        for j in range(n):
            w = sum((e * x for e, x in zip(eta, cols[j]) if x), _ZERO)
            sj = 1 / w  # ZeroDivisionError -> caller retries with a new eta
            sigma.append(sj)
            prod_sigma *= sj
        Ucols = [[-x for x in cols[j]] for j in range(n)]
        M = integrand.moments(v, Ucols, sigma, n)
        ev = sum((e * x for e, x in zip(eta, v) if x), _ZERO)
        acc = _ZERO
        evp = ev ** n
        for d, md in enumerate(M):
            if md:
                acc += evp * md / fact[d + n]
            evp *= ev
        total += abs(1 / det) * prod_sigma * acc
    return total


def _lex_min(cands, j, basis, rank):
    """Lexicographic minimum ratio among tied candidate rows (perturbation)."""

    def key(c):
        s, bs, slack = c
        denom = -bs[j]
        # perturbed slack: eps^{rank s} * 1 + sum_{r in B} eps^{rank r} * (-bs[r])
        # (a_s · v_eps = a_s·v + sum_r eps^{rank r} a_s·Binv[:,r])
        coeffs = {rank[s]: _ONE}
        for pos, r in enumerate(basis):
            if bs[pos]:
                coeffs[rank[r]] = coeffs.get(rank[r], _ZERO) - bs[pos]
        return coeffs, denom

    keyed = [(key(c), c[0]) for c in cands]
    positions = sorted({p for (co, _), _ in keyed for p in co})
    best = keyed
    for p in positions:
        vals = [(co.get(p, _ZERO) / den, s, (co, den)) for (co, den), s in best]
        lo = min(v for v, _, _ in vals)
        best = [(k, s) for v, s, k in vals if v == lo]
        if len(best) == 1:
            return best[0][1]
    raise AssertionError("lexicographic ratio test did not break the tie")


def integrate_polytope(poly: Poly, constraints: Sequence[Constraint], nvars: int,
                       deadline: Optional[float] = None) -> Fraction:
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
    used = set()
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
        return _lawrence(poly, rows, nvars, point, deadline)
    except _Deadline:
        raise TimeoutError("polytope integration ran out of time") from None


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
    lowers, uppers, others = [], [], []
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

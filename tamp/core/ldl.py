"""Exact LDLᵀ factorisation of a positive semidefinite rational matrix.

Used to rewrite linear constraints over independent Gaussians into constraints over
independent Gaussian coordinates (the covariance ``A V Aᵀ`` of the constraint values is
``L D Lᵀ``), by the probability engine and, as the same exact primitive, by the
certificate checker.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Sequence, Tuple

ZERO = Fraction(0)


def ldl(gram: Sequence[Sequence[Fraction]]) -> Tuple[List[List[Fraction]], List[Fraction]]:
    """Rational LDLᵀ of a positive semidefinite matrix ``gram``.

    Rows are taken in order, without pivot search; a row whose residual is 0 (a combination
    of earlier pivot rows) adds no pivot. Returns ``(L, D)``: ``L`` has one row per row of
    ``gram`` and one column per pivot (``r`` of them, the rank), ``D`` the ``r`` pivots (all
    > 0), and ``gram == L · diag(D) · Lᵀ`` exactly. Raises ``ValueError`` if a residual is
    negative (the matrix is not positive semidefinite).

    >>> F = Fraction
    >>> L, D = ldl([[F(4), F(2)], [F(2), F(3)]])
    >>> L, D
    ([[Fraction(1, 1), Fraction(0, 1)], [Fraction(1, 2), Fraction(1, 1)]], [Fraction(4, 1), Fraction(2, 1)])
    >>> ldl([[F(1), F(2)], [F(2), F(4)]])    # rank 1: the second row adds no pivot
    ([[Fraction(1, 1)], [Fraction(2, 1)]], [Fraction(1, 1)])
    """
    L: List[List[Fraction]] = []
    D: List[Fraction] = []
    piv: List[int] = []
    for i, row in enumerate(gram):
        li: List[Fraction] = []
        for j, p in enumerate(piv):
            s = row[p] - sum((li[t] * L[p][t] * D[t] for t in range(j)), ZERO)
            li.append(s / D[j])
        resid = row[i] - sum((li[t] * li[t] * D[t] for t in range(len(piv))), ZERO)
        if resid < 0:
            raise ValueError("LDLᵀ of a matrix that is not positive semidefinite")
        if resid > 0:
            piv.append(i)
            D.append(resid)
            li.append(Fraction(1))
        L.append(li)
    width = len(D)
    return [li + [ZERO] * (width - len(li)) for li in L], D

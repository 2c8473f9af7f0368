"""tamp.core's exact primitives: LDLᵀ reproduces its matrix, dyadic rounding is outward and
short, half-space shares agree with exact enumeration, ranges with every corner."""

import itertools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tamp.core.dyadic import ceil_bits, ceil_grid, floor_bits, floor_grid
from tamp.core.ldl import ldl
from tamp.core.linear import affine_range, below_share, box_volume, halfspace_volume, linked_groups

small = st.integers(min_value=-6, max_value=6)
rationals = st.fractions(min_value=-10, max_value=10, max_denominator=1000)


@given(st.lists(st.lists(small, min_size=3, max_size=3), min_size=1, max_size=5))
def test_ldl_reproduces_a_gram_matrix(rows):
    # gram = A Aᵀ is positive semidefinite (possibly singular: dependent rows)
    A = [[Fraction(x) for x in r] for r in rows]
    gram = [[sum(a * b for a, b in zip(r, s)) for s in A] for r in A]
    L, D = ldl(gram)
    assert all(d > 0 for d in D)
    n = len(gram)
    for i in range(n):
        for j in range(n):
            assert sum(L[i][k] * D[k] * L[j][k] for k in range(len(D))) == gram[i][j]


@given(rationals, st.integers(min_value=1, max_value=60), st.integers(min_value=-60, max_value=4))
def test_dyadic_rounding_is_outward_and_short(q, bits, exp):
    lo, hi = floor_bits(q, bits), ceil_bits(q, bits)
    assert lo <= q <= hi
    for x in (lo, hi):
        if x != q:
            assert x.denominator & (x.denominator - 1) == 0  # a power of two
    g_lo, g_hi = floor_grid(q, exp), ceil_grid(q, exp)
    assert g_lo <= q <= g_hi and g_hi - g_lo <= Fraction(2) ** exp
    assert (g_lo / Fraction(2) ** exp).denominator == 1


@settings(deadline=None, max_examples=60)
@given(st.lists(small, min_size=2, max_size=3), small)
def test_below_share_matches_a_grid_count_in_the_limit(coefs, const):
    # exact share of the box [0, 2]^n where Σ c·x + const <= 0, compared with the volume formula
    names = [f"x{i}" for i in range(len(coefs))]
    box = {n: (Fraction(0), Fraction(2)) for n in names}
    f = ({n: Fraction(c) for n, c in zip(names, coefs)}, Fraction(const))
    share = below_share(f, box)
    assert 0 <= share <= 1
    if any(coefs):
        assert halfspace_volume(f, box) == share * box_volume(box)
    # the share is the mean over a fine grid's cells, up to the cells the hyperplane crosses
    k = 6
    inside = crossing = 0
    for cell in itertools.product(range(k), repeat=len(names)):
        corners = [
            sum(Fraction(c) * Fraction(2 * (i + d), k) for c, i, d in zip(coefs, cell, ds)) + const
            for ds in itertools.product((0, 1), repeat=len(names))
        ]
        if max(corners) <= 0:
            inside += 1
        elif min(corners) <= 0:
            crossing += 1
    total = k ** len(names)
    assert Fraction(inside, total) <= share <= Fraction(inside + crossing, total)


@given(
    st.dictionaries(st.sampled_from("abc"), rationals, min_size=1),
    st.dictionaries(st.sampled_from("abc"), st.tuples(rationals, rationals), min_size=3),
)
def test_affine_range_is_attained_at_corners(coef, sides):
    box = {v: (min(s), max(s)) for v, s in sides.items()}
    lo, hi = affine_range(coef, box, Fraction(1))
    values = [
        sum(c * x for c, x in zip(coef.values(), corner)) + 1 for corner in itertools.product(*(box[v] for v in coef))
    ]
    assert lo == min(values) and hi == max(values)
    assert affine_range({"a": Fraction(1)}, {"a": (None, Fraction(2))}) == (None, Fraction(2))


def test_linked_groups():
    assert linked_groups([{"b": 1, "a": 1}, {"c": 1}, {"d": 1, "c": 2}]) == [["a", "b"], ["c", "d"]]
    assert linked_groups([]) == []

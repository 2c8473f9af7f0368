"""An independent exact oracle for small ReLU classifiers over a box of R^2, for the tests.

A model is a list of layers ``(W, b)`` of Fractions (``W[j][i]``: weight from input i to unit
j), a ReLU after every layer but the last, the class the argmax of the last layer (ties to the
first). Its class regions are computed by exact convex-polygon clipping: the box is split along
every ReLU's zero line (each piece is a convex polygon on which the network is affine), and
each piece is clipped by the class margins. Areas by the shoelace formula, all in Fractions:
no float, no bound, nothing shared with tamp's robustness engine. ``libra_text`` writes the same
model in Libra's format (every weight a finite decimal: the tests use dyadic weights).
"""

from fractions import Fraction
from typing import List, Sequence, Tuple

Point = Tuple[Fraction, Fraction]
Poly = List[Point]
Form = Tuple[Fraction, Fraction, Fraction]  # a*x + b*y + c
Layer = Tuple[List[List[Fraction]], List[Fraction]]


def box_poly(x0, x1, y0, y1) -> Poly:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def area(p: Poly) -> Fraction:
    n = len(p)
    if n < 3:
        return Fraction(0)
    s = sum((p[i][0] * p[(i + 1) % n][1] - p[(i + 1) % n][0] * p[i][1] for i in range(n)), Fraction(0))
    return abs(s) / 2


def _val(f: Form, q: Point) -> Fraction:
    return f[0] * q[0] + f[1] * q[1] + f[2]


def clip(p: Poly, f: Form) -> Poly:
    """The convex polygon p ∩ {f >= 0} (Sutherland-Hodgman, exact)."""
    out: Poly = []
    n = len(p)
    for i in range(n):
        cur, nxt = p[i], p[(i + 1) % n]
        vc, vn = _val(f, cur), _val(f, nxt)
        if vc >= 0:
            out.append(cur)
        if (vc > 0 and vn < 0) or (vc < 0 and vn > 0):
            t = vc / (vc - vn)
            out.append((cur[0] + t * (nxt[0] - cur[0]), cur[1] + t * (nxt[1] - cur[1])))
    return out


def _neg(f: Form) -> Form:
    return (-f[0], -f[1], -f[2])


def _combine(row: Sequence[Fraction], forms: Sequence[Form], bias: Fraction) -> Form:
    a = sum((w * f[0] for w, f in zip(row, forms)), Fraction(0))
    b = sum((w * f[1] for w, f in zip(row, forms)), Fraction(0))
    c = sum((w * f[2] for w, f in zip(row, forms)), bias)
    return (a, b, c)


def regions(layers: Sequence[Layer], poly: Poly) -> List[Tuple[Poly, int]]:
    """Convex pieces of ``poly`` with the class on each (they cover poly up to measure zero)."""
    out: List[Tuple[Poly, int]] = []

    def walk(p: Poly, k: int, forms: List[Form]) -> None:
        if area(p) == 0:
            return
        W, b = layers[k]
        pre = [_combine(row, forms, bj) for row, bj in zip(W, b)]
        if k == len(layers) - 1:
            for c in range(len(pre)):
                q = p
                for j in range(len(pre)):
                    if j != c:
                        d = (pre[c][0] - pre[j][0], pre[c][1] - pre[j][1], pre[c][2] - pre[j][2])
                        if d[0] == d[1] == 0:  # a constant margin: ties go to the first class
                            if not (d[2] > 0 or (d[2] == 0 and j > c)):
                                q = []
                        else:  # a line: its side's strictness has measure zero
                            q = clip(q, d)
                if area(q) > 0:
                    out.append((q, c))
            return

        def phases(q: Poly, j: int, acc: List[Form]) -> None:
            if area(q) == 0:
                return
            if j == len(pre):
                walk(q, k + 1, acc)
                return
            f = pre[j]
            if f[0] == f[1] == 0:  # constant on the piece: one phase
                phases(q, j + 1, acc + [f if f[2] > 0 else (Fraction(0), Fraction(0), Fraction(0))])
                return
            phases(clip(q, f), j + 1, acc + [f])
            phases(clip(q, _neg(f)), j + 1, acc + [(Fraction(0), Fraction(0), Fraction(0))])

        phases(p, 0, [])

    walk(poly, 0, [(Fraction(1), Fraction(0), Fraction(0)), (Fraction(0), Fraction(1), Fraction(0))])
    return out


def intersect(p: Poly, q: Poly) -> Poly:
    """Two convex polygons' intersection (q's vertices counter-clockwise or clockwise)."""
    n = len(q)
    orient = 1 if sum(q[i][0] * q[(i + 1) % n][1] - q[(i + 1) % n][0] * q[i][1] for i in range(n)) > 0 else -1
    r = p
    for i in range(n):
        (x0, y0), (x1, y1) = q[i], q[(i + 1) % n]
        # left of the edge (counter-clockwise): (x1-x0)(y-y0) - (y1-y0)(x-x0) >= 0
        f = (-(y1 - y0) * orient, (x1 - x0) * orient, ((y1 - y0) * x0 - (x1 - x0) * y0) * orient)
        r = clip(r, f)
        if area(r) == 0:
            return []
    return r


def disagreement(a: Sequence[Layer], b: Sequence[Layer], poly: Poly) -> Fraction:
    """The exact area of {x ∈ poly : A(x) ≠ B(x)}."""
    ra, rb = regions(a, poly), regions(b, poly)
    return sum((area(intersect(pa, pb)) for pa, ca in ra for pb, cb in rb if ca != cb), Fraction(0))


def class_area(a: Sequence[Layer], poly: Poly, c: int) -> Fraction:
    return sum((area(p) for p, k in regions(a, poly) if k == c), Fraction(0))


def classify(layers: Sequence[Layer], x: Fraction, y: Fraction) -> int:
    vals = [x, y]
    for k, (W, b) in enumerate(layers):
        vals = [sum((w * v for w, v in zip(row, vals)), bj) for row, bj in zip(W, b)]
        if k < len(layers) - 1:
            vals = [max(v, Fraction(0)) for v in vals]
    return max(range(len(vals)), key=lambda j: (vals[j], -j))


def _dec(q: Fraction) -> str:
    """The exact finite decimal of a dyadic rational."""
    from tamp.models.exact import decimal_text

    return decimal_text(q)


def libra_text(layers: Sequence[Layer]) -> str:
    names = ["x0", "x1"]
    lines = []
    for i, (W, b) in enumerate(layers):
        outs = [f"h{i}_{j}" for j in range(len(W))]
        for o, row, bj in zip(outs, W, b):
            terms = " + ".join(f"({_dec(w)})*{n}" for w, n in zip(row, names))
            lines.append(f"{o} = {terms} + ({_dec(bj)})")
        if i < len(layers) - 1:
            lines += [f"ReLU({o})" for o in outs]
            lines.append("#")
        names = outs
    return "\n".join(lines) + "\n"

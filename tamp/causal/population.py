"""Masses of boxes under a population model given as a sampling program.

A population file holds a program (no parameters) that samples the decision
program's inputs, e.g. ``x1 ~ uniform(0, 1); x2 ~ gauss(0.5, 0.04); sex ~ bern(0.5);``.
When every non-sensitive input is sampled once, at the top level, from a
distribution with constant parameters, the inputs are independent and a box's
mass is the product of per-input masses: exact for ``uniform`` / ``unif`` /
``bern``, a certified interval (outward-rounded CDFs of :mod:`tamp.probability.dists`)
for ``gauss`` / ``lap`` / ``exp``. Any other population is handed to the
probability engine (:func:`tamp.probability.probability`, one certified interval per box).

Every box's mass bounds are rounded outward to multiples of 2^-GRID_BITS (the lower bound
down, the upper up: still certified bounds), unless they are short decimals (exact uniform and
bern masses stay exact). Without it the engine's and the CDFs' rationals,
with unrelated denominators, were added over thousands of boxes into fractions of thousands of
digits (past Python's 4300-digit int/str limit when the result was printed); on the grid every
sum has a denominator dividing 2^GRID_BITS. The rounding adds at most 2^-GRID_BITS per box.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable, Dict, Tuple

from lang import ast as A
from lang.errors import UnsupportedError, error_at
from lang.loader import load
from tamp.probability import probability
from tamp.probability.dists import Expo, Gauss, Laplace, PolyDensity

from . import terms as T
from .boxes import Box
from .region import build_region
from .symexec import Context, expr_term

Measure = Callable[[Box], Tuple[Fraction, Fraction]]

#: Box masses are rounded outward to multiples of 2^-GRID_BITS (module docstring).
GRID_BITS = 128
_GRID = 1 << GRID_BITS


def _small(q: Fraction) -> bool:
    """q's denominator is 2^a·5^b <= 2^GRID_BITS: sums of such numbers stay short (their
    denominators divide 2^GRID_BITS·5^56), so exact masses (uniform, bern) are kept exact."""
    d = q.denominator
    if d > _GRID:
        return False
    d >>= (d & -d).bit_length() - 1  # the factors 2
    while d % 5 == 0:
        d //= 5
    return d == 1


def outward(lo: Fraction, hi: Fraction) -> Tuple[Fraction, Fraction]:
    """[lo, hi] widened to the nearest multiples of 2^-GRID_BITS (within [0, 1] for masses);
    an end that is already a short decimal stays as it is."""
    if not _small(lo):
        lo = Fraction(max((lo.numerator * _GRID) // lo.denominator, 0), _GRID)
    if not _small(hi):
        hi = Fraction(min(-((-hi.numerator * _GRID) // hi.denominator), _GRID), _GRID)
    return lo, hi


def load_population(path_or_program):
    """The population program (the file's first program) and its context."""
    if isinstance(path_or_program, A.Program):
        return path_or_program, Context("<population>", None)
    src = load(Path(path_or_program))
    if not src.programs:
        raise UnsupportedError("the population file contains no program", src.path)
    return src.programs[0], Context(src.path, src.text)


def _constant_args(call: A.Call, ctx: Context):
    vals = []
    for a in call.args:
        t = expr_term(a, {}, ctx)
        if not isinstance(t, T.Const):
            return None
        vals.append(t.value)
    return vals


def _marginal(call: A.Call, sort: str, ctx: Context):
    """A function (lo, hi) -> (mass_lo, mass_hi) for one independently sampled input, or None."""
    args = _constant_args(call, ctx)
    if args is None:
        return None
    f = call.func
    if sort == "real":
        dist = {
            "uniform": lambda: PolyDensity.uniform(Fraction(args[0]), Fraction(args[1])),
            "gauss": lambda: Gauss(Fraction(args[0]), Fraction(args[1])),
            "lap": lambda: Laplace(Fraction(args[0]), Fraction(args[1])),
            "exp": lambda: Expo(Fraction(args[0]), Fraction(args[1])),
        }.get(f)
        if dist is None:
            return None
        d = dist()

        def real_mass(lo, hi):
            iv = d.mass(lo, hi)
            return iv.lo, iv.hi

        return real_mass
    if sort == "int" and f == "unif" and len(args) == 2:
        a, b = int(args[0]), int(args[1])

        def int_mass(lo, hi):
            lo = a if lo is None else max(a, int(lo))
            hi = b if hi is None else min(b, int(hi))
            m = Fraction(max(hi - lo + 1, 0), b - a + 1)
            return m, m

        return int_mass
    if sort == "bool" and f == "bern":
        p = Fraction(args[0])

        def bool_mass(lo, hi):
            m = (p if hi >= 1 else 0) + ((1 - p) if lo <= 0 else 0)
            return Fraction(m), Fraction(m)

        return bool_mass
    return None


def independent_marginals(pop: A.Program, dims, ctx: Context):
    """Per-dimension mass functions when the population samples each input independently, else None."""
    sampled: Dict[str, A.Call] = {}
    for s in pop.body.stmts:
        if isinstance(s, A.Sample) and len(s.targets) == 1 and isinstance(s.targets[0], A.Var):
            name = s.targets[0].name
            if name in sampled:
                return None
            sampled[name] = s.dist
        elif not isinstance(s, (A.Skip, A.VarDecl)):
            return None
    out = []
    for d in dims:
        if d.name not in sampled:
            raise error_at(
                UnsupportedError, f"the population does not sample the input '{d.name}'", pop.pos, ctx.path, ctx.source
            )
        m = _marginal(sampled[d.name], d.sort, ctx)
        if m is None:
            return None
        out.append(m)
    return out


def _box_event(dims, box: Box) -> A.Expr:
    parts = []
    for d, (lo, hi) in zip(dims, box):
        if lo is not None:
            parts.append(A.Binary(">=", A.Var(d.name), A.Num(Fraction(lo), False)))
        if hi is not None:
            parts.append(A.Binary("<=", A.Var(d.name), A.Num(Fraction(hi), False)))
    e: A.Expr = A.BoolLit(True)
    for p in parts:
        e = A.Binary("&&", e, p)
    return e


def population_measure(path_or_program, program: A.Program, ind: A.Independent, ctx: Context):
    """(measure, description) for the analysis of ``ind`` under the population model."""
    pop, pctx = load_population(path_or_program)
    dims = build_region(program, ind, ctx).dims
    margs = independent_marginals(pop, dims, pctx)
    if margs is not None:

        def measure(box: Box):
            lo, hi = Fraction(1), Fraction(1)
            for m, (a, b) in zip(margs, box):
                x, y = m(a, b)
                lo, hi = lo * x, hi * y
            return outward(lo, hi)

        return measure, f"the population of {pctx.path} (independent inputs)"

    def engine_measure(box: Box):
        v = probability(pop, _box_event(dims, box), timeout=30.0)
        return outward(v, v) if isinstance(v, Fraction) else outward(v.lo, v.hi)

    return engine_measure, f"the population of {pctx.path} (probability engine)"

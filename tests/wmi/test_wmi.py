"""wmi / probability: hand-computed values, an independent brute-force
all-assignment enumeration, and Monte Carlo."""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from pysmt.operators import POW
from pysmt.shortcuts import LE, LT, And, Bool, Implies, Ite, Not, Or, Plus, Pow, Real, Symbol, Times
from pysmt.typing import BOOL, REAL

from tamp.wmi import WMIInputError, WMIResult, WMITimeout, probability, wmi

x = Symbol("wx", REAL)
y = Symbol("wy", REAL)
z = Symbol("wz", REAL)
A = Symbol("wA", BOOL)
B = Symbol("wB", BOOL)
UNIT = {x: (0, 1), y: (0, 1)}


def test_uniform_square_half():
    r = probability(LE(Plus(x, y), Real(1)), Bool(True), Real(1), UNIT)
    assert isinstance(r, WMIResult) and r.value == F(1, 2) and float(r) == 0.5
    assert wmi(Bool(True), Real(1), UNIT).value == 1


def test_paper_example_2():
    # (x∈[0,1]) ∧ (y∈[0,1]) ∧ (A → x+y <= 1),  w = ite(x+y<=1, x, 1)·ite(A, 1, y)
    # A:  ∫_{x+y<=1} x = 1/6;   ¬A: ∫_{x+y<=1} x·y + ∫_{x+y>1} y = 1/24 + (1/2 - 1/6) = 3/8
    phi = And(LE(Real(0), x), LE(x, Real(1)), LE(Real(0), y), LE(y, Real(1)), Implies(A, LE(Plus(x, y), Real(1))))
    w = Times(Ite(LE(Plus(x, y), Real(1)), x, Real(1)), Ite(A, Real(1), y))
    dom = {x: (0, 1), y: (0, 1)}
    r = wmi(phi, w, dom)
    assert r.value == F(1, 6) + F(3, 8) == F(13, 24)
    assert r.cells >= 2 and r.time_s >= 0
    assert probability(A, phi, w, dom).value == F(4, 13)


def test_triangular_density_normalises():
    t = Symbol("wt", REAL)
    tri = Ite(LE(t, Real(1)), t, Plus(Real(2), Times(Real(-1), t)))
    assert wmi(Bool(True), tri, {t: (0, 2)}).value == 1
    # product of two triangular densities on [0,2]^2, and the mass of t + s <= 2 (1/2 by symmetry)
    s = Symbol("ws", REAL)
    tri_s = Ite(LE(s, Real(1)), s, Plus(Real(2), Times(Real(-1), s)))
    dom = {t: (0, 2), s: (0, 2)}
    assert wmi(Bool(True), Times(tri, tri_s), dom).value == 1
    assert probability(LE(Plus(t, s), Real(2)), Bool(True), Times(tri, tri_s), dom).value == F(1, 2)


def test_booleans_unused_variables_and_domain_booleans():
    # a Boolean listed only in the domain doubles the integral
    assert wmi(Bool(True), Real(1), {x: (0, 1), B: None}).value == 2
    # Booleans in the weight only: Σ_A ite(A, 3, 1) = 4
    assert wmi(Bool(True), Ite(A, Real(3), Real(1)), {x: (0, 2)}).value == 8
    # a real variable used by the weight but by no atom is integrated out exactly
    w = Times(Pow(z, Real(2)), x)
    assert wmi(LE(x, Real(F(1, 2))), w, {x: (0, 1), z: (-1, 2)}).value == F(1, 8) * 3
    # strict/non-strict and flipped atoms are the same half-space up to measure zero
    phi = Or(LT(Plus(x, y), Real(1)), Not(LE(Real(1), Plus(x, y))))
    assert wmi(phi, Real(1), UNIT).value == F(1, 2)


def test_unsatisfiable_and_degenerate_domains():
    assert wmi(And(LE(x, Real(0)), LE(Real(1), x)), Real(1), UNIT).value == 0
    assert wmi(Bool(True), Real(1), {x: (1, 1), y: (0, 1)}).value == 0
    with pytest.raises(ZeroDivisionError):
        probability(Bool(True), Bool(False), Real(1), UNIT)


def test_input_errors():
    with pytest.raises(WMIInputError):
        wmi(LE(Times(x, y), Real(1)), Real(1), UNIT)  # non-linear atom
    with pytest.raises(WMIInputError):
        wmi(LE(z, Real(1)), Real(1), UNIT)  # z has no bounds


def test_timeout_reports_progress():
    # a problem with several cells and a zero time budget
    phi = Or(LE(Plus(x, y), Real(1)), LE(x, Real(F(1, 3))))
    with pytest.raises(WMITimeout) as info:
        wmi(phi, Ite(LE(y, x), x, y), UNIT, timeout=0.0)
    assert info.value.cells == 0


# -- independent brute force: all total assignments, iterated integration ----------


def brute_force(formula, weight, domain):
    """Naive WMI: enumerate every truth assignment of every LRA atom and
    Boolean, integrate each satisfying assignment's polytope with the iterated
    method.  Shares only the compiler and the Poly class with the library."""
    from tamp.wmi import integrate_polytope_iterated
    from tamp.wmi.api import _split_domain
    from tamp.wmi.model import Compiler, simplify, simplify_w
    from tamp.wmi.poly import Poly

    reals, bounds, bools = _split_domain(domain)
    c = Compiler(reals, bounds, bools)
    phi = c.formula(formula)
    w = c.term(weight)
    n = len(reals)
    box = []
    for i, (lo, hi) in enumerate(bounds):
        e = [F(0)] * n
        e[i] = F(1)
        box.append((tuple(e), hi, False))
        box.append((tuple(-v for v in e), -lo, False))
    total = F(0)
    keys = [("a", j) for j in range(len(c.atoms))] + [("b", i) for i in range(len(c.bool_vars))]
    for vals in itertools.product([True, False], repeat=len(keys)):
        assign = dict(zip(keys, vals))
        if simplify(phi, assign) is not True:
            continue
        leaf = simplify_w(w, assign)
        assert isinstance(leaf, Poly)
        cons = box + [(*c.atoms[j].constraint(v), False) for (t, j), v in assign.items() if t == "a"]
        total += integrate_polytope_iterated(leaf, cons, n)
    return total


def random_problem(seed, n_reals=2, n_atoms=4):
    rng = np.random.default_rng(seed)
    xs = [Symbol(f"rx{i}", REAL) for i in range(n_reals)]
    bs = [Symbol(f"rb{i}", BOOL) for i in range(2)]

    def atom():
        coeffs = rng.integers(-3, 4, size=n_reals)
        if not coeffs.any():
            coeffs[0] = 1
        lhs = Plus([Times(Real(int(c)), v) for c, v in zip(coeffs, xs)])
        return LE(lhs, Real(F(int(rng.integers(-2, 6)), 2)))

    atoms = [atom() for _ in range(n_atoms)]

    def lit():
        if rng.random() < 0.3:
            b = bs[rng.integers(2)]
        else:
            b = atoms[rng.integers(n_atoms)]
        return Not(b) if rng.random() < 0.5 else b

    formula = And([Or([lit() for _ in range(2)]) for _ in range(2)])

    def poly():
        terms = []
        for _ in range(2):
            m = Real(F(int(rng.integers(1, 5)), int(rng.integers(1, 4))))
            for v in xs:
                k = int(rng.integers(0, 3))
                if k:
                    m = Times(m, Pow(v, Real(k)))
            terms.append(m)
        return Plus(terms)

    weight = Ite(lit(), poly(), Ite(lit(), poly(), poly()))
    domain = {v: (0, 1) for v in xs}
    return formula, weight, domain, xs, bs


@pytest.mark.parametrize("seed", range(6))
def test_random_problems_against_brute_force(seed):
    formula, weight, domain, _, _ = random_problem(seed)
    assert wmi(formula, weight, domain).value == brute_force(formula, weight, domain)


def np_eval(node, env):
    """Vectorised evaluation of a pysmt term/formula on numpy arrays."""
    if node.is_symbol():
        return env[node]
    if node.is_constant():
        v = node.constant_value()
        return bool(v) if node.is_bool_constant() else float(v)
    args = [np_eval(a, env) for a in node.args()]
    if node.is_and():
        return np.logical_and.reduce(args)
    if node.is_or():
        return np.logical_or.reduce(args)
    if node.is_not():
        return np.logical_not(args[0])
    if node.is_le():
        return args[0] <= args[1]
    if node.is_lt():
        return args[0] < args[1]
    if node.is_plus():
        return sum(args)
    if node.is_times():
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if node.node_type() == POW:
        return args[0] ** args[1]
    if node.is_ite():
        return np.where(args[0], args[1], args[2])
    raise NotImplementedError(node)


@pytest.mark.parametrize("seed", [101, 202])
def test_random_3d_problem_against_monte_carlo(seed):
    formula, weight, domain, xs, bs = random_problem(seed, n_reals=3, n_atoms=4)
    domain.update({b: None for b in bs})  # sum over both Booleans even if one is unused
    exact = wmi(formula, weight, domain).value
    rng = np.random.default_rng(seed)
    N = 200_000
    pts = rng.uniform(0, 1, size=(N, len(xs)))
    env = {v: pts[:, i] for i, v in enumerate(xs)}
    vals = np.zeros(N)
    for a0, a1 in itertools.product([True, False], repeat=2):
        env[bs[0]] = np.full(N, a0)
        env[bs[1]] = np.full(N, a1)
        vals += np.where(np_eval(formula, env), np_eval(weight, env), 0.0)
    mean, se = vals.mean(), vals.std() / np.sqrt(N)
    assert abs(float(exact) - mean) < 5 * se

"""Root counting for uniform draws (session 27, roots27): the axiom family
:mod:`axioms.roots` (a nonzero polynomial of degree e vanishes at a uniform point of N integers
w.p. <= e/N) and its Schwartz–Zippel proposals (:mod:`tamp.prover.trace.roots`). The blind
targets and the dev claims proved and certified, false siblings and traps (a polynomial that
may be identically zero, a draw used twice, a degree or a size miscounted) left unproved,
tampered certificates rejected, and the pure functions on their own."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate, proved_certificate_fresh
from support.proving import prove_path as _prove

from axioms.roots import UniformRoot, coefficients, exact_degree, leading_nonzero, nonzero
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "roots27"
BLIND = BENCHMARKS / "prover4" / "dev" / "blind13"
TARGETS = [
    BLIND / "identitytesting" / "quadratic_root_hit.prob",
    BLIND / "identitytesting" / "bivariate_product.prob",
    BLIND / "freivalds" / "larger_range.prob",
]
TRUE = [
    "cubic_shift",
    "sloped_line",
    "three_factors",
    "identity_test",
    "middle_coordinate",
    "unequal_ranges",
    "square_target",
]
TRAPS = [
    "trap_zero_slope",
    "trap_cancelled",
    "trap_scaled_zero",
    "trap_same_draw",
    "trap_cubic_degree",
    "trap_size_sign",
    "trap_size_off",
]


# ------------------------------------------------------------------------ pure functions


def _coefs(text, v):
    p = coefficients(parse_expr(text), v)
    return None if p is None else [show_expr(c) for c in p]


def test_coefficients_of_a_product_of_roots():
    assert _coefs("(r - a) * (r - b)", "r") == ["-a * -b", "-a + -b", "1"]
    assert _coefs("d1 * r1 + d2 * r2", "r1") == ["d2 * r2", "d1"]
    assert _coefs("(r - a) - (r - a)", "r") == ["-a + - -a"]  # degree 0: the r terms cancel
    assert _coefs("x * y", "z") == ["x * y"]


def test_coefficients_refuse_what_is_not_a_polynomial():
    assert coefficients(parse_expr("1 / r"), "r") is None
    assert coefficients(parse_expr("r / a"), "r") is None  # a divisor that may be 0
    assert coefficients(parse_expr("log(r)"), "r") is None
    assert coefficients(parse_expr("r > 0 ? r : 0"), "r") is None


def _value(e, env):
    return Fraction(evaluate(e, env))


@pytest.mark.parametrize(
    "text", ["(r - a) * (r - b) * (r + 2 * a)", "a * r * r - (r - b) * 3 + r / 2", "-(r - a) * (a - r)"]
)
def test_the_expansion_agrees_with_the_expression(text):
    e = parse_expr(text)
    coefs = coefficients(e, "r")
    for r, a, b in itertools.product(range(-3, 4), range(-2, 3), range(-2, 3)):
        env = {"r": r, "a": a, "b": b}
        assert _value(e, env) == sum(_value(c, env) * r**i for i, c in enumerate(coefs))


def test_the_exact_degree_reads_the_coefficients():
    d = exact_degree([parse_expr("q"), parse_expr("p"), parse_expr("s")])
    assert show_expr(d) == "s != 0 ? 2 : p != 0 ? 1 : 0"
    assert evaluate(d, {"q": 1, "p": 0, "s": 0}) == 0
    assert evaluate(d, {"q": 1, "p": 3, "s": 0}) == 1


def test_the_leading_coefficient_that_is_not_the_zero_polynomial():
    q = leading_nonzero(parse_expr("d1 * r1 + d2 * r2"), "r2", ["r1"])
    assert show_expr(q) == "d2 != 0 ? d2 : d1 * r1"
    assert show_expr(nonzero(parse_expr("d1 * r1 + e"), ["r1"])) == "e != 0 || d1 != 0"


@pytest.mark.parametrize(
    "poly", ["(v - 1) * (v - 2) * (v - 3)", "2 * v - 4", "v * v", "v * v * v - v", "(v - 0) * (v - 0) * 5"]
)
def test_the_exact_chance_is_within_the_cost(poly):
    fam = UniformRoot()
    for lo, hi in [(0, 0), (1, 3), (-3, 3), (0, 9)]:
        assert fam.exact_tail((lo, hi), parse_expr(poly)) <= fam.cost_value((lo, hi), parse_expr(poly)) + 1e-12


def test_the_axiom_refuses_a_degree_zero_parameter_and_an_array_target():
    fam = UniformRoot()
    dist = A.Call("unif", (A.num(1), A.Var("m")))
    with pytest.raises(ValueError):
        fam.instantiate((A.Var("r"),), dist, parse_expr("a + 1"))
    with pytest.raises(ValueError):
        fam.instantiate((A.Index(A.Var("r"), A.num(0)),), dist, parse_expr("r - a"))


# ------------------------------------------------------------------------ the claims


def _proved_and_certified(path, tmp_path, capsys):
    cert = proved_certificate_fresh(path, tmp_path)  # asserts "proved", in a process of its own
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("path", TARGETS, ids=lambda p: p.stem)
def test_the_blind_targets_are_proved_and_certified(path, tmp_path, capsys):
    _proved_and_certified(path, tmp_path, capsys)


@pytest.mark.parametrize("path", TARGETS, ids=lambda p: p.stem)
def test_the_blind_false_siblings_stay_unproved(path):
    assert _prove(path.with_name(path.stem + "_false.prob"), timeout=30).verdict != "proved"


@pytest.mark.parametrize("name", TRUE)
def test_dev_claims_proved_and_certified(name, tmp_path, capsys):
    path = MINE / f"{name}.prob"
    assert _prove(path).verdict == "proved"
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


#: false siblings whose search runs past ~20 s before giving up
SLOW_SIBLINGS = {"middle_coordinate", "zero_count_markov"}


def _marked(items, key=lambda x: x):
    return [pytest.param(x, marks=pytest.mark.slow) if key(x) in SLOW_SIBLINGS else x for x in items]


@pytest.mark.parametrize("name", _marked(TRUE))
def test_dev_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob", timeout=30).verdict != "proved"


@pytest.mark.parametrize("name", TRAPS)
def test_the_traps_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob", timeout=30).verdict != "proved"


def _root_edges(cert):
    return [
        e for e in cert["programs"][0]["automata"][0]["edges"] if (e.get("axiom") or {}).get("family") == "uniform_root"
    ]


def _swap_param(tree, new):
    if isinstance(tree, dict):
        if tree.get("family") == "uniform_root" and "param" in tree:
            tree["param"] = {"expr": new}
        for v in tree.values():
            _swap_param(v, new)
    elif isinstance(tree, list):
        for v in tree:
            _swap_param(v, new)


def test_a_tampered_cost_is_rejected(tmp_path, capsys):
    path = TARGETS[0]
    cert = proved_certificate(path)
    (edge,) = _root_edges(cert)
    edge["axiom"]["cost"] = {"node": "Binary", "op": "/", "left": edge["axiom"]["cost"], "right": to_json(A.num(2))}
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_a_tampered_polynomial_is_rejected(tmp_path, capsys):
    path = TARGETS[0]
    cert = proved_certificate(path)
    (edge,) = _root_edges(cert)
    _swap_param(edge["axiom"], to_json(parse_expr("r - a")))  # one root: half the cost, b uncovered
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


# ------------------------------------------------------------------------ loops: per-iteration chances, counts

LOOPS = [BLIND / "identitytesting" / "repeated_evaluations.prob", BLIND / "identitytesting" / "zero_count_markov.prob"]


@pytest.mark.parametrize("path", LOOPS, ids=lambda p: p.stem)
def test_the_loop_targets_are_proved_and_certified(path, tmp_path, capsys):
    _proved_and_certified(path, tmp_path, capsys)


@pytest.mark.parametrize("path", _marked(LOOPS, lambda p: p.stem), ids=lambda p: p.stem)
def test_the_loop_false_siblings_stay_unproved(path):
    assert _prove(path.with_name(path.stem + "_false.prob"), timeout=30).verdict != "proved"


def test_the_root_count_body_shapes():
    from axioms.sum_bounds import root_test

    coefs, roots = root_test(parse_expr("(j - a) * (j - b) == 0 ? 1 : 0"), "j")
    assert roots and len(coefs) == 3
    assert root_test(parse_expr("(j - a) * (j - b) != 0 ? 1 : 0"), "j")[1] is False
    assert root_test(parse_expr("!(j * j == c) ? 0 : 1"), "j")[1] is True
    assert root_test(parse_expr("j * j < c ? 1 : 0"), "j") is None  # not a root test
    assert root_test(parse_expr("a == 0 ? 1 : 0"), "j") is None  # degree 0 in j


def _sum_term(body_text):
    """A sum application over ``j in lo..hi`` with the given body, its encoder and the lemma
    instances the library proposes for it."""
    import z3

    from axioms.lemmas import closed_form_instances
    from tamp.core.encode import Encoder

    enc = Encoder({"a": A.INT, "b": A.INT, "lo": A.INT, "hi": A.INT})
    env = {n: z3.Int(n) for n in ("a", "b", "lo", "hi")}
    t = enc.expr(A.Sum("j", A.Var("lo"), A.Var("hi"), False, parse_expr(body_text)), env)
    return t, enc, [x for x in closed_form_instances([t], enc) if x[1] == "root-count"]


def test_the_checker_rederives_the_root_count_and_refuses_a_stronger_one():
    import z3

    from tamp.certificate.sum_bound_check import verify

    t, enc, found = _sum_term("(j - a) * (j - b) == 0 ? 1 : 0")
    ((_t, name, lem, ps),) = found
    assert verify(t, name, lem, ps, enc)
    stronger = z3.Implies(z3.BoolVal(True), t <= 1)  # one root only, and no side condition
    assert not verify(t, name, stronger, ps, enc)
    # a lemma whose coefficients are not the body's (the roots of (j - a)·j) is refused by SHAPE
    _t2, _enc2, other = _sum_term("(j - a) * j == 0 ? 1 : 0")
    assert not verify(t, name, lem, other[0][3], enc)

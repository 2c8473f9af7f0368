"""The JSON problem reader."""

import json
from fractions import Fraction as F

import pytest
from pysmt.shortcuts import Symbol
from pysmt.typing import REAL

from tamp.wmi import wmi
from tamp.wmi.jsonfmt import ProblemFormatError, load_problem, parse_sexpr, problem_from_dict


def make(formula, weights, queries=None, domain=None):
    d = {
        "domain": domain or [["jx", "real", [0, 1]], ["jy", "real", [0, 2]], ["ja", "bool", None]],
        "formula": formula,
        "weights": weights,
    }
    if queries is not None:
        d["queries"] = queries
    return d


def test_parse_and_exact_constants():
    p = problem_from_dict(
        make(
            "(& (<= (const real 0.0) (var real jx)) (| (var bool ja) (< (+ (var real jx) (var real jy)) (const real 1.5))))",
            "(ite (var bool ja) (^ (var real jx) (const real 2.0)) (* (const real 0.1) (var real jy)))",
            ["(~ (var bool ja))"],
        )
    )
    assert len(p.queries) == 1 and len(p.real_vars) == 2 and len(p.bool_vars) == 1
    jx = Symbol("jx", REAL)
    assert p.domain[jx] == (0, 1)
    # 0.1 is the double nearest to 1/10, converted exactly (not the decimal 1/10)
    consts = set()
    stack = [p.weight]
    while stack:
        node = stack.pop()
        if node.is_real_constant():
            consts.add(F(str(node.constant_value())))
        stack.extend(node.args())
    assert F(0.1) in consts and F(1, 10) not in consts and F(2) in consts


def test_value_of_a_small_problem():
    # ∫_{[0,1]x[0,2]} Σ_a ite(a, x^2, 1/2) = 2/3 + 1
    p = problem_from_dict(
        make(
            "(& (<= (const real 0) (var real jx)))",
            "(ite (var bool ja) (^ (var real jx) (const real 2)) (const real 0.5))",
        )
    )
    assert wmi(p.formula, p.weight, p.domain).value == F(2, 3) + 1


def test_more_operators():
    p = problem_from_dict(
        make(
            "(& (-> (var bool ja) (>= (var real jx) (const real 0.5))) (<-> (var bool ja) (var bool ja)))",
            "(+ (- (var real jy) (const real 1)) (/ (var real jx) (const real 2)) (- (const real 1)))",
        )
    )
    # Σ_a ∫: a=T: x in [0.5,1]; a=F: x in [0,1];  integrand y - 2 + x/2 over y in [0,2]
    r = wmi(p.formula, p.weight, p.domain).value

    def inner(lo, hi):
        return (hi - lo) * (2 - 4) + (hi**2 - lo**2) / 4 * 2

    assert r == inner(F(1, 2), 1) + inner(0, 1)


@pytest.mark.parametrize(
    "text, msg",
    [
        ("(& (var real jx)", "missing ')'"),
        ("(& (var real jx)))", "trailing"),
        ("(foo (var real jx))", "unknown operator"),
        ("(<= (var real jz) (const real 1))", "undeclared"),
        ("(<= (var bool jx) (const real 1))", "declared real"),
        ("(~ (var bool ja) (var bool ja))", "expects 1"),
        ("(<= (const real abc) (const real 1))", "bad real constant"),
        ("(+ (var real jx) (var real jy))", "not Boolean"),
    ],
)
def test_format_errors(text, msg):
    with pytest.raises(ProblemFormatError) as info:
        problem_from_dict(make(text, "(const real 1)"))
    assert msg in str(info.value)


def test_file_level_errors(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    with pytest.raises(ProblemFormatError, match="invalid JSON"):
        load_problem(f)
    with pytest.raises(ProblemFormatError, match="cannot read"):
        load_problem(tmp_path / "missing.json")
    f.write_text(
        json.dumps({"domain": [["x", "real", [1, 0]]], "formula": "(const bool true)", "weights": "(const real 1)"})
    )
    with pytest.raises(ProblemFormatError, match="empty bounds"):
        load_problem(f)
    f.write_text(json.dumps({"domain": [], "formula": "(const bool true)"}))
    with pytest.raises(ProblemFormatError, match="missing key 'weights'"):
        load_problem(f)
    f.write_text(
        json.dumps(
            {
                "domain": [["x", "real", [0, 1]]],
                "formula": "(const bool true)",
                "weights": "(^ (var real x) (const real 0.5))",
            }
        )
    )
    with pytest.raises(ProblemFormatError, match="non-negative integer"):
        load_problem(f)


def test_parse_sexpr_nesting():
    assert parse_sexpr("(a (b c) d)") == ["a", ["b", "c"], "d"]

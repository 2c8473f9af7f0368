"""Hostile numbers in causal programs (issue 16, item 6): a division by zero reachable from the
`requires` region is a located error; divisions that are never reached with a zero divisor are
fine; a literal beyond the largest float (1e400) is a legal exact number, and the program that
uses it is analysed (and found biased) like any other."""

from __future__ import annotations

import json

import pytest
from hostile_lib import run_cli

HEAD = (
    "program c(x1: real, sex: int)\n"
    "  requires 0 <= x1 && x1 <= 1 && (sex == 0 || sex == 1)\n"
    "  ensures independent(out, sex)\n{\n"
)


def _file(tmp_path, body):
    f = tmp_path / "c.prob"
    f.write_text(HEAD + body + "}\n")
    return str(f)


@pytest.mark.parametrize("cmd", ["prove", "fairness"])
def test_reachable_division_by_zero_is_a_located_error(tmp_path, capsys, cmd):
    f = _file(tmp_path, "  y := x1 / (sex - 1);\n  if (y > 0) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(capsys, [cmd, f, "--timeout", "60"] + (["--jobs", "1"] if cmd == "fairness" else []))
    assert code == 2, out + err
    assert err.startswith(f"{f}:5:8: error: division by zero"), err
    assert "sex = 1" in err


@pytest.mark.parametrize(
    "body",
    [
        "  z := sex == 1 ? 0 : x1 / (sex - 1);\n",
        "  if (x1 > 5) { z := 1 / (sex - 1); } else { z := 0; }\n",
        "  z := x1 > 2 && 1 / (x1 - 3) > 0 ? 1 : 0;\n",
    ],
)
def test_unreachable_division_by_zero_is_no_error(tmp_path, capsys, body):
    f = _file(tmp_path, body + "  if (x1 + 2 * sex > 1.5) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(capsys, ["prove", f, "--timeout", "60", "--json"])
    assert code == 3, out + err  # biased: sex = 1 adds 2 to the score
    assert json.loads(out)["verdict"] == "violated"


def test_division_after_an_assume_that_excludes_zero(tmp_path, capsys):
    f = _file(tmp_path, "  assume(sex == 0);\n  z := x1 / (sex - 1);\n  if (z > 0) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(capsys, ["prove", f, "--timeout", "60"])
    assert code in (0, 1, 3) and "division by zero" not in err, out + err


def test_huge_literal_is_a_legal_number_and_the_bias_is_found(tmp_path, capsys):
    f = _file(tmp_path, "  score := x1 + 1e400 * sex - 0.5;\n  if (score > 0) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(capsys, ["prove", f, "--timeout", "60", "--json"])
    assert code == 3, out + err
    data = json.loads(out)["programs"][0]
    assert data["verdict"] == "violated"
    mass = data["biased_mass"]
    assert 0.49 <= mass["lower"] <= 0.5 <= mass["upper"]  # x1 <= 0.5: sex = 0 gives 0, sex = 1 gives 1


def test_exact_evaluation_does_not_touch_an_untaken_division():
    from fractions import Fraction

    from tamp.causal import terms as T
    from tamp.causal.dag import compile_dag, evaluate

    x = T.Input("x", "real")
    div = T.Op("/", (T.const(1, "int"), T.const(0, "int")), "real")
    ite = T.op("ite", T.op(">", x, T.const(5, "int")), div, T.const(0, "int"))
    dag = compile_dag([ite])
    assert evaluate(dag, {"x": Fraction(1)}) == [0]
    with pytest.raises(ZeroDivisionError):
        evaluate(dag, {"x": Fraction(6)})


@pytest.mark.parametrize("given, vary", [("x1 == 0.3 && sex == 0", "sex"), ("x1 == 0.3 && sex == 1", "x1")])
def test_query_whose_scenario_divides_by_zero_is_a_located_error(tmp_path, capsys, given, vary):
    f = _file(tmp_path, "  y := x1 / (sex - 1);\n  if (y > 0) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(capsys, ["query", f, "--given", given, "--vary", vary, "--would", "out == 0"])
    assert code == 2 and err.startswith(f"{f}:5:8: error: division by zero"), out + err


def test_query_away_from_the_zero_divisor_still_answers(tmp_path, capsys):
    f = _file(tmp_path, "  y := x1 / (sex - 1);\n  if (y > 0) { out := 1; } else { out := 0; }\n")
    code, out, err = run_cli(
        capsys, ["query", f, "--given", "x1 == 0.3 && sex == 0", "--vary", "x1", "--would", "out == 0"]
    )
    assert code == 0 and out.startswith("yes:"), out + err  # sex = 0: y = -x1 <= 0 everywhere

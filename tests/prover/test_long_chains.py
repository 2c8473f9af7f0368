"""A linear model with 1,001 features (a flat sum of 1,001 terms) is proved, not refused as
"nested too deeply"; cross-checked by simulation."""

from __future__ import annotations

import pytest

from lang.parser import parse
from lang.recursion import deep_recursion
from tamp.prover import prove_program


def linear_model(n: int) -> str:
    terms = " + ".join(f"{k % 7 + 1} * x[{k}]" for k in range(n))
    return f"""program lin(x: real[], eps: real, p: real)
  requires eps > 0 && p > 0 && p <= 1
  ensures abs(y - s) <= 1 / eps * log(1 / p)
  fails p
{{
  s := {terms};
  y ~ lap(s, 1 / eps);
}}
"""


def test_a_1001_feature_linear_model_is_proved_and_simulates_consistently():
    text = linear_model(1001)
    prog = parse(text, "lin.prob").programs[0]
    r = prove_program(prog, path="lin.prob", source=text, timeout=300)
    assert r.verdict == "proved", r.message
    sim = pytest.importorskip("tamp.simulation")
    for xs, eps, p in (([1] * 1001, 1, 0.1), ([(k % 5) - 2 for k in range(1001)], 0.5, 0.3)):
        with deep_recursion():  # as under the CLI: the simulator's evaluator recurses
            s = sim.simulate(text, {"x": xs, "eps": eps, "p": p}, runs=3000, seed=1)
        assert s.ci[0] <= float(s.bound_value)

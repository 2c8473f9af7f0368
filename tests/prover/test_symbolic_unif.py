"""Draws ``unif(lo, hi)`` over a range of the inputs (:mod:`axioms.uniform_range`): the union
bound pays ``f`` for the low end, the high end or both ends of the range, with ``f`` a share of
the claim's bound; the per-iteration composition then multiplies it over retries. True claims
written several ways are proved (and re-checked from their certificates); their off-by-one
siblings are not. The dev files and good_pivot_some are cross-checked by simulation at their
recorded inputs."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from lang.parser import parse, parse_file
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

SELECTION = BENCHMARKS / "prover4" / "dev" / "blind3" / "selection"

CENTRAL = """
program central(n: int)
  requires n >= 1
  ensures found
  fails 0.5
{{
  found := false;
  r ~ unif(1, n);
  {test}
}}
"""

#: the central half of the ranks, written three ways
CENTRAL_TESTS = [
    "big := max(r - 1, n - r); if (4 * big <= 3 * n) { found := true; }",
    "if (4 * (r - 1) <= 3 * n && 4 * (n - r) <= 3 * n) { found := true; }",
    "found := 4 * r > n && 4 * r < 3 * n + 4;",
]

LOW_END = """
program low_end(m: int, k: int)
  requires 1 <= k && k <= m
  ensures x >= k
  fails {bound}
{{
  x ~ unif(0, m - 1);
}}
"""

HIGH_END = """
program high_end(size: int, top: int)
  requires 1 <= top && top < size
  ensures !(guess > size - top)
  fails {bound}
{{
  base := 1;
  guess ~ unif(base, size);
}}
"""

RETRY = """
program retry(n: int, a: int, K: int)
  requires n >= 3 && a >= 1 && 2 * a < n && K >= 1
  ensures good
  fails pow(2 * a / n, {exponent})
{{
  good := false;
  for t in 0..K {{
    if (!good) {{
      pivot ~ unif(1, n);
      if (pivot > a && pivot <= n - a) {{ good := true; }}
    }}
  }}
}}
"""


def _prove(text: str, timeout: float = 60):
    prog = parse(text, "t.prob").programs[0]
    return prove_program(prog, path="t.prob", source=text, timeout=timeout)


@pytest.mark.parametrize("test", CENTRAL_TESTS)
def test_a_random_pivot_is_central_with_probability_one_half(test):
    r = _prove(CENTRAL.format(test=test))
    assert r.verdict == "proved", r.render_text()


@pytest.mark.parametrize("test", CENTRAL_TESTS)
def test_the_central_half_is_not_missed_with_probability_below_0_4(test):
    # n = 9: ranks 1, 2, 8, 9 are not central, 4/9 > 0.4
    r = _prove(CENTRAL.format(test=test).replace("fails 0.5", "fails 0.4"), timeout=10)
    assert r.verdict != "proved"


def test_the_low_end_of_a_range_starting_at_zero():
    assert _prove(LOW_END.format(bound="k / m")).verdict == "proved"
    # off by one: x < k has k points of m
    assert _prove(LOW_END.format(bound="(k - 1) / m"), timeout=10).verdict != "proved"


def test_the_high_end_of_a_range_whose_bound_is_a_variable():
    assert _prove(HIGH_END.format(bound="1 - (size - top) / size")).verdict == "proved"
    assert _prove(HIGH_END.format(bound="(top - 1) / size"), timeout=10).verdict != "proved"


def test_retries_of_a_central_pivot_multiply():
    r = _prove(RETRY.format(exponent="K"))
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "product"
    # one try too many: n = 10, a = 3, K = 2 misses with probability 0.36 > 0.216
    assert _prove(RETRY.format(exponent="K + 1"), timeout=10).verdict != "proved"


def test_good_pivot_some():
    path = SELECTION / "good_pivot_some.prob"
    src = parse_file(str(path))
    r = prove_program(src.programs[0], path=str(path), source=src.text, timeout=60)
    assert r.verdict == "proved", r.render_text()
    for given in inputs_for(str(path)):
        assert simulate(str(path), given, runs=4000, seed=7).verdict == "consistent", given
    false = SELECTION / "good_pivot_some_false.prob"
    src = parse_file(str(false))
    assert prove_program(src.programs[0], path=str(false), source=src.text, timeout=10).verdict != "proved"


MIN_HASH = """
program min_hash(n: int, M: int, a: int)
  requires n >= 1 && M >= 1 && a >= 0 && a < M
  ensures smallest > a
  fails {bound}
{{
  smallest := M;
  for i in 0..n {{
    h ~ unif(1, M);
    smallest := min(smallest, h);
  }}
}}
"""


def test_a_draw_in_a_loop_gets_its_share_of_the_bound():
    # the loop's union bound needs f = a / M per draw: β = n * a / M with the factor n taken out
    r = _prove(MIN_HASH.format(bound="n * a / M"))
    assert r.verdict == "proved", r.render_text()
    # n = 1, a = 1, M = 2: the one draw is 1 with probability 1/2 > 0
    assert _prove(MIN_HASH.format(bound="(n - 1) * a / M"), timeout=10).verdict != "proved"


def test_factor_shares():
    from lang.parser import parse_expr
    from lang.printer import print_expr
    from tamp.prover.trace.candidates import factor_shares

    assert [print_expr(f) for f in factor_shares(parse_expr("n * a / M"))] == ["a / M", "n / M", "1 / M"]
    assert [print_expr(f) for f in factor_shares(parse_expr("k * n * q"))] == ["n * q", "k * q", "k * n"]
    assert factor_shares(parse_expr("0.5")) == [] and factor_shares(parse_expr("2 * 3")) == []


WINDOW = """
program window(n: int, a: int, b: int)
  requires n >= 2 && a >= 0 && b >= 0 && a + b < n
  ensures {ensures}
  fails {bound}
{{
  r ~ unif(1, n);
  {body}
}}
"""

#: the window a < r <= n - b (not centred), written three ways
WINDOW_BODIES = [
    ("good", "good := r > a && r <= n - b;"),
    ("!bad", "bad := false; if (r <= a || n - b < r) { bad := true; }"),
    ("inside", "inside := !(a >= r) && !(r >= n - b + 1);"),
]


@pytest.mark.parametrize("ensures,body", WINDOW_BODIES)
def test_a_window_read_off_the_programs_tests(ensures, body):
    r = _prove(WINDOW.format(ensures=ensures, body=body, bound="(a + b) / n"))
    assert r.verdict == "proved", r.render_text()


@pytest.mark.parametrize("ensures,body", WINDOW_BODIES)
def test_a_window_one_point_too_small_is_not_proved(ensures, body):
    # n = 4, a = 1, b = 1: ranks 1 and 4 miss, 1/2 > 1/4
    text = WINDOW.format(ensures=ensures, body=body, bound="(a + b - 1) / n").replace(
        "a + b < n", "a + b < n && a + b >= 1"
    )
    assert _prove(text, timeout=10).verdict != "proved"


def test_window_proposals_are_capped():
    from lang import ast as A
    from lang.parser import parse_expr
    from tamp.prover.trace.candidates import MAX_WINDOWS, window_parameters

    stmt = A.Sample((A.Var("r"),), parse_expr("unif(1, n)"))
    atoms = [parse_expr(f"r > a{i}") for i in range(10)]
    got = window_parameters(stmt, atoms)
    assert len(got) == MAX_WINDOWS
    # the one-sided cuts come first: a test on one side alone is never crowded out
    assert [t2 for _t1, t2 in got[:10]] == [parse_expr("n + 1")] * 10


DEV = BENCHMARKS / "prover4" / "dev" / "uniform"


def test_dev_claims_are_proved_and_their_false_siblings_are_in_the_soundness_harness():
    import json
    import sys

    for path in sorted(DEV.glob("*.prob")):
        src = parse_file(str(path))
        r = prove_program(src.programs[0], path=str(path), source=src.text, timeout=10 if "_false" in path.name else 60)
        assert (r.verdict == "proved") == ("_false" not in path.name), (path.name, r.render_text())
        # cross-checked: simulation at the recorded inputs agrees (a proved bound holds, a false one is refuted)
        want = "refuted" if "_false" in path.name else "consistent"
        assert inputs_for(str(path)), path.name
        for given in inputs_for(str(path)):
            assert simulate(str(path), given, runs=4000, seed=7).verdict == want, (path.name, given)
    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    for f in sorted(DEV.glob("*_false*.prob")):
        rel = f.relative_to(BENCHMARKS).as_posix()
        assert rel in listed and benchmark_inputs(rel), rel
    assert {p.name for p in DEV.glob("*.prob")} == set(json.loads((DEV / "inputs.json").read_text()))

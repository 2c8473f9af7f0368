"""Which programs compute sums of independent draws: independence is established, not assumed."""

import pytest

from lang import ast as A
from lang.parser import parse
from lang.typecheck import check_file
from tamp.cfa import build_cfa
from tamp.prover.concentration.proof import claim_of
from tamp.prover.concentration.shapes import NotApplicable
from tamp.show import show_expr


def _claim(body, ensures="abs(t - x) <= 100", params="x: real, n: int, p: real", requires="n >= 1 && p > 0 && p <= 1"):
    src = parse(f"program c({params}) requires {requires} ensures {ensures} fails p {{ {body} }}")
    check_file(src)
    prog = src.programs[0]
    return claim_of(prog, build_cfa(prog))


def test_straight_line_sum_is_one_sum_of_three_draws():
    c = _claim("a ~ lap(x, 1); b ~ lap(0, 2); d ~ lap(1, 1); t := a + b + d;")
    assert len(c.sums) == 1 and len(c.sums[0].blocks) == 3


def test_loop_sum_and_average():
    c = _claim("s := 0; i := 0; while (i < n) { y ~ gauss(x, 2); s := s + y; i := i + 1; } t := s / n;")
    (s,) = c.sums
    assert s.family == "gauss" and len(s.blocks) == 1
    assert any(name == "divisor" for name, _ in c.side) and any(name == "loop runs" for name, _ in c.side)


def test_count_of_bernoulli_indicators():
    c = _claim("t := 0; for i in 0..n { f ~ bern(0.25); if (f) { t := t + 1; } }")
    assert c.sums[0].family == "bernoulli"


@pytest.mark.parametrize(
    "body,why",
    [
        ("a ~ lap(0, 1); b ~ lap(x, abs(a) + 1); t := b;", "not deterministic"),  # scale depends on a draw
        ("t := 0; i := 0; while (i < n) { y ~ lap(0, i + 1); t := t + y; i := i + 1; }", "last iteration"),
    ],
)
def test_dependent_or_unsupported_values_are_not_sums(body, why):
    with pytest.raises(NotApplicable) as info:
        _claim(body)
    assert why in str(info.value)


@pytest.mark.parametrize(
    "body,count",
    [
        ("a ~ lap(x, 1); g ~ gauss(0, 1); t := a + g;", 2),  # mixed families: each its own sum
        ("a ~ lap(x, 1); t := a * a;", 1),  # nonlinear: a function of the one sum
    ],
)
def test_functions_of_sums_are_formulas_over_each_sum(body, count):
    # no longer one sum (session 19): the value is a formula over the sums it reads, each
    # given its own rule in the proof (a union bound), never merged
    c = _claim(body)
    assert len(c.sums) == count
    assert all(len(s.blocks) == 1 for s in c.sums)


def test_one_draw_added_in_every_iteration_is_the_draw_times_the_trip_count():
    """``t := t + z`` of a draw made before the loop is n·z: one draw with coefficient n (a
    cluster's shared draw), never n independent draws."""
    c = _claim("z ~ lap(0, 1); t := 0; i := 0; while (i < n) { t := t + z; i := i + 1; }")
    assert len(c.sums) == 1 and c.sums[0].blocks[0].count == A.num(1)
    assert "n * S$1" in show_expr(c.post)


@pytest.mark.parametrize(
    "body",
    [
        "a ~ lap(x, 1); t := a + a;",  # one draw twice
        "a ~ lap(x, 1); b := a; t := a + b;",  # a copy of it
        "f ~ bern(0.5); t := 0; if (f) { t := t + 1; } if (f) { t := t + 1; }",  # one flag counted twice
    ],
)
def test_one_draw_twice_is_twice_one_draw(body):
    """A draw added to itself is 2·(the draw): one draw (one block of count 1) with coefficient
    2, never two independent draws (whose sum would concentrate better)."""
    c = _claim(body)
    assert len(c.sums) == 1 and len(c.sums[0].blocks) == 1
    assert c.sums[0].blocks[0].count == A.num(1)
    assert "2 * S$1" in show_expr(c.post)


@pytest.mark.parametrize(
    "body,why",
    [
        ("a ~ lap(x, 1); assume(a > 0); t := a;", "assume"),
        ("t := 0; i := 0; while (i < n) { y ~ lap(0, 1); t := t + y; i := i + 2; }", "must end with"),
        ("t := 0; i := 0; while (t < n) { y ~ lap(0, 1); t := t + y; i := i + 1; }", "must end with"),
        ("t := 0; i := 0.5; while (i < n) { y ~ lap(0, 1); t := t + y; i := i + 1; }", "must be integers"),
        ("t := 0; i := 0; while (i < n + 0.5) { y ~ lap(0, 1); t := t + y; i := i + 1; }", "must be integers"),
    ],
)
def test_unsupported_shapes(body, why):
    with pytest.raises(NotApplicable) as info:
        _claim(body)
    assert why in str(info.value)

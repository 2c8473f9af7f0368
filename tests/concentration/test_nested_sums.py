"""Sums over nested counted loops (tamp.cfa.sums, session 22): a count raised in the inner body
of two counted loops is a sum over the product of the index ranges; an inner bound that reads
the outer counter gives Σ over the outer of the inner counts; a draw of the OUTER body read in
every inner iteration (a cluster's shared draw) is one term scaled by the inner trip count —
never inner-count independent terms."""

import pytest

from lang import ast as A
from lang.parser import parse
from lang.typecheck import check_file
from tamp.cfa import build_cfa
from tamp.prover.concentration.proof import claim_of
from tamp.prover.concentration.shapes import NotApplicable
from tamp.show import show_expr

PARAMS = "m: int, n: int, p: real, t: real"
REQ = "m >= 1 && n >= 1 && p >= 0 && p <= 1"


def _claim(body, ensures="k < t"):
    # one loop a line: the analysis finds a loop's head in the CFA by its line
    body = body.replace("for b", "\nfor b").replace("while (j", "\nwhile (j")
    src = parse(f"program c({PARAMS}) requires {REQ} ensures {ensures} fails p {{ {body} }}")
    check_file(src)
    prog = src.programs[0]
    return claim_of(prog, build_cfa(prog))


def _blocks(c):
    (s,) = c.sums
    return s.family, [(show_expr(b.count), show_expr(b.param)) for b in s.blocks]


def test_fresh_inner_draws_are_m_times_n_terms():
    c = _claim("k := 0; for a in 0..m { for b in 0..n { x ~ bern(p); if (x) { k := k + 1; } } }")
    assert _blocks(c) == ("bernoulli", [("m * n", "p")])


def test_nested_while_loops_are_m_times_n_terms():
    body = "k := 0; i := 0; while (i < m) { j := 0; while (j < n) { x ~ bern(p); if (x) { k := k + 1; } j := j + 1; } i := i + 1; }"
    assert _blocks(_claim(body)) == ("bernoulli", [("m * n", "p")])


def test_cluster_draw_is_m_terms_of_width_n_not_m_times_n():
    c = _claim("k := 0; for a in 0..m { g ~ bern(p); for b in 0..n { if (g) { k := k + 1; } } }")
    family, blocks = _blocks(c)
    assert family == "bounded" and len(blocks) == 1
    count, width = blocks[0]
    assert count == "m" and "n" in width  # m terms of range n: Σ count·w² = m n²


def test_inner_draw_and_cluster_draw_in_one_event_is_not_a_sum():
    body = "k := 0; for a in 0..m { g ~ bern(p); for b in 0..n { x ~ bern(p); if (x && g) { k := k + 1; } } }"
    with pytest.raises(NotApplicable):
        _claim(body)


def test_triangular_loop_counts_the_pairs():
    c = _claim("k := 0; for a in 0..m { for b in 0..a { x ~ bern(p); if (x) { k := k + 1; } } }")
    (s,) = c.sums
    (b,) = s.blocks
    assert not any(isinstance(x, A.Sum) for x in A.walk(b.count))  # closed: m (m - 1) / 2
    assert "m - 1" in show_expr(b.count)

"""The conjunct split (:mod:`tamp.prover.conjuncts`): conjuncts read through ``&&`` and De
Morgan; a conjunct that holds on every run is proved with bound 0 and the rest with the claim's
bound; a side fact that is not sure, or a claim that needs both chances, is not proved."""

from __future__ import annotations

from lang.parser import parse, parse_expr
from tamp.cfa.conjuncts import conjuncts, splittable
from tamp.prover.portfolio import Concentration, Conjuncts, UnionBound, prove_claim


def _prog(src: str):
    return parse(src).programs[0]


def test_conjuncts_are_read_through_and_and_de_morgan():
    e = parse_expr("a && (b && !(c || !d)) && a")
    assert conjuncts([e, parse_expr("x == 1")]) == [
        parse_expr("a"),
        parse_expr("b"),
        parse_expr("!c"),
        parse_expr("d"),
        parse_expr("x == 1"),
    ]
    assert conjuncts([parse_expr("a || b")]) == [parse_expr("a || b")]


def test_one_conjunct_is_not_split():
    prog = _prog("program p(q: real) requires q >= 0 && q <= 1 ensures !(y || y) fails q { y ~ bern(q); }")
    assert not splittable(prog)


COUNT = """program det(n: int, o: real, t: real, len: real)
  requires n >= 1 && o >= 0 && o <= 1 && t > 0 && len > 0
  ensures  {post}
  fails    exp(-2 * t * t / n)
{{
  c := 0;
  busy := 0;
  for i in 0..n {{
    occ ~ bern(o);
    if (occ) {{ c := c + 1; busy := busy + len + len; }}
  }}
}}
"""


def _prove(src: str, strategies):
    prog = _prog(src)
    return prove_claim(prog, None, None, "t.prob", src, strategies=strategies)[0]


def test_a_sure_side_fact_is_split_off():
    src = COUNT.format(post="!(c > n * o + t || busy != 2 * c * len)")
    assert _prove(src, [Concentration()]).verdict == "unknown"
    res = _prove(src, [Concentration(), Conjuncts()])
    assert res.verdict == "proved" and res.stats["method"] == "conjuncts", res.message
    assert "busy != 2 * c * len" in res.message


def test_a_side_fact_that_is_not_sure_is_not_split_off():
    # busy <= n * len fails whenever more than half the slots are occupied
    src = COUNT.format(post="c <= n * o + t && busy <= n * len")
    res = _prove(src, [Concentration(), Conjuncts()])
    assert res.verdict == "unknown"
    assert "conjunct split: no conjunct of the postcondition was proved to hold on every run" in res.message


FLAGS = """program two(p: real, n: int)
  requires p >= 0 && p <= 1 && n >= 1
  ensures  !a && !b && seen == n
  fails    {bound}
{{
  a ~ bern(p);
  b ~ bern(p);
  seen := 0;
  for i in 0..n {{ seen := seen + 1; }}
}}
"""


def test_two_chances_are_not_proved_with_one_of_them():
    res = _prove(FLAGS.format(bound="p"), [UnionBound(), Conjuncts()])
    assert res.verdict == "unknown"
    # the split says what the rest's methods said
    assert "`seen == n` holds on every run, but the rest `!a && !b` was not proved" in res.message


def test_two_chances_are_proved_with_their_sum():
    assert _prove(FLAGS.format(bound="2 * p"), [UnionBound(), Conjuncts()]).verdict == "proved"


WAIT = """program wait(p: real, q: real)
  requires {req} && p <= 1 && q >= 0 && q <= 1
  ensures  !bad && k >= 1
  fails    q
{{
  bad ~ bern(q);
  k := 0;
  done := false;
  while (!done) {{
    done ~ bern(p);
    k := k + 1;
  }}
}}
"""


def test_a_sure_conjunct_needs_termination():
    # k >= 1 holds whenever the loop ends; with p = 0 allowed it need not end, and bound 0 fails
    res = _prove(WAIT.format(req="p > 0"), [Concentration(), Conjuncts()])
    assert res.verdict == "proved" and res.stats["method"] == "conjuncts", res.message
    res = _prove(WAIT.format(req="p >= 0"), [Concentration(), Conjuncts()])
    assert res.verdict == "unknown"
    assert "no conjunct of the postcondition was proved to hold on every run" in res.message

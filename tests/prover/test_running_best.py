"""One-pass top-k scans: running-best invariants for more than one tracked index (issue 18,
item 4; :func:`tamp.prover.selection.argmax.ranked_candidates`).

``if (b1 == -1 || a[i] > a[b1]) { b2 := b1; b1 := i; } else { if (b2 == -1 || a[i] > a[b2]) {
b2 := i; } }`` keeps the best and the runner-up; the loop invariant needs the runner-up's
comparison over every iteration but the best's (``forall j in 0..i: j != b1 ==> a[j] <= a[b2]``)
and that the runner-up has left its sentinel after two iterations (``1 < i ==> 0 <= b2``). The
programs in ``running_best/`` vary the names, the sentinel (0 before a one-based range), the
comparison (``<=``, a minimum), the loop form (``while``) and the noise scale; the false
variants (a margin of one tail, a runner-up that is never updated after the first time) must
stay unknown, and the simulator refutes them.

Peeling top-k with fresh noise per round keeps one running best over the elements a filter lets
through (``if (avail[t] && (c == -1 || z > top))``, :func:`tamp.prover.selection.argmax.filtered_candidates`):
``peel_avail`` (a positive filter, other names and scales) and its false variant."""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest
from limits import FALSE_CLAIM_S

from lang.parser import parse_file
from tamp.prover import prove_program
from tamp.simulation import simulate
from tests.support.certificates import check_proof, proved_certificate

HERE = Path(__file__).resolve().parent
SHAPES = HERE / "running_best"
CORPUS = HERE.parents[1] / "benchmarks" / "corpus" / "top_k"


def _q(values):
    return [F(str(v)) for v in values]


def _prove(path: Path, timeout: float = 120):
    src = parse_file(str(path))
    return prove_program(src.programs[0], timeout=timeout, path=str(path), source=src.text)


#: true claims, each with two input sets where simulation must be consistent
TRUE = {
    "bottom2_while": [
        dict(w=_q([0, 0, 5, 5, 5, 5]), n=6, eps=F(1), p=F(1, 10)),
        dict(w=_q([3, 1, 2]), n=3, eps=F(2), p=F(1, 2)),
    ],
    "peel_avail": [
        dict(w=_q([0, 0, 0, 0, 0, 0, 12, 12, 12, 12, 12, 12]), m=12, k=3, eps=F(1), p=F(1, 10)),
        dict(w=_q([5, 1, 3]), m=3, k=2, eps=F(2), p=F(1, 2)),
    ],
    "top2_from_one": [
        dict(h=_q([100, 4, 4, 0, 0, 0]), n=6, eps=F(1), p=F(1, 10)),
        dict(h=_q([0, 1, 2, 3]), n=4, eps=F(1, 2), p=F(1, 2)),
    ],
}

#: false claims, each with an input set where simulation refutes them
FALSE = {
    "peel_avail_false": dict(w=_q([0, 0, 0, 0, 0, 0, 12, 12, 12, 12, 12, 12]), m=12, k=3, eps=F(1), p=F(1, 10)),
    "top2_runnerup_stale_false": dict(q=_q([100, 0, 0, 0, 100]), n=5, eps=F(1), p=F(1, 10)),
}


@pytest.mark.parametrize("name", sorted(TRUE))
def test_one_pass_top2_shape_is_proved_and_consistent(name):
    path = SHAPES / f"{name}.prob"
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    for inputs in TRUE[name]:
        sim = simulate(path, inputs, runs=4000, seed=3)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_one_pass_top2_is_not_proved_and_is_refuted(name):
    path = SHAPES / f"{name}.prob"
    r = _prove(path, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    sim = simulate(path, FALSE[name], runs=20000, seed=5)
    assert sim.verdict == "refuted", sim.render_text()


@pytest.mark.parametrize("name", ["top2_onepass", "topk_rounds"])
def test_corpus_running_best_and_its_false_sibling(name):
    r = _prove(CORPUS / f"{name}.prob")
    assert r.verdict == "proved", r.render_text()
    r = _prove(CORPUS / f"{name}_false.prob", timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()


@pytest.mark.parametrize("name", ["bottom2_while", "peel_avail"])
def test_running_best_certificate_is_rechecked(tmp_path, capsys, name):
    path = SHAPES / f"{name}.prob"
    cert = proved_certificate(path)
    status, out = check_proof(cert, path, tmp_path, capsys)
    assert status == 0, out


def _ranked(text: str):
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.prover.loops.prove import _loops
    from tamp.prover.selection.argmax import ranked_candidates
    from tamp.show import show_expr

    cfa = build_cfa(parse(text).programs[0])
    loops, _dag = _loops(cfa)
    return {show_expr(c) for c in ranked_candidates(cfa, loops)}


def test_ranked_candidates_guard_the_runner_up_by_the_best():
    shown = _ranked((SHAPES / "top2_from_one.prob").read_text())
    assert "forall j$ in 1..i: j$ != f ==> g[j$] <= g[s]" in shown
    assert "2 < i ==> 1 <= s" in shown
    assert "1 < i ==> 1 <= f" in shown
    assert not any("j$ != s" in c for c in shown)  # the best is not guarded by the runner-up


def test_filtered_candidates_tie_the_filter_to_the_index():
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.prover.loops.prove import _loops
    from tamp.prover.selection.argmax import filtered_candidates
    from tamp.show import show_expr

    cfa = build_cfa(parse((SHAPES / "peel_avail.prob").read_text()).programs[0])
    loops, _dag = _loops(cfa)
    shown = {show_expr(c) for c in filtered_candidates(cfa, loops, [])}
    assert "forall v$ in 0..t: avail[v$] ==> c != -1" in shown


def test_a_single_running_best_has_no_ranked_candidates():
    text = """program argmaxScan(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall j in 0..n: q[b] >= q[j] - 2 / eps * log(n / p)
  fails    p
{
  b := -1;
  for i in 0..n {
    a[i] ~ lap(q[i], 1 / eps);
    if (b == -1 || a[i] > a[b]) {
      b := i;
    }
  }
}
"""
    assert _ranked(text) == set()

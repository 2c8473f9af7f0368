"""Selection mechanisms in shapes users write, beyond the corpus files (issue 18, item 4).

Report noisy max over an array of scores, unrolled: ``b := 3`` in the branch of candidate 3
records the winner's index, and the claim speaks of ``q[b]``. With k >= 6 candidates the
prover labels the CFA itself (2^(k-1) traces are too many), which needs the fact of the
winning draw carried to the index it copied (``a3 - q[3] <= M`` read as ``best - q[b] <= M``,
:mod:`tamp.prover.loops.branch_copies`). The programs are generated here for other k, the other
direction (argmin), the candidates in reverse order, other noise scales and margins; the
false variants (too small a margin, a wrong index recorded) must stay unknown and the
simulator refutes them.

The loop shapes are files in ``selection_shapes/``: the exponential mechanism with its utility
written inline over the candidate (``exp(-abs(r - t), 2 / eps)``: the loop fact
``forall j in 0..r: best >= -abs(j - t)`` reads the counter as a value, not as an index),
counting down, one-based, another utility; and sparse vector with cut-off c and the threshold
redrawn after each "above", its claim over ``0..last`` with ``last := i`` after the loop (the
invariant is the claim as it reads at the loop's exit)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from limits import FALSE_CLAIM_S

from lang.parser import parse_file
from tamp.prover import prove_program
from tamp.simulation import simulate


def noisy_max(
    k: int,
    *,
    scale: str = "1 / eps",
    margin: str = "2 / eps * log({k} / p)",
    argmin: bool = False,
    reverse: bool = False,
    cmp: str = ">",
    wrong: int | None = None,
) -> str:
    """Report noisy max (argmin: min) over ``q[0..k]`` unrolled; ``wrong``: the branch of that
    candidate records the index before it (a bug the claim must catch)."""
    order = list(range(k))[::-1] if reverse else list(range(k))
    op = {">": "<", ">=": "<="}[cmp] if argmin else cmp
    rel = f"q[b] <= q[j] + {margin}" if argmin else f"q[b] >= q[j] - {margin}"
    lines = [
        f"program noisySel{k}(q: real[], eps: real, p: real)",
        "  requires eps > 0 && 0 < p && p <= 1",
        f"  ensures  forall j in 0..{k}: {rel.format(k=k)}",
        "  fails    p",
        "{",
    ]
    lines += [f"  a{i} ~ lap(q[{i}], {scale});" for i in range(k)]
    lines += [f"  best := a{order[0]};", f"  b := {order[0]};"]
    for i in order[1:]:
        idx = i - 1 if wrong == i else i
        lines += [f"  if (a{i} {op} best) {{", f"    best := a{i};", f"    b := {idx};", "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sel.prob"
    path.write_text(text)
    return path


def _prove(path: Path, timeout: float = 120):
    src = parse_file(str(path))
    return prove_program(src.programs[0], timeout=timeout, path=str(path), source=src.text)


def _q(values):
    return [Fraction(str(v)) for v in values]


TRUE = {
    "argmax_k6": dict(k=6),
    "argmax_k7_scale2": dict(k=7, scale="2 / eps", margin="4 / eps * log({k} / p)"),
    "argmin_k6": dict(k=6, argmin=True),
    "argmax_k6_reverse_ge": dict(k=6, reverse=True, cmp=">="),
}


@pytest.mark.parametrize("name", sorted(TRUE))
def test_unrolled_noisy_max_over_an_array_is_proved_on_its_cfa(tmp_path, name):
    path = _write(tmp_path, noisy_max(**TRUE[name]))
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert r.stats["traces"] == 0  # the CFA was labelled, not the 2^(k-1) traces
    k = TRUE[name]["k"]
    for q in ([0] * k, [3] + [1] * (k - 1)):
        sim = simulate(path, {"q": _q(q), "eps": Fraction(1), "p": Fraction(1, 10)}, runs=4000, seed=3)
        assert sim.verdict == "consistent", sim.render_text()


FALSE = {
    # the margin of one draw's tail instead of two: a worse candidate wins too often
    "argmax_k6_one_tail": (dict(k=6, margin="1 / eps * log(1 / p)"), [5, 2, 2, 2, 2, 2]),
    "argmin_k6_one_tail": (dict(k=6, argmin=True, margin="1 / eps * log(1 / p)"), [0, 2.4, 2.4, 2.4, 2.4, 2.4]),
    # candidate 3's branch records index 2
    "argmax_k6_wrong_index": (dict(k=6, wrong=3), [0, 0, 0, 10, 0, 0]),
}


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_unrolled_noisy_max_is_not_proved_and_is_refuted(tmp_path, name):
    params, q = FALSE[name]
    path = _write(tmp_path, noisy_max(**params))
    r = _prove(path, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    sim = simulate(path, {"q": _q(q), "eps": Fraction(1), "p": Fraction(1, 10)}, runs=20000, seed=5)
    assert sim.verdict == "refuted", sim.render_text()


SHAPES = Path(__file__).resolve().parent / "selection_shapes"
F = Fraction

#: true claims, each with two input sets where simulation must be consistent
LOOP_TRUE = {
    "em_down": [dict(t=F("5.45"), m=11, eps=F(2), p=F(1, 10)), dict(t=F(-3), m=4, eps=F(1, 2), p=F(1, 2))],
    "em_onebased": [dict(t=F(7), m=6, eps=F(1), p=F(1, 10)), dict(t=F(-2), m=3, eps=F(2), p=F(1, 2))],
    "em_min": [dict(t=F("3.5"), m=8, eps=F(1), p=F(1, 10)), dict(t=F(0), m=2, eps=F(1, 2), p=F(1, 2))],
    "sc_scales": [
        dict(q=_q([4.5, -4.5, 4.5, -4.5]), n=4, c=2, T=F(0), eps=F(1), p=F(1, 2)),
        dict(q=_q([0, 100, 0, 100, 100]), n=5, c=3, T=F(50), eps=F(1), p=F(1, 10)),
    ],
    "sc_below": [
        dict(q=_q([4.5, -4.5, 4.5, -4.5]), n=4, c=2, T=F(0), eps=F(1), p=F(1, 2)),
        dict(q=_q([100, 0, 100, 0, 0]), n=5, c=3, T=F(50), eps=F(1), p=F(1, 10)),
    ],
}

#: false claims, each with an input set where simulation refutes them
LOOP_FALSE = {
    "em_down_false": dict(t=F("5.45"), m=11, eps=F(2), p=F(1, 10)),
    "sc_scales_false": dict(q=_q([4.5, -4.5, 4.5, -4.5]), n=4, c=2, T=F(0), eps=F(1), p=F(1, 2)),
}


@pytest.mark.parametrize("name", sorted(LOOP_TRUE))
def test_selection_loop_shape_is_proved_and_consistent(name):
    path = SHAPES / f"{name}.prob"
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    for inputs in LOOP_TRUE[name]:
        sim = simulate(path, inputs, runs=4000, seed=3)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", sorted(LOOP_FALSE))
def test_false_selection_loop_shape_is_not_proved_and_is_refuted(name):
    path = SHAPES / f"{name}.prob"
    r = _prove(path, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    sim = simulate(path, LOOP_FALSE[name], runs=20000, seed=5)
    assert sim.verdict == "refuted", sim.render_text()


def test_a_literal_index_copy_carries_the_fact_to_the_index():
    """``best := a3; b := 3``: the fact ``a3 - q[3] <= M`` is proposed as ``best - q[b] <= M``
    (and with only one of the two replaced), never with the 3 of other positions replaced."""
    from lang.parser import parse_expr
    from tamp.cfa import build_cfa
    from tamp.prover.loops.branch_copies import copied_facts
    from tamp.show import show_expr

    prog = parse_file_text(noisy_max(4))
    cfa = build_cfa(prog)
    fact = parse_expr("a3 - q[3] <= 3 / eps * log(3 / p)")
    shown = {show_expr(c) for c in copied_facts(cfa, [fact])}
    assert "best - q[b] <= 3 / eps * log(3 / p)" in shown
    assert "a3 - q[b] <= 3 / eps * log(3 / p)" in shown
    assert "best - q[3] <= 3 / eps * log(3 / p)" in shown
    assert not any("b / eps" in s or "log(b" in s for s in shown)


def parse_file_text(text: str):
    from lang.parser import parse

    return parse(text).programs[0]


def test_a_quantifier_over_a_literal_range_is_its_conjunction():
    """``forall j in 0..3: B`` is translated as ``B(0) && B(1) && B(2)`` (no quantifier for z3 to
    instantiate); over ``0..n`` it stays a quantifier. Both mean the same."""
    import z3

    from lang.parser import parse_expr
    from tamp.core.z3expr import Z3Translation

    q, n = z3.Array("q", z3.IntSort(), z3.RealSort()), z3.Int("n")
    lit = Z3Translation().translate(parse_expr("forall j in 0..3: q[j] > 0"), {"q": q})
    assert not z3.is_quantifier(lit)
    s = z3.Solver()
    s.add(z3.Not(lit == z3.And([z3.Select(q, k) > 0 for k in range(3)])))
    assert s.check() == z3.unsat
    some = Z3Translation().translate(parse_expr("exists j in 1..=2: q[j] > 0"), {"q": q})
    assert not z3.is_quantifier(some)
    s = z3.Solver()
    s.add(z3.Not(some == z3.Or(z3.Select(q, 1) > 0, z3.Select(q, 2) > 0)))
    assert s.check() == z3.unsat
    sym = Z3Translation().translate(parse_expr("forall j in 0..n: q[j] > 0"), {"q": q, "n": n})
    assert z3.is_quantifier(sym)


def test_the_claim_read_at_a_loop_exit_is_a_candidate():
    """``last := i`` after the loop: ``forall j in 0..last: …`` reads ``forall j in 0..i: …`` at
    the loop's exit, and is offered as a candidate (tail.py)."""
    from tamp.cfa import build_cfa
    from tamp.prover.concentration.tail import exit_candidates
    from tamp.prover.loops.prove import _loops
    from tamp.show import show_expr

    src = parse_file(str(SHAPES / "sc_scales.prob"))
    cfa = build_cfa(src.programs[0], None, "sc_scales.prob", src.text)
    loops, _dag = _loops(cfa)
    shown = [show_expr(c) for c in exit_candidates(cfa, loops, list(cfa.ensures))]
    assert len(shown) == 1 and shown[0].startswith("forall j in 0..i: (above[j] ==>"), shown


def test_a_proof_ends_at_its_deadline():
    """Houdini's queries get at most the time left, and no explanation starts after it: a run
    that cannot finish ends "unknown" close to its time limit.

    Measured in this process's CPU time, which is at most the wall-clock time the limit is in and
    does not grow when other processes load the machine: work past the deadline still counts."""
    import time

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus" / "sparse_vector" / "lyu_svt_false.prob"
    t0 = time.process_time()
    r = _prove(path, timeout=8)
    assert r.verdict == "unknown"
    assert time.process_time() - t0 < 8 + 4, "ran past its deadline"

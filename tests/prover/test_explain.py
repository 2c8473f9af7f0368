"""An "unknown" is explained in the user's terms (issue 18, item 5): the printed reason names a
file:line, says what was missing, says what the user can do, and never shows the automaton's
internal state names (``q13``) or CFA node numbers."""

import re

import pytest
from locations import BENCHMARKS

from lang.parser import parse, parse_expr, parse_file
from tamp.prover import prove_program
from tamp.prover.base.failure import NO_INVARIANT, NO_LOOP_FACT, FailedObligation, ProofFailure

STATE = re.compile(r"\bq\d+\b|node \d+|edge \d+->\d+")


def _unknown(path, bound=None, timeout=300):
    src = parse_file(str(path))
    r = prove_program(src.programs[0], parse_expr(bound) if bound else None, timeout, str(path), src.text)
    assert r.verdict == "unknown"
    return r, r.render_text()


@pytest.mark.parametrize(
    "rel, bound",
    [
        ("variants/aboveTn_nolog.prob", None),  # a loop: the missing conjunct after the loop
        ("variants/ex1_failsHalf.prob", None),  # straight-line: the sampling no axiom serves
        ("dp/noisyMax.prob", "p / 4"),  # a true postcondition with too small a bound
    ],
)
def test_unknown_names_a_line_and_no_automaton_state(rel, bound):
    path = BENCHMARKS / rel
    r, _text = _unknown(path, bound)
    assert r.failure is not None
    reason = r.failure.text()
    assert not STATE.search(reason), reason
    assert r.failure.stuck_at is not None, reason
    assert "what you can do" in reason
    from tamp.report.failed import failure_lines

    fl = failure_lines(r.failure, r.cfa)
    assert fl.stuck_at is not None
    lines = path.read_text().splitlines()
    assert 1 <= fl.stuck_at <= len(lines)


def test_printed_unknown_has_file_line_prefix(capsys):
    from tamp.cli import main

    path = BENCHMARKS / "variants" / "aboveTn_nolog.prob"
    code = main(["prove", "--timeout", "300", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(re.escape(str(path)) + r":\d+: ", out), out
    assert not STATE.search(out), out
    assert "not follow" in out


def test_loop_exit_failure_names_the_missing_conjunct_and_the_loop():
    r, _ = _unknown(BENCHMARKS / "variants" / "aboveTn_nolog.prob")
    f = r.failure
    assert f.kind in (NO_INVARIANT, NO_LOOP_FACT)
    src = (BENCHMARKS / "variants" / "aboveTn_nolog.prob").read_text().splitlines()
    line = f.loop_line if f.kind == NO_INVARIANT else f.line
    assert src[line - 1].lstrip().startswith("while")
    assert f"loop at line {line}" in f.text()
    if f.kind == NO_INVARIANT:
        assert f.missing and "forall j in 0..ans" in f.missing[0]


def test_needed_bound_is_shown_when_a_larger_one_is_provable(monkeypatch):
    """noisyMax holds with bound p; claimed with p / 4 the explanation says which bound a proof
    exists for (given the time to find it whatever the machine's load)."""
    import tamp.prover.infer.needed as E

    monkeypatch.setattr(E, "NEEDED_BOUND_S", 300.0)
    r, _ = _unknown(BENCHMARKS / "dp" / "noisyMax.prob", "p / 4", timeout=600)
    text = r.failure.text()
    assert r.failure.needed, text
    assert f"the bound needed is {r.failure.needed} but the claim says p / 4" in text


def test_obligation_text_is_in_user_terms():
    ob = FailedObligation("STEP", "q3->q4 x ~ lap(0, 1) (side, cost)", "invalid", 3, 4, 7, "x ~ lap(0, 1)")
    assert ob.text() == "the failure bound does not cover the axiom chosen for `x ~ lap(0, 1)` (line 7)"
    ex = FailedObligation("EXIT", "q9", "unknown", 9, None, 12)
    assert (
        ex.text()
        == "the postcondition does not follow at the end of the program (line 12) (the solver answered unknown)"
    )
    f = ProofFailure(NO_INVARIANT, missing=("s == n",), loop_line=4, hint="add an invariant")
    assert f.text().startswith("`s == n` does not follow at the end of the program: no invariant of the loop at line 4")
    assert f.stuck_at == 4
    assert f.text().endswith("what you can do: add an invariant")


def test_termination_failure_names_the_statement_not_edges():
    src = """program w(n: int, p: real) requires n >= 0 && p >= 0 && p <= 1 ensures true fails 0
{ i := 0;
  while (i < n) {
    c ~ bern(p);
    if (c) { i := i + 1; }
  }
}"""
    r = prove_program(parse(src).programs[0], source=src, timeout=20, path="w.prob")
    assert r.verdict == "unknown"
    assert r.failure.loop_line == 3
    assert not STATE.search(r.render_text()), r.render_text()


@pytest.mark.parametrize(
    "rel, timeout",
    [
        ("dp/unrolled/noisyMax_k8.prob", 0.5),  # straight-line: the time runs out choosing axioms
        ("dp/sparseVec.prob", 0.5),  # a loop: the time runs out in the loop prover
    ],
)
def test_a_timeout_names_a_line_and_what_to_do(rel, timeout):
    """A proof stopped by its time limit is an unknown like any other: it says the time ran out,
    where the work stood (a source line of the file), and that more time may help."""
    path = BENCHMARKS / rel
    src = parse_file(str(path))
    r = prove_program(src.programs[0], None, timeout, str(path), src.text)
    assert r.verdict == "unknown"
    assert r.failure is not None
    reason = r.failure.text()
    assert "time limit ran out" in reason and "--timeout" in reason, reason
    assert not STATE.search(reason), reason
    assert r.failure.stuck_at is not None and 1 <= r.failure.stuck_at <= len(path.read_text().splitlines())

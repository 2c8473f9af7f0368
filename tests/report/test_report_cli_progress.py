"""`tamp prove --report`, the progress line (tamp/progress.py) and reading a failed proof's trace."""

import io
import json

import pytest
from locations import REPO

from tamp.cli import main
from tamp.progress import Progress, ProgressEvent, for_terminal, wanted
from tamp.prover.base.failure import NO_AXIOM, NO_COMBINATION, ProofFailure, TraceStep, check_failure
from tamp.prover.trace.check import Obligation
from tamp.report.failed import failure_lines

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""


def test_prove_writes_the_report(tmp_path, capsys):
    src = tmp_path / "coin.prob"
    src.write_text(COIN)
    out = tmp_path / "coin.html"
    code = main(["prove", str(src), "--report", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert f"report: written to {out}" in printed and "coin: proved  Pr[fail] <= p" in printed
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "prog-coin-L5" in html and "<svg" in html
    assert f"tamp prove {src}" in html  # the command line is recorded


def test_report_with_json_keeps_stdout_json(tmp_path, capsys):
    src = tmp_path / "coin.prob"
    src.write_text(COIN)
    out = tmp_path / "r.html"
    code = main(["prove", str(src), "--json", "--report", str(out)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["verdict"] == "proved" and out.exists()


def test_unwritable_report_is_one_clear_error(tmp_path, capsys):
    src = tmp_path / "coin.prob"
    src.write_text(COIN)
    code = main(["prove", str(src), "--report", str(tmp_path / "no" / "such" / "dir.html")])
    err = capsys.readouterr().err
    assert code == 2
    # checked when the option is read, before the proof runs
    assert "argument --report: cannot write" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_unknown_verdict_still_writes_report(tmp_path, capsys):
    src = tmp_path / "half.prob"
    src.write_text(COIN.replace("fails p", "fails p / 2"))
    out = tmp_path / "half.html"
    assert main(["prove", str(src), "--report", str(out)]) == 1
    assert "failed-at" in out.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_and_never_with_json():
    assert for_terminal(False, io.StringIO()) is None
    assert for_terminal(True, FakeTTY()) is None
    assert not wanted(False, io.StringIO()) and wanted(False, FakeTTY())
    p = for_terminal(False, FakeTTY(), tick=0)
    assert isinstance(p, Progress)
    p.close()


def test_events_show_program_stage_and_what_is_known():
    assert (
        ProgressEvent("ex1", "synthesising axioms for 4 traces", traces=4).describe()
        == "ex1 · synthesising axioms for 4 traces"
    )
    assert ProgressEvent(stage="just text").describe() == "just text"


def test_structured_events_show_traces_depth_and_bound():
    line = ProgressEvent("ex2", "unrolling", traces_done=12, traces=40, depth=3, best_bound="0.05").describe()
    assert line == "ex2 · unrolling · traces 12/40 · depth 3 · best bound 0.05"


def test_progress_line_is_redrawn_and_erased():
    tty = FakeTTY()
    with Progress(tty, tick=0, width=60) as p:
        p(ProgressEvent("ex1", "synthesising axioms (2 traces)"))
        p(ProgressEvent("ex1", "checking", depth=2))
        assert "ex1 · checking · depth 2" in p.line()
    text = tty.getvalue()
    assert text.count("\r\033[K") == 3  # two draws and the final erase
    assert "ex1 · synthesising axioms (2 traces)" in text
    assert all(len(seg) <= 60 for seg in text.split("\r\033[K"))


def test_the_prover_reports_progress_through_the_callback():
    import tamp

    events = []
    r = tamp.prove(COIN, progress=events.append)
    assert r.verdict == "proved"
    assert events and all(isinstance(e, ProgressEvent) and e.program == "coin" for e in events)


def test_ticker_thread_stops_on_close():
    tty = FakeTTY()
    p = Progress(tty, tick=0.01)
    p(ProgressEvent("coin", "working"))
    p.close()
    assert not p._thread.is_alive()
    assert tty.getvalue().endswith("\r\033[K")


# ---------------------------------------------------------------------------- failed traces


def test_failure_lines_from_the_prover_explanation():
    failure = ProofFailure(
        NO_AXIOM,
        stmt="y ~ bern(p)",
        line=10,
        bound="p / 2",
        steps=(TraceStep(8, "x ~ bern(0.5)"), TraceStep(9, "assume(x)")),
    )
    assert failure.text() == (
        "no axiom for `y ~ bern(p)` (line 10) keeps the failure below p / 2 and proves the postcondition\n"
        "    on the trace:\n      line 8: x ~ bern(0.5)\n      line 9: assume(x)"
    )
    fl = failure_lines(failure)
    assert fl.reason.startswith("no axiom for") and fl.steps == [(8, "x ~ bern(0.5)"), (9, "assume(x)")]
    assert fl.stuck_at == 10 and fl.lines == [8, 9, 10]


def test_failure_lines_without_lines():
    assert failure_lines(None) is None
    fl = failure_lines(ProofFailure(NO_COMBINATION))
    assert fl.steps == [] and fl.stuck_at is None


@pytest.mark.parametrize("verdict_file", ["benchmarks/variants/ex1_failsHalf.prob"])
def test_benchmark_failed_proof_names_real_lines(verdict_file):

    import tamp

    path = REPO / verdict_file
    r = tamp.prove(str(path)).programs[0]
    assert r.verdict == "unknown"
    fl = failure_lines(r.failure)
    lines = path.read_text().splitlines()
    assert fl.stuck_at is not None and "~" in lines[fl.stuck_at - 1]


def test_loop_obligation_failures_name_cfa_nodes():
    from lang.parser import parse
    from tamp.cfa import build_cfa

    prog = parse("""program l(n: int) requires n >= 1 ensures i == n
    { i := 0; while (i < n) { i := i + 1; } }""").programs[0]
    cfa = build_cfa(prog)
    exit_failed = check_failure([Obligation("EXIT", f"q{cfa.exit}", "invalid", "", cfa.exit)])
    assert exit_failed.text() == "the proof did not check: the postcondition does not follow at the end of the program"
    fl = failure_lines(exit_failed, cfa)
    assert fl.rule == "EXIT" and fl.nodes == [cfa.exit]
    assert fl.stuck_at == cfa.graph.nodes[cfa.exit].get("line")
    assert "postcondition" in fl.note
    step = failure_lines(
        check_failure([Obligation("STEP", f"q{cfa.entry}->q{cfa.exit}", "unknown", "", cfa.entry, cfa.exit)]), cfa
    )
    assert step.rule == "STEP" and step.nodes == [cfa.entry, cfa.exit]

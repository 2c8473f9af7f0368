"""The public corpus (benchmarks/corpus, issue 18) is well formed, cheaply: every file parses and
type-checks, states its source and the verdict it expects, every true claim has a false sibling,
inputs.json gives every program at least two complete input sets, and a handful of claims agree
with the simulator at those inputs. The prover's numbers are benchmarks/corpus/run.py's job."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from locations import BENCHMARKS
from support.claim_files import ClaimFolder

CORPUS = BENCHMARKS / "corpus"


CLAIMS = ClaimFolder(CORPUS)
_rel = CLAIMS.rel
_expect = CLAIMS.expect
_header = CLAIMS.header
FILES = sorted(CORPUS.glob("*/*.prob"))


def _runner():
    spec = importlib.util.spec_from_file_location("corpus_run", CORPUS / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_corpus_size_and_families():
    true = [f for f in FILES if _expect(f) == "proved"]
    assert len(true) >= 140
    assert len({f.parent.name for f in true}) >= 30
    assert len(FILES) - len(true) >= len(true)


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_file_parses_type_checks_and_documents_its_claim(path):
    head = CLAIMS.check_documented(path)
    if _expect(path) == "proved":
        assert re.search(r"^// claim: \S", head, re.M), "state the claim (`// claim: ...`)"
    else:
        assert re.search(r"^// false variant of \w+", head, re.M), "say what makes it false"


def test_every_true_claim_has_a_false_sibling_and_back():
    CLAIMS.check_siblings(FILES)


def test_inputs_cover_every_program_with_complete_input_sets():
    CLAIMS.check_input_sets(FILES)


# A handful of pairs, a few thousand runs each: the false ones' failure rates are far above their
# bounds at the recorded inputs, so the verdicts are stable at this size (fixed seed).
SIMULATED = [
    "laplace/laplace_single",
    "randomized_response/rr_many",
    "top_k/top2",
    "dot_product/dot",
    "sparse_vector/numeric_svt",
    "deterministic/triangle_count",
    "window_sum/window_sliding",
    "matmul/matmul",
    "randomized/birthday",
]


@pytest.mark.parametrize("name", [n + s for n in SIMULATED for s in ("", "_false")])
def test_simulator_agrees_with_the_recorded_verdicts(name):
    CLAIMS.check_simulated(name)


def test_runner_reasons_and_totals():
    run = _runner()
    prog = {
        "verdict": "unknown",
        "message": "not proved (a failed union-bound proof does not mean the claim is false)\n"
        "  no axiom instance keeps the failure below p",
        "failed_trace": "EXIT at q9 (invalid)",
    }
    assert run.one_line_reason(prog) == "no axiom instance keeps the failure below p; EXIT at q9 (invalid)"
    assert run.one_line_reason({"verdict": "proved"}) == ""
    rows = [
        run.Row("a/x", "proved", "proved", 1.0, "", ["consistent", "consistent"], ["consistent", "consistent"]),
        run.Row("a/x_false", "unknown", "proved", 1.0, "", ["refuted"], ["refuted"]),
        run.Row("b/y", "proved", "unknown", 2.0, "why", ["consistent"], ["refuted"]),
    ]
    s = run.summary(rows)
    assert (s["true_claims"], s["true_proved"], s["false_proved"], s["families"]) == (2, 1, 1, 2)
    assert (s["simulate_checks"], s["simulate_passed"]) == (4, 3)
    md = run.render_markdown(rows, s, "test")
    assert "**FALSE PROVED**" in md and "| b/y | proved | unknown ✗ | 2.00 |" in md
    assert "| other | 1 | y |" in md
    assert run.reason_kind("the loop at f.prob:3 may not terminate (no ranking function)") == (
        "loop termination not shown"
    )
    assert run.reason_kind("the labelled automaton did not check: EXIT at q9 (invalid)").endswith("at exit")


def test_runner_proves_and_simulates_one_file():
    run = _runner()
    res = run.prove_file(str(CORPUS / "laplace" / "laplace_single.prob"), 60.0)
    assert res["verdict"] == "proved" and res["reason"] == ""
    pairs = run.simulate_file(str(CORPUS / "laplace" / "laplace_single_false.prob"), str(CORPUS / "inputs.json"), 2000)
    assert pairs == [["refuted", "refuted"], ["refuted", "refuted"]]


def test_readme_lists_every_true_claim():
    readme = (CORPUS / "README.md").read_text()
    for f in FILES:
        if _expect(f) == "proved":
            assert f"| {f.parent.name} | `{f.stem}` |" in readme, f"README.md: no row for {_rel(f)}"


def test_soundness_harness_checks_every_false_sibling():
    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    for f in FILES:
        rel = f"corpus/{_rel(f)}"
        if _expect(f) == "unknown":
            assert rel in listed, f"benchmarks/soundness does not check {rel}"
            assert len(benchmark_inputs(rel)) >= 2, f"the harness finds no inputs for {rel}"


def test_runner_compares_runs():
    run = _runner()
    a = [run.Row("f/x", "proved", "unknown", 1.0), run.Row("f/x_false", "unknown", "unknown", 1.0)]
    b = [run.Row("f/x", "proved", "proved", 2.0), run.Row("f/x_false", "unknown", "unknown", 1.0)]
    md = run.render_comparison({"main": (a, "s1"), "loops": (b, "s2")})
    assert "| true claims proved | 0 / 1 (0.0%) | 1 / 1 (100.0%) |" in md
    assert "| f | 0 / 1 | 1 / 1 |" in md
    assert "| f/x | proved | unknown (1.0 s) | proved (2.0 s) |" in md and "f/x_false" not in md


def test_runner_partial_runs_and_round_robin_order():
    run = _runner()
    names = ("a/x", "a/x_down", "a/x_down_false", "a/x_false", "a/y", "a/y_false2", "b/z", "b/z_false")
    order = [run.label(f) for f in run.interleave([Path(f"/c/{n}.prob") for n in names])]
    assert order == ["a/x", "a/x_false", "b/z", "b/z_false", "a/x_down", "a/x_down_false", "a/y", "a/y_false2"]
    rows = [
        run.Row("a/x", "proved", "proved", 1.0),
        run.Row("a/x_false", "unknown", "unknown", 1.0),
        run.Row("b/z", "proved"),  # not proved yet
        run.Row("b/z_false", "unknown"),
    ]
    s = run.summary(rows)
    assert (s["true_claims"], s["true_run"], s["true_proved"], s["not_run"]) == (2, 1, 1, 2)
    assert s["true_proved_share"] == 1.0
    md = run.render_markdown(rows, s, "test")
    assert "**partial run**: 2 of 4 programs" in md and "| b/z |" not in md
    whole = run.summary([run.Row("a/x", "proved", "unknown", 1.0)])
    assert (whole["not_run"], whole["true_run"], whole["true_proved_share"]) == (0, 1, 0.0)

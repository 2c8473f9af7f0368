"""Rely's hardware model (issue 35): unreliable comparisons and division, unreliable memory,
per-kind rates and value-level reliability, decided by the union-bound prover through the CFA.

Every true claim of benchmarks/reliability/model/ is proved and every false sibling is not;
the false siblings are the regression tests of the soundness rules (a failed comparison gives an
arbitrary value; control dependence taints what a faulty condition decides)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lang import ast as A
from lang.parser import parse
from lang.printer import print_file
from tamp import api
from tamp.cfa import BAD, build_cfa
from tamp.cfa.faults import taintable

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "benchmarks" / "reliability" / "model"
FILES = sorted(MODEL.glob("*.prob"))


def expectations(path: Path) -> dict:
    text = path.read_text()
    return dict(
        (m.group(2), m.group(1)) for m in re.finditer(r"// expect: (proved|unknown)\n(?:.*\n)*?program (\w+)", text)
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_model_benchmarks_meet_their_expectations(path):
    want = expectations(path)
    assert want, "every program of the examples states what tamp must answer"
    got = {r.name: r.verdict for r in api.prove(str(path)).programs}
    assert got == want


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_new_forms_print_and_parse_back(path):
    src = parse(path.read_text(), str(path))
    assert parse(print_file(src)).programs == src.programs


def test_a_failed_comparison_is_arbitrary_so_an_unguarded_claim_needs_not_failed():
    src = parse((MODEL / "compare.prob").read_text())
    cfa = build_cfa(src.program("compareFalse"))
    assert A.Unary("!", A.Var("failed")) in list(A.walk(cfa.ensures[0]))
    guarded = build_cfa(src.program("compareGuarded"))  # `!failed ==> y >= 0` is kept as written
    assert guarded.ensures == src.program("compareGuarded").ensures
    looping = build_cfa(src.program("divide"))  # with a loop, a guarded claim needs !failed too
    assert src.program("divide").ensures[0] not in looping.ensures


def test_control_dependence_taints_what_a_faulty_condition_decides():
    src = parse((MODEL / "value.prob").read_text())
    assert "z" in taintable(src.program("branch"))
    assert "c" in taintable(src.program("loopCount"))
    assert "m" not in taintable(src.program("untouched"))
    cfa = build_cfa(src.program("branchFalse"))
    assert A.Unary("!", A.Var(BAD + "z")) in cfa.ensures


ERRORS = [
    ("program p(x: int) rate(+) 0.1 { y := x + 1; }", "a rate is given for an unreliable operator"),
    ("program p(x: int) { y := x <. 1; }", "needs a 'rate' clause"),
    ("program p(x: int) rate 0.1 unreliable q { y := x; }", "'q' in an 'unreliable' region is not a variable"),
    ("program p(a: int[]) unreliable a { y := a[0]; }", "an 'unreliable' region needs a rate"),
    ("program p(x: int) rate 0.1 reliability(x + 1) >= 0.9 { y := x; }", "value-level reliability names variables"),
    ("program p(x: int) rate 0.1 reliability(w) >= 0.9 { y := x; }", "'w' is not a variable"),
    ("program p(x: int) rate 0.1 reliability(y) >= 1 - R(x) { y := x; }", "R(…) may only be a factor"),
    ("program p(x: int) rate 0.1 reliability(y) >= 0.9 * R(y) { y := x; }", "R(…) names inputs"),
    ("program p(x: int) rate 0.1 ensures x +? 1 > 0 { y := x; }", "may only be used in program statements"),
    ("program p(x: int) rate 0.1 rate(*.) 0.2 rate(*.) 0.3 { y := x; }", "duplicate 'rate(*.)' clause"),
    ("program p(n: int) ensures n <= n+? fails 0.5 { skip; }", "'+?' is a candidate operator"),
]


@pytest.mark.parametrize("text,message", ERRORS, ids=[m for _t, m in ERRORS])
def test_bad_reliability_input_is_one_located_error(tmp_path, text, message):
    f = tmp_path / "bad.prob"
    f.write_text(text + "\n")
    r = subprocess.run([sys.executable, "-m", "tamp", "check", str(f)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert re.match(rf"{re.escape(str(f))}:1:\d+: error: .*{re.escape(message)}", r.stderr + r.stdout), r.stderr


@pytest.mark.parametrize("name", ["value.prob", "loopcond.prob", "memory.prob"])
def test_the_proofs_are_certified_and_rechecked(name):
    report = api.certify_and_check((MODEL / name).read_text())
    assert report.ok and report.obligations > 0

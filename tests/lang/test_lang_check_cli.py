"""`tamp check FILE [--json]` and `lang.spec_kind`."""

from __future__ import annotations

import json

from lang import spec_kind
from lang.parser import parse
from tamp.cli import main

FILE = """program bound(n: int) requires n > 0 ensures x >= 0 fails 0.1 { x ~ unif(0, n); }
program prob() ensures P(b) >= 0.5 { b ~ bern(0.5); }
program causal(s: int, a: real) ensures independent(d, s) { d := a > 1; }
program fair() ensures fairness b given (c) >= 0.8 { b ~ bern(0.5); c ~ bern(0.5); }
"""


def test_spec_kind():
    progs = parse(FILE).programs
    assert [spec_kind(p) for p in progs] == ["failure-bound", "probability", "causal", "probability"]


def test_check_text(tmp_path, capsys):
    path = tmp_path / "f.prob"
    path.write_text(FILE)
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok (4 programs: bound, prob, causal, fair)\n"
    one = tmp_path / "one.prob"
    one.write_text("program p() { skip; }")
    assert main(["check", str(one)]) == 0
    assert capsys.readouterr().out == f"{one}: ok (1 program: p)\n"


def test_check_json(tmp_path, capsys):
    path = tmp_path / "f.prob"
    path.write_text(FILE)
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == str(path) and data["ok"] is True
    assert data["programs"][0] == {
        "name": "bound",
        "params": {"n": "int"},
        "locals": {"x": "int"},
        "kind": "failure-bound",
    }
    assert [p["kind"] for p in data["programs"]] == ["failure-bound", "probability", "causal", "probability"]


def test_check_errors(tmp_path, capsys):
    path = tmp_path / "bad.prob"
    path.write_text("program p(n: int) {\n  n := 1;\n}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:2:3: error: cannot assign to parameter 'n'")
    assert "Traceback" not in err
    assert main(["check", str(path), "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and (data["error"]["line"], data["error"]["col"]) == (2, 3)
    assert main(["check", str(tmp_path / "missing.prob")]) == 2
    assert "cannot read file" in capsys.readouterr().err

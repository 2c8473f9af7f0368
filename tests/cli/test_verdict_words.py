"""One verdict vocabulary (issue 36): every command says its verdict with a word of
``tamp.results.VOCABULARY``, in lower case, the same word in its text, its ``--json`` and the
Python API's result object; a word has one exit status everywhere; the JSON Schema and the table
of docs/json.md list exactly these words with these statuses."""

import json
import re

import pytest
from locations import REPO

import tamp
from tamp.cli import main
from tamp.commands.jsonout import SCHEMA_PATH, VERDICTS
from tamp.results import COMMAND_VERDICTS, ERROR, VOCABULARY

SCHEMA = json.loads(SCHEMA_PATH.read_text())

#: a verdict word in capitals (PROVED, CONSISTENT, OK …), as the text output used to print them
SHOUTED = re.compile(r"\b(" + "|".join(w.upper() for w in VOCABULARY) + r")\b")

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""
HALF = COIN.replace("program coin", "program half").replace("fails p\n{", "fails p / 8\n{")
CLAIM = """program claim()
  ensures P(y) >= 0.4
{ y ~ bern(0.5); }
"""
FALSE_CLAIM = CLAIM.replace("program claim", "program biased").replace("0.4", "0.9")
BAND = """program band(x1: real, sex: int)
  requires 0 <= x1 && x1 <= 1 && (sex == 0 || sex == 1)
  ensures independent(out, sex)
{ out := x1 + 0.2*sex > 1 ? 1 : 0; }
"""
NOSPEC = "program plain(p: real)\n  requires 0 < p && p <= 1\n{ y ~ bern(p); }\n"
LAPLACE = """program laplace(x: int, eps: real)
  requires eps > 0
  neighbours abs(x - x') <= 1
  private eps on a
{ a ~ lap(x, 1 / eps); }
"""


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (
        ("coin", COIN),
        ("half", HALF),
        ("claim", CLAIM),
        ("biased", FALSE_CLAIM),
        ("band", BAND),
        ("plain", NOSPEC),
        ("laplace", LAPLACE),
    ):
        f = tmp_path / f"{name}.prob"
        f.write_text(text)
        out[name] = str(f)
    return out


def test_every_word_has_one_meaning_and_one_exit_status():
    assert all(w == w.lower() and v.meaning and v.exit_code in (0, 1, 2, 3) for w, v in VOCABULARY.items())
    assert VOCABULARY[ERROR].exit_code == 2
    for command, words in COMMAND_VERDICTS.items():
        assert set(words) <= set(VOCABULARY), command
        assert VERDICTS[command] == {w: VOCABULARY[w].exit_code for w in words}


def _schema_rule(command):
    """The schema's verdict words for ``command`` and the commands that share its rule."""
    for rule in SCHEMA["allOf"]:
        cond = rule["if"]["properties"].get("command", {})
        if command in cond.get("enum", []) or cond.get("const") == command:
            return set(rule["then"]["properties"]["verdict"]["enum"]), cond.get("enum", [command])
    raise AssertionError(f"no verdict rule for {command} in the schema")


def test_the_schema_lists_the_vocabulary():
    for command in COMMAND_VERDICTS:
        words, sharing = _schema_rule(command)
        assert words == {w for c in sharing for w in COMMAND_VERDICTS[c]} | {ERROR}, command
    assert set(SCHEMA["$defs"]["verdict"]["enum"]) <= set(VOCABULARY)
    for rule in SCHEMA["allOf"]:  # "exit_code 0 / 3 then one of these words"
        code = rule["if"]["properties"].get("exit_code", {}).get("const")
        if code is not None:
            words = {w for ws in COMMAND_VERDICTS.values() for w in ws if VOCABULARY[w].exit_code == code}
            assert set(rule["then"]["properties"]["verdict"]["enum"]) == words, code


def test_docs_json_has_the_one_table():
    """docs/json.md's table: one row per word (`word` | meaning | exit status | commands)."""
    page = (REPO / "docs" / "json.md").read_text()
    rows = {m.group(1): m for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \| (\d) \| ([^|]+) \|$", page, re.M)}
    assert set(rows) == set(VOCABULARY)
    for word, m in rows.items():
        assert int(m.group(3)) == VOCABULARY[word].exit_code, word
        users = {c for c, ws in COMMAND_VERDICTS.items() if word in ws}
        listed = set(re.findall(r"`([\w-]+)`", m.group(4)))
        assert users <= listed, (word, users, listed)


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


CASES = [
    # (name, argv after the file, program name, the expected word)
    ("coin", ["prove"], [], "coin", "proved"),
    ("plain", ["prove"], [], "plain", "unspecified"),
    ("laplace", ["prove"], [], "laplace", "proved"),
    ("claim", ["prob"], [], "claim", "proved"),
    ("biased", ["prob"], [], "biased", "violated"),
    ("band", ["fairness"], [], "band", "violated"),
    ("coin", ["simulate"], ["--input", "p=0.5", "--runs", "2000"], "coin", "consistent"),
    ("half", ["simulate"], ["--input", "p=0.5", "--runs", "2000"], "half", "refuted"),
    ("claim", ["simulate"], ["--runs", "2000"], "claim", "confirmed"),
]


@pytest.mark.parametrize("file,command,extra,name,word", CASES, ids=[f"{c[1][0]}-{c[0]}" for c in CASES])
def test_text_json_and_api_say_the_same_word(files, capsys, file, command, extra, name, word):
    code, text = _run([*command, files[file], *extra], capsys)
    assert code == VOCABULARY[word].exit_code, text
    assert f"{name}: {word}" in text, text
    assert not SHOUTED.search(text), text
    jcode, out = _run([*command, files[file], *extra, "--json"], capsys)
    data = json.loads(out)
    assert jcode == code and data["verdict"] == word and data["exit_code"] == code
    assert [p["verdict"] for p in data["programs"] if p.get("name", p.get("program")) == name] == [word], data
    api = {
        "prove": lambda: tamp.prove(files[file]),
        "prob": lambda: tamp.prob(files[file]),
        "simulate": lambda: tamp.simulate(files[file], inputs={"p": 0.5} if "--input" in extra else None, runs=2000),
    }.get(command[0])
    if api is not None:
        res = api()
        assert res.verdict == word and int(res.exit_code) == code
        assert not SHOUTED.search(res.render_text()) and word in res.render_text()


def test_check_proof_says_ok_in_its_text_and_json(files, capsys, tmp_path):
    cert = tmp_path / "coin.cert.json"
    assert main(["prove", files["coin"], "--certificate", str(cert)]) == 0
    capsys.readouterr()
    code, text = _run(["check-proof", cert, files["coin"]], capsys)
    assert code == 0 and "coin: ok (" in text and text.rstrip().splitlines()[-1].startswith("ok: "), text
    assert not SHOUTED.search(text), text
    code, out = _run(["check-proof", cert, files["coin"], "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "ok" and [p["verdict"] for p in data["programs"]] == ["ok"]
    report = tamp.check_proof(str(cert), files["coin"])
    assert report.verdict == "ok" and report.summary().startswith("ok: ")


def test_every_api_result_has_its_words_exit_status():
    """``.verdict`` and ``.exit_code`` of the API's result objects agree with the vocabulary."""
    from tamp.causal.result import QueryResult
    from tamp.certificate.format import CheckReport, ProgramCheck
    from tamp.results import CheckedFile

    objects = [
        QueryResult("q", True),
        QueryResult("q", False),
        QueryResult("q", None),
        QueryResult("q", None, vacuous=True),
        CheckReport(True, [ProgramCheck("p", True)], 0.0),
        CheckReport(False, [ProgramCheck("p", False)], 0.0, reason="STEP"),
        CheckedFile("f.prob", []),
    ]
    seen = set()
    for obj in objects:
        assert obj.verdict in VOCABULARY and int(obj.exit_code) == VOCABULARY[obj.verdict].exit_code, obj
        assert not SHOUTED.search(obj.summary() if hasattr(obj, "summary") else obj.render_text())
        seen.add(obj.verdict)
    assert seen == {"yes", "no", "unknown", "vacuous", "ok", "rejected"}

"""Every command's ``--json`` output has one shape (docs/json.md): validated against the JSON
Schema shipped in tamp/schema, with the common keys' meaning checked too (the exit status in the
JSON is the one the command returned; the verdict words are the command's)."""

import json

import jsonschema
import pytest
from locations import REPO

from tamp.cli import main
from tamp.commands.jsonout import SCHEMA_PATH, SCHEMA_VERSION, VERDICTS

SCHEMA = json.loads(SCHEMA_PATH.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""
HALF = COIN.replace("program coin", "program half").replace("fails p\n{", "fails p / 2\n{ x ~ bern(0.5);")
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
BAD = "program broken(p: real)\n  ensures !y\n{ y ~ bern(p) }\n"  # a missing `;`


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (
        ("coin", COIN),
        ("half", HALF),
        ("claim", CLAIM),
        ("biased", FALSE_CLAIM),
        ("band", BAND),
        ("bad", BAD),
    ):
        f = tmp_path / f"{name}.prob"
        f.write_text(text)
        out[name] = str(f)
    return out


def run_json(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    data = json.loads(out)
    VALIDATOR.validate(data)
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["exit_code"] == code, (code, data)
    if data["verdict"] == "error":
        assert code == 2
    else:  # the verdict word is the command's, and its exit status the documented one
        assert VERDICTS[data["command"]][data["verdict"]] == code
    return code, data


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_refuses_what_is_not_the_shape():
    bad = [
        {"command": "prove", "verdict": "proved", "exit_code": 0, "time_s": 0.1},  # no version
        {"schema_version": 1, "command": "prove", "verdict": "consistent", "exit_code": 0, "time_s": 0, "file": "f"},
        {"schema_version": 1, "command": "prove", "verdict": "proved", "exit_code": 0, "time_s": 0, "file": "f",
         "programs": [{"name": "p"}]},  # a judged program without its verdict
        {"schema_version": 1, "command": "prove", "verdict": "error", "exit_code": 2, "time_s": 0},  # no error
        {"schema_version": 1, "command": "simulate", "verdict": "refuted", "exit_code": 0, "time_s": 0,
         "file": "f", "programs": []},  # refuted is exit 3
    ]  # fmt: skip
    for obj in bad:
        assert not VALIDATOR.is_valid(obj), obj


@pytest.mark.parametrize(
    "name, verdict, code", [("coin", "proved", 0), ("half", "unknown", 1), ("biased", "violated", 3)]
)
def test_prove(files, capsys, name, verdict, code):
    got, data = run_json(["prove", files[name], "--json"], capsys)
    assert (got, data["verdict"], data["file"]) == (code, verdict, files[name])
    assert [p["name"] for p in data["programs"]] == [name]


def test_prove_several_files_with_a_bad_one(files, capsys):
    code, data = run_json(["prove", files["coin"], files["bad"], files["half"], "--json"], capsys)
    assert code == 2 and data["verdict"] == "error"
    assert [f["verdict"] for f in data["files"]] == ["proved", "error", "unknown"]
    err = data["files"][1]["error"]
    assert (err["file"], err["line"]) == (files["bad"], 3) and err["col"] > 0


@pytest.mark.parametrize("command", ["prove", "prob", "simulate", "fairness", "check", "cfa"])
def test_a_bad_file_is_json_with_the_error_and_its_place(files, capsys, command):
    code, data = run_json([command, files["bad"], "--json"], capsys)
    assert code == 2 and data["command"] == command and data["verdict"] == "error"
    err = data["error"]
    assert (err["file"], err["line"]) == (files["bad"], 3) and err["col"] > 0
    assert err["text"].startswith(f"{files['bad']}:3:{err['col']}: error: ")


def test_a_missing_file_is_json_too(tmp_path, capsys):
    code, data = run_json(["prove", tmp_path / "missing.prob", "--json"], capsys)
    assert code == 2 and data["error"]["file"] == str(tmp_path / "missing.prob")


def test_prob(files, capsys):
    code, data = run_json(["prob", files["claim"], "--json"], capsys)
    assert code == 0 and data["programs"][0]["name"] == "claim"


def test_simulate(files, capsys):
    code, data = run_json(["simulate", files["coin"], "--input", "p=0.1", "--runs", "2000", "--json"], capsys)
    assert code == 0 and data["verdict"] == "consistent"
    (prog,) = data["programs"]
    assert prog["name"] == prog["program"] == "coin" and prog["runs"] == 2000
    code, data = run_json(
        ["simulate", files["half"], "--input", "p=0.5", "--runs", "4000", "--bound", "p / 4", "--json"], capsys
    )
    assert code == 3 and data["verdict"] == "refuted"


def test_fairness(files, capsys):
    code, data = run_json(["fairness", files["band"], "--json"], capsys)
    assert code == 3 and data["verdict"] == "violated" and data["programs"][0]["name"] == "band"


def test_check_and_cfa(files, capsys):
    code, data = run_json(["check", files["coin"], "--json"], capsys)
    assert code == 0 and data["ok"] is True and data["programs"][0]["name"] == "coin"
    code, data = run_json(["cfa", files["coin"], "--json"], capsys)
    assert code == 0 and data["programs"][0]["name"] == "coin"


def test_check_proof(files, tmp_path, capsys):
    cert = tmp_path / "coin.json"
    assert main(["prove", files["coin"], "--certificate", str(cert)]) == 0
    capsys.readouterr()
    code, data = run_json(["check-proof", cert, files["coin"], "--json"], capsys)
    assert code == 0 and data["verdict"] == "ok" and data["programs"][0]["verdict"] == "ok"
    (tmp_path / "other.prob").write_text(COIN.replace("!y", "!y || y"))  # not the certified file
    code, data = run_json(["check-proof", cert, tmp_path / "other.prob", "--json"], capsys)
    assert code == 3 and data["verdict"] == "rejected"


def test_import(tmp_path, capsys):
    libra = REPO / "benchmarks" / "models" / "libra"
    code, data = run_json(
        ["import", libra / "example.libra", "--spec", libra / "example_spec.txt", "--format", "libra", "--json"],
        capsys,
    )
    assert code == 0 and data["programs"][0]["inputs"] and "program " in data["text"]
    out = tmp_path / "net.prob"
    code, data = run_json(["import", libra / "example.libra", "--format", "libra", "-o", out, "--json"], capsys)
    assert code == 0 and data["output"] == str(out) and out.exists() and "text" not in data


def test_wmi(tmp_path, capsys):
    problem = REPO / "docs" / "examples" / "triangle.json"  # the WMI tutorial's problem
    code, data = run_json(["wmi", problem, "--json"], capsys)
    assert code == 0 and "Z" in data
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, data = run_json(["wmi", bad, "--json"], capsys)
    assert code == 2 and data["error"]["file"] == str(bad)


def test_bench(files, tmp_path, capsys):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "coin.prob").write_text("// expect: proved\n" + COIN)
    (folder / "bad.prob").write_text(BAD)
    out = tmp_path / "bench.json"
    code = main(["bench", str(folder), "--json", str(out), "--timeout", "60"])
    capsys.readouterr()
    data = json.loads(out.read_text())
    VALIDATOR.validate(data)
    assert code == data["exit_code"] == 2 and data["verdict"] == "error"
    by_file = {r["file"].rsplit("/", 1)[-1]: r for r in data["rows"]}
    assert by_file["coin.prob"]["verdict"] == "proved" and by_file["bad.prob"]["verdict"] == "error"
    assert ":3:" in by_file["bad.prob"]["message"]


@pytest.mark.parametrize(
    "argv", [["--timeout", "-3"], ["--input", "p"], ["--tiemout", "3"]], ids=["value", "input", "unknown"]
)
def test_a_bad_option_is_json_too(files, capsys, argv):
    code = main(["prove", files["coin"], "--json", *argv])
    out = capsys.readouterr()
    data = json.loads(out.out)
    VALIDATOR.validate(data)
    assert code == data["exit_code"] == 2 and data["verdict"] == "error"
    assert data["error"]["line"] == 0 and data["error"]["text"] in out.err
    assert main(["prove", files["coin"], *argv]) == 2 and capsys.readouterr().out == ""  # no JSON unless asked


def test_query_and_its_replay(files, tmp_path, capsys):
    log = tmp_path / "q.jsonl"
    ask = ["query", files["band"], "--given", "x1 == 0.9 && sex == 0", "--vary", "sex", "--would", "out == 0"]
    code, data = run_json([*ask, "--json", "--log", log], capsys)
    assert code == 0 and data["verdict"] == "no" and data["answer"] is False and data["file"] == files["band"]
    code, data = run_json(["query", "--replay", log, "--json"], capsys)
    assert code == 0 and data["verdict"] == "same" and data["queries"] == 1


NO_SPEC = "program model(x: real)\n{ y ~ bern(0.5); }\n"  # an imported model before its spec is added


def test_a_program_without_a_specification_has_nothing_to_prove(tmp_path, capsys):
    # issue 36, item 8: it was reported "proved  Pr[fail] <= 0"
    f = tmp_path / "model.prob"
    f.write_text(NO_SPEC)
    code, data = run_json(["prove", f, "--json"], capsys)
    assert code == 0 and data["verdict"] == "unspecified"
    (prog,) = data["programs"]
    assert prog["verdict"] == "unspecified" and prog["kind"] == "none" and prog["bound"] is None
    assert "nothing to prove" in prog["message"]
    code, data = run_json(["prove", f, tmp_path / "model.prob", "--json"], capsys)  # several files
    assert code == 0 and data["verdict"] == "unspecified"
    code = main(["prove", str(f)])
    out = capsys.readouterr().out
    assert code == 0 and "model: unspecified" in out and "nothing to prove" in out and "Pr[fail]" not in out
    assert "proved" not in out.split("\n")[0]
    code = main(["prove", "--infer", str(f)])  # --infer asks for a bound: still nothing to bound
    assert code == 0 and "unspecified" in capsys.readouterr().out
    code, data = run_json(["check", f, "--json"], capsys)  # tamp check names the same kind
    assert data["programs"][0]["kind"] == "none"


def test_a_file_mixing_a_proof_and_no_specification_is_proved(tmp_path, capsys):
    f = tmp_path / "both.prob"
    f.write_text(COIN + NO_SPEC)
    code, data = run_json(["prove", f, "--json"], capsys)
    assert code == 0 and data["verdict"] == "proved"
    assert [p["verdict"] for p in data["programs"]] == ["proved", "unspecified"]


def _untimed(x):
    """``x`` without its times (``time_s``, ``solver_time``, the statistics' ``time``: the only
    keys two runs may differ in)."""
    if isinstance(x, dict):
        return {k: _untimed(v) for k, v in x.items() if "time" not in k}
    if isinstance(x, list):
        return [_untimed(v) for v in x]
    return x


@pytest.mark.parametrize("which", ["coin", "half", "claim"])
def test_the_apis_to_json_is_the_clis_json(files, capsys, which):
    # issue 36, item 10: FileResult.to_json() lacked the common keys the CLI printed
    import tamp
    from tamp.commands.jsonout import jsonable

    code, cli = run_json(["prove", files[which], "--json"], capsys)
    api = json.loads(json.dumps(jsonable(tamp.prove(files[which]).to_json()), default=str))
    VALIDATOR.validate(api)
    assert _untimed(api) == _untimed(cli) and api["exit_code"] == code
    assert list(api) == list(cli)


def test_the_apis_prob_to_json_is_the_clis_json(files, capsys):
    import tamp
    from tamp.commands.jsonout import jsonable

    code, cli = run_json(["prob", files["claim"], "--json"], capsys)
    api = json.loads(json.dumps(jsonable(tamp.prob(files["claim"]).to_json()), default=str))
    assert _untimed(api) == _untimed(cli) and api["command"] == "prob"

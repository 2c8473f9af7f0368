"""Privacy certificates (issue 34, item 4): ``tamp prove --certificate`` writes a privacy proof's
alignment, loop invariants and cost terms (or a counterexample), and ``tamp check-proof``
re-checks them without the privacy engine — and rejects every tampered certificate."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from support.certificates import check_proof

from tamp.api import prove
from tamp.certificate.writer import file_certificate
from tamp.cli import main

from .programs import FALSE, TRUE

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / f"{name}.prob"
    p.write_text(text)
    return p


def _certificate(path: Path, inputs=None) -> dict:
    res = prove(str(path), inputs=inputs)
    cert = file_certificate(res, path.read_bytes(), None, inputs)
    return json.loads(json.dumps(cert))


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    """Every mechanism the engine proves: (source path, certificate)."""
    d = tmp_path_factory.mktemp("privacy")
    out = {}
    for name, text in TRUE.items():
        path = _write(d, name, text)
        out[name] = (path, _certificate(path))
    return out


# Run check-proof in a fresh interpreter: which tamp.privacy modules got loaded, and which modules
# import tamp.prover (every import statement goes through builtins.__import__, whose globals name
# the importing module): neither the privacy engine nor the prover is reached.
PROBE = r"""
import builtins, importlib.util, json, sys
importers = set()
real_import = builtins.__import__

def spy(name, globals=None, locals=None, fromlist=(), level=0):
    mod = (globals or {}).get("__name__", "")
    full = importlib.util.resolve_name("." * level + name, (globals or {}).get("__package__") or "") if level else name
    names = [full] + [f"{full}.{f}" for f in fromlist or () if f != "*"]
    if any(n.split(".")[:2] == ["tamp", "prover"] for n in names) and not mod.startswith("tamp.prover"):
        importers.add(mod)
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = spy
from tamp.cli import main
codes = [main(["check-proof", c, f]) for c, f in zip(sys.argv[1::2], sys.argv[2::2])]
privacy = sorted(m for m in sys.modules if m.split(".")[:2] == ["tamp", "privacy"])
print(json.dumps({"codes": codes, "privacy": privacy, "importers": sorted(importers),
                  "checker": "tamp.certificate.privacy_checker" in sys.modules}))
"""


@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_every_proved_mechanism_is_certified_and_rechecked_without_the_engine(proved, tmp_path):
    args = []
    for name, (path, cert) in proved.items():
        (entry,) = cert["privacy"]
        assert entry["verdict"] == "proved" and entry["program"] == name
        assert entry["alignment"] and all("cost" in s and "kind" in s for s in entry["alignment"])
        c = tmp_path / f"{name}.json"
        c.write_text(json.dumps(cert))
        args += [str(c), str(path)]
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["codes"] == [0] * len(proved), got
    assert got["checker"] and got["privacy"] == [], got
    assert got["importers"] == [], got


def test_loops_have_their_invariants_in_the_certificate(proved):
    entry = proved["noisySum"][1]["privacy"][0]
    (loop,) = entry["loops"]
    assert any(i.startswith("cost() <= entry(cost())") and "sum(" in i for i in loop["invariants"]), loop


def _tamper(cert: dict, fn) -> dict:
    c = copy.deepcopy(cert)
    fn(c["privacy"][0])
    return c


def _set_step(index=0, **changes):
    def fn(e):
        e["alignment"][index].update(changes)

    return fn


def _only_invariants(keep):
    def fn(e):
        for lp in e["loops"]:
            lp["invariants"] = [i for i in lp["invariants"] if keep(i)]

    return fn


def _replace_invariants(old, new):
    def fn(e):
        for lp in e["loops"]:
            lp["invariants"] = [i.replace(old, new) for i in lp["invariants"]]

    return fn


@pytest.mark.parametrize(
    "name, change, message",
    [
        # a changed alignment shift: the noises of laplace agree at no cost only when aligned
        ("laplace", _set_step(kind="shift", c=2), "cannot prove"),
        ("noisySum", _set_step(kind="shift", c=1), "cannot prove"),
        ("aboveThreshold", _set_step(1, c=0), "cannot prove"),
        ("reportNoisyMax", _set_step(kind="noise"), "cannot prove"),
        # a dropped cost term (the step's term, or the whole step)
        ("laplace", _set_step(cost="0"), "cost term"),
        ("noisySum", lambda e: e["alignment"].pop(), "alignment covers"),
        # a removed invariant: no cost bound is left for the loop
        ("noisySum", _only_invariants(lambda i: not i.startswith("cost()")), "privacy cost is at most eps"),
        ("whileSum", lambda e: e["loops"].clear(), "no invariants for this loop"),
        # a weakened invariant: the loop's cost bound is 4 times too large
        ("noisySum", _replace_invariants("(1)*", "(4)*"), "privacy cost is at most eps"),
        # a false invariant: not preserved by the loop body
        ("histogram", _replace_invariants("(1)*entry(1 / (1 / eps))", "0*eps"), "is preserved"),
        # a smaller epsilon than the program claims
        ("laplace", lambda e: e.__setitem__("epsilon", "eps / 2"), "the program claims eps"),
        # an invariant the language cannot read, and one that is not a formula
        ("noisySum", lambda e: e["loops"][0]["invariants"].append("cost() <= "), "does not parse"),
        ("noisySum", lambda e: e["loops"][0]["invariants"].append("cost()"), "not a formula"),
    ],
)
def test_tampered_privacy_certificates_are_rejected(proved, tmp_path, capsys, name, change, message):
    path, cert = proved[name]
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    bad = _tamper(cert, change)
    assert bad != cert
    code, out = check_proof(bad, path, tmp_path, capsys)
    assert code == 3 and "rejected" in out and message in out, out


def test_a_weakened_invariant_that_still_bounds_the_cost_is_accepted(proved, tmp_path, capsys):
    # the checker proves what the invariants give, not that they are the engine's: dropping the
    # redundant cost bounds (one unit per unit of the relation's sum is the tightest) still proves eps
    path, cert = proved["noisySum"]
    kept = _tamper(cert, _only_invariants(lambda i: not i.startswith("cost()") or "(1)*" in i))
    assert kept != cert
    assert check_proof(kept, path, tmp_path, capsys)[0] == 0


def test_another_program_is_rejected(proved, tmp_path, capsys):
    path, cert = proved["noisySum"]
    other = proved["histogram"][0]
    code, out = check_proof(cert, other, tmp_path, capsys)
    assert code == 3 and "different source text" in out
    # the same name and claim with half the noise, the digest updated: the proof no longer holds
    text = TRUE["laplace"].replace("lap(x, 1 / eps)", "lap(x, 1 / (2 * eps))")
    weak = _write(tmp_path, "weak", text)
    laplace = copy.deepcopy(proved["laplace"][1])
    laplace["source_sha256"] = hashlib.sha256(weak.read_bytes()).hexdigest()
    code, out = check_proof(laplace, weak, tmp_path, capsys)
    assert code == 3 and "rejected" in out, out


def test_private_hole_certificate_proves_the_inferred_epsilon_and_no_less(tmp_path, capsys):
    path = _write(tmp_path, "hole", TRUE["noisySum"].replace("private eps on s", "private ? on s"))
    cert = _certificate(path)
    (entry,) = cert["privacy"]
    assert entry["epsilon"] != "?"
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    smaller = _tamper(cert, lambda e: e.__setitem__("epsilon", f"({e['epsilon']}) / 2"))
    code, out = check_proof(smaller, path, tmp_path, capsys)
    assert code == 3 and "privacy cost is at most" in out, out


# ---------------------------------------------------------------------------- counterexamples


@pytest.fixture(scope="module")
def refuted(tmp_path_factory):
    d = tmp_path_factory.mktemp("refuted")
    path = _write(d, "tooLittleNoise", FALSE["tooLittleNoise"])
    return path, _certificate(path, inputs={"eps": 1})


def test_a_counterexample_certificate_is_rechecked(refuted, tmp_path, capsys):
    path, cert = refuted
    (entry,) = cert["privacy"]
    assert entry["verdict"] == "violated" and entry["counterexample"]["event"]
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0 and "violated" in out, out


ANY = {"lower": 0, "upper": 1}  # an interval that holds any probability


def _cx(**changes):
    def fn(e):
        e["counterexample"].update(changes)

    return fn


@pytest.mark.parametrize(
    "change, message",
    [
        (_cx(probability={"lower": "9/10", "upper": "1"}), "the probability engine computes"),
        (_cx(neighbour_probability={"lower": 0, "upper": "1/100"}), "the probability engine computes"),
        (_cx(neighbour={"x": 5, "eps": 1}), "not neighbours"),
        (_cx(neighbour={"x": 1, "eps": 2}), "public input eps differs"),
        (_cx(event="x < 0"), "not an output"),
        (_cx(event="a < 100"), "the probability engine computes"),
        (_cx(event="a < 100", probability=ANY, neighbour_probability=ANY), "not separated"),
        (lambda e: e.__setitem__("epsilon", "2 * eps"), "the program claims eps"),
    ],
)
def test_a_tampered_counterexample_is_rejected(refuted, tmp_path, capsys, change, message):
    path, cert = refuted
    code, out = check_proof(_tamper(cert, change), path, tmp_path, capsys)
    assert code == 3 and message in out, out


@pytest.fixture(scope="module")
def refuted_svt(tmp_path_factory):
    """svtLyu4 refuted with an event over the map of written indices (``written(out, k) && …``)."""
    d = tmp_path_factory.mktemp("refuted_svt")
    path = _write(d, "svtLyu4", (ROOT / "benchmarks" / "privacy" / "broken" / "svtLyu4.prob").read_text())
    return path, _certificate(path)


def test_a_counterexample_over_written_indices_is_certified_and_rechecked(refuted_svt, tmp_path, capsys):
    path, cert = refuted_svt
    assert not cert["not_certified"]
    (entry,) = cert["privacy"]
    assert entry["verdict"] == "violated" and "written(out, " in entry["counterexample"]["event"]
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0 and "violated" in out, out


@pytest.mark.parametrize(
    "change, message",
    [
        # an element read with no written(...) beside it: its value on a run that never wrote it
        # would be a default the language does not give, so the checker does not read it
        (_cx(event="written(out, 0) && !out[0] && out[1]"), "without the conjunct written(out, 1)"),
        (_cx(event="written(out, 0) || out[1]"), "only be a conjunct"),
        (_cx(event="written(out, 2 - 1) && out[2 - 1]"), "literal index"),
        (_cx(probability={"lower": "1/2", "upper": "1"}), "the probability engine computes"),
        (_cx(event="written(out, 0)", probability=ANY, neighbour_probability=ANY), "not separated"),
    ],
)
def test_a_tampered_written_counterexample_is_rejected(refuted_svt, tmp_path, capsys, change, message):
    path, cert = refuted_svt
    code, out = check_proof(_tamper(cert, change), path, tmp_path, capsys)
    assert code == 3 and message in out, out


# ---------------------------------------------------------------------------- fixed public inputs

#: private at ε = 1 only where eps <= 1: a proof at eps = 1/2 that is no proof for every eps
FIXED_BUDGET = """
program fixedBudget(q: real, eps: real)
  requires   eps > 0
  neighbours abs(q - q') <= 1
  private    1 on a
{
  a ~ lap(q, 1 / eps);
}
"""


def _check_at(cert: dict, path: Path, tmp: Path, capsys, *inputs: str):
    out = tmp / "cert.json"
    out.write_text(json.dumps(cert))
    capsys.readouterr()
    code = main(["check-proof", str(out), str(path), *[a for i in inputs for a in ("--input", i)]])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    d = tmp_path_factory.mktemp("fixed")
    path = _write(d, "fixedBudget", FIXED_BUDGET)
    return path, _certificate(path, inputs={"eps": Fraction(1, 2)})


def test_a_proof_with_fixed_public_inputs_is_certified_at_those_inputs(fixed, tmp_path, capsys):
    path, cert = fixed
    (entry,) = cert["privacy"]
    assert entry["verdict"] == "proved" and entry["inputs"] == {"eps": "1/2"}
    assert cert["not_certified"] == []
    code, out = _check_at(cert, path, tmp_path, capsys, "eps=0.5")
    assert code == 0 and "ok" in out and "checked at the public inputs eps=0.5 only" in out, out


def test_a_fixed_input_proof_is_not_accepted_for_every_input(fixed, tmp_path, capsys):
    path, cert = fixed
    code, out = _check_at(cert, path, tmp_path, capsys)
    assert code == 3 and "leaves eps free" in out, out
    code, out = _check_at(cert, path, tmp_path, capsys, "eps=2")
    assert code == 3 and "has eps=2" in out, out


def test_a_fixed_input_proof_stripped_of_its_inputs_is_rejected(fixed, tmp_path, capsys):
    path, cert = fixed
    bare = _tamper(cert, lambda e: e.pop("inputs"))  # claims to hold for every eps
    for given in ((), ("eps=0.5",)):
        code, out = _check_at(bare, path, tmp_path, capsys, *given)
        assert code == 3 and "privacy cost is at most 1" in out, out


def test_a_tampered_fixed_input_is_rejected(fixed, tmp_path, capsys):
    path, cert = fixed
    other = _tamper(cert, lambda e: e.__setitem__("inputs", {"eps": "2"}))
    code, out = _check_at(other, path, tmp_path, capsys, "eps=2")  # the budget reads eps: 2 > 1
    assert code == 3 and "privacy cost is at most 1" in out, out
    code, out = _check_at(other, path, tmp_path, capsys, "eps=0.5")
    assert code == 3 and "holds only at the public inputs eps=2" in out, out


def test_a_fixed_secret_input_is_rejected(fixed, tmp_path, capsys):
    path, cert = fixed
    secret = _tamper(cert, lambda e: e["inputs"].__setitem__("q", 0))
    code, out = _check_at(secret, path, tmp_path, capsys, "eps=0.5", "q=0")
    assert code == 3 and "secret input q" in out, out


def test_laplace_with_fixed_eps_is_certified(tmp_path, capsys):
    path = _write(tmp_path, "laplace", TRUE["laplace"])
    cert = _certificate(path, inputs={"eps": 1})
    (entry,) = cert["privacy"]
    assert entry["inputs"] == {"eps": 1}
    assert _check_at(cert, path, tmp_path, capsys, "eps=1")[0] == 0


def test_a_private_hole_proof_by_cases_is_certified(tmp_path, capsys):
    text = (ROOT / "benchmarks/privacy/private/noisyMaxMonotone.prob").read_text()
    path = _write(tmp_path, "nm", text.replace("private    eps on out", "private    ? on out"))
    cert = _certificate(path)
    (entry,) = cert["privacy"]
    assert entry["epsilon"] == "eps" and len(entry["cases"]) == 2
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    half = _tamper(cert, lambda e: e.__setitem__("epsilon", "eps / 2"))
    code, out = check_proof(half, path, tmp_path, capsys)
    assert code == 3 and "privacy cost is at most" in out, out


@pytest.mark.parametrize(
    "change, message",
    [
        (_set_step(kind="teleport"), "kind: expected one of"),
        (_set_step(line="7"), "line: expected an integer"),
        (lambda e: e.__setitem__("verdict", "private"), "verdict"),
        (lambda e: e.__setitem__("loops", [{"line": 1, "col": 1, "invariants": [3]}]), "list of strings"),
        (lambda e: e.__setitem__("extra", 1), "unknown field"),
        (lambda e: e.__setitem__("inputs", []), "inputs: expected an object"),
    ],
)
def test_a_malformed_privacy_certificate_is_one_error(proved, tmp_path, capsys, change, message):
    path, cert = proved["laplace"]
    code, out = check_proof(_tamper(cert, change), path, tmp_path, capsys)
    assert code == 2 and "malformed certificate" in out and message in out and "Traceback" not in out, out

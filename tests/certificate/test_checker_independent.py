"""check-proof trusts nothing of the prover (issue 32): its path imports no ``tamp.prover``
module, and every rule it rebuilds itself — termination arguments (:mod:`tamp.certificate.termination`)
and the expected-failure calculus (:mod:`tamp.certificate.exp_rules`) — accepts the prover's
certificates and rejects tampered ones."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cert_testlib import BENCH, ROOT, ast, check, make_certificate, tampered

from tamp.prover import portfolio

NOISY_SUM = BENCH / "dp" / "noisySum.prob"
RETRY = BENCH / "corpus" / "retry" / "retry_count.prob"
NBS = BENCH / "corpus" / "binary_search" / "nbs_while.prob"

# Run check-proof in a fresh interpreter and report which tamp.prover modules got imported, and
# which modules import them: every import statement goes through builtins.__import__, whose
# globals name the importing module (an import of a module already loaded is seen too).
PROBE = r"""
import builtins, importlib.util, json, sys
importers = set()
real_import = builtins.__import__

def spy(name, globals=None, locals=None, fromlist=(), level=0):
    mod = (globals or {}).get("__name__", "")
    full = importlib.util.resolve_name("." * level + name, (globals or {}).get("__package__") or "") if level else name
    names = [full] + [f"{full}.{f}" for f in fromlist or () if f != "*"]
    if any(n == "tamp.prover" or n.startswith("tamp.prover.") for n in names) and not mod.startswith("tamp.prover"):
        importers.add(mod)
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = spy
from tamp.cli import main
codes = [main(["check-proof", c, f]) for c, f in zip(sys.argv[1::2], sys.argv[2::2])]
prover = sorted(m for m in sys.modules if m == "tamp.prover" or m.startswith("tamp.prover."))
print(json.dumps({"codes": codes, "prover": prover, "importers": sorted(importers)}))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")
    args = []
    for i, path in enumerate((NOISY_SUM, RETRY, NBS)):
        c = d / f"c{i}.json"
        c.write_text(json.dumps(make_certificate(path)))
        args += [str(c), str(path)]
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_check_proof_accepts_the_certificates_in_a_fresh_interpreter(probe):
    assert probe["codes"] == [0, 0, 0], probe


def test_check_proof_imports_no_prover_module(probe):
    """No module on check-proof's path imports the prover, directly or through another."""
    assert probe["importers"] == [], probe
    assert probe["prover"] == [], probe


# ---------------------------------------------------------------------------- termination


@pytest.fixture(scope="module")
def nbs_cert():
    return make_certificate(NBS)


def test_per_path_ranking_is_rechecked(nbs_cert, tmp_path, capsys):
    term = nbs_cert["programs"][0]["termination"]
    assert len(term) == 1 and term[0].get("paths"), term
    code, out = check(nbs_cert, NBS, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "change, needle",
    [
        (dict(rank=ast("hi - lo - 1")), "BOUNDED"),  # 0 at lo + 1 == hi while the loop still runs
        (dict(rank=ast("(hi - lo) / 2")), "DECREASE"),  # from hi - lo == 2, hi := mid lowers it by 1/2
        (dict(paths=False), "does not pass a decreasing edge"),  # per edge, with no decreasing edges
        (dict(invariant=ast("lo < hi")), "INDUCTIVE"),  # not kept by the last iteration
        (dict(invariant=ast("lo == 1")), "ENTRY"),  # lo := 0 before the loop
    ],
)
def test_tampered_per_path_ranking_is_rejected(nbs_cert, tmp_path, capsys, change, needle):
    cert = tampered(nbs_cert)
    cert["programs"][0]["termination"][0].update(change)
    code, out = check(cert, NBS, tmp_path, capsys)
    assert code == 3 and "TERMINATION" in out and needle in out, out


NEQ = """program walk(n: int, p: real)
  requires n >= 0 && 0 < p && p <= 1
  ensures !bad
  fails n * p
{
  i := 0;
  bad := false;
  while (i != n) {
    c ~ bern(p);
    bad := bad || c;
    i := i + 1;
  }
}
"""


def test_ranking_with_an_invariant_is_rechecked_and_its_invariant_too(tmp_path, capsys):
    path = tmp_path / "w.prob"
    path.write_text(NEQ)
    cert = make_certificate(path)
    term = cert["programs"][0]["termination"]
    assert len(term) == 1 and "invariant" in term[0], term
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    for inv, needle in (("i <= n - 1", "ENTRY"), ("i <= n && (i == 0 || i == n)", "INDUCTIVE")):
        bad = tampered(cert)
        bad["programs"][0]["termination"][0]["invariant"] = ast(inv)
        code, out = check(bad, path, tmp_path, capsys)
        assert code == 3 and needle in out, out
    bad = tampered(cert)  # without the invariant, i != n does not bound the rank n - i
    del bad["programs"][0]["termination"][0]["invariant"]
    code, out = check(bad, path, tmp_path, capsys)
    assert code == 3 and "BOUNDED" in out, out


# ---------------------------------------------------------------------------- expected failure


@pytest.fixture(scope="module")
def retry_cert():
    # an expected-failure proof is wanted: the per-iteration composition (the Las Vegas rule)
    # would prove retry_count first, so it is turned off here
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(portfolio.Nesting, "attempt", lambda self, problem: portfolio.Attempt())
        return make_certificate(RETRY)


def test_expectation_proof_of_a_loop_the_checker_unrolls_is_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"].append(dict(c["expectation"][0]["loops"][0], loop=1))
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3 and "SHAPE" in out, out


def test_raised_exit_chance_is_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    loop = c["expectation"][0]["loops"][0]
    assert loop["termination"] == "exit", loop
    loop["measure"] = ast("2 * s")
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3 and "TERM" in out, out


BIRTHDAY = BENCH / "corpus" / "randomized" / "birthday.prob"


def test_birthday_union_bound_is_rebuilt_by_the_checker(tmp_path, capsys):
    """``b[i] ~ unif(0, m - 1)`` read in the tests ``b[p] == b[i]``: the checker's own union bound
    over the values to avoid (:mod:`tamp.certificate.exp_hits`) accepts the prover's proof, and
    the same proof for a bound smaller by one collision chance 1/m is rejected."""
    cert = make_certificate(BIRTHDAY)
    code, out = check(cert, BIRTHDAY, tmp_path, capsys)
    assert code == 0, out
    lower = "n * (n - 1) / (2 * m) - 1 / (2 * m)"
    bad = tampered(cert)
    bad["expectation"][0]["bound"] = ast(lower)
    code, out = check(bad, BIRTHDAY, tmp_path, capsys, ["--bound", lower])
    assert code == 3 and "BUDGET" in out, out

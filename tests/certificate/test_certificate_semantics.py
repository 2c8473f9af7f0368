"""check-proof agrees with the prover on what a failure bound means: no certificate is accepted
for a program with a conditioning assume (it has no argument for the conditional bound), and
every loop needs a ranking function that check-proof re-checks (a run that never ends fails)."""

import pytest
from cert_testlib import BENCH, check, make_certificate, tampered

COND = """program cond1()
  ensures !x
  fails 0.1
{
  x ~ bern(0.1);
  assume(x);
}
"""

SPIN = """program spin(p: real)
  requires 0 < p && p < 1
  ensures ok
  fails 0
{
  ok ~ bern(1 - p);
  while (!ok) { skip; }
}
"""


def _forged(tmp_path, text, monkeypatch, *patches):
    """A certificate written by a prover with one of the new checks switched off (what the
    old prover produced): check-proof must still reject it."""
    path = tmp_path / "p.prob"
    path.write_text(text)
    for module, name, value in patches:
        monkeypatch.setattr(module, name, value)
    cert = make_certificate(path)
    monkeypatch.undo()
    return path, cert


def test_certificate_for_a_conditioning_assume_is_rejected(tmp_path, capsys, monkeypatch):
    import tamp.prover.portfolio as portfolio  # where the prover refuses a conditioning assume

    path, cert = _forged(tmp_path, COND, monkeypatch, (portfolio, "conditioning_refusal", lambda cfa, p: ""))
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "rejected: " in out, out
    assert "p.prob:6:3" in out and "conditions on a sampled value" in out, out


def test_certificate_for_a_loop_that_may_not_terminate_is_rejected(tmp_path, capsys, monkeypatch):
    import tamp.prover.loops.prove as loops

    path, cert = _forged(tmp_path, SPIN, monkeypatch, (loops, "prove_termination", lambda *a: ([], [])))
    assert cert["programs"][0]["termination"] == []
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "TERMINATION" in out and "0 termination arguments" in out, out


@pytest.fixture(scope="module")
def noisy_sum_cert():
    return make_certificate(BENCH / "dp" / "noisySum.prob")


def test_genuine_loop_certificate_carries_a_ranking_and_is_accepted(noisy_sum_cert, tmp_path, capsys):
    term = noisy_sum_cert["programs"][0]["termination"]
    assert len(term) == 1 and term[0]["decreasing"]
    code, out = check(noisy_sum_cert, BENCH / "dp" / "noisySum.prob", tmp_path, capsys)
    assert code == 0, out


def _rank(text):
    from cert_testlib import ast

    return ast(text)


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda t: t.clear(), "0 termination arguments"),
        (lambda t: t[0].update(decreasing=[]), "does not pass a decreasing edge"),
        (lambda t: t[0].update(rank=_rank("n - i / 2")), "DECREASE"),
        (lambda t: t[0].update(rank=_rank("1")), "DECREASE"),
        (lambda t: t[0].update(rank=_rank("n - i - 1")), "BOUNDED"),
        (lambda t: t.append(dict(t[0])), "2 termination arguments"),
        (lambda t: t[0].update(head=0), "termination argument"),
    ],
)
def test_tampered_ranking_is_rejected(noisy_sum_cert, tmp_path, capsys, mutate, needle):
    cert = tampered(noisy_sum_cert)
    mutate(cert["programs"][0]["termination"])
    code, out = check(cert, BENCH / "dp" / "noisySum.prob", tmp_path, capsys)
    assert code != 0 and "rejected: " in out and needle in out, out


def test_malformed_ranking_is_malformed(noisy_sum_cert, tmp_path, capsys):
    cert = tampered(noisy_sum_cert)
    cert["programs"][0]["termination"][0]["decreasing"] = [[1, 2]]
    code, out = check(cert, BENCH / "dp" / "noisySum.prob", tmp_path, capsys)
    assert code == 2 and "termination[0].decreasing[0]" in out, out


RETRY = """program retry(q: real)
  requires 0 < q && q <= 1
  ensures ok
  fails 0
{
  ok ~ bern(q);
  while (!ok) { ok ~ bern(q); }
}
"""


def test_geometric_retry_certificate_is_accepted_and_its_argument_rechecked(tmp_path, capsys):
    path = tmp_path / "r.prob"
    path.write_text(RETRY)
    cert = make_certificate(path)
    term = cert["programs"][0]["termination"]
    assert [t["kind"] for t in term] == ["geometric"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    bad = tampered(cert)
    first = bad["programs"][0]["cfa"]["edges"][0]  # the sampling before the loop, not in its body
    bad["programs"][0]["termination"][0]["sample"] = [first["src"], first["dst"], first["key"]]
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "TERMINATION" in out, out


def _unchecked_arguments(cfa, lps, enc, valid):
    """The prover's termination arguments, with their solver obligations skipped."""
    from tamp.prover.loops.termination import find_rankings

    return find_rankings(cfa, lps)[0], []


def test_geometric_argument_with_a_possibly_zero_exit_probability_is_rejected(tmp_path, capsys, monkeypatch):
    import tamp.prover.loops.prove as loops

    path, cert = _forged(
        tmp_path, RETRY.replace("0 < q", "0 <= q"), monkeypatch, (loops, "prove_termination", _unchecked_arguments)
    )
    assert [t["kind"] for t in cert["programs"][0]["termination"]] == ["geometric"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "EXITPROB" in out, out

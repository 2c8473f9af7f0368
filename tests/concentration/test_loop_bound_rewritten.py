"""Issue 31, item 1: a loop's trip count is what the loop does (the CFA's counted-loop analysis,
:func:`tamp.cfa.loops.counted_loop`), not what a ``for`` loop's syntax suggests. A body that
rewrites the bound makes more draws than the bound said (a false claim, refuted by simulation)
or never ends: neither is proved, and a certificate that claims the syntactic count is rejected."""

import copy
import json

import pytest

from lang.parser import parse
from tamp.api import prove
from tamp.certificate.checker import check_certificate
from tamp.certificate.format import source_digest
from tamp.certificate.reader import decode
from tamp.certificate.writer import file_certificate
from tamp.cfa import build_cfa
from tamp.cfa.loops import NotCounted, counted_loop
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.simulation import simulate

TEMPLATE = """
program boundRewritten(n: int, r: real)
  requires n >= 1 && r == 1/2
  ensures  k <= n * r + sqrt(n * log(1 / 0.1) / 2)
  fails    0.1
{{
  k := 0;
  m := n;
  for i in 0..m {{
    f ~ bern(r);
    if (f) {{ k := k + 1; }}
    {last}
  }}
}}
"""
REWRITTEN = TEMPLATE.format(last="m := 100 * n;")
GROWS = TEMPLATE.format(last="m := m + 1;")
HONEST = TEMPLATE.format(last="skip;")


def _write(tmp_path, text, name="p.prob"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", [REWRITTEN, GROWS], ids=["bound-100n", "bound-grows"])
def test_rewritten_bound_is_not_proved(tmp_path, text):
    res = prove(str(_write(tmp_path, text)), timeout=30)
    part = res.programs[0]
    assert part.verdict != "proved", part.render_text()
    assert not isinstance(part, ConcentrationResult)


def test_rewritten_bound_claim_is_false(tmp_path):
    """Ground truth: with the bound rewritten the claim fails (100·n fair draws against n/2 plus a
    margin), so 'proved' would have been wrong."""
    sim = simulate(str(_write(tmp_path, REWRITTEN)), {"n": 10, "r": 0.5}, runs=400, seed=3)
    assert sim.verdict == "refuted", sim.render_text()


def test_honest_loop_is_still_proved(tmp_path):
    res = prove(str(_write(tmp_path, HONEST)), timeout=30)
    part = res.programs[0]
    assert part.verdict == "proved" and isinstance(part, ConcentrationResult), part.render_text()
    assert [show.counter for show in part.proof.claim.loops] == ["i"]


def test_counted_loop_reads_the_cfa():
    def head(text):
        cfa = build_cfa(parse(text).programs[0])
        return cfa, cfa.loop_heads[0]

    cfa, h = head(HONEST)
    cl = counted_loop(cfa, h)
    assert (cl.counter, cl.up) == ("i", True)
    for text in (REWRITTEN, GROWS):
        cfa, h = head(text)
        with pytest.raises(NotCounted, match="bound reads 'm'"):
            counted_loop(cfa, h)


def _certify(path):
    res = prove(str(path), timeout=30)
    raw = path.read_bytes()
    return json.loads(json.dumps(file_certificate(res, raw)))


def _check(cert, text, name):
    src = parse(text, name)
    return check_certificate(decode(cert), src, text.encode(), None, None)


def test_forged_count_certificate_is_rejected(tmp_path):
    """The honest program's certificate (n draws) presented for the rewritten one (100·n draws):
    check-proof derives the loop again from the program and rejects it."""
    path = _write(tmp_path, HONEST)
    cert = _certify(path)
    assert _check(cert, HONEST, str(path)).ok
    for text in (REWRITTEN, GROWS):
        forged = copy.deepcopy(cert)
        forged["source_sha256"] = source_digest(text.encode())
        report = _check(forged, text, str(path))
        assert not report.ok
        assert "SHAPE" in report.reason or "LOOP" in report.reason, report.reason


def test_certificate_with_another_range_is_rejected(tmp_path):
    path = _write(tmp_path, HONEST)
    cert = _certify(path)
    forged = copy.deepcopy(cert)
    forged["concentration"][0]["loops"][0]["hi"] = {
        "node": "Binary",
        "op": "*",
        "left": {"node": "Num", "value": "2", "is_int": True},
        "right": {"node": "Var", "name": "n"},
    }
    report = _check(forged, HONEST, str(path))
    assert not report.ok and "LOOP" in report.reason, report.reason


def test_concentration_checker_imports_nothing_from_the_prover():
    """check-proof derives the sums and loops from the program itself (issue 31): its modules for
    concentration import no module of tamp.prover."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "tamp"
    for rel in ("certificate/conc_checker.py", "cfa/sums.py", "cfa/loops.py"):
        tree = ast.parse((root / rel).read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in names if m.startswith("tamp.prover")], rel

"""Proof certificates: round trips on proved benchmarks, and tampering that must be REJECTED.

Every tampered certificate below changes one thing a proof rests on; the checker must refuse it
(exit 3) and name the rule and place. Malformed input exits 2 with a clear message.
"""

from __future__ import annotations

import json
import re

import pytest
from cert_testlib import BENCH, ast, aut, check, exit_nodes, make_certificate, node, sampling_edges, tampered

EX1 = BENCH / "illustrative" / "ex1.prob"
LAPLACE = BENCH / "illustrative" / "laplace.prob"
EX2 = BENCH / "dp" / "ex2.prob"
RANDRESP = BENCH / "dp" / "randResp.prob"


@pytest.fixture(scope="module")
def ex1_cert():
    return make_certificate(EX1)


@pytest.fixture(scope="module")
def laplace_cert():
    return make_certificate(LAPLACE)


@pytest.fixture(scope="module")
def ex2_cert():
    return make_certificate(EX2)


# ---------------------------------------------------------------------------- accepted


@pytest.mark.parametrize("which", ["ex1", "laplace", "ex2"])
def test_genuine_certificate_is_accepted(which, ex1_cert, laplace_cert, ex2_cert, tmp_path, capsys):
    cert, path = {"ex1": (ex1_cert, EX1), "laplace": (laplace_cert, LAPLACE), "ex2": (ex2_cert, EX2)}[which]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("ok: ") and "obligations re-checked in" in out


def test_randresp_round_trip_through_the_cli(tmp_path, capsys):
    from tamp.cli import main

    cert = tmp_path / "rr.json"
    assert main(["prove", str(RANDRESP), "--certificate", str(cert), "--quiet"]) == 0
    assert main(["check-proof", str(cert), str(RANDRESP)]) == 0
    assert "ok: " in capsys.readouterr().out


def test_certificate_keeps_internal_names_exactly(ex2_cert):
    text = json.dumps(ex2_cert)
    # labels and statements are ASTs, not printed text, and every axiom has a derivation
    assert all(e["axiom"]["parts"] is not None for e in sampling_edges(ex2_cert))
    assert '"node": "Quant"' in text or '"node": "Binary"' in text


# ---------------------------------------------------------------------------- tampered


def test_weakened_label_at_exit_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    for n in exit_nodes(cert):
        n["lambda"] = ast("true")
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "rejected: " in out and "EXIT" in out, out
    # the place in the user's terms, never an automaton state's id
    assert "at the end of the program" in out and not re.search(r"\bq\d+\b", out), out


def test_weakened_loop_invariant_rejected(ex2_cert, tmp_path, capsys):
    cert = tampered(ex2_cert)
    heads = cert["programs"][0]["cfa"]["loop_heads"]
    for n in aut(cert)["nodes"]:
        if n["cfa_node"] in heads:
            n["lambda"] = ast("true")
    code, out = check(cert, EX2, tmp_path, capsys)
    assert code == 3 and "rejected: " in out and any(r in out for r in ("STEP", "EXIT", "BUDGET")), out


def test_dropped_edge_rejected_by_cover(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    edges = aut(cert)["edges"]
    victim = next(e for e in edges if e["stmt"]["node"] == "Assume")
    edges.remove(victim)
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "COVER" in out and "does not follow `" in out, out
    assert "(line " in out and not re.search(r"\bq\d+\b", out), out


def test_changed_statement_rejected_by_cover(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    e = next(e for e in aut(cert)["edges"] if e["stmt"]["node"] == "Assume")
    e["stmt"] = {"node": "Assume", "cond": ast("true")}
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "COVER" in out and "where the program has `" in out, out
    assert not re.search(r"\bq\d+\b", out), out


def test_root_moved_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    a = aut(cert)
    a["root"] = exit_nodes(cert)[0]["id"]
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "COVER" in out and "not at the start of the program" in out, out
    assert "starts at the end of the program" in out and not re.search(r"\bq\d+\b", out), out


def test_lowered_kappa_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    for n in exit_nodes(cert):
        n["kappa"] = ast("0")
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "STEP" in out, out


def test_kappa_spending_the_whole_bound_before_a_costly_sampling_rejected(ex2_cert, tmp_path, capsys):
    """BUDGET is asked at the root only; what keeps κ within β is each sampling's own obligation
    κ(q) + cost <= β — a certificate that claims the bound is already spent before a costly
    sampling must fail exactly there."""
    cert = tampered(ex2_cert)
    edge = next(e for e in sampling_edges(cert) if e["axiom"]["cost"] != ast("0"))
    assert edge["src"] != aut(cert)["root"]
    node(cert, edge["src"])["kappa"] = cert["programs"][0]["bound"]
    code, out = check(cert, EX2, tmp_path, capsys)
    assert code == 3 and "STEP" in out and "cost within" in out, out


def test_kappa_above_bound_after_the_last_sampling_is_harmless(ex1_cert, tmp_path, capsys):
    """The induction bounds the failure from q by max(0, β − κ(q)): an exit whose κ overshoots β
    (nothing is sampled after it) does not make a proof wrong, and the checker accepts it."""
    cert = tampered(ex1_cert)
    for n in exit_nodes(cert):
        n["kappa"] = ast("1 + p")
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 0 and "ok: " in out, out


def test_lowered_bound_in_certificate_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    prog = cert["programs"][0]
    prog["bound"] = ast("p / 2")
    prog["cfa"]["bound"] = ast("p / 2")
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "bound" in out and "p / 2" in out, out


def test_changed_requires_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    cert["programs"][0]["cfa"]["requires"] = [ast("0 < p && p <= 1/10")]
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "CFA differs" in out and "requires" in out, out


def test_axiom_cost_lowered_rejected(laplace_cert, tmp_path, capsys):
    cert = tampered(laplace_cert)
    e = sampling_edges(cert)[0]
    e["axiom"]["cost"] = {"node": "Binary", "op": "/", "left": e["axiom"]["cost"], "right": ast("2")}
    code, out = check(cert, LAPLACE, tmp_path, capsys)
    assert code == 3 and "AXIOM" in out and "library's instantiation" in out, out


def test_axiom_bad_event_narrowed_rejected(laplace_cert, tmp_path, capsys):
    cert = tampered(laplace_cert)
    e = sampling_edges(cert)[0]
    e["axiom"]["bad"] = ast("false")
    code, out = check(cert, LAPLACE, tmp_path, capsys)
    assert code == 3 and "AXIOM" in out, out


def test_axiom_swapped_for_inapplicable_family_rejected(laplace_cert, tmp_path, capsys):
    cert = tampered(laplace_cert)
    e = sampling_edges(cert)[0]
    e["axiom"]["parts"] = {"family": "gaussian", "param": {"expr": ast("p")}}
    code, out = check(cert, LAPLACE, tmp_path, capsys)
    assert code == 3 and "AXIOM" in out and "no axiom family 'gaussian' applies" in out, out


def test_axiom_with_unknown_choice_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    e = sampling_edges(cert)[0]
    e["axiom"]["parts"] = {"family": "bernoulli", "param": {"choice": "always"}}
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "AXIOM" in out and "refuses" in out, out


def test_sampling_without_axiom_rejected(ex1_cert, tmp_path, capsys):
    cert = tampered(ex1_cert)
    sampling_edges(cert)[-1]["axiom"] = None
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "has no axiom" in out, out


def test_different_program_file_rejected(ex1_cert, tmp_path, capsys):
    other = BENCH / "variants" / "ex1_failsHalf.prob"
    code, out = check(ex1_cert, other, tmp_path, capsys)
    assert code == 3 and "different source text" in out, out


def test_different_file_with_forged_hash_rejected(ex1_cert, tmp_path, capsys):
    import hashlib

    # same program name, smaller bound: even with the hash forged, the claim is rebuilt from the file
    src = EX1.read_text().replace("fails    p", "fails    p / 2")
    f = tmp_path / "ex1.prob"
    f.write_text(src)
    cert = tampered(ex1_cert)
    cert["source_sha256"] = hashlib.sha256(src.encode()).hexdigest()
    code, out = check(cert, f, tmp_path, capsys)
    assert code == 3 and "bound" in out, out


def test_claim_made_with_bound_needs_the_same_bound(tmp_path, capsys):
    cert = make_certificate(EX1, bound="2 * p")
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "bound" in out, out
    code, out = check(cert, EX1, tmp_path, capsys, extra=["--bound", "2 * p"])
    assert code == 0, out


# ---------------------------------------------------------------------------- malformed


def test_malformed_json_exit_2(tmp_path, capsys):
    from tamp.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tamp-certificate", ')
    code = main(["check-proof", str(bad), str(EX1)])
    err = capsys.readouterr().err
    assert code == 2 and "malformed JSON" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda c: c.update(format="other"), "not a tamp certificate"),
        (lambda c: c.update(version=99), "version"),
        (lambda c: c.update(programs="x"), "programs"),
        (lambda c: aut(c)["nodes"][0].update(kappa={"node": "Nope"}), "unknown node kind"),
        (lambda c: aut(c)["nodes"][0].update(kappa={"node": "Num", "value": "1/0", "is_int": False}), "rational"),
        (lambda c: aut(c)["edges"][0].update(dst=999), "no node 999"),
        (lambda c: c["programs"][0]["automata"].append(c["programs"][0]["automata"][0]), "exactly one automaton"),
    ],
)
def test_malformed_certificate_exit_2(ex1_cert, tmp_path, capsys, mutate, needle):
    cert = tampered(ex1_cert)
    mutate(cert)
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 2 and needle in out and "Traceback" not in out, out


def test_missing_certificate_file_exit_2(tmp_path, capsys):
    from tamp.cli import main

    code = main(["check-proof", str(tmp_path / "none.json"), str(EX1)])
    assert code == 2 and "cannot read" in capsys.readouterr().err


def test_split_cycle_cannot_justify_itself(ex1_cert, tmp_path, capsys):
    """A root that only case-splits into itself satisfies every local obligation (INIT, BUDGET,
    STEP, split coverage) yet follows no statement: it must be refused, not 'proved'."""
    cert = tampered(ex1_cert)
    a = aut(cert)
    entry = cert["programs"][0]["cfa"]["entry"]
    a["root"], a["exits"] = 0, []
    a["nodes"] = [{"id": 0, "cfa_node": entry, "lambda": ast("true"), "kappa": ast("0")}]
    a["edges"] = [
        {
            "src": 0,
            "dst": 0,
            "kind": "split",
            "stmt": {"node": "Assume", "cond": ast("true")},
            "cfa_edge": None,
            "axiom": None,
        }
    ]
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "case splits form a cycle" in out, out


@pytest.mark.parametrize(
    "text, note",
    [
        ("program h(n: int) requires n > 1 && n < 0 ensures !y fails 0 { y ~ bern(0.5); }", "vacuously"),
        ("program h() ensures !y fails 2 { y ~ bern(0.5); }", "trivially"),
    ],
)
def test_trivial_claims_are_flagged(tmp_path, capsys, text, note):
    from tamp.cli import main

    f = tmp_path / "t.prob"
    f.write_text(text)
    cert = tmp_path / "t.json"
    assert main(["prove", str(f), "--certificate", str(cert), "--quiet"]) == 0
    assert main(["check-proof", str(cert), str(f)]) == 0
    assert note in capsys.readouterr().out


def test_claim_made_with_fixed_inputs_needs_the_same_inputs(tmp_path, capsys):
    cert = make_certificate(EX1, inputs={"p": 1})
    code, out = check(cert, EX1, tmp_path, capsys)
    assert code == 3 and "requires" in out, out
    code, out = check(cert, EX1, tmp_path, capsys, extra=["--input", "p=1"])
    assert code == 0, out


def test_offered_facts_are_re_proved(ex2_cert, tmp_path, capsys):
    cert = tampered(ex2_cert)
    cert["programs"][0]["facts"] = [ast("p <= 1/2")]  # does not follow from requires
    code, out = check(cert, EX2, tmp_path, capsys)
    assert code == 3 and "FACT" in out, out
    cert["programs"][0]["facts"] = [ast("i <= n ==> p * i <= p * n")]  # valid under requires (p > 0)
    code, out = check(cert, EX2, tmp_path, capsys)
    assert code == 0, out

"""Certificates of expected-failure proofs that read an exponential draw in one tail test
(session 22, rates2): the checker has its own copy of the exponential's survival function
(:mod:`tamp.certificate.exp_tails`), so a changed rate in a per-iteration bound is rejected, a
certificate does not carry over to the false sibling, and a test outside the rule (or a
distribution without a closed-form tail) gets no chance from the checker."""

import hashlib
import json
from pathlib import Path

from support.certificates import certify, check_in_process

from lang import ast as A
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.certificate import exp_rules
from tamp.certificate.exp_tails import exp_tail
from tamp.show import show_expr

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "rates2"


def _copy(c):
    return json.loads(json.dumps(c))


def _proved(name):
    path = DEV / f"{name}.prob"
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    assert check_in_process(cert, path, raw).ok
    return path, cert, raw


def _expectation_parts(cert):
    """Every certificate part written by the expected-failure engine (the per-iteration bound of
    a nesting proof, or a top-level one)."""
    out = []

    def walk(o):
        if isinstance(o, dict):
            if o.get("method") == "expectation" and "bound" in o:
                out.append(o)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(cert)
    return out


def test_burst_tail_rate_cannot_be_tampered_with():
    path, cert, raw = _proved("burst_tail")
    parts = _expectation_parts(cert)
    assert parts, "the per-iteration bound is the expected-failure engine's"
    assert show_expr(parse_expr(parts[0]["bound_text"])) == show_expr(parse_expr("q * exp(-L / s)"))
    bad = _copy(cert)
    part = _expectation_parts(bad)[0]
    smaller = parse_expr("q * exp(-2 * L / s)")  # a changed rate: below the true chance
    part["bound"] = to_json(smaller)
    part["bound_text"] = show_expr(smaller)
    assert not check_in_process(bad, path, raw).ok


def test_shifted_wait_certificate_does_not_carry_over_to_the_false_sibling():
    path, cert, raw = _proved("shifted_wait")
    assert _expectation_parts(cert) or cert.get("expectation")
    false = DEV / "shifted_wait_false.prob"
    assert not check_in_process(cert, false, false.read_bytes()).ok
    # the same certificate for the program with a Gaussian draw (no closed-form tail in the
    # rules), its recorded source digest updated so that only the rule can refuse it
    bad = _copy(cert)
    other = raw.replace(b"exp(k, s)", b"gauss(k, s)")
    bad["source_sha256"] = hashlib.sha256(other).hexdigest()
    report = check_in_process(bad, path, other)
    assert not report.ok and "different source" not in report.reason, report.reason


def test_the_checkers_own_tail_is_what_accepts(monkeypatch):
    path, cert, raw = _proved("shifted_wait")
    monkeypatch.setattr(exp_rules, "exp_tail", lambda *args: None)
    report = check_in_process(cert, path, raw)
    assert not report.ok and "SHAPE" in report.reason, report.reason


def test_checker_exp_tail_is_exact_and_refuses_other_tests():
    k, sc = A.Var("k"), A.Var("s")
    got = exp_tail(parse_expr("x > t"), "x", k, sc)
    assert got is not None and show_expr(got) == show_expr(parse_expr("t - k >= 0 ? exp(-((t - k) / s)) : 1"))
    low = exp_tail(parse_expr("t > x"), "x", k, sc)
    assert low is not None and show_expr(low) == show_expr(parse_expr("1 - (t - k >= 0 ? exp(-((t - k) / s)) : 1)"))
    assert exp_tail(parse_expr("abs(x - k) > t"), "x", k, sc) is None
    assert exp_tail(parse_expr("x > x * t"), "x", k, sc) is None
    assert exp_tail(parse_expr("x > t"), "x", A.Var("x"), sc) is None


def _nest_part(cert):
    parts = []

    def walk(o):
        if isinstance(o, dict):
            if "per_iteration" in o:
                parts.append(o)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(cert)
    return parts


def test_rule_of_two_per_iteration_chance_cannot_be_tampered_with():
    path, cert, raw = _proved("rule_of_two")
    (part,) = _nest_part(cert)
    bad = _copy(cert)
    (bpart,) = _nest_part(bad)
    smaller = parse_expr("1 - 2 * p")  # a changed number: below the iteration's true chance 1 - p
    bpart["per_iteration"] = to_json(smaller)
    assert not check_in_process(bad, path, raw).ok
    false = DEV / "rule_of_two_false.prob"
    assert not check_in_process(cert, false, false.read_bytes()).ok

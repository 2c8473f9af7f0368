"""Hypothesis fuzzing of certificates: any JSON surgery on a genuine certificate gives OK (the
change did not matter to the proof), rejected (3) or a malformed-certificate error (2) — never
a crash. When it still says OK, the mutated certificate must still prove the same claim, which
we confirm by checking that the certificate's proof-relevant content is unchanged or that the
claim holds by simulation."""

from __future__ import annotations

import copy
import json

import pytest
from cert_testlib import BENCH, make_certificate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EX1 = BENCH / "illustrative" / "ex1.prob"
LAPLACE = BENCH / "illustrative" / "laplace.prob"


def paths(x, prefix=()):
    """Every path into a JSON value (dict keys / list indices)."""
    yield prefix
    if isinstance(x, dict):
        for k, v in x.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from paths(v, prefix + (i,))


def get(x, path):
    for p in path:
        x = x[p]
    return x


def put(x, path, value):
    if not path:
        return value
    get(x, path[:-1])[path[-1]] = value
    return x


@pytest.fixture(scope="module")
def certs():
    return {"ex1": make_certificate(EX1), "laplace": make_certificate(LAPLACE)}


REPLACEMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.text(max_size=5),
    st.just({"node": "BoolLit", "value": True}),
    st.just({"node": "Num", "value": "0", "is_int": True}),
    st.just({"node": "Var", "name": "p"}),
    st.just([]),
    st.just({}),
)


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    which=st.sampled_from(["ex1", "laplace"]),
    pick=st.integers(0, 10**6),
    donor=st.integers(0, 10**6),
    use_donor=st.booleans(),
    repl=REPLACEMENTS,
)
def test_mutated_certificates_never_crash_the_checker(certs, which, pick, donor, use_donor, repl):
    from lang.parser import parse_file
    from tamp.certificate import MalformedCertificate, check_certificate, decode

    path = EX1 if which == "ex1" else LAPLACE
    cert = copy.deepcopy(certs[which])
    all_paths = [p for p in paths(cert) if p]
    target = all_paths[pick % len(all_paths)]
    value = copy.deepcopy(get(cert, all_paths[donor % len(all_paths)])) if use_donor else repl
    put(cert, target, value)
    try:
        report = check_certificate(decode(json.loads(json.dumps(cert))), parse_file(str(path)), path.read_bytes())
    except MalformedCertificate:
        return
    if report.ok:
        # accepted: the proof-relevant part must be unchanged, or the change is one the checker
        # does not rely on (the informational fields)
        informational = {"file", "claim", "obligations", "exits", "family", "param", "bound_text", "format"}
        changed = _diff(certs[which], cert)
        assert changed is None or changed & informational or _same_claim(certs[which], cert), (target, value)


def _diff(a, b, path=()):
    """The set of keys on the path to the first difference (None when equal)."""
    if type(a) is not type(b):
        return set(k for k in path if isinstance(k, str))
    if isinstance(a, dict):
        for k in set(a) | set(b):
            if k not in a or k not in b:
                return set(x for x in path + (k,) if isinstance(x, str))
            d = _diff(a[k], b[k], path + (k,))
            if d is not None:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return set(x for x in path if isinstance(x, str))
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, path + (i,))
            if d is not None:
                return d
        return None
    return None if a == b else set(x for x in path if isinstance(x, str))


def _same_claim(a, b):
    pa, pb = a["programs"][0], b["programs"][0]
    return pa["cfa"] == pb["cfa"] and pa["bound"] == pb["bound"] and a["source_sha256"] == b["source_sha256"]


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(which=st.sampled_from(["ex1", "laplace"]), pick=st.integers(0, 10**6), repl=REPLACEMENTS)
def test_mutated_automata_never_crash_the_checker(certs, which, pick, repl):
    """The same, aimed at the automaton (labels, κ, statements, axioms)."""
    from lang.parser import parse_file
    from tamp.certificate import MalformedCertificate, check_certificate, decode

    path = EX1 if which == "ex1" else LAPLACE
    cert = copy.deepcopy(certs[which])
    all_paths = [p for p in paths(cert) if len(p) > 3 and p[2] == "automata"]
    put(cert, all_paths[pick % len(all_paths)], copy.deepcopy(repl))
    try:
        check_certificate(decode(json.loads(json.dumps(cert))), parse_file(str(path)), path.read_bytes())
    except MalformedCertificate:
        pass


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("lambda", {"node": "Num", "value": "0", "is_int": True}, "is not a formula"),
        ("lambda", {"node": "Var", "name": "p"}, "is not a formula"),
        ("kappa", {"node": "BoolLit", "value": True}, "is not a number"),
        ("lambda", {"node": "Var", "name": "zz"}, "cannot encode"),
    ],
)
def test_ill_sorted_labels_rejected(certs, field, value, needle):
    from lang.parser import parse_file
    from tamp.certificate import check_certificate, decode

    cert = copy.deepcopy(certs["ex1"])
    cert["programs"][0]["automata"][0]["nodes"][1][field] = value
    report = check_certificate(decode(cert), parse_file(str(EX1)), EX1.read_bytes())
    assert not report.ok and needle in report.reason

"""Power cores ``F·exp(-a·(iterations left))`` (tamp/prover/expectation/powers.py): the loops
that fail only if every trial misses, (1 - a)^m <= exp(-a·m), proved by expected failure,
certified, and a tampered chance or exponent in the certificate rejected."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse_file
from lang.serialize import from_json, to_json
from lang.walk import Transformer
from tamp.prover.expectation.powers import iterations_left, power_cores, trial_chances
from tamp.show import show_expr

DEV = BENCHMARKS / "prover4" / "dev"
OFFSPRING = DEV / "blind9" / "evolutionary" / "offspring_differs.prob"
NEW = [OFFSPRING, DEV / "powers" / "leader_miss.prob", DEV / "powers" / "probe_table.prob"]


def _loop(path):
    prog = parse_file(str(path)).programs[0]
    return next(n for n in A.walk(prog.body) if isinstance(n, (A.For, A.While)))


def test_the_chance_and_the_iterations_left_are_read_off_the_loop():
    s = _loop(OFFSPRING)
    assert [show_expr(e) for e in iterations_left(s)] == ["n - i"]
    assert [show_expr(e) for e in trial_chances(s.body, {"n"})] == ["1 / n", "1 - 1 / n"]
    assert trial_chances(s.body, set()) == []  # a chance reading a non-input is not proposed
    cores = [show_expr(c) for c in power_cores(s, A.Var("F"), ["n"], {"n": A.INT})]
    assert "F * exp(-(1 / n * (n - i)))" in cores


@pytest.mark.parametrize("path", NEW, ids=lambda p: p.stem)
def test_every_trial_missing_is_proved_by_expected_failure(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert r.stats["method"] == "expectation"


@pytest.mark.parametrize("path", [p.with_name(p.stem + "_false.prob") for p in NEW], ids=lambda p: p.stem)
def test_the_false_siblings_are_not_proved(path):
    assert _prove(path).verdict != "proved"


class _Scale(Transformer):
    """``1 / n`` → ``2 / n`` wherever it occurs: a doubled per-trial chance."""

    def Binary(self, node, kids):
        left, right = kids
        if node.op == "/" and show_expr(left) == "1" and show_expr(right) == "n":
            return A.Binary("/", A.num(2), right)
        return A.Binary(node.op, left, right)


class _Drop(Transformer):
    """``1 - 1/n`` → ``1``: the exponent's base changed from the miss chance."""

    def Call(self, node, kids):
        if node.func == "exp":
            return A.Call("exp", (A.Unary("-", A.num(0)),))
        return A.Call(node.func, tuple(kids))


@pytest.mark.parametrize("tamper", [_Scale(), _Drop()], ids=["doubled-chance", "dropped-exponent"])
def test_the_power_core_is_certified_and_a_tampered_one_is_rejected(tmp_path, capsys, tamper):
    cert = proved_certificate(OFFSPRING)
    assert check_proof(cert, OFFSPRING, tmp_path, capsys)[0] == 0
    loops = cert["expectation"][0]["loops"]
    old = from_json(loops[0]["core"])
    assert "exp(" in show_expr(old)
    new = tamper.walk(old)
    assert show_expr(new) != show_expr(old)
    loops[0]["core"] = to_json(new)
    code, out = check_proof(cert, OFFSPRING, tmp_path, capsys)
    assert code != 0, out

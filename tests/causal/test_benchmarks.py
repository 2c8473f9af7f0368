"""The benchmark networks parse, and the sex-blind ones are certified (fast: structural)."""

import pytest
from locations import REPO

from lang.parser import parse_file

BENCH = REPO / "benchmarks" / "causal"


def test_generator_writes_parsable_programs(tmp_path):
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("gen", BENCH / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    rng = np.random.default_rng(0)
    params = [
        (np.round(rng.normal(size=(3, 2)), 4), np.round(rng.normal(size=2), 4)),
        (np.round(rng.normal(size=(2, 1)), 4), np.round(rng.normal(size=1), 4)),
    ]
    text = gen.to_prob("tiny", params, 2, "test")
    f = tmp_path / "tiny.prob"
    f.write_text(text)
    prog = parse_file(str(f)).programs[0]
    assert [p.name for p in prog.params] == ["x1", "x2", "sex"]
    # the program computes what the weights say
    from fractions import Fraction

    from tamp.causal.analyzer import Analyzer, Options
    from tamp.causal.symexec import Context

    a = Analyzer(prog, prog.ensures[0], Options(), Context())
    pt = {"x1": Fraction(1, 4), "x2": Fraction(3, 4)}
    outs, _ = a.point_outputs(pt)
    for i, sex in enumerate((0, 1)):
        x = np.array([[0.25, 0.75, sex]])
        assert outs[i] == int(gen.forward(params, x)[0])


@pytest.mark.parametrize("path", sorted(BENCH.glob("*_fair.prob")), ids=lambda p: p.stem)
def test_fair_networks_are_certified(path):
    from tamp.causal import certify_program

    src = parse_file(str(path))
    r = certify_program(src.programs[0], {"jobs": 1, "timeout": 60}, path=src.path, source=src.text)
    assert r.verdict == "proved"

"""Tables of program shapes, each a true claim and its false variant, as the prover tests write
them: a template whose placeholders are replaced, the true claim proved and cross-checked by
`tamp simulate` at some inputs, the false one not proved and refuted by simulation."""

from __future__ import annotations

from typing import Dict, List, Mapping

from lang.parser import parse
from tamp.prover import prove_program
from tamp.simulation import simulate


def variant(src: str, repl: Mapping[str, str]) -> str:
    """``src`` with each placeholder of ``repl`` replaced by its text."""
    for k, v in repl.items():
        src = src.replace(k, v)
    return src


def prove_text(src: str, timeout: float = 120):
    """The prover's result for the first program of ``src``."""
    return prove_program(parse(src, "shape.prob").programs[0], source=src, path="shape.prob", timeout=timeout)


def assert_proved_and_simulated(text: str, inputs: List[Dict[str, object]], timeout: float = 120) -> None:
    """``text`` is proved, and at each input simulation does not refute it."""
    r = prove_text(text, timeout)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(text, inp, runs=4000, seed=11)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


def assert_unproved_and_refuted(text: str, refute: Dict[str, object], timeout: float = 60) -> None:
    """``text`` is not proved, and simulation at ``refute`` shows its claim false."""
    r = prove_text(text, timeout)
    assert r.verdict != "proved", r.render_text()
    s = simulate(text, refute, runs=4000, seed=11)
    assert s.ci[0] > float(s.bound_value), (refute, s.ci, s.bound_value)

"""Every engine result cross-checked against the Monte Carlo simulator: the certified
interval (or exact value) must overlap the simulator's confidence interval."""

from fractions import Fraction

import pytest

from lang.parser import parse
from tamp.probability import decide_program

simulate = pytest.importorskip("tamp.simulation").simulate

PROGRAMS = [
    "program a() ensures P(a || b) >= 0.7 { a ~ bern(0.3); b ~ bern(0.6); }",
    "program b() ensures P(x + y <= 1) >= 0.5 { x ~ uniform(0, 1); y ~ uniform(0, 1); }",
    "program c() ensures P(x + y >= 0) < 0.33 { x ~ gauss(0, 4); y ~ gauss(-1, 1); }",
    "program d() ensures P(x <= 0.5) >= 0.25 { x ~ density(0, 1, 2 * _); }",
    """program e() ensures P(h | f) / P(h | !f) >= 0.85 {
         f ~ bern(0.3); x ~ gauss(0, 1);
         if (f) { y ~ gauss(x, 1); } else { y ~ gauss(0.1, 2); }
         h := y >= 0.2 && x - y <= 1; }""",
    """program f() ensures P(o > 0 | s < 1) > 0.2 {
         s ~ step([(0, 1, 0.4), (1, 2, 0.6)]); x ~ gauss(0, 1); y ~ gauss(1, 2);
         h := max(0, x + y); o := 2 * h - y - 0.5; }""",
]


@pytest.mark.parametrize("text", PROGRAMS, ids=lambda t: t.split("(")[0].split()[-1])
def test_engine_matches_simulation(text):
    prog = parse(text).programs[0]
    r = decide_program(prog, timeout=20)
    assert r.verdict == "proved", r.render_text()
    sim = simulate(text, {}, runs=40000, seed=3)
    est = {t[0]: (t[2], t[3]) for t in sim.prob_terms}
    for term in r.terms:
        key = next((k for k in est if " ".join(k.split()) == " ".join(term.text.split())), None)
        assert key is not None, (term.text, list(est))
        lo, hi = est[key]
        assert term.interval.lo <= Fraction(hi) and Fraction(lo) <= term.interval.hi, (
            term.text,
            term.interval,
            est[key],
        )

"""Random programs that the prover proves must survive simulation: a differential test of the
prover against the sampler (the simulator's Monte Carlo interval must reach below the bound).

Inputs satisfy the generated ``requires`` (0 < p <= 1, n >= 0); an input where the simulator
reports an error (e.g. a division by zero the prover treats as an arbitrary value) is skipped.
"""

from __future__ import annotations

import sys

from hypothesis import HealthCheck, given, settings
from locations import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT / "tests" / "hostile"))

from test_fuzz_cli import PROGRAMS  # noqa: E402

INPUTS = [{"p": 0.5, "n": 2}, {"p": 0.05, "n": 0}, {"p": 1, "n": 3}]
proved_count = {"n": 0}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(text=PROGRAMS)
def test_proved_random_programs_are_not_refuted_by_simulation(text):
    from lang.errors import TampError
    from tamp.api import prove
    from tamp.simulation import REFUTED, simulate

    try:
        res = prove(text, timeout=2)
    except TampError:
        return
    if res.verdict != "proved":
        return
    proved_count["n"] += 1
    for inp in INPUTS:
        try:
            r = simulate(text, inp, runs=3000, seed=11)
        except TampError:
            continue
        assert r.verdict != REFUTED, f"proved but refuted at {inp}:\n{text}\n{r.render_text()}"

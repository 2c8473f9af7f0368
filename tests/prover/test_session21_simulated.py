"""Every claim the session-21 rules prove (issue 33) holds when simulated at its recorded inputs:
the retry loops (dev/trips), values built from several parts (dev/variance), unions of continuous tails
and combined sums (dev/tails), stage products (dev/products), and the earlier blind files these rules
newly prove. Each is asserted proved, with its false sibling unproved, in test_retries.py,
test_linearity_variance.py, test_tails.py and test_products.py; here only the cross-check by sampling,
which shares nothing with the prover (tamp.simulation)."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev"
OWN = [p for d in ("trips", "variance", "tails", "products") for p in sorted((DEV / d).glob("*.prob"))]
BLIND = [
    DEV / "blind7" / f"{name}.prob"
    for name in (
        "blockchain/shares_until_block",
        "polling/rdd_dials_markov",
        "polling/callback_calls_markov",
        "polling/stratified_chebyshev",
        "radioactivity/net_count_chebyshev",
        "ecology/quadrat_presence_chebyshev",
        "crowdsourcing/agreement_chebyshev",
        "insurance/excess_loss_two_claims",
        "radioactivity/lifetimes_all_decayed",
        "drugsafety/onset_latency_union",
        "ecology/count_change_gaussian",
        "blockchain/honest_lead_hoeffding",
        "blockchain/confirmation_runs_nested",
    )
] + [DEV / "blind6" / "traceback" / "farthest_seen.prob", DEV / "blind3" / "rounding" / "rounding_chebyshev.prob"]
TRUE = [p for p in OWN if not p.stem.endswith("_false")] + BLIND


@pytest.mark.parametrize("path", TRUE, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_proved_claims_hold_when_simulated(path):
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()

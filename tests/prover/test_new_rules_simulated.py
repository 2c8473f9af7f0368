"""Every claim the session-21, session-22 and session-23 rules prove (issue 33) holds when simulated at its recorded
inputs. Session 21: retry loops (dev/trips), values built from several parts (dev/variance), unions of
continuous tails and combined sums (dev/tails), stage products (dev/products). Session 22: postconditions
with a conjunct that holds on every run (dev/sureconj), rate-written exponential tails and chances
(dev/rates, dev/rates2), sums over nested loops (dev/nested). Session 23: unions over pairs and Chebyshev per draw (dev/pairs),
every trial missed as exp(-a·(iterations left)) (dev/powers), flag loops and longest runs (dev/flagloops).
And the earlier blind files these rules newly
prove. Each is asserted proved, with its false sibling unproved, in the rules' own tests (test_retries.py,
test_linearity_variance.py, test_tails.py, test_products.py, test_conjuncts.py, test_rates2.py,
test_nested_sums.py, test_pairs.py, test_power_cores.py, test_flagloops.py and the certificate tests); here only the cross-check by sampling, which shares nothing
with the prover (tamp.simulation). dev/sureconj/early_stop and dev/powers/two_sensors, true but not yet proved, are sampled too."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev"
OWN21 = [p for d in ("trips", "variance", "tails", "products") for p in sorted((DEV / d).glob("*.prob"))]
BLIND21 = [
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
OWN22 = [p for d in ("sureconj", "rates", "rates2", "nested") for p in sorted((DEV / d).glob("*.prob"))]
BLIND22 = [
    DEV / "blind8" / f"{name}.prob"
    for name in (
        "astronomy/qe_no_detection",
        "astronomy/readout_noise_chebyshev",
        "learning/bad_hypothesis_survives",
        "learning/test_set_hoeffding",
        "traffic/detector_counts_hoeffding",
        "wireless/delivered_hoeffding",
        "credit/hazard_survival",
        "traffic/acceptable_gap",
        "traffic/pedestrian_crossing",
        "seismology/aftershock_large",
    )
] + [DEV / "blind7" / "polling" / "exit_poll_clusters.prob", DEV / "blind7" / "drugsafety" / "rule_of_three.prob"]
OWN23 = [p for d in ("pairs", "powers", "flagloops") for p in sorted((DEV / d).glob("*.prob"))]
BLIND23 = [
    DEV / "blind9" / f"{name}.prob"
    for name in (
        "evolutionary/critical_bits",
        "evolutionary/offspring_differs",
        "lottery/first_win_markov",
        "robotics/beam_max_reading",
    )
] + [DEV / "blind8" / "sports" / "no_three_streak.prob"]
TRUE = [p for p in OWN21 + OWN22 + OWN23 if not p.stem.endswith("_false")] + BLIND21 + BLIND22 + BLIND23


@pytest.mark.parametrize("path", TRUE, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_proved_claims_hold_when_simulated(path):
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()

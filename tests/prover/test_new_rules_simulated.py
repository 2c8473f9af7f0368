"""Every claim the session-21 to session-24 rules prove (issue 33) holds when simulated at its recorded
inputs. Session 21: retry loops (dev/trips), values built from several parts (dev/variance), unions of
continuous tails and combined sums (dev/tails), stage products (dev/products). Session 22: postconditions
with a conjunct that holds on every run (dev/sureconj), rate-written exponential tails and chances
(dev/rates, dev/rates2), sums over nested loops (dev/nested). Session 23: unions over pairs and Chebyshev per draw (dev/pairs),
every trial missed as exp(-a·(iterations left)) (dev/powers), flag loops and longest runs (dev/flagloops).
Session 24: closed-form sum bounds (dev/sums24), products of misses read from counts and several coins
(dev/powers2), rows ending in a threshold test composed by any engine (dev/pairs2).
And the earlier blind files these rules newly
prove. Each is asserted proved, with its false sibling unproved, in the rules' own tests (test_retries.py,
test_linearity_variance.py, test_tails.py, test_products.py, test_conjuncts.py, test_rates2.py,
test_nested_sums.py, test_pairs.py, test_power_cores.py, test_flagloops.py, test_sum_bounds.py, test_power_products.py,
test_nesting_fold.py and the certificate tests; session 29: test_unionprod29.py, test_boundfacts29.py, test_hoeff29.py,
test_rows29.py; session 30: test_tails30.py, test_counts30.py); here only the cross-check by sampling, which shares nothing
with the prover (tamp.simulation). dev/sureconj/early_stop, true but not yet proved, is sampled too."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev"


def own(*folders: str) -> list:
    """The true claims of the dev folders a session's helpers wrote for their rules."""
    return [p for d in folders for p in sorted((DEV / d).glob("*.prob")) if not p.stem.endswith("_false")]


def blind(*names: str) -> list:
    """Earlier blind claims (``blindN/family/claim``) the session's rules newly prove."""
    return [DEV / f"{name}.prob" for name in names]


SESSION21 = own("trips", "variance", "tails", "products") + blind(
    "blind7/blockchain/shares_until_block",
    "blind7/polling/rdd_dials_markov",
    "blind7/polling/callback_calls_markov",
    "blind7/polling/stratified_chebyshev",
    "blind7/radioactivity/net_count_chebyshev",
    "blind7/ecology/quadrat_presence_chebyshev",
    "blind7/crowdsourcing/agreement_chebyshev",
    "blind7/insurance/excess_loss_two_claims",
    "blind7/radioactivity/lifetimes_all_decayed",
    "blind7/drugsafety/onset_latency_union",
    "blind7/ecology/count_change_gaussian",
    "blind7/blockchain/honest_lead_hoeffding",
    "blind7/blockchain/confirmation_runs_nested",
    "blind6/traceback/farthest_seen",
    "blind3/rounding/rounding_chebyshev",
)
SESSION22 = own("sureconj", "rates", "rates2", "nested") + blind(
    "blind8/astronomy/qe_no_detection",
    "blind8/astronomy/readout_noise_chebyshev",
    "blind8/learning/bad_hypothesis_survives",
    "blind8/learning/test_set_hoeffding",
    "blind8/traffic/detector_counts_hoeffding",
    "blind8/wireless/delivered_hoeffding",
    "blind8/credit/hazard_survival",
    "blind8/traffic/acceptable_gap",
    "blind8/traffic/pedestrian_crossing",
    "blind8/seismology/aftershock_large",
    "blind7/polling/exit_poll_clusters",
    "blind7/drugsafety/rule_of_three",
)
SESSION23 = own("pairs", "powers", "flagloops") + blind(
    "blind9/evolutionary/critical_bits",
    "blind9/evolutionary/offspring_differs",
    "blind9/lottery/first_win_markov",
    "blind9/robotics/beam_max_reading",
    "blind8/sports/no_three_streak",
)
SESSION24 = own("sums24", "powers2", "pairs2") + blind(
    "blind10/geometry/lp_backwards_analysis",
    "blind10/geometry/random_shift_cut",
    "blind10/geometry/sample_extreme",
    "blind10/auctions/topk_same_side",
    "blind10/advertising/frequency_cap",
)
SESSION25 = own("nested24", "budgets25", "exits25", "tails25") + blind(
    "blind11/databases/horvitz_thompson_sum",
    "blind11/multipletesting/fixed_sequence",
    "blind11/profiling/sampling_countdown",
    "blind4/networks/hop_delay_union",
    "blind11/searchtheory/split_effort",
    "blind11/profiling/summed_profiles",
    "blind11/petroleum/shared_play_risk",
)
SESSION26 = own("diffvar26", "exitexpr26", "flips26") + blind(
    "blind12/psychophysics/yes_no_difference_chebyshev",
    "blind12/ransac/iterations_formula",
    "blind12/stochasticcomputing/xor_chain_bit_flips",
)
SESSION27 = own("expprod27", "roots27") + blind(
    "blind13/identitytesting/quadratic_root_hit",
    "blind13/identitytesting/bivariate_product",
    "blind13/identitytesting/repeated_evaluations",
    "blind13/identitytesting/zero_count_markov",
    "blind13/freivalds/larger_range",
    "blind13/salvos/two_shot_salvo",
    "blind13/perforation/four_iterations",
)
SESSION28 = own("iterinv28", "unifcount28", "runs28") + blind(
    "blind14/birthdays/shares_my_birthday",
    "blind14/cards/deal_until_ace",
    "blind14/cards/spade_void",
    "blind14/cards/rounds_with_ace",
    "blind14/cards/two_aces",
    "blind14/mincut/repeated_cycle_runs",
    "blind14/vaccines/first_case",
)
SESSION29 = own("unionprod29", "boundfacts29", "hoeff29", "rows29") + blind(
    "blind15/archival/replicated_objects",
    "blind15/discrepancy/monochromatic_set",
    "blind15/discrepancy/resample_colouring",
    "blind15/discrepancy/set_balancing",
    "blind15/discrepancy/weighted_signs",
    "blind15/stringmatching/repeated_fingerprints",
    "blind14/birthdays/my_birthday_chebyshev",
    "blind13/mendelian/dominant_hoeffding",
    "blind13/freivalds/detections_hoeffding",
)
SESSION30 = own("tails30", "counts30") + blind("blind16/cloud/hedged_request", "blind16/powergrid/substations")
TRUE = (
    SESSION21
    + SESSION22
    + SESSION23
    + SESSION24
    + SESSION25
    + SESSION26
    + SESSION27
    + SESSION28
    + SESSION29
    + SESSION30
)


@pytest.mark.parametrize("path", TRUE, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_proved_claims_hold_when_simulated(path):
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()

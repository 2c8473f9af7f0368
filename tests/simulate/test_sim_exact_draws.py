"""Integer draws are exact for every range (issue 31, item 3).

``unif(lo, hi)`` used to be ``lo + floor(u * k)`` with a 53-bit float u: over 0..2^60 every
draw was even, and a true claim P(odd) ≈ 1/2 was REFUTED. Integers are now drawn from whole
64-bit words by rejection; ``dexp``/``dlap`` with a scale past 2^20 split their geometric into
two exact parts."""

import math

import numpy as np

from tamp.cli import main
from tamp.simulation import run_samples, simulate
from tamp.simulation.draws import below

TWO60 = 2**60

BIG_ODD = f"""
program big()
  ensures P(odd) >= 0.45
  ensures P(odd) <= 0.55
{{
  x ~ unif(0, {TWO60});
  odd := x mod 2 == 1;
}}
"""


def test_true_claim_over_unif_0_2_60_is_not_refuted():
    r = simulate(BIG_ODD, {}, runs=20000, seed=0)
    assert r.exit_code == 0 and r.verdict == "confirmed", r.render_text()


def test_cli_does_not_refute_it(tmp_path, capsys):
    f = tmp_path / "big.prob"
    f.write_text(BIG_ODD)
    code = main(["simulate", str(f), "--runs", "20000"])
    out = capsys.readouterr().out
    assert code == 0 and "refuted" not in out, out


def test_x_mod_2_takes_both_values():
    x = run_samples(f"program d() {{ x ~ unif(0, {TWO60}); }}", {}, runs=4000, seed=5)["x"]
    assert set(np.unique(x % 2)) == {0, 1}
    assert abs((x % 2).mean() - 0.5) < 5 * 0.5 / math.sqrt(4000)
    assert abs((x % 1024 == 0).mean() - 1 / 1024) < 0.01  # the low bits are uniform too
    assert x.min() >= 0 and x.max() <= TWO60


def test_widest_symmetric_range():
    hi = 4 * 10**18  # both bounds and the width (~2^63) past 53 bits
    x = run_samples(f"program d() {{ x ~ unif(-{hi}, {hi}); }}", {}, runs=4000, seed=2)["x"]
    assert x.dtype == np.int64 and x.min() >= -hi and x.max() <= hi
    assert set(np.unique(x % 2)) == {0, 1} and 0.4 < (x < 0).mean() < 0.6


def test_small_ranges_and_sets_exact_and_reproducible():
    prog = "program d() { x ~ unif(-1, 1); y ~ unif({2, 3, 5}); }"
    a = run_samples(prog, {}, runs=30000, seed=9)
    b = run_samples(prog, {}, runs=30000, seed=9)
    assert (a["x"] == b["x"]).all() and (a["y"] == b["y"]).all()  # the seed still fixes the draws
    assert set(np.unique(a["x"])) == {-1, 0, 1} and set(np.unique(a["y"])) == {2, 3, 5}
    for v in (-1, 0, 1):
        assert abs((a["x"] == v).mean() - 1 / 3) < 5 * math.sqrt(2 / 9 / 30000)


def test_below_is_exactly_uniform_on_every_word():
    """All 2^16 words of a 16-bit analogue would be too few; check the rule on chosen words: a
    word is rejected exactly when it lies in the top 2^64 mod k words."""
    k = np.array([3, 3, 3, 2**63 + 1, 1, 0], dtype=np.uint64)
    top = np.uint64(2**64 - 1)
    w = np.array([0, top, top - np.uint64(1), 2**63, 12345, top], dtype=np.uint64)
    value, ok = below(w, k)
    # 2^64 mod 3 = 1: only the last word is rejected; 2^64 mod (2^63+1) = 2^63-1
    assert ok.tolist() == [True, False, True, True, True, True]
    assert value[0] == 0 and value[2] == (2**64 - 2) % 3 and value[3] == 2**63 and value[4] == 0
    assert value[5] == 2**64 - 1  # k = 2^64 (given as 0): every word is a value


def test_dexp_dlap_large_scale_reach_odd_values():
    s = run_samples(f"program d() {{ x ~ dexp(0, {TWO60}); y ~ dlap(0, 1000000000000); }}", {}, runs=4000, seed=1)
    x, y = s["x"], s["y"]
    kept = x != 0  # runs past 2^62 are undecided (left at 0)
    assert 0.4 < (x[kept] % 2).mean() < 0.6 and 0.4 < (y % 2).mean() < 0.6
    # the median of a geometric with scale s is about s·ln 2
    assert abs(np.median(np.abs(y)) / (1e12 * math.log(2)) - 1) < 0.1


def test_dexp_mid_scale_mean():
    s = 3 * 10**6
    x = run_samples(f"program d() {{ x ~ dexp(5, {s}); }}", {}, runs=20000, seed=4)["x"]
    assert x.min() >= 5
    assert abs((x.mean() - 5) / s - 1) < 5 / math.sqrt(20000)


def test_below_one_k_for_all_agrees_with_one_k_per_word():
    w = np.random.default_rng(1).integers(0, 2**64, size=5000, dtype=np.uint64)
    for k in [1, 2, 3, 7, 10**18, 2**63 + 1, 2**64 - 1, 0]:
        (v1, ok1), (v2, ok2) = below(w, np.uint64(k)), below(w, np.full(len(w), k, dtype=np.uint64))
        assert (ok1 == ok2).all() and (v1[ok1] == v2[ok2]).all(), k
        assert k == 0 or (v1 < k).all()

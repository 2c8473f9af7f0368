"""Counterexamples to privacy claims with array outputs (issue 34, item 3).

Each broken sparse vector variant is refuted by :func:`tamp.privacy.counterexample.search` with
two neighbouring inputs and an event over the map of written indices; the reported event is then
re-estimated by the suite's own numpy re-implementation (benchmarks/privacy/reference.py, written
without tamp) and the certified probabilities must lie in its Monte Carlo intervals.
"""

import math
import re
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from lang.parser import parse
from lang.typecheck import check_program
from tamp.privacy import prove_privacy
from tamp.privacy.counterexample import _observable, search
from tamp.probability import probability

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "privacy"
sys.path.insert(0, str(SUITE))
import reference  # noqa: E402  (the suite's Monte Carlo, outside tamp)

N = 200_000


def _load(folder: str, name: str):
    path = SUITE / folder / f"{name}.prob"
    src = path.read_text()
    prog = parse(src, str(path)).programs[0]
    return prog, check_program(prog, str(path), src)


def _frac(x) -> float:
    return float(Fraction(str(x)))


def _event_mask(event: str, o) -> np.ndarray:
    """The event as tamp printed it, evaluated on the reference's outputs (-1 / NaN: not written)."""
    mask = np.ones(next(iter(o.values())).shape[0], dtype=bool)
    for part in event.split(" && "):
        if m := re.fullmatch(r"written\((\w+), (\d+)\)", part):
            col = o[m[1]][:, int(m[2])]
            mask &= ~np.isnan(col) if col.dtype.kind == "f" else (col != -1)
        elif m := re.fullmatch(r"(!?)(\w+)\[(\d+)\]", part):
            mask &= o[m[2]][:, int(m[3])] == (0 if m[1] else 1)
        elif m := re.fullmatch(r"(\w+)\[(\d+)\] ([<>]) (-?\d+)", part):
            col = o[m[1]][:, int(m[2])]
            with np.errstate(invalid="ignore"):
                mask &= (col > int(m[4])) if m[3] == ">" else (col < int(m[4]))
        elif m := re.fullmatch(r"(\w+) (==|<|>) (-?\d+)", part):  # a scalar output
            col, c = o[m[1]], int(m[3])
            mask &= (col == c) if m[2] == "==" else (col < c) if m[2] == "<" else (col > c)
        else:
            raise AssertionError(f"an event this test cannot read: {part}")
    return mask


def _check_against_monte_carlo(cx, mech) -> None:
    rng = np.random.default_rng(reference.SEED)
    eps = _frac(cx["inputs"]["eps"])
    for side, key in (("inputs", "probability"), ("neighbour", "neighbour_probability")):
        inp = {k: (list(map(_frac, v)) if isinstance(v, list) else _frac(v)) for k, v in cx[side].items()}
        inp["c"] = int(inp.get("c", 1))
        out = mech(rng, inp, eps, N)
        k = int(_event_mask(cx["event"], out).sum())
        lo, hi = reference.cp_interval(k, N)
        p_lo, p_hi = _frac(cx[key]["lower"]), _frac(cx[key]["upper"])
        assert p_lo <= hi + 1e-12 and lo - 1e-12 <= p_hi, (side, cx["event"], (p_lo, p_hi), (lo, hi))
    # and the reported pair shows the violation (the search's own test, re-read from the JSON)
    assert _frac(cx["probability"]["lower"]) > math.exp(eps) * _frac(cx["neighbour_probability"]["upper"])


@pytest.mark.parametrize(
    "name, kind, fixed",
    [
        ("svtLyu5", "lyu5", {}),
        ("numericSparseSmallNoise", "numericSmall", {}),
        ("numericSparseSmallNoise", "numericSmall", {"T": 1, "q": [0]}),  # --input values are kept
    ],
)
def test_sparse_vector_variants_are_refuted_with_array_events(name, kind, fixed):
    prog, types = _load("broken", name)
    cx = search(prog, types, fixed, 20.0)
    assert cx is not None
    assert "written(out, " in cx["event"]
    for k, v in fixed.items():
        assert cx["inputs"][k] == v
    _check_against_monte_carlo(cx, reference.svt_mech(kind))


@pytest.mark.parametrize(
    "name, mech",
    [("prefixSumFreshNoise", reference.m_prefix_sum_fresh), ("histogramReplace", reference.m_histogram)],
)
def test_real_array_outputs_are_refuted(name, mech):
    prog, types = _load("broken", name)
    cx = search(prog, types, {}, 20.0)
    assert cx is not None and "written(" in cx["event"]
    _check_against_monte_carlo(cx, mech)


@pytest.mark.parametrize(
    "name, mech",
    [  # the seven whose witnesses need 3 or more queries (the pivot integral of tamp.probability.star)
        ("svtLyu3", reference.svt_mech("lyu3")),
        ("svtLyu4", reference.svt_mech("lyu4")),
        ("svtLyu6", reference.svt_mech("lyu6")),
        ("svtMonotoneWrongNeighbours", reference.svt_mech("monotone")),
        ("noisyMaxWrongNeighbours", reference.m_noisy_max_lap(1.0)),
        ("noisyMaxValue", reference.m_noisy_max_lap(2.0)),
        ("smartSumOneEps", reference.m_smart_sum),
    ],
)
def test_the_long_witnesses_are_found_and_agree_with_monte_carlo(name, mech):
    prog, types = _load("broken", name)
    cx = search(prog, types, {}, 20.0)
    assert cx is not None
    _check_against_monte_carlo(cx, mech)


def test_the_verdict_is_violated_with_epsilon_value():
    prog, _ = _load("broken", "svtLyu5")
    r = prove_privacy(prog)
    assert r.verdict == "violated"
    data = r.to_json()
    assert data["counterexample"]["event"].startswith("written(out, ")
    assert data["epsilon_value"] == "1"  # ε's input was free: the search picked eps = 1


def test_written_is_what_the_run_wrote():
    prog = parse(
        """program p(n: int, x: real)
  requires n >= 1
  neighbours abs(x - x') <= 1
  private 1 on a
{
  b ~ bern(1/4);
  if (b) { a[1] := x; } else { a[0] := x; a[2] := x; }
}"""
    ).programs[0]
    types = check_program(prog)
    plain = _observable(prog, types, 3)
    inputs = {"n": 3, "x": 5}
    assert probability(plain, "written__a[1]", inputs=inputs) == Fraction(1, 4)
    assert probability(plain, "written__a[0] && written__a[2]", inputs=inputs) == Fraction(3, 4)
    assert probability(plain, "written__a[1] && written__a[0]", inputs=inputs) == 0


@pytest.mark.parametrize("name", ["svtLyu1", "aboveThreshold", "laplace"])
def test_private_mechanisms_are_not_refuted(name):
    prog, types = _load("private", name)
    assert search(prog, types, {}, 8.0) is None


def test_bench_reads_the_suite_expectations_and_shows_privacy_results():
    from tamp.commands.bench import _result, expectations

    assert expectations("// expect: private at 2 * eps\n") == {None: "proved"}
    assert expectations("// expect: violated at eps (at every eps)\n") == {None: "violated"}
    cx = {"probability": {"lower": "1/4", "upper": "1/4"}, "neighbour_probability": {"lower": 0, "upper": "1/32"}}
    assert _result({"kind": "privacy", "counterexample": cx}) == "0.2499 vs 0.0313"  # certified bounds round outward
    assert _result({"kind": "privacy", "epsilon": "eps"}) == "ε = eps"

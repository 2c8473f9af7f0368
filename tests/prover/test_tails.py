"""Tails of continuous draws combined (session 21, ``tails``).

* the union bound over exponential / Laplace / Gaussian / geometric tails with symbolic shares
  (``2 * exp(-u/mu)``, ``n * exp(-t/tau)``): the share reaches the axiom whole, and
  ``log(1/exp(a)) = a`` is known to the solver;
* concentration over a linear combination of independent sums (:func:`axioms.concentration.
  combined_blocks`): Gaussian variances scale by a², Laplace / exponential scales and bounded
  widths by |a|; a Laplace difference keeps the sub-exponential rule;
* ``lead := lead + (h ? 1 : -1)`` is a sum of draws of range 2 (Hoeffding).
Each proved claim's false sibling stays unproved."""

from fractions import Fraction
from pathlib import Path

import pytest

from axioms import concentration as C
from axioms.concentration import Block
from lang import ast as A
from tamp.api import prove
from tamp.prover.base.exprs import divide

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev"
TAILS = ROOT / "tails"


def _verdict(path: Path, timeout: float = 30) -> str:
    return prove(str(path), timeout=timeout).programs[0].verdict


def test_literal_factor_of_the_bound_cancels_in_a_share():
    x = A.Call("exp", (A.Unary("-", A.Var("u")),))
    assert divide(A.Binary("*", A.num(2), x), 2) == x
    assert divide(A.Binary("*", A.num(3), x), 2) == A.Binary("*", A.Num(Fraction(3, 2), False), x)
    assert divide(x, 2) == A.Binary("/", x, A.num(2))


@pytest.mark.parametrize(
    "name",
    ["laplace_pair_union", "gauss_loop_max", "dexp_waits_union", "signed_steps_hoeffding", "laplace_difference"],
)
def test_tails_variants_proved_and_false_siblings_not(name):
    assert _verdict(TAILS / f"{name}.prob") == "proved"
    assert _verdict(TAILS / f"{name}_false.prob", timeout=6) != "proved"


def test_exponential_union_of_two_claims():
    path = ROOT / "blind7" / "insurance" / "excess_loss_two_claims.prob"
    assert _verdict(path) == "proved"
    assert _verdict(path.with_name("excess_loss_two_claims_false.prob"), timeout=6) != "proved"


def _v(name):
    return A.Var(name)


def _scale(e):
    """(k, x) for the block parameter ``k * x``."""
    assert isinstance(e, A.Binary) and e.op == "*" and isinstance(e.left, A.Num)
    return e.left.value, e.right


def test_combined_blocks_scale_by_the_family():
    v, b, w = _v("v"), _v("b"), _v("w")
    fam, blocks = C.combined_blocks(
        [("gauss", (Block(A.num(1), v),), Fraction(2)), ("gauss", (Block(A.num(1), v),), Fraction(-1))]
    )
    assert fam == "gauss"
    assert _scale(blocks[0].param) == (4, v) and blocks[1].param == v
    fam, blocks = C.combined_blocks(
        [("laplace", (Block(A.num(1), b),), Fraction(-3)), ("laplace", (Block(A.num(1), b),), Fraction(1))]
    )
    assert fam == "laplace" and _scale(blocks[0].param) == (3, b)
    fam, blocks = C.combined_blocks(
        [("bernoulli", (Block(_v("n"), _v("p")),), Fraction(1)), ("bounded", (Block(A.num(1), w),), Fraction(-1, 2))]
    )
    assert fam == "bounded" and blocks[0].param.value == 1  # a 0/1 indicator has width 1, not p
    assert _scale(blocks[1].param) == (Fraction(1, 2), w)
    # a Laplace draw and a Gaussian one: no rule (never the Gaussian tail for Laplace noise)
    assert (
        C.combined_blocks(
            [("laplace", (Block(A.num(1), b),), Fraction(1)), ("gauss", (Block(A.num(1), v),), Fraction(1))]
        )
        is None
    )


def test_combined_gaussian_tail_is_at_least_the_exact_one():
    """2·y1 - y2 with y1, y2 ~ N(0, 1): variance 5; the rule's two-sided tail at u is
    2·exp(-u²/10), above the exact 2·Q(u/sqrt(5)) at every u tried."""
    from scipy import stats

    for u in (0.5, 1.0, 2.0, 3.0, 5.0):
        exact = 2 * stats.norm.sf(u / 5**0.5)
        assert exact <= 2 * 2.718281828459045 ** (-(u * u) / 10) + 1e-12


def test_combined_laplace_tail_is_at_least_the_exact_one():
    """The difference of two Lap(0, 1) draws: P(|d| >= u) = exp(-u)(1 + u/2) exactly; the
    laplace-bernstein bound with W = 2 is 2·exp(-u²/16) for u <= 4·sqrt(2)."""
    import math

    for u in (0.5, 1.0, 2.0, 4.0, 4 * math.sqrt(2)):
        assert math.exp(-u) * (1 + u / 2) <= 2 * math.exp(-u * u / 16) + 1e-12


SHARED = """
program sharedDraw(v: real, c: real)
  requires v > 0 && c > 0
  ensures abs(a + b) < c
  fails 2 * exp(-c * c / (6 * v))
{
  y1 ~ gauss(0, v);
  y2 ~ gauss(0, v);
  a := y1 + y2;
  b := y1;
}
"""


def test_sums_sharing_a_draw_are_not_combined(tmp_path):
    """a + b = 2·y1 + y2 has variance 5v; taking a (2v) and b (v) as independent would give 3v
    and prove this false bound (at v = 1, c = 6 the failure is 0.0073 > 2·exp(-6) = 0.0050)."""
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.prover.concentration.proof import claim_of, combinations, combined_claim

    prog = parse(SHARED, "shared.prob").programs[0]
    claim = claim_of(prog, build_cfa(prog))
    assert len(claim.sums) == 2
    assert all(combined_claim(claim, coefs) is None for coefs in combinations(claim))
    path = tmp_path / "shared.prob"
    path.write_text(SHARED)
    assert _verdict(path, timeout=6) != "proved"

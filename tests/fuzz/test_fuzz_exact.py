"""Property-based check of the simulator's exact arithmetic: claims that are algebraic
identities (``(e + c) - c == e``, ``sqrt(e * e) == abs(e)``, ``log(exp(e)) == e``, …) over
random expressions of sampled values and inputs hold on every run, so ``simulate`` must find
no failure and must never refute them, however the floats round."""

from __future__ import annotations

from fractions import Fraction

from grammar import PARAMS, PRELUDE, REAL_DISTS, REQUIRES, real_expr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

IDENTITIES = [
    lambda e, c: (f"({e} + {c}) - {c}", e),
    lambda e, c: (f"({e} * {c}) / {c}", e),
    lambda e, c: (f"sqrt(({e}) * ({e}))", f"abs({e})"),
    lambda e, c: (f"log(exp(min({e}, 50)))", f"min({e}, 50)"),
    lambda e, c: (f"exp(log(1 + abs({e})))", f"1 + abs({e})"),
    lambda e, c: (f"({e} - {c}) * ({e} + {c})", f"({e}) * ({e}) - {c} * {c}"),
    lambda e, c: (f"min({e}, {c}) + max({e}, {c})", f"{e} + {c}"),
    lambda e, c: (f"{e} / 3 + {e} / 3 + {e} / 3", e),
]


@settings(max_examples=20, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    e=real_expr(2),
    c=st.sampled_from(["0.1", "3", "1e-3", "p", "eps", "0.7"]),
    which=st.integers(0, len(IDENTITIES) - 1),
    d0=REAL_DISTS,
    d1=REAL_DISTS,
)
def test_identities_are_never_refuted(e, c, which, d0, d1):
    from tamp.simulation import simulate

    lhs, rhs = IDENTITIES[which](e, c)
    src = (
        f"program f({PARAMS})\n  requires {REQUIRES}\n  ensures {lhs} == {rhs}\n  fails 0\n"
        f"{{ {PRELUDE} r0 ~ {d0}; r1 ~ {d1}; }}\n"
    )
    r = simulate(src, {"p": Fraction(3, 10), "n": 2, "eps": Fraction(1, 10)}, runs=150, seed=5)
    assert r.failures == 0 and r.verdict == "consistent", src + "\n" + r.render_text()

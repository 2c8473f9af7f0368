"""The failure bound's own definedness (tamp/prover/base/claim.py, from lang.ops.PARTIAL)."""

import pytest

from lang.errors import UnsupportedError
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.prover.base.claim import check_claim


def test_claim_rejects_a_bound_outside_the_domain_of_its_operators():
    """The partial operators (lang.ops.PARTIAL) make a bound ill-defined where it divides by zero
    or takes log/sqrt outside the domain, for some input allowed by `requires`."""

    def claim(requires, bound):
        prog = parse(f"program p(n: int, x: real) requires {requires} fails {bound} {{ skip; }}").programs[0]
        return check_claim(build_cfa(prog))

    for bound, what in (
        ("1 / n", "divides by"),
        ("n div (n - 1)", "divides by"),
        ("log(x)", "takes log"),
        ("sqrt(x - 1)", "takes sqrt"),
    ):
        with pytest.raises(UnsupportedError, match=what):
            claim("n >= 0 && x >= 0", bound)
    assert isinstance(claim("n >= 1 && x >= 2", "1 / n + log(x) + sqrt(x - 1) + n div n"), list)

"""Auto-discovery of families: the right families for each distribution, and new modules."""

import sys

import pytest

import axioms
from axioms import base
from lang.parser import parse_expr


@pytest.mark.parametrize(
    "src,expected",
    [
        ("bern(0.5)", {"bernoulli", "support"}),
        ("unif({1, 2, 3})", {"uniform_finite", "uniform_set_root", "uniform_miss", "support"}),
        ("unif(1, 6)", {"uniform_finite", "uniform_root", "uniform_miss", "support"}),
        (
            "unif(1, n)",
            {"chebyshev", "uniform_ends", "uniform_low", "uniform_high", "uniform_cut", "uniform_root", "support"},
        ),
        (
            "unif(lo, hi - 1)",
            {"chebyshev", "uniform_ends", "uniform_low", "uniform_high", "uniform_cut", "uniform_root", "support"},
        ),
        ("lap(q[i], 1 / eps)", {"chebyshev", "laplace", "laplace_upper", "laplace_lower", "support"}),
        ("exp(0, s)", {"chebyshev", "exponential", "exponential_below", "exponential_lower", "support"}),
        (
            "dlap(0, s)",
            {
                "discrete_laplace",
                "discrete_laplace_exact",
                "discrete_laplace_exact_upper",
                "discrete_laplace_exact_lower",
                "support",
            },
        ),
        ("dexp(k, 2)", {"discrete_exponential", "discrete_exponential_exact", "support"}),
        ("gauss(0, 1)", {"chebyshev", "gaussian", "gaussian_upper", "gaussian_lower", "gaussian_sign", "support"}),
        ("uniform(0, 1)", {"chebyshev", "support"}),
        ("step([(0, 1, 2)])", {"support"}),
        ("density(0, 1, 2 * _)", {"support"}),
        ("lap(1)", set()),
    ],
)
def test_families_for(src, expected):
    assert {f.name for f in axioms.families_for(parse_expr(src))} == expected


def test_every_family_is_well_formed():
    for fam in axioms.all_families():
        assert isinstance(fam, base.AxiomFamily) and fam.name and fam.distributions
        assert fam.param_kind in ("real", "choice")
        doc = sys.modules[type(fam).__module__].__doc__
        assert doc and "Soundness" in doc, f"{fam.name}: module docstring lacks its soundness argument"


def test_new_module_is_picked_up(tmp_path, monkeypatch):
    (tmp_path / "zz_probe.py").write_text(
        "from axioms.base import AxiomFamily\n"
        "class Probe(AxiomFamily):\n"
        "    name = 'probe'\n"
        "    distributions = ('probe_dist',)\n"
        "FAMILIES = [Probe()]\n"
    )
    monkeypatch.setattr(axioms, "__path__", list(axioms.__path__) + [str(tmp_path)])
    axioms.all_families.cache_clear()
    try:
        assert [f.name for f in axioms.families_for(parse_expr("probe_dist(1)"))] == ["probe"]
        assert "laplace" in {f.name for f in axioms.all_families()}
    finally:
        axioms.all_families.cache_clear()
        sys.modules.pop("axioms.zz_probe", None)
    monkeypatch.undo()
    assert axioms.families_for(parse_expr("probe_dist(1)")) == []

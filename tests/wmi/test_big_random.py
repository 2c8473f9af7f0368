"""The small big_random problems: README reference values and a cross-check
of every nr2 problem with the independent iterated-integration method."""

import pytest
from locations import REPO

from tamp.wmi import integrate_polytope_iterated, wmi
from tamp.wmi.api import _wmi
from tamp.wmi.jsonfmt import load_problem

DATA = REPO.parent / "shared" / "benchmarks" / "wmi-big-random"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="shared big_random data set not present")

# from the data set's README (reference: all-SMT enumeration + LattE integrale)
REFERENCE = {"nr2_1": 11.190443476551, "nr3_1": 31.544217846387}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_values(name):
    p = load_problem(DATA / f"{name}.json")
    r = wmi(p.formula, p.weight, p.domain)
    assert abs(float(r.value) - REFERENCE[name]) <= 1e-9 * abs(REFERENCE[name])
    assert r.cells > 0


@pytest.mark.parametrize("name", ["nr2_2", "nr2_9"])
def test_nr2_vertex_method_equals_iterated_integration(name):
    p = load_problem(DATA / f"{name}.json")
    a = wmi(p.formula, p.weight, p.domain)
    b = _wmi(p.formula, p.weight, p.domain, integrator=integrate_polytope_iterated)
    assert a.value == b.value and a.cells == b.cells


@pytest.mark.parametrize("name", [f"nr2_{i}" for i in range(1, 11)] + ["nr3_4", "nr3_6"])
def test_small_problems_solve_and_are_positive_finite(name):
    # every weight leaf of this family is a square (c·m)^2, so Z > 0
    p = load_problem(DATA / f"{name}.json")
    r = wmi(p.formula, p.weight, p.domain, timeout=60)
    assert r.value > 0

"""Causal fairness of scikit-learn decision trees and forests, decided exactly by the tree engine.

The models are trained on a small synthetic data set with a 0/1 sensitive column ``sex``,
exported with skl2onnx and imported with ``tamp.import_model`` (``sex`` split at 0.5: the
program compares a value below the split with one above it). The expected biased mass is
computed here independently from the scikit-learn trees themselves (``tree_.feature``,
``threshold``, ``children_*``, ``value``): the float32 thresholds on x0 and x1 cut the unit
square into a grid, each grid cell's class is found for sex = 0 and sex = 1 by walking the
trees, and the biased cells' areas are summed as Fractions. Timings are in
benchmarks/causal/trees.py, not here.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

from lang.parser import parse
from tamp.causal import certify_program
from tamp.causal.result import mass_text

from .helpers import load

pytest.importorskip("skl2onnx")
pytest.importorskip("sklearn")

from skl2onnx import to_onnx  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from tamp.models import import_model  # noqa: E402
from tamp.models.spec import parse_spec  # noqa: E402


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.integers(0, 2, n)]).astype(np.float32)
    y = ((x[:, 0] + 0.3 * x[:, 2] + 0.2 * x[:, 1] + rng.normal(0, 0.05, n)) > 0.8).astype(int)
    return x, y


def _trained(kind):
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "tree":
            return DecisionTreeClassifier(max_depth=4, random_state=0).fit(x, y), x
        return RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y), x


def _imported(model, x, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(to_onnx(model, x[:1]).SerializeToString())
    spec = parse_spec("1\nsex\n0.5\n")
    return import_model(str(path), features=["x0", "x1", "sex"], spec=spec).text


def _f32(v) -> Fraction:
    """The threshold a float32 input is really compared with: scikit-learn tests the float32
    input x <= t (t float64), which holds exactly when x <= the largest float32 not above t."""
    f = np.float32(v)
    if float(f) > float(v):
        f = np.nextafter(f, np.float32(-np.inf))
    return Fraction(float(f))


def _class_at(trees, point) -> int:
    """The forest's class at ``point`` (exact): argmax of the summed class probabilities of the
    leaves reached, float32 thresholds compared exactly."""
    total = np.zeros(2)
    for t in trees:
        node = 0
        while t.children_left[node] != -1:
            go_left = point[t.feature[node]] <= _f32(t.threshold[node])
            node = t.children_left[node] if go_left else t.children_right[node]
        v = t.value[node][0]
        total += v / v.sum()
    assert abs(total[1] - total[0]) > 1e-6, "a tie: the test's data must avoid one"
    return int(np.argmax(total))


def _biased_area(trees) -> Fraction:
    """The area of the (x0, x1) points whose class changes with sex, summed over the grid that
    every tree's thresholds on x0 and x1 cut the unit square into."""
    cuts = {0: {Fraction(0), Fraction(1)}, 1: {Fraction(0), Fraction(1)}}
    for t in trees:
        for node in range(t.node_count):
            f = t.feature[node]
            if t.children_left[node] != -1 and f in cuts and 0 < t.threshold[node] < 1:
                cuts[f].add(_f32(t.threshold[node]))
    xs, ys = sorted(cuts[0]), sorted(cuts[1])
    area = Fraction(0)
    for a, b in zip(xs, xs[1:]):
        for c, d in zip(ys, ys[1:]):
            mid = ((a + b) / 2, (c + d) / 2)
            if _class_at(trees, (*mid, Fraction(0))) != _class_at(trees, (*mid, Fraction(1))):
                area += (b - a) * (d - c)
    return area


def _certify(text, **opts):
    prog, src = load(text)
    opts.setdefault("jobs", 1)
    opts.setdefault("timeout", 60)
    return certify_program(prog, opts, path=src.path, source=src.text)


@pytest.mark.parametrize("kind", ["tree", "forest"])
def test_tree_and_forest_biased_mass_is_exact(kind, tmp_path):
    model, x = _trained(kind)
    trees = [model.tree_] if kind == "tree" else [e.tree_ for e in model.estimators_]
    # the test's own evaluator is the model: same class as predict at float32 points
    pts = np.random.default_rng(3).uniform(0, 1, (200, 3)).astype(np.float32)
    pts[:, 2] = np.round(pts[:, 2])
    want = model.predict(pts)
    got = [_class_at(trees, tuple(Fraction(float(v)) for v in p)) for p in pts]
    assert list(want) == got
    expected = _biased_area(trees)
    assert 0 < expected < 1
    r = _certify(_imported(model, x, tmp_path, kind))
    d = r.details
    assert d["engine"].startswith("trees")
    assert r.verdict == "violated"
    # the biased mass is a share of the box (x0, x1, sex_below, sex_above); the class depends on
    # sex only through sex <= 0.5, so it is the biased area of the (x0, x1) square
    assert Fraction(d["biased_mass"]["lower_exact"]) == expected
    assert Fraction(d["biased_mass"]["upper_exact"]) == expected
    assert d["stopped"] == "exact" and d["coverage"] == 1.0
    assert "(exact)" in r.render_text()
    # the witness is a point of the model's feature space, re-checked: classes differ
    w = d["witness"]
    a, b = w["pair"]
    assert a["class"] != b["class"]
    assert set(a["model_inputs"]) == {"x0", "x1", "sex"}
    point = tuple(a["model_inputs"][k] for k in ("x0", "x1"))
    assert _class_at(trees, (*point, Fraction(0))) != _class_at(trees, (*point, Fraction(1)))


@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_trees_engine_agrees_with_the_general_engine(tmp_path):
    model, x = _trained("tree")
    text = _imported(model, x, tmp_path, "tree")
    exact = Fraction(_certify(text).details["biased_mass"]["lower_exact"])
    general = _certify(text, trees=False, timeout=20).details["biased_mass"]
    assert Fraction(general["lower_exact"]) <= exact <= Fraction(general["upper_exact"])


TREE_INT = """
program t(x0: real, x1: real, sex: int)
  requires 0 <= x0 && x0 <= 1 && 0 <= x1 && x1 <= 1 && sex >= 0 && sex <= 1
  ensures independent(out, sex)
{
  t1_0 := (x0 <= 0.5 ? (sex <= 0.5 ? 0 : 1) : (x1 <= 0.25 ? 1 : 0));
  out := 2*t1_0 - 1 > 0 ? 1 : 0;
}
"""


def test_tree_witness_names_features_not_leaf_scores():
    r = _certify(TREE_INT)
    assert r.verdict == "violated" and r.details["biased_mass"]["lower_exact"] == "1/2"
    for member in r.details["witness"]["pair"]:
        assert set(member["model_inputs"]) == {"x0", "x1", "sex"}
    assert "t1_0" not in r.render_text()


def test_exact_boundary_points_are_decided_exactly():
    # biased only on the line x0 == 0.5 (measure zero): the verdict must still be "violated"
    text = """
program t(x0: real, sex: int)
  requires 0 <= x0 && x0 <= 1 && sex >= 0 && sex <= 1
  ensures independent(out, sex)
{
  out := x0 <= 0.5 && x0 >= 0.5 ? sex : 0;
}
"""
    r = _certify(text)
    assert r.details["engine"].startswith("trees")
    assert r.verdict == "violated" and r.details["witness"]["inputs"]["x0"] == Fraction(1, 2)
    assert r.details["biased_mass"]["upper_exact"] == "0"
    fair = text.replace("x0 >= 0.5", "x0 > 0.5")  # now never true
    r = _certify(fair)
    assert r.verdict == "proved" and r.details["stopped"] == "exact"


def test_time_limited_interval_says_it_stopped_at_the_time_limit(tmp_path):
    model, x = _trained("forest")
    text = _imported(model, x, tmp_path, "forest")
    for trees in (True, False):
        r = _certify(text, trees=trees, timeout=0.001)
        d = r.details
        assert d["stopped"] == "timeout"
        assert "(time limit reached)" in r.render_text()
        assert d["biased_mass"]["lower"] < d["biased_mass"]["upper"]
        assert r.verdict != "proved"


def test_interval_is_never_printed_more_precisely_than_it_is():
    bm = {"lower_exact": "0.046", "upper_exact": "0.748"}
    assert mass_text(bm, "timeout") == "biased mass between 4.6% and 74.8% (time limit reached)"
    # rounded outward at the precision the width allows
    bm = {"lower_exact": "0.2784819", "upper_exact": "0.2824331"}
    assert mass_text(bm, "width") == "biased mass between 27.84% and 28.25% (width reached)"
    assert mass_text({"lower_exact": "3/10", "upper_exact": "3/10"}, "exact") == "biased mass 0.300000 (exact)"


def test_refinement_that_reaches_the_width_says_so():
    text = parse(TREE_INT, "<t>").text  # the general engine refines until --mass-gap
    r = _certify(text, trees=False, mass_gap=0.01)
    assert r.details["stopped"] in ("width", "exact")
    assert r.details["stopped"] != "timeout"


def test_mixed_boxes_are_not_printed_as_the_biased_share():
    from tamp.causal.result import CausalResult

    details = {
        "certified": 0.2519,
        "biased": 0.7481,
        "unknown": 0.0,
        "coverage": 1.0,
        "mixed_share": 0.70,
        "biased_mass": {"lower": 0.046, "upper": 0.748, "lower_exact": "23/500", "upper_exact": "187/250"},
        "stopped": "timeout",
        "distribution": "the population of pop.prob",
        "boxes": 10,
        "smt_calls": 0,
    }
    text = CausalResult("mlp", "causal", "violated", 1.0, details=details).render_text()
    assert "biased or mixed 74.81%" in text and "  biased 74.81%" not in text
    assert "biased mass between 4.6% and 74.8% (time limit reached) under the population of pop.prob" in text


def test_thresholds_that_depend_on_a_category_are_decided_per_cell():
    # g = 0, 1: biased exactly where x1 <= 0.5 (a quarter of x1's range); g = 2: fair. 1/6 in all.
    text = """
program t(x0: real, x1: real, g: int, sex: int)
  requires 0 <= x0 && x0 <= 1 && 0 <= x1 && x1 <= 2 && g >= 0 && g <= 2 && sex >= 0 && sex <= 1
  ensures independent(out, sex)
{
  thr := g == 1 ? 0.3 : 0.6;
  a := x0 <= thr ? 0.2 : (x1 > 1.5 ? 0.9 : 0.4);
  b := sex == 1 && g != 2 ? (x1 <= 0.5 ? 0.5 : 0) : 0.1;
  out := a + b > 0.55 ? 1 : 0;
}
"""
    r = _certify(text)
    d = r.details
    assert d["engine"].startswith("trees") and r.verdict == "violated"
    assert d["biased_mass"]["lower_exact"] == d["biased_mass"]["upper_exact"] == "1/6"
    general = _certify(text, trees=False, timeout=20).details["biased_mass"]
    assert Fraction(general["lower_exact"]) <= Fraction(1, 6) <= Fraction(general["upper_exact"])

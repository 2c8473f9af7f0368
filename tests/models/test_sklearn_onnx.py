"""scikit-learn models exported with skl2onnx, imported, and evaluated exactly by tamp.

The exactness argument. The imported program computes, in exact rational arithmetic, the
model whose weights are the ONNX file's numbers (float32 for skl2onnx). At a float32 input:

* decision trees and forests compare the (float32) input with float32 thresholds and add
  float32 leaf values: a comparison of two floats is exact in both worlds, so the program's
  class equals the model's whenever the class scores are not within float rounding of a tie.
  With the trees below every leaf value is a multiple of 1/n_trees stored identically, so the
  classes agree on *every* point;
* linear models and MLPs: sklearn computes with float64 weights w, the program with the exact
  float32 values w' (|w - w'| <= 2^-24 |w|) and exact arithmetic. A point can change class only
  if the model's top two scores differ by less than that perturbation's effect, so disagreement
  is allowed only where sklearn's margin is tiny (< 1e-4 here, far above 2^-24 times the
  scores' scale) — and against a float64 forward pass with the *float32* weights (rounding
  error ~1e-16 relative) the classes agree wherever that margin exceeds 1e-9.
"""

import warnings

import numpy as np
import pytest

from tamp.models import import_model

from .helpers import ExactRunner, float32_points

skl2onnx = pytest.importorskip("skl2onnx")
sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

N_POINTS = 300
FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def _export(model, X, tmp_path, name):
    from skl2onnx import to_onnx

    onx = to_onnx(model, X[:1].astype(np.float32))
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(onx.SerializeToString())
    return str(path)


def _box(X):
    return np.floor(X.min(axis=0)), np.ceil(X.max(axis=0))


def _imported(path, X):
    lo, hi = _box(X)
    ranges = [f"{f}={lo[i]:g}..{hi[i]:g}" for i, f in enumerate(FEATURES)]
    r = import_model(path, features=FEATURES, ranges=ranges)
    return r, ExactRunner(r.program)


def _points(X, seed=0):
    lo, hi = _box(X)
    return float32_points(np.random.default_rng(seed), lo, hi, N_POINTS)


def _trained(kind, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "mlp":
            return MLPClassifier(hidden_layer_sizes=(8, 6), max_iter=400, random_state=0).fit(X, y)
        if kind == "logreg":
            return LogisticRegression(max_iter=1000).fit(X, y)
        if kind == "tree":
            return DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
        return RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)


@pytest.mark.parametrize("kind", ["tree", "forest"])
def test_trees_agree_with_predict_everywhere(iris, tmp_path, kind):
    X, y = iris
    model = _trained(kind, X, y)
    r, run = _imported(_export(model, X, tmp_path, kind), X)
    P = _points(X)
    ours = run.classes(FEATURES, P)
    theirs = model.predict(P)
    assert (ours == theirs).all(), np.flatnonzero(ours != theirs)
    assert len(set(theirs)) == 3  # the points exercise every class
    assert "if (s1 > best)" in r.text and "?" in r.text


def _scores(model, P, kind):
    """sklearn's own class scores (float64 weights)."""
    return model.predict_proba(P) if kind == "mlp" else model.decision_function(P)


def _margin(S):
    top = np.sort(S, axis=1)
    return top[:, -1] - top[:, -2]


def _float32_forward(model, P, kind):
    """The model with its weights rounded to float32 (as in the ONNX file), in float64."""

    def f32(a):
        return np.asarray(a, dtype=np.float32).astype(np.float64)

    if kind == "logreg":
        return P.astype(np.float64) @ f32(model.coef_).T + f32(model.intercept_)
    h = P.astype(np.float64)
    for i, (W, b) in enumerate(zip(model.coefs_, model.intercepts_)):
        h = h @ f32(W) + f32(b)
        if i < len(model.coefs_) - 1:
            h = np.maximum(h, 0)
    return h


@pytest.mark.parametrize("kind", ["mlp", "logreg"])
def test_networks_agree_up_to_float_rounding(iris, tmp_path, kind):
    X, y = iris
    model = _trained(kind, X, y)
    r, run = _imported(_export(model, X, tmp_path, kind), X)
    P = _points(X, seed=1)
    ours = run.classes(FEATURES, P)
    theirs = model.predict(P)
    differ = ours != theirs
    assert not differ[_margin(_scores(model, P, kind)) > 1e-4].any()
    assert differ.mean() <= 0.01
    exact32 = np.argmax(_float32_forward(model, P, kind), axis=1)
    assert not (ours != exact32)[_margin(_float32_forward(model, P, kind)) > 1e-9].any()
    if kind == "mlp":
        assert "max(0, " in r.text and "softmax before the class is dropped" in r.text


def test_binary_models_are_thresholds(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :4]
    feats = ["radius", "texture", "perimeter", "area"]
    lo, hi = np.floor(X.min(axis=0)), np.ceil(X.max(axis=0))
    P = float32_points(np.random.default_rng(2), lo, hi, 200)
    for kind, model in [
        ("logreg", LogisticRegression(max_iter=2000).fit(X, y)),
        ("forest", RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)),
    ]:
        path = _export(model, X, tmp_path, f"bin_{kind}")
        r = import_model(path, features=feats, ranges=[f"{f}={lo[i]:g}..{hi[i]:g}" for i, f in enumerate(feats)])
        assert "out := score > 0 ? 1 : 0;" in r.text
        ours = ExactRunner(r.program).classes(feats, P)
        theirs = model.predict(P)
        if kind == "forest":
            assert (ours == theirs).all()
        else:
            assert not (ours != theirs)[np.abs(model.decision_function(P)) > 1e-4].any()


def test_regressors_and_string_labels(iris, tmp_path):
    """A regressor's ``out`` is its value (trees: the float32 leaf, exactly; linear: float32
    weights); string class labels are listed in a comment and ``out`` is their index."""
    from sklearn.linear_model import LinearRegression
    from sklearn.tree import DecisionTreeRegressor

    X, y = iris
    P = _points(X, seed=3)
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X[:, :3], X[:, 3])
    lin = LinearRegression().fit(X[:, :3], X[:, 3])
    feats = FEATURES[:3]
    for kind, model in [("tree", tree), ("linear", lin)]:
        path = _export(model, X[:, :3], tmp_path, f"reg_{kind}")
        r = import_model(path, features=feats, ranges=["0..8"])
        ours = np.array([float(v) for v in ExactRunner(r.program).classes(feats, P[:, :3])])
        theirs = model.predict(P[:, :3].astype(np.float64))
        if kind == "tree":  # the leaf values, stored as float32
            assert np.array_equal(ours, theirs.astype(np.float32).astype(np.float64))
        else:
            assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, names)
    r = import_model(_export(model, X, tmp_path, "named"), features=FEATURES, ranges=["0..8"])
    assert "// classes: 0 = 'setosa', 1 = 'versicolor', 2 = 'virginica'" in r.text
    ours = ExactRunner(r.program).classes(FEATURES, P)
    assert (np.array(["setosa", "versicolor", "virginica"])[ours.astype(int)] == model.predict(P)).all()

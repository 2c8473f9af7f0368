"""scikit-learn pipelines (scalers, MLPs, linear models, linear SVMs, trees) with a 0/1 sensitive
column, exported with skl2onnx and imported in one command: the program's class is
``model.predict``'s, and tamp's causal and group fairness answers contain Monte Carlo estimates
made with ``model.predict`` (Clopper-Pearson intervals at confidence 1 - 1e-6).

Agreement with ``predict`` (see test_sklearn_onnx.py for the argument): trees compare float32
inputs with float32 thresholds, so every class agrees; linear models, SVMs and MLPs store their
float64 weights as float32, so a class may differ only where scikit-learn's own margin is within
float rounding of 0 (below 1e-3 here).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

from lang.errors import TampError
from lang.parser import parse
from tamp.causal import certify_program
from tamp.models import ModelError, import_model
from tamp.models.group import group_fairness, ratio

from .helpers import ExactRunner

skl2onnx = pytest.importorskip("skl2onnx")
sklearn = pytest.importorskip("sklearn")
stats = pytest.importorskip("scipy.stats")

from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

FEATURES = ["sex", "score", "income"]  # `score` is also the importer's own name for a class score
RANGES = ["score=400..800", "income=0..100"]
LO, HI = np.array([0, 400, 0]), np.array([1, 800, 100])
CONF = 1e-6  # the Monte Carlo intervals hold with probability 1 - 1e-6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 400
    sex = rng.integers(0, 2, n)
    score = rng.normal(600, 50, n)
    income = rng.normal(50, 10, n)
    X = np.c_[sex, score, income].astype(np.float32)
    z = (score - 600) / 50 + (income - 50) / 10 + 0.6 * sex + rng.normal(0, 0.5, n)
    y = (z > 0).astype(int)
    y3 = np.digitize(z, [-0.7, 0.7])  # three classes for the one-vs-one SVM
    return X, y, y3


MODELS = {
    "scaler_mlp": lambda: make_pipeline(StandardScaler(), MLPClassifier((6,), max_iter=800, random_state=0)),
    "scaler_logreg": lambda: make_pipeline(StandardScaler(), LogisticRegression()),
    "columns_mlp": lambda: make_pipeline(
        ColumnTransformer([("num", StandardScaler(), [1, 2]), ("keep", "passthrough", [0])]),
        MLPClassifier((5,), max_iter=800, random_state=0),
    ),
    "minmax_logreg": lambda: make_pipeline(MinMaxScaler(), LogisticRegression()),
    "linear_svc": lambda: LinearSVC(),  # (skl2onnx 1.20 cannot export it inside a pipeline)
    "svc_linear": lambda: make_pipeline(StandardScaler(), SVC(kernel="linear")),
    "svc_linear_3": lambda: make_pipeline(StandardScaler(), SVC(kernel="linear")),
    "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "forest": lambda: RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0),
}


def _fit(kind, data):
    X, y, y3 = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MODELS[kind]().fit(X, y3 if kind.endswith("_3") else y)


def _export(model, X, tmp_path, name):
    from skl2onnx import to_onnx

    path = tmp_path / f"{name}.onnx"
    path.write_bytes(to_onnx(model, X[:1]).SerializeToString())
    return str(path)


def _points(n, seed):
    rng = np.random.default_rng(seed)
    P = LO + rng.random((n, 3)) * (HI - LO)
    P[:, 0] = rng.integers(0, 2, n)
    return P.astype(np.float32)


def _margin(model, P):
    """How far scikit-learn's decision is from a tie (|decision|, or the top-two gap)."""
    if hasattr(model, "decision_function"):
        d = model.decision_function(P)
        if d.ndim == 1:
            return np.abs(d)
        top = np.sort(d, axis=1)
        return top[:, -1] - top[:, -2]
    p = np.sort(model.predict_proba(P), axis=1)
    return p[:, -1] - p[:, -2]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_pipeline_imports_and_agrees_with_predict(data, tmp_path, kind):
    X = data[0]
    model = _fit(kind, data)
    r = import_model(_export(model, X, tmp_path, kind), features=FEATURES, ranges=RANGES, sensitive="sex")
    assert [p.name for p in r.program.params] == FEATURES
    assert "sex: int" in r.text and "requires sex == 0 || sex == 1" in r.text
    assert "ensures independent(out, sex)" in r.text
    run = ExactRunner(r.program)
    P = _points(300, seed=1)
    ours = run.classes(FEATURES, P)
    theirs = model.predict(P)
    assert len(set(theirs)) >= 2  # the points exercise the classes
    differ = ours != theirs
    if kind in ("tree", "forest"):
        assert not differ.any(), np.flatnonzero(differ)
    else:
        assert not differ[_margin(model, P) > 1e-3].any(), np.flatnonzero(differ)
        assert differ.mean() <= 0.01


def test_regression_pipeline_is_its_value(data, tmp_path):
    X = data[0]
    target = 0.01 * X[:, 1] + X[:, 2] - 3 * X[:, 0]
    model = make_pipeline(StandardScaler(), LinearRegression()).fit(X, target)
    r = import_model(_export(model, X, tmp_path, "linreg"), features=FEATURES, ranges=RANGES)
    run = ExactRunner(r.program)
    P = _points(50, seed=2)
    ours = np.array([float(v) for v in run.classes(FEATURES, P)])
    assert np.allclose(ours, model.predict(P), rtol=1e-5, atol=1e-3)


def test_unsupported_steps_name_the_scikit_learn_step(data, tmp_path):
    X, y, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        norm = make_pipeline(Normalizer(), LogisticRegression()).fit(X, y)
        rbf = SVC(kernel="rbf").fit(X, y)
    with pytest.raises(ModelError, match=r"operator Normalizer .*\(scikit-learn Normalizer\): the L2 normalizer"):
        import_model(_export(norm, X, tmp_path, "norm"), features=FEATURES)
    with pytest.raises(ModelError, match=r"SVMClassifier .*scikit-learn SVC or NuSVC with kernel='rbf'.*linear"):
        import_model(_export(rbf, X, tmp_path, "rbf"), features=FEATURES)


def test_sensitive_option_errors(data, tmp_path):
    X, y, _ = data
    path = _export(_fit("tree", data), X, tmp_path, "tree")
    with pytest.raises(ModelError, match="no feature 'age'"):
        import_model(path, features=FEATURES, sensitive="age")
    with pytest.raises(ModelError, match="integers"):
        import_model(path, features=FEATURES, sensitive="sex=a,b")
    with pytest.raises(ModelError, match="both name 'sex'"):
        import_model(path, features=FEATURES, sensitive="sex", ranges=["sex=0..1"])
    r = import_model(path, features=FEATURES, sensitive="sex=0,1,2")
    assert "requires sex == 0 || sex == 1 || sex == 2" in r.text


def _clopper_pearson(k, n, alpha=CONF):
    lo = stats.beta.ppf(alpha / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha / 2, k + 1, n - k) if k < n else 1.0
    return lo, hi


def _overlap(a, b):
    return a[0] <= b[1] + 1e-12 and b[0] <= a[1] + 1e-12


@pytest.mark.parametrize("kind", ["scaler_logreg", "tree"])
def test_causal_bias_agrees_with_monte_carlo(data, tmp_path, kind):
    """The biased mass (uniform over the box of score, income) against the share of sampled
    applicants whose predicted class changes with sex alone."""
    X = data[0]
    model = _fit(kind, data)
    r = import_model(_export(model, X, tmp_path, kind), features=FEATURES, ranges=RANGES, sensitive="sex")
    res = certify_program(r.program, {"jobs": 1, "timeout": 60}, path=kind, source=r.text)
    bm = res.details["biased_mass"]
    P = _points(4000, seed=3)
    P0, P1 = P.copy(), P.copy()
    P0[:, 0], P1[:, 0] = 0, 1
    k = int((model.predict(P0) != model.predict(P1)).sum())
    assert _overlap((bm["lower"], bm["upper"]), _clopper_pearson(k, len(P)))
    assert res.verdict == ("violated" if k else "proved")


POPULATION = """program population() {
  b ~ bern(0.4);
  sex := b ? 1 : 0;
  score ~ gauss(600, 2500);
  income ~ uniform(0, 100);
}
"""


@pytest.mark.parametrize("kind", [pytest.param("scaler_logreg", marks=pytest.mark.slow), "tree"])
def test_group_fairness_agrees_with_monte_carlo(data, tmp_path, kind):
    """P(out = 1 | sex = s) under the population against sampled applicants' predicted classes."""
    X = data[0]
    model = _fit(kind, data)
    r = import_model(_export(model, X, tmp_path, kind), features=FEATURES, ranges=RANGES, sensitive="sex")
    g = group_fairness(r.program, parse(POPULATION).programs[0], "sex", timeout=30)
    rng = np.random.default_rng(4)
    n = 20000
    sex = (rng.random(n) < 0.4).astype(int)
    P = np.c_[sex, rng.normal(600, 50, n), rng.random(n) * 100].astype(np.float32)
    pred = model.predict(P)
    for s, iv in ((1, g.p1), (0, g.p0)):
        rows = sex == s
        cp = _clopper_pearson(int((pred[rows] == 1).sum()), int(rows.sum()))
        assert _overlap((float(iv.lo), float(iv.hi)), cp), (s, float(iv.lo), float(iv.hi), cp)
        assert iv.hi - iv.lo < 0.01
    lo, hi = g.ratio
    assert hi is not None and lo <= hi
    assert lo * g.p0.lo <= g.p1.hi and g.p1.lo <= hi * g.p0.hi


def test_ratio_of_intervals_is_outward():
    from tamp.core.interval import Interval

    lo, hi = ratio(Interval(Fraction(1, 4), Fraction(1, 2)), Interval(Fraction(1, 2), Fraction(1)))
    assert (lo, hi) == (Fraction(1, 4), Fraction(1))
    assert ratio(Interval(Fraction(1, 4), Fraction(1, 2)), Interval(Fraction(0), Fraction(1, 2)))[1] is None


def test_four_fifths_verdicts():
    from tamp.core.interval import Interval
    from tamp.models.group import GroupFairness

    def verdict(lo, hi, r=Fraction(4, 5)):
        p = Interval(Fraction(1, 2), Fraction(1, 2))
        return GroupFairness("p", "g", "out", 1, p, p, (lo, hi), "", r).verdict

    assert verdict(Fraction(9, 10), Fraction(11, 10)) == "proved"
    assert verdict(Fraction(4, 5), Fraction(5, 4)) == "proved"  # the ends are allowed
    assert verdict(Fraction(1, 2), Fraction(7, 10)) == "violated"
    assert verdict(Fraction(13, 10), None) == "violated"
    assert verdict(Fraction(7, 10), Fraction(9, 10)) == "unknown"  # the interval straddles 0.8
    assert verdict(Fraction(9, 10), None) == "unknown"  # unbounded above: never proved


def test_group_needs_a_population_that_samples_the_inputs(data, tmp_path):
    X = data[0]
    r = import_model(_export(_fit("tree", data), X, tmp_path, "tree"), features=FEATURES, sensitive="sex")
    with pytest.raises(TampError, match="does not assign the input income"):
        group_fairness(r.program, parse("program q() { sex ~ unif(0, 1); score ~ uniform(0, 1); }").programs[0], "sex")
    bad = "program q() { sex ~ bern(0.5); score ~ uniform(0, 1); income ~ uniform(0, 1); }"
    with pytest.raises(TampError, match="do not fit together.*sex := b"):
        group_fairness(r.program, parse(bad).programs[0], "sex")
    with pytest.raises(TampError, match="the input is a real"):
        group_fairness(r.program, parse(POPULATION).programs[0], "score")


def test_cli_import_sensitive_then_group_fairness(data, tmp_path, capsys):
    from tamp.cli import main

    X = data[0]
    model = _fit("tree", data)
    onnx_path = _export(model, X, tmp_path, "tree")
    out = tmp_path / "tree.prob"
    args = ["import", onnx_path, "--features", ",".join(FEATURES), "--sensitive", "sex", "-o", str(out)]
    assert main(args + ["--range", RANGES[0], "--range", RANGES[1]]) == 0
    assert "ensures independent(...)" in capsys.readouterr().out
    pop = tmp_path / "pop.prob"
    pop.write_text(POPULATION)
    code = main(["fairness", str(out), "--population", str(pop), "--group", "sex"])
    text = capsys.readouterr().out
    assert "P(out == 1 | sex == 1) in [" in text and "ratio P(out == 1 | sex == 1) / P(out == 1 | sex == 0)" in text
    g = group_fairness(
        import_model(onnx_path, features=FEATURES, sensitive="sex").program, parse(POPULATION).programs[0], "sex"
    )
    assert code == {"proved": 0, "unknown": 1, "violated": 3}[g.verdict]
    assert f"{g.verdict}  group fairness 0.8 <= P(out == 1 | sex == 1) / P(out == 1 | sex == 0) <= 1.25" in text
    assert main(["fairness", str(out), "--group", "sex"]) == 2
    assert "--group: error: --group measures group fairness under a population" in capsys.readouterr().err


def test_linear_svr_with_support_vectors_is_its_value(data, tmp_path):
    """SVR(kernel='linear') exports an SVMRegressor: rho + Σ c_k <sv_k, x>, folded into one form."""
    from sklearn.svm import SVR

    X = data[0]
    target = 0.01 * X[:, 1] + 0.1 * X[:, 2] - X[:, 0]
    model = make_pipeline(StandardScaler(), SVR(kernel="linear")).fit(X, target)
    r = import_model(_export(model, X, tmp_path, "svr"), features=FEATURES, ranges=RANGES)
    assert "SVMRegressor" in r.text.splitlines()[0]
    run = ExactRunner(r.program)
    P = _points(50, seed=5)
    ours = np.array([float(v) for v in run.classes(FEATURES, P)])
    assert np.allclose(ours, model.predict(P), rtol=1e-5, atol=1e-3)


def test_three_class_linear_svc_votes(data, tmp_path):
    X = data[0]
    model = _fit("svc_linear_3", data)
    r = import_model(_export(model, X, tmp_path, "svc3"), features=FEATURES, ranges=RANGES)
    assert r.text.count("vote") >= 3 and "if (s1 > best)" in r.text
    P = _points(300, seed=6)
    assert set(model.predict(P)) == {0, 1, 2}  # every class is exercised (the votes of each pair)

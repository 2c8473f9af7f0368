"""tamp robust / equiv / prior fit on small trained models: certified intervals against Monte
Carlo with exact evaluation, forests against brute-force enumeration, JSON shape, bad input."""

import itertools
import json
import math
import random
import warnings
from fractions import Fraction

import numpy as np
import pytest

from tamp.cli import main
from tamp.models import import_model, read_model
from tamp.models.errors import ModelError
from tamp.models.prior import fit_prior, load_prior, save_prior
from tamp.models.table import Table, load_table
from tamp.robustness import equiv, robust
from tamp.robustness.classifier import classifier
from tests.models.helpers import ExactRunner

FEATS = ["a", "b", "c"]


def _export(model, X, path):
    from skl2onnx import to_onnx

    onx = to_onnx(model, X[:1].astype(np.float32), options={id(model): {"zipmap": False}}, target_opset=15)
    path.write_bytes(onx.SerializeToString())
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier

    d = tmp_path_factory.mktemp("robust")
    rng = np.random.default_rng(3)
    X = rng.random((300, 3)).astype(np.float32)
    y = ((X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2]) > 0.55).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = MLPClassifier(hidden_layer_sizes=(6, 6), max_iter=300, random_state=1).fit(X, y)
        forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=1).fit(X, y)
    pts = d / "points.csv"
    rows = X[:4]
    pts.write_text("a,b,c\n" + "".join(",".join(repr(float(v)) for v in r) + "\n" for r in rows))
    data = d / "data.csv"
    data.write_text("a,b,c\n" + "".join(",".join(repr(float(v)) for v in r) + "\n" for r in X))
    return {
        "net": _export(net, X, d / "net.onnx"),
        "forest": _export(forest, X, d / "forest.onnx"),
        "points": str(pts),
        "data": str(data),
        "dir": d,
    }


def _wilson(k, n, z=4.0):
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return c - h - 1e-12, c + h + 1e-12


def _mc(path, point, eps, prior=None, n=300, seed=0):
    """Pr[class unchanged] by sampling, every sample classified exactly."""
    net, _ = read_model(path, features=FEATS)
    clf = classifier(net, path)
    rng = random.Random(seed)
    c0 = clf.classify(point)
    box = {f: (max(Fraction(0), point[f] - eps), min(Fraction(1), point[f] + eps)) for f in FEATS}
    pieces = prior.pieces({}, box) if prior else [(box, Fraction(1))]
    weights = [float(d * math.prod(hi - lo for lo, hi in p.values())) for p, d in pieces]
    k = 0
    for _ in range(n):
        p, _ = rng.choices(pieces, weights)[0]
        x = {f: Fraction(float(lo) + rng.random() * float(hi - lo)) for f, (lo, hi) in p.items()}
        k += clf.classify(x) == c0
    return k, n


def _point(models, i):
    t = load_table(models["points"])
    return dict(zip(t.columns, t.rows[i]))


@pytest.mark.parametrize("kind", ["net", "forest"])
@pytest.mark.parametrize("use_prior", [False, True])
def test_intervals_contain_monte_carlo(models, kind, use_prior):
    prior = fit_prior(load_table(models["data"]), max_cells=6) if use_prior else None
    r = robust(models[kind], models["points"], "0.15", features=FEATS, prior=prior, width=0.01, timeout=20)
    assert len(r.points) == 4
    for p in r.points:
        assert 0 <= p.lower <= p.upper <= 1
        k, n = _mc(models[kind], _point(models, p.index), Fraction(15, 100), prior, seed=p.index)
        lo, hi = _wilson(k, n)
        assert p.lower <= hi and lo <= p.upper, (p, k, n)
        if kind == "forest":
            assert p.upper - p.lower <= Fraction(1, 100)  # trees: refined until the width is reached


def test_classifier_agrees_with_the_imported_program(models):
    """The engine's exact evaluation is the program `tamp import` writes, evaluated exactly."""
    for kind in ("net", "forest"):
        r = import_model(models[kind], features=FEATS)
        run = ExactRunner(r.program)
        clf = classifier(r.network, models[kind])
        rng = np.random.default_rng(5)
        for x in rng.random((30, 3)).astype(np.float32):
            env = {f: Fraction(float(v)) for f, v in zip(FEATS, x)}
            assert clf.classify(env) == run(env)


def _brute_force(path, point, eps):
    """vol{class = class at point} / vol over the eps-box: the grid of every tree threshold cuts
    the box into cells of constant class; each is classified at its centre."""
    net, _ = read_model(path, features=FEATS)
    clf = classifier(net, path)
    cuts = {f: set() for f in FEATS}

    def walk(t):
        if hasattr(t, "feature"):
            cuts[t.feature].add(t.threshold)
            walk(t.yes)
            walk(t.no)

    for a in net.body:
        walk(a.expr)
    box = {f: (max(Fraction(0), point[f] - eps), min(Fraction(1), point[f] + eps)) for f in FEATS}
    axes = []
    for f in FEATS:
        lo, hi = box[f]
        ts = sorted([lo] + [t for t in cuts[f] if lo < t < hi] + [hi])
        axes.append(list(zip(ts, ts[1:])))
    c0 = clf.classify(point)
    good = Fraction(0)
    for cell in itertools.product(*axes):
        centre = {f: (lo + hi) / 2 for f, (lo, hi) in zip(FEATS, cell)}
        if clf.classify(centre) == c0:
            good += math.prod(hi - lo for lo, hi in cell)
    return good / math.prod(hi - lo for lo, hi in box.values())


def test_forest_is_exact_and_equals_brute_force(models):
    r = robust(models["forest"], models["points"], "0.2", features=FEATS, width=0, timeout=None)
    for p in r.points:
        assert p.lower == p.upper == _brute_force(models["forest"], _point(models, p.index), Fraction(1, 5))


def test_equiv_of_a_model_with_itself_is_zero(models):
    e = equiv(models["forest"], models["forest"], features=FEATS, width=0, timeout=None)
    assert e.lower == e.upper == 0
    e = equiv(models["net"], models["net"], features=FEATS, width=0.02, timeout=30)
    assert e.lower == 0 and e.upper <= Fraction(2, 100)


def test_equiv_of_two_models_contains_monte_carlo(models):
    e = equiv(models["net"], models["forest"], features=FEATS, width=0.02, timeout=30)
    a = classifier(read_model(models["net"], features=FEATS)[0], "a")
    b = classifier(read_model(models["forest"], features=FEATS)[0], "b")
    rng = random.Random(1)
    n = 400
    k = 0
    for _ in range(n):
        x = {f: Fraction(rng.random()) for f in FEATS}
        k += a.classify(x) != b.classify(x)
    lo, hi = _wilson(k, n)
    assert e.lower <= hi and lo <= e.upper


def test_json_shape(models, capsys):
    code = main(
        ["robust", models["forest"], "--features", "a,b,c", "--at", models["points"], "--eps", "0.05", "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["verdict"] == "ok" and out["schema_version"] == 1 and out["command"] == "robust"
    assert [p["index"] for p in out["points"]] == [0, 1, 2, 3]
    for p in out["points"]:
        assert set(p) == {"index", "class", "probability", "time_s"}
        assert set(p["probability"]) == {"lower", "upper"}
        assert p["class"] in (0, 1)
    _validate(out)
    code = main(["equiv", models["forest"], models["forest"], "--features", "a,b,c", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["disagreement"] == {"lower": 0.0, "upper": 0.0}
    _validate(out)
    code = main(["robust", models["forest"], "--features", "a,b,c", "--at", models["points"], "--eps", "0", "--json"])
    assert code == 2


def _validate(out):
    """The JSON Schema every command's --json output follows (tamp/schema)."""
    jsonschema = pytest.importorskip("jsonschema")
    from tamp.commands.jsonout import SCHEMA_PATH

    jsonschema.validate(out, json.loads(SCHEMA_PATH.read_text()))


def test_prior_fit_round_trip_and_categorical(tmp_path, capsys):
    rng = random.Random(2)
    rows = [(rng.random(), rng.choice([0, 1]), rng.choice(["x", "y", "z"])) for _ in range(200)]
    data = tmp_path / "d.csv"
    data.write_text("u,flag,kind\n" + "".join(f"{a!r},{b},{c}\n" for a, b, c in rows))
    out = tmp_path / "p.json"
    assert main(["prior", "fit", str(data), "-o", str(out), "--max-cells", "8"]) == 0
    pr = load_prior(str(out))
    assert [f.kind for f in pr.features] == ["continuous", "categorical", "categorical"]
    assert sum(c.mass for c in pr.cells) == 1 and len(pr.cells) <= 8
    again = tmp_path / "q.json"
    save_prior(pr, str(again))
    assert load_prior(str(again)).cells == pr.cells
    # conditioning on a category keeps only the cells holding it
    pieces = pr.pieces({"flag": Fraction(1), "kind": "x"}, {"u": (Fraction(0), Fraction(1, 2))})
    assert pieces and all(d > 0 for _, d in pieces)


def _err(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    return err


def test_bad_input(models, tmp_path, capsys):
    f, pts = models["forest"], models["points"]
    assert "--eps" in _err(capsys, ["robust", f, "--features", "a,b,c", "--at", pts, "--eps", "0"])
    assert "--eps" in _err(capsys, ["robust", f, "--features", "a,b,c", "--at", pts, "--eps", "-0.1"])
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,zz\n0.1,0.2,0.3\n")
    err = _err(capsys, ["robust", f, "--features", "a,b,c", "--at", str(bad), "--eps", "0.1"])
    assert f"{bad}:1:5" in err and "'zz'" in err
    spec = tmp_path / "spec.txt"
    spec.write_text("2\na\nnope\n")
    err = _err(capsys, ["robust", f, "--features", "a,b,c", "--at", pts, "--eps", "0.1", "--spec", str(spec)])
    assert f"{spec}:3" in err and "nope" in err
    prior = tmp_path / "prior.json"
    prior.write_text(
        json.dumps(
            {
                "format": "tamp-prior",
                "version": 1,
                "rows": 1,
                "features": [{"name": "weight", "kind": "continuous", "lo": 0, "hi": 1}],
                "cells": [{"box": {"weight": [0, 1]}, "count": 1}],
            },
            indent=1,
        )
    )
    err = _err(capsys, ["robust", f, "--features", "a,b,c", "--at", pts, "--eps", "0.1", "--prior", str(prior)])
    assert str(prior) in err and "'weight'" in err


def test_bad_csv_header_is_located(models, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,zz\n0.1,0.2,0.3\n")
    with pytest.raises(ModelError) as e:
        robust(models["forest"], str(bad), "0.1", features=FEATS)
    assert e.value.line == 1 and e.value.col == 5 and "'zz'" in e.value.message


def test_unsupported_onnx_operator(tmp_path, capsys):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    g = helper.make_graph([helper.make_node("Tanh", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path / "tanh.onnx"
    path.write_bytes(helper.make_model(g).SerializeToString())
    pts = tmp_path / "p.csv"
    pts.write_text("x0,x1\n0.5,0.5\n")
    err = _err(capsys, ["robust", str(path), "--at", str(pts), "--eps", "0.1"])
    assert "Tanh" in err


def test_table_rows_are_exact_decimals():
    from tamp.models.table import read_table

    t = read_table("a,b\n0.1,x\n", "t.csv")
    assert t.rows == [[Fraction(1, 10), "x"]]
    assert isinstance(t, Table)


def test_points_in_parallel_give_the_same_intervals(models):
    """Points are independent tasks of tamp.executor: two worker processes certify the same
    intervals as one (each point's branch and bound is deterministic)."""
    one = robust(models["net"], models["points"], "0.1", features=FEATS, width=0.01, timeout=None)
    two = robust(models["net"], models["points"], "0.1", features=FEATS, width=0.01, timeout=None, workers=2)
    assert [(p.lower, p.upper) for p in one.points] == [(p.lower, p.upper) for p in two.points]

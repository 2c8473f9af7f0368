"""Models are imported as they compute (issue 31, items 4 and 6): a one-unit softmax is the
constant it is (with a located warning), weight shapes are checked, names of the language are
renamed, every finite float is imported exactly, and out-of-range numbers are one located
error (exit status 2), never an internal error."""

import json
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest

from lang.errors import TampError
from tamp.models import import_model, read_model
from tamp.models.errors import ModelWarning
from tamp.models.table import Table
from tamp.robustness import robust
from tamp.robustness.classifier import classifier

from .helpers import ExactRunner

h5py = pytest.importorskip("h5py")
onnx = pytest.importorskip("onnx")


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tamp", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def write_keras(path, layers):
    """``layers``: (kernel, bias, activation) per Dense layer, in the HDF5 layout of Model.save()."""
    cfg = []
    with h5py.File(path, "w") as f:
        mw = f.create_group("model_weights")
        for i, (W, b, act) in enumerate(layers):
            name = f"dense_{i + 1}"
            conf = {"name": name, "units": int(W.shape[1]), "activation": act, "use_bias": True}
            if i == 0:
                conf["batch_input_shape"] = [None, int(W.shape[0])]
            cfg.append({"class_name": "Dense", "config": conf})
            g = mw.create_group(name)
            g.attrs["weight_names"] = [f"{name}/kernel:0".encode(), f"{name}/bias:0".encode()]
            g.create_dataset(f"{name}/kernel:0", data=W)
            g.create_dataset(f"{name}/bias:0", data=b)
        f.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": {"name": "s", "layers": cfg}})
    return str(path)


def write_onnx(path, W, b, last=None, dtype=np.float32):
    """X @ W + b, then ``last`` (an operator name, e.g. Softmax) if given."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    out = "y"
    if last:
        nodes.append(helper.make_node(last, ["y"], ["p"], axis=1))
        out = "p"
    et = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", et, [None, W.shape[0]])],
        [helper.make_tensor_value_info(out, et, [None, W.shape[1]])],
        [numpy_helper.from_array(W.astype(dtype), "W"), numpy_helper.from_array(b.astype(dtype), "b")],
    )
    path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return str(path)


# --------------------------------------------------------------------------- degenerate layers


def test_keras_one_unit_softmax_is_the_constant_class(tmp_path):
    W = np.array([[1.0], [-1.0]], dtype=np.float32)
    p = write_keras(tmp_path / "soft1.h5", [(W, np.zeros(1, dtype=np.float32), "softmax")])
    with pytest.warns(ModelWarning, match="dense_1.*softmax over one unit is the constant 1"):
        net, _ = read_model(p)
    clf = classifier(net, p)
    # Keras predicts 1.0 everywhere: class 1 at every point, whatever the raw score's sign
    for x in ((0, 1), (1, 0), (Fraction(1, 3), Fraction(2, 3))):
        assert clf.classify({"x0": Fraction(x[0]), "x1": Fraction(x[1])}) == 1
    table = Table("p.csv", ["x0", "x1"], [[Fraction(1, 2), Fraction(1, 2)]], [2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        r = robust(p, table, Fraction(1, 2), width=0, timeout=30)
    assert r.points[0].lower == r.points[0].upper == 1


def test_keras_one_unit_softmax_warning_on_the_command_line(tmp_path):
    W = np.array([[1.0], [-1.0]], dtype=np.float32)
    p = write_keras(tmp_path / "soft1.h5", [(W, np.zeros(1, dtype=np.float32), "softmax")])
    (tmp_path / "pts.csv").write_text("x0,x1\n0.5,0.5\n")
    res = _run("robust", p, "--at", str(tmp_path / "pts.csv"), "--eps", "0.5")
    assert res.returncode == 0, res.stderr
    assert f"{p}: warning: layer 'dense_1': a softmax over one unit" in res.stderr
    assert "Warning" not in res.stderr and "Traceback" not in res.stderr
    assert "[1.000000, 1.000000]" in res.stdout


def test_onnx_one_value_softmax_is_the_constant_class(tmp_path):
    p = write_onnx(tmp_path / "soft1.onnx", np.array([[1.0], [-1.0]]), np.zeros(1), last="Softmax")
    with pytest.warns(ModelWarning, match="Softmax.*one value is the constant 1"):
        r = import_model(p)
    run = ExactRunner(r.program)
    assert run({"x0": 0.0, "x1": 1.0}) == run({"x0": 1.0, "x1": 0.0}) == 1


def test_sigmoid_and_wide_softmax_are_still_dropped_silently(tmp_path):
    p = write_onnx(tmp_path / "sig.onnx", np.array([[1.0], [-1.0]]), np.zeros(1), last="Sigmoid")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        r = import_model(p)
    run = ExactRunner(r.program)
    assert run({"x0": 0.0, "x1": 1.0}) == 0 and run({"x0": 1.0, "x1": 0.0}) == 1


# --------------------------------------------------------------------------- shapes


def test_keras_bias_of_the_wrong_shape_is_named(tmp_path):
    W = np.ones((2, 3), dtype=np.float32)
    p = write_keras(tmp_path / "scalar.h5", [(W, np.float32(0.5), "linear")])
    with pytest.raises(TampError, match=r"layer 'dense_1': bias of shape \[\] for 3 units"):
        read_model(p)
    res = _run("import", p)
    assert res.returncode == 2 and "layer 'dense_1': bias of shape [] for 3 units" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and "internal" not in res.stderr
    p2 = write_keras(tmp_path / "long.h5", [(W, np.zeros(4, dtype=np.float32), "linear")])
    with pytest.raises(TampError, match=r"layer 'dense_1': bias of shape \[4\] for 3 units"):
        read_model(p2)


# --------------------------------------------------------------------------- numbers


def test_float64_subnormal_and_extreme_weights_are_imported_exactly(tmp_path):
    tiny, huge = 5e-324, 1.7976931348623157e308
    sub = 2.5e-310
    p = write_onnx(tmp_path / "sub.onnx", np.array([[sub], [-sub]]), np.array([-tiny]), dtype=np.float64)
    r = import_model(p)  # the program parses and checks (it said "internal error" before)
    run = ExactRunner(r.program)
    # score = sub·(x0 - x1) - tiny: only exact arithmetic tells these apart
    assert run({"x0": 1.0, "x1": 0.0}) == 1
    assert run({"x0": 0.0, "x1": 0.0}) == 0
    assert run({"x0": 0.5, "x1": 0.5}) == 0
    assert r.network.scores[0].const == -Fraction(tiny)
    assert dict(r.network.scores[0].terms) == {"x0": Fraction(sub), "x1": -Fraction(sub)}
    p2 = write_onnx(tmp_path / "huge.onnx", np.array([[huge], [-huge]]), np.array([-huge]), dtype=np.float64)
    run2 = ExactRunner(import_model(p2).program)
    assert run2({"x0": 1.0, "x1": 0.0}) == 0  # huge·1 - huge = 0, not > 0
    assert run2({"x0": 1.0, "x1": -1.0}) == 1


def _libra(tmp_path, weight):
    p = tmp_path / "n.py"
    p.write_text(f"h0 = ({weight})*x0 + (-0.25)*x1 + (0.1)\nh1 = (-0.5)*x0 + (0.25)*x1 + (0.2)\n")
    (tmp_path / "pts.csv").write_text("x0,x1\n0.5,0.5\n")
    return str(p)


@pytest.mark.parametrize("weight", ["1e2000", "1e400", "-1e309", "1e-400"])
def test_libra_numbers_out_of_range_are_one_located_error(tmp_path, weight):
    p = _libra(tmp_path, weight)
    for args in (("import", p), ("robust", p, "--at", str(tmp_path / "pts.csv"), "--eps", "0.1")):
        res = _run(*args)
        assert res.returncode == 2, res.stderr
        num = weight.lstrip("-")
        col = 7 + len(weight) - len(num)
        assert f"{p}:1:{col}: error: the number {num} is out of range" in res.stderr, res.stderr
        assert "internal" not in res.stderr and "Traceback" not in res.stderr


def test_libra_numbers_within_range_stay_exact(tmp_path):
    p = _libra(tmp_path, "1e-300")
    r = import_model(p)  # the program parses and checks
    assert dict(r.network.scores[0].terms)["x0"] == Fraction(1, 10**300)


@pytest.mark.parametrize(
    "extra, needle",
    [
        (("--eps", "1e400"), "--eps 1e400 is out of range"),
        (("--eps", "1e99999999"), "argument --eps: expected a number > 0"),
        (("--eps", "0.1", "--range", "0..1e400"), "--range 0..1e400 is out of range"),
        (("--eps", "0.1", "--range", "0..1e99999999"), "--range expects"),
    ],
)
def test_out_of_range_options_are_one_error(tmp_path, extra, needle):
    p = _libra(tmp_path, "0.5")
    res = _run("robust", p, "--at", str(tmp_path / "pts.csv"), *extra)
    assert res.returncode == 2 and needle in res.stderr, res.stderr
    assert "internal" not in res.stderr and "Traceback" not in res.stderr


def test_huge_numbers_in_a_points_table_are_refused_quickly(tmp_path):
    p = _libra(tmp_path, "0.5")
    (tmp_path / "pts.csv").write_text("x0,x1\n1e99999999,0.5\n")
    res = _run("robust", p, "--at", str(tmp_path / "pts.csv"), "--eps", "0.1")
    assert res.returncode == 2 and "pts.csv:2:1: error: feature 'x0': expected a number" in res.stderr, res.stderr


@pytest.mark.parametrize(
    "value, needle", [("1e400", "the number of about 1e400 is out of range"), ("1e99999999", "exponent")]
)
def test_huge_numbers_in_a_prior_are_one_error(tmp_path, value, needle):
    p = _libra(tmp_path, "0.5")
    prior = tmp_path / "prior.json"
    prior.write_text(
        '{"format": "tamp-prior", "version": 1, "method": "density-estimation tree", "rows": 3,\n "features": [\n'
        f' {{"name": "x0", "kind": "continuous", "lo": 0.1, "hi": {value}}},\n'
        ' {"name": "x1", "kind": "continuous", "lo": 0.2, "hi": 0.9}\n ],\n'
        f' "cells": [\n {{"box": {{"x0": [0.1, {value}], "x1": [0.2, 0.9]}}, "count": 3}}\n ]\n}}\n'
    )
    res = _run("robust", p, "--at", str(tmp_path / "pts.csv"), "--eps", "0.1", "--prior", str(prior))
    assert res.returncode == 2 and needle in res.stderr, res.stderr
    assert "internal" not in res.stderr and "Traceback" not in res.stderr


# --------------------------------------------------------------------------- names


def _relu_onnx(path):
    """x -> relu(x @ W1 + b1) @ W2 + b2 with two classes (hidden units h1_1, h1_2)."""
    from onnx import TensorProto, helper, numpy_helper

    W1 = np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.25]], dtype=np.float32)
    b1 = np.array([0.1, -0.3], dtype=np.float32)
    W2 = np.array([[1.0, -1.0], [-2.0, 1.5]], dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["m"]),
        helper.make_node("Add", ["m", "b1"], ["a"]),
        helper.make_node("Relu", ["a"], ["h"]),
        helper.make_node("MatMul", ["h", "W2"], ["y"]),
    ]
    inits = [numpy_helper.from_array(v, n) for v, n in ((W1, "W1"), (b1, "b1"), (W2, "W2"))]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        inits,
    )
    path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return str(path)


@pytest.mark.parametrize("stem", ["sum", "if", "min", "program", "out", "while"])
def test_model_files_named_like_words_of_the_language(tmp_path, stem):
    p = _relu_onnx(tmp_path / f"{stem}.onnx")
    res = _run("import", p)
    assert res.returncode == 0, res.stderr
    assert f"program m_{stem}(" in res.stdout or f"program {stem}(" in res.stdout and stem == "out"
    res = _run("import", p, "--name", stem)
    if stem != "out":
        assert res.returncode == 2 and f"the program name '{stem}' is not usable" in res.stderr, res.stderr


FEATURE_NAMES = [
    ["sum", "if", "log"],
    ["out", "score", "best"],
    ["h1_1", "h1_2", "x0"],
    ["min", "max", "independent"],
]


@pytest.mark.parametrize("names", FEATURE_NAMES)
def test_features_named_like_words_or_internal_names_compute_the_same(tmp_path, names):
    p = _relu_onnx(tmp_path / "net.onnx")
    plain = ["a", "b", "c"]
    ref = ExactRunner(import_model(p, features=plain).program)
    r = import_model(p, features=names)  # the program parses and checks
    run = ExactRunner(r.program)
    params = [q.name for q in r.program.params]
    clf = classifier(read_model(p, features=names)[0], p)
    rng = np.random.default_rng(0)
    for x in rng.random((40, 3)):
        want = ref(dict(zip(plain, x)))
        assert run(dict(zip(params, x))) == want
        assert clf.classify({n: Fraction(float(v)) for n, v in zip(names, x)}) == want


def test_robust_with_a_feature_named_like_a_hidden_unit(tmp_path):
    """The robustness engine reads the network itself: a feature named h1_1 must stay the
    input (it became the hidden unit's value before)."""
    p = _relu_onnx(tmp_path / "net.onnx")
    (tmp_path / "a.csv").write_text("a,b,c\n0.5,0.5,0.5\n")
    (tmp_path / "h.csv").write_text("h1_1,h1_2,c\n0.5,0.5,0.5\n")
    ra = robust(p, str(tmp_path / "a.csv"), "0.25", features=["a", "b", "c"], width=1e-3, timeout=30)
    rh = robust(p, str(tmp_path / "h.csv"), "0.25", features=["h1_1", "h1_2", "c"], width=1e-3, timeout=30)
    (pa,), (ph,) = ra.points, rh.points
    assert pa.cls == ph.cls and pa.lower <= ph.upper and ph.lower <= pa.upper


def test_libra_inputs_named_like_built_ins(tmp_path):
    p = tmp_path / "n.py"
    p.write_text("h = (1)*sum + (-2)*log + (0.5)\n#\nReLU(h)\no0 = (1)*h\no1 = (0.25)*min\n")
    r = import_model(str(p))
    params = [q.name for q in r.program.params]
    assert params == ["sum_", "log_", "min_"]
    run = ExactRunner(r.program)
    clf = classifier(read_model(str(p))[0], str(p))
    rng = np.random.default_rng(1)
    for x in rng.random((30, 3)):
        assert run(dict(zip(params, x))) == clf.classify(
            {n: Fraction(float(v)) for n, v in zip(["sum", "log", "min"], x)}
        )


def test_keras_features_named_like_hidden_units(tmp_path):
    W1 = np.array([[1.0, -1.0], [0.5, 2.0]], dtype=np.float32)
    W2 = np.array([[1.0, -1.0], [-2.0, 1.5]], dtype=np.float32)
    p = write_keras(
        tmp_path / "k.h5",
        [(W1, np.array([0.1, -0.3], dtype=np.float32), "relu"), (W2, np.zeros(2, np.float32), "softmax")],
    )
    ref = classifier(read_model(p, features=["a", "b"])[0], p)
    clf = classifier(read_model(p, features=["h1_1", "h1_2"])[0], p)
    run = ExactRunner(import_model(p, features=["h1_1", "h1_2"]).program)
    rng = np.random.default_rng(2)
    for x in rng.random((30, 2)):
        q = [Fraction(float(v)) for v in x]
        want = ref.classify({"a": q[0], "b": q[1]})
        assert clf.classify({"h1_1": q[0], "h1_2": q[1]}) == want
        assert run({"h1_1": x[0], "h1_2": x[1]}) == want


def test_layers_of_no_units_are_one_error(tmp_path):
    k = write_keras(tmp_path / "zero.h5", [(np.zeros((2, 0), np.float32), np.zeros(0, np.float32), "linear")])
    o = write_onnx(tmp_path / "zero.onnx", np.zeros((2, 0)), np.zeros(0))
    for p, needle in ((k, "layer 'dense_1': kernel of shape [2, 0]"), (o, "the model's output has no values")):
        res = _run("import", p)
        assert res.returncode == 2 and needle in res.stderr, res.stderr
        assert "internal" not in res.stderr


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_weights_that_are_not_finite_are_one_error(tmp_path, bad):
    W = np.array([[1.0, bad], [0.5, 0.25]], dtype=np.float32)
    k = write_keras(tmp_path / "k.h5", [(W, np.zeros(2, np.float32), "linear")])
    o = write_onnx(tmp_path / "o.onnx", W, np.zeros(2))
    for p, needle in ((k, "layer 'dense_1': a weight is"), (o, "the weights is")):
        for args in (("import", p), ("robust", p, "--at", str(_points(tmp_path)), "--eps", "0.1")):
            res = _run(*args)
            assert res.returncode == 2 and needle in res.stderr and "not a finite number" in res.stderr, res.stderr


def _points(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text("x0,x1\n0.5,0.5\n")
    return p


def test_a_model_whose_output_is_constant_is_a_warning(tmp_path):
    W1 = np.zeros((2, 2), np.float32)  # the first layer's output is its bias: a constant
    W2 = np.array([[1.0, -1.0], [-2.0, 1.5]], dtype=np.float32)
    p = write_keras(
        tmp_path / "c.h5", [(W1, np.array([0.1, 0.3], np.float32), "relu"), (W2, np.zeros(2, np.float32), "linear")]
    )
    with pytest.warns(ModelWarning, match="does not depend on its input") as rec:
        r = import_model(p)
    assert len(rec) == 1
    run = ExactRunner(r.program)
    assert {run({"x0": a, "x1": b}) for a in (0.0, 1.0) for b in (0.0, 1.0)} == {1}  # -0.5 < 0.35
    # the one-unit softmax says it once, naming its layer
    q = write_keras(tmp_path / "s.h5", [(np.ones((2, 1), np.float32), np.zeros(1, np.float32), "softmax")])
    with pytest.warns(ModelWarning) as rec:
        read_model(q)
    assert len(rec) == 1 and "dense_1" in str(rec[0].message)
    with warnings.catch_warnings():  # a model that reads its input: no warning
        warnings.simplefilter("error", ModelWarning)
        read_model(_relu_onnx(tmp_path / "net.onnx"))

"""One network, three files: ONNX (built with onnx.helper), Keras HDF5 (built with h5py in the
layout Keras writes) and Libra's text format with the exact decimals of the same float32
weights. The three imports must be the same program up to names, and give the same causal
fairness verdict and overlapping biased-mass intervals."""

import json
from fractions import Fraction

import numpy as np
import pytest

from tamp.causal import certify_program
from tamp.models import import_model
from tamp.models.exact import decimal_text
from tamp.models.ir import Relu

from .helpers import ExactRunner, float32_points

onnx = pytest.importorskip("onnx")
h5py = pytest.importorskip("h5py")

FEATS = ["x00", "x01", "x02", "x03"]  # x02, x03: a one-hot sensitive group
SPEC = "2\nx02\nx03\n"


def _weights(seed=3, sizes=(4, 5, 4, 2)):
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(0, 1, (a, b)).astype(np.float32), rng.normal(0, 0.3, b).astype(np.float32))
        for a, b in zip(sizes, sizes[1:])
    ]


def write_onnx(path, layers):
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, cur = [], [], "X"
    for i, (W, b) in enumerate(layers):
        inits += [numpy_helper.from_array(W, f"W{i}"), numpy_helper.from_array(b, f"b{i}")]
        last = i == len(layers) - 1
        if last:  # as PyTorch exports a Linear layer: Gemm with the transposed weight
            inits[-2] = numpy_helper.from_array(np.ascontiguousarray(W.T), f"W{i}")
            nodes.append(helper.make_node("Gemm", [cur, f"W{i}", f"b{i}"], ["logits"], transB=1))
            nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=1))
        else:
            nodes.append(helper.make_node("MatMul", [cur, f"W{i}"], [f"m{i}"]))
            nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]))
            nodes.append(helper.make_node("Relu", [f"a{i}"], [f"h{i}"]))
            cur = f"h{i}"
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [None, 2])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())


def write_keras(path, layers):
    """The HDF5 layout of keras Model.save(): a model_config JSON attribute, and per layer a
    group model_weights/NAME with a weight_names attribute and datasets NAME/kernel:0, bias:0."""
    cfg_layers = []
    with h5py.File(path, "w") as f:
        mw = f.create_group("model_weights")
        names = []
        for i, (W, b) in enumerate(layers):
            name = f"dense_{i + 1}"
            names.append(name.encode())
            act = "softmax" if i == len(layers) - 1 else "relu"
            conf = {"name": name, "units": int(W.shape[1]), "activation": act, "use_bias": True}
            if i == 0:
                conf["batch_input_shape"] = [None, int(W.shape[0])]
            cfg_layers.append({"class_name": "Dense", "config": conf})
            g = mw.create_group(name)
            g.attrs["weight_names"] = [f"{name}/kernel:0".encode(), f"{name}/bias:0".encode()]
            g.create_dataset(f"{name}/kernel:0", data=W)
            g.create_dataset(f"{name}/bias:0", data=b)
        mw.attrs["layer_names"] = names
        f.attrs["model_config"] = json.dumps(
            {"class_name": "Sequential", "config": {"name": "seq", "layers": cfg_layers}}
        )
        f.attrs["keras_version"] = "2.2.4"
        f.attrs["backend"] = "tensorflow"


def write_libra(path, layers):
    """Libra's format, every weight the exact decimal of its float32 value."""
    names = list(FEATS)
    lines = []
    for i, (W, b) in enumerate(layers):
        outs = [f"x{i + 1}{j}" for j in range(W.shape[1])]
        for j, o in enumerate(outs):
            terms = " + ".join(f"({decimal_text(Fraction(float(W[k, j])))})*{n}" for k, n in enumerate(names))
            lines.append(f"{o} = {terms} + ({decimal_text(Fraction(float(b[j])))})")
        if i < len(layers) - 1:
            lines.append("#")
            lines += [f"ReLU({o})" for o in outs]
            lines.append("")
        names = outs
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    d = tmp_path_factory.mktemp("roundtrip")
    layers = _weights()
    write_onnx(d / "net.onnx", layers)
    write_keras(d / "net.h5", layers)
    write_libra(d / "net.py", layers)
    (d / "spec.txt").write_text(SPEC)
    spec = str(d / "spec.txt")
    return {
        "onnx": import_model(str(d / "net.onnx"), features=FEATS, spec=spec, name="net"),
        "keras": import_model(str(d / "net.h5"), features=FEATS, spec=spec, name="net"),
        "libra": import_model(str(d / "net.py"), spec=spec, name="net"),
        "layers": layers,
    }


def _relu_forms(net):
    return [a.expr.arg for a in net.body if isinstance(a.expr, Relu)]


def _rename(form, mapping):
    return sorted((mapping.get(v, v), c) for v, c in form.terms), form.const


def test_same_weights_exactly(three):
    """The same exact rationals in every affine form (hidden units renamed by position)."""
    nets = {k: three[k].network for k in ("onnx", "keras", "libra")}
    forms = {k: _relu_forms(n) for k, n in nets.items()}
    assert len(forms["onnx"]) == len(forms["keras"]) == len(forms["libra"]) == 9
    to_libra = {}
    for k in ("onnx", "keras"):
        hidden = [a.name for a in nets[k].body]
        to_libra[k] = dict(zip(hidden, [a.name for a in nets["libra"].body]))
        for f, g in zip(forms[k], forms["libra"]):
            assert _rename(f, to_libra[k]) == _rename(g, {})
        for f, g in zip(nets[k].scores, nets["libra"].scores):
            assert _rename(f, to_libra[k]) == _rename(g, {})


def test_same_classes_as_numpy(three):
    rng = np.random.default_rng(7)
    X = float32_points(rng, [0, 0], [1, 1], 200)
    for k in ("onnx", "keras", "libra"):
        run = ExactRunner(three[k].program)
        for x0, x1 in X[:60]:
            for g in (0, 1):
                h = np.array([x0, x1, 1 - g, g], dtype=np.float64)
                for i, (W, b) in enumerate(three["layers"]):
                    h = h @ W.astype(np.float64) + b.astype(np.float64)
                    if i < len(three["layers"]) - 1:
                        h = np.maximum(h, 0)
                expect = int(np.argmax(h))
                if abs(h[1] - h[0]) > 1e-9:
                    assert run({"x00": x0, "x01": x1, "g_x02": g}) == expect


def test_same_fairness_verdict_and_mass(three):
    results = {}
    for k in ("onnx", "libra", "keras"):
        r = certify_program(three[k].program, {"jobs": 1, "timeout": 60}, path=k, source=three[k].text)
        results[k] = r
    verdicts = {r.verdict for r in results.values()}
    assert verdicts == {"violated"}  # the sensitive group has live weights: bias on a third of the box
    lo = max(Fraction(r.details["biased_mass"]["lower"]) for r in results.values())
    hi = min(Fraction(r.details["biased_mass"]["upper"]) for r in results.values())
    assert lo <= hi  # the intervals overlap

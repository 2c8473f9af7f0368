"""Libra's own example network (test data: benchmarks/models/libra/README.md), the command line, and bad input."""

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from lang.errors import TampError
from tamp.causal import certify_program
from tamp.cli import main
from tamp.models import import_model

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "libra"
ROOT = Path(__file__).resolve().parents[2]


def test_libra_example_bias_matches_libras_published_share():
    """Libra's README: bias in 73.44797685362308% of the example's input space."""
    r = import_model(str(DATA / "example.libra"), spec=str(DATA / "example_spec.txt"))
    assert "ensures independent(out, g_y0)" in r.text
    assert "y0 := g_y0 == 0 ? 1 : 0;" in r.text and "y1 := g_y0 == 1 ? 1 : 0;" in r.text
    res = certify_program(r.program, {"jobs": 1, "timeout": 120}, path="example", source=r.text)
    assert res.verdict == "violated"
    bm = res.details["biased_mass"]
    # tamp measures the biased share exactly; Libra printed a float (last digits rounded)
    assert bm["lower"] - 1e-12 <= 0.7344797685362308 <= bm["upper"] + 1e-12
    assert bm["upper"] - bm["lower"] <= 0.01


def test_cli_writes_a_checked_program(tmp_path, capsys):
    out = tmp_path / "ex.prob"
    code = main(["import", str(DATA / "example.libra"), "--spec", str(DATA / "example_spec.txt"), "-o", str(out)])
    assert code == 0
    assert "ensures independent(...)" in capsys.readouterr().out
    assert main(["check", str(out)]) == 0
    assert "ok (1 program: example)" in capsys.readouterr().out


def _run(*args):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "tamp", *args], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=120
    )


def _onnx_with(tmp_path, op):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    W = numpy_helper.from_array(np.ones((3, 2), dtype=np.float32), "W")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]), helper.make_node(op, ["m"], ["y"], name="act1")]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        [W],
    )
    p = tmp_path / f"{op}.onnx"
    p.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return p


def test_unsupported_onnx_operator_is_named(tmp_path):
    p = _onnx_with(tmp_path, "Tanh")
    res = _run("import", str(p))
    assert res.returncode == 2
    assert "operator Tanh 'act1'" in res.stderr and "not supported" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_unsupported_shapes_are_named(tmp_path):
    from onnx import TensorProto, helper, numpy_helper

    W = numpy_helper.from_array(np.ones((5, 2), dtype=np.float32), "W")
    for dims, needle in [
        ([None, None], "input 'X' has shape [?, ?]"),
        ([None, 3], "operator MatMul 'mm': weight shape [5, 2] does not fit a row of 3 values"),
    ]:
        g = helper.make_graph(
            [helper.make_node("MatMul", ["X", "W"], ["y"], name="mm")],
            "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, dims)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
            [W],
        )
        p = tmp_path / "shape.onnx"
        p.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
        res = _run("import", str(p))
        assert res.returncode == 2 and needle in res.stderr, res.stderr


def test_feature_names_that_clash(tmp_path):
    """Features named like the program's own variables or words of the language are renamed in
    the program (issue 31); the importer's names yield to the features'."""
    p = _onnx_with(tmp_path, "Relu")
    r = import_model(str(p), features=["out", "h1_1", "while"])
    assert "program Relu(out_: real, h1_1: real, while_: real)" in r.text
    assert "h1_1_ := max(0, out_ + h1_1 + while_);" in r.text
    r = import_model(str(p), features=["a", "b", "c"])
    assert "h1_1 := max(0, a + b + c);" in r.text and "score := h1_2 - h1_1;" in r.text


def test_sigmoid_inside_a_network_is_refused(tmp_path):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    W = numpy_helper.from_array(np.ones((3, 2), dtype=np.float32), "W")
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["m"]),
        helper.make_node("Sigmoid", ["m"], ["s"]),
        helper.make_node("MatMul", ["s", "W2"], ["y"], name="mm2"),
    ]
    W2 = numpy_helper.from_array(np.ones((2, 2), dtype=np.float32), "W2")
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        [W, W2],
    )
    p = tmp_path / "sig.onnx"
    p.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    with pytest.raises(TampError, match="MatMul 'mm2'.*sigmoid"):
        import_model(str(p))


def test_spec_naming_a_missing_feature(tmp_path):
    spec = tmp_path / "spec.txt"
    spec.write_text("2\ny0\nsex\n")
    res = _run("import", str(DATA / "example.libra"), "--spec", str(spec))
    assert res.returncode == 2
    assert f"{spec}:3:1: error: the model has no feature 'sex'" in res.stderr
    assert "Traceback" not in res.stderr


def test_bad_files_and_options(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01not a model")
    for args, needle in [
        (["import", str(junk)], "junk.onnx: error:"),
        (["import", str(tmp_path / "none.onnx")], "cannot read"),
        (["import", str(DATA / "example_spec.txt")], "expected"),
        (["import", str(DATA / "example.libra"), "--range", "x=2..1"], "--range"),
        (["import", str(DATA / "example.libra"), "--range", "zz=0..1"], "'zz'"),
        (["import", str(DATA / "README.md")], "--format"),
        (["import", str(DATA / "example.libra"), "-o", str(tmp_path / "no" / "x.prob")], "does not exist"),
    ]:
        res = _run(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert needle in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr


def test_keras_softmax_inside_is_refused(tmp_path):
    h5py = pytest.importorskip("h5py")
    p = tmp_path / "m.h5"
    with h5py.File(p, "w") as f:
        layers = []
        mw = f.create_group("model_weights")
        for i, act in enumerate(["softmax", "linear"]):
            name = f"dense_{i + 1}"
            layers.append({"class_name": "Dense", "config": {"name": name, "units": 2, "activation": act}})
            g = mw.create_group(name)
            g.attrs["weight_names"] = [f"{name}/kernel:0".encode(), f"{name}/bias:0".encode()]
            g.create_dataset(f"{name}/kernel:0", data=np.eye(2, dtype=np.float32))
            g.create_dataset(f"{name}/bias:0", data=np.zeros(2, dtype=np.float32))
        f.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": {"layers": layers}})
    with pytest.raises(TampError, match="layer 'dense_1': activation 'softmax' cannot be represented exactly"):
        import_model(str(p))


def test_continuous_sensitive_split(tmp_path):
    """A continuous sensitive feature split at p: two values, one on each side, and a selector."""
    net = tmp_path / "n.py"
    net.write_text("x10 = (1)*a + (-2)*s + (0.5)\n#\nReLU(x10)\n\nx20 = (1)*x10 + (0)\nx21 = (0)*x10 + (0.25)\n")
    spec = tmp_path / "s.txt"
    spec.write_text("1\ns\n0.5\n")
    r = import_model(str(net), spec=str(spec))
    assert "requires 0 <= s_below && s_below < 0.5" in r.text
    assert "s := s_side == 0 ? s_below : s_above;" in r.text
    res = certify_program(r.program, {"jobs": 1, "timeout": 60}, path="n", source=r.text)
    assert res.verdict == "violated"
    # class 0 iff relu(a - 2s + 0.5) > 0.25: biased where the two sides disagree; exact share known
    bm = res.details["biased_mass"]
    assert Fraction(bm["lower"]) <= Fraction(bm["upper"])

"""ONNX models (the ``onnx`` package): ReLU networks and scikit-learn's exports (skl2onnx).

The graph is evaluated *symbolically*, backwards from its label output: a tensor is either a
constant (an initializer or a ``Constant`` node) or a vector of exact affine forms over the
features. Supported operators:

* networks: ``MatMul``, ``Gemm``, ``Add``, ``Sub``, ``Mul``/``Div`` by a constant, ``Neg``,
  ``Relu``, ``Identity``, ``Dropout``, ``Flatten``, ``Reshape`` (to one row), ``Cast`` (to a
  float type), ``Concat``;
* ``Sigmoid`` and ``Softmax`` before the class: they are monotone (softmax preserves the
  order of its inputs), so the argmax of their outputs is the argmax of their inputs; they are
  dropped and the program says so (a softmax over one value is the constant 1: imported as
  that constant, with a warning). Any other use of their values is refused;
* ``ArgMax`` (+ ``ArrayFeatureExtractor`` mapping the index to a class label); an
  ``ArrayFeatureExtractor`` of the features with constant indices selects columns (a
  ColumnTransformer);
* ONNX-ML: ``LinearClassifier``, ``LinearRegressor``, ``TreeEnsembleClassifier``,
  ``TreeEnsembleRegressor``, ``Scaler`` (``(x - offset) * scale``: scikit-learn's
  StandardScaler, MinMaxScaler, ...), ``SVMClassifier`` / ``SVMRegressor`` with the linear kernel
  (the support vectors fold into one affine score per pair of classes; the one-vs-one votes are
  0/1 splits on those scores, summed). ``ZipMap`` and a ``Normalizer`` after the classifier only
  feed probability outputs, which are not read; a ``Normalizer`` step before it (division by the
  row's norm) is refused.

An error names the operator, its node and the scikit-learn step it (probably) comes from.

Anything else on the way to the label is refused with the operator's name: nothing is
approximated.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import ModelError, warn
from .exact import exact
from .ir import ARGMAX, THRESHOLD, VALUE, Affine, Assign, Leaf, Network, Relu, Split, TreeExpr, combine, fresh


@dataclass
class Sym:
    """A row of exact affine forms (the batch dimension is implicit)."""

    forms: List[Affine]


@dataclass
class Mono:
    """Outputs of a monotone squashing (sigmoid / softmax group ``group``) of the scores ``pre``:
    only their argmax may be used. ``sign`` -1 stands for ``1 - sigmoid(z) = sigmoid(-z)``."""

    pre: List[Affine]
    kind: str
    group: int


@dataclass
class ClassOf:
    """The class chosen by a model: argmax (or threshold / value) of exact scores."""

    scores: List[Affine]
    rule: str
    labels: Optional[List[object]]


Value = Union[np.ndarray, Sym, Mono, ClassOf, None]

_FLOAT_TYPES = {1, 10, 11, 16}  # FLOAT, FLOAT16, DOUBLE, BFLOAT16


class _Reader:
    def __init__(self, model, path: str, features: Optional[Sequence[str]]):
        # deferred on purpose: onnx loads only when an .onnx model is read
        import onnx
        from onnx import numpy_helper

        self.onnx = onnx
        self.path = path
        g = model.graph
        self.graph = g
        self.consts: Dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.producer: Dict[str, Any] = {}  # tensor name -> the onnx NodeProto producing it
        for node in g.node:
            for o in node.output:
                self.producer[o] = node
        inputs = [i for i in g.input if i.name not in self.consts]
        if len(inputs) != 1:
            raise ModelError(
                f"the model has {len(inputs)} inputs ({', '.join(i.name for i in inputs)}); "
                "tamp imports models with one input tensor of features",
                path,
            )
        x = inputs[0]
        tt = x.type.tensor_type
        if not x.type.HasField("tensor_type") or tt.elem_type not in _FLOAT_TYPES:
            raise ModelError(f"input '{x.name}' is not a float tensor", path)
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if len(dims) not in (1, 2) or dims[-1] is None:
            shown = "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
            raise ModelError(
                f"input '{x.name}' has shape {shown}; expected [batch, features] with a known number of features", path
            )
        n = dims[-1]
        if features is not None:
            if len(features) != n:
                raise ModelError(f"--features names {len(features)} features but the model has {n}", "--features")
            self.features = list(features)
        else:
            self.features = [f"x{i}" for i in range(n)]
        self.values: Dict[str, Value] = {x.name: Sym([Affine.var(f) for f in self.features])}
        self.taken = set(self.features)  # the names of the features and of the values assigned
        self.body: List[Assign] = []
        self.notes: List[str] = []
        self.layer = 0
        self.groups = 0
        self.trees = 0
        self.ops: List[str] = []

    # ------------------------------------------------------------------ helpers
    def err(self, node, msg: str) -> ModelError:
        name = f" '{node.name}'" if getattr(node, "name", "") else ""
        step = sklearn_step(node.op_type, getattr(node, "name", ""), self.attrs(node))
        return ModelError(f"operator {node.op_type}{name}{f' ({step})' if step else ''}: {msg}", self.path)

    def attrs(self, node) -> Dict[str, object]:
        out = {}
        for a in node.attribute:
            v = self.onnx.helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, list) and v and isinstance(v[0], bytes):
                v = [b.decode() for b in v]
            elif hasattr(v, "dims") and hasattr(v, "data_type"):
                # deferred on purpose: onnx loads only when an .onnx model is read
                from onnx import numpy_helper

                v = numpy_helper.to_array(v)
            out[a.name] = v
        return out

    def value(self, name: str) -> Value:
        if name == "":
            return None
        if name in self.values:
            return self.values[name]
        if name in self.consts:
            return self.consts[name]
        node = self.producer.get(name)
        if node is None:
            raise ModelError(f"tensor '{name}' is neither an input, an initializer nor produced by a node", self.path)
        outs = self.run(node)
        for o, v in zip(node.output, outs):
            self.values[o] = v
        if name not in self.values:
            raise self.err(node, f"output '{name}' is not supported")
        return self.values[name]

    def const_exact(self, node, a: np.ndarray, what: str) -> np.ndarray:
        if a.dtype.kind not in "fiu":
            raise self.err(node, f"{what} has type {a.dtype}, not numbers")
        out = np.empty(a.shape, dtype=object)
        for idx, v in np.ndenumerate(a):
            out[idx] = exact(v, f"{node.op_type} '{node.name}': {what}", self.path)
        return out

    def sym(self, node, v: Value, what: str = "its input") -> Sym:
        if isinstance(v, Sym):
            return v
        if isinstance(v, Mono):
            raise self.err(
                node,
                f"{what} is the output of a {v.kind}, which tamp represents exactly only when "
                "nothing but the class (its argmax) is read from it",
            )
        raise self.err(node, f"{what} must depend on the model's input")

    def vector(self, node, c: np.ndarray, n: int, what: str) -> List[Fraction]:
        """A constant broadcast along a row of n forms."""
        flat = self.const_exact(node, np.asarray(c), what)
        if flat.size == 1:
            return [flat.reshape(-1)[0]] * n
        if flat.reshape(-1).size == n and (flat.ndim <= 1 or all(d == 1 for d in flat.shape[:-1])):
            return list(flat.reshape(-1))
        raise self.err(node, f"{what} has shape {list(np.shape(c))}, which does not broadcast over {n} values")

    def relu_layer(self, forms: List[Affine]) -> Sym:
        self.layer += 1
        out = []
        for j, a in enumerate(forms):
            name = fresh(f"h{self.layer}_{j + 1}", self.taken)
            self.body.append(Assign(name, Relu(a)))
            out.append(Affine.var(name))
        return Sym(out)

    def named(self, a: Affine, hint: str) -> str:
        v = a.single_var()
        if v is not None:
            return v
        name = fresh(f"{hint}_{len(self.body) + 1}", self.taken)
        self.body.append(Assign(name, a))
        return name

    # ------------------------------------------------------------------ operators
    def run(self, node) -> List[Value]:
        op = node.op_type
        dom = node.domain or ""
        self.ops.append(op)
        fn = getattr(self, f"_{op}", None)
        if fn is None or dom not in ("", "ai.onnx", "ai.onnx.ml"):
            raise self.err(node, f"not supported by tamp import (supported: {', '.join(SUPPORTED)})")
        return fn(node, [self.value(i) for i in node.input] if op not in _LAZY else [])

    def _Identity(self, node, args):
        return [args[0]]

    def _Dropout(self, node, args):  # inference: the identity
        return [args[0], None]

    def _Flatten(self, node, args):
        return [args[0]] if not isinstance(args[0], np.ndarray) else [args[0].reshape(args[0].shape[0], -1)]

    def _Reshape(self, node, args):
        x, shape = args
        if isinstance(x, np.ndarray):
            return [x.reshape(np.asarray(shape).astype(int))]
        if isinstance(x, ClassOf):
            return [x]
        s = [int(d) for d in np.asarray(shape).reshape(-1)]
        n = len(self.sym(node, x).forms)
        if s in ([-1, n], [1, n], [n], [-1], [1, -1], [-1, n, 1, 1][:2]):
            return [x]
        raise self.err(node, f"reshaping a row of {n} values to {s} is not supported")

    def _Cast(self, node, args):
        x = args[0]
        to = int(self.attrs(node).get("to", 1))
        if isinstance(x, np.ndarray) or isinstance(x, ClassOf):
            return [x]
        if to not in _FLOAT_TYPES:
            raise self.err(node, "a cast of the features to a non-float type (rounding) cannot be represented exactly")
        if to != 11:
            self.note_float_cast()
        return [x]

    def note_float_cast(self) -> None:
        msg = (
            "the model rounds its input to float32; the program reads the features as exact reals "
            "(the same class for every float32 input)"
        )
        if msg not in self.notes:
            self.notes.append(msg)

    def _Constant(self, node, args):
        a = self.attrs(node)
        if "value" in a:
            return [np.asarray(a["value"])]
        for k in ("value_float", "value_floats", "value_int", "value_ints"):
            if k in a:
                return [np.asarray(a[k])]
        raise self.err(node, "only numeric constants are supported")

    def _MatMul(self, node, args):
        a, b = args
        if isinstance(b, np.ndarray) and not isinstance(a, np.ndarray):
            return [self.matmul(node, self.sym(node, a), b)]
        raise self.err(node, "only (features x constant matrix) products are supported")

    def matmul(self, node, x: Sym, w: np.ndarray) -> Sym:
        if w.ndim != 2 or w.shape[0] != len(x.forms):
            raise self.err(node, f"weight shape {list(w.shape)} does not fit a row of {len(x.forms)} values")
        W = self.const_exact(node, w, "the weights")
        return Sym([combine([(W[i, j], x.forms[i]) for i in range(w.shape[0])]) for j in range(w.shape[1])])

    def _Gemm(self, node, args):
        a, b = args[0], args[1]
        c = args[2] if len(args) > 2 else None
        at = self.attrs(node)
        if int(at.get("transA", 0)):
            raise self.err(node, "transA = 1 is not supported")
        if not isinstance(b, np.ndarray):
            raise self.err(node, "B must be a constant matrix")
        w = b.T if int(at.get("transB", 0)) else b
        alpha = exact(at.get("alpha", 1.0), "Gemm alpha", self.path)
        beta = exact(at.get("beta", 1.0), "Gemm beta", self.path)
        y = self.matmul(node, self.sym(node, a), w)
        forms = [f.scale(alpha) for f in y.forms]
        if c is not None:
            cv = self.vector(node, c, len(forms), "C")
            forms = [combine([(Fraction(1), f), (beta, Affine.constant(k))]) for f, k in zip(forms, cv)]
        return [Sym(forms)]

    def _binary(self, node, args, sign: int):
        a, b = args
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return [a + b if sign > 0 else a - b]
        if isinstance(a, np.ndarray) and isinstance(b, Mono) and sign < 0 and b.kind == "sigmoid":
            one = self.vector(node, a, len(b.pre), "the constant")
            if all(v == 1 for v in one):  # 1 - sigmoid(z) = sigmoid(-z)
                return [Mono([f.scale(Fraction(-1)) for f in b.pre], b.kind, b.group)]
        if isinstance(a, np.ndarray):
            y = self.sym(node, b, "its second input")
            cv = self.vector(node, a, len(y.forms), "the constant")
            return [
                Sym([combine([(Fraction(sign), f), (Fraction(1), Affine.constant(k))]) for f, k in zip(y.forms, cv)])
            ]
        x = self.sym(node, a)
        if isinstance(b, np.ndarray):
            cv = self.vector(node, b, len(x.forms), "the constant")
            return [
                Sym([combine([(Fraction(1), f), (Fraction(sign), Affine.constant(k))]) for f, k in zip(x.forms, cv)])
            ]
        y = self.sym(node, b, "its second input")
        if len(y.forms) != len(x.forms):
            if len(y.forms) == 1:
                y = Sym(y.forms * len(x.forms))
            else:
                raise self.err(node, f"adding rows of {len(x.forms)} and {len(y.forms)} values")
        return [Sym([combine([(Fraction(1), f), (Fraction(sign), g)]) for f, g in zip(x.forms, y.forms)])]

    def _Add(self, node, args):
        return self._binary(node, args, 1)

    def _Sub(self, node, args):
        return self._binary(node, args, -1)

    def _Mul(self, node, args):
        a, b = args
        if isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
            a, b = b, a
        if isinstance(a, np.ndarray):
            return [a * b]
        if not isinstance(b, np.ndarray):
            raise self.err(node, "a product of two values that depend on the input is not linear")
        x = self.sym(node, a)
        cv = self.vector(node, b, len(x.forms), "the factor")
        return [Sym([f.scale(k) for f, k in zip(x.forms, cv)])]

    def _Div(self, node, args):
        a, b = args
        if isinstance(b, np.ndarray) and not isinstance(a, np.ndarray):
            x = self.sym(node, a)
            cv = self.vector(node, b, len(x.forms), "the divisor")
            if any(k == 0 for k in cv):
                raise self.err(node, "division by zero")
            return [Sym([f.scale(1 / k) for f, k in zip(x.forms, cv)])]
        raise self.err(node, "only division by a constant is supported")

    def _Neg(self, node, args):
        return [Sym([f.scale(Fraction(-1)) for f in self.sym(node, args[0]).forms])]

    def _Relu(self, node, args):
        return [self.relu_layer(self.sym(node, args[0]).forms)]

    def _Concat(self, node, args):
        axis = int(self.attrs(node).get("axis", 1))
        if axis not in (1, -1):
            raise self.err(node, f"concatenation along axis {axis} is not supported (only the feature axis)")
        if all(isinstance(a, Mono) for a in args) and len({(a.kind, a.group) for a in args}) == 1:
            return [Mono([f for a in args for f in a.pre], args[0].kind, args[0].group)]
        return [Sym([f for a in args for f in self.sym(node, a).forms])]

    def _Sigmoid(self, node, args):
        self.groups += 1
        return [Mono(self.sym(node, args[0]).forms, "sigmoid", self.groups)]

    def _Softmax(self, node, args):
        axis = int(self.attrs(node).get("axis", -1))
        if axis not in (1, -1):
            raise self.err(node, f"softmax along axis {axis} is not supported (only the feature axis)")
        self.groups += 1
        forms = self.sym(node, args[0]).forms
        if len(forms) == 1:  # exp(z)/exp(z) = 1 whatever z: the probability 1, class 1
            name = f" '{node.name}'" if node.name else ""
            msg = (
                f"operator {node.op_type}{name}: a softmax over one value is the constant 1 whatever its "
                "input; the model is imported as that constant (class 1, the probability 1 > 1/2)"
            )
            warn(msg, self.path)
            self.notes.append(msg)
            forms = [Affine.constant(Fraction(1))]
        return [Mono(forms, "softmax", self.groups)]

    _LogSoftmax = _Softmax

    def _ArgMax(self, node, args):
        a = self.attrs(node)
        if int(a.get("axis", 0)) not in (1, -1) or int(a.get("select_last_index", 0)):
            raise self.err(node, "only the first maximum along the feature axis (axis=1) is supported")
        x = args[0]
        if isinstance(x, Mono):
            self.notes.append(f"the {x.kind} before the class is dropped: it is monotone and only its argmax is used")
            return [ClassOf(x.pre, ARGMAX, None)]
        return [ClassOf(self.sym(node, x).forms, ARGMAX, None)]

    def _ArrayFeatureExtractor(self, node, args):
        classes, idx = args
        if isinstance(classes, Sym) and isinstance(idx, np.ndarray):  # a ColumnTransformer's column selection
            cols = [int(i) for i in np.asarray(idx).reshape(-1)]
            n = len(classes.forms)
            if any(not -n <= i < n for i in cols):
                raise self.err(node, f"selects column {max(cols, key=abs)} of a row of {n} values")
            return [Sym([classes.forms[i] for i in cols])]
        if isinstance(classes, np.ndarray) and isinstance(idx, ClassOf) and idx.labels is None:
            labels = [c.item() if hasattr(c, "item") else c for c in classes.reshape(-1)]
            if len(labels) != len(idx.scores):
                raise self.err(node, f"{len(labels)} class labels for {len(idx.scores)} scores")
            return [ClassOf(idx.scores, idx.rule, labels)]
        raise self.err(node, "only the mapping of an argmax to class labels is supported")

    def _labels(self, node, a) -> List[object]:
        labs = a.get("classlabels_ints") or a.get("classlabels_int64s") or a.get("classlabels_strings")
        if not labs:
            raise self.err(node, "no class labels")
        return [int(x) if isinstance(x, (int, np.integer)) else x for x in labs]

    def _post(self, node, a) -> None:
        pt = a.get("post_transform", "NONE") or "NONE"
        if pt == "SOFTMAX_ZERO":
            raise self.err(
                node,
                "post_transform SOFTMAX_ZERO does not preserve the order of the scores; "
                "it cannot be represented exactly",
            )
        if pt not in ("NONE", "LOGISTIC", "SOFTMAX", "PROBIT"):
            raise self.err(node, f"post_transform {pt} is not supported")
        if pt != "NONE":
            self.notes.append(
                f"the {pt.lower()} post-transform is dropped: it is monotone and only the class (the argmax) is used"
            )

    def _LinearClassifier(self, node, args):
        a = self.attrs(node)
        x = self.sym(node, args[0])
        n = len(x.forms)
        coef = np.asarray(a.get("coefficients", []), dtype=np.float64)
        if coef.size % n:
            raise self.err(node, f"{coef.size} coefficients for {n} features")
        rows = coef.reshape(-1, n)
        inter = np.asarray(a.get("intercepts", [0.0] * rows.shape[0]), dtype=np.float64)
        labels = self._labels(node, a)
        self._post(node, a)
        W = self.const_exact(node, rows.T.astype(np.float32), "the coefficients")  # ONNX float attributes
        forms = [
            combine(
                [(W[i, j], x.forms[i]) for i in range(n)]
                + [(Fraction(1), Affine.constant(exact(np.float32(inter[j]), "intercept", self.path)))]
            )
            for j in range(rows.shape[0])
        ]
        if len(forms) == 1 and len(labels) == 2:  # scores (-s, s): class 1 when s > 0
            return [ClassOf(forms, THRESHOLD, labels), None]
        if len(forms) != len(labels):
            raise self.err(node, f"{len(forms)} score rows for {len(labels)} classes")
        return [ClassOf(forms, ARGMAX, labels), None]

    def _Scaler(self, node, args):
        """ONNX-ML ``Scaler`` (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler):
        ``(x - offset) * scale`` per feature, exactly (an affine map)."""
        a = self.attrs(node)
        x = self.sym(node, args[0])
        n = len(x.forms)
        offset = self.vector(node, np.asarray(a.get("offset", [0.0]), dtype=np.float32), n, "the offset")
        scale = self.vector(node, np.asarray(a.get("scale", [1.0]), dtype=np.float32), n, "the scale")
        return [
            Sym([combine([(k, f), (-k * o, Affine.constant(Fraction(1)))]) for f, o, k in zip(x.forms, offset, scale)])
        ]

    def _Normalizer(self, node, args):
        norm = self.attrs(node).get("norm", "MAX")
        raise self.err(
            node,
            f"the {norm} normalizer divides each row by its norm, which is neither affine nor piecewise "
            "linear; it cannot be represented exactly",
        )

    def _svm_kernel(self, node, a) -> None:
        kernel = str(a.get("kernel_type", "LINEAR") or "LINEAR").upper()
        if kernel != "LINEAR":
            raise self.err(
                node,
                f"kernel {kernel.lower()}: only the linear kernel is an affine map "
                "(the others are not piecewise linear and cannot be represented exactly)",
            )

    def _svm_weights(self, node, a, x: Sym, count: int) -> Tuple[np.ndarray, List[Affine]]:
        """The dual coefficients (float32, rows of ``count``) and <sv_k, x> for each support vector k."""
        n = len(x.forms)
        sv = np.asarray(a.get("support_vectors", []), dtype=np.float32)
        if sv.size != count * n:
            raise self.err(node, f"{sv.size} support-vector values for {count} vectors of {n} features")
        SV = self.const_exact(node, sv.reshape(count, n), "the support vectors")
        dots = [combine([(SV[k, i], x.forms[i]) for i in range(n)]) for k in range(count)]
        coef = np.asarray(a.get("coefficients", []), dtype=np.float32)
        if coef.size % count or coef.size == 0:
            raise self.err(node, f"{coef.size} coefficients for {count} support vectors")
        return self.const_exact(node, coef.reshape(-1, count), "the coefficients"), dots

    def _SVMClassifier(self, node, args):
        """A linear-kernel SVC (one-vs-one): the pair (i, j) scores
        ``rho_ij + Σ_{k in i} c[j-1,k]·<sv_k, x> + Σ_{k in j} c[i,k]·<sv_k, x>``; it votes for i
        when the score is > 0, else for j; the class is the first with the most votes (the
        ONNX-ML operator's definition). Two classes: class 0 exactly when the score is > 0."""
        a = self.attrs(node)
        self._svm_kernel(node, a)
        x = self.sym(node, args[0])
        labels = self._labels(node, a)
        per = [int(v) for v in a.get("vectors_per_class", [])]
        if not per or sum(per) == 0:
            raise self.err(node, "the linear (liblinear) form without support vectors is not supported")
        if len(per) != len(labels):
            raise self.err(node, f"{len(per)} vector counts for {len(labels)} classes")
        coef, dots = self._svm_weights(node, a, x, sum(per))
        ncls = len(labels)
        if coef.shape[0] != ncls - 1:
            raise self.err(node, f"{coef.shape[0]} coefficient rows for {ncls} classes")
        rho = [exact(np.float32(r), "rho", self.path) for r in np.asarray(a.get("rho", []), dtype=np.float32)]
        if len(rho) != ncls * (ncls - 1) // 2:
            raise self.err(node, f"{len(rho)} rho values for {ncls} classes")
        start = [sum(per[:i]) for i in range(ncls)]
        pairs = []
        for i in range(ncls):
            for j in range(i + 1, ncls):
                parts = [(coef[j - 1, k], dots[k]) for k in range(start[i], start[i] + per[i])]
                parts += [(coef[i, k], dots[k]) for k in range(start[j], start[j] + per[j])]
                pairs.append((i, j, combine(parts + [(rho[len(pairs)], Affine.constant(Fraction(1)))])))
        if ncls == 2:
            if min(coef.reshape(-1)) >= 0 and not a.get("prob_a"):
                raise self.err(node, "every coefficient is >= 0: the operator then always answers class 1")
            # out = s > 0 ? labels[0] : labels[1]: the threshold rule with the labels swapped
            return [ClassOf([pairs[0][2]], THRESHOLD, [labels[1], labels[0]]), None]
        votes: List[List[Tuple[Fraction, Affine]]] = [[] for _ in range(ncls)]
        for i, j, s in pairs:
            name = self.named(s, "svm")
            self.trees += 1
            wins = fresh(f"vote{self.trees}", self.taken)
            self.body.append(
                Assign(wins, Split(name, ">", Fraction(0), Leaf(Fraction(1)), Leaf(Fraction(0))), f"class {i} vs {j}")
            )
            votes[i].append((Fraction(1), Affine.var(wins)))
            votes[j].append((Fraction(-1), Affine.var(wins)))
            votes[j].append((Fraction(1), Affine.constant(Fraction(1))))
        return [ClassOf([combine(v) for v in votes], ARGMAX, labels), None]

    def _SVMRegressor(self, node, args):
        """``rho + Σ c_k·<sv_k, x>`` (or ``rho + c·x`` without support vectors); one-class: 1 when > 0, else -1."""
        a = self.attrs(node)
        self._svm_kernel(node, a)
        x = self.sym(node, args[0])
        if (a.get("post_transform", "NONE") or "NONE") != "NONE":
            raise self.err(node, "a post-transform of a regression value cannot be represented exactly")
        count = int(a.get("n_supports", 0) or 0)
        rho = exact(np.float32(np.asarray(a.get("rho", [0.0])).reshape(-1)[0]), "rho", self.path)
        if count > 0:
            coef, dots = self._svm_weights(node, a, x, count)
            if coef.shape[0] != 1:
                raise self.err(node, "only one target is supported")
            parts = [(coef[0, k], dots[k]) for k in range(count)]
        else:
            parts = [
                (
                    Fraction(1),
                    combine(
                        [
                            (w, f)
                            for w, f in zip(
                                self.vector(
                                    node,
                                    np.asarray(a.get("coefficients", []), dtype=np.float32),
                                    len(x.forms),
                                    "the coefficients",
                                ),
                                x.forms,
                            )
                        ]
                    ),
                )
            ]
        form = combine(parts + [(rho, Affine.constant(Fraction(1)))])
        if int(a.get("one_class", 0) or 0):
            return [ClassOf([form], THRESHOLD, [-1, 1])]
        return [ClassOf([form], VALUE, None)]

    def _LinearRegressor(self, node, args):
        a = self.attrs(node)
        x = self.sym(node, args[0])
        n = len(x.forms)
        coef = np.asarray(a.get("coefficients", []), dtype=np.float32)
        if coef.size != n or int(a.get("targets", 1)) != 1:
            raise self.err(node, "only one target is supported")
        if (a.get("post_transform", "NONE") or "NONE") != "NONE":
            raise self.err(node, "a post-transform of a regression value cannot be represented exactly")
        inter = np.asarray(a.get("intercepts", [0.0]), dtype=np.float32).reshape(-1)
        W = self.const_exact(node, coef, "the coefficients")
        form = combine(
            [(W[i], x.forms[i]) for i in range(n)]
            + [(Fraction(1), Affine.constant(exact(inter[0], "intercept", self.path)))]
        )
        return [ClassOf([form], VALUE, None)]

    # ------------------------------------------------------------------ trees
    def _trees(self, node, x: Sym, a, target_prefix: str):
        tids = a["nodes_treeids"]
        nids = a["nodes_nodeids"]
        feats = a["nodes_featureids"]
        modes = a["nodes_modes"]
        vals = a.get("nodes_values")
        if vals is None and "nodes_values_as_tensor" in a:
            vals = list(np.asarray(a["nodes_values_as_tensor"]).reshape(-1))
        tn, fn_ = a["nodes_truenodeids"], a["nodes_falsenodeids"]
        nodes = {}
        for i, (t, n) in enumerate(zip(tids, nids)):
            nodes[(t, n)] = i
        p = target_prefix
        w_t, w_n, w_c = a[f"{p}_treeids"], a[f"{p}_nodeids"], a[f"{p}_ids"]
        weights = a.get(f"{p}_weights")
        if weights is None and f"{p}_weights_as_tensor" in a:
            weights = list(np.asarray(a[f"{p}_weights_as_tensor"]).reshape(-1))
        leaf_w: Dict[Tuple[int, int], Dict[int, Fraction]] = {}
        for t, n, c, w in zip(w_t, w_n, w_c, weights):
            d = leaf_w.setdefault((t, n), {})
            d[c] = d.get(c, Fraction(0)) + exact(
                np.float32(w) if not isinstance(w, np.float64) else w, "a leaf weight", self.path
            )
        ops = {
            "BRANCH_LEQ": "<=",
            "BRANCH_LT": "<",
            "BRANCH_GTE": ">=",
            "BRANCH_GT": ">",
            "BRANCH_EQ": "==",
            "BRANCH_NEQ": "!=",
        }
        classes = sorted({c for d in leaf_w.values() for c in d})
        feature_names: Dict[int, str] = {}

        def fname(k: int) -> str:
            if k not in feature_names:
                if not 0 <= k < len(x.forms):
                    raise self.err(node, f"a split reads feature {k}; the input has {len(x.forms)}")
                feature_names[k] = self.named(x.forms[k], "f")
            return feature_names[k]

        def build(t: int, n: int, c: int, depth: int = 0) -> TreeExpr:
            if depth > 10000:
                raise self.err(node, "a tree has a cycle")
            i = nodes.get((t, n))
            if i is None:
                raise self.err(node, f"tree {t} refers to node {n}, which does not exist")
            mode = modes[i]
            if mode == "LEAF":
                return Leaf(leaf_w.get((t, n), {}).get(c, Fraction(0)))
            if mode not in ops:
                raise self.err(node, f"node mode {mode} is not supported")
            thr = exact(
                np.float32(vals[i]) if not isinstance(vals[i], np.float64) else vals[i], "a threshold", self.path
            )
            yes = build(t, tn[i], c, depth + 1)
            no = build(t, fn_[i], c, depth + 1)
            if isinstance(yes, Leaf) and isinstance(no, Leaf) and yes.value == no.value:
                return yes
            return Split(fname(feats[i]), ops[mode], thr, yes, no)

        trees = sorted(set(tids))
        roots = {}
        for t in trees:
            ids = [n for (tt, n) in nodes if tt == t]
            targets = {tn[nodes[(t, n)]] for n in ids if modes[nodes[(t, n)]] != "LEAF"} | {
                fn_[nodes[(t, n)]] for n in ids if modes[nodes[(t, n)]] != "LEAF"
            }
            rs = [n for n in ids if n not in targets]
            if len(rs) != 1:
                raise self.err(node, f"tree {t} has {len(rs)} roots")
            roots[t] = rs[0]
        sums: Dict[int, List[Tuple[Fraction, Affine]]] = {c: [] for c in classes}
        for t in trees:
            self.trees += 1
            for c in classes:
                e = build(t, roots[t], c)
                if isinstance(e, Leaf):
                    if e.value:
                        sums[c].append((Fraction(1), Affine.constant(e.value)))
                    continue
                name = fresh(f"t{self.trees}_{c}", self.taken)
                self.body.append(Assign(name, e, f"tree {t}, class {c}" if len(classes) > 1 else f"tree {t}"))
                sums[c].append((Fraction(1), Affine.var(name)))
        base = a.get("base_values")
        if base is None and "base_values_as_tensor" in a:
            base = list(np.asarray(a["base_values_as_tensor"]).reshape(-1))
        return classes, sums, base

    def _TreeEnsembleClassifier(self, node, args):
        a = self.attrs(node)
        x = self.sym(node, args[0])
        labels = self._labels(node, a)
        classes, sums, base = self._trees(node, x, a, "class")
        ncls = len(labels)
        scores = []
        for c in range(ncls):
            parts = list(sums.get(c, []))
            if base is not None and c < len(base):
                parts.append((Fraction(1), Affine.constant(exact(np.float32(base[c]), "a base value", self.path))))
            scores.append(combine(parts))
        pt = a.get("post_transform", "NONE") or "NONE"
        self._post(node, a)
        if len(set(a["class_ids"])) == 1 and ncls == 2:
            # binary: the accumulated score s is class 1's; class 0's is 1 - s (NONE, PROBIT) or -s
            c0 = a["class_ids"][0]
            s = scores[c0]
            if pt in ("NONE", "PROBIT"):
                other = combine([(Fraction(-1), s), (Fraction(1), Affine.constant(Fraction(1)))])
            else:
                other = s.scale(Fraction(-1))
            scores = [other, s]
        elif ncls == 1:
            raise self.err(node, "a classifier with one class label is not supported")
        return [ClassOf(scores, ARGMAX, labels), None]

    def _TreeEnsembleRegressor(self, node, args):
        a = self.attrs(node)
        x = self.sym(node, args[0])
        if int(a.get("n_targets", 1)) != 1:
            raise self.err(node, "only one target is supported")
        agg = a.get("aggregate_function", "SUM") or "SUM"
        if agg not in ("SUM", "AVERAGE"):
            raise self.err(node, f"aggregate function {agg} is not supported")
        if (a.get("post_transform", "NONE") or "NONE") != "NONE":
            raise self.err(node, "a post-transform of a regression value cannot be represented exactly")
        classes, sums, base = self._trees(node, x, a, "target")
        parts = list(sums.get(0, []))
        if agg == "AVERAGE":
            k = Fraction(1, len(set(a["nodes_treeids"])))
            parts = [(w * k, f) for w, f in parts]
        if base:
            parts.append((Fraction(1), Affine.constant(exact(np.float32(base[0]), "a base value", self.path))))
        return [ClassOf([combine(parts)], VALUE, None)]


_LAZY: set = set()

#: The operators the reader folds (the ``_Name`` methods above), for the error message.
SUPPORTED = sorted(
    n[1:] for n in vars(_Reader) if n[:2] != "__" and n[0] == "_" and n[1].isupper() and n != "_Normalizer"
)

#: The scikit-learn estimators skl2onnx converts to an operator (a best guess for the message).
_STEPS = {
    "Scaler": "StandardScaler, MinMaxScaler, MaxAbsScaler or RobustScaler",
    "Normalizer": "Normalizer",
    "Imputer": "SimpleImputer",
    "OneHotEncoder": "OneHotEncoder",
    "Binarizer": "Binarizer",
    "LabelEncoder": "LabelEncoder",
    "FeatureVectorizer": "a ColumnTransformer or FeatureUnion",
    "DictVectorizer": "DictVectorizer",
    "LinearClassifier": "LogisticRegression, LinearSVC, SGDClassifier or RidgeClassifier",
    "LinearRegressor": "LinearRegression, Ridge, Lasso or LinearSVR",
    "SVMClassifier": "SVC or NuSVC",
    "SVMRegressor": "SVR, NuSVR or OneClassSVM",
    "TreeEnsembleClassifier": "a decision tree, random forest or gradient-boosted classifier",
    "TreeEnsembleRegressor": "a decision tree, random forest or gradient-boosted regressor",
    "Tanh": "an MLP with activation='tanh'",
    "TopK": "KNeighborsClassifier",
    "CDist": "a nearest-neighbour or kernel model",
    "Pow": "a polynomial or distance step",
    "Sqrt": "a distance or scaling step",
    "Exp": "a kernel or probability step",
    "Log": "a probability step",
    "ReduceSumSquare": "a distance step",
}


def sklearn_step(op: str, name: str, attrs: Dict[str, object]) -> str:
    """Which scikit-learn step a node (probably) comes from: skl2onnx names a node after the step's
    operator or alias (``Scaler``, ``SVMc``), so the operator type says more than the name."""
    if op == "SVMClassifier" or op == "SVMRegressor":
        kernel = str(attrs.get("kernel_type", "") or "").lower()
        return f"scikit-learn {_STEPS[op]}" + (f" with kernel='{kernel}'" if kernel else "")
    return f"scikit-learn {_STEPS[op]}" if op in _STEPS else ""


def read_onnx(data: bytes, path: str = "<onnx>", features: Optional[Sequence[str]] = None) -> Network:
    """A :class:`Network` from the bytes of an ONNX model."""
    # deferred on purpose: onnx loads only when an .onnx model is read
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load_from_string(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"not an ONNX model: {str(exc)[:200]}", path) from None
    if not model.graph.node and not model.graph.output:
        raise ModelError("not an ONNX model (empty graph)", path)
    r = _Reader(model, path, features)
    result = None
    first_error: Optional[ModelError] = None
    fallback = None
    for out in model.graph.output:
        saved = (list(r.body), dict(r.values), list(r.notes), r.layer, r.trees)
        try:
            v = r.value(out.name)
        except ModelError as exc:
            first_error = first_error or exc
            r.body, r.values, r.notes, r.layer, r.trees = saved[0], saved[1], saved[2], saved[3], saved[4]
            continue
        if isinstance(v, ClassOf):
            result = v
            break
        if fallback is None and isinstance(v, (Sym, Mono)):
            fallback = (v, list(r.body), list(r.notes))
        r.body, r.values, r.notes, r.layer, r.trees = saved[0], saved[1], saved[2], saved[3], saved[4]
    if result is None and fallback is not None:
        v, r.body, r.notes = fallback
        if isinstance(v, Mono):
            r.notes.append(
                f"the {v.kind} at the output is dropped: it is monotone and only the class (the argmax) is used"
            )
            forms = v.pre
        else:
            forms = v.forms
        result = ClassOf(forms, THRESHOLD if len(forms) == 1 else ARGMAX, None)
        if len(forms) == 1:
            r.notes.append(
                "one output score: class 1 when it is > 0" + (f" (its {v.kind} > 1/2)" if isinstance(v, Mono) else "")
            )
    if result is None:
        if first_error is not None:
            raise first_error
        raise ModelError("no output of the model is a class, scores or a value", path)
    producer = model.producer_name or "ONNX"
    kinds = sorted(
        {
            op
            for op in r.ops
            if op
            in (
                "LinearClassifier",
                "LinearRegressor",
                "TreeEnsembleClassifier",
                "TreeEnsembleRegressor",
                "MatMul",
                "Gemm",
                "Scaler",
                "SVMClassifier",
                "SVMRegressor",
            )
        }
    )
    return Network(
        features=r.features,
        body=r.body,
        scores=result.scores,
        rule=result.rule,
        labels=result.labels,
        notes=_dedup(r.notes),
        source=f"ONNX from {producer}" + (f": {', '.join(kinds)}" if kinds else ""),
    )


def _dedup(xs: List[str]) -> List[str]:
    out: List[str] = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out

"""Keras HDF5 models read with h5py (no TensorFlow): the ``model_config`` attribute (JSON) gives
the layers, the ``model_weights`` group (or the file root, for ``save_weights`` files that still
carry a ``model_config``) the weights: one group per layer, its ``weight_names`` attribute
listing the datasets (``dense_1/kernel:0``, ``dense_1/bias:0``) in order.

Supported layers: ``InputLayer``, ``Dense`` (activation ``relu``, ``linear``, or ``softmax`` /
``sigmoid`` on the last layer, dropped there because they are monotone and only the class is
used; a softmax over one unit is the constant 1, imported as that constant with a warning), ``Activation`` (the same), ``ReLU``, ``Dropout`` and ``Flatten`` (the identity at
inference). Anything else is refused with the layer's class name.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import List, Optional, Sequence, Set

import numpy as np

from .errors import ModelError, warn
from .exact import exact
from .ir import ARGMAX, THRESHOLD, Affine, Assign, Network, Relu, combine, fresh

_SQUASH = ("softmax", "sigmoid")


def _layers(config: dict, path: str) -> List[dict]:
    cls = config.get("class_name")
    inner = config.get("config", {})
    if cls not in ("Sequential", "Functional", "Model"):
        raise ModelError(f"model class {cls!r} is not supported (Sequential or a chain of layers)", path)
    layers = inner.get("layers") if isinstance(inner, dict) else inner
    if not isinstance(layers, list):
        raise ModelError("model_config has no list of layers", path)
    return layers


def read_keras(path: str, features: Optional[Sequence[str]] = None) -> Network:
    # deferred on purpose: h5py loads only when a Keras .h5 model is read
    import h5py

    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
        raise ModelError(f"not a Keras HDF5 file: {str(exc)[:160]}", path) from None
    with fh:
        raw = fh.attrs.get("model_config")
        if raw is None:
            raise ModelError(
                "no model_config attribute: a weights-only file lacks the architecture; save the "
                "whole model (model.save('m.h5'))",
                path,
            )
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8")
        try:
            config = json.loads(raw)
        except ValueError as exc:
            raise ModelError(f"model_config is not JSON: {exc}", path) from None
        weights = fh["model_weights"] if "model_weights" in fh else fh
        layers = _layers(config, path)
        return _build(layers, weights, path, features)


def _weights(group, lname: str, path: str) -> List[np.ndarray]:
    if lname not in group:
        raise ModelError(f"layer '{lname}' has no weights group", path)
    g = group[lname]
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in g.attrs.get("weight_names", [])]
    out = []
    for n in names:
        if n in g:
            out.append(np.asarray(g[n]))
        elif n.split("/", 1)[-1] in g:
            out.append(np.asarray(g[n.split("/", 1)[-1]]))
        else:
            raise ModelError(f"layer '{lname}': weight '{n}' is missing", path)
    return out


def _build(layers: List[dict], weights, path: str, features: Optional[Sequence[str]]) -> Network:
    forms: Optional[List[Affine]] = None
    body: List[Assign] = []
    notes: List[str] = []
    feats: List[str] = []
    squashed = None
    level = 0
    taken: Set[str] = set()  # the features' names and the values assigned (ir.fresh)

    def start(n: int) -> List[Affine]:
        nonlocal feats
        if features is not None and len(features) != n:
            raise ModelError(f"--features names {len(features)} features but the model has {n}", "--features")
        feats = list(features) if features is not None else [f"x{i}" for i in range(n)]
        taken.update(feats)
        return [Affine.var(f) for f in feats]

    def activation(act: str, lname: str, is_last: bool) -> None:
        nonlocal forms, squashed, level
        if act in ("linear", None):
            return
        if act == "relu":
            level += 1
            out = []
            assert forms is not None  # an activation follows a layer
            for j, a in enumerate(forms):
                v = fresh(f"h{level}_{j + 1}", taken)
                body.append(Assign(v, Relu(a)))
                out.append(Affine.var(v))
            forms = out
            return
        if act == "softmax" and is_last and forms is not None and len(forms) == 1:
            # softmax over one unit: exp(z)/exp(z) = 1 whatever z, a probability of 1 (class 1)
            squashed = act
            msg = (
                f"layer '{lname}': a softmax over one unit is the constant 1 whatever its input; "
                "the model is imported as that constant (class 1, the probability 1 > 1/2)"
            )
            warn(msg, path)
            notes.append(msg)
            forms = [Affine.constant(Fraction(1))]
            return
        if act in _SQUASH and is_last:
            squashed = act
            notes.append(
                f"the {act} of layer '{lname}' is dropped: it is monotone and only the class (the argmax) is used"
            )
            return
        raise ModelError(
            f"layer '{lname}': activation '{act}' cannot be represented exactly"
            + (" (softmax/sigmoid only on the last layer)" if act in _SQUASH else ""),
            path,
        )

    real = [ly for ly in layers if ly.get("class_name") not in ("InputLayer", "Dropout", "Flatten")]
    for idx, layer in enumerate(layers):
        cls = layer.get("class_name")
        cfg = layer.get("config", {})
        lname = cfg.get("name", f"layer{idx}")
        is_last = bool(real) and layer is real[-1]
        if squashed is not None and cls not in ("Dropout", "Flatten"):
            raise ModelError(f"layer '{lname}' follows a {squashed}: only the last layer may squash", path)
        if cls == "InputLayer":
            shape = cfg.get("batch_input_shape") or cfg.get("batch_shape")
            if shape and forms is None:
                if len(shape) != 2 or shape[-1] is None:
                    raise ModelError(f"input layer '{lname}' has shape {shape}; expected (batch, features)", path)
                forms = start(int(shape[-1]))
            continue
        if cls in ("Dropout", "Flatten"):
            continue
        if cls == "Dense":
            ws = _weights(weights, lname, path)
            if not ws:
                raise ModelError(f"layer '{lname}' has no weights", path)
            kernel = ws[0]
            if kernel.ndim != 2 or 0 in kernel.shape:
                raise ModelError(f"layer '{lname}': kernel of shape {list(kernel.shape)}", path)
            if forms is None:
                forms = start(kernel.shape[0])
            if kernel.shape[0] != len(forms):
                raise ModelError(
                    f"layer '{lname}': kernel of shape {list(kernel.shape)} after {len(forms)} values", path
                )
            use_bias = cfg.get("use_bias", True)
            bias = ws[1] if use_bias and len(ws) > 1 else np.zeros(kernel.shape[1], dtype=kernel.dtype)
            if bias.shape != (kernel.shape[1],):  # Keras: a Dense bias has one entry per unit
                raise ModelError(
                    f"layer '{lname}': bias of shape {list(bias.shape)} for {kernel.shape[1]} units "
                    f"(expected [{kernel.shape[1]}])",
                    path,
                )
            units = cfg.get("units")
            if units is not None and units != kernel.shape[1]:
                raise ModelError(f"layer '{lname}': kernel of shape {list(kernel.shape)} for {units} units", path)
            W = [
                [exact(kernel[i, j], f"layer '{lname}': a weight", path) for j in range(kernel.shape[1])]
                for i in range(kernel.shape[0])
            ]
            B = [exact(b, f"layer '{lname}': a bias", path) for b in bias.reshape(-1)]
            forms = [
                combine([(W[i][j], forms[i]) for i in range(len(forms))] + [(Fraction(1), Affine.constant(B[j]))])
                for j in range(kernel.shape[1])
            ]
            activation(cfg.get("activation", "linear"), lname, is_last)
            continue
        if cls == "Activation":
            if forms is None:
                raise ModelError(f"layer '{lname}' comes before any Dense layer", path)
            activation(cfg.get("activation"), lname, is_last)
            continue
        if cls == "ReLU" and not any(cfg.get(k) for k in ("max_value", "negative_slope", "threshold")):
            activation("relu", lname, is_last)
            continue
        raise ModelError(
            f"layer '{lname}' of class {cls} is not supported (Dense, Activation, ReLU, Dropout, Flatten, InputLayer)",
            path,
        )
    if forms is None:
        raise ModelError("the model has no Dense layer", path)
    # the last layer's outputs are the scores
    rule = ARGMAX
    if len(forms) == 1:
        rule = THRESHOLD
        notes.append("one output: class 1 when it is > 0" + (" (sigmoid > 1/2)" if squashed == "sigmoid" else ""))
    return Network(
        features=feats,
        body=body,
        scores=forms,
        rule=rule,
        labels=None,
        notes=notes,
        source=f"Keras HDF5, {len([ly for ly in layers if ly.get('class_name') == 'Dense'])} Dense layers",
    )

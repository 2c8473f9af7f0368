"""Import trained models as tamp programs: ``tamp import MODEL -o OUT.prob``.

>>> r = import_model("net.onnx", spec="spec.txt")     # doctest: +SKIP
>>> print(r.text)                                       # doctest: +SKIP

Readers: ONNX (:mod:`.onnx_reader`; networks and scikit-learn's exports via skl2onnx), Keras
HDF5 (:mod:`.keras`; read with h5py, no TensorFlow) and Libra's network text format
(:mod:`.libra`). Each builds an exact :class:`~.ir.Network`; :mod:`.emit` writes it as a
program, which is parsed and type-checked before it is returned.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from html import escape
from typing import Optional, Sequence, Tuple, Union

from lang import ast as A
from lang.errors import TampError
from lang.loader import read_bytes, read_text
from lang.parser import parse
from lang.typecheck import check_file

from .emit import RESERVED, to_program
from .errors import CONSTANT_NOTE, ModelError, warn
from .ir import Leaf, Network, Relu, Split
from .spec import FeatureSpec, parse_range, parse_sensitive, parse_spec

FORMATS = ("onnx", "keras", "libra")
_EXT = {".onnx": "onnx", ".h5": "keras", ".hdf5": "keras", ".py": "libra", ".txt": "libra", ".libra": "libra"}

__all__ = ["import_model", "read_model", "ImportedModel", "ModelError", "FORMATS", "guess_format"]


@dataclass
class ImportedModel:
    """The result of :func:`import_model`: the program text, its parsed program and the network."""

    text: str
    program: A.Program
    network: Network
    format: str

    def __repr__(self) -> str:  # one line: the text and the weights are too long to show here
        names = ", ".join(p.name for p in self.program.params[:6]) + (", ..." if len(self.program.params) > 6 else "")
        return f"<ImportedModel {self.program.name} ({self.format}): {len(self.program.params)} inputs ({names})>"

    def _repr_html_(self) -> str:  # notebooks: the inputs and classes at a glance, the program folded
        net = self.network
        params = ", ".join(f"{p.name}: {p.type}" for p in self.program.params)
        classes = len(net.scores) if net.scores else 1
        labels = f" ({', '.join(map(str, net.labels))})" if net.labels else ""
        return (
            f"<div><b>{escape(self.program.name)}</b> · {escape(net.source or self.format)} · "
            f"{len(self.program.params)} inputs · {classes} classes{escape(labels)} · "
            f"{len(net.body)} assignments</div>"
            f'<div style="text-align:left">inputs: {escape(params)}</div>'
            f"<details><summary>the program ({len(self.text.splitlines())} lines)</summary>"
            f'<pre style="text-align:left">{escape(_head(self.text, CARD_CHARS))}</pre></details>'
        )


#: The most of the program's text a notebook card shows (the weights make long lines).
CARD_CHARS = 20_000


def _head(text: str, limit: int) -> str:
    """``text`` cut at a line end before ``limit`` characters, saying how much is left out."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit) + 1 or limit
    rest = text[cut:].count("\n") + 1
    return text[:cut] + f"… {rest} more lines (the whole program is `.text`)"


def guess_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in _EXT:
        raise ModelError(
            f"cannot tell the model format from the extension '{ext or '(none)'}'; "
            f"give --format ({', '.join(FORMATS)})",
            path,
        )
    return _EXT[ext]


def _program_name(path: str) -> str:
    """The model file's name as a program name (``m_`` before one that is a word of the
    language, ``sum.onnx`` -> ``m_sum``, or does not start with a letter)."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", os.path.splitext(os.path.basename(path))[0]) or "model"
    return base if (base[0].isalpha() or base[0] == "_") and base not in RESERVED else "m_" + base


def _read_bytes(path: str) -> bytes:
    """The file's bytes (lang.loader's located errors for unreadable files)."""
    return read_bytes(path)


def _read_text(path: str) -> str:
    """The file's UTF-8 text (lang.loader's located errors for unreadable files)."""
    return read_text(path)


def import_model(
    model: str,
    *,
    format: Optional[str] = None,
    features: Optional[Sequence[str]] = None,
    spec: Optional[Union[str, FeatureSpec]] = None,
    ranges: Sequence[str] = (),
    name: Optional[str] = None,
    sensitive: Optional[str] = None,
) -> ImportedModel:
    """Turn the model file ``model`` into a tamp program.

    ``format``: "onnx", "keras" or "libra" (default: from the extension). ``features``: names
    of the inputs by position (default ``x0, x1, ...``; Libra networks name their own).
    ``spec``: a Libra specification file (path or :class:`FeatureSpec`): the sensitive feature
    (a one-hot group, or a continuous feature and its split value) and the other one-hot groups.
    ``ranges``: ``"NAME=LO..HI"`` or ``"LO..HI"`` boxes (default [0, 1], Libra's convention).
    ``sensitive``: ``"sex"`` (a 0/1 column) or ``"race=0,1,2"`` (its integer values): that input
    becomes an ``int`` with ``requires`` its values and ``ensures independent(out, sex)`` (not
    with ``spec``, which names its own sensitive feature).
    Raises :class:`ModelError` (a located :class:`lang.errors.TampError`) for anything that
    cannot be imported exactly."""
    net, fmt = read_model(model, format=format, features=features)
    if isinstance(spec, str):
        spec = parse_spec(_read_text(spec), spec)
    if sensitive is not None:
        if spec is not None:
            raise ModelError("--sensitive and --spec both name a sensitive feature; give one of them", "--sensitive")
        spec = parse_sensitive(sensitive)
    text = to_program(net, name or _program_name(model), spec, [parse_range(r) for r in ranges], path=model)
    return ImportedModel(text, _check(text, model), net, fmt)


def read_model(
    model: str, *, format: Optional[str] = None, features: Optional[Sequence[str]] = None
) -> Tuple[Network, str]:
    """The exact :class:`Network` of the model file ``model`` and its format (see
    :func:`import_model` for the arguments)."""
    fmt = format or guess_format(model)
    if fmt not in FORMATS:
        raise ModelError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})", "--format")
    if features is not None:
        features = [f.strip() for f in features]
        if len(set(features)) != len(features):
            dup = next(f for f in features if features.count(f) > 1)
            raise ModelError(f"feature '{dup}' is named twice", "--features")
    if fmt == "onnx":
        # deferred on purpose: each format's reader loads only when a model of that format is read
        from .onnx_reader import read_onnx

        return _has_output(read_onnx(_read_bytes(model), model, features), model), fmt
    if fmt == "keras":
        # deferred on purpose: each format's reader loads only when a model of that format is read
        from .keras import read_keras

        return _has_output(read_keras(model, features), model), fmt
    # deferred on purpose: each format's reader loads only when a model of that format is read
    from .libra import read_libra

    net = read_libra(_read_text(model), model)
    if features is not None:
        raise ModelError(
            "a Libra network names its own inputs; --features applies to ONNX and Keras models", "--features"
        )
    return _has_output(net, model), fmt


def _has_output(net: Network, model: str) -> Network:
    """The network, or a ModelError when its output is a row of no values (a layer of 0 units)."""
    if not net.scores:
        raise ModelError("the model's output has no values (a layer with 0 units?)", model)
    if not _depends_on_input(net) and not any(CONSTANT_NOTE in n for n in net.notes):
        msg = (
            "the model's output does not depend on its input (a layer's output is constant): every input has one class"
        )
        warn(msg, model)
        net.notes.append(msg)
    return net


def _depends_on_input(net: Network) -> bool:
    """Some score reads, through the body, a feature (a tree's split always reads one)."""
    deps = set(net.features)
    for a in net.body:
        e = a.expr
        if isinstance(e, (Split, Leaf)):
            if isinstance(e, Split):
                deps.add(a.name)
            continue
        form = e.arg if isinstance(e, Relu) else e
        if any(v in deps for v, _ in form.terms):
            deps.add(a.name)
    return any(v in deps for s in net.scores for v, _ in s.terms)


def _check(text: str, model: str) -> A.Program:
    """Parse and type-check the generated program: the output is accepted by ``tamp check``."""
    try:
        src = parse(text, "<imported program>")
        check_file(src)
    except TampError as exc:  # a bug of the importer, not of the user's model
        raise ModelError(f"internal error: the generated program does not check: {exc}", model) from None
    return src.programs[0]

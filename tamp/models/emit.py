"""Write an imported :class:`~tamp.models.ir.Network` as a ``.prob`` program.

Inputs become parameters with their box as ``requires``; a one-hot group becomes one ``int``
parameter (its category) and the group's inputs are decoded from it in the body; a sensitive
feature gets ``ensures independent(out, ...)``. A continuous sensitive feature split at p
becomes two values, one on each side of the split, and a side selector::

    age := age_side == 0 ? age_below : age_above;     // independent(out, age_side)

so two inputs that differ only in ``age_side`` are the same applicant with an age below p and
one above p: exactly Libra's question "is the class the same for every value below and above
the split?".
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Set, SupportsIndex, Tuple

from lang.parser import KEYWORDS
from lang.typecheck import BUILTINS, DISTRIBUTIONS

from .errors import ModelError
from .exact import literal
from .ir import ARGMAX, THRESHOLD, VALUE, Affine, Assign, Expr, Leaf, Network, Relu, Split, combine, fresh
from .spec import FeatureSpec

OUT = "out"  # the program's result: the one name of the interface that is not a feature
_WORDS = {
    "assume",
    "else",
    "ensures",
    "fails",
    "false",
    "for",
    "given",
    "if",
    "in",
    "independent",
    "invariant",
    "program",
    "rate",
    "reliability",
    "requires",
    "skip",
    "sum",
    "true",
    "var",
    "when",
    "while",
    "max",
    "min",
    "abs",
    "log",
    "exp",
    "sqrt",
    "fst",
    "snd",
    "div",
    "mod",
    "forall",
    "exists",
    "P",
    "int",
    "real",
    "bool",
    "bern",
    "unif",
    "lap",
    "dlap",
    "dexp",
    "gauss",
    "uniform",
    "step",
    "density",
    "fairness",
    "parity",
    "failed",
}
#: Words a name of the program may not be: the language's keywords, built-in functions and
#: distributions (from the parser and the type checker, so the lists cannot drift apart) and
#: the words above. A model's feature with such a name is renamed (``sum`` -> ``sum_``).
RESERVED = frozenset(_WORDS | KEYWORDS | set(BUILTINS) | set(DISTRIBUTIONS))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Range = Tuple[Optional[str], Fraction, Fraction]


def affine_text(a: Affine) -> str:
    parts: List[Tuple[str, str]] = []
    for v, c in a.terms:
        mag = abs(c)
        term = v if mag == 1 else f"{literal(mag)}*{v}"
        parts.append(("-" if c < 0 else "+", term))
    if a.const != 0 or not parts:
        parts.append(("-" if a.const < 0 else "+", literal(abs(a.const))))
    sign, first = parts[0]
    text = ("-" if sign == "-" else "") + first
    for sign, term in parts[1:]:
        text += f" {sign} {term}"
    return text


def expr_text(e) -> str:
    if isinstance(e, Affine):
        return affine_text(e)
    if isinstance(e, Relu):
        return f"max(0, {affine_text(e.arg)})"
    if isinstance(e, Leaf):
        return literal(e.value)
    if isinstance(e, Split):
        return f"({e.feature} {e.op} {literal(e.threshold)} ? {expr_text(e.yes)} : {expr_text(e.no)})"
    raise TypeError(e)  # pragma: no cover - the readers build only these


def check_name(name: str, what: str, path: str) -> None:
    if not _NAME.fullmatch(name) or name in RESERVED:
        raise ModelError(
            f"{what} '{name}' is not usable as a tamp name (a word of the language or not an identifier)", path
        )


def _safe(name: str) -> str:
    """A name of the language close to ``name`` (not yet made unique)."""
    if _NAME.fullmatch(name):
        return name
    base = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return base if _NAME.fullmatch(base) else "x_" + base


def _renamed(net: Network, spec: FeatureSpec, box: Dict[str, Tuple[Fraction, Fraction]]):
    """The network, spec and box with every name a usable, distinct name of the language, and
    the set of names taken. A feature keeps its name unless it is a word of the language (or
    ``out``, the result), which gets underscores (``sum`` -> ``sum_``, said in a note); the
    reader's own names (hidden units, trees) come after the features and yield to them. One map
    for all, so the program computes what the network does."""
    taken: Set[str] = set(RESERVED) | {OUT}
    m: Dict[str, str] = {}
    notes: List[str] = []
    for f in net.features:
        m[f] = fresh(_safe(f), taken)
        if m[f] != f:
            why = "the program's result" if f == OUT else "a word of the language or not a name"
            notes.append(f"input '{f}' is named {m[f]} here ('{f}' is {why})")
    for a in net.body:
        if a.name not in m:
            m[a.name] = fresh(_safe(a.name), taken)

    def aff(a: Affine) -> Affine:
        return Affine(tuple((m.get(v, v), c) for v, c in a.terms), a.const)

    def expr(e: Expr) -> Expr:
        if isinstance(e, Affine):
            return aff(e)
        if isinstance(e, Relu):
            return Relu(aff(e.arg))
        if isinstance(e, Split):
            yes, no = expr(e.yes), expr(e.no)
            assert isinstance(yes, (Leaf, Split)) and isinstance(no, (Leaf, Split))
            return Split(m.get(e.feature, e.feature), e.op, e.threshold, yes, no)
        return e

    net2 = replace(
        net,
        features=[m[f] for f in net.features],
        body=[Assign(m[a.name], expr(a.expr), a.comment) for a in net.body],
        scores=[aff(s) for s in net.scores],
        ranges={m.get(k, k): v for k, v in net.ranges.items()},
        notes=list(net.notes) + notes,
    )
    spec2 = FeatureSpec(
        sensitive=[m.get(f, f) for f in spec.sensitive],
        split=spec.split,
        groups=[[m.get(f, f) for f in g] for g in spec.groups],
        lines={m.get(f, f): n for f, n in spec.lines.items()},
        path=spec.path,
        values=spec.values,
    )
    return net2, spec2, {m[f]: iv for f, iv in box.items()}, taken


def _group_name(members: Sequence[str], taken: set) -> str:
    first = members[0]
    prefix = first
    for m in members[1:]:
        while not m.startswith(prefix):
            prefix = prefix[:-1]
    if "_" in prefix:
        cut = prefix[: prefix.rindex("_")]
        if cut.isidentifier() and cut not in taken and cut not in RESERVED:
            return cut
    name = f"g_{first}"
    while name in taken:
        name += "_"
    return name


def _label_text(net: Network, index: int) -> str:
    if net.labels is None:
        return str(index)
    lab = net.labels[index]
    return str(int(lab)) if isinstance(lab, SupportsIndex) and _int_labels(net) else str(index)


def _int_labels(net: Network) -> bool:
    return net.labels is not None and all(isinstance(x, (int,)) or hasattr(x, "__index__") for x in net.labels)


def feature_box(net: Network, ranges: Sequence[Range] = ()) -> Dict[str, Tuple[Fraction, Fraction]]:
    """Every feature's range: [0, 1] (Libra's convention), then the model file's own boxes, then
    ``--range`` values; a range naming a feature the model lacks is an error naming it."""
    feats = list(net.features)
    box: Dict[str, Tuple[Fraction, Fraction]] = {f: (Fraction(0), Fraction(1)) for f in feats}
    box.update(net.ranges)
    for rname, lo, hi in ranges:
        if rname is None:
            for f in feats:
                box[f] = (lo, hi)
        elif rname not in box:
            raise ModelError(
                f"--range names '{rname}', which is not a feature of the model (its features: {_list(feats)})",
                "--range",
            )
        else:
            box[rname] = (lo, hi)
    return box


def check_spec(net: Network, spec: FeatureSpec) -> None:
    """A spec naming a feature the model lacks is an error at that line of the spec file."""
    feats = list(net.features)
    for f, line in spec.lines.items():
        if f not in feats:
            raise ModelError(
                f"the model has no feature '{f}' (its features: {_list(feats)})", spec.path, line, 1 if line else 0
            )


def to_program(
    net: Network,
    name: str,
    spec: Optional[FeatureSpec] = None,
    ranges: Sequence[Range] = (),
    path: str = "<model>",
    spec_path: str = "<spec>",
) -> str:
    """The program text (see the module docstring); raises :class:`ModelError` for a spec or a
    range naming a feature the model lacks."""
    check_name(name, "the program name", path)
    box = feature_box(net, ranges)
    spec = spec or FeatureSpec()
    check_spec(net, spec)
    if spec.values is not None and spec.sensitive[0] in {r[0] for r in ranges}:
        raise ModelError(
            f"--range and --sensitive both name '{spec.sensitive[0]}'; a sensitive column's values are "
            "given by --sensitive NAME=V1,V2,...",
            "--range",
        )
    net, spec, box, taken = _renamed(net, spec, box)
    feats = list(net.features)
    params: List[str] = []
    requires: List[str] = []
    decode: List[str] = []
    grouped: Dict[str, str] = {}
    ensures: Optional[str] = None

    def one_hot(members: List[str], sensitive: bool) -> str:
        g = _group_name(members, taken)
        taken.add(g)
        params.append(f"{g}: int")
        cons = [f"{g} >= 0 && {g} <= {len(members) - 1}"]
        for i, m in enumerate(members):
            grouped[m] = g
            lo, hi = box[m]
            if (lo, hi) == (1, 1):
                cons = [f"{g} == {i}"]  # the category is fixed
            elif (lo, hi) == (0, 0):
                if len(cons) > 1 or "==" not in cons[0]:
                    cons.append(f"{g} != {i}")
            elif (lo, hi) != (0, 1):
                raise ModelError(
                    f"one-hot input '{m}' has the range {lo}..{hi}; a one-hot input ranges over "
                    "0..1 (or is fixed to 0 or 1)",
                    path,
                )
            decode.append(f"  {m} := {g} == {i} ? 1 : 0;")
        requires.append(" && ".join(cons))
        what = "sensitive feature" if sensitive else "categorical feature"
        decode.insert(
            len(decode) - len(members),
            f"  // {what} {g}: category i sets the one-hot input {members[0]}..{members[-1]} number i (from 0)",
        )
        return g

    def interval(f: str, lo: Fraction, hi: Fraction, lo_op: str = "<=", hi_op: str = "<=") -> str:
        if lo == hi and lo_op == hi_op == "<=":
            return f"{f} == {literal(lo)}"
        return f"{literal(lo)} {lo_op} {f} && {f} {hi_op} {literal(hi)}"

    sens = spec.sensitive
    sensitive_split = None
    discrete = None
    firsts: Dict[str, Tuple[List[str], bool]] = {}  # first member -> (one-hot group, sensitive?)
    if spec.values is not None:
        discrete = sens[0]
        ensures = discrete
    elif len(sens) > 1:
        firsts[sens[0]] = (list(sens), True)
    elif len(sens) == 1:
        f = sens[0]
        lo, hi = box[f]
        p = spec.split
        assert p is not None
        if not lo < p <= hi:
            raise ModelError(
                f"the split value {p} of sensitive feature '{f}' is not inside its range {lo}..{hi}",
                spec.path,
                spec.lines.get(f, 0),
                1 if f in spec.lines else 0,
            )
        below, above, side = (fresh(f"{f}_{k}", taken) for k in ("below", "above", "side"))
        sensitive_split = f
        ensures = side
    for group in spec.groups:
        firsts[group[0]] = (list(group), False)
    in_group = {m for g, _ in firsts.values() for m in g}
    for f in feats:
        if f in firsts:
            members, sensitive = firsts[f]
            g = one_hot(members, sensitive)
            if sensitive:
                ensures = g
            continue
        if f in in_group:
            continue
        if f == discrete:
            assert spec.values is not None
            params.append(f"{f}: int")
            requires.append(" || ".join(f"{f} == {v}" for v in spec.values))
            continue
        if f == sensitive_split:
            lo, hi = box[f]
            p = spec.split
            assert p is not None  # a continuous sensitive feature has its split (parse_spec)
            params += [f"{below}: real", f"{above}: real", f"{side}: int"]
            requires.append(interval(below, lo, p, "<=", "<"))
            requires.append(interval(above, p, hi))
            requires.append(f"{side} >= 0 && {side} <= 1")
            decode.append(
                f"  // sensitive feature {f}, split at {literal(p)}: {side} picks a value below or above the split"
            )
            decode.append(f"  {f} := {side} == 0 ? {below} : {above};")
            continue
        params.append(f"{f}: real")
        lo, hi = box[f]
        requires.append(interval(f, lo, hi))

    origin = f" ({net.source})" if net.source else ""
    lines: List[str] = [f"// {name}: imported by `tamp import` from {path}{origin}"]
    lines += [f"// {t}" for t in net.exactness.splitlines()]
    for note in net.notes:
        lines.append(f"// {note}")
    if net.labels is not None and not _int_labels(net):
        lines.append("// classes: " + ", ".join(f"{i} = {lab!r}" for i, lab in enumerate(net.labels)))
    lines.append(f"program {name}({', '.join(params)})")
    for r in requires:
        lines.append(f"  requires {r}")
    if ensures:
        lines.append(f"  ensures independent({OUT}, {ensures})")
    lines.append("{")
    lines += decode
    for a in net.body:
        lines.append(f"  {a.name} := {expr_text(a.expr)};" + (f"  // {a.comment}" if a.comment else ""))
    lines += _result(net, taken)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _result(net: Network, taken: Set[str]) -> List[str]:
    """The statements computing ``out`` from the scores (their own names: fresh, ``taken``)."""
    s = net.scores
    if net.rule == VALUE:
        return [f"  {OUT} := {affine_text(s[0])};"]
    score = fresh("score", taken)
    if net.rule == THRESHOLD:
        return [
            f"  {score} := {affine_text(s[0])};",
            f"  {OUT} := {score} > 0 ? {_label_text(net, 1)} : {_label_text(net, 0)};",
        ]
    assert net.rule == ARGMAX
    if len(s) == 1:
        return [f"  {OUT} := {_label_text(net, 0)};  // a single class"]
    if len(s) == 2:
        return [
            "  // the class is the argmax of the two scores (the first on a tie, as numpy's argmax):",
            f"  // class 1 exactly when {score} = score_1 - score_0 > 0",
            f"  {score} := {affine_text(combine([(Fraction(1), s[1]), (Fraction(-1), s[0])]))};",
            f"  {OUT} := {score} > 0 ? {_label_text(net, 1)} : {_label_text(net, 0)};",
        ]
    names = [fresh(f"s{i}", taken) for i in range(len(s))]
    best = fresh("best", taken)
    out = ["  // the class is the argmax of the scores (the first on a tie, as numpy's argmax)"]
    for n, a in zip(names, s):
        out.append(f"  {n} := {affine_text(a)};")
    out.append(f"  {OUT} := {_label_text(net, 0)};")
    out.append(f"  {best} := {names[0]};")
    for i in range(1, len(s)):
        out.append(f"  if ({names[i]} > {best}) {{ {OUT} := {_label_text(net, i)}; {best} := {names[i]}; }}")
    return out


def _list(names: Sequence[str]) -> str:
    return ", ".join(names) if len(names) <= 8 else ", ".join(names[:6]) + f", ..., {names[-1]}"

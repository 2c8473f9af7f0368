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

from fractions import Fraction
from typing import Dict, List, Optional, Sequence, SupportsIndex, Tuple

from .errors import ModelError
from .exact import literal
from .ir import ARGMAX, THRESHOLD, VALUE, Affine, Leaf, Network, Relu, Split, combine
from .spec import FeatureSpec

OUT = "out"
RESERVED = {
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
    if not name.isidentifier() or name in RESERVED:
        raise ModelError(
            f"{what} '{name}' is not usable as a tamp name (a reserved word or not an identifier); "
            "rename it with --features",
            path,
        )


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
            raise ModelError(f"the model has no feature '{f}' (its features: {_list(feats)})", spec.path, line, 1)


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
    feats = list(net.features)
    fset = set(feats)
    for f in feats:
        check_name(f, "feature", path)
    box = feature_box(net, ranges)
    spec = spec or FeatureSpec()
    check_spec(net, spec)

    body_names = {a.name for a in net.body}
    clash = body_names & fset
    if clash or OUT in fset or "score" in fset or "best" in fset:
        bad = sorted(clash or {OUT, "score", "best"} & fset)[0]
        raise ModelError(
            f"feature '{bad}' has the name of a variable of the imported program; rename it with --features", path
        )

    taken = set(feats) | body_names | {OUT, "score", "best"}
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
    firsts: Dict[str, Tuple[List[str], bool]] = {}  # first member -> (one-hot group, sensitive?)
    if len(sens) > 1:
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
        for n in (f"{f}_below", f"{f}_above", f"{f}_side"):
            if n in taken:
                raise ModelError(f"'{n}' is both a feature and the name of the split of '{f}'", spec.path)
            taken.add(n)
        sensitive_split = f
        ensures = f"{f}_side"
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
        if f == sensitive_split:
            lo, hi = box[f]
            p = spec.split
            assert p is not None  # a continuous sensitive feature has its split (parse_spec)
            params += [f"{f}_below: real", f"{f}_above: real", f"{f}_side: int"]
            requires.append(interval(f"{f}_below", lo, p, "<=", "<"))
            requires.append(interval(f"{f}_above", p, hi))
            requires.append(f"{f}_side >= 0 && {f}_side <= 1")
            decode.append(
                f"  // sensitive feature {f}, split at {literal(p)}: {f}_side picks a value below or above the split"
            )
            decode.append(f"  {f} := {f}_side == 0 ? {f}_below : {f}_above;")
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
    lines += _result(net)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _result(net: Network) -> List[str]:
    s = net.scores
    if net.rule == VALUE:
        return [f"  {OUT} := {affine_text(s[0])};"]
    if net.rule == THRESHOLD:
        return [
            f"  score := {affine_text(s[0])};",
            f"  {OUT} := score > 0 ? {_label_text(net, 1)} : {_label_text(net, 0)};",
        ]
    assert net.rule == ARGMAX
    if len(s) == 1:
        return [f"  {OUT} := {_label_text(net, 0)};  // a single class"]
    if len(s) == 2:
        return [
            "  // the class is the argmax of the two scores (the first on a tie, as numpy's argmax):",
            "  // class 1 exactly when score_1 - score_0 > 0",
            f"  score := {affine_text(combine([(Fraction(1), s[1]), (Fraction(-1), s[0])]))};",
            f"  {OUT} := score > 0 ? {_label_text(net, 1)} : {_label_text(net, 0)};",
        ]
    out = ["  // the class is the argmax of the scores (the first on a tie, as numpy's argmax)"]
    for i, a in enumerate(s):
        out.append(f"  s{i} := {affine_text(a)};")
    out.append(f"  {OUT} := {_label_text(net, 0)};")
    out.append("  best := s0;")
    for i in range(1, len(s)):
        out.append(f"  if (s{i} > best) {{ {OUT} := {_label_text(net, i)}; best := s{i}; }}")
    return out


def _list(names: Sequence[str]) -> str:
    return ", ".join(names) if len(names) <= 8 else ", ".join(names[:6]) + f", ..., {names[-1]}"

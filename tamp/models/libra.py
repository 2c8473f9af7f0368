"""Libra's network text format (Urban et al., OOPSLA 2020; github.com/caterinaurban/Libra,
src/libra/tests): one statement per line::

    assume(0 <= x00 <= 0.5)                       # optional: narrows an input's range
    x10 = (-0.307622)*x00 + (0.196333)*x01 + (0.061339)
    ReLU(x10)
    #                                             # layer separators; blank lines too

Inputs are the variables read before being assigned, each in [0, 1] unless an ``assume``
narrows it (Libra's convention: features scaled to [0, 1]). The outputs are the variables
assigned after the last ``ReLU``; the class is the index of the largest output. Decimals
are read as the exact rationals they spell.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from .errors import ModelError
from .exact import check_binary64
from .ir import ARGMAX, Affine, Assign, Network, Relu, combine

_ASSUME = re.compile(r"^assume\s*\((.*)\)\s*$")
_RELU = re.compile(r"^ReLU\s*\(\s*([A-Za-z_]\w*)\s*\)\s*$")
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)(.*)$")


def _err(msg: str, path: str, line: int, col: int = 1) -> ModelError:
    return ModelError(msg, path, line, col)


def _number(node: ast.expr, text: str, path: str, line: int, off: int) -> Optional[Fraction]:
    """The exact value of a (signed, parenthesised) numeric literal, or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _number(node.operand, text, path, line, off)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        seg = ast.get_source_segment(text, node)
        col = off + node.col_offset + 1
        try:
            q = Fraction(seg) if seg is not None else Fraction(node.value)
        except (ValueError, OverflowError):
            raise _err(f"cannot read the number {seg!r}", path, line, col) from None
        return check_binary64(q, f"the number {(seg or str(node.value))[:40]}", path, line, col, tiny=True)
    return None


def _affine(node: ast.expr, text: str, path: str, line: int, off: int) -> Affine:
    num = _number(node, text, path, line, off)
    if num is not None:
        return Affine.constant(num)
    if isinstance(node, ast.Name):
        return Affine.var(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left = _affine(node.left, text, path, line, off)
        right = _affine(node.right, text, path, line, off)
        return combine([(Fraction(1), left), (Fraction(1 if isinstance(node.op, ast.Add) else -1), right)])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for k_node, v_node in ((node.left, node.right), (node.right, node.left)):
            k = _number(k_node, text, path, line, off)
            if k is not None:
                return _affine(v_node, text, path, line, off).scale(k)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _affine(node.operand, text, path, line, off).scale(Fraction(-1))
    raise _err(
        "expected a linear expression (numbers times variables, + and -)",
        path,
        line,
        off + getattr(node, "col_offset", 0) + 1,
    )


def _parse_expr(src: str, path: str, line: int, off: int) -> Tuple[ast.expr, str, int]:
    """The expression ``src`` starting after ``off`` characters of its line: its tree, its
    stripped text and the offset of that text (for the columns of the tree's nodes)."""
    off += len(src) - len(src.lstrip())
    try:
        return ast.parse(src.strip(), mode="eval").body, src.strip(), off
    except SyntaxError as exc:
        raise _err(f"cannot read this expression: {exc.msg}", path, line, off + (exc.offset or 1)) from None


def read_libra(text: str, path: str = "<libra>") -> Network:
    ranges: Dict[str, Tuple[Fraction, Fraction]] = {}
    assigned: set = set()
    inputs: List[str] = []
    body: List[Assign] = []
    last: Dict[str, int] = {}  # variable -> index in body of its last assignment
    read_since: set = set()  # variables read since their last assignment
    outputs: List[str] = []
    relus = 0

    def reads(a: Affine, line: int) -> None:
        for v, _ in a.terms:
            if v not in assigned and v not in inputs:
                inputs.append(v)
            read_since.add(v)

    for i, raw in enumerate(text.splitlines(), 1):
        s = raw.split("#", 1)[0].rstrip()
        stripped = s.strip()
        if not stripped:
            continue
        off = len(s) - len(s.lstrip())
        m = _ASSUME.match(stripped)
        if m:
            node, src, eoff = _parse_expr(m.group(1), path, i, off + stripped.index("(") + 1)
            if not (
                isinstance(node, ast.Compare)
                and len(node.ops) == 2
                and all(isinstance(o, ast.LtE) for o in node.ops)
                and isinstance(node.comparators[0], ast.Name)
            ):
                raise _err("expected assume(LO <= x <= HI)", path, i, off + 1)
            lo = _number(node.left, src, path, i, eoff)
            hi = _number(node.comparators[1], src, path, i, eoff)
            var = node.comparators[0].id
            if lo is None or hi is None or lo > hi:
                raise _err("expected assume(LO <= x <= HI) with numbers LO <= HI", path, i, off + 1)
            if var in assigned:
                raise _err(f"assume on '{var}', which is not an input", path, i, off + 1)
            if var not in inputs:
                inputs.append(var)
            ranges[var] = (lo, hi)
            continue
        m = _RELU.match(stripped)
        if m:
            v = m.group(1)
            if v not in last:
                raise _err(f"ReLU of '{v}', which is not assigned before", path, i, off + 1)
            k = last[v]
            prev = body[k].expr
            if isinstance(prev, Affine) and v not in read_since:
                body[k] = Assign(v, Relu(prev))
            else:
                body.append(Assign(v, Relu(Affine.var(v))))
                last[v] = len(body) - 1
            relus += 1
            outputs = []
            continue
        m = _ASSIGN.match(stripped)
        if m:
            v = m.group(1)
            col = off + m.start(2) + 1
            node, src, eoff = _parse_expr(m.group(2), path, i, col - 1)
            a = _affine(node, src, path, i, eoff)
            reads(a, i)
            if v in inputs:
                raise _err(f"'{v}' is read before this assignment (an input) and assigned here", path, i, off + 1)
            assigned.add(v)
            body.append(Assign(v, a))
            last[v] = len(body) - 1
            read_since.discard(v)
            if v not in outputs:
                outputs.append(v)
            continue
        raise _err("expected `x = linear expression`, `ReLU(x)`, `assume(LO <= x <= HI)` or `#`", path, i, off + 1)
    if not outputs:
        raise _err(
            "no output layer: the network ends with ReLU statements or is empty "
            "(the outputs are the variables assigned after the last ReLU)",
            path,
            0,
        )
    out_set = set(outputs)
    scores = []
    kept = []
    for asg in body:  # the output assignments become the scores themselves
        if asg.name in out_set and isinstance(asg.expr, Affine) and body.index(asg) == last[asg.name]:
            scores.append((asg.name, asg.expr))
        else:
            kept.append(asg)
    order = {n: j for j, n in enumerate(outputs)}
    scores.sort(key=lambda p: order[p[0]])
    net = Network(
        features=inputs,
        body=kept,
        scores=[s for _, s in scores],
        rule=ARGMAX,
        labels=None,
        source=f"Libra network, {relus} ReLUs",
        notes=["outputs (class i is the i-th, by index): " + ", ".join(outputs)],
        ranges=ranges,
        exactness="Every weight and bias is the decimal written in the network file, read exactly;\n"
        "tamp computes with these exact rationals (no rounding).",
    )
    return net

"""The fast LALR driver (lang.lalr) and lark's own parser build the same AST with the same
source positions, on every program of the repository and on mutated (fuzzed) programs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from lang_examples import DOCS_LANGUAGE, LANGUAGE_MD, REPO, markdown_programs
from test_lang_fuzz import SEEDS, mutated

from lang import ast as A
from lang.errors import TampError
from lang.lalr import Fallback
from lang.parser import _driver, _run_lark

PROGRAMS = sorted(p for p in REPO.glob("**/*.prob") if ".git" not in p.parts)
TEXTS = (
    [(str(p.relative_to(REPO)), p.read_text()) for p in PROGRAMS]
    + markdown_programs(LANGUAGE_MD)
    + markdown_programs(DOCS_LANGUAGE)
)


def positions(root) -> list:
    """Every node (pre-order) with its class and full span."""
    out, stack = [], list(root) if isinstance(root, tuple) else [root]
    while stack:
        n = stack.pop()
        p = getattr(n, "pos", None)
        out.append((type(n).__name__, p and (p.line, p.col, p.end_line, p.end_col)))
        for f in A.field_names(type(n)):
            v = getattr(n, f)
            for x in v if isinstance(v, tuple) else (v,):
                if isinstance(x, (A.Node, A.Program, A.Param)):
                    stack.append(x)
    return out


def same_as_lark(text: str, start: str = "start") -> bool:
    """Whether the driver parsed ``text`` (False: it handed over to lark), asserting that its
    AST and positions are lark's."""
    try:
        fast = _driver().parse(text, start)
    except (Fallback, TampError):
        return False
    slow = _run_lark(text, "f.prob", start)
    assert fast == slow
    assert positions(fast) == positions(slow)
    return True


def test_the_driver_is_available():
    from lang import parser

    assert _driver() is not None, repr(parser.DRIVER_ERROR)


@pytest.mark.parametrize("label,text", TEXTS, ids=[t[0] for t in TEXTS])
def test_repository_programs_parse_alike(label, text):
    assert same_as_lark(text), "the fast path should handle every valid program"


@pytest.mark.parametrize(
    "text",
    [
        "a - -b",
        "-a * (b + c) - d",
        "x[i - 1] <= y ? 1 : 2",
        "forall j in 0..=n: a[j] >= 0 && sum(j in 0..n: a[j]) > 1",
        "P(x > 1 | y) >= 0.5",
        "f(a, b) / 2 * 3 div 4 mod 5 +. 1 -. 2 *. 3",
    ],
)
def test_expressions_parse_alike(text):
    assert same_as_lark(text, "expr_start")


def test_array_types_and_empty_lists():
    assert same_as_lark("program p(a: int[ ], b: real[]) { x ~ step([]); }")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_programs_parse_alike(text):
    same_as_lark(text)


def test_seeds_are_handled_by_the_driver():
    assert all(same_as_lark(s) for s in SEEDS)

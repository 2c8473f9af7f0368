"""Every example of the language reference and every FairSquare benchmark parses, type-checks
and survives parse -> print -> parse unchanged."""

from __future__ import annotations

import pytest
from lang_examples import DOCS_LANGUAGE, FAIRSQUARE, LANGUAGE_MD, markdown_programs

from lang.parser import parse, parse_file
from lang.printer import print_file
from lang.speckind import spec_kind
from lang.typecheck import check_file

EXAMPLES = markdown_programs(LANGUAGE_MD) + markdown_programs(DOCS_LANGUAGE)


def test_the_reference_has_examples():
    if not LANGUAGE_MD.exists():
        pytest.skip("shared/LANGUAGE.md not present")
    assert len(markdown_programs(LANGUAGE_MD)) >= 4


@pytest.mark.parametrize("label,source", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_markdown_example_checks_and_round_trips(label, source):
    src = parse(source, label)
    types = check_file(src)
    assert set(types) == {p.name for p in src.programs}
    again = parse(print_file(src), label)
    assert again == src
    assert print_file(again) == print_file(src)


@pytest.mark.parametrize("path", FAIRSQUARE, ids=[p.name for p in FAIRSQUARE])
def test_fairsquare_benchmark_checks_and_round_trips(path):
    src = parse_file(str(path))
    types = check_file(src)
    (prog,) = src.programs
    assert spec_kind(prog) == "probability"
    assert all(t.name in ("bool", "int", "real") for t in types[prog.name].locals.values())
    assert parse(print_file(src)) == src


def test_noisy_sum_types():
    label, source = markdown_programs(LANGUAGE_MD)[0] if LANGUAGE_MD.exists() else (None, None)
    if source is None:
        pytest.skip("shared/LANGUAGE.md not present")
    t = check_file(parse(source))["noisySum"]
    assert {n: str(x) for n, x in t.vars.items()} == {
        "q": "int[]",
        "n": "int",
        "eps": "real",
        "p": "real",
        "s": "real",
        "i": "int",
        "a": "real[]",
    }
    assert t.arrays == {"q": parse_type("int"), "a": parse_type("real")}


def parse_type(name):
    from lang import ast as A

    return A.Type(name)

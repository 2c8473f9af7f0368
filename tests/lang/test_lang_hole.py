"""`?`: a value for tamp to infer (`fails ?`, one constant of an `ensures`)."""

import pytest

from lang import ast as A
from lang.errors import TampError
from lang.parser import parse
from lang.printer import print_file
from lang.typecheck import check_file

GOOD = """
program a(n: int, t: real)
  requires n >= 1
  ensures abs(s) <= t
  fails ?
{ s := 0; }
program b(n: int, p: real)
  requires n >= 1 && p > 0
  ensures abs(s - n) <= ? && (p > 0 ? true : false)
  fails p
{ s := n; }
"""


def test_hole_parses_prints_and_typechecks():
    src = parse(GOOD)
    assert isinstance(src.programs[0].fails, A.Hole)
    assert any(isinstance(n, A.Hole) for n in A.walk(src.programs[1].ensures[0]))
    assert parse(print_file(src)) == src
    check_file(src)


@pytest.mark.parametrize(
    "spec,msg",
    [
        ("ensures s <= ? fails ?", "only one '?'"),
        ("ensures s <= 1 fails 2 * ?", "whole 'fails' clause"),
        ("requires ? > 0 ensures s <= 1", "may only stand for"),
        ("rate ? ensures s <= 1", "'rate'"),
    ],
)
def test_hole_misplaced(spec, msg):
    src = parse(f"program c(n: int) {spec} {{ s := 0; }}")
    with pytest.raises(TampError) as info:
        check_file(src)
    assert msg in str(info.value)

"""The expected-failure engine reads Rely's hardware model as the CFA does: each fault event a
coin at its kind's rate, and programs whose failed operations give arbitrary values refused."""

import subprocess
import sys

import pytest

from lang.loader import load
from tamp.cfa.unreliable import coins_for_unreliable

KINDS = """
program t(r: real, r2: real)
  rate r
  rate(*.) r2
  requires 0 < r && r < 1 && 0 < r2 && r2 < 1
  ensures !failed
  fails {B}
{{
  c ~ bern(1/2);
  x := 4;
  if (c) {{ x := x +. 2; }} else {{ x := x *. 3; }}
}}
"""

ARBITRARY = """
program t(r: real, a: int[])
  rate r
  {MEM}
  requires 0 < r && r < 1
  ensures !failed
  fails r / 2
{{
  c ~ bern(1/2);
  y := 0;
  if (c) {{ y := {E}; }}
}}
"""


def _prove(tmp_path, text):
    f = tmp_path / "t.prob"
    f.write_text(text)
    out = subprocess.run([sys.executable, "-m", "tamp", "prove", str(f)], capture_output=True, text=True)
    return out.stdout.split()[1]


@pytest.mark.parametrize("bound,verdict", [("r / 2 + r2 / 2", "proved"), ("r / 2 + r2 / 3", "unknown")])
def test_per_kind_rates_are_the_coins_rates(tmp_path, bound, verdict):
    assert _prove(tmp_path, KINDS.format(B=bound)) == verdict


@pytest.mark.parametrize("mem,e", [("", "4 /. 2"), ("", "1 <. 2 ? 1 : 0"), ("unreliable a", "a[0]")])
def test_arbitrary_results_are_refused_not_modelled_as_reliable(tmp_path, mem, e):
    prog = load(ARBITRARY.format(MEM=mem, E=e), "t.prob").programs[0]
    assert coins_for_unreliable(prog) is None

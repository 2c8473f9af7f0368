"""``pow(b, e)`` is read as ``exp(e * log(b))`` (Rely's ``(1 - r)^N``), located errors otherwise."""

import subprocess
import sys

import pytest

from lang import ast as A
from lang.errors import TampError
from lang.parser import parse

PRODUCT = """
program loop3(n: int, r: real)
  rate r
  requires n >= 0 && 0 <= r && r < 1
  reliability pow(1 - r, {N})
{{
  s := 0;
  for i in 0..n {{ s := s +. 1; s := s *. 2; s := s -. 1; }}
}}
"""


def test_pow_is_exp_of_log():
    prog = parse("program p(b: real, e: real) ensures pow(b, e) >= 0 fails 0 { skip; }", "t.prob").programs[0]
    post = prog.ensures[0]
    call = post.left
    assert isinstance(call, A.Call) and call.func == "exp"
    prod = call.args[0]
    assert isinstance(prod, A.Binary) and prod.op == "*"
    assert isinstance(prod.right, A.Call) and prod.right.func == "log"


@pytest.mark.parametrize("args", ["x", "x, 2, 3", ""])
def test_pow_arity_is_located(args):
    with pytest.raises(TampError) as err:
        parse(f"program p(x: real) ensures pow({args}) >= 0 fails 0 {{ skip; }}", "t.prob")
    assert "pow takes 2 arguments" in str(err.value)


@pytest.mark.parametrize("n,verdict", [("3 * n", "proved"), ("3 * n - 1", "unknown")])
def test_rely_product_written_with_pow(tmp_path, n, verdict):
    f = tmp_path / "loop3.prob"
    f.write_text(PRODUCT.format(N=n))
    out = subprocess.run([sys.executable, "-m", "tamp", "prove", str(f)], capture_output=True, text=True)
    assert out.stdout.split()[1] == verdict, out.stdout + out.stderr

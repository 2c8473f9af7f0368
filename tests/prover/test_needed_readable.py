"""The bound a failed proof needed is shown in its readable form: when the expected-failure
engine proves an exact value only as computed (`exp(-(log(1 / p) / eps / (1 / eps)))`), the union
bound's equal `p` is still tried and, equal at every sample point, the shorter text wins."""

import subprocess
import sys

LAPLACE = """
program laplace(x: real, eps: real, p: real)
  requires eps > 0 && 0 < p && p < 1
  ensures abs(a - x) <= log(1 / p) / eps
  fails p / 2
{
  a ~ lap(x, 1 / eps);
}
"""


def test_needed_bound_is_readable(tmp_path):
    f = tmp_path / "laplace.prob"
    f.write_text(LAPLACE)
    out = subprocess.run([sys.executable, "-m", "tamp", "prove", str(f)], capture_output=True, text=True).stdout
    assert "the bound needed is p but the claim says p / 2" in out, out


def test_inferred_bound_is_readable(tmp_path):
    f = tmp_path / "laplace.prob"
    f.write_text(LAPLACE)
    out = subprocess.run([sys.executable, "-m", "tamp", "prove", str(f), "--infer"], capture_output=True, text=True)
    assert out.stdout.split()[1] == "proved" and "inferred failure bound: p " in out.stdout, out.stdout

"""`tamp fairness`: exit codes, JSON with exact masses, located errors."""

import json
import subprocess
import sys

from locations import REPO

BAND = """
program band(x1: real, x2: real, sex: int)
  requires 0 <= x1 && x1 <= 1 && 0 <= x2 && x2 <= 1 && (sex == 0 || sex == 1)
  ensures independent(out, sex)
{
  h1 := max(0, 2*x1 + 0.1*sex - 1);
  h2 := max(0, x1 + x2 - 1.5);
  score := h1 - 0.5*h2;
  out := score > 0 ? 1 : 0;
}
"""


def tamp(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "tamp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )


def test_biased_band_is_measured_exactly(tmp_path):
    f = tmp_path / "band.prob"
    f.write_text(BAND)
    p = tamp("fairness", str(f), "--jobs", "1", "--json", cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    data = json.loads(p.stdout)
    prog = data["programs"][0] if "programs" in data else data
    bm = prog["biased_mass"]
    # biased exactly where 2*x1 - 1 <= 0 < 2*x1 - 0.9 (h2's kink lies where score > 0 anyway)
    assert abs(bm["lower"] - 0.05) < 1e-12 and abs(bm["upper"] - 0.05) < 1e-12


def test_bad_option_is_a_usage_error(tmp_path):
    f = tmp_path / "band.prob"
    f.write_text(BAND)
    p = tamp("fairness", str(f), "--min-mass", "0", cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stdout + p.stderr


def test_unsupported_program_is_located(tmp_path):
    f = tmp_path / "bad.prob"
    f.write_text(BAND.replace("2*x1 + 0.1*sex - 1", "log(x1)"))
    p = tamp("fairness", str(f), "--jobs", "1", cwd=tmp_path)
    assert p.returncode == 2
    assert "bad.prob:" in p.stderr + p.stdout and "Traceback" not in p.stderr


def test_negative_mass_gap_is_a_usage_error(tmp_path):
    f = tmp_path / "band.prob"
    f.write_text(BAND)
    p = tamp("fairness", str(f), "--mass-gap", "-1", cwd=tmp_path)
    assert p.returncode == 2
    assert "--mass-gap" in p.stdout + p.stderr and "Traceback" not in p.stdout + p.stderr

"""What `tamp prove` loads: only the failure-bound prover and the text report.

A command line that names its command builds that command's parser alone, and the engines
it does not use (the probability engine with pysmt and flint, the causal engine, the
certificate checker, the page and notebook renderers, sympy) stay unloaded, so a proof's wall
time is the proof, not the imports. Each check runs in a fresh interpreter."""

import json
import subprocess
import sys

from locations import BENCHMARKS, REPO

HEAVY = ["sympy", "pysmt", "flint", "tamp.probability", "tamp.causal", "tamp.certificate", "tamp.report.notebook"]

PROBE = """
import json, sys
from tamp.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def _loaded(*argv):
    out = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *argv], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_prove_loads_no_other_engine():
    # a loop-free program and a loop program whose proof needs no closed form
    for f in ("dp/randResp.prob", "reliability/searchRef.prob"):
        got = _loaded("prove", str(BENCHMARKS / f))
        assert got == {"code": 0, "loaded": []}, (f, got)


def test_other_commands_still_load_what_they_need():
    got = _loaded("check", str(BENCHMARKS / "dp/randResp.prob"))
    assert got["code"] == 0
    got = _loaded("prob", str(BENCHMARKS / "fairness" / "BN1_DT14.prob"), "--timeout", "60")
    assert "tamp.probability" in got["loaded"]


def test_each_command_module_is_named_as_the_cli_says():
    from tamp.cli import COMMANDS, build_parser, command_module

    for name in COMMANDS:
        assert command_module(name).NAME == name
    assert set(build_parser().commands) == set(COMMANDS)
    assert set(build_parser("prove").commands) == {"prove"}

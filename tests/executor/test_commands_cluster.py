"""``tamp bench`` / ``tamp fairness`` with --scheduler: the same verdicts as --workers 1; an
unreachable scheduler is exit 1 with a clear message."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "benchmarks" / "dp" / "randResp.prob", ROOT / "benchmarks" / "causal" / "net2x5_inert.prob"]


def tamp(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return subprocess.run(
        [sys.executable, "-m", "tamp", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def verdicts(path):
    return [(Path(r["file"]).name, r.get("name"), r["verdict"]) for r in json.loads(path.read_text())["rows"]]


def test_bench_on_cluster_same_verdicts(tmp_path, address):
    folder = tmp_path / "suite"
    folder.mkdir()
    for f in FILES:
        shutil.copy(f, folder / f.name)
    one = tamp("bench", str(folder), "--workers", "1", "--timeout", "120", "--json", str(tmp_path / "one.json"))
    two = tamp("bench", str(folder), "--scheduler", address, "--timeout", "120", "--json", str(tmp_path / "two.json"))
    assert one.returncode == two.returncode, (one.stderr, two.stderr)
    assert verdicts(tmp_path / "one.json") == verdicts(tmp_path / "two.json")
    assert len(verdicts(tmp_path / "one.json")) >= 2


def test_fairness_on_cluster(address):
    f = str(ROOT / "benchmarks" / "causal" / "net2x5_fair.prob")
    p = tamp("fairness", f, "--scheduler", address, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["programs"][0]["verdict"] == "proved"


def test_prove_several_files_on_cluster_same_results(address):
    files = [
        str(ROOT / "benchmarks" / "illustrative" / "ex1.prob"),
        str(ROOT / "benchmarks" / "wmi" / "prop_parity.prob"),
    ]
    one = tamp("prove", *files, "--jobs", "1", "--json")
    two = tamp("prove", *files, "--scheduler", address, "--json")
    assert one.returncode == two.returncode == 0, (one.stderr, two.stderr)

    def numbers(out):  # verdicts and certified values, not the times
        return [
            (p["name"], p["verdict"], json.dumps(p.get("terms")), json.dumps(p.get("comparisons")))
            for f in json.loads(out)["files"]
            for p in f["programs"]
        ]

    assert numbers(one.stdout) == numbers(two.stdout)
    assert [v for _n, v, _t, _c in numbers(one.stdout)] == ["proved", "proved"]


def test_unreachable_scheduler_exit_1():
    for cmd in (["bench", str(FILES[0])], ["fairness", str(FILES[1])], ["prove", str(FILES[0]), str(FILES[0])]):
        p = tamp(*cmd, "--scheduler", "tcp://127.0.0.1:1", timeout=120)
        assert p.returncode == 1, (cmd, p.stderr)
        assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in p.stderr
        assert "Traceback" not in p.stderr


def test_bad_scheduler_address_is_a_usage_error():
    p = tamp("bench", str(FILES[0]), "--scheduler", "not an address")
    assert p.returncode == 2 and "argument --scheduler" in p.stderr

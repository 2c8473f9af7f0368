"""prove / prob / wmi / check-proof on a 2-worker cluster: the same verdicts and bit-for-bit the
same certified numbers (exact rationals) as in this process; a worker killed during a run of
several files changes nothing."""

import json
import re
from fractions import Fraction

from locations import BENCHMARKS

from lang.parser import parse, parse_file
from tamp.api import prove
from tamp.certificate import check_certificate, decode
from tamp.certificate.writer import file_certificate
from tamp.commands.prove import prove_file
from tamp.executor import Executor
from tamp.probability import decide_program
from tamp.wmi import wmi
from tamp.wmi.jsonfmt import problem_from_dict

from .test_executor import kill_one_worker

# exact polynomial cells (uniform inputs): the cell integrals are the jobs
PROB_FILE = BENCHMARKS / "wmi" / "prop_noise.prob"
FILES = ["illustrative/ex1.prob", "illustrative/retry.prob", "dp/randResp.prob"]


def prob_numbers(r):
    return (r.verdict, r.cells, [(t.text, t.interval.lo, t.interval.hi) for t in r.terms])


def test_prob_cells_on_cluster_are_the_same_numbers(address):
    src = parse_file(str(PROB_FILE))
    alone = decide_program(src.programs[0], path=src.path, source=src.text)
    with Executor(scheduler=address) as ex:  # through tamp prove's entry point
        on_cluster = prove(str(PROB_FILE), executor=ex).programs[0]
        assert len(ex.timings) > 1  # the cells did go to the cluster, as several jobs
    assert prob_numbers(on_cluster) == prob_numbers(alone)
    assert alone.verdict == "proved"
    assert all(isinstance(lo, Fraction) for _t, lo, _hi in prob_numbers(alone)[2])


# two real variables, a Boolean, a query (the example of the WMI JSON format)
WMI_PROBLEM = {
    "domain": [["cx", "real", [0, 1]], ["cy", "real", [0, 1]], ["cA", "bool", None]],
    "formula": "(| (~ (var bool cA)) (<= (+ (var real cx) (var real cy)) (const real 1)))",
    "weights": "(* (ite (<= (+ (var real cx) (var real cy)) (const real 1)) (var real cx) (const real 1))"
    " (ite (var bool cA) (const real 1) (var real cy)))",
    "queries": [],
}


def test_wmi_cells_on_cluster_are_the_same_number(address):
    p = problem_from_dict(WMI_PROBLEM)
    alone = wmi(p.formula, p.weight, p.domain)
    with Executor(scheduler=address) as ex:
        on_cluster = wmi(p.formula, p.weight, p.domain, jobs=ex)
        assert len(ex.timings) == on_cluster.cells
    assert on_cluster.value == alone.value == Fraction(13, 24)
    assert on_cluster.cells == alone.cells


def multi_file(tmp_path):
    """One file of several programs (each with its own proof in the certificate)."""
    text = "\n".join((BENCHMARKS / n).read_text() for n in FILES)
    (tmp_path / "multi.prob").write_text(text)
    return text


def report_of(r):
    return (r.ok, r.reason, [(p.name, p.ok, p.obligations, p.reason, p.notes) for p in r.programs])


def test_check_proof_on_cluster_same_report(tmp_path, address):
    text = multi_file(tmp_path)
    raw = text.encode()
    cert = decode(json.loads(json.dumps(file_certificate(prove(text), raw))))
    assert len(cert.programs) == 3
    src = parse(text)
    alone = check_certificate(cert, src, raw)
    with Executor(scheduler=address) as ex:
        on_cluster = check_certificate(cert, src, raw, executor=ex)
        assert len(ex.timings) == 3  # one job per program
    assert report_of(on_cluster) == report_of(alone)
    assert alone.ok and alone.obligations > 3
    # a certificate rejected in the middle: the same first failure, whoever checks it
    cert.programs.append(cert.programs[1])
    alone, on_cluster = check_certificate(cert, src, raw), None
    with Executor(scheduler=address) as ex:
        on_cluster = check_certificate(cert, src, raw, executor=ex)
    assert not alone.ok and "certified twice" in alone.reason
    assert report_of(on_cluster) == report_of(alone)


OPTS = {
    "bound": None,
    "timeout": None,
    "program": None,
    "infer": False,
    "inputs": {},
    "verbose": 0,
    "dot": False,
    "text": True,
}


def outcome(out):
    """What a job of a several-file prove gives back, but the times."""
    return (out["code"], out["verdicts"], [re.sub(r"[0-9.]+ s\)", "_ s)", line.text) for line in out["lines"]])


class KillOnce(Executor):
    """On the cluster; kills a worker once the first job is back and others are under way."""

    killed = False

    def as_completed(self, deadline=None):
        for item in super().as_completed(deadline):
            if not self.killed and self._remote:
                kill_one_worker(self._client)
                self.killed = True
            yield item


def test_prove_several_files_on_cluster_with_a_killed_worker(address):
    paths = [str(BENCHMARKS / f) for f in FILES]
    alone = [outcome(prove_file(p, dict(OPTS, in_worker=False))) for p in paths]
    with KillOnce(scheduler=address) as ex:
        got = dict(ex.map(prove_file, [(i, (p, dict(OPTS, in_worker=True))) for i, p in enumerate(paths)]))
        assert ex.killed
    assert [outcome(got[i]) for i in range(len(paths))] == alone
    assert all(o[1] == ["proved"] for o in alone)

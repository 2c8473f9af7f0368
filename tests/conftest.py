"""Test-wide settings: internal errors surface as tracebacks so no test can hide one."""

import os

os.environ.setdefault("TAMP_DEBUG", "1")

# Property tests are about correctness, not speed: on a loaded machine hypothesis's timing health
# checks and per-example deadlines fail tests that are right. One profile for the whole suite.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("tamp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tamp")


# ---------------------------------------------------------------------------- the slow tests
# The README's test command (`pytest -n 2 -m "not slow"`) must finish in minutes on 2 cores;
# `.ci/run` then runs the tests marked slow. A test is slow when it says so
# (`@pytest.mark.slow`: soak, fuzz budgets, big benchmarks, timing tests) or when it is listed in
# tests/slow_tests.txt, which scripts/slow_tests.py writes from a recorded run
# (`pytest -n 2 --record-durations FILE`: one line per test phase, appended as tests finish).
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def _listed_slow() -> set[str]:
    if not SLOW_LIST.exists():
        return set()
    lines = (line.strip() for line in SLOW_LIST.read_text().splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def pytest_addoption(parser):
    parser.addoption(
        "--record-durations",
        metavar="FILE",
        help="append each test phase's duration to FILE (node id, phase, seconds, outcome; tab-separated)",
    )


def pytest_collection_modifyitems(config, items):
    slow = _listed_slow()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)


def pytest_runtest_logreport(report):
    path = getattr(pytest_runtest_logreport, "path", None)
    if path:
        with open(path, "a") as f:
            f.write(f"{report.nodeid}\t{report.when}\t{report.duration:.3f}\t{report.outcome}\n")


def pytest_configure(config):
    pytest_runtest_logreport.path = config.getoption("--record-durations")  # type: ignore[attr-defined]


@pytest.fixture
def without_linearity(monkeypatch):
    """Linearity of expectation (tamp.prover.linearity), tried before the per-iteration
    composition and expected failure, proves some Markov/Chebyshev claims itself; tests about
    those later engines turn it off (``pytestmark = pytest.mark.usefixtures("without_linearity")``)."""
    from tamp.prover import portfolio

    monkeypatch.setattr(portfolio.Linearity, "attempt", lambda self, problem: portfolio.Attempt())


@pytest.fixture
def without_top_union_bound(monkeypatch):
    """The union bound (tamp.prover.portfolio.UnionBound) gives each continuous draw its share of a
    symbolic bound (axioms' factor shares), so it proves some per-iteration claims (Gaussian looks
    summed over a loop) before the per-iteration composition is tried; tests about that
    composition turn the union bound off for the program itself, not for its iterations (whose
    programs are named ``NAME$iter``)."""
    from tamp.prover import portfolio

    attempt = portfolio.UnionBound.attempt

    def only_inside(self, problem):
        return attempt(self, problem) if "$" in problem.program.name else portfolio.Attempt()

    monkeypatch.setattr(portfolio.UnionBound, "attempt", only_inside)


@pytest.fixture(autouse=True)
def _fresh_z3_context():
    """Every test starts in a new default z3 context, as every `tamp prove` and `tamp.prove()`
    does (tamp.core.z3context): a test that calls an engine directly would otherwise build its
    terms in a context warmed by the tests its worker ran before, where z3's heuristics (and its
    nonlinear procedures' readiness to stop) differ from a fresh process. Seen: a 5 s query of the
    linearity method that z3 did not stop in a long-lived xdist worker (CI of 2c0cbbd8)."""
    from tamp.core.z3context import new_default_context

    new_default_context()
    yield

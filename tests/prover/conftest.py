"""The ``case_study`` marker: whole case-study proofs that take more than ~10 s each. They run
only with ``TAMP_SLOW_TESTS=1`` (the benchmark table covers them otherwise).

It is not the suite's ``slow`` marker: a test marked ``slow`` (or listed in tests/slow_tests.txt)
is left out of the README's command and run by ``.ci/run``'s second step, never skipped."""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "case_study: a long case-study proof (run with TAMP_SLOW_TESTS=1)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("TAMP_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow proof: set TAMP_SLOW_TESTS=1 to run")
    for item in items:
        if "case_study" in item.keywords:
            item.add_marker(skip)

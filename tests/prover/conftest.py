"""The ``slow`` marker: whole case-study proofs that take more than ~10 s each. They run only
with ``TAMP_SLOW_TESTS=1`` (the benchmark table covers them otherwise)."""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long proof (run with TAMP_SLOW_TESTS=1)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("TAMP_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow proof: set TAMP_SLOW_TESTS=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)

"""Fixtures of the causal tests."""

import pytest

from .helpers import _certify


@pytest.fixture
def certify():
    return _certify()

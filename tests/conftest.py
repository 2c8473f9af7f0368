"""Test-wide settings: internal errors surface as tracebacks so no test can hide one."""

import os

os.environ.setdefault("TAMP_DEBUG", "1")

# Property tests are about correctness, not speed: on a loaded machine hypothesis's timing health
# checks and per-example deadlines fail tests that are right. One profile for the whole suite.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("tamp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tamp")

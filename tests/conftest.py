"""Test-wide settings: internal errors surface as tracebacks so no test can hide one."""

import os

os.environ.setdefault("TAMP_DEBUG", "1")

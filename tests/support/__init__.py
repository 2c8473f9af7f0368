"""Helpers shared by several test folders (importable as ``support``: pytest puts ``tests/``,
the root conftest's folder, on ``sys.path``)."""

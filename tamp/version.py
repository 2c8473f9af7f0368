"""tamp's version (also the package's, see ``[tool.setuptools.dynamic]`` in pyproject.toml)."""

__version__ = "0.1.0"

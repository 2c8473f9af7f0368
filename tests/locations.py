"""Where the tests find the repository's files: the one place that knows the layout
(``from locations import BENCHMARKS``, rather than counting parent folders in every test).
Importable from every test module because pytest puts this folder, the root conftest's, on
``sys.path``."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "benchmarks"

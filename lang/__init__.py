"""The `.prob` language front end: AST, parser, type checker, printer.

Modules: :mod:`lang.ast` (syntax tree), :mod:`lang.parser` (``parse``,
``parse_file``, ``parse_expr``), :mod:`lang.typecheck` (``check_file``,
``check_program``), :mod:`lang.printer` (``print_file``, ``print_program``,
``print_expr``, ``print_stmt``), :mod:`lang.errors` (``TampError`` and
subclasses), :mod:`lang.speckind` (``spec_kind``), :mod:`lang.walk` (the one walker and
transformer over the AST: ``Walker``, ``Transformer``, ``substitute``, ``free_vars``),
:mod:`lang.ops` (the operators' meaning, defined once), :mod:`lang.evaluate` (exact
evaluation), :mod:`lang.fairness` (the fairness/parity sugar expanded), :mod:`lang.loader`
(``load``: read, parse and type-check a file, the one way every command does it).
"""

from .loader import load  # noqa: F401
from .speckind import spec_kind  # noqa: F401

__all__ = ["load", "spec_kind"]

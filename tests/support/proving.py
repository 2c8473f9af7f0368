"""Prove the first program of a file in this process, as the engine-level tests do (no
certificate, no command line): the one helper those tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Union


def prove_path(path: Union[str, Path], timeout: float = 60):
    """``tamp.prover.prove_program`` on the first program of ``path``, with the file's text for
    its messages."""
    from lang.parser import parse_file
    from tamp.prover import prove_program

    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=timeout)

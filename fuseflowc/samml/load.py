"""Reading and writing SAMML files in one call (what the opt and simulate commands need)."""

from __future__ import annotations

from ..files import read_source, write_output
from .ir import Module
from .parser import parse_module
from .printer import print_module
from .verify import verify


def load_module(path: str, check: bool = True) -> Module:
    """Read `path` ('-' = stdin), parse it and (unless `check` is False) verify it.
    Raises UserError with located diagnostics."""
    module = parse_module(read_source(path))
    if check:
        verify(module)
    return module


def save_module(module: Module, path: str | None) -> None:
    """Print `module` in canonical form to `path` atomically (None or '-' = stdout)."""
    write_output(path, print_module(module))

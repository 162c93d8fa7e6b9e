"""Loading a program the way every command does: read, parse, apply overrides, check."""

from __future__ import annotations

import sys
from dataclasses import replace

from ..diagnostics import Source
from ..files import read_source
from . import ast
from .checker import check
from .parser import parse_directives, parse_program


def apply_overrides(program: ast.Program, overrides: list[ast.Directive]) -> ast.Program:
    """Replace the program's directives by command-line ones of the same kind and target.

    `order S`, `parallelize S: i`, `block T` replace the program's directive for the same
    statement (and index) or tensor, `decompose A` the program's decomposition of A; any `fuse`
    override replaces all of the program's fusion regions (regions partition statements, so
    mixing the two sets would be ambiguous); `output` adds outputs.
    """
    if not overrides:
        return program

    def key(d: ast.Directive):
        if isinstance(d, ast.Order):
            return ("order", d.statement)
        if isinstance(d, ast.Parallelize):
            return ("par", d.statement, d.index)
        if isinstance(d, ast.Block):
            return ("block", d.tensor)
        if isinstance(d, ast.Fuse):
            return ("fuse",)
        if isinstance(d, ast.Decompose):
            return ("decompose", d.tensor)
        if isinstance(d, ast.Schedule):
            return ("schedule", d.var)
        return ("output", id(d))

    replaced = {key(d) for d in overrides}
    kept = [d for d in program.directives if key(d) not in replaced]
    return replace(program, directives=kept + list(overrides))


def load_program(path: str, schedule: tuple[str, ...] = (), unfused: bool = False) -> ast.Program:
    """Read, parse and check the program at `path` ('-' = stdin); print its warnings on stderr
    (a command loading the user's program: library callers use `program_from_source`).

    `schedule` holds directive texts from the command line (e.g. 'order y: i -> j') that override
    the program's; `unfused` drops every fusion region.
    """
    program = program_from_source(read_source(path), schedule, unfused)
    report_warnings(program)
    return program


def report_warnings(program: ast.Program, stream=None) -> None:
    """Print the checked program's warnings (`file:line:col: warning: ...` with the source line
    and a caret) on `stream` (default stderr)."""
    for w in program.warnings:
        print(w.format(), file=stream if stream is not None else sys.stderr)


def program_from_source(src: Source, schedule: tuple[str, ...] = (), unfused: bool = False
                        ) -> ast.Program:
    """`load_program` for a source already read (e.g. a command that sniffs its input first)."""
    program = parse_program(src)
    overrides: list[ast.Directive] = []
    for k, text in enumerate(schedule):
        overrides.extend(parse_directives(Source(f"<--schedule {k + 1}>", text)))
    program = apply_overrides(program, overrides)
    if unfused:
        program = replace(program, directives=[d for d in program.directives
                                               if not isinstance(d, ast.Fuse)])
    return check(program)

"""`fuseflowc lower`: compile a program's fusion regions to SAMML dataflow graphs."""

from __future__ import annotations

import os

import click

from ..diagnostics import UserError
from .options import output_option, schedule_option, unfused_option


def _is_fused_ir(text: str) -> bool:
    """Fused IR has `region NAME ... {` lines; programs never do."""
    import re
    return re.search(r"^\s*region\s+\S+.*\{\s*$", text, re.M) is not None


def _program_from_source(src, schedule, unfused):
    """load_program for a program already read (stdin)."""
    from dataclasses import replace

    from ..diagnostics import Source
    from ..lang import ast
    from ..lang.checker import check
    from ..lang.load import apply_overrides
    from ..lang.parser import parse_directives, parse_program
    p = parse_program(src)
    overrides = []
    for k, text in enumerate(schedule):
        overrides.extend(parse_directives(Source(f"<--schedule {k + 1}>", text)))
    p = apply_overrides(p, overrides)
    if unfused:
        p = replace(p, directives=[d for d in p.directives if not isinstance(d, ast.Fuse)])
    return check(p)


@click.command("lower")
@click.argument("program", metavar="PROGRAM", default="-")
@schedule_option
@unfused_option
@output_option
@click.option("--dump-table", is_flag=True,
              help="Print each statement's fusion table (rows: indices in the dataflow order, "
                   "then values; columns: tensor views and intermediates) instead of the graph.")
def cmd(program: str, schedule: tuple[str, ...], unfused: bool, output: str | None,
        dump_table: bool) -> None:
    """Lower PROGRAM (fused IR from `fuseflowc fuse`, or a .ff program; - for stdin) to a
    SAMML module.

    Every fusion region becomes one dataflow graph with a factored iteration space (FuseFlow
    Sec. 6): reductions sit where they belong, sparse accumulators feed later joiners. A
    statement in no region is a graph of its own; graphs run in order, intermediates crossing
    regions are written in their declared format and read back.

    \b
    Example:
      fuseflowc fuse ir_examples/kernels/spmv.ff | fuseflowc lower \\
        | fuseflowc simulate - --data d/ --check
      fuseflowc lower ir_examples/kernels/spmv.ff -o spmv.samml
      fuseflowc lower ir_examples/kernels/nested_matmul_fused.ff --dump-table
      fuseflowc lower model.ff -s 'order y: j -> i' -o y.samml
    """
    from ..files import write_output
    from ..lang.load import load_program
    from ..lower.driver import lower_program
    from ..lower.dump import dump_tables
    from ..samml.printer import print_module
    from ..samml.verify import verify

    from ..files import read_source
    from ..lower.driver import lower_fused

    src = read_source(program)
    base = os.path.dirname(os.path.abspath(output)) if output not in (None, "-") \
        else os.getcwd()
    if _is_fused_ir(src.text):
        from ..fuse.parser import parse_fused
        if schedule or unfused:
            raise UserError("--schedule and --unfused apply to programs; this input is fused IR "
                            "(schedule the program given to `fuseflowc fuse` instead)")
        fp = parse_fused(src)
        source = fp.source
        if source is not None and not os.path.isabs(source) and base != os.getcwd():
            source = os.path.relpath(os.path.abspath(source), base)
        module, analyses = lower_fused(fp, source)
    else:
        p = load_program(program, schedule, unfused) if program != "-" else \
            _program_from_source(src, schedule, unfused)
        source = None
        if program != "-":
            source = os.path.relpath(os.path.abspath(program), base)
        module, analyses = lower_program(p, source)
    if dump_table:
        write_output(output, dump_tables(analyses))
        return
    verify(module)
    write_output(output, print_module(module))

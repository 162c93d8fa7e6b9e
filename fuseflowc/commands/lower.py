"""`fuseflowc lower`: compile a program's fusion regions to SAMML dataflow graphs."""

from __future__ import annotations

import os

import click

from .options import output_option, schedule_option, unfused_option


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
    """Lower PROGRAM (a .ff file, or - for stdin) to a SAMML module.

    Every fusion region becomes one dataflow graph with a factored iteration space (FuseFlow
    Sec. 6): reductions sit where they belong, sparse accumulators feed later joiners. A
    statement in no region is a graph of its own; graphs run in order, intermediates crossing
    regions are written in their declared format and read back.

    \b
    Example:
      fuseflowc lower ir_examples/kernels/spmv.ff | fuseflowc simulate --data d/ --check
      fuseflowc lower ir_examples/kernels/nested_matmul_fused.ff --dump-table
      fuseflowc lower model.ff -s 'order y: j -> i' -o y.samml
    """
    from ..files import write_output
    from ..lang.load import load_program
    from ..lower.driver import lower_program
    from ..lower.dump import dump_tables
    from ..samml.printer import print_module
    from ..samml.verify import verify

    p = load_program(program, schedule, unfused)
    source = None
    if program != "-":
        base = os.path.dirname(os.path.abspath(output)) if output not in (None, "-") \
            else os.getcwd()
        source = os.path.relpath(os.path.abspath(program), base)
    module, analyses = lower_program(p, source)
    if dump_table:
        write_output(output, dump_tables(analyses))
        return
    verify(module)
    write_output(output, print_module(module))

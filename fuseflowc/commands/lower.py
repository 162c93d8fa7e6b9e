"""`fuseflowc lower`: compile fused IR (from `fuseflowc fuse`) to SAMML dataflow graphs."""

from __future__ import annotations

import click

from .options import output_option


@click.command("lower")
@click.argument("fused", metavar="FUSED", default="-")
@output_option
@click.option("-O0", "--no-opt", "no_opt", is_flag=True,
              help="Write the graphs as lowered, without the default optimization pipeline "
                   "(then `fuseflowc opt -p ...` runs exactly the passes named).")
@click.option("--dump-table", is_flag=True,
              help="Print each statement's fusion table (rows: indices in the dataflow order, "
                   "then values; columns: tensor views and intermediates) instead of the graph.")
def cmd(fused: str, output: str | None, no_opt: bool, dump_table: bool) -> None:
    """Lower FUSED (the fused einsum IR written by `fuseflowc fuse`; - for stdin) to a SAMML
    module. A language program is not accepted: fuse it first (schedule overrides such as
    --schedule and --unfused are options of `fuse`).

    Every fusion region becomes one dataflow graph with a factored iteration space (FuseFlow
    Sec. 6): reductions sit where they belong, sparse accumulators feed later joiners. A
    statement in no region is a graph of its own; graphs run in order, intermediates crossing
    regions are written in their declared format and read back.

    The module then goes through the default optimization pipeline, the one the project
    compiles with (docs/opt.md, "The default pipeline"): locate (random access into dense
    levels instead of scanning them), schedule (the program's parallelize directives), cleanup
    (cse, dce); a note on stderr names it. -O0 writes the graphs as lowered.

    \b
    Example:
      fuseflowc fuse ir_examples/kernels/spmv.ff | fuseflowc lower \\
        | fuseflowc simulate - --data d/ --check
      fuseflowc fuse ir_examples/kernels/spmv.ff -o spmv.fused
      fuseflowc lower spmv.fused -o spmv.samml
      fuseflowc lower spmv.fused -O0 | fuseflowc opt -p 'parallelize{index=i,factor=4}'
      fuseflowc fuse ir_examples/kernels/nested_matmul_fused.ff | fuseflowc lower --dump-table
      fuseflowc fuse model.ff -s 'order y: j -> i' | fuseflowc lower -o y.samml
    """
    from .. import pipeline
    from ..lower.dump import dump_tables
    from ..opt.pipeline import DEFAULT_PIPELINE
    from ..outputs import Outputs
    from ..samml.printer import print_module

    out = Outputs(fused)
    dest = out.file(output)
    inp = pipeline.load(fused, kind="fused")  # a program or SAMML module: says what to run
    from ..files import rebase_recorded
    if dump_table:
        inp.ir.bindings = {}   # a table per graph: rebound iterations are lowered too
    passes = None if (no_opt or dump_table) else DEFAULT_PIPELINE
    # the lowered module is verified, then the optimized one: the default pipeline's passes
    # are not checked one by one (`lower -O0 | opt -p ...` is, after every pass)
    compiled = pipeline.compile(inp, pipeline.CompileOptions(verify=not dump_table,
                                                             passes=passes, verify_each=False,
                                                             verify_after=not dump_table),
                                source=rebase_recorded(inp.ir.source, fused, output))
    if dump_table:
        text = dump_tables(compiled.analyses)
    else:
        text = print_module(compiled.module)
    with out:
        dest.write(text)
    for note in getattr(compiled.module, "notes", ()):
        click.echo(f"lower: note: {note}", err=True)
    if passes is not None:
        click.echo(f"lower: note: optimized with the default pipeline `opt -p {passes}` "
                   f"(-O0: the graphs as lowered)", err=True)


"""`fuseflowc opt`: run a pipeline of passes over a SAMML module."""

from __future__ import annotations

import click

from .options import output_option


def _list_passes(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ..opt import PASSES
    from ..opt.base import describe_passes
    click.echo(f"passes ({len(PASSES)}):\n" + describe_passes())
    ctx.exit(0)


@click.command("opt")
@click.argument("graph", default="-", metavar="GRAPH")
@click.option("-p", "--passes", "pipeline_text", default="", metavar="PIPELINE",
              help="Passes to run, in order: 'cse,dce' or 'pass{option=value ...}' "
                   "(see --list-passes). Empty: verify and print only.")
@output_option
@click.option("--no-verify", is_flag=True,
              help="Do not verify the input or the module after each pass.")
@click.option("--print-after-all", is_flag=True,
              help="Print the module on stderr after every pass, under a header naming it.")
@click.option("--time-passes", is_flag=True,
              help="Print a table of each pass's wall time on stderr.")
@click.option("--list-passes", is_flag=True, is_eager=True, expose_value=False,
              callback=_list_passes, help="List the passes and their options, then exit.")
def cmd(graph: str, pipeline_text: str, output: str | None, no_verify: bool,
        print_after_all: bool, time_passes: bool) -> None:
    """Run the passes of PIPELINE over the SAMML module GRAPH (a file, or - for stdin) and
    print the result.

    The module is verified when read and after every pass (unless --no-verify); a pass that
    leaves it invalid is an error naming the pass. An unknown pass or option, or an ill-typed
    option value, is a usage error (exit 2).

    The pass `schedule` applies the program's `parallelize` directives recorded in the module
    (`schedule parallelize {...}` lines); an explicit parallelize{index=X} in the same pipeline
    replaces the directives for X. Without `schedule` the other directives are left alone.

    \b
    Examples:
      fuseflowc fuse ir_examples/kernels/spmv.ff | fuseflowc lower | fuseflowc opt -p cleanup
      fuseflowc opt g.samml -p 'parallelize{index=i,factor=4},parallelize{index=j,factor=4}'
      fuseflowc fuse prog.ff | fuseflowc lower | fuseflowc opt -p schedule,cleanup
      fuseflowc opt g.samml -p 'schedule,parallelize{index=i,factor=8}'
      fuseflowc opt g.samml -p cse,dce -o g.opt.samml --time-passes
      fuseflowc opt g.samml -p 'dce{decls=false}' --print-after-all
      fuseflowc opt --list-passes
    """
    from .. import pipeline
    from ..opt import PipelineError, parse_pipeline
    from ..outputs import Outputs
    from ..samml.printer import print_module

    try:
        parse_pipeline(pipeline_text)  # a usage error (exit 2), before any file is touched
    except PipelineError as e:
        raise click.BadParameter(str(e), param_hint="'-p' / '--passes'") from None
    out = Outputs(graph)
    dest = out.file(output)

    def after(p, m) -> None:
        click.echo(f"// ----- after {p.spelling()} -----", err=True)
        click.echo(print_module(m), err=True, nl=False)

    options = pipeline.CompileOptions(verify=not no_verify, passes=pipeline_text,
                                      verify_each=not no_verify)
    compiled = pipeline.compile(pipeline.load(graph, kind="samml"), options,
                                after=after if print_after_all else None)
    from ..files import rebase_recorded
    # the recorded source, relative to where the module goes (docs/samml.md, "Recorded paths")
    compiled.module.source = rebase_recorded(compiled.module.source, graph, output)
    with out:
        dest.write(print_module(compiled.module))
    if time_passes:
        click.echo(_timing_table(compiled.timings), err=True)


def _timing_table(timings) -> str:
    """Pass name and wall time (ms), one row each, and the total."""
    width = max([len(t.name) for t in timings] + [5])
    rows = [f"{'pass':<{width}}  {'ms':>9}"]
    rows += [f"{t.name:<{width}}  {t.seconds * 1e3:>9.3f}" for t in timings]
    rows.append(f"{'total':<{width}}  {sum(t.seconds for t in timings) * 1e3:>9.3f}")
    return "\n".join(rows)

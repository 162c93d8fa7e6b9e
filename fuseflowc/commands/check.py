"""`fuseflowc check`: parse and check a program, print it normalized."""

from __future__ import annotations

import click

from .options import output_option, schedule_option, unfused_option


@click.command("check")
@click.argument("program", metavar="PROGRAM", default="-")
@schedule_option
@unfused_option
@output_option
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit status tells.")
def cmd(program: str, schedule: tuple[str, ...], unfused: bool, output: str | None,
        quiet: bool) -> None:
    """Check PROGRAM (a .ff file, or - for stdin) and print it normalized.

    The printed program has every implicit summation made explicit, so you can see where each
    sum went: `y[i] = A[i,j]*x[j] + b[i]` prints as `y[i] = sum[j](A[i,j] * x[j]) + b[i]`.
    Errors are reported as FILE:LINE:COL: error: MESSAGE with the source line; exit status 1.

    \b
    Example:
      fuseflowc check ir_examples/kernels/spmv.ff
      fuseflowc check model.ff -s 'order y: j -> i'
    """
    from ..lang.load import load_program
    from ..lang.printer import program_str
    from ..outputs import Outputs

    out = Outputs(program)
    dest = out.file(output)
    p = load_program(program, schedule, unfused)
    if not quiet:
        with out:
            dest.write(program_str(p))

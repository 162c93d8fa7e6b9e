"""`fuseflowc run`: evaluate a program with the reference evaluator (numpy/scipy)."""

from __future__ import annotations

import click

from .options import (
    LegacyJsonCommand,
    json_option,
    json_out_option,
    schedule_option,
    unfused_option,
)

STYLES = ("auto", "npy", "npz", "sam")


@click.command("run", cls=LegacyJsonCommand)
@click.argument("program", metavar="PROGRAM")
@click.option("--data", "data", metavar="DIR", required=True,
              help="Directory holding one file per input tensor (see docs/data.md).")
@click.option("-o", "--output", "output", metavar="OUTDIR", default=None,
              help="Write the output tensors into OUTDIR: a new or empty directory, or one "
                   "fuseflowc wrote (its files are replaced; see docs/outputs.md).")
@schedule_option
@unfused_option
@click.option("--format", "style", type=click.Choice(STYLES), default="auto", show_default=True,
              help="File style of written tensors: auto (dense -> .npy, sparse -> .npz), npy, "
                   "npz, or sam (SAM level files).")
@click.option("--all", "write_all", is_flag=True,
              help="Write every assigned tensor (intermediates too), not only the outputs.")
@json_option
@json_out_option
def cmd(program: str, data: str, output: str | None, schedule: tuple[str, ...], unfused: bool,
        style: str, write_all: bool, as_json: bool, json_out: str | None) -> None:
    """Evaluate PROGRAM on the input tensors in --data with the reference evaluator.

    This is the project's correctness oracle: numpy/scipy, following the sparsity semantics of
    docs/language.md exactly, independent of the compiler. Every statement's result is stored
    in its tensor's declared format, and later statements read it that way.

    The outputs (assigned tensors no statement reads, plus those named by `output`) are written
    into OUTDIR, one file per tensor; `--all` writes every assigned tensor. A summary table
    (tensor, shape, format, stored entries, density, wall time per statement) goes to stderr;
    `--json` prints it as JSON on stdout instead, `--json-out FILE` also writes the JSON to
    FILE. Without -o only the summary is printed. Every output is checked before the program
    runs, and all are written, or none. Fusion, order and parallelization do not change the
    result (--schedule and --unfused are accepted so that one command line serves every
    variant); a `block` size does, as blocked tensors store whole blocks.

    \b
    Example:
      fuseflowc gen-data ir_examples/kernels/spmv.ff --size I=100 --size J=80 -o data
      fuseflowc run ir_examples/kernels/spmv.ff --data data -o result
      fuseflowc run ir_examples/models/gcn/gcn_full.ff --data out/demo/data --json
    """
    import time

    from ..data.io import load_inputs, save_tensors
    from ..lang.load import load_program
    from ..outputs import Outputs
    from ..reference.summary import render_table, summary_json

    out = Outputs(program, data)
    out_dir = out.directory(output) if output is not None else None
    json_stdout = out.file("-", "--json") if as_json else None
    json_file = out.file(json_out, "--json-out") if json_out is not None else None
    p = load_program(program, schedule, unfused)
    declared = {d.name: d.size for d in p.dims if d.size is not None}
    t0 = time.perf_counter()
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    inputs, sizes = load_inputs(data, specs, declared)
    from ..lang.decompose import require_sizes
    require_sizes(p, sizes)     # a decomposition's block size must divide the data's dims
    load_seconds = time.perf_counter() - t0
    rows, results = _evaluate(p, inputs)
    outputs = set(p.outputs)
    written = {n: t for n, t in results.items() if write_all or n in outputs}
    with out:
        if out_dir is not None:
            save_tensors(out_dir.path(), written, style)
        total = time.perf_counter() - t0
        text_json = summary_json(program, sizes, rows, load_seconds, total, output,
                                 sorted(written))
        for dest in (json_stdout, json_file):
            if dest is not None:
                dest.write(text_json)
    if not as_json:
        click.echo(render_table(rows, load_seconds, total, output, sorted(written)), err=True)


def _evaluate(p, inputs: dict) -> tuple[list, dict]:
    """(the summary's rows: the inputs, then each statement's tensor as it is computed; every
    tensor computed, by name)."""
    from ..reference import evaluate_statements
    from ..reference.summary import tensor_row
    outputs = set(p.outputs)
    rows = [tensor_row(n, inputs[n], "input", None) for n in p.inputs]
    results = {}
    for r in evaluate_statements(p, inputs):
        results[r.name] = r.tensor
        rows.append(tensor_row(r.name, r.tensor, "output" if r.name in outputs else
                               "intermediate", r.seconds))
    return rows, results

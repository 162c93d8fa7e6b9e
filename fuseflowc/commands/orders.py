"""`fuseflowc orders`: count and list the valid global dataflow orders of each region."""

from __future__ import annotations

import click

from .options import (
    free_input_order_option,
    inline_widened_option,
    json_option,
    json_out_option,
    output_option,
    schedule_option,
    unfused_option,
)


@click.command("orders")
@click.argument("program", metavar="PROGRAM", default="-")
@schedule_option
@unfused_option
@click.option("--region", "region", default=None, metavar="R",
              help="Only region R (a fusion region or statement name).")
@click.option("--list", "list_n", type=click.IntRange(min=0), default=0, metavar="N",
              help="Also list the first N orders of the enumeration (numbered as --order K).")
@json_option
@json_out_option
@output_option
@inline_widened_option
@free_input_order_option
def cmd(program: str, schedule: tuple[str, ...], unfused: bool, region: str | None,
        list_n: int, as_json: bool, json_out: str | None, output: str | None,
        inline_widened: bool, free_input_order: bool) -> None:
    """Count the valid dataflow orders of each region of PROGRAM, exactly.

    A valid order is a linear extension of the region's partial order graph (see `fuseflowc
    fuse`); counts come from a dynamic program over the POG, never from enumerating. The
    enumeration is lexicographic in the region's canonical index order (the `index` lines of
    the fused IR): order 0 always takes the first free index. `--list N` prints orders 0..N-1;
    `fuseflowc fuse --order K` compiles the K-th. `--free-input-order` counts the larger
    space in which tensors read from memory do not constrain the order (discordant ones are
    then read through permuted copies). The table goes to stdout (or -o FILE); `--json`
    writes JSON ({"regions": [...]}) instead, `--json-out FILE` also writes it to FILE.

    \b
    Examples:
      fuseflowc orders ir_examples/models/graphsage/graphsage_full.ff
      fuseflowc orders ir_examples/models/gcn/gcn_partial.ff --region layer1 --list 5
      fuseflowc orders prog.ff --unfused --json
      fuseflowc orders ir_examples/kernels/nested_matmul_sweep.ff --free-input-order --list 12
    """
    import json

    from .. import pipeline
    from ..outputs import Outputs

    out = Outputs(program)
    dest = out.file(output)
    json_dest = out.file(json_out, "--json-out") if json_out is not None else None
    options = pipeline.CompileOptions(schedule=schedule, unfused=unfused,
                                      inline_widened=inline_widened,
                                      free_input_order=free_input_order)
    from ..lang.load import report_warnings
    prog = pipeline.load(program, options, "program").ir
    report_warnings(prog)
    rows = pipeline.region_orders(prog, options,
                                  None if program == "-" else program, region, list_n)
    text_json = json.dumps({"regions": rows}, indent=2) + "\n"
    with out:
        dest.write(text_json if as_json else format_table(rows))
        if json_dest is not None:
            json_dest.write(text_json)


def format_table(rows: list[dict]) -> str:
    """A plain-text table of per-region order counts, then the listed orders (each renamed
    index with the program's name(s) for it: `u0(j)`)."""
    from ..names import shown
    head = ("region", "indices", "edges", "orders", "sci")
    body = [(r["region"], str(r["indices"]), str(r["edges"]), str(r["orders"]), r["sci"])
            for r in rows]
    widths = [max(len(x[k]) for x in [head, *body]) for k in range(len(head))]
    lines = ["  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in
                       enumerate(zip(row, widths))).rstrip() for row in [head, *body]]
    for r in rows:
        if r["listed"]:
            names = r["source_names"]
            lines.append("")
            lines.append(f"{r['region']}: index order "
                         + " ".join(shown(x, names) for x in r["index_order"]))
            for k, o in enumerate(r["listed"]):
                lines.append(f"  {k}: {' -> '.join(shown(x, names) for x in o)}")
    return "\n".join(lines) + "\n"

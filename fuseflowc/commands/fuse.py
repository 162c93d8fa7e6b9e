"""`fuseflowc fuse`: cross-expression fusion of a program into the fused einsum IR."""

from __future__ import annotations

import re

import click

from ..diagnostics import Loc, UserError
from .options import (
    ORDER,
    free_input_order_option,
    inline_widened_option,
    output_option,
    schedule_option,
    unfused_option,
)


@click.command("fuse")
@click.argument("program", metavar="PROGRAM", default="-")
@schedule_option
@unfused_option
@output_option
@click.option("--order", "order", type=ORDER, default=None, metavar="K|paper",
              help="Pick the K-th (0-based) valid dataflow order of the enumeration that "
                   "`fuseflowc orders --list` prints (default 0), or `paper`: the order "
                   "FuseFlow's compiler picks (its first topological sort, free indices taken "
                   "in the order its views create them; docs/fused-ir.md).")
@click.option("--region", "region", default=None, metavar="R",
              help="Apply --order only to region R (a fusion region or statement name).")
@inline_widened_option
@free_input_order_option
@click.option("--share", "share", is_flag=True,
              help="Store an intermediate that several statements of its region read once, "
                   "and read it back, instead of recomputing it per consumer (the region "
                   "splits there).")
@click.option("--verify-ir", "verify_ir", is_flag=True,
              help="PROGRAM is fused IR text (e.g. hand-edited): parse, verify and reprint it.")
def cmd(program: str, schedule: tuple[str, ...], unfused: bool, output: str | None,
        order: int | None, region: str | None, inline_widened: bool, free_input_order: bool,
        share: bool, verify_ir: bool) -> None:
    """Fuse each fusion region of PROGRAM (a .ff file, or - for stdin) into fused einsums.

    Per region: reduction indices are renamed (u0, u1, ...), intermediates inlined into their
    consumers, every tensor use becomes a view with its mode order, and a partial order graph
    (POG) of index orderings is built; its edges remember why they exist (a format, an `order`
    directive, an output format). Conflicting views get a permuted copy (e.g. B__T); an
    intermediate whose producer and consumer orders conflict is materialized. The global order
    is the K-th valid order (`--order K`, default 0), or FuseFlow's own (`--order paper`). With
    --free-input-order, tensors read from memory constrain nothing and discordant views read
    permuted copies (B__T) instead. Statements in no region become one unfused region each.
    The IR goes to stdout (or -o FILE) and feeds `fuseflowc lower`.

    \b
    Examples:
      fuseflowc fuse ir_examples/kernels/fig7_pair.ff
      fuseflowc fuse ir_examples/models/graphsage/graphsage_full.ff --order 2
      fuseflowc fuse prog.ff -s 'order y: j -> i' | fuseflowc lower
      fuseflowc fuse ir_examples/kernels/nested_matmul_sweep.ff --free-input-order --order 5
      fuseflowc fuse ir_examples/models/gpt3_mini/gpt3_mini_partial.ff --inline-widened --order paper
      fuseflowc fuse ir_examples/models/gpt3_mini/gpt3_mini_full.ff --share
      fuseflowc fuse --verify-ir edited.fused
    """
    from .. import pipeline
    from ..files import read_source
    from ..fuse.printer import fused_str
    from ..outputs import Outputs

    out = Outputs(program)
    dest = out.file(output)
    from ..files import rebase_recorded
    if verify_ir:
        from ..fuse.parser import parse_fused
        fused = parse_fused(read_source(program))
        fused.source = rebase_recorded(fused.source, program, output)
        text = fused_str(fused)
        with out:
            dest.write(text)
        return
    from ..lang.load import report_warnings
    options = pipeline.CompileOptions(schedule=schedule, unfused=unfused, order=order,
                                      order_region=region, inline_widened=inline_widened,
                                      free_input_order=free_input_order, share=share)
    p = pipeline.load(program, options, "program").ir
    report_warnings(p)
    # the program's path, relative to where the fused IR goes (docs/samml.md, "Recorded paths")
    source = None if program == "-" else rebase_recorded(program, "-", output)
    try:
        fused = pipeline.fuse(p, options, source)
    except UserError as e:
        raise _note_planned_flags(e, p, {"--inline-widened": inline_widened,
                                         "--free-input-order": free_input_order,
                                         "--share": share}) from None
    with out:
        dest.write(fused_str(fused))
    _note_splits(fused, inline_widened)
    _note_rebound(fused)


#: The planned program's header line naming the fuse flags it was planned with
#: (commands.plan._header writes it: `# compile: fuseflowc fuse PROG --share ... | ...`).
_PLANNED = re.compile(r"^#\s*compile:\s*fuseflowc fuse PROG((?:\s+--[a-z-]+)*)\s*\|", re.M)


def _note_planned_flags(e: UserError, program, given: dict[str, bool]) -> UserError:
    """A fusion error of a program whose `# compile:` header (a `fuseflowc plan` output) names
    fuse flags the command line lacks: the plan is valid only with them, so say so."""
    src = getattr(program, "source", None)
    m = _PLANNED.search(src.text) if src is not None else None
    if m is None:
        return e
    flags = m.group(1).split()
    missing = [f for f in flags if not given.get(f, True)]
    if not missing:
        return e
    line = src.text.count("\n", 0, m.start()) + 1
    return e.note(f"the header says this program was planned with `fuseflowc fuse PROG "
                  f"{' '.join(flags)}`; run it with those flags ({', '.join(missing)} "
                  "missing)", Loc(src, line, 1, len(m.group(0).rstrip("|").rstrip())))


def _note_rebound(fused) -> None:
    """Say which iterations of each reused loop were fused once (iteration 0 rebound) and
    which were fused again because they differ from iteration 0."""
    for var, its in fused.reuse:
        later = [k for k in range(1, len(its)) if its[k]]
        bound = [k for k in later if (var, k) in fused.bindings]
        if not later:
            continue
        text = f"note: reused loop {var}: "
        if bound:
            text += f"{_ranges(bound)} {'is' if len(bound) == 1 else 'are'} iteration 0 " \
                    f"rebound (fused once: `reuse {var} K = 0 {{...}}` lines)"
        other = [k for k in later if k not in bound]
        if other:
            text += ("; " if bound else "") + (
                f"{_ranges(other)} {'differs' if len(other) == 1 else 'differ'} from "
                f"iteration 0 (other statements, formats or directives) and "
                f"{'is' if len(other) == 1 else 'are'} fused in full")
        click.echo(text, err=True)


def _ranges(ks: list[int]) -> str:
    """`iteration 3`, `iterations 1 to 11`, `iterations 1, 2, 5`."""
    if len(ks) == 1:
        return f"iteration {ks[0]}"
    if ks == list(range(ks[0], ks[-1] + 1)):
        return f"iterations {ks[0]} to {ks[-1]}"
    return "iterations " + ", ".join(map(str, ks))


def _note_splits(fused, inline_widened: bool) -> None:
    """Tell the user when a fusion region was split into several graphs (never silently), and
    why: which tensor had to be stored and read back, and whose format or order forced it, at
    the statement that computes it."""
    from ..diagnostics import Diagnostic
    parts: dict[str, list] = {}
    for r in fused.regions:
        if r.group is not None:
            parts.setdefault(r.group, []).append(r)
    for group, regions in parts.items():
        if len(regions) > 1 and regions[0].bound is None:   # (a rebound layer: said once)
            stored = sorted({t for r in regions for t in r.materialized})
            whys = regions[0].split_why
            declared = any("declared format" in text for text, _ in whys)
            hint = ("; --inline-widened keeps intermediates whose declared formats store "
                    "entries their computed patterns lack in the stream"
                    if declared and not inline_widened else "")
            click.echo(f"note: fusion region {group} is split into {len(regions)} graphs: "
                       f"{', '.join(stored)} must be stored and read back{hint}", err=True)
            for text, loc in whys[:NOTES_PER_SPLIT]:
                click.echo(Diagnostic(text, loc, "note").format(), err=True)
            if len(whys) > NOTES_PER_SPLIT:
                click.echo(f"note: and {len(whys) - NOTES_PER_SPLIT} more of region {group}'s "
                           f"stored intermediates", err=True)


#: The located notes shown per split region (a GPT-3 layer stores 28 intermediates).
NOTES_PER_SPLIT = 4

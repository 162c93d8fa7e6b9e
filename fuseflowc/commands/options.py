"""Click options shared by the commands that read a program."""

from __future__ import annotations

import click

schedule_option = click.option(
    "--schedule", "-s", "schedule", multiple=True, metavar="DIRECTIVE",
    help="A schedule directive overriding the program's, e.g. 'order y: j -> i', "
         "'parallelize y: i by 4', 'block M: 16', 'fuse all: a, b' (repeatable).")
unfused_option = click.option(
    "--unfused", is_flag=True, help="Ignore the program's fusion regions (every statement alone).")
output_option = click.option(
    "-o", "--output", "output", metavar="FILE", default=None,
    help="Write the result to FILE (atomically) instead of stdout.")

inline_widened_option = click.option(
    "--inline-widened", "inline_widened", is_flag=True,
    help="Inline every in-region intermediate, even one whose declared format stores zeros that "
         "a use can tell from absent entries (by default such an intermediate is materialized "
         "and its region split). Fuses like the paper: lowering then widens those "
         "intermediates in the stream instead of storing them.")

free_input_order_option = click.option(
    "--free-input-order", "free_input_order", is_flag=True,
    help="Let the dataflow order ignore the storage order of every tensor a region reads from "
         "memory (inputs and stored intermediates): their mode orders add no edge to the partial "
         "order graph, so more orders are valid; after the order is chosen, each discordant "
         "view reads a permuted copy (a transpose made by a `permute` step before the region, "
         "whose cycles and bytes the simulator counts).")



class OrderChoice(click.ParamType):
    """`--order K`: a non-negative order number, or `paper` (the order FuseFlow's compiler
    picks, fuseflowc.fuse.paper_order)."""

    name = "K|paper"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "paper":
            return value
        try:  # as click.IntRange(min=0) reads numbers (a 5000-digit one is not an int)
            k = int(value)
        except ValueError:
            k = -1
        if k < 0:
            self.fail(f"{value!r} is not an order: give a number K >= 0 or 'paper'", param, ctx)
        return k


ORDER = OrderChoice()

# One convention for JSON in every command that has it: `--json` prints the JSON on stdout
# instead of the human-readable output; `--json-out FILE` also writes it to FILE (the human output
# is unchanged). A flag cannot be followed by an optional file name safely: `orders --json p.ff`
# would take the program for the output.
json_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print JSON on stdout instead of the human-readable output.")
json_out_option = click.option(
    "--json-out", "json_out", metavar="FILE", default=None,
    help="Also write the JSON to FILE (atomically; '-' = stdout).")


class LegacyJsonCommand(click.Command):
    """A command whose `--json` took a file name before it became a flag (run, simulate): the old
    spellings `--json FILE.json` and `--json -` still work, as `--json-out FILE.json` and
    `--json`, with a note. Only a `.json` name is taken: anything else after `--json` is the
    command's own argument (`simulate --json g.samml` simulates g.samml)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        k = 0
        while k < len(args):
            a = args[k]
            if a == "--":
                out += args[k:]
                break
            nxt = args[k + 1] if k + 1 < len(args) else None
            if a == "--json" and nxt is not None and (nxt == "-" or
                                                      nxt.lower().endswith(".json")):
                new = ["--json"] if nxt == "-" else ["--json-out", nxt]
                click.echo(f"fuseflowc: note: `--json {nxt}` is now spelled "
                           f"`{' '.join(new)}` (--json is a flag: JSON on stdout)", err=True)
                out += new
                k += 2
                continue
            out.append(a)
            k += 1
        return super().parse_args(ctx, out)

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

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

"""The `fuseflowc` command: one click group whose subcommands are imported only when used.

Each subcommand lives in fuseflowc/commands/<name>.py as a click command named `cmd`, a thin
wrapper around one stage. Lazy import keeps `--help` and the compile path fast (numpy, scipy and
rich are imported only by the commands that need them).

Exit status: 0 success, 1 bad input (a located error on stderr), 2 bad usage, 3 internal error.
"""

from __future__ import annotations

import importlib
import importlib.util
import keyword
import sys
import traceback

import click

from . import __version__
from .diagnostics import InternalError, UserError

# name -> one-line summary; the module is fuseflowc.commands.<name with - as _>.
COMMANDS: dict[str, str] = {
    "check": "Parse and check a program; print it normalized.",
    "run": "Evaluate a program with the reference evaluator (numpy/scipy).",
    "gen-data": "Write random input tensors (or a graph data set) for a program.",
    "graph": "Read or generate a graph data set; degree statistics; write a graph archive.",
    "fuse": "Fuse a program's regions into the fused einsum IR.",
    "orders": "Count and list the valid dataflow orders of each fusion region.",
    "lower": "Lower fused einsums to SAMML dataflow graphs.",
    "opt": "Run optimization passes on a SAMML graph.",
    "simulate": "Simulate a SAMML graph cycle by cycle; report cycles, FLOPs, bytes.",
    "dot": "Draw a SAMML graph as Graphviz DOT (or SVG/PNG).",
    "estimate": "Estimate FLOPs, off-chip bytes and cycles analytically.",
    "decompose-advisor": "List the best format decompositions of a matrix for a program.",
    "plan": "Choose fusion regions, orders and schedules by estimated cost.",
    "sweep": "Run a grid of configurations and collect results.",
    "report": "Summarize sweep results as markdown and plots.",
    "import": "Import an ONNX model as a program (with its weights), the model's values exactly.",
}


def _module_name(name: str) -> str:
    module = name.replace("-", "_")
    return "fuseflowc.commands." + (module + "_" if keyword.iskeyword(module) else module)


def _available(name: str) -> bool:
    return importlib.util.find_spec(_module_name(name)) is not None


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n in COMMANDS if _available(n)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS or not _available(name):
            return None
        return importlib.import_module(_module_name(name)).cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as e:
            click.echo(e.format(), err=True)
            ctx.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("fuseflowc: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            ctx.exit(1)
        except (InternalError, Exception) as e:  # a bug: say so, with the trace for a report
            click.echo("fuseflowc: internal error (a bug in fuseflowc, please report it):", err=True)
            click.echo("".join(traceback.format_exception(e)).rstrip(), err=True)
            ctx.exit(3)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fuseflowc")
def main() -> None:
    """fuseflowc compiles sparse ML programs to SAMML dataflow graphs and simulates them.

    \b
    The stages compose as a pipeline, each reading and writing a text IR:
      fuseflowc fuse prog.ff | fuseflowc lower | fuseflowc opt -p cleanup \\
        | fuseflowc simulate --data DIR --check
    and `fuseflowc run prog.ff --data DIR` evaluates a program directly (the reference).

    Inputs are a file or `-` (stdin); outputs go to stdout or `-o FILE`, written only when the
    command succeeds and never over an input or a file fuseflowc did not write (docs/outputs.md).
    `--json` prints JSON on stdout instead of the human-readable output; `--json-out FILE` also
    writes it to FILE. Diagnostics go to stderr. Exit status: 0 ok, 1 bad input, 2 bad usage,
    3 internal error. `python -m fuseflowc` is the same command.
    """


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""`fuseflowc dot`: parse and verify a SAMML file, draw it as Graphviz DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

import click

from ..diagnostics import UserError
from ..files import read_source
from ..outputs import Outputs
from ..samml.dot import INSTALL_HINT, check_drawable, graphviz_installed, module_dot, render
from ..samml.parser import parse_module
from ..samml.verify import verify

_RENDERED = {".svg": "svg", ".png": "png"}
_TEXT = {".dot", ".gv"}


@click.command("dot")
@click.argument("graph", default="-", metavar="GRAPH")
@click.option("-o", "--output", metavar="FILE",
              help="Write here instead of stdout: FILE.dot/.gv is DOT text, FILE.svg and "
                   "FILE.png a picture (by Graphviz `dot` when installed, else the built-in "
                   "layered drawing; see --renderer).")
@click.option("--graph", "graph_name", metavar="NAME",
              help="Draw only the graph NAME of the file (default: all, one cluster each).")
@click.option("--load", "load_file", metavar="RUN.json",
              help="Colour each node by its busy fraction and label it with its busy and "
                   "stalled cycles, and draw edges as wide as the tokens they carried, from "
                   "a run of this module (`simulate --json-out RUN.json`).")
@click.option("--renderer", type=click.Choice(["auto", "graphviz", "builtin"]), default="auto",
              help="Who draws .svg/.png: graphviz (the `dot` program), builtin (a layered "
                   "layout drawn with matplotlib, no system package), or auto (default: "
                   "Graphviz when installed, else builtin).")
def cmd(graph: str, output: str | None, graph_name: str | None, load_file: str | None,
        renderer: str) -> None:
    """Draw the SAMML dataflow graph(s) in GRAPH (a .samml file, or - for stdin).

    The file is parsed and verified first (errors are reported with file:line:col and exit
    status 1), so `fuseflowc dot` doubles as the SAMML checker. Pictures follow the SAM conventions: crd edges dashed, ref bold, val solid, repsig
    dotted; nodes shaded by region: input iteration blue, computation yellow, tensor
    construction red.

    \b
    With --load RUN.json (from `simulate --json-out`), the picture shows where the cycles
    went: nodes from white (idle) to red (busy every cycle of their kernel), each labelled
    `busy N (P%), stalled M`, and edges labelled and widened by the tokens they carried.

    \b
    Examples:
      fuseflowc dot spmv.samml -o spmv.svg
      fuseflowc fuse gcn.ff | fuseflowc lower | fuseflowc dot --graph layer1 > gcn.dot
      fuseflowc simulate g.samml --data d/ --json-out run.json
      fuseflowc dot g.samml --load run.json -o load.png      # coloured by busy fraction
      fuseflowc dot g.samml -o g.svg --renderer builtin       # no Graphviz needed

    A picture holds at most 2,000 nodes (draw one graph with --graph, or write DOT text).
    With Graphviz installed (`apt-get install graphviz`, `brew install graphviz`) pictures are
    Graphviz's; without it the built-in drawer makes them.
    """
    if load_file == "-" and graph == "-":
        raise click.UsageError("GRAPH and --load cannot both be read from stdin (-)")
    out = Outputs(graph, load_file)
    dest = out.file(output)
    suffix = _suffix(output)
    module = parse_module(read_source(graph))
    verify(module)
    load = _load(load_file, module, graph_name)
    text = module_dot(module, graph_name, load)
    use_graphviz = renderer == "graphviz" or (renderer == "auto" and graphviz_installed())
    if suffix in _RENDERED:
        check_drawable(module, graph_name, output)
        if use_graphviz and not graphviz_installed():
            raise UserError(f"cannot write {output} with --renderer graphviz: the Graphviz "
                            "`dot` program is not installed; " + INSTALL_HINT)
    with out:
        if suffix in _RENDERED:  # the drawer writes a file itself (a device: in place)
            path = dest.target if dest.direct else dest.staged_path()
            if use_graphviz:
                render(text, path, _RENDERED[suffix], output)
            else:
                from ..samml.draw import draw
                draw(module, path, _RENDERED[suffix], graph_name, load)
        else:
            dest.write(text)


def _load(load_file: str | None, module, graph_name: str | None):
    """The run's load of --load FILE (None without it), checked to be of this module."""
    if load_file is None:
        return None
    from ..samml.runload import check_matches, read_load
    load = read_load(read_source(load_file).text, load_file)
    check_matches(load, module, graph_name, load_file)
    return load


def _suffix(output: str | None) -> str:
    """The output's type by its name's suffix (.dot for stdout); BadParameter for another."""
    suffix = Path(output).suffix.lower() if output and output != "-" else ".dot"
    if suffix not in _RENDERED and suffix not in _TEXT:
        raise click.BadParameter(f"unknown output type {suffix or '(none)'}; use a name ending "
                                 "in .dot, .gv, .svg or .png", param_hint="'-o'")
    return suffix

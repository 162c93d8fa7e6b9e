"""`fuseflowc dot`: parse and verify a SAMML file, draw it as Graphviz DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

import click

from ..files import read_source
from ..outputs import Outputs
from ..samml.dot import check_drawable, module_dot, render
from ..samml.parser import parse_module
from ..samml.verify import verify

_RENDERED = {".svg": "svg", ".png": "png"}
_TEXT = {".dot", ".gv"}


@click.command("dot")
@click.argument("graph", default="-", metavar="GRAPH")
@click.option("-o", "--output", metavar="FILE",
              help="Write here instead of stdout: FILE.dot/.gv is DOT text, FILE.svg and "
                   "FILE.png are drawn by Graphviz `dot` (which must be installed).")
@click.option("--graph", "graph_name", metavar="NAME",
              help="Draw only the graph NAME of the file (default: all, one cluster each).")
def cmd(graph: str, output: str | None, graph_name: str | None) -> None:
    """Draw the SAMML dataflow graph(s) in GRAPH (a .samml file, or - for stdin).

    The file is parsed and verified first (errors are reported with file:line:col and exit
    status 1), so `fuseflowc dot` doubles as the SAMML checker. Pictures follow the SAM conventions: crd edges dashed, ref bold, val solid, repsig
    dotted; nodes shaded by region: input iteration blue, computation yellow, tensor
    construction red.

    \b
    Examples:
      fuseflowc dot spmv.samml -o spmv.svg
      fuseflowc fuse gcn.ff | fuseflowc lower | fuseflowc dot --graph layer1 > gcn.dot

    A picture holds at most 2,000 nodes (draw one graph with --graph, or write DOT text).
    SVG and PNG need Graphviz: `apt-get install graphviz` (Debian/Ubuntu) or
    `brew install graphviz` (macOS).
    """
    out = Outputs(graph)
    dest = out.file(output)
    suffix = Path(output).suffix.lower() if output and output != "-" else ".dot"
    if suffix not in _RENDERED and suffix not in _TEXT:
        raise click.BadParameter(f"unknown output type {suffix or '(none)'}; use a name ending "
                                 "in .dot, .gv, .svg or .png", param_hint="'-o'")
    module = parse_module(read_source(graph))
    verify(module)
    text = module_dot(module, graph_name)
    if suffix in _RENDERED:
        check_drawable(module, graph_name, output)
    with out:
        if suffix in _RENDERED:  # Graphviz writes a file itself (a device: in place)
            render(text, dest.target if dest.direct else dest.staged_path(), _RENDERED[suffix],
                   output)
        else:
            dest.write(text)

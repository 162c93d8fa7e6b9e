"""Graphviz DOT pictures of SAMML graphs, in the conventions of the SAM papers.

Edges: crd dashed, ref bold, val solid, repsig dotted (each labelled with its stream name).
A module's `permute` steps are plain grey boxes between the graphs' clusters; a graph split
into configurations (`opt -p map`) shows each `spill` joined to the `replay`s of its buffer by a
grey edge labelled `DRAM buffer`.
Nodes are grouped in shaded clusters by region: input iteration (blue), computation (yellow),
tensor construction (red); each labelled with its kind and key attributes. `render` runs the
Graphviz `dot` program for SVG or PNG output.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..diagnostics import UserError
from ..names import shown
from . import runload
from .ir import Graph, Module, Node, Permute, region_of

EDGE_STYLE = {"crd": "dashed", "ref": "bold", "val": "solid", "repsig": "dotted"}
REGIONS = {  # region -> (title, fill colour, node colour)
    "iteration": ("input iteration", "#dbe8f7", "#eef4fb"),
    "compute": ("computation", "#fbf0c4", "#fdf8e4"),
    "construction": ("tensor construction", "#f7d6d2", "#fbebe9"),
}
_KEY_ATTRS = ("op", "const", "index", "required", "lanes", "level", "lane", "outer", "inner",
              "buffer", "stream")


def node_label(n: Node, names: dict[str, tuple[str, ...]] | None = None) -> str:
    """Kind on the first line; then tensor, mode and level format; then the other key
    attributes that are set (`index=j`, `op=mul`, ...), an index with the program's name(s)
    for it from `names` (`index=u0(j)`)."""
    return "\\n".join(_escape_label(x) for x in label_lines(n, names))


def label_lines(n: Node, names: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The lines of node_label, unescaped (what the built-in drawer prints)."""
    lines = [n.KIND]
    tensor = getattr(n, "tensor", None)
    if tensor is not None:
        words = [str(tensor)]
        for key in ("mode", "format"):
            v = getattr(n, key, None)
            if v is not None:
                words.append(f"mode {v}" if key == "mode" else str(v))
        lines.append(" ".join(words))
    for key in _KEY_ATTRS:
        v = getattr(n, key, None)
        if v is None or v == []:
            continue
        if key in ("index", "outer", "inner"):
            v = shown(v, names)
        lines.append(f"{key}={v}")
    return lines


def _quote(text: str) -> str:
    return '"' + _escape_label(text) + '"'


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def graph_dot(g: Graph, prefix: str = "", indent: str = "  ", load=None) -> list[str]:
    """The DOT lines (node clusters and edges) of one graph; node ids start with `prefix`.
    `load`: None, or the graph's samml.runload.GraphLoad (nodes filled by busy fraction and
    labelled with their cycles, edges as wide as the tokens they carried) with the run's
    largest token count (a (GraphLoad, int) pair)."""
    names = g.stream_names()
    order = g.topo_order()
    ids = {id(n): f"{prefix}n{i}" for i, n in enumerate(order)}
    out: list[str] = []
    for region, (title, fill, node_fill) in REGIONS.items():
        members = [n for n in order if region_of(n) == region]
        if not members:
            continue
        out.append(f"{indent}subgraph cluster_{prefix}{region} {{")
        out.append(f'{indent}  label={_quote(title)}; style="filled,rounded"; color="{fill}"; '
                   f'fillcolor="{fill}"; fontcolor="#555555";')
        for n in members:
            label, colour = node_label(n, g.source_names), node_fill
            if load is not None:
                nl = load[0].nodes[order.index(n)]
                label += "\\n" + _escape_label(runload.node_text(nl))
                colour = runload.fill(nl.fraction)
            out.append(f'{indent}  {ids[id(n)]} [label="{label}", fillcolor="{colour}"];')
        out.append(f"{indent}}}")
    for n in order:
        for s in n.inputs:
            if s.producer is None or id(s.producer) not in ids:
                continue
            style = EDGE_STYLE.get(s.kind, "solid")
            label = "%" + names.get(s, s.name or "?")
            extra = ""
            if load is not None:
                tok = load[0].edge(names.get(s, "?"), order.index(n)) or 0
                label += f" {tok:,}"
                extra = f", penwidth={runload.width(tok, load[1])}"
            out.append(f"{indent}{ids[id(s.producer)]} -> {ids[id(n)]} [style={style}, "
                       f"label={_quote(label)}{extra}];")
    return out


def module_dot(m: Module, graph: str | None = None, load=None) -> str:
    """DOT text of a module: every graph (each its own cluster) or only the one named `graph`;
    `load`: None or a samml.runload.RunLoad of a run of this module (see graph_dot)."""
    def of(g):
        return None if load is None else (load.graphs[g.name], load.max_tokens)

    graphs = m.graphs
    if graph is not None:
        chosen = m.graph(graph)
        if chosen is None:
            known = ", ".join(g.name for g in m.graphs)
            raise UserError(f"no graph named {graph!r} in the module (graphs: {known})")
        graphs = [chosen]
    title = graphs[0].name if len(graphs) == 1 else "samml"
    out = [f"digraph {_quote(title)} {{",
           "  rankdir=TB; newrank=true;",
           '  node [shape=box, style="filled,rounded", fontname="Helvetica", fontsize=11];',
           '  edge [fontname="Helvetica", fontsize=9, fontcolor="#666666"];']
    if len(graphs) == 1 and (graph is not None or not m.steps):
        out += graph_dot(graphs[0], load=of(graphs[0]))
    else:
        k = 0
        ends: dict[str, tuple[list, list]] = {}   # buffer -> (spill ids, replay ids)
        for item in m.sequence():
            if not isinstance(item, Graph):
                # a step between graphs: one plain box (it is not a dataflow graph)
                lines = [item.name]
                if (isinstance(item, Permute) and item.modes is not None
                        and tuple(item.modes) != tuple(range(len(item.modes)))):
                    lines.append("modes (" + ", ".join(map(str, item.modes)) + ")")
                label = "\\n".join(_escape_label(x) for x in lines)
                out.append(f'  p{k} [label="{label}", shape=box, style=filled, '
                           'fillcolor="#e4e4e4"];')
                k += 1
                continue
            g = item
            out.append(f"  subgraph cluster_g{k} {{")
            out.append(f'    label={_quote("graph " + g.name)}; style=rounded; color="#999999";')
            out += graph_dot(g, prefix=f"g{k}_", indent="    ", load=of(g))
            out.append("  }")
            for i, n in enumerate(g.topo_order()):
                if n.KIND in ("spill", "replay") and isinstance(getattr(n, "buffer", None), str):
                    ends.setdefault(n.buffer, ([], []))[n.KIND == "replay"].append(f"g{k}_n{i}")
            k += 1
        for buf in sorted(ends):
            for a in ends[buf][0]:
                for b in ends[buf][1]:
                    out.append(f'  {a} -> {b} [style=dashed, color="#888888", '
                               f'label={_quote("DRAM " + buf)}];')
    out.append("}")
    return "\n".join(out) + "\n"


#: Most nodes drawn as one SVG or PNG: Graphviz lays out 450 nodes (GPT-3 mini fully fused) in
#: ~4 s, 5,000 (twelve GPT-3 layers) in over 20 s and 8,000 (a stacked RNN) not in 2 minutes,
#: and a picture of thousands of nodes cannot be read anyway. DOT text has no limit.
MAX_DRAWN_NODES = 2000


def check_drawable(m: Module, graph: str | None, shown: str) -> None:
    """Refuse to draw more than MAX_DRAWN_NODES nodes as one picture, saying how to draw less
    (found by fuzzing: `dot -o out.png` of a 12-layer model ran for minutes)."""
    graphs = [g for g in m.graphs if graph is None or g.name == graph]
    total = sum(len(g.nodes) for g in graphs)
    if total <= MAX_DRAWN_NODES:
        return
    big = max(graphs, key=lambda g: len(g.nodes))
    which = (f"graph {big.name} has {total:,} nodes" if len(graphs) == 1 else
             f"its {len(graphs):,} graphs have {total:,} nodes (the largest, {big.name}, "
             f"{len(big.nodes):,})")
    hint = ("draw one graph with --graph NAME, or " if len(graphs) > 1 else "")
    raise UserError(f"cannot draw {shown}: {which}, more than the {MAX_DRAWN_NODES:,} one "
                    f"readable picture holds (Graphviz would take minutes); {hint}write DOT "
                    f"text with -o FILE.dot")


INSTALL_HINT = ("install Graphviz (Debian/Ubuntu: `apt-get install graphviz`, macOS: "
                "`brew install graphviz`), use --renderer builtin, or write DOT text with "
                "`-o FILE.dot`")


def graphviz_installed() -> bool:
    """Whether the Graphviz `dot` program is on PATH."""
    return shutil.which("dot") is not None


def render(dot_text: str, path: str | os.PathLike, fmt: str, shown: str | None = None) -> None:
    """Run Graphviz `dot -T<fmt>` and write its output to the file `path` (which the caller
    stages: commands write through fuseflowc.outputs). `shown` names the output in errors."""
    shown = shown or str(path)
    exe = shutil.which("dot")
    if exe is None:
        raise UserError(f"cannot write {shown}: the Graphviz `dot` program is not installed; "
                        + INSTALL_HINT)
    try:
        r = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=dot_text.encode(),
                           capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise UserError(f"Graphviz dot took too long to draw {shown}") from None
    if r.returncode != 0:
        msg = r.stderr.decode(errors="replace").strip()
        raise UserError(f"Graphviz dot failed to write {shown}: {msg}")

"""SAMML pictures without Graphviz: a layered layout (Sugiyama-style: a node's layer is its
longest path from a source, the order in a layer settled by barycenter sweeps) drawn with
matplotlib (a dependency of fuseflowc), in the conventions of samml.dot: edges crd dashed, ref
bold, val solid, repsig dotted; nodes shaded by region, or by busy fraction with `--load`.
`dot -o FILE.svg|png` uses it when the Graphviz `dot` program is not installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import runload
from .dot import EDGE_STYLE, REGIONS, label_lines
from .ir import Graph, Module, Permute, region_of

#: matplotlib's line style and width of each stream kind (samml.dot.EDGE_STYLE's meaning).
LINE = {"dashed": ("--", 1.0), "bold": ("-", 2.2), "solid": ("-", 1.0), "dotted": (":", 1.2)}
#: Inches per layout unit (a column of nodes, a layer).
DX, DY = 2.3, 1.15
#: The largest figure side, inches (a huge graph gets small type, not a huge file).
MAX_INCHES = 120


@dataclass
class Box:
    lines: list[str]
    fill: str
    x: float = 0.0
    y: float = 0.0


@dataclass
class Block:
    """One graph (or step) of the picture: its boxes and edges, placed at x offset `x0`."""
    title: str
    boxes: list[Box] = field(default_factory=list)
    edges: list[tuple[int, int, str, str, float]] = field(default_factory=list)  # src,dst,style,label,w
    width: float = 1.0
    height: float = 1.0


def graph_block(g: Graph, load=None) -> Block:
    """The boxes and edges of graph g, laid out in layers (load: see samml.dot.graph_dot)."""
    order = g.topo_order()
    pos = {id(n): i for i, n in enumerate(order)}
    names = g.stream_names()
    b = Block("graph " + g.name)
    for i, n in enumerate(order):
        lines = label_lines(n, g.source_names)
        colour = REGIONS.get(region_of(n), ("", "", "#ffffff"))[2]
        if load is not None:
            nl = load[0].nodes[i]
            lines.append(runload.node_text(nl))
            colour = runload.fill(nl.fraction)
        b.boxes.append(Box(lines, colour))
    preds: list[list[int]] = [[] for _ in order]
    for n in order:
        for s in n.inputs:
            if s.producer is None or id(s.producer) not in pos:
                continue
            src, dst = pos[id(s.producer)], pos[id(n)]
            preds[dst].append(src)
            label = "%" + names.get(s, s.name or "?")
            w = None
            if load is not None:
                tok = load[0].edge(names.get(s, "?"), dst) or 0
                label += f" {tok:,}"
                w = runload.width(tok, load[1])
            b.edges.append((src, dst, EDGE_STYLE.get(s.kind, "solid"), label, w))
    _layout(b, preds)
    return b


def _layout(b: Block, preds: list[list[int]]) -> None:
    """Layers by longest path (topological order: predecessors come first), then two
    barycenter sweeps order each layer; x in columns, y down by layer."""
    layer = [0] * len(b.boxes)
    for i, ps in enumerate(preds):
        layer[i] = 1 + max((layer[p] for p in ps), default=-1)
    rows: dict[int, list[int]] = {}
    for i, lv in enumerate(layer):
        rows.setdefault(lv, []).append(i)
    x = {}
    for _ in range(2):
        for lv in sorted(rows):
            row = rows[lv]
            for k, i in enumerate(row):
                x.setdefault(i, float(k))

            def centre(i, row=row):
                ps = [x[p] for p in preds[i] if p in x]
                return (sum(ps) / len(ps)) if ps else x[i]
            row.sort(key=lambda i: (centre(i), i))
            for k, i in enumerate(row):
                x[i] = float(k)
    widest = max((len(r) for r in rows.values()), default=1)
    for lv, row in rows.items():
        shift = (widest - len(row)) / 2
        for k, i in enumerate(row):
            b.boxes[i].x = k + shift
            b.boxes[i].y = -lv
    b.width = float(widest)
    b.height = float(len(rows) or 1)


def module_blocks(m: Module, graph: str | None = None, load=None) -> list[Block]:
    """The blocks of the picture: every graph and step in run order, or the graph named."""
    def of(g):
        return None if load is None else (load.graphs[g.name], load.max_tokens)
    if graph is not None:
        return [graph_block(m.graph(graph), of(m.graph(graph)))]
    out = []
    for item in m.sequence():
        if isinstance(item, Graph):
            out.append(graph_block(item, of(item)))
        else:
            lines = [item.name]
            if isinstance(item, Permute) and item.modes is not None:
                lines.append("modes (" + ", ".join(map(str, item.modes)) + ")")
            blk = Block(item.name, [Box(lines, "#e4e4e4")])
            out.append(blk)
    return out


def _ink(fill: str) -> str:
    """Black text on light fills, white on dark ones (the busiest nodes' red)."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


def draw(m: Module, path: str | os.PathLike, fmt: str, graph: str | None = None,
         load=None) -> None:
    """Write the picture of the module (or one graph) as SVG or PNG to `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch
    matplotlib.rcParams["svg.hashsalt"] = "fuseflowc"
    blocks = module_blocks(m, graph, load)
    total_w = sum(b.width for b in blocks) + 0.6 * (len(blocks) - 1)
    total_h = max(b.height for b in blocks) + 0.6
    w_in, h_in = total_w * DX + 0.5, total_h * DY + 0.5
    scale = min(1.0, MAX_INCHES / max(w_in, h_in))
    fig = plt.figure(figsize=(max(w_in * scale, 2), max(h_in * scale, 1.5)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.6, total_w - 0.4)
    ax.set_ylim(-total_h + 0.4, 0.9)
    ax.axis("off")
    fs = 7 * scale
    x0 = 0.0
    for b in blocks:
        title = b.title
        if load is not None and b.title.startswith("graph ") and b.title[6:] in load.graphs:
            title += (f": fill = busy fraction of its "
                      f"{load.graphs[b.title[6:]].cycles:,} cycles (white idle, red always)")
        ax.text(x0 + (b.width - 1) / 2, 0.65, title, ha="center", va="center",
                fontsize=fs * 1.3, color="#555555")
        for src, dst, style, label, w in b.edges:
            ls, lw = LINE.get(style, ("-", 1.0))
            p, q = b.boxes[src], b.boxes[dst]
            arrow = FancyArrowPatch((x0 + p.x, p.y), (x0 + q.x, q.y),
                                    arrowstyle="-|>", mutation_scale=8 * scale,
                                    linestyle=ls, linewidth=(w or lw) * scale,
                                    color="#555555", shrinkA=14 * scale, shrinkB=16 * scale,
                                    connectionstyle="arc3,rad=0.06")
            ax.add_patch(arrow)
            ax.text(x0 + (p.x + q.x) / 2, (p.y + q.y) / 2, label, fontsize=fs * 0.8,
                    color="#666666", ha="center", va="center")
        for box in b.boxes:
            ax.text(x0 + box.x, box.y, "\n".join(box.lines), ha="center", va="center",
                    fontsize=fs, color=_ink(box.fill), bbox={"boxstyle": "round,pad=0.3", "fc": box.fill,
                                       "ec": "#777777", "lw": 0.6})
        x0 += b.width + 0.6
    meta = {"Date": None} if fmt == "svg" else {}
    fig.savefig(path, format=fmt, metadata=meta, dpi=100)
    plt.close(fig)

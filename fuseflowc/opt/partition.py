"""Splitting a graph that does not fit a fabric into configurations run one after another (the
`map` pass, fuseflowc/opt/map.py; docs/fabric.md).

The nodes are taken in the graph's topological order (`Graph.topo_order`) and cut into
consecutive segments, one configuration each. A stream produced in one segment and read in a
later one is *cut*: its producer's segment gains a `spill` of it to a DRAM buffer, and every later
segment reading it a `replay` of that buffer (recording the stream's loop nest, so analyses of
the parts see what they saw in the whole). Roots are never cut: each segment reading a root has
its own (a root is the controller's start token and takes no tile). A spill and a replay take a
memory tile each, like a writer and a scanner.

The cut positions are chosen by dynamic programming over the order, minimising, in this order:
the number of configurations (what the program fused stays together wherever it fits), the
bytes estimated to cross the cuts (each cut stream's once for its spill and once per replay),
and the number of cut streams. A stream's bytes are estimated from its loop nest
(samml.analysis): the product of its indices' extents (the module's sizes, or `sizes`; an
unknown extent counts DEFAULT_EXTENT) times the element bytes.
"""

from __future__ import annotations

import copy
import math

from ..samml import ir
from ..samml.analysis import stream_contexts
from ..samml.tiles import index_extents, node_tiles

#: The extent an index of unknown size counts when weighing a stream.
DEFAULT_EXTENT = 16


class NoFit(Exception):
    """No split fits: `node` is where no configuration can start (with its spills, replays)."""

    def __init__(self, node: ir.Node, pe: int, mem: int):
        super().__init__(node.KIND)
        self.node, self.pe, self.mem = node, pe, mem


def _weights(graph: ir.Graph, module: ir.Module, element_bytes: int,
             sizes: dict | None) -> dict[ir.Stream, int]:
    """Stream -> its estimated bytes (see the module docstring)."""
    ctx = stream_contexts(graph)
    ext = index_extents(graph, module, sizes)
    return {s: element_bytes * math.prod(ext.get(x, DEFAULT_EXTENT) for x in c)
            for s, c in ctx.items()}


def partition(graph: ir.Graph, module: ir.Module, fabric, element_bytes: int = 4,
              sizes: dict | None = None) -> list[list[ir.Node]]:
    """The segments (each a list of the graph's non-root nodes, in topological order) of the
    best split of `graph` on `fabric` (one segment when it fits). Raises NoFit when none fits."""
    order = [n for n in graph.topo_order() if n.KIND != "root"]
    pos = {id(n): k for k, n in enumerate(order)}
    tiles = node_tiles(graph, module, fabric, element_bytes, sizes)
    weight = _weights(graph, module, element_bytes, sizes)
    last: dict[int, int] = {}       # id(stream) -> position of its last consumer
    for n in order:
        for s in n.inputs:
            if s.producer is not None and id(s.producer) in pos:
                last[id(s)] = max(last.get(id(s), -1), pos[id(n)])
    cap_pe, cap_mem = fabric.capacity("pe"), fabric.capacity("mem")
    n_nodes = len(order)
    best: list[tuple | None] = [None] * (n_nodes + 1)
    back = [0] * (n_nodes + 1)
    best[0] = (0, 0, 0)
    for j in range(n_nodes):
        if best[j] is None:
            continue
        pe = mem = 0
        closing: dict[int, list[int]] = {}     # last consumer -> weights of open streams
        open_w = open_n = 0
        replayed: dict[int, int] = {}          # id(stream) -> weight, read from before j
        for p in range(j, n_nodes):
            node = order[p]
            tp, tm, _ = tiles[node]
            pe, mem = pe + tp, mem + tm
            if (cap_pe is not None and pe > cap_pe) or (cap_mem is not None and mem > cap_mem):
                break
            for s in node.inputs:
                q = pos.get(id(s.producer)) if s.producer is not None else None
                if q is not None and q < j and id(s) not in replayed:
                    replayed[id(s)] = weight.get(s, element_bytes)
            for w in closing.pop(p, ()):
                open_w, open_n = open_w - w, open_n - 1
            for s in node.outputs:
                if last.get(id(s), -1) > p:
                    w = weight.get(s, element_bytes)
                    closing.setdefault(last[id(s)], []).append(w)
                    open_w, open_n = open_w + w, open_n + 1
            if cap_mem is not None and mem + open_n + len(replayed) > cap_mem:
                continue
            b = best[j]
            cand = (b[0] + 1, b[1] + open_w + sum(replayed.values()),
                    b[2] + open_n + len(replayed))
            if best[p + 1] is None or cand < best[p + 1]:
                best[p + 1], back[p + 1] = cand, j
    if best[n_nodes] is None:
        stuck = max(j for j in range(n_nodes) if best[j] is not None)
        tp, tm, _ = tiles[order[stuck]]
        raise NoFit(order[stuck], tp, tm)
    segments: list[list[ir.Node]] = []
    i = n_nodes
    while i > 0:
        segments.append(order[back[i]:i])
        i = back[i]
    return segments[::-1]


def _clone(n: ir.Node) -> ir.Node:
    """A copy of node `n` without its streams (list attributes copied, locations kept)."""
    c = copy.copy(n)
    c.inputs, c.outputs = [], []
    c.operand_locs, c.result_locs = list(n.operand_locs), list(n.result_locs)
    c.attr_locs = dict(n.attr_locs)
    for spec in n.attr_specs():
        v = getattr(n, spec.name)
        if isinstance(v, list):
            setattr(c, spec.name, list(v))
    return c


def buffer_name(graph: ir.Graph, s: ir.Stream, names: dict) -> str:
    """The DRAM buffer a cut stream of `graph` is spilled to: the graph's name and the stream's
    canonical one (`gcn_v3`)."""
    return f"{graph.name}_{names[s]}"


def split(graph: ir.Graph, segments: list[list[ir.Node]], names_taken: set[str]
          ) -> list[ir.Graph]:
    """The graphs, one per segment of `partition`, named `G__c0`, `G__c1`, ... (a name in
    `names_taken` gets a further `_k`), with the cut streams spilled and replayed."""
    names = graph.stream_names()
    ctx = stream_contexts(graph)
    seg_of = {id(n): k for k, seg in enumerate(segments) for n in seg}
    consumers = graph.consumers()
    parts = []
    for k, seg in enumerate(segments):
        name = f"{graph.name}__c{k}"
        while name in names_taken:
            name += "_"
        names_taken.add(name)
        part = ir.Graph(name, loc=graph.loc)
        part.source_names = dict(graph.source_names)
        part.iteration = graph.iteration
        local: dict[int, ir.Stream] = {}

        def stream_in(s: ir.Stream, part=part, local=local) -> ir.Stream:
            if id(s) not in local:
                p = s.producer
                if p is None or p.KIND == "root":
                    node = _clone(p)
                else:
                    c = list(ctx.get(s, ()))
                    node = ir.Replay(buffer=buffer_name(graph, s, names), stream=s.kind,
                                     context=c or None)
                    node.loc = p.loc
                local[id(s)] = part.add(node)
            return local[id(s)]

        for n in seg:
            c = _clone(n)
            part.add(c, *[stream_in(s) for s in n.inputs])
            for old, new in zip(n.outputs, c.outputs):
                new.name, new.loc = old.name, old.loc
                local[id(old)] = new
                if any(seg_of.get(id(m), k) > k for m, _ in consumers.get(old, ())):
                    sp = ir.Spill(buffer=buffer_name(graph, old, names))
                    sp.loc = n.loc
                    part.add(sp, new)
        parts.append(part)
    return parts

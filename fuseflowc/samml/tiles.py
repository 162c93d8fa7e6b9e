"""The tiles a SAMML graph occupies on a fabric (fuseflowc.fabric): compute (PE) tiles for the
nodes placed there, memory (MEM) tiles for scanners, arrays and writers (one each) and for
accumulators' buffers (as many as their bytes need), as each kind's `tile` trait says
(fuseflowc.samml.kinds.PLACEMENT).

An accumulator's buffer holds one fiber of the levels it accumulates: spacc1 the extent of its
inner index times (one coordinate + one value), spacc2 the product of its two inner extents
times (two coordinates + one value), spacc3 likewise over three, in bytes of `element_bytes`
each. An extent is the size of a dim some scanner of the graph reads at that index: a number
the module fixes, or one of `sizes` (the data's, when known); an unknown extent counts one tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import ir
from .analysis import stream_contexts
from .kinds import BUFFERED, PLACEMENT, traits


@dataclass
class Buffer:
    """An accumulator's buffer: its `node`, `nbytes` (None: unknown) and memory `tiles`."""

    node: ir.Node
    nbytes: int | None
    tiles: int


@dataclass
class TileUsage:
    """The tiles graph `graph` occupies: `pe`, `mem`, and its accumulators' `buffers`."""

    graph: str
    pe: int = 0
    mem: int = 0
    buffers: list[Buffer] = field(default_factory=list)

    def to_json(self) -> dict:
        """{"pe": n, "mem": n, "buffer_bytes": [...]} (None for an unknown size)."""
        return {"pe": self.pe, "mem": self.mem,
                "buffer_bytes": [b.nbytes for b in self.buffers]}


def index_extents(graph: ir.Graph, module: ir.Module, sizes: dict | None = None) -> dict:
    """Index variable -> its extent (an int) where a scanner of `graph` reads a dim of known
    size (fixed by the module, or given in `sizes`)."""
    out: dict[str, int] = {}
    for n in graph.nodes:
        if isinstance(n, ir.Scan):
            t = module.tensor(n.tensor)
            if t is None or n.mode >= len(t.dims):
                continue
            d = t.dims[n.mode]
            v = d if isinstance(d, int) else (sizes or {}).get(d)
            if isinstance(v, int):
                out.setdefault(n.index, v)
    return out


def node_tiles(graph: ir.Graph, module: ir.Module, fabric, element_bytes: int = 4,
               sizes: dict | None = None) -> dict[ir.Node, tuple[int, int, Buffer | None]]:
    """Node -> (PE tiles, MEM tiles, its Buffer or None) of every node of `graph` on `fabric`
    (see the module docstring)."""
    out: dict[ir.Node, tuple[int, int, Buffer | None]] = {}
    ctx = stream_contexts(graph) if any(n.KIND in BUFFERED for n in graph.nodes) else {}
    extents = index_extents(graph, module, sizes)
    for n in graph.nodes:
        where = PLACEMENT[n.KIND]
        if n.KIND in BUFFERED:
            levels = traits(n.KIND).accumulates    # the levels its buffer holds
            c = ctx.get(n.inputs[levels - 1], ()) if len(n.inputs) >= levels else ()
            inner = [x for x in c if x != n.index][-levels:]
            dims = [extents.get(x) for x in inner]
            nbytes = None if len(dims) < levels or None in dims else \
                math.prod(dims) * (levels + 1) * element_bytes
            b = Buffer(n, nbytes, fabric.buffer_tiles(nbytes))
            out[n] = (0, b.tiles, b)
        else:
            out[n] = (int(where == "pe"), int(where == "mem"), None)
    return out


def tile_usage(graph: ir.Graph, module: ir.Module, fabric, element_bytes: int = 4,
               sizes: dict | None = None) -> TileUsage:
    """The tiles `graph` occupies on `fabric` (see the module docstring)."""
    use = TileUsage(graph.name)
    for pe, mem, b in node_tiles(graph, module, fabric, element_bytes, sizes).values():
        use.pe += pe
        use.mem += mem
        if b is not None:
            use.buffers.append(b)
    return use


def misfits(use: TileUsage, fabric) -> list[str]:
    """Why `use` does not fit `fabric` (empty: it fits), one sentence per tile class."""
    out = []
    for tile, n in (("pe", use.pe), ("mem", use.mem)):
        cap = fabric.capacity(tile)
        if cap is not None and n > cap:
            out.append(f"{n} {tile.upper()} tiles, {fabric.name} has {cap}")
    return out

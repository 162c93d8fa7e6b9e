"""`map`: fit every graph of a module onto a fabric's tiles (fuseflowc.fabric), splitting a
graph that does not fit into configurations run one after another.

Each graph is one configuration of the fabric: its nodes take the tiles their kinds' `tile`
trait gives them (fuseflowc.samml.kinds.PLACEMENT; samml.tiles counts them; an accumulator's
buffer spans as many memory tiles as its bytes need). A graph that fits is left as it is. A
graph that needs more compute or memory tiles than the fabric has is split
(fuseflowc.opt.partition) into graphs `G__c0`, `G__c1`, ..., run in that order, each fitting: a
stream cut between two of them is spilled to a DRAM buffer (`spill`) by the first and read back
(`replay`) by the later ones. With `split=false` such a graph is refused instead, at the graph,
with the counts. An accumulator whose buffer alone needs more memory tiles than the fabric has
is refused at the accumulator, and a node that cannot fit even with a configuration of its own
(with its spills and replays) at the node.

    fuseflowc opt -p 'map{fabric=onyx}' g.samml
    fuseflowc opt -p 'map{fabric=onyx pe=8 mem=6}' g.samml    # a smaller array
    fuseflowc opt -p 'map{fabric=onyx-quarter split=false}' g.samml   # refuse, do not split
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..diagnostics import UserError
from ..fabric import PRESETS
from ..samml.ir import Module
from ..samml.tiles import misfits, tile_usage
from .base import ModulePass, register
from .partition import NoFit, partition, split


@register
@dataclass(frozen=True)
class Map(ModulePass):
    """Fit every graph onto a fabric's tiles, splitting one that does not fit into configurations."""

    name: ClassVar[str] = "map"
    fabric: str = field(default="unlimited", metadata={"choices": tuple(PRESETS)})
    pe: int = 0            # compute tiles (0: the preset's)
    mem: int = 0           # memory tiles (0: the preset's)
    mem_bytes: int = 0     # bytes per memory tile (0: the preset's)
    element_bytes: int = 4
    split: bool = True     # split a graph that does not fit (false: refuse it)

    def apply(self, module: Module) -> None:
        for opt, v, hi in (("element-bytes", self.element_bytes, 64),
                           ("pe", self.pe, 1 << 40), ("mem", self.mem, 1 << 40),
                           ("mem-bytes", self.mem_bytes, 1 << 40)):
            if not (0 if opt != "element-bytes" else 1) <= v <= hi:
                raise UserError(f"pass map: option {opt} must be from "
                                f"{0 if opt != 'element-bytes' else 1} to {hi}, not {v}")
        fab = PRESETS[self.fabric].with_overrides(pe=self.pe or None, mem=self.mem or None,
                                                  mem_bytes=self.mem_bytes or None)
        for g in list(module.graphs):
            use = tile_usage(g, module, fab, self.element_bytes)
            for b in use.buffers:
                if fab.mem is not None and b.tiles > fab.mem:
                    raise UserError(
                        f"pass map: the buffer of {b.node.KIND} in graph {g.name} needs "
                        f"{b.nbytes:,} bytes, {b.tiles:,} memory tiles of {fab.mem_bytes:,} "
                        f"bytes; fabric {fab.name} has {fab.mem:,}", b.node.loc)
            problems = misfits(use, fab)
            if problems and not self.split:
                raise UserError(
                    f"pass map: graph {g.name} does not fit fabric {fab.name}: it needs "
                    + "; ".join(problems) + " (without split=false, map splits it into "
                    "configurations)", g.loc)
            if problems:
                self._split(module, g, fab)

    def _split(self, module: Module, g, fab) -> None:
        """Replace graph `g` of `module` by its configurations (fuseflowc.opt.partition)."""
        if any(d.graph == g.name for d in module.schedules):
            raise UserError(f"pass map: graph {g.name} has a schedule directive and must be "
                            "split: apply it first (`-p schedule,map{...}`)", g.loc)
        try:
            segments = partition(g, module, fab, self.element_bytes)
        except NoFit as e:
            raise UserError(
                f"pass map: graph {g.name} cannot be split to fit fabric {fab.name}: from "
                f"this {e.node.KIND} on, no configuration fits (a configuration of its own "
                f"needs {e.pe} PE and {e.mem} MEM tiles before its spills and replays; "
                f"{fab.name} has {fab.pe} PE and {fab.mem} MEM tiles)", e.node.loc) from None
        taken = {h.name for h in module.graphs}
        parts = split(g, segments, taken)
        at = module.graphs.index(g)
        module.graphs[at:at + 1] = parts
        for st in module.steps:
            if st.position > at:
                st.position += len(parts) - 1
        for h in module.graphs:
            if h.template == g.name:     # its template is gone: it prints in full
                h.template, h.binds = None, {}

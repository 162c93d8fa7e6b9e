"""`map`: check that every graph of a module fits a fabric's tiles (fuseflowc.fabric).

Each graph is one configuration of the fabric: its nodes take the tiles their kinds' `tile`
trait gives them (fuseflowc.samml.kinds.PLACEMENT; samml.tiles counts them; an accumulator's
buffer spans as many memory tiles as its bytes need). A graph that needs more compute or memory tiles than the fabric has
is refused at the graph, and an accumulator whose buffer alone is larger than all the memory
tiles at the accumulator, each with the counts. The module is not changed: a graph that fits
runs as it is. Splitting a graph that does not fit into several configurations (cut streams
spilled to DRAM) is not done yet; compile a less fused variant of the program instead (its
kernels are smaller graphs).

    fuseflowc opt -p 'map{fabric=onyx}' g.samml
    fuseflowc opt -p 'map{fabric=onyx pe=8 mem=6}' g.samml    # a smaller array
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..diagnostics import UserError
from ..fabric import PRESETS
from ..samml.ir import Module
from ..samml.tiles import misfits, tile_usage
from .base import ModulePass, register


@register
@dataclass(frozen=True)
class Map(ModulePass):
    """Check every graph fits a fabric's compute and memory tiles (refused where it does not)."""

    name: ClassVar[str] = "map"
    fabric: str = field(default="unlimited", metadata={"choices": tuple(PRESETS)})
    pe: int = 0            # compute tiles (0: the preset's)
    mem: int = 0           # memory tiles (0: the preset's)
    mem_bytes: int = 0     # bytes per memory tile (0: the preset's)
    element_bytes: int = 4

    def apply(self, module: Module) -> None:
        for opt, v, hi in (("element-bytes", self.element_bytes, 64),
                           ("pe", self.pe, 1 << 40), ("mem", self.mem, 1 << 40),
                           ("mem-bytes", self.mem_bytes, 1 << 40)):
            if not (0 if opt != "element-bytes" else 1) <= v <= hi:
                raise UserError(f"pass map: option {opt} must be from "
                                f"{0 if opt != 'element-bytes' else 1} to {hi}, not {v}")
        fab = PRESETS[self.fabric].with_overrides(pe=self.pe or None, mem=self.mem or None,
                                                  mem_bytes=self.mem_bytes or None)
        for g in module.graphs:
            use = tile_usage(g, module, fab, self.element_bytes)
            for b in use.buffers:
                if fab.mem is not None and b.tiles > fab.mem:
                    raise UserError(
                        f"pass map: the buffer of {b.node.KIND} in graph {g.name} needs "
                        f"{b.nbytes:,} bytes, {b.tiles:,} memory tiles of {fab.mem_bytes:,} "
                        f"bytes; fabric {fab.name} has {fab.mem:,}", b.node.loc)
            problems = misfits(use, fab)
            if problems:
                raise UserError(
                    f"pass map: graph {g.name} does not fit fabric {fab.name}: it needs "
                    + "; ".join(problems) + " (splitting a graph into configurations is not "
                    "supported yet: compile a less fused variant, whose kernels are smaller)",
                    g.loc)

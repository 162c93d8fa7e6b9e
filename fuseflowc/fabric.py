"""The fabric: a finite array of compute and memory tiles, what each SAMML node kind occupies,
and the published fabrics it can be set to.

FuseFlow's evaluation assumes a fabric large enough for any graph; a real reconfigurable
dataflow accelerator has a fixed number of tiles. This module declares, in one place, the tile
classes and the presets (`PRESETS`); which tile class each primitive kind occupies is its
`tile` trait, declared with the kind (fuseflowc.samml.kinds.PLACEMENT). `sim/arch.toml`
[fabric] selects a preset and may override its figures; `opt -p 'map{fabric=NAME}'` counts a graph's tiles
against one (fuseflowc/opt/map.py). It imports nothing of the stages: it is shared by sim.arch
(the machine description) and opt (the mapping pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: Tile classes: compute (PE) tiles and memory (MEM) tiles.
TILE_CLASSES = ("pe", "mem")


@dataclass(frozen=True)
class Fabric:
    """A fabric: `pe` compute tiles and `mem` memory tiles (None: unlimited), each memory tile
    holding `mem_bytes` bytes; `source` says where the figures come from."""

    name: str
    pe: int | None
    mem: int | None
    mem_bytes: int | None
    source: str = ""

    @property
    def unlimited(self) -> bool:
        """Whether every graph fits (no tile count and no capacity is bounded)."""
        return self.pe is None and self.mem is None and self.mem_bytes is None

    def capacity(self, tile: str) -> int | None:
        """Tiles of class `tile` (TILE_CLASSES), or None for unlimited."""
        return {"pe": self.pe, "mem": self.mem}[tile]

    def buffer_tiles(self, nbytes: int | None) -> int:
        """Memory tiles a buffer of `nbytes` bytes spans (None: unknown size, one tile)."""
        if nbytes is None or self.mem_bytes is None:
            return 1
        return max(1, math.ceil(nbytes / self.mem_bytes))

    def with_overrides(self, **figures) -> "Fabric":
        """This fabric with some of pe, mem, mem_bytes replaced (None keeps the preset's)."""
        return replace(self, **{k: v for k, v in figures.items() if v is not None})


#: Published fabrics, by name. Sizes from the papers:
#:  - onyx: 16 x 32 = 512 tiles, 384 PE and 128 MEM tiles (one MEM column in four), each MEM
#:    tile with 4 KB of SRAM (2 x 2 KB banks) (Koul et al., VLSI 2024; the Onyx/Amber CGRA line).
#:  - amber: 16 x 32 = 512 tiles, 384 PE and 128 MEM tiles of 4 KB, without sparse
#:    primitives in its silicon; kept here as the dense predecessor's size for comparison
#:    (Carsello et al., "Amber: A 16-nm System-on-Chip With a Coarse-Grained Reconfigurable
#:    Array for Flexible Acceleration of Dense Linear Algebra", VLSI 2022).
#:  - onyx-quarter: a quarter of Onyx (8 x 16: 96 PE, 32 MEM), the size at which Figure 12's
#:    small models stop fitting whole; a what-if, not a chip.
#:  - onyx-eighth: an eighth of Onyx (8 x 8: 48 PE, 16 MEM), where most fused variants must be
#:    split into configurations; a what-if.
PRESETS: dict[str, Fabric] = {
    "unlimited": Fabric("unlimited", None, None, None,
                        "FuseFlow's assumption: a tile for every node, buffers of any size"),
    "onyx": Fabric("onyx", 384, 128, 4096, "Koul et al., VLSI 2024: 16 x 32 tiles"),
    "amber": Fabric("amber", 384, 128, 4096, "Carsello et al., VLSI 2022: 16 x 32 tiles"),
    "onyx-quarter": Fabric("onyx-quarter", 96, 32, 4096, "a quarter of onyx (what-if)"),
    "onyx-eighth": Fabric("onyx-eighth", 48, 16, 4096, "an eighth of onyx (what-if)"),
}

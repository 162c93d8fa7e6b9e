"""The fabric in a simulation: the tiles each kernel's graph occupies (samml.tiles) on the
machine description's fabric (sim/arch.toml [fabric]), and the refusal of a module that does
not fit it, before anything runs."""

from __future__ import annotations

from fuseflowc.diagnostics import UserError
from fuseflowc.samml.tiles import misfits, tile_usage


def check_fits(module, arch, sizes: dict) -> None:
    """A UserError at the first graph of `module` that does not fit `arch.fabric` with the
    data's `sizes` (nothing when the fabric is unlimited)."""
    fab = arch.fabric
    if fab.unlimited:
        return
    for g in module.graphs:
        problems = misfits(tile_usage(g, module, fab, arch.element_bytes, sizes), fab)
        if problems:
            raise UserError(f"graph {g.name} does not fit fabric {fab.name} (sim/arch.toml "
                            f"[fabric]): it needs " + "; ".join(problems), g.loc)


def add_tiles(stats: dict, module, arch, sizes: dict) -> dict:
    """Add `tiles` ({"pe", "mem", "buffer_bytes"} on arch.fabric, with the data's sizes) to
    every kernel of a run's stats that is a graph. Returns `stats`."""
    for k in stats["kernels"]:
        g = module.graph(k["graph"])
        if g is not None:
            k["tiles"] = tile_usage(g, module, arch.fabric, arch.element_bytes,
                                    sizes).to_json()
    return stats

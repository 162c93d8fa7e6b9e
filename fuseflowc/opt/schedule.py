"""The `schedule` pass: apply the schedule the program recorded in the module.

`lower` turns the program's `parallelize S: k by F` into module directives
`schedule parallelize {graph = g, index = u0, factor = F, statement = S, local = k}` (index: the
name the graph iterates; local: the name the program used). `fuseflowc opt -p schedule` runs
`parallelize` for each directive, in file order, and drops the directives it handled (so the
output is not parallelized twice when it goes through `opt -p schedule` again).

The command line overrides the module: an explicit `parallelize{index=X}` anywhere in the same
pipeline replaces the directives for X (the graph's name or the program's local name), which
`schedule` then drops without applying (`resolve_pipeline` fills `skip`). Leaving `schedule` out
of the pipeline ignores the directives (they stay in the output).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..samml import ir
from ..samml.analysis import iterated_indices
from .base import ModulePass, pipeline_resolver, register
from .parallelize import REDUCE_MODES, Parallelize, parallelize_graph


@register
@dataclass(frozen=True)
class ApplySchedule(ModulePass):
    """Apply the module's `schedule parallelize` directives (then drop them)."""

    name: ClassVar[str] = "schedule"
    #: Index names whose directives are dropped unapplied: `i` (every graph) or `g.i` (graph g);
    #: separated by spaces (quote the value) or `+`.
    skip: str = ""
    #: How the applied directives treat reducers over their index: `serial` or `lanes` (as
    #: parallelize's option of that name).
    reduce: str = dataclasses.field(default="serial", metadata={"choices": REDUCE_MODES})

    def skipped(self, d: ir.Schedule) -> bool:
        """True when directive `d` is overridden by `skip`."""
        for tok in self.skip.replace("+", " ").split():
            graph, _, index = tok.rpartition(".")
            if graph and graph != d.graph:
                continue
            if index in (d.index, d.local):
                return True
        return False

    def graphs_touched(self, module: ir.Module) -> set[str] | None:
        return {d.graph for d in module.schedules if d.kind == "parallelize"}

    def apply(self, module: ir.Module) -> None:
        kept = []
        for d in module.schedules:
            if d.kind != "parallelize":
                kept.append(d)
                continue
            g = module.graph(d.graph or "")
            if g is None or self.skipped(d):
                continue
            parallelize_graph(g, d.index, d.factor, self.reduce)
        module.schedules = kept


@pipeline_resolver
def resolve_pipeline(module: ir.Module, passes: list[ModulePass]) -> list[ModulePass]:
    """`passes` adjusted to `module`: an explicit `parallelize{index=k}` naming a program-local
    index the graphs do not iterate gets the graph's name for it (from the directives'
    `local`, when that is unambiguous), and every `schedule` pass skips the directives of the
    indices explicit `parallelize` passes name (the command line overrides the module)."""
    if not any(isinstance(p, Parallelize) for p in passes):
        return list(passes)      # nothing to resolve or override
    iterated = {x for g in module.graphs for x in iterated_indices(g)}
    out: list[ModulePass] = []
    overridden: list[str] = []
    for p in passes:
        if isinstance(p, Parallelize):
            names = [p.index]
            if p.index not in iterated:
                hits = sorted({d.index for d in module.schedules if d.local == p.index
                               and (not p.graph or d.graph == p.graph)})
                if len(hits) == 1:
                    p = dataclasses.replace(p, index=hits[0])
                    names.append(hits[0])
            overridden += [f"{p.graph}.{x}" if p.graph else x for x in names]
        out.append(p)
    if not overridden:
        return out
    return [dataclasses.replace(p, skip=" ".join(p.skip.split() + overridden))
            if isinstance(p, ApplySchedule) else p for p in out]

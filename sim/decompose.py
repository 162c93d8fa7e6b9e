"""The `decompose SRC -> P0 >= t0, ..., R` step of a module, run between graphs as a modelled
data-movement kernel (not a dataflow graph): SRC's entries split into the parts
(fuseflowc.data.decompose.split; docs/language.md, "Format decomposition").

Cost model (the permute step's, sim/permute.py, with two passes over SRC's entries): a first
pass reads SRC's seg and crd arrays and counts the entries of every block of every blocked part;
a second reads SRC's arrays again and routes each entry to its part, writing the parts' arrays:

    cycles = memory.latency + ceil(max(bytes read, bytes written) / memory.bandwidth)
             + ceil(2 * entries / permute.elements_per_cycle)

where entries = SRC's stored entries and bytes read = SRC's arrays plus its seg and crd once
more. FLOPs: 0. With `simulate --hoist` the step is reported but left out of the totals (the
split of a static pattern is done once, outside the kernel).
"""

from __future__ import annotations

import math

from fuseflowc.diagnostics import UserError

from .permute import PermuteNode, array_bytes


def run_decompose(step, module, tensors: dict, arch):
    """Run one step: returns (the pseudo node with its counters, cycles, {part: tensor})."""
    from fuseflowc.data.decompose import split
    src = tensors.get(step.src)
    if src is None:
        raise UserError(f"simulation: {step.name} reads tensor {step.src}, which has no data")
    decls = [module.tensor(p) for p in step.parts]
    if any(d is None for d in decls):
        raise UserError(f"simulation: {step.name}: undeclared part")
    parts = split(src, [(d.format, d.block, t) for d, t in zip(decls, step.thresholds)],
                  step.src)
    eb = arch.element_bytes
    rd = array_bytes(src, eb)
    wr = {"seg": 0, "crd": 0, "vals": 0}
    for p in parts:
        for k, v in array_bytes(p, eb).items():
            wr[k] += v
    node = PermuteNode(step.name)
    node.kind = "decompose"
    node.rd_seg, node.rd_crd, node.rd_vals = 2 * rd["seg"], 2 * rd["crd"], rd["vals"]
    node.wr_seg, node.wr_crd, node.wr_vals = wr["seg"], wr["crd"], wr["vals"]
    entries = int(src.vals.shape[0])
    moved = max(node.rd_seg + node.rd_crd + node.rd_vals, sum(wr.values()))
    route = math.ceil(2 * entries / arch.permute_rate)
    cycles = arch.mem_latency + math.ceil(moved / arch.bandwidth) + route
    node.fires = route
    node.lat = arch.mem_latency
    node.finish = cycles
    return node, cycles, dict(zip(step.parts, parts))

"""The `permute SRC -> DST` step of a module, run between graphs as a modelled data-movement
kernel (not a dataflow graph): DST = SRC's stored entries re-stored in DST's declared format,
DST's logical mode m holding SRC's mode `modes[m]` (numpy.transpose(SRC, modes)).

Cost model (sim/arch.toml, section [permute]): the step reads SRC's seg, crd and vals arrays and
writes DST's, streaming both through memory, and sorts the entries into DST's storage order
at `permute.elements_per_cycle` entries per cycle:

    cycles = memory.latency + ceil(max(bytes read, bytes written) / memory.bandwidth)
             + ceil(entries / permute.elements_per_cycle)

where entries = max(stored entries of SRC, of DST). FLOPs: 0.
"""

from __future__ import annotations

import math

import numpy as np

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import UserError

from .assemble import stored_elements


class PermuteNode:
    """The step as one pseudo node, with the counters `sim.report` reads from a node."""

    kind = "permute"

    def __init__(self, name: str):
        self.name = name
        self.fires = 0
        self.ii = 1
        self.lat = 0
        self.stall = 0
        self.finish = 0
        self.flops = 0
        self.rd_seg = self.rd_crd = self.rd_vals = 0
        self.wr_seg = self.wr_crd = self.wr_vals = 0


def array_bytes(t: FiberTensor, eb: int) -> dict:
    """Bytes of a tensor's stored arrays: seg and crd of its compressed levels, its values
    (b x b per block)."""
    return {k: v * eb for k, v in stored_elements(t).items()}


def permute_tensor(src: FiberTensor, fmt, modes: tuple[int, ...]) -> FiberTensor:
    """SRC's stored entries stored in format `fmt` with logical modes permuted by `modes`
    (result mode m = SRC mode modes[m]; blocks are transposed likewise)."""
    coords, vals = src.to_coo()
    modes = tuple(modes)
    shape = tuple(src.shape[k] for k in modes)
    coords = np.asarray(coords).reshape(-1, len(src.shape))[:, list(modes)]
    vals = np.asarray(vals)
    if src.block and modes != tuple(range(len(modes))):
        vals = np.transpose(vals, (0,) + tuple(m + 1 for m in modes))
    return FiberTensor.from_coo(shape, coords, vals, fmt, src.block)


def run_permute(step, module, tensors: dict, arch):
    """Run one step: returns (the pseudo node with its counters, cycles, the DST tensor)."""
    src_decl, dst_decl = module.tensor(step.src), module.tensor(step.dst)
    if src_decl is None or dst_decl is None:
        raise UserError(f"simulation: {step.name}: undeclared tensor")
    src = tensors.get(step.src)
    if src is None:
        raise UserError(f"simulation: {step.name} reads tensor {step.src}, which has no data "
                        "(not an input, and not written by an earlier graph)")
    modes = step.mode_map(len(src.shape))
    if (src.block, src.format.blocked) != (dst_decl.block, dst_decl.format.blocked):
        # a re-blocking copy (a blocked part's operand or result, docs/samml.md)
        from fuseflowc.data.decompose import reblock
        dst = reblock(src, dst_decl.format, dst_decl.block, step.dst)
    else:
        dst = permute_tensor(src, dst_decl.format, modes)
    eb = arch.element_bytes
    node = PermuteNode(step.name)
    from fuseflowc.data.decompose import is_relayout
    if is_relayout(src.format, src.block, dst_decl.format, dst_decl.block):
        return node, 0, dst   # a dense matrix re-blocked: addresses, not data (no cost)
    rd, wr = array_bytes(src, eb), array_bytes(dst, eb)
    node.rd_seg, node.rd_crd, node.rd_vals = rd["seg"], rd["crd"], rd["vals"]
    node.wr_seg, node.wr_crd, node.wr_vals = wr["seg"], wr["crd"], wr["vals"]
    entries = max(int(src.vals.shape[0]), int(dst.vals.shape[0]))
    moved = max(sum(rd.values()), sum(wr.values()))
    rate = arch.permute_rate
    sort = math.ceil(entries / rate)
    cycles = arch.mem_latency + math.ceil(moved / arch.bandwidth) + sort
    node.fires = sort
    node.lat = arch.mem_latency
    node.finish = cycles
    return node, cycles, dst

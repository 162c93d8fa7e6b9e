"""The steps between graphs: `permute SRC -> DST` (re-store a tensor in another format or
block size) and `decompose SRC -> P0 >= t0, ..., R` (split it by block fill). Each gets the
simulator's cost model (sim/permute.py, sim/decompose.py) and gives the statistics of what it
writes."""

from __future__ import annotations

import math

import numpy as np

from ..diagnostics import UserError
from . import timing
from .cost import Cost
from .stats import DataStats, TensorStats, shape_of, stats_of_fiber, uniform_stats


def decompose_step(step, tensors: dict, module, data: DataStats, arch) -> Cost:
    """The cost of a decompose step; its parts' statistics go into `tensors`."""
    eb = data.element_bytes
    parts = _decomposed(step, tensors.get(step.src), module, data)
    rd = tensors[step.src].stored()
    wr = {"seg": 0.0, "crd": 0.0, "vals": 0.0}
    for name, ps in parts.items():
        for k, v in ps.stored().items():
            wr[k] += v
        tensors[name] = ps
    # the simulator's model (sim/decompose.py): seg and crd read twice, and two passes
    # over the source's entries (count the blocks' fill, then route each entry)
    c = Cost(0.0, 2 * rd["seg"] * eb, 2 * rd["crd"] * eb, rd["vals"] * eb,
             wr["seg"] * eb, wr["crd"] * eb, wr["vals"] * eb)
    c.cycles = timing.permute_cycles(c.bytes_read, c.bytes_written,
                                     2 * tensors[step.src].nnz, arch)
    return c


def permute_step(step, tensors: dict, module, data: DataStats, arch) -> Cost:
    """The cost of a permute step; DST's statistics go into `tensors`."""
    from ..data.decompose import is_relayout
    eb = data.element_bytes
    src = tensors.get(step.src)
    dst = module.tensor(step.dst)
    if src is None or dst is None:
        raise UserError(f"estimate: {step.name}: {step.src} has no statistics")
    shape = shape_of(dst, data.sizes)
    dst_stats = _permuted(step, src, dst, shape, data)
    tensors[step.dst] = dst_stats
    if is_relayout(src.format, src.block, dst.format, dst.block):
        return Cost()   # as the simulator: no data moves
    rd, wr = src.stored(), dst_stats.stored()
    c = Cost(0.0, rd["seg"] * eb, rd["crd"] * eb, rd["vals"] * eb,
             wr["seg"] * eb, wr["crd"] * eb, wr["vals"] * eb)
    entries = max(src.nnz, dst_stats.nnz)
    c.cycles = timing.permute_cycles(c.bytes_read, c.bytes_written, entries, arch)
    return c


def _permuted(step, src: TensorStats, dst_decl, shape, data: DataStats) -> TensorStats:
    """DST's statistics after `permute SRC -> DST`: exact when SRC is an input loaded from
    files, else SRC's density spread uniformly (dense formats are exact either way)."""
    modes = step.mode_map(len(shape))
    fiber = data.fibers.get(step.src)
    reblocks = (src.block or None) != (dst_decl.block or None)
    if fiber is not None and reblocks:
        from ..data.decompose import reblock
        return stats_of_fiber(dst_decl.name,
                              reblock(fiber, dst_decl.format, dst_decl.block, dst_decl.name))
    if reblocks:   # element density, spread uniformly (blocks: at least that density)
        elements = src.nnz * (src.block or 1) ** 2
        d = elements / math.prod(shape) if math.prod(shape) else 0.0
        return uniform_stats(dst_decl.name, shape, dst_decl.format, dst_decl.block, d)
    if fiber is not None:
        from ..data.fibertree import FiberTensor
        coords, vals = fiber.to_coo()
        coords = coords[:, list(modes)] if coords.size else coords.reshape(-1, len(shape))
        t = FiberTensor.from_coo(shape, coords, vals, dst_decl.format, dst_decl.block)
        return stats_of_fiber(dst_decl.name, t)
    total = math.prod(shape) / ((dst_decl.block or 1) ** 2 if dst_decl.block else 1)
    d = src.nnz / total if total else 0.0
    return uniform_stats(dst_decl.name, shape, dst_decl.format, dst_decl.block, d)


def _decomposed(step, src: TensorStats | None, module, data: DataStats) -> dict:
    """The parts' statistics after `decompose SRC -> P0 >= t0, ..., R`: exact when SRC was
    loaded from files (the split itself, fuseflowc.data.decompose), else for SRC's density
    spread uniformly: a b x b block of what is left (density d) holds x ~ Binomial(b^2, d)
    entries and goes to the part when x >= t b^2."""
    if src is None:
        raise UserError(f"estimate: {step.name}: {step.src} has no statistics")
    decls = [module.tensor(p) for p in step.parts]
    fiber = data.fibers.get(step.src)
    if fiber is not None:
        from ..data.decompose import split
        parts = split(fiber, [(d.format, d.block, t) for d, t in zip(decls, step.thresholds)],
                      step.src)
        return {d.name: stats_of_fiber(d.name, p) for d, p in zip(decls, parts)}
    from scipy.stats import binom
    shape = src.shape
    area = math.prod(shape)
    d = src.nnz / area if area else 0.0
    out = {}
    for decl, t in zip(decls[:-1], step.thresholds[:-1]):
        b = decl.block
        need = math.ceil(t * b * b - 1e-9)
        p_block = float(binom.sf(need - 1, b * b, d)) if d > 0 else 0.0
        # entries in the taken blocks: E[x | x >= need] per taken block
        ks = np.arange(need, b * b + 1)
        taken = float((ks * binom.pmf(ks, b * b, d)).sum()) if d > 0 else 0.0
        out[decl.name] = uniform_stats(decl.name, shape, decl.format, b, p_block)
        d = max(d - taken / (b * b), 0.0)   # what is left, spread over the whole matrix
    last = decls[-1]
    out[last.name] = uniform_stats(last.name, shape, last.format, None, d)
    return out

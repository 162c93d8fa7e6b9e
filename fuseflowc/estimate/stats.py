"""What the estimator knows about tensors: per storage level, how many positions it has and how
they spread over their own coordinates and over their parent's coordinates.

These are the cheap statistics the model needs (docs/estimate.md): for every level, the
histogram of positions per coordinate (a matrix's column counts at its inner level, the row
counts one level up), the positions per parent coordinate (row lengths) and the fibers per parent
coordinate. They are measured from data files in one pass over the stored arrays
(`DataStats.from_dir`), or derived from sizes and densities assuming uniformly and independently
placed non-zeros (`DataStats.from_values`). Estimated tensors written by one graph and read by a
later one get the same description (fuseflowc.estimate.written).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..diagnostics import UserError
from ..limits import check_memory

DENSE = "dense"  # the label of a level that stores every coordinate


@dataclass
class LevelStats:
    """One storage level.

    kind: one of fuseflowc.formats.KINDS; size: extent of its mode (blocks for blocked tensors);
    the other fields describe the coordinates its scanner emits, which for fixed, non-unique
    and singleton levels are those of the classic equivalent format (formats.classic_equivalent:
    padding dropped, a COO row once per run); width: c of a fixed level, short: the fraction of
    its fibers shorter than c (their scan reads one padding slot);
    positions: stored positions of this level; hist[c]: positions with coordinate c (len size);
    parent[a]: positions whose parent position has coordinate a; fibers[a]: parent positions
    with coordinate a (both of len = the parent level's size, or 1 for the top level);
    label: the identity of the level's sparsity pattern (DENSE for dense levels), which tells
    the model when two coordinate streams follow one pattern (see model._meet).
    """

    kind: str
    size: int
    positions: float
    hist: np.ndarray
    parent: np.ndarray
    fibers: np.ndarray
    label: object = DENSE
    pattern: object = None   # scipy csr (parent size x size) when a parent coordinate has at
    #                          most one fiber: which coordinates each parent's fiber holds
    width: int | None = None
    short: float = 0.0

    def fiber_length(self) -> np.ndarray:
        """Expected length of a fiber of this level, per parent coordinate."""
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(self.fibers > 0, self.parent / np.maximum(self.fibers, 1e-300), 0.0)
        return out


@dataclass
class TensorStats:
    """A tensor's storage statistics: logical `shape`, `format`, `block` and one LevelStats per
    storage level."""

    name: str
    shape: tuple[int, ...]
    format: object
    block: int | None
    levels: list[LevelStats]

    @property
    def nnz(self) -> float:
        """Stored entries (positions of the last level; 1 for a scalar)."""
        return self.levels[-1].positions if self.levels else 1.0

    def stored(self) -> dict:
        """Elements of the stored arrays, as sim.assemble.stored_elements counts them: seg
        (parents + 1) and crd of compressed levels, and vals (b*b per block)."""
        seg = crd = 0.0
        parents = 1.0
        for k, lv in enumerate(self.levels):
            positions = lv.positions
            if lv.kind in ("compressed", "nonunique"):
                seg += parents + 1
            if lv.kind == "nonunique":      # one coordinate per entry beneath
                positions = self.levels[k + 1].positions
            elif lv.kind == "fixed":        # c slots per parent, padding included
                positions = parents * lv.width
            if lv.kind != "dense":
                crd += positions
            parents = positions
        vals = parents * (self.block * self.block if self.block else 1)
        return {"seg": seg, "crd": crd, "vals": vals}


def level_shape(shape: tuple[int, ...], fmt, block: int | None) -> list[int]:
    """Size of each storage level (in blocks for blocked tensors)."""
    bshape = shape if not block else tuple(s // block for s in shape)
    return [int(bshape[m]) for m in fmt.mode_order]


def _relabel(stats: TensorStats, fmt, widths: list, shorts: list) -> TensorStats:
    """Statistics measured on the classic equivalent of `fmt` (formats.classic_equivalent),
    given back `fmt`'s level kinds, fixed lengths and short-fiber fractions."""
    for k, lv in enumerate(stats.levels):
        lv.kind, lv.width, lv.short = fmt.kind(k), widths[k], shorts[k]
    stats.format = fmt
    return stats


def stats_of_fiber(name: str, t) -> TensorStats:
    """Measure a FiberTensor: one pass over its levels' seg and crd arrays."""
    if not t.format.classic:
        from ..data.fibertree import FiberTensor
        from ..formats import classic_equivalent
        coords, vals = t.to_coo()
        same = FiberTensor.from_coo(t.shape, coords, vals, classic_equivalent(t.format),
                                    t.block)
        shorts = [float((lv.fiber_lengths() < lv.width).mean()) if lv.kind == "fixed" and
                  lv.crd.shape[0] else 0.0 for lv in t.levels]
        return _relabel(stats_of_fiber(name, same), t.format, [lv.width for lv in t.levels],
                        shorts)
    levels: list[LevelStats] = []
    pc = np.zeros(1, dtype=np.int64)  # the coordinate of every position of the level above
    psize = 1
    label_base = name
    for k, lv in enumerate(t.levels):
        npar = pc.shape[0]
        fibers = np.bincount(pc, minlength=psize).astype(float)
        if lv.kind == "dense":
            coords = np.tile(np.arange(lv.size, dtype=np.int64), npar)
            parent = fibers * lv.size
            label = DENSE
        else:
            counts = np.diff(lv.seg)
            parent = np.bincount(np.repeat(pc, counts), minlength=psize).astype(float)
            coords = np.asarray(lv.crd, dtype=np.int64)
            label = f"{label_base}.{k}"
        hist = np.bincount(coords, minlength=lv.size).astype(float)
        pattern = None
        if lv.kind == "compressed" and (fibers.size == 0 or fibers.max() <= 1):
            import scipy.sparse as sp
            rows = np.repeat(pc, np.diff(lv.seg))
            pattern = sp.csr_matrix((np.ones(coords.shape[0]), (rows, coords)),
                                    shape=(psize, lv.size))
        levels.append(LevelStats(lv.kind, lv.size, float(coords.shape[0]), hist, parent, fibers,
                                 label, pattern))
        pc, psize = coords, lv.size
    return TensorStats(name, tuple(t.shape), t.format, t.block, levels)


def uniform_stats(name: str, shape: tuple[int, ...], fmt, block: int | None,
                  density: float) -> TensorStats:
    """Statistics of a tensor whose stored entries (blocks) are placed uniformly at random with
    probability `density` each: a compressed level k stores a prefix when its subtree of B_k
    entries holds one, with probability 1 - (1 - density)^B_k; dense levels store all. A
    fixed level's fibers count as short (shorter than c) when their mean length is."""
    if not fmt.classic:
        from ..formats import classic_equivalent, level_width
        out = uniform_stats(name, shape, classic_equivalent(fmt), block, density)
        widths = [level_width(lv) for lv in fmt.levels]
        shorts = [0.0 if w is None or float(lv.fiber_length().mean() if lv.fibers.size else 0)
                  >= w else 1.0 for w, lv in zip(widths, out.levels)]
        return _relabel(out, fmt, widths, shorts)
    sizes = level_shape(shape, fmt, block)
    levels: list[LevelStats] = []
    d = min(max(float(density), 0.0), 1.0)
    prev, psize = 1.0, 1
    prefix = 1.0
    for k, (kind, size) in enumerate(zip(fmt.levels, sizes)):
        prefix *= size
        below = math.prod(sizes[k + 1:])
        if kind == "dense":
            n = prev * size
            label = DENSE
        else:
            q = 1.0 - (1.0 - d) ** below if d < 1.0 else 1.0
            n = min(prefix * q, prev * size)
            label = f"{name}.{k}"
        levels.append(LevelStats(kind, size, n, np.full(size, n / max(size, 1)),
                                 np.full(psize, n / psize), np.full(psize, prev / psize), label))
        prev, psize = n, size
    return TensorStats(name, tuple(shape), fmt, block, levels)


@dataclass
class DataStats:
    """Everything the model needs about the data: the size of every dim (`sizes`), statistics
    of every input tensor (`tensors`), bytes per element, and the loaded input tensors when
    they came from files (`fibers`: used to re-store inputs exactly at permute steps)."""

    sizes: dict[str, int]
    tensors: dict[str, TensorStats]
    element_bytes: int = 4
    origin: str = ""
    fibers: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_dir(cls, path, module, element_bytes: int = 4) -> "DataStats":
        """Measure the input tensors of `module` in data directory `path` (the files
        `fuseflowc simulate --data` reads)."""
        from ..data.io import load_inputs
        specs = [t.spec() for t in module.tensors if t.role == "input"]
        tensors, sizes = load_inputs(str(path), specs)
        stats = {name: stats_of_fiber(name, t) for name, t in sorted(tensors.items())}
        return cls(dict(sizes), stats, element_bytes, f"data {path}", dict(tensors))

    @classmethod
    def from_values(cls, module, sizes: dict[str, int], densities: dict[str, float],
                    element_bytes: int = 4, default_density: float | None = None
                    ) -> "DataStats":
        """Statistics from dim sizes and per-tensor densities (fraction of stored entries, or
        of stored blocks for blocked formats), assuming uniform independent non-zeros. A tensor
        without a density gets `default_density`, else 1 if its format is all dense and 0.1
        otherwise (as `fuseflowc gen-data`). Densities of tensors that are not inputs of
        `module` are ignored."""
        sizes = {k: int(v) for k, v in sizes.items()}
        from ..samml.block_sizes import require_blocks
        require_blocks(module, sizes)
        for name in sorted(densities):   # names that are no input of `module` are ignored
            if not 0.0 <= float(densities[name]) <= 1.0:
                raise UserError(f"--density {name}={densities[name]}: a density is in [0, 1]")
        if default_density is not None and not 0.0 <= float(default_density) <= 1.0:
            raise UserError(f"--density {default_density}: a density is in [0, 1]")
        check_memory(model_bytes(module, sizes), "estimating with "
                     + ", ".join(f"--size {k}={v}" for k, v in sorted(sizes.items())))
        stats = {}
        for decl in module.tensors:
            if decl.role != "input":
                continue
            shape = shape_of(decl, sizes)
            if decl.name in densities:
                d = float(densities[decl.name])
            elif default_density is not None:
                d = float(default_density)
            else:
                d = 1.0 if decl.format.is_dense else 0.1
            stats[decl.name] = uniform_stats(decl.name, shape, decl.format, decl.block, d)
        return cls(sizes, stats, element_bytes, "values")


def model_bytes(module, sizes: dict[str, int]) -> int:
    """About the bytes the model allocates: a few float arrays (histograms of positions per
    coordinate and per parent coordinate, and their temporaries) per storage level of every
    tensor of `module`, each as long as the level's or its parent's extent (measured: 2 to 4
    arrays of 8 bytes per element on SpMV and GCN)."""
    elements = 0
    for decl in module.tensors:
        sizes_k = level_shape(shape_of(decl, sizes), decl.format, decl.block)
        elements += sum(sizes_k) + sum([1] + sizes_k[:-1])
    return 32 * elements


def shape_of(decl, sizes: dict[str, int]) -> tuple[int, ...]:
    """The shape of a declared tensor from the dim sizes (UserError naming a missing dim)."""
    out = []
    for d in decl.dims:
        if isinstance(d, int):
            out.append(d)
        elif d in sizes:
            out.append(int(sizes[d]))
        else:
            raise UserError(f"the size of dim {d} (of tensor {decl.name}) is not known: give "
                            f"--size {d}=N or --data DIR")
    if decl.block:
        for s in out:
            if s % decl.block:
                raise UserError(f"tensor {decl.name}: size {s} is not a multiple of its block "
                                f"size {decl.block}")
    return tuple(out)

"""Random input tensors, seeded and deterministic, in any declared format.

Values of stored non-zero entries are drawn uniformly from [-1, 1), never exactly 0 (a zero is
redrawn), so a generated tensor's pattern and its non-zeros agree wherever the format lets them.
Density is the fraction of non-zero entries (of non-zero blocks, for blocked formats), picked
uniformly without replacement: exactly round(density * count) of them.
  - compressed levels store exactly the non-zeros;
  - dense levels store every coordinate beneath them, so the entries not picked are explicit 0s;
  - a compressed(c) level stores at most c coordinates per fiber: picks beyond a fiber's c
    smallest coordinates are dropped (so the density can come out lower than asked);
  - without a density, all-dense formats are fully non-zero and other formats use
    DEFAULT_SPARSE_DENSITY.
Each tensor of `random_inputs` draws from its own stream derived from (seed, tensor name), so
adding or removing one tensor never changes the others.
"""

from __future__ import annotations

import math
import zlib
from typing import Mapping

import numpy as np

from ..diagnostics import UserError
from ..limits import check_memory
from .fibertree import FiberTensor, check_storage, stored_positions
from .spec import TensorSpec

DEFAULT_SPARSE_DENSITY = 0.1
# Sampling picks flat indices in int64; larger index spaces cannot be sampled exactly.
_MAX_INDEX_SPACE = 2**62


def nonzero_uniform(rng: np.random.Generator, size) -> np.ndarray:
    """Uniform values in [-1, 1) with every exact 0 redrawn."""
    v = rng.uniform(-1.0, 1.0, size=size)
    while True:
        zero = v == 0.0
        if not zero.any():
            return v
        v[zero] = rng.uniform(-1.0, 1.0, size=int(zero.sum()))


def generation_bytes(fmt, grid: tuple[int, ...], k: int, b: int | None) -> int:
    """About the bytes `random_tensor` allocates for `k` entries (blocks of b x b) of a tensor
    with (block) grid `grid` stored in `fmt`: the sample (numpy's choice without replacement
    permutes the whole index space when k is over a fiftieth of it), coordinates and values of
    the entries, and the stored levels."""
    total = math.prod(grid)
    sample = 8 * total if total > 10000 and k > total // 50 else 24 * k
    bb = (b or 1) ** 2
    return sample + 8 * k * (2 + 2 * len(grid) + bb) + 16 * stored_positions(fmt, grid, k) * bb


def _pick(rng: np.random.Generator, total: int, k: int) -> np.ndarray:
    """k distinct flat indices in [0, total), sorted."""
    if k == total:
        return np.arange(total, dtype=np.int64)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(rng.choice(total, size=k, replace=False).astype(np.int64))


def random_tensor(spec: TensorSpec, shape: tuple[int, ...], density: float | None = None,
                  rng: np.random.Generator | None = None, block: int | None = None
                  ) -> FiberTensor:
    """A random tensor of logical `shape` stored in `spec.format` (see the module docstring).

    `block` (default `spec.block`) is the block size of a blocked format; the shape must be
    divisible by it and `density` then counts blocks. `rng` defaults to a Generator seeded 0.
    """
    fmt = spec.format
    shape = tuple(int(s) for s in shape)
    if len(shape) != fmt.order:
        raise UserError(f"tensor '{spec.name}' has {fmt.order} dim(s) but a shape of "
                        f"{len(shape)} was given")
    if any(s < 0 for s in shape):
        raise UserError(f"tensor '{spec.name}': sizes must be non-negative, got {shape}")
    if density is None:
        density = 1.0 if fmt.is_dense else DEFAULT_SPARSE_DENSITY
    density = float(density)
    if not 0.0 <= density <= 1.0:
        raise UserError(f"tensor '{spec.name}': density must be between 0 and 1, got {density}")
    rng = rng if rng is not None else np.random.default_rng(0)
    b = None
    if fmt.blocked:
        b = block if block is not None else spec.block
        if b is None or b < 1:
            raise UserError(f"tensor '{spec.name}' has blocked format {fmt.name()} but no block "
                            f"size")
        if any(s % b for s in shape):
            raise UserError(f"tensor '{spec.name}': shape {shape} is not divisible by block "
                            f"size {b}")
    grid = shape if b is None else tuple(s // b for s in shape)
    total = math.prod(grid)
    if total >= _MAX_INDEX_SPACE:
        raise UserError(f"tensor '{spec.name}': shape {shape} is too large to sample")
    k = int(round(density * total))
    check_memory(generation_bytes(fmt, grid, k, b),
                 f"tensor '{spec.name}' ({' x '.join(map(str, shape))} {fmt.name()}, density "
                 f"{density:g}, {k} entries)")
    check_storage(spec.name, shape, fmt, k, b)  # what loading it back would refuse
    flat = _pick(rng, total, k)
    coords = (np.stack(np.unravel_index(flat, grid), axis=1).astype(np.int64) if grid
              else np.zeros((k, 0), np.int64))
    vals = nonzero_uniform(rng, (k,) if b is None else (k, b, b))
    if "fixed" in fmt.kinds:
        coords, vals = _fit_fixed(fmt, coords, vals)
    return FiberTensor.from_coo(shape, coords, vals, fmt, b, spec.name)


def _fit_fixed(fmt, coords: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries among `coords` (unique) whose coordinate at every compressed(c) level is
    among the c smallest of its fiber (the fiber: the coordinates of the levels above)."""
    from ..formats import level_width

    sc = coords[:, list(fmt.mode_order)]
    keep = np.ones(sc.shape[0], dtype=bool)
    for k, kind in enumerate(fmt.kinds):
        if kind != "fixed" or not sc.shape[0]:
            continue
        # rank of each distinct coordinate at level k within its fiber
        order = np.lexsort(sc[:, :k + 1].T[::-1])
        s = sc[order, :k + 1]
        new_fiber = np.ones(s.shape[0], dtype=bool)
        new_crd = np.ones(s.shape[0], dtype=bool)
        if s.shape[0] > 1:
            new_fiber[1:] = (s[1:, :k] != s[:-1, :k]).any(axis=1) if k else False
            new_crd[1:] = new_fiber[1:] | (s[1:, k] != s[:-1, k])
        distinct = np.cumsum(new_crd)
        fiber_start = np.maximum.accumulate(np.where(new_fiber, distinct, 0))
        rank = np.empty(s.shape[0], dtype=np.int64)
        rank[order] = distinct - fiber_start
        keep &= rank < level_width(fmt.levels[k])
    return coords[keep], vals[keep]


def tensor_rng(seed: int, name: str) -> np.random.Generator:
    """The Generator of one named tensor: independent of every other name, fixed by the seed."""
    if int(seed) < 0:
        raise UserError(f"the random seed must be a non-negative integer, not {seed}")
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def resolve_shape(spec: TensorSpec, sizes: Mapping[str, int]) -> tuple[int, ...]:
    """The concrete shape of `spec` given sizes of its named dims."""
    out = []
    for d in spec.dims:
        if isinstance(d, int):
            out.append(d)
        elif d in sizes:
            out.append(int(sizes[d]))
        else:
            known = ", ".join(sorted(sizes)) or "none"
            raise UserError(f"no size for dim {d} of tensor '{spec.name}' (sizes known: "
                            f"{known})")
    return tuple(out)


def random_inputs(specs: list[TensorSpec], sizes: Mapping[str, int], seed: int = 0,
                  density: float | Mapping[str, float] | None = None
                  ) -> dict[str, FiberTensor]:
    """Random tensors for every spec: shapes from `sizes`, `density` one number for all or a
    mapping tensor name -> density (absent names get the format's default)."""
    out = {}
    for spec in specs:
        d = density.get(spec.name) if isinstance(density, Mapping) else density
        out[spec.name] = random_tensor(spec, resolve_shape(spec, sizes), d,
                                       tensor_rng(seed, spec.name))
    return out

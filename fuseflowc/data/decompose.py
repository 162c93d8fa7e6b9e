"""Splitting a matrix into the parts of a format decomposition, and re-blocking a tensor
(docs/language.md, "Format decomposition"). Used by the simulator's `decompose` and `permute`
steps and by the decomposition advisor; the reference evaluator has its own split
(fuseflowc.reference.decompose), so that the two check each other.

The rule: parts are taken in order. For a blocked part with block size b and threshold t, the
matrix is cut into aligned b x b blocks; a block goes to the part when the entries of the matrix
it holds that no earlier part took number at least t * b * b (computed in double precision);
the part stores those blocks (b x b values, zeros where the matrix stores nothing). The
residual (the last part) stores every entry no blocked part took. Explicit zeros the matrix
stores count as entries: the rule looks at the pattern, never at values.
"""

from __future__ import annotations

import numpy as np

from ..diagnostics import UserError
from ..formats import Format
from .fibertree import FiberTensor, check_storage


def block_fill(rows: np.ndarray, cols: np.ndarray, b: int, ncols: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(block keys, entries per block, each entry's index into the keys) of entries at
    (rows, cols) cut into b x b blocks of a matrix with `ncols` columns."""
    nb = max(ncols // b, 1)
    key = (rows // b) * nb + cols // b
    keys, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return keys, counts, inverse.reshape(-1)


def split(t: FiberTensor, parts: list[tuple[Format, int | None, float | None]],
          name: str = "A") -> list[FiberTensor]:
    """The parts of matrix `t` (unblocked), one FiberTensor per (format, block, threshold),
    the last being the residual (block and threshold None)."""
    if t.block is not None or t.order != 2:
        raise UserError(f"decompose {name}: {name} must be an unblocked matrix")
    coords, vals = t.to_coo()
    coords = np.asarray(coords, dtype=np.int64).reshape(-1, 2)
    vals = np.asarray(vals, dtype=np.float64)
    m, n = t.shape
    left = np.ones(coords.shape[0], dtype=bool)
    out: list[FiberTensor] = []
    for fmt, b, thr in parts[:-1]:
        if m % b or n % b:
            raise UserError(f"decompose {name}: block size {b} does not divide the shape "
                            f"({m}, {n}) of {name}")
        idx = np.flatnonzero(left)
        r, c = coords[idx, 0], coords[idx, 1]
        keys, counts, inv = block_fill(r, c, b, n)
        chosen = counts >= thr * b * b
        take = chosen[inv] if idx.shape[0] else np.zeros(0, dtype=bool)
        sel = idx[take]
        kept = keys[chosen]
        check_storage(name, (m, n), fmt, int(kept.shape[0]), b)   # before allocating blocks
        blocks = np.zeros((kept.shape[0], b, b))
        slot = np.searchsorted(kept, keys[inv[take]])
        blocks[slot, coords[sel, 0] % b, coords[sel, 1] % b] = vals[sel]
        nb = max(n // b, 1)
        bcoords = np.stack([kept // nb, kept % nb], axis=1).astype(np.int64)
        out.append(FiberTensor.from_coo((m, n), bcoords, blocks, fmt, b, name))
        left[sel] = False
    fmt = parts[-1][0]
    out.append(FiberTensor.from_coo((m, n), coords[left], vals[left], fmt, None, name))
    return out


def reblock(t: FiberTensor, fmt: Format, block: int | None, name: str = "T") -> FiberTensor:
    """`t`'s stored entries (a blocked tensor's: every element of its blocks, zeros included)
    stored in `fmt` with block size `block` (None: unblocked; else a block is stored when it
    holds an entry of t)."""
    coords, vals = t.element_coo()
    coords = np.asarray(coords, dtype=np.int64).reshape(-1, len(t.shape))
    if block is None:
        return FiberTensor.from_coo(t.shape, coords, vals, fmt, None, name)
    m, n = t.shape
    if m % block or n % block:
        raise UserError(f"block size {block} does not divide the shape ({m}, {n}) of {name}")
    keys, _, inv = block_fill(coords[:, 0], coords[:, 1], block, n)
    check_storage(name, t.shape, fmt, int(keys.shape[0]), block)   # before allocating blocks
    blocks = np.zeros((keys.shape[0], block, block))
    blocks[inv, coords[:, 0] % block, coords[:, 1] % block] = vals
    nb = max(n // block, 1)
    bcoords = np.stack([keys // nb, keys % nb], axis=1).astype(np.int64)
    return FiberTensor.from_coo(t.shape, bcoords, blocks, fmt, block, name)


def pad_matrix(t: FiberTensor, multiple: int) -> FiberTensor:
    """Matrix `t` with empty rows and columns appended up to a multiple of `multiple` in both
    dims (its stored entries unchanged), so that block sizes dividing `multiple` divide it."""
    shape = tuple(-(-s // multiple) * multiple for s in t.shape)
    coords, vals = t.to_coo()
    return FiberTensor.from_coo(shape, coords, vals, t.format, t.block)


def is_relayout(src_format: Format, src_block: int | None, dst_format: Format,
                dst_block: int | None) -> bool:
    """Whether a copy between these formats only re-blocks an all-dense matrix (dense <-> bdense,
    row-major both): every element is stored either way, so the copy is a change of address
    order, not of data. A graph reads a b x b block of a row-major matrix as b runs of b
    contiguous elements (and a row of a block-major one as runs of b), the same bytes: the
    simulator and the estimator charge those bytes to the graph that reads them, and the copy
    itself nothing (docs/language.md, "Format decomposition")."""
    identity = (0, 1)
    return ((src_block or None) != (dst_block or None)
            and src_format.is_dense and dst_format.is_dense
            and src_format.mode_order == identity and dst_format.mode_order == identity)

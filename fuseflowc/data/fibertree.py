"""Fiber-tree storage of a tensor in a given format: the arrays a SAM level scanner reads.

A `FiberTensor` holds one `Level` per storage level (dense: a size; compressed: seg and crd arrays)
and a values array with one entry per position of the last level (or one b x b block per position
for blocked formats). Positions of a level: level k's dense positions are parent * size + crd;
compressed positions index its crd array. The root has the single position 0.

Stored entries are exactly the positions of the last level: a dense level stores every coordinate
(explicit zeros included), a compressed level only those written. This is the "pattern" the
sparsity semantics of the language talk about.

The other level formats (fuseflowc.formats): a non-unique compressed level (COO's first) has one
position per distinct (parent, coordinate, singleton coordinate) beneath it, its crd repeating a
coordinate; a singleton level has one position per parent position and a crd array, no seg; a
fixed-length level compressed(c) has c positions per parent, a crd array with PAD in the slots
after the fiber's coordinates, no seg.
Padding positions hold value 0 and are not entries: `to_coo` and everything built on it drop
them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import UserError
from ..formats import PAD, Format, level_width
from ..limits import check_memory

# Dense levels store every coordinate: a format that would store more values than this is a
# user error to report (a sparser format, smaller data), not a MemoryError to crash on.
MAX_STORED_POSITIONS = 2**28


def stored_positions(fmt: Format, grid: tuple[int, ...], nnz: int) -> int:
    """The most positions any level of `fmt` stores for `nnz` entries of a tensor whose (block)
    grid is `grid`: dense levels multiply, a compressed level holds at most one position per
    stored entry."""
    npos = most = 1
    for kind, lv, mode in zip(fmt.kinds, fmt.levels, fmt.mode_order):
        if kind == "fixed":
            npos = npos * level_width(lv)
        elif kind != "singleton":
            npos = npos * grid[mode] if kind == "dense" else min(npos * grid[mode], nnz)
        most = max(most, npos)
    return most


def check_storage(name: str | None, shape: tuple[int, ...], fmt: Format, nnz: int,
                  block: int | None = None) -> None:
    """Refuse, before allocating, to store `nnz` entries of a tensor of `shape` in `fmt` when
    its levels would hold more than MAX_STORED_POSITIONS values, or more than the machine's
    memory has room for (UserError naming the tensor, its shape and format)."""
    grid = shape if block is None else tuple(s // block for s in shape)
    n = stored_positions(fmt, grid, nnz) * (block or 1) ** 2
    what = (f"storing {'tensor ' + repr(name) + ' ' if name else 'a tensor '}"
            f"({' x '.join(map(str, shape))}) in format {fmt.name()}")
    if n > MAX_STORED_POSITIONS:
        raise UserError(f"{what} would need {n} stored values, more than the "
                        f"{MAX_STORED_POSITIONS} fuseflowc stores per tensor; declare a sparser "
                        f"format or use smaller sizes")
    check_memory(24 * n, what)  # values, coordinates and segments


def _storage_sort(scoords: np.ndarray, sshape: tuple[int, ...]) -> np.ndarray | None:
    """The permutation sorting coordinates (in storage order) lexicographically, stable; None
    when they are sorted already (a CSR matrix's entries usually are). One int64 key per entry
    when the index space allows it: much faster than lexsort on tens of millions of entries."""
    if math.prod(sshape) < 2**62:
        keys = np.ravel_multi_index(tuple(scoords.T), sshape)
        if (keys[1:] >= keys[:-1]).all():
            return None
        return np.argsort(keys, kind="stable")
    return np.lexsort(scoords.T[::-1])


def _fixed_level(pos: np.ndarray, c: np.ndarray, npos: int, width: int, name: str | None,
                 fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """A fixed-length level's crd array (npos * width, PAD after each fiber's coordinates) and
    the positions of the entries (`pos` their parent positions, sorted; `c` their coordinates).
    A fiber with more than `width` distinct coordinates is a UserError."""
    new = np.ones(c.shape[0], dtype=bool)
    if c.shape[0]:
        new[1:] = (pos[1:] != pos[:-1]) | (c[1:] != c[:-1])
    parent, crd_u = pos[new], c[new]
    counts = np.bincount(parent, minlength=npos) if npos else np.zeros(0, np.int64)
    if counts.shape[0] and counts.max() > width:
        worst = int(np.argmax(counts))
        what = f"tensor {name!r}" if name else "a tensor"
        raise UserError(f"storing {what} in format {fmt.name()}: fiber {worst} of its "
                        f"compressed({width}) level has {int(counts[worst])} coordinates, more "
                        f"than its fixed length {width}; choose c >= {int(counts.max())} (the "
                        f"longest fiber) or a compressed level")
    check_memory(8 * npos * width, f"storing a compressed({width}) level of {npos} fibers")
    start = np.zeros(npos + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    rank = np.arange(crd_u.shape[0], dtype=np.int64) - start[parent]
    slot = parent * width + rank
    crd = np.full(npos * width, PAD, dtype=np.int64)
    crd[slot] = crd_u
    unique_index = np.cumsum(new) - 1
    return crd, slot[unique_index] if c.shape[0] else slot


@dataclass
class Level:
    """One storage level: `kind` one of fuseflowc.formats.KINDS, `size` the extent of its mode
    (in blocks for blocked tensors); compressed and nonunique levels carry `seg` (len parents+1)
    and `crd` (int64), singleton and fixed ones only `crd`; `width` is a fixed level's c."""

    kind: str
    size: int
    seg: np.ndarray | None = None
    crd: np.ndarray | None = None
    width: int | None = None

    def positions(self, parents: int) -> int:
        """Number of positions of this level given the number of parent positions."""
        if self.kind == "dense":
            return parents * self.size
        return int(self.crd.shape[0])

    def fiber_lengths(self) -> np.ndarray:
        """Coordinates each fiber of this (non-dense) level stores: for a fixed level, the slots
        before its first padding one; a singleton fiber holds one."""
        if self.kind == "fixed":
            return (self.crd.reshape(-1, self.width) != PAD).sum(axis=1) if self.width else \
                np.zeros(0, np.int64)
        if self.kind == "singleton":
            return np.ones(self.crd.shape[0], dtype=np.int64)
        return np.diff(self.seg)


@dataclass
class FiberTensor:
    """A tensor of logical `shape` stored in `format` (see module docstring)."""

    shape: tuple[int, ...]
    format: Format
    levels: list[Level]
    vals: np.ndarray
    block: int | None = None

    @property
    def order(self) -> int:
        return len(self.shape)

    @property
    def nnz(self) -> int:
        """Number of stored entries (positions of the last level; blocks count as one)."""
        return int(self.vals.shape[0])

    @property
    def entries(self) -> int:
        """Number of stored entries: `nnz` less the padding slots of compressed(c) levels."""
        if not any(lv.kind == "fixed" for lv in self.levels):
            return self.nnz
        return int((self.storage_coords() != PAD).all(axis=1).sum())

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_coo(cls, shape, coords, values, fmt: Format, block: int | None = None,
                 name: str | None = None) -> "FiberTensor":
        """Build from stored entries: `coords` (nnz, order) in logical mode order, `values` (nnz,)
        or (nnz, b, b) when `block` is set (then shape and coords count blocks... see below).

        For blocked tensors `shape` is the full element shape and `coords` are block coordinates.
        Duplicate coordinates are summed. Entries under dense levels that are not given are 0.
        A format that would store too much is a UserError (`check_storage`; `name` names the
        tensor in it).
        """
        shape = tuple(int(s) for s in shape)
        order = len(shape)
        values = np.asarray(values, dtype=np.float64)
        check_storage(name, shape, fmt, values.shape[0] if values.ndim else 1, block)
        # Order 0 (a scalar): one stored entry per value, each with no coordinates.
        coords = np.asarray(coords, dtype=np.int64).reshape(-1, order) if order else \
            np.zeros((values.reshape(-1).shape[0] if block is None else values.shape[0], 0),
                     dtype=np.int64)
        bshape = shape if block is None else tuple(s // block for s in shape)
        perm = list(fmt.mode_order)
        scoords = coords[:, perm] if order else coords
        if scoords.shape[0] and order:
            idx = _storage_sort(scoords, tuple(bshape[p] for p in perm))
            if idx is not None:
                scoords = scoords[idx]
                values = values[idx]
        levels: list[Level] = []
        pos = np.zeros(scoords.shape[0], dtype=np.int64)
        npos = 1
        for k, kind in enumerate(fmt.kinds):
            size = bshape[perm[k]]
            c = scoords[:, k]
            if kind == "nonunique":
                # one position per distinct (parent, this coordinate, the singleton's below)
                new = np.ones(c.shape[0], dtype=bool)
                if c.shape[0]:
                    below = scoords[:, k + 1]
                    new[1:] = (pos[1:] != pos[:-1]) | (c[1:] != c[:-1]) | \
                        (below[1:] != below[:-1])
                parent = pos[new]
                counts = np.bincount(parent, minlength=npos) if npos else np.zeros(0, np.int64)
                seg = np.zeros(npos + 1, dtype=np.int64)
                np.cumsum(counts, out=seg[1:])
                levels.append(Level("nonunique", size, seg, c[new].astype(np.int64)))
                pos = np.cumsum(new) - 1
                npos = int(new.sum()) if c.shape[0] else 0
            elif kind == "singleton":      # one coordinate per parent position
                crd = np.zeros(npos, dtype=np.int64)
                crd[pos] = c
                levels.append(Level("singleton", size, None, crd))
            elif kind == "fixed":
                width = level_width(fmt.levels[k])
                crd, pos = _fixed_level(pos, c, npos, width, name, fmt)
                levels.append(Level("fixed", size, None, crd, width))
                npos = npos * width
            elif kind == "dense":
                pos = pos * size + c
                npos = npos * size
                levels.append(Level("dense", size))
            elif kind == "compressed":
                if c.shape[0]:
                    new = np.ones(c.shape[0], dtype=bool)
                    new[1:] = (pos[1:] != pos[:-1]) | (c[1:] != c[:-1])
                    crd = c[new]
                    parent = pos[new]
                    pos = np.cumsum(new) - 1
                else:
                    crd = np.zeros(0, dtype=np.int64)
                    parent = crd
                counts = np.bincount(parent, minlength=npos) if npos else np.zeros(0, np.int64)
                seg = np.zeros(npos + 1, dtype=np.int64)
                np.cumsum(counts, out=seg[1:])
                levels.append(Level("compressed", size, seg, crd.astype(np.int64)))
                npos = int(crd.shape[0])
            else:
                raise ValueError(f"level format {kind} is not supported")
        vshape = (npos,) if block is None else (npos, block, block)
        vals = np.zeros(vshape, dtype=np.float64)
        if pos.shape[0]:
            if pos.shape[0] == npos or (pos[1:] != pos[:-1]).all():
                vals[pos] = values          # no duplicates (pos is sorted): a plain scatter
            elif block is None:
                vals += np.bincount(pos, weights=values, minlength=npos)
            else:
                np.add.at(vals, pos, values)
        return cls(shape, fmt, levels, vals, block)

    @classmethod
    def from_dense(cls, array, fmt: Format, block: int | None = None) -> "FiberTensor":
        """Store a dense array: compressed levels keep the non-zero entries (blocks: non-zero
        blocks), dense levels keep everything under them."""
        a = np.asarray(array, dtype=np.float64)
        if block is None:
            coords = np.argwhere(a != 0) if a.ndim else np.zeros((1 if a != 0 else 0, 0), np.int64)
            values = a[tuple(coords.T)] if a.ndim else a.reshape(-1)[: coords.shape[0]]
            return cls.from_coo(a.shape, coords, values, fmt)
        m, n = a.shape
        b = block
        blocks = a.reshape(m // b, b, n // b, b).transpose(0, 2, 1, 3)
        nz = np.argwhere(np.abs(blocks).sum(axis=(2, 3)) != 0)
        return cls.from_coo(a.shape, nz, blocks[nz[:, 0], nz[:, 1]], fmt, block)

    # ---- reading ------------------------------------------------------------------------
    def storage_coords(self) -> np.ndarray:
        """Coordinates (positions, order) of every position of the last level, in storage level
        order (padding positions of fixed levels have PAD among them)."""
        coords = np.zeros((1, 0), dtype=np.int64)
        for lvl in self.levels:
            npar = coords.shape[0]
            if lvl.kind == "dense":
                rep = np.repeat(coords, lvl.size, axis=0)
                c = np.tile(np.arange(lvl.size, dtype=np.int64), npar)
            elif lvl.kind == "fixed":
                rep = np.repeat(coords, lvl.width, axis=0)
                c = lvl.crd
            elif lvl.kind == "singleton":
                rep = coords
                c = lvl.crd
            else:
                counts = np.diff(lvl.seg)
                rep = np.repeat(coords, counts, axis=0)
                c = lvl.crd
            coords = np.concatenate([rep, c[:, None]], axis=1)
        return coords

    def to_coo(self) -> tuple[np.ndarray, np.ndarray]:
        """Stored entries: (coords (nnz, order) in logical mode order, values); padding is not
        an entry."""
        sc = self.storage_coords()
        vals = self.vals
        if any(lv.kind == "fixed" for lv in self.levels):
            keep = (sc != PAD).all(axis=1)
            sc, vals = sc[keep], vals[keep]
        coords = np.empty_like(sc)
        for k, mode in enumerate(self.format.mode_order):
            coords[:, mode] = sc[:, k]
        return coords, vals

    def element_coo(self) -> tuple[np.ndarray, np.ndarray]:
        """Stored entries at element granularity: like `to_coo`, with every stored b x b block
        expanded into its b*b elements (explicit zeros included)."""
        coords, vals = self.to_coo()
        if self.block is None:
            return coords, vals
        b = self.block
        n = coords.shape[0]
        ii, jj = np.meshgrid(np.arange(b), np.arange(b), indexing="ij")
        rows = (coords[:, 0, None] * b + ii.reshape(1, -1)).reshape(-1)
        cols = (coords[:, 1, None] * b + jj.reshape(1, -1)).reshape(-1)
        coords = np.stack([rows, cols], axis=1) if n else np.zeros((0, 2), np.int64)
        return coords, vals.reshape(-1)

    def to_dense(self) -> np.ndarray:
        """The dense array (absent entries are 0)."""
        coords, vals = self.to_coo()
        out = np.zeros(self.shape, dtype=np.float64)
        if self.block is None:
            if not self.order:  # a scalar: its one value
                out[()] = vals[0]
            elif coords.shape[0]:
                out[tuple(coords.T)] = vals
            return out
        b = self.block
        for (bi, bj), blk in zip(coords, vals):
            out[bi * b:(bi + 1) * b, bj * b:(bj + 1) * b] = blk
        return out

    def pattern(self) -> np.ndarray:
        """Boolean array, True where an entry is stored (element granularity)."""
        coords, _ = self.to_coo()
        out = np.zeros(self.shape if self.block is None else
                       tuple(s // self.block for s in self.shape), dtype=bool)
        if coords.shape[0]:
            out[tuple(coords.T)] = True
        if self.block is not None:
            out = np.kron(out, np.ones((self.block, self.block), dtype=bool))
        return out

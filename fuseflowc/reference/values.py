"""The value the reference evaluator computes with: a pattern-carrying sparse tensor over named
index variables.

An `SVal` is a set of stored entries: one row of `coords` per entry, one column per index
variable in `indices`, and the entry's value in `vals` (float64). Rows are unique but in no
particular order (operations sort when they need to). The pattern of the language's sparsity
semantics is exactly the set of rows. A value with no indices is a scalar: one row (stored, e.g. a
constant, which is "stored everywhere" because it broadcasts) or no row (absent, e.g. a sum over
nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..data.fibertree import FiberTensor

# Linearized keys are int64; an index space at least this large is keyed by np.unique instead.
_KEY_LIMIT = 2**62


@dataclass
class SVal:
    """Stored entries over index variables `indices` (each ranging over `sizes[k]`)."""

    indices: tuple[str, ...]
    sizes: tuple[int, ...]
    coords: np.ndarray  # (nnz, len(indices)) int64, unique rows
    vals: np.ndarray    # (nnz,) float64

    @property
    def nnz(self) -> int:
        return int(self.vals.shape[0])

    @property
    def space(self) -> int:
        """Number of coordinates of the full index space."""
        return math.prod(self.sizes)

    def is_full(self) -> bool:
        """True when every coordinate of the index space is stored."""
        return self.nnz == self.space

    def size_of(self, index: str) -> int:
        return self.sizes[self.indices.index(index)]

    @classmethod
    def scalar(cls, value: float) -> "SVal":
        """A constant: stored, with no indices (so it broadcasts everywhere)."""
        return cls((), (), np.zeros((1, 0), np.int64), np.array([float(value)]))

    @classmethod
    def from_fiber(cls, t: FiberTensor, indices: tuple[str, ...]) -> "SVal":
        """The stored entries of a tensor read as `t[indices...]`; a blocked tensor's stored
        entries are all elements of its stored blocks (explicit zeros included)."""
        coords, vals = t.element_coo()
        coords = np.asarray(coords, np.int64).reshape(-1, t.order)
        vals = np.asarray(vals, np.float64)
        return cls(tuple(indices), tuple(int(s) for s in t.shape), coords, vals.copy())

    def transpose(self, indices) -> "SVal":
        """The same entries with columns in the order `indices` (a permutation of ours)."""
        indices = tuple(indices)
        if indices == self.indices:
            return self
        perm = [self.indices.index(i) for i in indices]
        return SVal(indices, tuple(self.sizes[p] for p in perm), self.coords[:, perm], self.vals)

    def sorted(self) -> "SVal":
        """The same entries in lexicographic order of `indices` (for deterministic output)."""
        if self.nnz < 2 or not self.indices:
            return self
        (k,) = keys([self.coords], self.sizes)
        if (k[1:] >= k[:-1]).all():
            return self
        order = np.argsort(k, kind="stable")
        return SVal(self.indices, self.sizes, self.coords[order], self.vals[order])

    def to_dense(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, pattern) as dense arrays over the index space (absent entries are 0)."""
        v = np.zeros(self.sizes)
        p = np.zeros(self.sizes, bool)
        if self.nnz and not self.indices:
            v[()] = self.vals[0]
            p[()] = True
        elif self.nnz:
            idx = tuple(self.coords.T)
            v[idx] = self.vals
            p[idx] = True
        return v, p


def unique_keys(k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(k, return_index=True, return_inverse=True) for 1-D integer keys: the sorted
    distinct keys, the position of each one's first occurrence, and each key's rank.

    Sorted keys (a CSR operand's row keys) in one linear pass; unsorted keys in a range of a
    few times their count by counting (_unique_by_counting); others by a stable argsort and a
    mask. numpy 2.x's np.unique takes many times longer on the tens of millions of keys of a
    MAG-size graph."""
    k = np.asarray(k).reshape(-1)
    n = k.shape[0]
    is_sorted = bool(n) and bool((k[1:] >= k[:-1]).all())
    if n and not is_sorted and k.min() >= 0 and int(k.max()) < max(_COUNT_RANGE * n, 1 << 16):
        return _unique_by_counting(k)
    if is_sorted:
        order = np.arange(k.shape[0])
        s = k
    else:
        order = np.argsort(k, kind="stable")
        s = k[order]
    new = np.empty(s.shape[0], bool)
    new[:1] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    inv = np.empty(s.shape[0], np.int64)
    inv[order] = np.cumsum(new) - 1
    return s[new], order[new].astype(np.int64), inv


#: Keys below this many times their count are ranked by counting (a presence array over the key
#: range) instead of sorting: a CSR operand's column keys, a dense operand's row keys.
_COUNT_RANGE = 4


def _unique_by_counting(k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """unique_keys of non-negative keys in a range of a few times their count: a presence
    array and its running count give each key's rank in O(n + range), no sort (an argsort of
    the tens of millions of column keys of a MAG-size adjacency takes most of a reference
    evaluation)."""
    present = np.zeros(int(k.max()) + 1, bool)
    present[k] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    inv = rank[k]
    distinct = np.flatnonzero(present).astype(k.dtype)
    # the first occurrence of each key: assigned from the last position to the first, so the
    # first one is written last (numpy assigns a repeated index in order: the last write wins;
    # tests/reference/test_reference_props.py checks this against np.unique)
    first = np.empty(distinct.shape[0], np.int64)
    first[inv[::-1]] = np.arange(k.shape[0] - 1, -1, -1, dtype=np.int64)
    return distinct, first, inv


def keys(coord_arrays: list[np.ndarray], sizes: tuple[int, ...]) -> list[np.ndarray]:
    """Consistent int64 keys of the rows of several coordinate arrays over the same index columns
    (equal rows get equal keys, and keys order like the rows lexicographically)."""
    if not sizes:
        return [np.zeros(c.shape[0], np.int64) for c in coord_arrays]
    if math.prod(max(s, 1) for s in sizes) < _KEY_LIMIT:
        strides = np.ones(len(sizes), np.int64)
        for k in range(len(sizes) - 2, -1, -1):
            strides[k] = strides[k + 1] * max(sizes[k + 1], 1)
        return [c @ strides if c.shape[0] else np.zeros(0, np.int64) for c in coord_arrays]
    allc = np.concatenate(coord_arrays, axis=0)
    _, inv = np.unique(allc, axis=0, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    out, start = [], 0
    for c in coord_arrays:
        out.append(inv[start:start + c.shape[0]])
        start += c.shape[0]
    return out

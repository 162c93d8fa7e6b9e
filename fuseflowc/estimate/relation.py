"""Relations: which coordinates of one depth of a stream follow each coordinate of the depth
above it (for a matrix scanned row by row: which columns each row holds).

A relation is one of three things, and `Relation` names them:

- `FULL`: every coordinate follows every parent coordinate (a dense level), without an array;
- a 0/1 scipy csr matrix (parent coordinates x coordinates), a measured sparsity pattern;
- None: not known (the model then falls back on histograms).

Joining streams intersects or unites their relations; a relation carries a parent depth's
histogram of coordinates down to the next (`through`). docs/estimate.md, "Exact patterns".
"""

from __future__ import annotations

import enum
from typing import Any, TypeAlias

import numpy as np


class Full(enum.Enum):
    """The marker of a full relation: every coordinate under every parent coordinate."""

    FULL = "full"

    def __repr__(self) -> str:
        return "FULL"


FULL = Full.FULL

#: FULL, a 0/1 scipy csr matrix, or None (not known).
Relation: TypeAlias = Any


def pattern(rel: Relation):
    """The csr matrix of a measured relation; None when `rel` is FULL or not known."""
    return None if rel is None or rel is FULL else rel


def both(a: Relation, b: Relation) -> Relation:
    """The coordinates that follow a parent in `a` and in `b` (an intersection)."""
    if a is FULL:
        return b
    if b is FULL:
        return a
    if a is None or b is None or a.shape != b.shape:
        return None
    return a.multiply(b).tocsr()


def either(a: Relation, b: Relation) -> Relation:
    """The coordinates that follow a parent in `a` or in `b` (a union)."""
    if a is FULL or b is FULL:
        return FULL
    if a is None or b is None or a.shape != b.shape:
        return None
    return ((a + b) > 0).astype(float).tocsr()


def through(rel: Relation, by_depth: list):
    """Coordinates reached through a measured relation from the parent coordinates' histogram
    (by_depth[-1], the depth above): rel^T w; None when either is unknown (or rel is FULL)."""
    rel = pattern(rel)
    if rel is None or not by_depth:
        return None
    w = by_depth[-1]
    if w is None or w.shape != (rel.shape[0],):
        return None
    return np.asarray(rel.T @ w, dtype=float).reshape(-1)


def lane_rows(r1: Relation, shape: tuple[int, int], lanes: int, lane: int):
    """The part of relation r1 (FULL or csr, rows: group coordinates, columns: the split
    index) that lane `lane` of `lanes` gets, as a csr matrix: a fork deals each row's
    coordinates round-robin (the p-th present coordinate of a row to lane p mod lanes)."""
    import scipy.sparse as sp
    if r1 is FULL:
        cols = np.arange(lane, shape[1], lanes)
        rows = np.repeat(np.arange(shape[0]), cols.size)
        data = np.ones(rows.size)
        return sp.csr_matrix((data, (rows, np.tile(cols, shape[0]))), shape=shape)
    r1 = r1.tocsr()
    r1.sort_indices()
    counts = np.diff(r1.indptr)
    pos = np.arange(r1.nnz) - np.repeat(r1.indptr[:-1], counts)
    keep = pos % lanes == lane
    rows = np.repeat(np.arange(r1.shape[0]), counts)[keep]
    return sp.csr_matrix((np.ones(int(keep.sum())), (rows, r1.indices[keep])), shape=r1.shape)


def rows_holding(rel) -> np.ndarray:
    """Per row of a measured relation: whether it holds a coordinate (a bool array)."""
    return np.asarray(rel.sum(axis=1)).reshape(-1) > 0


def columns_reached(rel) -> np.ndarray:
    """Per column of a measured relation: whether some row holds it (a bool array)."""
    return np.asarray(rel.sum(axis=0)).reshape(-1) > 0

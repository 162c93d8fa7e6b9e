"""A graph data set (`Graph`) and the adjacency constructions its loaders share.

Split from data.graphs so that the loaders of each source (data.ogb, data.pyg, data.synthetic),
which data.graphs dispatches to, import these without importing data.graphs back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from ..limits import check_memory

#: The most nodes a graph may have: an undirected edge {u, v} is keyed u * n + v in an int64
#: while the adjacency is built, so n * n must stay below 2^63.
MAX_NODES = 3_037_000_499


@dataclass
class Graph:
    """A graph data set: `adj` (n x n CSR), `features` (n x f CSR, or None), `labels` (n ints, or
    None)."""

    name: str
    adj: sp.csr_matrix
    features: sp.csr_matrix | None
    labels: np.ndarray | None = None

    @property
    def num_nodes(self) -> int:
        return int(self.adj.shape[0])

    @property
    def num_edges(self) -> int:
        """Undirected edges: off-diagonal stored entries counted once per pair, plus self loops."""
        return count_undirected_edges(self.adj)

    @property
    def num_features(self) -> int:
        return 0 if self.features is None else int(self.features.shape[1])

    @property
    def num_classes(self) -> int:
        return 0 if self.labels is None or not self.labels.size else int(self.labels.max()) + 1


def count_undirected_edges(adj) -> int:
    """Stored off-diagonal entries counted once per unordered pair {i, j}, plus stored diagonal
    entries: the off-diagonal entries of pattern(A) + pattern(A)^T, halved (vectorized sparse
    arithmetic: MAG-size graphs take seconds)."""
    a = sp.csr_matrix(adj)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"count_undirected_edges needs a square matrix, got {a.shape}")
    p = sp.csr_matrix((np.ones(a.indices.shape[0], np.int8), a.indices, a.indptr),
                      shape=a.shape)
    p.sum_duplicates()
    p.data[:] = 1
    loops = int(p.diagonal().sum())
    both = (p + p.T).tocsr()
    return (both.nnz - int((both.diagonal() != 0).sum())) // 2 + loops


def unique_sorted(a: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D array, sorted: np.unique, by one sort and a mask (numpy
    2.x's np.unique is many times slower on tens of millions of integers)."""
    s = np.sort(a)
    keep = np.empty(s.shape, bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def adjacency_bytes(n: int, edges: int) -> int:
    """About the most bytes building the n x n adjacency of `edges` undirected edges holds at
    once: a few int64 arrays of n + 1 (indptr, counts) and of the edges in both directions
    (keys, rows, columns, values, the transpose and the sum)."""
    return 32 * (n + 1) + 96 * edges


def check_graph_size(n: int, edges: int, what: str) -> None:
    """Refuse, before anything is allocated, a graph of `n` nodes and `edges` edges (read from a
    file or an option: `what` names where) whose node ids do not fit the adjacency's keys or
    whose arrays would not fit in the machine's memory (found by fuzzing: a node id of 2^40
    asked for 8 TiB)."""
    check_memory(adjacency_bytes(n, edges), f"{what}: a graph of {n:,} nodes and {edges:,} "
                                            f"edges")
    if n > MAX_NODES:
        raise UserError(f"{what}: {n:,} nodes is too many (at most {MAX_NODES:,})")


def symmetric_adjacency(n: int, u: np.ndarray, v: np.ndarray,
                        what: str = "the graph") -> sp.csr_matrix:
    """The n x n 0/1 CSR adjacency (canonical: sorted indices, no duplicates) holding each
    undirected edge {u, v}, u != v, given once in either direction, in both directions.
    Refused (UserError naming `what`) when it would not fit in memory."""
    check_graph_size(n, int(np.shape(u)[0]), what)
    u = np.asarray(u, np.int64)
    v = np.asarray(v, np.int64)
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keys = lo * n + hi
    if not (keys[1:] >= keys[:-1]).all():  # the generators give them sorted
        keys.sort()
    rows, cols = np.divmod(keys, max(n, 1))
    del keys
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    upper = sp.csr_matrix((np.ones(rows.shape[0]), cols, indptr), shape=(n, n))
    # U + U^T: the transpose by scipy's linear-time conversion, the sum a row-wise merge
    adj = (upper + upper.T.tocsr()).tocsr()
    adj.sort_indices()
    return adj


def undirected_adjacency(n: int, u: np.ndarray, v: np.ndarray,
                         what: str = "the graph") -> sp.csr_matrix:
    """The n x n symmetric 0/1 CSR adjacency of edges (u, v) in either direction; self loops
    dropped, repeated edges kept once. Refused (UserError naming `what`) when it would not fit
    in memory."""
    check_graph_size(n, int(np.shape(u)[0]), what)
    u = np.asarray(u, np.int64)
    v = np.asarray(v, np.int64)
    keep = u != v
    lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    keys = unique_sorted(lo * n + hi)
    return symmetric_adjacency(n, keys // n, keys % n, what)

"""Graph data sets for GNN workloads: adjacency, node features and labels as scipy matrices.

Loaders take a path (the project ships no data): `load_npz_graph` for the layout of the shared
*.npz files (CSR arrays under adj_* and feat_* keys, plus labels), `load_mtx_graph` for a Matrix
Market adjacency, and `karate_club` for networkx's built-in 34-node graph. Adjacency and features
are scipy CSR float64 matrices with sorted indices and no duplicates; labels an int64 array or
None. `gcn_normalize` and `mean_normalize` give the two aggregation matrices GNN layers use.

When a data set has no features, `features=` picks them: "identity" (the n x n identity, the
usual featureless-GCN choice), "random" (a dense n x `num_features` CSR matrix of uniform
[-1, 1) values from a seeded Generator), or "none" (None).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from .gen import nonzero_uniform

FEATURE_CHOICES = ("identity", "random", "none")


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
        coo = self.adj.tocoo()
        off = coo.row != coo.col
        pairs = {(min(r, c), max(r, c)) for r, c in zip(coo.row[off].tolist(),
                                                        coo.col[off].tolist())}
        return len(pairs) + int((~off).sum())

    @property
    def num_features(self) -> int:
        return 0 if self.features is None else int(self.features.shape[1])

    @property
    def num_classes(self) -> int:
        return 0 if self.labels is None or not self.labels.size else int(self.labels.max()) + 1


def _csr(indptr, indices, data, shape, path: Path, what: str) -> sp.csr_matrix:
    """Validate raw CSR arrays and build a canonical float64 CSR matrix."""
    shape = tuple(int(s) for s in np.asarray(shape).reshape(-1))
    if len(shape) != 2 or min(shape) < 0:
        raise UserError(f"{path}: {what}_shape must hold two non-negative sizes")
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if indptr.ndim != 1 or indptr.shape[0] != shape[0] + 1:
        raise UserError(f"{path}: {what}_indptr has {indptr.size} entries, expected "
                        f"{shape[0] + 1} for {shape[0]} rows")
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise UserError(f"{path}: {what}_indptr and {what}_indices must hold integers")
    if indptr[0] != 0 or (np.diff(indptr) < 0).any() or indptr[-1] != indices.shape[0]:
        raise UserError(f"{path}: {what}_indptr is not a valid CSR index (must start at 0, never "
                        f"decrease, and end at the number of indices, {indices.shape[0]})")
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise UserError(f"{path}: {what}_indices has a column outside 0..{shape[1] - 1}")
    if data is None:
        data = np.ones(indices.shape[0])
    data = np.asarray(data)
    if data.shape != indices.shape:
        raise UserError(f"{path}: {what}_data has {data.size} values for {indices.size} indices")
    if data.dtype.kind not in "biuf" or not np.isfinite(data.astype(np.float64)).all():
        raise UserError(f"{path}: {what}_data must hold finite real numbers")
    m = sp.csr_matrix((data.astype(np.float64), indices.astype(np.int64),
                       indptr.astype(np.int64)), shape=shape)
    m.sum_duplicates()  # also sorts indices
    return m


def _make_features(kind: str, n: int, num_features: int, seed: int) -> sp.csr_matrix | None:
    if kind == "identity":
        return sp.identity(n, dtype=np.float64, format="csr")
    if kind == "random":
        rng = np.random.default_rng(seed)
        return sp.csr_matrix(nonzero_uniform(rng, (n, num_features)))
    if kind == "none":
        return None
    raise UserError(f"unknown feature choice '{kind}'; expected one of "
                    f"{', '.join(FEATURE_CHOICES)}")


def load_npz_graph(path, features: str = "identity", num_features: int = 16,
                   seed: int = 0) -> Graph:
    """Load a graph stored as numpy arrays (`numpy.savez`): keys adj_indptr, adj_indices,
    adj_shape (adj_data optional, default all 1), feat_indptr, feat_indices, feat_data,
    feat_shape (all optional: without them `features` decides), labels (optional)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        with warnings.catch_warnings(), np.load(path, allow_pickle=False) as z:
            warnings.simplefilter("ignore")
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # zip, zlib and numpy header errors of every kind: a corrupt file
        raise UserError(f"{path}: unreadable or corrupt .npz file "
                        f"({type(e).__name__}: {e})") from None
    missing = [k for k in ("adj_indptr", "adj_indices", "adj_shape") if k not in arrays]
    if missing:
        raise UserError(f"{path}: not a graph archive: missing {', '.join(missing)} (it has "
                        f"{', '.join(sorted(arrays)) or 'no arrays'})")
    adj = _csr(arrays["adj_indptr"], arrays["adj_indices"], arrays.get("adj_data"),
               arrays["adj_shape"], path, "adj")
    if adj.shape[0] != adj.shape[1]:
        raise UserError(f"{path}: adjacency must be square, found {adj.shape[0]} x "
                        f"{adj.shape[1]}")
    n = adj.shape[0]
    if all(k in arrays for k in ("feat_indptr", "feat_indices", "feat_shape")):
        feats = _csr(arrays["feat_indptr"], arrays["feat_indices"], arrays.get("feat_data"),
                     arrays["feat_shape"], path, "feat")
        if feats.shape[0] != n:
            raise UserError(f"{path}: features have {feats.shape[0]} rows for {n} nodes")
    else:
        feats = _make_features(features, n, num_features, seed)
    labels = arrays.get("labels")
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n,) or labels.dtype.kind not in "iu":
            raise UserError(f"{path}: labels must be {n} integers, one per node")
        labels = labels.astype(np.int64)
    return Graph(path.stem, adj, feats, labels)


def load_mtx_graph(path, features: str = "identity", num_features: int = 16, seed: int = 0,
                   binary: bool = True) -> Graph:
    """Load a square Matrix Market matrix as a graph's adjacency (symmetric files expanded).

    With `binary` every stored entry becomes 1.0 (an unweighted graph, as GCN expects); otherwise
    the file's values (pattern files: 1.0) are kept. Self loops in the file are kept.
    """
    from .mtx import read_mtx

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    mm = read_mtx(path)
    m = sp.csr_matrix(mm.array) if mm.dense else \
        sp.csr_matrix((mm.values, (mm.rows, mm.cols)), shape=mm.shape)
    if m.shape[0] != m.shape[1]:
        raise UserError(f"{path}: adjacency must be square, found {m.shape[0]} x {m.shape[1]}")
    m = m.astype(np.float64)
    m.sum_duplicates()
    if binary:
        m.data[:] = 1.0
    return Graph(path.stem, m, _make_features(features, m.shape[0], num_features, seed), None)


def karate_club(features: str = "identity", num_features: int = 16, seed: int = 0) -> Graph:
    """Zachary's karate club (networkx): 34 nodes, 78 unweighted edges; labels 0 for the
    'Mr. Hi' club and 1 for 'Officer'. Features: identity 34 x 34 by default."""
    import networkx as nx

    g = nx.karate_club_graph()
    nodes = sorted(g.nodes())
    adj = sp.csr_matrix(nx.to_scipy_sparse_array(g, nodelist=nodes, weight=None,
                                                 dtype=np.float64))
    adj.sum_duplicates()
    labels = np.array([0 if g.nodes[v]["club"] == "Mr. Hi" else 1 for v in nodes], np.int64)
    return Graph("karate", adj, _make_features(features, len(nodes), num_features, seed), labels)


BUILTIN_GRAPHS = ("karate",)


def load_graph(source: str, features: str = "identity", num_features: int = 16,
               seed: int = 0) -> Graph:
    """A graph by name or path: `karate` (built in), a `.npz` graph archive, or a `.mtx` matrix.

    This is what a `--graph` option takes. Features apply where the source has none.
    """
    if source in BUILTIN_GRAPHS:
        return karate_club(features, num_features, seed)
    path = Path(source)
    if path.suffix == ".npz":
        return load_npz_graph(path, features, num_features, seed)
    if path.suffix == ".mtx":
        return load_mtx_graph(path, features, num_features, seed)
    raise UserError(f"{source}: not a graph: expected {', '.join(BUILTIN_GRAPHS)}, a .npz graph "
                    f"archive or a .mtx matrix")


def gcn_normalize(adj) -> sp.csr_matrix:
    """Â = D^-1/2 (A + I) D^-1/2 with D the degree (row sums) of A + I (Kipf & Welling).

    Self loops are added only where A has none (an existing diagonal entry is kept as is, like
    PyTorch Geometric's add_remaining_self_loops), so a graph that already has them is not
    double counted. Rows of degree 0 stay 0.
    """
    a = sp.csr_matrix(adj, dtype=np.float64)
    n = a.shape[0]
    if a.shape != (n, n):
        raise UserError(f"gcn_normalize needs a square adjacency, got {a.shape}")
    has_loop = np.zeros(n, bool)
    coo = a.tocoo()
    has_loop[coo.row[coo.row == coo.col]] = True
    add = np.where(has_loop, 0.0, 1.0)
    a = (a + sp.diags(add, format="csr")).tocsr()
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    with np.errstate(divide="ignore"):
        inv = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
    out = (sp.diags(inv) @ a @ sp.diags(inv)).tocsr()
    out.sum_duplicates()
    return out


def mean_normalize(adj) -> sp.csr_matrix:
    """D^-1 A: each row averages a node's neighbours (GraphSAGE mean aggregation); rows with no
    neighbours stay 0. No self loops are added."""
    a = sp.csr_matrix(adj, dtype=np.float64)
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    inv = np.where(deg != 0, 1.0 / np.where(deg != 0, deg, 1.0), 0.0)
    out = (sp.diags(inv) @ a).tocsr()
    out.sum_duplicates()
    return out

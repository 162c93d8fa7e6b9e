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
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from .gen import nonzero_uniform
from .graph import Graph, check_graph_size, count_undirected_edges

FEATURE_CHOICES = ("identity", "random", "none")


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
    if mm.shape[0] != mm.shape[1]:
        raise UserError(f"{path}: adjacency must be square, found {mm.shape[0]} x "
                        f"{mm.shape[1]}")
    # the size line is a size read from a file: checked before the CSR arrays of n + 1 are
    # made (found by fuzzing: a size of 2^40 asked for 8 TiB)
    check_graph_size(mm.shape[0], 0 if mm.dense else int(np.shape(mm.rows)[0]), str(path))
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
GRAPH_SOURCES = ("karate", "synthetic:...", "an OGB data set directory", "PATH.npz", "PATH.npy",
                 "PATH.mtx")


def is_named_source(source: str) -> bool:
    """Whether a --graph source is not a path (karate, synthetic:...)."""
    from .synthetic import is_synthetic
    return source in BUILTIN_GRAPHS or is_synthetic(source)


def split_options(source: str) -> tuple[str, dict[str, str]]:
    """'DIR,relation=all' -> ('DIR', {'relation': 'all'}): a path source and its options."""
    path, opts = source, {}
    while "," in path:
        head, _, tail = path.rpartition(",")
        key, eq, value = tail.partition("=")
        if not eq or not key.strip().isidentifier():
            break
        opts[key.strip()] = value.strip()
        path = head
    return path, opts


def load_graph(source: str, features: str = "identity", num_features: int = 16,
               seed: int = 0, progress=None) -> Graph:
    """A graph by name or path (what a `--graph` option takes):
    - `karate` (built in);
    - `synthetic:...`: a seeded Chung-Lu graph (fuseflowc.data.synthetic), e.g.
      `synthetic:collab`, `synthetic:mag`, `synthetic:nodes=1000,edges=5000,features=16`;
    - a directory: an OGB data set's raw files (fuseflowc.data.ogb), `DIR[,relation=NAME|all]`;
    - `PATH.npz`: a graph archive (the shared layout), or PyG arrays with an `edge_index`;
    - `PATH.npy`: a PyG `edge_index` (fuseflowc.data.pyg);
    - `PATH.mtx`: a Matrix Market adjacency.
    Features apply where the source has none; `seed` is also a synthetic graph's default seed.
    `progress` (a fuseflowc.data.progress.WorkProgress) reports a synthetic graph's drawing.
    """
    from .synthetic import is_synthetic

    if source in BUILTIN_GRAPHS:
        return karate_club(features, num_features, seed)
    if is_synthetic(source):
        from .synthetic import synthetic_graph
        g = synthetic_graph(source, seed, progress)
        if g.features is None:
            g.features = _make_features(features, g.num_nodes, num_features, seed)
        return g
    path_text, opts = split_options(source)
    path = Path(path_text)
    try:
        path.stat()  # Path.is_dir() raises for a name too long or a loop of links
    except FileNotFoundError:
        pass  # each kind says "no such file" below
    except OSError as e:
        raise UserError(f"{path_text}: cannot read: {e.strerror}") from None
    if path.is_dir():
        from .ogb import load_ogb_graph
        unknown = sorted(set(opts) - {"relation"})
        if unknown:
            raise UserError(f"{source}: unknown option '{unknown[0]}' (an OGB directory takes "
                            f"relation=NAME or relation=all)")
        g = load_ogb_graph(path, opts.get("relation"))
    elif opts:
        raise UserError(f"{source}: options (,{next(iter(opts))}=...) apply to OGB directories "
                        f"only")
    elif path.suffix == ".npz":
        from .pyg import has_edge_index, load_edge_index_graph
        if path.is_file() and has_edge_index(path):
            g = load_edge_index_graph(path)
        else:
            return load_npz_graph(path, features, num_features, seed)
    elif path.suffix == ".npy":
        from .pyg import load_edge_index_graph
        g = load_edge_index_graph(path)
    elif path.suffix == ".mtx":
        return load_mtx_graph(path, features, num_features, seed)
    else:
        raise UserError(f"{source}: not a graph: expected {', '.join(GRAPH_SOURCES)}"
                        + ("" if path.exists() else " (no such file or directory)"))
    if g.features is None:
        g.features = _make_features(features, g.num_nodes, num_features, seed)
    return g


def save_npz_graph(graph: Graph, path) -> None:
    """Write `graph` in the layout of the shared graph archives (`load_npz_graph` reads it):
    adj_indptr, adj_indices, adj_shape (adj_data only when some value is not 1), feat_* with
    float32 values, labels. Atomic: the file appears only when complete (see
    fuseflowc.outputs)."""
    from ..outputs import Outputs

    check_archive_name(str(path))
    out = Outputs()
    archive = out.file(str(path))
    with out:
        write_npz_graph(graph, archive.staged_path())


def check_archive_name(path: str) -> None:
    """A graph archive is written to a .npz file."""
    if Path(path).suffix != ".npz":
        raise UserError(f"{path}: a graph archive is a .npz file")


def write_npz_graph(graph: Graph, path) -> None:
    """The arrays of `save_npz_graph`, written to `path` (any name) as they are."""
    adj = sp.csr_matrix(graph.adj)
    arrays = {"adj_indptr": adj.indptr, "adj_indices": adj.indices,
              "adj_shape": np.array(adj.shape, np.int64)}
    if adj.nnz and not (adj.data == 1).all():
        arrays["adj_data"] = adj.data
    if graph.features is not None:
        f = sp.csr_matrix(graph.features)
        arrays.update(feat_indptr=f.indptr, feat_indices=f.indices,
                      feat_data=f.data.astype(np.float32), feat_shape=np.array(f.shape, np.int64))
    if graph.labels is not None:
        arrays["labels"] = np.asarray(graph.labels, np.int64)
    with open(path, "wb") as f:  # a file object: numpy would add .npz to a name without it
        np.savez(f, **arrays)


def degree_stats(adj) -> dict:
    """Degree statistics of an undirected adjacency (row counts of stored off-diagonal
    entries): nodes, edges, mean, median, 90th and 99th percentile, max, isolated nodes, and
    the power-law exponent of the tail (degrees >= 10), by the discrete maximum-likelihood
    approximation of Clauset, Shalizi and Newman (2009): 1 + k / sum(ln(d / 9.5))."""
    a = sp.csr_matrix(adj)
    diag = a.diagonal() != 0
    deg = np.diff(a.indptr) - diag.astype(np.int64)
    n = int(a.shape[0])
    tail = deg[deg >= 10].astype(np.float64)
    exponent = 1.0 + tail.size / np.log(tail / 9.5).sum() if tail.size else None
    return {
        "nodes": n, "edges": count_undirected_edges(a),
        "mean": float(deg.mean()) if n else 0.0,
        "median": float(np.median(deg)) if n else 0.0,
        "p90": float(np.percentile(deg, 90)) if n else 0.0,
        "p99": float(np.percentile(deg, 99)) if n else 0.0,
        "max": int(deg.max()) if n else 0,
        "isolated": int((deg == 0).sum()),
        "tail_exponent": None if exponent is None else float(exponent),
    }


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
    a.sum_duplicates()
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    with np.errstate(divide="ignore"):
        inv = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
    # D^-1/2 A D^-1/2 entry by entry (two sparse products with diagonals cost ~10x more)
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    a.data *= inv[rows] * inv[a.indices]
    a.eliminate_zeros()  # as the products did: entries that come out 0 are not stored
    return a


def mean_normalize(adj) -> sp.csr_matrix:
    """D^-1 A: each row averages a node's neighbours (GraphSAGE mean aggregation); rows with no
    neighbours stay 0. No self loops are added."""
    a = sp.csr_matrix(adj, dtype=np.float64, copy=True)
    a.sum_duplicates()
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    inv = np.where(deg != 0, 1.0 / np.where(deg != 0, deg, 1.0), 0.0)
    a.data *= np.repeat(inv, np.diff(a.indptr))
    a.eliminate_zeros()  # as the product did: entries that come out 0 are not stored
    return a

"""PyTorch Geometric graphs saved with numpy: an `edge_index` (2 x E integer array, row 0 the
sources, row 1 the targets) in a `.npy` file, or a `.npz` archive with `edge_index` and
optionally `x` (node features, n x f), `y` (one class per node) and `num_nodes`:

    numpy.save("g.npy", data.edge_index.numpy())
    numpy.savez("g.npz", edge_index=data.edge_index.numpy(), x=data.x.numpy(),
                y=data.y.numpy(), num_nodes=data.num_nodes)

Without `num_nodes` the node count is the largest id + 1 (PyG's own guess), so trailing
isolated nodes need it. The graph is made undirected like an OGB one (fuseflowc.data.ogb):
both directions, no self loops, repeated edges once, values 1.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from .graph import Graph, check_graph_size, undirected_adjacency


def _load(path: Path) -> dict[str, np.ndarray]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if path.suffix == ".npy":
                return {"edge_index": np.load(path, allow_pickle=False)}
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except Exception as e:  # zip, zlib and numpy header errors: a corrupt file
        raise UserError(f"{path}: unreadable or corrupt numpy file "
                        f"({type(e).__name__}: {e})") from None


def has_edge_index(path) -> bool:
    """Whether a .npz archive holds an `edge_index` (a PyG graph, not a graph archive)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return "edge_index" in z.files
    except Exception:
        return False


def load_edge_index_graph(path):
    """The Graph of a PyG `edge_index` saved with numpy (see the module docstring)."""
    path = Path(path)
    a = _load(path)
    e = a.get("edge_index")
    if e is None:
        raise UserError(f"{path}: no edge_index array (it has {', '.join(sorted(a))})")
    if e.ndim != 2 or e.shape[0] != 2 or e.dtype.kind not in "iu":
        hint = " (transpose it: PyG's edge_index is 2 x E)" if e.ndim == 2 and e.shape[1] == 2 \
            else ""
        raise UserError(f"{path}: edge_index must be a 2 x E integer array, found shape "
                        f"{e.shape} of {e.dtype}{hint}")
    if e.size and int(e.min()) < 0:  # (compared as Python ints: a uint64 of 2^64 - 1 is no
        raise UserError(f"{path}: edge_index has a negative node id "  # negative number)
                        f"{int(e.min())}")
    guess = int(e.max()) + 1 if e.size else 0
    check_graph_size(guess, e.shape[1], f"{path} (largest node id {guess - 1:,})")
    n = guess
    if "num_nodes" in a:
        nn = np.asarray(a["num_nodes"])
        if nn.shape not in ((), (1,)) or nn.dtype.kind not in "iu" or int(nn.reshape(-1)[0]) < guess:
            raise UserError(f"{path}: num_nodes must be one integer >= the largest node id + 1 "
                            f"({guess})")
        n = int(nn.reshape(-1)[0])
    # before the edges are converted and any array of n is made (found by fuzzing: a node id
    # or num_nodes of 2^40 asked for 8 TiB)
    check_graph_size(n, e.shape[1], str(path))
    e = e.astype(np.int64)
    feats = None
    if "x" in a:
        x = np.asarray(a["x"])
        if x.ndim != 2 or x.shape[0] != n or x.dtype.kind not in "biuf" \
                or not np.isfinite(x.astype(np.float64)).all():
            raise UserError(f"{path}: x must be a finite n x f array with n = {n} rows, found "
                            f"{x.shape}")
        feats = sp.csr_matrix(x.astype(np.float64))
    labels = None
    if "y" in a:
        y = np.asarray(a["y"]).reshape(-1)
        if y.shape != (n,) or y.dtype.kind not in "iu":
            raise UserError(f"{path}: y must hold one integer class per node ({n})")
        labels = y.astype(np.int64)
    return Graph(path.stem, undirected_adjacency(n, e[0], e[1], str(path)), feats, labels)

"""fuseflowc.data.graphs: the shared data sets load with the sizes SOURCES.md lists; GCN and mean
normalization agree with a dense numpy computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.graphs import (
    gcn_normalize,
    karate_club,
    load_graph,
    load_mtx_graph,
    load_npz_graph,
    mean_normalize,
)
from fuseflowc.data.io import load_inputs
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import shorthand

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

# From ../shared/data/SOURCES.md.
NPZ_TABLE = [  # file, nodes, undirected edges, features shape, feature nnz, classes
    ("cora.npz", 2708, 5278, (2708, 1433), 49216, 7),
    ("cora_ml.npz", 2995, 8158, (2995, 2879), 151171, 7),
    ("citeseer.npz", 3312, 4536, (3312, 3703), 105165, 6),
]
MTX_TABLE = [  # file, shape, nnz after mmread
    ("jazz.mtx", (198, 198), 5484),
    ("lp_ship04l.mtx", (402, 2166), 6380),
    ("1138_bus.mtx", (1138, 1138), 4054),
    ("3elt.mtx", (4720, 4720), 27444),
    ("ca-GrQc.mtx", (5242, 5242), 28980),
    ("crack.mtx", (10240, 10240), 60760),
]


def need(name: str) -> Path:
    p = DATA / name
    if not p.is_file():
        pytest.skip(f"{p} is absent")
    return p


@pytest.mark.parametrize("name,nodes,edges,fshape,fnnz,classes", NPZ_TABLE)
def test_npz_graphs_match_sources(name, nodes, edges, fshape, fnnz, classes):
    g = load_npz_graph(need(name))
    assert g.num_nodes == nodes
    assert g.num_edges == edges
    assert g.adj.nnz == 2 * edges  # symmetric, no self loops
    assert (g.adj != g.adj.T).nnz == 0 and g.adj.diagonal().sum() == 0
    assert g.features.shape == fshape and g.features.nnz == fnnz
    assert g.features.dtype == np.float64 and g.adj.dtype == np.float64
    assert g.num_classes == classes and g.labels.shape == (nodes,)


@pytest.mark.parametrize("name,shape,nnz", MTX_TABLE)
def test_mtx_files_load_as_tensors(tmp_path, name, shape, nnz):
    (tmp_path / "A.mtx").symlink_to(need(name))
    got, sizes = load_inputs(tmp_path, [TensorSpec("A", ("I", "J"), shorthand("csr", 2))])
    assert got["A"].shape == shape and got["A"].nnz == nnz
    assert sizes == {"I": shape[0], "J": shape[1]}
    if shape[0] == shape[1]:
        g = load_mtx_graph(need(name))
        assert g.adj.shape == shape and g.adj.nnz == nnz and (g.adj.data == 1).all()
        assert g.features.shape == shape  # identity features
    else:
        with pytest.raises(UserError, match="adjacency must be square, found 402 x 2166"):
            load_mtx_graph(need(name))


def test_karate_club():
    g = karate_club()
    assert (g.num_nodes, g.num_edges, g.adj.nnz) == (34, 78, 156)
    assert (g.adj.data == 1).all()
    assert g.labels.tolist().count(0) == 17 and g.labels[0] == 0 and g.labels[33] == 1
    np.testing.assert_array_equal(g.features.toarray(), np.eye(34))
    r1, r2 = karate_club("random", 8, seed=5), karate_club("random", 8, seed=5)
    assert r1.features.shape == (34, 8) and r1.features.nnz == 34 * 8
    np.testing.assert_array_equal(r1.features.toarray(), r2.features.toarray())
    assert karate_club("none").features is None
    with pytest.raises(UserError, match="unknown feature choice 'ones'"):
        karate_club("ones")


@st.composite
def adjacencies(draw):
    n = draw(st.integers(0, 8))
    seed = draw(st.integers(0, 10**6))
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < draw(st.sampled_from([0.0, 0.3, 0.7]))).astype(float)
    if draw(st.booleans()):
        a = np.maximum(a, a.T)
    if draw(st.booleans()):
        np.fill_diagonal(a, 0)
    return a * draw(st.sampled_from([1.0, 2.5]))


@settings(max_examples=80, deadline=None)
@given(a=adjacencies())
def test_gcn_normalize_matches_dense(a):
    n = a.shape[0]
    loops = np.diag(np.where(np.diag(a) == 0, 1.0, 0.0)) if n else np.zeros((0, 0))
    at = a + loops
    d = at.sum(axis=1)
    dinv = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    want = dinv[:, None] * at * dinv[None, :]
    got = gcn_normalize(sp.csr_matrix(a))
    assert sp.isspmatrix_csr(got) and got.has_sorted_indices
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-12, atol=0)


@settings(max_examples=80, deadline=None)
@given(a=adjacencies())
def test_mean_normalize_matches_dense(a):
    d = a.sum(axis=1)
    want = np.divide(a, d[:, None], out=np.zeros_like(a), where=d[:, None] != 0)
    np.testing.assert_allclose(mean_normalize(sp.csr_matrix(a)).toarray(), want, rtol=1e-12)


def test_gcn_normalize_karate_rows():
    g = karate_club()
    a = gcn_normalize(g.adj)
    assert a.nnz == 156 + 34
    # symmetric, and Â 1 weights: row i sums to sum_j 1/sqrt(d_i d_j)
    assert abs(a - a.T).max() < 1e-15
    np.testing.assert_allclose(a[0, 0], 1 / 17)  # node 0 has 16 neighbours + its self loop


def _write(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("arrays,msg", [
    ({"x": np.ones(2)}, "not a graph archive: missing adj_indptr, adj_indices, adj_shape"),
    ({"adj_indptr": np.array([0, 1]), "adj_indices": np.array([0]),
      "adj_shape": np.array([2, 2])}, "adj_indptr has 2 entries, expected 3"),
    ({"adj_indptr": np.array([0, 2, 1]), "adj_indices": np.array([0]),
      "adj_shape": np.array([2, 2])}, "adj_indptr is not a valid CSR index"),
    ({"adj_indptr": np.array([0, 1, 1]), "adj_indices": np.array([5]),
      "adj_shape": np.array([2, 2])}, "adj_indices has a column outside 0..1"),
    ({"adj_indptr": np.array([0, 1, 1]), "adj_indices": np.array([0]),
      "adj_shape": np.array([2, 3])}, "adjacency must be square"),
    ({"adj_indptr": np.array([0, 1, 1]), "adj_indices": np.array([0]),
      "adj_shape": np.array([2, 2]), "labels": np.array([0.5, 1])},
     "labels must be 2 integers"),
    ({"adj_indptr": np.array([0, 1, 1]), "adj_indices": np.array([0]),
      "adj_shape": np.array([2, 2]), "feat_indptr": np.array([0, 0]),
      "feat_indices": np.array([], int), "feat_data": np.array([]),
      "feat_shape": np.array([1, 4])}, "features have 1 rows for 2 nodes"),
])
def test_npz_graph_errors(tmp_path, arrays, msg):
    with pytest.raises(UserError, match=msg):
        load_npz_graph(_write(tmp_path / "g.npz", **arrays))


def test_npz_graph_without_features_and_corrupt(tmp_path):
    p = _write(tmp_path / "g.npz", adj_indptr=np.array([0, 1, 2]), adj_indices=np.array([1, 0]),
               adj_shape=np.array([2, 2]))
    g = load_npz_graph(p)
    assert g.num_edges == 1 and g.labels is None and g.features.shape == (2, 2)
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 nope")
    with pytest.raises(UserError, match="unreadable or corrupt"):
        load_npz_graph(tmp_path / "bad.npz")
    with pytest.raises(UserError, match="no such file"):
        load_npz_graph(tmp_path / "none.npz")
    (tmp_path / "bad.mtx").write_text("hello\n")
    with pytest.raises(UserError, match="bad.mtx:1: not a Matrix Market file"):
        load_mtx_graph(tmp_path / "bad.mtx")


def test_load_graph_dispatch(tmp_path):
    assert load_graph("karate").num_nodes == 34
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "3 3 2\n2 1\n3 2\n")
    g = load_graph(str(tmp_path / "g.mtx"), "random", 4, seed=1)
    assert g.num_edges == 2 and g.features.shape == (3, 4)
    np.savez(tmp_path / "h.npz", adj_indptr=np.array([0, 0]), adj_indices=np.array([], int),
             adj_shape=np.array([1, 1]))
    assert load_graph(str(tmp_path / "h.npz")).num_nodes == 1
    with pytest.raises(UserError, match="cora: not a graph: expected karate"):
        load_graph("cora")

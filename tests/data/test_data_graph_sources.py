"""Graphs of the paper's sizes: the synthetic Chung-Lu generator, the OGB raw-file and PyG
edge_index readers (on small files written here in those layouts), the graph archive writer,
and the vectorized undirected edge count, each against a plain Python / numpy oracle."""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.graph import count_undirected_edges
from fuseflowc.data.graphs import degree_stats, load_graph, load_npz_graph, save_npz_graph
from fuseflowc.data.synthetic import parse_synthetic, power_law_weights
from fuseflowc.diagnostics import UserError

ROOT = Path(__file__).resolve().parents[2]


def _pairs_oracle(m) -> int:
    coo = sp.coo_matrix(m)
    return len({(min(r, c), max(r, c)) for r, c in zip(coo.row.tolist(), coo.col.tolist())})


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 10**6), p=st.sampled_from([0.0, 0.2, 0.6]),
       zeros=st.booleans())
def test_count_undirected_edges_matches_set_oracle(n, seed, p, zeros):
    rng = np.random.default_rng(seed)
    a = sp.csr_matrix((rng.random((n, n)) < p) * rng.integers(1, 3, (n, n)).astype(float))
    if zeros and a.nnz:  # explicit zeros are stored entries: they count
        a.data[0] = 0.0
    assert count_undirected_edges(a) == _pairs_oracle(a)


def _check_simple(g, n, e):
    a = g.adj
    assert a.shape == (n, n) and a.nnz == 2 * e
    assert a.has_canonical_format and (a.data == 1).all()
    assert a.diagonal().sum() == 0
    assert (a != a.T).nnz == 0
    assert g.num_edges == e


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 60), frac=st.floats(0.0, 0.5), f=st.integers(0, 6),
       density=st.sampled_from([0.0, 0.1, 1.0]), exponent=st.sampled_from([2.1, 2.5, 3.5]),
       seed=st.integers(0, 1000))
def test_synthetic_sizes_exact(n, frac, f, density, exponent, seed):
    e = int(frac * n * (n - 1) / 2)
    g = load_graph(f"synthetic:nodes={n},edges={e},features={f},density={density},"
                   f"exponent={exponent},seed={seed}", features="none")
    _check_simple(g, n, e)
    if f:
        assert g.features.shape == (n, f)
        assert g.features.nnz == round(density * (n * f))  # as synthetic.py counts it
        assert (g.features.data != 0).all() and (abs(g.features.data) <= 1).all()
    else:
        assert g.features is None


def test_synthetic_presets_and_determinism():
    s = parse_synthetic("synthetic:collab")
    assert (s.nodes, s.edges, s.features, s.density) == (235868, 1285465, 128, 0.001)
    s = parse_synthetic("synthetic:mag,seed=3,density=0.5")
    assert (s.nodes, s.edges, s.seed, s.density, s.name) == (1939743, 21111007, 3, 0.5,
                                                              "synthetic-mag")
    src = "synthetic:nodes=500,edges=2000,features=8,density=0.2"
    a, b = load_graph(src, seed=1), load_graph(src, seed=1)
    assert (a.adj != b.adj).nnz == 0 and (a.features != b.features).nnz == 0
    c = load_graph(src, seed=2)
    assert (a.adj != c.adj).nnz > 0
    d = load_graph(src + ",seed=2", seed=1)  # the spec's seed wins over the caller's
    assert (c.adj != d.adj).nnz == 0


def test_synthetic_degree_distribution_is_skewed():
    g = load_graph("synthetic:nodes=20000,edges=100000,seed=1", features="none")
    s = degree_stats(g.adj)
    assert s["mean"] == pytest.approx(10.0)
    # a power law: median below the mean, a heavy tail up to about sqrt(2E) = 447
    assert s["median"] < s["mean"] and 200 < s["max"] < 700
    assert 2.0 < s["tail_exponent"] < 3.2


def test_power_law_weights():
    w = power_law_weights(10000, 8.0, 2.5, 300.0)
    assert w.mean() == pytest.approx(8.0) and (np.diff(w) <= 0).all()
    assert w.max() == pytest.approx(300.0, rel=0.05)


def test_synthetic_from_degree_sequence(tmp_path):
    deg = np.array([5, 4, 3, 3, 2, 2, 1, 1, 1, 0], float)
    np.save(tmp_path / "deg.npy", deg)
    g = load_graph(f"synthetic:degrees={tmp_path / 'deg.npy'},seed=1", features="none")
    _check_simple(g, 10, 11)
    assert np.diff(g.adj.indptr)[9] == 0  # a node of expected degree 0 gets no edge


@pytest.mark.parametrize("spec, msg", [
    ("synthetic:", "give a preset"),
    ("synthetic:nodes=10,edges=100", "100 edges do not fit in a simple graph of 10 nodes"),
    ("synthetic:nodes=10,edges=5,colour=red", "unknown key 'colour'"),
    ("synthetic:nodes=ten", "nodes=ten: expected an integer"),
    ("synthetic:nodes=10,density=2", "density=2: expected a fraction"),
    ("synthetic:nodes=10,exponent=1.5", "exponent=1.5"),
    ("synthetic:nodes=10,collab", "'collab' is neither a preset"),
    ("synthetic:degrees=/nonexistent.npy", "no such file"),
    # found by fuzzing: numpy refuses a negative seed (a ValueError, exit 3)
    ("synthetic:nodes=10,edges=5,seed=-1", "seed=-1: expected an integer >= 0"),
    # found by fuzzing: Path.is_dir() raises for a name too long (an OSError, exit 3)
    ("g" * 300 + ".npz", "cannot read: File name too long"),
])
def test_synthetic_errors(spec, msg):
    with pytest.raises(UserError, match=msg):
        load_graph(spec)


# ---- OGB raw files ---------------------------------------------------------------------------
def _gz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        f.write(text)


def _csv(rows) -> str:
    return "".join(",".join(str(x) for x in r) + "\n" for r in rows)


def _oracle_adj(n, edges) -> np.ndarray:
    a = np.zeros((n, n))
    for u, v in edges:
        if u != v:
            a[u, v] = a[v, u] = 1
    return a


def test_ogb_homogeneous(tmp_path):
    edges = [(0, 1), (1, 2), (2, 0), (1, 0), (3, 3), (4, 1), (0, 1)]  # repeats, a self loop
    feats = np.round(np.random.default_rng(0).uniform(-1, 1, (6, 3)), 4)
    raw = tmp_path / "ogbl_collab" / "raw"
    _gz(raw / "edge.csv.gz", _csv(edges))
    _gz(raw / "num-node-list.csv.gz", "6\n")
    _gz(raw / "num-edge-list.csv.gz", f"{len(edges)}\n")
    _gz(raw / "node-feat.csv.gz", _csv(feats))
    _gz(raw / "node-label.csv.gz", _csv([[k % 2] for k in range(6)]))
    g = load_graph(str(tmp_path / "ogbl_collab"))
    assert g.name == "ogbl_collab"
    np.testing.assert_array_equal(g.adj.toarray(), _oracle_adj(6, edges))
    np.testing.assert_allclose(g.features.toarray(), feats)
    assert g.labels.tolist() == [0, 1, 0, 1, 0, 1]
    assert g.num_edges == 4
    assert load_graph(str(raw)).num_edges == 4  # the raw directory itself works too
    out = tmp_path / "collab.npz"
    save_npz_graph(g, out)
    h = load_npz_graph(out)
    assert (h.adj != g.adj).nnz == 0 and h.labels.tolist() == g.labels.tolist()
    np.testing.assert_allclose(h.features.toarray(), feats.astype(np.float32), rtol=1e-6)


def test_ogb_reads_across_chunks(tmp_path, monkeypatch):
    import fuseflowc.data.ogb as ogb
    monkeypatch.setattr(ogb, "_CHUNK", 7)  # lines cut at every chunk boundary
    rng = np.random.default_rng(1)
    edges = rng.integers(0, 50, (300, 2))
    _gz(tmp_path / "raw" / "edge.csv.gz", _csv(edges))
    _gz(tmp_path / "raw" / "num-node-list.csv.gz", "50\n")
    g = load_graph(str(tmp_path))
    np.testing.assert_array_equal(g.adj.toarray(), _oracle_adj(50, edges.tolist()))


@pytest.mark.parametrize("files, msg", [
    ({"edge.csv.gz": "0,1\n1,x\n", "num-node-list.csv.gz": "3\n"},
     r"edge.csv.gz:2: not a line of comma-separated numbers"),
    ({"edge.csv.gz": "0,1\n1,7\n", "num-node-list.csv.gz": "3\n"},
     r"edge.csv.gz:2: node id 7 outside 0..2"),
    ({"edge.csv.gz": "0,1\n1,2,3\n", "num-node-list.csv.gz": "3\n"}, r"edge.csv.gz:2:"),
    ({"edge.csv.gz": "0,1\n", "num-node-list.csv.gz": "3\n4\n"}, "holds 2 graphs"),
    ({"edge.csv.gz": "0,1\n", "num-node-list.csv.gz": "3\n", "num-edge-list.csv.gz": "5\n"},
     "says \\[5\\] edges"),
    ({"edge.csv.gz": "0,1\n", "num-node-list.csv.gz": "3\n", "node-feat.csv.gz": "1\n2\n"},
     "2 feature lines for 3 nodes"),
    ({"edge.csv.gz": "0,1\n"}, "num-node-list.csv.gz: no such file"),
])
def test_ogb_errors(tmp_path, files, msg):
    for name, text in files.items():
        _gz(tmp_path / "raw" / name, text)
    with pytest.raises(UserError, match=msg):
        load_graph(str(tmp_path))


def test_ogb_not_gzip(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "edge.csv.gz").write_text("0,1\n")
    _gz(tmp_path / "raw" / "num-node-list.csv.gz", "2\n")
    with pytest.raises(UserError, match="edge.csv.gz: cannot read"):
        load_graph(str(tmp_path))


def _mag(tmp_path) -> Path:
    """A tiny ogbn-mag: 3 papers, 2 authors; paper-cites-paper and author-writes-paper."""
    raw = tmp_path / "ogbn_mag" / "raw"
    _gz(raw / "num-node-dict.csv.gz", "author,paper\n2,3\n")
    _gz(raw / "triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,paper\n")
    _gz(raw / "relations" / "paper___cites___paper" / "edge.csv.gz", "0,1\n2,1\n")
    _gz(raw / "relations" / "paper___cites___paper" / "num-edge-list.csv.gz", "2\n")
    _gz(raw / "relations" / "author___writes___paper" / "edge.csv.gz", "0,0\n1,0\n1,2\n")
    _gz(raw / "node-feat" / "paper" / "node-feat.csv.gz", "1.5,0\n0,0\n-2,3\n")
    _gz(raw / "node-label" / "paper" / "node-label.csv.gz", "4\n5\n6\n")
    return tmp_path / "ogbn_mag"


def test_ogb_mag_cites(tmp_path):
    g = load_graph(str(_mag(tmp_path)))
    assert g.name == "ogbn_mag-cites"
    np.testing.assert_array_equal(g.adj.toarray(), _oracle_adj(3, [(0, 1), (2, 1)]))
    np.testing.assert_array_equal(g.features.toarray(), [[1.5, 0], [0, 0], [-2, 3]])
    assert g.labels.tolist() == [4, 5, 6]


def test_ogb_mag_all_relations(tmp_path):
    g = load_graph(str(_mag(tmp_path)) + ",relation=all")
    # node types stacked in sorted order: authors 0-1, papers 2-4
    want = _oracle_adj(5, [(2, 3), (4, 3), (0, 2), (1, 2), (1, 4)])
    np.testing.assert_array_equal(g.adj.toarray(), want)
    np.testing.assert_array_equal(g.features.toarray(),
                                  [[0, 0], [0, 0], [1.5, 0], [0, 0], [-2, 3]])
    with pytest.raises(UserError, match="no relation paper___cites___author"):
        load_graph(str(_mag(tmp_path)) + ",relation=paper___cites___author")
    with pytest.raises(UserError, match="joins author and paper nodes"):
        load_graph(str(_mag(tmp_path)) + ",relation=author___writes___paper")
    with pytest.raises(UserError, match="unknown option 'colour'"):
        load_graph(str(_mag(tmp_path)) + ",colour=red")


# ---- PyG edge_index ------------------------------------------------------------------------
def test_pyg_edge_index(tmp_path):
    e = np.array([[0, 1, 1, 3, 3], [1, 0, 2, 3, 0]])
    np.save(tmp_path / "e.npy", e)
    g = load_graph(str(tmp_path / "e.npy"), features="none")
    np.testing.assert_array_equal(g.adj.toarray(), _oracle_adj(4, e.T.tolist()))
    x = np.arange(12.0).reshape(6, 2)
    np.savez(tmp_path / "g.npz", edge_index=e, x=x, y=np.arange(6), num_nodes=6)
    g = load_graph(str(tmp_path / "g.npz"))
    assert g.num_nodes == 6 and g.labels.tolist() == list(range(6))
    np.testing.assert_array_equal(g.features.toarray(), x)


@pytest.mark.parametrize("arrays, msg", [
    ({"edge_index": np.array([[0, 1], [1, 2], [2, 0]])}, "transpose it"),
    ({"edge_index": np.array([[0, -1], [1, 2]])}, "negative node id"),
    ({"edge_index": np.array([[0.5, 1], [1, 2]])}, "2 x E integer array"),
    ({"edge_index": np.array([[0, 1], [1, 5]]), "num_nodes": 3}, "num_nodes must be"),
    ({"edge_index": np.array([[0, 1], [1, 2]]), "x": np.zeros((2, 2))}, "x must be"),
])
def test_pyg_errors(tmp_path, arrays, msg):
    np.savez(tmp_path / "g.npz", **arrays)
    with pytest.raises(UserError, match=msg):
        load_graph(str(tmp_path / "g.npz"))


# ---- commands -------------------------------------------------------------------------------
def test_gen_data_and_run_on_a_synthetic_graph(tmp_path):
    from click.testing import CliRunner

    from fuseflowc.cli import main

    prog = str(ROOT / "ir_examples" / "models" / "gcn" / "gcn.ff")
    r = CliRunner().invoke(main, ["gen-data", prog, "--graph",
                                  "synthetic:nodes=300,edges=900,features=12,density=0.05",
                                  "--size", "C=4",  # no labels to count classes in
                                  "-o", str(tmp_path / "d"), "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert "300 x 12" in r.output
    a = sp.load_npz(tmp_path / "d" / "A.npz")
    assert a.shape == (300, 300) and a.nnz == 2 * 900 + 300  # Â: edges both ways + self loops
    r = CliRunner().invoke(main, ["run", prog, "--data", str(tmp_path / "d"), "-o",
                                  str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert np.load(tmp_path / "out" / "Y.npy").shape == (300, 4)


def test_graph_command(tmp_path):
    from click.testing import CliRunner

    from fuseflowc.cli import main

    r = CliRunner().invoke(main, ["graph", "synthetic:nodes=100,edges=250,features=4,"
                                  "density=0.5", "--json", "-o", str(tmp_path / "g.npz")])
    assert r.exit_code == 0, r.output
    stats = json.loads(r.stdout)
    assert stats["nodes"] == 100 and stats["edges"] == 250 and stats["mean"] == 5.0
    assert stats["feature_density"] == 0.5
    g = load_npz_graph(tmp_path / "g.npz")
    assert g.num_edges == 250 and g.features.nnz == 200
    r = CliRunner().invoke(main, ["graph", "synthetic:nodes=3,edges=9"])
    assert r.exit_code == 1 and "do not fit" in r.output


def test_graph_output_is_an_ordinary_checked_output(tmp_path):
    """Found by fuzzing: `graph -o` wrote its archive 0600 (mkstemp's mode), and could replace
    its own source. Now it goes through fuseflowc.outputs like every other output."""
    from tests.support.golden import run_cli

    old = os.umask(0o022)
    try:
        r = run_cli(["graph", "karate", "-o", str(tmp_path / "k.npz")])
        assert r.exit_code == 0, r.stderr
        assert stat.S_IMODE(os.stat(tmp_path / "k.npz").st_mode) == 0o644
        before = (tmp_path / "k.npz").read_bytes()
        r = run_cli(["graph", str(tmp_path / "k.npz"), "-o", str(tmp_path / "k.npz")])
        assert r.exit_code == 1 and "is also an input of this command" in r.stderr, r.stderr
        assert (tmp_path / "k.npz").read_bytes() == before
        r = run_cli(["graph", "karate", "--seed", "-1", "-o", str(tmp_path / "s.npz")])
        assert r.exit_code == 2 and "-1 is not in the range x>=0" in r.stderr, r.stderr
        r = run_cli(["graph", "karate", "-o", str(tmp_path / "nodir" / "k.npz")])
        assert r.exit_code == 1 and "does not exist" in r.stderr, r.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["k.npz"]
    finally:
        os.umask(old)


def test_sweep_specs_take_synthetic_and_ogb_graphs(tmp_path):
    from fuseflowc.sweep.grid import expand
    from fuseflowc.sweep.spec import parse_spec

    raw = tmp_path / "ogb" / "raw"
    _gz(raw / "edge.csv.gz", "0,1\n1,2\n")
    _gz(raw / "num-node-list.csv.gz", "3\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(f"""
[[programs]]
path = "{ROOT / 'ir_examples' / 'models' / 'gcn' / 'gcn_partial.ff'}"
[[data]]
graph = "synthetic:collab,seed=2"
[[data]]
graph = "ogb"
[[data]]
graph = "nothere"
""")
    with pytest.raises(UserError, match="nothere: no such file or directory"):
        parse_spec(str(spec))
    spec.write_text(spec.read_text().replace('[[data]]\ngraph = "nothere"\n', ""))
    assert [c["data"] for c in expand(parse_spec(str(spec)))] == ["synthetic-collab-seed2",
                                                                   "ogb"]


def test_fusion_variants_share_one_generated_data_set(tmp_path):
    from fuseflowc.lang.load import load_program
    from fuseflowc.sweep.worker import data_dir_for

    gcn = ROOT / "ir_examples" / "models" / "gcn"
    ctx = {"base": str(tmp_path), "data_cache": str(tmp_path)}
    src = {"name": "s", "graph": "synthetic:nodes=40,edges=80,features=4,density=0.5",
           "seed": 1, "sizes": {"C": 3}}  # a synthetic graph has no labels to count classes in
    dirs = {data_dir_for({"program": str(p), "schedule": [], "data_source": src},
                         load_program(str(p)), ctx)
            for p in (gcn / "gcn_partial.ff", gcn / "gcn_full.ff", gcn / "gcn_unfused.ff")}
    assert len(dirs) == 1
    other = data_dir_for({"program": "x", "schedule": [], "data_source": {**src, "seed": 2}},
                         load_program(str(gcn / "gcn.ff")), ctx)
    assert other not in dirs

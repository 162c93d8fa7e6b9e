"""`gen-data --graph` sizes a GNN's class dim from the graph's labels: the models leave C open
(gcn.ff, graphsage.ff), so Cora's logits are 7 wide and KarateClub's 2, and the summary says
where the size came from. An explicit --size wins; a graph without labels is a located error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from fuseflowc.data.io import load_inputs
from fuseflowc.lang.load import load_program
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "ir_examples" / "models"
CORA = ROOT.parent / "shared" / "data" / "cora.npz"


def labelled_graph(path: Path, n: int, classes: int) -> Path:
    """A small graph archive in the shared data's layout, labels 0..classes-1."""
    a = sp.random(n, n, density=0.3, random_state=1, format="csr")
    a = ((a + a.T) > 0).astype(np.float64).tocsr()
    a.setdiag(0)
    a.eliminate_zeros()
    x = sp.csr_matrix(np.eye(n, 5))
    np.savez_compressed(path, adj_indptr=a.indptr, adj_indices=a.indices,
                        adj_shape=np.array(a.shape), feat_indptr=x.indptr,
                        feat_indices=x.indices, feat_data=x.data.astype(np.float32),
                        feat_shape=np.array(x.shape), labels=np.arange(n) % classes)
    return path


def written(prog: Path, out: Path) -> dict:
    p = load_program(str(prog))
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    return load_inputs(out, specs)[0]


@pytest.mark.parametrize("model, weights", [("gcn", ["W2", "b2"]),
                                            ("graphsage", ["Wn2", "Ws2", "b2"])])
@pytest.mark.parametrize("graph, classes", [("labelled", 7), ("karate", 2)])
def test_class_dim_is_the_number_of_classes(tmp_path, model, weights, graph, classes):
    src = str(labelled_graph(tmp_path / "g.npz", 12, 7)) if graph == "labelled" else graph
    prog = MODELS / model / f"{model}_full.ff"
    r = run_cli(["gen-data", str(prog), "--graph", src, "-o", str(tmp_path / "d")])
    assert r.exit_code == 0, r.stderr
    assert f"dim C = {classes}, the number of classes in the labels of graph {src}" in r.stderr
    t = written(prog, tmp_path / "d")
    for w in weights:
        assert t[w].shape[-1] == classes
    r = run_cli(["run", str(prog), "--data", str(tmp_path / "d"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.stderr


def test_cora_has_seven_classes(tmp_path):
    if not CORA.is_file():
        pytest.skip(f"{CORA} is absent")
    prog = MODELS / "gcn" / "gcn.ff"
    r = run_cli(["gen-data", str(prog), "--graph", str(CORA), "-o", str(tmp_path / "d")])
    assert r.exit_code == 0, r.stderr
    assert written(prog, tmp_path / "d")["W2"].shape == (16, 7)


def test_an_explicit_size_wins(tmp_path):
    prog = MODELS / "gcn" / "gcn.ff"
    r = run_cli(["gen-data", str(prog), "--graph", "karate", "--size", "C=4",
                 "-o", str(tmp_path / "d")])
    assert r.exit_code == 0, r.stderr
    assert "dim C" not in r.stderr
    assert written(prog, tmp_path / "d")["W2"].shape == (16, 4)


def test_a_graph_without_labels_says_how_to_size_the_classes(tmp_path):
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "3 3 2\n2 1\n3 2\n")
    r = run_cli(["gen-data", str(MODELS / "gcn" / "gcn.ff"), "--graph", str(tmp_path / "g.mtx"),
                 "-o", str(tmp_path / "d")])
    assert r.exit_code == 1 and not (tmp_path / "d").exists()
    assert "gcn.ff:10:11: error: dim C has no size, and graph" in r.stderr
    assert "has no labels to count the classes in: give it with --size C=<N>" in r.stderr


def test_only_an_open_dim_beside_the_nodes_in_an_output_is_sized(tmp_path):
    """A dim the labels could not be meant for (here: the hidden width too is open, so two
    candidates) is never guessed: the usual error asks for a size."""
    text = (MODELS / "gcn" / "gcn.ff").read_text().replace("dim H = 16", "dim H")
    text = text.replace("tensor Y[N, C]", "tensor Y[N, H]").replace("Y[i,c]   = Z2[i,c] + b2[c]",
                                                                   "Y[i,h] = H1[i,h]\n"
                                                                   "output Z2")
    (tmp_path / "two.ff").write_text(text)
    r = run_cli(["gen-data", str(tmp_path / "two.ff"), "--graph", "karate",
                 "-o", str(tmp_path / "d")])
    assert r.exit_code == 1 and "has no size" in r.stderr and "labels" not in r.stderr

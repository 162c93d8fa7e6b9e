"""The four models of ir_examples/models/ evaluated by the reference evaluator, against
hand-written numpy implementations of the same networks (the PyTorch operators written out).

Small random data for all four; GCN and GraphSAGE also on Cora (skipped if the shared data set
is absent).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.data.gen import random_tensor, resolve_shape, tensor_rng
from fuseflowc.lang.load import load_program
from fuseflowc.reference import evaluate

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "ir_examples" / "models"
CORA = Path(__file__).parents[3] / "shared" / "data" / "cora.npz"


def random_data(program, sizes, seed=0, density=None):
    """Random inputs of the program at `sizes` (density per input name, default per format)."""
    density = density or {}
    sizes = {**{d.name: d.size for d in program.dims if d.size is not None}, **sizes}
    out = {}
    for spec in program.specs():
        if spec.name in program.inputs:
            out[spec.name] = random_tensor(spec, resolve_shape(spec, sizes),
                                           density.get(spec.name), tensor_rng(seed, spec.name))
    return out


def dense(inputs):
    return {n: t.to_dense() for n, t in inputs.items()}


def relu(x):
    return np.maximum(x, 0)


# ---- numpy models -------------------------------------------------------------------------------
def gcn_numpy(A, X, W1, b1, W2, b2):
    H1 = relu(A @ X @ W1 + b1)
    return A @ H1 @ W2 + b2


def sage_numpy(A, X, Wn1, Ws1, b1, Wn2, Ws2, b2):
    H1 = relu(A @ X @ Wn1 + X @ Ws1 + b1)
    return A @ H1 @ Wn2 + H1 @ Ws2 + b2


def sae_numpy(X, W1, b1, W2, b2, W3, b3):
    H1 = relu(X @ W1 + b1)
    H2 = relu(H1 @ W2 + b2)
    return 1 / (1 + np.exp(-(H2 @ W3 + b3)))


def layer_norm(x, g, b):
    # The program divides by GPT-3 Small's E = 768 whatever the data's width (see its comment).
    mu = x.sum(axis=1, keepdims=True) / 768
    xc = x - mu
    var = (xc * xc).sum(axis=1, keepdims=True) / 768
    return xc / np.sqrt(var + 1e-5) * g + b


def masked_softmax(scores, mask):
    """Row softmax over the mask's entries only; a row without entries is all 0."""
    s = np.where(mask, scores, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.where(mask, np.exp(s - mx), 0.0)
    den = e.sum(axis=-1, keepdims=True)
    return np.where(mask, e / np.where(den == 0, 1, den), 0.0)


def bigbird_numpy(d, M):
    x = d["x"]
    ln1 = layer_norm(x, d["g1"], d["be1"])
    Q = np.einsum("se,ehd->hsd", ln1, d["Wq"]) + d["bq"][:, None, :]
    K = np.einsum("se,ehd->hsd", ln1, d["Wk"]) + d["bk"][:, None, :]
    V = np.einsum("se,ehd->hsd", ln1, d["Wv"]) + d["bv"][:, None, :]
    P = masked_softmax(np.einsum("hid,hjd->hij", Q, K) * 0.125, M[None])
    O = np.einsum("hij,hjd->hid", P, V)
    a = x + np.einsum("hsd,hde->se", O, d["Wo"]) + d["bo"]
    ln2 = layer_norm(a, d["g2"], d["be2"])
    F1 = ln2 @ d["W1"] + d["c1"]
    G = 0.5 * F1 * (1 + np.vectorize(math.erf)(F1 / math.sqrt(2)))
    return a + G @ d["W2"] + d["c2"], P


# ---- small random data --------------------------------------------------------------------------
def _graph_adjacency(n, seed):
    """A random symmetric 0/1 graph with some isolated nodes, GCN-normalized by hand."""
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < 0.15).astype(float)
    a = np.triu(a, 1)
    a = a + a.T
    a[: n // 5] = 0
    a[:, : n // 5] = 0
    return a


@pytest.mark.parametrize("variant", ["gcn", "gcn_full", "gcn_partial", "gcn_unfused"])
def test_gcn_small(variant):
    p = load_program(str(MODELS / "gcn" / f"{variant}.ff"))
    sizes = {"N": 23, "F": 11, "H": 16, "C": 4}
    inputs = random_data(p, sizes, seed=1, density={"X": 0.3})
    a = _graph_adjacency(23, 2) + np.eye(23)
    deg = a.sum(axis=1)
    ahat = a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
    inputs["A"] = FiberTensor.from_dense(ahat, p.tensor("A").format)
    d = dense(inputs)
    out = evaluate(p, inputs)
    np.testing.assert_allclose(out["Y"].to_dense(),
                               gcn_numpy(ahat, d["X"], d["W1"], d["b1"], d["W2"], d["b2"]),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant", ["graphsage", "graphsage_full"])
def test_graphsage_small(variant):
    p = load_program(str(MODELS / "graphsage" / f"{variant}.ff"))
    inputs = random_data(p, {"N": 19, "F": 7, "C": 4}, seed=3, density={"X": 0.4})
    a = _graph_adjacency(19, 4)
    deg = a.sum(axis=1)
    amean = a / np.where(deg == 0, 1, deg)[:, None]
    inputs["A"] = FiberTensor.from_dense(amean, p.tensor("A").format)
    d = dense(inputs)
    out = evaluate(p, inputs)
    want = sage_numpy(amean, d["X"], d["Wn1"], d["Ws1"], d["b1"], d["Wn2"], d["Ws2"], d["b2"])
    np.testing.assert_allclose(out["Y"].to_dense(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant", ["sae", "sae_full"])
def test_sae_small(variant):
    p = load_program(str(MODELS / "sae" / f"{variant}.ff"))
    inputs = random_data(p, {"Bt": 9, "P": 12, "D1": 6, "D2": 3}, seed=5, density={"X": 0.5})
    d = dense(inputs)
    out = evaluate(p, inputs)
    want = sae_numpy(d["X"], d["W1"], d["b1"], d["W2"], d["b2"], d["W3"], d["b3"])
    np.testing.assert_allclose(out["R"].to_dense(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant", ["gpt3_bigbird", "gpt3_bigbird_full"])
def test_bigbird_attention_layer_small(variant):
    p = load_program(str(MODELS / "gpt3_bigbird" / f"{variant}.ff"))
    sizes = {"S": 10, "E": 8, "NH": 2, "DH": 3, "FF": 12}
    inputs = random_data(p, sizes, seed=7, density={"M": 0.3})
    # A row of the mask with no entries: its attention output is 0, not NaN.
    m = inputs["M"].to_dense()
    m[4] = 0
    inputs["M"] = FiberTensor.from_dense(m, p.tensor("M").format)
    d = dense(inputs)
    mask = inputs["M"].pattern()
    out = evaluate(p, {**inputs})
    y, P = bigbird_numpy(d, mask)
    np.testing.assert_allclose(out["y"].to_dense(), y, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["P"].to_dense(), P, rtol=1e-9, atol=1e-12)
    # The softmax keeps the mask's pattern in every head; rows sum to 1 where the mask has any.
    np.testing.assert_array_equal(out["P"].pattern(), np.broadcast_to(mask, P.shape))
    rows = P.sum(axis=-1)
    np.testing.assert_allclose(rows[:, mask.any(axis=1)], 1.0)


# ---- Cora ---------------------------------------------------------------------------------------
def _cora():
    import scipy.sparse as sp

    from fuseflowc.data.graphs import gcn_normalize, load_npz_graph, mean_normalize

    g = load_npz_graph(CORA)
    return g, sp.csr_matrix(gcn_normalize(g.adj)), sp.csr_matrix(mean_normalize(g.adj))


def _sparse_input(m, fmt):
    coo = m.tocoo()
    return FiberTensor.from_coo(coo.shape, np.stack([coo.row, coo.col], axis=1), coo.data, fmt)


@pytest.mark.skipif(not CORA.exists(), reason="shared Cora data set not present")
def test_gcn_on_cora():
    g, ahat, _ = _cora()
    p = load_program(str(MODELS / "gcn" / "gcn_full.ff"))
    n, f = g.features.shape
    inputs = random_data(p, {"N": n, "F": f, "C": g.num_classes}, seed=11)
    inputs["A"] = _sparse_input(ahat, p.tensor("A").format)
    inputs["X"] = _sparse_input(g.features, p.tensor("X").format)
    d = {k: inputs[k].to_dense() for k in ("W1", "b1", "W2", "b2")}
    out = evaluate(p, inputs)
    want = gcn_numpy(ahat, g.features, d["W1"], d["b1"], d["W2"], d["b2"])
    np.testing.assert_allclose(out["Y"].to_dense(), np.asarray(want), rtol=1e-9, atol=1e-12)


@pytest.mark.skipif(not CORA.exists(), reason="shared Cora data set not present")
def test_graphsage_on_cora():
    g, _, amean = _cora()
    p = load_program(str(MODELS / "graphsage" / "graphsage_full.ff"))
    n, f = g.features.shape
    inputs = random_data(p, {"N": n, "F": f, "C": g.num_classes}, seed=12)
    inputs["A"] = _sparse_input(amean, p.tensor("A").format)
    inputs["X"] = _sparse_input(g.features, p.tensor("X").format)
    d = {k: inputs[k].to_dense() for k in ("Wn1", "Ws1", "b1", "Wn2", "Ws2", "b2")}
    out = evaluate(p, inputs)
    want = sage_numpy(amean, g.features, d["Wn1"], d["Ws1"], d["b1"], d["Wn2"], d["Ws2"],
                      d["b2"])
    np.testing.assert_allclose(out["Y"].to_dense(), np.asarray(want), rtol=1e-9, atol=1e-12)

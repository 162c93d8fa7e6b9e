"""A zoo of small ONNX models built with onnx.helper (no PyTorch needed): GCN, GraphSAGE, GIN,
a GAT-style edge attention, the SAE, a pruned MLP and a GPT-3 decoder layer with a BigBird mask,
as `torch.onnx.export` writes such models (MatMul/Gemm, Add, Softmax, LayerNormalization, ...).
Pruned weights are sparse initializers with pruned (all-zero) columns, so that a bias on a
pruned neuron is exercised.

    python -m fuseflowc.importer.zoo -o DIR       # writes DIR/<model>.onnx for every model

`ZOO[name]` is (builder, import options): the options `fuseflowc import` needs (`--format`,
`--sparse-threshold`) as keyword arguments of `importer.build.import_model`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

N, F, H, C = 12, 8, 6, 3          # graph nodes, features, hidden, classes
S, E, FF, NH = 16, 8, 16, 2       # sequence, embedding, feed-forward, heads
OPSET = 20


def _h():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    return onnx, TensorProto, helper, numpy_helper


def _model(name, nodes, inputs, outputs, inits, sparse=(), dtype=np.float64, ints=None):
    onnx, TP, helper, nh = _h()
    et = TP.DOUBLE if dtype == np.float64 else TP.FLOAT
    ins = [helper.make_tensor_value_info(n, TP.BOOL if b else et, shape)
           for n, shape, b in inputs]
    outs = [helper.make_tensor_value_info(n, et, shape) for n, shape in outputs]
    init = [nh.from_array(np.asarray(v, dtype=dtype), n) for n, v in inits.items()]
    init += [nh.from_array(v, n) for n, v in (ints or {}).items()]
    sp = []
    for n, v in sparse:
        v = np.asarray(v, dtype=dtype)
        idx = np.argwhere(v != 0)
        values = nh.from_array(v[tuple(idx.T)], n)
        sp.append(helper.make_sparse_tensor(values, nh.from_array(idx.astype(np.int64),
                                                                  n + "_idx"), v.shape))
    g = helper.make_graph(nodes, name, ins, outs, init, sparse_initializer=sp)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="fuseflowc.importer.zoo")
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m


def _pruned(rng, rows, cols, keep=0.5, dead=(1,)):
    w = rng.standard_normal((rows, cols)) * (rng.random((rows, cols)) < keep)
    for c in dead:
        w[:, c] = 0.0   # a pruned neuron: its bias alone decides its output
    return w


def gcn(dtype=np.float64, seed=0):
    """Two GCN layers: relu(A (X W1) + b1), then A (H W2) + b2; A the normalized adjacency."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("MatMul", ["X", "W1"], ["XW"], "xw1"),
             h.make_node("MatMul", ["A", "XW"], ["AXW"], "agg1"),
             h.make_node("Add", ["AXW", "b1"], ["Z1"], "bias1"),
             h.make_node("Relu", ["Z1"], ["H1"], "relu1"),
             h.make_node("MatMul", ["H1", "W2"], ["HW"], "xw2"),
             h.make_node("MatMul", ["A", "HW"], ["AHW"], "agg2"),
             h.make_node("Add", ["AHW", "b2"], ["Y"], "bias2")]
    return _model("gcn", nodes, [("A", ["nodes", "nodes"], False), ("X", ["nodes", F], False)],
                  [("Y", ["nodes", C])],
                  {"W1": rng.standard_normal((F, H)), "b1": rng.standard_normal(H),
                   "W2": rng.standard_normal((H, C)), "b2": rng.standard_normal(C)},
                  dtype=dtype)


def graphsage(dtype=np.float64, seed=0):
    """GraphSAGE (mean aggregator, PyG's concat form): relu(Concat(Mean-A X, X) W + b), then a
    linear classifier."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("MatMul", ["A", "X"], ["AX"], "aggregate"),
             h.make_node("Concat", ["AX", "X"], ["Cat"], "concat", axis=1),
             h.make_node("MatMul", ["Cat", "W"], ["T1"], "combine"),
             h.make_node("Add", ["T1", "b"], ["T2"], "bias"),
             h.make_node("Relu", ["T2"], ["H1"], "relu"),
             h.make_node("Gemm", ["H1", "Wc", "bc"], ["Y"], "classify")]
    return _model("graphsage", nodes, [("A", [N, N], False), ("X", [N, F], False)],
                  [("Y", [N, C])],
                  {"W": rng.standard_normal((2 * F, H)), "b": rng.standard_normal(H),
                   "Wc": rng.standard_normal((H, C)), "bc": rng.standard_normal(C)},
                  dtype=dtype)


def gin(dtype=np.float64, seed=0):
    """GIN: MLP((1 + eps) X + A X) with a two-layer MLP."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("MatMul", ["A", "X"], ["AX"], "aggregate"),
             h.make_node("Mul", ["X", "one_eps"], ["Xs"], "self"),
             h.make_node("Add", ["Xs", "AX"], ["Z"], "combine"),
             h.make_node("Gemm", ["Z", "W1", "b1"], ["M1"], "mlp1"),
             h.make_node("Relu", ["M1"], ["R1"], "relu"),
             h.make_node("Gemm", ["R1", "W2", "b2"], ["Y"], "mlp2", transB=1)]
    return _model("gin", nodes, [("A", [N, N], False), ("X", [N, F], False)], [("Y", [N, C])],
                  {"one_eps": np.array(1.25), "W1": rng.standard_normal((F, H)),
                   "b1": rng.standard_normal(H), "W2": rng.standard_normal((C, H)),
                   "b2": rng.standard_normal(C)}, dtype=dtype)


def gat(dtype=np.float64, seed=0):
    """GAT-style edge attention: scores (X Wq)(X Wk)^T on the graph's edges (a boolean
    adjacency mask), a row softmax, and the aggregation of X Wv."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("MatMul", ["X", "Wq"], ["Q"], "q"),
             h.make_node("MatMul", ["X", "Wk"], ["K"], "k"),
             h.make_node("MatMul", ["X", "Wv"], ["V"], "v"),
             h.make_node("Transpose", ["K"], ["Kt"], "kt", perm=[1, 0]),
             h.make_node("MatMul", ["Q", "Kt"], ["Sc"], "scores"),
             h.make_node("Where", ["M", "Sc", "ninf"], ["Sm"], "edges"),
             h.make_node("Softmax", ["Sm"], ["P"], "softmax", axis=-1),
             h.make_node("MatMul", ["P", "V"], ["O"], "aggregate"),
             h.make_node("Relu", ["O"], ["Y"], "relu")]
    return _model("gat", nodes, [("M", [N, N], True), ("X", [N, F], False)], [("Y", [N, H])],
                  {"Wq": rng.standard_normal((F, H)) * 0.5, "Wk": rng.standard_normal((F, H)) * 0.5,
                   "Wv": rng.standard_normal((F, H)), "ninf": np.array(-np.inf)}, dtype=dtype)


def sae(dtype=np.float64, seed=0):
    """The sparse autoencoder: relu(X We + be) Wd + bd, with a pruned encoder."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("Gemm", ["X", "We", "be"], ["Z"], "encode"),
             h.make_node("Relu", ["Z"], ["Hd"], "relu"),
             h.make_node("Gemm", ["Hd", "Wd", "bd"], ["Y"], "decode")]
    return _model("sae", nodes, [("X", [4, 2 * F], False)], [("Y", [4, 2 * F])],
                  {"Wd": rng.standard_normal((3 * F, 2 * F)), "bd": rng.standard_normal(2 * F),
                   "be": rng.standard_normal(3 * F)},
                  sparse=[("We", _pruned(rng, 2 * F, 3 * F, 0.3, dead=(0, 5)))], dtype=dtype)


def pruned_mlp(dtype=np.float64, seed=0):
    """A two-layer MLP with magnitude-pruned weights: relu(X W1 + b1) W2 + b2, exported as
    MatMul + Add (a pruned neuron outputs relu(b1))."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    nodes = [h.make_node("MatMul", ["X", "W1"], ["Z1"], "fc1"),
             h.make_node("Add", ["Z1", "b1"], ["A1"], "bias1"),
             h.make_node("Relu", ["A1"], ["H1"], "relu"),
             h.make_node("MatMul", ["H1", "W2"], ["Z2"], "fc2"),
             h.make_node("Add", ["Z2", "b2"], ["Y"], "bias2")]
    return _model("pruned_mlp", nodes, [("X", ["batch", F], False)], [("Y", ["batch", C])],
                  {"b1": rng.standard_normal(H), "b2": rng.standard_normal(C)},
                  sparse=[("W1", _pruned(rng, F, H, 0.4)), ("W2", _pruned(rng, H, C, 0.6, ()))],
                  dtype=dtype)


def gpt3_bigbird(dtype=np.float64, seed=0):
    """A GPT-3 decoder layer with NH heads and a BigBird mask, as GPT-2/3 code exports it:
    LayerNorm, one QKV projection split in three, a head split (Reshape, Transpose), masked
    softmax attention per head, the head merge, the output projection and residual, LayerNorm,
    a Gelu feed-forward and residual."""
    _, _, h, _ = _h()
    rng = np.random.default_rng(seed)
    dh = E // NH

    def w(*shape):
        return rng.standard_normal(shape) / np.sqrt(shape[0])
    nodes = [h.make_node("LayerNormalization", ["X", "g1", "be1"], ["L1"], "ln1", epsilon=1e-5),
             h.make_node("Gemm", ["L1", "Wqkv", "bqkv"], ["QKV"], "c_attn"),
             h.make_node("Split", ["QKV", "split"], ["Q", "K", "V"], "split_qkv", axis=1),
             h.make_node("Reshape", ["Q", "heads"], ["Qh"], "q_heads"),
             h.make_node("Transpose", ["Qh"], ["Qt"], "q_t", perm=[1, 0, 2]),
             h.make_node("Reshape", ["K", "heads"], ["Kh"], "k_heads"),
             h.make_node("Transpose", ["Kh"], ["Kt"], "k_t", perm=[1, 2, 0]),
             h.make_node("Reshape", ["V", "heads"], ["Vh"], "v_heads"),
             h.make_node("Transpose", ["Vh"], ["Vt"], "v_t", perm=[1, 0, 2]),
             h.make_node("MatMul", ["Qt", "Kt"], ["Sc"], "scores"),
             h.make_node("Div", ["Sc", "scale"], ["Ss"], "scale"),
             h.make_node("Where", ["M", "Ss", "ninf"], ["Sm"], "bigbird_mask"),
             h.make_node("Softmax", ["Sm"], ["P"], "softmax", axis=-1),
             h.make_node("MatMul", ["P", "Vt"], ["O"], "attend"),
             h.make_node("Transpose", ["O"], ["Ot"], "merge_t", perm=[1, 0, 2]),
             h.make_node("Reshape", ["Ot", "merged"], ["Om"], "merge_heads"),
             h.make_node("Gemm", ["Om", "Wo", "bo"], ["At"], "c_proj"),
             h.make_node("Add", ["X", "At"], ["R1"], "residual1"),
             h.make_node("LayerNormalization", ["R1", "g2", "be2"], ["L2"], "ln2", epsilon=1e-5),
             h.make_node("Gemm", ["L2", "W1", "c1"], ["F1"], "ff1"),
             h.make_node("Gelu", ["F1"], ["G"], "gelu"),
             h.make_node("Gemm", ["G", "W2", "c2"], ["F2"], "ff2"),
             h.make_node("Add", ["R1", "F2"], ["Y"], "residual2")]
    inits = {"g1": 1 + 0.1 * rng.standard_normal(E), "be1": 0.1 * rng.standard_normal(E),
             "Wqkv": w(E, 3 * E), "bqkv": 0.1 * rng.standard_normal(3 * E),
             "scale": np.array(np.sqrt(dh)), "ninf": np.array(-np.inf), "Wo": w(E, E),
             "bo": 0.1 * rng.standard_normal(E), "g2": 1 + 0.1 * rng.standard_normal(E),
             "be2": 0.1 * rng.standard_normal(E), "W1": w(E, FF),
             "c1": 0.1 * rng.standard_normal(FF), "W2": w(FF, E),
             "c2": 0.1 * rng.standard_normal(E)}
    ints = {"split": np.array([E, E, E], dtype=np.int64),
            "heads": np.array([S, NH, dh], dtype=np.int64),
            "merged": np.array([S, E], dtype=np.int64)}
    return _model("gpt3_bigbird", nodes, [("M", [S, S], True), ("X", [S, E], False)],
                  [("Y", [S, E])], inits, dtype=dtype, ints=ints)


def bigbird_mask(s: int, block: int = 4, seed: int = 0) -> np.ndarray:
    """A BigBird mask: a band of blocks, the first block row and column (global), and one
    random block per block row."""
    rng = np.random.default_rng(seed)
    nb = s // block
    blocks = np.zeros((nb, nb), dtype=bool)
    for i in range(nb):
        blocks[i, max(0, i - 1):i + 2] = True
        blocks[i, rng.integers(nb)] = True
    blocks[0, :] = blocks[:, 0] = True
    return np.kron(blocks, np.ones((block, block), dtype=bool)).astype(bool)


#: name -> (builder, import options, symbolic sizes)
ZOO = {
    "gcn": (gcn, {"formats": {"A": "csr"}}, {"nodes": N}),
    "graphsage": (graphsage, {"formats": {"A": "csr"}}, {}),
    "gin": (gin, {"formats": {"A": "csr"}}, {}),
    "gat": (gat, {}, {}),
    "sae": (sae, {}, {}),
    "pruned_mlp": (pruned_mlp, {}, {"batch": 5}),
    "gpt3_bigbird": (gpt3_bigbird, {}, {}),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, help="directory for the .onnx files")
    ap.add_argument("--float32", action="store_true", help="float32 models (default float64)")
    args = ap.parse_args(argv)
    import onnx
    d = Path(args.output)
    d.mkdir(parents=True, exist_ok=True)
    for name, (build, _, _) in ZOO.items():
        onnx.save(build(np.float32 if args.float32 else np.float64), str(d / f"{name}.onnx"))
        print(d / f"{name}.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())

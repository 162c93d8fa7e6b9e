"""Every operator of the importer's table (importer.translate.OPS), one small model each, with
a pruned sparse weight (an all-zero row and column) where the operator reads one, against
onnxruntime on random inputs (hypothesis draws the seed and the pruning)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from fuseflowc.bench.onnx_check import check_proto
from fuseflowc.importer.translate import OPS

I64 = np.int64


def _ops():
    """op -> (nodes, output shape, extra initializers, float32 only (onnxruntime lacks a double
    kernel)). Inputs: X[4, 5] (dense); initializers: W[4, 5] (sparse, pruned), P[4, 5] (its
    absolute values), c[5], g[5], C[4, 5] (a boolean condition)."""
    n = helper.make_node
    return {
        "MatMul": ([n("MatMul", ["X", "Wt"], ["Y"])], [4, 4], {"Wt": "W.T"}, False),
        "Gemm": ([n("Gemm", ["X", "W", "c4"], ["Y"], transB=1, alpha=0.5, beta=2.0)], [4, 4],
                 {"c4": "c[:4]"}, False),
        "Einsum": ([n("Einsum", ["X", "W"], ["Y"], equation="ij,kj->ik")], [4, 4], {}, False),
        "Add": ([n("Add", ["W", "c"], ["Y"])], [4, 5], {}, False),
        "Sub": ([n("Sub", ["c", "W"], ["Y"])], [4, 5], {}, False),
        "Mul": ([n("Mul", ["W", "X"], ["Y"])], [4, 5], {}, False),
        "Div": ([n("Div", ["W", "Xa"], ["Y"])], [4, 5], {"Xa": "abs(X)+1"}, False),
        "Relu": ([n("Relu", ["W"], ["Y"])], [4, 5], {}, False),
        "Gelu": ([n("Gelu", ["W"], ["Y"])], [4, 5], {}, True),
        "Sigmoid": ([n("Sigmoid", ["W"], ["Y"])], [4, 5], {}, False),
        "Tanh": ([n("Tanh", ["W"], ["Y"])], [4, 5], {}, False),
        "Exp": ([n("Exp", ["W"], ["Y"])], [4, 5], {}, False),
        "Sqrt": ([n("Sqrt", ["P"], ["Y"])], [4, 5], {}, False),
        "Reciprocal": ([n("Reciprocal", ["Xa"], ["Y"])], [4, 5], {"Xa": "abs(X)+1"}, False),
        "Neg": ([n("Neg", ["W"], ["Y"])], [4, 5], {}, False),
        "Pow": ([n("Pow", ["W", "two"], ["Y0"]), n("Pow", ["P", "half"], ["Y1"]),
                 n("Add", ["Y0", "Y1"], ["Y"])], [4, 5], {"two": "2.0", "half": "0.5"}, False),
        "Softmax": ([n("Softmax", ["W"], ["Y0"], axis=-1), n("Softmax", ["W"], ["Y1"], axis=0),
                     n("Add", ["Y0", "Y1"], ["Y"])], [4, 5], {}, False),
        "LayerNormalization": ([n("LayerNormalization", ["W", "g", "c"], ["Y"], epsilon=1e-3)],
                               [4, 5], {}, False),
        "ReduceSum": ([n("ReduceSum", ["W", "ax1"], ["Y0"]), n("Add", ["Y0", "X"], ["Y"])],
                      [4, 5], {"ax1": "[1]"}, False),
        "ReduceMean": ([n("ReduceMean", ["W", "ax0"], ["Y"], keepdims=0)], [5], {"ax0": "[0]"},
                       False),
        "ReduceMax": ([n("ReduceMax", ["W", "ax1"], ["Y"], keepdims=0)], [4], {"ax1": "[1]"},
                      False),
        "Where": ([n("Where", ["C", "X", "W"], ["Y"])], [4, 5], {}, False),
        "Not": ([n("Not", ["C"], ["NC"]), n("Where", ["NC", "X", "W"], ["Y"])], [4, 5], {},
                False),
        "Transpose": ([n("Transpose", ["W"], ["Wt2"], perm=[1, 0]),
                       n("MatMul", ["Wt2", "X"], ["Y"])], [5, 5], {}, False),
        "Identity": ([n("Identity", ["W"], ["Y"])], [4, 5], {}, False),
        "Squeeze": ([n("Unsqueeze", ["X", "ax0"], ["U"]), n("Squeeze", ["U", "ax0"], ["Y"])],
                    [4, 5], {"ax0": "[0]"}, False),
        "Unsqueeze": ([n("Unsqueeze", ["X", "ax0"], ["U"]), n("Add", ["U", "W"], ["Y"])],
                      [1, 4, 5], {"ax0": "[0]"}, False),
        "Reshape": ([n("Reshape", ["X", "s20"], ["R"]), n("Reshape", ["R", "s45"], ["Y0"]),
                     n("Add", ["Y0", "W"], ["Y"])], [4, 5], {"s20": "[20]", "s45": "[4, 5]"},
                    False),
        "Split": ([n("Split", ["X", "sp"], ["A", "B"], axis=1), n("MatMul", ["A", "Bt"], ["Y"])],
                  [4, 4], {"sp": "[2, 3]", "Bt": "W[:, :2].T"}, False),
        "Concat": ([n("Concat", ["X", "W", "c2"], ["Y"], axis=0)], [9, 5], {"c2": "c[None]"},
                   False),
    }


def _model(op: str, seed: int, keep: float, dtype):
    nodes, shape, extra, _ = _ops()[op]
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < keep)
    w[1, :] = 0
    w[:, 2] = 0
    x = rng.standard_normal((4, 5))
    env = {"W": w, "X": x, "c": rng.standard_normal(5), "abs": np.abs, "np": np}
    et = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    inits = {"P": np.abs(w), "c": env["c"], "g": 1 + rng.standard_normal(5) * 0.1}
    for name, expr in extra.items():
        inits[name] = np.asarray(eval(expr, env))  # the test's own table, not user input
    tensors = []
    for name, v in inits.items():
        v = np.asarray(v)
        if name.startswith(("ax", "s", "sp")) and v.dtype.kind in "iu" or \
                (isinstance(extra.get(name), str) and extra[name].startswith("[")):
            tensors.append(numpy_helper.from_array(v.astype(I64), name))
        else:
            tensors.append(numpy_helper.from_array(v.astype(dtype), name))
    tensors.append(numpy_helper.from_array(rng.random((4, 5)) < 0.5, "C"))
    idx = np.argwhere(w != 0)
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(w[tuple(idx.T)].astype(dtype),
                                                               "W"),
                                       numpy_helper.from_array(idx.astype(I64), "W_idx"), w.shape)
    g = helper.make_graph(nodes, op, [helper.make_tensor_value_info("X", et, [4, 5])],
                          [helper.make_tensor_value_info("Y", et, shape)], tensors,
                          sparse_initializer=[sparse])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    return m


def test_every_operator_of_the_table_is_tested():
    assert set(_ops()) == set(OPS)


@pytest.mark.parametrize("op", sorted(OPS))
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000), keep=st.sampled_from([0.0, 0.3, 1.0]))
def test_operator_matches_onnxruntime(op, seed, keep):
    f32 = _ops()[op][3]
    r = check_proto(_model(op, seed, keep, np.float32 if f32 else np.float64), {}, seed,
                    {"unfused": {"unfused": True}})
    assert r["problems"] == []
    assert r["diff"] <= (1e-5 if f32 else 1e-9), (op, r)


def _graph_model(nodes, inits: dict, shape, dtype=np.float32, opset=17):
    et = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    tensors = [numpy_helper.from_array(np.asarray(v, dtype=dtype), k) for k, v in inits.items()]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", et, [6, 5])],
                          [helper.make_tensor_value_info("Y", et, shape)], tensors)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def _erf_gelu(order: int):
    """The Erf form of Gelu in the orders exporters write it."""
    n = helper.make_node
    head = [n("Div", ["X", "sqrt2"], ["z"]), n("Erf", ["z"], ["e"]), n("Add", ["e", "one"], ["a"])]
    tails = {0: [n("Mul", ["X", "a"], ["m"]), n("Mul", ["m", "half"], ["Y"])],
             1: [n("Mul", ["a", "half"], ["m"]), n("Mul", ["m", "X"], ["Y"])],
             2: [n("Mul", ["X", "half"], ["h"]), n("Mul", ["h", "a"], ["Y"])]}
    return head + tails[order]


@pytest.mark.parametrize("order", [0, 1, 2])
def test_the_erf_form_of_gelu_is_one_gelu(order):
    consts = {"sqrt2": np.sqrt(2.0), "one": 1.0, "half": 0.5}
    r = check_proto(_graph_model(_erf_gelu(order), consts, [6, 5]), {}, order,
                    {"unfused": {"unfused": True}})
    assert r["ops"] == ["Gelu"] and r["problems"] == [] and r["diff"] <= 1e-5, r


def test_an_erf_alone_is_refused_by_name():
    from fuseflowc.diagnostics import UserError
    with pytest.raises(UserError, match="unsupported operator Erf"):
        check_proto(_graph_model([helper.make_node("Erf", ["X"], ["Y"])], {}, [6, 5]), {}, 0,
                    {"unfused": {"unfused": True}})


def test_the_decomposed_layer_norm_matches_onnxruntime():
    n = helper.make_node
    nodes = [n("ReduceMean", ["X", "ax"], ["mu"]), n("Sub", ["X", "mu"], ["d"]),
             n("Pow", ["d", "two"], ["d2"]), n("ReduceMean", ["d2", "ax"], ["var"]),
             n("Add", ["var", "eps"], ["ve"]), n("Sqrt", ["ve"], ["sd"]),
             n("Div", ["d", "sd"], ["xn"]), n("Mul", ["xn", "g"], ["xs"]),
             n("Add", ["xs", "b"], ["Y"])]
    m = _graph_model(nodes, {"two": 2.0, "eps": 1e-5, "g": np.linspace(0.5, 1.5, 5),
                             "b": np.linspace(-1, 1, 5)}, [6, 5], np.float64, opset=18)
    m.graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=I64), "ax"))
    r = check_proto(m, {}, 0, {"unfused": {"unfused": True}, "fused": {}})
    assert r["problems"] == [] and r["diff"] <= 1e-9, r


@pytest.mark.parametrize("neg", [-np.inf, np.finfo(np.float32).min])
def test_softmax_with_an_additive_mask(neg):
    rng = np.random.default_rng(0)
    mask = np.where(rng.random((6, 5)) < 0.5, neg, 0.0)
    mask[:, 0] = 0.0  # no row fully masked
    n = helper.make_node
    m = _graph_model([n("Add", ["X", "M"], ["S"]), n("Softmax", ["S"], ["Y"], axis=-1)],
                     {"M": mask}, [6, 5])
    r = check_proto(m, {}, 0, {"unfused": {"unfused": True}, "fused": {}})
    assert r["problems"] == [] and r["diff"] <= 1e-5, r


def test_docs_import_md_lists_exactly_the_table():
    """docs/import.md, "What each operator becomes", names every operator of OPS and no other."""
    import re
    from pathlib import Path
    text = (Path(__file__).parents[2] / "docs" / "import.md").read_text()
    section = text.split("## What each operator becomes", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in re.findall(r"^\| ([^|]+) \|", section, re.M):
        if row.strip() in ("operator", "---"):
            continue
        first = row.split(" of ")[0]
        named.update(x.strip() for x in first.split(","))
    assert named == set(OPS) | {"Constant"}

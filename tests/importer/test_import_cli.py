"""`fuseflowc import`: the command, its located errors (exit 1, nothing written) and the dense()
wrapping that gives a pruned neuron its bias."""

from __future__ import annotations

import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from fuseflowc.importer import zoo as onnx_zoo
from tests.support.golden import run_cli


def _save(tmp_path, model, name="m.onnx"):
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def _tiny(op="Relu", opset=17, shape=(3, 4), **attrs):
    x = helper.make_tensor_value_info("X", TensorProto.DOUBLE, list(shape))
    y = helper.make_tensor_value_info("Y", TensorProto.DOUBLE, list(shape))
    g = helper.make_graph([helper.make_node(op, ["X"], ["Y"], "the_node", **attrs)], "g", [x],
                          [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _fails(tmp_path, args, message):
    out, data = tmp_path / "out.ff", tmp_path / "data"
    r = run_cli(args + ["-o", str(out), "--data", str(data)])
    assert r.exit_code == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 3
    assert not out.exists() and not data.exists()
    return r.stderr


def test_import_writes_a_program_and_its_data_that_simulate_and_check(tmp_path):
    path = _save(tmp_path, onnx_zoo.pruned_mlp())
    r = run_cli(["import", str(path), "-o", str(tmp_path / "m.ff"), "--data",
                 str(tmp_path / "d"), "--size", "batch=5"])
    assert r.exit_code == 0, r.stderr
    text = (tmp_path / "m.ff").read_text()
    assert "# node 1 'bias1': Add(Z1, b1)" in text and "tensor W1[" in text
    assert (tmp_path / "d" / "W1.npz").exists() and (tmp_path / "d" / "X.npy").exists()
    fused = run_cli(["fuse", str(tmp_path / "m.ff"), "-o", str(tmp_path / "m.fused")])
    assert fused.exit_code == 0
    low = run_cli(["lower", str(tmp_path / "m.fused"), "-o", str(tmp_path / "m.samml")])
    assert low.exit_code == 0
    sim = run_cli(["simulate", str(tmp_path / "m.samml"), "--data", str(tmp_path / "d"),
                   "--check"])
    assert sim.exit_code == 0 and "check: Y match" in sim.stderr + sim.stdout


def test_a_corrupted_file_is_a_located_error(tmp_path):
    path = _save(tmp_path, onnx_zoo.gcn())
    blob = path.read_bytes()
    path.write_bytes(blob[: len(blob) // 3] + b"\xff\x00garbage")
    _fails(tmp_path, ["import", str(path), "--size", "nodes=12"],
           f"{path}: error: not a valid ONNX model")


def test_an_unsupported_operator_names_the_node_operator_and_opset(tmp_path):
    path = _save(tmp_path, _tiny("Cos"))
    err = _fails(tmp_path, ["import", str(path)], "unsupported operator Cos (opset 17)")
    assert f"{path}:node 0 'the_node' (Cos, opset 17): error:" in err


def test_a_symbolic_dim_without_size_is_a_located_error(tmp_path):
    path = _save(tmp_path, _tiny(shape=("batch", 4)))
    err = _fails(tmp_path, ["import", str(path)], "--size batch=N")
    assert f"{path}:input 'X': error: axis 0 has the symbolic size 'batch'" in err


def test_a_reshape_to_a_runtime_shape_is_refused(tmp_path):
    x = helper.make_tensor_value_info("X", TensorProto.DOUBLE, [4, 6])
    shp = helper.make_tensor_value_info("shape", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("Y", TensorProto.DOUBLE, [4, 2, 3])
    g = helper.make_graph([helper.make_node("Reshape", ["X", "shape"], ["Y"], "split_heads")],
                          "g", [x, shp], [y])
    path = _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    _fails(tmp_path, ["import", str(path)], "input 'shape': error: element type INT64")


def test_an_old_opset_and_a_missing_file_are_errors(tmp_path):
    _fails(tmp_path, ["import", str(_save(tmp_path, _tiny(opset=11)))], "opset 11")
    _fails(tmp_path, ["import", str(tmp_path / "none.onnx")], "no such file")


def test_bad_format_and_size_options(tmp_path):
    path = _save(tmp_path, onnx_zoo.gcn())
    _fails(tmp_path, ["import", str(path), "--size", "nodes=12", "--format", "A=nope"],
           "--format A=nope")
    _fails(tmp_path, ["import", str(path), "--size", "nodes=12", "--format", "Q=csr"],
           "no input or initializer named 'Q'")
    _fails(tmp_path, ["import", str(path), "--size", "nodes=12", "--size", "zz=3"],
           "no symbolic dim named 'zz'")
    r = run_cli(["import", str(path), "--size", "nodes"])
    assert r.exit_code == 2


def test_without_the_onnx_package_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    path = _save(tmp_path, _tiny())
    monkeypatch.setitem(sys.modules, "onnx", None)
    err = _fails(tmp_path, ["import", str(path)], "pip install 'fuseflowc[onnx]'")
    assert len(err.strip().splitlines()) == 1


def test_the_sparse_gemm_needs_dense_and_gets_it(tmp_path):
    """The SAE's pruned encoder: without dense(...) a pruned neuron loses its bias (the
    importer's dense() is what the onnxruntime comparison depends on)."""
    from fuseflowc.bench.onnx_check import check_model
    from fuseflowc.importer import build

    r = check_model("sae")
    assert r["diff"] <= 1e-9
    real = build.import_model

    def stripped(*a, **k):
        imp = real(*a, **k)
        assert "dense(sum[" in imp.text
        imp.text = imp.text.replace("dense(sum[k](X[i, k] * We[k, j]))", "sum[k](X[i, k] * We[k, j])")
        return imp
    build.import_model = stripped
    try:
        assert check_model("sae", variants={"unfused": {"unfused": True}})["diff"] > 0.1
    finally:
        build.import_model = real


def test_sparse_threshold_and_format_choose_compressed_formats(tmp_path):
    path = _save(tmp_path, onnx_zoo.gin())
    out = tmp_path / "g.ff"
    assert run_cli(["import", str(path), "-o", str(out)]).exit_code == 0
    assert "tensor A[" in out.read_text() and ": dense  # graph input A" in out.read_text()
    r = run_cli(["import", str(path), "-o", str(out), "--format", "A=dcsr",
                 "--sparse-threshold", "1"])
    assert r.exit_code == 0, r.stderr
    text = out.read_text()
    assert ": dcsr  # graph input A" in text and ": csr  # initializer W1" in text


def test_external_data_is_read_beside_the_model_and_never_outside(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    onnx.save(onnx_zoo.sae(), str(d / "sae.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    r = run_cli(["import", str(d / "sae.onnx"), "-o", str(tmp_path / "s.ff"), "--data",
                 str(tmp_path / "sd")])
    assert r.exit_code == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "sd" / "Wd.npy"),
                          onnx.numpy_helper.to_array(onnx_zoo.sae().graph.initializer[0]))
    m = onnx.load(str(d / "sae.onnx"), load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../w.bin"
    (tmp_path / "w.bin").write_bytes((d / "w.bin").read_bytes())
    onnx.save(m, str(d / "escape.onnx"))
    _fails(tmp_path, ["import", str(d / "escape.onnx")], "points outside the directory")


def test_a_scalar_result_is_refused(tmp_path):
    x = helper.make_tensor_value_info("X", TensorProto.DOUBLE, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.DOUBLE, [])
    g = helper.make_graph([helper.make_node("MatMul", ["X", "X"], ["Y"], "dot")], "g", [x], [y])
    path = _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    _fails(tmp_path, ["import", str(path)], "node 0 'dot' (MatMul, opset 17): error: a scalar")


@pytest.mark.parametrize("how", ["nan-scalar", "inf-where", "elem-type-99"])
def test_fuzzer_finds_are_located_errors(tmp_path, how):
    """Regressions from the import fuzz family (seed 7): a NaN scalar constant was printed into
    the program (an internal error: the program did not parse), and an element type no ONNX
    type has raised ValueError."""
    m = onnx_zoo.gin()
    if how == "nan-scalar":
        t = next(t for t in m.graph.initializer if t.name == "one_eps")
        t.CopyFrom(onnx.numpy_helper.from_array(np.array(np.nan), "one_eps"))
        message = "constant 'one_eps' is nan"
    elif how == "inf-where":
        m = onnx_zoo.gat()
        w = next(n for n in m.graph.node if n.op_type == "Where")
        w.input[1], w.input[2] = w.input[2], w.input[1]  # Where(M, -inf, scores)
        t = next(t for t in m.graph.initializer if t.name == "ninf")
        t.CopyFrom(onnx.numpy_helper.from_array(np.array(np.inf), "ninf"))
        message = "input 1 of Where is inf"
    else:
        m.graph.input[0].type.tensor_type.elem_type = 99
        message = "element type 99"
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    _fails(tmp_path, ["import", str(path)], message)

"""Real `torch.onnx.export` outputs (tests/importer/torch/*.onnx, made by export_torch.py there)
imported, compiled unfused and fused, simulated with --check, and compared with onnxruntime
within float32 tolerance (the models are float32)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from fuseflowc.bench.onnx_check import check_proto

pytest.importorskip("onnxruntime")
HERE = Path(__file__).parent / "torch"

#: file -> import options: the GCN's adjacency is a graph input stored as CSR; the pruned MLP's
#: weights are dense initializers with zeros, stored compressed below density 0.6.
MODELS = {
    "torch_pruned_mlp": {"threshold": 0.6},
    "torch_gcn": {"formats": {"a": "csr"}},
    "torch_attention": {},
}


def test_every_committed_export_is_tested():
    assert {p.stem for p in HERE.glob("*.onnx")} == set(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_torch_export_matches_onnxruntime(name):
    proto = onnx.load(str(HERE / f"{name}.onnx"))
    r = check_proto(proto, {}, 3, {"unfused": {"unfused": True}, "fused": {}}, **MODELS[name])
    assert r["problems"] == []
    assert r["diff"] <= 1e-5, r
    if name == "torch_pruned_mlp":
        assert "Gemm" in r["ops"]

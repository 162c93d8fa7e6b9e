"""Real `torch.onnx.export` outputs (tests/importer/torch/*.onnx, made by export_torch.py there)
imported, compiled unfused and fused, simulated with --check, and compared with onnxruntime
within float32 tolerance (the models are float32)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from fuseflowc.bench.onnx_check import TORCH_MODELS as MODELS
from fuseflowc.bench.onnx_check import check_proto

HERE = Path(__file__).parent / "torch"


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

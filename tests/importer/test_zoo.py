"""The ONNX zoo (fuseflowc.importer.zoo) imported, compiled unfused and fused, simulated with
the reference check, and compared with onnxruntime (the independent oracle) on random inputs with
pruned rows and empty graph rows: float64 models to rtol 1e-9, float32 ones to float32's."""

from __future__ import annotations

import numpy as np
import pytest

from fuseflowc.bench.onnx_check import NO_FLOAT64, check_model
from fuseflowc.importer.zoo import ZOO

VARIANTS = {"unfused": {"unfused": True}, "fused": {}}


@pytest.mark.parametrize("name", [n for n in ZOO if n not in NO_FLOAT64])
def test_float64_models_match_onnxruntime(name):
    r = check_model(name, np.float64, seed=1, variants=VARIANTS)
    assert r["problems"] == []
    assert r["diff"] <= 1e-9, r
    assert set(r["cycles"]) == set(VARIANTS) and min(r["cycles"].values()) > 0


@pytest.mark.parametrize("name", list(ZOO))
def test_float32_models_match_onnxruntime(name):
    variants = VARIANTS if name in NO_FLOAT64 else {"fused": {}}
    r = check_model(name, np.float32, seed=2, variants=variants)
    assert r["problems"] == []
    assert r["diff"] <= 1e-5, r

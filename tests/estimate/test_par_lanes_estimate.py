"""The estimator on graphs with per-lane reducers (`parallelize{...,reduce=lanes}`): FLOPs and
bytes equal the simulator's wherever the serial graph's estimate is exact (measured patterns):
each lane's accumulator reaches the coordinates of the reduced-index elements it is dealt
(round-robin per fiber), and the ALUs combining the lanes add where two lanes both hold a
value. From densities alone (no patterns) the estimate stays finite and above the serial one."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.estimate import DataStats, estimate_module
from fuseflowc.opt import parse_pipeline, run_pipeline
from tests.estimate.test_estimate import KERNELS, MODELS, compare, compile_, gen

LANES = ["parallelize{index=u0,factor=2,reduce=lanes}",
         "parallelize{index=u0,factor=3,reduce=lanes}",
         "parallelize{index=u0,factor=8,reduce=lanes}",
         "parallelize{index=i,factor=3},parallelize{index=u0,factor=2,reduce=lanes}"]


def _parallel(program, pipeline: str):
    module = compile_(program)
    run_pipeline(module, parse_pipeline(pipeline))
    assert any(n.KIND == "union" or (n.KIND == "reduce" and n.lane is not None)
               for g in module.graphs for n in g.nodes)
    return module


@pytest.mark.parametrize("pipeline", LANES)
def test_gcn_on_karate_is_exact(tmp_path, pipeline):
    gen(MODELS / "gcn" / "gcn.ff", tmp_path / "d", "--graph", "karate")
    module = _parallel(MODELS / "gcn" / "gcn_partial.ff", pipeline)
    (ef, eb), (sf, sb) = compare(module, tmp_path / "d")
    assert ef == pytest.approx(sf, rel=1e-9) and eb == pytest.approx(sb, rel=1e-9)
    # the lanes' partial results cost additions of their own
    serial = compile_(MODELS / "gcn" / "gcn_partial.ff")
    assert ef > estimate_module(serial, DataStats.from_dir(tmp_path / "d", serial)).total.flops


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(["spmv", "spmm", "sddmm", "residual", "nested_matmul_fused"]),
       n=st.integers(2, 9), density=st.sampled_from([0.0, 0.05, 0.3, 1.0]),
       factor=st.integers(2, 8), nested=st.booleans(), seed=st.integers(0, 1000))
def test_kernels_exact_on_measured_data(tmp_path_factory, kernel, n, density, factor, nested,
                                        seed):
    """(Not mttkrp: its accumulator over u0 reads a spacc2's output, whose pattern the model
    only estimates, serial or not.)"""
    tmp = tmp_path_factory.mktemp("k")
    prog = KERNELS / f"{kernel}.ff"
    dims = sorted({d for t in compile_(prog).tensors for d in t.dims if isinstance(d, str)})
    gen(prog, tmp / "d", *[f"--size={d}={n + k}" for k, d in enumerate(dims)],
        "--density", str(density), seed=seed)
    pipeline = f"parallelize{{index=u0,factor={factor},reduce=lanes}}"
    if nested:
        pipeline = "parallelize{index=i,factor=2}," + pipeline
    module = _parallel(prog, pipeline)
    (ef, eb), (sf, sb) = compare(module, tmp / "d")
    assert ef == pytest.approx(sf, rel=1e-9, abs=1e-6)
    assert eb == pytest.approx(sb, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("pipeline", ["parallelize{index=u0,factor=4,reduce=lanes}",
                                      "parallelize{index=i,factor=2},"
                                      "parallelize{index=u0,factor=3,reduce=lanes}"])
def test_blocked_attention_is_exact(tmp_path, pipeline):
    prog = MODELS / "bigbird_attention" / "attention-b16.ff"
    gen(prog, tmp_path / "d", "--size", "S=64", "--mask", "M=bigbird:block=16,random=1")
    module = _parallel(prog, f"locate,{pipeline},cleanup")
    (ef, eb), (sf, sb) = compare(module, tmp_path / "d")
    assert ef == pytest.approx(sf, rel=1e-9) and eb == pytest.approx(sb, rel=1e-9)


def test_from_densities_alone(tmp_path):
    """No patterns (uniform model): the lanes' estimate is finite and adds to the serial one."""
    prog = KERNELS / "spmm.ff"
    serial = compile_(prog)
    sizes = {"I": 40, "K": 40, "J": 8}
    base = estimate_module(serial, DataStats.from_values(serial, sizes, {"A": 0.1}))
    for f in (2, 4):
        module = _parallel(prog, f"parallelize{{index=u0,factor={f},reduce=lanes}}")
        est = estimate_module(module, DataStats.from_values(module, sizes, {"A": 0.1}))
        assert base.total.flops < est.total.flops < 2 * base.total.flops
        assert est.total.bytes == pytest.approx(base.total.bytes)

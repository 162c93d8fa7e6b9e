"""`parallelize` on one head of BigBird attention (ir_examples/models/bigbird_attention), the
graph `make bench-bigbird` measures: after `locate`, splitting the block-row index `i`, the
key index `u0` (the `j` of `O = Ex V`) and both at once (nested) writes the serial graph's
output bit for bit, blocked (16 x 16 blocks) and unblocked; and the benchmark's configuration
list is the one docs/opt.md ("Scaling") reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.bench.bigbird import FUSION, configs
from tests.opt.test_opt_parallel import check_same, lowered

MODEL = Path(__file__).resolve().parents[2] / "ir_examples" / "models" / "bigbird_attention"

PIPELINES = ["locate,parallelize{index=i,factor=4},cleanup",
             "locate,parallelize{index=u0,factor=3},cleanup",
             "locate,parallelize{index=i,factor=2},parallelize{index=u0,factor=2},cleanup"]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_blocked_attention_parallel_is_identical(pipeline):
    module, sizes = lowered(MODEL / "attention-b16.ff")
    # S = 64, DH = 32: 4 block rows of 16, 2 head-dim blocks; a half-empty random mask
    # leaves some block rows empty.
    sizes.update(S=64, DH=32)
    check_same(module, pipeline, sizes, seed=3, density={"M": 0.4})


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_unblocked_attention_parallel_is_identical(pipeline):
    module, sizes = lowered(MODEL / "attention.ff")
    sizes.update(S=8, DH=4)
    check_same(module, pipeline, sizes, seed=5, density={"M": 0.5})


def test_bench_configurations():
    """What `make bench-bigbird` runs: every fusion variant at S = 64 and 1024 (the fully
    fused element-sparse graph only at 64 unless asked), block sizes 16/32/64 partial and
    full, and the factor sweeps on the fully fused b16 graph."""
    todo = configs(1024, 16, 64)
    labels = [(c.size, c.label) for c in todo]
    for size in (64, 1024):
        for v in ("unfused", "partial"):
            assert (size, f"unblocked {v}") in labels
        for b in (16, 32, 64):
            assert {(size, f"b{b} partial"), (size, f"b{b} full")} <= set(labels)
    assert (64, "unblocked full") in labels and (1024, "unblocked full") not in labels
    assert (1024, "unblocked full depth=inf") in [(c.size, c.label)
                                                for c in configs(unblocked_full=1024)]
    assert {c.fuse for c in todo if c.label.endswith(" full")} == {FUSION["full"]}
    par = [c for c in todo if "x" in c.label.split()[1]]
    # factors 1..16 at two indices (and u0 alone) and 4 x 4 nested, default and ideal memory
    names = [c.label for c in par]
    for mem in ("", " mem=inf"):
        for index in ("i", "j", "u0"):
            for f in (2, 4, 8, 16):
                assert f"b16 {index}x{f}{mem}" in names
        assert {f"b16 i4xjx4{mem}", f"b16 i4xu0x4{mem}"} <= set(names)
    nested = [c for c in par if c.label == "b16 i4xjx4"][0]
    assert nested.par == ("parallelize{index=i,factor=4},parallelize{index=u0,factor=4},"
                          "parallelize{index=u1,factor=4},parallelize{index=u2,factor=4}")
    assert all(c.size == 1024 and c.block == 16 and c.fuse == FUSION["full"] for c in par)
    assert [c.label for c in configs(parts=("fusion",))] == \
        [c.label for c in todo if c not in par]

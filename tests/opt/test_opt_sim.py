"""The clean-up passes never change what a module computes: every hand-written SAMML example and
lowered programs (kernels and the GCN/GraphSAGE variants) simulate to bit-identical tensors
before and after dce, cse and cleanup."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fuseflowc.data.gen import random_inputs
from fuseflowc.lang.load import load_program
from fuseflowc.opt import parse_pipeline, run_pipeline
from fuseflowc.samml.load import load_module
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from fuseflowc.sim.build import Simulator
from tests.support.lower_harness import fused_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples" / "samml").glob("*.samml"))
MODELS = ROOT / "ir_examples" / "models"
KERNELS = ROOT / "ir_examples" / "kernels"
PIPELINES = ["dce", "cse", "cleanup"]


def random_data(module, sizes: dict, seed: int) -> dict:
    """Random inputs for `module`'s input declarations (unsized dims get 8: a multiple of every
    block size used)."""
    sizes = dict(sizes)
    for t in module.tensors:
        for d in t.dims:
            if isinstance(d, str):
                sizes.setdefault(d, 8)
    specs = [t.spec() for t in module.tensors if t.role == "input"]
    return random_inputs(specs, sizes, seed), sizes


def simulate(module, inputs, sizes):
    return Simulator(module, dict(inputs), dict(sizes)).run()


def assert_identical(a, b) -> None:
    """Every tensor the two runs wrote is stored bit for bit the same."""
    assert_same_patterns(a, b)
    for name in sorted(a.tensors):
        x, y = a.tensors[name], b.tensors[name]
        assert x.vals.dtype == y.vals.dtype and x.vals.tobytes() == y.vals.tobytes(), name


def assert_same_patterns(a, b) -> None:
    """The two runs wrote the same tensors with the same shapes, formats and stored
    coordinates (levels, order) and value arrays of the same shape."""
    assert sorted(a.tensors) == sorted(b.tensors)
    for name in sorted(a.tensors):
        x, y = a.tensors[name], b.tensors[name]
        assert x.shape == y.shape and x.format == y.format, name
        for lx, ly in zip(x.levels, y.levels, strict=True):
            assert (lx.kind, lx.size) == (ly.kind, ly.size), name
            for f in ("seg", "crd"):
                u, v = getattr(lx, f), getattr(ly, f)
                assert (u is None) == (v is None), name
                if u is not None:
                    assert np.array_equal(u, v), name
        assert x.vals.shape == y.vals.shape, name


def optimized(module, pipeline: str):
    """A copy of `module` (through its text) with `pipeline` run on it, verified after each
    pass."""
    copy = parse_text(print_module(module))
    run_pipeline(copy, parse_pipeline(pipeline))
    return copy


def check_all_pipelines(module, sizes: dict, seeds=(0, 1)) -> dict:
    """Simulate `module` and each pipeline's result on random inputs; returns pipeline ->
    (nodes removed, cycles before, cycles after) for the first seed."""
    stats = {}
    for pipeline in PIPELINES:
        opt = optimized(module, pipeline)
        for seed in seeds:
            inputs, all_sizes = random_data(module, sizes, seed)
            before, after = simulate(module, inputs, all_sizes), simulate(opt, inputs, all_sizes)
            assert_identical(before, after)
            if seed == seeds[0]:
                count = lambda m: sum(len(g.nodes) for g in m.graphs)  # noqa: E731
                stats[pipeline] = (count(module) - count(opt), before.cycles, after.cycles)
    return stats


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_simulate_identically(path):
    check_all_pipelines(load_module(str(path)), {})


def _lowered(rel: str, inline_widened: bool = False):
    program = load_program(str(ROOT / rel))
    sizes = {d.name: d.size for d in program.dims if d.size is not None}
    return fused_module(program, inline_widened=inline_widened), sizes


LOWERED = [
    ("ir_examples/kernels/spmv.ff", False),
    ("ir_examples/kernels/spmm.ff", False),
    ("ir_examples/models/gcn/gcn_partial.ff", False),
    ("ir_examples/models/graphsage/graphsage_partial.ff", False),
    ("ir_examples/models/gcn/gcn_full.ff", True),
    ("ir_examples/models/graphsage/graphsage_full.ff", False),
]


@pytest.mark.parametrize("rel,iw", LOWERED, ids=lambda v: Path(v).stem if isinstance(v, str)
                         else ("iw" if v else "plain"))
def test_lowered_simulate_identically(rel, iw):
    module, sizes = _lowered(rel, iw)
    stats = check_all_pipelines(module, sizes, seeds=(0,))
    # On a verified module dce has nothing to do (the verifier rejects dead code).
    assert stats["dce"][0] == 0


def test_cleanup_shrinks_gcn_full():
    """The lowered GCN (fuse --inline-widened) walks some tensors twice: cse merges them."""
    module, sizes = _lowered("ir_examples/models/gcn/gcn_full.ff", True)
    before = sum(len(g.nodes) for g in module.graphs)
    opt = optimized(module, "cleanup")
    assert sum(len(g.nodes) for g in opt.graphs) < before

"""The two kernels of `make bench-sim` (SDDMM and Gustavson SpMM, ir_examples/samml) on both
engines at every kind of channel depth the compiled engine has a path for: rings (1 to 65536
entries: the joiner's and stream maps' ring cursors), deep rings in chunks (65537, 2**20),
unbounded segments (inf: the segment cursors), with and without the memory model (SAM-like
settings), on random matrices with dense rows, empty rows and long equal-coordinate runs
(SDDMM's dense k-intersection). Cycles, activations, counters, streams, outputs and errors
identical (sim/differential.py); small sizes, so the whole file stays under a few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.samml.load import load_module
from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.differential import first_difference, run
from tests.support.fast_prims import SETTINGS
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(not engine_fast.available(),
                                reason="fuseflowc.sim._fast is not built")

#: A ring (smallest, small, the default, the largest eager ring), deep rings (just past the
#: eager limit, 2**20), unbounded.
DEPTHS = ["1", "2", "3", "1024", "65536", "65537", str(1 << 20), "inf"]
SAM_LIKE = ("memory.latency=0", "memory.bandwidth=1000000000")
_MODULES: dict = {}


def _module(kernel: str):
    if kernel not in _MODULES:
        _MODULES[kernel] = load_module(str(ROOT / "ir_examples" / "samml" / f"{kernel}.samml"))
    return _MODULES[kernel]


def _fiber(x, decl):
    if sp.issparse(x):
        coo = x.tocoo()
        coords = np.stack([coo.row, coo.col], axis=1)
        return FiberTensor.from_coo(x.shape, coords, coo.data, decl.format)
    return FiberTensor.from_dense(x, decl.format)


@st.composite
def _matrices(draw):
    """An n x m sparse matrix: some rows dense, some empty, the rest random."""
    n, m = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kinds = rng.choice(3, size=n)          # 0: empty, 1: dense, 2: random
    mask = np.zeros((n, m), dtype=bool)
    mask[kinds == 1] = True
    mask[kinds == 2] = rng.random((int((kinds == 2).sum()), m)) < 0.4
    vals = np.where(mask, rng.uniform(-2, 2, (n, m)), 0.0)
    return sp.csr_matrix(vals), rng


def _case(kernel, a, rng, k):
    module = _module(kernel)
    n, m = a.shape
    if kernel == "spmm_ikj":
        arrays = {"A": a, "B": sp.csr_matrix(a.T)}
    else:
        arrays = {"S": a, "A": rng.uniform(-1, 1, (n, k)), "B": rng.uniform(-1, 1, (k, m))}
    tensors, sizes = {}, {}
    for decl in module.tensors:
        if decl.role == "input":
            tensors[decl.name] = _fiber(arrays[decl.name], decl)
            sizes.update(zip(decl.dims, arrays[decl.name].shape))
    return module, tensors, sizes


@SETTINGS
@given(data=st.data())
def test_bench_kernels_at_every_depth(data):
    draw = data.draw
    kernel = draw(st.sampled_from(["sddmm", "spmm_ikj"]), label="kernel")
    a, rng = draw(_matrices(), label="matrix")
    module, tensors, sizes = _case(kernel, a, rng, draw(st.integers(1, 6), label="k"))
    sets = [f"channel.depth={draw(st.sampled_from(DEPTHS), label='depth')}"]
    if draw(st.booleans(), label="sam-like"):
        sets += SAM_LIKE
    arch = Arch.load(None, tuple(sets), None)
    py = run(module, tensors, sizes, arch, "python")
    fast = run(module, tensors, sizes, arch, "fast")
    assert fast.result is None or fast.result.kernels[0].engine == "fast"
    diff = first_difference(py, fast)
    assert diff is None, diff


@SETTINGS
@given(data=st.data())
def test_memory_that_can_never_fill_keeps_no_calendar(data):
    """The compiled calendar keeps nothing when its users' bytes per firing, summed over a
    window, are at most half of what a window moves (sim/cpp/memory.hpp, Memory::user). Drawn
    across that threshold (the two kernels' users take tens of bytes a cycle together), with
    no latency to hide the calendar: every bandwidth gives the Python engine's cycles."""
    draw = data.draw
    kernel = draw(st.sampled_from(["sddmm", "spmm_ikj"]), label="kernel")
    a, rng = draw(_matrices(), label="matrix")
    module, tensors, sizes = _case(kernel, a, rng, draw(st.integers(1, 6), label="k"))
    bandwidth = draw(st.one_of(st.integers(1, 400), st.sampled_from([10**9])), label="bw")
    window = draw(st.sampled_from([1, 2, 16]), label="window")
    depth = draw(st.sampled_from(["2", "1024", "inf"]), label="depth")
    arch = Arch.load(None, (f"channel.depth={depth}", "memory.latency=0",
                            f"memory.bandwidth={bandwidth}", f"memory.window={window}"), None)
    diff = first_difference(run(module, tensors, sizes, arch, "python"),
                            run(module, tensors, sizes, arch, "fast"))
    assert diff is None, diff

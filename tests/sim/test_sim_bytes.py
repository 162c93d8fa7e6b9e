"""Off-chip byte counts of the simulator (sim/README.md, "What bytes are counted"): writers are
charged exactly the seg, crd and vals arrays of the tensor they store, in its declared format
(a dense level stores every position, zeros the stream never reached included); scanners and
arrays are charged what they fetch. Random inputs with empty rows, several output formats,
two element sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.reference.evaluate import evaluate
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from tests.support.lower_harness import load_text, lowered_module

SPMM = """
dim I, K, J
tensor A[I, K] : csr
tensor B[K, J] : csr
tensor C[I, J] : %s
C[i,j] = A[i,k] * B[k,j]
"""

MUL3 = """
dim I, J, K
tensor X[I, J, K] : (dense, dense, compressed)
tensor Y[I, J, K] : sparse
tensor T[I, J, K] : %s
T[i,j,k] = X[i,j,k] * Y[i,j,k]
"""

ADD = """
dim I, J
tensor X[I, J] : dcsr
tensor Y[I, J] : dcsr
tensor Z[I, J] : dcsr
Z[i,j] = X[i,j] + Y[i,j]
"""


def _random(rng, shape, density):
    """Random values at `density`, with whole empty slices along mode 0 (empty rows)."""
    a = np.where(rng.random(shape) < density, rng.uniform(-1, 1, shape), 0.0)
    a[rng.integers(0, shape[0], max(1, shape[0] // 3))] = 0.0
    return a


def _simulate(text: str, arrays: dict, eb: int):
    program = load_text(text)
    module = lowered_module(program)
    inputs = {name: FiberTensor.from_dense(a, module.tensor(name).format)
              for name, a in arrays.items()}
    sizes = {d.name: None for d in program.dims}
    shapes = {name: a.shape for name, a in arrays.items()}
    for t in module.tensors:
        if t.name in shapes:
            for d, n in zip(t.dims, shapes[t.name]):
                sizes[d] = n
    arch = Arch.load(sets=(f"memory.element_bytes={eb}",))
    result = Simulator(module, inputs, sizes, arch, keep_streams=True).run()
    return program, inputs, result


def _array_elements(t: FiberTensor) -> dict:
    """Element counts of the stored arrays, read off the tensor's levels."""
    seg = crd = 0
    for lv in t.levels:
        if lv.kind == "compressed":
            seg += len(lv.seg)
            crd += len(lv.crd)
    return {"seg": seg, "crd": crd, "vals": int(np.asarray(t.vals).size)}


def _expected_elements(fmt_levels, shape, mask) -> dict:
    """What a format stores for nonzero pattern `mask` (levels in mode order 0, 1, ...), from
    first principles: a dense level keeps every position under each parent, a compressed one
    keeps the coordinates that have a nonzero beneath them and one seg entry per parent + 1."""
    seg = crd = 0
    parents = 1          # positions of the level above
    prefixes = [()]      # coordinate prefixes of those positions
    for k, kind in enumerate(fmt_levels):
        nxt = []
        for p in prefixes:
            for c in range(shape[k]):
                if kind == "dense" or mask[p + (c,)].any():
                    nxt.append(p + (c,))
        if kind == "compressed":
            seg += parents + 1
            crd += len(nxt)
        prefixes = nxt
        parents = len(nxt)
    return {"seg": seg, "crd": crd, "vals": parents}


CASES = [
    (SPMM % "dense", ("dense", "dense")),
    (SPMM % "csr", ("dense", "compressed")),
    (SPMM % "dcsr", ("compressed", "compressed")),
    (MUL3 % "(dense, dense, compressed)", ("dense", "dense", "compressed")),
    (MUL3 % "dense", ("dense", "dense", "dense")),
    (MUL3 % "sparse", ("compressed", "compressed", "compressed")),
]


@pytest.mark.parametrize("text,levels", CASES, ids=lambda x: " ".join(x) if
                         isinstance(x, tuple) else None)
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), eb=st.sampled_from([4, 8]),
       density=st.sampled_from([0.0, 0.15, 0.5]))
def test_bytes_written_are_the_stored_arrays(text, levels, seed, eb, density):
    rng = np.random.default_rng(seed)
    order = len(levels)
    dims = tuple(int(x) for x in rng.integers(2, 6, order))
    if order == 2:
        i, j = dims
        k = int(rng.integers(2, 6))
        arrays = {"A": _random(rng, (i, k), density), "B": _random(rng, (k, j), density)}
    else:
        arrays = {"X": _random(rng, dims, density), "Y": _random(rng, dims, density)}
    program, inputs, result = _simulate(text, arrays, eb)
    (out_name,) = result.tensors
    out = result.tensors[out_name]
    kernel = result.kernels[-1]
    written = kernel.bytes_written()
    stored = _array_elements(out)
    assert written == {key: eb * n for key, n in stored.items()}
    assert kernel.written[out_name] == written
    # ... and those arrays are what the declared format stores for the true result
    ref = evaluate(program, inputs)[out_name].to_dense()
    np.testing.assert_allclose(out.to_dense(), ref, rtol=1e-9, atol=1e-12)
    assert _expected_elements(levels, ref.shape, ref != 0) == stored
    if "compressed" not in levels:
        assert written == {"seg": 0, "crd": 0, "vals": eb * math.prod(ref.shape)}


def test_dense_output_from_a_short_stream_counts_every_value():
    """The defect this file guards: a 7 x 7 dense C whose stream carries only the rows of A
    that have entries is stored whole, so 49 values are written, not the streamed ones."""
    rng = np.random.default_rng(5)
    a = _random(rng, (7, 7), 0.3)
    a[[1, 3, 4]] = 0.0
    b = rng.uniform(-1, 1, (7, 7))
    _, _, result = _simulate(SPMM % "dense", {"A": a, "B": b}, 4)
    k = result.kernels[-1]
    (vw,) = [n for n in k.nodes if n.kind == "write_vals"]
    streamed = sum(1 for x in vw.got if isinstance(x, float))
    assert streamed < 49
    assert k.bytes_written() == {"seg": 0, "crd": 0, "vals": 4 * 49}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), eb=st.sampled_from([4, 8]),
       density=st.sampled_from([0.0, 0.2, 0.6]))
def test_bytes_read_are_what_scanners_and_arrays_fetch(seed, eb, density):
    """X + Y over dcsr inputs visits every stored fiber of each input exactly once (a row only
    the other operand has is an N ref: no lookup, no load), so each input is read as: seg two
    entries per fiber lookup (root fiber + one per stored row), crd every coordinate, vals
    every value."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(x) for x in rng.integers(2, 7, 2))
    arrays = {"X": _random(rng, shape, density), "Y": _random(rng, shape, density)}
    _, inputs, result = _simulate(ADD, arrays, eb)
    k = result.kernels[-1]
    exp = {"seg": 0, "crd": 0, "vals": 0}
    for t in inputs.values():
        rows, cols = t.levels
        exp["seg"] += 2 * (1 + len(rows.crd))
        exp["crd"] += len(rows.crd) + len(cols.crd)
        exp["vals"] += len(t.vals)
    assert k.bytes_read() == {key: eb * n for key, n in exp.items()}
    per_node = {n.name: (n.rd_seg, n.rd_crd, n.rd_vals) for n in k.nodes
                if n.rd_seg or n.rd_crd or n.rd_vals}
    assert all(n.kind in ("scan", "array") for n in k.nodes if n.name in per_node)

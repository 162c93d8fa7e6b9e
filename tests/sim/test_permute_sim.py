"""The simulator's `permute SRC -> DST` step (sim/permute.py) against numpy: random tensors of
orders 2 and 3 (empty ones included), every pair of formats, every mode permutation, blocked
matrices; its byte counts and cycle model; the step inside a module run."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.formats import Format, shorthand
from fuseflowc.samml.ir import Module, Permute, TensorDecl
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.verify import verify
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from fuseflowc.sim.permute import array_bytes, permute_tensor


def formats(order: int) -> list[Format]:
    """Every dense/compressed level assignment in every mode order."""
    return [Format(levels, modes) for levels in itertools.product(("dense", "compressed"),
                                                                 repeat=order)
            for modes in itertools.permutations(range(order))]


def stored(t: FiberTensor) -> set[tuple]:
    coords, _ = t.to_coo()
    return {tuple(int(x) for x in c) for c in np.asarray(coords)}


@st.composite
def tensors(draw, order: int):
    shape = tuple(draw(st.integers(1, 4)) for _ in range(order))
    density = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    dense = np.where(rng.random(shape) < density, rng.uniform(-1, 1, shape), 0.0)
    return dense, draw(st.sampled_from(formats(order))), draw(st.sampled_from(formats(order)))


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 3).flatmap(lambda n: st.tuples(tensors(n),
                                                     st.permutations(list(range(n))))))
def test_permute_matches_numpy_transpose(case):
    (dense, f_src, f_dst), modes = case
    src = FiberTensor.from_dense(dense, f_src)
    dst = permute_tensor(src, f_dst, tuple(modes))
    assert dst.format == f_dst
    assert dst.shape == tuple(dense.shape[k] for k in modes)
    np.testing.assert_array_equal(dst.to_dense(), np.transpose(src.to_dense(), modes))
    # every stored entry of SRC is stored in DST (explicit zeros included) ...
    moved = {tuple(c[k] for k in modes) for c in stored(src)}
    assert moved <= stored(dst)
    # ... and DST adds only what its dense levels force (none if it has no dense level)
    if "dense" not in f_dst.levels:
        assert stored(dst) == moved


def test_every_format_pair_of_a_matrix_and_empty_tensors():
    rng = np.random.default_rng(7)
    names = ["dense", "sparse", "csr", "csc", "dcsr", "dcsc"]
    for dense in (np.where(rng.random((3, 5)) < 0.4, rng.uniform(-1, 1, (3, 5)), 0.0),
                  np.zeros((3, 5))):
        for a, b in itertools.product(names, repeat=2):
            src = FiberTensor.from_dense(dense, shorthand(a, 2))
            for modes in ((0, 1), (1, 0)):
                dst = permute_tensor(src, shorthand(b, 2), modes)
                np.testing.assert_array_equal(dst.to_dense(), np.transpose(dense, modes))


def test_blocked_transpose_transposes_blocks():
    rng = np.random.default_rng(3)
    dense = rng.uniform(-1, 1, (4, 6))
    dense[0:2, 2:4] = 0.0
    src = FiberTensor.from_dense(dense, shorthand("bcsr", 2), 2)
    for fmt in ("bcsr", "bdcsr", "bdense"):
        dst = permute_tensor(src, shorthand(fmt, 2), (1, 0))
        np.testing.assert_array_equal(dst.to_dense(), dense.T)
        same = permute_tensor(src, shorthand(fmt, 2), (0, 1))
        np.testing.assert_array_equal(same.to_dense(), dense)


MODULE = """
tensor A[N, M]: csr input
tensor U[M, N]: dcsr temp
tensor B[M, N]: dcsr output
permute A -> U modes (1, 0)
graph copy {
  %r0 = root {tensor = U}
  %c0, %r1 = scan %r0 {tensor = U, mode = 0, format = compressed, index = j}
  %c1, %r2 = scan %r1 {tensor = U, mode = 1, format = compressed, index = i}
  %v0 = array %r2 {tensor = U}
  write_level %c0 {tensor = B, mode = 0, format = compressed}
  write_level %c1 {tensor = B, mode = 1, format = compressed}
  write_vals %v0 {tensor = B}
}
"""


def test_step_in_a_module_run_counts_bytes_and_cycles():
    m = parse_text(MODULE)
    verify(m)
    rng = np.random.default_rng(1)
    dense = np.where(rng.random((5, 7)) < 0.3, rng.uniform(-1, 1, (5, 7)), 0.0)
    A = FiberTensor.from_dense(dense, shorthand("csr", 2))
    arch = Arch.load()
    r = Simulator(m, {"A": A}, {"N": 5, "M": 7}, arch).run()
    np.testing.assert_array_equal(r.tensors["B"].to_dense(), dense.T)
    step, graph = r.kernels
    assert step.graph == "permute A -> U" and graph.graph == "copy"
    U = permute_tensor(A, shorthand("dcsr", 2), (1, 0))
    eb = arch.element_bytes
    assert step.bytes_read() == array_bytes(A, eb)
    assert step.bytes_written() == array_bytes(U, eb)
    nnz = int(np.count_nonzero(dense))
    assert step.bytes_read() == {"seg": 6 * eb, "crd": nnz * eb, "vals": nnz * eb}
    assert step.flops == 0
    moved = max(sum(array_bytes(A, eb).values()), sum(array_bytes(U, eb).values()))
    assert step.cycles == arch.mem_latency + math.ceil(moved / arch.bandwidth) + nnz
    assert r.cycles == step.cycles + graph.cycles
    # the model's parameters come from the architecture file
    fast = Arch.load(sets=("permute.elements_per_cycle=4", "memory.latency=0"))
    r2 = Simulator(m, {"A": A}, {"N": 5, "M": 7}, fast).run()
    assert r2.kernels[0].cycles == math.ceil(moved / fast.bandwidth) + math.ceil(nnz / 4)


def test_graph_selection_runs_the_steps_before_the_chosen_graph():
    m = parse_text(MODULE)
    A = FiberTensor.from_dense(np.eye(3), shorthand("csr", 2))
    r = Simulator(m, {"A": A}, {"N": 3, "M": 3}, Arch.load()).run(["copy"])
    assert [k.graph for k in r.kernels] == ["permute A -> U", "copy"]


def test_python_built_step_verifies_and_prints():
    from fuseflowc.samml.printer import print_module
    m = parse_text(MODULE)
    again = Module(m.tensors, m.graphs, None, steps=[Permute("A", "U", (1, 0), 0)])
    verify(again)
    assert print_module(again) == print_module(m)
    bad = Module(m.tensors + [TensorDecl("V", ("N",), shorthand("sparse", 1), "temp")],
                 m.graphs, None, steps=[Permute("A", "U", (1, 0), 0), Permute("A", "V")])
    try:
        verify(bad)
    except Exception as e:  # UserError: located in words for a step built in Python
        assert "the orders must match [permute A -> V]" in str(e)
    else:
        raise AssertionError("verify accepted a step between different orders")

"""Lowering through the order-3 sparse accumulator (`spacc3`): a reduction with three indices
iterated inside it, on random sparse data, against numpy's einsum (values and stored pattern),
and the order-4 case that still has no accumulator (a located error)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import UserError
from fuseflowc.samml.ir import MAX_SPACC_ORDER
from tests.support.lower_harness import assert_matches, load_text, run_both

# r outermost, three output indices inside it: Y's points are accumulated across r
OUTER = """
dim R, I, J, K
tensor A[R, I] : csr
tensor B[R, J] : csr
tensor C[R, K] : csr
tensor Y[I, J, K] : (compressed, compressed, compressed)
Y[i,j,k] = A[r,i] * B[r,j] * C[r,k]
order Y: r -> i -> j -> k
"""


def _kinds(program) -> list[str]:
    module = pipeline.compile(program, pipeline.CompileOptions()).module
    return [n.KIND for g in module.graphs for n in g.nodes]


def test_outer_reduction_lowers_to_spacc3():
    kinds = _kinds(load_text(OUTER))
    assert kinds.count("spacc3") == 1
    assert MAX_SPACC_ORDER == 3


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), density=st.sampled_from([0.0, 0.2, 0.5, 1.0]),
       sizes=st.tuples(st.integers(1, 5), st.integers(1, 4), st.integers(1, 4),
                       st.integers(1, 4)))
def test_outer_reduction_matches_einsum(seed, density, sizes):
    p = load_text(OUTER)
    dims = dict(zip("RIJK", sizes))
    outs, ref, text = run_both(p, dims, seed, {"A": density, "B": density, "C": density})
    a, b, c = (ref_in.to_dense() for ref_in in _inputs(p, dims, seed, density))
    want = np.einsum("ri,rj,rk->ijk", a, b, c)
    got = outs["Y"].to_dense()
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12), text
    # the stored pattern: exactly the points some r reaches (a zero sum included)
    reach = np.einsum("ri,rj,rk->ijk", a != 0, b != 0, c != 0) > 0
    assert (outs["Y"].pattern() == reach).all(), text


def _inputs(program, dims, seed, density):
    from fuseflowc.data.gen import random_inputs
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    got = random_inputs(specs, dims, seed, {"A": density, "B": density, "C": density})
    return [got[n] for n in "ABC"]


def test_max_reduction_and_the_evaluator():
    p = load_text(OUTER.replace("A[r,i] * B[r,j] * C[r,k]", "max[r](A[r,i] * B[r,j] * C[r,k])"))
    assert_matches(p, {"R": 4, "I": 3, "J": 3, "K": 2}, seed=3, patterns=True)


def test_order4_is_a_located_error():
    p = load_text(OUTER.replace("dim R, I, J, K", "dim R, I, J, K, L")
                  .replace("tensor Y[I, J, K] : (compressed, compressed, compressed)",
                           "tensor D[R, L] : csr\ntensor Y[I, J, K, L] : dense")
                  .replace("Y[i,j,k] = A[r,i] * B[r,j] * C[r,k]",
                           "Y[i,j,k,l] = A[r,i] * B[r,j] * C[r,k] * D[r,l]")
                  .replace("r -> i -> j -> k", "r -> i -> j -> k -> l"))
    with pytest.raises(UserError, match="order-4 sparse accumulator.*only orders 0-3"):
        pipeline.compile(p, pipeline.CompileOptions())

"""Lowering bugs found by the property tests: open ones pinned as strict xfails, fixed ones kept
as guards.

Each test is the exact program hypothesis found. When a bug is fixed the test passes, the
strict marker makes the suite fail, and the marker comes off: the case then guards the fix.
"""

from __future__ import annotations

import pytest

from fuseflowc.samml import ir
from tests.support.lower_harness import assert_matches, check_both_engines, fused_module, load_text

MASK_OVER_UNUSED_REDUCTION = """
dim I, J, K
tensor A1[I, J, K] : (dense, dense, dense) order (0, 1, 2)
tensor A2[I] : dense
tensor T0[I, J] : (dense, compressed) order (0, 1)
tensor T1[I, J] : (dense, dense) order (0, 1)
T0[i,j] = A1[i,j,k] * A1[i,j,k]
T1[i,j] = mask(A2[i], T0[i,j])
fuse all: T0, T1
"""


@pytest.mark.parametrize("inline_widened", [False, True])
def test_mask_over_a_reduction_whose_values_are_unused(inline_widened):
    program = load_text(MASK_OVER_UNUSED_REDUCTION)
    assert_matches(program, {"I": 3, "J": 4, "K": 2}, seed=0, patterns=True,
                   inline_widened=inline_widened)


@pytest.mark.parametrize("fmt", ["(dense, dense, compressed)", "(dense, compressed, compressed)",
                                 "(compressed, compressed, compressed)"])
@pytest.mark.parametrize("density", [0.0, 0.3, 0.7])
def test_mask_pattern_is_that_of_the_unused_reduction(fmt, density):
    """The same with empty k fibers: T0 (so T1) has an entry only where something was reduced."""
    program = load_text(MASK_OVER_UNUSED_REDUCTION.replace(
        "A1[I, J, K] : (dense, dense, dense) order (0, 1, 2)", f"A1[I, J, K] : {fmt}"))
    for seed in range(3):
        assert_matches(program, {"I": 3, "J": 4, "K": 2}, seed=seed, patterns=True,
                       density={"A1": density})


# Found with 2000 random chains: an order-0 reduction of possibly empty fibers under one level
# emitted an explicit 0 for an empty fiber; a product carried it up (through a sum over that
# level, or broadcast over a dense level) into a compressed level of the written tensor.
REDUCED_ZERO_REDUCED_AGAIN = """
dim I, J, K
tensor A0[J] : sparse
tensor A1[I, K] : (dense, compressed) order (1, 0)
tensor A2[K, J] : (compressed, compressed) order (0, 1)
tensor T0[J] : sparse
tensor T1[J] : sparse
T0[j] = A0[j] * A0[j]
T1[j] = A2[k,j] * A1[i,k]
fuse all: T0, T1
"""

REDUCED_ZERO_BROADCAST = """
dim I, J, K
tensor A[I, K] : csr
tensor B[I, J] : csr
tensor y[I, J] : csr
y[i,j] = sum[k](A[i,k]) * B[i,j]
"""


@pytest.mark.parametrize("text", [REDUCED_ZERO_REDUCED_AGAIN, REDUCED_ZERO_BROADCAST],
                         ids=["reduced-again", "broadcast"])
@pytest.mark.parametrize("order", [0, 1])
def test_empty_fiber_reduction_under_a_product_stores_nothing(text, order):
    program = load_text(text)
    for density in (0.0, 0.2, 0.5):
        for seed in range(2):
            assert_matches(program, {"I": 3, "J": 4, "K": 3}, seed=seed, patterns=True,
                           density={t: density for t in ("A", "A1")}, order_index=order)


# Found with random chains (widened patterns checked): a reduction to a scalar (no free index,
# written so or made so by lowering, which sums an operand over the indices only it has) of a
# possibly empty tensor under a product. The order-0 reducer emitted an explicit 0 for the
# empty stream and a scalar has no coordinate level a held accumulator could drop, so the
# product stored explicit zeros where the evaluator stores nothing ("a reduction result is
# stored only where something was reduced"). Lowering now distributes the product into the sum.
SCALAR_SUM_OF_EMPTY = """
dim I, J, K
tensor A[I] : sparse
tensor B[J, K] : dcsr
tensor y[I] : sparse
y[i] = A[i] * sum[j,k](B[j,k])
"""


def test_scalar_sum_of_an_empty_tensor_stores_nothing():
    program = load_text(SCALAR_SUM_OF_EMPTY)
    assert_matches(program, {"I": 4, "J": 3, "K": 3}, seed=0, patterns=True,
                   density={"A": 0.8, "B": 0.0})


def test_scalar_sum_of_a_non_empty_tensor():
    program = load_text(SCALAR_SUM_OF_EMPTY)
    for seed in range(3):
        assert_matches(program, {"I": 4, "J": 3, "K": 3}, seed=seed, patterns=True,
                       density={"A": 0.8, "B": 0.5})


SCALAR_MADE_BY_LOWERING = """
dim I, J, K
tensor A1[J] : sparse
tensor A3[K, I] : (compressed, compressed) order (1, 0)
tensor T0[J] : sparse
tensor T1[K] : sparse
tensor T2[K] : sparse
T0[j] = sum[i,k](A3[k,i] * A1[j])
T1[k] = A3[k,i] * T0[j]
T2[k] = A3[k,i] * A1[j]
fuse all: T0, T1, T2
"""


@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("inline_widened", [False, True])
def test_scalar_made_by_lowering_of_an_empty_tensor(order, inline_widened):
    program = load_text(SCALAR_MADE_BY_LOWERING)
    for d in (0.0, 0.4):
        assert_matches(program, {"I": 3, "J": 4, "K": 3}, seed=1, patterns=True,
                       density={"A1": d, "A3": 0.6}, order_index=order,
                       inline_widened=inline_widened)


# Found while fixing widened max reductions (issue 18): an order-0 sum of an empty fiber
# emitted an explicit 0, and 0 / 0 is NaN where the language has no entry (an absent
# numerator); `fuse` likewise inlined a dense-declared intermediate into a numerator whose
# stored zeros meet a zero divisor. Both now count a quotient's numerator as able to tell.
EMPTY_SUM_OVER_A_ZERO_DIVISOR = """
dim I, K
tensor A[I, K] : csr
tensor D[I] : dense
tensor m[I] : dense
m[i] = sum[k](A[i,k]) / D[i]
"""

WIDENED_OVER_A_ZERO_DIVISOR = """
dim I, J, K
tensor A[I, K] : csr
tensor B[K, J] : csr
tensor D[I, J] : dense
tensor P[I, J] : dense
tensor m[I] : dense
P[i,j] = A[i,k] * B[k,j]
m[i] = sum[j](P[i,j] / D[i,j])
fuse f: P, m
"""


@pytest.mark.parametrize("text", [EMPTY_SUM_OVER_A_ZERO_DIVISOR, WIDENED_OVER_A_ZERO_DIVISOR],
                         ids=["empty-sum", "widened"])
@pytest.mark.parametrize("inline_widened", [False, True])
def test_a_numerator_meeting_a_zero_divisor(text, inline_widened):
    program = load_text(text)
    for seed in range(3):
        assert_matches(program, {"I": 6, "J": 5, "K": 4}, seed=seed, patterns=True,
                       density={"A": 0.2, "B": 0.3, "D": 0.5}, inline_widened=inline_widened)


# Found by random chains with full-range vectors added, while checking widening (issue 18):
# plain `fuse` too. With T0 empty (A0 has no entry) T2 should be sum_k T1 = 3 per coordinate;
# the graphs gave 6, as if T1 * T0 were T1 where T0 is absent. The product's operands meet at
# i, j; T1 alone runs on at k, where it reads neg(0) + 1 = 1 from the absent side's N refs,
# and T0's value, repeated over k, is the union's N: an ALU's identity, so 1 * N = 1. The
# product was taken for zero-preserving (T0 is), so it was not made a value leaf; only an
# operand iterated at the innermost index can make a product zero-preserving now.
PRODUCT_WITH_AN_EMPTY_OUTER_REDUCTION_IN_A_UNION = """
dim I, J, K
tensor A0[I, J, K] : (dense, dense, compressed)
tensor A2[I, J, K] : dense
tensor T0[I, J] : dense
tensor T1[I, J, K] : dense
tensor T2[I, J] : dense
T0[i,j] = A0[i,j,k] * A0[i,j,k]
T1[i,j,k] = neg(A2[i,j,k]) + 1
T2[i,j] = T1[i,j,k] * T0[i,j] + T1[i,j,k]
fuse all: T0, T1, T2
"""


@pytest.mark.parametrize("inline_widened", [False, True])
def test_product_with_an_empty_outer_reduction_in_a_union(inline_widened):
    program = load_text(PRODUCT_WITH_AN_EMPTY_OUTER_REDUCTION_IN_A_UNION)
    assert_matches(program, {"I": 3, "J": 4, "K": 3}, seed=0, patterns=True,
                   density={"A0": 0.0, "A2": 0.0}, inline_widened=inline_widened)


@pytest.mark.parametrize("op", ["*", "/"])
@pytest.mark.parametrize("inline_widened", [False, True])
def test_outer_reduction_in_a_union_partly_empty(op, inline_widened):
    """The same with some k fibers of A0 empty, and with T0 as an outer numerator."""
    text = PRODUCT_WITH_AN_EMPTY_OUTER_REDUCTION_IN_A_UNION
    if op == "/":
        text = text.replace("T1[i,j,k] * T0[i,j] +", "T0[i,j] / T1[i,j,k] +")
    program = load_text(text)
    for seed in range(3):
        assert_matches(program, {"I": 3, "J": 4, "K": 3}, seed=seed, patterns=True,
                       density={"A0": 0.3, "A2": 0.5}, inline_widened=inline_widened)


# Found by test_lower_paper_order (on main since before session 12): T1, declared dense, splits
# the group into all.1 (T1, T2) and all.2 (T3); T0's reduction over i is inlined in both, and
# in the paper's order (u1 -> i -> j, and all.2's order 1) each region iterates i between its
# own indices, so each stored T0 by a graph of its own: the module wrote T0 twice, which the
# verifier refused. The first stores it, the later one reads it back.
INTERMEDIATE_STORED_FOR_TWO_REGIONS = """
dim I, J, K
tensor A0[I, J] : (dense, dense) order (0, 1)
tensor A2[I, J, K] : (dense, dense, dense) order (0, 1, 2)
tensor T0[J] : dense
tensor T1[I, J] : (dense, dense) order (0, 1)
tensor T2[I, J] : (dense, dense) order (0, 1)
tensor T3[I] : dense
T0[j] = A0[i,j] * A0[i,j]
T1[i,j] = sum[k](A2[i,j,k]) * A0[i,j]
T2[i,j] = T0[j] * A0[i,j]
T3[i] = T0[j] + T1[i,j]
fuse all: T0, T1, T2, T3
"""


@pytest.mark.parametrize("order,region", [("paper", None), (1, "all.2")])
def test_an_intermediate_stored_for_two_regions_is_written_once(order, region):
    program = load_text(INTERMEDIATE_STORED_FOR_TWO_REGIONS)
    module = fused_module(program, order_index=order, region=region)
    writers = [g.name for g in module.graphs if "T0" in g.tensor_names((ir.WriteVals,))]
    assert writers == ["all_1_T0"], writers
    assert any(n.startswith("T0 is read back from graph all_1_T0") and "region all.2" in n
               for n in module.notes), module.notes
    for seed, density in ((0, None), (1, {"A0": 0.4, "A2": 0.4}), (2, {"A0": 0.0, "A2": 0.0})):
        check_both_engines(program, module, {"I": 3, "J": 4, "K": 3}, seed, density)

"""Lowering bugs found by the property tests: open ones pinned as strict xfails, fixed ones kept
as guards.

Each test is the exact program hypothesis found. When a bug is fixed the test passes, the
strict marker makes the suite fail, and the marker comes off: the case then guards the fix.
"""

from __future__ import annotations

import pytest

from lower_harness import assert_matches, load_text

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

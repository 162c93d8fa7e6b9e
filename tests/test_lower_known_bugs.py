"""Lowering bugs found by the property tests and not fixed yet, pinned as strict xfails.

Each test is the exact program hypothesis found. When the bug is fixed the test passes, the
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


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "mask ignores T0's values, so codegen never builds T0's order-0 reduction over k and its "
    "joiner feeds nothing (codegen.py: 'the joiner of loop ... feeds nothing'); T0's pattern "
    "still depends on that reduction (an entry only where a k-fiber is non-empty), so the fix "
    "must generate the reduction for its pattern, not drop it"))
@pytest.mark.parametrize("inline_widened", [False, True])
def test_mask_over_a_reduction_whose_values_are_unused(inline_widened):
    program = load_text(MASK_OVER_UNUSED_REDUCTION)
    assert_matches(program, {"I": 3, "J": 4, "K": 2}, seed=0, patterns=True,
                   inline_widened=inline_widened)

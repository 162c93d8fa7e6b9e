"""fuseflowc.data.gen: random tensors in every format, order 0-4, exact densities, seeding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.data.gen import (
    DEFAULT_SPARSE_DENSITY,
    random_inputs,
    random_tensor,
    resolve_shape,
    tensor_rng,
)
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format, shorthand


@st.composite
def cases(draw):
    order = draw(st.integers(0, 4))
    blocked = order == 2 and draw(st.booleans())
    levels = tuple(draw(st.sampled_from(["dense", "compressed"])) for _ in range(order))
    fmt = Format(levels, tuple(draw(st.permutations(list(range(order))))), blocked)
    b = draw(st.sampled_from([1, 2, 3])) if blocked else None
    shape = tuple(draw(st.integers(0, 4)) * (b or 1) for _ in range(order))
    density = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.33, 0.5, 1.0])))
    seed = draw(st.integers(0, 1000))
    return TensorSpec("T", tuple(f"D{k}" for k in range(order)), fmt, b), shape, density, seed


@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_random_tensor_properties(case):
    spec, shape, density, seed = case
    t = random_tensor(spec, shape, density, np.random.default_rng(seed))
    b = spec.block
    assert t.shape == shape and t.format == spec.format and t.block == b
    a = t.to_dense()
    grid = shape if b is None else tuple(s // b for s in shape)
    total = math.prod(grid)
    d = density if density is not None else (1.0 if spec.format.is_dense else
                                             DEFAULT_SPARSE_DENSITY)
    if b is None:
        nonzero = int((a != 0).sum())
    else:
        nonzero = int((np.abs(a).reshape(grid[0], b, grid[1], b).sum(axis=(1, 3)) != 0).sum())
        # a picked block is non-zero in every element; others are all zero
        per_block = (t.vals != 0).reshape(t.nnz, b * b)
        assert (per_block.all(axis=1) | ~per_block.any(axis=1)).all()
    assert nonzero == round(d * total)
    assert ((a >= -1) & (a < 1)).all()
    # Stored = non-zeros on compressed levels, everything under dense levels: exactly what
    # storing the dense array in the same format gives.
    ref = FiberTensor.from_dense(a, spec.format, b)
    np.testing.assert_array_equal(t.pattern(), ref.pattern())
    if spec.format.order and all(k == "compressed" for k in spec.format.levels):
        assert (t.vals != 0).all()
    # deterministic
    again = random_tensor(spec, shape, density, np.random.default_rng(seed))
    np.testing.assert_array_equal(again.to_dense(), a)


def test_density_spread_is_not_degenerate():
    spec = TensorSpec("A", ("I", "J"), shorthand("csr", 2))
    t = random_tensor(spec, (100, 100), 0.05, np.random.default_rng(7))
    rows = np.bincount(t.to_coo()[0][:, 0], minlength=100)
    assert t.nnz == 500
    assert (rows > 0).sum() > 90  # uniform picks touch nearly every row
    assert abs(float(t.vals.mean())) < 0.1


def test_dense_with_density_has_explicit_zeros():
    spec = TensorSpec("x", ("I",), shorthand("dense", 1))
    t = random_tensor(spec, (10,), 0.3, np.random.default_rng(1))
    assert t.nnz == 10 and int((t.vals != 0).sum()) == 3


def test_random_inputs_independent_streams():
    a = TensorSpec("A", ("I", "J"), shorthand("csr", 2))
    x = TensorSpec("x", ("J",), shorthand("dense", 1))
    one = random_inputs([a, x], {"I": 5, "J": 6}, seed=3, density={"A": 0.5})
    two = random_inputs([x], {"I": 5, "J": 6}, seed=3)
    np.testing.assert_array_equal(one["x"].to_dense(), two["x"].to_dense())
    assert one["A"].nnz == 15 and one["x"].nnz == 6
    other = random_inputs([x], {"J": 6}, seed=4)
    assert not np.array_equal(other["x"].to_dense(), two["x"].to_dense())
    assert tensor_rng(1, "A").random() == tensor_rng(1, "A").random()


def test_errors():
    csr = TensorSpec("A", ("I", 3), shorthand("csr", 2))
    with pytest.raises(UserError, match="no size for dim I of tensor 'A'"):
        resolve_shape(csr, {})
    assert resolve_shape(csr, {"I": 2}) == (2, 3)
    with pytest.raises(UserError, match="density must be between 0 and 1"):
        random_tensor(csr, (2, 3), 1.5)
    with pytest.raises(UserError, match="not divisible by block size 2"):
        random_tensor(TensorSpec("B", ("I", "J"), shorthand("bcsr", 2), 2), (3, 4), 0.5)
    with pytest.raises(UserError, match="no block size"):
        random_tensor(TensorSpec("B", ("I", "J"), shorthand("bcsr", 2)), (4, 4), 0.5)
    with pytest.raises(UserError, match="has 2 dim"):
        random_tensor(csr, (2,), 0.5)


def test_scalar():
    s = TensorSpec("s", (), shorthand("dense", 0))
    t = random_tensor(s, (), None, np.random.default_rng(0))
    assert t.nnz == 1 and t.to_dense().shape == () and t.to_dense() != 0
    assert random_tensor(s, (), 0.0).to_dense() == 0

"""A dense .npy loaded into an all-dense format is stored from the array itself, never listed
entry by entry (24 bytes an entry: 2.3 GB for MAG's 736,389 x 128 features), and the tensor is
the one the listed conversion gives, for every mode order; other formats still list."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data import io
from fuseflowc.data.io import RawTensor, convert, load_tensor
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format


@st.composite
def arrays(draw):
    order = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(order))
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    a = np.where(rng.random(shape) < draw(st.sampled_from([0.0, 0.5, 1.0])),
                 rng.uniform(-1, 1, shape), 0.0)
    levels = tuple(draw(st.sampled_from(["dense", "dense", "compressed"])) for _ in shape)
    return np.asarray(a), Format(levels, tuple(draw(st.permutations(range(order)))))


@settings(max_examples=150, deadline=None)
@given(case=arrays())
def test_the_unlisted_array_converts_as_the_listed_one(case):
    a, fmt = case
    spec = TensorSpec("T", tuple(f"D{k}" for k in range(a.ndim)), fmt, None)
    got = convert(RawTensor.of_array(a), spec, "T.npy")
    want = convert(RawTensor.from_array(a), spec, "T.npy")
    assert got.shape == want.shape and got.format == want.format
    assert [(lv.kind, lv.size) for lv in got.levels] == [(lv.kind, lv.size) for lv in want.levels]
    for x, y in zip(got.levels, want.levels):
        for field in ("seg", "crd"):
            if getattr(y, field) is not None:
                np.testing.assert_array_equal(getattr(x, field), getattr(y, field))
    assert got.vals.dtype == np.float64
    np.testing.assert_array_equal(got.vals, want.vals)


def test_a_dense_npy_into_a_dense_format_lists_no_entries(tmp_path, monkeypatch):
    a = np.arange(12.0).reshape(3, 4)
    a[1] = 0.0
    np.save(tmp_path / "X.npy", a)

    def listed(_):
        raise AssertionError("the dense array was listed entry by entry")

    monkeypatch.setattr(RawTensor, "from_array", classmethod(listed))
    t = load_tensor(tmp_path / "X.npy", TensorSpec("X", ("N", "F"), Format(("dense", "dense"),
                                                                             (1, 0)), None))
    np.testing.assert_array_equal(t.to_dense(), a)
    np.testing.assert_array_equal(t.vals, a.T.reshape(-1))


def test_a_dense_array_too_large_to_store_is_an_error_naming_the_file(monkeypatch):
    monkeypatch.setattr(io, "check_storage", _refuse)
    spec = TensorSpec("X", ("N",), Format(("dense",), (0,)), None)
    with pytest.raises(UserError, match="X.npy.*too large"):
        convert(RawTensor.of_array(np.zeros(3)), spec, "X.npy")


def _refuse(name, *a, **k):
    raise UserError(f"tensor {name} is too large")

"""Row-block evaluation (fuseflowc.reference.rowblocks) gives what the whole evaluation gives:
random programs against the dense oracle of test_reference_props and against the whole
evaluation, row_slice / join_rows against the tensor they cut, and the path is taken where it
is due (without it a MAG-size check holds each N x 349 intermediate as a 6 GB COO value)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.data.gen import random_tensor, tensor_rng
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import Source
from fuseflowc.formats import Format, shorthand
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.reference import evaluate, rowblocks
from tests.reference.test_reference_props import programs


@contextmanager
def block_coords(n: int):
    old = rowblocks.BLOCK_COORDS
    rowblocks.BLOCK_COORDS = n
    try:
        yield
    finally:
        rowblocks.BLOCK_COORDS = old


def _same(got: FiberTensor, want: FiberTensor, what: str) -> None:
    np.testing.assert_array_equal(got.pattern(), want.pattern(), err_msg=f"pattern of {what}")
    np.testing.assert_allclose(got.to_dense(), want.to_dense(), rtol=1e-12, atol=1e-14,
                               equal_nan=True, err_msg=f"values of {what}")


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs(), limit=st.sampled_from([0, 1, 2, 5]))
def test_blocked_evaluation_matches_the_oracle_and_the_whole_evaluation(case, limit):
    src, inputs, expected = case
    program = check(parse_program(Source("<random>", src)))
    whole = evaluate(program, inputs)
    with block_coords(limit):
        out = evaluate(program, inputs)
    for name, (v, p) in expected.items():
        np.testing.assert_array_equal(out[name].pattern(), p, err_msg=f"{name}\n{src}")
        np.testing.assert_allclose(out[name].to_dense(), v, rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=f"{name}\n{src}")
        _same(out[name], whole[name], f"{name}\n{src}")


@st.composite
def row_tensors(draw):
    """A random tensor whose first level holds mode 0 (dense, compressed or, above a singleton,
    nonunique), the levels below any kind, with empty rows, no entries at all, or a single
    entry among the draws."""
    order = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(order))
    levels = [draw(st.sampled_from(["dense", "compressed"]))]
    for _ in range(1, order):
        if levels[-1] == "compressed" and draw(st.booleans()):
            levels.append("singleton")        # makes the level above nonunique
        else:
            levels.append(draw(st.sampled_from(["dense", "compressed", "fixed"])))
    mode_order = (0,) + tuple(1 + p for p in draw(st.permutations(range(order - 1))))
    levels = tuple(f"compressed({shape[mode_order[k]]})" if kind == "fixed" else kind
                   for k, kind in enumerate(levels))
    fmt = Format(levels, mode_order)
    density = draw(st.sampled_from([0.0, 0.3, 1.0, "one"]))
    rng = tensor_rng(draw(st.integers(0, 10**6)), "T")
    if density == "one":
        at = tuple(int(rng.integers(s)) for s in shape)
        return FiberTensor.from_coo(shape, np.array([at]), np.array([rng.uniform(-1, 1)]), fmt)
    return random_tensor(TensorSpec("T", tuple(f"D{k}" for k in range(order)), fmt, None),
                         shape, density, rng)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(t=row_tensors(), data=st.data())
def test_row_slices_are_the_rows_and_join_back_to_the_tensor(t, data):
    n = t.shape[0]
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=3)) if n > 1 else []))
    bounds = [0] + cuts + [n]
    blocks = []
    for r0, r1 in zip(bounds, bounds[1:]):
        s = rowblocks.row_slice(t, r0, r1)
        np.testing.assert_array_equal(s.to_dense(), t.to_dense()[r0:r1])
        np.testing.assert_array_equal(s.pattern(), t.pattern()[r0:r1])
        blocks.append((r0, s))
    j = rowblocks.join_rows(blocks, t.shape)
    assert [(lv.kind, lv.size) for lv in j.levels] == [(lv.kind, lv.size) for lv in t.levels]
    for a, b in zip(j.levels, t.levels):
        for field in ("seg", "crd"):
            if getattr(b, field) is not None:
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(j.vals, t.vals)


SOFTMAX = """dim N = 7, C = 5
tensor B[N, C] : dense
tensor A[N, N] : csr
tensor mx[N] : dense
tensor Sh[N, C] : dense
tensor Ex[N, C] : csr
tensor den[N] : dense
tensor Y[N, C] : dense
tensor G[N, C] : dense
mx[i] = max[c](B[i,c])
Sh[i,c] = B[i,c] - mx[i]
Ex[i,c] = exp(Sh[i,c])
den[i] = sum[c](Ex[i,c])
Y[i,c] = Ex[i,c] / den[i]
G[i,c] = A[i,k] * Y[k,c]
"""


def test_large_pointwise_statements_take_the_blocked_path(monkeypatch):
    """Every statement pointwise in its first index goes through evaluate_rows once its size
    passes BLOCK_COORDS (G reads Y by its second index: whole, but A is sliced), with the
    values of the whole evaluation, including empty rows of A and of Ex."""
    rng = np.random.default_rng(3)
    b = rng.uniform(-2, 2, (7, 5))
    b[2] = 0.0
    a = np.where(rng.random((7, 7)) < 0.3, 1.0, 0.0)
    a[4] = 0.0
    inputs = {"B": FiberTensor.from_dense(b, shorthand("dense", 2)),
              "A": FiberTensor.from_dense(a, shorthand("csr", 2))}
    program = check(parse_program(Source("<test>", SOFTMAX)))
    whole = evaluate(program, inputs)
    seen = []
    real = rowblocks.evaluate_rows

    def spy(program, s, tensors, plan):
        seen.append((s.name, plan[2]))
        return real(program, s, tensors, plan)

    monkeypatch.setattr(sys.modules["fuseflowc.reference.evaluate"], "evaluate_rows", spy)
    with block_coords(10):
        out = evaluate(program, inputs)
    assert seen == [("mx", 2), ("Sh", 2), ("Ex", 2), ("den", 2), ("Y", 2), ("G", 2)]
    for name in whole:
        _same(out[name], whole[name], name)
    seen.clear()
    evaluate(program, inputs)      # small: whole, as before
    assert seen == []

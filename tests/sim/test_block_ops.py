"""Labelled block values in the simulator (sim.ops): block einsums, broadcasting element-wise
ops, N as the identity, reductions inside blocks, FLOPs and block timing, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source
from fuseflowc.ops import block_contracts, labelled_alu_flops
from fuseflowc.samml.parser import parse_module
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.ops import labelled_alu, labelled_reduce

LABELS = ["i", "j", "k"]
label_lists = st.lists(st.sampled_from(LABELS), unique=True, max_size=3)


def _arr(labels, b, seed):
    return np.random.default_rng(seed).uniform(-1, 1, size=(b,) * len(labels))


def _ref_dense(x, have, b):
    """x (axes `have`) as a full (b, b, b) array over i, j, k, broadcast along missing labels."""
    order = sorted(have, key=LABELS.index)
    t = np.transpose(x, [have.index(c) for c in order]) if have else np.asarray(x)
    t = np.expand_dims(t, [k for k, c in enumerate(LABELS) if c not in have])
    return np.broadcast_to(t, (b, b, b))


@settings(max_examples=60, deadline=None)
@given(in0=label_lists, in1=label_lists, b=st.integers(1, 4), seed=st.integers(0, 99),
       data=st.data())
def test_mul_is_einsum(in0, in1, b, seed, data):
    every = sorted(set(in0) | set(in1))
    out = data.draw(st.permutations(every).flatmap(
        lambda p: st.integers(0, len(p)).map(lambda n: list(p[:n]))))
    x, y = _arr(in0, b, seed), _arr(in1, b, seed + 1)
    fn, nl, nr = labelled_alu("mul", in0, in1, out, b, None)
    spec = f"{''.join(in0)},{''.join(in1)}->{''.join(out)}"
    np.testing.assert_allclose(fn(x, y), np.einsum(spec, x, y), rtol=1e-12, atol=1e-12)
    assert block_contracts("mul", in0, in1, out) == bool(set(every) - set(out))
    contracts = bool(set(every) - set(out))
    assert labelled_alu_flops("mul", in0, in1, out, b) == b ** len(every) * (2 if contracts else 1)
    # N is the identity 1: the other operand summed over the contracted labels
    np.testing.assert_allclose(nr(x), np.einsum(spec, x, np.ones_like(y)), atol=1e-12)
    np.testing.assert_allclose(nl(y), np.einsum(spec, np.ones_like(x), y), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(in0=label_lists, in1=label_lists, b=st.integers(1, 4), seed=st.integers(0, 99),
       op=st.sampled_from(["add", "sub", "div", "max", "min"]), data=st.data())
def test_elementwise_broadcasts(in0, in1, b, seed, op, data):
    out = data.draw(st.permutations(sorted(set(in0) | set(in1)))).copy()
    x, y = _arr(in0, b, seed), _arr(in1, b, seed + 1) + 3.0
    fn, nl, nr = labelled_alu(op, in0, in1, out, b, None)
    npop = {"add": np.add, "sub": np.subtract, "div": np.divide, "max": np.maximum,
            "min": np.minimum}[op]

    def full(a, have):  # a over the out labels, in out order
        t = _ref_dense(a, have, b)
        return np.transpose(t, [LABELS.index(c) for c in out] +
                            [LABELS.index(c) for c in LABELS if c not in out])[
            (Ellipsis,) + (0,) * (3 - len(out))]
    want = npop(full(x, in0), full(y, in1))
    np.testing.assert_allclose(fn(x, y) * np.ones((b,) * len(out)), want, rtol=1e-12)
    # the present side alone (N on the other): x, -y, 1/y, y, broadcast to the result
    np.testing.assert_allclose(nr(x), full(x, in0), rtol=1e-12)
    expect_l = {"sub": -full(y, in1), "div": 1.0 / full(y, in1)}.get(op, full(y, in1))
    np.testing.assert_allclose(nl(y), expect_l, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(in0=label_lists, b=st.integers(1, 4), seed=st.integers(0, 99),
       op=st.sampled_from(["sum", "max"]), data=st.data())
def test_reduce_inside_block(in0, b, seed, op, data):
    kept = data.draw(st.permutations(in0).flatmap(
        lambda p: st.integers(0, len(p)).map(lambda n: list(p[:n]))))
    x = _arr(in0, b, seed)
    pre, zero, fl = labelled_reduce(op, in0, kept, b)
    gone = tuple(k for k, c in enumerate(in0) if c not in kept)
    r = (np.sum if op == "sum" else np.max)(x, axis=gone) if gone else x
    left = [c for c in in0 if c in kept]
    want = np.transpose(r, [left.index(c) for c in kept]) if kept else r
    got = x if pre is None else pre(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.shape(zero) == (b,) * len(kept) and not np.any(zero)
    assert fl == b ** len(in0)


def test_unsupported_contraction_rejected():
    with pytest.raises(ValueError, match="only mul contracts"):
        labelled_alu("add", ["i", "k"], ["k"], ["i"], 2, None)


BMM = """
tensor A[N, N]: bcsr input block 4
tensor B[N, N]: bdense input block 4
tensor C[N, N]: bcsr output block 4

graph g {
  %ra = root {tensor = A}
  %rb = root {tensor = B}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = dense, index = i}
  %si = repsig %ci {index = i}
  %rbi = repeat %rb, %si {index = i}
  %cka, %rka = scan %ri {tensor = A, mode = 1, format = compressed, index = k}
  %ckb, %rkb = scan %rbi {tensor = B, mode = 0, format = dense, index = k}
  %ck, %r1, %r2 = intersect %cka, %rka, %ckb, %rkb {index = k}
  %cj, %rj = scan %r2 {tensor = B, mode = 1, format = dense, index = j}
  %va = array %r1 {tensor = A}
  %sj = repsig %cj {index = j}
  %vaj = repeat %va, %sj {index = j}
  %vb = array %rj {tensor = B}
  %p = alu %vaj, %vb {op = mul, in0 = [i, k], in1 = [k, j], out = [i, j]}
  %co, %vo = spacc1 %cj, %p {op = sum, index = k, in0 = [i, j], out = [i, j]}
  write_level %ci {tensor = C, mode = 0, format = dense}
  write_level %co {tensor = C, mode = 1, format = compressed}
  write_vals %vo {tensor = C}
}
"""


def test_labels_round_trip_and_bmm_timing():
    """Labels print and parse back; a contracting labelled ALU gets the arch's block-matmul
    timing (latency 2b-1, ii b by default), an element-wise one the element-wise timing, and
    the result equals A @ B blockwise."""
    m = parse_module(Source("<t>", BMM))
    verify(m)
    assert parse_module(Source("<p>", print_module(m))) is not None
    assert "in0 = [i, k], in1 = [k, j], out = [i, j]" in print_module(m)
    from fuseflowc.data.fibertree import FiberTensor
    from fuseflowc.formats import shorthand
    from fuseflowc.sim.build import Simulator
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (8, 8))
    a[:4, 4:] = 0.0
    bm = rng.uniform(-1, 1, (8, 8))
    ins = {"A": FiberTensor.from_dense(a, shorthand("bcsr", 2), 4),
           "B": FiberTensor.from_dense(bm, shorthand("bdense", 2), 4)}
    res = Simulator(m, ins, {"N": 8}).run()
    np.testing.assert_allclose(res.tensors["C"].to_dense(), a @ bm, rtol=1e-12)
    arch = Arch.load(None)
    assert arch.timing("alu", "bmm", 4) == (7, 4)
    assert arch.timing("alu", "mul", 4) == (16, 1)
    # FLOPs: 3 stored A blocks x 2 j blocks x 4^3 MACs (2 FLOPs each, as scalars count a
    # multiply and an add), plus the accumulator's 16 adds per block
    assert res.kernels[0].flops == 3 * 2 * 2 * 64 + 3 * 2 * 16

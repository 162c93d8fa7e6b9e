"""The reference evaluator on hand-worked examples of each sparsity rule of docs/language.md."""

from __future__ import annotations

import numpy as np
import pytest

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import Format, shorthand
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.reference import evaluate

CSR = shorthand("csr", 2)
DCSR = shorthand("dcsr", 2)
DENSE2 = shorthand("dense", 2)
SPARSE1 = shorthand("sparse", 1)
DENSE1 = shorthand("dense", 1)
ROWS = Format(("compressed", "dense"), (0, 1))  # (compressed, dense): whole rows


def prog(text: str):
    return check(parse_program(Source("<test>", text)))


def coo(shape, entries, fmt, block=None):
    """A tensor storing exactly `entries` {coord: value} (explicit zeros allowed)."""
    coords = np.array(list(entries), np.int64).reshape(-1, len(shape))
    return FiberTensor.from_coo(shape, coords, list(entries.values()), fmt, block)


def stored(t: FiberTensor) -> set:
    coords, _ = t.to_coo()
    return {tuple(int(x) for x in c) for c in coords}


def test_row_max_subtracted_keeps_pattern_and_max_of_empty_row_is_absent():
    p = prog("""dim I = 3, J = 3
        tensor S[I, J] : csr
        tensor m[I] : sparse
        tensor d[I, J] : csr
        m[i] = max[j](S[i,j])
        d[i,j] = S[i,j] - m[i]
        """)
    S = coo((3, 3), {(0, 0): -2.0, (0, 2): -1.0, (2, 1): 5.0}, CSR)
    out = evaluate(p, {"S": S})
    assert stored(out["m"]) == {(0,), (2,)}  # row 1 has no entry: no max, not -inf
    np.testing.assert_array_equal(out["m"].to_dense(), [-1.0, 0.0, 5.0])
    assert stored(out["d"]) == stored(S)
    np.testing.assert_array_equal(out["d"].to_dense(), [[-1, 0, 0], [0, 0, 0], [0, 0, 0]])


def test_bias_added_to_stored_entries_only_and_constant_keeps_pattern():
    p = prog("""dim I = 2, J = 3
        tensor A[I, J] : dcsr
        tensor b[J] : dense
        tensor y[I, J] : dcsr
        tensor z[I, J] : dcsr
        y[i,j] = A[i,j] + b[j]
        z[i,j] = 2 * A[i,j] + 1
        """)
    A = coo((2, 3), {(0, 1): 1.0, (1, 2): 2.0}, DCSR)
    b = FiberTensor.from_dense(np.array([10.0, 20.0, 30.0]), DENSE1)
    out = evaluate(p, {"A": A, "b": b})
    assert stored(out["y"]) == stored(A)
    np.testing.assert_array_equal(out["y"].to_dense(), [[0, 21, 0], [0, 0, 32]])
    assert stored(out["z"]) == stored(A)
    np.testing.assert_array_equal(out["z"].to_dense(), [[0, 3, 0], [0, 0, 5]])


def test_same_index_union_is_plain_union_and_max_takes_present_side():
    p = prog("""dim I = 4
        tensor a[I] : sparse
        tensor b[I] : sparse
        tensor s[I] : sparse
        tensor d[I] : sparse
        tensor m[I] : sparse
        s[i] = a[i] + b[i]
        d[i] = a[i] - b[i]
        m[i] = max(a[i], b[i])
        """)
    a = coo((4,), {(0,): -3.0, (1,): 1.0}, SPARSE1)
    b = coo((4,), {(1,): 2.0, (2,): -4.0}, SPARSE1)
    out = evaluate(p, {"a": a, "b": b})
    for n in "sdm":
        assert stored(out[n]) == {(0,), (1,), (2,)}
    np.testing.assert_array_equal(out["s"].to_dense(), [-3, 3, -4, 0])
    np.testing.assert_array_equal(out["d"].to_dense(), [-3, -1, 4, 0])
    np.testing.assert_array_equal(out["m"].to_dense(), [-3, 2, -4, 0])  # not max(-3, 0)


def test_outer_union_needs_both_sides():
    p = prog("""dim I = 2, J = 2
        tensor a[I] : sparse
        tensor b[J] : sparse
        tensor y[I, J] : dcsr
        y[i,j] = a[i] + b[j]
        """)
    out = evaluate(p, {"a": coo((2,), {(0,): 1.0}, SPARSE1),
                       "b": coo((2,), {(1,): 2.0}, SPARSE1)})
    assert stored(out["y"]) == {(0, 1)}
    assert out["y"].to_dense()[0, 1] == 3.0


@pytest.mark.parametrize("fmt, expect_everywhere", [("dense", True), ("csr", False)])
def test_assigned_tensors_are_seen_as_declared(fmt, expect_everywhere):
    # docs/language.md: t declared dense stores every coordinate, so exp(t) is exp(0) = 1 where
    # S stores nothing; declared csr, t keeps S's pattern.
    p = prog(f"""dim I = 2, J = 2
        tensor S[I, J] : csr
        tensor t[I, J] : {fmt}
        tensor u[I, J] : {fmt}
        t[i,j] = exp(S[i,j])
        u[i,j] = exp(t[i,j])
        """)
    S = coo((2, 2), {(0, 0): 0.0, (1, 1): 1.0}, CSR)
    out = evaluate(p, {"S": S})
    u = out["u"].to_dense()
    assert u[0, 0] == pytest.approx(np.e)           # exp(exp(0))
    assert u[1, 1] == pytest.approx(np.exp(np.e))   # exp(exp(1))
    if expect_everywhere:
        assert stored(out["t"]) == {(0, 0), (0, 1), (1, 0), (1, 1)}
        assert u[0, 1] == 1.0 and u[1, 0] == 1.0
    else:
        assert stored(out["t"]) == stored(out["u"]) == stored(S)
        assert u[0, 1] == 0.0


def test_compressed_dense_intermediate_stores_whole_rows():
    p = prog("""dim I = 3, J = 3
        tensor S[I, J] : csr
        tensor t[I, J] : (compressed, dense)
        tensor u[I, J] : csr
        t[i,j] = S[i,j]
        u[i,j] = t[i,j] + 1
        """)
    S = coo((3, 3), {(1, 2): 4.0}, CSR)
    out = evaluate(p, {"S": S})
    assert stored(out["t"]) == {(1, 0), (1, 1), (1, 2)}
    np.testing.assert_array_equal(out["u"].to_dense(), [[0, 0, 0], [1, 1, 5], [0, 0, 0]])


def test_sums_that_cancel_stay_stored():
    # Stored exactly where at least one entry was reduced, even if the sum is 0 (scipy's matrix
    # product drops such zeros; the evaluator must not).
    p = prog("""dim I = 2, J = 2, K = 2
        tensor A[I, J] : csr
        tensor B[J, K] : csr
        tensor x[J] : dense
        tensor C[I, K] : dcsr
        tensor y[I] : sparse
        C[i,k] = A[i,j] * B[j,k]
        y[i] = A[i,j] * x[j]
        """)
    A = coo((2, 2), {(0, 0): 1.0, (0, 1): -1.0, (1, 0): 3.0}, CSR)
    B = coo((2, 2), {(0, 1): 2.0, (1, 1): 2.0}, CSR)
    x = FiberTensor.from_dense(np.array([1.0, 1.0]), DENSE1)
    out = evaluate(p, {"A": A, "B": B, "x": x})
    assert stored(out["C"]) == {(0, 1), (1, 1)}
    np.testing.assert_array_equal(out["C"].to_dense(), [[0, 0], [0, 6]])
    assert stored(out["y"]) == {(0,), (1,)}


def test_mask_ignores_values_and_keeps_explicit_zeros():
    p = prog("""dim I = 2, J = 2, K = 3
        tensor U[I, K] : dense
        tensor V[J, K] : dense
        tensor M[I, J] : csr
        tensor S[I, J] : csr
        S[i,j] = mask(U[i,k] * V[j,k], M[i,j])
        """)
    rng = np.random.default_rng(0)
    U, V = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    M = coo((2, 2), {(0, 1): 0.0, (1, 0): 7.0}, CSR)
    out = evaluate(p, {"U": FiberTensor.from_dense(U, DENSE2),
                       "V": FiberTensor.from_dense(V, DENSE2), "M": M})
    assert stored(out["S"]) == {(0, 1), (1, 0)}
    np.testing.assert_allclose(out["S"].to_dense(), (U @ V.T) * np.array([[0, 1], [1, 0]]))


def test_blocked_result_stores_whole_blocks_and_is_read_at_element_granularity():
    p = prog("""dim I = 4, J = 4
        tensor S[I, J] : csr
        tensor t[I, J] : bcsr
        tensor u[I, J] : csr
        t[i,j] = S[i,j] * 2
        u[i,j] = t[i,j] + 1
        block t: 2
        """)
    S = coo((4, 4), {(0, 1): 1.0, (3, 3): 2.0}, CSR)
    out = evaluate(p, {"S": S})
    t = out["t"]
    assert t.block == 2 and t.format == shorthand("bcsr", 2) and t.nnz == 2  # two blocks
    np.testing.assert_array_equal(t.to_dense(), [[0, 2, 0, 0], [0, 0, 0, 0],
                                                  [0, 0, 0, 0], [0, 0, 0, 4]])
    # A blocked tensor's stored entries are all elements of its stored blocks.
    np.testing.assert_array_equal(out["u"].to_dense(), [[1, 3, 0, 0], [1, 1, 0, 0],
                                                        [0, 0, 1, 1], [0, 0, 1, 5]])


def test_higher_order_contraction_and_column_major_formats():
    # MTTKRP-like: A[i,r] = B[i,k,l] * C[k,r] * D[l,r], B stored (compressed^3) order (2,0,1).
    p = prog("""dim I = 3, K = 4, L = 2, R = 5
        tensor B[I, K, L] : (compressed, compressed, compressed) order (2, 0, 1)
        tensor C[K, R] : csc
        tensor D[L, R] : dense
        tensor A[I, R] : csc
        A[i,r] = B[i,k,l] * C[k,r] * D[l,r]
        """)
    rng = np.random.default_rng(1)
    b = rng.normal(size=(3, 4, 2)) * (rng.random((3, 4, 2)) < 0.4)
    c = rng.normal(size=(4, 5)) * (rng.random((4, 5)) < 0.5)
    d = rng.normal(size=(2, 5))
    out = evaluate(p, {"B": FiberTensor.from_dense(b, p.tensor("B").format),
                       "C": FiberTensor.from_dense(c, p.tensor("C").format),
                       "D": FiberTensor.from_dense(d, DENSE2)})
    np.testing.assert_allclose(out["A"].to_dense(), np.einsum("ikl,kr,lr->ir", b, c, d))
    want = np.einsum("ikl,kr->ir", (b != 0).astype(int), (c != 0).astype(int)) > 0
    np.testing.assert_array_equal(out["A"].pattern(), want)


def test_missing_or_misshaped_input_is_a_user_error():
    p = prog("""dim I, J
        tensor A[I, J] : csr
        tensor x[J] : dense
        tensor y[I] : dense
        y[i] = A[i,j] * x[j]
        """)
    A = coo((2, 3), {(0, 0): 1.0}, CSR)
    with pytest.raises(UserError, match="no value given for input tensor 'x'"):
        evaluate(p, {"A": A})
    with pytest.raises(UserError, match="J = 3"):
        evaluate(p, {"A": A, "x": FiberTensor.from_dense(np.ones(2), DENSE1)})


@pytest.mark.parametrize("order", ["A[h,j] * B[h,j,k]", "B[h,j,k] * A[h,j]"])
def test_batched_product_with_a_full_operand_stores_only_met_batches(order):
    # h is shared but not summed (a batch index): a full A meets B only in B's own batches.
    p = prog(f"""dim H = 2, J = 3, K = 2
        tensor A[H, J] : dense
        tensor B[H, J, K] : sparse
        tensor y[H, K] : sparse
        y[h,k] = {order}
        """)
    A = FiberTensor.from_dense(np.arange(1.0, 7.0).reshape(2, 3), DENSE2)
    B = coo((2, 3, 2), {(0, 1, 1): 2.0, (0, 2, 1): 1.0}, shorthand("sparse", 3))
    out = evaluate(p, {"A": A, "B": B})
    assert stored(out["y"]) == {(0, 1)}
    assert out["y"].to_dense()[0, 1] == 2.0 * 2 + 3.0 * 1

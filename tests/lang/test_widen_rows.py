"""lang.widen: uses that never see a dense-declared row statistic's stored zeros (a broadcast
side of a union; a use beside the access the statistic reduces), and the ones that still do.
The end-to-end proof (values and patterns, both engines) is tests/lower/test_shared_softmax.py."""

from __future__ import annotations

import pytest

from fuseflowc.lang import ast
from fuseflowc.lang.widen import must_materialize, path_safe, reduction_of
from tests.support.lower_harness import load_text


def acc(t: str, *idx: str) -> ast.Access:
    return ast.Access(t, tuple(idx))


def div(a, b) -> ast.Binary:
    return ast.Binary("/", a, b)


#: d[i] = sum[j](E[i,j])
SOURCE = reduction_of(("i",), ast.Reduce("sum", ("j",), acc("E", "i", "j")))


@pytest.mark.parametrize("expr,source,expected", [
    # a broadcast side of a union creates no coordinate, and absent counts as 0 there
    (ast.Binary("-", acc("S", "i", "j"), acc("d", "i")), None, None),
    (ast.Binary("+", acc("d", "i"), acc("S", "i", "j")), None, None),
    # the same indices on both sides: d owns coordinates S lacks
    (ast.Binary("+", acc("S", "i"), acc("d", "i")), None, True),
    # exp of a stored 0 is 1, not the 0 an absent side counts as
    (ast.Binary("+", acc("S", "i", "j"), ast.Call("exp", (acc("d", "i"),))), None, False),
    # the divisor read only where the row it sums has entries
    (div(acc("E", "i", "j"), acc("d", "i")), SOURCE, None),
    (ast.Binary("*", acc("E", "i", "j"), ast.Call("exp", (acc("d", "i"),))), SOURCE, None),
    # ... but not beside another tensor, or the transposed one, or without the definition
    (div(acc("F", "i", "j"), acc("d", "i")), SOURCE, False),
    (div(acc("E", "j", "i"), acc("d", "i")), SOURCE, False),
    (div(acc("E", "i", "j"), acc("d", "i")), None, False),
])
def test_path_safe_rows(expr, source, expected):
    assert path_safe(expr, "d", frozenset(), source) is expected


def test_reduction_of_sees_through_pattern_keeping_steps_only():
    body = acc("x", "s", "e")
    scaled = ast.Binary("*", ast.Reduce("sum", ("e",), body), ast.Const(0.5))
    assert reduction_of(("s",), scaled).body == body
    assert reduction_of(("s",), ast.Binary("+", ast.Reduce("sum", ("e",), body),
                                           acc("b", "s"))) is None
    assert reduction_of(("s",), ast.Reduce("sum", ("e",), ast.Binary("*", body, body))) is None


def test_fuse_keeps_softmax_statistics_and_still_stores_a_seen_dense_intermediate():
    p = load_text("""
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : dense
tensor mx[I] : dense
tensor Sh[I, J] : csr
tensor Ex[I, J] : csr
tensor den[I] : dense
tensor P[I, J] : csr
tensor T[I, J] : dense
tensor y[I, J] : dense
mx[i] = max[j](A[i,j])
Sh[i,j] = A[i,j] - mx[i]
Ex[i,j] = exp(Sh[i,j])
den[i] = sum[j](Ex[i,j])
P[i,j] = Ex[i,j] / den[i]
T[i,j] = P[i,j] * B[i,j]
y[i,j] = exp(T[i,j])
""")
    assert must_materialize(p, ["mx", "Sh", "Ex", "den", "P", "T", "y"]) == {"T"}

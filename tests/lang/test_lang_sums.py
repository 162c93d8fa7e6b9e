"""Placement of implicit sums: an index on the right that is not on the left is summed over the
smallest subexpression containing all its uses (and is an error inside a non-linear context)."""

from __future__ import annotations

import pytest
from hypothesis import given

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang import ast
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import expr_str
from tests.lang.test_lang_roundtrip import SETTINGS, programs

DECLS = """
dim I, J, K, L
tensor A[I, J] : csr
tensor B[J, K] : csr
tensor C[K, L] : dense
tensor M[I, J] : csr
tensor N[I, K] : csr
tensor T[I, J, K] : sparse
tensor U[I, K] : dense
tensor V[J, K] : dense
tensor x[J] : dense
tensor z[K] : dense
tensor b[I] : dense
tensor w[J, K] : dense
tensor y[I] : dense
tensor Y[I, L] : dense
tensor S[I, J] : csr
"""


def normalized(statement: str) -> str:
    """The right side of `statement`, checked, with every implicit sum explicit."""
    p = check(parse_program(Source("<test>", DECLS + statement + "\n")))
    return expr_str(p.statements[-1].expr)


@pytest.mark.parametrize("statement, expected", [
    # A x + b: the sum wraps only the product, not the bias.
    ("y[i] = A[i,j] * x[j] + b[i]", "sum[j](A[i,j] * x[j]) + b[i]"),
    ("y[i] = b[i] + A[i,j] * x[j]", "b[i] + sum[j](A[i,j] * x[j])"),
    ("y[i] = b[i] - A[i,j] * x[j]", "b[i] - sum[j](A[i,j] * x[j])"),
    # A scalar factor is inside the product, hence inside the sum.
    ("y[i] = 2 * A[i,j] * x[j]", "sum[j](2 * A[i,j] * x[j])"),
    # Numerators are linear: the sum may sit there.
    ("y[i] = A[i,j] * x[j] / b[i]", "sum[j](A[i,j] * x[j]) / b[i]"),
    ("y[i] = (A[i,j] * x[j] + 1) / b[i]", "(sum[j](A[i,j] * x[j]) + 1) / b[i]"),
    # Sums inside mask's first argument (SDDMM) are allowed.
    ("S[i,j] = mask(U[i,k] * V[j,k], M[i,j])", "mask(sum[k](U[i,k] * V[j,k]), M[i,j])"),
    ("S[i,j] = mask(U[i,k] * V[j,k], M[i,j]) * 0.5",
     "mask(sum[k](U[i,k] * V[j,k]), M[i,j]) * 0.5"),
    # An index used in both of mask's arguments: the sum wraps the whole mask.
    ("y[i] = mask(A[i,j], M[i,j])", "sum[j](mask(A[i,j], M[i,j]))"),
    # Nested sums: each index at its own smallest subexpression (factored, as Figure 5(b)).
    ("Y[i,l] = A[i,j] * B[j,k] * C[k,l]", "sum[k](sum[j](A[i,j] * B[j,k]) * C[k,l])"),
    ("Y[i,l] = A[i,j] * (B[j,k] * C[k,l])", "sum[j](A[i,j] * sum[k](B[j,k] * C[k,l]))"),
    # Several implicit indices with the same smallest subexpression share one sum, in order of
    # first use; with different ones they nest.
    ("y[i] = T[i,j,k] * w[j,k]", "sum[j,k](T[i,j,k] * w[j,k])"),
    ("y[i] = T[i,j,k] * x[j] * z[k]", "sum[k](sum[j](T[i,j,k] * x[j]) * z[k])"),
    ("y[i] = T[i,j,k] * z[k] * x[j]", "sum[j](sum[k](T[i,j,k] * z[k]) * x[j])"),
    ("y[i] = A[i,j] * x[j] + N[i,k] * z[k]",
     "sum[j](A[i,j] * x[j]) + sum[k](N[i,k] * z[k])"),
    # The same index in both terms of a sum: one sum over the whole addition.
    ("y[i] = A[i,j] * x[j] + M[i,j] * x[j]", "sum[j](A[i,j] * x[j] + M[i,j] * x[j])"),
    # Alongside explicit reductions.
    ("y[i] = sum[k](N[i,k]) * A[i,j] * x[j]", "sum[j](sum[k](N[i,k]) * A[i,j] * x[j])"),
    ("y[i] = max[k](N[i,k]) + A[i,j] * x[j]", "max[k](N[i,k]) + sum[j](A[i,j] * x[j])"),
    ("y[i] = sum[k](T[i,j,k] * z[k]) * x[j]", "sum[j](sum[k](T[i,j,k] * z[k]) * x[j])"),
    ("y[i] = sum[k](T[i,j,k] * z[k] * x[j])", "sum[k](sum[j](T[i,j,k] * z[k] * x[j]))"),
    # A function whose arguments hold every use is itself inside the sum.
    ("y[i] = relu(A[i,j]) * x[j]", "sum[j](relu(A[i,j]) * x[j])"),
    ("y[i] = max(A[i,j], x[j])", "sum[j](max(A[i,j], x[j]))"),
    ("y[i] = exp(A[i,j]) * x[j] + b[i]", "sum[j](exp(A[i,j]) * x[j]) + b[i]"),
    # Unary minus of an access is folded into the product, which is linear.
    ("y[i] = -A[i,j] * x[j]", "sum[j](neg(A[i,j]) * x[j])"),
    # No implicit index: nothing changes.
    ("y[i] = sum[j](A[i,j] * x[j])", "sum[j](A[i,j] * x[j])"),
])
def test_implicit_sum_placement(statement, expected):
    assert normalized(statement) == expected


@pytest.mark.parametrize("statement, context", [
    ("y[i] = exp(A[i,j] * x[j])", "a call to exp"),
    ("y[i] = relu(A[i,j] * x[j] + b[i])", "a call to relu"),
    ("y[i] = max(A[i,j] * x[j], b[i])", "a call to max"),
    ("y[i] = min(b[i], A[i,j] * x[j])", "a call to min"),
    ("y[i] = b[i] / (A[i,j] * x[j])", "a denominator"),
    ("y[i] = max[k](T[i,j,k] * z[k])", "max[k]"),
    ("S[i,j] = mask(A[i,j], T[i,j,k])", "a call to mask"),  # k only in the mask
    ("y[i] = mask(b[i], M[i,j])", "a call to mask"),
])
def test_implicit_sum_in_nonlinear_context_is_an_error(statement, context):
    with pytest.raises(UserError) as e:
        normalized(statement)
    msg = str(e.value)
    assert "summed implicitly" in msg and context in msg and "explicitly" in msg


def _uses(e: ast.Expr, index: str) -> int:
    """Free uses of `index` in `e` (accesses not under a reduction of the same index)."""
    if isinstance(e, ast.Access):
        return int(index in e.indices)
    if isinstance(e, ast.Reduce) and index in e.indices:
        return 0
    return sum(_uses(c, index) for c in e.children())


@given(programs())
@SETTINGS
def test_implicit_sums_wrap_the_smallest_subexpression(p):
    """In random checked programs, each implicit sum over i holds every use of i in the
    statement, and no single child of its body holds them all (it could not sit lower)."""
    for s in check(p).statements:
        for node in s.expr.walk():
            if not (isinstance(node, ast.Reduce) and node.implicit):
                continue
            for i in node.indices:
                assert i not in s.lhs.indices
                inside = _uses(node.body, i)
                assert inside == _uses(s.rhs, i) >= 1, expr_str(s.expr)
                if not isinstance(node.body, ast.Access):
                    assert all(_uses(c, i) < inside for c in node.body.children()), \
                        expr_str(s.expr)

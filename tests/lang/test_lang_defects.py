"""Programs one would naturally write: accepted where the language allows them, and a clear
message where a documented restriction applies. A strict xfail marks a known missing feature."""

from __future__ import annotations

import pytest

from fuseflowc.diagnostics import Source
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import expr_str

DECLS = """
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : csr
tensor x[J] : dense
tensor y[I] : dense
tensor loss[1] : dense
"""


def normalized(statement: str) -> str:
    p = check(parse_program(Source("<test>", DECLS + statement + "\n")))
    return expr_str(p.statements[-1].expr)


def test_implicit_sum_under_unary_minus():
    assert normalized("y[i] = -(A[i,j] * x[j])") == "neg(sum[j](A[i,j] * x[j]))"


def test_sibling_reductions_need_their_own_index_names():
    # A documented restriction (one reduction per index name and statement, so that orders and
    # fusion can name every index unambiguously); the message says how to write it instead.
    from fuseflowc.diagnostics import UserError
    with pytest.raises(UserError, match=r"its own index name, e\.g\. sum\[j2\]"):
        normalized("y[i] = sum[j](A[i,j]) + sum[j](B[i,j])")
    assert normalized("y[i] = sum[j](A[i,j]) + sum[j2](B[i,j2])") == \
        "sum[j](A[i,j]) + sum[j2](B[i,j2])"


@pytest.mark.xfail(strict=True, reason="scalars are not supported and the suggested [1] tensor "
                   "cannot be assigned a total reduction: its index is bound nowhere on the right")
def test_total_reduction_into_a_size_one_tensor():
    assert normalized("loss[u] = sum[i](y[i])") == "sum[i](y[i])"

"""Programs one would naturally write that the language rejects today (reported to the lead).

Each test states the desired behaviour and is a strict xfail: once the language accepts the
program, the test passes unexpectedly and fails the suite, so the marker gets removed.
"""

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


@pytest.mark.xfail(strict=True, reason="unary minus is linear, but the checker treats neg like "
                   "any non-linear call and asks for an explicit sum")
def test_implicit_sum_under_unary_minus():
    assert normalized("y[i] = -(A[i,j] * x[j])") == "neg(sum[j](A[i,j] * x[j]))"


@pytest.mark.xfail(strict=True, reason="two sibling reductions may not reuse an index name: "
                   "the second counts as a use 'outside' the first")
def test_sibling_reductions_over_the_same_index_name():
    assert normalized("y[i] = sum[j](A[i,j]) + sum[j](B[i,j])") == \
        "sum[j](A[i,j]) + sum[j](B[i,j])"


@pytest.mark.xfail(strict=True, reason="scalars are not supported and the suggested [1] tensor "
                   "cannot be assigned a total reduction: its index is bound nowhere on the right")
def test_total_reduction_into_a_size_one_tensor():
    assert normalized("loss[u] = sum[i](y[i])") == "sum[i](y[i])"

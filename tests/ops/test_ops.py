"""The operator table (fuseflowc/ops.py) against everything that must agree with it: the
simulator's numpy semantics (keyed by it), the C++ engine's own name -> enum map, the grammars'
reductions, the checker, and the facts each column states (f(0) == 0 for zero-preserving
functions, the constant forms compute the binary op with a constant operand)."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc import ops
from fuseflowc.lang import ast
from fuseflowc.lang.checker import call_problem
from fuseflowc.reference.ops import UNARY as REFERENCE_UNARY
from fuseflowc.sim import ops as sim_ops
from tests.support.paths import ROOT

CPP = ROOT / "sim" / "cpp" / "prims_compute.cpp"


def _cpp_names(text: str) -> set[str]:
    """The op names of the C++ engine's `names` map (scalar_alu in prims_compute.cpp)."""
    m = re.search(r"std::map<std::string, Scalar> names = \{(.*?)\};", text, re.S)
    if m is None:
        raise AssertionError("no `names` map in prims_compute.cpp")
    return set(re.findall(r'\{"(\w+)", Scalar::\w+\}', m.group(1)))


def test_the_cpp_engine_names_the_tables_alu_ops():
    text = CPP.read_text(encoding="utf-8")
    # bmm is not in the map: on scalars it is `mul`, handled before the lookup.
    assert 'if (op == "bmm")' in text
    assert _cpp_names(text) == set(ops.ALU_OPS) - {"bmm"}


def test_the_cpp_check_catches_a_missing_name():
    text = 'static const std::map<std::string, Scalar> names = {{"add", Scalar::ADD}};'
    assert _cpp_names(text) == {"add"}
    assert _cpp_names(text) != set(ops.ALU_OPS) - {"bmm"}


def test_the_simulators_semantics_are_keyed_by_the_table():
    assert set(sim_ops.BINARY_BLOCK) == set(ops.ALU_BINARY)
    assert set(sim_ops.UNARY_SCALAR) == set(sim_ops.UNARY_BLOCK) == set(ops.ALU_UNARY)
    assert set(sim_ops.SCALAR_CONST) == set(sim_ops.SCALAR_CONST_BLOCK) == set(ops.ALU_SCALAR)
    assert set(sim_ops.REDUCE_SCALAR) == set(sim_ops.REDUCE_BLOCK) == set(ops.REDUCE_OPS)


def test_the_simulator_refuses_an_operation_missing_from_the_table(monkeypatch):
    monkeypatch.setitem(sim_ops.UNARY_SCALAR, "cube", lambda x: x ** 3)
    with pytest.raises(ImportError, match="UNARY_SCALAR.*cube"):
        sim_ops._check_table()


@pytest.mark.parametrize("op", ops.ALU_UNARY)
def test_zero_preserving_means_f_of_zero_is_zero(op):
    row = next(o for o in ops.OPS if o.samml == op)
    assert (sim_ops.UNARY_SCALAR[op](0.0) == 0.0) == row.zero_preserving
    # ... and the independent reference evaluator agrees (it keeps its own functions)
    with np.errstate(all="ignore"):
        assert (REFERENCE_UNARY[op](np.array([0.0]))[0] == 0.0) == row.zero_preserving
    assert (op in ops.ZERO_PRESERVING) == row.zero_preserving


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(x=FLOATS, c=FLOATS)
def test_the_constant_forms_compute_the_operator_with_a_constant(x, c):
    for spelling, (right, left) in ops.CONST_OP.items():
        fn = sim_ops.BINARY_SCALAR[ops.BINARY_OP[spelling]]
        assert _same(sim_ops.SCALAR_CONST[right](x, c), fn(x, c)), (spelling, x, c)  # e op c
        assert _same(sim_ops.SCALAR_CONST[left](x, c), fn(c, x)), (spelling, x, c)   # c op e


def test_language_lists():
    assert ops.FUNC_ARITY == {"relu": 1, "exp": 1, "neg": 1, "sqrt": 1, "rsqrt": 1,
                              "sigmoid": 1, "tanh": 1, "gelu": 1, "max": 2, "min": 2, "mask": 2}
    assert ops.UNION_OPS == ("+", "-", "max", "min")
    assert ops.INTERSECT_OPS == ("*", "/", "mask")
    # every binary language operation is lowered by joining its operands one way or the other
    spelled = {o.spelling for o in ops.OPS if o.kind == "binary" and o.spelling}
    assert spelled == set(ops.UNION_OPS) | set(ops.INTERSECT_OPS)
    assert set(ops.BINARY_OP) == set(ops.CONST_OP) == spelled - {"mask"}
    assert all(a in ops.ALU_SCALAR and b in ops.ALU_SCALAR for a, b in ops.CONST_OP.values())


@pytest.mark.parametrize("func", sorted(ops.FUNC_ARITY))
def test_the_checker_takes_the_tables_functions(func):
    n = ops.FUNC_ARITY[func]
    arg = ast.Const(1.0)
    assert call_problem(ast.Call(func, (arg,) * n)) is None
    assert "argument" in call_problem(ast.Call(func, (arg,) * (3 - n)))


@pytest.mark.parametrize("grammar", ["program.lark", "fused.lark"])
def test_the_grammars_reductions_are_the_tables(grammar):
    text = (ROOT / "grammars" / grammar).read_text(encoding="utf-8")
    line = re.search(r"^REDOP\.2:(.*)$", text, re.M).group(1)
    assert tuple(re.findall(r'"(\w+)"', line)) == ops.LANG_REDUCE


def test_flops_rules():
    assert ops.alu_flops("add", None) == ops.alu_flops("bmm", None) == 1
    assert ops.alu_flops("add", 4) == 16 and ops.alu_flops("bmm", 4) == 64
    assert ops.block_contracts("bmm", None, None, None)
    assert not ops.block_contracts("mul", None, None, None)
    assert ops.labelled_alu_flops("mul", ["i", "k"], ["k", "j"], ["i", "j"], 2) == 2 * 2 ** 3
    assert ops.labelled_alu_flops("add", ["i"], ["i"], ["i"], 2) == 2
    for in0, out in ((["i", "j"], ["i"]), (["i"], ["i"]), ([], [])):
        assert ops.reduce_flops(in0, 3) == sim_ops.labelled_reduce("sum", in0, out, 3)[2]
    assert [ops.arity(op) for op in ops.ALU_OPS].count(2) == len(ops.ALU_BINARY)


def test_the_table_imports_nothing_heavy():
    code = "import sys, fuseflowc.ops; print(sorted({'numpy', 'scipy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"

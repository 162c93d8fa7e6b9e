"""NaN and infinities (docs/language.md, "NaN and infinities"): IEEE arithmetic, NaN propagates
through every operation, max/min/relu included; the reference evaluator, the simulator (scalar
and block values, ALUs and reductions) and `simulate --check` agree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.formats import shorthand
from fuseflowc.sim.compare import compare
from fuseflowc.sim.harness import run_node
from fuseflowc.sim.ops import (
    BINARY_BLOCK,
    BINARY_SCALAR,
    REDUCE_BLOCK,
    REDUCE_SCALAR,
    SCALAR_CONST,
    SCALAR_CONST_BLOCK,
    UNARY_BLOCK,
    UNARY_SCALAR,
    labelled_reduce,
)
from fuseflowc.sim.prims_compute import Reduce, Spacc1
from fuseflowc.sim.tokens import D, show_all, stop
from tests.support.golden import run_pipeline
from tests.support.lower_harness import load_text, run_both

NAN, INF = math.nan, math.inf
SPECIAL = [NAN, INF, -INF, -2.5, -0.0, 0.0, 0.5, 3.0]


def same(a, b) -> bool:
    """Equal as IEEE values: NaN equals NaN, infinities by sign, finite values to 1e-12."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool((np.isnan(a) == np.isnan(b)).all()
                and np.isclose(a, b, rtol=1e-12, atol=0, equal_nan=True).all())


# ---- the simulator's scalar ops are numpy's (the block ops and the reference use numpy) ------

@pytest.mark.parametrize("op", sorted(UNARY_SCALAR))
def test_unary_scalar_ops_match_numpy(op):
    for x in SPECIAL:
        want = UNARY_BLOCK[op](np.array([x]))[0]
        assert same(UNARY_SCALAR[op](x), want), (op, x)


@pytest.mark.parametrize("op", sorted(BINARY_SCALAR))
def test_binary_scalar_ops_match_numpy(op):
    for x in SPECIAL:
        for y in SPECIAL:
            with np.errstate(all="ignore"):
                want = BINARY_BLOCK[op](np.array([x]), np.array([y]))[0]
            assert same(BINARY_SCALAR[op](x, y), want), (op, x, y)


@pytest.mark.parametrize("op", sorted(SCALAR_CONST))
def test_scalar_const_ops_match_numpy(op):
    for x in SPECIAL:
        for c in SPECIAL:
            with np.errstate(all="ignore"):
                want = SCALAR_CONST_BLOCK[op](np.array([x]), c)[0]
            assert same(SCALAR_CONST[op](x, c), want), (op, x, c)


def test_max_min_relu_propagate_nan_and_follow_numpy_on_signed_zeros():
    mx, mn, relu = BINARY_SCALAR["max"], BINARY_SCALAR["min"], UNARY_SCALAR["relu"]
    assert math.isnan(mx(NAN, 0.0)) and math.isnan(mx(0.0, NAN))
    assert math.isnan(mn(NAN, 0.0)) and math.isnan(mn(0.0, NAN))
    assert math.isnan(relu(NAN)) and math.isnan(REDUCE_SCALAR["max"](NAN, 1.0))
    assert math.isnan(REDUCE_SCALAR["max"](1.0, NAN))
    # bit for bit: numpy returns the second operand of equal ones
    for a, b in ((-0.0, 0.0), (0.0, -0.0)):
        assert math.copysign(1, mx(a, b)) == math.copysign(1, float(np.maximum(a, b)))
        assert math.copysign(1, mn(a, b)) == math.copysign(1, float(np.minimum(a, b)))
    assert math.copysign(1, relu(-0.0)) == math.copysign(1, float(np.maximum(-0.0, 0.0)))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True),
       st.floats(allow_nan=True, allow_infinity=True))
def test_max_min_scalar_equal_numpy_bitwise(x, y):
    for op, ref in (("max", np.maximum), ("min", np.minimum)):
        got, want = BINARY_SCALAR[op](x, y), float(ref(x, y))
        assert (math.isnan(got) and math.isnan(want)) or \
            np.float64(got).tobytes() == np.float64(want).tobytes()
    assert (math.isnan(x) and math.isnan(UNARY_SCALAR["relu"](x))) or \
        np.float64(UNARY_SCALAR["relu"](x)).tobytes() == np.float64(np.maximum(x, 0.0)).tobytes()


def test_block_reductions_propagate_nan():
    blocks = [np.array([[1.0, NAN], [2.0, 3.0]]), np.array([[5.0, 0.0], [NAN, -INF]])]
    acc = REDUCE_BLOCK["max"](blocks[0], blocks[1])
    assert same(acc, [[5.0, NAN], [NAN, 3.0]])
    pre, _, _ = labelled_reduce("max", ["i", "j"], ["i"], 2)
    assert same(pre(blocks[0]), [NAN, 3.0])


# ---- reducers on streams -------------------------------------------------------------------

@pytest.mark.parametrize("first", [True, False])
def test_reduce_max_and_sum_propagate_nan_wherever_it_is(first):
    row = [NAN, 1.0] if first else [1.0, NAN]
    toks = row + [stop(0), INF, -INF, stop(0), -INF, -1.0, stop(1), D]
    (out,), _ = run_node(Reduce("r", "max"), [toks], 1, ["val"])
    assert same([x for x in out if x.__class__ is not int], [NAN, INF, -1.0])
    (out,), _ = run_node(Reduce("r", "sum"), [toks], 1, ["val"])
    assert same([x for x in out if x.__class__ is not int], [NAN, NAN, -INF])


def test_spacc1_max_propagates_nan():
    crd = [0, 1, stop(0), 0, 1, stop(1), D]
    val = [NAN, 2.0, stop(0), 1.0, NAN, stop(1), D]
    (c, v), _ = run_node(Spacc1("s", "max"), [crd, val], 2, ["crd", "val"])
    assert show_all(c) == "0 1 S0 D"
    assert same(v[:2], [NAN, NAN])


# ---- programs: the reference evaluator and the simulator agree --------------------------------

def _dense_inputs(program, arrays: dict) -> dict:
    specs = {s.name: s for s in program.specs()}
    return {n: FiberTensor.from_dense(np.asarray(a, float), specs[n].format)
            for n, a in arrays.items()}


def _both(text: str, arrays: dict, sizes=None):
    p = load_text(text)
    outs, ref, _ = run_both(p, sizes or {}, inputs=_dense_inputs(p, arrays))
    assert compare(outs, ref) == []          # what `simulate --check` does
    return {k: v.to_dense() for k, v in outs.items()}, {k: v.to_dense() for k, v in ref.items()}


X = [4.0, -1.0, NAN, INF, -INF, 0.0, 2.0, -3.0]


def test_relu_of_sqrt_of_negative_is_nan_in_both():
    sim, ref = _both("""dim I = 8
        tensor x[I] : dense
        tensor y[I] : dense
        y[i] = relu(sqrt(x[i]))
        """, {"x": X})
    want = [2.0, NAN, NAN, INF, NAN, 0.0, math.sqrt(2.0), NAN]
    assert same(ref["y"], want) and same(sim["y"], want)


def test_max_min_of_nan_either_side_is_nan_in_both():
    z = [0.0, NAN, 1.0, -INF, INF, NAN, -5.0, 0.0]
    sim, ref = _both("""dim I = 8
        tensor x[I] : dense
        tensor z[I] : dense
        tensor a[I] : dense
        tensor b[I] : dense
        tensor c[I] : dense
        tensor d[I] : dense
        tensor e[I] : dense
        a[i] = max(x[i], z[i])
        b[i] = max(z[i], x[i])
        c[i] = min(x[i], z[i])
        d[i] = min(z[i], x[i])
        e[i] = max(x[i], 0)
        """, {"x": X, "z": z})
    for name, fn in (("a", np.maximum), ("b", np.maximum), ("c", np.minimum),
                     ("d", np.minimum)):
        want = fn(X, z) if name in "ac" else fn(z, X)
        assert same(ref[name], want) and same(sim[name], want), name
    assert same(sim["e"], np.maximum(X, 0.0)) and same(ref["e"], np.maximum(X, 0.0))


def test_reductions_over_nan_and_infinities_in_both():
    A = [[NAN, 1.0, 2.0], [1.0, 2.0, NAN], [-INF, -INF, 0.0], [INF, -INF, 0.0], [0.0, 0.0, 0.0]]
    sim, ref = _both("""dim I = 5, J = 3
        tensor A[I, J] : csr
        tensor m[I] : dense
        tensor s[I] : dense
        m[i] = max[j](A[i,j])
        s[i] = sum[j](A[i,j])
        """, {"A": A})
    assert same(ref["m"], [NAN, NAN, -INF, INF, 0.0]) and same(sim["m"], ref["m"])
    assert same(ref["s"], [NAN, NAN, -INF, NAN, 0.0]) and same(sim["s"], ref["s"])


def test_unary_functions_on_infinities_in_both():
    sim, ref = _both("""dim I = 8
        tensor x[I] : dense
        tensor y[I] : dense
        y[i] = exp(x[i]) + sigmoid(x[i]) + tanh(x[i]) - rsqrt(x[i]) * 0 + x[i] / x[i]
        """, {"x": X})
    assert same(sim["y"], ref["y"])
    assert np.isnan(ref["y"]).sum() >= 5       # x/x is NaN at 0, +-inf and NaN


def test_simulate_check_matches_nan_outputs_end_to_end(tmp_path):
    # input files must be finite (docs/data.md): the NaNs come from sqrt of negative entries
    prog = tmp_path / "p.ff"
    prog.write_text("dim I = 6\ntensor x[I] : dense\ntensor y[I] : dense\n"
                    "y[i] = relu(sqrt(x[i])) + max(sqrt(x[i]), 0) + 1 / x[i]\n")
    data = tmp_path / "d"
    data.mkdir()
    x = np.array([4.0, -1.0, 0.0, 1.0, 9.0, -2.0])
    np.save(data / "x.npy", x)
    r = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower | "
                     f"fuseflowc simulate - --data {data} --check -o {tmp_path / 'out'}")
    assert r.exit_code == 0, r.stderr
    assert "check: y match" in r.stderr and "Warning" not in r.stderr
    y = np.load(tmp_path / "out" / "y.npy")
    assert same(y, [4.25, NAN, INF, 3.0, 6 + 1 / 9, NAN])


def test_compare_nan_matches_nan_and_differs_from_a_number():
    fmt = shorthand("dense", 1)
    t = lambda v: FiberTensor.from_dense(np.array(v), fmt)  # noqa: E731
    assert compare({"y": t([NAN, INF, 1.0])}, {"y": t([NAN, INF, 1.0])}) == []
    (msg,) = compare({"y": t([0.0, INF, 2.0])}, {"y": t([NAN, INF, 1.0])})
    assert msg.startswith("y: 2 of 3 entries differ (max abs error 1; 1 NaN or infinite")
    assert "at (0,): expected nan, got 0" in msg
    (msg,) = compare({"y": t([NAN, -INF, 1.0])}, {"y": t([1.0, INF, 1.0])})
    assert msg.startswith("y: 2 of 3 entries differ (2 NaN or infinite against another value)")


def test_estimator_counts_what_the_simulator_counts_when_values_turn_nan(tmp_path):
    # FLOPs and bytes are structural: a NaN computed on the way is a value like any other, so
    # the estimate (which never looks at values) still matches the simulation exactly here.
    from fuseflowc.diagnostics import Source
    from fuseflowc.estimate import DataStats, estimate_module
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.sim.build import Simulator
    prog = tmp_path / "p.ff"
    prog.write_text("dim I = 6\ntensor x[I] : dense\ntensor y[I] : dense\n"
                    "y[i] = relu(sqrt(x[i])) + max(sqrt(x[i]), 0)\n")
    (tmp_path / "d").mkdir()
    np.save(tmp_path / "d" / "x.npy", np.array([4.0, -1.0, 0.0, 1.0, -9.0, -2.0]))
    r = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower")
    module = parse_module(Source("<lowered>", r.stdout))
    stats = DataStats.from_dir(tmp_path / "d", module)
    est = estimate_module(module, stats).total
    res = Simulator(module, stats.fibers, stats.sizes).run()
    assert np.isnan(res.tensors["y"].to_dense()).sum() == 3
    k = res.kernels[0]
    assert est.flops == k.flops == 6 * 5
    assert est.bytes_read == sum(k.bytes_read().values())

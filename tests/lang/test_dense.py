"""`dense(e)` (docs/language.md, "Dense values"): the model's dense values where the pattern
semantics would differ, through the reference evaluator and the compiled, simulated graphs,
against numpy (an independent oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang.load import program_from_source
from fuseflowc.lang.printer import program_str

MLP = """dim B = {b}, F = {f}, H = {h}
tensor X[B, F] : dense
tensor W[F, H] : csr
tensor c[H] : dense
tensor Y[B, H] : dense
Y[b, h] = relu({inner} + c[h])
{fuse}
"""


def _run(tmp_path, text: str, arrays: dict, fused: bool, **options) -> np.ndarray:
    prog = tmp_path / "p.ff"
    prog.write_text(text)
    data = tmp_path / "d"
    data.mkdir(exist_ok=True)
    for name, a in arrays.items():
        np.save(data / f"{name}.npy", a)
    opts = pipeline.CompileOptions(unfused=not fused, **options)
    compiled = pipeline.compile(pipeline.load(str(prog), opts), opts)
    inputs, sizes = pipeline.load_data(compiled.module, str(data))
    result = pipeline.simulate(compiled.module, inputs, sizes)
    ref = pipeline.reference(compiled.program, str(data), sizes)
    assert pipeline.check(compiled.module, result, ref) == []
    got = result.tensors["Y"].to_dense()
    assert np.array_equal(got, ref["Y"].to_dense())
    return got


@settings(max_examples=8, deadline=None)
@given(b=st.integers(1, 4), f=st.integers(1, 5), h=st.integers(1, 5), seed=st.integers(0, 99),
       fused=st.booleans())
def test_a_bias_on_a_pruned_neuron_is_the_dense_value(tmp_path_factory, b, f, h, seed, fused):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((b, f))
    w = rng.standard_normal((f, h)) * (rng.random((f, h)) < 0.4)
    w[:, 0] = 0.0  # a pruned neuron
    c = rng.standard_normal(h)
    text = MLP.format(b=b, f=f, h=h, inner="dense(sum[f](X[b,f] * W[f,h]))",
                      fuse="fuse layer: Y")
    got = _run(tmp_path_factory.mktemp("d"), text, {"X": x, "W": w, "c": c}, fused)
    np.testing.assert_allclose(got, np.maximum(x @ w + c, 0), rtol=1e-12, atol=1e-12)


def test_without_dense_the_pruned_neuron_has_no_bias(tmp_path):
    """The pattern semantics the operator exists for: a broadcast creates no coordinate."""
    x = np.ones((2, 2))
    w = np.array([[0.0, 1.0], [0.0, 2.0]])
    c = np.array([0.5, 0.5])
    plain = MLP.format(b=2, f=2, h=2, inner="sum[f](X[b,f] * W[f,h])", fuse="")
    dense = MLP.format(b=2, f=2, h=2, inner="dense(sum[f](X[b,f] * W[f,h]))", fuse="")
    assert _run(tmp_path, plain, {"X": x, "W": w, "c": c}, False)[:, 0].tolist() == [0, 0]
    assert _run(tmp_path, dense, {"X": x, "W": w, "c": c}, False)[:, 0].tolist() == [0.5, 0.5]


def test_dense_of_a_sparse_input_under_exp(tmp_path):
    text = """dim I = 3, J = 4
tensor A[I, J] : csr
tensor Y[I, J] : dense
Y[i, j] = exp(dense(A[i, j]))
"""
    a = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, -1.0]])
    got = _run(tmp_path, text, {"A": a}, False)
    np.testing.assert_allclose(got, np.exp(a), rtol=1e-15)


def _check(text: str) -> str:
    return program_str(program_from_source(Source("t.ff", text)))


def test_dense_becomes_a_dense_intermediate_in_the_statements_region():
    out = _check(MLP.format(b=2, f=3, h=4, inner="dense(X[b,f] * W[f,h])",
                            fuse="fuse layer: Y\norder Y: b -> h -> f"))
    assert "tensor Y__dense1[B, H] : dense" in out
    assert "Y__dense1[b,h] = sum[f](X[b,f] * W[f,h])" in out
    assert "fuse layer: Y__dense1, Y" in out
    assert "order Y__dense1: b -> h -> f" in out and "order Y: b -> h\n" in out


def test_dense_in_a_loop_body_is_local_to_the_iteration(tmp_path):
    text = """dim L = 2, N = 3
tensor W[L; N, N] : csr
tensor X[N] : dense
tensor c[N] : dense
tensor Y[N] : dense
Y = fold l in L from X {
  Y[i] = dense(sum[j](W[l; i, j] * Y[j])) + c[i]
}
"""
    out = _check(text)
    assert "H__dense1" not in out and "Y__dense1__0[i] = sum[j](W__0[i,j] * X[j])" in out
    assert "Y__0[i] = Y__dense1__0[i] + c[i]" in out
    rng = np.random.default_rng(0)
    w = [rng.standard_normal((3, 3)) * (rng.random((3, 3)) < 0.5) for _ in range(2)]
    for m in w:
        m[1, :] = 0  # a row with no entry: the bias alone
    x, c = rng.standard_normal(3), rng.standard_normal(3)
    got = _run(tmp_path, text, {"W__0": w[0], "W__1": w[1], "X": x, "c": c}, False)
    np.testing.assert_allclose(got, w[1] @ (w[0] @ x + c) + c, rtol=1e-12)


@pytest.mark.parametrize("text, message", [
    ("dim I = 2\ntensor A[I] : sparse\ntensor y[I] : dense\ny[i] = dense(A[i], A[i])\n",
     "dense takes 1 argument, not 2"),
    ("dim I = 2\ntensor A[I] : sparse\ntensor y[I] : dense\ny[i] = A[i] + dense(3)\n",
     "dense(...) needs an index"),
])
def test_dense_errors_are_located(text, message):
    with pytest.raises(UserError) as e:
        _check(text)
    assert message in e.value.format()
    assert "t.ff:4:" in e.value.format()


def test_dense_under_a_reduction_compiles(tmp_path):
    """A regression: the intermediate's access had no index locations, so the checker bound no
    dims for its indices and fuse failed with a KeyError."""
    text = """dim I = 4, J = 5
tensor W[I, J] : csr
tensor Y[I] : dense
Y[i] = sum[k](exp(dense(W[i, k]))) / 5
"""
    w = np.zeros((4, 5))
    w[0, 1], w[3, 4] = 2.0, -1.0
    got = _run(tmp_path, text, {"W": w}, False)
    np.testing.assert_allclose(got, np.exp(w).sum(axis=1) / 5, rtol=1e-14)


def test_a_program_without_a_body_is_hoisted_too():
    """Programs built in code (statements, no parsed body) keep their statements."""
    from dataclasses import replace

    from fuseflowc.lang.checker import check
    from fuseflowc.lang.parser import parse_program
    p = parse_program(Source("t.ff", MLP.format(b=2, f=3, h=4, inner="dense(X[b,f] * W[f,h])",
                                                fuse="")))
    out = check(replace(p, body=[]))
    assert [s.name for s in out.statements] == ["Y__dense1", "Y"]

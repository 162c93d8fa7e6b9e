"""evaluate(..., keep=...): only the wanted tensors are returned, with the values a full
evaluation gives, and every other intermediate is let go after its last reader (what keeps the
paper-size checks in memory)."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import Source
from fuseflowc.formats import shorthand
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.reference import evaluate
from fuseflowc.reference.evaluate import evaluate_statements

TEXT = """dim N = 6, F = 5, H = 3
tensor A[N, N] : csr
tensor X[N, F] : csr
tensor W[F, H] : dense
tensor AX[N, F] : csr
tensor Z[N, H] : dense
tensor H1[N, H] : dense
tensor Y[N, H] : dense
AX[i,f] = A[i,k] * X[k,f]
Z[i,h] = AX[i,f] * W[f,h]
H1[i,h] = relu(Z[i,h])
Y[i,h] = A[i,k] * H1[k,h] + Z[i,h]
"""


def _inputs(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    sparse = lambda shape: np.where(rng.random(shape) < 0.4, rng.uniform(-1, 1, shape), 0.0)
    return {"A": FiberTensor.from_dense(sparse((6, 6)), shorthand("csr", 2)),
            "X": FiberTensor.from_dense(sparse((6, 5)), shorthand("csr", 2)),
            "W": FiberTensor.from_dense(rng.uniform(-1, 1, (5, 3)), shorthand("dense", 2))}


def test_keep_returns_the_wanted_tensors_with_the_full_evaluations_values():
    p = check(parse_program(Source("<test>", TEXT)))
    for seed in range(5):
        inputs = _inputs(seed)
        full = evaluate(p, inputs)
        assert set(full) == {"AX", "Z", "H1", "Y"}
        kept = evaluate(p, inputs, keep={"Y", "H1"})
        assert set(kept) == {"Y", "H1"}
        for name in kept:
            assert np.array_equal(kept[name].to_dense(), full[name].to_dense())


def test_keep_lets_intermediates_go_after_their_last_reader():
    p = check(parse_program(Source("<test>", TEXT)))
    refs = {}
    gen = evaluate_statements(p, _inputs(1), keep={"Y"})
    for r in gen:
        refs[r.name] = weakref.ref(r.tensor)
        del r
        gc.collect()
        if len(refs) >= 3:   # AX is read by Z only: let go before the statement after Z
            assert refs["AX"]() is None
    # Z is read by Y (the last statement): alive until then, gone after the generator ends
    gc.collect()
    assert refs["AX"]() is None and refs["H1"]() is None and refs["Z"]() is None
    # without keep everything stays (the generator's callers may read earlier results)
    alive = [r.tensor for r in evaluate_statements(p, _inputs(1))]
    assert len(alive) == 4

"""Shared streams (`fuse --share`, fuseflowc.lower.shared): an intermediate read by several
statements of its region is computed once in the graph and its stream fanned out to every reader,
the reader that waits for the row's reduction holding the row in its FIFO. Random row-reduction-
then-reuse programs (layer-norm- and softmax-like) are simulated on both engines and checked
against the reference evaluator, values and stored patterns; each stays one graph that never
stores the shared intermediate."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import Source
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.printer import fused_str
from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.differential import run
from tests.support.lower_harness import check_both_engines, load_text

#: (format of the input, the shared intermediate T from A, the row reduction R from T, the
#: re-read y from T and R). T is read by R and by y: a stream the reduction consumes while y
#: waits for R's value of the row.
SHAPES = {
    "layernorm": ("A[i,j] - sum[k](A[i,k]) * 0.5", "sum[j](T[i,j] * T[i,j])",
                  "T[i,j] * rsqrt(R[i] + 1.0)"),
    "softmax": ("exp(A[i,j])", "sum[j](T[i,j])", "T[i,j] / R[i]"),
    "maxshift": ("A[i,j] * 2.0", "max[j](T[i,j])", "T[i,j] - R[i]"),
    "scaled": ("A[i,j] + 1.0", "sum[j](T[i,j])", "T[i,j] * R[i]"),
}


def one_graph(shape: str, fmt: str, t_format: str) -> bool:
    """Whether T can be one stream. A dense T: when A is dense (T's stream has every
    coordinate, as stored); from a sparse A it would store zeros its stream lacks. A sparse T:
    a reader joining T's rows with R's (sparse: absent for a row of T its format lets be
    empty) iterates only some of the stream's rows, unless it is a union (T - R)."""
    return fmt == "dense" if t_format == "dense" else shape == "maxshift"


def program(shape: str, t_format: str, fmt: str = "dense"):
    t, r, y = SHAPES[shape]
    # (R is compressed beside a sparse T: an empty row of T has no R, as computed; a dense R
    # would store 0 there, which the re-read can tell from nothing, so it would be stored)
    return load_text(f"""
dim I, J
tensor A[I, J] : {fmt}
tensor T[I, J] : {t_format}
tensor R[I] : {"dense" if t_format == "dense" else "sparse"}
tensor y[I, J] : {t_format}
T[i,j] = {t}
R[i] = {r}
y[i,j] = {y}
fuse all: T, R, y
""")


def compile_shared(p):
    options = pipeline.CompileOptions(share=True, inline_widened=True, reparse_fused=True,
                                      reparse_module=True)
    return pipeline.compile(p, options)


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(sorted(SHAPES)), fmt=st.sampled_from(["dense", "csr"]),
       t_format=st.sampled_from(["dense", "csr"]), rows=st.integers(1, 4),
       cols=st.integers(1, 7), seed=st.integers(0, 2 ** 16),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]))
def test_row_reduction_then_reuse(shape, fmt, t_format, rows, cols, seed, density):
    """Correct on 1 row, 1 column and empty rows; one graph that never stores T wherever T
    can be one stream (`one_graph`), else T stored and read back by a second graph."""
    p = program(shape, t_format, fmt)
    module = compile_shared(p).module
    stored = "T" in {t.name for t in module.tensors}
    if one_graph(shape, fmt, t_format):
        assert [g.name for g in module.graphs] == ["all"] and not stored
    else:
        assert len(module.graphs) == 2 and stored
    check_both_engines(p, module, {"I": rows, "J": cols}, seed, density)


def test_the_fused_ir_says_shared_and_orders_rows_first():
    """The readers' views are `shared`, and the `shared` POG edges put the reduction's index
    outside the re-read's column index (its loops inside the stream's rows)."""
    fused = compile_shared(program("layernorm", "dense")).fused
    (r,) = fused.regions
    kinds = {v.tensor: v.kind for v in r.views}
    assert kinds["T"] == "shared"
    edges = [(e.src, e.dst) for e in r.edges if e.kind == "shared"]
    assert edges
    pos = {x: k for k, x in enumerate(r.order)}
    assert all(pos[a] < pos[b] for a, b in edges)
    text = fused_str(fused)   # printed, parsed back (verified) and printed the same
    assert ": shared by T" in text and " shared e0 (" in text
    assert fused_str(parse_fused(Source("<fused>", text))) == text


def test_a_reader_iterating_around_the_rows_stores_the_tensor():
    """T read inside a loop over k it lacks (each row read again per k): no shared stream can
    serve it, so fuse stores T and says why (a located note)."""
    p = load_text("""
dim I, J, K
tensor A[I, J] : dense
tensor B[J, K] : dense
tensor T[I, J] : dense
tensor R[I] : dense
tensor y[I, K] : dense
T[i,j] = A[i,j] * 2.0
R[i] = sum[j](T[i,j])
y[i,k] = sum[j](T[i,j] * B[j,k]) * R[i]
fuse all: T, R, y
order y: i -> k -> j
""")
    compiled = compile_shared(p)
    why = [text for r in compiled.fused.regions for text, _ in r.split_why]
    assert any(text.startswith("T is materialized (--share): it cannot be one stream")
               for text in why), why
    assert len(compiled.module.graphs) == 2
    check_both_engines(p, compiled.module, {"I": 3, "J": 4, "K": 2}, 1, 0.7)


@pytest.mark.parametrize("depth,ok", [("inf", True), ("9", True), ("8", False)])
def test_the_waiting_reader_needs_a_row_and_two_tokens(depth, ok):
    """A row of 7 columns: depth 9 (row + 2) runs, 8 deadlocks and the error says why."""
    p = program("scaled", "dense")
    module = compile_shared(p).module
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    sizes = {"I": 3, "J": 7}
    inputs = pipeline.as_declared(module, random_inputs(specs, sizes, 0, 1.0))
    for engine in ("python", "fast") if engine_fast.available() else ("python",):
        out = run(module, inputs, dict(sizes), Arch.load(depth=depth), engine)
        if ok:
            assert out.error is None, out.error
        else:
            notes = [d.message for d in out.error.diagnostics]
            assert any("needs room for the longest row plus 2 tokens" in n for n in notes)

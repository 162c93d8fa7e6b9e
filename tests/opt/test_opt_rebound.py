"""Rebound graphs optimized and verified through their templates (samml.rebound): a reused
loop's later iterations are not rewritten by the graph passes nor checked again, they are made
again from the rewritten template. The oracle is the same module with no graph trusted to be
its template rebound (every graph rewritten and verified on its own): the same SAMML text, and
the same errors when a declaration or a pass breaks a copy."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format
from fuseflowc.fuse.algorithm import fuse_program
from fuseflowc.lower.driver import lower_fused
from fuseflowc.opt.pipeline import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from fuseflowc.samml import rebound
from fuseflowc.samml.ir import Schedule
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify
from tests.fuse.test_fuse_rebind import READS, loop_program
from tests.support.lower_harness import load_text

REUSE_MODELS = ["ir_examples/models/gcn_deep/gcn_deep_reuse.ff",
                "ir_examples/models/gpt3_layers/gpt3_layers_reuse.ff",
                "ir_examples/models/rnn_stacked/rnn_stacked_wavefront.ff"]

PIPELINES = [DEFAULT_PIPELINE, "cleanup", "locate,cse", "dce,locate", "cse{}",
             "locate,schedule,cleanup,dce{decls=false}", ""]


def both_ways(fused, passes: str) -> tuple[str, str, int]:
    """(SAMML compiled as `lower` does, SAMML with no graph trusted, how many were trusted)."""
    fast = pipeline.compile(fused, pipeline.CompileOptions(passes=passes)).module
    trusted = len(rebound.trusted(lower_fused(fused)[0]))
    with mock.patch.object(rebound, "trusted", lambda m: {}):
        full = pipeline.compile(fused, pipeline.CompileOptions(passes=passes)).module
    return print_module(fast), print_module(full), trusted


@pytest.mark.parametrize("path", REUSE_MODELS)
def test_every_reuse_model_compiles_byte_identical(path):
    fused = pipeline.fuse(pipeline.load_program(path))
    fast, full, trusted = both_ways(fused, DEFAULT_PIPELINE)
    assert trusted > 0           # the fast path is taken
    assert fast == full


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["fold", "scan", "map"]), st.integers(2, 4),
       st.sampled_from(sorted(READS)), st.sampled_from(["dense", "csr", "dcsr"]), st.booleans(),
       st.booleans(), st.sampled_from(["relu", "tanh", ""]), st.sampled_from(PIPELINES))
def test_loop_programs_compile_as_with_every_graph_rewritten(kind, n, read, fmt, fused, order,
                                                             act, passes):
    program = load_text(loop_program(kind, n, read, fmt, fused, order, act))
    fast, full, _ = both_ways(fuse_program(program), passes)
    assert fast == full


def _module(path="ir_examples/models/gcn_deep/gcn_deep_reuse.ff"):
    return lower_fused(pipeline.fuse(pipeline.load_program(path)))[0]


def _errors(m, rebinds) -> str | None:
    try:
        verify(m, rebinds)
    except UserError as e:
        return e.format()
    return None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_changed_declaration_is_reported_as_without_the_templates(data):
    """Any tensor's declaration changed (another format, order or role): the verifier reports
    exactly what it reports checking every graph in full."""
    m = _module()
    trusted = rebound.trusted(m)
    assert trusted
    t = data.draw(st.sampled_from([t for t in m.tensors]))
    change = data.draw(st.sampled_from(["format", "order", "role"]))
    if change == "format":
        n = len(t.dims)
        t.format = Format(tuple("compressed" if k == n - 1 else "dense" for k in range(n))
                          if t.format.levels[-1] == "dense" else ("dense",) * n,
                          tuple(range(n)), False)
    elif change == "order":
        t.dims = tuple(t.dims) + ("N",)
        t.format = Format(t.format.levels + ("dense",), tuple(range(len(t.dims))), False)
    else:
        t.role = data.draw(st.sampled_from(["input", "temp", "output"]))
    assert _errors(m, trusted) == _errors(m, {})


def test_a_copy_written_twice_is_reported_on_the_copy():
    m = _module()
    name, (t, binds) = next(iter(rebound.trusted(m).items()))
    written = next(n.tensor for n in t.nodes if n.TRAITS.refs == "writer")
    m.graphs.append(m.graph(name).clone())          # a second writer of the copy's tensor
    m.graphs[-1].name = "again"
    msg = _errors(m, rebound.trusted(m))
    assert msg == _errors(m, {})
    assert f"tensor {binds.get(written, written)} is written by graph {name} and again by graph again" in msg


def test_copies_not_to_trust():
    m = _module()
    good = rebound.trusted(m)
    name, (t, binds) = next(iter(good.items()))
    two = dict(binds)
    a, b = sorted({n.tensor for n in t.nodes if isinstance(getattr(n, "tensor", None), str)})[:2]
    two[a] = two.get(b, b)                           # two tensors bound to one
    m.rebinds[name] = (t, two)
    assert name not in rebound.trusted(m)
    m.rebinds[name] = (t, {**binds, a: "not.a.name"})
    assert name not in rebound.trusted(m)
    m.rebinds[name] = (t, binds)
    m.schedules.append(Schedule("parallelize", graph=t.name, index="u0", factor=2))
    assert not set(rebound.trusted(m)) & {n for n, (x, _) in good.items() if x is t}


def test_a_pass_that_may_change_any_graph_gets_every_copy_made():
    """parallelize is no GraphPass: the copies are made before it, and it sees (and changes)
    them as they would be."""
    fused = pipeline.fuse(pipeline.load_program(REUSE_MODELS[0]))
    fast, full, _ = both_ways(fused, "cleanup,parallelize{index=u0,factor=2},cleanup")
    assert fast == full


def test_after_sees_every_graph():
    m = _module()
    seen = []
    run_pipeline(m, parse_pipeline("cleanup"),
                 after=lambda p, mod: seen.append(print_module(mod)))
    with mock.patch.object(rebound, "trusted", lambda m: {}):
        m2 = _module()
        run_pipeline(m2, parse_pipeline("cleanup"))
    assert seen == [print_module(m2)]

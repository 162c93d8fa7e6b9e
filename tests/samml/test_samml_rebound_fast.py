"""The fast paths a reused loop's graphs take (Graph.clone, Graph.is_rebound_of, pending copies, the
verifier's memo of clean structures) change no result: copies are independent, a changed copy
prints in full, and every graph's errors are still reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.samml.parser import parse_module
from fuseflowc.samml.printer import print_graph, print_module
from fuseflowc.samml.verify import verify

SPMV = Path("ir_examples/samml/spmv_row.samml").read_text()
BODY = SPMV[SPMV.index("graph spmv_row {"):]
HEAD = ('tensor A[N, M]: csr input\ntensor x[M]: dense input\ntensor y[N]: dense output\n'
        'tensor A2[N, M]: csr input\ntensor y2[N]: dense output\n')


def two_graphs(second: str = "A2", out: str = "y2") -> str:
    other = BODY.replace("graph spmv_row", "graph again").replace("tensor = A}", "tensor = "
                                                                  + second + "}")
    other = other.replace("tensor = A,", f"tensor = {second},").replace("tensor = y", "tensor = "
                                                                        + out)
    return HEAD + BODY + other


def test_a_clone_is_independent_and_prints_alike():
    g = parse_module(Source("<m>", SPMV)).graphs[0]
    c = g.clone()
    assert print_graph(c) == print_graph(g)
    assert not {id(n) for n in c.nodes} & {id(n) for n in g.nodes}
    assert not {id(s) for n in c.nodes for s in n.outputs} & \
        {id(s) for n in g.nodes for s in n.outputs}
    c.nodes[0].tensor = "x"
    assert g.nodes[0].tensor == "A"
    r = g.rebound("h", {"A": "A2"})
    assert r.is_rebound_of(g, {"A": "A2"}) and not r.is_rebound_of(g, {})
    r.nodes[-1].tensor = "y2"
    assert not r.is_rebound_of(g, {"A": "A2"})


def test_a_changed_reuse_prints_in_full():
    text = HEAD + BODY + "\ngraph again = spmv_row {A = A2, y = y2}\n"
    m = parse_module(Source("<m>", text))
    assert "graph again = spmv_row {A = A2, y = y2}" in print_module(m)
    alu = next(n for n in m.graphs[1].nodes if n.KIND == "alu")
    alu.op = "add"      # the reuse is no longer its template rebound
    printed = print_module(m)
    assert "graph again = spmv_row" not in printed and "graph again {" in printed


def test_errors_of_a_graph_alike_to_a_clean_one_are_reported():
    verify(parse_module(Source("<m>", two_graphs())))          # clean, both graphs
    with pytest.raises(UserError) as e:
        verify(parse_module(Source("<m>", two_graphs(second="B"))))
    assert "tensor B is not declared" in e.value.format()
    with pytest.raises(UserError) as e:                           # a tensor error, twice
        verify(parse_module(Source("<m>", two_graphs(out="y"))))
    assert "tensor y is written by graph spmv_row and again by graph again" \
        in e.value.format()
    bad = two_graphs().replace("{op = mul}", "{op = nosuch}")   # a structural error, twice
    with pytest.raises(UserError) as e:
        verify(parse_module(Source("<m>", bad)))
    assert e.value.format().count("nosuch") >= 2


def test_a_pending_copy_is_its_template_as_it_was_when_made():
    g = parse_module(Source("<m>", SPMV)).graphs[0]
    eager = g.rebound("h", {"A": "A2"})
    snap = g.snapshot()
    c, d = snap.rebound_later("h", {"A": "A2"}), snap.rebound_later("k", {"y": "y2"})
    next(n for n in g.nodes if n.KIND == "alu").op = "add"   # the template changes after
    assert c.pending() is not None
    assert c.tensor_names() == eager.tensor_names()          # read without making the nodes
    assert c.pending() is not None
    assert print_graph(c) == print_graph(eager) and c.pending() is None
    assert "op = mul" in print_graph(d) and "tensor = y2" in print_graph(d)
    assert not {id(n) for n in c.nodes} & {id(n) for n in d.nodes}   # copies independent


def _lowered_reuse():
    from fuseflowc import pipeline
    from fuseflowc.lower.driver import lower_fused
    fp = pipeline.fuse(pipeline.load_program("ir_examples/models/gcn_deep/gcn_deep_reuse.ff"))
    return lower_fused(fp)[0]


def test_lower_and_print_make_no_copy_of_a_reused_layer():
    from fuseflowc.opt.pipeline import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
    from fuseflowc.samml.rebound import trusted
    m = _lowered_reuse()
    copies = set(trusted(m))
    assert copies
    verify(m, trusted(m))
    run_pipeline(m, parse_pipeline(DEFAULT_PIPELINE))
    text = print_module(m)
    assert all(g.pending() is not None for g in m.graphs if g.name in copies)
    assert all(f"graph {g.name} = " in text for g in m.graphs if g.name in copies)


def test_a_pending_copy_whose_template_changed_prints_in_full():
    """The oracle: the same module with every copy made before the template changes."""
    m, made = _lowered_reuse(), _lowered_reuse()
    for g in made.graphs:
        g.nodes   # noqa: B018 (made now)
    for mod in (m, made):
        t = next(g for g in mod.graphs if any(c.template == g.name for c in mod.graphs))
        next(n for n in t.nodes if n.KIND == "alu").op = "sub"
    assert print_module(m) == print_module(made)
    assert any(g.pending() is None and g.template for g in m.graphs)  # (printed in full)

"""The artifact's GNN and SAE programs (ir_examples/bench/artifact/programs), graph by graph
(issue 25): each fused layer of the partial fusions is one graph, in our order 0 and in the
paper's order, plain and with `--share` (GCN's layer 2 was 3 graphs while the softmax's row max
and sum were stored); where lowering still splits a region (the full fusions with `--share`),
`lower` says which tensor it stores and why, one note per graph of its own. Every variant
checks against the reference evaluator on both engines, at tiny sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc import pipeline
from fuseflowc.lang.load import load_program
from tests.support.lower_harness import check_both_engines

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "ir_examples/bench/artifact/programs"
SIZES = {"gcn": {"N": 5, "F": 3, "C": 3, "H": 16}, "graphsage": {"N": 5, "F": 3, "C": 3, "H": 16},
         "sae": {"Bt": 2, "P": 4, "D": 3}}
DENSITY = {"A": 0.4, "W1": 0.5, "W2": 0.5, "Ws1": 0.5, "Wn1": 0.5, "Ws2": 0.5, "Wn2": 0.5}


def _compile(path: Path, share: bool, order):
    options = pipeline.CompileOptions(inline_widened=True, share=share, order=order,
                                      reparse_fused=True)  # (module.notes: not printed)
    return pipeline.compile(load_program(str(path)), options).module


@pytest.mark.parametrize("model", sorted(SIZES))
@pytest.mark.parametrize("share, order", [(False, None), (False, "paper"), (True, "paper")])
def test_each_fused_layer_is_one_graph(model, share, order):
    p = load_program(str(PROGRAMS / f"{model}_art_partial.ff"))
    module = _compile(PROGRAMS / f"{model}_art_partial.ff", share, order)
    assert [g.name for g in module.graphs] == [r.name for r in p.regions()]
    assert not module.notes
    check_both_engines(p, module, SIZES[model], 2, DENSITY)


@pytest.mark.parametrize("model, stored", [("gcn", ["Z2"]), ("graphsage", ["H1", "N2"])])
def test_a_split_full_fusion_says_which_tensor_and_why(model, stored):
    """--share --inline-widened, our order 0: the region is one graph plus one per stored
    intermediate, and each of those has a note naming it, the region and the reason."""
    path = PROGRAMS / f"{model}_art_full.ff"
    module = _compile(path, True, None)
    assert [g.name for g in module.graphs] == [f"{model}_{t}" for t in stored] + [model]
    assert len(module.notes) == len(stored)
    for t, note in zip(stored, module.notes):
        assert note.startswith(f"{t} is stored and read back by a graph of its own "
                               f"({model}_{t}), splitting region {model}: "), note
    assert "no input vector stored dense over N can widen it" in module.notes[-1]
    if model == "graphsage":
        assert "N2, stored by a graph of its own, reads it" in module.notes[0]
    check_both_engines(load_program(str(path)), module, SIZES[model], 2, DENSITY)


def test_a_reduction_the_order_cannot_build_is_stored():
    """GCN's full fusion, --inline-widened, our order 0: the order iterates the classes c
    inside AX2's reduction over the neighbours, between AX2's own indices, where AX2 has no
    coordinates for c and no product can go into the sum (AX2 reaches the softmax's row max).
    It stopped lowering (since the row statistics stay in the stream); AX2 is now computed by
    a graph of its own, in its own order, read back, and a note says so."""
    path = PROGRAMS / "gcn_art_full.ff"
    module = _compile(path, False, None)
    assert [g.name for g in module.graphs] == ["gcn_AX2", "gcn"]
    assert module.notes == [
        "AX2 is stored and read back by a graph of its own (gcn_AX2), splitting region gcn: "
        "the region's order iterates c inside its reduction over u7, between its own "
        "indices, where it has no coordinates for c"]
    check_both_engines(load_program(str(path)), module, SIZES["gcn"], 2, DENSITY)

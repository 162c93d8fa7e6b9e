"""GPT-3 fused as the FuseFlow artifact fuses it (issue 25): regions split where the heads are
split and merged, each one graph with `fuse --share --inline-widened`. The decoder boundary
(ir_examples/bench/artifact/programs/gpt3_art_boundary.ff: the post block fused with the next
decoder's layer norm 1 and Q, K, V projections) is one graph once Qn, Kn, Vn are stored token
first, as the artifact's [1, S, E] projections; stored head first, `ln1n` would be read inside
the projections' head loops, and `fuse` says so, naming it. gpt3_mini's full program (one
decoder: pre | attn | post) is one graph per region. Tiny sizes, both engines bit for bit, the
reference evaluator's values (tests.lower.test_shared_streams)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc import pipeline
from fuseflowc.lang.load import load_program
from tests.support.golden import run_cli
from tests.support.lower_harness import check_both_engines, load_text

ROOT = Path(__file__).resolve().parents[2]
BOUNDARY = ROOT / "ir_examples/bench/artifact/programs/gpt3_art_boundary.ff"
SIZES = {"S": 4, "E": 4, "NH": 2, "DH": 2, "FF": 8}
#: the boundary's intermediates: none is stored when the region is one graph
INTERMEDIATES = {"Om", "At", "a", "mu2", "xc2", "var2", "rs2", "xn2", "ln2", "F1m", "F1", "G",
                 "F2m", "F2", "y", "mu1n", "xc1n", "var1n", "rs1n", "xn1n", "ln1n", "Qmn", "Kmn",
                 "Vmn"}


def compile_shared(p, free: bool):
    options = pipeline.CompileOptions(share=True, inline_widened=True, free_input_order=free,
                                      reparse_fused=True, reparse_module=True)
    return pipeline.compile(p, options).module


def fused_graphs(module) -> list[str]:
    """The graphs that compute, without the permuted copies of inputs."""
    return [g.name for g in module.graphs if not g.name.startswith("permute")]


@pytest.mark.parametrize("free", [False, True])
def test_the_decoder_boundary_is_one_graph(free):
    p = load_program(str(BOUNDARY))
    module = compile_shared(p, free)
    assert fused_graphs(module) == ["boundary"]
    assert not {t.name for t in module.tensors} & INTERMEDIATES
    check_both_engines(p, module, SIZES, 5, 1.0)


def test_head_first_projections_split_the_boundary_and_fuse_names_ln1n(tmp_path):
    """The layout before: Qn, Kn, Vn head first. `fuse` stores ln1n and says which tensor and
    why; the two graphs still compute the right values."""
    text = BOUNDARY.read_text()
    for t in ("Qn", "Kn", "Vn"):
        text = text.replace(f"tensor {t}[NH, S, DH]   : (dense, dense, dense) order (1, 0, 2)",
                            f"tensor {t}[NH, S, DH]   : dense")
    assert text.count("order (1, 0, 2)") == 0
    path = tmp_path / "boundary_head_first.ff"
    path.write_text(text)
    r = run_cli(["fuse", str(path), "--share", "--inline-widened", "--free-input-order"])
    assert r.exit_code == 0, r.stderr
    assert "note: fusion region boundary is split into 2 graphs: ln1n must be stored" in r.stderr
    assert "note: ln1n is materialized (--share): it cannot be one stream fanned out to its " \
        "readers: a reader would iterate it inside its own loops" in r.stderr
    p = load_text(text)
    module = compile_shared(p, True)
    assert len(fused_graphs(module)) == 2 and "ln1n" in {t.name for t in module.tensors}
    check_both_engines(p, module, SIZES, 6, 1.0)


@pytest.mark.parametrize("free", [False, True])
def test_gpt3_mini_full_is_one_graph_per_region(free):
    path = ROOT / "ir_examples/models/gpt3_mini/gpt3_mini_full.ff"
    p = load_program(str(path))
    module = compile_shared(p, free)
    assert fused_graphs(module) == ["pre", "attn", "post"]
    check_both_engines(p, module, SIZES, 7, {"M": 0.5})

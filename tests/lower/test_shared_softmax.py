"""Softmax attention in one graph (`fuse --share --inline-widened`): the row max and the row
sum, declared dense, are never widened nor stored (their stored zeros are unseen: `S - mx` is a
broadcast union, `E / den` reads den only where the row it sums has entries), and den's
reduction emits every row (explicit 0 for an empty one) so that the shared Ex stream's rows
all reach the re-read. Random masked softmax-then-matmul programs, with or without a head
dimension, 1 row / 1 column / empty rows / fully masked data: one graph, both engines bit for
bit, the reference evaluator's values and stored patterns (tests.lower.test_shared_streams)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.lang.load import load_program
from tests.lower.test_shared_streams import check_both_engines
from tests.support.lower_harness import load_text

ROOT = Path(__file__).resolve().parents[2]

#: how the masked scores are made: from a product under the mask (GPT-3's), or a sparse input
SCORES = {
    "mask": ("tensor Qi[{H}I, D] : dense\ntensor Ki[{H}J, D] : dense\ntensor M[I, J] : csr",
             "mask(Qi[{h}i,d] * Ki[{h}j,d], M[i,j]) * 0.25"),
    "input": ("tensor Si[{H}I, J] : {sparse}", "Si[{h}i,j] * 0.25"),
}


def softmax_program(scores: str, heads: bool, shift: bool):
    """Sc masked scores, mx row max, Sh = Sc - mx (or Sc when not `shift`), Ex = exp(Sh),
    den row sum, P = Ex / den, O = P V: all fused, the row statistics declared dense."""
    H, h = ("H, ", "h,") if heads else ("", "")
    sparse = "(dense, dense, compressed)" if heads else "csr"
    decls, expr = SCORES[scores]
    decls = decls.format(H=H, sparse=sparse)
    sh = f"Sc[{h}i,j] - mx[{h}i]" if shift else f"Sc[{h}i,j] * 1.0"
    return load_text(f"""
dim H, I, J, D
{decls}
tensor V[{H}J, D] : dense
tensor Sc[{H}I, J] : {sparse}
{f"tensor mx[{H}I] : dense" if shift else ""}
tensor Sh[{H}I, J] : {sparse}
tensor Ex[{H}I, J] : {sparse}
tensor den[{H}I] : dense
tensor P[{H}I, J] : {sparse}
tensor O[{H}I, D] : dense
Sc[{h}i,j] = {expr.format(h=h)}
{f"mx[{h}i] = max[j](Sc[{h}i,j])" if shift else ""}
Sh[{h}i,j] = {sh}
Ex[{h}i,j] = exp(Sh[{h}i,j])
den[{h}i] = sum[j](Ex[{h}i,j])
P[{h}i,j] = Ex[{h}i,j] / den[{h}i]
O[{h}i,d] = P[{h}i,j] * V[{h}j,d]
fuse attn: Sc, {"mx, " if shift else ""}Sh, Ex, den, P, O
""")


def compile_attention(p):
    options = pipeline.CompileOptions(share=True, inline_widened=True, free_input_order=True,
                                      reparse_fused=True, reparse_module=True)
    return pipeline.compile(p, options).module


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scores=st.sampled_from(sorted(SCORES)), heads=st.booleans(), shift=st.booleans(),
       h=st.integers(1, 2), rows=st.integers(1, 4), cols=st.integers(1, 5),
       d=st.integers(1, 3), seed=st.integers(0, 2 ** 16),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]))
def test_masked_softmax_then_matmul_is_one_graph(scores, heads, shift, h, rows, cols, d, seed,
                                                 density):
    """One graph storing none of the fused intermediates; correct on 1 row, 1 column, empty
    (masked) rows and a mask with no entry at all."""
    p = softmax_program(scores, heads, shift)
    module = compile_attention(p)
    assert [g.name for g in module.graphs] == ["attn"]
    stored = {t.name for t in module.tensors} & {"Sc", "mx", "Sh", "Ex", "den", "P"}
    assert not stored
    sizes = {"H": h, "I": rows, "J": cols, "D": d}
    check_both_engines(p, module, sizes, seed, {"M": density, "Si": density})


def test_gpt3_mini_attention_is_one_graph_and_the_full_layer_lowers():
    """gpt3_mini (tiny sizes): the partial variant's attention region is one graph, and the
    whole layer in one region (gpt3_bigbird_full.ff; before: `den` stored by a graph no order
    could serve) lowers; both check on both engines."""
    sizes = {"S": 4, "E": 4, "NH": 2, "DH": 2, "FF": 8}
    for variant in ("partial", "full"):
        path = ROOT / ("ir_examples/models/gpt3_mini/gpt3_mini_partial.ff" if variant == "partial"
                       else "ir_examples/models/gpt3_bigbird/gpt3_bigbird_full.ff")
        p = load_program(str(path))
        module = compile_attention(p)
        names = [g.name for g in module.graphs]
        if variant == "partial":
            assert [n for n in names if n.startswith("attn")] == ["attn"], names
        check_both_engines(p, module, sizes, 3, {"M": 0.5})

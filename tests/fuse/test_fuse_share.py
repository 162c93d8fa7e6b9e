"""`fuse --share`: an intermediate that several statements of its region read is computed once
instead of per consumer: one stream fanned out to its readers in the graph
(tests/lower/test_shared_streams.py), or, where it cannot be, stored once and read back. Fused
GPT-3 then does the unfused FLOPs
(recomputing ln1 for Q, K and V, and the layer norms' centred values, is what made plain full
fusion slower than unfused), and every model still checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.lang.load import load_program
from tests.support.lower_harness import assert_matches, load_text

MODELS = Path(__file__).resolve().parents[2] / "ir_examples" / "models"

MINI = {"S": 16, "E": 8, "NH": 2, "DH": 4, "FF": 16}
SIZES = {"gcn": {"N": 12, "F": 6, "C": 4}, "graphsage": {"N": 12, "F": 6, "C": 4},
         "sae": {"Bt": 3, "P": 10, "D1": 6, "D2": 4}, "gpt3_mini": MINI}


def _fuse(path: Path, share: bool):
    return fuse_program(load_program(str(path)), None, FuseOptions(share=share))


def test_no_statement_is_computed_twice():
    """Plain fuse recomputes GPT-3's scores Sc three times (for the row max, the row sum and
    the output); with --share every statement is computed once, in exactly one graph."""
    def computed(fp):
        return [e.statement for r in fp.regions for e in r.exprs]
    path = MODELS / "gpt3_mini" / "gpt3_mini_full.ff"
    plain = computed(_fuse(path, share=False))
    assert plain.count("Sc") == 3
    shared = computed(_fuse(path, share=True))
    assert len(shared) == len(set(shared))


def test_share_changes_nothing_without_shared_intermediates():
    """SpMV's region has no intermediate: --share leaves the fused IR as it was."""
    from fuseflowc.fuse.printer import fused_str
    path = Path(__file__).resolve().parents[2] / "ir_examples" / "kernels" / "spmv.ff"
    assert fused_str(_fuse(path, True)) == fused_str(_fuse(path, False))


@pytest.mark.parametrize("model", sorted(SIZES))
@pytest.mark.parametrize("variant", ["partial", "full"])
def test_models_check_with_share(model, variant):
    program = load_program(str(MODELS / model / f"{model}_{variant}.ff"))
    assert_matches(program, SIZES[model], seed=1, density=0.4, share=True)


#: A softmax-like region: T is read by two statements (one stream fanned out with --share:
#: m, declared dense, stores no zero y can see, since y reads m only where T's row has entries).
SOFTMAX = """
dim I, J
tensor A[I, J] : csr
tensor T[I, J] : csr
tensor m[I] : dense
tensor y[I, J] : csr
T[i,j] = exp(A[i,j])
m[i] = sum[j](T[i,j])
y[i,j] = T[i,j] / m[i]
fuse all: T, m, y
"""


def test_a_small_program_with_a_twice_read_intermediate():
    p = load_text(SOFTMAX)
    fp = fuse_program(p, None, FuseOptions(share=True))
    assert [r.materialized for r in fp.regions] == [()]
    assert {v.tensor for r in fp.regions for v in r.views if v.kind == "shared"} == {"T"}
    assert_matches(p, {"I": 5, "J": 4}, seed=2, density=0.3, patterns=True, share=True)


def test_gpt3_partial_share_inline_widened_lowers_and_checks():
    """`--share --inline-widened --free-input-order` on GPT-3's partial program: the shared
    intermediates (ln1, xc1; Sc, Ex; a, xc2) are streams fanned out in their graphs, so each
    region is one graph: pre (Q, K, V stored token first: an ln1 row read once, tests/lower/
    test_full_accumulator_levels.py), attn (the row max and sum, mx and den, declared dense,
    store no zero a use can see: `Sc - mx` is a broadcast union, `Ex / den` reads den only where
    Ex's row has entries, so they stay in the stream) and post. Order 0 lowers: the `shared`
    edges keep every reduction reading a shared stream
    outside the loops its result is broadcast over. The layer checks, with the unfused FLOPs."""
    from fuseflowc import pipeline
    from fuseflowc.data.gen import random_inputs

    program = load_program(str(MODELS / "gpt3_mini" / "gpt3_mini_partial.ff"))
    options = pipeline.CompileOptions(share=True, inline_widened=True, free_input_order=True,
                                      reparse_fused=True)
    compiled = pipeline.compile(program, options)
    groups = [r.group for r in compiled.fused.regions]
    assert {g: groups.count(g) for g in groups} == {"pre": 1, "attn": 1, "post": 1}
    assert not [text for r in compiled.fused.regions for text, _ in r.split_why]
    graphs = [g.name for g in compiled.module.graphs]
    assert graphs == ["pre", "attn", "post"], graphs
    stored = {t.name for t in compiled.module.tensors if t.role == "temp"}
    assert not stored & {"ln1", "xc1", "a", "xc2", "Sc", "mx", "Ex", "den"}, stored
    sizes = {**{d.name: d.size for d in program.dims if d.size is not None}, **MINI}
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    inputs = random_inputs(specs, sizes, 1, 0.4)
    module = compiled.module
    result = pipeline.simulate(module, pipeline.as_declared(module, inputs), dict(sizes))
    problems = pipeline.check(module, result, pipeline.reference(program, inputs))
    assert not problems and pipeline.written_outputs(module, result)
    unfused = pipeline.compile(load_program(str(MODELS / "gpt3_mini" /
                                                "gpt3_mini_unfused.ff"))).module
    plain = pipeline.simulate(unfused, pipeline.as_declared(unfused, inputs), dict(sizes))
    assert sum(k.flops for k in result.kernels) == sum(k.flops for k in plain.kernels)

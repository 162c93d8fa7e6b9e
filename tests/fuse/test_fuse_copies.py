"""fuse materializes an intermediate whose recomputed copies share a free index that each
copy's reduction must enclose (no dataflow order lowers them: GPT-3's output projection `Om`,
read four times by layer norm 2), and leaves copies that share none inlined (GraphSAGE's `H1`,
read as H1[k,h] and H1[i,h])."""

from __future__ import annotations

from pathlib import Path

from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.lang.load import load_program
from tests.support.lower_harness import load_text

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "ir_examples" / "models"


def _fuse(path: Path, inline_widened: bool = True):
    return fuse_program(load_program(str(path)), None, FuseOptions(inline_widened=inline_widened))


def test_gpt3_partial_materializes_the_output_projection():
    fp = _fuse(MODELS / "gpt3_bigbird" / "gpt3_bigbird_partial.ff")
    post = [r for r in fp.regions if r.group == "post"]
    assert [r.statements for r in post][0] == ("Om",)
    assert all(r.materialized == ("Om",) for r in post)


def test_gpt3_full_lowers_with_inline_widened():
    from fuseflowc.lower.driver import lower_fused
    fp = _fuse(MODELS / "gpt3_bigbird" / "gpt3_bigbird_full.ff")
    assert "Om" in fp.regions[-1].materialized
    module, _ = lower_fused(fp)  # raised "no dataflow order is concordant ... mx" before
    assert len(module.graphs) >= len(fp.regions)


def test_copies_sharing_no_index_stay_inlined():
    fp = _fuse(MODELS / "graphsage" / "graphsage_full.ff")
    assert len(fp.regions) == 1 and fp.regions[0].materialized == ()


COPIES = """
dim I, J, K
tensor B[K, I, J] : dense
tensor C[I, J] : dense
tensor T[I, J] : dense
tensor m[I] : dense
tensor y[I, J] : dense
T[i,j] = sum[k](B[k,i,j])
m[i] = sum[j](T[i,j])
y[i,j] = T[i,j] * m[i] + C[i,j]
fuse all: T, m, y
"""


def test_a_small_program_with_unorderable_copies():
    """T is read as T[i,j] and, inside m's sum, as T[i,u]: both copies reduce over k, which B's
    storage order puts outside their shared index i."""
    p = load_text(COPIES)
    fp = fuse_program(p, None, FuseOptions(inline_widened=True))
    assert fp.regions[0].materialized == ("T",)
    from tests.support.lower_harness import assert_matches
    for iw in (False, True):
        assert_matches(p, {"I": 3, "J": 4, "K": 2}, 0, inline_widened=iw, patterns=True)

"""`make examples` plans orders 0-2 of every region, for plain fuse and (where it fuses
differently) `fuse --inline-widened`, and the paper's order (`fuse --order paper`)."""

from __future__ import annotations

from pathlib import Path

from fuseflowc.bench.examples import plan_cases
from fuseflowc.bench.exe import fuseflowc_command

ROOT = Path(__file__).resolve().parents[2]


def test_plan_varies_each_region_and_inline_widened():
    prog = ROOT / "ir_examples" / "models" / "graphsage" / "graphsage_full.ff"
    cases = plan_cases(fuseflowc_command(), prog, Path("d"), 3)
    extra = [c for c in cases if len(c) > 5]
    # plus one parallelized run and (a fused variant) one --share run, at order 0, and one
    # run in the paper's order with the paper's fusion (--inline-widened: it differs here)
    assert sorted(c[5] for c in extra) == ["paper", "parallel", "share"]
    assert all(c[1:3] == (None, 0) and c[4] == (c[5] == "paper") for c in extra)
    cases = [c for c in cases if len(c) == 5]
    plain = [c[1:3] for c in cases if not c[4]]
    widened = [c[1:3] for c in cases if c[4]]
    assert plain[0] == (None, 0) and widened[0] == (None, 0)
    # the inline-widened region is one region with at least 3 orders: 1 and 2 are run
    assert widened[1:] == [("graphsage", 1), ("graphsage", 2)]
    # every plain case after order 0 varies one region, orders 1 and 2 at most
    assert all(r is not None and k in (1, 2) for r, k in plain[1:])
    assert len(plain) > 1


def test_plan_runs_inline_widened_only_where_it_differs():
    prog = ROOT / "ir_examples" / "kernels" / "nested_matmul_fused.ff"
    cases = plan_cases(fuseflowc_command(), prog, Path("d"), 3)
    assert not any(c[4] for c in cases)
    assert [c[5] for c in cases if len(c) > 5] == ["parallel", "share", "paper"]
    assert cases[0][1:3] == (None, 0)



def test_plan_runs_partial_models_as_one_graph_per_part():
    """A partially fused model also runs `fuse --share --inline-widened --order paper` (each
    part one graph, as the artifact fuses GPT-3's pre, attn and post); other programs do not
    (nested_matmul_fused above)."""
    prog = ROOT / "ir_examples" / "models" / "gcn" / "gcn_partial.ff"
    cases = plan_cases(fuseflowc_command(), prog, Path("d"), 1)
    got = [c for c in cases if len(c) > 5 and c[5] == "share-paper"]
    assert len(got) == 1 and got[0][1:3] == (None, 0) and got[0][4]

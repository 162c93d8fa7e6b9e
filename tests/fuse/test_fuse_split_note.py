"""A fusion region that compiles to several graphs says why, per tensor, at the statement that
computes it (issue #22): which intermediate's declared format, or which orders, split it; not
"formats or orders"."""

from __future__ import annotations

from pathlib import Path

from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
ORDERS = """dim I = 4, J = 5
tensor A[I, J] : csr
tensor B[J, I] : csr
tensor T[I, J] : csr
tensor Y[J, I] : csr
T[i,j] = A[i,j] * 2.0
Y[j,i] = T[i,j] * B[j,i]
fuse r: T, Y
order T: i -> j
order Y: j -> i
"""


def test_an_order_conflict_names_the_orders_and_the_tensor(tmp_path):
    (tmp_path / "split.ff").write_text(ORDERS)
    r = run_cli(["fuse", str(tmp_path / "split.ff")])
    assert r.exit_code == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == "note: fusion region r is split into 2 graphs: T must be stored and read back"
    assert lines[1].startswith(f"{tmp_path / 'split.ff'}:6:1: note: T was materialized (not "
                               f"inlined) because the orders of its producer and consumer "
                               f"conflict: cycle ")
    assert "the order directive of T" in lines[1] and "the order A is read in by T" in lines[1]
    assert "__" not in r.stderr                   # no internal copy's name
    assert lines[2:] == ["  T[i,j] = A[i,j] * 2.0", "  ^"]
    assert "--inline-widened" not in r.stderr      # it would not help


def test_a_declared_format_names_the_tensor_and_its_format():
    r = run_cli(["fuse", str(ROOT / "ir_examples/models/gcn/gcn_partial.ff")])
    assert r.exit_code == 0, r.stderr
    gcn = ROOT / "ir_examples/models/gcn/gcn.ff"
    for name, line in (("Z1", 30), ("AX2", 35), ("Z2", 36)):
        assert (f"{gcn}:{line}:1: note: {name} is materialized (not inlined): its declared "
                f"format, dense, stores entries its computed pattern lacks") in r.stderr
    assert r.stderr.count("--inline-widened keeps") == 2      # one per split region


def test_many_reasons_are_capped():
    # the whole GPT-3 layer as one region (gpt3_mini_full.ff is now split at the heads)
    r = run_cli(["fuse", str(ROOT / "ir_examples/models/gpt3_bigbird/gpt3_bigbird_full.ff")])
    assert r.exit_code == 0, r.stderr
    assert "note: and 20 more of region layer's stored intermediates\n" in r.stderr
    assert r.stderr.count("is materialized (not inlined)") <= 4 * r.stderr.count("is split into")

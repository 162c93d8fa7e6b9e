"""An intermediate that `fuse --inline-widened` inlines but lowering stores by a graph of its own
(a use sees its declared format's stored zeros): when its declared storage order conflicts with
the tensors it reads, the error says what lowering lacks (a permuted copy for a graph it splits
off) and what works instead; plain `fuse` stores it itself and the program runs."""

from __future__ import annotations

from tests.support.golden import run_cli, run_pipeline

PROG = """dim I, J
tensor A[I, J] : csr
tensor T[I, J] : (dense, dense) order (1, 0)
tensor E[I, J] : dense
T[i,j] = A[i,j] * 2.0
E[i,j] = exp(T[i,j])
fuse r: T, E
"""


def test_conflicting_order_of_a_graph_lowering_splits_off(tmp_path):
    prog = tmp_path / "p.ff"
    prog.write_text(PROG)
    r = run_pipeline(f"fuseflowc fuse {prog} --inline-widened | fuseflowc lower")
    assert r.exit_code == 1
    assert "statement T: lowering stores T by a graph of its own" in r.stderr
    assert "a cycle among i, j" in r.stderr
    assert "fuse without --inline-widened" in r.stderr
    assert "not supported by lower yet" not in r.stderr  # the stale wording
    # the remedy it names works
    data = tmp_path / "d"
    assert run_cli(["gen-data", str(prog), "--size", "I=5", "--size", "J=4", "-o",
                    str(data)]).exit_code == 0
    r = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower "
                     f"| fuseflowc simulate --data {data} --check")
    assert r.exit_code == 0, r.stderr
    assert "check: E match" in r.stderr

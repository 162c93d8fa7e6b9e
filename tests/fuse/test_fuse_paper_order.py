"""`--order paper`: the order FuseFlow's compiler picks (fuseflowc.fuse.paper_order), on
programs small enough to derive it by hand, against an independent oracle (every linear
extension listed by brute force), and through the command line and sweep specs."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.paper_order import creation_order
from fuseflowc.lang.load import program_from_source

# C = sum_k A[i,k] * b[j]: k and j are free of each other. Our canonical order lists the left
# side first (i, j, k), so order 0 is i -> j -> k; FuseFlow creates A's variables (i, k), then
# b's (j), then C's (i, j), so its first sort is i -> k -> j.
OUTER = """
dim I, K, J
tensor A[I, K] : csr
tensor b[J] : dense
tensor C[I, J] : dense
C[i,j] = sum[k](A[i,k]) * b[j]
"""

# The same through an inlined intermediate: FuseFlow builds T's view (A's variables, then T's)
# before b's, a post-order walk from the output.
FUSED = """
dim I, K, J
tensor A[I, K] : csr
tensor b[J] : dense
tensor T[I, K] : csr
tensor C[I, J] : dense
T[i,k] = A[i,k] * 2
C[i,j] = sum[k](T[i,k]) * b[j]
fuse all: T, C
"""


def _fuse(text: str, order) -> list:
    p = program_from_source(Source("t.ff", text))
    return fuse_program(p, None, FuseOptions({None: order})).regions


def _named(region) -> list[str]:
    """The region's order in the program's index names."""
    names = region.source_names()
    return [names.get(x, (x,))[0] for x in region.order]


def test_hand_derived_orders_differ_from_order_0():
    for text in (OUTER, FUSED):
        (r0,) = _fuse(text, 0)
        (rp,) = _fuse(text, "paper")
        assert _named(r0) == ["i", "j", "k"]
        assert _named(rp) == ["i", "k", "j"]
        assert rp.order_index == 1  # its place in our enumeration, printed in the IR


def test_creation_order_is_a_post_order_walk_from_the_output():
    (r,) = _fuse(FUSED, "paper")
    created = [r.source_names().get(x, (x,))[0] for x in creation_order(r)]
    assert created == ["i", "k", "j"]


@st.composite
def _pog(draw):
    n = draw(st.integers(1, 6))
    edges = {(a, b) for a in range(n) for b in range(a + 1, n) if draw(st.booleans())}
    perm = draw(st.permutations(range(n)))  # the creation order, a relabelling
    return n, edges, perm


@settings(max_examples=60, deadline=None)
@given(_pog())
def test_first_sort_is_the_backtracking_sorts_first(case):
    """Sort 0 of FuseFlow's backtracking enumeration (vertices tried in creation order) is the
    lexicographically smallest linear extension in creation ranks: brute force over every
    permutation is the oracle."""
    from fuseflowc.fuse.pog import POG
    n, edges, perm = case
    rank = {v: perm.index(v) for v in range(n)}
    pog = POG.from_edges(n, {(rank[a], rank[b]) for a, b in edges})
    first = [perm[v] for v in pog.unrank(0)]
    valid = [o for o in itertools.permutations(range(n))
             if all(o.index(a) < o.index(b) for a, b in edges)]
    assert first == list(min(valid, key=lambda o: [rank[v] for v in o]))


def _ffc(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuseflowc", *args], input=stdin,
                          capture_output=True, text=True)


def test_command_line_takes_paper_and_refuses_other_words(tmp_path):
    prog = tmp_path / "outer.ff"
    prog.write_text(OUTER)
    got = _ffc("fuse", str(prog), "--order", "paper")
    assert got.returncode == 0, got.stderr
    assert "order i -> u0 -> j : 1" in got.stdout  # u0: k renamed (a reduction index)
    assert got.stderr == ""
    bad = _ffc("fuse", str(prog), "--order", "papr")
    assert bad.returncode == 2
    assert "'papr' is not an order: give a number K >= 0 or 'paper'" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("value, expected", [
    ('["paper", 2, 0]', ["paper", 0, 2]), ('"paper"', ["paper"]), ("[1]", [1])])
def test_sweep_spec_orders_accept_paper(tmp_path, value, expected):
    from fuseflowc.sweep.spec import parse_spec
    (tmp_path / "p.ff").write_text(OUTER)
    spec = tmp_path / "s.toml"
    spec.write_text(f'[[programs]]\npath = "p.ff"\norders = {value}\n\n[[data]]\n'
                    f'name = "d"\nsizes = {{I = 4, K = 4, J = 4}}\n')
    assert parse_spec(str(spec)).programs[0].orders == expected


def test_sweep_spec_refuses_another_word(tmp_path):
    from fuseflowc.diagnostics import UserError
    from fuseflowc.sweep.spec import parse_spec
    (tmp_path / "p.ff").write_text(OUTER)
    spec = tmp_path / "s.toml"
    spec.write_text('[[programs]]\npath = "p.ff"\norders = ["first"]\n\n[[data]]\n'
                    'name = "d"\nsizes = {I = 4, K = 4, J = 4}\n')
    with pytest.raises(UserError, match='"paper"'):
        parse_spec(str(spec))


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_results_files_keep_the_paper_order(tmp_path, kind):
    """A sweep row of `orders = ["paper", ...]` is written and read back with its order."""
    from fuseflowc.sweep.results import format_row, header, read_rows
    path = tmp_path / f"r.{kind}"
    rows = [{"id": "a", "model": "m", "variant": "v", "order": "paper", "status": "ok"},
            {"id": "b", "model": "m", "variant": "v", "order": 3, "status": "ok"}]
    path.write_text(header(kind) + "".join(format_row(kind, r) for r in rows))
    assert [r["order"] for r in read_rows(str(path))] == ["paper", 3]
    bad = tmp_path / f"bad.{kind}"
    bad.write_text(header(kind) + format_row(kind, {**rows[0], "order": "first"}))
    with pytest.raises(UserError, match="order"):
        read_rows(str(bad))


def test_artifact_sae_full_fusion_has_one_order_with_or_without_output_edges():
    """The artifact's fully fused SAE (programs/sae_art_full.ff: its compiler's
    autoencoder_imagenet_batched.mlir). X (b, p), W1 (p, d) and W2 (d, p') are stored row-major,
    so their storage edges chain the POG b -> p -> d -> p'. FuseFlow's POG holds only the inputs'
    storage edges (LinalgToSam.cpp adds none for a generic op's output); ours adds R's output
    edge b -> p', implied by the chain. Either way exactly one permutation is a linear extension
    (brute force is the oracle), and it is order 0 and `paper`: the artifact's full SAE took
    this order, and no order choice makes this fusion recompute (docs/bench.md)."""
    from fuseflowc.lang.load import load_program
    root = Path(__file__).resolve().parents[2]
    path = str(root / "ir_examples" / "bench" / "artifact" / "programs" / "sae_art_full.ff")
    program = load_program(path)
    (r0,) = fuse_program(program, path, FuseOptions({None: 0}, inline_widened=True)).regions
    (rp,) = fuse_program(program, path, FuseOptions({None: "paper"}, inline_widened=True)).regions
    storage = [(e.tensor, e.src, e.dst) for e in r0.edges if e.kind == "format"]
    assert storage == [("X", "b", "u1"), ("W1", "u1", "u0"), ("W2", "u0", "p")]
    assert {(e.kind, e.src, e.dst) for e in r0.edges} - {("format", a, b) for _, a, b in storage} \
        == {("output", "b", "p")}
    for kinds in ({"format"}, {"format", "output"}):
        edges = [(e.src, e.dst) for e in r0.edges if e.kind in kinds]
        valid = [o for o in itertools.permutations(r0.index_names())
                 if all(o.index(a) < o.index(b) for a, b in edges)]
        assert valid == [tuple(r0.order)]
    assert rp.order == r0.order
    assert _named(r0) == ["b", "p", "d", "p"]  # batch, encoder pixel, hidden, decoder pixel

"""The POG's order counting, enumeration and unranking against brute force (hypothesis)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.fuse.orders import region_pog, sci
from fuseflowc.fuse.pog import POG, find_cycle, is_linear_extension

ROOT = Path(__file__).resolve().parents[2]


@st.composite
def dags(draw, max_nodes: int = 7):
    """A random DAG: edges only go forward in a random permutation of the nodes."""
    n = draw(st.integers(1, max_nodes))
    perm = draw(st.permutations(range(n)))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    return n, [(perm[a], perm[b]) for a, b in chosen]


def brute(n, edges):
    return [o for o in itertools.permutations(range(n)) if is_linear_extension(n, edges, o)]


@settings(max_examples=150, deadline=None)
@given(dags())
def test_count_equals_brute_force(g):
    n, edges = g
    assert POG.from_edges(n, edges).count() == len(brute(n, edges))


@settings(max_examples=100, deadline=None)
@given(dags())
def test_enumeration_is_lexicographic_list_of_linear_extensions(g):
    n, edges = g
    pog = POG.from_edges(n, edges)
    listed = list(pog.orders())
    assert listed == brute(n, edges)  # permutations() is lexicographic too
    assert all(is_linear_extension(n, edges, o) for o in listed)


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_unrank_and_rank_match_the_enumeration(g, data):
    n, edges = g
    pog = POG.from_edges(n, edges)
    listed = list(pog.orders())
    k = data.draw(st.integers(0, len(listed) - 1))
    assert pog.unrank(k) == listed[k]
    assert pog.rank(listed[k]) == k
    assert list(pog.orders(k)) == listed[:k]


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_find_cycle_finds_real_cycles(g, data):
    n, edges = g
    assert find_cycle(n, edges) is None
    if not edges:
        return
    a, b = data.draw(st.sampled_from(edges))
    back = edges + [(b, a)]
    cyc = find_cycle(n, back)
    assert cyc is not None
    ring = set(zip(cyc, cyc[1:] + cyc[:1]))
    assert ring <= set(back)


def test_disjoint_chains_are_binomial():
    # two chains of 10: C(20, 10) interleavings, exactly
    edges = [(k, k + 1) for k in range(9)] + [(k, k + 1) for k in range(10, 19)]
    assert POG.from_edges(20, edges).count() == 184756
    assert POG.from_edges(30, []).count() == 265252859812191058636308480000000  # 30!


def test_sci():
    assert sci(1) == "1.0e0"
    assert sci(1134) == "1.1e3"
    assert sci(29640619008) == "3.0e10"
    assert sci(999) == "1.0e3"
    assert sci(10 ** 400 * 3) == "3.0e400"


def test_gcn_full_counting_is_fast():
    from fuseflowc.fuse.algorithm import fuse_program
    from fuseflowc.lang.load import load_program

    prog = load_program(str(ROOT / "ir_examples/models/gcn/gcn_full.ff"))
    fused = fuse_program(prog)
    start = time.perf_counter()
    for r in fused.regions:
        region_pog(r).count()
    assert time.perf_counter() - start < 0.5

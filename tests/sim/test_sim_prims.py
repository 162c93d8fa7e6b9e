"""Every primitive on hand-written token streams (REFERENCE.md's worked example included), plus
property tests against plain-Python oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.sim.channel import Channel
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.harness import run_node
from fuseflowc.sim.prims_compute import Alu, Reduce, Spacc1, Spacc2
from fuseflowc.sim.prims_crd import CrdDrop, CrdHold, Fork, Join
from fuseflowc.sim.prims_join import Intersect, Union
from fuseflowc.sim.prims_stream import Array, Repeat, RepSig, Root, Scan
from fuseflowc.sim.tokens import S0, D, N, parse, show_all, show_empt, stop


def out_text(node, inputs, n_out, kinds=None, kind="crd"):
    outs, _ = run_node(node, inputs, n_out, kinds)
    return [show_all(o, kind) for o in outs]


# ---- REFERENCE.md's worked example: A = [[1,0,2],[0,0,0],[0,3,0]] in CSR ---------------------

SEG, CRD, VALS = [0, 2, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0]


def test_worked_example():
    (root,), _ = run_node(Root("r"), [], 1)
    assert show_all(root) == "0 D"
    ci, ri = out_text(Scan("i", True, 3), [root], 2)
    assert ci == ri == "0 1 2 S0 D"
    cj, rj = out_text(Scan("j", False, 3, SEG, CRD), [ri], 2)
    assert cj == "0 2 S0 S0 1 S1 D"
    assert rj == "0 1 S0 S0 2 S1 D"
    (v,) = out_text(Array("A", VALS), [rj], 1, kind="val")
    assert v == "1 2 S0 S0 3 S1 D"


def test_dcsr_outer_level_skips_empty_rows():
    seg, crd = [0, 2], [0, 2]
    assert out_text(Scan("i", False, 3, seg, crd), ["0 D"], 2) == ["0 2 S0 D", "0 1 S0 D"]


# ---- scanners --------------------------------------------------------------------------------

def test_scanner_raises_input_stops_of_any_depth():
    seg, crd = [0, 1, 1, 3], [5, 6, 7]
    cj, rj = out_text(Scan("j", False, 8, seg, crd), ["0 1 S0 2 S3 D"], 2)
    assert cj == "5 S0 S1 6 7 S4 D"
    assert rj == "0 S0 S1 1 2 S4 D"


def test_scanner_bare_stop_and_n():
    seg, crd = [0, 2], [3, 4]
    c, r = out_text(Scan("j", False, 5, seg, crd), ["S0 0 S1 N S1 D"], 2)
    assert c == "S1 3 4 S2 N S2 D"
    assert r == "S1 0 1 S2 N S2 D"
    (c, _), _ = run_node(Scan("j", False, 5, seg, crd), ["S0 0 S1 N S1 D"], 2)
    assert show_empt(c) == "S1/1 3 4 S2 N S2 D"     # the first S1 is bare: no fiber there


def test_dense_scanner_refs():
    c, r = out_text(Scan("j", True, 2), ["0 3 S0 D"], 2)
    assert c == "0 1 S0 0 1 S1 D"
    assert r == "0 1 S0 6 7 S1 D"


def test_scanner_long_fibers_match_token_by_token_scan():
    """The bulk path (runs inside long fibers) gives the same tokens and times."""
    seg = [0, 40, 40, 100]
    crd = list(range(40)) + list(range(3, 63))
    (c1, r1), (t1, _) = run_node(Scan("j", False, 70, seg, crd, lat=3), ["0 1 2 S0 D"], 2)
    assert c1[:40] == list(range(40)) and c1[40] == stop(0) and c1[41] == stop(0)
    # one token per cycle from cycle 0 (+ latency 3), but looking up the empty fiber of ref 1
    # takes a cycle of its own (cycle 41)
    assert t1 == list(range(3, 44)) + list(range(45, 108))


# ---- repeat ----------------------------------------------------------------------------------

def test_repsig():
    (s,) = out_text(RepSig("rs"), ["0 1 S0 S0 2 S1 D"], 1, kind="repsig")
    assert s == "R R S0 S0 R S0 D"


def test_repeat_ref_across_fibers():
    # one element per outer fiber, repeated per inner coordinate, stops raised by one
    sig = parse("R R S R R R S R S D", "repsig")
    (o,) = out_text(Repeat("rp"), ["7 8 S0 9 S1 D", sig], 1)
    assert o == "7 7 S0 8 8 8 S1 9 S2 D"


def test_repeat_empty_inner_and_bare_outer():
    sig = parse("S R S S D", "repsig")
    (o,) = out_text(Repeat("rp"), ["4 5 S0 S1 D", sig], 1)
    assert o == "S0 5 S1 S2 D"


def test_repeat_val_broadcast():
    sig = parse("R R S R S D", "repsig")
    outs, _ = run_node(Repeat("rp"), [[1.5, 2.5, stop(0), D], sig], 1, ["val", "repsig"])
    assert show_all(outs[0], "val") == "1.5 1.5 S0 2.5 S1 D"


def test_repeat_takes_an_element_without_a_cycle_of_its_own():
    # Taking the next element is a register load in the cycle of its first use (SAM's repeater
    # pops the ref and the signal in one cycle): one output token per cycle, no gap at 8 or 9.
    sig = parse("R R S R R R S R S D", "repsig")
    (o,), (t,) = run_node(Repeat("rp"), ["7 8 S0 9 S1 D", sig], 1)
    assert show_all(o) == "7 7 S0 8 8 8 S1 9 S2 D"
    assert t == list(range(1, 11))
    # an element repeated zero times (empty inner fiber): its close is its first use
    (o,), (t,) = run_node(Repeat("rp"), ["4 5 S0 S1 D", parse("S R S S D", "repsig")], 1)
    assert (show_all(o), t) == ("S0 5 S1 S2 D", [1, 2, 3, 4, 5])


def test_repeat_element_waits_for_its_arrival():
    # the element arrives at cycle 5: its first copy goes out then, not a cycle later
    a, g = Channel("a", "ref", None), Channel("g", "repsig", None)
    a.feed([3], 5)
    a.feed([S0, D], 5)
    g.feed(parse("R R S D", "repsig"))
    out = Channel("o", "ref", None)
    node = Repeat("rp")
    node.wire([a, g], [out])
    Engine([node], writers=[]).run()
    assert list(out.times) == [6, 7, 8, 9]


def test_repeat_signal_mismatch_is_an_error():
    with pytest.raises(UserError, match="repeat signal"):
        run_node(Repeat("rp"), ["S0 D", parse("R D", "repsig")], 1)


# ---- joiners ---------------------------------------------------------------------------------

def test_intersect_two():
    c, r0, r1 = out_text(Intersect("x", 2), ["0 2 5 S0 1 S1 D", "10 12 15 S0 11 S1 D",
                                             "2 3 5 S0 S1 D", "20 21 22 S0 S1 D"], 3)
    assert (c, r0, r1) == ("2 5 S0 S1 D", "12 15 S0 S1 D", "20 22 S0 S1 D")


def test_union_two_with_n():
    c, r0, r1 = out_text(Union("u", 2), ["0 2 S0 D", "10 12 S0 D", "2 3 S0 D", "20 21 S0 D"], 3)
    assert (c, r0, r1) == ("0 2 3 S0 D", "10 12 N S0 D", "N 20 21 S0 D")


def test_union_required_is_a_left_join():
    c, r0, r1 = out_text(Union("u", 2, required=[0]),
                         ["0 2 S0 D", "10 12 S0 D", "2 3 S0 D", "20 21 S0 D"], 3)
    assert (c, r0, r1) == ("0 2 S0 D", "10 12 S0 D", "N 20 S0 D")


def test_three_way_joiners():
    ins = ["1 2 4 S0 D", "1 2 4 S0 D", "2 4 S0 D", "7 8 S0 D", "0 2 4 6 S0 D", "0 1 2 3 S0 D"]
    assert out_text(Intersect("x", 3), ins, 4) == ["2 4 S0 D", "2 4 S0 D", "7 8 S0 D",
                                                    "1 2 S0 D"]
    c, *rs = out_text(Union("u", 3), ins, 4)
    assert c == "0 1 2 4 6 S0 D"
    assert rs == ["N 1 2 4 N S0 D", "N N 7 8 N S0 D", "0 N 1 2 3 S0 D"]


def test_joiners_skip_n_coordinates():
    c, r0, r1 = out_text(Union("u", 2), ["N S0 D", "N S0 D", "1 S0 D", "5 S0 D"], 3)
    assert (c, r0, r1) == ("1 S0 D", "N S0 D", "5 S0 D")


def test_joiner_stops_must_line_up():
    with pytest.raises(UserError, match="do not line up"):
        run_node(Intersect("x", 2), ["S0 D", "S0 D", "S1 D", "S1 D"], 3)


crd_lists = st.lists(st.lists(st.integers(0, 30), max_size=8).map(lambda x: sorted(set(x))),
                     min_size=1, max_size=4)


def _stream(fibers):
    toks = []
    for i, f in enumerate(fibers):
        toks += f
        toks.append(stop(0) if i < len(fibers) - 1 else stop(1))
    return toks + [D]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 3).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.lists(st.lists(st.integers(0, 20), max_size=6)
                                  .map(lambda x: sorted(set(x))), min_size=3, max_size=3),
                         min_size=n, max_size=n))))
def test_joiners_match_set_algebra(arg):
    n, per_input = arg           # per_input[k][fiber] = sorted coordinates
    ins = []
    for k in range(n):
        s = _stream(per_input[k])
        ins += [s, [x + 100 * k if x >= 0 else x for x in s]]
    (c, *refs), _ = run_node(Intersect("x", n), ins, n + 1)
    (cu, *refsu), _ = run_node(Union("u", n), ins, n + 1)
    for fib in range(3):
        sets = [set(per_input[k][fib]) for k in range(n)]
        want_i = sorted(set.intersection(*sets))
        want_u = sorted(set.union(*sets))
        assert _fibers(c)[fib] == want_i
        assert _fibers(cu)[fib] == want_u
    for k in range(n):  # refs line up with coordinates
        for x, r in zip(c, refs[k]):
            if x >= 0:
                assert r == x + 100 * k
        for x, r in zip(cu, refsu[k]):
            if x >= 0:
                assert r == (x + 100 * k if x in set(sum(per_input[k], [])) and r != N else N)


def _fibers(toks):
    out, cur = [], []
    for t in toks:
        if t >= 0:
            cur.append(t)
        elif t != D:
            out.append(cur)
            cur = []
    return out


# ---- arrays and ALUs -------------------------------------------------------------------------

def test_array_loads_zero_for_n_and_passes_stops():
    (v,) = out_text(Array("A", [4.0, 5.0]), ["1 N S0 0 S1 D"], 1, kind="val")
    assert v == "5 0 S0 4 S1 D"


def test_array_blocks():
    blocks = [np.eye(2), 2 * np.eye(2)]
    (v,), _ = run_node(Array("A", blocks, np.zeros((2, 2))), ["1 N S0 D"], 1)
    assert np.array_equal(v[0], 2 * np.eye(2)) and np.array_equal(v[1], np.zeros((2, 2)))


def vals(text):
    return parse(text, "val")


@pytest.mark.parametrize("op,want", [
    ("add", "4 7 S0 D"), ("sub", "-2 -3 S0 D"), ("mul", "3 10 S0 D"), ("div", "0.333333 0.4 S0 D"),
    ("max", "3 5 S0 D"), ("min", "1 2 S0 D")])
def test_alu_binary(op, want):
    (o,), _ = run_node(Alu("a", op), [vals("1 2 S0 D"), vals("3 5 S0 D")], 1)
    assert show_all(o, "val") == want


def test_alu_n_is_the_identity():
    (o,), _ = run_node(Alu("a", "add"), [[N, 2.0, stop(0), D], [3.0, N, stop(0), D]], 1)
    assert show_all(o, "val") == "3 2 S0 D"
    (o,), _ = run_node(Alu("a", "sub"), [[N, 2.0, D], [3.0, N, D]], 1)
    assert show_all(o, "val") == "-3 2 D"
    (o,), _ = run_node(Alu("a", "max"), [[N, -2.0, D], [-3.0, N, D]], 1)
    assert show_all(o, "val") == "-3 -2 D"


@pytest.mark.parametrize("op,const,x,want", [
    ("relu", None, -1.0, 0.0), ("exp", None, 0.0, 1.0), ("neg", None, 2.0, -2.0),
    ("sqrt", None, 4.0, 2.0), ("rsqrt", None, 4.0, 0.5), ("sigmoid", None, 0.0, 0.5),
    ("tanh", None, 0.0, 0.0), ("gelu", None, 0.0, 0.0), ("addc", 2.0, 1.0, 3.0),
    ("subc", 2.0, 1.0, -1.0), ("mulc", 2.0, 3.0, 6.0), ("divc", 2.0, 3.0, 1.5),
    ("rsubc", 2.0, 3.0, -1.0), ("rdivc", 2.0, 4.0, 0.5), ("maxc", 2.0, 1.0, 2.0),
    ("minc", 2.0, 1.0, 1.0)])
def test_alu_unary_and_scalar(op, const, x, want):
    (o,), _ = run_node(Alu("a", op, const=const), [[x, stop(0), N, D]], 1)
    assert o[0] == pytest.approx(want) and o[1:] == [stop(0), N, D]


def test_alu_ieee_results():
    (o,), _ = run_node(Alu("a", "div"), [[1.0, 0.0, D], [0.0, 0.0, D]], 1)
    assert o[0] == float("inf") and o[1] != o[1]
    (o,), _ = run_node(Alu("a", "exp"), [[1000.0, D]], 1)
    assert o[0] == float("inf")


def test_alu_gelu_matches_erf_form():
    import math
    (o,), _ = run_node(Alu("a", "gelu"), [[1.0, D]], 1)
    assert o[0] == pytest.approx(0.5 * (1 + math.erf(1 / math.sqrt(2))))


def test_alu_block_ops_and_flops():
    a, b = np.arange(4.0).reshape(2, 2), np.ones((2, 2))
    node = Alu("a", "bmm", block=2)
    (o,), _ = run_node(node, [[a, stop(0), D], [b, stop(0), D]], 1)
    assert np.array_equal(o[0], a @ b) and o[1:] == [stop(0), D]
    assert node.flops == 8
    node = Alu("a", "exp", block=2)
    (o,), _ = run_node(node, [[a, D]], 1)
    assert np.allclose(o[0], np.exp(a)) and node.flops == 4


def test_alu_stops_must_line_up():
    with pytest.raises(UserError, match="do not line up"):
        run_node(Alu("a", "add"), [vals("1 S0 D"), vals("S0 1 D")], 1)


# ---- reducers --------------------------------------------------------------------------------

def test_reduce_sum_levels_and_empty_fibers():
    (o,), _ = run_node(Reduce("r", "sum"), [vals("1 2 S0 S0 3 S1 4 S2 D")], 1)
    assert show_all(o, "val") == "3 0 3 S0 4 S1 D"


def test_reduce_max_and_bare_stop():
    # S1/1 is bare: the second row has no fiber at all (not an empty one): no value for it
    (o,), _ = run_node(Reduce("r", "max"), [vals("1 -2 S1 S1/1 5 S2 D")], 1)
    assert show_empt(o, "val") == "1 S0 S0 5 S1 D"
    # the same text with S1 closing an (empty) fiber: an explicit 0
    (o,), _ = run_node(Reduce("r", "max"), [vals("1 -2 S1 S1 5 S2 D")], 1)
    assert show_empt(o, "val") == "1 S0 0 S0 5 S1 D"
    # deeper bare stops lose one level of emptiness per reduction
    (o,), _ = run_node(Reduce("r", "sum"), [vals("S2/2 S0/1 D")], 1)
    assert show_empt(o, "val") == "S1/1 D"


def test_emptiness_from_scanners_reaches_reducers():
    """A row with no fiber reduces to nothing; a row with one empty fiber to an explicit 0."""
    # rows of a DCSR-like j level: row 0 has fiber [] (ref 0), row 1 is missing (S0 bare)
    outs, _ = run_node(Scan("k", False, 4, [0, 0], []), [parse("0 S0 S1/1 D")], 2)
    assert show_empt(outs[0]) == "S1 S2/2 D"
    vals_ = [t if t.__class__ is not int or t < 0 else 1.0 for t in outs[0]]
    (o,), _ = run_node(Reduce("r", "sum"), [vals_], 1)
    assert show_empt(o, "val") == "0 S0 S1/1 D"


def test_reduce_blocks():
    blk = np.ones((2, 2))
    (o,), _ = run_node(Reduce("r", "sum", block=2), [[blk, blk, stop(0), stop(1), D]], 1)
    assert np.array_equal(o[0], 2 * blk) and np.array_equal(o[1], 0 * blk)
    assert o[2:] == [stop(0), D]


def test_spacc1():
    c, v = run_node(Spacc1("s"), ["3 1 S0 1 4 S1 S1 2 S0 S2 D",
                                  vals("1 2 S0 10 20 S1 S1 5 S0 S2 D")], 2)[0]
    assert show_all(c) == "1 3 4 S0 S0 2 S1 D"
    assert show_all(v, "val") == "12 1 20 S0 S0 5 S1 D"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.lists(st.tuples(st.integers(0, 9), st.integers(-5, 5)),
                                  max_size=5), max_size=4), min_size=1, max_size=4))
def test_spacc1_matches_dict_sums(rows):
    """rows[i][k] = points (j, v) of the inner fibers; accumulate over k per row i."""
    ctoks, vtoks = [], []
    for row in rows:
        if not row:
            ctoks.append(stop(1))
            vtoks.append(stop(1))
        for k, fib in enumerate(row):
            seen = {}
            for j, x in fib:
                seen[j] = x
            for j in sorted(seen):
                ctoks.append(j)
                vtoks.append(float(seen[j]))
            lvl = 0 if k < len(row) - 1 else 1
            ctoks.append(stop(lvl))
            vtoks.append(stop(lvl))
    ctoks[-1] = ctoks[-1] - 1
    vtoks[-1] = vtoks[-1] - 1
    (c, v), _ = run_node(Spacc1("s"), [ctoks + [D], vtoks + [D]], 2)
    got = [dict(zip(f, vs)) for f, vs in zip(_fibers(c), _vfibers(v))]
    want = []
    for row in rows:
        acc = {}
        for fib in row:
            seen = {}
            for j, x in fib:
                seen[j] = x
            for j, x in seen.items():
                acc[j] = acc.get(j, 0.0) + x
        want.append(acc)
    assert got == want
    assert all(f == sorted(f) for f in _fibers(c))


def _vfibers(toks):
    out, cur = [], []
    for t in toks:
        if t.__class__ is not int:
            cur.append(t)
        elif t != D:
            out.append(cur)
            cur = []
    return out


def test_spacc2_outer_products():
    # k = 0: i-fiber [0, 2]; k = 1: i-fiber [2]; j fibers under each (k, i)
    i_in = "0 2 S0 2 S1 D"
    j_in = "1 S0 0 1 S1 1 3 S2 D"
    v_in = vals("1 S0 2 3 S1 10 20 S2 D")
    c1, c0, v = run_node(Spacc2("s"), [i_in, j_in, v_in], 3)[0]
    assert show_all(c1) == "0 2 S0 D"
    assert show_all(c0) == "1 S0 0 1 3 S1 D"
    assert show_all(v, "val") == "1 S0 2 13 20 S1 D"


def test_spacc2_takes_one_point_per_cycle():
    # the outer coordinate is taken with the first point of its fiber (no firing of its own):
    # 9 firings for the 9 crd0 tokens in, then one per token out (the flush, D last)
    i_in = "0 2 S0 2 S1 D"
    j_in = "1 S0 0 1 S1 1 3 S2 D"
    v_in = vals("1 S0 2 3 S1 10 20 S2 D")
    node = Spacc2("s")
    _, (t1, t0, _) = run_node(node, [i_in, j_in, v_in], 3)
    assert node.fires == 9 + len(t0)
    # the S2 closing the outer fiber is the 8th point (cycle 7): the flush starts at cycle 8
    assert t0 == [9, 10, 11, 12, 13, 14, 16]
    assert t1 == [9, 10, 11, 16]


def test_spacc2_empty():
    c1, c0, v = run_node(Spacc2("s"), ["S0 S1 D", "S1 S2 D", vals("S1 S2 D")], 3)[0]
    assert (show_all(c1), show_all(c0)) == ("S0 D", "S1 D")


# ---- coordinate drop and hold ----------------------------------------------------------------

def test_crddrop_drops_empty_fibers():
    o, i = out_text(CrdDrop("d"), ["0 1 2 S0 D", "5 S0 S0 6 S1 D"], 2)
    assert (o, i) == ("0 2 S0 D", "5 S0 6 S1 D")


def test_crddrop_merges_stop_of_a_dropped_last_fiber():
    # outer fibers [0, 1] and [3]; the fibers of 1 and 3 are empty
    o, i = out_text(CrdDrop("d"), ["0 1 S0 3 S1 D", "5 S0 S1 S2 D"], 2)
    assert (o, i) == ("0 S0 S1 D", "5 S1 S2 D")


def test_crddrop_all_empty():
    o, i = out_text(CrdDrop("d"), ["0 1 S0 D", "S0 S1 D"], 2)
    assert (o, i) == ("S0 D", "S1 D")


def test_crdhold():
    o, i = out_text(CrdHold("h"), ["4 7 S0 D", "1 2 S0 3 S1 D"], 2)
    assert (o, i) == ("4 4 S0 7 S1 D", "1 2 S0 3 S1 D")


def test_crdhold_empty_fiber_and_bare_stop():
    o, i = out_text(CrdHold("h"), ["4 S0 S1 D", "S1 S2 D"], 2)
    assert (o, i) == ("S1 S2 D", "S1 S2 D")


# ---- fork and join ---------------------------------------------------------------------------

def test_fork_level0():
    lanes = out_text(Fork("f", 2, 0), ["0 1 2 S0 D"], 2)
    assert lanes == ["0 2 S0 D", "1 S0 D"]
    (o,) = out_text(Join("j", 2, 0), [parse(x) for x in lanes], 1)
    assert o == "0 1 2 S0 D"


def test_fork_join_lane_with_one_empty_unit():
    """Lane 1's only unit is an empty fiber: its stop is not bare, so join restores it."""
    lanes, _ = run_node(Fork("f", 2, 1), ["5 6 S0 S0 7 S1 D"], 2)
    assert [show_empt(x) for x in lanes] == ["5 6 S0 7 S1 D", "S1 D"]
    (o,), _ = run_node(Join("j", 2, 1), lanes, 1)
    assert show_empt(o) == "5 6 S0 S0 7 S1 D"
    lanes, _ = run_node(Fork("f", 3, 1), ["5 S1 D"], 3)
    assert [show_empt(x) for x in lanes] == ["5 S1 D", "S1/1 D", "S1/1 D"]


def test_fork_level1_units_are_fibers():
    lanes = out_text(Fork("f", 2, 1), ["5 6 S0 S0 7 S0 8 S1 D"], 2)
    assert lanes == ["5 6 S0 7 S1 D", "S0 8 S1 D"]
    (o,) = out_text(Join("j", 2, 1), [parse(x) for x in lanes], 1)
    assert o == "5 6 S0 S0 7 S0 8 S1 D"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.lists(st.lists(st.lists(st.integers(0, 9), max_size=3),
                                            min_size=1, max_size=4), min_size=1, max_size=3))
def test_fork_join_round_trip(lanes, outer):
    """Streams of order 2 (outer fibers of inner fibers, empty ones too) and their level-0
    stream go through fork and join unchanged, emptiness of stops included."""
    inner = []
    top = []
    for fibers in outer:
        for fi, fib in enumerate(fibers):
            top.append(fi)
            inner += sorted(set(fib))
            inner.append(stop(0) if fi < len(fibers) - 1 else stop(1))
        top.append(stop(0))
    inner[-1] -= 1
    top[-1] -= 1
    inner.append(D)
    top.append(D)
    for level, stream in ((0, inner), (1, inner), (0, top)):
        outs, _ = run_node(Fork("f", lanes, level), [stream], lanes)
        (back,), _ = run_node(Join("j", lanes, level), outs, 1)
        assert back == stream, (level, show_all(stream), [show_all(o) for o in outs])


# ---- writers and assembly --------------------------------------------------------------------

def test_writers_assemble_csr_and_dcsr():
    from fuseflowc.formats import shorthand
    from fuseflowc.sim.assemble import assemble
    from fuseflowc.sim.prims_write import Writer
    # REFERENCE.md's matrix written back in CSR: the dense i level may have no writer
    w = Writer("w", "write_level", "T", 1, "compressed")
    wv = Writer("v", "write_vals", "T")
    run_node(w, ["0 2 S0 S0 1 S1 D"], 0)
    run_node(wv, [vals("1 2 S0 S0 3 S1 D")], 0)
    assert w.done and wv.done
    t, counts = assemble("T", shorthand("csr", 2), (3, 3), None, {1: w.got}, wv.got)
    assert t.to_dense().tolist() == [[1, 0, 2], [0, 0, 0], [0, 3, 0]]
    assert t.levels[1].seg.tolist() == SEG and counts["vals"] == 3
    # DCSR with no rows at all: the j stream is one bare stop
    t, _ = assemble("T", shorthand("dcsr", 2), (2, 2), None, {0: parse("S0 D")[:-1],
                    1: parse("S1/1 D")[:-1]}, [])
    assert t.nnz == 0 and t.levels[0].crd.tolist() == []
    with pytest.raises(UserError, match="values written"):
        assemble("T", shorthand("csr", 2), (3, 3), None, {1: w.got}, wv.got[:-2])



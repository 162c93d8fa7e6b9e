"""The compiled engine's crd family (sim/cpp/prims_crd.cpp: crddrop, crdhold, fork, join) against
sim/prims_crd.py, on hand-written and generated streams (tests/support/fast_prims.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.channel import Channel
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.prims_crd import CrdDrop, CrdHold, Fork, Join
from fuseflowc.sim.tokens import D, N, parse
from tests.support.fast_prims import (
    DEFAULT,
    SETTINGS,
    Case,
    arches,
    assert_same,
    at0,
    blockify,
    crd_streams,
    key,
    mutate,
    outer,
    single,
    sink_ports,
    times_for,
    tokens,
    trees,
)

pytestmark = pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")


def _outer_inner(draw):
    depth = draw(st.integers(2, 3))
    t = draw(trees(depth, hi=6))
    inner = tokens(t, depth, draw) + [D]
    ot = outer(t, depth, lambda leaf: draw(st.sampled_from([0, 1, 3, N])))
    out = tokens(ot, depth - 1, draw) + [D]
    return mutate(draw, out), mutate(draw, inner)


@SETTINGS
@given(data=st.data())
def test_crddrop_crdhold_random(data):
    draw = data.draw
    cls = draw(st.sampled_from([CrdDrop, CrdHold]), label="cls")
    o, i = _outer_inner(draw)
    a = draw(arches())
    feeds = [(o, times_for(draw, len(o))), (i, times_for(draw, len(i)))]
    assert_same(single(lambda: cls("c", a["ii"], a["lat"]), feeds, ["crd", "crd"], 2, a))


def _lane_stream(draw):
    depth = draw(st.integers(1, 3))
    val = draw(st.booleans())
    (s,) = draw(crd_streams(1, depth, val=val))
    if val and draw(st.booleans()):
        s = blockify(draw, s, (2, 2))
    return s, depth


@SETTINGS
@given(data=st.data())
def test_fork_random(data):
    draw = data.draw
    s, depth = _lane_stream(draw)
    s = mutate(draw, s)
    lanes = draw(st.integers(1, 4), label="lanes")
    level = draw(st.integers(0, depth), label="level")
    a = draw(arches())
    assert_same(single(lambda: Fork("f", lanes, level, a["ii"], a["lat"]),
                       [(s, times_for(draw, len(s)))], ["crd"], lanes, a))


def _fork_join(s, lanes, level, a, feed_times):
    """Fork then Join (the lanes between them bounded like the outputs)."""
    def make():
        f = Fork("f", lanes, level, a["ii"], a["lat"])
        j = Join("j", lanes, level, a["ii"], a["lat"])
        return [f, j], [(s, feed_times)], wiring

    def wiring(nodes, ins, chans, sinks, arch):
        f, j = nodes
        mid = [Channel(f"l{k}", "crd", arch["out_depth"]) for k in range(lanes)]
        chans.extend(mid)
        f.wire(ins, mid)
        j.wire(mid, sink_ports(1, sinks, chans, arch))
    return Case(make, ["crd"], a)


@SETTINGS
@given(data=st.data())
def test_fork_join_random(data):
    draw = data.draw
    s, depth = _lane_stream(draw)
    lanes = draw(st.integers(1, 4), label="lanes")
    level = draw(st.integers(0, depth), label="level")
    a = draw(arches())
    assert_same(_fork_join(s, lanes, level, a, times_for(draw, len(s))))


@SETTINGS
@given(data=st.data())
def test_join_lanes_random(data):
    """Join alone on lane streams a Python fork made (maybe mutated: misaligned lanes)."""
    draw = data.draw
    s, depth = _lane_stream(draw)
    lanes = draw(st.integers(1, 4), label="lanes")
    level = draw(st.integers(0, depth), label="level")
    f = Fork("f", lanes, level)
    outs = [Channel(f"l{k}", "crd", None) for k in range(lanes)]
    src = Channel("s", "crd", None)
    src.feed(s)
    f.wire([src], outs)
    Engine([f], []).run()
    feeds = [(mutate(draw, list(c.toks)), None) for c in outs]
    feeds = [(t, times_for(draw, len(t))) for t, _ in feeds]
    a = draw(arches())
    assert_same(single(lambda: Join("j", lanes, level, a["ii"], a["lat"]), feeds,
                       ["crd"] * lanes, 1, a))


def test_crd_hand_written_and_errors():
    feeds = [at0(parse("0 1 2 S0 D")), at0(parse("5 S0 S0 6 7 S1 D"))]
    out = assert_same(single(lambda: CrdDrop("c"), feeds, ["crd", "crd"], 2, DEFAULT))
    assert out[3] == [[key(x) for x in parse(s)] for s in ("0 2 S0", "5 S0 6 7 S1")]
    out = assert_same(single(lambda: CrdHold("c"), feeds, ["crd", "crd"], 2, DEFAULT))
    assert out[3][0] == [key(x) for x in parse("0 S0 S0 2 2 S1")]
    bad = [at0(parse("S0 D")), at0(parse("S0 D"))]
    for cls in (CrdDrop, CrdHold):
        # (single() calls the factory at once: the late binding of cls is harmless)
        out = assert_same(single(lambda: cls("c"), bad, ["crd", "crd"], 2, DEFAULT))  # noqa: B023
        assert out[0] == "error" and "outer and inner stops" in out[1]
    lanes = [at0(parse("0 S0 D")), at0(parse("1 S1 D"))]
    out = assert_same(single(lambda: Join("j", 2, 0), lanes, ["crd"] * 2, 1, DEFAULT))
    assert out[0] == "error" and "lane stops" in out[1]
    out = assert_same(single(lambda: Fork("f", 3, 1), [at0(parse("0 1 S0 2 S0 S1"))], ["crd"],
                             3, DEFAULT))
    assert out[0] == "error" and "deadlocked" in out[1]

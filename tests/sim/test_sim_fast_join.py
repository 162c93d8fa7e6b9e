"""The compiled engine's join family (sim/cpp/prims_join.cpp: intersect and union over n >= 2
inputs) against sim/prims_join.py, on hand-written and generated streams (tests/support/fast_prims.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.prims_join import Intersect, Union
from fuseflowc.sim.tokens import S0, D, parse, stop
from tests.support.fast_prims import (
    DEFAULT,
    SETTINGS,
    arches,
    assert_same,
    at0,
    crd_streams,
    key,
    mutate,
    single,
    times_for,
    values,
)

pytestmark = pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")


def _refs(draw, crd, as_val):
    return [(draw(values()) if as_val else 100 + 7 * k) if x >= 0 else x
            for k, x in enumerate(crd)]


@SETTINGS
@given(data=st.data())
def test_join_random(data):
    draw = data.draw
    n = draw(st.integers(2, 4), label="n")
    union = draw(st.booleans(), label="union")
    required = tuple(draw(st.sets(st.integers(0, n - 1)))) if union else ()
    crds = [mutate(draw, s) for s in draw(crd_streams(n))]
    as_val = draw(st.booleans())
    feeds = []
    for c in crds:
        feeds.append((c, times_for(draw, len(c))))
        feeds.append((_refs(draw, c, as_val), times_for(draw, len(c))))
    a = draw(arches())
    cls = Union if union else Intersect
    kinds = ["crd", "val" if as_val else "ref"] * n
    assert_same(single(lambda: cls("j", n, required, ii=a["ii"], lat=a["lat"]) if union
                       else cls("j", n, ii=a["ii"], lat=a["lat"]), feeds, kinds, n + 1, a))


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("union", [False, True])
def test_join_hand_written(n, union):
    crd = ["0 2 5 S0 1 S1 D", "2 3 5 S0 N S1 D", "2 5 S0 1 4 S1 D"][:n]
    ref = ["10 12 15 S0 11 S1 D", "22 23 25 S0 N S1 D", "32 35 S0 31 34 S1 D"][:n]
    feeds = [at0(parse(s)) for pair in zip(crd, ref) for s in pair]
    cls = Union if union else Intersect
    out = assert_same(single(lambda: cls("j", n), feeds, ["crd", "ref"] * n, n + 1, DEFAULT))
    got = out[3][0]
    want = {(2, False): "2 5 S0 S1", (3, False): "2 5 S0 S1", (2, True): "0 2 3 5 S0 1 S1",
            (3, True): "0 2 3 5 S0 1 4 S1"}[(n, union)]
    assert got == [key(x) for x in parse(want)]


@pytest.mark.parametrize("n", [2, 3])
def test_join_errors(n):
    for crd, msg in ((["0 S0 D", "0 S1 D"], "stop tokens"), (["0 D", "1 S0 D"], "stream ends")):
        crd = (crd + ["0 S0 D"])[:n]
        feeds = [at0(parse(s)) for c in crd for s in (c, c)]
        out = assert_same(single(lambda: Intersect("j", n), feeds, ["crd", "ref"] * n, n + 1,
                                 DEFAULT))
        assert out[0] == "error" and msg in out[1], out


@pytest.mark.parametrize("depth", [2, 1 << 20, None], ids=["ring", "deep", "unbounded"])
def test_join_deadlock(depth):
    """The same deadlock report on both engines whatever the output channels' kind."""
    feeds = [at0(parse(s)) for s in ("0 1 S0", "0 1 S0", "1 S0", "1 S0")]   # no D
    out = assert_same(single(lambda: Union("j", 2), feeds, ["crd", "ref"] * 2, 3,
                             {**DEFAULT, "out_depth": depth}))
    assert out[0] == "error" and "deadlocked" in out[1]


@st.composite
def _long_fibers(draw, fibers: int):
    out = []
    for f in range(fibers):
        out += sorted(draw(st.sets(st.integers(0, 300), max_size=80)))
        out.append(S0 if f < fibers - 1 else stop(1))
    return out + [D]


@SETTINGS
@given(data=st.data())
def test_intersect_long_runs(data):
    """Long runs of unmatched coordinates (the intersection's skip loop) under random arrival
    cycles and back-pressure."""
    draw = data.draw
    fibers = draw(st.integers(1, 3))
    a, b = draw(_long_fibers(fibers)), draw(_long_fibers(fibers))
    feeds = [(a, times_for(draw, len(a))), (list(range(len(a))), times_for(draw, len(a))),
             (b, times_for(draw, len(b))), (list(range(len(b))), times_for(draw, len(b)))]
    arch = draw(arches())
    assert_same(single(lambda: Intersect("j", 2, ii=arch["ii"], lat=arch["lat"]), feeds,
                       ["crd", "ref"] * 2, 3, arch))


@st.composite
def _shared_fibers(draw, fibers: int):
    """Two aligned streams of fibers that share most coordinates: long runs of equal heads
    (a dense k-loop's intersection), broken by a coordinate only one side has."""
    a, b = [], []
    for f in range(fibers):
        for c in range(draw(st.integers(0, 40))):
            side = draw(st.sampled_from(["both"] * 8 + ["a", "b"]))
            if side != "b":
                a.append(c)
            if side != "a":
                b.append(c)
        s = S0 if f < fibers - 1 else stop(1)
        a.append(s)
        b.append(s)
    return a + [D], b + [D]


@SETTINGS
@given(data=st.data())
def test_join_equal_runs(data):
    """Runs of equal coordinates on both inputs (the cursor path of prims_join.cpp's run2:
    match_some) under random arrival cycles and back-pressure, intersect and union."""
    draw = data.draw
    a, b = draw(_shared_fibers(draw(st.integers(1, 2))))
    feeds = [(a, times_for(draw, len(a))), (list(range(len(a))), times_for(draw, len(a))),
             (b, times_for(draw, len(b))), (list(range(100, 100 + len(b))),
                                            times_for(draw, len(b)))]
    arch = draw(arches())
    cls = draw(st.sampled_from([Intersect, Union]))
    assert_same(single(lambda: cls("j", 2, ii=arch["ii"], lat=arch["lat"]), feeds,
                       ["crd", "ref"] * 2, 3, arch))

"""The compiled engine's locate (sim/cpp/prims_locate.cpp) against sim/prims_locate.py, on
hand-written and generated streams (tests/support/fast_prims.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.prims_locate import Locate
from fuseflowc.sim.tokens import D, N, parse
from tests.support.fast_prims import (
    DEFAULT,
    SETTINGS,
    arches,
    assert_same,
    at0,
    key,
    mutate,
    outer,
    single,
    times_for,
    tokens,
    trees,
)

pytestmark = pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")


@SETTINGS
@given(data=st.data())
def test_locate_random(data):
    draw = data.draw
    depth = draw(st.integers(1, 3), label="depth")
    size = draw(st.integers(0, 14), label="size")
    t = draw(trees(depth))
    crd = tokens(t, depth, draw) + [D]
    if depth == 1:
        parent = [draw(st.sampled_from([0, 3, N]))] + [D]
    else:
        pt = outer(t, depth, lambda leaf: draw(st.sampled_from([0, 1, 5, N])))
        parent = tokens(pt, depth - 1, draw) + [D]
    crd, parent = mutate(draw, crd), mutate(draw, parent)
    ref = [200 + k if x >= 0 else x for k, x in enumerate(crd)]
    feeds = [(crd, times_for(draw, len(crd))), (ref, times_for(draw, len(ref))),
             (parent, times_for(draw, len(parent)))]
    a = draw(arches())
    assert_same(single(lambda: Locate("l", size, ii=a["ii"], lat=a["lat"]), feeds,
                       ["crd", "ref", "ref"], 3, a))


def test_locate_hand_written_and_errors():
    ok = [at0(parse("0 3 9 S0 2 S1 D")), at0(parse("5 6 7 S0 8 S1 D")), at0(parse("1 N S0 D"))]
    out = assert_same(single(lambda: Locate("l", 4), ok, ["crd", "ref", "ref"], 3, DEFAULT))
    assert out[3][2] == [key(x) for x in parse("4 7 S0 S1")]
    bad = [at0(parse("0 S2 D")), at0(parse("5 S2 D")), at0(parse("1 S0 D"))]
    out = assert_same(single(lambda: Locate("l", 4), bad, ["crd", "ref", "ref"], 3, DEFAULT))
    assert out[0] == "error" and "stop tokens" in out[1]
    bad = [at0(parse("0 D")), at0(parse("5 D")), at0(parse("1 D"))]
    out = assert_same(single(lambda: Locate("l", 4), bad, ["crd", "ref", "ref"], 3, DEFAULT))
    assert out[0] == "error" and "inside a fiber" in out[1]

"""The intersection's bulk skipping (sim/prims_join.py) against the per-token path: the run
length helper against a plain loop, and whole joins on random streams with random arrival
times and depths (hypothesis): same tokens, same firing cycles, same stalls."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.sim.channel import Channel
from fuseflowc.sim.prims_join import Intersect, _Joiner, _run_length
from fuseflowc.sim.tokens import S0, D, stop


def _naive(d, lim):
    k = 0
    for x in d:
        if x < 0 or (lim >= 0 and x >= lim):
            break
        k += 1
    return k


@st.composite
def crd_tokens(draw):
    """A crd stream prefix: sorted fibers separated by stops (and the odd N)."""
    out = []
    for _ in range(draw(st.integers(0, 6))):
        fiber = sorted(draw(st.sets(st.integers(0, 300), max_size=80)))
        out += fiber + [draw(st.sampled_from([S0, -2, stop(1), D]))]
    return out


@settings(max_examples=300, deadline=None)
@given(crd_tokens(), st.integers(-3, 320))
def test_run_length_is_the_plain_loop(toks, lim):
    d = deque(toks)
    assert _run_length(d, lim) == _naive(d, lim)


def _fiber_stream(draw, fibers, hi):
    crd = []
    for f in range(fibers):
        crd += sorted(draw(st.sets(st.integers(0, hi), max_size=hi + 1)))
        crd.append(S0 if f < fibers - 1 else stop(1))
    return crd + [D]


@st.composite
def join_case(draw):
    fibers = draw(st.integers(1, 4))
    hi = draw(st.integers(0, 60))
    a = _fiber_stream(draw, fibers, hi)
    b = _fiber_stream(draw, fibers, hi)
    ta = sorted(draw(st.lists(st.integers(0, 400), min_size=len(a), max_size=len(a))))
    tb = sorted(draw(st.lists(st.integers(0, 400), min_size=len(b), max_size=len(b))))
    depth = draw(st.sampled_from([None, 1, 2, 7]))
    return a, b, ta, tb, depth


def _run(a, b, ta, tb, depth):
    ins = []
    for toks, times in ((a, ta), (list(range(100, 100 + len(a))), ta), (b, tb),
                        (list(range(500, 500 + len(b))), tb)):
        # bounded, so every pop records its slot's free cycle (the firing cycle + 1)
        c = Channel("in", "crd", len(toks))
        c.toks.extend(toks)
        c.times.extend(times)
        ins.append(c)
    outs = [Channel(f"o{i}", "crd", depth) for i in range(3)]
    node = Intersect("x", 2)
    node.wire(ins, outs)
    got = [[], [], []]
    # Drain the outputs as a consumer with ii 1 would, freeing slots one cycle after a pop.
    for _ in range(10_000):
        node.run()
        moved = False
        for g, o in zip(got, outs):
            while o.toks:
                g.append((o.toks.popleft(), o.times.popleft()))
                o.free.append(node.t + 1)
                moved = True
        if node.done or not moved:
            break
    frees = [list(c.free) for c in ins]
    return got, node.t, node.fires, node.stall, frees


@settings(max_examples=200, deadline=None)
@given(join_case())
def test_bulk_skipping_matches_the_per_token_path(case):
    fast = _run(*case)
    try:
        _Joiner.BULK = False
        slow = _run(*case)
    finally:
        _Joiner.BULK = True
    assert fast == slow


@st.composite
def scan_case(draw):
    size = draw(st.integers(1, 40))
    refs = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    depth = draw(st.integers(1, 60))
    frees = [sorted(draw(st.lists(st.integers(0, 300), min_size=depth, max_size=depth)))
             for _ in range(2)]
    return size, refs + [stop(0), D], depth, frees, draw(st.integers(1, 3))


def _scan(size, parent, depth, frees, ii):
    from fuseflowc.sim.prims_stream import Scan
    src = Channel("p", "ref", None)
    src.feed(parent)
    outs = [Channel(f"o{i}", "crd", depth) for i in range(2)]
    for o, fr in zip(outs, frees):
        o.free.clear()
        o.free.extend(fr)          # slots that free late: back-pressure inside a fiber
    node = Scan("s", True, size, ii=ii)
    node.wire([src], outs)
    got = [[], []]
    for _ in range(10_000):
        node.run()
        for g, o in zip(got, outs):
            while o.toks:
                g.append((o.toks.popleft(), o.times.popleft()))
                o.free.append(g[-1][1] + 5)   # the consumer pops 5 cycles after arrival
        if node.done:
            break
    return got, node.t, node.fires, node.stall


@settings(max_examples=200, deadline=None)
@given(scan_case())
def test_scanner_bulk_under_back_pressure_matches_the_per_token_path(case):
    from fuseflowc.sim.prims_stream import Scan
    fast = _scan(*case)
    try:
        Scan.BULK = False
        slow = _scan(*case)
    finally:
        Scan.BULK = True
    assert fast == slow

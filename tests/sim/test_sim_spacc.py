"""The order-n sparse accumulator (sim/prims_spacc.py, SAMML `spacc3`; sim/cpp/prims_spacc.cpp):
against an independent sum of the points it is fed, against spacc2 at order 2 (cycle for
cycle), and the compiled engine against the Python one on random and mutated streams."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.prims_compute import Spacc2
from fuseflowc.sim.prims_spacc import Spacc3, SpaccN
from fuseflowc.sim.tokens import D, N, parse, show_all, show_empt
from tests.support.fast_prims import (
    DEFAULT,
    SETTINGS,
    arches,
    assert_same,
    at0,
    mutate,
    outcome,
    outer,
    single,
    times_for,
    tokens,
    trees,
    values,
)

fast = pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")


def _streams(draw, order: int, depth: int, hi: int = 5, n_prob: bool = True):
    """crd(order-1), ..., crd0, val of a random tree of `depth` >= order + 1 levels (the levels
    above the order ones are the reduced index and its context); outer coordinates may repeat
    (they are accumulated) and may be N."""
    t = draw(trees(depth, hi=hi))
    crd0 = tokens(t, depth, draw) + [D]
    pick = [0, 1, 2, 4] + ([N] if n_prob else [])
    crds = [crd0]
    up, d = t, depth
    for _ in range(order - 1):
        up = outer(up, d, lambda leaf: draw(st.sampled_from(pick)))
        d -= 1
        crds.insert(0, tokens(up, d, draw) + [D])
    num = values() if n_prob else st.floats(-100, 100, allow_nan=False)
    val = [draw(num) if x >= 0 else x for x in crd0]
    return crds + [val]


def _fibers(stream: list) -> list:
    """(tokens, closing stop level) of each fiber of a stream: every stop ends one."""
    out, cur = [], []
    for x in stream:
        if x.__class__ is int and x < 0 and x != N:
            if x == D:
                break
            out.append((cur, (-3 - x) & 0xFFFFFF))
            cur = []
        else:
            cur.append(x)
    return out


def _decode(crds: list, val: list, order: int, per_fiber: bool) -> dict:
    """The points of order-deep SAM streams, (group, coordinates...) -> summed value, read as
    nested loops: each coordinate of stream m owns the next fiber of stream m+1; an empty fiber
    owns one (bare-stop) fiber of every deeper stream. Groups are the outermost stream's fibers
    (`per_fiber`, an accumulator's output) or its runs closed by a stop of level >= 1 (its
    input: a reduction ends there)."""
    fib = [_fibers(c) for c in crds]
    vfib = _fibers(val)
    pos = [0] * order
    sums: dict = {}

    def walk(m: int, path: tuple, group: int) -> int:
        toks, lv = fib[m][pos[m]]
        vals = vfib[pos[m]][0] if m == order - 1 else None
        pos[m] += 1
        if not toks:
            for j in range(m + 1, order):
                pos[j] += 1
        for i, x in enumerate(toks):
            if m == order - 1:
                v = vals[i]
                if x >= 0 and N not in path and v.__class__ is not int:
                    k = (group, *path, x)
                    sums[k] = sums.get(k, 0.0) + v
            else:
                walk(m + 1, path + (x,), group)
        return lv

    group = 0
    while pos[0] < len(fib[0]):
        lv = walk(0, (), group)
        if per_fiber or lv >= 1:
            group += 1
    return sums


def _run(node, streams: list) -> list:
    """Run one node on the Python engine with every stream ready at cycle 0: its output
    streams (raw tokens)."""
    kinds = ["crd"] * (len(streams) - 1) + ["val"]
    nodes, sinks, _ = single(lambda: node, [at0(s) for s in streams], kinds, len(streams),
                             DEFAULT).build()
    Engine(nodes, sinks).run()
    return [list(w.got) for w in sinks]


def test_spacc3_hand_written():
    # r = 0: points (0,1,2)=1, (0,1,3)=2, (2,0,0)=3; r = 1: (0,1,2)=10, (1,0,0)=20
    c2 = "0 2 S0 0 1 S1 D"
    c1 = "1 S0 0 S1 1 S0 0 S2 D"
    c0 = "2 3 S1 0 S2 2 S1 0 S3 D"
    v = "1 2 S1 3 S2 10 S1 20 S3 D"
    node = Spacc3("s")
    out = _run(node, [parse(c2), parse(c1), parse(c0), parse(v, "val")])
    assert [show_all(s) for s in out[:3]] == ["0 1 2 S0", "1 S0 0 S0 0 S1", "2 3 S1 0 S1 0 S2"]
    assert show_all(out[3], "val") == "11 2 S1 20 S1 3 S2"
    assert node.flops == 5


def test_spacc3_empty_reduction():
    # no points at all: bare stops one level up per depth
    node = Spacc3("s")
    out = _run(node, [parse("S1 D"), parse("S2 D"), parse("S3 D"), parse("S3 D", "val")])
    assert [show_empt(s) for s in out] == ["S0", "S1/1", "S2/2", "S2/2"]


@SETTINGS
@given(data=st.data())
def test_spaccn_order2_is_spacc2(data):
    """At order 2 the general algorithm is spacc2: same streams, same cycles, same firings."""
    draw = data.draw
    depth = draw(st.integers(3, 4), label="depth")
    streams = _streams(draw, 2, depth)
    a = draw(arches())
    feeds = [(s, times_for(draw, len(s))) for s in streams]
    kinds = ["crd", "crd", "val"]
    want = outcome(single(lambda: Spacc2("s", ii=a["ii"], lat=a["lat"]), feeds, kinds, 3, a),
                   Engine)
    got = outcome(single(lambda: SpaccN("s", ii=a["ii"], lat=a["lat"], order=2), feeds,
                         kinds, 3, a), Engine)
    assert got[0] != "error" and got[:2] == want[:2] and got[3:] == want[3:]


@SETTINGS
@given(data=st.data())
def test_spacc3_sums_every_point(data):
    """The flushed points are the sums, per reduction, of the points fed (an oracle that reads
    the input streams as nested loops), sorted, one flush per reduction."""
    draw = data.draw
    depth = draw(st.integers(4, 5), label="depth")
    streams = _streams(draw, 3, depth, n_prob=False)
    out = _run(Spacc3("s"), streams)
    want = _decode(streams[:3], streams[3], 3, per_fiber=False)
    got = _decode(out[:3], out[3], 3, per_fiber=True)
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-12)


@fast
@SETTINGS
@given(data=st.data())
def test_spacc3_engines_agree(data):
    draw = data.draw
    op = draw(st.sampled_from(["sum", "max"]), label="op")
    depth = draw(st.integers(3, 5), label="depth")
    streams = [mutate(draw, s) for s in _streams(draw, 3, max(depth, 4))]
    a = draw(arches())
    feeds = [(s, times_for(draw, len(s))) for s in streams]
    assert_same(single(lambda: Spacc3("s", op, ii=a["ii"], lat=a["lat"]), feeds,
                       ["crd", "crd", "crd", "val"], 4, a), nan_exact=op == "max")


@fast
@pytest.mark.parametrize("order", [9, 11])
@pytest.mark.parametrize("depth", [None, "1", "inf"])
def test_nested_matmul_spacc3_orders_engines_agree(order, depth):
    """Figure 17's orders 9 and 11 (the reduction over k outside i, l, j: spacc3), lowered,
    on both engines at several channel depths: every figure, node, channel and output bit.
    At depth 1 both deadlock with the same report (an accumulator holds its input until the
    reduction ends while a fanned-out producer waits on it; spacc2's orders 4 and 10 do too)."""
    from fuseflowc import pipeline
    from fuseflowc.data.gen import random_inputs
    from fuseflowc.lang.load import load_program
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.differential import first_difference, run
    from tests.support.paths import ROOT

    p = load_program(str(ROOT / "ir_examples/kernels/nested_matmul_sweep.ff"))
    module = pipeline.compile(p, pipeline.CompileOptions(orders={"abc": order},
                                                         free_input_order=True)).module
    assert any(n.KIND == "spacc3" for g in module.graphs for n in g.nodes)
    sizes = {"I": 6, "K": 5, "J": 7, "L": 3}
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    for seed, density in ((0, 0.3), (1, 0.0), (2, 1.0)):
        inputs = pipeline.as_declared(module, random_inputs(specs, sizes, seed,
                                                            {"A": density, "B": density}))
        arch = Arch.load(depth=depth)
        py = run(module, inputs, sizes, arch, "python", 500_000)
        fst = run(module, inputs, sizes, arch, "fast", 500_000)
        assert py.error is None or depth == "1"
        assert first_difference(py, fst) is None


def test_emit_empty_hand_written():
    """`emit_empty`: every outer coordinate received is flushed, an empty fiber below where
    nothing was accumulated (order 3: an empty crd1 fiber gives crd0 and val a bare stop)."""
    # r = 0: crd2 [0, 2]; under 0: crd1 [1, 3]; (0, 1): crd0 [2] = 1; (0, 3) and 2: empty
    c2, c1, c0, v = "0 2 S1 D", "1 3 S0 S2 D", "2 S0 S1 S3/1 D", "1 S0 S1 S3/1 D"
    streams = [parse(c2), parse(c1), parse(c0), parse(v, "val")]
    out = _run(Spacc3("s"), streams)
    assert [show_empt(s) for s in out] == ["0 S0", "1 S1", "2 S2", "1 S2"]
    out = _run(Spacc3("s", emit_empty=True), streams)
    assert [show_empt(s) for s in out] == ["0 2 S0", "1 3 S0 S1", "2 S0 S1 S2/1",
                                           "1 S0 S1 S2/1"]
    # order 2, one reduction over two r: crd1 [0, 1, 2] then [1]; (0): [4] = 1, (2): [0] = 2
    streams = [parse("0 1 2 S0 1 S1 D"), parse("4 S0 S0 0 S1 S2 D"),
               parse("1 S0 S0 2 S1 S2 D", "val")]
    for make in (lambda e: Spacc2("s", emit_empty=e), lambda e: SpaccN("s", order=2,
                                                                      emit_empty=e)):
        assert [show_empt(s) for s in _run(make(False), streams)] == [
            "0 2 S0", "4 S0 0 S1", "1 S0 2 S1"]
        assert [show_empt(s) for s in _run(make(True), streams)] == [
            "0 1 2 S0", "4 S0 S0 0 S1", "1 S0 S0 2 S1"]


def _received(stream: list) -> list:
    """The non-N coordinates of an accumulator's outermost input stream, per reduction."""
    groups, cur = [], set()
    for toks, lv in _fibers(stream):
        cur |= {x for x in toks if x >= 0}
        if lv >= 1:
            groups.append(sorted(cur))
            cur = set()
    return groups


@SETTINGS
@given(data=st.data())
def test_emit_empty_same_points_every_outer_coordinate(data):
    """With `emit_empty` the flushed points are those without it, and the outermost level of
    each flush is every (non-N) coordinate the reduction received."""
    draw = data.draw
    order = draw(st.sampled_from([2, 3]), label="order")
    depth = draw(st.integers(order + 1, order + 2), label="depth")
    streams = _streams(draw, order, depth)
    make = (lambda e: Spacc2("s", emit_empty=e)) if order == 2 else \
        (lambda e: Spacc3("s", emit_empty=e))
    plain, every = _run(make(False), streams), _run(make(True), streams)
    def points(out):   # repr: the same sums in the same order, NaN included
        return {k: repr(v) for k, v in _decode(out[:order], out[order], order, True).items()}
    assert points(every) == points(plain)
    assert [sorted(t) for t, _ in _fibers(every[0])] == _received(streams[0])


@fast
@SETTINGS
@given(data=st.data())
def test_emit_empty_engines_agree(data):
    draw = data.draw
    order = draw(st.sampled_from([2, 3]), label="order")
    op = draw(st.sampled_from(["sum", "max"]), label="op")
    depth = draw(st.integers(order + 1, order + 2), label="depth")
    streams = [mutate(draw, s) for s in _streams(draw, order, depth)]
    a = draw(arches())
    feeds = [(s, times_for(draw, len(s))) for s in streams]
    cls = Spacc2 if order == 2 else Spacc3
    assert_same(single(lambda: cls("s", op, ii=a["ii"], lat=a["lat"], emit_empty=True), feeds,
                       ["crd"] * order + ["val"], order + 1, a), nan_exact=op == "max")

"""The compiled engine's compute family (sim/cpp/prims_compute.cpp: ALUs of every op, reduce,
spacc1, spacc2; scalar, b x b block and labelled block values) against sim/prims_compute.py and
sim/ops.py, on hand-written and generated streams (tests/support/fast_prims.py)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.ops import ALU_OPS, arity
from fuseflowc.sim import engine_fast
from fuseflowc.sim.channel import Channel
from fuseflowc.sim.ops import SCALAR_CONST
from fuseflowc.sim.prims_compute import Alu, Reduce, Spacc1, Spacc2
from fuseflowc.sim.prims_crd import Fork, Join
from fuseflowc.sim.tokens import D, N, parse, stop
from tests.support.fast_prims import (
    DEFAULT,
    SETTINGS,
    SPECIAL,
    Case,
    arches,
    assert_same,
    at0,
    bits,
    blockify,
    crd_streams,
    key,
    mutate,
    outcome,
    outer,
    single,
    sink_ports,
    times_for,
    tokens,
    trees,
    values,
)

pytestmark = pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")


UNARY = [op for op in ALU_OPS if arity(op) == 1]


def _val_stream(draw, depth=None):
    (s,) = draw(crd_streams(1, depth, val=True))
    return s


def _binary_pair(draw):
    """Two aligned value streams (a stop may differ in emptiness); some values N on one side
    (the identity)."""
    (a,) = draw(crd_streams(1, val=True, n_prob=False))
    b = [draw(values()) if x.__class__ is not int else x for x in a]
    idx = [i for i, x in enumerate(b) if x.__class__ is int and x <= -3]
    if idx and draw(st.booleans()):
        i = draw(st.sampled_from(idx))
        b[i] = stop((-3 - b[i]) & 0xFFFFFF, draw(st.integers(0, 2)))
    for s in (a, b):
        for i, x in enumerate(s):
            if x.__class__ is not int and draw(st.integers(0, 6)) == 0:
                s[i] = N
    return a, b


# NaN + NaN and NaN * NaN with different bits (sign or payload): the compiled engine gives the
# first operand's NaN (x86's rule, numpy's, and that of CPython's specialized float ops); the
# Python engine gives the first or the second operand's depending on whether CPython specialized
# the bytecode doing it (its generic float_add / float_mul return the second's). Where such a
# pair can occur (scalar sums and products of random values) NaNs compare as equal whatever
# their bits; every other value, and every NaN where one operand is NaN or both are the same
# NaN (test_alu_every_op_on_special_values), compares bit for bit. A scalar `bmm` (a 1 x 1
# block matmul) is the same product as `mul` (sim.ops.alu_function).
NAN_PAIRS = ("add", "mul", "bmm", "addc", "mulc")


def _nan_pair(x, y) -> bool:
    return (x.__class__ is float and y.__class__ is float and x != x and y != y
            and struct.pack("<d", x) != struct.pack("<d", y))


def test_nan_pairs_take_the_first_operand():
    """The compiled engine's rule for two different NaNs (see NAN_PAIRS) is numpy's."""
    a, b = -math.nan, bits(0x7FF8000000000ABC)
    for op, ref in (("add", np.add), ("mul", np.multiply), ("sub", np.subtract),
                    ("div", np.divide)):
        feeds = [at0([a, b, D]), at0([b, a, D])]
        # (single() calls the factory at once: the late binding of op is harmless)
        case = single(lambda: Alu("a", op), feeds, ["val", "val"], 1, DEFAULT)  # noqa: B023
        got = outcome(case, engine_fast.FastEngine)[3][0]
        with np.errstate(all="ignore"):
            want = [float(ref(a, b)), float(ref(b, a))]
        assert got == [key(x) for x in want], op


@SETTINGS
@given(data=st.data())
def test_alu_scalar_random(data):
    draw = data.draw
    op = draw(st.sampled_from(ALU_OPS), label="op")
    const = draw(values(), label="const") if op in SCALAR_CONST else None
    a = draw(arches())
    if arity(op) == 2:
        x, y = _binary_pair(draw)
        x, y = mutate(draw, x), mutate(draw, y)
        feeds = [(x, times_for(draw, len(x))), (y, times_for(draw, len(y)))]
    else:
        x = mutate(draw, _val_stream(draw))
        feeds = [(x, times_for(draw, len(x)))]
    assert_same(single(lambda: Alu("a", op, None, const, ii=a["ii"], lat=a["lat"]), feeds,
                       ["val"] * len(feeds), 1, a), nan_exact=op not in NAN_PAIRS)


def test_unary_alu_takes_nothing_after_d():
    """A unary ALU is done at D and takes no token after it, on both engines, however the
    tokens after D arrive (a stream map ends at D; found by hypothesis on [D, D])."""
    for times in ([0, 0], [0, 5]):
        for tail in ([D], [1.5, D], [stop(0), D]):
            case = single(lambda: Alu("a", "relu"), [([D, *tail], times + [5] * (len(tail) - 1))],
                          ["val"], 1, DEFAULT)
            cycles, acts, rows, streams, hops = assert_same(case)
            assert rows[0][1] == 1 and streams == [[]] and hops[1] == 1   # D out, once


@pytest.mark.parametrize("op", ALU_OPS)
def test_alu_every_op_on_special_values(op):
    """Every pair of special values (NaN payloads, signed zeros, infinities, overflow and
    underflow of exp) and every constant: bit for bit the Python results."""
    sp = SPECIAL
    if arity(op) == 2:
        pairs = [(x, y) for x in sp for y in sp if op not in NAN_PAIRS or not _nan_pair(x, y)]
        xs = [x for x, _ in pairs] + [N, 1.0, stop(1)]
        ys = [y for _, y in pairs] + [2.0, N, stop(1)]
        feeds = [at0(xs + [D]), at0(ys + [D])]
        consts = [None]
    else:
        consts = sp if op in SCALAR_CONST else [None]
    for c in consts:
        if arity(op) == 1:
            xs = [x for x in sp if op not in NAN_PAIRS or not _nan_pair(x, c)]
            feeds = [at0(xs + [N, stop(0), D])]
        # (single() calls the factory at once: the late binding of c is harmless)
        assert_same(single(lambda: Alu("a", op, None, c), feeds,  # noqa: B023
                           ["val"] * len(feeds), 1, DEFAULT))


def test_alu_errors():
    for x, y in (("1 S0 D", "1 S1 D"), ("1 D", "S0 D"), ("S0 D", "2 D")):
        out = assert_same(single(lambda: Alu("a", "add"), [at0(parse(x, "val")),
                                                           at0(parse(y, "val"))],
                                 ["val", "val"], 1, DEFAULT))
        assert out[0] == "error" and "operand streams" in out[1]


@SETTINGS
@given(data=st.data())
def test_alu_block_random(data):
    """Plain b x b blocks: numpy's results through the Python node's own functions."""
    draw = data.draw
    op = draw(st.sampled_from(ALU_OPS), label="op")
    const = draw(st.sampled_from(SPECIAL)) if op in SCALAR_CONST else None
    a = draw(arches())
    if arity(op) == 2:
        x, y = _binary_pair(draw)
        x, y = blockify(draw, x, (2, 2)), blockify(draw, y, (2, 2))
        feeds = [(x, times_for(draw, len(x))), (y, times_for(draw, len(y)))]
    else:
        x = blockify(draw, _val_stream(draw), (2, 2))
        feeds = [(x, times_for(draw, len(x)))]
    assert_same(single(lambda: Alu("a", op, 2, const, ii=a["ii"], lat=a["lat"]), feeds,
                       ["val"] * len(feeds), 1, a))


LABELS = [(("i", "k"), ("k", "j"), ("i", "j")), (("i",), ("i",), ("i",)),
          ((), ("i",), ("i",)), (("i", "j"), ("j",), ("i", "j")), ((), (), ()),
          (("i", "j"), ("i", "j"), ())]


@SETTINGS
@given(data=st.data())
def test_alu_labelled_random(data):
    """Labelled block values (block einsums), 0-d values (floats) included."""
    draw = data.draw
    in0, in1, out = draw(st.sampled_from(LABELS), label="labels")
    unary = draw(st.booleans())
    if unary:
        op = draw(st.sampled_from(UNARY), label="op")
        in1, out = None, in0
        const = draw(st.sampled_from(SPECIAL)) if op in SCALAR_CONST else None
    else:
        op = draw(st.sampled_from(["mul", "bmm"] if set(in0) | set(in1) - set(out)
                                  else ["add", "sub", "mul", "div", "max", "min"]), label="op")
        const = None
    a = draw(arches())
    b = 2
    if unary:
        x = blockify(draw, _val_stream(draw), (b,) * len(in0))
        feeds = [(x, times_for(draw, len(x)))]
    else:
        x, y = _binary_pair(draw)
        x, y = blockify(draw, x, (b,) * len(in0)), blockify(draw, y, (b,) * len(in1))
        feeds = [(x, times_for(draw, len(x))), (y, times_for(draw, len(y)))]
    labels = (in0, in1, out)
    assert_same(single(lambda: Alu("a", op, b, const, ii=a["ii"], lat=a["lat"],
                                   labels=labels), feeds, ["val"] * len(feeds), 1, a))


REDUCE_LABELS = [None, (("i", "j"), ("i",)), (("i",), ()), (("i", "j"), ("i", "j")),
                 (("i", "j"), ("j", "i"))]


def _reducer_values(draw, block, labels):
    if not block:
        return lambda s: s
    shape = (block,) * (len(labels[0]) if labels else 2)
    return lambda s: blockify(draw, s, shape)


@SETTINGS
@given(data=st.data())
def test_reduce_random(data):
    draw = data.draw
    op = draw(st.sampled_from(["sum", "max"]), label="op")
    block = draw(st.sampled_from([None, 2]), label="block")
    labels = draw(st.sampled_from(REDUCE_LABELS)) if block else None
    s = _reducer_values(draw, block, labels)(mutate(draw, _val_stream(draw)))
    a = draw(arches())
    assert_same(single(lambda: Reduce("r", op, block, ii=a["ii"], lat=a["lat"], labels=labels),
                       [(s, times_for(draw, len(s)))], ["val"], 1, a),
                nan_exact=bool(block) or op == "max")


@SETTINGS
@given(data=st.data())
def test_spacc1_random(data):
    draw = data.draw
    op = draw(st.sampled_from(["sum", "max"]), label="op")
    block = draw(st.sampled_from([None, 2]), label="block")
    labels = draw(st.sampled_from(REDUCE_LABELS)) if block else None
    (crd,) = draw(crd_streams(1, draw(st.integers(1, 3))))
    crd = mutate(draw, crd)
    val = [draw(values()) if x >= 0 else x for x in crd]
    val = mutate(draw, _reducer_values(draw, block, labels)(val))
    a = draw(arches())
    feeds = [(crd, times_for(draw, len(crd))), (val, times_for(draw, len(val)))]
    assert_same(single(lambda: Spacc1("s", op, block, ii=a["ii"], lat=a["lat"], labels=labels),
                       feeds, ["crd", "val"], 2, a), nan_exact=bool(block) or op == "max")


@SETTINGS
@given(data=st.data())
def test_spacc2_random(data):
    draw = data.draw
    op = draw(st.sampled_from(["sum", "max"]), label="op")
    block = draw(st.sampled_from([None, 2]), label="block")
    labels = draw(st.sampled_from(REDUCE_LABELS)) if block else None
    depth = draw(st.integers(2, 4), label="depth")
    t = draw(trees(depth, hi=5))
    crd0 = tokens(t, depth, draw) + [D]
    it = outer(t, depth, lambda leaf: draw(st.sampled_from([0, 1, 2, 4, N])))
    crd1 = tokens(it, depth - 1, draw) + [D]
    val = [draw(values()) if x >= 0 else x for x in crd0]
    val = _reducer_values(draw, block, labels)(val)
    crd1, crd0, val = mutate(draw, crd1), mutate(draw, crd0), mutate(draw, val)
    a = draw(arches())
    feeds = [(s, times_for(draw, len(s))) for s in (crd1, crd0, val)]
    assert_same(single(lambda: Spacc2("s", op, block, ii=a["ii"], lat=a["lat"], labels=labels),
                       feeds, ["crd", "crd", "val"], 3, a), nan_exact=bool(block) or op == "max")


def test_reducers_hand_written_and_errors():
    out = assert_same(single(lambda: Reduce("r"), [at0(parse("1 2 S0 S0/1 4 S1 D", "val"))],
                             ["val"], 1, DEFAULT))
    assert out[3][0] == [key(x) for x in parse("3 4 S0", "val")]
    feeds = [at0(parse("0 2 S0 2 S1 D")), at0(parse("1 2 S0 3 S1 D", "val"))]
    out = assert_same(single(lambda: Spacc1("s"), feeds, ["crd", "val"], 2, DEFAULT))
    assert out[3][0] == [key(x) for x in parse("0 2 S0")]
    assert out[3][1] == [key(x) for x in parse("1 5 S0", "val")]
    bad = [at0(parse("0 S1 D")), at0(parse("1 S0 D", "val"))]
    out = assert_same(single(lambda: Spacc1("s"), bad, ["crd", "val"], 2, DEFAULT))
    assert out[0] == "error" and "crd and val streams" in out[1]
    feeds = [at0(parse("1 0 S1 D")), at0(parse("0 2 S0 2 S2 D")),
             at0(parse("1 2 S0 3 S2 D", "val"))]
    out = assert_same(single(lambda: Spacc2("s"), feeds, ["crd", "crd", "val"], 3, DEFAULT))
    assert out[3][0] == [key(x) for x in parse("0 1 S0")]
    assert out[3][1] == [key(x) for x in parse("2 S0 0 2 S1")]
    bad = [at0(parse("1 S1 D")), at0(parse("0 S1 D")), at0(parse("1 S1 D", "val"))]
    out = assert_same(single(lambda: Spacc2("s"), bad, ["crd", "crd", "val"], 3, DEFAULT))
    assert out[0] == "error" and "crd1 and crd0 stops" in out[1]
    out = assert_same(single(lambda: Reduce("r"), [at0(parse("1 2 S0", "val"))], ["val"], 1,
                             DEFAULT))
    assert out[0] == "error" and "deadlocked" in out[1]


def test_numpy_scalars_stay_numpy():
    """0-d labelled values numpy made (float64) flow on as numpy scalars, as in Python: a
    following divc by 0 divides by numpy's rule (inf, nan), where a Python float would raise
    ZeroDivisionError (as it does, on both engines, for the fed floats that reach it)."""
    def make():
        a1 = Alu("a1", "exp", 2, None, labels=((), None, ()))
        a2 = Alu("a2", "divc", 2, 0.0, labels=((), None, ()))
        return [a1, a2], [at0([0.0, 1.0, -math.inf, math.nan, stop(0), D])], wiring

    def wiring(nodes, ins, chans, sinks, a):
        mid = Channel("mid", "val", a["out_depth"])
        chans.append(mid)
        nodes[0].wire(ins, [mid])
        nodes[1].wire([mid], sink_ports(1, sinks, chans, a))
    out = assert_same(Case(make, ["val"], DEFAULT))
    assert out[0] != "error" and out[3][0][:2] == [key(math.inf)] * 2, out



def _chain(nodes, feeds, kinds, n_out, depth=3):
    """A Case of a pipeline: nodes[0] reads feeds[0]; each next node reads the previous one's
    outputs (a fork's lanes: a join) after the remaining feeds; the last one's n_out outputs go
    to sinks. Channels between them are `depth` deep (back-pressure: many activations)."""
    def wiring(ns, ins, chans, sinks, a):
        prev = [Channel("m0", "val", depth)]
        chans.extend(prev)
        ns[0].wire(ins[:1], prev)
        for k, n in enumerate(ns[1:-1], 1):
            outs = [Channel(f"m{k}.{j}", "val", depth) for j in range(getattr(n, "lanes", 1))]
            chans.extend(outs)
            n.wire(prev, outs)
            prev = outs
        ns[-1].wire(ins[1:] + prev, sink_ports(n_out, sinks, chans, a))
    return Case(lambda: ([make() for make in nodes], feeds, wiring), kinds, DEFAULT)


@pytest.mark.parametrize("consumer", ["reduce", "spacc1", "spacc2", "fork-join"])
def test_blocks_made_during_the_run_are_collected_safely(consumer):
    """More blocks than the block table collects at (2**16: fed ones pinned, an ALU's made
    during the run): what an accumulator holds (reduce, spacc1, spacc2) or a fork's lane queues
    hold across activations must survive the collections; the results stay the Python engine's."""
    n, width = 36_000, 60
    val, crd0, crd1 = [], [], []
    for f in range(n // width):
        val += [np.full((1, 1), float((f * width + k) % 97)) for k in range(width)] + [stop(0)]
        crd0 += [k % 7 for k in range(width)] + [stop(0)]   # repeated coordinates accumulate
        crd1.append(f % 5)
    alu = lambda: Alu("neg", "neg", 1)   # noqa: E731
    if consumer == "spacc2":
        val[-1] = crd0[-1] = stop(2)
        case = _chain([alu, lambda: Spacc2("s", "sum", 1)],
                      [at0(val + [D]), at0(crd1 + [stop(1), D]), at0(crd0 + [D])],
                      ["val", "crd", "crd"], 3)
    elif consumer == "spacc1":
        val[-1] = crd0[-1] = stop(1)
        case = _chain([alu, lambda: Spacc1("s", "sum", 1)], [at0(val + [D]), at0(crd0 + [D])],
                      ["val", "crd"], 2)
    else:
        val[-1] = stop(1)
        if consumer == "reduce":
            case = _chain([alu, lambda: Reduce("r", "sum", 1)], [at0(val + [D])], ["val"], 1)
        else:   # lanes as deep as a unit (a fiber): shallower ones deadlock a fork -> join
            case = _chain([alu, lambda: Fork("f", 3, 1), lambda: Join("j", 3, 1)],
                          [at0(val + [D])], ["val"], 1, depth=width + 1)
    out = assert_same(case, max_cycles=10_000_000)
    assert out[0] != "error", out

"""The firing rule lives in sim.node.Node: `fire` is the rule (checked here against the rule
as sim/README.md states it, on random channel states: arrival times, free slots that free late
or back to back, bounded and unbounded ports), and `take` loads a register without a firing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.sim.channel import Channel
from fuseflowc.sim.memory import Memory
from fuseflowc.sim.node import Node
from fuseflowc.sim.tokens import S0, D


@st.composite
def setup(draw, n_in: int, n_out: int, k: int = 12):
    """Channel contents (tokens, arrival times), output slot states, clock, ii, lat, memory."""
    ins = []
    for _ in range(n_in):
        m = draw(st.integers(1, k))
        times = sorted(draw(st.lists(st.integers(0, 60), min_size=m, max_size=m)))
        ins.append((list(range(m)), times))
    outs = []
    for _ in range(n_out):
        if draw(st.booleans()):
            outs.append(None)                              # unbounded
        else:
            m = draw(st.integers(1, k))
            if draw(st.booleans()):                        # slots freed back to back
                f0, ii = draw(st.integers(0, 40)), draw(st.integers(1, 3))
                outs.append([f0 + j * ii for j in range(m)])
            else:
                outs.append(sorted(draw(st.lists(st.integers(0, 80), min_size=m, max_size=m))))
    return (ins, outs, draw(st.integers(-1, 30)), draw(st.integers(1, 3)),
            draw(st.integers(1, 4)), draw(st.sampled_from([None, 4, 16, 1000])))


def build(case):
    ins_d, outs_d, t, ii, lat, bw = case
    node = Node("n", ii, lat)
    node.t = t
    node.mem = Memory(bw, 4) if bw is not None else None
    ins = []
    for i, (toks, times) in enumerate(ins_d):
        c = Channel(f"i{i}", "crd", 64)
        c.toks.extend(toks)
        c.times.extend(times)
        c.free.clear()
        ins.append(c)
    outs = []
    for i, frees in enumerate(outs_d):
        c = Channel(f"o{i}", "crd", None if frees is None else len(frees))
        if frees is not None:
            c.free.clear()
            c.free.extend(frees)
        outs.append(c)
    node.ins, node.outs = ins, outs
    return node, ins, outs


def state(node, ins, outs):
    return (node.t, node.fires, node.stall,
            [(list(c.toks), list(c.times), list(c.free)) for c in ins + outs],
            None if node.mem is None else dict(node.mem.used))


def expected_firing(case, pops, looks, emits, after):
    """The firing rule as sim/README.md states it ("Timing"), computed from the case's data
    alone: (firing cycle, stall) of one firing popping inputs `pops`, looking at `looks`,
    emitting on outputs `emits`, not before `after`. (The case's calendar is fresh, with room
    for the few bytes a firing here moves: waiting for memory is sim.memory's tests'.)"""
    ins_d, outs_d, t, ii, _, _ = case
    f = max([t + ii, after] + [ins_d[i][1][0] for i in pops + looks])
    slots = max([f] + [outs_d[o][0] for o in emits if outs_d[o] is not None])
    return slots, slots - f


@settings(max_examples=120, deadline=None)
@given(setup(3, 2), st.data())
def test_fire_is_the_firing_rule(case, data):
    """One firing through Node.fire against the rule computed independently: its cycle, the
    stall, the pops (slots freed at f + 1), the pushes (visible at f + lat) and the counters."""
    node, ins, outs = build(case)
    pops = data.draw(st.lists(st.sampled_from(range(3)), unique=True))
    looks = [i for i in range(3) if i not in pops and data.draw(st.booleans())]
    emits = data.draw(st.lists(st.sampled_from(range(2)), unique=True))
    after = data.draw(st.integers(0, 90))
    nb = data.draw(st.sampled_from([0, 4]))
    f, stall = expected_firing(case, pops, looks, emits, after)
    heads = [list(c.toks) for c in ins]
    frees = [list(c.free) for c in outs]
    got = node.fire([ins[i] for i in pops], [(outs[o], 100 + o) for o in emits],
                    [ins[i] for i in looks], after=after, nbytes=nb if node.mem else 0)
    assert got == f and node.t == f and node.fires == 1 and node.stall == stall
    for i, c in enumerate(ins):
        popped = i in pops
        assert list(c.toks) == heads[i][popped:]
        assert list(c.free) == ([f + 1] if popped else [])
    for o, c in enumerate(outs):
        sent = o in emits
        assert list(c.toks) == ([100 + o] if sent else [])
        assert list(c.times) == ([f + case[4]] if sent else [])
        if case[1][o] is not None:
            assert list(c.free) == frees[o][sent:]


def test_take_loads_a_register_without_a_firing():
    n = Node("n", 1, 1)
    n.t = 4
    c = Channel("c", "crd", 2)
    c.free.clear()
    c.feed([3, S0], 9)
    assert n.take(c) == 9 and (n.t, n.fires) == (4, 0)
    assert list(c.toks) == [S0] and list(c.free) == [10]
    assert D < 0

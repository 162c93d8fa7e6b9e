"""The firing rule lives in sim.node.Node: `fire` is the rule, and every shape spelled out for
speed (fire1, fire2, emit2, fire_each, fire_zip, fire_all, fire_run, fire_pops) must be the
same firings as `fire` called once per firing, on random channel states (arrival times, free
slots that free late or back to back, bounded and unbounded ports, a busy memory calendar)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.sim.channel import Channel, NullPort
from fuseflowc.sim.memory import Memory
from fuseflowc.sim.node import BLOCKED, WAITING, Node
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


def nbytes(node, x: int) -> int:
    return 0 if node.mem is None else 4 * (x % 3)


@settings(max_examples=150, deadline=None)
@given(setup(1, 1), st.integers(0, 50))
def test_fire1_is_fire(case, after):
    a, b = build(case), build(case)
    (n1, i1, o1), (n2, i2, o2) = a, b
    if o1[0].full():
        return
    nb = nbytes(n1, 1)
    f1 = n1.fire1(i1[0], o1[0], 7, nb, after)
    f2 = n2.fire((i2[0],), ((o2[0], 7),), after=after, nbytes=nb)
    assert f1 == f2 and state(*a) == state(*b)


@settings(max_examples=150, deadline=None)
@given(setup(2, 1))
def test_fire2_and_emit2_are_fire(case):
    a, b = build(case), build(case)
    (n1, i1, o1), (n2, i2, o2) = a, b
    if not o1[0].full():
        assert n1.fire2(i1[0], i1[1], o1[0], 5) == n2.fire(i2, ((o2[0], 5),))
        assert state(*a) == state(*b)
    a, b = build(case), build(case)
    (n1, i1, o1), (n2, i2, o2) = a, b
    n1.outs = n2.outs = [o1[0], NullPort()]
    nb = nbytes(n1, 2)
    if not o1[0].full():
        e = NullPort()
        assert n1.emit2(o1[0], 1, e, 2, nb) == n2.fire(emits=((o2[0], 1), (e, 2)), nbytes=nb)
        assert state(*a) == state(*b)


def _per_firing(node, ins, outs, decide, room_first: bool):
    """Fire once per decision until it says stop (None) or a port is full (checked before or
    after the decision): the reference."""
    while all(c.toks for c in ins):
        if room_first and any(p.full() for p in outs):
            return BLOCKED
        d = decide([c.toks[0] for c in ins])
        if d is None:
            return None
        if any(p.full() for p in outs):
            return BLOCKED
        node.fire(ins, tuple(zip(outs, d[0])), nbytes=d[1])
    return WAITING


@settings(max_examples=150, deadline=None)
@given(setup(1, 1), st.integers(0, 12), st.integers(0, 40))
def test_fire_each_is_fire_per_token(case, stop_at, after):
    a, b = build(case), build(case)
    (n1, i1, o1), (n2, i2, o2) = a, b

    def fn(x, node=n1):
        return None if x == stop_at else (x * 2, nbytes(node, x))
    r1 = n1.fire_each(fn, i1[0], o1[0], after)
    # the reference: the first firing not before `after`
    r2 = WAITING
    first = True
    while i2[0].toks:
        x = i2[0].toks[0]
        if o2[0].full():
            r2 = BLOCKED
            break
        if x == stop_at:
            r2 = None
            break
        n2.fire((i2[0],), ((o2[0], x * 2),), after=after if first else 0,
                nbytes=nbytes(n2, x))
        first = False
    assert r1 == r2 and state(*a) == state(*b)


@settings(max_examples=150, deadline=None)
@given(setup(2, 1), st.integers(0, 12))
def test_fire_zip_is_fire_per_pair(case, stop_at):
    a, b = build(case), build(case)
    (n1, i1, o1), (n2, i2, o2) = a, b
    r1 = n1.fire_zip(lambda x, y: None if x == stop_at else x + y, i1[0], i1[1], o1[0])
    r2 = _per_firing(n2, i2, o2, lambda h: None if h[0] == stop_at else ((h[0] + h[1],), 0),
                     room_first=True)
    assert r1 == r2 and state(*a) == state(*b)


@settings(max_examples=150, deadline=None)
@given(setup(4, 3), st.integers(0, 12))
def test_fire_all_is_fire_per_set_of_heads(case, stop_at):
    a, b = build(case), build(case)
    (n1, _, o1), (n2, i2, o2) = a, b

    def fn(*h):
        return None if h[0] == stop_at else (h[0], h[1], h[3])
    r1 = n1.fire_all(fn, o1)
    r2 = _per_firing(n2, i2, o2, lambda h: None if fn(*h) is None else (fn(*h), 0),
                     room_first=False)
    assert r1 == r2 and state(*a) == state(*b)


@settings(max_examples=200, deadline=None)
@given(setup(0, 2), st.integers(1, 12))
def test_fire_run_is_emit2_per_token(case, k):
    a, b = build(case), build(case)
    (n1, _, o1), (n2, _, o2) = a, b
    k = o1[1].room(o1[0].room(k))
    if not k:
        return
    nb = 0 if n1.mem is None else 4
    n1.fire_run(o1[0], list(range(k)), o1[1], list(range(100, 100 + k)), nb)
    for j in range(k):
        n2.emit2(o2[0], j, o2[1], 100 + j, nb)
    assert state(*a) == state(*b)


@settings(max_examples=200, deadline=None)
@given(setup(4, 0, k=60), st.integers(1, 60))
def test_fire_pops_is_fire_per_pop(case, k):
    a, b = build(case), build(case)
    (n1, i1, _), (n2, i2, _) = a, b
    k = min(k, len(i1[0].toks), len(i1[1].toks))
    n1.fire_pops(k, i1[:2], i1[2:])
    for _ in range(k):
        n2.fire(i2[:2], (), i2[2:])
    assert state(*a) == state(*b)


def test_take_loads_a_register_without_a_firing():
    n = Node("n", 1, 1)
    n.t = 4
    c = Channel("c", "crd", 2)
    c.free.clear()
    c.feed([3, S0], 9)
    assert n.take(c) == 9 and (n.t, n.fires) == (4, 0)
    assert list(c.toks) == [S0] and list(c.free) == [10]
    assert D < 0

"""Channel kinds and fan-out on both engines (sim/cpp/channel.hpp against sim/channel.py): a ring
of up to 65536 entries, a deep ring (more entries, allocated in chunks as it fills; Python's
LazyFree), an unbounded FIFO in segments, and a stream read by 1 to 8 consumers of mixed kinds.
Cycles, activations, counters, streams and token-hops identical (tests/support/fast_prims.py).
"""

from __future__ import annotations

from collections import deque
from itertools import islice, repeat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.channel import EAGER_DEPTH, Channel, LazyFree, make_port, pop_n
from fuseflowc.sim.differential import first_difference, run
from fuseflowc.sim.prims_compute import Alu
from fuseflowc.sim.prims_stream import Array, Scan
from fuseflowc.sim.prims_write import Writer
from fuseflowc.sim.tokens import D, N, stop
from tests.support import sim_pins
from tests.support.fast_prims import SETTINGS, Case, assert_same, crd_streams, times_for

pytestmark = pytest.mark.skipif(not engine_fast.available(),
                                reason="fuseflowc.sim._fast is not built")

#: Consumer depths: rings (1, 2, 8, the largest eager one), deep rings (just past the eager
#: limit, 2**20, and far past it: the compiled engine's chunks are 2048 entries), unbounded
#: (None).
DEPTHS = [1, 2, 8, EAGER_DEPTH, EAGER_DEPTH + 1, 1 << 20, 10**12, None]


def _fanned(node_factory, feeds, kinds_in, consumers, a):
    """A Case of one node whose every output is read by len(consumers) sinks, each through a
    channel of the given (depth, sink ii)."""
    def wiring(nodes, ins, chans, sinks, _a):
        ports = []
        for o in range(a["n_out"]):
            cs = []
            for i, (depth, ii) in enumerate(consumers):
                c = Channel(f"o{o}.{i}", "crd", depth)
                w = Writer(f"w{o}.{i}", "write_vals", "T", ii=ii, lat=a["sink_lat"])
                w.wire([c], [])
                sinks.append(w)
                chans.append(c)
                cs.append(c)
            ports.append(make_port(cs))
        nodes[0].wire(ins, ports)
    return Case(lambda: ([node_factory()], feeds, wiring), kinds_in, a)


@st.composite
def consumers(draw):
    k = draw(st.integers(1, 8), label="consumers")
    return [(draw(st.sampled_from(DEPTHS)), draw(st.sampled_from([1, 1, 2, 5])))
            for _ in range(k)]


@SETTINGS
@given(data=st.data())
def test_fan_out_to_1_to_8_consumers_of_every_channel_kind(data):
    """An array (one token in, one out) or a dense scan (runs of two outputs) whose outputs are
    each read by 1 to 8 consumers, every consumer a ring, a deep ring or unbounded."""
    draw = data.draw
    (refs,) = draw(crd_streams(1, draw(st.integers(1, 2))))
    refs = [x for x in refs if x == D or x < 0 or x < 6] or [D]
    feeds = [(refs, times_for(draw, len(refs)))]
    ii, lat = draw(st.sampled_from([1, 2])), draw(st.sampled_from([0, 1, 3]))
    a = {"sink_lat": draw(st.sampled_from([1, 3]))}
    if draw(st.booleans()):
        a["n_out"] = 1
        make = lambda: Array("a", [float(v) for v in range(6)], ii=ii, lat=lat)  # noqa: E731
    else:
        a["n_out"] = 2
        size = draw(st.integers(1, 5))
        make = lambda: Scan("s", True, size, ii=ii, lat=lat)  # noqa: E731
    assert_same(_fanned(make, feeds, ["ref"], draw(consumers()), a))


@pytest.mark.parametrize("depth", [EAGER_DEPTH + 1, 70_001, None])
def test_a_deep_channel_that_fills_and_wraps(depth):
    """75,000 tokens through a channel deeper than the eager limit to a slow consumer: the
    deep ring fills (back-pressure at depth 65537 and 70001), wraps past its end and crosses
    many 2048-entry chunks; unbounded, the segments are released as they are read."""
    n = 75_000
    refs = [i % 6 for i in range(n)] + [D]
    feeds = [(refs, [0] * len(refs))]
    a = {"n_out": 1, "sink_lat": 1}
    cons = [(depth, 3)]
    py = assert_same(_fanned(lambda: Array("a", [0.5 * v for v in range(6)]), feeds, ["ref"],
                             cons, a), max_cycles=10**7)
    assert py[0] >= 3 * n   # the consumer's pace, so the channel did fill up


@pytest.mark.parametrize("also_bounded", [False, True], ids=["unbounded", "mixed"])
def test_a_stream_read_by_several_unbounded_consumers_is_held_once(also_bounded):
    """Four unbounded consumers at different paces (and a bounded one, or not) of a stream
    spanning several 2048-entry segments: the same outcome on both engines, and the compiled
    engine holds the stream's segments once (one chain read at four positions), not per
    consumer. The fed input stream is held once too."""
    from fuseflowc.sim import _fast

    n = 3 * 2048 + 100
    segs = -(-n // 2048) + 1   # a stream's segments, the tail's successor included
    refs = [i % 6 for i in range(n)] + [D]
    cons = [(None, 1), (None, 3), (None, 2), (None, 5)] + ([(8, 2)] if also_bounded else [])
    live, _ = _fast.segments(reset=True)
    assert_same(_fanned(lambda: Array("a", [0.5 * v for v in range(6)]),
                        [(refs, [0] * len(refs))], ["ref"], cons, {"n_out": 1, "sink_lat": 1}),
                max_cycles=10**6)
    _, peak = _fast.segments()
    assert peak - live <= 2 * segs   # the input and the output stream, once each


def test_lazy_free_is_the_deque_of_zeros_it_stands_for():
    """Python's deep channels: every operation the primitives use gives what the eager deque
    of `depth` zeros gives."""
    lazy, eager = LazyFree(5), deque(repeat(0, 5))
    for q in (lazy, eager):
        q.popleft()
        q.append(7)
        q.extend([8, 9])
        pop_n(q, 2)
    assert list(lazy) == list(eager) and len(lazy) == len(eager)
    assert [lazy[k] for k in range(len(lazy))] == [eager[k] for k in range(len(eager))]
    assert lazy[-1] == eager[-1] and bool(lazy) == bool(eager)
    assert list(islice(lazy, 3)) == list(islice(eager, 3))
    for q in (lazy, eager):
        while q:
            q.popleft()
    assert not lazy and len(lazy) == 0
    assert type(Channel("c", "crd", EAGER_DEPTH).free) is deque
    assert type(Channel("c", "crd", EAGER_DEPTH + 1).free) is LazyFree


def _example_modules():
    seen = {}
    for name, module, inputs, sizes, depth in sim_pins.cases():
        if depth is None:
            seen[name] = (module, inputs, sizes)
    return sorted(seen.items())


@pytest.mark.parametrize("sets", [("channel.depth=65537",),
                                  ("channel.depth=inf", "memory.latency=0",
                                   "memory.bandwidth=1000000000")],
                         ids=["deep", "sam-like"])
def test_every_example_graph_on_deep_and_unbounded_channels(sets):
    """Every SAMML example and lowered example program (the pinned cases, default depth) on a
    deep ring and on SAM-like settings (unbounded, no memory model): both engines agree."""
    arch = Arch.load(None, sets, None)
    for name, (module, inputs, sizes) in _example_modules():
        py = run(module, inputs, sizes, arch, "python")
        fast = run(module, inputs, sizes, arch, "fast")
        if fast.error is not None and "--engine fast:" in fast.error.diagnostics[0].message:
            continue   # a primitive the compiled engine lacks: test_sim_fast reports it
        diff = first_difference(py, fast)
        assert diff is None, f"{name}: {diff}"


def test_n_and_stops_pass_through_fan_out():
    """Hand-written: N and stops through an array read by three consumers of three kinds."""
    refs = [0, 1, stop(0), N, 2, stop(1), D]
    a = {"n_out": 1, "sink_lat": 2}
    assert_same(_fanned(lambda: Array("a", [1.0, 2.0, 3.0]), [(refs, [0] * len(refs))],
                        ["ref"], [(1, 2), (EAGER_DEPTH + 1, 1), (None, 5)], a))


@pytest.mark.parametrize("consumers", [[(None, 1)], [(None, 1), (None, 3), (8, 2)]],
                         ids=["unbounded", "mixed"])
def test_cycles_past_32_bits_in_unbounded_segments(consumers):
    """The compiled engine keeps an unbounded token's cycle as a 32-bit offset from its
    segment's base and the whole cycle aside where the offset does not fit: a stream over
    several segments whose arrival cycles jump by 2**31 to 2**33 (many tokens' offsets do
    not fit, the others do, in the same segments), read through the cursors (one layout) and
    one token at a time (a bounded consumer too: mixed layouts). Same cycles on both engines."""
    n = 2 * 2048 + 300
    refs = [i % 6 for i in range(n)] + [D]
    times, t = [], 0
    for i in range(len(refs)):
        t += (2**31, 2**33, 3)[i % 3] if i % 700 < 3 else i % 2
        times.append(t)
    py = assert_same(_fanned(lambda: Array("a", [0.5 * v for v in range(6)], lat=2),
                             [(refs, times)], ["ref"], consumers, {"n_out": 1, "sink_lat": 1}),
                     max_cycles=2**62)
    assert py[0] > 10 * 2**32   # the run did go past 32 bits of cycles


@pytest.mark.parametrize("depth", [4, None], ids=["ring", "unbounded"])
def test_an_unread_output_never_holds_its_producer_back(depth):
    """A stream nobody reads (a null port) never makes its producer wait, however many tokens
    it takes: an array read by a relu through a channel of the given depth, the relu's output
    read by nobody, 1,000 positive values (the compiled engine writes an unread output as a
    ring of 256 slots free at cycle 0, rezeroed at each wrap, beside bounded channels, and as
    a segment chain beside unbounded ones). The same cycles and stalls on both engines."""
    n = 1000
    refs = [i % 6 for i in range(n)] + [D]

    def wiring(nodes, ins, chans, sinks, _a):
        mid = Channel("mid", "val", depth)
        chans.append(mid)
        nodes[0].wire(ins, [make_port([mid])])
        nodes[1].wire([mid], [make_port([])])

    def make():
        return ([Array("a", [1.5 + v for v in range(6)]), Alu("r", "relu")],
                [(refs, [0] * len(refs))], wiring)

    py = assert_same(Case(make, ["ref"], {}), max_cycles=10**6)
    assert py[2][1][1] == n + 1   # the relu fired for every value and D

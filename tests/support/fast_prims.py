"""Shared by the differential tests of the compiled engine's primitive families
(tests/sim/test_sim_fast_{join,locate,compute,crd}.py): a primitive (or a few) on fed streams into
writer sinks, run on both engines (`assert_same`), and hypothesis strategies for SAM streams,
values and architecture settings.

The outcome compared: total cycles, activations, every node's firings, stalls, clock, FLOPs and
`done`, every channel's token-hops, the sinks' streams bit for bit (NaN payloads, signed zeros,
blocks), or the same error text (misaligned stops, a Python function's own error) or deadlock
report (a stream without D).
"""

from __future__ import annotations

import math
import os
import struct

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.sim import engine_fast
from fuseflowc.sim.channel import Channel, make_port
from fuseflowc.sim.differential import error_text
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.prims_write import Writer
from fuseflowc.sim.tokens import S0, D, N, stop

#: hypothesis examples per random test (SIM_FAST_EXAMPLES=1000 for a longer hunt)
SETTINGS = settings(max_examples=int(os.environ.get("SIM_FAST_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- the harness: one node (or a few) on fed streams, both engines --------------------------

def key(x, nan_exact: bool = True):
    """A token, comparable bit for bit (floats by their bits, blocks by shape and bytes); with
    nan_exact False every NaN float is the same key (NAN_PAIRS in test_sim_fast_compute.py)."""
    if x.__class__ is int:
        return ("i", x)
    if isinstance(x, float):
        if x != x and not nan_exact:
            return ("f", "nan")
        return ("f", struct.pack("<d", x))
    a = np.asarray(x)
    return ("b", a.shape, a.dtype.str, a.tobytes())


def row(n) -> tuple:
    """The counters of a node the engines must agree on."""
    return (n.name, n.fires, n.stall, n.t, n.done, n.flops, n.finish)


class Case:
    """How to build one run: `make()` returns fresh (nodes, feeds, wiring): feeds are the
    (tokens, arrival cycles) of the input channels, and wiring(nodes, ins, chans, sinks, arch)
    wires the nodes to them and their outputs to writer sinks (sim.prims_write.Writer)."""

    def __init__(self, make, kinds_in, arch: dict):
        self.make = make
        self.kinds_in = kinds_in
        self.arch = arch

    def build(self):
        nodes, feeds, wiring = self.make()
        a = self.arch
        chans = []
        ins = []
        for k, (toks, times) in enumerate(feeds):
            # unbounded: a fed channel has no producer its free slots could hold back
            c = Channel(f"in{k}", self.kinds_in[k], None)
            c.toks.extend(toks)
            c.times.extend(times)
            c.pushed = len(toks)
            ins.append(c)
            chans.append(c)
        sinks = []
        wiring(nodes, ins, chans, sinks, a)
        return nodes + sinks, sinks, chans


def sink_ports(n_out, sinks, chans, a, tag=""):
    """n_out output channels, each read by a writer sink; returns the ports."""
    ports = []
    for i in range(n_out):
        c = Channel(f"o{tag}{i}", "crd", a["out_depth"])
        w = Writer(f"w{tag}{i}", "write_vals", "T", ii=a["sink_ii"], lat=a["sink_lat"])
        w.wire([c], [])
        sinks.append(w)
        chans.append(c)
        ports.append(make_port([c]))
    return ports


def single(node_factory, feeds, kinds_in, n_out, arch):
    """A Case of one node: fed inputs, every output to a sink."""
    def wiring(nodes, ins, chans, sinks, a):
        nodes[0].wire(ins, sink_ports(n_out, sinks, chans, a))
    return Case(lambda: ([node_factory()], feeds, wiring), kinds_in, arch)


def outcome(case, engine_class, max_cycles=200_000, nan_exact=True):
    """Run a Case on one engine: (cycles, activations, node rows, sink streams, token-hops), or
    ("error", text)."""
    nodes, sinks, chans = case.build()
    try:
        eng = engine_class(nodes, sinks, max_cycles)
        cycles = eng.run()
    except UserError as e:
        return ("error", error_text(e))
    except Exception as e:   # a Python function's own error (numpy, ZeroDivisionError): the same
        return ("error", f"{type(e).__name__}: {e}")
    return (cycles, eng.activations, [row(n) for n in nodes],
            [[key(x, nan_exact) for x in w.got] for w in sinks], [c.pushed for c in chans])


def assert_same(case, max_cycles=200_000, nan_exact=True):
    """Both engines give the same outcome; returns it (tests look at it too)."""
    py = outcome(case, Engine, max_cycles, nan_exact)
    fast = outcome(case, engine_fast.FastEngine, max_cycles, nan_exact)
    if py != fast:
        if py[0] == "error" or fast[0] == "error":
            raise AssertionError(f"python: {py[:2]}\nfast:   {fast[:2]}")
        for what, x, y in zip(("cycles", "activations", "nodes", "streams", "hops"), py, fast):
            assert x == y, f"{what}:\npython {x}\nfast   {y}"
    return py


@st.composite
def arches(draw):
    """Output depths (1 to unbounded, and a deep ring: chunks in the compiled engine), the
    node's ii and latency, the sinks'."""
    return {"out_depth": draw(st.sampled_from([None, 1, 2, 3, 8, 70_000])),
            "ii": draw(st.sampled_from([1, 1, 2, 3])),
            "lat": draw(st.sampled_from([0, 1, 1, 2, 5])),
            "sink_ii": draw(st.sampled_from([1, 1, 2, 4])),
            "sink_lat": draw(st.sampled_from([1, 3]))}


DEFAULT = {"out_depth": 2, "ii": 1, "lat": 1, "sink_ii": 1, "sink_lat": 1}


def times_for(draw, n: int) -> list[int]:
    """Non-decreasing arrival cycles of n tokens (bursts and gaps)."""
    out, t = [], 0
    for _ in range(n):
        t += draw(st.sampled_from([0, 0, 1, 1, 2, 7]))
        out.append(t)
    return out


def at0(toks) -> tuple:
    return (list(toks), [0] * len(toks))


# ---- streams ------------------------------------------------------------------------------

@st.composite
def trees(draw, depth: int, hi: int = 12):
    """A fiber tree of `depth` levels: lists of sorted coordinate sets at the bottom."""
    if depth == 1:
        return sorted(draw(st.sets(st.integers(0, hi), max_size=6)))
    return [draw(trees(depth - 1, hi)) for _ in range(draw(st.integers(0, 3)))]


def retree(draw, t, depth: int, leaf):
    """Same structure as t, new leaves: leaf(draw, old_leaf_list)."""
    if depth == 1:
        return leaf(draw, t)
    return [retree(draw, c, depth - 1, leaf) for c in t]


def tokens(t, depth: int, draw=None) -> list:
    """SAM stream of tree t (a fiber's last child closes with the fiber's stop); an empty
    non-leaf fiber is a bare stop. Without D."""
    if depth == 1:
        return list(t) + [S0]
    out: list = []
    for c in t:
        out += tokens(c, depth - 1, draw)
    if t:
        out[-1] = stop(depth - 1)
    else:
        out = [stop(depth - 1, draw(st.integers(0, 2)) if draw else 1)]
    return out


def outer(t, depth: int, elem):
    """The stream one level up: each leaf fiber of t becomes one element elem(leaf)."""
    if depth == 2:
        return [elem(c) for c in t]
    return [outer(c, depth - 1, elem) for c in t]


def mutate(draw, toks: list) -> list:
    """Maybe one random change (a stop's level or emptiness, a dropped or extra token, no D):
    the engines must agree on the error or deadlock that follows."""
    k = draw(st.integers(0, 9))
    if k > 3 or not toks:
        return toks
    toks = list(toks)
    i = draw(st.integers(0, len(toks) - 1))
    if k == 0:
        toks[i] = draw(st.sampled_from([S0, stop(1), stop(2), stop(0, 1), stop(1, 1), D, N, 3]))
    elif k == 1:
        del toks[i]
    elif k == 2:
        toks.insert(i, draw(st.sampled_from([S0, stop(1), N, 0, 5])))
    else:
        toks = [x for x in toks if x.__class__ is not int or x != D]
    return toks


@st.composite
def crd_streams(draw, n: int = 1, depth=None, val=False, n_prob=True):
    """n aligned SAM streams (same fiber structure), coordinates or values, with D; maybe N
    coordinates (empty fibers) and emptiness differences."""
    depth = depth or draw(st.integers(1, 3))
    t = draw(trees(depth))
    base = tokens(t, depth, draw)
    out = []
    for _ in range(n):
        # new leaves per stream, same structure
        tt = retree(draw, t, depth, lambda d, lf: sorted(d(st.sets(st.integers(0, 12),
                                                                     max_size=6))))
        s = tokens(tt, depth)
        # the structure's stops (bare emptiness) from base
        stops = [x for x in base if x < 0]
        j = 0
        for i, x in enumerate(s):
            if x < 0:
                s[i] = stops[j]
                j += 1
        if n_prob and draw(st.integers(0, 3)) == 0 and s:
            i = draw(st.integers(0, len(s) - 1))
            s.insert(i, N)
        if draw(st.integers(0, 5)) == 0:   # a stop of the same level, other emptiness
            idx = [i for i, x in enumerate(s) if x <= -3]
            if idx:
                i = draw(st.sampled_from(idx))
                s[i] = stop((-3 - s[i]) & 0xFFFFFF, draw(st.integers(0, 2)))
        out.append(s + [D])
    if val:
        out = [[draw(values()) if x >= 0 else x for x in s] for s in out]
    return out


def bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.75, math.inf, -math.inf, math.nan, -math.nan,
           bits(0x7FF8000000000ABC), bits(0xFFF4000000000001), 1e308, -1e308, 5e-324,
           -5e-324, 1e-300, 710.0, -745.5, 30.0, -30.0, 1e-8, 3.0]


def usable(x: float) -> bool:
    """Not a NaN whose bits the compiled engine reserves for its tags (the builder refuses
    such data: sim/cpp/tokens.hpp)."""
    return struct.unpack("<Q", struct.pack("<d", x))[0] >> 48 not in (0xFFFE, 0xFFFD)


def values():
    return st.one_of(st.sampled_from(SPECIAL),
                     st.floats(allow_nan=True, allow_infinity=True).filter(usable))


def block(draw, shape):
    """A random b x ... x b block of special values (NaN, infinities, signed zeros)."""
    return np.array(draw(st.lists(st.sampled_from(SPECIAL[:10] + [2.0, -4.0]),
                                  min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                    dtype=np.float64).reshape(shape)


def blockify(draw, s, shape):
    """Stream s with every value a random block of `shape` (a float for shape ())."""
    return [(block(draw, shape) if shape else draw(values())) if x.__class__ is not int else x
            for x in s]

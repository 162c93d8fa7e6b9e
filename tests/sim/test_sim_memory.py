"""The bandwidth calendar (sim/memory.py) and how the simulator's nodes share it."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.sim.memory import Memory


def test_alone_a_stream_gets_the_whole_bandwidth():
    """1024-byte tokens at 256 bytes/cycle: one every 4 cycles on average, whoever asks."""
    m = Memory(256, 16)
    f = 0
    for _ in range(400):
        f = m.take(f, 1024)
    assert 4 * 399 - 16 <= f <= 4 * 400


def test_two_streams_share_it():
    """Two streams asking at once each get half: together they move 256 bytes per cycle."""
    m = Memory(256, 16)
    a = b = 0
    for _ in range(200):
        a = m.take(a, 1024)
        b = m.take(b, 1024)
    assert 4 * 399 - 16 <= max(a, b) <= 4 * 400


def test_small_requests_are_not_delayed():
    m = Memory(256, 16)
    assert [m.take(f, 4) for f in range(100)] == list(range(100))


def test_a_request_larger_than_a_window_is_split():
    m = Memory(256, 16)               # 4096 bytes per window
    assert m.take(0, 16384) == 48     # four windows: served with the last
    assert m.take(0, 4097) == 80      # the first later room is window 4; it spills into 5
    assert m.take(0, 4) == 80         # windows 0-4 are full


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 3000)), max_size=60),
       st.sampled_from([1, 7, 256]), st.sampled_from([1, 4, 16]))
def test_calendar_invariants(reqs, bw, window):
    """Served at or after the request; no window holds more than it can move; every byte is
    placed; the same requests in the same order give the same cycles."""
    m = Memory(bw, window)
    served = [m.take(f, n) for f, n in reqs]
    assert all(s >= f for s, (f, _) in zip(served, reqs))
    assert all(u <= bw * window for u in m.used.values())
    assert math.isclose(sum(m.used.values()), sum(n for _, n in reqs))
    again = Memory(bw, window)
    assert [again.take(f, n) for f, n in reqs] == served


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(1, 5000)), max_size=40),
       st.integers(0, 300))
def test_forgetting_the_past_changes_no_later_request(reqs, cut):
    """Requests at or after the cut are served the same whether the windows before it were
    dropped or not (the engine drops only windows no node can still reach)."""
    a, b = Memory(64, 4), Memory(64, 4)
    early = [(f, n) for f, n in reqs if f < cut]
    late = [(f, n) for f, n in reqs if f >= cut]
    for f, n in early:
        a.take(f, n)
        b.take(f, n)
    b.forget_before(cut)
    assert all(w >= cut // 4 for w in b.used)
    assert [a.take(f, n) for f, n in late] == [b.take(f, n) for f, n in late]
    assert len(b.used) <= len(a.used)


def test_a_long_run_keeps_a_small_calendar():
    """The engine drops the windows behind every node: a run of ~10^5 cycles ends with a
    calendar of a few windows, not one per 16 cycles of the run."""
    import numpy as np

    from fuseflowc.data.fibertree import FiberTensor
    from fuseflowc.samml.parser import parse_text
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.build import Simulator

    text = (Path(__file__).resolve().parents[2] / "ir_examples" / "samml"
            / "spmv_row.samml").read_text()
    module = parse_text(text, "spmv_row.samml")
    rng = np.random.default_rng(0)
    a = (rng.random((400, 300)) < 0.3) * rng.random((400, 300))
    x = rng.random(300)
    inputs = {"A": FiberTensor.from_dense(a, module.tensor("A").format),
              "x": FiberTensor.from_dense(x, module.tensor("x").format)}
    # depth-2 channels: many short activations, as in a long run
    sim = Simulator(module, inputs, {"N": 400, "M": 300}, Arch.load(depth=2))
    seen = []
    real = sim.build

    def build(graph):
        out = real(graph)
        seen.append(out[3])
        return out
    sim.build = build
    res = sim.run()
    assert res.cycles > 30_000
    assert len(seen[0].used) < res.cycles // 16 // 10
    assert np.allclose(res.tensors["y"].to_dense(), a @ x)

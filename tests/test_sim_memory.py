"""The bandwidth calendar (sim/memory.py) and how the simulator's nodes share it."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.memory import Memory


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
    assert m.take(0, 16384) == 63     # four windows: served at the last byte
    assert m.take(0, 4) == 64         # every earlier window is full


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


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 100), st.integers(1, 80), st.integers(1, 3), st.integers(1, 64),
       st.lists(st.tuples(st.integers(0, 100), st.integers(1, 64)), max_size=20))
def test_take_run_is_take_per_request(f, k, ii, n, before):
    """A run the calendar accepts whole is what k single requests would have been (none
    delayed); a run it refuses leaves the calendar untouched."""
    a, b = Memory(8, 4), Memory(8, 4)
    for g, x in before:
        a.take(g, x)
        b.take(g, x)
    used = dict(a.used)
    if a.take_run(f, k, ii, n):
        assert [b.take(f + j * ii, n) for j in range(k)] == [f + j * ii for j in range(k)]
        assert a.used == b.used
    else:
        assert a.used == used
        assert [b.take(f + j * ii, n) for j in range(k)] != [f + j * ii for j in range(k)]

"""A writer's stream read back from the compiled engine as a compact sim.recorded.Recorded (one
64-bit word per token, no Python object per token): it decodes to exactly the tokens the writer
was fed (ints of every kind, floats bit for bit: -0.0, infinities, NaNs, subnormals), and
assemble's readers (`np.asarray(stream, np.int64)`, `_values`) give on it what they give on
the Python engine's list of the same tokens. The graph tests (test_sim_fast*.py) compare both
engines' assembled outputs and writer streams on top of this.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.assemble import _values
from fuseflowc.sim.channel import Channel
from fuseflowc.sim.prims_write import Writer
from fuseflowc.sim.recorded import Recorded
from fuseflowc.sim.tokens import D, N, stop
from tests.support.fast_prims import SETTINGS, key

pytestmark = pytest.mark.skipif(not engine_fast.available(),
                                reason="fuseflowc.sim._fast is not built")

_STOPS = st.builds(stop, st.integers(0, 5), st.integers(0, 3))
_CRD = st.one_of(st.integers(0, 2**47 - 1), st.just(N), _STOPS)
_FLOAT = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
_VAL = st.one_of(_FLOAT, st.just(-0.0), st.just(N), _STOPS)


def _record(toks: list, kind: str) -> Recorded:
    """Feed `toks` then D to one writer and run it on the compiled engine."""
    c = Channel("in", "val" if kind == "write_vals" else "crd", None)
    c.toks.extend(toks + [D])
    c.times.extend(range(len(toks) + 1))
    c.pushed = len(toks) + 1
    w = Writer("w", kind, "T", mode=0)
    w.wire([c], [])
    engine_fast.FastEngine([w], [w]).run()
    assert isinstance(w.got, Recorded)
    return w.got


@SETTINGS
@given(st.lists(_CRD, max_size=40))
def test_crd_stream_round_trips(toks):
    got = _record(toks, "write_level")
    assert len(got) == len(toks)
    assert [key(x) for x in got] == [key(x) for x in toks]
    assert np.asarray(got, dtype=np.int64).tolist() == toks


@SETTINGS
@given(st.lists(_VAL, max_size=40))
def test_val_stream_round_trips(toks):
    got = _record(toks, "write_vals")
    assert [key(x) for x in got.tolist()] == [key(x) for x in toks]
    fast, listed = _values(got, None), _values(toks, None)
    assert fast.dtype == listed.dtype == np.float64
    bits = [struct.pack("<d", v) for v in fast.tolist()]
    assert bits == [struct.pack("<d", v) for v in listed.tolist()]


def test_a_value_stream_has_no_int_array():
    got = _record([1.5, stop(0)], "write_vals")
    with pytest.raises(TypeError, match="no int64 array"):
        np.asarray(got, dtype=np.int64)


def test_the_stream_moves_out_once():
    """take_stream moves the stream out of the compiled graph: the Python side holds the only
    copy (a second take is empty)."""
    c = Channel("in", "crd", None)
    c.toks.extend([3, stop(0), D])
    c.times.extend([0, 1, 2])
    c.pushed = 3
    w = Writer("w", "write_level", "T", mode=0)
    w.wire([c], [])
    eng = engine_fast.FastEngine([w], [w])
    eng.run()
    g, _ = eng._graph
    assert w.got.tolist() == [3, stop(0)]
    bits, blocks = g.take_stream(0)
    assert bits.shape == (0,) and blocks == []

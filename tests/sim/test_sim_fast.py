"""The compiled engine (sim/cpp) against the Python engine: identical cycles, activations, FLOPs,
bytes, token-hops, per-node and per-channel counters, deadlock reports and output tensors (bit
for bit) on every pinned case (tests/support/sim_pins.py: every SAMML example and lowered example
program, depths default, 2 and unbounded) and on generated programs, data and architectures.

The Python engine's runs of the pinned cases are shared with test_sim_pinned (computed once per
process). A graph using a primitive the compiled engine does not implement yet is skipped (the
skip names the primitive). Without the extension (FUSEFLOWC_NO_EXT=1 builds) the module is
skipped; a build that should have it but does not fails here.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.differential import first_difference, run
from tests.lower import test_block_lower as tb
from tests.lower.test_lower_random_chains import chains
from tests.support import sim_pins

PINNED = sorted(json.loads(sim_pins.PINS.read_text()))

if not engine_fast.available():
    if os.environ.get("FUSEFLOWC_NO_EXT", "") not in ("", "0"):
        pytest.skip("built without the compiled engine (FUSEFLOWC_NO_EXT)",
                    allow_module_level=True)


def test_the_compiled_engine_is_built():
    assert engine_fast.available(), engine_fast.unavailable_reason()


def _compare(py, module, inputs, sizes, arch, max_cycles=None):
    fast = run(module, inputs, sizes, arch, "fast", max_cycles)
    if fast.error is not None and "--engine fast:" in fast.error.diagnostics[0].message:
        pytest.skip(fast.error.diagnostics[0].message)   # not implemented (yet)
    diff = first_difference(py, fast)
    assert diff is None, diff


@pytest.mark.parametrize("case", PINNED)
def test_pinned_case(case):
    module, inputs, sizes, depth, py = sim_pins.python_outcomes()[case]
    _compare(py, module, inputs, sizes, Arch.load(depth=depth))


# ---- hand-written graphs of the stream and write primitives ---------------------------------

COPY = """
tensor A[N, M]: csr input
tensor B[N, M]: csr output
graph copy {
  %ra = root {tensor = A}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = dense, index = i}
  %cj, %rj = scan %ri {tensor = A, mode = 1, format = compressed, index = j}
  %va = array %rj {tensor = A}
  write_level %ci {tensor = B, mode = 0, format = dense}
  write_level %cj {tensor = B, mode = 1, format = compressed}
  write_vals %va {tensor = B}
}
"""

# B[i, j] = x[j] for every i of A's dense rows: repsig/repeat, and fan-outs (%ci, %cj).
BROADCAST = """
tensor A[N]: dense input
tensor x[M]: sparse input
tensor B[N, M]: csr output
graph bcast {
  %ra = root {tensor = A}
  %rx = root {tensor = x}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = dense, index = i}
  %si = repsig %ci {index = i}
  %rxi = repeat %rx, %si {index = i}
  %cj, %rj = scan %rxi {tensor = x, mode = 0, format = compressed, index = j}
  %vx = array %rj {tensor = x}
  write_level %ci {tensor = B, mode = 0, format = dense}
  write_level %cj {tensor = B, mode = 1, format = compressed}
  write_vals %vx {tensor = B}
}
"""


def _module(text):
    from fuseflowc.diagnostics import Source
    from fuseflowc.samml.parser import parse_module
    return parse_module(Source("<test>", text))


def _inputs(module, sizes, density, seed):
    from fuseflowc.data.gen import random_inputs
    specs = [t.spec() for t in module.tensors if t.role == "input"]
    return random_inputs(specs, sizes, seed, density)


@pytest.mark.parametrize("text", [COPY, BROADCAST], ids=["copy", "broadcast"])
@pytest.mark.parametrize("sets", [(), ("channel.depth=1",), ("channel.depth=2",),
                                  ("channel.depth=inf",),
                                  ("memory.bandwidth=0.5", "memory.window=3"),
                                  ("memory.bandwidth=6", "channel.depth=3", "memory.latency=0"),
                                  ("kind.scan.ii=2", "kind.array.latency=5"),
                                  # channels holding tokens 2**32 cycles apart (wide stamps)
                                  ("WIDE", "channel.depth=inf")])
def test_stream_graphs(text, sets):
    module = _module(text)
    sizes = {"N": 23, "M": 17}
    inputs = _inputs(module, sizes, 0.2, 5)
    arch = Arch.load(None, tuple(s for s in sets if s != "WIDE"), None)
    if "WIDE" in sets:
        # past the user-facing range of ii (1..1024, sim/arch.py), set directly: the engines'
        # representation of cycle stamps must hold tokens 2**32 cycles apart all the same
        arch.table.setdefault("kind", {}).setdefault("scan", {})["ii"] = 100_000_000
        # and windows as long (the Python engine's bulk scan books every window of its run)
        arch.table["memory"]["window"] = 1 << 27
    _compare(run(module, inputs, sizes, arch, "python"), module, inputs, sizes, arch)


@pytest.mark.parametrize("text", [COPY, BROADCAST], ids=["copy", "broadcast"])
def test_unbounded_channels_holding_many_tokens(text):
    """Unbounded channels holding ~10^4 tokens: several of the compiled engine's 2048-entry
    segments per channel, released as they are read (sim/cpp/channel.hpp, Segments)."""
    module = _module(text)
    sizes = {"N": 160, "M": 120}
    inputs = _inputs(module, sizes, 0.5, 7)
    arch = Arch.load(None, ("channel.depth=inf", "kind.write_vals.ii=3"), None)
    _compare(run(module, inputs, sizes, arch, "python"), module, inputs, sizes, arch)


def test_cycle_budget_error_is_the_same():
    module = _module(COPY)
    sizes = {"N": 23, "M": 17}
    inputs = _inputs(module, sizes, 0.2, 5)
    arch = Arch.load(None, ("channel.depth=2",), None)
    py = run(module, inputs, sizes, arch, "python", max_cycles=500)
    assert py.error is not None and "cycle budget" in py.error.diagnostics[0].message
    _compare(py, module, inputs, sizes, arch, max_cycles=500)


# ---- generated programs, data and architectures ---------------------------------------------

@st.composite
def archs(draw):
    """Channel depths 1 to unbounded (rings, deep rings), memory bandwidths from starved to
    ideal, latencies."""
    depths = ['1', '2', '3', '5', '1024', '65537', '1000000000000', 'inf']
    sets = [f"channel.depth={draw(st.sampled_from(depths))}"]
    if draw(st.booleans()):
        sets.append(f"memory.bandwidth={draw(st.sampled_from([0.25, 1, 3, 16, 256, 1e9]))}")
        sets.append(f"memory.window={draw(st.sampled_from([1, 4, 16]))}")
    if draw(st.booleans()):
        sets.append(f"memory.latency={draw(st.sampled_from([0, 1, 7, 100]))}")
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["scan", "repeat", "intersect", "alu", "reduce", "array",
                                     "write_vals", "union", "spacc1"]))
        sets.append(f"kind.{kind}.{draw(st.sampled_from(['ii', 'latency']))}="
                    f"{draw(st.integers(1, 4))}")
    return tuple(sets)


def _lowered(text: str, order: int):
    """The module of `fuse --order ORDER | lower` on a program, or None when fuse or lower
    cannot take it (the lowering tests cover those)."""
    from fuseflowc.diagnostics import UserError
    from tests.support.lower_harness import fused_module, load_text
    try:
        program = load_text(text)
        return program, fused_module(program, order)
    except UserError:
        return None


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(chains(), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), archs())
def test_generated_programs(case, i, j, k, sets):
    """Random chain programs (tests/lower/test_lower_random_chains.py: orders 1-3, every level
    format, products, sums, max/min, masks, unary functions, reductions, fusion regions) on
    small random data (sizes down to 1, densities 0 to 1: empty rows and tensors, single
    entries) and random architectures: both engines agree on everything."""
    text, density, order, seed = case
    lowered = _lowered(text, order)
    assume(lowered is not None)
    program, module = lowered
    sizes = {"I": i, "J": j, "K": k}
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    from fuseflowc.data.gen import random_inputs
    from fuseflowc.pipeline import as_declared
    inputs = as_declared(module, random_inputs(specs, sizes, seed, density))
    arch = Arch.load(None, sets, None)
    _compare(run(module, inputs, sizes, arch, "python", 10**6), module, inputs, sizes, arch,
             10**6)


@st.composite
def blocked_programs(draw):
    """Blocked programs of tests/lower/test_block_lower.py: block matmuls (SpMM), element-wise block
    ops, masked scores and the whole softmax attention (labelled block einsums, reductions
    inside blocks), with their sizes in blocks."""
    kind = draw(st.sampled_from(["spmm", "elementwise", "attention"]))
    if kind == "spmm":
        fa, fb, fc, order = draw(st.sampled_from([("bcsr", "bcsr", "bcsr", "i -> k -> j"),
                                                  ("bdcsr", "bdense", "bdense", "i -> k -> j"),
                                                  ("bdense", "bcsr", "bcsr", "i -> k -> j")]))
        text = tb.SPMM % dict(fa=fa, fb=fb, fc=fc, order=order)
        sizes = dict(N=draw(tb.counts), K=draw(tb.counts), M=draw(tb.counts))
    elif kind == "elementwise":
        fa, fb, fc = draw(st.sampled_from([("bcsr", "bcsr", "bcsr"), ("bcsr", "bdense",
                                                                      "bdense")]))
        text = tb.ELEMENTWISE % dict(fa=fa, fb=fb, fc=fc, expr=draw(st.sampled_from(tb.EXPRS)))
        sizes = dict(N=draw(tb.counts), M=draw(tb.counts))
    else:
        text = tb.ATTENTION % dict(fm=draw(st.sampled_from(["bcsr", "bdcsr"])),
                                   fo=draw(st.sampled_from(["bdense", "bcsr"])))
        sizes = dict(S=draw(tb.counts), D=draw(st.integers(1, 2)))
    return text, sizes, draw(tb.blocks), draw(tb.densities), draw(tb.seeds)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocked_programs(), archs())
def test_generated_blocked_programs(case, sets):
    """Dense b x b block values (bmm, element-wise block ops, block reductions and labelled
    block einsums): both engines agree, output blocks bit for bit."""
    from tests.support.lower_harness import fused_module, load_text
    text, sizes, b, density, seed = case
    program = load_text(text % {"b": b})
    sizes = {k: v * b for k, v in sizes.items()}
    module = fused_module(program)
    inputs = tb.make_inputs(program, sizes, b, density, seed)
    arch = Arch.load(None, sets, None)
    _compare(run(module, inputs, sizes, arch, "python", 10**6), module, inputs, sizes, arch,
             10**6)

"""End-to-end check of lowering: fuse a program, lower its fused IR, simulate the module on random
inputs, compare every output with the reference evaluator (values, and stored patterns when
asked), as the pipeline `fuse | lower | simulate --check` does."""

from __future__ import annotations

import numpy as np

from fuseflowc import pipeline
from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import Source
from fuseflowc.lang.checker import check
from fuseflowc.lang.load import apply_overrides
from fuseflowc.lang.parser import parse_directives, parse_program
from fuseflowc.samml.printer import print_module
from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.differential import first_difference, run


def load_text(text: str, schedule: tuple[str, ...] = (), name: str = "<test>"):
    """Parse and check a program given as text, with schedule overrides."""
    p = parse_program(Source(name, text))
    overrides = []
    for k, s in enumerate(schedule):
        overrides.extend(parse_directives(Source(f"<-s {k}>", s)))
    return check(apply_overrides(p, overrides))


def lowered_module(program):
    """`fuse` (default options) then `lower`, in one process, without printing or verifying
    anything on the way."""
    return pipeline.compile(program, pipeline.CompileOptions(verify=False)).module


def fused_module(program, order_index: int | None = None, region: str | None = None,
                 inline_widened: bool = False, share: bool = False):
    """`fuse` (order K of every region, or of one) then lower, as the pipeline does; the fused
    IR is printed and parsed back on the way (the module is not verified)."""
    return pipeline.compile(program, _options(order_index, region, inline_widened, share,
                                              verify=False)).module


def _options(order_index, region, inline_widened: bool, share: bool, verify: bool):
    return pipeline.CompileOptions(order=order_index, order_region=region,
                                   inline_widened=inline_widened, share=share, verify=verify,
                                   reparse_fused=True, reparse_module=verify)


def run_both(program, sizes: dict[str, int], seed: int = 0, density=None,
             inputs: dict | None = None, order_index=None, region=None,
             inline_widened: bool = False, share: bool = False):
    """(simulated outputs, reference outputs) of `program` through `fuse` (options as
    fused_module) and `lower`; the fused IR and the module are printed, parsed back and
    verified on the way (what the pipeline does between processes)."""
    module = pipeline.compile(program, _options(order_index, region, inline_widened, share,
                                                verify=True)).module
    sizes = {**{d.name: d.size for d in program.dims if d.size is not None}, **sizes}
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    if inputs is None:
        inputs = random_inputs(specs, sizes, seed, density)
    ref = pipeline.reference(program, inputs)
    sim = pipeline.simulate(module, pipeline.as_declared(module, inputs), dict(sizes))
    outs, expected = pipeline.outputs_to_check(module, sim, ref)
    return outs, expected, print_module(module)


def assert_matches(program, sizes, seed=0, density=None, inputs=None, patterns=False, **kw):
    """Lower, simulate, compare with the reference; raise AssertionError with the graph.
    `patterns`: also require the same stored entries (not only equal dense values)."""
    outs, ref, text = run_both(program, sizes, seed, density, inputs, **kw)
    assert outs, "no output written"
    for name in sorted(ref):
        a, e = outs[name].to_dense(), ref[name].to_dense()
        if not np.allclose(a, e, rtol=1e-6, atol=1e-9, equal_nan=True):
            raise AssertionError(f"{name} differs:\nsim={a}\nref={e}\n{text}")
        if patterns:
            pa, pe = outs[name].pattern(), ref[name].pattern()
            if not (pa == pe).all():
                raise AssertionError(f"{name}: stored pattern differs:\nsim={pa}\nref={pe}\n"
                                     f"{text}")


def check_inputs(program, module, inputs: dict, sizes: dict) -> None:
    """`module` (compiled from `program`) on `inputs`: both engines agree bit for bit (when the
    compiled one is built) and every output matches the reference evaluator, values and stored
    patterns."""
    declared = pipeline.as_declared(module, inputs)
    arch = Arch.load()
    py = run(module, declared, dict(sizes), arch, "python")
    assert py.error is None, py.error
    if engine_fast.available():
        diff = first_difference(py, run(module, declared, dict(sizes), arch, "fast"))
        assert diff is None, diff
    outs, expected = pipeline.outputs_to_check(module, py.result,
                                               pipeline.reference(program, inputs))
    assert outs
    for name in expected:
        a, e = outs[name].to_dense(), expected[name].to_dense()
        assert np.allclose(a, e, rtol=1e-6, atol=1e-9, equal_nan=True), (name, a, e)
        assert (outs[name].pattern() == expected[name].pattern()).all(), name


def check_both_engines(program, module, sizes: dict, seed: int, density) -> None:
    """check_inputs on random inputs of `program` (seed, density as gen-data takes them)."""
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    check_inputs(program, module, random_inputs(specs, sizes, seed, density), sizes)


#: The refusals of lowering a random program may meet (a located `UserError`): the property
#: tests of random orders skip these cases and fail on any other error.
UNSUPPORTED = ("permuted copy", "order-2 reduction", "would need an order-",
               "between the reduced expression's", "may be absent is not lowered",
               "may be absent, is not", "meets another operand", "no valid order", "cycle")


def skip_unsupported(e: Exception) -> None:
    """In a hypothesis test: `assume(False)` (with an event naming it) when `e` is one of
    lowering's refusals in UNSUPPORTED; otherwise raise `e`."""
    from hypothesis import assume, event
    msg = str(e)
    if not any(s in msg for s in UNSUPPORTED):
        raise e
    event("unsupported: " + msg.split(":")[0][:40])
    assume(False)

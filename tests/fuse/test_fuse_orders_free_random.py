"""Property: random chain programs (tests/lower/test_lower_random_chains.py's generator: tensors of
order 1-3 with random level formats and mode orders, densities down to empty, random fusion
regions) fused with `--free-input-order` at a random order of a random region, lowered and
simulated, match the reference evaluator (values, and stored patterns where the language's
widening does not interfere). Orders that lowering cannot build (an order-3 accumulator, an
order-2 accumulator joined at its outer level, ...) are skipped and counted as events."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.orders import region_pog
from tests.lower.test_lower_random_chains import SIZES, chains
from tests.support.lower_harness import load_text

# Messages of what lowering does not generate (as test_lower_random_chains skips them): copies
# whose level formats would store zeros the original does not; and, with --inline-widened, an
# intermediate that lowering itself stores (widened, "seen as declared") in an order
# discordant with the region's: lowering makes no permuted copy of what it stores itself.
UNSUPPORTED = ("would store entries", "meets another operand; joining it is not supported",
               "would need an order-",
               "between the reduced expression's", "may be absent is not lowered",
               "may be absent, is not", "a permuted view is needed",
               "lowering makes no permuted copy")


def _exact(p) -> bool:
    """Whether stored patterns must match too (see test_lower_random_chains)."""
    from fuseflowc.lang import ast
    from fuseflowc.lang.widen import widens
    scalar_sum = any(isinstance(n, ast.Reduce) and not ast.indices_of(n)
                     for s in p.statements for n in s.expr.walk())
    return not scalar_sum and not any(widens(p.tensor(t)) for t in p.assigned
                                      if t not in p.outputs)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(chains(), st.integers(0, 10 ** 6))
def test_random_programs_any_free_order(case, pick):
    text, density, k, seed = case
    try:
        p = load_text(text)
    except UserError:
        assume(False)
    inline = bool(seed % 2)
    # region names depend on inlining (a split region's parts are named R.0, R.1, ...)
    base = fuse_program(p, None, FuseOptions(free_input_order=True, inline_widened=inline))
    counts = [(r.name, region_pog(r).count()) for r in base.regions]
    region, count = counts[k % len(counts)]
    kk = pick % count
    from fuseflowc.data.gen import random_inputs
    from fuseflowc.fuse.parser import parse_fused
    from fuseflowc.fuse.printer import fused_str
    from fuseflowc.lower.driver import lower_fused
    from fuseflowc.pipeline import as_declared, simulate
    from fuseflowc.reference.evaluate import evaluate
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.samml.printer import print_module
    from fuseflowc.samml.verify import verify
    fp = fuse_program(p, None, FuseOptions(free_input_order=True, orders={region: kk},
                                           inline_widened=inline))
    fp = parse_fused(Source("<fused>", fused_str(fp)), verify=True)
    try:
        module = lower_fused(fp)[0]
    except UserError as e:
        if any(m in str(e) for m in UNSUPPORTED):
            event("unsupported: " + str(e).split(":")[0][:40])
            assume(False)
        raise
    verify(module)
    module = parse_module(Source("<lowered>", print_module(module)))
    event("permute steps: " + str(len(module.steps)))
    sizes = dict(SIZES)
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    inputs = random_inputs(specs, sizes, seed, density)
    ref = evaluate(p, inputs)
    result = simulate(module, as_declared(module, inputs), sizes)
    outs = {t.name: result.tensors[t.name] for t in module.tensors if t.role == "output"}
    assert outs
    for name in sorted(outs):
        a, e = outs[name].to_dense(), ref[name].to_dense()
        assert np.allclose(a, e, rtol=1e-6, atol=1e-9, equal_nan=True), (name, a, e, text)
        if _exact(p):
            assert (outs[name].pattern() == ref[name].pattern()).all(), (name, text)

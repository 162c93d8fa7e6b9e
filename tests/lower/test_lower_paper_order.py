"""Random chain programs fused in the paper's order (`fuse --order paper`), lowered and run on
both engines, checked against the reference evaluator (values and stored patterns): the order
FuseFlow's compiler picks must compile to graphs that compute what the program says, whichever
engine runs them. Programs lowering does not take in that order are skipped as in
test_lower_random_chains (hypothesis `event`s count them)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings

from fuseflowc import pipeline
from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import UserError
from tests.lower.test_lower_random_chains import SIZES, chains
from tests.support.lower_harness import load_text, skip_unsupported


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(chains())
def test_paper_order_on_both_engines(case):
    text, density, _, seed = case
    try:
        p = load_text(text)
    except UserError:
        assume(False)
    options = pipeline.CompileOptions(order="paper", inline_widened=bool(seed % 2), verify=True,
                                      reparse_fused=True, reparse_module=True)
    try:
        module = pipeline.compile(p, options).module
    except UserError as e:
        skip_unsupported(e)
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    inputs = random_inputs(specs, SIZES, seed, density)
    ref = pipeline.reference(p, inputs)
    for engine in ("python", "fast"):
        sim = pipeline.simulate(module, pipeline.as_declared(module, inputs), dict(SIZES),
                                engine=engine)
        outs, expected = pipeline.outputs_to_check(module, sim, ref)
        assert outs, "no output written"
        for name in sorted(expected):
            a, e = outs[name].to_dense(), expected[name].to_dense()
            assert np.allclose(a, e, rtol=1e-6, atol=1e-9, equal_nan=True), \
                f"{engine}: {name} differs:\nsim={a}\nref={e}\n{text}"
            assert (outs[name].pattern() == expected[name].pattern()).all(), \
                f"{engine}: {name}: stored pattern differs\n{text}"

"""An order-2 accumulator's outer output level meeting an operand whose side is not required.

Found by test_lower_random_chains: `T2[i] = T0[k] - 0.5 * A0[i,k,j]` (the sum over j inside
the one over k) fused with T1 in an order j -> k -> i. The accumulator over j has the output
levels k, i and emits a k only with an i below it: with A0's i level compressed, a k whose
slice of A0 is empty is missing. Lowering took k from T0's dense scan alone (a "full
accumulator level", build.Analysis._drop_full_outer_spacc) and the repeat of T0 over i met
fewer fibers than coordinates (`repeat signal ended (D) inside an element`). T0 lacks i, so the
accumulator's side of the union is required: the join's coordinates are its own, and it now
stays in the joiner, which locates T0 at its coordinates. Checked against the reference
evaluator on both engines, with empty k slices (some, all, a single entry)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import UserError
from fuseflowc.fuse.algorithm import fuse_program
from fuseflowc.fuse.orders import region_orders
from tests.support.lower_harness import check_both_engines, check_inputs, load_text

SIZES = {"I": 3, "J": 4, "K": 3}
FOUND = "(dense, dense, compressed(2)) order (2, 1, 0)"   # A0's format in the program found


def program(a0: str = FOUND, t0: str = "dense", op: str = "-", t2: str = "dense"):
    return load_text(f"""
dim I, J, K
tensor A0[I, K, J] : {a0}
tensor A1[K] : (compressed(2)) order (0)
tensor T0[K] : {t0}
tensor T1[K] : sparse
tensor T2[I] : {t2}
T0[k] = A1[k] * A1[k]
T1[k] = T0[k] + T0[k]
T2[i] = T0[k] {op} 0.5 * A0[i,k,j]
fuse pair: T1, T2
""")


def compile_order(p, k: int):
    options = pipeline.CompileOptions(order=k, order_region="pair", verify=True,
                                      reparse_fused=True, reparse_module=True)
    return pipeline.compile(p, options).module


def order_count(p) -> int:
    return {r["region"]: int(r["orders"]) for r in region_orders(fuse_program(p))}["pair"]


def test_the_program_found_every_order_and_density():
    p = program()
    assert order_count(p) == 4
    for k in range(4):
        module = compile_order(p, k)
        for density in (0.0, 0.3, 1.0):
            check_both_engines(p, module, SIZES, k, density)


LEVELS = st.sampled_from(["dense", "compressed"])


@st.composite
def cases(draw):
    levels = draw(st.lists(LEVELS, min_size=3, max_size=3))
    # j outermost in storage (mode order 2, ...) gives orders with j outside k and i: the sum
    # over j is then an order-2 accumulator
    order = draw(st.one_of(st.sampled_from([[2, 1, 0], [2, 0, 1]]), st.permutations([0, 1, 2])))
    a0 = f"({', '.join(levels)}) order ({', '.join(map(str, order))})"
    t0 = draw(st.sampled_from(["dense", "sparse"]))
    t2 = draw(st.sampled_from(["dense", "sparse"]))
    op = draw(st.sampled_from(["-", "+"]))
    # the k slices of A0 left empty: none, some, all; or a single entry in the whole tensor
    empty = draw(st.sampled_from(["none", "some", "all", "single"]))
    return a0, t0, t2, op, empty, draw(st.integers(0, 3)), draw(st.integers(0, 2 ** 16))


def inputs_for(p, empty: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    specs = {s.name: s for s in p.specs()}
    a0 = rng.standard_normal((3, 3, 4)) * (rng.random((3, 3, 4)) < 0.6)
    if empty == "some":
        a0[:, rng.random(3) < 0.5, :] = 0.0
        a0[:, int(rng.integers(3)), :] = 0.0
    elif empty == "all":
        a0[:] = 0.0
    elif empty == "single":
        a0[:] = 0.0
        a0[tuple(int(rng.integers(n)) for n in (3, 3, 4))] = 1.5
    a1 = rng.standard_normal(3) * (rng.random(3) < 0.7)
    a1[int(rng.integers(3))] = 0.0   # A1's compressed(2) level holds at most 2
    return {"A0": FiberTensor.from_dense(a0, specs["A0"].format),
            "A1": FiberTensor.from_dense(a1, specs["A1"].format)}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_accumulator_outer_level_meets_an_operand(case):
    a0, t0, t2, op, empty, k, seed = case
    p = program(a0, t0, op, t2)
    # the drawn order among those with an order-2 accumulator (the shape under test) if any
    modules, refused = [], []
    for n in range(order_count(p)):
        try:
            modules.append(compile_order(p, n))
        except UserError as e:
            # an order the lowering refuses with its located message (never a wrong answer)
            assert "meets another operand; joining it is not supported" in str(e) \
                or "would need an order-" in str(e), str(e)
            refused.append(str(e).split(":")[-1][:40])
    with_spacc2 = [m for m in modules if any(nd.kind == "spacc2" for g in m.graphs
                                             for nd in g.nodes)]
    pool = with_spacc2 or modules
    assume(pool)
    event("order-2 accumulator" if with_spacc2 else "no order-2 accumulator")
    check_inputs(p, pool[k % len(pool)], inputs_for(p, empty, seed), SIZES)

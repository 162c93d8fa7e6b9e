"""Random programs of one family through fuse -> lower -> simulate (both engines), checked
against the reference evaluator (values and stored patterns): an intermediate reduction T0
read by two later statements of its fusion region at different index sets (a product with a
matrix, and a union with another reduction, T1, reduced again), in a random order of a random
region (or the paper's), with or without `--share` and `--inline-widened`.

T1 declared dense splits the region (fuse stores it), and T0, inlined on both sides, may need a
graph of its own in either part: the session-12 bug (tests/lower/test_lower_known_bugs.py,
INTERMEDIATE_STORED_FOR_TWO_REGIONS) wrote T0 once per part. The chains of
test_lower_random_chains draw this shape rarely; this strategy draws nothing else. Programs
lowering does not take are counted by hypothesis `event`s, as in test_lower_paper_order."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import UserError
from fuseflowc.fuse.orders import region_orders
from fuseflowc.samml import ir
from tests.lower.test_lower_random_chains import DIMS, SIZES, formats, input_formats
from tests.support.lower_harness import check_both_engines, load_text, skip_unsupported


@st.composite
def read_twice(draw):
    """(program text, input densities, seed, CompileOptions keywords but the order, order pick)."""
    x, y, z = draw(st.permutations("ijk"))
    a0 = tuple(draw(st.permutations((x, y))))
    a2 = tuple(draw(st.permutations((x, y, z))))
    # T0[kept] = reduce[reduced](A0 ...), mostly over A0's first mode: an order that creates
    # the reduced index first then iterates it outside its readers' (the paper's) needs T0
    # stored by a graph of its own on both sides of the split
    kept, reduced = draw(st.sampled_from([(a0[1], a0[0])] * 3 + [(a0[0], a0[1])]))
    t3 = draw(st.sampled_from((x, y)))                 # T3 reduces T1's other index

    def acc(t: str, idx) -> str:
        return f"{t}[{','.join(idx)}]"

    def decl(t: str, idx, fmt: str) -> str:
        return f"tensor {t}[{', '.join(DIMS[v] for v in idx)}] : {fmt}"

    t1 = tuple(draw(st.permutations((x, y))))
    t2 = tuple(draw(st.permutations((x, y))))
    body0 = draw(st.sampled_from(("{a} * {a}", "{a} + {a}", "exp({a}) - 1", "relu({a})")))
    red0 = draw(st.sampled_from(("sum", "max")))
    op1 = draw(st.sampled_from(("*", "+", "-")))
    op2 = draw(st.sampled_from(("{t} * {a}", "{t} + {a}", "max({t}, {a})", "mask({t}, {a})")))
    op3 = draw(st.sampled_from(("{t} + {u}", "{t} - {u}", "max({t}, {u})", "min({t}, {u})")))
    red3 = draw(st.sampled_from(("sum", "max")))
    other = y if t3 == x else x
    lines = ["dim I, J, K",
             decl("A0", a0, draw(st.one_of(st.just("(dense, dense)"), input_formats(2)))),
             decl("A2", a2, draw(st.one_of(st.just("(dense, dense, dense)"),
                                           input_formats(3)))),
             decl("T0", (kept,), draw(formats(1))),
             # dense (mostly): fuse stores T1, splitting the region between T0's readers
             decl("T1", t1, draw(st.sampled_from(["(dense, dense) order (0, 1)"] * 3
                                                  + [draw(formats(2))]))),
             decl("T2", t2, draw(formats(2))),
             decl("T3", (t3,), draw(formats(1))),
             f"T0[{kept}] = {red0}[{reduced}]({body0.format(a=acc('A0', a0))})",
             f"T1[{','.join(t1)}] = sum[{z}]({acc('A2', a2)}) {op1} {acc('A0', a0)}",
             f"T2[{','.join(t2)}] = " + op2.format(t=acc("T0", (kept,)), a=acc("A0", a0)),
             f"T3[{t3}] = {red3}[{other}](" + op3.format(t=acc("T0", (kept,)),
                                                          u=acc("T1", t1)) + ")",
             "fuse all: T0, T1, T2, T3"]
    density = {n: draw(st.sampled_from((0.0, 0.4, 1.0))) for n in ("A0", "A2")}
    # (--inline-widened keeps T1 in the stream: one region, so drawn less often)
    flags = {"share": draw(st.booleans()),
             "inline_widened": draw(st.sampled_from((False, False, False, True)))}
    pick = draw(st.one_of(st.just("paper"), st.integers(0, 10 ** 6)))
    return "\n".join(lines) + "\n", density, draw(st.integers(0, 3)), flags, pick


def check_case(case) -> None:
    """Compile one drawn case (verified, printed and parsed back between stages) and check it
    on both engines against the reference; `assume(False)` for what lowering does not take."""
    text, density, seed, flags, pick = case
    try:
        p = load_text(text)
    except UserError:
        event("rejected by the checker")
        assume(False)
    try:
        fp = pipeline.compile(p, pipeline.CompileOptions(verify=False, **flags)).fused
        if pick == "paper":
            order, region = "paper", None
        else:
            counts = [(r["region"], int(r["orders"])) for r in region_orders(fp)]
            region, count = counts[pick % len(counts)]
            order = pick // len(counts) % count
        module = pipeline.compile(p, pipeline.CompileOptions(
            order=order, order_region=region, verify=True, reparse_fused=True,
            reparse_module=True, **flags)).module
    except UserError as e:
        skip_unsupported(e)
    writes = [t for g in module.graphs for t in g.tensor_names((ir.WriteVals,))]
    assert len(writes) == len(set(writes)), f"a tensor written twice: {writes}\n{text}"
    event(f"{len(fp.regions)} region(s), {len(module.graphs)} graph(s)")
    inlined = sum(any(v.tensor == "T0" and v.kind == "inline" for v in r.views)
                  for r in fp.regions)
    if "T0" in writes and inlined > 1:
        event("T0 inlined by 2 regions, stored once (the session-12 shape)")
    check_both_engines(p, module, SIZES, seed, density)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(read_twice())
def test_read_twice_in_every_order(case):
    check_case(case)

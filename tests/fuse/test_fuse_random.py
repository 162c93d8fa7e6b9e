"""Random programs through the fusion algorithm: it never crashes, its IR round-trips and
verifies, the chosen order is a linear extension of the POG, and --order K is the K-th order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.orders import region_pog
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.pog import is_linear_extension
from fuseflowc.fuse.printer import fused_str
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program

FORMATS = ["dense", "csr", "csc", "dcsr", "dcsc"]


@st.composite
def programs(draw):
    """Matrices over one dim N: inputs, then statements that multiply (matmul in a random
    index arrangement), add or map earlier tensors; random formats, orders and one region."""
    n_in = draw(st.integers(1, 3))
    n_st = draw(st.integers(1, 4))
    lines = ["dim N"]
    names = [f"A{k}" for k in range(n_in)]
    for a in names:
        lines.append(f"tensor {a}[N, N] : {draw(st.sampled_from(FORMATS))}")
    stmts, orders = [], []
    for k in range(n_st):
        t = f"T{k}"
        lines.append(f"tensor {t}[N, N] : {draw(st.sampled_from(FORMATS))}")
        kind = draw(st.sampled_from(["matmul", "add", "map"]))
        x = draw(st.sampled_from(names))
        y = draw(st.sampled_from(names))
        if kind == "matmul":
            lx = draw(st.sampled_from(["[i,k]", "[k,i]"]))
            ly = draw(st.sampled_from(["[k,j]", "[j,k]"]))
            stmts.append(f"{t}[i,j] = {x}{lx} * {y}{ly}")
            if draw(st.booleans()):
                orders.append(f"order {t}: " + " -> ".join(draw(st.permutations("ijk"))))
        elif kind == "add":
            ly = draw(st.sampled_from(["[i,j]", "[j,i]"]))
            stmts.append(f"{t}[i,j] = {x}[i,j] + {y}{ly}")
        else:
            stmts.append(f"{t}[i,j] = exp({x}[i,j])")
            if draw(st.booleans()):
                orders.append(f"order {t}: " + " -> ".join(draw(st.permutations("ij"))))
        names.append(t)
    body = lines + stmts + orders
    if n_st > 1 and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from([f"T{k}" for k in range(n_st)]),
                               min_size=2, unique=True))
        body.append("fuse r: " + ", ".join(chosen))
    return "\n".join(body) + "\n"


@settings(max_examples=120, deadline=None)
@given(programs(), st.integers(0, 50))
def test_random_programs_fuse_cleanly(text, k):
    program = check(parse_program(Source("rand.ff", text)))
    try:
        fused = fuse_program(program, "rand.ff")
    except UserError as e:
        assert "cycle" in e.format() or "depend on each other" in e.format()
        return
    out = fused_str(fused)
    assert fused_str(parse_fused(Source("ir", out))) == out
    for r in fused.regions:
        rank = {n: p for p, n in enumerate(r.index_names())}
        edges = {(rank[e.src], rank[e.dst]) for e in r.edges}
        assert is_linear_extension(len(rank), edges, [rank[n] for n in r.order])
        pog = region_pog(r)
        count = pog.count()
        kk = k % count
        picked = fuse_program(program, "rand.ff", FuseOptions({r.name: kk})).region(r.name)
        assert tuple(rank[n] for n in picked.order) == pog.unrank(kk)
        # every written tensor is written exactly once in the whole program
    written = [e.statement for r in fused.regions for e in r.exprs if e.writes]
    assert len(written) == len(set(written))
    assert set(written) >= set(program.outputs)

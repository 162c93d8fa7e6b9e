"""fuseflowc plan: MPSkipEnum against brute force, the planner's search against brute force on a
real program, the warehouse matcher on renamed and permuted programs, determinism, errors, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang.load import load_program, program_from_source
from fuseflowc.plan.cost import CostOptions, Schedule
from fuseflowc.plan.enumerate import assignment, brute_force, skip_enum
from fuseflowc.plan.patterns import Warehouse, parse_pattern, pattern_of
from fuseflowc.plan.search import Planner, PlanOptions
from fuseflowc.plan.signature import region_signature

ROOT = Path(__file__).resolve().parents[2]
GCN = ROOT / "ir_examples/models/gcn/gcn.ff"
GCN_SIZES = ["--size", "N=60", "--size", "F=20", "--size", "C=4", "--density", "A=0.1",
             "--density", "X=0.2"]


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fuseflowc", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


# -- MPSkipEnum ----------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(0, 7).flatmap(lambda m: st.tuples(
    st.just(m), st.lists(st.integers(0, 20), min_size=m, max_size=m),
    st.lists(st.integers(0, 60), min_size=1 << m, max_size=1 << m),
    st.lists(st.booleans(), min_size=1 << m, max_size=1 << m))))
def test_skip_enum_finds_brute_force_best(case):
    """Costs = materialization weights (the lower bound) + an arbitrary non-negative rest;
    some assignments invalid. The best cost equals brute force's, and every plan of the
    space is costed, skipped or invalid exactly once."""
    m, w, rest, valid = case

    def lb(q):
        return sum(wi for wi, x in zip(w, q) if x)

    def cost(q):
        j = int("".join("1" if x else "0" for x in q) or "0", 2)
        return lb(q) + rest[j] if valid[j] else None

    seen = []
    best, c, stats = skip_enum(m, cost, lb, lambda q, c: seen.append(q))
    bbest, bc, nvalid = brute_force(m, cost)
    assert c == bc
    if bc is not None:
        assert cost(best) == bc
    assert stats.space == 1 << m
    assert stats.costed + stats.skipped + stats.invalid == 1 << m
    assert stats.costed == len(seen) == len(set(seen))


def test_skip_enum_skips_dominated_subtrees():
    """Fuse-all is cheapest and every materialization costs more than it: everything after
    the first plan is skipped (2^m - 1 plans) in m lower-bound probes."""
    m = 6
    best, c, stats = skip_enum(m, lambda q: 1 + 10 * sum(q), lambda q: 10 * sum(q))
    assert best == assignment(m, 0) and c == 1
    assert (stats.costed, stats.skipped, stats.invalid) == (1, 63, 0)


# -- the planner on a program ---------------------------------------------------------------

def _planner(path, **kw):
    p = load_program(str(path))
    sizes = {"N": 60, "F": 20, "C": 4, "H": 16}
    return Planner(p, CostOptions(sizes=sizes, densities={"A": 0.1, "X": 0.2}),
                   PlanOptions(**kw))


def test_search_matches_brute_force_on_gcn():
    """Over GCN's interesting points: the plan MPSkipEnum picks costs what the best of all
    2^m assignments costs, costing fewer or as many."""
    pl = _planner(GCN)
    points = pl.fusable_edges()
    stmts = [s.name for s in pl.p.statements]
    assert len(points) >= 3
    res = pl.run()

    def cost(q):
        regs = pl.components(stmts, [pt for pt, mat in zip(points, q) if not mat])
        where = {s: k for k, r in enumerate(regs) for s in r}
        if any(mat and where[a] == where[b] for (a, b), mat in zip(points, q)):
            return None
        return pl.plan_cost(regs) if pl.acyclic(regs) else None
    _, bc, nvalid = brute_force(len(points), cost)
    chosen = [frozenset(r.statements) for r in res.regions]
    assert pl.plan_cost(chosen) == bc
    assert res.stats.costed <= nvalid
    assert res.stats.costed + res.stats.skipped + res.stats.invalid == res.stats.space


def test_bounded_search_is_stated():
    pl = _planner(GCN, max_points=0)
    res = pl.run()
    assert any(p["mode"].startswith("bounded") for p in res.partitions)
    assert res.total.cycles > 0


# -- signatures and the warehouse -------------------------------------------------------------

SPMM = """dim I, K, J
tensor A[I, K] : csr
tensor B[K, J] : dense
tensor C[I, J] : dense
C[i,j] = A[i,k] * B[k,j]
"""
SPMM_RENAMED = """dim P, Q, R
tensor Wt[Q, R] : dense
tensor Adj[P, Q] : csr
tensor Out[P, R] : dense
Out[x,y] = Wt[z,y] * Adj[x,z]
"""
LAYER = """dim N, F, H
tensor A[N, N] : csr
tensor X[N, F] : csr
tensor W[F, H] : dense
tensor b[H] : dense
tensor T[N, F] : csr
tensor Z[N, H] : dense
T[i,f] = A[i,k] * X[k,f]
Z[i,h] = b[h] + T[i,f] * W[f,h]
"""
LAYER_PERMUTED = """dim M, G, K
tensor Wm[G, K] : dense
tensor bias[K] : dense
tensor Feat[M, G] : csr
tensor Adj[M, M] : csr
tensor Agg[M, G] : csr
tensor Out[M, K] : dense
Agg[r,c] = Feat[n,c] * Adj[r,n]
Out[r,o] = Wm[c,o] * Agg[r,c] + bias[o]
"""


def _prog(text, name="t.ff"):
    return program_from_source(Source(name, text))


def test_signature_up_to_renaming_and_commuted_operands():
    a = region_signature(_prog(SPMM), ("C",))
    b = region_signature(_prog(SPMM_RENAMED), ("Out",))
    assert a.text == b.text
    assert a.local["C"] == {"i": "i0", "j": "i1", "k": "i2"}
    assert b.local["Out"] == {"x": "i0", "y": "i1", "z": "i2"}
    assert b.tensors == {"t0": "Adj", "t1": "Wt"}


def test_signature_of_fused_region_renamed_and_permuted():
    a = region_signature(_prog(LAYER), ("T", "Z"))
    b = region_signature(_prog(LAYER_PERMUTED), ("Agg", "Out"))
    assert a.text == b.text
    # a different format or operator is another signature
    assert region_signature(_prog(SPMM.replace(": csr", ": dcsr")), ("C",)).text != \
        region_signature(_prog(SPMM), ("C",)).text
    assert region_signature(_prog(LAYER.replace("b[h] +", "b[h] -")), ("T", "Z")).text != a.text


def test_warehouse_schedule_applies_in_the_matched_names(tmp_path):
    p = _prog(LAYER)
    sched = Schedule(orders=(("T", ("i", "k", "f")), ("Z", ("i", "f", "h"))),
                     parallel=(("Z", "i", 4),))
    pat = pattern_of(p, ("T", "Z"), sched, False, "layer", "a test")
    (tmp_path / "layer.toml").write_text(pat.to_toml())
    wh = Warehouse.load(str(tmp_path))
    q = _prog(LAYER_PERMUTED)
    name, got = wh.match(q, ("Agg", "Out"))
    assert name == "layer"
    assert dict(got.orders) == {"Out": ("r", "c", "o"), "Agg": ("r", "n", "c")}
    assert got.parallel == (("Out", "r", 4),)
    assert wh.match(_prog(SPMM), ("C",)) is None


def test_builtin_warehouse_loads_and_matches_spmm():
    wh = Warehouse.load("builtin")
    names = {p.name for p in wh.patterns}
    assert {"spmm_csr", "spmm_csc", "sddmm", "gcn_layer1", "masked_attention_bigbird",
            "gpt3_attention"} <= names
    assert len({p.signature for p in wh.patterns}) == len(wh.patterns)
    name, sched = wh.match(_prog(SPMM_RENAMED), ("Out",))
    assert name == "spmm_csr" and dict(sched.orders) == {"Out": ("x", "z", "y")}


@pytest.mark.parametrize("text, where, what", [
    ('name = "x"\nsignature = \n', "p.toml:2:", "p.toml:2"),
    ('name = "x"\n', "p.toml:1:1", "signature: expected a non-empty string"),
    ('name = "x"\nsignature = "s"\n[schedule]\norder = ["j"]\n', "p.toml:4:1",
     "schedule.order"),
    ('name = "x"\nsignature = "s"\n[schedule]\nparallelize = { index = "i0", factor = 99 }\n',
     "p.toml:4:1", "factor = 1..64"),
])
def test_pattern_errors_are_located(text, where, what):
    with pytest.raises(UserError) as e:
        parse_pattern(text, "p.toml")
    msg = e.value.format()
    assert msg.startswith(where) and what in msg


# -- the command ------------------------------------------------------------------------------

def test_cli_plan_is_deterministic_and_compiles(tmp_path):
    a = run("plan", GCN, *GCN_SIZES, "--lanes", "2")
    b = run("plan", GCN, *GCN_SIZES, "--lanes", "2")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert "plans costed" in a.stderr and "rank" in a.stderr
    assert "# est. cycles" in a.stdout or "est. cycles" in a.stdout
    out = tmp_path / "planned.ff"
    out.write_text(a.stdout)
    planned = load_program(str(out))  # the planned program parses and checks
    assert [s.name for s in planned.statements] == [s.name for s in load_program(str(GCN)).statements]
    c = run("fuse", out)
    assert c.returncode == 0, c.stderr


def test_cli_json_and_objectives():
    r = run("plan", GCN, *GCN_SIZES, "--json", "--objective", "bytes", "--top", "3")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["objective"] == "bytes"
    assert len(doc["top"]) <= 3
    assert doc["top"][0]["bytes"] <= doc["top"][-1]["bytes"]
    s = doc["search"]
    assert s["costed"] + s["skipped"] + s["invalid"] == s["space"]


def test_cli_no_search_uses_warehouse(tmp_path):
    f = tmp_path / "s.ff"
    f.write_text(SPMM_RENAMED)
    r = run("plan", f, "--size", "P=50", "--size", "Q=50", "--size", "R=8",
            "--warehouse", "builtin", "--no-search")
    assert r.returncode == 0, r.stderr
    assert "order Out: x -> z -> y" in r.stdout and "spmm_csr" in r.stdout


@pytest.mark.parametrize("args, msg", [
    (["--size", "N=10"], "the size of dim C, F is not known"),
    (["--no-search", *GCN_SIZES], "--no-search applies a warehouse's schedules"),
    (["--warehouse", "/nonexistent", *GCN_SIZES], "not a directory"),
])
def test_cli_errors(args, msg):
    r = run("plan", GCN, *args)
    assert r.returncode == 1
    assert msg in r.stderr and "Traceback" not in r.stderr


def test_cli_program_error_is_located(tmp_path):
    f = tmp_path / "bad.ff"
    f.write_text("dim I\ntensor A[I] : dense\ntensor y[I] : dense\ny[i] = A[i] * B[i]\n")
    r = run("plan", f, "--size", "I=4")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{f}:4:") and "Traceback" not in r.stderr


def test_cli_bad_warehouse_file_is_located(tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    (wh / "a.toml").write_text('name = "a"\nsignature = "x"\n[schedule]\norder = [1]\n')
    r = run("plan", GCN, *GCN_SIZES, "--warehouse", wh)
    assert r.returncode == 1
    assert f"{wh / 'a.toml'}:4:1: error: schedule.order" in r.stderr


def test_cli_learn_writes_a_pattern_that_matches(tmp_path):
    (tmp_path / "spmm.ff").write_text(SPMM)
    rows = [{"id": "aaa", "model": "spmm", "variant": "best", "program": "spmm.ff",
             "schedule": ["order C: i -> k -> j"], "order": 0, "order_region": None,
             "pipeline": "locate", "status": "ok", "cycles": 100},
            {"id": "bbb", "model": "spmm", "variant": "worse", "program": "spmm.ff",
             "schedule": [], "order": 0, "order_region": None, "pipeline": "",
             "status": "ok", "cycles": 200}]
    res = tmp_path / "r.jsonl"
    res.write_text("".join(json.dumps(r) + "\n" for r in rows))
    wh = tmp_path / "wh"
    wh.mkdir()
    r = run("plan", "--learn", res, "-o", wh, "--name", "mine")
    assert r.returncode == 0, r.stderr
    pat = parse_pattern((wh / "mine.toml").read_text(), "mine.toml")
    assert pat.order == ("i0", "i2", "i1") and pat.locate
    assert "configuration aaa" in pat.note
    name, sched = Warehouse.load(str(wh)).match(_prog(SPMM_RENAMED), ("Out",))
    assert name == "mine"
    again = run("plan", "--learn", res, "-o", wh, "--name", "mine")
    assert again.returncode == 1 and "exists" in again.stderr
    assert (wh / "mine.toml").read_text() == pat.to_toml()


def test_learn_takes_the_per_region_orders_and_unfused_of_a_product_row(tmp_path):
    """A row of an `orders = "product"` sweep is learned with its orders per region (and
    `unfused`), not with order 0 of the fused program."""
    from fuseflowc.plan.patterns import learn_pattern
    sweep = str(ROOT / "ir_examples/kernels/nested_matmul_sweep.ff")

    def learned(name, **fields):
        row = {"id": name, "model": "nm", "variant": "v", "program": sweep, "schedule": [],
               "order": 0, "order_region": None, "free_input_order": True, "pipeline": "",
               "status": "ok", "cycles": 1, **fields}
        res = tmp_path / f"{name}.jsonl"
        res.write_text(json.dumps(row) + "\n")
        wh = tmp_path / name
        wh.mkdir()
        return parse_pattern(Path(learn_pattern(str(res), str(wh), name)).read_text(), name)
    base = learned("base")
    assert learned("zero", order=None, orders={"abc": 0}).order == base.order
    assert learned("five", order=None, orders={"abc": 5}).order != base.order
    # unfused: the first region (E, one statement) is learned, at its own order index
    e0 = learned("e0", order=None, unfused=True, orders={"E": 0, "D": 2})
    e2 = learned("e2", order=None, unfused=True, orders={"E": 2, "D": 2})
    assert len(e0.order) == 3 and e0.order != e2.order


#: A region fuse splits: T, declared dense, is read by exp (which would see its stored zeros).
_SPLIT = """
dim I, J, K
tensor A[I, K] : csr
tensor B[K, J] : dense
tensor T[I, J] : dense
tensor y[I, J] : dense
T[i,j] = A[i,k] * B[k,j]
y[i,j] = exp(T[i,j])
"""


@pytest.mark.parametrize("program,sizes,dens", [
    ("bigbird", {"S": 16, "NH": 2, "DH": 8}, {"M": 0.3}),
    ("split", {"I": 6, "J": 5, "K": 4}, {"A": 0.3}),
])
def test_region_cost_is_the_estimate_of_the_fused_program(program, sizes, dens):
    """A region that reads only inputs costs what `estimate` gives the program fusing it, in
    one graph (BigBird's softmax: its row max and sum stay in the stream) or several (fuse
    splits the region where T is stored)."""
    from fuseflowc.estimate import DataStats, estimate_module
    from fuseflowc.fuse.algorithm import fuse_program
    from fuseflowc.lower.driver import lower_fused
    if program == "bigbird":
        base = ROOT / "ir_examples/models/bigbird_attention/multihead"
        p = load_program(str(base / "bigbird_attn.ff"))
        full = load_program(str(base / "bigbird_attn_full.ff"))
    else:
        p = program_from_source(Source("<split>", _SPLIT))
        full = program_from_source(Source("<split>", _SPLIT + "fuse all: T, y\n"))
    pl = Planner(p, CostOptions(sizes=sizes, densities=dens), PlanOptions())
    m = pl.ev.measure(frozenset(s.name for s in p.statements), Schedule(), False)
    module, _ = lower_fused(fuse_program(full))
    est = estimate_module(module, DataStats.from_values(module, sizes, dens))
    assert m.graphs == len(est.kernels) == (1 if program == "bigbird" else 2)
    assert m.cycles == pytest.approx(est.total.cycles) and m.cycles > 0
    assert m.flops == pytest.approx(est.total.flops)
    assert m.bytes == pytest.approx(est.total.bytes)


def test_unplannable_statement_reports_its_located_error(monkeypatch, tmp_path):
    """A statement that compiles in no schedule: the plan fails with that statement's own
    located error and a note, never a traceback."""
    from fuseflowc.plan import cost as cost_mod
    f = tmp_path / "p.ff"
    f.write_text("dim I, J\ntensor A[I, J] : csr\ntensor x[J] : dense\ntensor t[I] : dense\n"
                 "tensor y[I] : dense\nt[i] = A[i,j] * x[j]\ny[i] = relu(t[i])\n")
    p = load_program(str(f))
    real = cost_mod.Evaluator._measure

    def failing(self, region, sched, locate):
        if "y" in region:
            raise UserError("cannot lower this", p.statement("y").loc)
        return real(self, region, sched, locate)
    monkeypatch.setattr(cost_mod.Evaluator, "_measure", failing)
    pl = Planner(p, CostOptions(sizes={"I": 8, "J": 8}), PlanOptions())
    with pytest.raises(UserError) as e:
        pl.run()
    text = e.value.format()
    assert text.startswith(f"{f}:7:1: error: cannot lower this")
    assert "plan: statement y compiles neither alone nor fused" in text


def test_empty_program_is_an_error(tmp_path):
    f = tmp_path / "e.ff"
    f.write_text("dim I\ntensor A[I] : dense\n")
    r = run("plan", f, "--size", "I=4")
    assert r.returncode == 1 and "nothing to plan" in r.stderr


def test_signature_of_a_huge_inlined_region_is_refused(tmp_path):
    """Each statement reads the previous one twice: inlining doubles the tree per statement.
    The region gets no signature (no match, no pattern) instead of a blow-up."""
    lines = ["dim I", "tensor x[I] : dense"] + [f"tensor t{k}[I] : dense" for k in range(14)]
    lines.append("t0[i] = x[i] * x[i]")
    lines += [f"t{k}[i] = t{k - 1}[i] * t{k - 1}[i]" for k in range(1, 14)]
    p = _prog("\n".join(lines) + "\n")
    stmts = tuple(f"t{k}" for k in range(14))
    wh = Warehouse([])
    assert wh.match(p, stmts) is None
    with pytest.raises(UserError, match="too large for a signature"):
        pattern_of(p, stmts, Schedule(), False, "x", "")
    assert region_signature(p, stmts[:5]).text  # a small prefix has one

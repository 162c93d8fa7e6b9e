"""Issue 23's planner defects: pattern names that would leave the warehouse, plans that `fuse`
rejects, searches that run away (items 4, 5, 7)."""

from __future__ import annotations

import json
import os

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.plan.patterns import learn_pattern, pattern_name_error

from .test_plan import SPMM, run


def _results(tmp_path):
    (tmp_path / "spmm.ff").write_text(SPMM)
    row = {"id": "aaa", "model": "spmm", "variant": "best", "program": "spmm.ff",
           "schedule": [], "order": 0, "order_region": None, "pipeline": "locate",
           "status": "ok", "cycles": 100}
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps(row) + "\n")
    wh = tmp_path / "wh"
    wh.mkdir()
    return res, wh


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs_escape", "a/b", ".hidden", "..",
                                  "", "x" * 101, "a\\b", "sp ace"])
def test_learn_refuses_a_name_that_is_not_a_file_name(tmp_path, name):
    if name.startswith("/"):
        name = str(tmp_path / "abs_escape")
    res, wh = _results(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = run("plan", "--learn", res, "-o", wh, "--name", name)
    assert r.returncode == 2, r.stderr
    assert "not a pattern name" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    with pytest.raises(UserError, match="not a pattern name"):
        learn_pattern(str(res), str(wh), name)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name", ["mine", "spmm_csr", "gcn-2.v1", "_x"])
def test_learn_accepts_plain_names_inside_the_warehouse(tmp_path, name):
    assert pattern_name_error(name) is None
    res, wh = _results(tmp_path)
    r = run("plan", "--learn", res, "-o", wh, "--name", name)
    assert r.returncode == 0, r.stderr
    assert os.listdir(wh) == [f"{name}.toml"]


# -- item 7: plan never returns a program that fuse rejects ---------------------------------

DECOMPOSED = """dim I = 8, J = 8, K = 4
tensor A[I, J] : csr
tensor B[J, K] : dense
tensor T[I, K] : dense
tensor Y[I, K] : dense
tensor Z[I, K] : dense
T[i,k] = A[i,j] * B[j,k]
Y[i,k] = A[i,j] * T[j,k]
Z[i,k] = Y[i,k] + T[i,k]
decompose A: bcsr(2) >= 0.5, csr
"""


def test_plan_of_a_decomposed_program_compiles(tmp_path):
    """The decompose rule (a blocked part's intermediate operand comes from another region)
    holds in every region the planner costs: before the fix the plan fused T, Y and Z."""
    prog = tmp_path / "small.ff"
    prog.write_text(DECOMPOSED)
    r = run("plan", prog, "--density", "0.3", "-q", "-o", tmp_path / "p.ff")
    assert r.returncode == 0, r.stderr
    planned = (tmp_path / "p.ff").read_text()
    assert "decompose A: bcsr(2) >= 0.5, csr" in planned
    assert not any(line.startswith("fuse") and "T" in line and "Y" in line
                   for line in planned.splitlines())
    f = run("fuse", tmp_path / "p.ff")
    assert f.returncode == 0, f.stderr


def test_a_plan_that_does_not_compile_is_replaced_by_one_that_does(tmp_path, monkeypatch):
    """The last line of defence (validate.py): with the rule hidden from the region costs,
    the cheapest plan (T, Y, Z fused) fails to compile as a whole and the next one is
    returned, with a note saying why."""
    import fuseflowc.lang.decompose as dec
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.load import program_from_source
    from fuseflowc.plan.cost import CostOptions
    from fuseflowc.plan.search import Planner, PlanOptions
    from fuseflowc.plan.validate import compile_error, validated
    p = program_from_source(Source("small.ff", DECOMPOSED))
    cost = CostOptions(None, {"I": 8, "J": 8, "K": 4}, {}, 0.3)
    real = dec.problems
    monkeypatch.setattr(dec, "problems", lambda *a: [])
    planner = Planner(p, cost, PlanOptions())
    first = planner.run()
    assert [rp.statements for rp in first.regions] == [("T", "Y", "Z")]
    monkeypatch.setattr(dec, "problems", real)
    assert compile_error(p, first, cost) is not None
    got = validated(planner, first, cost)
    assert compile_error(p, got, cost) is None
    assert "does not compile" in got.note and "T+Y+Z" in got.note
    assert all(len(rp.statements) < 3 for rp in got.regions)


# -- item 4: a search bounded by a documented budget ----------------------------------------

def test_plan_of_an_unrolled_rnn_stops_at_its_budget_with_a_clear_message(tmp_path):
    """rnn_stacked.ff (256 statements unrolled) ran for over 300 s; the search is linear above
    48 statements and anytime (test_plan_budget.py); a budget too small to cost even each
    statement alone is an error, exit 1, naming the ways out and writing nothing."""
    from .test_plan import ROOT
    out = tmp_path / "p.ff"
    r = run("plan", ROOT / "ir_examples/models/rnn_stacked/rnn_stacked.ff", "--size", "K=4",
            "-q", "--max-compiles", "5", "-o", out)
    assert r.returncode == 1, r.stderr
    assert ("budget of 5 region compiles (--max-compiles) before the plan that leaves each "
            "statement alone was costed (5 of 256 statements, loops unrolled") in r.stderr
    assert "raise --max-compiles" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_a_large_program_gets_the_linear_search():
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.load import program_from_source
    from fuseflowc.plan.cost import CostOptions
    from fuseflowc.plan.search import MAX_STATEMENTS, Planner, PlanOptions
    n = MAX_STATEMENTS + 1
    text = "dim I = 4\n" + "".join(f"tensor t{k}[I] : dense\n" for k in range(n + 1))
    text += "".join(f"t{k + 1}[i] = t{k}[i] + t{k}[i]\n" for k in range(n))
    p = program_from_source(Source("chain.ff", text))
    planner = Planner(p, CostOptions(None, {"I": 4}, {}, 1.0), PlanOptions(max_compiles=3))
    assert planner.large and planner.max_orders == 1 and planner.segment == 2
    small = Planner(program_from_source(Source("c.ff", "dim I = 4\ntensor a[I] : dense\n"
                                               "tensor b[I] : dense\nb[i] = a[i] + a[i]\n")),
                    CostOptions(None, {"I": 4}, {}, 1.0), PlanOptions())
    assert not small.large and small.max_orders == 24
    with pytest.raises(UserError, match=f"budget of 3 region compiles \\(--max-compiles\\) "
                       f"before the plan that leaves each statement alone was costed \\(3 of "
                       f"{n} statements; the search is linear above {MAX_STATEMENTS}"):
        planner.run()
    assert planner.ev.compiled == 3
    # a budget that covers each statement alone: the best plan found, the cut stated
    got = Planner(p, CostOptions(None, {"I": 4}, {}, 1.0), PlanOptions(max_compiles=n + 5)).run()
    assert got.cut == "compiles" and got.stats.cut
    # linear: no seed fuses the whole partition (fuse inlines each step of an unrolled loop
    # into the next: rnn_stacked.ff's fuse-all seed ran for minutes)
    assert all("and 2 seeds" in part["mode"] for part in got.partitions)
    assert sorted(s for r in got.regions for s in r.statements) == sorted(f"t{k + 1}"
                                                                          for k in range(n))


def test_fuse_flags_not_given_need_no_widening_analysis(monkeypatch):
    """Evaluator.flags analysed every region with lang.widen even when neither --share nor
    --inline-widened was given, whose answer is then (False, False) anyway (most of `plan`'s
    time on rnn_stacked.ff, issue 23 item 4)."""
    import fuseflowc.lang.widen as widen
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.load import program_from_source
    from fuseflowc.plan.cost import CostOptions, Evaluator
    p = program_from_source(Source("c.ff", "dim I = 4\ntensor a[I] : dense\n"
                                   "tensor b[I] : dense\ntensor c[I] : dense\n"
                                   "b[i] = a[i] + a[i]\nc[i] = b[i] * b[i]\n"))
    monkeypatch.setattr(widen, "must_materialize", lambda *a: pytest.fail("analysed"))
    ev = Evaluator(p, CostOptions(None, {"I": 4}, {}, 1.0))
    assert ev.flags(frozenset({"b", "c"})) == (False, False)

"""`plan` is an anytime search (issue 23: every search bounded by a documented limit): a budget
of region compiles (the default bound, a count: reproducible) and an opt-in wall-time limit;
when either runs out the search plans with the best it has costed and says so. No timing here:
the time limit runs on a fake clock."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.plan.cost import CostOptions
from fuseflowc.plan.enumerate import brute_force, skip_enum
from fuseflowc.plan.flags import plan_over_flags
from fuseflowc.plan.search import PlanOptions
from fuseflowc.plan.validate import compile_error

from .test_plan import GCN, GCN_SIZES, _planner, run

SIZES = {"N": 60, "F": 20, "C": 4, "H": 16}


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 6).flatmap(lambda m: st.tuples(
    st.just(m), st.lists(st.integers(0, 20), min_size=m, max_size=m),
    st.lists(st.integers(0, 60), min_size=1 << m, max_size=1 << m),
    st.lists(st.booleans(), min_size=1 << m, max_size=1 << m),
    st.integers(0, 1 << m))))
def test_skip_enum_cut_keeps_the_best_it_costed(case):
    """Stopped after k cost calls: every assignment is costed, skipped, invalid or unvisited
    exactly once, and the best is the cheapest of those costed (brute force over them); never
    stopped, the best is brute force's over the space."""
    m, w, rest, valid, k = case
    calls = []

    def lb(q):
        return sum(wi for wi, x in zip(w, q) if x)

    def cost(q):
        calls.append(q)
        j = int("".join("1" if x else "0" for x in q) or "0", 2)
        return lb(q) + rest[j] if valid[j] else None

    seen = {}
    best, c, stats = skip_enum(m, cost, lb, lambda q, c: seen.__setitem__(q, c),
                               stop=lambda: len(calls) >= k)
    assert stats.costed + stats.skipped + stats.invalid + stats.unvisited == 1 << m
    assert stats.cut == (stats.unvisited > 0)
    assert c == (min(seen.values()) if seen else None)
    if not stats.cut:
        calls.clear()
        assert c == brute_force(m, cost)[1]


def _plan(**kw):
    from fuseflowc.lang.load import load_program
    p = load_program(str(GCN))
    cost = CostOptions(sizes=dict(SIZES), densities={"A": 0.1, "X": 0.2})
    planner, result, c = plan_over_flags(p, cost, PlanOptions(**kw))
    return p, planner, result, c


@pytest.fixture(scope="module")
def full():
    """GCN planned with the default budget: not cut."""
    return _plan()


def test_the_default_budget_is_not_reached_on_gcn(full):
    _, _, result, _ = full
    assert result.cut == "" and not result.stats.cut and "stopped" not in result.note
    assert result.compiles < 1500


@pytest.mark.parametrize("part", [0.3, 0.6, 0.95])
def test_a_cut_search_plans_with_the_best_it_found(full, part):
    """Cut at a count: the plan compiles, is never cheaper than the full search's (whose space
    holds it), is the same on a second run (a count, not seconds), and the note says how much
    was searched and which option widens it."""
    budget = int(full[2].compiles * part)
    p, planner, result, cost = _plan(max_compiles=budget)
    assert result.cut == "compiles" and result.compiles <= budget
    assert compile_error(p, result, cost) is None
    assert planner.value(result.total) >= full[1].value(full[2].total)
    assert f"the search stopped at its budget of {budget} region compiles with " in result.note
    assert "fusion plans costed" in result.note and "raise --max-compiles" in result.note
    again = _plan(max_compiles=budget)[2]
    assert [(r.statements, r.schedule) for r in again.regions] == \
        [(r.statements, r.schedule) for r in result.regions]
    assert again.total == result.total


def test_the_time_limit_cuts_on_its_clock():
    """--time-limit on a fake clock that advances one second per reading (a few per compile):
    the search stops after 30 readings, with a plan that compiles; the note says the plan
    depends on the machine."""
    clock = itertools.count().__next__
    p, _, result, cost = _plan(time_limit=30.0, clock=clock)
    assert result.cut == "time" and result.compiles <= 30
    assert compile_error(p, result, cost) is None
    assert "its time limit of 30 s (so this plan depends on the machine's speed)" in result.note
    assert "raise --time-limit" in result.note


def test_a_budget_below_each_statement_alone_is_an_error():
    pl = _planner(GCN, max_compiles=1)
    with pytest.raises(UserError, match=r"budget of 1 region compiles \(--max-compiles\) before "
                       r"the plan that leaves each statement alone was costed \(1 of "):
        pl.run()


def test_cli_cut_plan_is_written_with_a_note(tmp_path):
    out = tmp_path / "p.ff"
    r = run("plan", GCN, *GCN_SIZES, "-q", "--max-compiles", "12", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "plan: note: the search stopped at its budget of 12 region compiles" in r.stderr
    text = out.read_text()
    assert "search cut at its --max-compiles budget (best found so far)" in text
    f = run("fuse", out)
    assert f.returncode == 0, f.stderr


@pytest.mark.parametrize("value", ["0", "nan", "inf"])
def test_cli_bad_time_limit_is_a_usage_error(value):
    r = run("plan", GCN, *GCN_SIZES, "--time-limit", value)
    assert r.returncode == 2 and "--time-limit" in r.stderr and "Traceback" not in r.stderr

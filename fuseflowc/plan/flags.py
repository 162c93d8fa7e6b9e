"""The fuse flags as part of the plan's search (issue 22: plan never tried --inline-widened or
--share itself). The language has no directive for them, so they are a choice of the whole
plan: the search runs once per combination of the flags the user did not give (a flag given is
always on), each validated (validate.py), and the cheapest plan wins, ties to fewer flags.
--share is tried only where a statement has several consumers, --inline-widened only where
fuse has a widened intermediate to keep in the stream; otherwise they change nothing. A large
program (more than search.MAX_STATEMENTS statements) keeps the user's flags."""

from __future__ import annotations

from dataclasses import replace

from ..lang import ast
from .cost import CostOptions, Memo
from .search import MAX_STATEMENTS, Planner, PlanOptions, PlanResult
from .validate import validated


def flag_choices(program: ast.Program, cost: CostOptions) -> list[CostOptions]:
    """The fuse-flag combinations to search, the user's own first."""
    out = [cost]
    if len(program.statements) > MAX_STATEMENTS:
        return out  # the linear search of a large program: the user's flags only
    readers: dict[str, int] = {}
    for s in program.statements:
        for t in {a.tensor for a in s.rhs.walk() if isinstance(a, ast.Access)}:
            readers[t] = readers.get(t, 0) + 1
    multi = any(readers.get(t, 0) > 1 for t in program.assigned)
    widened = _has_widened(program)
    if widened and not cost.inline_widened:
        out += [replace(c, inline_widened=True) for c in out]
    if multi and not cost.share:
        out += [replace(c, share=True) for c in out]
    return out


def _has_widened(program: ast.Program) -> bool:
    """Whether fusing everything would make fuse store an intermediate it could keep in the
    stream with --inline-widened (lang.widen's analysis, the one fuse uses)."""
    from ..lang.widen import must_materialize
    return bool(must_materialize(program, [s.name for s in program.statements]))


def plan_over_flags(program: ast.Program, cost: CostOptions, options: PlanOptions
                    ) -> tuple[Planner, PlanResult, CostOptions]:
    """(planner, validated plan, its cost options) of the cheapest flag combination."""
    best = None
    memo = Memo()  # a region no flag changes is costed once for every combination
    choices = flag_choices(program, cost)
    searched = 0
    for c in choices:
        if memo.budget is not None and memo.budget.spent:
            break  # the budget is spent: the next combination could cost nothing new
        planner = Planner(program, c, options, memo)
        result = validated(planner, planner.run(), c)
        searched += 1
        key = planner.value(result.total)
        if best is None or key < best[0]:
            best = (key, planner, result, c)
    result = best[2]
    result.compiles, result.combinations = memo.compiles, len(choices)
    result.cut = memo.budget.spent
    if result.cut:
        result.note = "; ".join(n for n in (cut_note(result, options, memo.budget, searched),
                                            result.note) if n)
    return best[1], result, best[3]


def cut_note(result: PlanResult, options: PlanOptions, budget, searched: int) -> str:
    """What a search cut by its budget did, and which option widens it."""
    s = result.stats
    if budget.spent == "compiles":
        bound = f"its budget of {budget.compiles:,} region compiles"
        wider = "raise --max-compiles"
    else:
        bound = f"its time limit of {budget.seconds:g} s (so this plan depends on the machine's speed)"
        wider = "raise --time-limit (or drop it: the search is then bounded by --max-compiles)"
    plans = (f"{s.costed:,} of {s.space:,} fusion plans costed ({s.skipped:,} skipped by the "
             f"lower bound, {s.invalid:,} invalid, {s.unvisited:,} not reached)")
    combos = (f", {searched} of {result.combinations} fuse-flag combinations searched"
              if result.combinations > 1 else "")
    return (f"the search stopped at {bound} with {plans}{combos}: this is the best plan found "
            f"so far; {wider} to search further")

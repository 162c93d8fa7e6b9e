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
    for c in choices:
        planner = Planner(program, c, options, memo)
        result = validated(planner, planner.run(), c)
        key = planner.value(result.total)
        if best is None or key < best[0]:
            best = (key, planner, result, c)
    best[2].compiles, best[2].combinations = memo.compiles, len(choices)
    return best[1], best[2], best[3]

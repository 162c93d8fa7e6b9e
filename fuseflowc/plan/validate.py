"""The planner's last step: every plan it returns is compiled as the user will compile it (the
printed program parsed back, fused with the plan's flags, lowered, and run through the default
opt pipeline). Region costing cuts the program into pieces; a rule that only the whole program
shows (a decomposition's blocked operand fused with its producer, an order two regions
disagree on) would otherwise reach the user as a program that `fuse` rejects (issue 23, item 7).
A plan that does not compile is replaced by the next of the ranked plans, then by the unfused
plan; the reason is kept for the command's note."""

from __future__ import annotations

from ..diagnostics import Source, UserError
from ..lang import ast
from .cost import CostOptions
from .emit import program_text
from .search import Planner, PlanResult


def compile_error(program: ast.Program, result: PlanResult, cost: CostOptions
                  ) -> UserError | None:
    """The error compiling `result`'s printed program gives, or None when it compiles."""
    from .. import pipeline
    from ..lang.load import program_from_source
    from ..opt.pipeline import DEFAULT_PIPELINE
    text = program_text(program, result, [])
    try:
        planned = program_from_source(Source("<plan>", text))
        pipeline.compile(planned, pipeline.CompileOptions(
            inline_widened=cost.inline_widened, free_input_order=cost.free_input_order,
            share=cost.share, passes=DEFAULT_PIPELINE, verify_each=False))
    except UserError as e:
        return e
    return None


def validated(planner: Planner, result: PlanResult, cost: CostOptions) -> PlanResult:
    """`result` if its program compiles, else the first of its ranked alternatives that
    does, else the unfused plan (`result.note` says why); raises the first error when none
    compiles."""
    first = compile_error(planner.p, result, cost)
    if first is None:
        return result
    tried = {tuple(rp.statements for rp in result.regions)}
    alternatives = [regions for _, regions in result.top]
    alternatives.append(tuple((s.name,) for s in planner.p.statements))
    for regions in alternatives:
        if regions in tried:
            continue
        tried.add(regions)
        try:
            alt = planner.rerun(regions, result)
        except UserError:
            continue
        if compile_error(planner.p, alt, cost) is None:
            alt.note = (f"the cheapest plan ({_regions_text(result)}) does not compile "
                        f"({first}); planned the best that does "
                        f"({_regions_text(alt)})")
            return alt
    raise first


def _regions_text(result: PlanResult) -> str:
    fused = ["+".join(rp.statements) for rp in result.regions if len(rp.statements) > 1]
    return ", ".join(fused) if fused else "unfused"

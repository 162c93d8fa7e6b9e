"""Writing a plan: the program with the planner's directives (each with its estimate), the
ranked table of the best plans, and the JSON document."""

from __future__ import annotations

from dataclasses import replace

from ..lang import ast
from ..lang.printer import directive_str, program_str
from .cost import Metrics
from .search import PlanResult

#: Directives the planner chooses (the program's own are replaced).
PLANNED = (ast.Fuse, ast.Order, ast.Parallelize)


def _figures(m: Metrics) -> str:
    return f"est. cycles {m.cycles:,.0f}, FLOPs {m.flops:,.0f}, bytes {m.bytes:,.0f}"


def region_names(program: ast.Program, result: PlanResult) -> None:
    """Name each fused region: the program's own name for the same statements, else fused1,
    fused2, ... (skipping names the program uses)."""
    own = {frozenset(f.statements): f.name for f in program.regions()}
    taken = {s.name for s in program.statements} | {t.name for t in program.tensors} \
        | set(own.values())
    k = 0
    for rp in result.regions:
        if len(rp.statements) == 1:
            rp.name = rp.statements[0]
            continue
        name = own.get(frozenset(rp.statements))
        while name is None:
            k += 1
            if f"fused{k}" not in taken:
                name = f"fused{k}"
        rp.name = name


def program_text(program: ast.Program, result: PlanResult, header: list[str]) -> str:
    """The planned program as source text: declarations and statements as written (sums
    implicit where they were), kept directives, then per region its directives, each with a
    comment giving the region's estimate."""
    region_names(program, result)
    blocks = {t for rp in result.regions for t, _ in rp.schedule.blocks}
    kept = [d for d in program.directives if not isinstance(d, PLANNED)
            and not (isinstance(d, ast.Block) and d.tensor in blocks)]
    base = program_str(replace(program, directives=kept), explicit=False).rstrip("\n")
    lines = [f"# {h}" for h in header] + [base, ""]
    for rp in result.regions:
        ds: list[ast.Directive] = []
        if len(rp.statements) > 1:
            ds.append(ast.Fuse(rp.name, rp.statements))
        ds += rp.schedule.directives()
        note = _figures(rp.metrics)
        if rp.pattern:
            note += f"; warehouse pattern {rp.pattern}"
        if not ds:
            lines.append(f"# {rp.name}: unfused, default order ({note})")
            continue
        for d in ds:
            lines.append(f"{directive_str(d)}   # {note}")
    return "\n".join(lines) + "\n"


def ranking_rows(result: PlanResult) -> list[dict]:
    rows = []
    for k, (m, regions) in enumerate(result.top, 1):
        rows.append({"rank": k, **m.to_json(),
                     "regions": [list(r) for r in regions if len(r) > 1],
                     "unfused": [r[0] for r in regions if len(r) == 1]})
    return rows


def to_json(program: ast.Program, result: PlanResult) -> dict:
    region_names(program, result)
    return {
        "objective": result.objective,
        "total": result.total.to_json(),
        "locate": result.locate,
        "regions": [{"name": rp.name, "statements": list(rp.statements),
                     "directives": [directive_str(d) for d in rp.schedule.directives()],
                     "pattern": rp.pattern, "orders": rp.orders, **rp.metrics.to_json()}
                    for rp in result.regions],
        "top": ranking_rows(result),
        "search": {"points": result.points, **result.stats.to_json(),
                   "partitions": result.partitions, "compiles": result.compiles,
                   "flag_combinations": result.combinations, "cut_by": result.cut or None,
                   "seconds": round(result.seconds, 3)},
    }


def table(result: PlanResult, console) -> None:
    """The ranked table of the best plans, and the search's statistics, on `console`."""
    from rich import box
    from rich.table import Table
    t = Table(title=f"plans by estimated {result.objective} ({result.total.model})",
              title_justify="left", box=box.SIMPLE)
    for col in ("rank", "cycles", "FLOPs", "bytes", "fused regions"):
        t.add_column(col, justify="left" if col == "fused regions" else "right")
    for row in ranking_rows(result):
        regs = "; ".join(", ".join(r) for r in row["regions"]) or "(none)"
        t.add_row(str(row["rank"]), f"{row['cycles']:,.0f}", f"{row['flops']:,.0f}",
                  f"{row['bytes']:,.0f}", regs)
    console.print(t)
    s = result.stats
    console.print(f"search: {result.points} interesting points in {len(result.partitions)} "
                  f"partition(s); {s.costed} plans costed, {s.skipped} skipped by the lower "
                  f"bound, {s.invalid} invalid, "
                  f"{f'{s.unvisited} not reached (cut), ' if s.unvisited else ''}of {s.space}; "
                  f"{result.compiles} region "
                  f"compiles for {result.combinations} fuse-flag combination(s); "
                  f"{result.seconds:.2f} s",
                  highlight=False)
    for p in result.partitions:
        if not p["mode"].startswith("exhaustive"):
            console.print(f"  partition {p['statements'][0]}..{p['statements'][-1]}: "
                          f"{p['mode']}", highlight=False)

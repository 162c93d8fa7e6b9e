"""Loop schedules on a lowered module (docs/language.md, "Lists and loops").

`reuse`: the graphs of iteration k >= 1 of a reused loop become reuses of iteration 0's
graphs (`graph layer__1 = layer__0 {W__0 = W__1, ...}`): one configuration per body graph, run
once per iteration with that iteration's tensors bound. Each is checked to be exactly iteration
0's graph with the tensors rebound (else the loop cannot share a configuration, an error).
`wavefront`: each graph of the nest gets its statements' anti-diagonal (`wave G K`).
"""

from __future__ import annotations

from ..diagnostics import UserError
from ..samml import ir
from ..samml.printer import print_graph


def _written(g: ir.Graph) -> set[str]:
    return {n.tensor for n in g.nodes if isinstance(n, (ir.WriteVals, ir.WriteLevel))}


def apply_loop_schedules(module: ir.Module,
                         reuse: list[tuple[str, list[str], list[dict[str, str]]]],
                         waves: dict[str, int]) -> None:
    """Mark reused graphs (template and bindings) and wavefront graphs (their wave)."""
    writer = {t: g for g in module.graphs for t in _written(g)}
    copies = {s.src: s.dst for s in module.steps if isinstance(s, ir.Permute)}
    for var, stmts, per in reuse:
        if not per:
            continue
        first = [g for g in module.graphs if _written(g) and _written(g) <= set(stmts)]
        for k, binds in enumerate(per, 1):
            binds = dict(binds)
            for src, dst in copies.items():  # permuted copies follow their tensors
                if src in binds and binds[src] in copies:
                    binds[dst] = copies[binds[src]]
            for g0 in first:
                used = {n.tensor for n in g0.nodes if isinstance(getattr(n, "tensor", None),
                                                                 str)}
                mine = {a: b for a, b in binds.items() if a in used}
                gk = writer.get(mine.get(min(_written(g0)), ""))
                if gk is None or gk.template is not None:
                    raise UserError(f"reuse of the loop over {var}: iteration {k} has no graph "
                                    f"in place of {g0.name}; the iterations were compiled "
                                    f"differently (use `schedule {var}: unroll`)")
                same = g0.rebound(gk.name, mine)
                if print_graph(same) != print_graph(gk):
                    raise UserError(f"reuse of the loop over {var}: graph {gk.name} of "
                                    f"iteration {k} is not graph {g0.name} with other tensors "
                                    f"(fuse chose differently for it); use "
                                    f"`schedule {var}: unroll`")
                gk.template, gk.binds = g0.name, mine
    for g in module.graphs:
        ks = {waves[t] for t in _written(g) if t in waves}
        if len(ks) == 1:
            g.wave = ks.pop()

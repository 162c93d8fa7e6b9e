"""Lowering a whole program: regions -> one SAMML graph each, in a module."""

from __future__ import annotations

from ..samml import ir
from . import expr as X
from .build import Analysis
from .codegen import Codegen
from .distribute import normalize


def lower_fused(fp, source: str | None = None) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Lower a fused program (fuseflowc.fuse.ir.FusedProgram) to a module (one graph per
    region, in execution order); also returns each written statement's analysis (graph name,
    analysis) for `--dump-table`."""
    from .adapt_fused import permuted_copies, regions_from_fused
    regions, tensors = regions_from_fused(fp)
    module, analyses = lower_regions(regions, tensors,
                                     source if source is not None else fp.source)
    add_decompose_steps(module, fp)
    add_permute_steps(module, [(src, copy) for copy, src in permuted_copies(fp)])
    add_schedules(module, regions, [(p.statement, p.local, p.index, p.factor)
                                    for r in fp.regions for p in r.parallel])
    if fp.reuse or fp.waves:
        from .loops import apply_loop_schedules
        apply_loop_schedules(module, fp.reuse, fp.waves)
    return module, analyses


def add_schedules(module: ir.Module, regions: list[X.Region],
                  pars: list[tuple[str, str, str, int]]) -> None:
    """Record each `parallelize STATEMENT: LOCAL by F` (as (statement, local, index name in the
    graphs, F)) as a `schedule parallelize` directive of every graph that computes the
    statement (written or inlined) and iterates the index; `fuseflowc opt -p schedule` applies
    them (fuseflowc.opt.schedule)."""
    seen: set[tuple[str, str]] = set()
    for stmt, local, index, factor in pars:
        for reg, g in zip(regions, module.graphs):
            names = {n for st in reg.statements for n in (st.name, *st.inlined)}
            if stmt not in names or (g.name, index) in seen:
                continue
            if any(getattr(n, "index", None) == index for n in g.nodes):
                seen.add((g.name, index))
                module.schedules.append(ir.Schedule("parallelize", graph=g.name, index=index,
                                                    factor=factor, statement=stmt, local=local))


def add_decompose_steps(module: ir.Module, fp) -> None:
    """Add a step `decompose A -> A__d0 >= t, ..., R` per decomposed input A (its parts in
    declaration order), before the first graph: the split of A into the parts the graphs read
    (docs/language.md, "Format decomposition")."""
    parts: dict[str, list] = {}
    for t in fp.tensors:
        if t.role == "part":
            parts.setdefault(t.copy_of, []).append(t)
    for src, ps in parts.items():
        module.steps.append(ir.Decompose(src, tuple(p.name for p in ps),
                                         tuple(p.threshold for p in ps), 0))


def add_permute_steps(module: ir.Module, pairs: list[tuple[str, str]]) -> None:
    """Add a step `permute SRC -> DST` per (SRC, DST) pair, right after the graph that writes
    SRC (before the first graph when SRC is an input or written by no graph), or with the step
    that makes SRC (a copy of a re-blocked copy; `pairs` has that step first)."""
    writer: dict[str, int] = {}
    for k, g in enumerate(module.graphs):
        for n in g.nodes:
            if isinstance(n, ir.WriteVals):
                writer.setdefault(n.tensor, k)
    made: dict[str, int] = {}
    for src, dst in pairs:
        position = made.get(src, writer.get(src, -1) + 1)
        made[dst] = position
        module.steps.append(ir.Permute(src, dst, None, position))


def lower_regions(regions: list[X.Region], tensors: dict[str, X.TensorInfo],
                  source: str | None) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Generate one graph per region (see lower_fused)."""
    graphs: list[ir.Graph] = []
    analyses: list[tuple[str, Analysis]] = []
    for region in regions:
        g = ir.Graph(region.name)
        for st in region.statements:
            an = _generate(g, st, tensors)
            analyses.append((region.name, an))
        used = {getattr(n, a, None) for n in g.nodes for a in ("index", "outer", "inner")}
        g.source_names = {x: ns for x, ns in region.source_names.items() if x in used}
        graphs.append(g)
    decls = [ir.TensorDecl(t.name, tuple(t.dims), t.format, t.role, t.block)
             for t in tensors.values()]
    return ir.Module(decls, graphs, source), analyses


def lower_statement(st: X.Statement, tensors: dict[str, X.TensorInfo], name: str = "g"
                    ) -> ir.Graph:
    """Lower one statement into a fresh graph (for tests and tools)."""
    g = ir.Graph(name)
    _generate(g, st, tensors)
    return g


def _generate(g: ir.Graph, st: X.Statement, tensors: dict[str, X.TensorInfo]) -> Analysis:
    """Normalize (distribute products into sums where the order needs it: lower.distribute),
    analyze and generate one statement into g."""
    an = normalize(st, tensors[st.tensor].format)
    scratch = ir.Graph(g.name)
    Codegen(scratch, an, tensors).write()
    g.nodes.extend(scratch.nodes)
    return an

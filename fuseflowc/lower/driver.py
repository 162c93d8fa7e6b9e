"""Lowering a whole program: regions -> one SAMML graph each, in a module."""

from __future__ import annotations

from ..samml import ir
from . import expr as X
from .build import Analysis, ContextInsideReduction
from .codegen import Codegen
from .distribute import normalize
from .shared import CannotShare


def lower_fused(fp, source: str | None = None) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Lower a fused program (fuseflowc.fuse.ir.FusedProgram) to a module (one graph per
    region, in execution order); also returns each written statement's analysis (graph name,
    analysis) for `--dump-table`."""
    from .adapt_fused import permuted_copies, reduction_owner, regions_from_fused
    forced: dict[str, str] = {}
    while True:
        regions, tensors = regions_from_fused(fp, forced)
        try:
            module, analyses = lower_regions(regions, tensors,
                                             source if source is not None else fp.source)
            break
        except ContextInsideReduction as e:
            # an inlined intermediate's reduction the region's order cannot build (an outer
            # index between its own, no product to distribute into it): computed by a graph of
            # its own, in its own order, and read back
            owner = reduction_owner(fp, e.reduction.loc)
            if owner is None or owner.writes or owner.statement in forced:
                raise
            forced[owner.statement] = (
                f"the region's order iterates {e.outer} inside its reduction over "
                f"{e.reduction.index}, between its own indices, where it has no coordinates "
                f"for {e.outer}")
    add_decompose_steps(module, fp)
    add_permute_steps(module, [(src, copy) for copy, src in permuted_copies(fp)])
    add_schedules(module, regions, [(p.statement, p.local, p.index, p.factor)
                                    for r in fp.regions for p in r.parallel])
    if fp.reuse or fp.waves:
        from .loops import apply_loop_schedules
        apply_loop_schedules(module, fp.reuse, fp.waves, module.rebinds)
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
            names = reg.statement_names()
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
        for t in g.tensor_names((ir.WriteVals,)):
            writer.setdefault(t, k)
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
    notes: list[str] = []
    names = {r.name for r in regions}
    graph_of: dict[int, ir.Graph] = {}
    rebinds: dict[str, tuple[ir.Graph, dict[str, str]]] = {}
    snapshots: dict[int, ir.Graph] = {}   # id(template graph) -> its copies' snapshot
    for region in regions:
        if region.rebinds is not None:   # a rebound iteration: its template's graph, renamed
            template, binds = region.rebinds
            t = graph_of[id(template)]
            if id(t) not in snapshots:
                snapshots[id(t)] = t.snapshot()
            graphs.append(snapshots[id(t)].rebound_later(region.name, binds))
            rebinds[graphs[-1].name] = (t, binds)
            continue
        notes.extend(region.notes)
        for part, done in _generate_region(region, tensors, notes, names):
            analyses.extend((part.name, an) for an in done[1])
            graphs.append(done[0])
            graph_of[id(region)] = done[0]
    decls = [ir.TensorDecl(t.name, tuple(t.dims), t.format, t.role, t.block)
             for t in tensors.values()]
    module = ir.Module(decls, graphs, source)
    module.notes = notes   # (not printed: `lower` shows them on stderr)
    module.rebinds = rebinds   # (not printed: graph -> the graph and names it renames)
    return module, analyses


def _generate_region(region: X.Region, tensors: dict[str, X.TensorInfo], notes: list[str],
                     names: set[str]):
    """The graphs of one region: one, unless a shared intermediate cannot be read as a stream
    (CannotShare): it is then stored, and the statements reading it go to a later graph (a
    note says which tensor and why). Yields (region, (graph, analyses))."""
    stored: set[str] = set()
    while True:
        parts = _split(region, stored, names) if stored else [region]
        try:
            out = [(part, _graph(part, tensors)) for part in parts]
            names.update(part.name for part in parts)
        except CannotShare as e:
            if e.tensor not in region.shared or e.tensor in stored:
                raise
            stored.add(e.tensor)
            notes.append(f"{e.tensor} is stored and read back, splitting graph {region.name}: "
                         f"it cannot be one stream fanned out to its readers: {e.why}")
            continue
        for t in stored:
            tensors[t] = region.shared[t]
        # (tensors keep the declaration order of the module: new temps go last)
        yield from out
        return


def _graph(region: X.Region, tensors: dict[str, X.TensorInfo]):
    """(graph, analyses) of one region's statements."""
    g = ir.Graph(region.name)
    shared: dict = {}
    analyses = []
    known = dict(tensors)
    known.update({t: i for t, i in region.shared.items() if t not in tensors})
    for st in region.statements:
        analyses.append(_generate(g, st, known, shared))
    used = {getattr(n, a, None) for n in g.nodes for a in ("index", "outer", "inner")}
    g.source_names = {x: ns for x, ns in region.source_names.items() if x in used}
    return g, analyses


def _split(region: X.Region, stored: set[str], names: set[str]) -> list[X.Region]:
    """The region's statements in graphs by stage, the intermediates in `stored` written by
    their producers and read back by a later graph (the other shared ones stay streams within
    one graph; one whose readers would land in another graph than its producer is stored
    too, and added to `stored`)."""
    made = {st.tensor: st for st in region.statements if st.tensor in region.shared}
    while True:
        stage: dict[str, int] = {}
        for st in region.statements:
            reads = {a.tensor for a in st.expr.walk()
                     if isinstance(a, X.Access) and a.tensor in made}
            stage[st.name] = max([stage[made[t].name] + (t in stored) for t in reads], default=0)
        crossing = {t for st in region.statements for a in st.expr.walk()
                    if isinstance(a, X.Access) and (t := a.tensor) in made and t not in stored
                    and stage[st.name] != stage[made[t].name]}
        if not crossing:
            break
        stored |= crossing
    for st in region.statements:
        if st.tensor in stored:
            st.shared_format = None
        for a in st.expr.walk():
            if isinstance(a, X.Access) and a.tensor in stored:
                a.shared = False
    parts = []
    for k in sorted(set(stage.values())):
        name, n = f"{region.name}_{k + 1}", 2
        while name in names:
            name, n = f"{region.name}_{k + 1}_{n}", n + 1
        part = X.Region(name, [st for st in region.statements if stage[st.name] == k],
                        dict(region.source_names))
        part.shared = dict(region.shared)
        parts.append(part)
    return parts


def lower_statement(st: X.Statement, tensors: dict[str, X.TensorInfo], name: str = "g"
                    ) -> ir.Graph:
    """Lower one statement into a fresh graph (for tests and tools)."""
    g = ir.Graph(name)
    _generate(g, st, tensors)
    return g


def _generate(g: ir.Graph, st: X.Statement, tensors: dict[str, X.TensorInfo],
              shared: dict | None = None) -> Analysis:
    """Normalize (distribute products into sums where the order needs it: lower.distribute),
    analyze and generate one statement into g (`shared`: the graph's published streams)."""
    fmt = st.shared_format if st.shared_format is not None else tensors[st.tensor].format
    an = normalize(st, fmt)
    scratch = ir.Graph(g.name)
    Codegen(scratch, an, tensors, shared).write()
    g.nodes.extend(scratch.nodes)
    return an

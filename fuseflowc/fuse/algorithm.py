"""Cross-expression fusion (the paper's Sec. 5 and Algorithm 1), per fusion region.

For each region: statements are instantiated top-down from the tensors the region writes,
each statement's reduction indices renamed to fresh ones (u0, u1, ...); an in-region
intermediate is inlined into its consumer by index substitution (its left-side indices are bound
to the consumer's access indices); every use of a tensor becomes a view, equivalent views (same
tensor, same index map, hence same mode order) merged; the partial order graph collects an edge
per outer-to-inner pair imposed by a view's storage format, a statement's `order` directive and
a written tensor's declared format. Cycles are broken by permuted copies of a view's tensor, or,
when only the inlining of an intermediate ties two conflicting statements together, by
materializing that intermediate (the region is split in two dataflow graphs). Anything else is a
located UserError naming the cycle. See docs/fused-ir.md for the decisions.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, replace

from ..diagnostics import Loc, UserError
from ..formats import Format, copy_levels
from ..lang import ast
from ..lang.decompose import Rewrite
from ..lang.decompose import rewrite as decompose_rewrite
from ..lang.widen import must_materialize
from . import ir, rebind
from .free_order import copy_name, permute_discordant, rename_access
from .paper_order import PAPER, paper_order
from .pog import POG, find_cycle
from .verify import check_inlining


@dataclass
class FuseOptions:
    """`orders`: which order each region takes, as K of the enumeration (0-based; see
    `choose_order`) or "paper" (FuseFlow's first topological sort), keyed by region name or fusion-group name, the key None standing for every
    region not named; a region in none of them takes order 0. It is the one way to choose
    orders: `--order K` is {None: K}, `--order K --region R` is {R: K} (see `pick_orders`), and
    a sweep over regions' orders names each region. A name that is no region's is an error.
    `inline_widened`: inline even the intermediates whose declared format's stored zeros a use
    can tell from absent entries (the paper's fusion; results may differ from the language's
    semantics, see docs/fused-ir.md);
    `free_input_order`: the storage orders of views read from memory (inputs, materialized
    intermediates) add no POG edge; once an order is chosen, discordant views read permuted
    copies (fuseflowc.fuse.free_order);
    `share`: an intermediate that two or more statements of its region read is stored once and
    read back, not recomputed per consumer (the region splits there; docs/fused-ir.md);
    `rebind`: a later iteration of a reused loop that is iteration 0 up to its names gets
    iteration 0's regions renamed, written `reuse l K = 0 {...}` (fuseflowc.fuse.rebind), not
    fused again; False fuses every iteration (the same regions, every one written in full)."""

    orders: dict[str | None, int | str] = field(default_factory=dict)
    inline_widened: bool = False
    free_input_order: bool = False
    share: bool = False
    rebind: bool = True


def pick_orders(order: int | str | None, region: str | None = None
                ) -> dict[str | None, int | str]:
    """`FuseOptions.orders` for the command line's `--order K [--region R]` (K None: 0)."""
    if order is None and region is None:
        return {}
    return {region: 0 if order is None else order}


def fuse_program(program: ast.Program, source_path: str | None = None,
                 options: FuseOptions | None = None) -> ir.FusedProgram:
    """Fuse every region of a checked program into the fused IR (one ir.Region per dataflow
    graph, in execution order). Raises UserError on unbreakable ordering cycles, on regions
    that depend on each other, and on an out-of-range order or unknown region in `orders`."""
    options = options or FuseOptions()
    if not program.decompositions():
        return _fuse(program, source_path, options, Rewrite())
    # A decomposed statement's sum computes the residual's share itself, unless its chosen
    # order puts a summed index first (lowering cannot join that sum with the parts' results):
    # then the residual gets a statement of its own (fuseflowc.lang.decompose.rewrite).
    rewritten, decomposed = decompose_rewrite(program)
    try:
        fused = _fuse(rewritten, source_path, options, decomposed)
        unfold = frozenset(_reduction_first(fused, rewritten, decomposed))
        if not unfold:
            return fused
        rewritten, decomposed = decompose_rewrite(program, unfold)
        return _fuse(rewritten, source_path, options, decomposed)
    except UserError as e:
        raise decomposed.in_user_terms(e) from None


def _reduction_first(fused: ir.FusedProgram, program: ast.Program, decomposed) -> list[str]:
    """The decomposed statements whose sum (the statement itself, with the residual's share)
    has a summed index before all of its left side's in its region's order (the case lowering
    refuses: the outer output level of a reduction joined with another operand)."""
    def reads(s: ast.Assignment) -> set[str]:
        return {x.tensor for x in (s.expr or s.rhs).walk() if isinstance(x, ast.Access)}

    # a sum reads the blocked parts' unblocked copies and the residual part itself
    sums = {s.name for s in program.statements
            if any(decomposed.part_of(t) for t in reads(s)) and reads(s) & set(decomposed.copies)}
    out = []
    for r in fused.regions:
        pos = {x: k for k, x in enumerate(r.order)}
        for e in r.exprs:
            if e.statement not in sums:
                continue
            glob = dict(e.index_map)
            lhs = {glob.get(i, i) for i in program.statement(e.statement).lhs.indices}
            reduced = set(glob.values()) - lhs
            first = min((pos[y] for y in lhs if y in pos), default=-1)
            if any(pos[x] < first for x in reduced if x in pos):
                out.append(e.statement)
    return out


def _fuse(program: ast.Program, source_path: str | None, options: FuseOptions,
          decomposed: Rewrite) -> ir.FusedProgram:
    """fuse_program on a program whose decompositions are rewritten (`decomposed`: what the
    rewrite introduced)."""
    index = {s.name: n for n, s in enumerate(program.statements)}
    # later iterations of reused loops that are iteration 0 rebound: renamed, not fused
    rebound = {}
    if options.rebind and not options.share and not decomposed.copies:
        rebound = rebind.renamings(program, {n for n in options.orders if n is not None})
    skip = {s for (var, k) in rebound for s in dict(program.reuse)[var][k]}
    groups: list[tuple[str | None, list[str], Loc | None]] = []
    for f in program.regions():
        groups.append((f.name, sorted(f.statements, key=index.__getitem__), f.loc))
    taken = {f.name for f in program.regions()}
    for s in program.statements:
        if program.region_of(s.name) is None:
            groups.append((None, [s.name], s.loc))
    regions: list[ir.Region] = []
    for name, stmts, loc in groups:
        if stmts[0] in skip:
            continue
        if name is None:
            rname = stmts[0] if stmts[0] not in taken else stmts[0] + ".kernel"
        else:
            rname = name
        regions.extend(_fuse_group(program, name, rname, stmts, loc, options.inline_widened,
                                   options.share,
                                   options.free_input_order))
    for r in regions:  # the copies a decomposition reads are made by permute steps
        for v in r.views:
            if v.tensor in decomposed.copies:
                v.kind, v.copy_of = "permuted", decomposed.copies[v.tensor]
    regions = _execution_order(program, regions)
    names = {n for r in regions for n in (r.name, r.group) if n is not None}
    for name in sorted(n for n in options.orders if n is not None):
        if name not in names:
            known = ", ".join(r.name for r in regions)
            raise UserError(f"no region named '{name}' (regions: {known})")
    for r in regions:
        choose_order(r, _order_of(r, options.orders))
        if options.free_input_order:
            permute_discordant(r, {t.name: t.format for t in program.tensors},
                               {t.name for t in program.tensors})
    bindings: dict[tuple[str, int], dict[str, str]] = {}
    if rebound:
        regions, bindings = _rebound_regions(program, regions, rebound)
    tensors = _tensors(program, regions, decomposed)
    dims = [(d.name, d.size) for d in program.dims]
    fused = ir.FusedProgram(source_path, dims, tensors, regions)
    fused.bindings = bindings
    fused.reuse = [(v, [list(x) for x in its]) for v, its in program.reuse]
    fused.waves = dict(program.waves)
    check_inlining(fused, {s.name: s.loc for s in program.statements})  # what lowering can take
    return fused


def _rebound_regions(program: ast.Program, regions: list[ir.Region],
                     rebound: dict[tuple[str, int], dict[str, str]]
                     ) -> tuple[list[ir.Region], dict[tuple[str, int], dict[str, str]]]:
    """The fused regions with those of each rebound iteration (iteration 0's renamed) added,
    in execution order, and the bindings that stand for them in the fused IR. An iteration
    whose regions would not follow each other in its template's order keeps its regions, but
    printed in full (no binding)."""
    its = dict(program.reuse)
    declared = {t.name for t in program.tensors}
    computed = set(program.assigned)
    added: list[ir.Region] = []
    names: dict[tuple[str, int], dict[str, str]] = {}
    for (var, k), rho in rebound.items():
        templates = rebind.templates_of(regions, its[var][0])
        names[(var, k)] = rebind.binding_names(templates, rho, declared)
        added += [rebind.rename_region(r, names[(var, k)], computed, (var, k))
                  for r in templates]
    regions = _execution_order(program, regions + added)
    bindings = {}
    for key in rebound:
        if rebind.contiguous(regions, key):
            bindings[key] = names[key]
            continue
        for r in regions:
            if r.bound == key:
                r.bound = r.template = None
    return regions, bindings


def _order_of(region: ir.Region, orders: dict[str | None, int | str]) -> int | str:
    """K for `region` (see FuseOptions.orders): by its name, else its group's, else None's."""
    for key in (region.name, region.group):
        if key is not None and key in orders:
            return orders[key]
    return orders.get(None, 0)


def choose_order(region: ir.Region, k: int | str) -> None:
    """Set the region's global order to the K-th (0-based) of the enumeration, or with K
    "paper" (PAPER) to the order FuseFlow's compiler picks (fuseflowc.fuse.paper_order; its
    rank is recorded); inline views get the induced mode order. Raises UserError when K is out of range. Order 0 needs no counting
    (the smallest free index at every step), so the default stays fast on wide regions."""
    names = region.index_names()
    rank = {n: p for p, n in enumerate(names)}
    pog = POG.from_edges(len(names), {(rank[e.src], rank[e.dst]) for e in region.edges})
    if k == PAPER:  # FuseFlow's own choice, and where it stands in our enumeration
        order = paper_order(region)
        region.order, region.order_index = order, pog.rank([rank[x] for x in order])
        _set_inline_modes(region)
        return
    if k > 0:
        count = pog.count()
        if k >= count:
            raise UserError(f"--order {k} is out of range for region '{region.name}': it has "
                            f"{count} valid order{'s' if count != 1 else ''} (0 to {count - 1})")
    order = tuple(names[v] for v in pog.unrank(k))
    region.order, region.order_index = order, k
    _set_inline_modes(region)


def _set_inline_modes(region: ir.Region) -> None:
    """Inline views take the mode order the region's order induces."""
    pos = {n: p for p, n in enumerate(region.order)}
    for v in region.views:
        if v.kind == "inline":
            v.mode_order = tuple(sorted(v.indices, key=pos.__getitem__))


# ---- one fusion group ---------------------------------------------------------------------

def _fuse_group(program: ast.Program, group: str | None, name: str, stmts: list[str],
                loc: Loc | None, inline_widened: bool = False, share: bool = False,
                free_input_order: bool = False) -> list[ir.Region]:
    """The dataflow graphs of one fusion group: one, or several after materializations."""
    # Intermediates whose declared (widened) pattern some use can tell from the computed one
    # must be stored and read back (docs/language.md, "seen as declared"); lowering's rule
    # (lang.widen, shared with lower.adapt_fused).
    materialized: set[str] = (must_materialize(program, stmts)
                              if len(stmts) > 1 and not inline_widened else set())
    why: list[tuple[str, Loc | None]] = [
        (f"{t} is materialized (not inlined): its declared format, {program.tensor(t).format}, "
         f"stores entries its computed pattern lacks, and a use in the region can tell them "
         f"from absent ones", program.statement(t).loc)
        for t in sorted(materialized, key=lambda n: stmts.index(n))]
    shared: set[str] = set()
    if share and len(stmts) > 1:
        inside = set(stmts)
        for s in stmts:
            readers = sorted(c for c in _consumers(program, s) if c in inside)
            if s not in materialized and len(readers) > 1:
                blocker = unshareable(program, s, inside)
                if blocker is None:
                    shared.add(s)   # one stream in the graph, fanned out to its readers
                    continue
                materialized.add(s)
                why.append((f"{s} is materialized (--share): {', '.join(readers)} of the region "
                            f"read it, and it cannot be one stream fanned out to them: "
                            f"{blocker}", program.statement(s).loc))
    while True:
        kernels = _plan_kernels(program, stmts, materialized)
        out: list[ir.Region] = []
        retry = None
        for n, roots in enumerate(kernels):
            kname = name if len(kernels) == 1 else f"{name}.{n + 1}"
            b = _KernelBuilder(program, group, kname, stmts, materialized, loc)
            b.shared = shared - materialized
            b.free_input_order = free_input_order
            try:
                built = b.build(roots)
            except UserError as e:
                for text, at in why:
                    e.note(text, at)
                raise
            retry = built.conflict or _unorderable_copies(built.region, materialized)
            if retry is not None:
                break
            out.append(built.region)
        if retry is None:
            retry = _crossing_shared(out, shared - materialized)
        if retry is None:
            for r in out:
                r.materialized = tuple(s for s in stmts if s in materialized)
                r.split_why = tuple(why)
            return out
        materialized.add(retry[0])
        if retry[0] in shared:
            shared.discard(retry[0])
            why.append((f"{retry[0]} is materialized (--share): it cannot be one stream fanned "
                        f"out to its readers: {retry[1]}", program.statement(retry[0]).loc))
            continue
        why.append((f"{retry[0]} was materialized (not inlined) because the orders of its "
                    f"producer and consumer conflict: {retry[1]}",
                    program.statement(retry[0]).loc))


def _crossing_shared(regions: list[ir.Region], shared: set[str]) -> tuple[str, str] | None:
    """(intermediate, why) for a shared intermediate whose readers are in different graphs of
    the group (a stream does not cross graphs: each would compute it again), else None."""
    for s in sorted(shared):
        where = [r.name for r in regions if any(v.kind == "shared" and v.tensor == s
                                                for v in r.views)]
        if len(where) > 1:
            return s, f"its readers are in different graphs ({', '.join(where)})"
    return None


def unshareable(program: ast.Program, s: str, inside: set[str]) -> str | None:
    """Why the intermediate `s` of a fusion group (`inside`) cannot be computed once in the
    graph with its stream fanned out to its several readers (--share), or None when it can:
    the readers must all be in the group and `s` no program output (nothing stores it), and
    its declared format unblocked, dense at every level but the innermost (each reader then
    iterates the outer levels' coordinates, all of them, as the stream does; lowering checks
    that it does, and reads the innermost level's coordinates and values from the stream).
    The second branch of the fan-out holds a row (docs/lowering.md, "Shared streams")."""
    t = program.tensor(s)
    fmt = t.format
    if s in program.outputs:
        return "it is a program output (stored anyway)"
    outside = [c for c in _consumers(program, s) if c not in inside]
    if outside:
        return f"{', '.join(outside)} outside the region read it"
    if not t.dims:
        return "a scalar has no stream of its own to fan out"
    if fmt.blocked or t.lists:
        return "it is blocked" if fmt.blocked else "it is a list of tensors"
    dense = [lv == "dense" for lv in fmt.levels]
    if not all(dense[:-1]):
        return (f"its format {fmt} has a sparse level outside the innermost one (a reader "
                "would join the stream's outer coordinates)")
    return None


@dataclass(frozen=True)
class _Built:
    """What building a kernel gave: its region, and, when the orders of an intermediate's
    producer and consumer conflict, (intermediate, why) to materialize before building again
    (and no region)."""

    region: ir.Region | None
    conflict: tuple[str, str] | None = None


def _unorderable_copies(region: ir.Region, materialized: set[str]) -> tuple[str, str] | None:
    """(statement, why) for an intermediate inlined with several bindings (recomputed copies)
    sharing a free index that each copy's reduction must enclose (the POG orders the reduced
    index before it, e.g. by an operand's storage order): every copy's reduction then encloses
    the shared index, and nested in one another's consumers (GPT-3's layer norm reads `Om`
    four times), the outermost reduction encloses other copies' own indices, which it lacks,
    between its own ones; factored iteration has no order for that. Such an intermediate is
    materialized: computed once, read back (a sufficient rule, not a necessary one: copies
    that share no free index are left inlined)."""
    succ: dict[str, set[str]] = {}
    for e in region.edges:
        succ.setdefault(e.src, set()).add(e.dst)

    def reach(x: str) -> set[str]:
        seen, todo = set(), [x]
        while todo:
            for y in succ.get(todo.pop(), ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    copies: dict[str, list[ir.Instance]] = {}
    for inst in region.exprs:
        copies.setdefault(inst.statement, []).append(inst)
    for inst in region.exprs:
        if inst.statement in materialized:
            continue
        # the own indices this copy shares with another copy (bound differently elsewhere)
        shared = {x for other in copies[inst.statement] if other.lhs != inst.lhs
                  for x in set(other.lhs) & set(inst.lhs)}
        reduced = sorted({g for _, g in inst.index_map} - set(inst.lhs))
        for r in reduced:
            inner = reach(r) & shared
            if inner:
                return (inst.statement,
                        f"its {len(copies[inst.statement])} recomputed copies each reduce over "
                        f"an index ordered outside their shared index {min(inner)}")
    return None


def _consumers(program: ast.Program, producer: str) -> list[str]:
    """The statements that read `producer`, in program order."""
    return _consumer_index(program).get(producer, [])


# (program, its statement list, that list's length, tensor -> reading statements): one walk of
# the program for all the groups' questions, not one per statement asked about (quadratic in
# the statements of an unrolled loop)
_CONSUMERS: list = [None, None, -1, {}]


def _consumer_index(program: ast.Program) -> dict[str, list[str]]:
    c = _CONSUMERS
    if c[0] is program and c[1] is program.statements and c[2] == len(program.statements):
        return c[3]
    index: dict[str, list[str]] = {}
    for st in program.statements:
        for t in dict.fromkeys(a.tensor for a in st.rhs.walk() if isinstance(a, ast.Access)):
            index.setdefault(t, []).append(st.name)
    c[:] = [program, program.statements, len(program.statements), index]
    return index


def _plan_kernels(program: ast.Program, stmts: list[str], materialized: set[str]) -> list[list[str]]:
    """The written statements (roots) of each dataflow graph of a group, in stage order.

    A statement is written when it is materialized, read outside the group, a program output, or
    read by no one in the group. Its stage counts the materialized intermediates upstream of it:
    a materialized tensor must be complete before its consumers start.
    """
    inside = set(stmts)
    outputs = set(program.outputs)
    stage: dict[str, int] = {}
    for s in stmts:
        reads = {a.tensor for a in program.statement(s).rhs.walk() if isinstance(a, ast.Access)}
        stage[s] = max([stage[p] + (p in materialized) for p in reads if p in inside] or [0])
    written = []
    for s in stmts:
        cons = _consumers(program, s)
        if (s in materialized or s in outputs or any(c not in inside for c in cons)
                or not any(c in inside for c in cons)):
            written.append(s)
    stages = sorted({stage[s] for s in written})
    return [[s for s in written if stage[s] == k] for k in stages]


@dataclass
class _Inst:
    statement: str
    lhs: tuple[str, ...]
    expr: ast.Expr | None = None
    index_map: list[tuple[str, str]] = field(default_factory=list)
    writes: bool = False
    seq: int = 0
    shared: bool = False  # computes a shared intermediate (read through `shared` views)


@dataclass
class _View:
    tensor: str  # the tensor read (a permuted copy's name once permuted)
    indices: tuple[str, ...]
    kind: str
    producer: tuple | None = None  # key of the producing _Inst for inline views
    users: list[str] = field(default_factory=list)  # statements, first user first
    original: str = ""
    format: Format | None = None


class _KernelBuilder:
    """Builds one dataflow graph (ir.Region) from its root statements."""

    def __init__(self, program: ast.Program, group: str | None, name: str, stmts: list[str],
                 materialized: set[str], loc: Loc | None):
        self.p = program
        self.group, self.name, self.loc = group, name, loc
        self.inside = set(stmts)
        self.materialized = materialized
        self.prog_index = program.positions()
        self.assigned = set(program.assigned)
        self.insts: dict[tuple, _Inst] = {}
        self.views: dict[tuple, _View] = {}
        self.dims: dict[str, str | int] = {}
        self.used: set[str] = set()
        self.fresh = 0
        self.fresh_names: list[str] = []
        self.free_input_order = False  # views read from memory impose no format edge
        # intermediates computed once and fanned out to their readers (--share): the producer
        # instance, and a `shared` view per reading binding
        self.shared: set[str] = set()

    # -- naming ------------------------------------------------------------------------------
    def _name_like(self, base: str) -> str:
        name, k = base, 2
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def _fresh(self) -> str:
        while f"u{self.fresh}" in self.used:
            self.fresh += 1
        name = f"u{self.fresh}"
        self.used.add(name)
        self.fresh_names.append(name)
        return name

    def _renumber(self) -> None:
        """Rename the fresh indices so that u0, u1, ... follow the canonical order."""
        seen: list[str] = []
        fresh = set(self.fresh_names)
        for n in self._canonical_names():
            if n in fresh and n not in seen:
                seen.append(n)
        sub = dict(zip(seen, self.fresh_names))  # fresh_names is in creation = numeric order
        if all(a == b for a, b in sub.items()):
            return
        f = lambda n: sub.get(n, n)  # noqa: E731
        ft = lambda t: tuple(map(f, t))  # noqa: E731
        insts = {}
        for (stmt, lhs), i in self.insts.items():
            i.lhs = ft(i.lhs)
            i.expr = _rename_indices(i.expr, f)
            i.index_map = [(a, f(b)) for a, b in i.index_map]
            insts[(stmt, ft(lhs))] = i
        self.insts = insts
        views = {}
        for (t, idx), v in self.views.items():
            v.indices = ft(v.indices)
            if v.producer is not None:
                v.producer = (v.producer[0], ft(v.producer[1]))
            views[(t, ft(idx))] = v
        self.views = views
        self.dims = {f(n): d for n, d in self.dims.items()}

    def _canonical_names(self) -> list[str]:
        """Index names by first appearance, reading instances from the last statement to the
        first (outputs first): left side, then the right side left to right."""
        order: list[str] = []
        insts = sorted(self.insts.values(), key=lambda i: (-self.prog_index[i.statement], i.seq))
        for i in insts:
            for n in i.lhs:
                if n not in order:
                    order.append(n)
            for e in i.expr.walk():
                for n in (e.indices if isinstance(e, (ast.Access, ast.Reduce)) else ()):
                    if n not in order:
                        order.append(n)
        return order

    def _inlined(self, tensor: str) -> bool:
        return (tensor in self.inside and tensor not in self.materialized
                and tensor not in self.shared)

    # -- instantiation -----------------------------------------------------------------------
    def instance(self, stmt: str, binding: tuple[str, ...]) -> _Inst:
        key = (stmt, binding)
        got = self.insts.get(key)
        if got is not None:
            return got
        s = self.p.statement(stmt)
        inst = _Inst(stmt, binding, seq=len(self.insts))
        self.insts[key] = inst
        local_dims = dict(s.index_dims)
        scope = dict(zip(s.lhs.indices, binding))
        for loc_name, g in zip(s.lhs.indices, binding):
            inst.index_map.append((loc_name, g))
            self.dims.setdefault(g, local_dims[loc_name])

        def rewrite(e: ast.Expr, scope: dict[str, str]) -> ast.Expr:
            if isinstance(e, ast.Access):
                idx = tuple(scope[i] for i in e.indices)
                self.use(e.tensor, idx, stmt)
                return replace(e, indices=idx)
            if isinstance(e, ast.Reduce):
                inner = dict(scope)
                new = []
                for r in e.indices:
                    g = self._fresh()
                    inner[r] = g
                    new.append(g)
                    inst.index_map.append((r, g))
                    self.dims[g] = local_dims[r]
                return replace(e, indices=tuple(new), body=rewrite(e.body, inner))
            if isinstance(e, ast.Binary):
                return replace(e, lhs=rewrite(e.lhs, scope), rhs=rewrite(e.rhs, scope))
            if isinstance(e, ast.Call):
                return replace(e, args=tuple(rewrite(a, scope) for a in e.args))
            return e

        inst.expr = rewrite(s.expr, scope)
        return inst

    def use(self, tensor: str, idx: tuple[str, ...], stmt: str) -> None:
        key = (tensor, idx)
        v = self.views.get(key)
        if v is None:
            if self._inlined(tensor):
                self.instance(tensor, idx)
                v = _View(tensor, idx, "inline", producer=(tensor, idx))
            elif tensor in self.shared:
                v = _View(tensor, idx, "shared", producer=self._shared_producer(tensor),
                          format=self.p.tensor(tensor).format)
            else:
                kind = "materialized" if tensor in self.assigned else "input"
                v = _View(tensor, idx, kind, format=self.p.tensor(tensor).format)
            v.original = tensor
            self.views[key] = v
        if stmt not in v.users:
            v.users.append(stmt)

    def _shared_producer(self, tensor: str) -> tuple:
        """The key of the one instance computing shared `tensor` (its own index names)."""
        got = next((k for k, i in self.insts.items() if i.statement == tensor and i.shared),
                   None)
        if got is not None:
            return got
        s = self.p.statement(tensor)
        inst = self.instance(tensor, tuple(self._name_like(i) for i in s.lhs.indices))
        inst.shared = True
        return (tensor, inst.lhs)

    # -- build -------------------------------------------------------------------------------
    def build(self, roots: list[str]) -> _Built:
        """The region, or (in `conflict`) the intermediate that must be materialized, and why."""
        for r in sorted(roots, key=lambda s: -self.prog_index[s]):
            first = next((i for i in self.insts.values() if i.statement == r), None)
            if first is None:
                s = self.p.statement(r)
                first = self.instance(r, tuple(self._name_like(i) for i in s.lhs.indices))
            first.writes = True
        self._renumber()
        self._canonicalize()
        permuted_once: set[tuple] = set()
        while True:
            edges = self._edges()
            rank = {n: k for k, (n, _) in enumerate(self.indices)}
            cycle = find_cycle(len(rank), {(rank[e.src], rank[e.dst]) for e in edges})
            if cycle is None:
                return _Built(self._region(edges))
            names = [self.indices[c][0] for c in cycle]
            cyc_edges = []
            for a, b in zip(names, names[1:] + names[:1]):
                cyc_edges.append([e for e in edges if e.src == a and e.dst == b])
            vids = [e.view for es in cyc_edges for e in es if e.kind == "format"]
            cands = [k for k, v in self.view_keys.items()
                     if self.view_ids[k] in vids and k not in permuted_once
                     and v.kind != "shared"]
            if cands:
                key = max(cands, key=lambda k: int(self.view_ids[k][1:]))
                permuted_once.add(key)
                self._permute(key, [e for e in edges if e.view != self.view_ids[key]])
                continue
            shared = [e for es in cyc_edges for e in es if e.kind == "shared"]
            if shared:   # a reader cannot read the stream row by row: store it instead
                loop = " -> ".join(names + names[:1])
                return _Built(None, (shared[0].statement,
                                     f"a reader would iterate it inside its own loops (cycle "
                                     f"{loop}: {shared[0].dst} must be outside "
                                     f"{shared[0].src} for another constraint)"))
            stmts = {e.statement for es in cyc_edges for e in es}
            inline = {v.producer[0] for v in self.views.values() if v.kind == "inline"}
            culprits = [s for s in stmts if s in inline]
            if len(stmts) >= 2 and culprits:
                loop = " -> ".join(names + names[:1])
                because = "; ".join(f"{es[0].src} -> {es[0].dst} by {self._why(es[0])}"
                                    for es in cyc_edges if es)
                return _Built(None, (max(culprits, key=self.prog_index.__getitem__),
                                     f"cycle {loop} ({because})"))
            raise self._cycle_error(names, cyc_edges)

    def _why(self, e: ir.Edge) -> str:
        """An edge's origin in the user's terms: a permuted copy is named by its original."""
        if e.kind == "format":
            v = next((v for k, v in self.view_keys.items() if self.view_ids[k] == e.view), None)
            original = getattr(v, "original", None) or e.tensor
            if original != e.tensor:
                return f"the order {original} is read in by {e.statement} (a permuted copy)"
            return f"the storage order of {e.tensor} read by {e.statement}"
        return f"the {e.reason()}"

    def _shared_edges(self, e: ast.Expr, scope: set[str], add, producing: str | None) -> None:
        """Edges making every reader of a shared intermediate read it row by row: the view's
        innermost index outside every other index enclosing it (the readers' own indices and
        reductions, through inlined producers), so that lowering iterates the view in exactly
        its own levels (fuseflowc.lower.shared). Within the producer of shared T
        (`producing`), and for a reduction reading one (through inlined producers), the
        reduction's own indices (free and reduced) come before the enclosing ones its result is
        broadcast over (layer
        norm's mean before the row's columns): the reduction is computed once per row, not once
        per element (and the stream read once)."""
        if isinstance(e, ast.Access):
            v = self.views.get((e.tensor, e.indices))
            if v is None:
                return
            if v.kind == "shared":
                inner = v.indices[v.format.mode_order[-1]]
                for c in sorted(scope - set(v.indices)):
                    add(inner, c, "shared", v.original, loc=self.p.statement(v.original).loc)
            elif v.kind == "inline" and v.producer in self.insts:
                self._shared_edges(self.insts[v.producer].expr, scope, add, producing)
            return
        if isinstance(e, ast.Reduce):
            owner = producing or self._shared_under(e.body)
            if owner is not None:
                own = set(ast.indices_of(e)) | set(e.indices)
                for r in sorted(own):
                    for c in sorted(scope - own):
                        add(r, c, "shared", owner, loc=self.p.statement(owner).loc)
            self._shared_edges(e.body, scope | set(e.indices), add, producing)
            return
        for c in e.children():
            self._shared_edges(c, scope, add, producing)

    def _shared_under(self, e: ast.Expr) -> str | None:
        """The first shared intermediate `e` reads, through inlined producers, or None."""
        for a in e.walk():
            if not isinstance(a, ast.Access):
                continue
            v = self.views.get((a.tensor, a.indices))
            if v is None:
                continue
            if v.kind == "shared":
                return v.original
            if v.kind == "inline" and v.producer in self.insts:
                got = self._shared_under(self.insts[v.producer].expr)
                if got is not None:
                    return got
        return None

    def _canonicalize(self) -> None:
        """Number instances (program order), views and indices (first appearance) canonically."""
        insts = sorted(self.insts.values(), key=lambda i: (self.prog_index[i.statement], i.seq))
        self.inst_list = insts
        self.inst_ids = {(i.statement, i.lhs): f"e{n}" for n, i in enumerate(insts)}
        vorder: list[tuple] = []
        for i in insts:
            for e in i.expr.walk():
                if isinstance(e, ast.Access) and (e.tensor, e.indices) not in vorder:
                    vorder.append((e.tensor, e.indices))
        order = self._canonical_names()
        self.indices = [(n, self.dims[n]) for n in order]
        self.view_keys = {k: self.views[k] for k in vorder}
        self.view_ids = {k: f"v{n}" for n, k in enumerate(vorder)}

    def _edges(self) -> list[ir.Edge]:
        edges: list[ir.Edge] = []
        seen: set = set()

        def add(a: str, b: str, *rest, loc=None) -> None:
            key = (a, b) + rest
            if a != b and key not in seen:
                seen.add(key)
                edges.append(ir.Edge(a, b, *rest, loc=loc))

        for k, v in self.view_keys.items():
            if v.kind == "inline" or (self.free_input_order and v.kind != "shared"):
                continue   # (a shared stream comes in its storage order: no copy of it)
            decl = self.p.tensor(v.original)
            stored = [v.indices[m] for m in v.format.mode_order]
            for a, b in zip(stored, stored[1:]):
                add(a, b, "format", v.users[0], v.tensor, self.view_ids[k],
                    loc=decl.format_loc or decl.loc)
        for inst in self.inst_list:
            d = self.p.order_of(inst.statement)
            if d is not None:
                gmap: dict[str, list[str]] = {}
                for loc_name, g in inst.index_map:
                    gmap.setdefault(loc_name, []).append(g)
                for a, b in zip(d.indices, d.indices[1:]):
                    for ga in gmap.get(a, []):
                        for gb in gmap.get(b, []):
                            add(ga, gb, "order", inst.statement, loc=d.loc)
            if inst.writes or inst.shared:  # a shared stream comes in its storage order
                decl = self.p.tensor(inst.statement)
                stored = [inst.lhs[m] for m in decl.format.mode_order]
                for a, b in zip(stored, stored[1:]):
                    add(a, b, "output", inst.statement, loc=self.p.statement(inst.statement).loc)
        for inst in self.inst_list:
            if inst.writes or inst.shared:
                self._shared_edges(inst.expr, set(inst.lhs), add,
                                   inst.statement if inst.shared else None)
        return edges

    def _permute(self, key: tuple, other_edges: list[ir.Edge]) -> None:
        """Make view `key` read a copy of its tensor stored in the mode order the other
        constraints prefer (a cycle-tolerant topological sort of the remaining edges)."""
        v = self.view_keys[key]
        rank = {n: k for k, (n, _) in enumerate(self.indices)}
        succ: dict[str, set[str]] = {n: set() for n in rank}
        indeg = {n: 0 for n in rank}
        for e in {(e.src, e.dst) for e in other_edges}:
            succ[e[0]].add(e[1])
            indeg[e[1]] += 1
        pos: dict[str, int] = {}
        left = set(rank)
        while left:
            ready = [n for n in left if indeg[n] == 0] or list(left)
            n = min(ready, key=rank.__getitem__)
            left.discard(n)
            pos[n] = len(pos)
            for m in succ[n]:
                indeg[m] -= 1
        stored = sorted(v.indices, key=pos.__getitem__)
        mode_order = tuple(v.indices.index(g) for g in stored)
        if mode_order == v.format.mode_order:
            return  # no better storage order: the cycle is left to the other candidates
        base = self.p.tensor(v.original).format
        name = copy_name(v.original, mode_order, {t.name for t in self.p.tensors})
        v.kind = "permuted"
        v.tensor = name
        v.format = Format(base.levels, mode_order, base.blocked)
        for inst in self.inst_list:
            inst.expr = rename_access(inst.expr, v.original, v.indices, name)

    def _cycle_error(self, names: list[str], cyc_edges: list[list[ir.Edge]]) -> UserError:
        loop = " -> ".join(names + names[:1])
        primary = next((es[0] for es in cyc_edges if es and es[0].kind == "order"),
                       cyc_edges[0][0])
        where = "region" if self.group is not None else "statement"
        err = UserError(f"cannot order {where} '{self.name}': its ordering constraints form a "
                        f"cycle {loop} that no permuted copy can break", primary.loc or self.loc)
        for es in cyc_edges:
            for e in es:
                err.note(f"{e.src} -> {e.dst}: {e.reason()}", e.loc)
        for n in names:
            origins = [f"{loc_name} of {i.statement}" for i in self.inst_list
                       for loc_name, g in i.index_map if g == n]
            err.note(f"index {n} stands for " + ", ".join(origins))
        return err

    def _region(self, edges: list[ir.Edge]) -> ir.Region:
        exprs = []
        for inst in self.inst_list:
            exprs.append(ir.Instance(self.inst_ids[(inst.statement, inst.lhs)], inst.statement,
                                     inst.lhs, inst.expr, tuple(inst.index_map), inst.writes))
        views = []
        for k, v in self.view_keys.items():
            if v.kind == "inline":
                mode = v.indices
                producer = self.inst_ids[v.producer]
            else:
                mode = tuple(v.indices[m] for m in v.format.mode_order)
                producer = self.inst_ids[v.producer] if v.kind == "shared" else None
            views.append(ir.View(self.view_ids[k], v.tensor, v.indices, v.kind, mode, producer,
                                 v.original if v.kind == "permuted" else None))
        stmts = tuple(sorted({i.statement for i in self.inst_list},
                             key=self.prog_index.__getitem__))
        region = ir.Region(self.name, self.group, stmts, list(self.indices), exprs, views,
                           edges, loc=self.loc)
        for s in stmts:
            inst = next((i for i in self.inst_list if i.statement == s and i.writes),
                        next(i for i in self.inst_list if i.statement == s))
            for d in self.p.parallelizations(s):
                g = next(g for loc_name, g in inst.index_map if loc_name == d.index)
                region.parallel.append(ir.Parallel(s, d.index, g, d.factor))
        return region


def _rename_indices(e: ast.Expr, f) -> ast.Expr:
    """`e` with every index variable n renamed to f(n)."""
    if isinstance(e, ast.Access):
        return replace(e, indices=tuple(map(f, e.indices)))
    if isinstance(e, ast.Reduce):
        return replace(e, indices=tuple(map(f, e.indices)), body=_rename_indices(e.body, f))
    if isinstance(e, ast.Binary):
        return replace(e, lhs=_rename_indices(e.lhs, f), rhs=_rename_indices(e.rhs, f))
    if isinstance(e, ast.Call):
        return replace(e, args=tuple(_rename_indices(a, f) for a in e.args))
    return e


# ---- whole program -----------------------------------------------------------------------

def _execution_order(program: ast.Program, regions: list[ir.Region]) -> list[ir.Region]:
    """Regions sorted so that every region runs after the writers of what it reads (ties: the
    region whose first statement comes first). Mutually dependent regions are an error."""
    index = {s.name: n for n, s in enumerate(program.statements)}
    writer: dict[str, ir.Region] = {}
    for r in regions:
        for e in r.exprs:
            if e.writes:
                writer.setdefault(e.statement, r)
    deps: dict[str, set[str]] = {}
    for r in regions:
        reads = set()
        for v in r.views:
            if v.kind in ("materialized", "permuted"):
                base = v.copy_of or v.tensor
                if base in writer and writer[base] is not r:
                    reads.add(writer[base].name)
        deps[r.name] = reads
    key = {r.name: min(index[s] for s in r.statements) for r in regions}
    by_name = {r.name: r for r in regions}
    # Kahn's algorithm, the ready region of the smallest key first (ties: the earlier in
    # `deps`); a scan of every region left per step made this quadratic in the regions of an
    # unrolled loop
    rank = {n: (key[n], k) for k, n in enumerate(deps)}
    waiting = {n: len(d) for n, d in deps.items()}
    readers: dict[str, list[str]] = {}
    for n, d in deps.items():
        for m in d:
            readers.setdefault(m, []).append(n)
    ready = [rank[n] + (n,) for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    done: list[ir.Region] = []
    while ready:
        n = heapq.heappop(ready)[2]
        done.append(by_name[n])
        for m in readers.get(n, ()):
            waiting[m] -= 1
            if waiting[m] == 0:
                heapq.heappush(ready, rank[m] + (m,))
    if len(done) < len(deps):
        placed = {r.name for r in done}
        left = {n: d for n, d in deps.items() if n not in placed}
        names = sorted(left, key=key.__getitem__)
        r = by_name[names[0]]
        raise UserError("fusion regions depend on each other in a cycle: "
                        + "; ".join(f"'{n}' reads what "
                                    + ", ".join(f"'{m}'" for m in sorted(left[n]))
                                    + " writes"
                                    for n in names), r.loc)
    return done


def _tensors(program: ast.Program, regions: list[ir.Region],
             decomposed: Rewrite | None = None) -> list[ir.TensorInfo]:
    decomposed = decomposed or Rewrite()
    inputs, outputs = set(program.inputs), set(program.outputs)
    copied = set(decomposed.copies.values())
    out = []
    for t in program.tensors:
        role = "input" if t.name in inputs else "output" if t.name in outputs else "intermediate"
        copy_of, threshold = None, None
        if t.name in decomposed.copies:
            role, copy_of = "permuted", decomposed.copies[t.name]
        elif decomposed.part_of(t.name) is not None:
            role = "part"
            copy_of, threshold = decomposed.part_of(t.name)
        elif t.name in copied and t.name not in inputs:
            role = "intermediate"  # a blocked part's result, read through its unblocked copy
        out.append(ir.TensorInfo(t.name, t.dims, t.format, role, program.block_size(t.name),
                                 copy_of, loc=t.loc, threshold=threshold))
    seen = {t.name for t in program.tensors}
    for r in regions:
        for v in r.views:
            if v.kind == "permuted" and v.tensor not in seen:
                seen.add(v.tensor)
                base = program.tensor(v.copy_of)
                modes = tuple(v.indices.index(g) for g in v.mode_order)
                out.append(ir.TensorInfo(v.tensor, base.dims,
                                         Format(copy_levels(base.format), modes,
                                                base.format.blocked),
                                         "permuted", program.block_size(base.name), base.name))
    return out

"""From the fused einsum IR (`fuseflowc fuse`, docs/fused-ir.md) to lowering regions.

Per fused region: every instance marked `writes` becomes one written statement whose tree
inlines the instances behind its `inline` views (a fresh copy per use: an intermediate with
several consumers is recomputed per consumer, unless `fuse --share` made it a shared view: its
producer then publishes its streams in the graph for every reader, fuseflowc.lower.shared);
input and materialized views are scanned from memory. An inline intermediate that must be "seen as declared" (fuseflowc.lang.widen) is
computed by a graph of its own before the region and read back. A permuted copy (`A__T`,
`permuted of A`) is a temp made by a module-level `permute A -> A__T` step (`permuted_copies`;
the driver places the step after the graph writing A).
"""

from __future__ import annotations

import heapq

from ..diagnostics import UserError
from ..fuse import ir as F
from ..lang import ast
from ..lang.widen import path_safe, reduction_of, widens
from ..ops import ZERO_PRESERVING
from . import expr as X
from .build import empty_below, full_at

_ROLES = {"input": "input", "output": "output", "intermediate": "temp", "part": "temp"}


def regions_from_fused(fp: F.FusedProgram, forced: dict[str, str] | None = None
                       ) -> tuple[list[X.Region], dict[str, X.TensorInfo]]:
    """Lowering regions (graphs in order) and tensor descriptions of a fused program.
    `forced`: inlined intermediates to store by graphs of their own anyway (statement -> why;
    the driver's answer to a reduction no order of the region can build inlined)."""
    forced = forced or {}
    tensors: dict[str, X.TensorInfo] = {}
    for t in fp.tensors:
        if t.role == "permuted":
            continue  # a temp made by a permute step (declared below)
        tensors[t.name] = X.TensorInfo(t.name, tuple(t.dims), t.format, _ROLES[t.role],
                                       t.block, t.loc)
    decls = {t.name: t for t in fp.tensors}
    copies = permuted_copies(fp)
    for copy, _ in copies:
        t = decls[copy]
        tensors[copy] = X.TensorInfo(t.name, tuple(t.dims), t.format, "temp", t.block, t.loc)
    regions: list[X.Region] = []
    written: set[str] = {copy for copy, _ in copies}
    written |= {t.name for t in fp.tensors if t.role == "part"}  # made by a decompose step
    read: set[str] = set()
    writer: dict[str, str] = {}   # statement lowering stores by a graph of its own -> graph
    # fused region -> its lowering regions (each with the statement named in its graph's name,
    # or None) and the statements they write: what a rebound iteration's region renames
    made: dict[str, tuple[list[tuple[X.Region, str | None]], set[str]]] = {}
    for r in fp.regions:
        if r.template in made and r.bound in fp.bindings:
            names = fp.bindings[r.bound]
            parts, wrote = made[r.template]
            for part, stmt in parts:
                base = r.name if stmt is None else f"{r.name}_{names.get(stmt, stmt)}"
                regions.append(X.Region(_unique(base, regions), source_names=part.source_names,
                                        rebinds=(part, names)))
            written.update(names.get(s, s) for s in wrote)
            continue
        parts: list[tuple[X.Region, str | None]] = []
        wrote: set[str] = set()
        if not any(v.kind == "shared" for v in r.views):   # one graph per lowering region
            made[r.name] = (parts, wrote)
        views = {(v.tensor, tuple(v.indices)): v for v in r.views}
        insts = {e.id: e for e in r.exprs}
        order = tuple(r.order)
        mat, widen, why = _forced(r, forced, *_to_materialize(r, insts, decls, views, tensors))
        mat |= _stored_shared(insts, views, mat, why)
        try:
            stored = _stored_statements(r, insts, views, mat, order, tensors, read, widen,
                                        written)
        except NoOwnOrder:
            # Stored, some intermediate has no order; where its zeros reach a use only through
            # readers declared all-dense (seen as declared on their own account), it need be
            # neither stored nor widened (GPT-3's full layer: O, read by Om)
            lmat, lwiden, lwhy = _forced(r, forced, *_to_materialize(
                r, insts, decls, views, tensors, lenient=True))
            lmat |= _stored_shared(insts, views, lmat, lwhy)
            if lmat == mat:
                raise
            mat, widen, why = lmat, lwiden, lwhy
            stored = _stored_statements(r, insts, views, mat, order, tensors, read, widen,
                                        written)
        # One graph per materialized statement, producers first.
        done: set[str] = set()
        for st in stored:
            done.add(st.name)
            reg = X.Region(_unique(f"{r.name}_{st.name}", regions),
                           source_names=r.source_names())
            reg.statements.append(st)
            reg.notes.append(f"{st.name} is stored and read back by a graph of its own "
                             f"({reg.name}), splitting region {r.name}: "
                             + why.get(st.name, "it must be seen as declared"))
            regions.append(reg)
            parts.append((reg, st.name))
            writer[st.name] = reg.name
            written.add(st.name)
            wrote.add(st.name)
        reg = X.Region(_unique(r.name, regions), source_names=r.source_names())
        reg.notes += _read_back_notes(r, mat, done, writer, why)
        # shared intermediates first (program order): each publishes its streams for the
        # readers generated after it (fuseflowc.lower.shared)
        sources = {v.producer for v in r.views if v.kind == "shared"} - mat
        for inst in r.exprs:
            if inst.id in sources:
                st = _statement(inst, views, insts, mat, order, tensors, read, widen)
                st.shared_format = decls[inst.statement].format
                reg.statements.append(st)
                t = decls[inst.statement]
                reg.shared[inst.statement] = X.TensorInfo(t.name, tuple(t.dims), t.format,
                                                          "temp", t.block, t.loc)
        for inst in r.exprs:
            if inst.writes and inst.statement not in done:
                reg.statements.append(
                    _statement(inst, views, insts, mat, order, tensors, read, widen))
                written.add(inst.statement)
                wrote.add(inst.statement)
        if reg.statements:
            regions.append(reg)
            parts.append((reg, None))
    # Intermediates fused away everywhere are not stored; the ones written are temps.
    for name in list(tensors):
        t = tensors[name]
        if t.role == "temp" and name not in written:
            del tensors[name]
    return regions, tensors


def _forced(r: F.Region, forced: dict[str, str], mat: set[str], widen, why):
    """(mat, widen, why) with the region's instances of the `forced` statements stored."""
    ids = {e.id for e in r.exprs if e.statement in forced and not e.writes}
    for e in r.exprs:
        if e.id in ids:
            why.setdefault(e.statement, forced[e.statement])
    mat = mat | ids
    return mat, {e: w for e, w in widen.items() if e not in mat}, why


def reduction_owner(fp: F.FusedProgram, loc) -> F.Instance | None:
    """The fused instance whose expression holds the reduction written at `loc` (a lowering
    tree's reduction keeps its source's location), or None."""
    if loc is None:
        return None
    for r in fp.regions:
        for e in r.exprs:
            if any(isinstance(n, ast.Reduce) and n.loc == loc for n in e.expr.walk()):
                return e
    return None


def _stored_statements(r: F.Region, insts, views, mat: set[str], order, tensors, read,
                       widen, written: set[str]) -> list[X.Statement]:
    """The statements lowering stores by graphs of their own, each in its own order: one per
    materialized statement (its first instance; other bindings of the same statement compute
    the same tensor and read it back too), in program order. NoOwnOrder if one has none.
    A statement an earlier graph already wrote (`written`: lowering stored it for an earlier
    region) is not computed again: every tensor is written once, and this region reads it
    back like the other bindings."""
    out: list[X.Statement] = []
    done: set[str] = set()
    for inst in r.exprs:
        if inst.id not in mat or inst.statement in done or inst.statement in written:
            continue
        done.add(inst.statement)
        st = _statement(inst, views, insts, mat, order, tensors, read, widen)
        st.order = _own_order(st, tensors, order)
        out.append(st)
    return out


def _read_back_notes(r: F.Region, mat: set[str], done: set[str], writer: dict[str, str],
                     why: dict[str, str]) -> list[str]:
    """Notes for the intermediates region `r` stores but an earlier region's graph of their
    own already wrote: read back from that graph, not computed again (program order)."""
    again = dict.fromkeys(e.statement for e in r.exprs
                          if e.id in mat and e.statement in writer and e.statement not in done)
    return [f"{t} is read back from graph {writer[t]} (written for an earlier region), not "
            f"computed again, in region {r.name}: "
            + why.get(t, "it must be seen as declared") for t in again]


def _unique(name: str, regions: list[X.Region]) -> str:
    names = {g.name for g in regions}
    base = name.replace(".", "_")
    out, k = base, 2
    while out in names:
        out, k = f"{base}_{k}", k + 1
    return out


def _to_materialize(r: F.Region, insts: dict[str, F.Instance], decls, views, tensors,
                    lenient: bool = False):
    """Instances behind inline views whose declared (widened) pattern some use can see: those
    to store and read back, and the others' widened indices with the full-range input vector
    giving their coordinates. `lenient`: one that cannot be widened is not stored either where
    its zeros reach a use only through readers declared all-dense."""
    out: set[str] = set()
    why: dict[str, str] = {}   # statement -> why it is stored (the first reason found)
    readers: dict[str, list[F.Instance]] = {}
    # a tensor reducing an access is read only where computed beside that access (widen.py)
    sources = {e.statement: reduction_of(e.lhs, e.expr) for e in r.exprs}
    for inst in r.exprs:
        for a in inst.expr.walk():
            if isinstance(a, ast.Access):
                readers.setdefault(a.tensor, []).append(inst)

    def unsafe(tensor: str, seen: frozenset, dense_ends: bool = False) -> bool:
        for c in readers.get(tensor, []):
            if c.statement in seen:
                continue
            s = path_safe(c.expr, tensor, frozenset(), sources.get(tensor))
            if s is False:
                return True
            if s is True and c.writes and not decls[c.statement].format.is_dense:
                return True  # the stored pattern (zeros) of the written result would differ
            if dense_ends and decls[c.statement].format.is_dense:
                continue
            if s is True and not c.writes and unsafe(c.statement, seen | {c.statement},
                                                     dense_ends):
                return True
        return False

    def seen_as_declared_by_readers(tensor: str) -> bool:
        """Whether the tensor's zeros reach a use only through readers declared all-dense,
        which are seen as declared on their own account (widened or stored where a use can
        tell, else their zeros are unseen, the ones this tensor gives them included): then
        it need not be stored where it cannot be widened (GPT-3's O, read by Om)."""
        return not unsafe(tensor, frozenset({tensor}), dense_ends=True)

    widen: dict[str, dict[str, str]] = {}
    order = tuple(r.order)
    for v in r.views:
        if v.kind == "inline" and v.producer is not None:
            t = decls[v.tensor]
            if not (widens(t) and unsafe(v.tensor, frozenset({v.tensor}))):
                continue
            seen_by = _first_unsafe_reader(readers, v.tensor, path_safe, sources)
            if not t.format.is_dense:
                # Dense levels after a compressed one store whole fibers under the stored
                # coordinates only (those with a computed entry); a union with a full range
                # would widen every fiber, so the stream cannot emulate it: store it.
                out.add(v.producer)
                why.setdefault(v.tensor, f"its format ({t.format}) stores zeros its stream "
                               f"lacks, which {seen_by} can tell from no entry, and a stream "
                               "cannot widen dense levels under a compressed one")
                continue
            # An all-dense tensor stores every coordinate: widen each index from the first
            # (in the region's order) whose coordinates are not full by construction; the
            # ones inside it too, since an outer coordinate only widening adds has no entry.
            p = insts[v.producer]
            tree = X.split_reductions(
                _convert(p.expr, p, views, insts, set(), tensors, set(), {}, []), order)
            own = sorted(v.indices, key=order.index)
            first = next((k for k, x in enumerate(own) if not full_at(tree, x, order)),
                         len(own))
            helpers = {x: _helper(decls, t.dims[v.indices.index(x)]) for x in own}
            cannot = any(helpers[x] is None for x in own[first:]) or not all(
                empty_below(tree, x, order) for x in own[first:-1])
            if cannot and lenient and seen_as_declared_by_readers(v.tensor):
                continue
            lacking = [x for x in own[first:] if helpers[x] is None]
            if lacking:
                out.add(v.producer)  # no full-range vector to widen with: store it
                dims = sorted({t.dims[v.indices.index(x)] for x in lacking})
                why.setdefault(v.tensor, f"it is declared dense, and {seen_by} can tell its "
                               "stored zeros from no entry; in this order its stream does not "
                               f"give every coordinate of {', '.join(dims)} and no input "
                               f"vector stored dense over {', '.join(dims)} can widen it")
            elif not all(empty_below(tree, x, order) for x in own[first:-1]):
                # an outer coordinate that widening adds would carry the values of an operand
                # that meets the absent ones only outside it: store it
                out.add(v.producer)
                why.setdefault(v.tensor, f"it is declared dense, and {seen_by} can tell its "
                               "stored zeros from no entry; in this order an outer coordinate "
                               "that widening adds would carry the values of an operand met "
                               "outside it")
            elif first < len(own):
                # (the analysis of the graph, in its own order, drops the levels not needed)
                widen[v.producer] = {x: h for x, h in helpers.items() if h is not None}
    stmts = {insts[e].statement for e in out if e in insts}
    out |= {e.id for e in r.exprs if e.statement in stmts}
    return out, {e: w for e, w in widen.items() if e not in out}, why


def _first_unsafe_reader(readers: dict[str, list[F.Instance]], tensor: str, safe,
                         sources) -> str:
    """The statement reading `tensor` first (program order) where its stored zeros show, for a
    note: directly, or through the chain of readers inlining it."""
    seen = {tensor}
    todo = [tensor]
    while todo:
        t = todo.pop(0)
        for c in readers.get(t, []):
            s = safe(c.expr, t, frozenset(), sources.get(t))
            if s is False or (s is True and c.writes):
                return c.statement
            if s is True and c.statement not in seen:
                seen.add(c.statement)
                todo.append(c.statement)
    return "a reader"


def _stored_shared(insts: dict[str, F.Instance], views, mat: set[str],
                   why: dict[str, str] | None = None) -> set[str]:
    """The producers of shared views that a graph of its own (a statement lowering stores,
    `mat`) reads: streams do not cross graphs, so they are stored too (and so, in turn, the
    shared intermediates their own graphs read). `why` gets one reason per statement."""
    def shared_read(inst: F.Instance, seen: set[str]) -> set[str]:
        out: set[str] = set()
        for a in inst.expr.walk():
            if not isinstance(a, ast.Access):
                continue
            v = views.get((a.tensor, tuple(a.indices)))
            if v is None or v.producer not in insts or v.producer in seen:
                continue
            if v.kind == "shared":
                out.add(v.producer)
            elif v.kind == "inline" and v.producer not in mat:
                seen.add(v.producer)
                out |= shared_read(insts[v.producer], seen)
        return out

    stored: set[str] = set()
    todo = sorted(e for e in mat if e in insts)
    while todo:
        reader = todo.pop()
        for p in sorted(shared_read(insts[reader], set()) - stored - mat):
            stored.add(p)
            todo.append(p)
            if why is not None:
                why.setdefault(insts[p].statement,
                               f"--share made it a stream, but {insts[reader].statement}, "
                               "stored by a graph of its own, reads it, and a stream does not "
                               "cross graphs")
    return stored


def _helper(decls, dim) -> str | None:
    """An input vector stored dense over `dim` (its scan gives every coordinate), or None."""
    for t in decls.values():
        if t.role == "input" and len(t.dims) == 1 and t.dims[0] == dim \
                and t.format.levels == ("dense",) and t.block is None:
            return t.name
    return None


def _statement(inst: F.Instance, views, insts, mat: set[str], order, tensors, read,
               widen: dict[str, dict[str, str]]) -> X.Statement:
    inlined: list[str] = []
    tree = _convert(inst.expr, inst, views, insts, mat, tensors, read, widen, inlined)
    tree = X.split_reductions(tree, order)
    return X.Statement(inst.statement, inst.statement, tuple(inst.lhs), tree, order, inst.loc,
                       tuple(dict.fromkeys(inlined)))


def _convert(e: ast.Expr, inst, views, insts, mat, tensors, read, widen, inlined) -> X.Node:
    """An instance's expression as a lowering tree, inline views expanded (a fresh copy each)."""
    def conv(e: ast.Expr) -> X.Node:
        if isinstance(e, ast.Access):
            v = views.get((e.tensor, tuple(e.indices)))
            if v is not None and v.kind == "inline" and v.producer not in mat \
                    and v.producer in insts:
                p = insts[v.producer]
                inlined.append(p.statement)
                node = conv(p.expr)
                node.widen = dict(widen.get(p.id, {}))
                if p.statement in tensors and tensors[p.statement].format.is_dense:
                    _mark_dense_result(node)
                return node
            if v is not None and v.kind == "shared" and v.producer not in mat:
                node = X.Access(v.tensor, tuple(e.indices), e.loc, tensors[v.tensor].format)
                node.shared = True
                return node
            name = v.tensor if v is not None else e.tensor
            if name in tensors and tensors[name].role == "temp":
                read.add(name)
            fmt = tensors[name].format if name in tensors else None
            return X.Access(name, tuple(e.indices), e.loc, fmt)
        if isinstance(e, ast.Const):
            return X.Const(e.value, e.loc)
        if isinstance(e, ast.Binary):
            return X.Binary(e.op, conv(e.lhs), conv(e.rhs), e.loc)
        if isinstance(e, ast.Call):
            args = [conv(a) for a in e.args]
            if len(args) == 1:
                return X.Unary(e.func, args[0], e.loc)
            return X.Binary(e.func, args[0], args[1], e.loc)
        if isinstance(e, ast.Reduce):
            return X.MultiReduce(e.op, tuple(e.indices), conv(e.body), e.loc)
        raise AssertionError(type(e))
    return conv(e)


class NoOwnOrder(UserError):
    """A statement lowering stores by a graph of its own has no dataflow order concordant
    with its storage and its views."""


def _mark_dense_result(e: X.Node) -> None:
    """Mark the reduction computing an inlined all-dense intermediate (under constant factors
    and zero-preserving functions, which keep an explicit 0 a 0): its explicit 0 for an empty
    fiber is an entry the tensor stores as declared, so it need not be held."""
    while True:
        if isinstance(e, X.MultiReduce | X.Reduce):
            e.dense_result = True
            return
        if isinstance(e, X.Unary) and e.op in ZERO_PRESERVING:
            e = e.arg
        elif isinstance(e, X.Binary) and e.op == "*" and isinstance(e.rhs, X.Const):
            e = e.lhs
        elif isinstance(e, X.Binary) and e.op == "*" and isinstance(e.lhs, X.Const):
            e = e.rhs
        elif isinstance(e, X.Binary) and e.op == "/" and isinstance(e.rhs, X.Const) \
                and e.rhs.value != 0:
            e = e.lhs
        else:
            return


def _own_order(st: X.Statement, tensors, preferred: tuple[str, ...]) -> tuple[str, ...]:
    """A dataflow order for an intermediate lowering materializes on its own: concordant with
    its views and its own declared storage order (fuse constrained only the region's written
    tensors), otherwise as close to the region's order as possible."""
    used = {x for n in st.expr.walk()
            for x in (n.indices if isinstance(n, X.Access) else
                      (n.index,) if isinstance(n, X.Reduce) else ())}
    indices = sorted(used | set(st.indices), key=preferred.index)
    edges: list[tuple[str, str]] = []
    for n in st.expr.walk():
        if isinstance(n, X.Access) and n.format is not None:
            seq = [n.indices[m] for m in n.format.mode_order]
            edges += list(zip(seq, seq[1:]))
    fmt = tensors[st.tensor].format
    seq = [st.indices[m] for m in fmt.mode_order]
    edges += list(zip(seq, seq[1:]))
    order = _topo(indices, edges)
    if len(order) != len(indices):
        # `fuse` makes the permuted copies of the graphs it forms; lowering makes none for the
        # graphs it splits off (reachable with `fuse --inline-widened`).
        stuck = [x for x in indices if x not in order]
        raise NoOwnOrder(f"statement {st.name}: lowering stores {st.tensor} by a graph of its own "
                        "(a use can tell its declared format's stored zeros from absent "
                        "entries), but no dataflow order is concordant with both its storage "
                        "order and those of the tensors it reads (a cycle among "
                        + ", ".join(stuck) + "), and lowering makes no permuted copy for such "
                        "a graph: fuse without --inline-widened (fuse then stores it and "
                        "orders its graph), or change a format", st.loc)
    return order


def permuted_copies(fp: F.FusedProgram) -> list[tuple[str, str]]:
    """The permuted copies the fused program reads, as (copy, original) in declaration order,
    a copy of a copy after the copy it reads.
    Each becomes a temp made by a module-level step `permute ORIGINAL -> COPY` (same logical
    modes, the copy's storage format), run after the graph writing the original (inputs: before
    the first graph), so that the copy's cost is counted like a kernel's.

    A copy must store exactly the original's entries: one with a dense level after its last
    compressed level (and not all dense like the original) would store zeros the original does
    not, which the language can tell apart ("seen as declared"): a UserError."""
    used = {v.tensor for r in fp.regions for v in r.views if v.kind == "permuted"}
    role = {t.name: (t.role, t.copy_of) for t in fp.tensors}
    for name in list(used):     # and the re-blocked copies those are copies of
        while role.get(name, ("", None))[0] == "permuted" and role[name][1] not in used \
                and role.get(role[name][1], ("", None))[0] == "permuted":
            name = role[name][1]
            used.add(name)
    out = []
    for t in fp.tensors:
        if t.role != "permuted" or t.name not in used:
            continue
        src = next((x for x in fp.tensors if x.name == t.copy_of), None)
        if src is None:
            raise UserError(f"permuted tensor {t.name} is a copy of undeclared {t.copy_of}",
                            t.loc)
        if _trailing_dense(t.format) and not (t.format.is_dense and src.format.is_dense):
            raise UserError(
                f"permuted copy {t.name} of {src.name} ({t.format.name()}) would store entries "
                f"(zeros) that {src.name} ({src.format.name()}) does not: a dense level follows "
                "its last compressed one (choose another order with `fuse --order K`, or "
                "change a format)", t.loc)
        out.append((t.name, src.name))
    # a copy of a re-blocked copy is made after it
    made = {c for c, _ in out}
    done: list[tuple[str, str]] = []
    while out:
        ready = [(c, o) for c, o in out if o not in made or o in {d for d, _ in done}]
        ready = ready or out[:1]     # (a cycle, which the fused IR verifier refuses)
        done += ready
        out = [x for x in out if x not in ready]
    return done


def _trailing_dense(fmt) -> bool:
    """Whether a dense level follows the last compressed level (or all levels are dense)."""
    last = max((k for k, lv in enumerate(fmt.levels) if lv != "dense"), default=-1)
    return last < len(fmt.levels) - 1


def _topo(indices: list[str], edges: list[tuple[str, str]]) -> tuple[str, ...]:
    """A topological order of `indices` under `edges`, ties broken by position in `indices`;
    shorter than `indices` when the edges have a cycle (its indices are left out)."""
    rank = {x: k for k, x in enumerate(indices)}
    succ: dict[str, set[str]] = {x: set() for x in indices}
    indeg = {x: 0 for x in indices}
    for a, b in set(edges):
        if a != b and b not in succ[a]:
            succ[a].add(b)
            indeg[b] += 1
    ready = [(rank[x], x) for x in indices if indeg[x] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, x = heapq.heappop(ready)
        out.append(x)
        for y in sorted(succ[x], key=rank.get):
            indeg[y] -= 1
            if indeg[y] == 0:
                heapq.heappush(ready, (rank[y], y))
    return tuple(out)

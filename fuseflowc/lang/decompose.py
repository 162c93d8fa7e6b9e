"""Format decomposition (`decompose A: bcsr(16) >= 0.5, csr`; docs/language.md, "Format
decomposition"): the checks on the directive and the program rewrite `fuse` applies.

A decomposed matrix A is the sum of its parts A__d0, A__d1, ... (the split itself is a costed
module step, `decompose A -> A__d0 >= 0.5, A__d1`, made by lowering and run by the simulator).
A statement that reads A is linear in it, so (R the residual, the last part)

    y = f(A)   becomes   y__d0 = f(A__d0); y__d1 = f(A__d1); ...; y = y__d0 + y__d1 + ... + f(R)

Each blocked part's statement compiles alone (its own graph). A blocked part needs every
tensor over the indices it splits blocked as well: an input B becomes its blocked copy B__b16
(a `permute` step), and the blocked part's result y__d0 (stored with blocks) is read by the sum through its
unblocked copy y__d0__u (another `permute` step). The last statement computes the residual's
share and the sum, and keeps y's name, region, order and parallelizations, so a region fusing y
with its consumers stays fused.

The reference evaluator does not use this module: it evaluates the decomposed program by its own
means (fuseflowc.reference.decompose).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..diagnostics import Loc, UserError
from ..formats import Format, format_problem
from . import ast


def part_name(tensor: str, k: int) -> str:
    """The name of part k of a decomposed tensor: `A__d0`."""
    return f"{tensor}__d{k}"


def blocked_name(tensor: str, block: int) -> str:
    """The name of a tensor's blocked copy read by a blocked part: `B__b16`."""
    return f"{tensor}__b{block}"


def unblocked_name(tensor: str) -> str:
    """The name of a blocked part result's unblocked copy: `y__d0__u`."""
    return f"{tensor}__u"


@dataclass
class Rewrite:
    """What the rewrite introduced, for `fuse` to give the new tensors their roles: `parts`
    (decomposed tensor -> [(part, threshold or None)]), `copies` (copy -> original)."""

    parts: dict[str, list[tuple[str, float | None]]] = field(default_factory=dict)
    copies: dict[str, str] = field(default_factory=dict)
    # a part's statement -> (the statement it is a part of, the part of A it reads, the
    # directive's text of that part, where the directive is)
    statements: dict[str, tuple[str, str, str, Loc | None]] = field(default_factory=dict)

    def in_user_terms(self, err: UserError) -> UserError:
        """`err` (raised on the rewritten program) with each part's statement named as the
        user wrote it (`C__d0` -> `C`), and a note per part saying which part it was."""
        named = [p for p in self.statements
                 if any(re.search(rf"\b{re.escape(p)}\b", d.message) for d in err.diagnostics)]
        if not named:
            return err
        pattern = re.compile(r"\b(%s)\b" % "|".join(map(re.escape, named)))
        out = UserError(diagnostics=[replace(d, message=pattern.sub(
            lambda m: self.statements[m[1]][0], d.message)) for d in err.diagnostics])
        for p in named:
            stmt, part, text, loc = self.statements[p]
            out.note(f"{stmt} is computed part by part (`decompose`): this is its statement "
                     f"{p}, over the part {part} ({text}); {stmt}'s order and format apply to "
                     f"every part", loc)
        return out

    def part_of(self, name: str) -> tuple[str, float | None] | None:
        """(decomposed tensor, threshold) of a part's name, or None."""
        for a, ps in self.parts.items():
            for p, t in ps:
                if p == name:
                    return a, t
        return None


# ---- checks ---------------------------------------------------------------------------------

def problems(program: ast.Program, statements: list[ast.Assignment],
             d: ast.Decompose) -> list[tuple[str, Loc | None]]:
    """Every reason the directive `d` cannot apply to the checked `statements`, as (message,
    location) pairs; empty when it is fine."""
    tensors = {t.name: t for t in program.tensors}
    out: list[tuple[str, Loc | None]] = []
    a = tensors.get(d.tensor)
    if a is None:
        return [(f"decompose names undefined tensor {d.tensor}", d.loc)]
    if any(s.name == d.tensor for s in statements):
        return [(f"decompose {d.tensor}: {d.tensor} is computed by a statement; only an input "
                 f"(read from data) can be decomposed", d.loc)]
    if a.order != 2 or a.format.blocked:
        return [(f"decompose {d.tensor}: only an unblocked matrix can be decomposed ("
                 f"{d.tensor} is {a.format.name()} with {a.order} dim(s))", d.loc)]
    if len(d.parts) < 2:
        out.append((f"decompose {d.tensor}: give at least one blocked part and the residual "
                    f"(e.g. `decompose {d.tensor}: bcsr(16) >= 0.5, csr`)", d.loc))
    for k, p in enumerate(d.parts):
        last = k == len(d.parts) - 1
        if last:
            if p.format.blocked or p.block is not None or p.threshold is not None:
                out.append((f"decompose {d.tensor}: the last part is the residual, an unblocked "
                            f"format without block size or threshold (e.g. csr)", p.loc))
            continue
        if not p.format.blocked:
            out.append((f"decompose {d.tensor}: part {k} ({p.text()}) must be blocked (bcsr, "
                        f"bdcsr or bdense with a block size); only the last part, the "
                        f"residual, is unblocked", p.loc))
        elif p.block is None:
            out.append((f"decompose {d.tensor}: part {k} needs a block size: "
                        f"{p.format.name()}(16)", p.loc))
        if p.threshold is None:
            out.append((f"decompose {d.tensor}: part {k} needs a fill threshold: "
                        f"{p.format.name()}({p.block or 16}) >= 0.5", p.loc))
        elif not 0 < p.threshold <= 1:
            out.append((f"decompose {d.tensor}: threshold {p.threshold:g} of part {k} is not a "
                        f"fill in (0, 1] (the fraction of a block's entries A stores)", p.loc))
    for k in range(len(d.parts)):
        name = part_name(d.tensor, k)
        if name in tensors:
            out.append((f"decompose {d.tensor}: its part {k} is named {name}, which is already "
                        f"a tensor of the program", d.loc))
    readers = [s for s in statements if _reads(s.expr or s.rhs, d.tensor)]
    if not readers:
        out.append((f"decompose {d.tensor}: no statement reads {d.tensor}", d.loc))
    blocks = sorted({p.block for p in d.parts if p.block is not None})
    for s in readers:
        why = nonlinear(s.expr or s.rhs, d.tensor)
        if why:
            out.append((f"decompose {d.tensor}: statement {s.name} is not linear in "
                        f"{d.tensor}: {why}; only a statement where {d.tensor} is a factor of "
                        f"a sum of products can be computed part by part", d.loc))
            continue
        y = tensors.get(s.name)
        if y is None:   # undeclared: the checker reports it (found by fuzzing)
            continue
        if blocks and not y.format.is_dense:
            out.append((f"decompose {d.tensor}: statement {s.name} stores {s.name} as "
                        f"{y.format.name()}, but a blocked part stores whole blocks (zeros "
                        f"included), which would widen {s.name}'s pattern: declare {s.name} "
                        f"dense", d.loc))
            continue
        for b in blocks:
            msg = _blocking_problem(program, statements, s, d.tensor, b, tensors)
            if msg:
                out.append((f"decompose {d.tensor}: part bcsr({b}) of statement {s.name}: "
                            + msg, d.loc))
                break
    return out


def _reads(e: ast.Expr, tensor: str) -> bool:
    return any(isinstance(x, ast.Access) and x.tensor == tensor for x in e.walk())


def nonlinear(e: ast.Expr, a: str) -> str | None:
    """Why `e` is not linear in tensor `a` (a sum of products with one factor of `a` in every
    term), or None when it is."""
    if isinstance(e, ast.Access):
        return None if e.tensor == a else f"a term ({e.tensor}) does not read {a}"
    if isinstance(e, ast.Const):
        return f"a term (the constant {e.value:g}) does not read {a}"
    if isinstance(e, ast.Binary):
        la, ra = _reads(e.lhs, a), _reads(e.rhs, a)
        if e.op in "+-":
            for has in (la, ra):
                if not has:
                    return (f"a term of {e.op} does not read {a} (it would be counted once "
                            f"per part; compute the {a} terms in a statement of their own)")
            return nonlinear(e.lhs, a) or nonlinear(e.rhs, a)
        if e.op == "*":
            if la and ra:
                return f"{a} appears in both factors of a product"
            return nonlinear(e.lhs if la else e.rhs, a)
        if ra:
            return f"{a} is in a denominator"
        return nonlinear(e.lhs, a)
    if isinstance(e, ast.Call):
        if e.func == "neg":
            return nonlinear(e.args[0], a)
        if e.func == "mask":
            if _reads(e.args[1], a):
                return f"{a} is the mask of mask(...), whose pattern is not a sum of parts"
            return nonlinear(e.args[0], a)
        return f"{a} is under the non-linear function {e.func}"
    if isinstance(e, ast.Reduce):
        if e.op != "sum":
            return f"{a} is in a {e.op}[{', '.join(e.indices)}] reduction"
        return nonlinear(e.body, a)
    return f"unsupported expression {type(e).__name__}"


def split_indices(e: ast.Expr, a: str, lhs: ast.Access) -> set[str]:
    """The indices a blocked part of `a` splits: a's, and by closure those of every tensor
    (the left side included) that uses a split index."""
    accesses = [x for x in e.walk() if isinstance(x, ast.Access)] + [lhs]
    split = {i for x in accesses if x.tensor == a for i in x.indices}
    grew = True
    while grew:
        grew = False
        for x in accesses:
            if split & set(x.indices) and not set(x.indices) <= split:
                split |= set(x.indices)
                grew = True
    return split


def size_problems(program: ast.Program, sizes: dict) -> list[tuple[str, Loc | None]]:
    """`problems` again, once the data has bound the dims the program leaves open (`sizes`:
    dim name -> size): a block size that does not divide a dim of a tensor its part reads, at
    the directive, naming the dim (check finds those the program sizes itself)."""
    known = {d.name: d.size for d in program.dims if d.size is not None}
    bound = replace(program, dims=[replace(d, size=known.get(d.name, sizes.get(d.name)))
                                   for d in program.dims])
    out = []
    for d in program.decompositions():
        out += [(m, loc) for m, loc in problems(bound, bound.statements, d) if "divide" in m]
    return out


def require_sizes(program: ast.Program, sizes: dict) -> None:
    """Raise the located UserError of `size_problems`, if any."""
    found = size_problems(program, sizes)
    if found:
        from ..diagnostics import Diagnostic, UserError
        raise UserError(diagnostics=[Diagnostic(m + " (its size in the data)", loc)
                                     for m, loc in found])


def _blocking_problem(program, statements, s, a, b, tensors) -> str | None:
    expr = s.expr or s.rhs
    split = split_indices(expr, a, s.lhs)
    assigned = {t.name for t in statements}
    decomposed = {d.tensor for d in program.decompositions()}
    for x in [x for x in expr.walk() if isinstance(x, ast.Access)] + [s.lhs]:
        if x.tensor == a or not split & set(x.indices):
            continue
        t = tensors.get(x.tensor)
        if t is None:   # undeclared: the checker reports it (found by fuzzing)
            continue
        if t.order != 2:
            return (f"{x.tensor} has {t.order} dim(s) over a blocked index, but blocked formats "
                    f"are matrices")
        if t.format.blocked:
            return f"{x.tensor} is already blocked; a decomposed statement reads unblocked tensors"
        why = format_problem(t.format.levels, True)
        if why:  # its blocked copy would be no format (found by fuzzing: coo, ell(c) and
            #        compressed(c) were an AssertionError in fuse)
            return (f"{x.tensor} is {t.format.name()}, but a blocked part reads it through a "
                    f"blocked copy and {why}: declare {x.tensor} dense, csr or dcsr")
        if x is not s.lhs and x.tensor in assigned and program.region_of(x.tensor) is not None \
                and program.region_of(x.tensor) is program.region_of(s.name):
            return (f"{x.tensor} is computed in the same fusion region as {s.name}, but a blocked "
                    f"part reads it from memory (through its blocked copy), after the region "
                    f"that computes it: take {s.name} or {x.tensor} out of the region")
        if x.tensor in decomposed:
            return f"{x.tensor} is decomposed too; one decomposed tensor per statement"
        for dim in t.dims:
            size = dim if isinstance(dim, int) else next(
                (dd.size for dd in program.dims if dd.name == dim), None)
            if size is not None and size % b:
                return f"block size {b} does not divide dimension {dim} = {size} of {x.tensor}"
        taken = blocked_name(x.tensor, b) if x is not s.lhs else part_name(s.name, 0)
        if taken in tensors:
            return f"the name {taken} it needs is already a tensor of the program"
    for dim in tensors[a].dims:
        size = dim if isinstance(dim, int) else next(
            (dd.size for dd in program.dims if dd.name == dim), None)
        if size is not None and size % b:
            return f"block size {b} does not divide dimension {dim} = {size} of {a}"
    return None


# ---- rewrite --------------------------------------------------------------------------------

def rewrite(program: ast.Program, unfold: frozenset[str] = frozenset()
            ) -> tuple[ast.Program, Rewrite]:
    """The checked `program` with every decomposition applied (see the module docstring): a
    program without `decompose` directives, and what the rewrite introduced. The statements
    named in `unfold` get a statement of their own for the residual too (`y__dN = f(R)`), and
    the sum only adds stored results: lowering cannot join a sum's result with another operand
    when the sum's index comes first in the dataflow order (`fuse` asks for it then)."""
    info = Rewrite()
    decomps = program.decompositions()
    if not decomps:
        return program, info
    tensors = list(program.tensors)
    statements = list(program.statements)
    directives = [d for d in program.directives if not isinstance(d, ast.Decompose)]
    declared = {t.name for t in tensors}

    def declare(name, like: ast.TensorDecl, fmt: Format, block: int | None, loc) -> None:
        if name in declared:
            return
        declared.add(name)
        tensors.append(ast.TensorDecl(name, like.dims, fmt, loc, like.dim_locs, loc))
        if block is not None:
            directives.append(ast.Block(name, block, loc))

    for d in decomps:
        a = program.tensor(d.tensor)
        info.parts[d.tensor] = []
        for k, p in enumerate(d.parts):
            declare(part_name(d.tensor, k), a, p.format, p.block, d.loc)
            info.parts[d.tensor].append((part_name(d.tensor, k), p.threshold))
        out: list[ast.Assignment] = []
        for s in statements:
            expr = s.expr or s.rhs
            if not _reads(expr, d.tensor):
                out.append(s)
                continue
            y = program.tensor(s.name)
            terms: list[ast.Expr] = []
            last = len(d.parts) - 1
            for k, p in enumerate(d.parts[:-1]):
                ren = {d.tensor: part_name(d.tensor, k)}
                yk = part_name(s.name, k)
                split = split_indices(expr, d.tensor, s.lhs)
                for x in expr.walk():
                    if (isinstance(x, ast.Access) and x.tensor != d.tensor
                            and split & set(x.indices)):
                        t = program.tensor(x.tensor)
                        ren[x.tensor] = blocked_name(x.tensor, p.block)
                        declare(ren[x.tensor], t, replace(t.format, blocked=True), p.block,
                                d.loc)
                        info.copies[ren[x.tensor]] = x.tensor
                declare(yk, y, replace(y.format, blocked=True), p.block, d.loc)
                info.statements[yk] = (s.name, part_name(d.tensor, k), p.text(), d.loc)
                declare(unblocked_name(yk), y, y.format, None, d.loc)
                info.copies[unblocked_name(yk)] = yk
                body = _rename(expr, ren)
                out.append(ast.Assignment(replace(s.lhs, tensor=yk), body, s.loc, body,
                                          s.index_dims))
                terms.append(ast.Access(unblocked_name(yk), s.lhs.indices, s.loc))
                directives.extend(_part_directives(program, s.name, yk))
            residual = _rename(expr, {d.tensor: part_name(d.tensor, last)})
            if s.name in unfold:
                yr = part_name(s.name, last)
                declare(yr, y, y.format, None, d.loc)
                info.statements[yr] = (s.name, part_name(d.tensor, last), d.parts[last].text(),
                                       d.loc)
                out.append(ast.Assignment(replace(s.lhs, tensor=yr), residual, s.loc, residual,
                                          s.index_dims))
                directives.extend(_part_directives(program, s.name, yr))
                terms.append(ast.Access(yr, s.lhs.indices, s.loc))
                total = terms[0]
                for t in terms[1:]:
                    total = ast.Binary("+", total, t, s.loc)
                keep = set(s.lhs.indices)
                out.append(replace(s, rhs=total, expr=total, index_dims=tuple(
                    x for x in s.index_dims if x[0] in keep)))
                directives = [_restrict(x, s.name, keep) for x in directives]
                directives = [x for x in directives if x is not None]
                continue
            # the residual is computed by the sum itself (one graph and one stored result
            # fewer), which keeps y's indices, so its order and parallelizations still apply
            total = residual
            for t in reversed(terms):
                total = ast.Binary("+", t, total, s.loc)
            out.append(replace(s, rhs=total, expr=total))
        statements = out
    return replace(program, tensors=tensors, statements=statements,
                   directives=directives), info


def _rename(e: ast.Expr, ren: dict[str, str]) -> ast.Expr:
    if isinstance(e, ast.Access):
        return replace(e, tensor=ren.get(e.tensor, e.tensor))
    if isinstance(e, ast.Binary):
        return replace(e, lhs=_rename(e.lhs, ren), rhs=_rename(e.rhs, ren))
    if isinstance(e, ast.Call):
        return replace(e, args=tuple(_rename(x, ren) for x in e.args))
    if isinstance(e, ast.Reduce):
        return replace(e, body=_rename(e.body, ren))
    return e


def _part_directives(program: ast.Program, stmt: str, part: str) -> list[ast.Directive]:
    """The statement's order and parallelizations, for one of its parts."""
    out: list[ast.Directive] = []
    for d in program.directives:
        if isinstance(d, ast.Order) and d.statement == stmt:
            out.append(replace(d, statement=part))
        elif isinstance(d, ast.Parallelize) and d.statement == stmt:
            out.append(replace(d, statement=part))
    return out


def _restrict(d: ast.Directive, stmt: str, keep: set[str]) -> ast.Directive | None:
    """The statement's directive for the sum of its parts (over the left side's indices only)."""
    if isinstance(d, ast.Order) and d.statement == stmt:
        idx = tuple(i for i in d.indices if i in keep)
        locs = tuple(loc for i, loc in zip(d.indices, d.item_locs) if i in keep)
        return replace(d, indices=idx, item_locs=locs)
    if isinstance(d, ast.Parallelize) and d.statement == stmt and d.index not in keep:
        return None
    return d

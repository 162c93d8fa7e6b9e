"""The program IR: dataclass AST nodes of the fuseflowc language, each with its source location.

Expressions: `Access` (a tensor indexed by index variables), `Const`, `Binary` (+ - * /), `Call`
(a unary function, binary max/min, or mask), `Reduce` (sum or max over named indices); the
functions, their arities and the reductions are those of the operator table (fuseflowc.ops).
Locations (`loc`) are excluded from equality so that rewritten trees compare by content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ..diagnostics import Loc, Source
from ..formats import Format


def _loc() -> Loc | None:
    return field(default=None, compare=False, repr=False)


class Expr:
    """Base class of expressions."""

    loc: Loc | None

    def children(self) -> tuple["Expr", ...]:
        return ()

    def walk(self) -> Iterator["Expr"]:
        """This node and all nodes below it, pre-order."""
        yield self
        for c in self.children():
            yield from c.walk()


@dataclass(frozen=True)
class LIdx:
    """A list index expression (docs/language.md, "Lists and loops"): `op` is `var` (args:
    the loop variable), `num` (the number), `+`/`-` (two LIdx), `*` (a number and an LIdx),
    `reverse` (an LIdx; n - 1 - it, n the length of the list dim it indexes) or `ind` (an
    index list's name and an LIdx: that list's entry)."""

    op: str
    args: tuple
    loc: Loc | None = _loc()

    def variables(self) -> Iterator[str]:
        """The loop variables it uses."""
        if self.op == "var":
            yield self.args[0]
        for a in self.args:
            if isinstance(a, LIdx):
                yield from a.variables()

    def tables(self) -> Iterator["LIdx"]:
        """Its indirect accesses (op `ind`)."""
        if self.op == "ind":
            yield self
        for a in self.args:
            if isinstance(a, LIdx):
                yield from a.tables()


@dataclass(frozen=True)
class Access(Expr):
    """`tensor[indices]`, or `tensor[lists; indices]` for an element of a list tensor; a list
    access may name a `fallback` access read where its list indices are out of range."""

    tensor: str
    indices: tuple[str, ...]
    loc: Loc | None = _loc()
    index_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)
    lists: tuple[LIdx, ...] = ()
    fallback: "Access | None" = None

    def children(self):
        return () if self.fallback is None else (self.fallback,)


@dataclass(frozen=True)
class Const(Expr):
    value: float
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Binary(Expr):
    op: str  # one of + - * /
    lhs: Expr
    rhs: Expr
    loc: Loc | None = _loc()

    def children(self):
        return (self.lhs, self.rhs)


@dataclass(frozen=True)
class Call(Expr):
    func: str
    args: tuple[Expr, ...]
    loc: Loc | None = _loc()

    def children(self):
        return self.args


@dataclass(frozen=True)
class Reduce(Expr):
    op: str  # sum | max
    indices: tuple[str, ...]
    body: Expr
    loc: Loc | None = _loc()
    implicit: bool = field(default=False, compare=False)

    def children(self):
        return (self.body,)


@dataclass(frozen=True)
class DimDecl:
    name: str
    size: int | None  # None: bound from data
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class TensorDecl:
    name: str
    dims: tuple[str | int, ...]  # a declared dim name or a fixed size
    format: Format
    loc: Loc | None = _loc()
    dim_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)
    format_loc: Loc | None = _loc()
    lists: tuple[str | int, ...] = ()  # list dims (before `;`); `dims` are the element's
    list_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)

    @property
    def order(self) -> int:
        """The number of element dims (list dims excluded)."""
        return len(self.dims)


@dataclass(frozen=True)
class IndexDecl:
    """`index p[T] = 3, 1, 0`: a constant list of list positions for indirect access."""

    name: str
    dim: str | int
    values: tuple[int, ...]
    loc: Loc | None = _loc()
    dim_loc: Loc | None = _loc()


@dataclass(frozen=True)
class Assignment:
    """`lhs = rhs`; after checking, `expr` is `rhs` with every implicit sum made explicit."""

    lhs: Access
    rhs: Expr
    loc: Loc | None = _loc()
    expr: Expr | None = None
    index_dims: tuple[tuple[str, str | int], ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        """A statement is named by the tensor it assigns (each tensor is assigned once)."""
        return self.lhs.tensor


@dataclass(frozen=True)
class Loop:
    """A loop over list dim `dim` (docs/language.md, "Lists and loops"). `kind` is `map`
    (independent iterations), `scan` or `fold`. With a `state` (`S = fold v in L from INIT
    {...}`) the body reads the current state as `S[...]` and assigns the next one; a fold's
    result is the last state, a scan's the list of every state. Without a state (`scan v in L
    {...}`) the body writes list elements and may read those of earlier iterations."""

    kind: str
    var: str
    dim: str | int
    body: tuple["Assignment | Loop", ...]
    state: str | None = None
    init: Access | None = None
    loc: Loc | None = _loc()
    dim_loc: Loc | None = _loc()

    def statements(self) -> Iterator["Assignment"]:
        """Every assignment of the body, nested loops' included, in order."""
        for item in self.body:
            if isinstance(item, Loop):
                yield from item.statements()
            else:
                yield item


@dataclass(frozen=True)
class Schedule:
    """`schedule v: MODE`: how the loop over variable v is compiled: `unroll` (the default),
    `reuse` (one configuration of the body's graphs, run once per iteration) or `wavefront`
    (the inner of two nested scans: iterations in anti-diagonal order, a diagonal's in parallel
    lanes)."""

    var: str
    mode: str
    loc: Loc | None = _loc()
    mode_loc: Loc | None = _loc()


LOOP_MODES = ("unroll", "reuse", "wavefront")


def element_name(name: str, position: tuple[int, ...]) -> str:
    """The tensor name of list element `name[position]`, or of a tensor computed inside loops
    at iteration `position` (the loop variables' values, outer first): `W__3`, `H__1_5`. The
    unrolled program, the reference evaluator and the data files (one file per element) share
    it; a position () is the name itself."""
    return name if not position else f"{name}__{'_'.join(map(str, position))}"


@dataclass(frozen=True)
class Fuse:
    name: str
    statements: tuple[str, ...]
    loc: Loc | None = _loc()
    item_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Order:
    statement: str
    indices: tuple[str, ...]
    loc: Loc | None = _loc()
    item_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Parallelize:
    statement: str
    index: str
    factor: int
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Block:
    tensor: str
    size: int
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Output:
    tensors: tuple[str, ...]
    loc: Loc | None = _loc()
    item_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class DecomposePart:
    """One part of a format decomposition: `bcsr(16) >= 0.5` (format, block size, fill
    threshold) or the residual `csr` (no block, no threshold)."""

    format: Format
    block: int | None
    threshold: float | None
    loc: Loc | None = _loc()

    def text(self) -> str:
        out = self.format.name() + (f"({self.block})" if self.block is not None else "")
        return out + (f" >= {self.threshold!r}" if self.threshold is not None else "")


@dataclass(frozen=True)
class Decompose:
    """`decompose A: bcsr(16) >= 0.5, csr`: A is split into parts (docs/language.md, "Format
    decomposition"): the b x b blocks whose fill reaches a blocked part's threshold go to that
    part (parts in order), every other entry to the residual, the last part."""

    tensor: str
    parts: tuple[DecomposePart, ...]
    loc: Loc | None = _loc()

    def text(self) -> str:
        return f"decompose {self.tensor}: " + ", ".join(p.text() for p in self.parts)


Directive = Fuse | Order | Parallelize | Block | Output | Decompose | Schedule


@dataclass
class Program:
    """A parsed program: declarations, statements and schedule directives in source order."""

    source: Source | None
    dims: list[DimDecl] = field(default_factory=list)
    tensors: list[TensorDecl] = field(default_factory=list)
    statements: list[Assignment] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    # Programs with loops: `body` holds the top-level statements and loops in source order,
    # `indices` the index lists. After checking, `statements` and `tensors` are the unrolled
    # program's and `looped` the checked program with its loops (the reference evaluates it).
    body: list = field(default_factory=list)
    indices: list[IndexDecl] = field(default_factory=list)
    looped: "Program | None" = None
    # Loop schedules, from unrolling: per `reuse` loop, its variable and the statements of each
    # of its iterations (all instances, in order); per statement of a `wavefront` nest, its
    # anti-diagonal.
    reuse: list[tuple[str, list[list[str]]]] = field(default_factory=list)
    waves: dict[str, int] = field(default_factory=dict)
    # After checking: what is legal but likely not meant (diagnostics.Diagnostic, severity
    # "warning"); commands print them on stderr when they load the program (lang.load).
    warnings: list = field(default_factory=list, compare=False, repr=False)

    @property
    def loops(self) -> list[Loop]:
        return [x for x in self.body if isinstance(x, Loop)]

    def __setattr__(self, name: str, value) -> None:
        # the lists the lookups below index are kept as _Tracked lists, whose version tells
        # a lookup, without copying or comparing them, whether they changed since it was made
        if name in _TRACKED and type(value) is not _Tracked:
            value = _Tracked(value)
        object.__setattr__(self, name, value)

    # ---- lookups (valid after checking: names are then unique) ---------------------------
    def _derived(self, key: str, compute):
        """compute(self), kept until the statements, tensors or directives change (a search or
        walk of the whole program per lookup made fusing an unrolled loop quadratic in its
        statements): the lists are _Tracked, so a lookup compares three list identities and
        three version numbers, whatever the program's size."""
        sts, tns, drs = self.statements, self.tensors, self.directives
        snap = (sts, sts.version, tns, tns.version, drs, drs.version)
        cache = self.__dict__.setdefault("_derived_cache", {})
        hit = cache.get(key)
        if hit is None or not _same_snapshot(hit[0], snap):
            hit = cache[key] = (snap, compute(self))
        return hit[1]

    def tensor(self, name: str) -> TensorDecl:
        t = self._derived("tensor", _tensor_index).get(name)
        if t is None:
            raise StopIteration(name)   # as the search this replaces: no such tensor
        return t

    def positions(self) -> dict[str, int]:
        """Statement name -> its position in `statements` (shared: do not modify)."""
        return self._derived("positions", lambda p: {s.name: k
                                                     for k, s in enumerate(p.statements)})

    def readers(self) -> dict[str, tuple[str, ...]]:
        """Tensor -> the statements reading it, in program order (shared: do not modify)."""
        return self._derived("readers", _reader_index)

    def statement(self, name: str) -> Assignment:
        s = self._derived("statement", _statement_index).get(name)
        if s is None:
            raise StopIteration(name)   # as the search this replaces: no such statement
        return s

    def dim(self, name: str) -> DimDecl:
        return next(d for d in self.dims if d.name == name)

    @property
    def assigned(self) -> list[str]:
        """Tensors computed by the program, in statement order."""
        return list(self._derived("assigned", lambda p: [s.name for s in p.statements]))

    @property
    def inputs(self) -> list[str]:
        """Declared tensors that no statement assigns, in declaration order."""
        assigned = set(self.assigned)
        return [t.name for t in self.tensors if t.name not in assigned]

    @property
    def outputs(self) -> list[str]:
        """Assigned tensors that no statement reads, plus those named by `output`, in statement
        order."""
        return list(self._derived("outputs", _outputs))

    # The directive lookups below are indexes (one per kind, kept as `_derived`): an unrolled
    # loop has a directive per iteration, and a search per statement was quadratic.
    def regions(self) -> list[Fuse]:
        return list(self._derived("regions", lambda p: [d for d in p.directives
                                                        if isinstance(d, Fuse)]))

    def region_of(self, statement: str) -> Fuse | None:
        return self._derived("region_of", lambda p: _first_by(
            p.regions(), lambda r: r.statements)).get(statement)

    def order_of(self, statement: str) -> Order | None:
        return self._derived("order_of", lambda p: _first_by(
            (d for d in p.directives if isinstance(d, Order)),
            lambda d: (d.statement,))).get(statement)

    def block_size(self, tensor: str) -> int | None:
        d = self._derived("block", lambda p: _first_by(
            (d for d in p.directives if isinstance(d, Block)), lambda d: (d.tensor,))).get(tensor)
        return None if d is None else d.size

    def decompositions(self) -> list[Decompose]:
        return [d for d in self.directives if isinstance(d, Decompose)]

    def parallelizations(self, statement: str) -> list[Parallelize]:
        index = self._derived("parallel", _parallel_index)
        return list(index.get(statement, ()))

    def specs(self):
        """TensorSpecs of every declared tensor (for the data loaders)."""
        from ..data.spec import TensorSpec
        return [TensorSpec(t.name, t.dims, t.format, self.block_size(t.name))
                for t in self.tensors]


_TRACKED = ("statements", "tensors", "directives")


def _counting(method):
    """`method` of list, bumping the list's version first (see _Tracked)."""
    def bump(self, *args, **kwargs):
        self.version += 1
        return method(self, *args, **kwargs)
    bump.__name__, bump.__doc__ = method.__name__, method.__doc__
    return bump


class _Tracked(list):
    """A list that counts its changes (`version`): Program keeps its statements, tensors and
    directives in these, so that its lookups know when to rebuild their indexes without
    comparing the lists. Every method that changes a list in place bumps the version."""

    __slots__ = ("version",)

    def __init__(self, items=()):
        super().__init__(items)
        self.version = 0

    append = _counting(list.append)
    extend = _counting(list.extend)
    insert = _counting(list.insert)
    pop = _counting(list.pop)
    remove = _counting(list.remove)
    clear = _counting(list.clear)
    reverse = _counting(list.reverse)
    sort = _counting(list.sort)
    __setitem__ = _counting(list.__setitem__)
    __delitem__ = _counting(list.__delitem__)
    __iadd__ = _counting(list.__iadd__)
    __imul__ = _counting(list.__imul__)

    def __reduce_ex__(self, protocol):   # copies and pickles: a _Tracked list, counting anew
        return (_Tracked, (list(self),))


def _same_snapshot(a: tuple, b: tuple) -> bool:
    """Whether two (statements, version, tensors, version, directives, version) snapshots are
    of the same three lists at the same versions."""
    return (a[0] is b[0] and a[2] is b[2] and a[4] is b[4]
            and a[1] == b[1] and a[3] == b[3] and a[5] == b[5])


def _statement_index(p: Program) -> dict[str, Assignment]:
    index: dict[str, Assignment] = {}
    for s in p.statements:
        index.setdefault(s.name, s)   # the first of a name, as a search finds it
    return index


def _first_by(items, keys) -> dict:
    """key -> the first item whose keys(item) holds it."""
    index: dict = {}
    for x in items:
        for k in keys(x):
            index.setdefault(k, x)
    return index


def _parallel_index(p: Program) -> dict[str, list[Parallelize]]:
    index: dict[str, list[Parallelize]] = {}
    for d in p.directives:
        if isinstance(d, Parallelize):
            index.setdefault(d.statement, []).append(d)
    return index


def _tensor_index(p: Program) -> dict[str, TensorDecl]:
    index: dict[str, TensorDecl] = {}
    for t in p.tensors:
        index.setdefault(t.name, t)   # the first of a name, as a search finds it
    return index


def _reader_index(p: Program) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for s in p.statements:
        for t in dict.fromkeys(a.tensor for a in s.rhs.walk() if isinstance(a, Access)):
            index.setdefault(t, []).append(s.name)
    return {t: tuple(names) for t, names in index.items()}


def _outputs(p: Program) -> list[str]:
    read = p.readers()
    named = {t for d in p.directives if isinstance(d, Output) for t in d.tensors}
    return [s.name for s in p.statements if s.name not in read or s.name in named]


def indices_of(e: Expr) -> list[str]:
    """The free index variables of `e` in order of first appearance (reduced ones excluded)."""
    out: list[str] = []

    def visit(x: Expr, bound: frozenset[str]) -> None:
        if isinstance(x, Access):
            for i in x.indices:
                if i not in bound and i not in out:
                    out.append(i)
        elif isinstance(x, Reduce):
            visit(x.body, bound | set(x.indices))
        else:
            for c in x.children():
                visit(c, bound)

    visit(e, frozenset())
    return out


def all_indices(s: Assignment) -> list[str]:
    """Every index variable of a statement: left side first, then the right side's (reduced
    ones included), in order of first appearance."""
    out = list(s.lhs.indices)
    for a in s.rhs.walk():
        if isinstance(a, Access):
            out.extend(i for i in a.indices if i not in out)
    return out

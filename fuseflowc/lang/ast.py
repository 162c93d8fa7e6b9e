"""The program IR: dataclass AST nodes of the fuseflowc language, each with its source location.

Expressions: `Access` (a tensor indexed by index variables), `Const`, `Binary` (+ - * /), `Call`
(a unary function, binary max/min, or mask), `Reduce` (sum or max over named indices).
Locations (`loc`) are excluded from equality so that rewritten trees compare by content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ..diagnostics import Loc, Source
from ..formats import Format

# Function name -> number of arguments. Unary functions act on stored entries only.
UNARY_FUNCS = ("relu", "exp", "neg", "sqrt", "rsqrt", "sigmoid", "tanh", "gelu")
BINARY_FUNCS = ("max", "min", "mask")
FUNC_ARITY = {**{f: 1 for f in UNARY_FUNCS}, **{f: 2 for f in BINARY_FUNCS}}
REDUCE_OPS = ("sum", "max")


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
class Access(Expr):
    tensor: str
    indices: tuple[str, ...]
    loc: Loc | None = _loc()
    index_locs: tuple[Loc, ...] = field(default=(), compare=False, repr=False)


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

    @property
    def order(self) -> int:
        return len(self.dims)


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


Directive = Fuse | Order | Parallelize | Block | Output | Decompose


@dataclass
class Program:
    """A parsed program: declarations, statements and schedule directives in source order."""

    source: Source | None
    dims: list[DimDecl] = field(default_factory=list)
    tensors: list[TensorDecl] = field(default_factory=list)
    statements: list[Assignment] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)

    # ---- lookups (valid after checking: names are then unique) ---------------------------
    def tensor(self, name: str) -> TensorDecl:
        return next(t for t in self.tensors if t.name == name)

    def statement(self, name: str) -> Assignment:
        return next(s for s in self.statements if s.name == name)

    def dim(self, name: str) -> DimDecl:
        return next(d for d in self.dims if d.name == name)

    @property
    def assigned(self) -> list[str]:
        """Tensors computed by the program, in statement order."""
        return [s.name for s in self.statements]

    @property
    def inputs(self) -> list[str]:
        """Declared tensors that no statement assigns, in declaration order."""
        assigned = set(self.assigned)
        return [t.name for t in self.tensors if t.name not in assigned]

    @property
    def outputs(self) -> list[str]:
        """Assigned tensors that no statement reads, plus those named by `output`, in statement
        order."""
        read = {a.tensor for s in self.statements for a in s.rhs.walk() if isinstance(a, Access)}
        named = {t for d in self.directives if isinstance(d, Output) for t in d.tensors}
        return [n for n in self.assigned if n not in read or n in named]

    def regions(self) -> list[Fuse]:
        return [d for d in self.directives if isinstance(d, Fuse)]

    def region_of(self, statement: str) -> Fuse | None:
        return next((r for r in self.regions() if statement in r.statements), None)

    def order_of(self, statement: str) -> Order | None:
        return next((d for d in self.directives
                     if isinstance(d, Order) and d.statement == statement), None)

    def block_size(self, tensor: str) -> int | None:
        return next((d.size for d in self.directives
                     if isinstance(d, Block) and d.tensor == tensor), None)

    def decompositions(self) -> list[Decompose]:
        return [d for d in self.directives if isinstance(d, Decompose)]

    def parallelizations(self, statement: str) -> list[Parallelize]:
        return [d for d in self.directives
                if isinstance(d, Parallelize) and d.statement == statement]

    def specs(self):
        """TensorSpecs of every declared tensor (for the data loaders)."""
        from ..data.spec import TensorSpec
        return [TensorSpec(t.name, t.dims, t.format, self.block_size(t.name))
                for t in self.tensors]


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

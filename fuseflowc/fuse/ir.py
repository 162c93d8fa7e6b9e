"""The fused einsum IR: what `fuseflowc fuse` writes and `fuseflowc lower` reads (docs/fused-ir.md).

A `FusedProgram` holds the program's dims and tensor declarations (with roles) and a list of
`Region`s in execution order; each region is one dataflow graph. A region holds
- `exprs`: expression instances (`Instance`): a statement's right side in global index names,
  reductions explicit. A producer inlined into several consumers with different index bindings
  has one instance per binding (recomputation); equal bindings share one instance.
- `views`: one per distinct (tensor, index map) read in the region, with its kind and mode order.
- `edges`: the partial order graph (POG) over the region's index variables, every edge with the
  statement and reason that imposed it.
- `order`: the chosen global dataflow order (outer to inner) and its index K in the enumeration
  (`fuseflowc orders` counts them).
Expressions reuse the program AST node classes (fuseflowc.lang.ast) so lowering walks one kind of
tree. Plain Python: this module is on the compile path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Loc
from ..formats import Format
from ..lang import ast

TENSOR_ROLES = ("input", "output", "intermediate", "permuted", "part")
VIEW_KINDS = ("input", "inline", "materialized", "permuted", "shared")
EDGE_KINDS = ("format", "order", "output", "shared")


@dataclass
class TensorInfo:
    """A tensor of the compiled program. `role`: input (read from data), output (a program
    output), intermediate (computed, read by a later statement), permuted (a copy of `copy_of`
    stored in another mode order or blocking, made by lowering/simulation before the region that
    reads it), part (a part of the decomposed input `copy_of`: its blocks whose fill reaches
    `threshold`, or the residual when `threshold` is None; docs/language.md, "Format
    decomposition")."""

    name: str
    dims: tuple[str | int, ...]
    format: Format
    role: str
    block: int | None = None
    copy_of: str | None = None
    loc: Loc | None = field(default=None, compare=False, repr=False)
    threshold: float | None = None


@dataclass
class View:
    """One use (or several equivalent uses) of a tensor in a region.

    `indices[m]` is the global index variable bound to logical mode m; `mode_order` lists the
    bound indices outer to inner: the tensor format's storage order for input / materialized /
    permuted views, the region's chosen order for inline views (the producer generates the
    intermediate in whatever order the region iterates). `producer` names the instance that
    computes an inline view, or the one instance whose stream a `shared` view reads (--share:
    an intermediate computed once in the graph, its stream fanned out to every reader; the
    view's mode order is the tensor's storage order, the order the stream comes in).
    """

    id: str
    tensor: str
    indices: tuple[str, ...]
    kind: str
    mode_order: tuple[str, ...]
    producer: str | None = None
    copy_of: str | None = None  # the original tensor of a permuted view
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass
class Instance:
    """A statement's computation bound to global index variables.

    `lhs` binds the statement's left-side indices; `expr` is the right side with explicit
    reductions over fresh indices; `index_map` maps each of the statement's own index names to
    its global name(s) (a name reduced by two separate reductions maps to two); `writes` says
    this instance's result is stored in the tensor's declared format (a region output, or an
    intermediate read by another region or materialized)."""

    id: str
    statement: str
    lhs: tuple[str, ...]
    expr: ast.Expr
    index_map: tuple[tuple[str, str], ...]
    writes: bool = False
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Edge:
    """POG edge src -> dst (src iterated outside dst) and why: `kind` format (a view's storage
    mode order: `tensor`, `view`), order (the `order` directive of `statement`), output (the
    declared format of the tensor `statement` writes) or shared (--share: a reader of the
    shared intermediate `statement` iterates its innermost index outside its own other
    indices, so that it reads each row of the stream once)."""

    src: str
    dst: str
    kind: str
    statement: str
    tensor: str | None = None
    view: str | None = None
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def reason(self) -> str:
        """Human text of the edge's origin, for messages."""
        if self.kind == "format":
            return f"storage order of {self.tensor} (view {self.view}) read by {self.statement}"
        if self.kind == "order":
            return f"order directive of {self.statement}"
        if self.kind == "shared":
            return (f"shared stream of {self.statement} (a reader iterates its rows once, its "
                    f"other loops inside them)")
        return f"output format of {self.statement}"


@dataclass(frozen=True)
class Parallel:
    """`parallelize statement: local by factor`, with `index` the global name of `local`."""

    statement: str
    local: str
    index: str
    factor: int


@dataclass
class Region:
    """One dataflow graph. `group` is the fusion region (fuse directive) it comes from, None for a
    statement compiled alone (`unfused`). A fusion region whose intermediates had to be
    materialized is split into several regions named group.1, group.2, ..."""

    name: str
    group: str | None
    statements: tuple[str, ...]
    indices: list[tuple[str, str | int]] = field(default_factory=list)  # canonical order
    exprs: list[Instance] = field(default_factory=list)
    views: list[View] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    order: tuple[str, ...] = ()
    order_index: int = 0
    materialized: tuple[str, ...] = ()
    parallel: list[Parallel] = field(default_factory=list)
    loc: Loc | None = field(default=None, compare=False, repr=False)
    order_loc: Loc | None = field(default=None, compare=False, repr=False)
    # why the fusion group was split (not printed): (why a tensor is materialized, the
    # location of its statement), for `fuse`'s note
    split_why: tuple = field(default=(), compare=False, repr=False)
    #: A region of a later iteration of a reused loop that is iteration 0 rebound: (loop
    #: variable, iteration), and the iteration-0 region it renames (`template`). The printer
    #: writes such an iteration as one `reuse l K = 0 {...}` line (fuseflowc.fuse.rebind).
    bound: tuple[str, int] | None = None
    template: str | None = None

    @property
    def unfused(self) -> bool:
        return self.group is None

    def index_names(self) -> list[str]:
        return [n for n, _ in self.indices]

    def source_names(self) -> dict[str, tuple[str, ...]]:
        """The program's names of the region's renamed indices, from the instances' index maps
        ({"u0": ("j",)}; see fuseflowc.names), for human-facing views."""
        from ..names import source_names
        names = source_names([p for e in self.exprs for p in e.index_map])
        return {x: names[x] for x in self.index_names() if x in names}

    def view(self, vid: str) -> View:
        return next(v for v in self.views if v.id == vid)

    def instance(self, eid: str) -> Instance:
        return next(e for e in self.exprs if e.id == eid)


@dataclass
class FusedProgram:
    """The whole fused IR: source program path, dims, tensors, regions in execution order."""

    source: str | None
    dims: list[tuple[str, int | None]] = field(default_factory=list)
    tensors: list[TensorInfo] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    #: Loop schedules of the program (fuseflowc.lang.unroll): per reused loop, its variable
    #: and each iteration's statements; per statement of a wavefront nest, its anti-diagonal.
    reuse: list[tuple[str, list[list[str]]]] = field(default_factory=list)
    waves: dict[str, int] = field(default_factory=dict)
    #: The later iterations of reused loops that are iteration 0 rebound: (loop variable,
    #: iteration) -> {iteration 0's name: iteration K's} for every name that differs (tensors,
    #: statements, fusion groups), in order of first appearance in iteration 0's regions.
    bindings: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)

    def tensor(self, name: str) -> TensorInfo:
        return next(t for t in self.tensors if t.name == name)

    def region(self, name: str) -> Region:
        return next(r for r in self.regions if r.name == name)

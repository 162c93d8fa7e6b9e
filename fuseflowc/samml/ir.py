"""The SAMML dataflow graph IR: streams, one node class per primitive kind, graphs and modules.

A `Module` holds tensor declarations (`TensorDecl`) and one or more `Graph`s run in sequence. A
graph is a list of nodes; each node consumes input `Stream`s and defines output `Stream`s. A
stream has exactly one producer (SSA) and any number of consumers (implicit fan-out = broadcast).

Every stream has a kind: `crd` (coordinates), `ref` (references), `val` (values) or `repsig`
(repeat signals). Each node class declares its ports (`signature()`) and attributes (dataclass
fields made with `attr()`); `KINDS` maps the textual kind name to the class.

Building a graph in Python:

    g = Graph("spmv")
    r0 = g.add(Root(tensor="A"))
    ci, ri = g.add(Scan(tensor="A", mode=0, format="dense", index="i"), r0)
    cj, rj = g.add(Scan(tensor="A", mode=1, format="compressed", index="j"), ri)
    m = Module([TensorDecl("A", ("N", "M"), shorthand("csr", 2), "input")], [g])

`Graph.add(node, *inputs)` returns the single output stream, or a tuple when the node has zero or
several outputs. Attributes are validated by `fuseflowc.samml.verify.verify`, not at construction
(so that the parser can build a graph with mistakes and report them all with locations).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

from .. import limits
from ..data.spec import TensorSpec
from ..diagnostics import Loc
from ..fabric import TILE_CLASSES
from ..formats import KINDS, Format
from ..ops import ALU_BINARY, ALU_OPS, ALU_SCALAR, REDUCE_OPS

# ---- streams ----------------------------------------------------------------------------------

STREAM_KINDS = ("crd", "ref", "val", "repsig")
#: Prefix of canonical stream names per kind (%c0, %r0, %v0, %s0); unknown kind -> %x.
KIND_PREFIX = {"crd": "c", "ref": "r", "val": "v", "repsig": "s", None: "x"}

#: The stream kind an output port shares with input 0 (polymorphic repeat, fork, join).
SAME = "same"


class Stream:
    """A named stream value. `producer` is the node defining it (None while unresolved), `index`
    its position among the producer's outputs; `name` is a hint (the parsed name), `loc` where
    it was defined."""

    __slots__ = ("kind", "producer", "index", "name", "loc")

    def __init__(self, kind: str | None, producer: "Node | None" = None, index: int = 0,
                 name: str | None = None, loc: Loc | None = None):
        self.kind = kind
        self.producer = producer
        self.index = index
        self.name = name
        self.loc = loc

    def __repr__(self) -> str:
        return f"Stream({self.kind}, %{self.name})" if self.name else f"Stream({self.kind})"


@dataclass(frozen=True)
class Port:
    """One input or output port: `name` for messages, `kinds` the stream kinds it accepts
    (a tuple; `(SAME,)` means the kind of input 0)."""

    name: str
    kinds: tuple[str, ...]

    def text(self) -> str:
        return "|".join(self.kinds)


@dataclass(frozen=True)
class Signature:
    """A node's ports for a given number of operands; `arity` is how the expected operand
    count reads in an error message (e.g. '2n operands, (crd, ref) pairs with n >= 2')."""

    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    arity: str = ""


#: The fabric tile classes a kind may occupy ("" for none).
TILES = ("",) + TILE_CLASSES
#: The [block] cost classes of sim/arch.toml: what a kind handling b x b blocks costs
#: (`elementwise` for the ALU, whose op `bmm` costs `bmm` instead).
TIMINGS = ("elementwise", "load", "reduce")
#: How a kind carries tensor references, the rule samml.verify follows them by: `root` makes a
#: tensor's root reference, `scan`/`locate` read a level through them, `array` reads the values,
#: `through` passes operand 0's on to every result, `pairs` (joiners) each payload's, `writer`
#: writes a tensor, `spill` records a stream in a DRAM buffer (its references' origin kept),
#: `replay` reads one back (carrying that origin), `none` neither reads nor makes any.
REFS = ("none", "root", "scan", "locate", "array", "through", "pairs", "writer", "spill",
        "replay")


@dataclass(frozen=True)
class Traits:
    """What the layers ask of a primitive kind, declared once on its node class (`TRAITS`) so
    that no layer keeps its own list of kinds (fuseflowc.samml.kinds answers by kind name).

    `tile`: the fabric tile class a node occupies (TILES; samml.tiles counts them).
    `laned`: `opt -p parallelize` may copy it into lanes (it keeps whole units of an enclosing
    index intact); the others stay one serial node.
    `timing`: its [block] cost class in sim/arch.toml when it handles b x b blocks (TIMINGS), or
    None: it costs its latency and ii whatever the values (sim.arch.Arch.timing).
    `accumulates`: a reducer's order, the number of inner levels it accumulates (0 reduce, k the
    order-k sparse accumulator, whose buffer holds k levels in memory tiles), or None.
    `refs`: how it carries tensor references (REFS), the verifier's rule for it."""

    tile: str
    laned: bool = False
    timing: str | None = None
    accumulates: int | None = None
    refs: str = "none"

    def __post_init__(self):
        for name, value, known in (("tile", self.tile, TILES), ("refs", self.refs, REFS),
                                   ("timing", self.timing, (None, *TIMINGS))):
            if value not in known:
                raise ValueError(f"Traits {name}={value!r}: not one of {known}")

    @property
    def buffered(self) -> bool:
        """Whether a node keeps a buffer sized by the data (an accumulator of order >= 1): its
        memory tiles are as many as the buffer's bytes need, each firing moves one element
        in and out of it (sim.energy)."""
        return bool(self.accumulates)


def _p(name: str, *kinds: str) -> Port:
    return Port(name, kinds)


# ---- attributes -------------------------------------------------------------------------------

#: Attribute value types: `ident` a name (tensor, index variable), `int`, `nat` an int >= 0,
#: `pos` an int >= 1, `float`, `enum` one of `choices`, `int_list` a list of ints >= 0,
#: `ident_list` a list of names (the inner index labels of block values, `[i, k]`).
ATTR_TYPES = ("ident", "int", "nat", "pos", "float", "enum", "int_list", "ident_list")


def attr(type: str, *, choices: tuple[str, ...] = (), required: bool = True, default: Any = None,
         doc: str = "") -> Any:
    """Declare a node attribute as a dataclass field (keyword-only, default `default`).

    `required` attributes must be set (not None) for the node to verify."""
    assert type in ATTR_TYPES
    meta = {"attr": type, "choices": choices, "required": required, "doc": doc}
    if isinstance(default, list):
        return field(default_factory=lambda d=tuple(default): list(d), kw_only=True, metadata=meta)
    return field(default=default, kw_only=True, metadata=meta)


@dataclass(frozen=True)
class AttrSpec:
    """The declaration of one attribute of a node class (see `attr`)."""

    name: str
    type: str
    choices: tuple[str, ...]
    required: bool
    default: Any
    doc: str


def attr_specs_of(cls: type) -> tuple[AttrSpec, ...]:
    """The `attr()` fields of dataclass `cls` (a node kind or `Schedule`), in declaration order."""
    got = _ATTR_SPECS.get(cls)
    if got is None:   # once per class: the verifier and printer ask per node and attribute
        got = _ATTR_SPECS[cls] = _attr_specs(cls)
    return got


_ATTR_SPECS: dict = {}   # class (or class, "printed") -> its attribute specs
_FIXED_SIGNATURES: dict = {}   # class -> its Signature (kinds whose arity is fixed)


def _attr_specs(cls: type) -> tuple[AttrSpec, ...]:
    specs = []
    for f in dataclasses.fields(cls):
        if "attr" in f.metadata:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            specs.append(AttrSpec(f.name, f.metadata["attr"], f.metadata["choices"],
                                  f.metadata["required"], default, f.metadata["doc"]))
    return tuple(specs)


# ---- nodes ------------------------------------------------------------------------------------

@dataclass(eq=False)
class Node:
    """Base of all primitive kinds. Subclasses set `KIND`, `REGION` (for pictures: `iteration`,
    `compute` or `construction`), `TRAITS`, `INPUTS`/`OUTPUTS` (or override `signature`),
    declare their attributes with `attr()` and may add rules of their own (`verify_`). Every
    node has an optional `lane` (which parallel lane it belongs to, set by parallelization).
    `inputs`/`outputs` are filled by `Graph.add` or the parser."""

    KIND: ClassVar[str] = ""
    REGION: ClassVar[str] = "compute"
    #: Set by every kind (Traits); KINDS refuses a kind without.
    TRAITS: ClassVar[Traits]
    INPUTS: ClassVar[tuple[Port, ...]] = ()
    OUTPUTS: ClassVar[tuple[Port, ...]] = ()

    lane: int | None = attr("nat", required=False, doc="parallel lane this node belongs to")
    inputs: list[Stream] = field(default_factory=list, init=False, repr=False, compare=False)
    outputs: list[Stream] = field(default_factory=list, init=False, repr=False, compare=False)
    loc: Loc | None = field(default=None, init=False, repr=False, compare=False)
    #: Locations of the operands, results and attributes (set by the parser; for messages).
    operand_locs: list[Loc] = field(default_factory=list, init=False, repr=False, compare=False)
    result_locs: list[Loc] = field(default_factory=list, init=False, repr=False, compare=False)
    attr_locs: dict[str, Loc] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def kind(self) -> str:
        """The textual kind name (e.g. 'scan')."""
        return self.KIND

    @classmethod
    def attr_specs(cls) -> tuple[AttrSpec, ...]:
        """The attributes of this kind, in printing order (the kind's own first, `lane` last)."""
        got = _ATTR_SPECS.get((cls, "printed"))
        if got is None:
            specs = attr_specs_of(cls)
            # `lane` is declared on the base (first); print it last.
            got = _ATTR_SPECS[(cls, "printed")] = (tuple(s for s in specs if s.name != "lane")
                                                   + tuple(s for s in specs if s.name == "lane"))
        return got

    def attrs(self) -> dict[str, Any]:
        """Attribute name -> current value, in printing order."""
        return {s.name: getattr(self, s.name) for s in self.attr_specs()}

    def signature(self, n_inputs: int | None = None) -> Signature:
        """The ports of this node given its number of operands (variadic kinds need it)."""
        # A fixed-arity kind has one signature: made once per class (the verifier asks for it
        # several times per node, and per pass).
        cls = type(self)
        sig = _FIXED_SIGNATURES.get(cls)
        if sig is None:
            sig = _FIXED_SIGNATURES[cls] = Signature(
                cls.INPUTS, cls.OUTPUTS,
                f"{len(cls.INPUTS)} operand" + ("" if len(cls.INPUTS) == 1 else "s"))
        return sig

    def output_kinds(self, input_kinds: list[str | None]) -> list[str | None]:
        """The kinds of the outputs, given the kinds of the actual inputs."""
        sig = self.signature(len(input_kinds))
        first = input_kinds[0] if input_kinds else None
        return [first if p.kinds == (SAME,) else p.kinds[0] for p in sig.outputs]

    def verify_(self) -> list[tuple[str, str | None]]:
        """The kind's own rules beyond its ports and its attributes' types, as (message, the
        attribute to point at or None for the node); samml.verify reports them. Values of the
        wrong type are left to the type checks (skip them here)."""
        return []

    def label(self) -> str:
        """A short human label: kind and key attributes (for pictures and messages)."""
        parts = [self.KIND]
        for key in ("tensor", "mode", "index", "op", "const", "lanes"):
            if hasattr(self, key) and getattr(self, key) is not None:
                parts.append(f"{key}={getattr(self, key)}")
        return " ".join(parts)


# -- input iteration -----------------------------------------------------------------------------

@dataclass(eq=False)
class Root(Node):
    """The root reference of a tensor: emits `0, D`. () -> ref."""

    KIND: ClassVar[str] = "root"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="", refs="root")
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("ref", "ref"),)
    tensor: str = attr("ident", doc="the tensor whose root this is")


@dataclass(eq=False)
class Scan(Node):
    """A level scanner (fiber lookup) of storage level holding logical `mode` of `tensor`.
    (ref) -> (crd, ref). A dense level's size is the tensor's extent at `mode`. `format` is the
    level's kind (fuseflowc.formats.KINDS): `fixed` scans a compressed(c) level (no seg, padding
    dropped), `nonunique` COO's first level (one coordinate per run of equal ones, its ref the
    run's first position), `singleton` the level below it (the run's coordinates)."""

    KIND: ClassVar[str] = "scan"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", laned=True, refs="scan")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("ref", "ref"),)
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"), _p("ref", "ref"))
    tensor: str = attr("ident", doc="scanned tensor")
    mode: int = attr("nat", doc="logical mode (dimension) of the tensor this level stores")
    format: str = attr("enum", choices=KINDS, doc="level format")
    index: str = attr("ident", doc="index variable the coordinates belong to")


@dataclass(eq=False)
class Repsig(Node):
    """Repeat-signal generator: `R` per coordinate, `S` per stop, `D`. (crd) -> (repsig)."""

    KIND: ClassVar[str] = "repsig"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"),)
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("repsig", "repsig"),)
    index: str = attr("ident", doc="index variable repeated over")


@dataclass(eq=False)
class Repeat(Node):
    """Repeat a ref (broadcast an operand across an index it lacks) or a val (broadcast a reduced
    value back across a fiber). (ref|val, repsig) -> (same kind as input 0)."""

    KIND: ClassVar[str] = "repeat"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, refs="through")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("in", "ref", "val"), _p("repsig", "repsig"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("out", SAME),)
    index: str = attr("ident", doc="index variable repeated over")


def _pairs(n_inputs: int | None) -> int:
    """Number of (crd, ref) operand pairs of a joiner given its operand count (at least 2)."""
    return max(2, (n_inputs or 4) // 2)


_JOIN_ARITY = "2n operands, (crd, ref) pairs with n >= 2"
#: Stream kinds a joiner accepts (and forwards unchanged) on its ref ports.
PAYLOAD_KINDS = ("ref", "val", "crd")


@dataclass(eq=False)
class _Joiner(Node):
    """Shared ports of intersect and union (not a kind itself)."""

    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, refs="pairs")
    index: str = attr("ident", doc="index variable joined on")

    def signature(self, n_inputs: int | None = None) -> Signature:
        n = _pairs(n_inputs)
        # A joiner treats refs as opaque payloads: a val (or crd) stream may ride along a
        # coordinate stream (lowering joins a reduced intermediate's values this way).
        ins = tuple(p for i in range(n)
                    for p in (_p(f"crd{i}", "crd"), _p(f"ref{i}", *PAYLOAD_KINDS)))
        outs = (_p("crd", "crd"),) + tuple(_p(f"ref{i}", "ref") for i in range(n))
        return Signature(ins, outs, _JOIN_ARITY)

    def output_kinds(self, input_kinds: list[str | None]) -> list[str | None]:
        """Each ref output has the kind of its payload input (ref, val or crd)."""
        n = _pairs(len(input_kinds))
        return ["crd"] + [input_kinds[2 * i + 1] if 2 * i + 1 < len(input_kinds) else "ref"
                          for i in range(n)]


@dataclass(eq=False)
class Intersect(_Joiner):
    """Intersection joiner: a coordinate present in every input, with every input's ref.
    (crd, ref) x n -> (crd, ref x n), n >= 2."""

    KIND: ClassVar[str] = "intersect"


@dataclass(eq=False)
class Union(_Joiner):
    """Union joiner: a coordinate present in any input and in every `required` input; absent
    inputs get `N` refs (required=[0] is a left join). (crd, ref) x n -> (crd, ref x n)."""

    KIND: ClassVar[str] = "union"
    required: list[int] = attr("int_list", required=False, default=[],
                               doc="input positions a coordinate must be present in")

    def verify_(self) -> list[tuple[str, str | None]]:
        """Every `required` position names an input pair."""
        if not isinstance(self.required, list):
            return []
        ways = len(self.inputs) // 2
        return [(f"union required input {r} does not exist (inputs are 0..{ways - 1})",
                 "required") for r in self.required if isinstance(r, int) and r >= ways]


@dataclass(eq=False)
class Locate(Node):
    """Locator (SAM's): the intersection of a coordinate stream with a DENSE level of `tensor`
    (the one holding `mode`) without scanning that level. A dense level is randomly accessible:
    the ref of coordinate c under parent ref p is p * size + c. For each fiber of the crd
    stream it takes the parent ref of the dense level's matching fiber and emits every
    coordinate with its own ref and the located one, i.e. exactly what
    `intersect crd, ref, scan(parent)` emits. (crd, ref|val|crd, parent ref) -> (crd, same
    kind as operand 2, ref). Made by `opt -p locate` (docs/opt.md)."""

    KIND: ClassVar[str] = "locate"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, refs="locate")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"), _p("ref", *PAYLOAD_KINDS),
                                          _p("parent", "ref"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"), _p("ref", "ref"),
                                           _p("located", "ref"))
    tensor: str = attr("ident", doc="tensor whose dense level is located into")
    mode: int = attr("nat", doc="logical mode that dense level stores")
    index: str = attr("ident", doc="index variable joined on")

    def output_kinds(self, input_kinds: list[str | None]) -> list[str | None]:
        """The ref output has the kind of its payload input (ref, val or crd)."""
        payload = input_kinds[1] if len(input_kinds) > 1 else "ref"
        return ["crd", payload, "ref"]


# -- computation ---------------------------------------------------------------------------------

@dataclass(eq=False)
class Array(Node):
    """Value array: loads the value at each ref; `N` loads 0; stops pass. Blocked tensors yield
    b x b blocks. (ref) -> (val)."""

    KIND: ClassVar[str] = "array"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", laned=True, timing="load", refs="array")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("ref", "ref"),)
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("val", "val"),)
    tensor: str = attr("ident", doc="tensor whose values are loaded")


@dataclass(eq=False)
class Alu(Node):
    """Arithmetic on values: binary (val, val) -> val for ALU_BINARY (bmm = b x b block matmul),
    unary (val) -> val for ALU_UNARY and ALU_SCALAR (`x op const`; fuseflowc.ops). Element-wise on blocks; stops
    pass and must line up; an `N` operand is the operation's identity."""

    KIND: ClassVar[str] = "alu"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, timing="elementwise")
    op: str = attr("enum", choices=ALU_OPS, doc="the operation")
    const: float | None = attr("float", required=False, doc="the constant of a scalar op")
    # Block einsum labels (docs/samml.md, "Blocked tensors"): the inner index of each axis of
    # the operands' and the result's block values. A label of an input missing from `out` is
    # contracted (summed: mul only); a label missing from an input broadcasts it.
    in0: list[str] | None = attr("ident_list", required=False, doc="block axes of operand a")
    in1: list[str] | None = attr("ident_list", required=False, doc="block axes of operand b")
    out: list[str] | None = attr("ident_list", required=False, doc="block axes of the result")

    def signature(self, n_inputs: int | None = None) -> Signature:
        if self.op in ALU_BINARY or (self.op not in ALU_OPS and n_inputs == 2):
            return Signature((_p("a", "val"), _p("b", "val")), (_p("val", "val"),),
                             f"2 operands (binary op {self.op})")
        return Signature((_p("a", "val"),), (_p("val", "val"),), f"1 operand (unary op {self.op})")

    def verify_(self) -> list[tuple[str, str | None]]:
        """A scalar op (`x op const`) has its constant; no other op has one."""
        if not isinstance(self.op, str):
            return []
        if self.op in ALU_SCALAR and self.const is None:
            return [(f"alu op {self.op} computes x {self.op[:-1]} const and needs attribute "
                     "'const'", None)]
        if self.op not in ALU_SCALAR and self.const is not None:
            return [(f"alu op {self.op} takes no constant (only the scalar ops "
                     f"{', '.join(ALU_SCALAR)} do)", "const")]
        return []


@dataclass(eq=False)
class _Reduction(Node):
    """Shared attributes of reduce and the sparse accumulators (not a kind itself)."""

    op: str = attr("enum", choices=REDUCE_OPS, doc="reduction")
    index: str = attr("ident", doc="the reduced index variable")
    # Block values: each input block (axes `in0`) is first reduced by `op` over its labels
    # missing from `out` (a reduction over an inner index), then accumulated.
    in0: list[str] | None = attr("ident_list", required=False, doc="block axes of the input")
    out: list[str] | None = attr("ident_list", required=False, doc="block axes of the result")


@dataclass(eq=False)
class Reduce(_Reduction):
    """Order-0 reducer over `index`: on S0 emits the result and resets; on Sk (k > 0) emits the
    result then S(k-1). An empty fiber yields an explicit 0. (val) -> (val)."""

    KIND: ClassVar[str] = "reduce"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, timing="reduce", accumulates=0)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("val", "val"),)
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("val", "val"),)


@dataclass(eq=False)
class Spacc1(_Reduction):
    """Order-1 sparse accumulator: accumulates (crd, val) points of the inner level across the
    reduced `index`; on Sk (k >= 1) emits the fiber sorted by crd, then S(k-1); S0 only ends an
    inner fiber. (crd, val) -> (crd, val)."""

    KIND: ClassVar[str] = "spacc1"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", laned=True, timing="reduce", accumulates=1)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"), _p("val", "val"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"), _p("val", "val"))


def _emit_empty() -> Any:
    """spacc2's and spacc3's `emit_empty` attribute (one declaration for both)."""
    return attr("enum", choices=("no", "yes"), required=False, default="no",
                doc="yes: every outer coordinate received is emitted, an empty fiber below "
                    "where nothing was accumulated")


@dataclass(eq=False)
class Spacc2(_Reduction):
    """Order-2 sparse accumulator over two inner levels; flushes on Sk with k >= 2 in the crd0
    stream. It emits an outer coordinate only with a point accumulated below it, unless
    `emit_empty = yes`: then every outer coordinate it receives, an empty fiber below where
    nothing was (lowering sets it where a join takes the outer level from another operand,
    docs/lowering.md "Full accumulator levels"). (crd1, crd0, val) -> (crd1, crd0, val)."""

    KIND: ClassVar[str] = "spacc2"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", laned=True, timing="reduce", accumulates=2)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd1", "crd"), _p("crd0", "crd"), _p("val", "val"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("crd1", "crd"), _p("crd0", "crd"), _p("val", "val"))
    emit_empty: str = _emit_empty()


@dataclass(eq=False)
class Spacc3(_Reduction):
    """Order-3 sparse accumulator over three inner levels; flushes on Sk with k >= 3 in the crd0
    stream (crd2 gets S(k-3), crd1 S(k-2), crd0 and val S(k-1)). `emit_empty` as spacc2's.
    (crd2, crd1, crd0, val) -> (crd2, crd1, crd0, val)."""

    KIND: ClassVar[str] = "spacc3"
    REGION: ClassVar[str] = "compute"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", timing="reduce", accumulates=3)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd2", "crd"), _p("crd1", "crd"), _p("crd0", "crd"),
                                          _p("val", "val"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("crd2", "crd"), _p("crd1", "crd"),
                                           _p("crd0", "crd"), _p("val", "val"))
    emit_empty: str = _emit_empty()


# -- tensor construction -------------------------------------------------------------------------

@dataclass(eq=False)
class _CrdPair(Node):
    """Shared ports of crddrop and crdhold (not a kind itself)."""

    REGION: ClassVar[str] = "construction"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True)
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("outer", "crd"), _p("inner", "crd"))
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("outer", "crd"), _p("inner", "crd"))
    outer: str | None = attr("ident", required=False, doc="outer index variable (for labels)")
    inner: str | None = attr("ident", required=False, doc="inner index variable (for labels)")


@dataclass(eq=False)
class CrdDrop(_CrdPair):
    """Coordinate drop: forwards an outer coordinate only if its inner fiber is non-empty (and
    drops that empty fiber's stop). (outer crd, inner crd) -> (outer crd, inner crd)."""

    KIND: ClassVar[str] = "crddrop"


@dataclass(eq=False)
class CrdHold(_CrdPair):
    """Coordinate hold: repeats the outer coordinate once per inner coordinate.
    (outer crd, inner crd) -> (outer crd, inner crd)."""

    KIND: ClassVar[str] = "crdhold"


@dataclass(eq=False)
class WriteLevel(Node):
    """Level writer of the storage level holding `mode` of `tensor` (compressed: builds seg and
    crd; dense: checks the size). (crd) -> ()."""

    KIND: ClassVar[str] = "write_level"
    REGION: ClassVar[str] = "construction"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", refs="writer")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("crd", "crd"),)
    tensor: str = attr("ident", doc="written tensor (an output or temp)")
    mode: int = attr("nat", doc="logical mode this level stores")
    format: str = attr("enum", choices=("dense", "compressed"), doc="level format")


@dataclass(eq=False)
class WriteVals(Node):
    """Values writer of `tensor`. (val) -> ()."""

    KIND: ClassVar[str] = "write_vals"
    REGION: ClassVar[str] = "construction"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", refs="writer")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("val", "val"),)
    tensor: str = attr("ident", doc="written tensor (an output or temp)")


# -- configurations (opt -p map: a graph split over several configurations) -----------------

@dataclass(eq=False)
class Spill(Node):
    """Spill a stream to DRAM: records every token (stops included) until `D` in the
    module-level buffer `buffer`, read back by a `replay` of a later graph (a later
    configuration of the fabric). Made by `opt -p map` where it cuts a graph that does not fit
    (docs/fabric.md). (any stream) -> ()."""

    KIND: ClassVar[str] = "spill"
    REGION: ClassVar[str] = "construction"
    # a cut stream goes to DRAM and comes back through a memory tile (its address generator
    # and buffer), as a writer's and a scanner's do
    TRAITS: ClassVar[Traits] = Traits(tile="mem", refs="spill")
    INPUTS: ClassVar[tuple[Port, ...]] = (_p("in", *STREAM_KINDS),)
    buffer: str = attr("ident", doc="the DRAM buffer written (read back by one or more replays)")


@dataclass(eq=False)
class Replay(Node):
    """Replay a spilled stream: emits, from DRAM, the tokens an earlier graph's `spill` of
    `buffer` recorded, then `D`. `stream` is the stream's kind. () -> (stream)."""

    KIND: ClassVar[str] = "replay"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="mem", refs="replay")
    OUTPUTS: ClassVar[tuple[Port, ...]] = (_p("out", *STREAM_KINDS),)
    buffer: str = attr("ident", doc="the DRAM buffer read (spilled by an earlier graph)")
    stream: str = attr("enum", choices=STREAM_KINDS, doc="the kind of the replayed stream")
    context: list[str] | None = attr("ident_list", required=False,
                                     doc="the indices the stream iterates, outermost first")

    def output_kinds(self, input_kinds: list[str | None]) -> list[str | None]:
        """The replayed stream has the kind its `stream` attribute says."""
        return [self.stream if self.stream in STREAM_KINDS else None]


# -- parallelization -----------------------------------------------------------------------------

#: Largest lane count of a fork or join (ports are materialized per lane; fuseflowc.limits).
MAX_LANES = limits.MAX_LANES


def _lanes(value: object) -> int:
    """The lane count to build ports for: 1 when the attribute is missing or out of range (the
    verifier reports it)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_LANES
    return value if ok else 1


def _lanes_problems(node: "Fork | Join") -> list[tuple[str, str | None]]:
    """A fork or join of more lanes than MAX_LANES."""
    if isinstance(node.lanes, int) and node.lanes > MAX_LANES:
        return [(f"{node.KIND} of {node.lanes} lanes: at most {MAX_LANES} are supported",
                 "lanes")]
    return []


@dataclass(eq=False)
class Fork(Node):
    """Scatter a stream round-robin across `lanes`: a unit is one element at stop depth `level`
    with everything nested inside it; enclosing stops and `D` go to every lane.
    (s) -> (s x lanes), any stream kind."""

    KIND: ClassVar[str] = "fork"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, refs="through")
    lanes: int = attr("pos", doc="number of lanes")
    level: int = attr("nat", doc="stop depth of the units distributed")

    def signature(self, n_inputs: int | None = None) -> Signature:
        lanes = _lanes(self.lanes)
        return Signature((_p("in", *STREAM_KINDS),),
                         tuple(_p(f"lane{i}", SAME) for i in range(lanes)), "1 operand")

    def verify_(self) -> list[tuple[str, str | None]]:
        """At most MAX_LANES lanes."""
        return _lanes_problems(self)


@dataclass(eq=False)
class Join(Node):
    """Gather `lanes` streams of one kind back in the original order. (s x lanes) -> (s)."""

    KIND: ClassVar[str] = "join"
    REGION: ClassVar[str] = "iteration"
    TRAITS: ClassVar[Traits] = Traits(tile="pe", laned=True, refs="through")
    lanes: int = attr("pos", doc="number of lanes")
    level: int = attr("nat", doc="stop depth of the units gathered")

    def signature(self, n_inputs: int | None = None) -> Signature:
        lanes = _lanes(self.lanes)
        ins = (_p("lane0", *STREAM_KINDS),) + tuple(_p(f"lane{i}", SAME) for i in range(1, lanes))
        return Signature(ins, (_p("out", SAME),), f"{lanes} operands (one per lane)")

    def verify_(self) -> list[tuple[str, str | None]]:
        """At most MAX_LANES lanes."""
        return _lanes_problems(self)


#: The primitive kinds, in documentation order: the one list of them (fuseflowc.samml.kinds).
_KIND_CLASSES: tuple[type[Node], ...] = (
    Root, Scan, Repsig, Repeat, Intersect, Union, Locate, Array, Alu, Reduce, Spacc1, Spacc2,
    Spacc3, CrdDrop, CrdHold, WriteLevel, WriteVals, Fork, Join, Spill, Replay)
#: Kind name -> node class, in documentation order.
KINDS: dict[str, type[Node]] = {cls.KIND: cls for cls in _KIND_CLASSES}
# Every kind has a name of its own and declares its traits.
assert len(KINDS) == len(_KIND_CLASSES) and "" not in KINDS, "two kinds share a name"
assert all(isinstance(getattr(cls, "TRAITS", None), Traits) for cls in _KIND_CLASSES)

#: The sparse accumulator of each order (the number of inner levels it accumulates: its
#: `accumulates` trait): lowering picks by order, and no reduction may need a larger one than
#: MAX_SPACC_ORDER.
SPACC_KINDS: dict[int, type[Node]] = {cls.TRAITS.accumulates: cls for cls in KINDS.values()
                                      if cls.TRAITS.buffered}
MAX_SPACC_ORDER = max(SPACC_KINDS)


def region_of(node: Node) -> str:
    """The picture region of a node: iteration, compute or construction. A node whose results
    have the kind of its first operand (repeat, fork, join) belongs to the region of the stream
    kind it carries (a val repeat is computation)."""
    if node.inputs and node.inputs[0].kind == "val" and any(
            p.kinds == (SAME,) for p in node.signature(len(node.inputs)).outputs):
        return "compute"
    return node.REGION


# ---- graphs and modules ------------------------------------------------------------------------

#: Node fields that `Graph.clone` rebuilds itself (streams) or shares (locations, read-only).
_STRUCTURE = frozenset({"inputs", "outputs", "operand_locs", "result_locs", "attr_locs"})


_CONTAINERS = (list, dict, set)
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _copied(value):
    """A copy of a node's list, dict or set attribute value: shallow when it holds scalars
    only (the usual label and position lists), deep otherwise."""
    items = value.values() if value.__class__ is dict else value
    if all(x.__class__ in _SCALARS for x in items):
        return value.copy()
    return copy.deepcopy(value)


class Graph:
    """A dataflow graph: named, a list of nodes (definition order), streams between them."""

    def __init__(self, name: str, nodes: list[Node] | None = None, loc: Loc | None = None):
        self.name = name
        self.nodes = list(nodes or [])
        self.loc = loc
        #: The program's names of the graph's renamed indices ({"u0": ("j",)}), from fuse;
        #: shown by pictures and tables as `u0(j)` (fuseflowc.names), never computed with.
        self.source_names: dict[str, tuple[str, ...]] = {}
        #: A reused loop's later iteration: the graph whose configuration this one reuses, and
        #: the tensors bound in place of that graph's ({template's tensor: this one's}).
        self.template: str | None = None
        self.binds: dict[str, str] = {}
        #: The anti-diagonal of a wavefront loop nest this graph belongs to (graphs of one
        #: wave run in parallel lanes), or None.
        self.wave: int | None = None
        #: (loop variable, iteration) of a reused loop this graph computes, or None.
        self.iteration: tuple[str, int] | None = None

    # -- a rebound copy made on first use ------------------------------------------------------
    # A reused loop's later iteration is its template with tensors renamed; most of what reads
    # a module (the printer, the verifier, the graph passes: samml.rebound) asks only the
    # template, so such a copy keeps a frozen snapshot of its template and its bindings
    # (`_pending`) and makes its nodes from them when first asked (`nodes`). The snapshot is
    # private (no pass can change it) and shared by the copies of one template, so a copy is
    # the template as it was when the copy was made, as with `rebound`.

    @property
    def nodes(self) -> list[Node]:
        """The nodes, in definition order (a pending copy's are made now: see above)."""
        pending = self.__dict__.get("_pending")
        if pending is not None:
            snapshot, binds = pending
            self.nodes = snapshot.rebound(self.name, binds)._nodes
        return self._nodes

    @nodes.setter
    def nodes(self, nodes: list[Node]) -> None:
        self._nodes = nodes
        self._pending = None

    def snapshot(self) -> "Graph":
        """A private copy of this graph to make rebound copies from (`pend`)."""
        return self.clone()

    def pend(self, snapshot: "Graph", binds: dict[str, str]) -> None:
        """Make this graph `snapshot.rebound(self.name, binds)` when its nodes are first asked
        for, keeping its own name and records (template, bindings, wave, iteration)."""
        self._pending = (snapshot, binds)
        self._nodes = []

    def rebound_later(self, name: str, binds: dict[str, str]) -> "Graph":
        """`self.rebound(name, binds)` (self: a snapshot), its nodes made when first asked for."""
        g = copy.copy(self)
        g.source_names, g.binds = dict(self.source_names), {}
        g.name, g.template, g.wave, g.iteration = name, None, None, None
        g.pend(self, binds)
        return g

    def pending(self) -> "tuple[Graph, dict[str, str]] | None":
        """(snapshot, bindings) of a copy whose nodes are not made yet (see `pend`), else None."""
        return self.__dict__.get("_pending")

    def tensor_names(self, kinds: tuple[type, ...] = ()) -> list[str]:
        """The `tensor` attribute of each node (of a class in `kinds`, default any) that names
        one, in node order; a pending copy's from its snapshot, renamed, without making its
        nodes."""
        pending = self.pending()
        g, binds = pending if pending is not None else (self, {})
        return [binds.get(t, t) for n in g._nodes
                if (not kinds or isinstance(n, kinds))
                and isinstance(t := getattr(n, "tensor", None), str)]

    def rebound(self, name: str, binds: dict[str, str]) -> "Graph":
        """A copy named `name` reading and writing `binds[t]` where this graph names tensor t
        (the same nodes and streams: a reuse of this graph's configuration)."""
        g = self.clone()
        g.name, g.template, g.wave, g.iteration = name, None, None, None
        g.binds = {}
        for n in g.nodes:
            t = getattr(n, "tensor", None)
            if isinstance(t, str) and t in binds:
                n.tensor = binds[t]
        return g

    def is_rebound_of(self, t: "Graph", binds: dict[str, str]) -> bool:
        """Whether this graph is `t.rebound(self.name, binds)` node for node: the same kinds in
        the same order, the same attributes with t's tensors bound, the same operands. When it
        is, both print alike (a sufficient test, cheaper than printing both; False may still
        print alike)."""
        if len(self.nodes) != len(t.nodes):
            return False
        pa = {id(n): k for k, n in enumerate(t.nodes)}
        pb = {id(n): k for k, n in enumerate(self.nodes)}
        for a, b in zip(t.nodes, self.nodes):
            if type(a) is not type(b) or len(a.inputs) != len(b.inputs) \
                    or [s.kind for s in a.outputs] != [s.kind for s in b.outputs]:
                return False
            for spec in a.attr_specs():
                x, y = getattr(a, spec.name), getattr(b, spec.name)
                if spec.name == "tensor" and isinstance(x, str):
                    x = binds.get(x, x)
                if type(x) is not type(y) or x != y or (isinstance(x, list) and
                                                        repr(x) != repr(y)):
                    return False
            for s, r in zip(a.inputs, b.inputs):
                k = pa.get(id(s.producer))
                if k is None or (k, s.index, s.kind) != (pb.get(id(r.producer)), r.index, r.kind):
                    return False
        return True

    def clone(self) -> "Graph":
        """An independent copy: new nodes and streams, attribute values copied (a deep copy
        that knows the graph's structure: a twentieth of `copy.deepcopy`'s time, which
        mattered for the graphs of a reused loop's iterations)."""
        g = copy.copy(self)
        g.nodes, g.source_names, g.binds = [], dict(self.source_names), dict(self.binds)
        new: dict[int, Stream] = {}
        new_object = object.__new__
        for n in self.nodes:
            c = new_object(n.__class__)
            d = c.__dict__
            for key, value in n.__dict__.items():
                if value.__class__ in _CONTAINERS and key not in _STRUCTURE:
                    value = _copied(value)
                d[key] = value
            c.outputs = outs = []
            for s in n.outputs:
                outs.append(t := Stream(s.kind, c, s.index, s.name, s.loc))
                new[id(s)] = t
            g.nodes.append(c)
        for c in g.nodes:
            c.inputs = [new.get(id(s), s) for s in c.inputs]
        return g

    def add(self, node: Node, *inputs: Stream) -> Any:
        """Append `node` consuming `inputs`; create its output streams (kinds from its signature
        and the inputs' kinds). Returns the output stream, or a tuple if not exactly one."""
        node.inputs = list(inputs)
        kinds = node.output_kinds([s.kind for s in inputs])
        node.outputs = [Stream(k, node, i) for i, k in enumerate(kinds)]
        self.nodes.append(node)
        return node.outputs[0] if len(node.outputs) == 1 else tuple(node.outputs)

    def replace_uses(self, old: Stream, new: Stream) -> int:
        """Make every node reading `old` read `new` instead; returns how many operands changed."""
        count = 0
        for n in self.nodes:
            for i, s in enumerate(n.inputs):
                if s is old:
                    n.inputs[i] = new
                    count += 1
        return count

    def remove(self, node: Node) -> None:
        """Remove `node` from the graph (its outputs must no longer be used; verify says so)."""
        self.nodes = [n for n in self.nodes if n is not node]

    def streams(self) -> Iterator[Stream]:
        """Every stream defined in the graph, in definition order."""
        for n in self.nodes:
            yield from n.outputs

    def consumers(self) -> dict[Stream, list[tuple[Node, int]]]:
        """Stream -> the (node, operand position) pairs reading it, in node order."""
        out: dict[Stream, list[tuple[Node, int]]] = {}
        for n in self.nodes:
            for i, s in enumerate(n.inputs):
                out.setdefault(s, []).append((n, i))
        return out

    def topo_order(self) -> list[Node]:
        """The nodes in a deterministic topological order: Kahn's algorithm, ties broken by the
        current list position (a list already in topological order is kept as is). Nodes on a
        cycle are appended in list order."""
        pos = {id(n): i for i, n in enumerate(self.nodes)}
        # Lowering and the passes keep the list in topological order: then it is the answer
        # (Kahn's algorithm with ties broken by position pops 0, 1, 2, ...), found in one pass;
        # the printer, verifier and passes ask for it several times per graph.
        if len(pos) == len(self.nodes) and all(
                s.producer is None or pos.get(id(s.producer), -1) < i
                for i, n in enumerate(self.nodes) for s in n.inputs):
            return list(self.nodes)
        import heapq
        preds: dict[int, int] = {}
        succs: dict[int, list[int]] = {i: [] for i in range(len(self.nodes))}
        for i, n in enumerate(self.nodes):
            deps = {pos[id(s.producer)] for s in n.inputs
                    if s.producer is not None and id(s.producer) in pos}
            preds[i] = len(deps)
            for d in deps:
                succs[d].append(i)
        ready = [i for i, k in preds.items() if k == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for j in succs[i]:
                preds[j] -= 1
                if preds[j] == 0:
                    heapq.heappush(ready, j)
        done = set(order)
        order += [i for i in range(len(self.nodes)) if i not in done]
        return [self.nodes[i] for i in order]

    def stream_names(self) -> dict[Stream, str]:
        """Canonical names (without %) of the graph's streams: per kind, numbered in the order of
        definition along `topo_order()` (%c0.., %r0.., %v0.., %s0..). The printer uses these; the
        simulator may use them to name channels in reports."""
        names: dict[Stream, str] = {}
        counts: dict[str | None, int] = {}
        for n in self.topo_order():
            for s in n.outputs:
                if s in names:
                    continue
                p = KIND_PREFIX.get(s.kind, "x")
                names[s] = f"{p}{counts.get(p, 0)}"
                counts[p] = counts.get(p, 0) + 1
        return names

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {len(self.nodes)} nodes)"


ROLES = ("input", "output", "temp")


@dataclass(eq=False)
class TensorDecl:
    """A tensor of the module: `dims` (dim names bound from data, or ints), storage `format`,
    `role` input|output|temp, and `block` size for blocked formats."""

    name: str
    dims: tuple[str | int, ...]
    format: Format
    role: str
    block: int | None = None
    loc: Loc | None = field(default=None, repr=False)

    @property
    def order(self) -> int:
        return len(self.dims)

    def spec(self) -> TensorSpec:
        """The data-loading description of this tensor."""
        return TensorSpec(self.name, tuple(self.dims), self.format, self.block)


@dataclass(eq=False)
class Permute:
    """A module-level step `permute SRC -> DST [modes (p0, ..., pn-1)]` run between graphs: DST
    (a temp tensor) becomes SRC's stored entries re-stored in DST's declared format, with DST's
    logical mode m holding SRC's logical mode `modes[m]` (DST = numpy.transpose(SRC, modes);
    `modes` None = the identity: same logical tensor, another storage format or mode order).
    `position` is how many of the module's graphs run before it (steps at one position run in
    list order)."""

    src: str
    dst: str
    modes: tuple[int, ...] | None = None
    position: int = 0
    loc: Loc | None = field(default=None, repr=False, compare=False)
    src_loc: Loc | None = field(default=None, repr=False, compare=False)
    dst_loc: Loc | None = field(default=None, repr=False, compare=False)
    modes_loc: Loc | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """How the step is named in reports: `permute A -> A__T`."""
        return f"permute {self.src} -> {self.dst}"

    @property
    def made(self) -> tuple[str, ...]:
        """The tensors the step makes."""
        return (self.dst,)

    def mode_map(self, order: int) -> tuple[int, ...]:
        """`modes`, or the identity permutation of `order` modes when none is given."""
        return tuple(self.modes) if self.modes is not None else tuple(range(order))


@dataclass(eq=False)
class Decompose:
    """A module-level step `decompose SRC -> P0 >= t0, P1 >= t1, ..., R` run between graphs
    (docs/samml.md, "Decompose steps"): the input matrix SRC is split into temps, each in its
    declared format: the b x b blocks (b = Pk's block size) of SRC's entries not yet taken whose
    fill (stored entries / b^2) reaches tk go to Pk, parts in order; every other entry goes to
    the residual R (unblocked, no threshold). `thresholds[k]` is None for the residual."""

    src: str
    parts: tuple[str, ...]
    thresholds: tuple[float | None, ...]
    position: int = 0
    loc: Loc | None = field(default=None, repr=False, compare=False)
    src_loc: Loc | None = field(default=None, repr=False, compare=False)
    part_locs: tuple[Loc | None, ...] = field(default=(), repr=False, compare=False)

    @property
    def name(self) -> str:
        """How the step is named in reports: `decompose A -> A__d0, A__d1`."""
        return f"decompose {self.src} -> {', '.join(self.parts)}"

    @property
    def made(self) -> tuple[str, ...]:
        """The tensors the step makes."""
        return self.parts


#: The module-level step kinds (run between graphs, not dataflow graphs).
STEP_KINDS = (Permute, Decompose)


#: Kinds of module-level schedule directives.
SCHEDULE_KINDS = ("parallelize",)


@dataclass(eq=False)
class Schedule:
    """A module-level schedule directive `schedule parallelize {graph = g, index = u0,
    factor = 4, statement = S, local = k}`: the program asked for `graph`'s stream at `index`
    (a name the graph iterates) to be split across `factor` lanes; `statement` and `local` say
    where it came from (`parallelize S: k by 4`). Recorded by `lower`, applied by
    `fuseflowc opt -p schedule` (fuseflowc.opt.schedule). Its attributes are declared with
    `attr()` like a node's, so the parser, verifier and printer share one definition."""

    kind: str
    graph: str | None = attr("ident", doc="the graph whose stream is split")
    index: str | None = attr("ident", doc="the index (a name the graph iterates) split")
    factor: int | None = attr("pos", doc="number of lanes")
    statement: str | None = attr("ident", required=False, doc="the program statement")
    local: str | None = attr("ident", required=False, doc="the statement's own index name")
    loc: Loc | None = field(default=None, repr=False, compare=False)
    attr_locs: dict[str, Loc] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def attr_specs(cls) -> tuple[AttrSpec, ...]:
        """The directive's attributes, in printing order."""
        return attr_specs_of(cls)

    def attrs(self) -> dict[str, Any]:
        """Attribute name -> value, in printing order (unset optional ones left out)."""
        return {s.name: getattr(self, s.name) for s in self.attr_specs()
                if getattr(self, s.name) is not None}


@dataclass(eq=False)
class Module:
    """A SAMML file: tensor declarations, graphs run in sequence, permute steps between them
    (`steps`, each placed by its `position`), and optionally the path of the source program
    (for `simulate --check`)."""

    tensors: list[TensorDecl] = field(default_factory=list)
    graphs: list[Graph] = field(default_factory=list)
    source: str | None = None
    loc: Loc | None = field(default=None, repr=False)
    steps: list["Permute | Decompose"] = field(default_factory=list)
    #: Schedule directives (printed after the declarations), see `Schedule`.
    schedules: list[Schedule] = field(default_factory=list)

    def sequence(self) -> list["Graph | Permute"]:
        """Graphs and permute steps in execution (file) order: the steps of position k run
        after the first k graphs."""
        out: list[Graph | Permute] = []
        for k in range(len(self.graphs) + 1):
            out += [s for s in self.steps if s.position == k]
            if k < len(self.graphs):
                out.append(self.graphs[k])
        out += [s for s in self.steps if s.position > len(self.graphs) or s.position < 0]
        return out

    def tensor(self, name: str) -> TensorDecl | None:
        """The declaration of tensor `name`, or None."""
        for t in self.tensors:
            if t.name == name:
                return t
        return None

    def graph(self, name: str) -> Graph | None:
        """The graph named `name`, or None."""
        for g in self.graphs:
            if g.name == name:
                return g
        return None

    def specs(self) -> dict[str, TensorSpec]:
        """Tensor name -> TensorSpec, for data loading."""
        return {t.name: t.spec() for t in self.tensors}

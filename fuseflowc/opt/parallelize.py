"""`parallelize{index=i,factor=F}`: split a graph's stream at index `i` across F lanes.

The paper's stream parallelizer and serializer (Sec. 7): the elements of `i` are dealt
round-robin to F lanes by `fork`, the part of the graph that iterates `i` is copied once per lane
(each copy gets a `lane` attribute), and the lanes are gathered back in the original order by
`join` before anything that must see the whole stream.

Which nodes are copied per lane (*laned*): every node that defines a stream iterating `i` (its
context, see `contexts`, contains `i`), except

- the nodes that make the `i` level itself: scanners and joiners (intersect/union/locate) of
  index `i`.
  They stay serial so that every tensor's `i` coordinates are co-iterated before they are dealt
  out; their outputs are forked, so all lanes see aligned units;
- writers and roots;
- nodes that would see a lane's subset of `i` where they need all of it: a reducer or sparse
  accumulator over `i` (its output no longer iterates `i`; with `reduce=lanes` a sum `reduce`
  and a `spacc1` over `i` are laned and combined instead, see below), a sparse accumulator
  whose reduced index encloses `i` (it would merge different lanes' fibers) or whose output
  levels include `i` (an `i` element with nothing accumulated would vanish from its lane), a
  `crddrop` at the `i` level (dropping a unit would break the round-robin);
- existing forks and joins whose units do not contain whole `i` elements.

Serial nodes read a laned stream through one `join` (made once per stream), laned nodes read a
serial stream that iterates `i` through one `fork` (made once per stream), both at the stop depth
of `i` in that stream, so every lane's units are whole `i` elements, dealt and gathered in the
same order everywhere (forks and joins restart their lane counter at every enclosing stop).
Serial streams that do not iterate `i` (a root, a value reduced over `i`) are read by every lane
as they are (fan-out).

Reductions over the parallelized index (option `reduce`):

- `reduce=serial` (the default): the lanes are joined *before* the reducer, which then sums in
  the serial order, so results are bit-for-bit those of the serial graph.
- `reduce=lanes`: a `reduce {op = sum}` or a `spacc1` (sum or max) over the parallelized index
  is copied per lane (each lane reduces its own subset of the index), and the F lane results,
  which have the same outer structure (a fork sends the enclosing stops to every lane), are
  combined without a join: `reduce` by a tree of binary `alu` nodes (add), `spacc1` by a
  `union` of the F coordinate streams (N where a lane lacks a coordinate) and a tree of `alu`
  nodes of its op (add or max; N is their identity), i.e. a sparse add. Coordinates (patterns)
  are those of the serial graph exactly; max is exact, sums are reassociated (equal within
  `simulate --check`'s tolerance, not bit for bit). A `reduce {op = max}` and a `spacc2` stay
  serial (joined in front): a lane that sees no element of a fiber reduces it to 0, not to the
  identity of max (the simulator's reducers have no -inf), and the two coordinate levels of a
  spacc2 cannot be merged by one union.

Nested parallelism: a second `parallelize` of another index copies each lane's nodes again;
a copy of a node of lane a in lane b gets lane a * F + b, so `i` by 4 then `j` by 4 gives
lanes 0..15.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import UserError
from ..limits import MAX_LANES
from ..samml import ir
from ..samml.analysis import Context, depth, iterated_indices, stream_contexts
from .base import ModulePass, PipelineError, register

#: Values of the `reduce` option.
REDUCE_MODES = ("serial", "lanes")


@register
@dataclass(frozen=True)
class Parallelize(ModulePass):
    """Split the stream at `index` over `factor` lanes: fork, a copy per lane, join."""

    name: ClassVar[str] = "parallelize"
    index: str = ""
    factor: int = 2
    graph: str = ""
    #: `serial` (join before a reducer over `index`, bit for bit) or `lanes` (reduce per lane,
    #: combine the lane results: see the module docstring).
    reduce: str = dataclasses.field(default="serial", metadata={"choices": REDUCE_MODES})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.factor <= MAX_LANES:
            raise PipelineError(f"pass parallelize: option factor must be between 1 and "
                                f"{MAX_LANES} (docs/opt.md), got {self.factor}")
        if not self.index:
            raise PipelineError("pass parallelize: option index is required "
                                "(e.g. parallelize{index=i,factor=4})")

    def apply(self, module: ir.Module) -> None:
        done = targets(module, self.index, self.graph, self.spelling())
        for g, index in done:
            parallelize_graph(g, index, self.factor, self.reduce)
        # This pass replaces the module's schedule directives for the same index.
        replaced = {(g.name, index) for g, index in done}
        module.schedules = [d for d in module.schedules
                            if d.kind != "parallelize" or (d.graph, d.index) not in replaced]


def targets(module: ir.Module, index: str, graph: str, spelling: str
            ) -> list[tuple[ir.Graph, str]]:
    """The (graph, index name in that graph) pairs `parallelize{index, graph}` applies to.

    `index` is a name some graph iterates, or a name the program used for it (a statement-local
    name recorded by a `schedule parallelize` directive's `local`) when that resolves to one
    index per graph. `graph` empty: every graph that iterates it. Raises UserError naming the
    pass and the option when nothing matches."""
    graphs = module.graphs
    if graph:
        g = module.graph(graph)
        if g is None:
            known = ", ".join(x.name for x in graphs) or "none"
            raise UserError(f"pass {spelling}: option graph: no graph named {graph} "
                            f"(graphs: {known})")
        graphs = [g]
    out = []
    for g in graphs:
        iterated = iterated_indices(g)
        if index in iterated:
            out.append((g, index))
            continue
        aliases = sorted({d.index for d in module.schedules
                          if d.graph == g.name and d.local == index and d.index in iterated})
        if len(aliases) == 1:
            out.append((g, aliases[0]))
        elif len(aliases) > 1:
            raise UserError(f"pass {spelling}: option index: {index} is ambiguous in graph "
                            f"{g.name} (it names {', '.join(aliases)})")
    if not out:
        where = f"graph {graph}" if graph else "no graph"
        lines = [f"  {g.name}: {', '.join(iterated_indices(g)) or 'none'}" for g in graphs]
        if graph:
            msg = f"{where} does not iterate index {index}"
        else:
            msg = f"{where} iterates index {index}"
        raise UserError(f"pass {spelling}: option index: {msg}; the indices iterated are:\n"
                        + "\n".join(lines))
    return out


def combines_per_lane(n: ir.Node, ctx: dict[ir.Stream, Context], index: str) -> bool:
    """True when `n` is a reducer over `index` whose lane results `reduce=lanes` combines: a
    `reduce {op = sum}` of the innermost level `index`, or a `spacc1` whose reduced level
    (the one above its coordinates) is `index`."""
    if not isinstance(n, (ir.Reduce, ir.Spacc1)) or n.index != index:
        return False
    c = ctx.get(n.inputs[0], ()) if n.inputs else ()
    if any(index in ctx.get(s, ()) for s in n.outputs):
        return False
    if isinstance(n, ir.Reduce):
        return n.op == "sum" and len(c) >= 1 and c[-1] == index
    return n.op in _COMBINE and len(c) >= 2 and c[-2] == index


#: The binary ALU op that combines two partial results of a reduction op.
_COMBINE = {"sum": "add", "max": "max"}


def _serial(n: ir.Node, ctx: dict[ir.Stream, Context], index: str,
            reduce: str = "serial") -> bool:
    """True when `n` stays one node (see the module docstring for why)."""
    if reduce == "lanes" and combines_per_lane(n, ctx, index):
        return False
    if isinstance(n, (ir.Root, ir.WriteLevel, ir.WriteVals)):
        return True
    if isinstance(n, (ir.Scan, ir.Intersect, ir.Union, ir.Locate)) and n.index == index:
        return True
    outs = [ctx[s] for s in n.outputs]
    if not outs or not any(index in c for c in outs):
        return True
    ins = [ctx.get(s, ()) for s in n.inputs]
    if isinstance(n, (ir.Spacc1, ir.Spacc2)):
        c = max(ins, key=len, default=())
        if n.index in c and index in c[c.index(n.index) + 1:]:
            return True
        # The levels it builds hold a point only when something accumulated there: one `index`
        # element could vanish from a lane (a crdhold-fed accumulator keyed on `index`).
        built = 1 if isinstance(n, ir.Spacc1) else 2
        if any(index in o[-built:] for o in outs):
            return True
    if isinstance(n, ir.CrdDrop):
        if any(c and c[-1] == index for c in ins):
            return True
    if isinstance(n, (ir.Fork, ir.Join)):
        c = ins[0] if ins else ()
        return index not in c or depth(c, index) <= (n.level or 0)
    # Only kinds known to keep whole units of an enclosing index intact go into lanes (their
    # `laned` trait, samml.ir); the others stay serial: safe.
    return not n.TRAITS.laned


def parallelize_graph(g: ir.Graph, index: str, factor: int, reduce: str = "serial") -> None:
    """Rewrite `g` in place: the nodes iterating `index` run in `factor` lanes (see the module
    docstring); `reduce` is `serial` or `lanes` (reducers over `index`). factor 1 leaves `g`
    unchanged."""
    if factor <= 1:
        return
    ctx = stream_contexts(g)
    _check_lanes(g, ctx, index, factor, reduce)
    _LaneSplit(g, ctx, index, factor, reduce).run()


def _check_lanes(g: ir.Graph, ctx: dict, index: str, factor: int, reduce: str) -> None:
    """Copies are made per lane of a node already copied by an earlier split (a * F + b):
    bound the lanes of the nodes this split copies before making any."""
    lanes = max((1 + (n.lane or 0) for n in g.nodes if not _serial(n, ctx, index, reduce)),
                default=1)
    if lanes * factor > MAX_LANES:
        earlier = f" ({lanes} from earlier splits times {factor})" if lanes > 1 else ""
        raise UserError(f"pass parallelize: splitting index {index} of graph {g.name} by "
                        f"{factor} makes {lanes * factor} lanes{earlier}; at most {MAX_LANES} "
                        f"are supported (docs/opt.md)")


class _LaneSplit:
    """One split of graph `g` at `index` into `factor` lanes: the nodes, in topological order,
    either stay serial (their laned inputs joined) or are copied per lane (their serial inputs
    iterating `index` forked); per-lane reducers are combined (reduce=lanes)."""

    def __init__(self, g: ir.Graph, ctx: dict, index: str, factor: int, reduce: str):
        self.g, self.ctx, self.index, self.factor, self.reduce = g, ctx, index, factor, reduce
        self.laned: dict[ir.Stream, list[ir.Stream]] = {}   # stream -> its per-lane copies
        self.forks: dict[ir.Stream, list[ir.Stream]] = {}
        self.joins: dict[ir.Stream, ir.Stream] = {}
        self.renamed: dict[ir.Stream, ir.Stream] = {}       # reducer output -> combined
        self.nodes: list[ir.Node] = []

    def run(self) -> None:
        ctx, index = self.ctx, self.index
        for n in self.g.topo_order():
            n.inputs = [self.renamed.get(s, s) for s in n.inputs]
            if _serial(n, ctx, index, self.reduce):
                n.inputs = [self.join(s) if s in self.laned else s for s in n.inputs]
                self.nodes.append(n)
                continue
            copies = self.copies(n)
            if self.reduce == "lanes" and combines_per_lane(n, ctx, index):
                for s, t in zip(n.outputs, self.combine(n, copies)):
                    self.renamed[s] = t
                    ctx[t] = ctx[s]
                continue
            for k, s in enumerate(n.outputs):
                self.laned[s] = [outs[k] for outs in copies]
                for outs in copies:
                    ctx[outs[k]] = ctx[s]
        self.g.nodes = self.nodes

    def copies(self, n: ir.Node) -> list[list[ir.Stream]]:
        """`factor` copies of node n, one per lane, each reading its lane of laned inputs, a
        fork's lane of the inputs iterating the index, and the other inputs whole; their
        outputs, per lane."""
        copies: list[list[ir.Stream]] = []
        for lane in range(self.factor):
            c = dataclasses.replace(n, lane=lane if n.lane is None
                                    else n.lane * self.factor + lane)
            c.loc = n.loc
            if isinstance(c, ir.Union):
                c.required = list(n.required)
            ins = []
            for s in n.inputs:
                if s in self.laned:
                    ins.append(self.laned[s][lane])
                elif self.index in self.ctx.get(s, ()):
                    ins.append(self.fork(s)[lane])
                else:
                    ins.append(s)
            copies.append(self.add(c, ins))
        return copies

    def add(self, node: ir.Node, inputs: list[ir.Stream]) -> list[ir.Stream]:
        node.inputs = list(inputs)
        kinds = node.output_kinds([s.kind for s in inputs])
        node.outputs = [ir.Stream(k, node, i) for i, k in enumerate(kinds)]
        self.nodes.append(node)
        return node.outputs

    def level(self, s: ir.Stream) -> int:
        index, ctx = self.index, self.ctx
        if s.kind == "repsig" and depth(ctx[s], index) > 0:
            # A repeat signal has one stop kind: it cannot be split below its innermost level.
            raise UserError(f"pass parallelize: cannot split a repeat signal at index {index} "
                            f"(it iterates {', '.join(ctx[s])})")
        return depth(ctx[s], index)

    @staticmethod
    def lane_of(s: ir.Stream) -> int | None:
        return s.producer.lane if s.producer is not None else None

    def fork(self, s: ir.Stream) -> list[ir.Stream]:
        if s not in self.forks:
            self.forks[s] = self.add(ir.Fork(lanes=self.factor, level=self.level(s),
                                             lane=self.lane_of(s)), [s])
        return self.forks[s]

    def join(self, s: ir.Stream) -> ir.Stream:
        if s not in self.joins:
            copies = self.laned[s]
            self.joins[s] = self.add(ir.Join(lanes=self.factor, level=self.level(s),
                                             lane=self.lane_of(s)), copies)[0]
        return self.joins[s]

    def tree(self, op: str, vals: list[ir.Stream], n: ir.Node) -> ir.Stream:
        """`vals` combined pairwise by binary `op` (a balanced tree: log2 F ALU stages)."""
        labels = {} if n.out is None else {"in0": list(n.out), "in1": list(n.out),
                                           "out": list(n.out)}
        while len(vals) > 1:
            nxt = [self.add(ir.Alu(op=op, lane=n.lane, **labels), [a, b])[0]
                   for a, b in zip(vals[0::2], vals[1::2])]
            vals = nxt + ([vals[-1]] if len(vals) % 2 else [])
        return vals[0]

    def combine(self, n: ir.Node, copies: list[list[ir.Stream]]) -> list[ir.Stream]:
        """The per-lane results of reducer `n` merged into streams like `n`'s own outputs."""
        op = _COMBINE[n.op]
        if isinstance(n, ir.Reduce):
            return [self.tree(op, [outs[0] for outs in copies], n)]
        # spacc1: a sparse add of the lanes' fibers, as the lowering adds sparse operands
        inner = self.ctx[n.outputs[0]][-1]
        pairs = [s for outs in copies for s in outs]
        crd, *vals = self.add(ir.Union(index=inner, required=[], lane=n.lane), pairs)
        return [crd, self.tree(op, vals, n)]

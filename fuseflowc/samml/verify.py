"""The SAMML verifier: every error a graph can have, collected and reported with locations.

`verify(module)` raises one `UserError` listing every problem found (file:line:col when the module
was parsed; graph and node named otherwise). What it checks, in order:

Structure (per graph)
  - every operand is a stream defined in the same graph; a stream has exactly one producer;
  - each node has the number of operands and results its kind's signature asks for, and every
    operand has the stream kind of its port (crd, ref, val, repsig; repeat/fork/join outputs have
    the kind of their input);
  - attributes: required ones present, values of the declared type, ALU/reduction ops known, the
    constant of a scalar ALU op present (and absent otherwise), union `required` positions valid;
  - no cycle;
  - dangling results. Fine: an unused crd or ref result when some other result of the node is
    used (a scan whose crd is not needed, a joiner whose refs feed only some arrays). Errors: an
    unused val or repsig result (a value that reaches no writer is lost work; a repeat signal
    exists only to drive a repeat), and a node none of whose results is used (dead code).
  - fan-out (one stream read by several nodes) is allowed for every stream kind: it is an
    implicit broadcast. Misuse shows up as a tensor-consistency error below (e.g. a ref stream
    of tensor A read by a scan of tensor B).

Tensors (per graph, and across the graphs of a module, which run in order)
  - every tensor named by a node is declared;
  - references are followed from each root through scans, repeats, joiners, forks and joins: a
    scan must read the reference stream of its own tensor pointing at the storage level that
    holds its mode (level k+1 after a scan of level k; scanning mode 1 of a CSR tensor straight
    from its root is an error), its format must equal that level's declared format; an array
    must read references past the last level of its tensor;
  - writers only write output or temp tensors; a write_level's format equals the declared level
    format; per graph, a written tensor has one write_vals and one write_level for every
    compressed level (dense levels may be omitted, their size is known), never two writers of
    the same level; a tensor is written by at most one graph;
  - a temp or output tensor read by a graph must have been written by an earlier graph (or
    permute step); every output tensor is written by some graph; graph names are unique.

Permute steps (`permute SRC -> DST [modes (...)]`, between graphs)
  - SRC and DST declared and distinct, DST a temp of SRC's order, `modes` a permutation of
    SRC's modes, DST's dims SRC's dims permuted, the same block size, no compressed(c) level in DST;
  - SRC is an input or written by an earlier graph or step; DST is made by this step alone
    (no graph writes it, no other step makes it).
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..diagnostics import DiagnosticSink, Loc
from ..ops import ALU_BINARY
from .ir import (
    MAX_LANES,
    SAME,
    SCHEDULE_KINDS,
    Alu,
    Array,
    Decompose,
    Graph,
    Locate,
    Module,
    Node,
    Permute,
    Scan,
    Stream,
    WriteLevel,
    WriteVals,
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")
_KIND_TEXT = {"crd": "a crd", "ref": "a ref", "val": "a val", "repsig": "a repsig"}


def verify(m: Module, rebound: dict | None = None) -> None:
    """Check a module; raise UserError with every problem found (see the module docstring).
    `rebound` (samml.rebound.trusted's: graph name -> (template, bindings)) names graphs that
    are their template with tensors renamed: such a graph is not checked again when its
    template was clean and its bound tensors are declared as the template's are (the same
    format and order; not inputs where the template writes); the checks across graphs (read
    after written, written once) still see its tensors."""
    sink = DiagnosticSink()
    _Verifier(m, sink, rebound).run()
    sink.errors = _in_source_order(sink.errors)
    sink.raise_if_any()


def _in_source_order(diags: list) -> list:
    """Errors sorted by location (each keeping the notes that follow it); unlocated ones last,
    in the order found."""
    groups: list[list] = []
    for d in diags:
        if d.severity == "note" and groups:
            groups[-1].append(d)
        else:
            groups.append([d])

    def key(group):
        loc = group[0].loc
        return (0, loc.line, loc.col) if loc is not None else (1, 0, 0)
    return [d for group in sorted(groups, key=key) for d in group]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---- the checks of a permute step (_Verifier.permute); `err(msg, loc)` reports one -----------
def _permute_declared(p: Permute, src, dst, err) -> bool:
    """SRC and DST declared and distinct; False when not (nothing else can be checked)."""
    if src is None:
        err(f"permute reads tensor {p.src}, which is not declared", p.src_loc)
    if dst is None:
        err(f"permute makes tensor {p.dst}, which is not declared", p.dst_loc)
    if src is None or dst is None:
        return False
    if p.src == p.dst:
        err(f"permute makes tensor {p.dst} from itself", p.dst_loc)
        return False
    return True


def _permute_sources(p: Permute, src, dst, written_by: dict, made_by: dict, err) -> None:
    """SRC available (an input, or written or made earlier); DST a temp made by this step
    alone (recorded in `made_by`)."""
    if src.role != "input" and p.src not in written_by and p.src not in made_by:
        err(f"permute reads {src.role} tensor {p.src} before any graph writes it",
            p.src_loc)
    if dst.role != "temp":
        err(f"permute makes tensor {p.dst}, which is an {dst.role}: the destination of a "
            "permute must be a temp", p.dst_loc)
    if p.dst in made_by:
        err(f"tensor {p.dst} is made twice, by `{made_by[p.dst].name}` and again here",
            p.dst_loc)
    elif p.dst in written_by:
        err(f"tensor {p.dst} is written by graph {written_by[p.dst].name}: the destination "
            "of a permute is made by the step alone", p.dst_loc)
    made_by.setdefault(p.dst, p)


def _permute_modes(p: Permute, src, dst, err) -> list[int] | None:
    """The step's modes when SRC and DST have the same order and the modes are a permutation
    of it (None otherwise); DST's dims must be SRC's permuted by them."""
    if src.order != dst.order:
        err(f"permute from {p.src} ({_plural(src.order, 'mode')}) to {p.dst} "
            f"({_plural(dst.order, 'mode')}): the orders must match", p.dst_loc)
        return None
    modes = p.mode_map(src.order)
    if sorted(modes) != list(range(src.order)):
        err(f"permute modes ({', '.join(map(str, modes))}) are not a permutation of "
            f"0..{src.order - 1} (the modes of {p.src})", p.modes_loc)
        return None
    want = tuple(src.dims[k] for k in modes)
    if tuple(dst.dims) != want:
        show = ", ".join(map(str, want))
        err(f"permute makes {p.dst}[{', '.join(map(str, dst.dims))}], but {p.src}"
            f"[{', '.join(map(str, src.dims))}] permuted by modes "
            f"({', '.join(map(str, modes))}) has dims [{show}]", p.dst_loc)
    return modes


def _permute_blocks(p: Permute, src, dst, modes, err) -> None:
    """The same block size on both sides; a step that blocks or unblocks keeps the modes, its
    blocked side stored row-major with dims the block size divides."""
    if (src.block, src.format.blocked) == (dst.block, dst.format.blocked):
        return
    blocked = dst if src.block is None else src
    if src.block is not None and dst.block is not None:
        err(f"permute from {p.src} (block {src.block or 'none'}) to {p.dst} "
            f"(block {dst.block or 'none'}): the block sizes must match", p.dst_loc)
    elif (tuple(modes) != tuple(range(src.order))
          or blocked.format.mode_order != tuple(range(src.order))):
        err(f"permute from {p.src} (block {src.block or 'none'}) to {p.dst} "
            f"(block {dst.block or 'none'}): a permute that blocks or unblocks a "
            f"tensor keeps the modes, and the blocked side is stored row-major",
            p.dst_loc)
    elif any(isinstance(x, int) and x % blocked.block for x in blocked.dims):
        err(f"permute from {p.src} to {p.dst}: block size {blocked.block} does not "
            f"divide the dims of {blocked.name}", p.dst_loc)


# ---- the checks of a decompose step's part (_Verifier.decompose) -----------------------------
def _decompose_part(d: Decompose, src, t, last: bool, thr, loc, made_by: dict, err) -> None:
    """Part `t` of step `d` (the residual when `last`, threshold `thr`): a temp of SRC's dims
    made by this step alone (recorded in `made_by`), blocked with a threshold in (0, 1] unless
    it is the residual, with dense and compressed levels only."""
    name = t.name
    if t.role != "temp":
        err(f"decompose makes tensor {name}, which is an {t.role}: a part must be a "
            "temp", loc)
    if name in made_by:
        err(f"tensor {name} is made twice, by `{made_by[name].name}` and again here",
            loc)
    made_by.setdefault(name, d)
    if tuple(t.dims) != tuple(src.dims):
        err(f"part {name}[{', '.join(map(str, t.dims))}] must have the dims of "
            f"{d.src}[{', '.join(map(str, src.dims))}]", loc)
    if last and (thr is not None or t.format.blocked):
        err(f"the last part {name} is the residual: unblocked, without a threshold",
            loc)
    elif not last and (thr is None or not t.format.blocked):
        err(f"part {name} must be blocked, with a threshold (`{name} >= 0.5`); only "
            "the last part, the residual, is not", loc)
    elif thr is not None and not 0 < thr <= 1:
        err(f"threshold {thr!r} of part {name} is not in (0, 1]", loc)
    odd = [lv for lv in t.format.levels if lv not in ("dense", "compressed")]
    if odd:
        err(f"part {name}: its {odd[0]} levels are not supported", loc)


class _Verifier:
    def __init__(self, m: Module, sink: DiagnosticSink, rebound: dict | None = None):
        self.m = m
        self.rebound = rebound or {}
        #: id(graph) -> (reads, writes) of the graphs checked clean (templates of `rebound`)
        self.clean_uses: dict[int, tuple[dict, dict]] = {}
        self.sink = sink
        self.tensors = {t.name: t for t in m.tensors}
        #: buffer -> (graph, spill node, stream kind, ref origin) of the spills seen so far
        self.spills: dict[str, tuple] = {}
        #: _structure_key of the graphs whose structure had no error
        self.clean: set = set()

    # -- reporting ---------------------------------------------------------------------------
    def error(self, msg: str, loc: Loc | None, g: Graph | None = None, n: Node | None = None,
              ) -> None:
        if loc is None and g is not None:  # a graph built in Python: say where in words
            where = f"graph {g.name}"
            if n is not None:
                where += f", node {g.nodes.index(n)} ({n.label()})" if n in g.nodes else ""
            msg += f" [{where}]"
        self.sink.error(msg, loc)

    @staticmethod
    def attr_loc(n: Node, key: str) -> Loc | None:
        return n.attr_locs.get(key, n.loc)

    def name(self, s: Stream, names: dict[Stream, str]) -> str:
        """How a stream reads in a message: its name as written, else its canonical name."""
        if s.name:
            return "%" + s.name
        return "%" + names[s] if s in names else "a stream"

    # -- driver ------------------------------------------------------------------------------
    def run(self) -> None:
        if not self.m.graphs:
            self.sink.error("the module has no graph", self.m.loc)
        seen: dict[str, Graph] = {}
        written_by: dict[str, Graph] = {}
        made_by: dict[str, Permute] = {}
        for g in self.m.sequence():
            if isinstance(g, Permute):
                self.permute(g, written_by, made_by)
                continue
            if isinstance(g, Decompose):
                self.decompose(g, made_by)
                continue
            if g.name in seen:
                self.error(f"graph {g.name} is defined twice", g.loc, g)
                self.sink.note("first defined here", seen[g.name].loc)
            seen.setdefault(g.name, g)
            self.graph_tensors(g, written_by, made_by)
        for t in self.m.tensors:
            if t.role == "output" and t.name not in written_by and self.m.graphs:
                self.sink.error(f"output tensor {t.name} is never written", t.loc)
        self.schedules()

    def graph_tensors(self, g: Graph, written_by: dict, made_by: dict) -> None:
        """Graph g's structure and tensor uses: what it reads is an input or written before,
        what it writes no earlier graph or step made (recorded in `written_by`)."""
        uses = self.rebound_uses(g, written_by, made_by)
        if uses is not None:
            reads, writes = uses
        else:
            errors = len(self.sink.errors)
            ok = self.structure(g)
            reads, writes = self.tensor_uses(g, ok)
            if len(self.sink.errors) == errors and len(ok) == len(g.nodes):
                self.clean_uses[id(g)] = (reads, writes)
        for name, (node, loc) in sorted(reads.items()):
            t = self.tensors[name]
            if t.role != "input" and name not in written_by and name not in made_by:
                self.error(f"graph {g.name} reads {t.role} tensor {name} before any graph "
                           "writes it", loc, g, node)
        for name, (node, loc) in sorted(writes.items()):
            if name in made_by:
                self.error(f"tensor {name} is made by `{made_by[name].name}` and written "
                           f"again by graph {g.name}", loc, g, node)
            elif name in written_by:
                self.error(f"tensor {name} is written by graph {written_by[name].name} and "
                           f"again by graph {g.name}", loc, g, node)
            else:
                written_by[name] = g

    def rebound_uses(self, g: Graph, written_by: dict, made_by: dict):
        """(reads, writes) of a graph of `rebound` from its clean template's, renamed, when its
        bound tensors are declared alike and the checks across graphs pass for them; None
        otherwise (then the graph is checked in full, and any error is reported on it)."""
        if g.name not in self.rebound:
            return None
        t, binds = self.rebound[g.name]
        done = self.clean_uses.get(id(t))
        if done is None:
            return None
        out = []
        for uses, writing in ((done[0], False), (done[1], True)):
            renamed = {}
            for name, at in uses.items():
                b = binds.get(name, name)
                if not self._bound_alike(name, b, writing, written_by, made_by):
                    return None
                renamed[b] = at
            out.append(renamed)
        return out[0], out[1]

    def _bound_alike(self, name: str, bound: str, writing: bool, written_by: dict,
                     made_by: dict) -> bool:
        """Whether tensor `bound`, standing for the template's `name`, is declared alike (the
        same order and format; no input when written) and passes the checks across graphs
        (written once; read when an input or already written)."""
        d, e = self.tensors.get(bound), self.tensors[name]
        if d is None or d.order != e.order or d.format != e.format:
            return False
        if writing:
            return d.role != "input" and bound not in written_by and bound not in made_by
        return d.role == "input" or bound in written_by or bound in made_by

    # -- schedule directives -----------------------------------------------------------------
    def schedules(self) -> None:
        """Each `schedule KIND {...}`: a known kind, its required attributes set and well typed,
        `graph` a graph of the module that has a node of `index`, at most one directive per
        (kind, graph, index)."""
        seen: set[tuple] = set()
        for d in self.m.schedules:
            # err is called only within this iteration, so the late binding of d is harmless
            def err(msg: str, key: str | None = None) -> None:
                self.sink.error(msg, d.attr_locs.get(key, d.loc) if key else d.loc)  # noqa: B023
            if d.kind not in SCHEDULE_KINDS:
                err(f"unknown schedule directive '{d.kind}'; known: {', '.join(SCHEDULE_KINDS)}")
                continue
            bad = False
            for spec, problem in _attr_problems(d):
                bad = True
                if problem is None:
                    err(f"schedule {d.kind} needs attribute '{spec.name}'")
                else:
                    err(f"schedule {d.kind}: attribute '{spec.name}': {problem}", spec.name)
            if bad:
                continue
            g = self.m.graph(d.graph)
            if g is None:
                err(f"schedule {d.kind} names graph {d.graph}, which is not defined", "graph")
                continue
            names = {getattr(n, a, None) for n in g.nodes for a in ("index", "outer", "inner")}
            if d.index not in names:
                err(f"schedule {d.kind}: graph {d.graph} does not iterate index {d.index}",
                    "index")
            if d.factor > MAX_LANES:
                err(f"schedule {d.kind}: factor {d.factor}: at most {MAX_LANES} lanes are "
                    "supported", "factor")
            key3 = (d.kind, d.graph, d.index)
            if key3 in seen:
                err(f"schedule {d.kind} of index {d.index} in graph {d.graph} is given twice")
            seen.add(key3)

    # -- permute steps -----------------------------------------------------------------------
    def permute(self, p: Permute, written_by: dict, made_by: dict) -> None:
        """A `permute SRC -> DST [modes (...)]` step: both declared, DST a temp of SRC's order
        with SRC's dims permuted and SRC's block size, `modes` a permutation, SRC available
        (an input, or written by an earlier graph or step), DST made by this step alone."""
        where = f" [{p.name}]" if p.loc is None else ""

        def err(msg: str, loc: Loc | None) -> None:
            self.sink.error(msg + where, loc or p.loc)
        src, dst = self.tensors.get(p.src), self.tensors.get(p.dst)
        if not _permute_declared(p, src, dst, err):
            return
        _permute_sources(p, src, dst, written_by, made_by, err)
        if "fixed" in dst.format.kinds:
            # a permuted fiber can be longer than c: the copy stores compressed levels
            err(f"permute into tensor {dst.name}: its compressed(c) levels could not hold "
                f"the permuted fibers; declare them compressed", p.dst_loc)
            return
        modes = _permute_modes(p, src, dst, err)
        if modes is not None:
            _permute_blocks(p, src, dst, modes, err)

    # -- decompose steps ---------------------------------------------------------------------
    def decompose(self, d: Decompose, made_by: dict) -> None:
        """A `decompose SRC -> P0 >= t0, ..., R` step: SRC a declared unblocked input matrix,
        every part a declared temp matrix of SRC's dims made by this step alone; blocked parts
        (in front) with a threshold in (0, 1], the residual last, unblocked, without one."""
        def err(msg: str, loc: Loc | None) -> None:
            self.sink.error(msg, loc or d.loc)
        src = self.tensors.get(d.src)
        if src is None:
            err(f"decompose reads tensor {d.src}, which is not declared", d.src_loc)
            return
        if src.role != "input" or src.order != 2 or src.format.blocked:
            err(f"decompose reads {d.src}, which is not an unblocked input matrix", d.src_loc)
        if len(d.parts) < 2:
            err("decompose makes at least two parts (blocked ones, then the residual)", d.loc)
        locs = d.part_locs or (None,) * len(d.parts)
        for k, (name, thr, loc) in enumerate(zip(d.parts, d.thresholds, locs)):
            t = self.tensors.get(name)
            if t is None:
                err(f"decompose makes tensor {name}, which is not declared", loc)
                continue
            _decompose_part(d, src, t, k == len(d.parts) - 1, thr, loc, made_by, err)

    # -- per graph structure -----------------------------------------------------------------
    def structure(self, g: Graph) -> set[Node]:
        """Structural checks; returns the nodes whose attributes and ports are well-formed (the
        only ones the tensor checks look at). A graph of the same structure as one checked
        clean before (a reused loop's iterations: the same nodes, other tensors) is clean too."""
        key = _structure_key(g)
        if key is not None and key in self.clean:
            return set(g.nodes)
        errors = len(self.sink.errors)
        ok = self._structure(g)
        if key is not None and len(self.sink.errors) == errors and len(ok) == len(g.nodes):
            self.clean.add(key)
        return ok

    def _structure(self, g: Graph) -> set[Node]:
        names = g.stream_names()
        producer: dict[Stream, Node] = {}
        for n in g.nodes:
            for i, s in enumerate(n.outputs):
                if s in producer:
                    loc = n.result_locs[i] if i < len(n.result_locs) else n.loc
                    self.error(f"stream {self.name(s, names)} is defined twice", loc, g, n)
                producer.setdefault(s, n)
        ok: set[Node] = set()
        for n in g.nodes:
            good = self.attributes(g, n)
            good = self.ports(g, n, producer, names) and good
            if good:
                ok.add(n)
        self.dangling(g, names)
        if self.cycle(g):
            return set()  # reference chains are meaningless on a cycle
        return ok

    def attributes(self, g: Graph, n: Node) -> bool:
        good = True
        for spec, problem in _attr_problems(n):
            good = False
            if problem is None:
                self.error(f"{n.KIND} needs attribute '{spec.name}' ({spec.doc})", n.loc, g, n)
            else:
                what = "op" if spec.name == "op" else f"attribute '{spec.name}'"
                self.error(f"{n.KIND} {what}: {problem}", self.attr_loc(n, spec.name), g, n)
        for msg, key in n.verify_():      # the kind's own rules (samml.ir)
            self.error(msg, self.attr_loc(n, key) if key else n.loc, g, n)
            good = False
        if good and (getattr(n, "out", None) is not None or getattr(n, "in0", None) is not None):
            good = self._check_block_labels(g, n)
        return good

    def ports(self, g: Graph, n: Node, producer: dict[Stream, Node],
              names: dict[Stream, str]) -> bool:
        """Node n's operands defined, as many operands and results as its kind's signature
        has, each operand of its port's stream kind, each result of the kind its operands
        make it; False when any is not."""
        sig = n.signature(len(n.inputs))
        good = self._operands_defined(g, n, producer)
        if len(n.inputs) != len(sig.inputs):
            self.error(f"{n.KIND} expects {sig.arity}, got {len(n.inputs)}", n.loc, g, n)
            return False
        if len(n.outputs) != len(sig.outputs):
            want = ", ".join(p.name for p in sig.outputs) or "nothing"
            self.error(f"{n.KIND} defines {_plural(len(sig.outputs), 'result')} ({want}), "
                       f"but {len(n.outputs)} {'is' if len(n.outputs) == 1 else 'are'} named",
                       n.result_locs[0] if n.result_locs else n.loc, g, n)
            good = False
        good = self._operand_kinds(g, n, sig, names) and good
        if good and len(n.outputs) == len(sig.outputs):
            good = self._result_kinds(g, n)
        return good

    def _operands_defined(self, g: Graph, n: Node, producer: dict[Stream, Node]) -> bool:
        good = True
        for i, s in enumerate(n.inputs):
            if s not in producer:
                loc = n.operand_locs[i] if i < len(n.operand_locs) else n.loc
                what = f"stream %{s.name}" if s.name else f"operand {i + 1} of {n.KIND}"
                self.error(f"{what} is used but never defined", loc, g, n)
                good = False
        return good

    def _operand_kinds(self, g: Graph, n: Node, sig, names: dict[Stream, str]) -> bool:
        good = True
        first = n.inputs[0].kind if n.inputs else None
        for i, (s, port) in enumerate(zip(n.inputs, sig.inputs)):
            kinds = (first,) if port.kinds == (SAME,) else port.kinds
            if s.kind is None or None in kinds or s.kind in kinds:
                continue
            loc = n.operand_locs[i] if i < len(n.operand_locs) else n.loc
            want = " or ".join(kinds)
            if port.kinds == (SAME,):
                want += " (like operand 1)"
            self.error(f"operand {i + 1} of {n.KIND} ({port.name}) must be a {want} stream, "
                       f"but {self.name(s, names)} is {_KIND_TEXT[s.kind]} stream", loc, g, n)
            good = False
        return good

    def _result_kinds(self, g: Graph, n: Node) -> bool:
        # Results typed "like operand 1" must follow it (a pass may have rewired the input).
        good = True
        derived = n.output_kinds([s.kind for s in n.inputs])
        for i, (s, kind) in enumerate(zip(n.outputs, derived)):
            if kind is not None and s.kind is not None and s.kind != kind:
                loc = n.result_locs[i] if i < len(n.result_locs) else n.loc
                self.error(f"result {i + 1} of {n.KIND} is {_KIND_TEXT[s.kind]} stream, but "
                           f"its operands make it {_KIND_TEXT[kind]} stream", loc, g, n)
                good = False
        return good

    def dangling(self, g: Graph, names: dict[Stream, str]) -> None:
        used = {id(s) for n in g.nodes for s in n.inputs}
        for n in g.nodes:
            if not n.outputs:
                continue
            if not any(id(s) in used for s in n.outputs):
                what = "its result is never" if len(n.outputs) == 1 else "none of its results is ever"
                self.error(f"{n.KIND} is dead code: {what} used", n.loc, g, n)
                continue
            for i, s in enumerate(n.outputs):
                if id(s) not in used and s.kind in ("val", "repsig"):
                    loc = n.result_locs[i] if i < len(n.result_locs) else n.loc
                    why = ("a value must reach a writer or another node" if s.kind == "val"
                           else "a repeat signal must drive a repeat")
                    self.error(f"{s.kind} stream {self.name(s, names)} of {n.KIND} is never "
                               f"used: {why}", loc, g, n)

    def cycle(self, g: Graph) -> bool:
        """Report one cycle if the graph has any; True if it does."""
        index = {id(n): i for i, n in enumerate(g.nodes)}
        succ: list[list[int]] = [[] for _ in g.nodes]
        for j, n in enumerate(g.nodes):
            for s in n.inputs:
                if s.producer is not None and id(s.producer) in index:
                    succ[index[id(s.producer)]].append(j)
        color = [0] * len(g.nodes)  # 0 new, 1 on the stack, 2 done
        for start in range(len(g.nodes)):
            if color[start]:
                continue
            stack = [(start, iter(succ[start]))]
            path = [start]
            color[start] = 1
            while stack:
                v, it = stack[-1]
                w = next(it, None)
                if w is None:
                    stack.pop()
                    path.pop()
                    color[v] = 2
                elif color[w] == 1:
                    cyc = path[path.index(w):]
                    first = min(cyc)  # report from the earliest node, deterministically
                    k = cyc.index(first)
                    cyc = cyc[k:] + cyc[:k]
                    text = " -> ".join(g.nodes[i].KIND for i in cyc + [cyc[0]])
                    node = g.nodes[first]
                    self.error(f"graph {g.name} has a cycle: {text}", node.loc, g, node)
                    return True
                elif color[w] == 0:
                    color[w] = 1
                    stack.append((w, iter(succ[w])))
                    path.append(w)
        return False

    # -- tensors -----------------------------------------------------------------------------
    def tensor_uses(self, g: Graph, ok: set[Node]):
        """Tensor checks of one graph; returns the tensors read (by roots) and written, each
        with the first node and location doing so."""
        reads: dict[str, tuple[Node, Loc | None]] = {}
        writes: dict[str, tuple[Node, Loc | None]] = {}
        level_writers: dict[tuple[str, int], Node] = {}
        vals_writers: dict[str, Node] = {}
        origin: dict[Stream, tuple[str, int]] = {}  # ref stream -> (tensor, storage level)
        for n in g.topo_order():
            if n not in ok:
                continue
            tname = getattr(n, "tensor", None)
            decl = None
            if tname is not None:
                decl = self.tensors.get(tname)
                if decl is None:
                    self.error(f"tensor {tname} is not declared", self.attr_loc(n, "tensor"), g, n)
                    continue
            rule = n.TRAITS.refs      # how the kind carries references (samml.ir.REFS)
            if rule == "root":
                origin[n.outputs[0]] = (tname, 0)
                reads.setdefault(tname, (n, self.attr_loc(n, "tensor")))
            elif rule == "writer":
                self._writer(g, n, decl, writes, vals_writers, level_writers)
            else:
                getattr(self, "_refs_" + rule)(g, n, decl, origin)
        self._writes_complete(g, writes, vals_writers, level_writers)
        return reads, writes

    # The reference rules (a kind's `refs` trait, samml.ir.REFS): each checks a node that reads through reference
    # streams against the tensor and level they point into, or carries `origin` (ref stream ->
    # (tensor, storage level)) from its operands to its results.
    def _refs_none(self, g: Graph, n: Node, decl, origin: dict) -> None:
        """Reads no references, makes none (values, coordinates, repeat signals)."""

    def _refs_scan(self, g: Graph, n: Node, decl, origin: dict) -> None:
        self.scan(g, n, decl, origin)

    def _refs_locate(self, g: Graph, n: Node, decl, origin: dict) -> None:
        self.locate(g, n, decl, origin)

    def _refs_array(self, g: Graph, n: Node, decl, origin: dict) -> None:
        o = origin.get(n.inputs[0])
        if o is not None:
            self.array(g, n, decl, o)

    def _refs_through(self, g: Graph, n: Node, decl, origin: dict) -> None:
        """Every result carries operand 0's references (repeat, fork, join)."""
        o = origin.get(n.inputs[0])
        if o is not None:
            for s in n.outputs:
                origin[s] = o

    def _refs_pairs(self, g: Graph, n: Node, decl, origin: dict) -> None:
        """A joiner: result i + 1 carries the references of operand 2i + 1."""
        for i in range(len(n.inputs) // 2):
            o = origin.get(n.inputs[2 * i + 1])
            if o is not None:
                origin[n.outputs[i + 1]] = o

    def _refs_spill(self, g: Graph, n: Node, decl, origin: dict) -> None:
        """A spill: its buffer spilled once in the module (a ref stream keeps its origin for the
        replays)."""
        if n.buffer in self.spills:
            first = self.spills[n.buffer][1]
            self.error(f"buffer {n.buffer} is spilled twice", self.attr_loc(n, "buffer"), g, n)
            self.sink.note("first spilled here", first.loc)
            return
        s = n.inputs[0]
        self.spills[n.buffer] = (g, n, s.kind, origin.get(s))

    def _refs_replay(self, g: Graph, n: Node, decl, origin: dict) -> None:
        """A replay: of a buffer an earlier graph spilled, a stream of the spilled kind (a ref
        stream carries the spilled stream's origin)."""
        loc = self.attr_loc(n, "buffer")
        got = self.spills.get(n.buffer)
        if got is None:
            self.error(f"replay of buffer {n.buffer}, which no earlier graph spills", loc, g, n)
        elif got[0] is g:
            self.error(f"replay of buffer {n.buffer} in graph {g.name}, which spills it: a "
                       "buffer is replayed by a later graph (configuration)", loc, g, n)
        elif got[2] != n.stream:
            self.error(f"replay of buffer {n.buffer} says stream = {n.stream}, but the spilled "
                       f"stream is {_KIND_TEXT.get(got[2], 'an unknown')} stream",
                       self.attr_loc(n, "stream"), g, n)
        elif got[3] is not None:
            origin[n.outputs[0]] = got[3]

    def _writer(self, g: Graph, n: Node, decl, writes: dict, vals_writers: dict,
                level_writers: dict) -> None:
        """A write_level or write_vals: of a tensor that is not an input, the values written
        once per graph; recorded in `writes` and the writers by tensor (and level)."""
        tname = n.tensor
        if decl.role == "input":
            self.error(f"{n.KIND} writes tensor {tname}, which is an input (only output "
                       "and temp tensors can be written)", self.attr_loc(n, "tensor"),
                       g, n)
            return
        writes.setdefault(tname, (n, self.attr_loc(n, "tensor")))
        if isinstance(n, WriteVals):
            if tname in vals_writers:
                self.error(f"the values of tensor {tname} are written twice in graph "
                           f"{g.name}", n.loc, g, n)
            vals_writers.setdefault(tname, n)
        else:
            self.write_level(g, n, decl, level_writers)

    def _writes_complete(self, g: Graph, writes: dict, vals_writers: dict,
                         level_writers: dict) -> None:
        """Every tensor the graph writes has a classic format, and the graph writes its values
        and every compressed level."""
        for tname, (node, loc) in sorted(writes.items()):
            decl = self.tensors[tname]
            if not decl.format.classic:
                self.error(f"graph {g.name} writes tensor {tname}, whose format "
                           f"{decl.format.name()} has a singleton or fixed-length level; SAMML "
                           f"graphs write dense and compressed levels only", loc, g, node)
                continue
            missing = []
            if tname not in vals_writers:
                missing.append("its values (write_vals)")
            for level, kind in enumerate(decl.format.levels):
                mode = decl.format.mode_order[level]
                if kind == "compressed" and (tname, mode) not in level_writers:
                    missing.append(f"its compressed level {level} (write_level of mode {mode})")
            if missing:
                self.error(f"graph {g.name} writes tensor {tname} but not "
                           + " nor ".join(missing), loc, g, node)

    def _mode_ok(self, g: Graph, n: Node, decl) -> bool:
        if n.mode >= decl.order:
            self.error(f"{n.KIND} of mode {n.mode}, but tensor {decl.name} has "
                       f"{_plural(decl.order, 'mode')} (0..{decl.order - 1})",
                       self.attr_loc(n, "mode"), g, n)
            return False
        return True

    def _level_format(self, g: Graph, n: Node, decl) -> bool:
        level = decl.format.level_of_mode(n.mode)
        declared = decl.format.kind(level)
        if declared not in ("dense", "compressed") and n.KIND != "scan":
            self.error(f"tensor {decl.name} stores mode {n.mode} as a {declared} level, which "
                       f"SAMML graphs read but do not write", decl.loc or n.loc, g, n)
            return False
        if n.format != declared:
            self.error(f"{n.KIND} of tensor {decl.name} mode {n.mode} says {n.format}, but "
                       f"{decl.name} ({decl.format.name()}) stores mode {n.mode} in a {declared} "
                       f"level", self.attr_loc(n, "format"), g, n)
            return False
        return True

    def scan(self, g: Graph, n: Scan, decl, origin: dict) -> None:
        if not self._mode_ok(g, n, decl):
            return
        self._level_format(g, n, decl)
        level = decl.format.level_of_mode(n.mode)
        o = origin.get(n.inputs[0])
        if o is None:
            return
        src, depth = o
        if src != n.tensor:
            self.error(f"scan of tensor {n.tensor} reads references into tensor {src}",
                       n.operand_locs[0] if n.operand_locs else n.loc, g, n)
            return
        if depth != level:
            fmt = decl.format
            if depth >= decl.order:
                where = "past its last level (they point at values)"
            else:
                where = f"into level {depth} (mode {fmt.mode_order[depth]})"
            self.error(f"scan of mode {n.mode} of tensor {n.tensor} needs references into "
                       f"storage level {level} ({n.tensor} is {fmt.name()}: "
                       + ", ".join(f"level {k} holds mode {m}" for k, m in
                                   enumerate(fmt.mode_order))
                       + f"), but its input points {where}",
                       n.operand_locs[0] if n.operand_locs else n.loc, g, n)
            return
        origin[n.outputs[1]] = (n.tensor, level + 1)

    def locate(self, g: Graph, n: Locate, decl, origin: dict) -> None:
        """A locate's dense level: like a dense scan of it fed the parent refs."""
        o = origin.get(n.inputs[1])
        if o is not None:
            origin[n.outputs[1]] = o
        if not self._mode_ok(g, n, decl):
            return
        level = decl.format.level_of_mode(n.mode)
        if decl.format.kind(level) != "dense":
            self.error(f"locate into tensor {decl.name} mode {n.mode}, but {decl.name} "
                       f"({decl.format.name()}) stores mode {n.mode} in a "
                       f"{decl.format.kind(level)} level (locate needs a dense one)",
                       self.attr_loc(n, "mode"), g, n)
            return
        p = origin.get(n.inputs[2])
        if p is not None and p != (n.tensor, level):
            self.error(f"locate into mode {n.mode} of tensor {n.tensor} needs parent references "
                       f"into its storage level {level}, but its parent operand points into "
                       f"level {p[1]} of tensor {p[0]}",
                       n.operand_locs[2] if len(n.operand_locs) > 2 else n.loc, g, n)
            return
        origin[n.outputs[2]] = (n.tensor, level + 1)

    def array(self, g: Graph, n: Array, decl, o: tuple[str, int]) -> None:
        src, depth = o
        loc = n.operand_locs[0] if n.operand_locs else n.loc
        if src != n.tensor:
            self.error(f"array of tensor {n.tensor} reads references into tensor {src}", loc, g, n)
        elif depth != decl.order:
            self.error(f"array of tensor {n.tensor} needs references past its last level "
                       f"(after all {_plural(decl.order, 'level')} are scanned), but its input "
                       f"points into level {depth} (mode {decl.format.mode_order[depth]})",
                       loc, g, n)

    def write_level(self, g: Graph, n: WriteLevel, decl, writers: dict) -> None:
        if not self._mode_ok(g, n, decl) or not self._level_format(g, n, decl):
            return
        key = (decl.name, n.mode)
        if key in writers:
            self.error(f"level of mode {n.mode} of tensor {decl.name} is written twice in graph "
                       f"{g.name}", n.loc, g, n)
            if writers[key].loc is not None:
                self.sink.note("first written here", writers[key].loc)
            return
        writers[key] = n


    def _check_block_labels(self, g, n) -> bool:
        """Block einsum labels (docs/samml.md, Blocked tensors): `out` with every input's
        labels; results only from input labels; only a product contracts a label; a reducer
        only drops labels."""
        if not any(s.name == "out" for s in n.attr_specs()):
            return True
        binary = isinstance(n, Alu) and n.op in ALU_BINARY
        need = ["in0", "out"] + (["in1"] if binary else [])
        missing = [k for k in need if getattr(n, k, None) is None]
        if missing:
            self.error(f"{n.KIND} with block labels needs {', '.join(missing)} too (labels of "
                       "every input and of the result)", n.loc, g, n)
            return False
        ins = set(n.in0) | (set(n.in1) if binary else set())
        extra = [x for x in n.out if x not in ins]
        if extra:
            self.error(f"{n.KIND} result labels {', '.join(extra)} are in no input",
                       self.attr_loc(n, "out"), g, n)
            return False
        gone = ins - set(n.out)
        if gone and isinstance(n, Alu) and n.op not in ("mul", "bmm"):
            self.error(f"alu op {n.op} cannot contract the labels {', '.join(sorted(gone))} "
                       "(only mul sums over labels missing from out)", self.attr_loc(n, "out"),
                       g, n)
            return False
        return True


def _structure_key(g: Graph):
    """What `_Verifier.structure` checks of g, as a hashable value: per node its kind, its
    attributes (a tensor name only as valid or not: the structure does not depend on which),
    its operands (producer position, result index, kind) and its results' kinds; None when a
    value cannot be hashed (then g is checked in full)."""
    pos = {id(n): k for k, n in enumerate(g.nodes)}
    out = []
    for n in g.nodes:
        out.append(type(n))
        for spec in n.attr_specs():
            v = getattr(n, spec.name)
            if v.__class__ is list:
                v = tuple(v)
            elif spec.name == "tensor" and v.__class__ is str:
                v = _IDENT.match(v) is not None
            out.append(v)
        for x in n.inputs:
            out.append((pos.get(id(x.producer), -1), x.index, x.kind))
        out.append(tuple(x.kind for x in n.outputs))
    key = tuple(out)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _attr_problems(owner):
    """(spec, problem) for every attribute of a node or schedule directive that is required but
    missing (problem None) or set but ill-typed (problem: what is wrong), in declaration order."""
    for spec in owner.attr_specs():
        v = getattr(owner, spec.name)
        if v is None:
            if spec.required:
                yield spec, None
            continue
        problem = _type_problem(v, spec.type, spec.choices)
        if problem:
            yield spec, problem


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_name(v: Any) -> bool:
    return isinstance(v, str) and bool(_IDENT.match(v))


#: Attribute type -> (whether a value is one, what was expected); "enum" is _type_problem's.
_VALUE_TYPES = {
    "ident": (_is_name, "a name"),
    "int": (_is_int, "an integer"),
    "nat": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "pos": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "float": (lambda v: (_is_int(v) or isinstance(v, float))
              and not (isinstance(v, float) and math.isnan(v)), "a number"),
    "int_list": (lambda v: isinstance(v, list) and all(_is_int(x) and x >= 0 for x in v),
                 "a list of integers >= 0"),
    "ident_list": (lambda v: isinstance(v, list) and all(map(_is_name, v))
                   and len(set(v)) == len(v), "a list of distinct names"),
}


def _type_problem(v: Any, type_: str, choices: tuple[str, ...]) -> str | None:
    """Why `v` is not a value of attribute type `type_`, or None if it is."""
    if type_ == "enum":
        if isinstance(v, str) and v in choices:
            return None
        return f"unknown value {_show(v)}; expected one of {', '.join(choices)}"
    if type_ not in _VALUE_TYPES:
        raise AssertionError(type_)
    ok, expected = _VALUE_TYPES[type_]
    return None if ok(v) else f"expected {expected}, got {_show(v)}"


def _show(v: Any) -> str:
    from .printer import format_value
    return f"'{format_value(v)}'"

"""From a SAMML module to running simulations: one sim node per IR node, one channel per
(stream, consumer), graphs run in order with tensors written by one graph fed to later ones."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fuseflowc.diagnostics import UserError
from fuseflowc.ops import block_contracts
from fuseflowc.samml.ir import STEP_KINDS, Permute

from .arch import Arch
from .assemble import assemble
from .channel import Channel, make_port
from .decompose import run_decompose
from .engine import Engine
from .engine_fast import Unsupported as _Unsupported
from .levels import fixed_arrays, nonunique_arrays, singleton_arrays
from .memory import Memory
from .permute import array_bytes, run_permute
from .prims_compute import Alu, Reduce, Spacc1, Spacc2
from .prims_crd import CrdDrop, CrdHold, Fork, Join
from .prims_join import Intersect, Union
from .prims_locate import Locate
from .prims_spacc import Spacc3
from .prims_stream import Array, Repeat, Replay, RepSig, Root, Scan
from .prims_write import Spill, Writer


@dataclass
class KernelResult:
    """What one graph's simulation measured."""

    graph: str
    cycles: int
    nodes: list           # sim nodes (with their counters)
    channels: list        # Channel objects
    written: dict         # tensor name -> bytes written {seg, crd, vals}
    wall: float = 0.0
    activations: int = 0
    engine: str = "python"   # the engine that ran it: python or fast
    cpu: float = 0.0         # process CPU seconds of the engine run (what wall is on a busy machine)
    hoisted: bool = False    # a decompose step left out of the totals (`simulate --hoist`)

    @property
    def flops(self) -> int:
        return sum(n.flops for n in self.nodes)

    @property
    def hops(self) -> int:
        """Tokens moved over channels."""
        return sum(c.pushed for c in self.channels)

    def bytes_read(self) -> dict:
        return {"seg": sum(n.rd_seg for n in self.nodes), "crd": sum(n.rd_crd for n in self.nodes),
                "vals": sum(n.rd_vals for n in self.nodes)}

    def bytes_written(self) -> dict:
        return {"seg": sum(n.wr_seg for n in self.nodes), "crd": sum(n.wr_crd for n in self.nodes),
                "vals": sum(n.wr_vals for n in self.nodes)}


@dataclass
class SimResult:
    """Every kernel's result and the tensors written (name -> FiberTensor)."""

    kernels: list[KernelResult] = field(default_factory=list)
    tensors: dict = field(default_factory=dict)

    @property
    def cycles(self) -> int:
        return sum(k.cycles for k in self.kernels)


def _label(n) -> str:
    bits = [getattr(n, a) for a in ("tensor", "op", "index") if getattr(n, a, None) is not None]
    if getattr(n, "mode", None) is not None and getattr(n, "tensor", None) is not None \
            and getattr(n, "index", None) is None:
        bits.append(f"mode {n.mode}")
    return n.KIND + (f"({','.join(map(str, bits))})" if bits else "")


#: The engines a Simulator runs graphs on (None: the compiled one when it is built and
#: implements every primitive of the graph, else the Python one, with a note).
ENGINES = ("fast", "python")


class Simulator:
    """Simulates a module's graphs on input tensors with an architecture's timing model.

    `engine`: "python" (sim/engine.py), "fast" (the compiled core, sim/engine_fast.py: the same
    results, bit for bit; an error when it is not built or lacks a primitive of a graph), or
    None: "fast" where it can, else "python" with a one-line note in `notes`."""

    def __init__(self, module, inputs: dict, sizes: dict | None = None, arch: Arch | None = None,
                 max_cycles: int | None = None, progress=None, engine: str | None = None,
                 hoist: bool = False, keep_streams: bool = False, trace=None):
        """`progress`: None, or what to tell where the run is (sim.progress.Progress):
        `kernel(k, n, name)` as kernel k of n starts, `tick(cycle, flops)` while it runs (on
        either engine). `hoist`: decompose steps are left out of the totals (a static
        pattern's split, done once). `keep_streams`: a finished graph's nodes keep the data
        they read and the streams their writers recorded (tests look at them); by default
        they keep only their counters (Node.release), so memory does not grow graph by
        graph. `trace`: None, or a sim.trace.Recorder that every graph's activations feed
        (either engine: the same records)."""
        if engine is not None and engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES} or None, not {engine!r}")
        self.module = module
        self.tensors = dict(inputs)
        self.sizes = dict(sizes or {})
        self.arch = arch or Arch.load()
        self.max_cycles = max_cycles
        self.progress = progress
        self.engine = engine
        self.hoist = hoist           # decompose steps left out of the totals
        self.keep_streams = keep_streams
        self.trace = trace
        self.notes: list[str] = []   # one line each: why a graph ran on the Python engine
        #: buffer -> (tokens, bytes per token, block size) of the streams spilled so far that a
        #: later graph still replays (dropped after the last replay is built)
        self.spilled: dict[str, tuple[list, int, int | None]] = {}
        self._replays: dict[str, int] = {}
        for g in module.graphs:
            for n in g.nodes:
                if n.KIND == "replay":
                    self._replays[n.buffer] = self._replays.get(n.buffer, 0) + 1

    # ---- public --------------------------------------------------------------------------
    def run(self, graphs: list[str] | None = None) -> SimResult:
        """Run the module's graphs in order (or only those named); returns a SimResult."""
        result = SimResult()
        todo = self.kernels(graphs)
        for i, g in enumerate(todo):
            if self.progress is not None:
                self.progress.kernel(i + 1, len(todo), g.name)
            if isinstance(g, Permute):
                result.kernels.append(self.run_permute(g))
            elif isinstance(g, STEP_KINDS):
                result.kernels.append(self.run_decompose(g))
            else:
                result.kernels.append(self.run_graph(g))
                continue
            if self.trace is not None:
                self.trace.step(g.name, result.kernels[-1].cycles)
        for decl in self.module.tensors:
            if decl.role != "input" and decl.name in self.tensors:
                result.tensors[decl.name] = self.tensors[decl.name]
        return result

    def kernels(self, graphs: list[str] | None = None) -> list:
        """The graphs and steps (permute, decompose) `run(graphs)` runs, in order: the graphs
        named (all when None) and every step that comes before one of them (it may feed it)."""
        seq = self.module.sequence()
        todo = []
        for i, g in enumerate(seq):
            if isinstance(g, STEP_KINDS):
                if not graphs or any(not isinstance(h, STEP_KINDS) and h.name in graphs
                                     for h in seq[i + 1:]):
                    todo.append(g)
            elif not graphs or g.name in graphs:
                todo.append(g)
        return todo

    def run_permute(self, step) -> KernelResult:
        """Run a `permute SRC -> DST` step (sim/permute.py): DST becomes available to later
        graphs; reported as a kernel named like the step."""
        t0 = time.perf_counter()
        node, cycles, dst = run_permute(step, self.module, self.tensors, self.arch)
        self.tensors[step.dst] = dst
        written = {step.dst: {"seg": node.wr_seg, "crd": node.wr_crd, "vals": node.wr_vals}}
        return KernelResult(step.name, cycles, [node], [], written,
                            time.perf_counter() - t0, 0)

    def run_decompose(self, step) -> KernelResult:
        """Run a `decompose SRC -> P0 >= t0, ..., R` step (sim/decompose.py): the parts become
        available to later graphs; reported as a kernel named like the step, left out of the
        totals with `hoist`."""
        t0 = time.perf_counter()
        node, cycles, parts = run_decompose(step, self.module, self.tensors, self.arch)
        self.tensors.update(parts)
        written = {p: array_bytes(t, self.arch.element_bytes) for p, t in parts.items()}
        return KernelResult(step.name, cycles, [node], [], written,
                            time.perf_counter() - t0, 0, hoisted=self.hoist)

    def run_graph(self, graph) -> KernelResult:
        """Build and run one graph; the tensors it writes become available to later graphs."""
        nodes, chans, writers, memory = self.build(graph)
        engine_class = self.engine_for(graph, nodes)
        tick = None if self.progress is None else self.progress.tick
        traced = None if self.trace is None else self.trace.kernel(graph.name, nodes, chans, graph)
        engine = self._engine(engine_class, nodes, writers, tick, memory, traced)
        try:
            try:
                if engine_class is not Engine:
                    engine.prepare()    # the compiled graph: building, so not timed
                    if not self.keep_streams:   # the compiled graph has its own copies
                        for n in nodes:
                            n.release()
            except _Unsupported as e:   # a value or setting the compiled engine refuses
                if self.engine == "fast":
                    raise UserError(f"--engine fast: {e}; use --engine python") from None
                self._note(f"graph {graph.name}: {e}: running it on the Python engine")
                engine_class = Engine
                engine = self._engine(Engine, nodes, writers, tick, memory, traced)
            t0 = time.perf_counter()
            c0 = time.process_time()
            cycles = engine.run()
        except UserError as e:
            e.diagnostics[0].message = f"graph {graph.name}: " + e.diagnostics[0].message
            raise
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        written = self.collect(graph, writers)
        if traced is not None:
            self.trace.finish(traced, cycles, nodes)
        if not self.keep_streams:
            for n in nodes:
                n.release()
        return KernelResult(graph.name, cycles, nodes, chans, written, wall, engine.activations,
                            "python" if engine_class is Engine else "fast", cpu)

    def _engine(self, engine_class, nodes, writers, tick, memory, traced):
        """An engine of `engine_class` for the nodes, feeding `traced` (a sim.trace.KernelTrace)
        when tracing; the untraced engines are the plain ones (tracing off costs nothing)."""
        if traced is None:
            return engine_class(nodes, writers, self.max_cycles, tick, memory)
        if engine_class is Engine:
            from .trace import TracedEngine
            return TracedEngine(nodes, writers, self.max_cycles, tick, memory, trace=traced)
        return engine_class(nodes, writers, self.max_cycles, tick, memory, trace=traced.feed)

    def engine_for(self, graph, nodes):
        """The engine class that runs `graph` (see the class docstring)."""
        if self.engine == "python":
            return Engine
        from . import engine_fast
        if not engine_fast.available():
            why = f"the compiled engine is {engine_fast.unavailable_reason()}"
            if self.engine == "fast":
                raise UserError(f"--engine fast: {why}; use --engine python")
            self._note(f"{why}: running the Python engine")
            return Engine
        missing = engine_fast.unsupported(nodes)
        if missing:
            why = (f"graph {graph.name}: the compiled engine does not implement "
                   f"{', '.join(missing)} yet")
            if self.engine == "fast":
                raise UserError(f"--engine fast: {why}; use --engine python")
            self._note(f"{why}: running it on the Python engine")
            return Engine
        return engine_fast.FastEngine

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # ---- building ------------------------------------------------------------------------
    def _tensor(self, name: str, node_label: str):
        decl = self.module.tensor(name)
        if decl is None:
            raise UserError(f"simulation: {node_label} names undeclared tensor {name}")
        t = self.tensors.get(name)
        if t is None:
            raise UserError(f"simulation: {node_label} reads tensor {name}, which has no data "
                            "(not an input, and not written by an earlier graph)")
        return decl, t

    def build(self, graph):
        """Sim nodes, channels, writers and the memory (bandwidth calendar) of `graph`
        (unverified graphs are fine: a cycle simply deadlocks)."""
        arch = self.arch
        depth = arch.depth
        order = graph.topo_order()
        names = graph.stream_names()
        consumers = graph.consumers()
        eb = arch.element_bytes
        # Blocked val streams: from arrays of blocked tensors, through value primitives.
        blk: dict = {}
        for n in order:
            b = None
            if n.KIND == "array":
                decl = self.module.tensor(n.tensor)
                b = decl.block if decl is not None and decl.format.blocked else None
            elif n.KIND == "replay":
                b = self.spilled.get(n.buffer, (None, None, None))[2]
            else:
                for s in n.inputs:
                    if s.kind == "val" and blk.get(s):
                        b = blk[s]
                        break
            for s in n.outputs:
                if s.kind == "val":
                    blk[s] = b
        mem = Memory(arch.bandwidth, arch.mem_window)   # shared by this graph's nodes
        sim: dict = {}
        writers = []
        for i, n in enumerate(order):
            name = f"#{i} {_label(n)}"
            vb = None
            for s in list(n.inputs) + list(n.outputs):
                if s.kind == "val" and blk.get(s):
                    vb = blk[s]
            op = getattr(n, "op", None)
            if n.KIND == "alu" and vb and n.out is not None:
                # a labelled block ALU that contracts an inner index is a block matmul
                op = "bmm" if block_contracts(n.op, n.in0, n.in1, n.out) else n.op
            lat, ii = arch.timing(n.KIND, op, vb)
            sim[n] = self._make(n, name, lat, ii, vb, mem, eb)
            if isinstance(sim[n], Writer):
                writers.append(sim[n])
        chans = []
        in_map: dict = {}
        ports: dict = {}
        for n in order:
            outs = []
            for s in n.outputs:
                cs = []
                readers = consumers.get(s, [])
                for (c, pos) in readers:
                    cname = f"%{names.get(s, '?')}"
                    if len(readers) > 1:
                        cname += f"->{sim[c].name.split(' ')[0]}"
                    ch = Channel(cname, s.kind or "crd", depth)
                    cs.append(ch)
                    in_map[(id(c), pos)] = ch
                chans.extend(cs)
                outs.append(make_port(cs))
            ports[n] = outs
        for n in order:
            ins = []
            for pos, s in enumerate(n.inputs):
                ch = in_map.get((id(n), pos))
                if ch is None or s.producer is None:
                    raise UserError(f"simulation: {sim[n].name}: operand {pos} has no producer")
                ins.append(ch)
            sim[n].wire(ins, ports[n])
        return [sim[n] for n in order], chans, writers, mem

    def _level(self, n, name: str, fmt: str, verb: str):
        """The stored level of `n.tensor` for mode `n.mode` that scan/locate node `n` reads; a
        UserError when the mode does not exist or the data's level is not a `fmt` level."""
        decl, t = self._tensor(n.tensor, name)
        if not 0 <= n.mode < decl.order:
            raise UserError(f"simulation: {name}: tensor {n.tensor} has no mode {n.mode}")
        lvl = t.levels[t.format.level_of_mode(n.mode)]
        if lvl.kind != fmt:
            raise UserError(f"simulation: {name}: {verb} a {fmt} level but the data of "
                            f"{n.tensor} has a {lvl.kind} level for mode {n.mode}")
        return lvl

    def _make(self, n, name: str, lat: int, ii: int, vb, mem: Memory, eb: int):
        """The sim node of SAMML node `n` (named `name`, with its latency and ii; `vb`: the
        block size of its val streams, `mem` the graph's memory, `eb` bytes per element), made
        as NODES says for its kind."""
        entry = NODES.get(n.KIND)
        if entry is None:
            raise UserError(f"simulation: {name}: primitive kind {n.KIND} is not supported")
        cls, make = entry
        return make(self, cls, n, _At(name, lat, ii, vb, mem, eb))

    def _make_scan(self, cls, n, at: "_At"):
        """A scanner over the stored level it reads (dense, compressed, non-unique, fixed or
        singleton); all but dense read memory."""
        name, lat, ii, mem, eb = at.name, at.lat, at.ii, at.mem, at.eb
        mem_lat = lat + self.arch.mem_latency
        lvl = self._level(n, name, n.format, "scans")
        if lvl.kind == "dense":
            return cls(name, True, lvl.size, ii=ii, lat=lat)
        if lvl.kind == "compressed":
            return cls(name, False, lvl.size, bulk(lvl.seg), bulk(lvl.crd), ii=ii,
                       lat=mem_lat, eb=eb, mem=mem)
        if lvl.kind == "nonunique":
            seg, crd, refs = nonunique_arrays(lvl.seg, lvl.crd)
            return cls(name, False, lvl.size, bulk(seg), bulk(crd), ii=ii,
                       lat=mem_lat, eb=eb, mem=mem, refs=bulk(refs))
        if lvl.kind == "fixed":
            arrays = fixed_arrays(lvl.crd, lvl.width, eb)
        else:       # singleton: under the non-unique level above (fuseflowc.formats)
            t = self._tensor(n.tensor, name)[1]
            parent = t.levels[t.format.level_of_mode(n.mode) - 1]
            arrays = singleton_arrays(parent.seg, parent.crd, lvl.crd, eb)
        crd, refs, lo, hi, look = arrays
        return cls(name, False, lvl.size, None, bulk(crd), ii=ii,
                   lat=mem_lat, eb=eb, mem=mem, lo=bulk(lo),
                   hi=bulk(hi), look=[int(b) for b in look],
                   refs=None if refs is None else bulk(refs))

    def _make_locate(self, cls, n, at: "_At"):
        """A locator into the dense level it reads."""
        lvl = self._level(n, at.name, "dense", "locates into")
        return cls(at.name, lvl.size, ii=at.ii, lat=at.lat)

    def _make_array(self, cls, n, at: "_At"):
        """A value array over the tensor's values (b x b blocks, or scalars)."""
        decl, t = self._tensor(n.tensor, at.name)
        if t.block:
            vals = list(t.vals)
            zero = np.zeros((t.block, t.block))
            vbytes = at.eb * t.block * t.block
        else:
            vals = bulk(t.vals)
            zero = 0.0
            vbytes = at.eb
        return cls(at.name, vals, zero, vbytes, ii=at.ii, lat=at.lat + self.arch.mem_latency,
                   mem=at.mem)

    def _make_writer(self, cls, n, at: "_At"):
        """A level or value writer of a declared tensor; it charges memory only for what it
        stores (a dense level stores nothing)."""
        k = n.KIND
        decl = self.module.tensor(n.tensor)
        if decl is None:
            raise UserError(f"simulation: {at.name} writes undeclared tensor {n.tensor}")
        fmt = getattr(n, "format", None)
        if k == "write_vals":
            bpt = at.eb * (decl.block ** 2 if decl.block else 1)
        else:   # a compressed level stores a coordinate per token, a dense one nothing
            bpt = 0 if fmt == "dense" else at.eb
        return cls(at.name, k, n.tensor, getattr(n, "mode", None), fmt, ii=at.ii,
                   lat=at.lat + self.arch.mem_latency, mem=at.mem if bpt else None, bpt=bpt)

    def _make_spill(self, cls, n, at: "_At"):
        """A spill: a stream stored to DRAM, `eb` bytes per token (b x b per block value)."""
        block = at.vb if n.inputs and n.inputs[0].kind == "val" else None
        bpt = at.eb * (block * block if block else 1)
        return cls(at.name, n.buffer, ii=at.ii, lat=at.lat + self.arch.mem_latency, mem=at.mem,
                   bpt=bpt, block=block)

    def _make_replay(self, cls, n, at: "_At"):
        """A replay of a stream an earlier graph spilled (dropped after its last replay)."""
        if n.buffer not in self.spilled:
            raise UserError(f"simulation: {at.name} replays buffer {n.buffer}, which no earlier "
                            "graph spilled")
        toks, bpt, _ = self.spilled[n.buffer]
        self._replays[n.buffer] -= 1
        if not self._replays[n.buffer]:     # its last reader: memory does not grow per split
            del self.spilled[n.buffer]
        return cls(at.name, list(toks), bpt, n.stream == "val", ii=at.ii,
                   lat=at.lat + self.arch.mem_latency, mem=at.mem)

    # ---- outputs -------------------------------------------------------------------------
    def shape_of(self, decl) -> tuple[int, ...]:
        dims = []
        for d in decl.dims:
            if isinstance(d, int):
                dims.append(d)
            elif d in self.sizes:
                dims.append(self.sizes[d])
            else:
                raise UserError(f"simulation: the size of dim {d} of tensor {decl.name} is not "
                                "known from the input data")
        return tuple(dims)

    def collect(self, graph, writers) -> dict:
        """Assemble the tensors this graph wrote and charge their writers the bytes of the
        stored arrays (sim/README.md, "What bytes are counted"): each compressed level's seg
        and crd to that level's writer, every stored value (dense fill-in zeros included) to
        the tensor's write_vals."""
        by_tensor: dict = {}
        written = {}
        for w in writers:
            if w.kind == "spill":   # a stream kept for a later configuration's replay
                nbytes = len(w.got) * w.bpt
                if w.ins[0].kind == "val":
                    w.wr_vals += nbytes
                else:
                    w.wr_crd += nbytes
                self.spilled[w.buffer] = (w.got, w.bpt, w.block)
                continue
            by_tensor.setdefault(w.tensor, []).append(w)
        eb = self.arch.element_bytes
        for tname in sorted(by_tensor):
            ws = by_tensor[tname]
            decl = self.module.tensor(tname)
            levels = {w.mode: w.got for w in ws if w.kind == "write_level"}
            vw = [w for w in ws if w.kind == "write_vals"]
            if not vw:
                raise UserError(f"simulation: graph {graph.name}: tensor {tname} has no "
                                "write_vals")
            t, counts = assemble(tname, decl.format, self.shape_of(decl), decl.block, levels,
                                 vw[0].got)
            written[tname] = {k: v * eb for k, v in counts.items()}
            vw[0].wr_vals += counts["vals"] * eb
            lw = {w.mode: w for w in ws if w.kind == "write_level"}
            for k, mode in enumerate(decl.format.mode_order):
                if t.levels[k].kind == "compressed":
                    # assemble() rejects a compressed level without a writer
                    lvl = t.levels[k]
                    lw[mode].wr_seg += eb * int(lvl.seg.shape[0])
                    lw[mode].wr_crd += eb * int(lvl.crd.shape[0])
            self.tensors[tname] = t
        return written


def bulk(a: np.ndarray):
    """A level's or a tensor's array as a node's bulk data: the array itself when the compiled
    engine reads it without copying it into Python objects (int64 or float64, one
    dimension; sim/cpp/graph.cpp Build::ints and Build::values), else its Python list. The
    Python engine turns the array into a list when it runs the node (Node.materialize)."""
    if a.ndim == 1 and a.dtype in (np.int64, np.float64):
        return np.ascontiguousarray(a)
    return a.tolist()


class _At(NamedTuple):
    """Where a sim node is made: its name, latency and ii, the block size of its val streams
    (None: scalars), the graph's memory and bytes per element."""

    name: str
    lat: int
    ii: int
    vb: int | None
    mem: Memory
    eb: int


def _plain(sim: Simulator, cls, n, at: _At):
    """A node that needs only its name and timing."""
    return cls(at.name, at.ii, at.lat)


def _make_intersect(sim: Simulator, cls, n, at: _At):
    return cls(at.name, len(n.inputs) // 2, ii=at.ii, lat=at.lat)


def _make_union(sim: Simulator, cls, n, at: _At):
    return cls(at.name, len(n.inputs) // 2, getattr(n, "required", None) or (), ii=at.ii,
               lat=at.lat)


def _labels(n):
    """A compute node's block einsum labels (None: plain b x b blocks or scalars)."""
    if getattr(n, "out", None) is None:
        return None
    return (n.in0, n.in1, n.out) if n.KIND == "alu" else (n.in0, n.out)


def _make_alu(sim: Simulator, cls, n, at: _At):
    return cls(at.name, n.op, at.vb, n.const, ii=at.ii, lat=at.lat, labels=_labels(n))


def _make_reducer(sim: Simulator, cls, n, at: _At):
    """A reducer or sparse accumulator."""
    return cls(at.name, n.op, at.vb, ii=at.ii, lat=at.lat, labels=_labels(n))


def _make_spacc(sim: Simulator, cls, n, at: _At):
    """A sparse accumulator of order 2 or more (with its `emit_empty` attribute)."""
    return cls(at.name, n.op, at.vb, ii=at.ii, lat=at.lat, labels=_labels(n),
               emit_empty=n.emit_empty == "yes")


def _make_lanes(sim: Simulator, cls, n, at: _At):
    """A fork or join."""
    return cls(at.name, n.lanes, n.level, at.ii, at.lat)


#: SAMML kind -> (its Python engine class, sim/prims_*.py; how the builder makes one from the
#: IR node: maker(simulator, class, node, _At)). The Python engine's one table of kinds
#: (fuseflowc.samml.kinds); tests/samml/test_kind_registry.py checks it covers every kind.
NODES: dict = {
    "root": (Root, _plain),
    "scan": (Scan, Simulator._make_scan),
    "repsig": (RepSig, _plain),
    "repeat": (Repeat, _plain),
    "intersect": (Intersect, _make_intersect),
    "union": (Union, _make_union),
    "locate": (Locate, Simulator._make_locate),
    "array": (Array, Simulator._make_array),
    "alu": (Alu, _make_alu),
    "reduce": (Reduce, _make_reducer),
    "spacc1": (Spacc1, _make_reducer),
    "spacc2": (Spacc2, _make_spacc),
    "spacc3": (Spacc3, _make_spacc),
    "crddrop": (CrdDrop, _plain),
    "crdhold": (CrdHold, _plain),
    "write_level": (Writer, Simulator._make_writer),
    "write_vals": (Writer, Simulator._make_writer),
    "fork": (Fork, _make_lanes),
    "join": (Join, _make_lanes),
    "spill": (Spill, Simulator._make_spill),
    "replay": (Replay, Simulator._make_replay),
}

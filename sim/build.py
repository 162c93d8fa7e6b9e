"""From a SAMML module to running simulations: one sim node per IR node, one channel per
(stream, consumer), graphs run in order with tensors written by one graph fed to later ones."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

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
            if n.KIND in ("write_level", "write_vals", "spill"):
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
        block size of its val streams, `mem` the graph's memory, `eb` bytes per element)."""
        k = n.KIND
        if k == "root":
            return Root(name, ii, lat)
        if k == "scan":
            return self._make_scan(n, name, lat, ii, mem, eb)
        if k == "repsig":
            return RepSig(name, ii, lat)
        if k == "repeat":
            return Repeat(name, ii, lat)
        if k in ("intersect", "union"):
            npairs = len(n.inputs) // 2
            if k == "intersect":
                return Intersect(name, npairs, ii=ii, lat=lat)
            return Union(name, npairs, getattr(n, "required", None) or (), ii=ii, lat=lat)
        if k == "locate":
            lvl = self._level(n, name, "dense", "locates into")
            return Locate(name, lvl.size, ii=ii, lat=lat)
        if k == "array":
            return self._make_array(n, name, lat, ii, mem, eb)
        if k in ("alu", "reduce", "spacc1", "spacc2", "spacc3"):
            return self._make_compute(n, name, lat, ii, vb)
        if k == "crddrop":
            return CrdDrop(name, ii, lat)
        if k == "crdhold":
            return CrdHold(name, ii, lat)
        if k == "fork":
            return Fork(name, n.lanes, n.level, ii, lat)
        if k == "join":
            return Join(name, n.lanes, n.level, ii, lat)
        if k in ("write_level", "write_vals"):
            return self._make_writer(n, name, lat, ii, mem, eb)
        if k in ("spill", "replay"):
            return self._make_spill_replay(n, name, lat, ii, vb, mem, eb)
        raise UserError(f"simulation: {name}: primitive kind {k} is not supported")

    def _make_scan(self, n, name: str, lat: int, ii: int, mem: Memory, eb: int):
        """A scanner over the stored level it reads (dense, compressed, non-unique, fixed or
        singleton); all but dense read memory."""
        mem_lat = lat + self.arch.mem_latency
        lvl = self._level(n, name, n.format, "scans")
        if lvl.kind == "dense":
            return Scan(name, True, lvl.size, ii=ii, lat=lat)
        if lvl.kind == "compressed":
            return Scan(name, False, lvl.size, lvl.seg.tolist(), lvl.crd.tolist(), ii=ii,
                        lat=mem_lat, eb=eb, mem=mem)
        if lvl.kind == "nonunique":
            seg, crd, refs = nonunique_arrays(lvl.seg, lvl.crd)
            return Scan(name, False, lvl.size, seg.tolist(), crd.tolist(), ii=ii,
                        lat=mem_lat, eb=eb, mem=mem, refs=refs.tolist())
        if lvl.kind == "fixed":
            arrays = fixed_arrays(lvl.crd, lvl.width, eb)
        else:       # singleton: under the non-unique level above (fuseflowc.formats)
            t = self._tensor(n.tensor, name)[1]
            parent = t.levels[t.format.level_of_mode(n.mode) - 1]
            arrays = singleton_arrays(parent.seg, parent.crd, lvl.crd, eb)
        crd, refs, lo, hi, look = arrays
        return Scan(name, False, lvl.size, None, crd.tolist(), ii=ii,
                    lat=mem_lat, eb=eb, mem=mem, lo=lo.tolist(),
                    hi=hi.tolist(), look=[int(b) for b in look],
                    refs=None if refs is None else refs.tolist())

    def _make_array(self, n, name: str, lat: int, ii: int, mem: Memory, eb: int):
        """A value array over the tensor's values (b x b blocks, or scalars)."""
        decl, t = self._tensor(n.tensor, name)
        if t.block:
            vals = list(t.vals)
            zero = np.zeros((t.block, t.block))
            vbytes = eb * t.block * t.block
        else:
            vals = t.vals.tolist()
            zero = 0.0
            vbytes = eb
        return Array(name, vals, zero, vbytes, ii=ii, lat=lat + self.arch.mem_latency, mem=mem)

    def _make_compute(self, n, name: str, lat: int, ii: int, vb):
        """An ALU, reducer or sparse accumulator, with its block einsum labels (None: plain
        b x b blocks or scalars)."""
        k = n.KIND
        labels = None
        if getattr(n, "out", None) is not None:
            labels = ((n.in0, n.in1, n.out) if k == "alu" else (n.in0, n.out))
        if k == "alu":
            return Alu(name, n.op, vb, n.const, ii=ii, lat=lat, labels=labels)
        cls = {"reduce": Reduce, "spacc1": Spacc1, "spacc2": Spacc2, "spacc3": Spacc3}[k]
        return cls(name, n.op, vb, ii=ii, lat=lat, labels=labels)

    def _make_writer(self, n, name: str, lat: int, ii: int, mem: Memory, eb: int):
        """A level or value writer of a declared tensor; it charges memory only for what it
        stores (a dense level stores nothing)."""
        k = n.KIND
        decl = self.module.tensor(n.tensor)
        if decl is None:
            raise UserError(f"simulation: {name} writes undeclared tensor {n.tensor}")
        fmt = getattr(n, "format", None)
        if k == "write_vals":
            bpt = eb * (decl.block ** 2 if decl.block else 1)
        else:   # a compressed level stores a coordinate per token, a dense one nothing
            bpt = 0 if fmt == "dense" else eb
        return Writer(name, k, n.tensor, getattr(n, "mode", None), fmt, ii=ii,
                      lat=lat + self.arch.mem_latency, mem=mem if bpt else None, bpt=bpt)

    def _make_spill_replay(self, n, name: str, lat: int, ii: int, vb, mem: Memory, eb: int):
        """A spill (a stream stored to DRAM, `eb` bytes per token, b x b per block value) or a
        replay of one an earlier graph spilled."""
        if n.KIND == "spill":
            block = vb if n.inputs and n.inputs[0].kind == "val" else None
            bpt = eb * (block * block if block else 1)
            return Spill(name, n.buffer, ii=ii, lat=lat + self.arch.mem_latency, mem=mem,
                         bpt=bpt, block=block)
        if n.buffer not in self.spilled:
            raise UserError(f"simulation: {name} replays buffer {n.buffer}, which no earlier "
                            "graph spilled")
        toks, bpt, _ = self.spilled[n.buffer]
        self._replays[n.buffer] -= 1
        if not self._replays[n.buffer]:     # its last reader: memory does not grow per split
            del self.spilled[n.buffer]
        return Replay(name, list(toks), bpt, n.stream == "val", ii=ii,
                      lat=lat + self.arch.mem_latency, mem=mem)

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

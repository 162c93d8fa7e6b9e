"""Time-lines of a simulation as a Chrome trace-event JSON file (`simulate --trace`): what the
Perfetto UI (ui.perfetto.dev) and chrome://tracing open.

Both engines feed a `Recorder` the same record after every activation of a node (the Python
engine through `TracedEngine`, the compiled one from its loop, sim/cpp/engine.cpp): the node, its
clock after the activation, the firings, stall cycles and off-chip bytes the activation added,
and the token count of each of its input and output channels. From these the recorder keeps,
per node, coalesced intervals of `busy` (firings x ii) and `stalled` cycles (waiting for an
output slot); per channel, its occupancy at the node clocks that touched it; per kernel, the
bytes moved per cycle.

Placement: an activation runs its node's firings back to back as far as inputs and output
room allow (sim/node.py), so only its totals are seen, not each firing. Its stalled cycles,
then its busy cycles, are drawn ending where its last firing ends (clock + ii): the firing rule
guarantees they fit between the previous activation's end and that point, so a node's slices
never overlap and sum exactly to its `busy_cycles` and `stalled_cycles` in `--json`.

Time: 1 cycle is 1 microsecond of the viewer; kernels run one after another on one time-line
(kernel k starts where kernel k-1 ended), each a process with a `kernel` track, one track per
node (thread names: the node's name in `--json` and the streams it defines in the SAMML text)
and counter tracks. A trace above `limit` events is coarsened: slices closer than a quantum of
cycles are merged (each merged slice carries its exact busy and stalled cycles in `args`) and
counters keep their peak per quantum; `otherData` says so.
"""

from __future__ import annotations

from .engine import Engine

#: Default most events in a trace: a file of some 50 MB (under the 64 MiB `report` reads), which
#: Perfetto's UI opens in seconds.
DEFAULT_LIMIT = 500_000
#: Fewest events a limit may ask for (every track's name and one slice each need a few).
MIN_LIMIT = 1_000
#: Buffered record ints before the recorder parses them (the compiled engine batches too).
BATCH = 1 << 16
#: Most memory-bandwidth samples per kernel.
MEMORY_BINS = 1000

BUSY, STALLED = "busy", "stalled"


class TracedEngine(Engine):
    """The Python engine, writing each activation's record to `recorder` (a KernelTrace)."""

    def __init__(self, *args, trace=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.trace = trace
        self.buf: list[int] = []
        self.index = {id(n): k for k, n in enumerate(self.nodes)}

    def step(self, node) -> bool:
        f0, s0, b0 = node.fires, node.stall, _bytes(node)
        last = super().step(node)
        buf = self.buf
        buf += (self.index[id(node)], node.t, node.fires - f0, node.stall - s0,
                _bytes(node) - b0)
        buf += [len(c.toks) for c in node.ins]
        buf += [len(c.toks) for c in node.ochans]
        if len(buf) >= BATCH:
            self.flush()
        return last

    def run(self) -> int:
        try:
            return super().run()
        finally:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.trace.feed(self.buf)
            self.buf = []


def _bytes(n) -> int:
    return n.rd_seg + n.rd_crd + n.rd_vals + n.wr_seg + n.wr_crd + n.wr_vals


class KernelTrace:
    """What one kernel's activations showed: per node coalesced intervals, per channel
    occupancy samples, memory bytes per cycle bin."""

    def __init__(self, name: str, start: int, nodes: list, channels: list, tracks: list[str]):
        self.name = name
        self.start = start
        self.cycles = 0
        self.tracks = tracks
        self.ii = [n.ii for n in nodes]
        pos = {id(c): k for k, c in enumerate(channels)}
        self.node_chans = [[pos[id(c)] for c in list(n.ins) + list(n.ochans)] for n in nodes]
        self.chan_names = unique_names([c.name for c in channels])
        # per node: [start, end, state] slices, contiguous same-state ones merged
        self.slices: list[list[list]] = [[] for _ in nodes]
        self.occupancy: list[dict[int, int]] = [{} for _ in channels]
        self.memory: dict[int, float] = {}   # fine bin (MEMORY_FINE cycles) -> bytes
        self.fed = [0] * len(nodes)          # bytes each node's activations reported
        self.overlaps = 0                    # activations drawn later than they ended

    MEMORY_FINE = 16

    def feed(self, buf: list[int]) -> None:
        """Parse a batch of activation records (see the module docstring)."""
        i, n = 0, len(buf)
        while i < n:
            k, t, fires, stall, nbytes = buf[i:i + 5]
            i += 5
            chans = self.node_chans[k]
            ts = t if t > 0 else 0
            for c, size in zip(chans, buf[i:i + len(chans)]):
                self.occupancy[c][ts] = size
            i += len(chans)
            if fires or stall:
                end = t + self.ii[k]
                busy = fires * self.ii[k]
                self._add(k, end - busy - stall, end - busy, STALLED)
                self._add(k, end - busy, end, BUSY)
            if nbytes:
                self.fed[k] += nbytes
                b = ts // self.MEMORY_FINE
                self.memory[b] = self.memory.get(b, 0) + nbytes

    def settle(self, nodes: list) -> None:
        """Spread the bytes a node was charged after its run (a writer's, counted when its
        tensor is assembled: sim/build.py collect) over its busy slices, in proportion to
        their cycles: a writer moves its bytes token by token as it fires."""
        for k, n in enumerate(nodes):
            missing = _bytes(n) - self.fed[k]
            busy = [(s, e) for s, e, state in self.slices[k] if state == BUSY]
            total = sum(e - s for s, e in busy)
            if missing <= 0 or not total:
                continue
            for s, e in busy:
                b = (e - 1) // self.MEMORY_FINE
                self.memory[b] = self.memory.get(b, 0) + missing * (e - s) / total
            self.fed[k] += missing

    def _add(self, k: int, start: int, end: int, state: str) -> None:
        if end <= start:
            return
        s = self.slices[k]
        if s:
            last = s[-1]
            if start < last[1]:     # never by the firing rule (sim/node.py); kept exact anyway
                self.overlaps += 1
                end += last[1] - start
                start = last[1]
            if last[1] == start and last[2] == state:
                last[1] = end
                return
        s.append([start, end, state])


def unique_names(names: list[str]) -> list[str]:
    """The names, a repeated one numbered (`%c->#3`, `%c->#3 (2)`): a node reading one stream
    at two operands has two channels of one name, and a counter track is known by its name
    (one series per name, or its samples would interleave out of time order)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


class Recorder:
    """A whole run's trace: one KernelTrace per graph or step, in run order."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self.kernels: list[KernelTrace] = []
        self.end = 0

    def kernel(self, name: str, nodes: list, channels: list, graph=None) -> KernelTrace:
        """Start the trace of a graph (its sim nodes and channels; `graph`: the SAMML graph,
        for the stream names on each track)."""
        k = KernelTrace(name, self.end, nodes, channels, track_names(nodes, graph))
        self.kernels.append(k)
        return k

    def finish(self, k: KernelTrace, cycles: int, nodes: list = ()) -> None:
        """The kernel ran `cycles` cycles (its `nodes` with their final counters): the next
        one starts after it."""
        k.cycles = cycles
        k.settle(nodes)
        self.end = k.start + cycles

    def step(self, name: str, cycles: int) -> None:
        """A permute or decompose step (no dataflow nodes): a kernel slice only."""
        k = KernelTrace(name, self.end, [], [], [])
        self.kernels.append(k)
        self.finish(k, cycles)

    # ---- the file -------------------------------------------------------------------------
    def document(self) -> dict:
        """The trace as a JSON-ready dict, coarsened to at most `limit` events."""
        quantum = 1
        span = max(self.end, 1)
        count = EventCount(self.kernels)
        while count(quantum) > self.limit and quantum <= span:
            quantum *= 2
        events = self._events(quantum)
        if len(events) > self.limit:
            from fuseflowc.diagnostics import UserError
            raise UserError(f"--trace-limit {self.limit:,}: the trace needs at least "
                            f"{len(events):,} events (one slice per node and one sample per "
                            "counter); give a larger limit or trace one graph (--graph)")
        other = {"tool": "fuseflowc simulate --trace", "time_unit": "1 us = 1 cycle",
                 "cycles": self.end, "limit": self.limit, "events": len(events),
                 "merged": quantum > 1}
        if quantum > 1:
            other["quantum_cycles"] = quantum
            other["note"] = (f"above --trace-limit: slices less than {quantum} cycles apart "
                             "merged (args keep their exact busy and stalled cycles), counters "
                             f"at their peak per {quantum} cycles")
        return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}

    def _events(self, q: int) -> list[dict]:
        out: list[dict] = []
        for p, k in enumerate(self.kernels, start=1):
            out += kernel_events(k, p, q)
        return out


class EventCount:
    """How many events the trace has at a quantum, without making them (numpy over the gaps
    between slices and the counter samples): `document` tries quanta 1, 2, 4, ..."""

    def __init__(self, kernels: list[KernelTrace]):
        import numpy as np
        self.np = np
        self.fixed = 0          # metadata, kernel slices, and the tracks' first slices
        gaps, keys = [], []
        for k in kernels:
            self.fixed += 6 + 2 * len(k.tracks)
            for slices in k.slices:
                if slices:
                    self.fixed += 2
                    a = np.array([x[0] for x in slices[1:]], dtype=np.int64)
                    b = np.array([x[1] for x in slices[:-1]], dtype=np.int64)
                    gaps.append(a - b)
            for c, samples in enumerate(k.occupancy):
                keys.append((c + len(keys), np.array(sorted(samples), dtype=np.int64)))
        self.gaps = np.concatenate(gaps) if gaps else np.zeros(0, dtype=np.int64)
        self.counters = keys
        self.kernels = kernels

    def __call__(self, q: int) -> int:
        np = self.np
        n = self.fixed
        n += 2 * (len(self.gaps) if q == 1 else int(np.count_nonzero(self.gaps >= q)))
        for _, ts in self.counters:
            n += len(ts) if q == 1 else len(np.unique(ts // q))
        n += sum(len(memory_events(k, 1, q)) for k in self.kernels)
        return n


def track_names(nodes: list, graph) -> list[str]:
    """Each node's track name: its name in --json, then the streams it defines in the SAMML
    text (`#3 A,1,j = %cj, %rj`)."""
    if graph is None:
        return [n.name for n in nodes]
    names = graph.stream_names()
    out = []
    for n, g in zip(nodes, graph.topo_order()):
        streams = ", ".join("%" + names.get(s, "?") for s in g.outputs)
        out.append(f"{n.name} = {streams}" if streams else n.name)
    return out


def _meta(pid: int, tid: int, what: str, args: dict) -> dict:
    return {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": args}


def kernel_events(k: KernelTrace, pid: int, q: int) -> list[dict]:
    """The events of one kernel (process `pid`), slices merged at quantum q (1: none)."""
    t0 = k.start
    ev = [_meta(pid, 0, "process_name", {"name": f"kernel {pid}: {k.name}"}),
          _meta(pid, 0, "process_sort_index", {"sort_index": pid}),
          _meta(pid, 0, "thread_name", {"name": "kernel"}),
          _meta(pid, 0, "thread_sort_index", {"sort_index": 0}),
          {"ph": "B", "name": k.name, "cat": "kernel", "pid": pid, "tid": 0, "ts": t0,
           "args": {"cycles": k.cycles}},
          {"ph": "E", "pid": pid, "tid": 0, "ts": t0 + k.cycles}]
    for i, name in enumerate(k.tracks):
        tid = i + 1
        ev.append(_meta(pid, tid, "thread_name", {"name": name}))
        ev.append(_meta(pid, tid, "thread_sort_index", {"sort_index": tid}))
        for start, end, busy, stalled in merged(k.slices[i], q):
            state = BUSY if busy >= stalled else STALLED
            ev.append({"ph": "B", "name": state, "cat": "node", "pid": pid, "tid": tid,
                       "ts": t0 + start,
                       "args": {"busy_cycles": busy, "stalled_cycles": stalled}})
            ev.append({"ph": "E", "pid": pid, "tid": tid, "ts": t0 + end})
    for c, samples in enumerate(k.occupancy):
        name = f"occupancy {k.chan_names[c]}"
        for ts, v in peaks(samples, q):
            ev.append({"ph": "C", "name": name, "cat": "channel", "pid": pid, "ts": t0 + ts,
                       "args": {"tokens": v}})
    ev += memory_events(k, pid, q)
    return ev


def merged(slices: list[list], q: int):
    """(start, end, busy, stalled) of a node's slices, those less than q cycles apart merged
    (q = 1: each slice as it is)."""
    cur = None
    for start, end, state in slices:
        b, s = (end - start, 0) if state == BUSY else (0, end - start)
        if cur is not None and start - cur[1] < q and q > 1:
            cur[1] = end
            cur[2] += b
            cur[3] += s
            continue
        if cur is not None:
            yield tuple(cur)
        cur = [start, end, b, s]
    if cur is not None:
        yield tuple(cur)


def peaks(samples: dict[int, int], q: int):
    """(cycle, value) of a counter's samples in time order, the largest per q cycles."""
    if q == 1:
        yield from sorted(samples.items())
        return
    best: dict[int, int] = {}
    for ts, v in samples.items():
        b = ts - ts % q
        if v > best.get(b, -1):
            best[b] = v
    yield from sorted(best.items())


def memory_events(k: KernelTrace, pid: int, q: int) -> list[dict]:
    """The kernel's memory bandwidth in use (bytes per cycle) in bins of at least q cycles and
    at most MEMORY_BINS per kernel, ending at 0 after the last."""
    if not k.memory:
        return []
    width = k.MEMORY_FINE
    while width < q or (k.cycles // width) + 1 > MEMORY_BINS:
        width *= 2
    bins: dict[int, int] = {}
    for b, nbytes in k.memory.items():
        w = b * k.MEMORY_FINE // width
        bins[w] = bins.get(w, 0) + nbytes
    ev = []
    last = None
    for w in sorted(bins):
        if last is not None and w > last + 1:
            ev.append(_mem(pid, k.start + (last + 1) * width, 0))
        ev.append(_mem(pid, k.start + w * width, round(bins[w] / width, 3)))
        last = w
    ev.append(_mem(pid, k.start + (last + 1) * width, 0))
    return ev


def _mem(pid: int, ts: int, v) -> dict:
    return {"ph": "C", "name": "memory bandwidth", "cat": "memory", "pid": pid, "ts": ts,
            "args": {"bytes_per_cycle": v}}


def trace_text(doc: dict) -> str:
    """The trace file's text: compact JSON, one event per line (diffs and greps stay usable).
    The list is encoded in one call (the C encoder; one call per event took most of the time
    of a large trace); events start with `{"ph"`, and `},{"ph"` cannot occur inside a JSON
    string (its quotes would be escaped), so the line breaks go there."""
    import json
    events = json.dumps(doc["traceEvents"], separators=(",", ":"))[1:-1]
    events = events.replace('},{"ph"', '},\n{"ph"')
    rest = {k: v for k, v in doc.items() if k != "traceEvents"}
    head = json.dumps(rest, separators=(",", ":"))[1:-1]
    return '{"traceEvents":[\n' + events + "\n]," + head + "}\n"

"""The load of a simulated run (`simulate --json-out RUN.json`) on a module's graphs, for
`dot --load`: per node its busy and stalled cycles and busy fraction, per edge the tokens it
carried. The JSON names nodes `#i label` (i: the node's place in its graph's topological
order, sim/build.py) and channels `%stream` (`%stream->#j` when the stream has several
consumers), so both are matched to the SAMML graph by position and stream name; a run of
another module is refused, saying what differs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..diagnostics import UserError


@dataclass
class NodeLoad:
    busy: int
    stalled: int
    cycles: int      # the kernel's cycles

    @property
    def fraction(self) -> float:
        """Busy cycles over the kernel's cycles (0 for an empty kernel)."""
        return min(self.busy / self.cycles, 1.0) if self.cycles else 0.0


@dataclass
class GraphLoad:
    cycles: int
    nodes: list[NodeLoad] = field(default_factory=list)
    tokens: dict[tuple[str, int | None], int] = field(default_factory=dict)   # (stream, #j)

    def edge(self, stream: str, consumer: int) -> int | None:
        """Tokens over the channel of `stream` to the node at position `consumer`."""
        got = self.tokens.get((stream, consumer))
        return self.tokens.get((stream, None)) if got is None else got


@dataclass
class RunLoad:
    graphs: dict[str, GraphLoad]
    max_tokens: int


def read_load(text: str, shown: str) -> RunLoad:
    """Parse a `simulate --json` document; UserError naming `shown` when it is not one."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{shown}:{e.lineno}:{e.colno}: not JSON ({e.msg}); give the file "
                        "`simulate --json-out` wrote") from None
    kernels = doc.get("kernels") if isinstance(doc, dict) else None
    if not isinstance(kernels, list):
        raise UserError(f"{shown}: not a `simulate --json` result (no \"kernels\" list)")
    graphs: dict[str, GraphLoad] = {}
    top = 0
    for i, k in enumerate(kernels):
        where = f"{shown}: kernels[{i}]"
        try:
            name, cycles = str(k["graph"]), _count(k["cycles"])
            nodes = [NodeLoad(_count(n["busy_cycles"]), _count(n["stalled_cycles"]), cycles)
                     for n in k["nodes"]]
            names = [str(n["name"]) for n in k["nodes"]]
            chans = [(str(c["name"]), _count(c["tokens"])) for c in k["channels"]]
        except (KeyError, TypeError, ValueError) as e:
            raise UserError(f"{where}: not a kernel of `simulate --json` ({_why(e)})") from None
        for j, n in enumerate(names):
            if not n.startswith(f"#{j} ") and n != f"#{j}":
                if j == 0 and not chans:     # a permute or decompose step: not a graph
                    break
                raise UserError(f"{where}: node {j} is named {n!r}, not #{j}: not a run "
                                "of a SAMML module")
        g = GraphLoad(cycles, nodes)
        for cname, tok in chans:
            stream, _, to = cname.partition("->#")
            g.tokens[(stream.lstrip("%"), int(to) if to.isdigit() else None)] = tok
            top = max(top, tok)
        graphs[name] = g
    return RunLoad(graphs, top)


def _count(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{v!r} is not a count")
    return v


def _why(e: Exception) -> str:
    return f"missing {e}" if isinstance(e, KeyError) else str(e)


def check_matches(load: RunLoad, module, graph: str | None, shown: str) -> None:
    """Refuse a run whose graphs are not the module's (a different module, or another
    pipeline of it): every drawn graph must have been simulated with as many nodes."""
    for g in module.graphs:
        if graph is not None and g.name != graph:
            continue
        got = load.graphs.get(g.name)
        if got is None:
            ran = ", ".join(sorted(load.graphs)) or "none"
            raise UserError(f"{shown}: the run has no graph {g.name} (it ran: {ran}); give the "
                            "--json-out of a simulation of this module")
        if len(got.nodes) != len(g.nodes):
            raise UserError(f"{shown}: graph {g.name} ran with {len(got.nodes)} nodes, the "
                            f"module's has {len(g.nodes)}: the run is of another module or "
                            "another pipeline of it")


def fill(fraction: float) -> str:
    """The fill colour of a node busy `fraction` of its kernel: white (idle) through yellow
    and orange to red (busy every cycle)."""
    stops = ((0.0, (255, 255, 255)), (0.25, (255, 237, 160)), (0.5, (254, 178, 76)),
             (0.75, (240, 59, 32)), (1.0, (189, 0, 38)))
    f = min(max(fraction, 0.0), 1.0)
    for (a, ca), (b, cb) in zip(stops, stops[1:]):
        if f <= b:
            w = (f - a) / (b - a)
            rgb = [round(x + (y - x) * w) for x, y in zip(ca, cb)]
            return "#" + "".join(f"{v:02x}" for v in rgb)
    return "#bd0026"


def width(tokens: int, top: int) -> float:
    """An edge's line width for `tokens` of at most `top`: 0.5 to 6, on a log scale."""
    import math
    if top <= 0 or tokens <= 0:
        return 0.5
    return round(0.5 + 5.5 * math.log1p(tokens) / math.log1p(top), 2)


def node_text(nl: NodeLoad) -> str:
    """The load line of a node's label."""
    return f"busy {nl.busy:,} ({nl.fraction:.0%}), stalled {nl.stalled:,}"

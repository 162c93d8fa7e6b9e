"""Printing a `Module` as SAMML text, deterministically.

Nodes are printed in `Graph.topo_order()` (a deterministic topological order), streams renamed
canonically per kind in order of definition (%c0.., %r0.., %v0.., %s0..), attributes in their
declaration order, optional attributes left out when they have their default value. So
`print(parse(print(m))) == print(m)`.
"""

from __future__ import annotations

import math
from typing import Any

from .ir import Decompose, Graph, Module, Node, Permute, Schedule, Stream, TensorDecl


def print_module(m: Module) -> str:
    """The text of a whole module: source line, tensor declarations, the graphs' index names,
    schedule directives, then each graph."""
    out: list[str] = []
    if m.source is not None:
        out.append(f'source "{m.source}"')
    out += [print_tensor(t) for t in m.tensors]
    same: dict[tuple[int, int], bool] = {}
    by_name: dict[str, Graph] = {}
    for g in m.graphs:
        by_name.setdefault(g.name, g)   # the first of a name, as m.graph finds it
    names: dict[int, list[str]] = {}
    reuses = {g.name for g in m.graphs if _reuses(by_name, g, same, names)}
    out += [print_names(g) for g in m.graphs if g.source_names and g.name not in reuses]
    out += [print_schedule(d) for d in m.schedules]
    out += [f"wave {g.name} {g.wave}" for g in m.graphs if g.wave is not None]
    out += [f"iteration {g.name} {g.iteration[0]} {g.iteration[1]}" for g in m.graphs
            if g.iteration is not None]
    for item in m.sequence():
        if out:
            out.append("")
        if isinstance(item, Graph) and item.name in reuses:
            binds = ", ".join(f"{a} = {b}" for a, b in item.binds.items())
            out.append(f"graph {item.name} = {item.template} {{{binds}}}")
        else:
            out.append(print_graph(item) if isinstance(item, Graph) else
                       print_permute(item) if isinstance(item, Permute)
                       else print_decompose(item))
    return "\n".join(out) + "\n"


def _reuses(by_name: dict[str, Graph], g: Graph, same: dict[tuple[int, int], bool],
            names: dict[int, list[str]]) -> bool:
    """Whether g is still its template (looked up in `by_name`) with its tensors bound (a pass
    may have changed either): then it prints as `graph NAME = TEMPLATE {bindings}`. `same`
    caches, per (snapshot, template), whether a snapshot of pending copies is still the
    template; `names`, per template, its tensor names: every iteration of a reused loop asks
    for them, and printing changes no graph."""
    t = by_name.get(g.template) if g.template else None
    if t is None or t.template is not None:
        return False
    if t.source_names != g.source_names:
        return False
    pending = g.pending()
    if pending is not None:   # made from a snapshot: when that is still t, compare bindings
        snapshot, binds = pending
        key = (id(snapshot), id(t))
        if key not in same:
            same[key] = snapshot.is_rebound_of(t, {})
        if id(t) not in names:
            names[id(t)] = t.tensor_names()
        if same[key] and all(binds.get(x, x) == g.binds.get(x, x) for x in names[id(t)]):
            return True
    # t.rebound(g.name, g.binds) printed, without copying t
    return g.is_rebound_of(t, g.binds) or print_graph(t, g.name, g.binds) == print_graph(g)


def print_names(g: Graph) -> str:
    """`names gcn {u0 = h, u1 = [i, k]}`: the program's names of g's renamed indices."""
    attrs = ", ".join(f"{x} = {ns[0] if len(ns) == 1 else format_value(list(ns))}"
                      for x, ns in g.source_names.items())
    return f"names {g.name} {{{attrs}}}"


def print_permute(p: Permute) -> str:
    """`permute A -> A__T` (+ ` modes (1, 0)` unless the modes are the identity)."""
    text = f"permute {p.src} -> {p.dst}"
    if p.modes is not None and tuple(p.modes) != tuple(range(len(p.modes))):
        text += " modes (" + ", ".join(str(x) for x in p.modes) + ")"
    return text


def print_decompose(d: Decompose) -> str:
    """`decompose A -> A__d0 >= 0.5, A__d1`."""
    parts = [p if t is None else f"{p} >= {t!r}" for p, t in zip(d.parts, d.thresholds)]
    return f"decompose {d.src} -> " + ", ".join(parts)


def print_schedule(d: Schedule) -> str:
    """`schedule parallelize {graph = g, index = i, factor = 4}`."""
    attrs = ", ".join(f"{k} = {format_value(v)}" for k, v in d.attrs().items())
    return f"schedule {d.kind} {{{attrs}}}"


def print_tensor(t: TensorDecl) -> str:
    """One declaration: `tensor A[N, M]: csr input` (+ `block B` for blocked formats)."""
    dims = ", ".join(str(d) for d in t.dims)
    text = f"tensor {t.name}[{dims}]: {t.format.name()} {t.role}"
    if t.block is not None:
        text += f" block {t.block}"
    return text


def print_graph(g: Graph, name: str | None = None, tensors: dict[str, str] | None = None) -> str:
    """`graph NAME { ... }` with one node per line. With `name` and `tensors`, the text of
    `g.rebound(name, tensors)` (g named `name`, reading and writing tensors[t] for each tensor t
    it names), without copying g."""
    names = g.stream_names()
    lines = [f"graph {g.name if name is None else name} {{"]
    lines += ["  " + print_node(n, names, tensors) for n in g.topo_order()]
    lines.append("}")
    return "\n".join(lines)


def _stream(s: Stream, names: dict[Stream, str]) -> str:
    # A stream the graph does not define (an unverified graph) keeps its own name.
    return "%" + (names.get(s) or s.name or "undefined")


def print_node(n: Node, names: dict[Stream, str], tensors: dict[str, str] | None = None) -> str:
    """`%c0, %r1 = scan %r0 {tensor = A, mode = 0, format = compressed, index = j}`; with
    `tensors`, its `tensor` attribute t printed as tensors[t] (when there)."""
    text = ""
    if n.outputs:
        text = ", ".join(_stream(s, names) for s in n.outputs) + " = "
    text += n.KIND
    if n.inputs:
        text += " " + ", ".join(_stream(s, names) for s in n.inputs)
    attrs = []
    for spec in n.attr_specs():
        value = getattr(n, spec.name)
        if tensors and spec.name == "tensor" and isinstance(value, str):
            value = tensors.get(value, value)
        if not spec.required and (value is None or value == spec.default):
            continue
        if spec.type == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # the parser reads a float attribute back as a float
        attrs.append(f"{spec.name} = {format_value(value)}")
    if attrs:
        text += " {" + ", ".join(attrs) + "}"
    return text


def format_value(v: Any) -> str:
    """An attribute value as text the parser reads back to the same value."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    if v is None:
        return "none"
    return str(v)

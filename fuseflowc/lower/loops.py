"""Loop schedules on a lowered module (docs/language.md, "Lists and loops").

`reuse`: every graph of a reused loop's iterations is tagged with its iteration (`iteration G
l K`), and a graph that is, up to the tensors it reads and writes, a graph of the loop lowered
before it becomes a reuse of that graph's configuration (`graph layer__1 = layer__0 {W__0 =
W__1, ...}`): so a loop whose iterations compile alike loads one configuration per distinct
body graph. `wavefront`: each graph of the nest gets its statements' anti-diagonal (`wave G K`).
"""

from __future__ import annotations

from ..samml import ir
from ..samml.printer import print_graph


def _written(g: ir.Graph) -> set[str]:
    return set(g.tensor_names((ir.WriteVals, ir.WriteLevel)))


def _tensors(g: ir.Graph) -> list[str]:
    """The tensors g names, in order of first appearance (node order)."""
    out: list[str] = []
    for n in g.topo_order():
        t = getattr(n, "tensor", None)
        if isinstance(t, str) and t not in out:
            out.append(t)
    return out


def _shape(g: ir.Graph) -> tuple[str, tuple[str, ...]]:
    """g's text with its tensors replaced by their order of appearance, and those tensors: two
    graphs of one shape are one configuration with other tensors bound."""
    names = _tensors(g)
    text = print_graph(g, "_", {t: f"_t{k}" for k, t in enumerate(names)})
    return text, tuple(names)


def _rebound_shape(g: ir.Graph, rebinds: dict, shapes: dict
                   ) -> tuple[str, tuple[str, ...]] | None:
    """g's shape from the shape of the graph it renames, when it is such a copy and the
    renaming keeps its tensors distinct (else None: print it)."""
    if g.name not in rebinds:
        return None
    t, binds = rebinds[g.name]
    if t.name not in shapes:
        return None
    text, names = shapes[t.name]
    renamed = tuple(binds.get(n, n) for n in names)
    return (text, renamed) if len(set(renamed)) == len(renamed) else None


def apply_loop_schedules(module: ir.Module, reuse: list[tuple[str, list[list[str]]]],
                         waves: dict[str, int],
                         rebinds: dict[str, tuple[ir.Graph, dict[str, str]]] | None = None
                         ) -> None:
    """Tag and mark reused graphs (template and bindings) and wavefront graphs (their wave).
    `rebinds`: graph name -> (the graph it is a copy of, the names renamed), for the graphs
    of rebound iterations (fused IR `reuse l K = 0 {...}`), whose shape is then known."""
    rebinds = rebinds or {}
    for var, its in reuse:
        owner = {name: k for k, names in enumerate(its) for name in names}
        templates: dict[str, tuple[ir.Graph, tuple[str, ...]]] = {}
        shapes: dict[str, tuple[str, tuple[str, ...]]] = {}
        for g in module.graphs:
            ks = {owner[t] for t in _written(g) if t in owner}
            if len(ks) != 1 or not _written(g) <= set(owner):
                continue
            g.iteration = (var, ks.pop())
            text, names = shapes[g.name] = _rebound_shape(g, rebinds, shapes) or _shape(g)
            if text not in templates:
                templates[text] = (g, names)
                continue
            tmpl, tnames = templates[text]
            g.template = tmpl.name
            g.binds = {a: b for a, b in zip(tnames, names) if a != b}
    for g in module.graphs:
        ks = {waves[t] for t in _written(g) if t in waves}
        if len(ks) == 1:
            g.wave = ks.pop()

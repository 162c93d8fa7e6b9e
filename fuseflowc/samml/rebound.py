"""Graphs of a module that are, by construction, another graph with its tensors renamed.

`lower` lowers a reused loop's iteration 0 once and makes each later iteration's graphs as
copies of iteration 0's with the iteration's tensors bound (`Module.rebinds`: graph name ->
(the graph it copies, {template's tensor: this graph's})). Whatever the verifier and the
graph-local opt passes conclude about such a copy is what they concluded about its template,
renamed; so they work on the template alone (samml.verify, opt.pipeline), and a copy whose
template a pass rewrote is made again from the rewritten template (`refresh`).

That holds only where renaming cannot change a result: `trusted` keeps the copies whose
renaming is one-to-one on the template's tensors (two tensors bound to one would let cse merge
their readers in the copy only), whose bound names are plain identifiers (the verifier checks
names), whose template comes earlier in the module and is no copy itself, that neither spill
nor replay a buffer (buffers are named module-wide and are not renamed), and that no schedule
directive names (nor their templates: `schedule` rewrites those graphs, and the verifier reads
their nodes).
"""

from __future__ import annotations

import re

from .ir import Graph, Module

#: graph name -> (template graph, {template's tensor: the graph's})
Rebinds = dict[str, tuple[Graph, dict[str, str]]]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def trusted(module: Module) -> Rebinds:
    """The copies of `module.rebinds` (a lowered module's; none for a parsed one) whose
    verification and graph-local rewrites may be their template's, renamed (see above)."""
    rebinds: Rebinds = getattr(module, "rebinds", None) or {}
    if not rebinds:
        return {}
    position = {id(g): k for k, g in enumerate(module.graphs)}
    by_name = {g.name: g for g in module.graphs}
    scheduled = {d.graph for d in module.schedules}
    out: Rebinds = {}
    checked: dict[int, bool] = {}
    names: dict[int, set[str]] = {}   # a template's tensors, asked by each of its copies
    for name, (t, binds) in rebinds.items():
        g = by_name.get(name)
        if (g is None or id(t) not in position or position[id(t)] >= position[id(g)]
                or t.name in rebinds or name in scheduled or t.name in scheduled):
            continue
        if id(t) not in checked:
            checked[id(t)] = not any(n.TRAITS.refs in ("spill", "replay") for n in t.nodes)
            names[id(t)] = set(t.tensor_names())
        if checked[id(t)] and _one_to_one(names[id(t)], binds):
            out[name] = (t, binds)
    return out


def _one_to_one(names: set[str], binds: dict[str, str]) -> bool:
    """Whether `binds` maps the template's tensors `names` to distinct plain names."""
    bound = {binds.get(x, x) for x in names}
    return len(bound) == len(names) and all(_IDENT.match(b) for b in bound)


def refresh(module: Module, names: set[str], rebinds: Rebinds) -> None:
    """Make each graph of `names` again as its template (as it is now) with its tensors bound,
    keeping what the graph itself records (name, template, bindings, wave, iteration). The
    copies of one template share one snapshot of it, and each makes its nodes from it when
    first asked for (`Graph.pend`): the printer and the verifier ask only the template."""
    snapshots: dict[int, Graph] = {}
    for g in module.graphs:
        if g.name in names:
            t, binds = rebinds[g.name]
            if id(t) not in snapshots:
                snapshots[id(t)] = t.snapshot()
            g.pend(snapshots[id(t)], binds)

"""Node patterns the importer reads as one operator: the Erf form of Gelu that exporters write
for `nn.GELU` before opset 20, `x * 0.5 * (1 + erf(x / sqrt(2)))` in its usual orders.

`fold_gelu(graph, constants)` gives the nodes to translate, as (index in the graph, node): each
Erf chain it recognizes becomes one synthetic Gelu node at the index of the chain's last node; an
Erf anywhere else stays (and is refused as an unsupported operator, by name).
"""

from __future__ import annotations

import math

import numpy as np


def _scalar(constants: dict, name: str) -> float | None:
    a = constants.get(name)
    if a is None or np.asarray(a).size != 1:
        return None
    return float(np.asarray(a).reshape(-1)[0])


def _close(x: float | None, want: float) -> bool:
    return x is not None and abs(x - want) <= 1e-6 * abs(want)


def fold_gelu(graph, constants: dict) -> list:
    """The graph's nodes with each recognized Erf chain folded into a Gelu node."""
    from onnx import helper
    nodes = list(graph.node)
    producer = {o: k for k, n in enumerate(nodes) for o in n.output}
    users: dict[str, list[int]] = {}
    for k, n in enumerate(nodes):
        for i in n.input:
            users.setdefault(i, []).append(k)
    graph_outputs = {o.name for o in graph.output}

    def only_user(name: str) -> int | None:
        u = users.get(name, [])
        return u[0] if len(u) == 1 and name not in graph_outputs else None

    def other(n, name: str) -> str | None:
        ins = list(n.input)
        if len(ins) != 2 or name not in ins:
            return None
        return ins[1] if ins[0] == name else ins[0]

    drop: set[int] = set()
    replace: dict[int, object] = {}
    for k, n in enumerate(nodes):
        if n.op_type != "Erf" or n.domain not in ("", "ai.onnx"):
            continue
        p = producer.get(n.input[0])
        if p is None or only_user(n.input[0]) != k:
            continue
        scale = nodes[p]
        if scale.op_type == "Div" and _close(_scalar(constants, scale.input[1]), math.sqrt(2)):
            x = scale.input[0]
        elif scale.op_type == "Mul" and len(scale.input) == 2:
            x, c = ((scale.input[0], scale.input[1])
                    if _scalar(constants, scale.input[1]) is not None
                    else (scale.input[1], scale.input[0]))
            if not _close(_scalar(constants, c), 1 / math.sqrt(2)):
                continue
        else:
            continue
        a = only_user(n.output[0])
        if a is None or nodes[a].op_type != "Add" or \
                not _close(_scalar(constants, other(nodes[a], n.output[0]) or ""), 1.0):
            continue
        m1 = only_user(nodes[a].output[0])
        if m1 is None or nodes[m1].op_type != "Mul":
            continue
        o1 = other(nodes[m1], nodes[a].output[0])
        chain = {p, k, a, m1}
        end = None
        if o1 == x or _close(_scalar(constants, o1 or ""), 0.5):
            m2 = only_user(nodes[m1].output[0])
            if m2 is not None and nodes[m2].op_type == "Mul":
                o2 = other(nodes[m2], nodes[m1].output[0])
                if (o1 == x and _close(_scalar(constants, o2 or ""), 0.5)) or \
                        (o1 != x and o2 == x):
                    end, chain = m2, chain | {m2}
        elif o1 in producer and nodes[producer[o1]].op_type == "Mul" and \
                only_user(o1) == m1:
            h = nodes[producer[o1]]
            if set(h.input) & {x} and _close(_scalar(constants, other(h, x) or ""), 0.5):
                end, chain = m1, chain | {producer[o1]}
        if end is None:
            continue
        drop |= chain
        replace[end] = helper.make_node("Gelu", [x], [nodes[end].output[0]],
                                        name=f"{nodes[end].name or 'gelu'} (Erf form)")
    return [(k, replace.get(k, n)) for k, n in enumerate(nodes) if k not in drop or k in replace]

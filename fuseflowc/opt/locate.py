"""`locate`: replace the intersection of a coordinate stream with a DENSE level scan by a
`locate` node (SAM's locator) that computes the dense level's refs instead of scanning it.

A dense level is randomly accessible: the ref of coordinate c under parent ref p is
p * size + c. An `intersect` of (crd, ref) with the (crd, ref) outputs of a dense `scan` walks
the whole dense fiber for every fiber of the other operand (GCN's A X on Cora: the dense k level
of X, 2708 coordinates, per row of A); `locate crd, ref, parent` emits exactly the same streams
at one element per cycle of the other operand. The dense scan is removed when nothing else
reads it.

Two-operand intersections are rewritten (the operand pair must be both outputs of one dense
scan; with two dense operands the second is located), and intersections of more operands when
every operand but the dense scan reads one and the same coordinate stream: those operands
agree on every coordinate, so the intersection is theirs with the dense level, which `locate`
computes from the first of them; the others' refs pass through unchanged (their readers read
the operand's own ref stream). That is a GAT-style edge attention's `S[i,j] * Z[j,h]`, where
S's refs and its score's located refs share A's coordinates and Z's dense j level was scanned
in full per row (N^2). Unions are left alone (docs/opt.md, "locate", says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..samml.ir import Graph, Intersect, Locate, Scan
from .base import GraphPass, register


def _dense_scan_pair(n: Intersect, side: int) -> Scan | None:
    """The dense scan whose (crd, ref) outputs are operand pair `side` of `n`, or None."""
    c, r = n.inputs[2 * side], n.inputs[2 * side + 1]
    s = c.producer
    if (isinstance(s, Scan) and s.format == "dense" and r.producer is s and c.index == 0
            and r.index == 1 and len(s.inputs) == 1):
        return s
    return None


def _located_operand(n: Intersect) -> tuple[int, Scan, int] | None:
    """(dense operand d, its scan, the operand o the locate reads) of an eligible intersection
    (see the module docstring), or None."""
    pairs = len(n.inputs) // 2
    if len(n.inputs) != 2 * pairs or pairs < 2 or len(n.outputs) != pairs + 1:
        return None
    for d in reversed(range(pairs)):
        scan = _dense_scan_pair(n, d)
        if scan is None:
            continue
        others = [k for k in range(pairs) if k != d]
        if all(n.inputs[2 * k] is n.inputs[2 * others[0]] for k in others):
            return d, scan, others[0]
    return None


def locate_graph(g: Graph) -> int:
    """Rewrite every eligible intersection of `g`; returns how many were rewritten. Linear in
    the graph: the readers of each stream are listed once and kept up to date as nodes are
    replaced (asking the graph for them after each rewrite was quadratic: half of `plan`'s
    time on a fused GPT-3 layer)."""
    done = 0
    users = g.consumers()  # stream -> [(node, operand)], kept current below

    def unread(node, streams) -> None:
        for s in set(streams):
            users[s] = [(m, i) for m, i in users.get(s, ()) if m is not node]

    for n in list(g.nodes):
        if not isinstance(n, Intersect):
            continue
        found = _located_operand(n)
        if found is None:
            continue
        d, scan, o = found
        loc = Locate(tensor=scan.tensor, mode=scan.mode, index=n.index, lane=n.lane)
        loc.loc = n.loc
        loc.inputs = [n.inputs[2 * o], n.inputs[2 * o + 1], scan.inputs[0]]
        passed = [(n.outputs[1 + k], n.inputs[2 * k + 1]) for k in range(len(n.inputs) // 2)
                  if k not in (o, d)]
        # The intersection's result streams keep their identity (and names): only their
        # producer changes.
        loc.outputs = [n.outputs[0], n.outputs[1 + o], n.outputs[1 + d]]
        for i, s in enumerate(loc.outputs):
            s.producer, s.index = loc, i
        g.nodes[g.nodes.index(n)] = loc
        unread(n, n.inputs)
        for i, s in enumerate(loc.inputs):
            users.setdefault(s, []).append((loc, i))
        for out, ref in passed:  # same coordinates as the located operand: refs unchanged
            for m, i in users.pop(out, ()):
                m.inputs[i] = ref
                users.setdefault(ref, []).append((m, i))
        if not any(users.get(s) for s in scan.outputs):
            g.remove(scan)
            unread(scan, scan.inputs)
        done += 1
    return done


@register
@dataclass(frozen=True)
class LocateDense(GraphPass):
    """Intersections with a dense level scan become locate nodes (no scan of the dense level)."""

    name: ClassVar[str] = "locate"

    def apply_graph(self, g: Graph) -> None:
        locate_graph(g)

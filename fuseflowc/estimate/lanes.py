"""Parallel lanes: how unevenly a fork's lanes share a stream (fuseflowc.estimate.timing reads
it). A fork deals the split index's coordinates to the lanes round-robin; the fibers under
those coordinates differ in length, so one lane may carry more than an even share, and a
reducer or accumulator in a lane releases whole groups (rows), never a fraction of one.

`sp` below is what the walk knows of a node's lanes: the forks that split its inputs,
outermost first, as (index, lanes, lane).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .relation import FULL, columns_reached, rows_holding
from .shape import by_depth, rels_of

#: Kinds that release whole groups, and the depth of a group in their first input stream:
#: `rows_share` knows what each group emits for these...
_ROW_DEPTH = {"reduce": 2, "spacc1": 3}
#: ... and `group_shares` the tokens each group takes for these.
_GROUP_DEPTH = {"reduce": 2, "spacc1": 3, "spacc2": 3}


def balance(n, ins: list, sp: tuple, st: dict, tensors, contexts: dict) -> None:
    """Set StreamShape.lane_skew of n's outputs (in `st`, stream -> shape): 1 after a join; at
    a scanner under a split index, the lane's share of the fibers it looks up (its round-robin
    coordinates' expected fiber lengths) relative to an even share; at a reducer or spacc1
    emitting the split index's rows, the lane's share of what they emit (`rows_share`); else
    the largest of the inputs'. `tensors(name)` gives a tensor's statistics; `contexts` the
    loop nest of every stream (samml.analysis.stream_contexts)."""
    skew = 1.0 if n.KIND == "join" else max((s.lane_skew for s in ins), default=1.0)
    if n.KIND == "scan" and ins and ins[0].per_coord is not None:
        own = _scan_share(n, ins[0], sp, tensors)
        skew = skew if own is None else own
    if n.KIND in ("reduce", "spacc1") and n.outputs:
        # what an accumulator emits per row is not what it takes (spmm with a dense B: 8
        # values for any row holding an element): the lane's share of the output's rows
        own = rows_share(n, ins, sp, contexts)
        skew = skew if own is None else own
    for s in n.outputs:
        if st[s].lane_skew != skew:
            st[s] = replace(st[s], lane_skew=skew)


def _scan_share(n, r, sp: tuple, tensors):
    """For a scanner whose references `r` come in a lane of the split index: the lane's share
    of the fibers it looks up relative to an even share; None when not known."""
    hit = [e for e in sp if e[0] is not None and e[0] == r.index]
    if not hit:
        return None
    _, lanes, lane = hit[-1]
    t = tensors(n.tensor)
    length = t.levels[t.format.level_of_mode(n.mode)].fiber_length()
    if length.shape != r.per_coord.shape:
        return None
    work = r.per_coord * length
    present = np.flatnonzero(r.per_coord > 0)
    total = float(work.sum())
    if not (total > 0 and present.size):
        return None
    return float(work[present[lane::lanes]].sum()) / total * lanes


def _lane_of(n, sp: tuple, contexts: dict, depth: int):
    """(lanes, lane) when n's groups (the coordinates `depth` levels out in its first input)
    are the split index's coordinates; else None."""
    ctx = contexts.get(n.inputs[0], ())
    hit = [e for e in sp if e[0] is not None and len(ctx) >= depth and e[0] == ctx[-depth]]
    return hit[-1][1:] if hit else None


def _reach(rels: list, dims: list, ng: int):
    """Per group coordinate of a spacc1: the coordinates its row reaches (the symbolic
    product of the two relations beneath it); None when not known."""
    r1, r2 = rels[-2], rels[-1]
    nu, nc = dims[-2], dims[-1]
    if r1 is None or r2 is None:
        return None
    if r1 is FULL:
        return np.full(ng, float(nc) if r2 is FULL else float(columns_reached(r2).sum()))
    if r1.shape != (ng, nu):
        return None
    if r2 is FULL:
        return rows_holding(r1) * float(nc)
    if r2.shape != (nu, nc):
        return None
    return np.asarray(((r1 @ r2) > 0).sum(axis=1), dtype=float).reshape(-1)


def rows_share(n, ins: list, sp: tuple, contexts: dict):
    """For a reducer or spacc1 in a lane whose rows (the groups it emits) are the split
    index's coordinates: the lane's output tokens relative to an even share, from each
    row's output (one value for a reducer; for spacc1 the coordinates its row reaches, the
    symbolic product of the relations, and the stop closing it); None when not known."""
    depth = _ROW_DEPTH.get(n.KIND)
    if depth is None or not ins or len(ins[0].counts) != depth + 1:
        return None
    v = ins[0]
    w = by_depth(v)[-depth]
    lane = _lane_of(n, sp, contexts, depth)
    if lane is None or w is None:
        return None
    lanes, lane = lane
    if n.KIND == "reduce":
        out = np.ones(w.shape)
    else:
        if w.shape != (v.dims[-3],):
            return None
        reach = _reach(rels_of(v), v.dims, v.dims[-3])
        if reach is None:
            return None
        out = reach + 1.0
    work = w * out
    present = np.flatnonzero(w > 0)
    total = float(work.sum())
    if total <= 0 or not present.size:
        return None
    return float(work[present[lane::lanes]].sum()) / total * lanes


def group_shares(n, ins: list, sp: tuple, contexts: dict):
    """For a reducer or sparse accumulator in a lane whose groups (what it releases one at a
    time: rows) are the split index's coordinates: (first group's share, last group's share)
    of the lane's input, and the lane's number of groups. The lane gets every lanes-th
    present group, so it holds a whole number of them (9 rows over 8 lanes: 2, 1, ..., 1;
    an even share, 9/8, would let a one-row lane emit before its row is done), and its
    first and last groups may be much longer than its average (BigBird's global rows).
    A group's share is its expected tokens: its elements (for an accumulator the elements
    and stops of the fibers under it) and the stop closing it. None when not known (the
    model then takes groups / lanes, 1 / groups each)."""
    depth = _GROUP_DEPTH.get(n.KIND)
    if depth is None or not ins or len(ins[0].counts) != depth + 1:
        return None
    v = ins[0]
    rels, ws = rels_of(v), by_depth(v)
    w = ws[-depth]
    ctx = contexts.get(n.inputs[0], ())
    if w is None or None in rels[-depth + 1:] or len(ctx) < depth:
        return None
    lane = _lane_of(n, sp, contexts, depth)
    if lane is None:
        return None
    lanes, lane = lane
    under = _tokens_under(rels, v.dims, depth)
    if under is None or under.shape != w.shape:
        return None
    under = under + 1.0   # and the stop closing the group (an empty row is one token)
    present = np.flatnonzero(w > 0)[lane::lanes]
    work = (w * under)[present]
    total = float(work.sum())
    if not present.size or total <= 0:
        return None
    return float(work[0]) / total, float(work[-1]) / total, float(w[present].sum())


def _tokens_under(rels: list, dims: list, depth: int):
    """Tokens under each coordinate `depth` - 1 levels out: its fiber's elements (and their
    own tokens, one stop per fiber beneath), innermost first; None when not known."""
    under = None
    for k in range(-1, -depth, -1):
        rel = rels[k]
        inner = np.ones(dims[k]) if under is None else under + 1.0
        if inner.shape != (dims[k],):
            return None
        under = np.full(dims[k - 1], float(inner.sum())) if rel is FULL else \
            np.asarray(rel @ inner, dtype=float).reshape(-1)
    return under

"""The cost rule of every SAMML primitive kind: `RULES`, one table keyed by kind name
(fuseflowc.samml.ir.KINDS).

A rule takes the graph's `Context` (what the node may read and charge: tensor statistics, the
graph's Cost, the tensors it writes), the node, and the StreamShape of each input, in port
order; it charges the node's FLOPs and off-chip reads to `ctx.cost` as the simulator counts
them (sim/README.md, "Counters") and returns the shapes of its outputs (None for a writer).
Lanes, token hops and timing are the graph walk's (fuseflowc.estimate.graph), the same for
every kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..diagnostics import UserError
from ..ops import alu_flops, labelled_alu_flops, reduce_flops
from .cost import Cost
from .relation import FULL, both, either, pattern, rows_holding, through
from .shape import (
    StreamShape,
    by_depth,
    distinct,
    is_full,
    lane_product,
    matches,
    nonempty_share,
    present_in_both,
    present_in_either,
    product,
    rels_of,
)
from .stats import DENSE, TensorStats


@dataclass
class Context:
    """What a rule reads and writes while one graph is modelled."""

    graph: str                 # the graph's name (labels, messages)
    tensors: dict              # name -> TensorStats (inputs and tensors written so far)
    eb: int                    # bytes per element
    cost: Cost = field(default_factory=Cost)
    writes: dict = field(default_factory=dict)  # tensor -> {"levels": {mode: StreamShape},
    #                                              "vals": StreamShape}
    lane: tuple | None = None  # (lanes, lane) while modelling a per-lane reducer
    spilled: dict = field(default_factory=dict)  # buffer -> the StreamShape an earlier graph
    #                                              spilled to it (shared by the module's graphs)
    spill_io: list = field(default_factory=lambda: [0.0, 0.0])  # bytes this graph's spills
    #                                              store, its replays read
    labels: int = 0            # labels handed out by fresh()

    def fresh(self) -> str:
        """A new pattern label, unique in the module."""
        self.labels += 1
        return f"{self.graph}#{self.labels}"

    def tensor(self, name: str) -> TensorStats:
        """The statistics of tensor `name` (UserError when it has none)."""
        t = self.tensors.get(name)
        if t is None:
            raise UserError(f"estimate: graph {self.graph} reads tensor {name}, which has "
                            "no statistics (not an input, and not written by an earlier graph)")
        return t


Rule = Callable[..., "list[StreamShape] | None"]


# ---- FLOPs, as the simulator charges them (fuseflowc.ops) ------------------------------------
def _labels(n) -> tuple | None:
    """A node's block labels as the simulator reads them (sim/build.py): (in0, in1, out) for an
    ALU, (in0, out) for a reducer, None unless `out` is set."""
    if getattr(n, "out", None) is None:
        return None
    return (n.in0, n.in1, n.out) if n.KIND == "alu" else (n.in0, n.out)


def _alu_flops(op: str, block: int | None, n) -> int:
    """FLOPs of one ALU firing."""
    labels = _labels(n)
    if block and labels is not None:
        return labelled_alu_flops(op, *labels, block)
    return alu_flops(op, block)


def _reduce_flops(block: int | None, n) -> int:
    """FLOPs per value a reducer or accumulator adds."""
    labels = _labels(n)
    if block and labels is not None:
        return reduce_flops(labels[0], block)
    return block * block if block else 1


# ---- iteration ---------------------------------------------------------------------------
def root(ctx: Context, n) -> list:
    return [StreamShape("ref", [1.0], [1], np.ones(1), tensor=n.tensor, level=0, rels=[None],
                        per_coord_by_depth=[np.ones(1)])]


def scan(ctx: Context, n, r: StreamShape) -> list:
    t = ctx.tensor(n.tensor)
    lvl = t.format.level_of_mode(n.mode)
    ls = t.levels[lvl]
    length = ls.fiber_length()
    if ls.pattern is not None and r.per_coord is not None \
            and r.per_coord.shape == (ls.pattern.shape[0],):
        per_coord = np.asarray(ls.pattern.T @ r.per_coord, dtype=float).reshape(-1)
        n_out = float(per_coord.sum())
    else:
        if r.per_coord is not None and r.per_coord.shape == length.shape:
            n_out = float(np.dot(r.per_coord, length))
        else:  # refs whose parent coordinates are unknown: the average fiber
            n_out = r.data * (ls.positions / max(float(ls.fibers.sum()), 1e-300))
        hs = float(ls.hist.sum())
        per_coord = ls.hist * (n_out / hs) if hs > 0 else np.zeros(ls.size)
    rel = FULL if ls.kind == "dense" else ls.pattern
    if ls.kind in ("compressed", "nonunique"):
        ctx.cost.read_seg += 2 * r.data * ctx.eb
        ctx.cost.read_crd += n_out * ctx.eb
    elif ls.kind == "fixed":            # no seg; a short fiber reads one padding slot
        ctx.cost.read_crd += (n_out + ls.short * r.data) * ctx.eb
    elif ls.kind == "singleton":        # its crd, and the parent's to find each run's end
        ctx.cost.read_crd += 2 * n_out * ctx.eb
    label = DENSE if ls.kind == "dense" else (ls.label, r.index)
    counts = list(r.counts) + [n_out + r.empty_tokens]
    dims = list(r.dims) + [ls.size]
    rels = rels_of(r) + [rel]
    depths = by_depth(r) + [per_coord]
    crd = StreamShape("crd", counts, dims, per_coord, r.empty_tokens, n.index, label,
                      rels=rels, per_coord_by_depth=depths)
    ref = StreamShape("ref", list(counts), dims, per_coord, r.empty_tokens, n.index, label,
                      n.tensor, lvl + 1, rels=list(rels), per_coord_by_depth=list(depths))
    return [crd, ref]


def repsig(ctx: Context, n, c: StreamShape) -> list:
    return [StreamShape("repsig", list(c.counts), list(c.dims), index=c.index,
                        rels=rels_of(c), per_coord_by_depth=by_depth(c))]


def repeat(ctx: Context, n, x: StreamShape, s: StreamShape) -> list:
    f = s.total / x.total if x.total > 0 else 0.0
    out = x.scaled(f)
    out.counts, out.dims, out.rels, out.pres = list(s.counts), list(s.dims), rels_of(s), None
    depths = by_depth(s)
    depths[-1] = out.per_coord
    out.per_coord_by_depth = depths
    return [out]


def _joined_relation(crds: list, required: list | None):
    """The relation of a joiner's output coordinates: the operands' intersected (all of them,
    or the `required` ones of a union), else united."""
    picked = crds if required is None else [crds[k] for k in required] if required else crds
    combine = either if required is not None and not required else both
    rel = rels_of(picked[0])[-1]
    for c in picked[1:]:
        rel = combine(rel, rels_of(c)[-1])
    return rel


def _joined_coords(ctx: Context, crds: list, required: list | None):
    """(per_coord, label) of a joiner's output coordinates: matches of every operand (or of
    the required ones), else coordinates present in either, operand by operand."""
    if required is None or required:
        cur = crds[0] if required is None else crds[required[0]]
        rest = crds[1:] if required is None else [crds[k] for k in required[1:]]
        combine = matches
    else:
        cur, rest, combine = crds[0], crds[1:], present_in_either
    per_coord, lab = cur.per_coord, cur.label
    for c in rest:
        per_coord, lab = combine(cur, c, ctx.fresh)
        cur = replace(cur, per_coord=per_coord, label=lab,
                      counts=cur.counts[:-1] + [float(per_coord.sum())])
    return per_coord, lab


def _joiner(ctx: Context, n, ins: list, required: list | None) -> list:
    """An intersection (`required` None), or a union with the operands it requires."""
    pairs = [(ins[2 * k], ins[2 * k + 1]) for k in range(len(ins) // 2)]
    crds = [c for c, _ in pairs]
    rel = _joined_relation(crds, required)
    rels = rels_of(crds[0])[:-1] + [rel]
    above = by_depth(crds[0])[:-1]
    per_coord, lab = _joined_coords(ctx, crds, required)
    exact = through(rel, above)
    if exact is not None:   # measured patterns: the joined relation, row by row
        per_coord = exact
    total = float(per_coord.sum())
    counts = list(crds[0].counts[:-1]) + [total]
    dims = list(crds[0].dims)
    out_crd = StreamShape("crd", counts, dims, per_coord, 0.0, n.index, lab, rels=rels,
                          per_coord_by_depth=above + [per_coord])
    outs = [out_crd]
    for k, (c, x) in enumerate(pairs):
        if required is None or (required and k in required):
            present = per_coord
        elif not required:
            present = c.per_coord if c.per_coord.shape == per_coord.shape else per_coord
        else:
            present, _ = matches(out_crd, c, ctx.fresh)
        empty = max(total - float(present.sum()), 0.0)
        if x.kind == "val":
            # (more than two operands: two-operand ALUs are exact from the N counts)
            union_of_many = required is not None and not required and len(pairs) > 2
            pres = pattern(rels_of(c)[-1]) if union_of_many else None
            outs.append(replace(x, counts=list(counts), dims=list(dims), empty_tokens=empty,
                                rels=list(rels), per_coord_by_depth=above + [None],
                                pres=pres))
        else:
            outs.append(replace(x, counts=list(counts), dims=list(dims), per_coord=present,
                                empty_tokens=empty, index=n.index, label=lab, rels=list(rels),
                                per_coord_by_depth=above + [present]))
    return outs


def intersect(ctx: Context, n, *ins) -> list:
    return _joiner(ctx, n, list(ins), None)


def locate(ctx: Context, n, c: StreamShape, x: StreamShape, p: StreamShape) -> list:
    # `opt -p locate` replaces intersect(c, x, scan(p) of a dense level) by this node with
    # the same output streams (docs/opt.md): estimate it as that intersection. A dense scan
    # reads nothing off chip, so the costs are the intersection's.
    crd, ref = scan(ctx, n, p)
    return _joiner(ctx, n, [c, x, crd, ref], None)


def union(ctx: Context, n, *ins) -> list:
    return _joiner(ctx, n, list(ins), list(getattr(n, "required", None) or []))


# ---- computation -------------------------------------------------------------------------
def array(ctx: Context, n, r: StreamShape) -> list:
    t = ctx.tensor(n.tensor)
    b = t.block if t.block else None
    ctx.cost.read_vals += r.data * ctx.eb * (b * b if b else 1)
    return [StreamShape("val", list(r.counts), list(r.dims), None, 0.0, r.index, block=b,
                        rels=rels_of(r), per_coord_by_depth=by_depth(r))]


def alu(ctx: Context, n, a: StreamShape, b: StreamShape | None = None) -> list:
    if b is None:
        ctx.cost.flops += a.data * _alu_flops(n.op, a.block, n)
        return [replace(a)]
    blk = a.block or b.block
    exact = present_in_both(a, b)
    if exact is not None:       # values of several union outputs: where both hold one
        n_both, pres, held = exact
        ctx.cost.flops += n_both * _alu_flops(n.op, blk, n)
        return [replace(a, empty_tokens=max(a.total - held, 0.0), block=blk, pres=pres)]
    n_both = max(a.total - a.empty_tokens - b.empty_tokens, 0.0)
    ctx.cost.flops += n_both * _alu_flops(n.op, blk, n)
    return [replace(a, empty_tokens=max(a.empty_tokens + b.empty_tokens - a.total, 0.0),
                    block=blk, pres=None)]


def reduce(ctx: Context, n, v: StreamShape) -> list:
    ctx.cost.flops += v.data * _reduce_flops(v.block, n)
    counts = list(v.counts[:-1]) or [1.0]
    dims = list(v.dims[:-1]) or [1]
    return [StreamShape("val", counts, dims, None, 0.0, None, block=v.block,
                        rels=rels_of(v)[:-1] or [None],
                        per_coord_by_depth=by_depth(v)[:-1] or [None])]


def spacc1(ctx: Context, n, c: StreamShape, v: StreamShape) -> list:
    ctx.cost.flops += v.data * _reduce_flops(v.block, n)
    if c.held:
        return _spacc_held(ctx, c, v)
    groups = float(c.counts[-3]) if len(c.counts) >= 3 else 1.0
    k = c.fibers / groups if groups > 0 else 0.0
    rels = rels_of(c)
    lane = ctx.lane
    if lane is not None:        # one lane's share of the reduced index (reduce=lanes)
        known = lane_product(c, rels, groups, *lane)
        k = k / lane[0]
    else:
        known = product(c, rels, groups)
    if known is not None:
        per_coord, rel = known
    else:
        per_coord = distinct(c, groups, k, c.dims[-2] if len(c.dims) >= 2 else 1)
        rel = FULL if is_full(c) and lane is None else None
    counts = list(c.counts[:-2]) + [float(per_coord.sum())]
    dims = list(c.dims[:-2]) + [c.dims[-1]]
    rels = rels[:-2] + [rel]
    depths = by_depth(c)[:-2] + [per_coord]
    lab = DENSE if is_full(c) and lane is None else ctx.fresh()
    return [StreamShape("crd", counts, dims, per_coord, 0.0, c.index, lab, rels=rels,
                        per_coord_by_depth=depths),
            StreamShape("val", list(counts), list(dims), None, block=v.block, rels=list(rels),
                        per_coord_by_depth=list(depths))]


def _spacc_held(ctx: Context, c: StreamShape, v: StreamShape) -> list:
    """spacc1 on held coordinates (crdhold): each outer coordinate whose fiber holds an
    element, once per group above it."""
    w = by_depth(c)[-2] if len(c.counts) >= 2 else None
    rel = pattern(rels_of(c)[-1])
    if w is None or c.per_coord is None or w.shape != c.per_coord.shape:
        n_out = c.fibers
        per_coord = None if c.per_coord is None \
            else c.per_coord * (n_out / max(float(c.per_coord.sum()), 1e-300))
    else:
        if rel is not None and rel.shape[0] == w.size:
            nz = rows_holding(rel).astype(float)
        else:
            lam = np.where(w > 0, c.per_coord / np.maximum(w, 1e-300), 0.0)
            nz = 1.0 - np.exp(-lam)
        per_coord = w * nz
    n_out = float(per_coord.sum()) if per_coord is not None else c.fibers
    counts = list(c.counts[:-2]) + [n_out]
    dims = list(c.dims[:-2]) + [c.dims[-2] if len(c.dims) >= 2 else 1]
    depths = by_depth(c)[:-2] + [per_coord]
    return [StreamShape("crd", counts, dims, per_coord, 0.0, c.index, ctx.fresh(),
                        per_coord_by_depth=depths),
            StreamShape("val", list(counts), list(dims), None, block=v.block,
                        per_coord_by_depth=list(depths))]


def spacc2(ctx: Context, n, ci: StreamShape, cj: StreamShape, v: StreamShape) -> list:
    return _spacc_n(ctx, n, [ci, cj], v)


def spacc3(ctx: Context, n, ci: StreamShape, cj: StreamShape, ck: StreamShape,
           v: StreamShape) -> list:
    return _spacc_n(ctx, n, [ci, cj, ck], v)


def _spacc_n(ctx: Context, n, crds: list, v: StreamShape) -> list:
    """A sparse accumulator of order len(crds) >= 2: the distinct coordinates of each level
    per distinct point of the level outside it, level by level from the outermost (whose
    groups are those above the reduced index). Every outer coordinate received counts, as
    `emit_empty` emits them; without it one with no point below is not emitted, which the
    estimate does not tell apart (it does not model whole empty slabs)."""
    ctx.cost.flops += v.data * _reduce_flops(v.block, n)
    ci = crds[0]
    groups = float(ci.counts[-3]) if len(ci.counts) >= 3 else 1.0
    k = ci.fibers / groups if groups > 0 else 0.0
    space = ci.dims[-2] if len(ci.dims) >= 2 else 1
    counts = list(ci.counts[:-2])
    dims = list(ci.dims[:-2])
    outs = []
    outer, data = groups, None
    for c in crds:
        if data is not None:
            k = data / outer if outer > 0 else 0.0
        per_coord = distinct(c, outer, k, space)
        outer, data = float(per_coord.sum()), c.data
        counts = counts + [outer]
        dims = dims + [c.dims[-1]]
        lab = DENSE if is_full(c) else ctx.fresh()
        outs.append(StreamShape("crd", counts, dims, per_coord, 0.0, c.index, lab))
    return outs + [StreamShape("val", list(counts), list(dims), None, block=v.block)]


# ---- construction ------------------------------------------------------------------------
def crddrop(ctx: Context, n, o: StreamShape, i: StreamShape) -> list:
    keep = 1.0 if is_full(i) else nonempty_share(i)
    o2 = replace(o, counts=list(o.counts[:-1]) + [o.total * keep],
                 per_coord=None if o.per_coord is None else o.per_coord * keep,
                 empty_tokens=o.empty_tokens * keep, nonempty=True)
    i2 = replace(i, counts=list(i.counts[:-2]) + [o2.total, i.total], rels=None,
                 per_coord_by_depth=None)
    o2.rels = o2.per_coord_by_depth = None
    return [o2, i2]


def crdhold(ctx: Context, n, o: StreamShape, i: StreamShape) -> list:
    rel = rels_of(i)[-1]
    known = pattern(rel)
    if o.per_coord is not None and known is not None and known.shape[0] == o.per_coord.size:
        length = np.asarray(known.sum(axis=1), dtype=float).reshape(-1)
        per_coord = o.per_coord * length
    elif o.per_coord is not None and rel is FULL:
        per_coord = o.per_coord * (i.dims[-1] if i.dims else 1)
    else:
        per_coord = None if o.per_coord is None \
            else o.per_coord * (i.total / o.total if o.total > 0 else 0.0)
    depths = by_depth(i)[:-1] + [per_coord]
    o2 = replace(o, counts=list(i.counts), dims=list(i.dims), per_coord=per_coord,
                 empty_tokens=0.0, rels=rels_of(i), per_coord_by_depth=depths, held=True,
                 label=None)
    return [o2, replace(i)]


def fork(ctx: Context, n, s: StreamShape) -> list:
    """Every lane: the whole stream's shape (the walk divides its weight)."""
    return [s for _ in range(int(n.lanes))]


def join(ctx: Context, n, *ins) -> list:
    """The lanes carry identical shapes: the gathered stream is one of them, at the summed
    weight (the walk adds it)."""
    return [ins[0]]


def write_level(ctx: Context, n, c: StreamShape) -> None:
    ctx.writes.setdefault(n.tensor, {"levels": {}, "vals": None})["levels"][n.mode] = c


def write_vals(ctx: Context, n, v: StreamShape) -> None:
    ctx.writes.setdefault(n.tensor, {"levels": {}, "vals": None})["vals"] = v


# ---- configurations: a cut stream to DRAM and back (sim/prims_write.py Spill) -------------
def _spilled_bytes(ctx: Context, s: StreamShape) -> tuple[str, float]:
    """The cost field and the bytes of stream s stored whole: every token but D."""
    b = s.block if s.kind == "val" and s.block else None
    toks = float(s.counts[-1]) + (float(s.counts[-2]) if len(s.counts) >= 2 else 0.0)
    return ("vals" if s.kind == "val" else "crd"), toks * ctx.eb * (b * b if b else 1)


def spill(ctx: Context, n, s: StreamShape) -> None:
    what, nbytes = _spilled_bytes(ctx, s)
    setattr(ctx.cost, "write_" + what, getattr(ctx.cost, "write_" + what) + nbytes)
    ctx.spill_io[0] += nbytes
    ctx.spilled[n.buffer] = s


def replay(ctx: Context, n) -> list:
    s = ctx.spilled.get(n.buffer)
    if s is None:
        raise UserError(f"estimate: graph {ctx.graph} replays buffer {n.buffer}, "
                        "which no earlier graph spills")
    what, nbytes = _spilled_bytes(ctx, s)
    setattr(ctx.cost, "read_" + what, getattr(ctx.cost, "read_" + what) + nbytes)
    ctx.spill_io[1] += nbytes
    return [s]


#: The cost rule of each SAMML kind (fuseflowc.samml.ir.KINDS; tests/estimate checks that
#: every kind has one).
RULES: dict[str, Rule] = {
    "root": root, "scan": scan, "repsig": repsig, "repeat": repeat,
    "intersect": intersect, "union": union, "locate": locate,
    "array": array, "alu": alu, "reduce": reduce,
    "spacc1": spacc1, "spacc2": spacc2, "spacc3": spacc3,
    "crddrop": crddrop, "crdhold": crdhold,
    "write_level": write_level, "write_vals": write_vals,
    "fork": fork, "join": join,
    "spill": spill, "replay": replay,
}

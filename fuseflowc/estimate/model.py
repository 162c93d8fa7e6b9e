"""The analytic model: expected stream lengths propagated through each SAMML graph, turned into
FLOPs and bytes the way the simulator counts them (sim/README.md, "Counters").

Every stream gets a `StreamShape`: its element counts per nesting depth (`counts`, the last
entry being the stream's own elements, N tokens included, `empty_tokens` of them), and for
coordinate and reference streams the expected number of elements per coordinate of the stream's
index (`per_coord`, over all its fibers; `per_coord_by_depth` keeps it for every depth). A
scanner multiplies the fibers it looks up by their expected length given their parent
coordinate; joiners combine histograms coordinate by coordinate (`_meet`); repeats multiply;
reducers and accumulators divide. Tensors written by a graph get statistics estimated from what
their writers receive, and later graphs read them like inputs. docs/estimate.md gives the
formulas and their assumptions.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields, replace

import numpy as np

from ..diagnostics import UserError
from ..ops import alu_flops, labelled_alu_flops, reduce_flops
from . import timing
from .cost import Cost, Estimate
from .stats import (
    DENSE,
    DataStats,
    LevelStats,
    TensorStats,
    level_shape,
    shape_of,
    stats_of_fiber,
    uniform_stats,
)

FULL = "full"   # the relation of a dense level: every coordinate under every parent


def _and(a, b):
    """Intersection of two relations (FULL, None = unknown, or a 0/1 csr matrix)."""
    if isinstance(a, str):
        return b
    if isinstance(b, str):
        return a
    if a is None or b is None or a.shape != b.shape:
        return None
    return a.multiply(b).tocsr()


def _or(a, b):
    """Union of two relations."""
    if isinstance(a, str) or isinstance(b, str):
        return FULL
    if a is None or b is None or a.shape != b.shape:
        return None
    return ((a + b) > 0).astype(float).tocsr()


def _rels(s: "StreamShape") -> list:
    return list(s.rels) if s.rels is not None else [None] * len(s.counts)


def _by_depth(s: "StreamShape") -> list:
    """s.per_coord_by_depth (Nones when not known), its last depth being s.per_coord."""
    known = s.per_coord_by_depth is not None and len(s.per_coord_by_depth) == len(s.counts)
    out = list(s.per_coord_by_depth) if known else [None] * len(s.counts)
    if s.per_coord is not None:
        out[-1] = s.per_coord
    return out


@dataclass
class StreamShape:
    """The expected shape of one stream (see the module docstring)."""

    kind: str
    counts: list                # elements per nesting depth; the last: the stream's own
    #                             elements, N tokens included
    dims: list                  # size of the coordinate space of each nesting depth
    per_coord: np.ndarray | None = None  # crd and ref streams: expected elements per
    #                             coordinate of the stream's index, over all its fibers
    empty_tokens: float = 0.0   # N tokens among the elements (union positions with no value)
    index: str | None = None
    label: object = None
    tensor: str | None = None   # ref streams: the tensor and the storage level they point into
    level: int = 0
    block: int | None = None    # val streams: b for b x b block values
    nonempty: bool = False      # crd streams: no empty fiber beneath (after crddrop)
    rels: list | None = None    # per depth: which coordinates follow each coordinate of the
    #                             depth above (scipy csr, FULL, or None when not known)
    per_coord_by_depth: list | None = None  # per depth: the per_coord of that depth (None
    #                             when not known)
    held: bool = False          # crd streams from crdhold: the outer coordinate, repeated over
    #                             each inner fiber (per_coord counts per outer coordinate)
    lane_weight: float = 1.0    # the share of the serial stream one parallel lane carries (a
    #                             fork gives every lane the whole stream's shape with weight
    #                             lane_weight / lanes; a node's costs count times its weight)
    lane_skew: float = 1.0      # timing only: this lane's tokens relative to an even share
    #                             (lanes get the split index's coordinates round-robin, and
    #                             their fibers differ in length)
    pres: object = None         # val streams out of a union: the relation (group coordinate ->
    #                             coordinate, csr) of the positions holding a value, not N; it
    #                             makes the FLOPs of ALUs over several union outputs exact

    @property
    def total(self) -> float:
        """Elements of the stream, N tokens included."""
        return float(self.counts[-1])

    @property
    def data(self) -> float:
        """Elements that are not N."""
        return max(float(self.counts[-1]) - self.empty_tokens, 0.0)

    @property
    def fibers(self) -> float:
        """Fibers of the innermost level (elements of the level above)."""
        return float(self.counts[-2]) if len(self.counts) >= 2 else 1.0

    def scaled(self, f: float) -> "StreamShape":
        """This stream with every count multiplied by f."""
        return replace(self, counts=[c * f for c in self.counts],
                       per_coord=None if self.per_coord is None else self.per_coord * f,
                       empty_tokens=self.empty_tokens * f)


def _full(s: StreamShape) -> bool:
    """Every fiber of s holds every coordinate (a dense scan, or a pattern measured full)."""
    if s.label == DENSE:
        return True
    if s.per_coord is None or not s.per_coord.size:
        return False
    f = s.fibers
    return f > 0 and bool(np.all(s.per_coord >= f * (1 - 1e-9)))


def _nonempty(s: StreamShape) -> float:
    """Expected fraction of the fibers of coordinate stream `s` that hold at least one
    coordinate (coordinates present independently, each in per_coord / fibers of them)."""
    f = max(s.fibers, 1e-300)
    p = np.clip(s.per_coord / f, 0.0, 1.0 - 1e-12)
    return 1.0 - math.exp(float(np.sum(np.log1p(-p))))


def _meet(a: StreamShape, b: StreamShape, fresh) -> tuple[np.ndarray, object]:
    """Expected matches per coordinate of two aligned coordinate streams (same fibers): the
    other side when one is full; min(a, b) when both follow the same pattern (same label);
    else a*b/F, coordinates present independently in each fiber."""
    if _full(a):
        return b.per_coord, b.label
    if _full(b):
        return a.per_coord, a.label
    if a.label is not None and a.label == b.label:
        return np.minimum(a.per_coord, b.per_coord), a.label
    f = max(a.fibers, 1e-300)
    if a.per_coord.shape != b.per_coord.shape:
        n = a.data * b.data / f / max(max(a.per_coord.size, b.per_coord.size), 1)
        size = a.per_coord.size
        return np.full(size, n / max(size, 1) * max(size, 1)), fresh()
    return a.per_coord * b.per_coord / f, fresh()


def _join(a: StreamShape, b: StreamShape, fresh) -> tuple[np.ndarray, object]:
    """Expected coordinates per value present in either stream."""
    m, lab = _meet(a, b, fresh)
    per_coord = a.per_coord + b.per_coord - m if a.per_coord.shape == b.per_coord.shape \
        else np.maximum(a.per_coord, b.per_coord)
    if _full(a) or _full(b):
        return (a.per_coord if _full(a) else b.per_coord), DENSE
    if a.label is not None and a.label == b.label:
        return np.maximum(a.per_coord, b.per_coord), a.label
    return per_coord, fresh()


def _hit(p: np.ndarray, k: float, r: float) -> np.ndarray:
    """P(at least one of k draws without replacement from r items, p*r of them marked, is
    marked) = 1 - C(r - pr, k) / C(r, k), with real arguments (lgamma)."""
    m = p * r
    a = r - m - k + 1.0
    with np.errstate(all="ignore"):
        lg = np.vectorize(math.lgamma, otypes=[float])
        miss = np.where(a > 0, np.exp(lg(np.maximum(r - m + 1.0, 1e-9)) - lg(np.maximum(a, 1e-9))
                                       - math.lgamma(r + 1.0) + math.lgamma(r - k + 1.0)), 0.0)
    return np.clip(1.0 - miss, 0.0, 1.0)


def _through_rel(rel, by_depth: list):
    """Coordinates reached through a known relation from the parent coordinates' histogram
    (by_depth[-1], the depth above): rel^T w; None when either is unknown."""
    if rel is None or isinstance(rel, str) or not by_depth:
        return None
    w = by_depth[-1]
    if w is None or w.shape != (rel.shape[0],):
        return None
    return np.asarray(rel.T @ w, dtype=float).reshape(-1)


def _pres_both(a: StreamShape, b: StreamShape):
    """(positions where both a and b hold a value, their union's relation, its positions),
    counted with the group coordinates' weights, when both know where they hold values
    (StreamShape.pres); else None."""
    pa, pb = a.pres, b.pres
    depths = a.per_coord_by_depth
    outer = depths[-2] if depths is not None and len(depths) >= 2 else None
    if pa is None or pb is None or outer is None or pa.shape != pb.shape \
            or outer.shape != (pa.shape[0],):
        return None
    both = float(np.asarray(pa.multiply(pb).T @ outer).sum())
    either = ((pa + pb) > 0).astype(float).tocsr()
    return both, either, float(np.asarray(either.T @ outer).sum())


def _lane_rows(r1, shape: tuple[int, int], lanes: int, lane: int):
    """The part of relation r1 (FULL or csr, rows: group coordinates, columns: the split
    index) that lane `lane` of `lanes` gets: a fork deals each row's coordinates round-robin
    (the p-th present coordinate of a row to lane p mod lanes)."""
    import scipy.sparse as sp
    if isinstance(r1, str):
        cols = np.arange(lane, shape[1], lanes)
        rows = np.repeat(np.arange(shape[0]), cols.size)
        data = np.ones(rows.size)
        return sp.csr_matrix((data, (rows, np.tile(cols, shape[0]))), shape=shape)
    r1 = r1.tocsr()
    r1.sort_indices()
    counts = np.diff(r1.indptr)
    pos = np.arange(r1.nnz) - np.repeat(r1.indptr[:-1], counts)
    keep = pos % lanes == lane
    rows = np.repeat(np.arange(r1.shape[0]), counts)[keep]
    return sp.csr_matrix((np.ones(int(keep.sum())), (rows, r1.indices[keep])), shape=r1.shape)


def _labels(n) -> tuple | None:
    """A node's block labels as the simulator reads them (sim/build.py): (in0, in1, out) for an
    ALU, (in0, out) for a reducer, None unless `out` is set."""
    if getattr(n, "out", None) is None:
        return None
    return (n.in0, n.in1, n.out) if n.KIND == "alu" else (n.in0, n.out)


def _alu_flops(op: str, block: int | None, n) -> int:
    """FLOPs of one ALU firing, as the simulator charges them (fuseflowc.ops)."""
    labels = _labels(n)
    if block and labels is not None:
        return labelled_alu_flops(op, *labels, block)
    return alu_flops(op, block)


def _reduce_flops(block: int | None, n) -> int:
    """FLOPs per value a reducer or accumulator adds, as the simulator charges (ops.py)."""
    labels = _labels(n)
    if block and labels is not None:
        return reduce_flops(labels[0], block)
    return block * block if block else 1


class _GraphModel:
    """Propagates StreamShape through one graph in topological order and accumulates its Cost."""

    def __init__(self, graph, tensors: dict, eb: int, arch=None, spilled: dict | None = None):
        self.graph = graph
        #: buffer -> the StreamShape an earlier graph spilled to it (shared by the module's graphs)
        self.spilled = spilled if spilled is not None else {}
        self.spill_io = [0.0, 0.0]   # bytes this graph's spills store, its replays read
        self.arch = arch           # sim.arch.Arch: the cycle model's timing (None: no cycles)
        self.span: dict = {}       # stream -> timing.Span (first and last token's arrival)
        self.finish = 0.0          # the latest node's finish: the graph's cycles
        self.memory = timing.Calendar()
        self._group_lanes = 1
        self._ctx: dict = {}
        self.node_times: list = [] # (node, firings, finish) per node, for diagnostics
        self.tensors = tensors     # name -> TensorStats (inputs and tensors written so far)
        self.eb = eb
        self.cost = Cost()
        self.st: dict = {}
        self.writes: dict = {}     # tensor -> {"levels": {mode: StreamShape}, "vals": StreamShape}
        self._fresh = 0
        self._lane = None          # (lanes, lane) while visiting a per-lane reducer

    def fresh(self):
        self._fresh += 1
        return f"{self.graph.name}#{self._fresh}"

    def run(self) -> None:
        from ..samml.analysis import stream_contexts
        ctx = self._ctx = stream_contexts(self.graph)
        # stream -> the forks it is split by, outermost first: (index, lanes, lane)
        split: dict = {}
        for n in self.graph.topo_order():
            ins = [self.st[s] for s in n.inputs]
            # A node in a parallel lane sees the serial stream's shape (so exact relations
            # survive the fork) and pays its weight's share of the costs.
            weight = min((s.lane_weight for s in ins), default=1.0)
            sp = max((split.get(s, ()) for s in n.inputs), key=len, default=())
            sp_in = sp
            # A per-lane reducer over the split index (parallelize{reduce=lanes}): every lane
            # emits the whole reduced stream's structure (with its own subset's coordinates).
            gone = [e for e in sp if n.KIND in ("reduce", "spacc1", "spacc2", "spacc3")
                    and e[0] == getattr(n, "index", None)
                    and not any(e[0] in ctx.get(o, ()) for o in n.outputs)]
            self._lane = gone[-1][1:] if gone else None
            # lanes that split the groups an accumulator emits (an index of its output, not
            # the one it reduces): each lane's node sees only its share of the groups
            self._group_lanes = math.prod(
                e[1] for e in sp if e[0] != getattr(n, "index", None)
                and any(e[0] in ctx.get(o, ()) for o in n.outputs))
            before = replace(self.cost)
            outs = getattr(self, "_" + n.KIND)(n, *ins)
            if weight != 1.0:
                for f in fields(Cost):
                    old = getattr(before, f.name)
                    setattr(self.cost, f.name, old + (getattr(self.cost, f.name) - old) * weight)
            if outs is None:
                self._time(n, ins, [])
                continue
            if n.KIND == "join":
                weight_out = sum(s.lane_weight for s in ins)
                sp = split.get(n.inputs[0], ())[:-1]
            elif n.KIND == "fork":
                weight_out = weight / int(n.lanes)
            else:
                weight_out = weight * math.prod(e[1] for e in gone)
                sp = tuple(e for e in sp if e not in gone)
            for k, (s, v) in enumerate(zip(n.outputs, outs)):
                self.st[s] = v if v.lane_weight == weight_out \
                    else replace(v, lane_weight=weight_out)
                if n.KIND == "fork":
                    c = ctx.get(n.inputs[0], ())
                    x = c[len(c) - 1 - n.level] if len(c) > n.level else None
                    split[s] = sp + ((x, int(n.lanes), k),)
                else:
                    split[s] = sp
            self._count_moves(n, ins, weight)
            if sp_in or n.KIND == "join":
                self._lane_balance(n, ins, sp_in)
            self._time(n, ins, [self.st[s] for s in n.outputs], self._group_shares(n, ins, sp_in))

    def _count_moves(self, n, ins: list, weight: float) -> None:
        """Node n's token hops (every token of its outputs, in its lane) and, for an
        accumulator, the bytes its firings move through its buffer (sim.energy)."""
        from fuseflowc.sim.energy import BUFFER_KINDS
        outs = [self.st[s] for s in n.outputs]
        for s in outs:
            stops = float(s.counts[-2]) if len(s.counts) >= 2 else 0.0
            self.cost.hops += (float(s.counts[-1]) + stops + 1.0) * s.lane_weight
        if n.KIND in BUFFER_KINDS:
            self.cost.onchip_bytes += timing.firings(n, ins, outs) * weight * self.eb

    def _lane_balance(self, n, ins: list, sp: tuple) -> None:
        """StreamShape.lane_skew of n's outputs: 1 after a join; at a scanner under a split
        index, the lane's share of the fibers it looks up (its round-robin coordinates' expected
        fiber lengths) relative to an even share; at a reducer or spacc1 emitting the split
        index's rows, the lane's share of what they emit (`_rows_share`); else the largest of
        the inputs'."""
        skew = 1.0 if n.KIND == "join" else max((s.lane_skew for s in ins), default=1.0)
        if n.KIND == "scan" and ins and ins[0].per_coord is not None:
            r = ins[0]
            hit = [e for e in sp if e[0] is not None and e[0] == r.index]
            if hit:
                _, lanes, lane = hit[-1]
                t = self._tstats(n.tensor)
                length = t.levels[t.format.level_of_mode(n.mode)].fiber_length()
                if length.shape == r.per_coord.shape:
                    work = r.per_coord * length
                    present = np.flatnonzero(r.per_coord > 0)
                    total = float(work.sum())
                    if total > 0 and present.size:
                        skew = float(work[present[lane::lanes]].sum()) / total * lanes
        if n.KIND in ("reduce", "spacc1") and n.outputs:
            # what an accumulator emits per row is not what it takes (spmm with a dense B: 8
            # values for any row holding an element): the lane's share of the output's rows
            own = self._rows_share(n, ins, sp)
            skew = skew if own is None else own
        for s in n.outputs:
            if self.st[s].lane_skew != skew:
                self.st[s] = replace(self.st[s], lane_skew=skew)

    def _rows_share(self, n, ins: list, sp: tuple):
        """For a reducer or spacc1 in a lane whose rows (the groups it emits) are the split
        index's coordinates: the lane's output tokens relative to an even share, from each
        row's output (one value for a reducer; for spacc1 the coordinates its row reaches, the
        symbolic product of the relations, and the stop closing it); None when not known."""
        depth = {"reduce": 2, "spacc1": 3}.get(n.KIND)
        if depth is None or not ins or len(ins[0].counts) != depth + 1:
            return None
        v = ins[0]
        rels, w = _rels(v), _by_depth(v)[-depth]
        ctx = self._ctx.get(n.inputs[0], ())
        hit = [e for e in sp if e[0] is not None and len(ctx) >= depth and e[0] == ctx[-depth]]
        if not hit or w is None:
            return None
        _, lanes, lane = hit[-1]
        if n.KIND == "reduce":
            out = np.ones(w.shape)
        else:
            r1, r2 = rels[-2], rels[-1]
            ng, nu, nc = v.dims[-3], v.dims[-2], v.dims[-1]
            if r1 is None or r2 is None or w.shape != (ng,):
                return None
            if isinstance(r1, str):
                reach = np.full(ng, float(nc) if isinstance(r2, str) else
                                float((np.asarray(r2.sum(axis=0)).reshape(-1) > 0).sum()))
            elif r1.shape != (ng, nu):
                return None
            elif isinstance(r2, str):
                reach = (np.asarray(r1.sum(axis=1)).reshape(-1) > 0) * float(nc)
            elif r2.shape != (nu, nc):
                return None
            else:
                reach = np.asarray(((r1 @ r2) > 0).sum(axis=1), dtype=float).reshape(-1)
            out = reach + 1.0
        work = w * out
        present = np.flatnonzero(w > 0)
        total = float(work.sum())
        if total <= 0 or not present.size:
            return None
        return float(work[present[lane::lanes]].sum()) / total * lanes

    def _group_shares(self, n, ins: list, sp: tuple):
        """For a reducer or sparse accumulator in a lane whose groups (what it releases one at a
        time: rows) are the split index's coordinates: (first group's share, last group's share)
        of the lane's input, and the lane's number of groups. The lane gets every lanes-th
        present group, so it holds a whole number of them (9 rows over 8 lanes: 2, 1, ..., 1;
        an even share, 9/8, would let a one-row lane emit before its row is done), and its
        first and last groups may be much longer than its average (BigBird's global rows).
        A group's share is its expected tokens: its elements (for an accumulator the
        elements and stops of the fibers under it) and the stop closing it. None when not known (the model then takes
        groups / lanes, 1 / groups each)."""
        depth = {"reduce": 2, "spacc1": 3, "spacc2": 3}.get(n.KIND)
        if depth is None or not ins or len(ins[0].counts) != depth + 1 or self.arch is None:
            return None
        v = ins[0]
        rels, ws = _rels(v), _by_depth(v)
        w = ws[-depth]
        ctx = self._ctx.get(n.inputs[0], ())
        if w is None or None in rels[-depth + 1:] or len(ctx) < depth:
            return None
        hit = [e for e in sp if e[0] is not None and e[0] == ctx[-depth]]
        if not hit:
            return None
        _, lanes, lane = hit[-1]
        # tokens under each coordinate of a depth: its fiber's elements (and their own
        # tokens, one stop per fiber beneath), innermost first
        under = None
        for k in range(-1, -depth, -1):
            rel = rels[k]
            inner = np.ones(v.dims[k]) if under is None else under + 1.0
            if inner.shape != (v.dims[k],):
                return None
            under = np.full(v.dims[k - 1], float(inner.sum())) if isinstance(rel, str) else \
                np.asarray(rel @ inner, dtype=float).reshape(-1)
        if under.shape != w.shape:
            return None
        under = under + 1.0   # and the stop closing the group (an empty row is one token)
        present = np.flatnonzero(w > 0)[lane::lanes]
        work = (w * under)[present]
        total = float(work.sum())
        if not present.size or total <= 0:
            return None
        return float(work[0]) / total, float(work[-1]) / total, float(w[present].sum())

    def _out_index(self, n):
        """The innermost index of node n's first output stream (its context), or None."""
        c = self._ctx.get(n.outputs[0], ()) if n.outputs else ()
        return c[-1] if c else None

    def _time(self, n, ins: list, outs: list, shares=None) -> None:
        """The spans of node n's outputs and its finish (fuseflowc/estimate/timing.py)."""
        if self.arch is None:
            return
        spans = [self.span[s] for s in n.inputs]
        compressed = n.KIND == "scan" and getattr(n, "format", None) != "dense"
        span, fin, f = timing.fire(n, self.arch, ins, outs, spans, compressed, self.memory,
                                   self.eb, self._group_lanes, shares)
        for s in n.outputs:
            self.span[s] = span
        self.finish = max(self.finish, fin)
        self.node_times.append((n, f, fin))

    # ---- iteration -----------------------------------------------------------------------
    def _tstats(self, name: str) -> TensorStats:
        t = self.tensors.get(name)
        if t is None:
            raise UserError(f"estimate: graph {self.graph.name} reads tensor {name}, which has "
                            "no statistics (not an input, and not written by an earlier graph)")
        return t

    def _root(self, n):
        return [StreamShape("ref", [1.0], [1], np.ones(1), tensor=n.tensor, level=0, rels=[None],
                            per_coord_by_depth=[np.ones(1)])]

    def _scan(self, n, r: StreamShape):
        t = self._tstats(n.tensor)
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
            self.cost.read_seg += 2 * r.data * self.eb
            self.cost.read_crd += n_out * self.eb
        elif ls.kind == "fixed":            # no seg; a short fiber reads one padding slot
            self.cost.read_crd += (n_out + ls.short * r.data) * self.eb
        elif ls.kind == "singleton":        # its crd, and the parent's to find each run's end
            self.cost.read_crd += 2 * n_out * self.eb
        label = DENSE if ls.kind == "dense" else (ls.label, r.index)
        counts = list(r.counts) + [n_out + r.empty_tokens]
        dims = list(r.dims) + [ls.size]
        rels = _rels(r) + [rel]
        by_depth = _by_depth(r) + [per_coord]
        crd = StreamShape("crd", counts, dims, per_coord, r.empty_tokens, n.index, label,
                          rels=rels, per_coord_by_depth=by_depth)
        ref = StreamShape("ref", list(counts), dims, per_coord, r.empty_tokens, n.index, label,
                          n.tensor, lvl + 1, rels=list(rels), per_coord_by_depth=list(by_depth))
        return [crd, ref]

    def _repsig(self, n, c: StreamShape):
        return [StreamShape("repsig", list(c.counts), list(c.dims), index=c.index,
                            rels=_rels(c), per_coord_by_depth=_by_depth(c))]

    def _repeat(self, n, x: StreamShape, s: StreamShape):
        f = s.total / x.total if x.total > 0 else 0.0
        out = x.scaled(f)
        out.counts, out.dims, out.rels, out.pres = list(s.counts), list(s.dims), _rels(s), None
        by_depth = _by_depth(s)
        by_depth[-1] = out.per_coord
        out.per_coord_by_depth = by_depth
        return [out]

    def _joiner(self, n, ins: list, required: list | None):
        pairs = [(ins[2 * k], ins[2 * k + 1]) for k in range(len(ins) // 2)]
        crds = [c for c, _ in pairs]
        if required is None:
            rel = _rels(crds[0])[-1]
            for c in crds[1:]:
                rel = _and(rel, _rels(c)[-1])
        elif required:
            rel = _rels(crds[required[0]])[-1]
            for k in required[1:]:
                rel = _and(rel, _rels(crds[k])[-1])
        else:
            rel = _rels(crds[0])[-1]
            for c in crds[1:]:
                rel = _or(rel, _rels(c)[-1])
        rels = _rels(crds[0])[:-1] + [rel]
        above = _by_depth(crds[0])[:-1]
        if required is None:        # intersect
            per_coord, lab = crds[0].per_coord, crds[0].label
            cur = crds[0]
            for c in crds[1:]:
                per_coord, lab = _meet(cur, c, self.fresh)
                cur = replace(cur, per_coord=per_coord, label=lab,
                              counts=cur.counts[:-1] + [float(per_coord.sum())])
        elif required:
            cur = crds[required[0]]
            per_coord, lab = cur.per_coord, cur.label
            for k in required[1:]:
                per_coord, lab = _meet(cur, crds[k], self.fresh)
                cur = replace(cur, per_coord=per_coord, label=lab,
                              counts=cur.counts[:-1] + [float(per_coord.sum())])
        else:
            cur = crds[0]
            per_coord, lab = cur.per_coord, cur.label
            for c in crds[1:]:
                per_coord, lab = _join(cur, c, self.fresh)
                cur = replace(cur, per_coord=per_coord, label=lab,
                              counts=cur.counts[:-1] + [float(per_coord.sum())])
        exact = _through_rel(rel, above)
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
                present, _ = _meet(out_crd, c, self.fresh)
            nd = float(present.sum())
            empty = max(total - nd, 0.0)
            if x.kind == "val":
                pres = None
                # (more than two operands: two-operand ALUs are exact from the N counts)
                if required is not None and not required and len(pairs) > 2:
                    r = _rels(c)[-1]
                    pres = r if r is not None and not isinstance(r, str) else None
                outs.append(replace(x, counts=list(counts), dims=list(dims), empty_tokens=empty,
                                    rels=list(rels), per_coord_by_depth=above + [None],
                                    pres=pres))
            else:
                outs.append(replace(x, counts=list(counts), dims=list(dims), per_coord=present,
                                    empty_tokens=empty, index=n.index, label=lab, rels=list(rels),
                                    per_coord_by_depth=above + [present]))
        return outs

    def _intersect(self, n, *ins):
        return self._joiner(n, list(ins), None)

    def _locate(self, n, c: StreamShape, x: StreamShape, p: StreamShape):
        # `opt -p locate` replaces intersect(c, x, scan(p) of a dense level) by this node with
        # the same output streams (docs/opt.md): estimate it as that intersection. A dense scan
        # reads nothing off chip, so the costs are the intersection's.
        crd, ref = self._scan(n, p)
        return self._joiner(n, [c, x, crd, ref], None)

    def _union(self, n, *ins):
        return self._joiner(n, list(ins), list(getattr(n, "required", None) or []))

    # ---- computation ---------------------------------------------------------------------
    def _array(self, n, r: StreamShape):
        t = self._tstats(n.tensor)
        b = t.block if t.block else None
        self.cost.read_vals += r.data * self.eb * (b * b if b else 1)
        return [StreamShape("val", list(r.counts), list(r.dims), None, 0.0, r.index, block=b,
                            rels=_rels(r), per_coord_by_depth=_by_depth(r))]

    def _alu(self, n, a: StreamShape, b: StreamShape | None = None):
        if b is None:
            self.cost.flops += a.data * _alu_flops(n.op, a.block, n)
            return [replace(a)]
        blk = a.block or b.block
        exact = _pres_both(a, b)
        if exact is not None:       # values of several union outputs: where both hold one
            both, pres, held = exact
            self.cost.flops += both * _alu_flops(n.op, blk, n)
            return [replace(a, empty_tokens=max(a.total - held, 0.0), block=blk, pres=pres)]
        both = max(a.total - a.empty_tokens - b.empty_tokens, 0.0)
        self.cost.flops += both * _alu_flops(n.op, blk, n)
        return [replace(a, empty_tokens=max(a.empty_tokens + b.empty_tokens - a.total, 0.0),
                        block=blk, pres=None)]

    def _reduce(self, n, v: StreamShape):
        self.cost.flops += v.data * _reduce_flops(v.block, n)
        counts = list(v.counts[:-1]) or [1.0]
        dims = list(v.dims[:-1]) or [1]
        return [StreamShape("val", counts, dims, None, 0.0, None, block=v.block,
                            rels=_rels(v)[:-1] or [None],
                            per_coord_by_depth=_by_depth(v)[:-1] or [None])]

    def _distinct(self, c: StreamShape, groups: float, per_group: float,
                  space: float) -> np.ndarray:
        """Distinct coordinates of `c` per group of `per_group` fibers (distinct coordinates of
        the reduced index, out of `space`), over `groups` groups. A coordinate found in a
        fraction p of the fibers is present in a group unless none of its K fibers has it:
        C(R - pR, K) / C(R, K) (drawing K of the R reduced coordinates without replacement)."""
        fib = max(groups * per_group, 1e-300)
        p = np.clip(c.per_coord / fib, 0.0, 1.0)
        return groups * _hit(p, per_group, max(float(space), per_group, 1.0))

    def _spacc1(self, n, c: StreamShape, v: StreamShape):
        self.cost.flops += v.data * _reduce_flops(v.block, n)
        if c.held:
            return self._spacc_held(c, v)
        groups = float(c.counts[-3]) if len(c.counts) >= 3 else 1.0
        k = c.fibers / groups if groups > 0 else 0.0
        rels = _rels(c)
        lane = self._lane
        if lane is not None:        # one lane's share of the reduced index (reduce=lanes)
            both = self._through_lane(c, rels, groups, *lane)
            k = k / lane[0]
        else:
            both = self._through(c, rels, groups)
        if both is not None:
            per_coord, rel = both
        else:
            per_coord = self._distinct(c, groups, k, c.dims[-2] if len(c.dims) >= 2 else 1)
            rel = FULL if _full(c) and lane is None else None
        counts = list(c.counts[:-2]) + [float(per_coord.sum())]
        dims = list(c.dims[:-2]) + [c.dims[-1]]
        rels = rels[:-2] + [rel]
        by_depth = _by_depth(c)[:-2] + [per_coord]
        lab = DENSE if _full(c) and lane is None else self.fresh()
        return [StreamShape("crd", counts, dims, per_coord, 0.0, c.index, lab, rels=rels,
                            per_coord_by_depth=by_depth),
                StreamShape("val", list(counts), list(dims), None, block=v.block, rels=list(rels),
                            per_coord_by_depth=list(by_depth))]

    def _through(self, c: StreamShape, rels: list, groups: float):
        """When the relations g -> u (the reduced index) and u -> c are both known, the
        coordinates c reached from each g: the pattern of their boolean product (the symbolic
        phase of a sparse matrix product), each present group g counted groups/|g| times."""
        if len(rels) < 3 or len(c.dims) < 3:
            return None
        r1, r2 = rels[-2], rels[-1]
        if r1 is None or r2 is None or (isinstance(r1, str) and isinstance(r2, str)):
            return None
        ng, nu, nc = c.dims[-3], c.dims[-2], c.dims[-1]
        w = _by_depth(c)[-3]
        if w is None or w.shape != (ng,):
            w = np.full(ng, groups / ng)
        # a dense side reaches everything the other side reaches (no dense product formed)
        if isinstance(r1, str):
            if r2.shape != (nu, nc):
                return None
            reach = (np.asarray(r2.sum(axis=0)).reshape(-1) > 0).astype(float)
            return float(w.sum()) * reach, None
        if r1.shape != (ng, nu):
            return None
        if isinstance(r2, str):
            rows = (np.asarray(r1.sum(axis=1)).reshape(-1) > 0).astype(float)
            return np.full(nc, float(np.dot(w, rows))), (FULL if rows.all() else None)
        if r2.shape != (nu, nc):
            return None
        b = ((r1 @ r2) > 0).astype(float).tocsr()
        per_coord = np.asarray(b.T @ w, dtype=float).reshape(-1)
        return per_coord, b

    def _through_lane(self, c: StreamShape, rels: list, groups: float, lanes: int, lane: int):
        """`_through` for one lane of a spacc1 run per lane: the reduced index's relation
        restricted to the coordinates that lane is dealt; the output relation is always a
        csr matrix (lanes differ)."""
        if len(rels) < 3 or len(c.dims) < 3:
            return None
        r1, r2 = rels[-2], rels[-1]
        ng, nu, nc = c.dims[-3], c.dims[-2], c.dims[-1]
        if r1 is None or r2 is None or (not isinstance(r1, str) and r1.shape != (ng, nu)):
            return None
        import scipy.sparse as sp
        if isinstance(r2, str):
            r2 = sp.csr_matrix(np.ones((nu, nc)))
        elif r2.shape != (nu, nc):
            return None
        w = _by_depth(c)[-3]
        if w is None or w.shape != (ng,):
            w = np.full(ng, groups / ng)
        b = ((_lane_rows(r1, (ng, nu), lanes, lane) @ r2) > 0).astype(float).tocsr()
        return np.asarray(b.T @ w, dtype=float).reshape(-1), b

    def _spacc2(self, n, ci: StreamShape, cj: StreamShape, v: StreamShape):
        return self._spacc_n(n, [ci, cj], v)

    def _spacc3(self, n, ci: StreamShape, cj: StreamShape, ck: StreamShape, v: StreamShape):
        return self._spacc_n(n, [ci, cj, ck], v)

    def _spacc_n(self, n, crds: list, v: StreamShape):
        """A sparse accumulator of order len(crds) >= 2: the distinct coordinates of each level
        per distinct point of the level outside it, level by level from the outermost (whose
        groups are those above the reduced index)."""
        self.cost.flops += v.data * _reduce_flops(v.block, n)
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
            per_coord = self._distinct(c, outer, k, space)
            outer, data = float(per_coord.sum()), c.data
            counts = counts + [outer]
            dims = dims + [c.dims[-1]]
            lab = DENSE if _full(c) else self.fresh()
            outs.append(StreamShape("crd", counts, dims, per_coord, 0.0, c.index, lab))
        return outs + [StreamShape("val", list(counts), list(dims), None, block=v.block)]

    # ---- construction --------------------------------------------------------------------
    def _crddrop(self, n, o: StreamShape, i: StreamShape):
        if _full(i):
            keep = 1.0
        else:
            keep = _nonempty(i)
        o2 = replace(o, counts=list(o.counts[:-1]) + [o.total * keep],
                     per_coord=None if o.per_coord is None else o.per_coord * keep,
                     empty_tokens=o.empty_tokens * keep, nonempty=True)
        i2 = replace(i, counts=list(i.counts[:-2]) + [o2.total, i.total], rels=None,
                     per_coord_by_depth=None)
        o2.rels = o2.per_coord_by_depth = None
        return [o2, i2]

    def _crdhold(self, n, o: StreamShape, i: StreamShape):
        rel = _rels(i)[-1]
        if o.per_coord is not None and rel is not None and not isinstance(rel, str) \
                and rel.shape[0] == o.per_coord.size:
            length = np.asarray(rel.sum(axis=1), dtype=float).reshape(-1)
            per_coord = o.per_coord * length
        elif o.per_coord is not None and isinstance(rel, str):
            per_coord = o.per_coord * (i.dims[-1] if i.dims else 1)
        else:
            per_coord = None if o.per_coord is None \
                else o.per_coord * (i.total / o.total if o.total > 0 else 0.0)
        by_depth = _by_depth(i)[:-1] + [per_coord]
        o2 = replace(o, counts=list(i.counts), dims=list(i.dims), per_coord=per_coord,
                     empty_tokens=0.0, rels=_rels(i), per_coord_by_depth=by_depth, held=True,
                     label=None)
        return [o2, replace(i)]

    def _spacc_held(self, c: StreamShape, v: StreamShape):
        """spacc1 on held coordinates (crdhold): each outer coordinate whose fiber holds an
        element, once per group above it."""
        w = _by_depth(c)[-2] if len(c.counts) >= 2 else None
        rel = _rels(c)[-1]
        if w is None or c.per_coord is None or w.shape != c.per_coord.shape:
            n_out = c.fibers
            per_coord = None if c.per_coord is None \
                else c.per_coord * (n_out / max(float(c.per_coord.sum()), 1e-300))
        else:
            if rel is not None and not isinstance(rel, str) and rel.shape[0] == w.size:
                nz = (np.asarray(rel.sum(axis=1)).reshape(-1) > 0).astype(float)
            else:
                lam = np.where(w > 0, c.per_coord / np.maximum(w, 1e-300), 0.0)
                nz = 1.0 - np.exp(-lam)
            per_coord = w * nz
        n_out = float(per_coord.sum()) if per_coord is not None else c.fibers
        counts = list(c.counts[:-2]) + [n_out]
        dims = list(c.dims[:-2]) + [c.dims[-2] if len(c.dims) >= 2 else 1]
        by_depth = _by_depth(c)[:-2] + [per_coord]
        return [StreamShape("crd", counts, dims, per_coord, 0.0, c.index, self.fresh(),
                            per_coord_by_depth=by_depth),
                StreamShape("val", list(counts), list(dims), None, block=v.block,
                            per_coord_by_depth=list(by_depth))]

    def _fork(self, n, s: StreamShape):
        """Every lane: the whole stream's shape (its weight is divided in run())."""
        return [s for _ in range(int(n.lanes))]

    def _join(self, n, *ins):
        """The lanes carry identical shapes: the gathered stream is one of them, at the summed
        weight (run())."""
        return [ins[0]]

    def _write_level(self, n, c: StreamShape):
        self.writes.setdefault(n.tensor, {"levels": {}, "vals": None})["levels"][n.mode] = c

    def _write_vals(self, n, v: StreamShape):
        self.writes.setdefault(n.tensor, {"levels": {}, "vals": None})["vals"] = v

    # ---- configurations: a cut stream to DRAM and back (sim/prims_write.py Spill) ---------
    def _spilled_bytes(self, s: StreamShape) -> tuple[str, float]:
        """The cost field and the bytes of stream s stored whole: every token but D."""
        b = s.block if s.kind == "val" and s.block else None
        toks = float(s.counts[-1]) + (float(s.counts[-2]) if len(s.counts) >= 2 else 0.0)
        return ("vals" if s.kind == "val" else "crd"), toks * self.eb * (b * b if b else 1)

    def _spill(self, n, s: StreamShape):
        field, nbytes = self._spilled_bytes(s)
        setattr(self.cost, "write_" + field, getattr(self.cost, "write_" + field) + nbytes)
        self.spill_io[0] += nbytes
        self.spilled[n.buffer] = s

    def _replay(self, n):
        s = self.spilled.get(n.buffer)
        if s is None:
            raise UserError(f"estimate: graph {self.graph.name} replays buffer {n.buffer}, "
                            "which no earlier graph spills")
        field, nbytes = self._spilled_bytes(s)
        setattr(self.cost, "read_" + field, getattr(self.cost, "read_" + field) + nbytes)
        self.spill_io[1] += nbytes
        return [s]


def written_stats(decl, shape: tuple[int, ...], levels: dict, vals: StreamShape | None,
                  fresh_label: str) -> TensorStats:
    """Statistics of a tensor assembled from its writers' streams (sim/assemble.py): dense
    levels store every position under their parents; a compressed level stores the coordinates
    its stream carries, less the prefixes left with no stored entry beneath (`from_coo` keeps
    only prefixes of stored values)."""
    fmt = decl.format
    sizes = level_shape(shape, fmt, decl.block)
    ns: list[float] = []
    hists: list[np.ndarray] = []
    labels: list = []
    streams: list = []
    prev = 1.0
    for k, (kind, size) in enumerate(zip(fmt.levels, sizes)):
        s = levels.get(fmt.mode_order[k])
        streams.append(s)
        if kind == "dense":
            n = prev * size
            hist = np.full(size, prev)
            lab = DENSE
        else:
            if s is None:
                n = vals.data if vals is not None else 0.0
                hist = np.full(size, n / max(size, 1))
                lab = f"{fresh_label}.{k}"
            else:
                n = s.data
                known = s.per_coord is not None and s.per_coord.shape == (size,)
                hist = s.per_coord if known else np.full(size, n / max(size, 1))
                lab = s.label[0] if isinstance(s.label, tuple) else \
                    (DENSE if s.label == DENSE else f"{fresh_label}.{k}")
        ns.append(n)
        hists.append(hist)
        labels.append(lab)
        prev = n
    # prefixes of a compressed level whose compressed child fiber stays empty are not stored
    for k in range(len(ns) - 2, -1, -1):
        if fmt.levels[k] != "compressed" or fmt.levels[k + 1] != "compressed":
            continue
        s, child = streams[k], streams[k + 1]
        if s is None or s.nonempty or child is None or child.per_coord is None or _full(child):
            continue
        keep = _nonempty(child)
        ns[k] *= keep
        hists[k] = hists[k] * keep
    out: list[LevelStats] = []
    phist, pn = np.ones(1), 1.0
    for k, (kind, size) in enumerate(zip(fmt.levels, sizes)):
        n = ns[k]
        parent = phist * (n / pn) if pn > 0 else np.zeros_like(phist)
        pattern = None
        s = streams[k]
        if kind == "compressed" and s is not None and s.rels and k > 0 \
                and fmt.levels[k - 1] == "dense" and k == 1:
            rel = s.rels[-1]
            if rel is not None and not isinstance(rel, str) and rel.shape == (phist.size, size):
                pattern = rel
        out.append(LevelStats(kind, size, n, hists[k], parent, phist.copy(), labels[k],
                              pattern))
        phist, pn = hists[k], n
    return TensorStats(decl.name, tuple(shape), fmt, decl.block, out)


def _permuted(step, src: TensorStats, dst_decl, shape, data: DataStats) -> TensorStats:
    """DST's statistics after `permute SRC -> DST`: exact when SRC is an input loaded from
    files, else SRC's density spread uniformly (dense formats are exact either way)."""
    modes = step.mode_map(len(shape))
    fiber = data.fibers.get(step.src)
    reblocks = (src.block or None) != (dst_decl.block or None)
    if fiber is not None and reblocks:
        from ..data.decompose import reblock
        return stats_of_fiber(dst_decl.name,
                              reblock(fiber, dst_decl.format, dst_decl.block, dst_decl.name))
    if reblocks:   # element density, spread uniformly (blocks: at least that density)
        elements = src.nnz * (src.block or 1) ** 2
        d = elements / math.prod(shape) if math.prod(shape) else 0.0
        return uniform_stats(dst_decl.name, shape, dst_decl.format, dst_decl.block, d)
    if fiber is not None:
        from ..data.fibertree import FiberTensor
        coords, vals = fiber.to_coo()
        coords = coords[:, list(modes)] if coords.size else coords.reshape(-1, len(shape))
        t = FiberTensor.from_coo(shape, coords, vals, dst_decl.format, dst_decl.block)
        return stats_of_fiber(dst_decl.name, t)
    total = math.prod(shape) / ((dst_decl.block or 1) ** 2 if dst_decl.block else 1)
    d = src.nnz / total if total else 0.0
    return uniform_stats(dst_decl.name, shape, dst_decl.format, dst_decl.block, d)


def _decomposed(step, src: TensorStats | None, module, data: DataStats) -> dict:
    """The parts' statistics after `decompose SRC -> P0 >= t0, ..., R`: exact when SRC was
    loaded from files (the split itself, fuseflowc.data.decompose), else for SRC's density
    spread uniformly: a b x b block of what is left (density d) holds x ~ Binomial(b^2, d)
    entries and goes to the part when x >= t b^2."""
    if src is None:
        raise UserError(f"estimate: {step.name}: {step.src} has no statistics")
    decls = [module.tensor(p) for p in step.parts]
    fiber = data.fibers.get(step.src)
    if fiber is not None:
        from ..data.decompose import split
        parts = split(fiber, [(d.format, d.block, t) for d, t in zip(decls, step.thresholds)],
                      step.src)
        return {d.name: stats_of_fiber(d.name, p) for d, p in zip(decls, parts)}
    from scipy.stats import binom
    shape = src.shape
    area = math.prod(shape)
    d = src.nnz / area if area else 0.0
    out = {}
    for decl, t in zip(decls[:-1], step.thresholds[:-1]):
        b = decl.block
        need = math.ceil(t * b * b - 1e-9)
        p_block = float(binom.sf(need - 1, b * b, d)) if d > 0 else 0.0
        # entries in the taken blocks: E[x | x >= need] per taken block
        ks = np.arange(need, b * b + 1)
        taken = float((ks * binom.pmf(ks, b * b, d)).sum()) if d > 0 else 0.0
        out[decl.name] = uniform_stats(decl.name, shape, decl.format, b, p_block)
        d = max(d - taken / (b * b), 0.0)   # what is left, spread over the whole matrix
    last = decls[-1]
    out[last.name] = uniform_stats(last.name, shape, last.format, None, d)
    return out


def estimate_module(module, stats: DataStats, arch=None) -> Estimate:
    """Expected FLOPs, bytes and cycles of every graph (and permute step) of `module` on data
    described by `stats`, without simulating. Kernels are keyed by graph name (permute steps by
    `permute SRC -> DST`), in execution order. `arch` (a sim.arch.Arch; None: the defaults of
    sim/arch.toml) gives the timing the cycles are modelled with (timing.py); the total's
    cycles are the kernels' sum (they run one after another)."""
    from fuseflowc.sim.arch import Arch

    from ..samml.block_sizes import require_blocks
    from ..samml.ir import Decompose, Permute
    t0 = time.perf_counter()
    require_blocks(module, stats.sizes)
    if arch is None:
        arch = Arch.load(None)
    eb = stats.element_bytes
    tensors = dict(stats.tensors)
    spilled: dict = {}
    est = Estimate()
    for item in module.sequence():
        if isinstance(item, Decompose):
            parts = _decomposed(item, tensors.get(item.src), module, stats)
            rd = tensors[item.src].stored()
            wr = {"seg": 0.0, "crd": 0.0, "vals": 0.0}
            for name, ps in parts.items():
                for k, v in ps.stored().items():
                    wr[k] += v
                tensors[name] = ps
            # the simulator's model (sim/decompose.py): seg and crd read twice, and two passes
            # over the source's entries (count the blocks' fill, then route each entry)
            c = Cost(0.0, 2 * rd["seg"] * eb, 2 * rd["crd"] * eb, rd["vals"] * eb,
                     wr["seg"] * eb, wr["crd"] * eb, wr["vals"] * eb)
            c.cycles = timing.permute_cycles(c.bytes_read, c.bytes_written,
                                             2 * tensors[item.src].nnz, arch)
            est.kernels[item.name] = c
            continue
        if isinstance(item, Permute):
            src = tensors.get(item.src)
            dst = module.tensor(item.dst)
            if src is None or dst is None:
                raise UserError(f"estimate: {item.name}: {item.src} has no statistics")
            shape = shape_of(dst, stats.sizes)
            dst_stats = _permuted(item, src, dst, shape, stats)
            from ..data.decompose import is_relayout
            if is_relayout(src.format, src.block, dst.format, dst.block):
                est.kernels[item.name] = Cost()   # as the simulator: no data moves
                tensors[item.dst] = dst_stats
                continue
            rd, wr = src.stored(), dst_stats.stored()
            c = Cost(0.0, rd["seg"] * eb, rd["crd"] * eb, rd["vals"] * eb,
                     wr["seg"] * eb, wr["crd"] * eb, wr["vals"] * eb)
            entries = max(src.nnz, dst_stats.nnz)
            c.cycles = timing.permute_cycles(c.bytes_read, c.bytes_written, entries, arch)
            est.kernels[item.name] = c
            tensors[item.dst] = dst_stats
            continue
        gm = _GraphModel(item, tensors, eb, arch, spilled)
        gm.run()
        for name in sorted(gm.writes):
            w = gm.writes[name]
            decl = module.tensor(name)
            if decl is None:
                raise UserError(f"estimate: graph {item.name} writes undeclared tensor {name}")
            ts = written_stats(decl, shape_of(decl, stats.sizes), w["levels"], w["vals"],
                               f"{name}")
            st = ts.stored()
            gm.cost.write_seg += st["seg"] * eb
            gm.cost.write_crd += st["crd"] * eb
            gm.cost.write_vals += st["vals"] * eb
            tensors[name] = ts
        gm.cost.cycles = max(gm.finish, timing.bandwidth_bound(gm.cost, arch))
        est.kernels[item.name] = gm.cost
        if any(gm.spill_io):
            est.spills[item.name] = tuple(gm.spill_io)
    est.tensors = tensors
    est.ms = (time.perf_counter() - t0) * 1000.0
    return est

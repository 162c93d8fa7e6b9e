"""The stream-shape algebra: what the model knows about one stream (`StreamShape`) and how
shapes combine where streams meet (joiners), collapse (reducers, accumulators) or run in
parallel lanes.

Every stream gets a `StreamShape`: its element counts per nesting depth (`counts`, the last
entry being the stream's own elements, N tokens included, `empty_tokens` of them), and for
coordinate and reference streams the expected number of elements per coordinate of the stream's
index (`per_coord`, over all its fibers; `per_coord_by_depth` keeps it for every depth), and
per depth the relation to the depth above (`rels`, fuseflowc.estimate.relation). Two coordinate
streams that follow one sparsity pattern share a `label`. docs/estimate.md gives the formulas
and their assumptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .relation import FULL, columns_reached, lane_rows, rows_holding
from .stats import DENSE


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
    #                             depth above (a relation.Relation: csr, FULL or None)
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


def rels_of(s: StreamShape) -> list:
    """s.rels, or one unknown relation per depth."""
    return list(s.rels) if s.rels is not None else [None] * len(s.counts)


def by_depth(s: StreamShape) -> list:
    """s.per_coord_by_depth (Nones when not known), its last depth being s.per_coord."""
    known = s.per_coord_by_depth is not None and len(s.per_coord_by_depth) == len(s.counts)
    out = list(s.per_coord_by_depth) if known else [None] * len(s.counts)
    if s.per_coord is not None:
        out[-1] = s.per_coord
    return out


def is_full(s: StreamShape) -> bool:
    """Every fiber of s holds every coordinate (a dense scan, or a pattern measured full)."""
    if s.label == DENSE:
        return True
    if s.per_coord is None or not s.per_coord.size:
        return False
    f = s.fibers
    return f > 0 and bool(np.all(s.per_coord >= f * (1 - 1e-9)))


def nonempty_share(s: StreamShape) -> float:
    """Expected fraction of the fibers of coordinate stream `s` that hold at least one
    coordinate (coordinates present independently, each in per_coord / fibers of them)."""
    f = max(s.fibers, 1e-300)
    p = np.clip(s.per_coord / f, 0.0, 1.0 - 1e-12)
    return 1.0 - math.exp(float(np.sum(np.log1p(-p))))


def matches(a: StreamShape, b: StreamShape, fresh) -> tuple[np.ndarray, object]:
    """Expected matches per coordinate of two aligned coordinate streams (same fibers), and
    their label: the other side when one is full; min(a, b) when both follow the same pattern
    (same label); else a*b/F, coordinates present independently in each fiber (`fresh()`
    labels the new pattern)."""
    if is_full(a):
        return b.per_coord, b.label
    if is_full(b):
        return a.per_coord, a.label
    if a.label is not None and a.label == b.label:
        return np.minimum(a.per_coord, b.per_coord), a.label
    f = max(a.fibers, 1e-300)
    if a.per_coord.shape != b.per_coord.shape:
        n = a.data * b.data / f / max(max(a.per_coord.size, b.per_coord.size), 1)
        size = a.per_coord.size
        return np.full(size, n / max(size, 1) * max(size, 1)), fresh()
    return a.per_coord * b.per_coord / f, fresh()


def present_in_either(a: StreamShape, b: StreamShape, fresh) -> tuple[np.ndarray, object]:
    """Expected coordinates per value present in either stream, and their label."""
    m, lab = matches(a, b, fresh)
    per_coord = a.per_coord + b.per_coord - m if a.per_coord.shape == b.per_coord.shape \
        else np.maximum(a.per_coord, b.per_coord)
    if is_full(a) or is_full(b):
        return (a.per_coord if is_full(a) else b.per_coord), DENSE
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


def distinct(c: StreamShape, groups: float, per_group: float, space: float) -> np.ndarray:
    """Distinct coordinates of `c` per group of `per_group` fibers (distinct coordinates of
    the reduced index, out of `space`), over `groups` groups. A coordinate found in a
    fraction p of the fibers is present in a group unless none of its K fibers has it:
    C(R - pR, K) / C(R, K) (drawing K of the R reduced coordinates without replacement)."""
    fib = max(groups * per_group, 1e-300)
    p = np.clip(c.per_coord / fib, 0.0, 1.0)
    return groups * _hit(p, per_group, max(float(space), per_group, 1.0))


def present_in_both(a: StreamShape, b: StreamShape):
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


def product(c: StreamShape, rels: list, groups: float):
    """When the relations g -> u (the reduced index) and u -> c are both known, the
    coordinates c reached from each g: the pattern of their boolean product (the symbolic
    phase of a sparse matrix product), each present group g counted groups/|g| times;
    (per_coord, the product's relation), or None."""
    if len(rels) < 3 or len(c.dims) < 3:
        return None
    r1, r2 = rels[-2], rels[-1]
    if r1 is None or r2 is None or (r1 is FULL and r2 is FULL):
        return None
    ng, nu, nc = c.dims[-3], c.dims[-2], c.dims[-1]
    w = by_depth(c)[-3]
    if w is None or w.shape != (ng,):
        w = np.full(ng, groups / ng)
    # a dense side reaches everything the other side reaches (no dense product formed)
    if r1 is FULL:
        if r2.shape != (nu, nc):
            return None
        return float(w.sum()) * columns_reached(r2).astype(float), None
    if r1.shape != (ng, nu):
        return None
    if r2 is FULL:
        rows = rows_holding(r1).astype(float)
        return np.full(nc, float(np.dot(w, rows))), (FULL if rows.all() else None)
    if r2.shape != (nu, nc):
        return None
    b = ((r1 @ r2) > 0).astype(float).tocsr()
    per_coord = np.asarray(b.T @ w, dtype=float).reshape(-1)
    return per_coord, b


def lane_product(c: StreamShape, rels: list, groups: float, lanes: int, lane: int):
    """`product` for one lane of a spacc1 run per lane: the reduced index's relation
    restricted to the coordinates that lane is dealt; the output relation is always a
    csr matrix (lanes differ)."""
    if len(rels) < 3 or len(c.dims) < 3:
        return None
    r1, r2 = rels[-2], rels[-1]
    ng, nu, nc = c.dims[-3], c.dims[-2], c.dims[-1]
    if r1 is None or r2 is None or (r1 is not FULL and r1.shape != (ng, nu)):
        return None
    import scipy.sparse as sp
    if r2 is FULL:
        r2 = sp.csr_matrix(np.ones((nu, nc)))
    elif r2.shape != (nu, nc):
        return None
    w = by_depth(c)[-3]
    if w is None or w.shape != (ng,):
        w = np.full(ng, groups / ng)
    b = ((lane_rows(r1, (ng, nu), lanes, lane) @ r2) > 0).astype(float).tocsr()
    return np.asarray(b.T @ w, dtype=float).reshape(-1), b

"""Seeded synthetic graphs of a given size and degree distribution (Chung-Lu), for the paper's
data sets that cannot be downloaded here (ogbl-collab, ogbn-mag).

A graph is drawn by the Chung-Lu model: node i has a weight w_i (its expected degree) and each
edge picks its two endpoints independently with probability proportional to the weights. The
weights are a power law, P(degree = d) ~ d^-exponent, scaled to the requested mean degree
2 * edges / nodes and capped at `max_degree` (default sqrt(2 * edges), the structural cutoff
beyond which a simple graph cannot hold the expected degrees), as in Chung and Lu (2002,
"Average distances in random graphs with given expected degrees"); or they are a degree
sequence the user gives (`degrees=FILE.npy`, e.g. the histogram of a real data set).

Endpoint pairs are drawn in vectorized batches; self loops are dropped and repeated pairs kept
once until at least `edges` distinct undirected edges exist, then exactly `edges` of them are
kept, a uniform random subset. Node ids are then
shuffled (a real data set's ids do not follow the degrees). Features: an n x `features` CSR
matrix with exactly round(density * n * features) non-zeros at uniformly drawn positions,
values uniform in [-1, 1) and never 0. Everything is drawn from numpy Generators seeded by
`seed` (one stream for the graph, one for the features): the same spec gives the same graph.

Spec text (what `--graph synthetic:...` takes): a preset and/or key=value pairs, comma separated:
`synthetic:collab`, `synthetic:mag,seed=2`, `synthetic:nodes=1000,edges=5000,features=16`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from ..limits import check_memory
from .gen import nonzero_uniform
from .graph import Graph, adjacency_bytes, check_graph_size, symmetric_adjacency, unique_sorted

PREFIX = "synthetic:"

#: The paper's Table 4 sizes: ogbl-collab (235,868 x 128) and ogbn-mag taken as one homogeneous
#: graph (1,939,743 x 128), both at 99.9% sparsity; edge counts from OGB (Hu et al., 2020).
PRESETS = {
    "collab": dict(nodes=235_868, edges=1_285_465, features=128, density=0.001),
    "mag": dict(nodes=1_939_743, edges=21_111_007, features=128, density=0.001),
}

DEFAULT_EXPONENT = 2.5
# Draw this many more pairs than still missing: self loops and repeats are thrown away.
_OVERDRAW = 1.15
_MAX_ROUNDS = 40


@dataclass(frozen=True)
class SyntheticSpec:
    """What a synthetic graph is drawn from (see the module docstring)."""

    nodes: int = 0
    edges: int = 0
    features: int = 0
    density: float = 0.001
    exponent: float = DEFAULT_EXPONENT
    max_degree: float | None = None     # None: sqrt(2 * edges)
    degrees: str | None = None          # a .npy of expected degrees instead of the power law
    seed: int | None = None             # None: the caller's seed (gen-data --seed)
    name: str = "synthetic"

    def text(self) -> str:
        """The spec as `synthetic:` text (every field that differs from its default)."""
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "name" and v != f.default:
                parts.append(f"{f.name}={_number(v)}" if isinstance(v, float)
                             else f"{f.name}={v}")
        return PREFIX + ",".join(parts)


def _number(v: float) -> str:
    """A float as short as `:g` writes it when that reads back the same, else in full (found by
    fuzzing: exponent=1.0000001 was reported as "exponent=1")."""
    return f"{v:g}" if float(f"{v:g}") == v else repr(v)


_CONVERT = {"nodes": int, "edges": int, "features": int, "density": float, "exponent": float,
            "max_degree": float, "degrees": str, "seed": int}


def is_synthetic(source: str) -> bool:
    """Whether a --graph source names a synthetic graph."""
    return source.startswith(PREFIX)


def parse_synthetic(source: str) -> SyntheticSpec:
    """`synthetic:[PRESET][,KEY=VALUE...]` -> SyntheticSpec; errors name the bad item."""
    body = source[len(PREFIX):] if is_synthetic(source) else source
    spec = SyntheticSpec()
    name = "synthetic"
    given: set[str] = set()
    for k, item in enumerate(x.strip() for x in body.split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq:
            if k == 0 and key in PRESETS:
                spec = replace(spec, **PRESETS[key])
                name = f"synthetic-{key}"
                continue
            raise UserError(f"{source}: '{item}' is neither a preset ({' or '.join(PRESETS)}, "
                            f"given first) nor KEY=VALUE")
        if key not in _CONVERT:
            raise UserError(f"{source}: unknown key '{key}'; expected "
                            f"{', '.join(_CONVERT)}")
        try:
            v = _CONVERT[key](value.strip())
        except ValueError:
            raise UserError(f"{source}: {key}={value.strip()}: expected "
                            f"{'an integer' if _CONVERT[key] is int else 'a number'}") from None
        spec = replace(spec, **{key: v})
        given.add(key)
    spec = replace(spec, name=name)
    _check(source, spec, given)
    return spec


def _check(source: str, s: SyntheticSpec, given: set[str]) -> None:
    def bad(msg):
        raise UserError(f"{source}: {msg}")
    if s.degrees is None and s.nodes < 1:
        bad("nodes: give a preset (collab, mag) or nodes=N (N >= 1), or degrees=FILE.npy")
    if s.degrees is not None and "nodes" in given:
        bad("nodes: a degrees file fixes the node count; give one or the other")
    if s.edges < 0 or s.features < 0:
        bad("edges and features must be non-negative")
    if not 0.0 <= s.density <= 1.0 or not math.isfinite(s.density):
        bad(f"density={_number(s.density)}: expected a fraction between 0 and 1")
    if not (math.isfinite(s.exponent) and s.exponent > 2.0):
        bad(f"exponent={_number(s.exponent)}: a power law with a finite mean needs an exponent > 2")
    if s.max_degree is not None and not (math.isfinite(s.max_degree) and s.max_degree >= 1):
        bad(f"max_degree={_number(s.max_degree)}: expected a number >= 1")
    if s.seed is not None and s.seed < 0:  # numpy's generators refuse negative seeds
        bad(f"seed={s.seed}: expected an integer >= 0")


def _degree_file(path: str) -> np.ndarray:
    p = Path(path)
    try:
        d = np.load(p, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file (degrees=)") from None
    except Exception as e:  # a corrupt or non-npy file
        raise UserError(f"{path}: not a .npy array of degrees ({type(e).__name__}: {e})") from None
    if d.ndim != 1 or d.dtype.kind not in "iuf" or d.size < 1:
        raise UserError(f"{path}: expected a non-empty 1-D array of degrees, one per node")
    d = d.astype(np.float64)
    if not np.isfinite(d).all() or (d < 0).any():
        raise UserError(f"{path}: degrees must be finite and non-negative")
    return d


#: Work units (about nanoseconds of one core) per element of each step of drawing a graph,
#: measured on ogbn-mag's size: what the progress report's time left is scaled by.
WORK_PER_NODE_ITERATION = 27     # one bisection step of the weights, per node
WORK_PER_DRAWN_PAIR = 320        # drawing (half), deduplicating and sorting (half) a pair
WORK_PER_EDGE = 260              # the adjacency, per edge
WORK_PER_FEATURE = 170           # a stored feature value
BISECTION_STEPS = 60


def power_law_weights(n: int, mean: float, exponent: float, max_degree: float,
                      tick=None) -> np.ndarray:
    """Expected degrees w_i = c (i + i0)^(-1 / (exponent - 1)), i = 0..n-1 (Chung and Lu's
    power-law sequence), in decreasing order, with mean exactly `mean` and largest exactly
    `max_degree` (when the mean allows it: at most n * mean, at least the mean). `tick()`, if
    given, is called after each of the BISECTION_STEPS steps."""
    if n == 0 or mean <= 0:
        return np.zeros(n)
    a = 1.0 / (exponent - 1.0)
    target = min(max(max_degree, mean), n * mean) / mean   # w_0 / mean(w)
    i = np.arange(n, dtype=np.float64)

    def ratio(i0: float) -> float:
        return i0 ** -a / np.mean((i + i0) ** -a)
    # ratio falls from n (i0 -> 0) towards 1 (i0 -> inf): bisect log i0
    lo, hi = -30.0, 30.0 + math.log(n + 1)
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if ratio(math.exp(mid)) > target:
            lo = mid
        else:
            hi = mid
        if tick is not None:
            tick()
    w = (i + math.exp((lo + hi) / 2)) ** -a
    return w * (mean * n / w.sum())


def chung_lu_edges(weights: np.ndarray, edges: int, rng: np.random.Generator,
                   source: str = "synthetic", tick=None) -> tuple[np.ndarray, np.ndarray]:
    """`edges` distinct undirected edges (u < v, no self loops, sorted) with endpoints drawn
    proportionally to `weights`. `tick(pairs, round)`, if given, is called twice a round of
    drawing (after the draw, after the deduplication), with half the pairs drawn each."""
    n = weights.shape[0]
    if edges == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n < 2 or edges > n * (n - 1) // 2:
        raise UserError(f"{source}: {edges} edges do not fit in a simple graph of {n} nodes "
                        f"(at most {n * (n - 1) // 2})")
    if np.count_nonzero(weights) < 2:
        raise UserError(f"{source}: fewer than two nodes have a non-zero degree")
    p = weights / weights.sum()
    keys = np.zeros(0, np.int64)          # the distinct pairs drawn so far, as lo * n + hi
    for rnd in range(_MAX_ROUNDS):
        missing = edges - keys.shape[0]
        drawn = int(missing * _OVERDRAW) + 64
        u, v = _endpoint_pairs(rng, p, drawn)
        if tick is not None:
            tick(drawn / 2, rnd + 1)
        keep = u != v
        u, v = u[keep], v[keep]
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        keys = unique_sorted(np.concatenate([keys, lo * n + hi]))
        if tick is not None:
            tick(drawn / 2, rnd + 1)
        if keys.shape[0] >= edges:
            # more distinct pairs than wanted: keep a uniform random subset of them
            if keys.shape[0] > edges:
                keep = np.ones(keys.shape[0], bool)
                keep[rng.choice(keys.shape[0], size=keys.shape[0] - edges, replace=False)] = False
                keys = keys[keep]
            return np.divmod(keys, n)
    raise UserError(f"{source}: could not draw {edges} distinct edges in {_MAX_ROUNDS} rounds: "
                    f"the degree distribution concentrates them on too few node pairs (lower "
                    f"edges, the exponent's skew, or max_degree)")


def _endpoint_pairs(rng: np.random.Generator, p: np.ndarray, m: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """m independent pairs of endpoints, each endpoint drawn with probabilities p.

    How many times each node is drawn is multinomial; the draws of one side are laid out in
    node order and the other side's in a random order, which pairs them as independently as
    m separate draws would (the pairs are exchangeable), without m binary searches of the
    cumulative distribution (random memory access: minutes at MAG size)."""
    nodes = np.arange(p.shape[0], dtype=np.int64)
    u = np.repeat(nodes, rng.multinomial(m, p))
    v = np.repeat(nodes, rng.multinomial(m, p))
    return u, v[rng.permutation(m)]


def random_features(n: int, f: int, density: float, rng: np.random.Generator
                    ) -> sp.csr_matrix:
    """An n x f CSR matrix with exactly round(density * n * f) non-zeros, uniformly placed,
    values uniform in [-1, 1) and never 0."""
    total = n * f
    k = int(round(density * total))
    if k == total:
        flat = np.arange(total, dtype=np.int64)
    else:
        flat = np.sort(rng.choice(total, size=k, replace=False).astype(np.int64))
    rows, cols = np.divmod(flat, max(f, 1))
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    m = sp.csr_matrix((nonzero_uniform(rng, k), cols, indptr), shape=(n, f))
    return m


def synthetic_bytes(n: int, edges: int, features: int, density: float) -> int:
    """About the most bytes drawing a synthetic graph holds at once: float64 arrays of n (the
    weights, their bisection's temporaries, the probabilities, the shuffle), int64 arrays of
    the drawn pairs (both endpoints, their keys, the sort) and the adjacency, and the features
    (positions, values; the whole n x features grid when dense enough for a permutation)."""
    k = int(round(density * n * features))
    grid = 8 * n * features if k * 50 > n * features else 0
    return 56 * n + 96 * edges + adjacency_bytes(n, edges) + 40 * k + 8 * n + grid


def check_synthetic_size(source: str, n: int, edges: int, features: int,
                         density: float) -> None:
    """Refuse a synthetic graph whose drawing would not fit in memory, before anything is
    allocated (found by fuzzing: nodes=10^9 was a MemoryError)."""
    check_graph_size(n, edges, source)
    check_memory(synthetic_bytes(n, edges, features, density),
                 f"{source}: drawing {n:,} nodes, {edges:,} edges and {features:,} features")


def synthetic_graph(source: str, seed: int = 0, progress=None):
    """The Graph a `synthetic:...` spec describes (its own seed= wins over `seed`).
    `progress` (a fuseflowc.data.progress.WorkProgress, or None) is told the work and each
    step's share of it."""
    s = parse_synthetic(source)
    if s.degrees is not None:
        weights = _degree_file(s.degrees)
        n = weights.shape[0]
        edges = s.edges if s.edges else int(round(weights.sum() / 2))
        check_synthetic_size(source, n, edges, s.features, s.density)
    else:
        n, edges = s.nodes, s.edges
        check_synthetic_size(source, n, edges, s.features, s.density)
    k = int(round(s.density * n * s.features))
    if progress is not None:
        progress.add_work((BISECTION_STEPS * n * WORK_PER_NODE_ITERATION
                           if s.degrees is None else 0)
                          + edges * _OVERDRAW * WORK_PER_DRAWN_PAIR + edges * WORK_PER_EDGE
                          + k * WORK_PER_FEATURE)

    def weights_tick():
        progress.advance(n * WORK_PER_NODE_ITERATION, "the degree weights")

    def edges_tick(pairs, rnd):
        progress.advance(pairs * WORK_PER_DRAWN_PAIR, f"drawing edges (round {rnd})")
    if s.degrees is None:
        cap = s.max_degree if s.max_degree is not None else math.sqrt(2 * edges)
        weights = power_law_weights(n, 2 * edges / n, s.exponent, cap,
                                    weights_tick if progress is not None else None)
    seq = np.random.SeedSequence(s.seed if s.seed is not None else seed)
    graph_seq, feat_seq = seq.spawn(2)
    rng = np.random.default_rng(graph_seq)
    u, v = chung_lu_edges(weights, edges, rng, source,
                          edges_tick if progress is not None else None)
    perm = rng.permutation(n)
    adj = symmetric_adjacency(n, perm[u], perm[v], source)
    if progress is not None:
        progress.advance(edges * WORK_PER_EDGE, "the adjacency")
    feats = random_features(n, s.features, s.density, np.random.default_rng(feat_seq)) \
        if s.features else None
    if progress is not None:
        progress.advance(k * WORK_PER_FEATURE, "the features")
    return Graph(s.name, adj, feats, None)

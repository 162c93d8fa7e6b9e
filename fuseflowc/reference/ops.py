"""Operations on pattern-carrying values, following the language's sparsity semantics exactly
(docs/language.md, "Semantics of sparsity").

- unary functions act on stored entries only (the pattern is unchanged);
- `*`, `/` and `mask` intersect: an operand lacking some of the other's indices is broadcast
  and must be stored at the projected coordinate;
- `+ - max min` unite, with the broadcast rule: an operand that has indices the other lacks must
  itself store the coordinate (so only same-index operands give a plain union);
- `sum`/`max` reductions cover stored entries only; the result is stored exactly where at least
  one entry was reduced.
"""

from __future__ import annotations

import math

import numpy as np

from .values import SVal, keys, unique_keys

# ---- unary functions ---------------------------------------------------------------------------


def _gelu(x: np.ndarray) -> np.ndarray:
    # The exact (erf) GELU, as in PyTorch's default, not the tanh approximation.
    from scipy.special import erf
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit
    return expit(x)


UNARY = {
    "relu": lambda x: np.maximum(x, 0.0),
    "exp": np.exp,
    "neg": np.negative,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "gelu": _gelu,
}


def unary(func: str, v: SVal) -> SVal:
    """`func` applied to the stored entries of v (absent entries stay absent)."""
    with np.errstate(all="ignore"):
        return SVal(v.indices, v.sizes, v.coords, UNARY[func](v.vals).astype(np.float64))


# ---- joins --------------------------------------------------------------------------------------


def _merged(a: SVal, b: SVal) -> tuple[tuple[str, ...], tuple[int, ...], list[str], list[str]]:
    """Result indices (a's then b's extra ones), their sizes, the shared and b-only indices."""
    shared = [i for i in a.indices if i in b.indices]
    extra = [i for i in b.indices if i not in a.indices]
    indices = a.indices + tuple(extra)
    sizes = a.sizes + tuple(b.size_of(i) for i in extra)
    return indices, sizes, shared, extra


def _cols(v: SVal, idx) -> list[int]:
    return [v.indices.index(i) for i in idx]


def join(a: SVal, b: SVal) -> tuple[tuple[str, ...], tuple[int, ...], np.ndarray, np.ndarray,
                                    np.ndarray]:
    """Intersection of the patterns of a and b, broadcasting over missing indices.

    Returns (indices, sizes, coords, ia, ib): the result's entries and, for each, the positions of
    the a and b entries it combines. A sorted-COO join: b sorted by its key on the shared indices,
    each a entry matched against its run of equal keys.
    """
    indices, sizes, shared, extra = _merged(a, b)
    ssizes = tuple(a.size_of(i) for i in shared)
    ka, kb = keys([a.coords[:, _cols(a, shared)], b.coords[:, _cols(b, shared)]], ssizes)
    order = np.argsort(kb, kind="stable")
    kbs = kb[order]
    lo = np.searchsorted(kbs, ka, "left")
    hi = np.searchsorted(kbs, ka, "right")
    cnt = hi - lo
    total = int(cnt.sum())
    ia = np.repeat(np.arange(a.nnz, dtype=np.int64), cnt)
    starts = np.cumsum(cnt) - cnt
    ib = order[np.arange(total, dtype=np.int64) - np.repeat(starts - lo, cnt)]
    coords = np.concatenate([a.coords[ia], b.coords[ib][:, _cols(b, extra)]], axis=1)
    return indices, sizes, coords.astype(np.int64), ia, ib


def intersect(op: str, a: SVal, b: SVal) -> SVal:
    """`a * b`, `a / b` or `mask(a, b)` (a's values where b stores an entry)."""
    indices, sizes, coords, ia, ib = join(a, b)
    va, vb = a.vals[ia], b.vals[ib]
    with np.errstate(all="ignore"):
        if op == "*":
            vals = va * vb
        elif op == "/":
            vals = va / vb
        elif op == "mask":
            vals = va
        else:
            raise ValueError(op)
    return SVal(indices, sizes, coords, np.asarray(vals, np.float64))


def _combine(op: str, va, pa, vb, pb) -> np.ndarray:
    """Union values: an absent side counts as 0 for + and -; for max/min the present side wins."""
    with np.errstate(all="ignore"):
        if op in ("+", "-"):
            x = np.where(pa, va, 0.0)
            y = np.where(pb, vb, 0.0)
            return x + y if op == "+" else x - y
        f = np.maximum if op == "max" else np.minimum
        return np.where(pa & pb, f(va, vb), np.where(pa, va, vb))


def _lookup(big: SVal, small: SVal) -> tuple[np.ndarray, np.ndarray]:
    """For each entry of `big`, the position of `small`'s entry at the projected coordinate
    (small's indices are a subset of big's) and whether there is one."""
    idx = small.indices
    kbig, ksmall = keys([big.coords[:, _cols(big, idx)], small.coords], small.sizes)
    if small.is_full() and small.nnz:
        # every coordinate is stored, so the keys are a permutation of 0..nnz-1: invert it
        # (a bias vector added to an N x H activation: no sort, no search)
        at = np.empty(small.nnz, np.int64)
        at[ksmall] = np.arange(small.nnz, dtype=np.int64)
        return at[kbig], np.ones(big.nnz, bool)
    order = np.argsort(ksmall, kind="stable")
    ks = ksmall[order]
    pos = np.searchsorted(ks, kbig)
    found = pos < ks.shape[0]
    found[found] = ks[pos[found]] == kbig[found]
    where = np.zeros(big.nnz, np.int64)
    where[found] = order[pos[found]]
    return where, found


def union(op: str, a: SVal, b: SVal) -> SVal:
    """`a + b`, `a - b`, `max(a, b)`, `min(a, b)` with the broadcast rule."""
    sa, sb = set(a.indices), set(b.indices)
    if sa == sb:
        b = b.transpose(a.indices)
        ka, kb = keys([a.coords, b.coords], a.sizes)
        allk = np.concatenate([ka, kb])
        uniq, first, inv = unique_keys(allk)
        inv = inv.reshape(-1)
        n = uniq.shape[0]
        va, vb = np.zeros(n), np.zeros(n)
        pa, pb = np.zeros(n, bool), np.zeros(n, bool)
        va[inv[:a.nnz]] = a.vals
        pa[inv[:a.nnz]] = True
        vb[inv[a.nnz:]] = b.vals
        pb[inv[a.nnz:]] = True
        coords = np.concatenate([a.coords, b.coords], axis=0)[first]
        return SVal(a.indices, a.sizes, coords, _combine(op, va, pa, vb, pb))
    if not sa - sb or not sb - sa:
        # One side's indices are a subset: the other side alone decides the pattern.
        big_is_a = bool(sa - sb)
        big, small = (a, b) if big_is_a else (b, a)
        where, found = _lookup(big, small)
        vs = small.vals[where] if small.nnz else np.zeros(big.nnz)
        pbig = np.ones(big.nnz, bool)
        if big_is_a:
            vals = _combine(op, big.vals, pbig, vs, found)
        else:
            vals = _combine(op, vs, found, big.vals, pbig)
        return SVal(big.indices, big.sizes, big.coords, vals)
    # Both sides have indices the other lacks: both must store the coordinate.
    indices, sizes, coords, ia, ib = join(a, b)
    both = np.ones(coords.shape[0], bool)
    return SVal(indices, sizes, coords, _combine(op, a.vals[ia], both, b.vals[ib], both))


def binary(op: str, a: SVal, b: SVal) -> SVal:
    """Dispatch a binary operation: + - * / max min mask."""
    if op in ("*", "/", "mask"):
        return intersect(op, a, b)
    return union(op, a, b)


# ---- reductions ---------------------------------------------------------------------------------


def reduce(op: str, v: SVal, over) -> SVal:
    """`sum[over](v)` or `max[over](v)` over v's stored entries; stored where any entry was."""
    over = set(over)
    keep = [k for k, i in enumerate(v.indices) if i not in over]
    if len(keep) == len(v.indices):
        return v
    indices = tuple(v.indices[k] for k in keep)
    sizes = tuple(v.sizes[k] for k in keep)
    if v.nnz == 0:
        return SVal(indices, sizes, np.zeros((0, len(keep)), np.int64), np.zeros(0))
    c = v.coords[:, keep]
    (k,) = keys([c], sizes)
    uniq, first, inv = unique_keys(k)
    inv = inv.reshape(-1)
    if op == "sum":
        vals = np.bincount(inv, weights=v.vals, minlength=uniq.shape[0])
    elif op == "max":
        order = np.argsort(inv, kind="stable")
        starts = np.searchsorted(inv[order], np.arange(uniq.shape[0]))
        vals = np.maximum.reduceat(v.vals[order], starts)
    else:
        raise ValueError(op)
    return SVal(indices, sizes, c[first], np.asarray(vals, np.float64))


# ---- sums of products ---------------------------------------------------------------------------


def contract(factors: list[SVal], over) -> SVal:
    """`sum[over](f1 * f2 * ...)` by pairwise contraction.

    An index is summed out as soon as no remaining factor needs it. This is exact for patterns as
    well as values: "some entry along j" distributes over a conjunction with terms not mentioning
    j, as the sum distributes over the product. Pairs are joined smallest estimated result first.
    """
    factors = list(factors)
    over = set(over)
    while True:
        # Sum out indices that only one factor uses.
        for n, f in enumerate(factors):
            local = [i for i in f.indices if i in over
                     and not any(i in g.indices for m, g in enumerate(factors) if m != n)]
            if local:
                factors[n] = reduce("sum", f, local)
                over -= set(local)
        if len(factors) == 1:
            return reduce("sum", factors[0], over)
        p, q = _pick_pair(factors, over)
        a, b = factors[p], factors[q]
        rest = [f for n, f in enumerate(factors) if n not in (p, q)]
        done = _done_if_joined(factors, p, q, over)
        factors = [_multiply_sum(a, b, done)] + rest
        over -= done


def _union_sizes(a: SVal, b: SVal) -> tuple[tuple[str, ...], tuple[int, ...]]:
    extra = [i for i in b.indices if i not in a.indices]
    return a.indices + tuple(extra), a.sizes + tuple(b.size_of(i) for i in extra)


def _done_if_joined(factors: list[SVal], p: int, q: int, over: set[str]) -> set[str]:
    """The summed indices no factor but the p-th and q-th uses."""
    rest = [f for n, f in enumerate(factors) if n not in (p, q)]
    return {i for i in set(factors[p].indices) | set(factors[q].indices)
            if i in over and not any(i in g.indices for g in rest)}


def _pick_pair(factors: list[SVal], over: set[str]) -> tuple[int, int]:
    """The pair to join next: one sharing indices if any, smallest estimated result, ties by
    position (deterministic)."""
    best = None
    for p in range(len(factors)):
        for q in range(p + 1, len(factors)):
            a, b = factors[p], factors[q]
            shared = [i for i in a.indices if i in b.indices]
            div = 1
            for i in shared:
                div *= max(a.size_of(i), 1)
            est = a.nnz * b.nnz / div
            if a.is_full() and b.is_full():
                # A dense einsum: its cost is the result's size once `done` is summed out.
                done = _done_if_joined(factors, p, q, over)
                est = min(est, math.prod(s for i, s in zip(*_union_sizes(a, b)) if i not in done))
            key = (0 if shared or not a.indices or not b.indices else 1, est, p, q)
            if best is None or key < best:
                best = key
    return best[2], best[3]


def _multiply_sum(a: SVal, b: SVal, done: set[str]) -> SVal:
    """`sum[done](a * b)`; a matrix product on scipy/numpy when every shared index is summed."""
    shared = [i for i in a.indices if i in b.indices]
    if not done:
        return intersect("*", a, b)
    if a.is_full() and b.is_full() and set(shared) != done and a.nnz and b.nnz:
        return _dense_einsum(a, b, done)
    return _matmul(a, b, shared, done)


def _dense_einsum(a: SVal, b: SVal, done: set[str]) -> SVal:
    """sum[done](a * b) of two full operands: a dense einsum, whose result is full."""
    indices, sizes = _union_sizes(a, b)
    keep = [k for k, i in enumerate(indices) if i not in done]
    letters = {i: chr(ord("a") + k) for k, i in enumerate(indices)}
    spec = (f"{''.join(letters[i] for i in a.indices)},{''.join(letters[i] for i in b.indices)}"
            f"->{''.join(letters[indices[k]] for k in keep)}")
    with np.errstate(all="ignore"):
        vals = np.einsum(spec, a.to_dense()[0], b.to_dense()[0])
    out_sizes = tuple(sizes[k] for k in keep)
    grid = np.indices(out_sizes).reshape(len(keep), -1).T if keep else np.zeros((1, 0), np.int64)
    return SVal(tuple(indices[k] for k in keep), out_sizes, grid.astype(np.int64),
                np.asarray(vals, np.float64).reshape(-1))


def _compact(coords: np.ndarray, sizes: tuple[int, ...], full: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids 0..m-1 of the distinct rows of `coords` (in key order) and, for each id, the
    position of one row holding it. `full`: the coordinates are a full operand's projection,
    so every key of the space is present and each key is its own rank (no ranking pass over
    the millions of entries of a dense weight matrix)."""
    (k,) = keys([coords], sizes)
    if full and k.shape[0]:
        first = np.empty(int(k.max()) + 1, np.int64)
        first[k] = np.arange(k.shape[0], dtype=np.int64)   # any row of the key will do
        return k.astype(np.int64), first
    _, first, inv = unique_keys(k)
    return inv.reshape(-1).astype(np.int64), first.astype(np.int64)


def _matmul(a: SVal, b: SVal, shared: list[str], done: set[str]) -> SVal:
    """sum[done](a * b) as a matrix product: rows are a's unshared indices plus the shared ones
    not summed (batch indices), the inner dimension all shared indices, columns b's unshared
    indices (each compacted to the coordinates present); a batch index in both the row and the
    inner key makes the matrix block diagonal. Values come from the product of the value
    matrices, the pattern from the product of 0/1 matrices (positive counts never cancel), or
    directly when an operand is full."""
    import scipy.sparse as sp

    batch = [i for i in shared if i not in done]
    a_only = [i for i in a.indices if i not in shared] + batch
    b_only = [i for i in b.indices if i not in shared]
    ssizes = tuple(a.size_of(i) for i in shared)
    ra, rfirst = _compact(a.coords[:, _cols(a, a_only)], tuple(a.size_of(i) for i in a_only),
                          a.is_full())
    cb, cfirst = _compact(b.coords[:, _cols(b, b_only)], tuple(b.size_of(i) for i in b_only),
                          b.is_full())
    ka, kb = keys([a.coords[:, _cols(a, shared)], b.coords[:, _cols(b, shared)]], ssizes)
    if a.is_full() or b.is_full():
        # a full operand holds every inner key, so the union's ranks are the keys themselves
        inv = np.concatenate([ka, kb]).astype(np.int64)
    else:
        _, _, inv = unique_keys(np.concatenate([ka, kb]))
        inv = inv.reshape(-1).astype(np.int64)
    ja, jb = inv[:a.nnz], inv[a.nnz:]
    m, p = rfirst.shape[0], cfirst.shape[0]
    n = int(inv.max()) + 1 if inv.shape[0] else 0
    with np.errstate(all="ignore"):
        if (a.is_full() and not batch) or b.is_full():
            # A full operand stores every inner coordinate, so every (row, column) pair present
            # on both sides meets: the result stores all m x p of them. (With batch indices a
            # full `a` meets only the columns of its own batch: not this shortcut.)
            if a.is_full() and not batch:
                av = np.zeros((m, n))
                av[ra, ja] = a.vals
            else:
                av = sp.csr_matrix((a.vals, (ra, ja)), shape=(m, n))
            if b.is_full():
                bv = np.zeros((n, p))
                bv[jb, cb] = b.vals
            else:
                bv = sp.csr_matrix((b.vals, (jb, cb)), shape=(n, p))
            vals = av @ bv
            vals = np.asarray(vals.toarray() if sp.issparse(vals) else vals)
            rr = np.repeat(np.arange(m, dtype=np.int64), p)
            cc = np.tile(np.arange(p, dtype=np.int64), m)
            return _assemble(a, b, a_only, b_only, rfirst[rr], cfirst[cc], vals.reshape(-1))
        av = sp.csr_matrix((a.vals, (ra, ja)), shape=(m, n))
        bv = sp.csr_matrix((b.vals, (jb, cb)), shape=(n, p))
        ap = sp.csr_matrix((np.ones(a.nnz), (ra, ja)), shape=(m, n))
        bp = sp.csr_matrix((np.ones(b.nnz), (jb, cb)), shape=(n, p))
        pat = (ap @ bp).tocoo()
        val = (av @ bv).tocoo()
    rr, cc = pat.row.astype(np.int64), pat.col.astype(np.int64)
    # Values are read at the pattern's coordinates; scipy drops sums that cancel to 0.
    kp = rr * p + cc
    kv = val.row.astype(np.int64) * p + val.col.astype(np.int64)
    order = np.argsort(kp)
    vals = np.zeros(kp.shape[0])
    vals[order[np.searchsorted(kp[order], kv)]] = val.data
    return _assemble(a, b, a_only, b_only, rfirst[rr], cfirst[cc], vals)


def _assemble(a: SVal, b: SVal, a_only, b_only, pa, pb, vals) -> SVal:
    """The result entries whose a-side coordinates are those of a's entries `pa` and b-side
    coordinates those of b's entries `pb`."""
    coords = np.concatenate([a.coords[pa][:, _cols(a, a_only)],
                             b.coords[pb][:, _cols(b, b_only)]], axis=1).astype(np.int64)
    indices = tuple(a_only) + tuple(b_only)
    sizes = tuple(a.size_of(i) for i in a_only) + tuple(b.size_of(i) for i in b_only)
    return SVal(indices, sizes, coords, np.asarray(vals, np.float64))

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

import numpy as np

from .values import SVal, keys

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


# ---- joins ---------------------------------------------------------------------------------------


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
        uniq, first, inv = np.unique(allk, return_index=True, return_inverse=True)
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


# ---- reductions ------------------------------------------------------------------------------------


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
    uniq, first, inv = np.unique(k, return_index=True, return_inverse=True)
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


# ---- sums of products ----------------------------------------------------------------------------


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
        p, q = _pick_pair(factors)
        a, b = factors[p], factors[q]
        rest = [f for n, f in enumerate(factors) if n not in (p, q)]
        done = {i for i in set(a.indices) | set(b.indices)
                if i in over and not any(i in g.indices for g in rest)}
        factors = [_multiply_sum(a, b, done)] + rest
        over -= done


def _pick_pair(factors: list[SVal]) -> tuple[int, int]:
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
            key = (0 if shared or not a.indices or not b.indices else 1, est, p, q)
            if best is None or key < best:
                best = key
    return best[2], best[3]


def _multiply_sum(a: SVal, b: SVal, done: set[str]) -> SVal:
    """`sum[done](a * b)`; a matrix product on scipy/numpy when it is one."""
    shared = [i for i in a.indices if i in b.indices]
    if (len(shared) == 1 and set(shared) == done and len(a.indices) <= 2
            and len(b.indices) <= 2):
        return _matmul(a, b, shared[0])
    return reduce("sum", intersect("*", a, b), done)


def _as_matrix(v: SVal, row: str | None, col: str | None):
    """v's entries as a (values, pattern) pair of scipy CSR matrices with `row`, `col` as rows
    and columns (None: a single row/column)."""
    import scipy.sparse as sp

    n = v.nnz
    r = v.coords[:, v.indices.index(row)] if row else np.zeros(n, np.int64)
    c = v.coords[:, v.indices.index(col)] if col else np.zeros(n, np.int64)
    shape = (v.size_of(row) if row else 1, v.size_of(col) if col else 1)
    vals = sp.csr_matrix((v.vals, (r, c)), shape=shape)
    pat = sp.csr_matrix((np.ones(n), (r, c)), shape=shape)
    return vals, pat, (r, c), shape


def _matmul(a: SVal, b: SVal, j: str) -> SVal:
    """sum[j](a * b) for a over (i?, j) and b over (j, k?): values and pattern from matrix
    products (the pattern from products of 0/1 matrices, whose positive counts never cancel)."""
    i = next((x for x in a.indices if x != j), None)
    k = next((x for x in b.indices if x != j), None)
    indices = tuple(x for x in (i, k) if x)
    sizes = tuple(v.size_of(x) for v, x in ((a, i), (b, k)) if x)
    m = a.size_of(i) if i else 1
    p = b.size_of(k) if k else 1
    n = a.size_of(j)
    if a.is_full() and b.is_full():
        av, _ = a.transpose(tuple(x for x in (i, j) if x)).to_dense()
        bv, _ = b.transpose(tuple(x for x in (j, k) if x)).to_dense()
        vals = np.asarray(av.reshape(m, n) @ bv.reshape(n, p))
        stored = np.full((m, p), n > 0)
        rr, cc = np.nonzero(stored)
        return _from_rc(indices, sizes, i, k, rr, cc, vals[rr, cc])
    av, ap, (ar, ac), _ = _as_matrix(a, i, j)
    bv, bp, (br, bc), _ = _as_matrix(b, j, k)
    with np.errstate(all="ignore"):
        if b.is_full():
            dense_vals = np.asarray(av @ bv.toarray())
            rows = np.unique(ar)
            rr = np.repeat(rows, p)
            cc = np.tile(np.arange(p, dtype=np.int64), rows.shape[0])
            return _from_rc(indices, sizes, i, k, rr, cc, dense_vals[rr, cc])
        if a.is_full():
            dense_vals = np.asarray(av.toarray() @ bv)
            cols = np.unique(bc)
            rr = np.repeat(np.arange(m, dtype=np.int64), cols.shape[0])
            cc = np.tile(cols, m)
            return _from_rc(indices, sizes, i, k, rr, cc, dense_vals[rr, cc])
        pat = (ap @ bp).tocoo()
        val = (av @ bv).tocoo()
    rr, cc = pat.row.astype(np.int64), pat.col.astype(np.int64)
    # Values are read at the pattern's coordinates; scipy drops sums that cancel to 0.
    kp = rr * p + cc
    kv = val.row.astype(np.int64) * p + val.col.astype(np.int64)
    order = np.argsort(kp)
    vals = np.zeros(kp.shape[0])
    vals[order[np.searchsorted(kp[order], kv)]] = val.data
    return _from_rc(indices, sizes, i, k, rr, cc, vals)


def _from_rc(indices, sizes, i, k, rr, cc, vals) -> SVal:
    cols = [c for x, c in ((i, rr), (k, cc)) if x]
    coords = (np.stack(cols, axis=1).astype(np.int64) if cols
              else np.zeros((rr.shape[0], 0), np.int64))
    return SVal(indices, sizes, coords, np.asarray(vals, np.float64))

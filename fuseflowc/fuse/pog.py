"""The partial order graph (POG) over a region's index variables, and its linear extensions.

Nodes are index variables numbered by their canonical rank; an edge a -> b says a must be
iterated outside b. A valid global dataflow order is a linear extension of the POG. This module
counts them exactly (dynamic programming over downsets, Python ints, no floating point), lists
them in the documented enumeration (lexicographic in canonical rank: order 0 always takes the
smallest-ranked index that is free) and unranks the K-th one without visiting those before it.
Plain Python: it is on the compile path.

Counting memoizes on the set of indices still to place and splits it into weakly connected pieces:
the extensions of a disjoint union are the interleavings of the pieces, e(G) = n!/(n_1!...n_c!) *
e(C_1)...e(C_c), which keeps tree-like POGs cheap.
"""

from __future__ import annotations

from math import factorial
from typing import Iterable, Iterator, Sequence

from ..diagnostics import UserError
from ..limits import MAX_ORDER_WORK


class POG:
    """A DAG on nodes 0..n-1; `preds[v]` is the bitmask of v's direct predecessors.

    The caller checks acyclicity first (`find_cycle`); counts of a cyclic graph are 0.
    """

    def __init__(self, n: int, preds: Sequence[int]):
        self.n = n
        self.preds = tuple(preds)
        self.full = (1 << n) - 1
        adj = list(self.preds)
        for v in range(n):
            m = self.preds[v]
            while m:
                low = m & -m
                adj[low.bit_length() - 1] |= 1 << v
                m ^= low
        self.adj = tuple(adj)
        self.succs = tuple(a & ~p for a, p in zip(adj, self.preds))
        self._memo: dict[int, int] = {}

    @classmethod
    def from_edges(cls, n: int, edges: Iterable[tuple[int, int]]) -> "POG":
        """A POG on n nodes with edges (a, b): a before b."""
        preds = [0] * n
        for a, b in edges:
            preds[b] |= 1 << a
        return cls(n, preds)

    def count(self, done: int = 0) -> int:
        """The number of linear extensions of the nodes not in `done` (a downset bitmask)."""
        return self._count_set(self.full & ~done)

    def _count_set(self, mask: int) -> int:
        """Linear extensions of the sub-poset induced on `mask` (an up-set of the POG).

        Memoized on the set. A set whose induced graph falls apart into weakly connected pieces
        is counted as the interleavings of the pieces' counts; otherwise sum over its minimal
        elements. Splitting keeps forest-like POGs (chains of format edges hanging off a few
        outer indices, as fused regions produce) polynomial in practice. Depth first with an
        explicit stack (a region may have thousands of indices); a POG needing more than
        MAX_ORDER_WORK (sets times indices) is a UserError, not a run without end.
        """
        memo = self._memo
        stack = [mask]
        plans: dict[int, tuple[str, list[int]]] = {}
        while stack:
            m = stack[-1]
            if m in memo:
                stack.pop()
                continue
            plan = plans.get(m)
            if plan is None:
                plan = plans[m] = self._plan(m)
                if plan[0] == "value":
                    memo[m] = plan[1][0]
                    stack.pop()
                    continue
                todo = [c for c in plan[1] if c not in memo]
                if todo:
                    stack.extend(todo)
                    continue
            kind, parts = plan
            if kind == "split":
                total = factorial(m.bit_count())
                for c in parts:
                    total = total // factorial(c.bit_count()) * memo[c]
            else:
                total = sum(memo[c] for c in parts)
            memo[m] = total
            del plans[m]
            stack.pop()
            if len(memo) * max(self.n, 1) > MAX_ORDER_WORK:
                raise UserError(f"counting the dataflow orders of {self.n} indices needs more "
                                f"than {MAX_ORDER_WORK // max(self.n, 1):,} intermediate sets "
                                f"(their partial order is too wide); constrain it with `order` "
                                f"directives, or use order 0, which needs no count")
        return memo[mask]

    def _plan(self, mask: int) -> tuple[str, list[int]]:
        """How to count `mask`: ("value", [count]) when it is a single node or a forest,
        ("split", pieces) when it falls apart, else ("sum", the sets left after removing each
        minimal element)."""
        if mask & (mask - 1) == 0:
            return "value", [1]
        forest = self._forest(mask, self.preds)
        if forest is None:  # the reversed poset has the same number of linear extensions
            forest = self._forest(mask, self.succs)
        if forest is not None:
            return "value", [forest]
        comps = self._split(mask)
        if len(comps) > 1:
            return "split", comps
        rest = []
        m = mask
        while m:
            low = m & -m
            v = low.bit_length() - 1
            m ^= low
            if not self.preds[v] & mask:
                rest.append(mask ^ low)
        return "sum", rest

    def _forest(self, mask: int, preds: Sequence[int]) -> int | None:
        """The count by the hook length formula when every node of `mask` has at most one
        parent inside it (`preds`: predecessors, or successors for the reversed poset, which
        has as many linear extensions): |S|! / prod over nodes of their subtree sizes.
        None when the set is not such a forest."""
        parent: dict[int, int] = {}
        m = mask
        while m:
            low = m & -m
            v = low.bit_length() - 1
            m ^= low
            p = preds[v] & mask
            if p & (p - 1):
                return None
            if p:
                parent[v] = p.bit_length() - 1
        size = dict.fromkeys(_bits(mask), 1)
        order = _topological(mask, parent)
        for v in reversed(order):
            if v in parent:
                size[parent[v]] += size[v]
        denominator = 1
        for v in size:
            denominator *= size[v]
        return factorial(mask.bit_count()) // denominator

    def _split(self, mask: int) -> list[int]:
        """Weakly connected components (bitmasks) of the subgraph induced on `mask`."""
        adj = self.adj
        comps = []
        left = mask
        while left:
            low = left & -left
            comp = low
            frontier = low
            while frontier:
                f = frontier & -frontier
                frontier ^= f
                new = adj[f.bit_length() - 1] & mask & ~comp
                comp |= new
                frontier |= new
            comps.append(comp)
            left &= ~comp
        return comps

    def available(self, done: int) -> Iterator[int]:
        """Nodes not in `done` whose predecessors are all in `done`, by increasing rank."""
        for v in range(self.n):
            if not done >> v & 1 and not self.preds[v] & ~done:
                yield v

    def orders(self, limit: int | None = None) -> Iterator[tuple[int, ...]]:
        """Linear extensions in lexicographic order of ranks (at most `limit` of them)."""
        if limit is not None and limit <= 0:
            return
        if self.n == 0:
            yield ()
            return
        produced = 0
        prefix: list[int] = []
        stack = [self.available(0)]  # per placed prefix, the candidates for the next index
        done = 0
        while stack:
            v = next(stack[-1], None)
            if v is None:  # every candidate tried: take back the last placed index
                stack.pop()
                if prefix:
                    done &= ~(1 << prefix.pop())
                continue
            prefix.append(v)
            done |= 1 << v
            if done == self.full:
                yield tuple(prefix)
                produced += 1
                if limit is not None and produced >= limit:
                    return
                done &= ~(1 << prefix.pop())
                continue
            stack.append(self.available(done))

    def unrank(self, k: int) -> tuple[int, ...]:
        """The k-th (0-based) linear extension of the enumeration of `orders`."""
        if k == 0:  # the smallest free index at every step: no counting needed
            done, out = 0, []
            while done != self.full:
                v = next(self.available(done))
                out.append(v)
                done |= 1 << v
            return tuple(out)
        if not 0 <= k < self.count():
            raise IndexError(k)
        done = 0
        out: list[int] = []
        while done != self.full:
            for v in self.available(done):
                c = self.count(done | 1 << v)
                if k < c:
                    out.append(v)
                    done |= 1 << v
                    break
                k -= c
        return tuple(out)

    def rank(self, order: Sequence[int]) -> int:
        """The position of linear extension `order` in the enumeration (inverse of unrank)."""
        done = 0
        k = 0
        for v in order:
            for w in self.available(done):
                if w == v:
                    break
                k += self.count(done | 1 << w)
            else:
                raise ValueError("not a linear extension")
            done |= 1 << v
        return k


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _topological(mask: int, parent: dict[int, int]) -> list[int]:
    """Nodes of a forest given by `parent`, every parent before its children."""
    children: dict[int, list[int]] = {}
    roots = []
    for v in _bits(mask):
        if v in parent:
            children.setdefault(parent[v], []).append(v)
        else:
            roots.append(v)
    order = []
    stack = roots
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(children.get(v, ()))
    return order


def is_linear_extension(n: int, edges: Iterable[tuple[int, int]], order: Sequence[int]) -> bool:
    """Whether `order` is a permutation of 0..n-1 putting a before b for every edge (a, b)."""
    if sorted(order) != list(range(n)):
        return False
    pos = {v: p for p, v in enumerate(order)}
    return all(pos[a] < pos[b] for a, b in edges)


def find_cycle(n: int, edges: Iterable[tuple[int, int]]) -> list[int] | None:
    """A directed cycle as a node list [v0, v1, ..., vk] (edges v0->v1 ... vk->v0), or None.

    Deterministic: depth-first from the lowest node, successors by increasing number, so the
    cycle reported is the same on every run.
    """
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in sorted(set(edges)):
        succ[a].append(b)
    color = [0] * n  # 0 new, 1 on the stack, 2 finished
    for root in range(n):
        if color[root]:
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        path: list[int] = [root]
        color[root] = 1
        while stack:
            v, i = stack[-1]
            if i < len(succ[v]):
                stack[-1] = (v, i + 1)
                w = succ[v][i]
                if color[w] == 1:
                    return path[path.index(w):]
                if color[w] == 0:
                    color[w] = 1
                    stack.append((w, 0))
                    path.append(w)
            else:
                color[v] = 2
                stack.pop()
                path.pop()
    return None

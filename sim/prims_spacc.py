"""The sparse accumulator of order n >= 2 over n inner levels (SAMML `spacc3` is order 3; the
algorithm is written for any n, and at n = 2 it is `spacc2`, which tests/sim check it against).

Ports: crd(n-1), ..., crd0, val in and out (outermost level first). The coordinates of the n-1
outer levels are held in registers loaded without a firing of their own (sim/README.md,
"Timing"), as spacc2 holds its one: one point per cycle. A stop S(l) seen at depth d (the
stream of the register to load next, or crd0 when all are held) closes that fiber and l more:
the deeper streams hold S(l + their distance), each shallower stream whose fiber closes holds
its stop too; all are taken in one firing. When the stop reaches the reduced index (level >= n
in crd0) the accumulated points are flushed sorted, one token per output per firing."""

from __future__ import annotations

from collections import deque

from .node import WAITING
from .ops import REDUCE_BLOCK, REDUCE_SCALAR, labelled_reduce
from .prims_compute import _Queued
from .tokens import S0, D, N, empt, is_element, level, same_stop, stop


def serialize(tree: dict, n: int, k: int, e: int, q: list) -> None:
    """Append the SAM streams of the accumulated `tree` (n nested dicts, leaves are values) to
    the queues `q` (crd(n-1), ..., crd0, val), closed by the flush stop: crd(n-1) ends with
    S(k-n), crd(n-1-m) with S(k-n+m), val as crd0. `e` is the emptiness of the stop that
    flushed (an empty tree gives bare stops: emptiness max(e-n, 0) + m at depth m). An outer
    coordinate with an empty subtree (`emit_empty`) has an empty fiber at the next depth m: its
    S0 there, and in the deeper streams bare stops S(d-m) of emptiness d-m at depth d."""
    def close(m: int, empty: bool) -> None:
        # a fiber at depth m ended: S0 there (and in val at crd0's depth); the deeper streams'
        # last stops go one up (keeping their emptiness), or, the fiber empty, get bare stops
        for j in range(m, n + 1):
            d = min(j, n - 1)
            if d == m:
                q[j].append(S0)
            elif empty:
                q[j].append(stop(d - m, d - m))
            else:
                q[j][-1] = stop(level(q[j][-1]) + 1, empt(q[j][-1]))

    def emit(node: dict, m: int) -> None:
        for c in sorted(node):
            q[m].append(c)
            if m == n - 1:
                q[n].append(node[c])
            else:
                emit(node[c], m + 1)
                close(m + 1, not node[c])

    e_top = max(e - n, 0)
    if tree:
        emit(tree, 0)
        q[0].append(stop(k - n, e_top))
        for j in range(1, n + 1):
            q[j][-1] = stop(k - n + min(j, n - 1), empt(q[j][-1]))
    else:
        for j in range(n + 1):
            m = min(j, n - 1)
            q[j].append(stop(k - n + m, e_top + m))


class SpaccN(_Queued):
    """Order-n sparse accumulator (n >= 2): (crd(n-1), ..., crd0, val) in and out."""

    __slots__ = ("n", "fn", "acc", "cur", "fl", "pre", "ready", "emit_empty")
    kind_name = "spaccn"
    ORDER = 0

    def __init__(self, name: str, op: str = "sum", block: int | None = None,
                 ii: int = 1, lat: int = 1, labels=None, order: int | None = None,
                 emit_empty: bool = False):
        super().__init__(name, ii, lat)
        self.emit_empty = emit_empty   # every outer coordinate received is emitted
        self.n = order or self.ORDER
        if self.n < 2:
            raise ValueError("SpaccN needs order >= 2 (spacc1 is order 1)")
        self.fn = (REDUCE_BLOCK if block else REDUCE_SCALAR)[op]
        self.acc: dict = {}
        self.cur: list = []     # the held coordinates, outermost first (at most n-1)
        self.ready = 0          # the cycle the last register was taken
        self.q = [deque() for _ in range(self.n + 1)]
        self.fl = block * block if block else 1
        self.pre = None
        if block and labels is not None:
            self.pre, _, self.fl = labelled_reduce(op, *labels, block)

    def consume(self):
        n = self.n
        ins = self.ins
        c_in, v_in = ins[n - 1], ins[n]
        if not c_in.toks or not v_in.toks:
            return WAITING
        d = len(self.cur)
        if d < n - 1:
            src = ins[d]
            if not src.toks:
                return WAITING
            c = src.toks[0]
            if is_element(c):               # the next outer coordinate: into its register
                self.cur.append(c)
                if self.emit_empty and N not in self.cur:
                    node = self.acc              # emitted even if nothing is accumulated
                    for x in self.cur:
                        node = node.setdefault(x, {})
                self.ready = self.take(src, (c_in, v_in), self.ready)
                return None
            return self._stop(d, c)
        c, v = c_in.toks[0], v_in.toks[0]
        if c >= 0:
            if v.__class__ is not int and N not in self.cur:
                self._add(c, v)
            self.fire((c_in, v_in), after=self.ready)
            return None
        if c == N:
            self.fire((c_in, v_in), after=self.ready)
            return None
        if not same_stop(c, v) or c == D:
            raise self.mismatch("crd0 and val streams", (c, v))
        return self._stop(d, c)

    def _add(self, c: int, v) -> None:
        if self.pre is not None:
            v = self.pre(v)
        node = self.acc
        for x in self.cur:
            node = node.setdefault(x, {})
        old = node.get(c)
        node[c] = v if old is None else self.fn(old, v)
        self.flops += self.fl

    def _stop(self, d: int, t: int):
        """A stop (or D) at the head of the depth-d stream with d registers held."""
        n = self.n
        ins = self.ins
        pops = []
        for j in range(n + 1):
            m = min(j, n - 1)               # val lines up with crd0
            if m >= d:
                want = D if t == D else stop(level(t) + m - d)
            elif t != D and level(t) >= d - m:
                want = stop(level(t) - (d - m))
            else:
                continue
            if not ins[j].toks:
                return WAITING
            h = ins[j].toks[0]
            if not same_stop(h, want) or (t == D and d):
                raise self.mismatch(f"the streams of depth {m} and {d} (of {n})",
                                    (h, t))
            pops.append(ins[j])
        e = empt(ins[n - 1].toks[0])           # the flush's emptiness is crd0's stop's
        self.fire(pops, after=self.ready)
        if t == D:
            for qi in self.q:
                qi.append(D)
            return None
        del self.cur[max(d - level(t) - 1, 0):]
        k = level(t) + n - 1 - d                # the stop level it is in crd0
        if k >= n:
            serialize(self.acc, n, k, e, self.q)
            self.acc.clear()
        return None


class Spacc3(SpaccN):
    """SAMML `spacc3`: the order-3 sparse accumulator (crd2, crd1, crd0, val)."""

    __slots__ = ()
    kind_name = "spacc3"
    ORDER = 3

"""MPSkipEnum (SystemML, Boehm et al., VLDB 2018, Alg. 2): enumerate the 2^m assignments of a
partition's interesting points with cost-based skipping.

An assignment q is a tuple of m booleans, True = materialize the point. The space is
linearized from negative to positive: assignment j sets point k to bit (m - 1 - k) of j, so
j = 0 is "fuse everything" (a good first upper bound), and the assignments that agree with q up
to its last True point x and differ only after it are the 2^(m-x-1) consecutive ones starting
at q. If q's lower bound already reaches the best cost found, all of them are skipped: the lower
bound only grows when a point is set to True (each materialized intermediate is written at
least once), so none of them can be better. Invalid assignments (a materialized edge whose ends
another path fuses, regions depending on each other in a cycle) are counted and passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class EnumStats:
    """What the enumeration did: `space` = 2^m, `costed`, `skipped` (by the lower bound),
    `invalid` (assignments that are no plan), `unvisited` (not reached: the search was cut
    by its budget), `cut` (the budget ran out during this search)."""

    space: int = 0
    costed: int = 0
    skipped: int = 0
    invalid: int = 0
    unvisited: int = 0
    cut: bool = False

    def __add__(self, o: "EnumStats") -> "EnumStats":
        return EnumStats(self.space + o.space, self.costed + o.costed, self.skipped + o.skipped,
                         self.invalid + o.invalid, self.unvisited + o.unvisited,
                         self.cut or o.cut)

    def to_json(self) -> dict:
        return {"space": self.space, "costed": self.costed, "skipped": self.skipped,
                "invalid": self.invalid, "unvisited": self.unvisited, "cut": self.cut}


def assignment(m: int, j: int) -> tuple[bool, ...]:
    """The j-th assignment of m points (point 0 is the most significant bit)."""
    return tuple(bool(j >> (m - 1 - k) & 1) for k in range(m))


def skip_enum(m: int, cost: Callable[[tuple[bool, ...]], float | None],
              lower_bound: Callable[[tuple[bool, ...]], float],
              on_costed: Callable[[tuple[bool, ...], float], None] | None = None,
              stop: Callable[[], bool] | None = None
              ) -> tuple[tuple[bool, ...] | None, float, EnumStats]:
    """(best assignment, its cost, statistics). Costs are numbers or tuples (compared
    lexicographically: the objective, then tie-breakers). `cost(q)` is None for an invalid assignment;
    `lower_bound(q)` must not exceed the cost of q nor of any assignment that adds True points
    after q's last one. Ties keep the first assignment found (deterministic). Anytime: once
    `stop()` is true (checked before each assignment and after one that costs None) the
    enumeration ends with the best found so far, the rest counted as `unvisited`."""
    stats = EnumStats(space=1 << m)
    best, best_cost = None, None
    j = 0
    while j < 1 << m:
        if stop is not None and stop():
            stats.unvisited, stats.cut = (1 << m) - j, True
            break
        q = assignment(m, j)
        if best is not None and lower_bound(q) >= best_cost:
            last = max((k for k in range(m) if q[k]), default=-1)
            n = 1 << (m - last - 1)
            stats.skipped += n
            j += n
            continue
        c = cost(q)
        if c is None and stop is not None and stop():
            continue  # no plan only because the budget ran out: counted as unvisited
        j += 1
        if c is None:
            stats.invalid += 1
            continue
        stats.costed += 1
        if on_costed is not None:
            on_costed(q, c)
        if best is None or c < best_cost:
            best, best_cost = q, c
    return best, best_cost, stats


def brute_force(m: int, cost: Callable[[tuple[bool, ...]], float | None]
                ) -> tuple[tuple[bool, ...] | None, float, int]:
    """(best assignment, its cost, valid plans): every assignment costed (for tests)."""
    best, best_cost, valid = None, None, 0
    for j in range(1 << m):
        q = assignment(m, j)
        c = cost(q)
        if c is None:
            continue
        valid += 1
        if best is None or c < best_cost:
            best, best_cost = q, c
    return best, best_cost, valid

"""Shrinking a failing case to a small reproducer that fails the same way (same key).

Delta debugging (Zeller's ddmin, complements only): first over the case's option groups, then
over its files (every file the failure does not need goes), then inside each remaining text
file (and stdin) over lines, then tokens, then characters. Binary files (.npy, .npz) are kept
whole. Every trial is a real run, so the search stops at a budget of trials and seconds.
"""

from __future__ import annotations

import copy
import re
import time
from typing import Callable, Sequence, TypeVar

from .cases import Case

T = TypeVar("T")
TOKEN_RE = re.compile(rb"\s+|[A-Za-z_][A-Za-z_0-9.]*|\d+|.", re.S)


class Budget:
    """A limit on trials and wall time."""

    def __init__(self, trials: int, seconds: float):
        self.trials = trials
        self.end = time.monotonic() + seconds
        self.used = 0

    def take(self) -> bool:
        if self.used >= self.trials or time.monotonic() >= self.end:
            return False
        self.used += 1
        return True


def ddmin(items: Sequence[T], test: Callable[[list[T]], bool], budget: Budget) -> list[T]:
    """A smaller list for which `test` still holds (`test(items)` is assumed true): remove
    chunks (halves, then quarters, ...) while the rest still fails."""
    items = list(items)
    if items and budget.take() and test([]):
        return []
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        for start in range(0, len(items), size):
            rest = items[:start] + items[start + size:]
            if not budget.take():
                return items
            if test(rest):
                items = rest
                n = max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(len(items), 2 * n)
    if len(items) == 1 and budget.take() and test([]):
        return []
    return items


def _split(data: bytes, level: str) -> list[bytes]:
    if level == "lines":
        return data.splitlines(keepends=True)
    if level == "tokens":
        return TOKEN_RE.findall(data)
    return [data[i:i + 1] for i in range(len(data))]


#: Largest file (bytes) shrunk at each level: characters cost a trial per chunk.
LEVEL_LIMITS = {"lines": 1 << 30, "tokens": 200_000, "chars": 4000}


def _is_text(path: str, data: bytes) -> bool:
    return not path.endswith((".npy", ".npz")) and b"\x93NUMPY" not in data[:16]


def minimize(case: Case, fails: Callable[[Case], bool], budget: Budget) -> Case:
    """The smallest case found for which `fails(case)` holds (the original if none)."""
    best = copy.deepcopy(case)

    def with_(**changes) -> Case:
        c = copy.deepcopy(best)
        for k, v in changes.items():
            setattr(c, k, v)
        return c

    best.args = ddmin(best.args, lambda a: fails(with_(args=a)), budget)
    keys = ddmin(sorted(best.files), lambda ks: fails(with_(files={k: best.files[k]
                                                                  for k in ks})), budget)
    best.files = {k: best.files[k] for k in keys}
    # the files that were mutated first (most likely to matter), then the largest
    order = sorted((k for k, v in best.files.items() if isinstance(v, bytes)
                    and _is_text(k, v)),
                   key=lambda k: (not any(n.startswith(k + ":") for n in case.notes),
                                  -len(best.files[k]), k))
    for level in ("lines", "tokens", "chars"):
        for k in order:
            data = best.files[k]
            if len(data) > LEVEL_LIMITS[level]:
                continue
            parts = ddmin(_split(data, level),
                          lambda ps, k=k: fails(with_(files={**best.files, k: b"".join(ps)})),
                          budget)
            best.files[k] = b"".join(parts)
        if best.stdin and len(best.stdin) <= LEVEL_LIMITS[level]:
            parts = ddmin(_split(best.stdin, level),
                          lambda ps: fails(with_(stdin=b"".join(ps))), budget)
            best.stdin = b"".join(parts)
    return best

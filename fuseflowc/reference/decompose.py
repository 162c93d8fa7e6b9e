"""The reference evaluator's own format decomposition (docs/language.md, "Format
decomposition"): the split of a decomposed matrix into its parts, written independently of the
simulator's (fuseflowc.data.decompose) with plain Python dictionaries, so that the two check
each other; and the part-by-part evaluation of a statement that reads a decomposed matrix.

A statement linear in A (the checker makes sure it is) computes f(A) = f(P0) + f(P1) + ...,
each f(Pk) with Pk's stored entries (a blocked part: every element of its blocks, zeros
included) and the sum a union, as `+` is in the language.
"""

from __future__ import annotations

import numpy as np

from ..data.fibertree import FiberTensor, check_storage
from ..diagnostics import UserError
from ..lang import ast


def split_parts(t: FiberTensor, d: ast.Decompose) -> list[FiberTensor]:
    """The parts of input matrix `t` under directive `d`, in its order."""
    coords, vals = t.element_coo()
    left = [(int(r), int(c), float(v))
            for (r, c), v in zip(np.asarray(coords).reshape(-1, 2), np.asarray(vals))]
    m, n = t.shape
    out: list[FiberTensor] = []
    for p in d.parts[:-1]:
        b = p.block
        if m % b or n % b:
            raise UserError(f"decompose {d.tensor}: block size {b} does not divide the shape "
                            f"({m}, {n}) of {d.tensor}", d.loc)
        count: dict[tuple[int, int], int] = {}
        for r, c, _ in left:
            count[(r // b, c // b)] = count.get((r // b, c // b), 0) + 1
        taken = {k for k, x in count.items() if x >= p.threshold * b * b}
        check_storage(d.tensor, (m, n), p.format, len(taken), b)   # before allocating blocks
        blocks = {k: np.zeros((b, b)) for k in taken}
        rest = []
        for r, c, v in left:
            k = (r // b, c // b)
            if k in taken:
                blocks[k][r % b, c % b] = v
            else:
                rest.append((r, c, v))
        left = rest
        keys = sorted(blocks)
        out.append(FiberTensor.from_coo(
            (m, n), np.array(keys, dtype=np.int64).reshape(-1, 2),
            np.array([blocks[k] for k in keys]).reshape(-1, b, b), p.format, b, d.tensor))
    rc = np.array([(r, c) for r, c, _ in left], dtype=np.int64).reshape(-1, 2)
    out.append(FiberTensor.from_coo((m, n), rc, np.array([v for _, _, v in left]),
                                    d.parts[-1].format, None, d.tensor))
    return out


def reads(e: ast.Expr, tensor: str) -> bool:
    """Whether expression `e` reads `tensor`."""
    return any(isinstance(x, ast.Access) and x.tensor == tensor for x in e.walk())

"""Which fused intermediates must be materialized to be "seen as declared".

The language stores an assigned tensor in its declared format: a dense level (after the last
compressed one) widens its pattern to every coordinate, with explicit zeros. Fused away, the
intermediate's stream carries only its computed pattern. The two agree on every value of the
program unless some use distinguishes an absent entry from a stored 0: a non-zero-preserving
function, a union in which the intermediate's side is required (it owns indices the other side
lacks), max/min, a max reduction, a quotient (unless divided by a non-zero constant: 0 / 0
is NaN), a mask pattern. Such an intermediate is written
to memory and read back (its region is split) rather than fused.

An analysis of the program IR: `fuse` decides materialization with it (`must_materialize`) and
lowering (`lower.adapt_fused`) decides which inlined intermediates to widen in the stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ops import ZERO_PRESERVING
from . import ast


def widens(decl: ast.TensorDecl) -> bool:
    """Whether the declared format stores coordinates beyond the computed pattern (a dense
    level after the last compressed one, or an all-dense format)."""
    levels = decl.format.levels
    last = max((k for k, lv in enumerate(levels) if lv != "dense"), default=-1)
    return last < len(levels) - 1


def path_safe(e: ast.Expr, tensor: str, free: frozenset,
              source: "Reduction | None" = None) -> bool | None:
    """Within e: None if `tensor` is not used or its stored zeros are never seen; else whether
    every use is insensitive to stored zeros replacing absent entries. `source`: the tensor's
    definition when it reduces an access (`reduction_of`), whose pattern then covers the rows
    of that access (a use beside it reads the tensor only where it was computed)."""
    if isinstance(e, ast.Access):
        return True if e.tensor == tensor else None
    if isinstance(e, ast.Const):
        return None
    kids = e.children()
    results = [path_safe(c, tensor, free, source) for c in kids]
    if isinstance(e, ast.Binary):
        results = [None if r is not None and _unseen(e.op, kids[k], kids[1 - k], r, tensor,
                                                     source) else r
                   for k, r in enumerate(results)]
    if all(r is None for r in results):
        return None
    if any(r is False for r in results):
        return False
    if isinstance(e, ast.Call):
        if e.func in ZERO_PRESERVING:
            return True
        if e.func == "mask":
            return results[1] is None
        return False  # exp, sigmoid, rsqrt, max, min
    if isinstance(e, ast.Reduce):
        return e.op == "sum"
    assert isinstance(e, ast.Binary)
    if e.op == "*":
        return True
    if e.op == "/":
        # 0 / d is NaN where d is 0 or NaN, an absent numerator gives no entry: only a
        # non-zero constant divisor cannot tell them apart.
        return results[1] is None and _nonzero_const(kids[1])
    # + and -: the side using the tensor must not own indices the other lacks.
    for k, r in enumerate(results):
        if r is not None:
            mine = set(ast.indices_of(kids[k]))
            other = set(ast.indices_of(kids[1 - k]))
            if mine - other:
                return False
    return True


@dataclass(frozen=True)
class Reduction:
    """A tensor defined as `T[lhs] = red[...](B[body])` (up to unary functions and constant
    operands, which keep a pattern): T stores a computed entry at every projection of B's."""

    lhs: tuple[str, ...]
    body: ast.Access


def reduction_of(lhs: tuple[str, ...], expr: ast.Expr) -> Reduction | None:
    """The definition `lhs = expr` as a Reduction, or None if it is not one."""
    e = _strip(expr)
    if not isinstance(e, ast.Reduce) or e.op not in ("sum", "max"):
        return None
    body = _strip(e.body)
    if not isinstance(body, ast.Access) or not set(lhs) <= set(body.indices) \
            or len(set(lhs)) != len(lhs):
        return None
    return Reduction(tuple(lhs), body)


def _strip(e: ast.Expr) -> ast.Expr:
    """e without the unary functions and constant operands around it (they keep its pattern:
    a constant is stored everywhere and creates no coordinate)."""
    while True:
        if isinstance(e, ast.Call) and len(e.args) == 1:
            e = e.args[0]
        elif isinstance(e, ast.Binary) and isinstance(e.rhs, ast.Const):
            e = e.lhs
        elif isinstance(e, ast.Binary) and isinstance(e.lhs, ast.Const):
            e = e.rhs
        else:
            return e


def _unseen(op: str, side: ast.Expr, other: ast.Expr, r: bool, tensor: str,
            source: "Reduction | None") -> bool:
    """Whether a binary operation's `side` (which uses the tensor, `r` as path_safe says)
    never shows the tensor's stored zeros: it is read only where the tensor was computed
    (`_covered`), or it is a broadcast side of a union (`+ -`: it lacks an index of the other,
    so it creates no coordinate, `S[i,j] - m[i]` has S's pattern) whose added entries are 0,
    as an absent side counts."""
    if source is not None and _covered(side, other, tensor, source):
        return True
    mine, theirs = set(ast.indices_of(side)), set(ast.indices_of(other))
    return op in "+-" and r is True and mine < theirs


def _covered(side: ast.Expr, other: ast.Expr, tensor: str, source: Reduction) -> bool:
    """Whether `side`, the tensor's access up to pattern-keeping wrappers, is read only where
    the tensor was computed: `other` is an intersection with a factor B[b] that is an instance
    of the reduced access B[a] under the binding of source.lhs to the side's indices, and the
    side has an index fewer than the other (a union side then creates no coordinate)."""
    t = _strip(side)
    if not isinstance(t, ast.Access) or t.tensor != tensor or len(t.indices) != len(source.lhs):
        return False
    if not set(t.indices) < set(ast.indices_of(other)):
        return False
    bind = dict(zip(source.lhs, t.indices))
    if len(set(bind.values())) != len(bind):
        return False
    return any(_instance(f, source.body, bind) for f in _factors(other))


def _factors(e: ast.Expr):
    """The accesses whose patterns contain e's (an intersection's factors, through
    pattern-keeping wrappers)."""
    e = _strip(e)
    if isinstance(e, ast.Access):
        yield e
    elif isinstance(e, ast.Binary) and e.op in "*/":
        yield from _factors(e.lhs)
        yield from _factors(e.rhs)
    elif isinstance(e, ast.Call) and e.func == "mask":
        yield from _factors(e.args[0])
        yield from _factors(e.args[1])


def _instance(b: ast.Access, a: ast.Access, bind: dict[str, str]) -> bool:
    """Whether access b is a (the reduced body) under a substitution extending `bind`."""
    if b.tensor != a.tensor or len(b.indices) != len(a.indices) or b.lists or a.lists:
        return False
    phi = dict(bind)
    for x, y in zip(a.indices, b.indices):
        if phi.setdefault(x, y) != y:
            return False
    return True


def _nonzero_const(e: ast.Expr) -> bool:
    return isinstance(e, ast.Const) and e.value != 0


def must_materialize(program: ast.Program, group: list[str]) -> set[str]:
    """The statements of `group` (a fusion region) whose results must be stored and read back:
    a widening intermediate some chain of its safe uses inside the group reaches an unsafe use
    from (or a stored, not dense, result). Linear in the group's reads: each statement's
    verdict is found once (a search per path was exponential in an unrolled RNN's layers)."""
    out: set[str] = set()
    members = set(group)
    outputs = set(program.outputs)
    readers = program.readers()
    pos = program.positions()
    # the group's statements in program order (not a pass over the whole program per group:
    # quadratic in the statements of an unrolled loop)
    inside = [program.statement(n) for n in sorted(members & pos.keys(), key=pos.__getitem__)]
    uses: dict[str, list[ast.Assignment]] = {}   # tensor -> the group's statements reading it
    for s in inside:
        for t in dict.fromkeys(a.tensor for a in s.expr.walk() if isinstance(a, ast.Access)):
            uses.setdefault(t, []).append(s)

    defs: dict[str, Reduction | None] = {}

    def source(t: str) -> Reduction | None:
        """t's definition when it reduces an access (`reduction_of`), found once."""
        if t not in defs:
            d = program.statement(t)
            defs[t] = reduction_of(d.lhs.indices, d.expr)
        return defs[t]

    verdict: dict[str, bool] = {}

    def unsafe(t: str) -> bool:
        """Without cycles a chain never meets itself: each tensor's answer is one (iterative
        depth-first, so long chains do not recurse)."""
        stack = [(t, iter(uses.get(t, ())))]
        on_path = {t}
        while stack:
            name, it = stack[-1]
            s = next(it, None)
            if s is None:
                stack.pop()
                on_path.discard(name)
                verdict.setdefault(name, False)
                continue
            if s.name in on_path:
                raise _Cyclic
            hit = _use(program, s, name, source(name), outputs, readers, members)
            if hit is None:
                if s.name not in verdict:
                    on_path.add(s.name)
                    stack.append((s.name, iter(uses.get(s.name, ()))))
                    continue
                hit = verdict[s.name]
            if hit:
                for n, _ in stack:   # every tensor on the path reaches this unsafe use
                    verdict[n] = True
                return True
        return verdict[t]

    try:
        for name in group:
            if widens(program.tensor(name)) and unsafe(name):
                out.add(name)
        return out
    except _Cyclic:
        return _must_materialize_paths(program, group, inside, outputs, readers, members)


def _use(program: ast.Program, s: ast.Assignment, t: str, source: Reduction | None,
         outputs: set[str], readers: dict, members: set[str]) -> bool | None:
    """The verdict on statement s's use of t, the one rule both searches apply: unsafe (True),
    safe with s's result to follow (None), or safe and harmless (False)."""
    r = path_safe(s.expr, t, frozenset(), source)
    if r is None:        # its stored zeros are never seen there (path_safe)
        return False
    if r is False:
        return True
    # The values agree, but the consumer's computed pattern may grow (stored zeros); written
    # (a program output, or read outside the group) in a format with compressed levels, that
    # shows.
    written = s.name in outputs or any(x not in members for x in readers.get(s.name, ()))
    return True if written and not program.tensor(s.name).format.is_dense else None


class _Cyclic(Exception):
    """A statement of the group reads itself through the group: the per-path search decides."""


def _must_materialize_paths(program, group, inside, outputs, readers, members) -> set[str]:
    """must_materialize by a search per path (exponential in the worst case; only for a group
    whose reads form a cycle, which the per-tensor answers cannot handle)."""
    out: set[str] = set()

    def unsafe(t: str, seen: frozenset) -> bool:
        d = program.statement(t)
        source = reduction_of(d.lhs.indices, d.expr)
        for s in inside:
            if s.name in seen:
                continue
            hit = _use(program, s, t, source, outputs, readers, members)
            if hit or (hit is None and unsafe(s.name, seen | {s.name})):
                return True
        return False

    for name in group:
        if widens(program.tensor(name)) and unsafe(name, frozenset({name})):
            out.add(name)
    return out

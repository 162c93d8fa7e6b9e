"""Region signatures for the schedule warehouse (PluS's loop-skeleton identifiers).

The signature of a region (a statement, or statements fused together) is its computation with
every name abstracted: each written statement's right side with the region's intermediates
inlined at their uses (as fuse inlines them), operators and functions as written, every
tensor access as its format and canonical tensor id (t0, t1, ... by first appearance: the same
tensor read twice keeps one id), inlined intermediates with their declared format, and index
variables renamed i0, i1, ... by first appearance (left sides first). Operands of commutative
operators (+, *, max, min) are sorted by their name-free text, then by their text under the
names fixed so far, so `B[k,j] * A[i,k]` and `A[i,k] * B[k,j]` read the same. Two regions
match when their signatures are equal: the same computation up to renaming indices and
tensors and reordering statements or commutative operands. (Operands equal in both keys, a
fully symmetric product, keep the order written.)

`Signature.local` maps each statement's own index names to canonical ones, so that a
schedule stored in canonical names (a global order, a parallelized index) can be turned into
the program's directives and back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang import ast
from ..lang.printer import format_number

COMMUTATIVE = {"+", "*"}
COMMUTATIVE_CALLS = {"max", "min"}


@dataclass
class Signature:
    text: str
    local: dict[str, dict[str, str]] = field(default_factory=dict)  # stmt -> local -> canonical
    tensors: dict[str, str] = field(default_factory=dict)  # canonical id -> program tensor
    roots: tuple[str, ...] = ()

    @property
    def indices(self) -> list[str]:
        names = {c for m in self.local.values() for c in m.values()}
        return sorted(names, key=lambda n: int(n[1:]))


# Tree nodes: ("acc", tensor, fmt, idx), ("def", stmt, fmt, idx, body, binding),
# ("bin", op, a, b), ("call", f, args), ("red", op, idx, body), ("const", v).
# Index tokens are unique strings; `binding` maps the statement's locals to tokens.

#: The most tree nodes a signature expands to: inlining an intermediate at every use is
#: exponential in the nesting of multi-use intermediates (GPT-3's layer norm reads xc2 twice,
#: through var2 and xn2, each read twice again...); such a region has no signature.
MAX_NODES = 4000


class TooLarge(Exception):
    """The region's inlined computation exceeds MAX_NODES."""


class _Builder:
    def __init__(self, program: ast.Program, stmts: tuple[str, ...]):
        self.p = program
        self.inside = set(stmts)
        self.n = 0
        self.nodes = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%{self.n}"

    def expand(self, stmt: str, binding: dict[str, str]):
        s = self.p.statement(stmt)
        scope = dict(binding)

        def go(e: ast.Expr, scope: dict[str, str]):
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise TooLarge()
            if isinstance(e, ast.Access):
                idx = tuple(scope[i] for i in e.indices)
                if e.tensor in self.inside:
                    prod = self.p.statement(e.tensor)
                    b = dict(zip(prod.lhs.indices, idx))
                    body = self.expand(e.tensor, b)
                    return ("def", e.tensor, self.p.tensor(e.tensor).format.name(), idx,
                            body[0], body[1])
                return ("acc", e.tensor, self.p.tensor(e.tensor).format.name(), idx)
            if isinstance(e, ast.Const):
                return ("const", format_number(e.value))
            if isinstance(e, ast.Binary):
                return ("bin", e.op, go(e.lhs, scope), go(e.rhs, scope))
            if isinstance(e, ast.Call):
                return ("call", e.func, tuple(go(a, scope) for a in e.args))
            if isinstance(e, ast.Reduce):
                inner = dict(scope)
                toks = []
                for r in e.indices:
                    inner[r] = self.fresh()
                    toks.append(inner[r])
                    binding.setdefault(r, inner[r])
                return ("red", e.op, tuple(toks), go(e.body, inner))
            raise TypeError(e)

        body = go(s.expr if s.expr is not None else s.rhs, scope)
        return body, binding


class _Printer:
    """Prints trees with canonical names, fixed as they are first printed."""

    def __init__(self, anon_memo: dict | None = None):
        self.idx: dict[str, str] = {}
        self.ten: dict[str, str] = {}
        self.anon_memo: dict[int, str] = anon_memo if anon_memo is not None else {}

    def copy(self) -> "_Printer":
        c = _Printer(self.anon_memo)
        c.idx, c.ten = dict(self.idx), dict(self.ten)
        return c

    def name_idx(self, tok: str, fix: bool) -> str:
        if tok not in self.idx:
            if not fix:
                return "?"
            self.idx[tok] = f"i{len(self.idx)}"
        return self.idx[tok]

    def name_ten(self, t: str, fix: bool) -> str:
        if t not in self.ten:
            if not fix:
                return "?"
            self.ten[t] = f"t{len(self.ten)}"
        return self.ten[t]

    def text(self, node, fix: bool = True, anon: bool = False) -> str:
        if anon:  # independent of the names fixed so far: computed once per node
            got = self.anon_memo.get(id(node))
            if got is None:
                got = self.anon_memo[id(node)] = self._text(node, False, True)
            return got
        return self._text(node, fix, anon)

    def _text(self, node, fix: bool, anon: bool) -> str:
        kind = node[0]
        ix = (lambda ts: ",".join("_" if anon else self.name_idx(t, fix) for t in ts))
        if kind == "acc":
            t = "_" if anon else self.name_ten(node[1], fix)
            return f"{t}:{node[2]}[{ix(node[3])}]"
        if kind == "def":
            inner = self.text(node[4], fix, anon)
            return f"({inner}):{node[2]}[{ix(node[3])}]"
        if kind == "const":
            return node[1]
        if kind == "bin":
            a, b = node[2], node[3]
            if node[1] in COMMUTATIVE:
                a, b = self.sorted_ops([a, b])
            return f"({self.text(a, fix, anon)} {node[1]} {self.text(b, fix, anon)})"
        if kind == "call":
            args = list(node[2])
            if node[1] in COMMUTATIVE_CALLS:
                args = self.sorted_ops(args)
            return f"{node[1]}(" + ", ".join(self.text(a, fix, anon) for a in args) + ")"
        if kind == "red":
            return f"{node[1]}[{ix(node[2])}]({self.text(node[3], fix, anon)})"
        raise TypeError(node)

    def sorted_ops(self, ops: list) -> list:
        """Operands by their name-free text; only operands tied on it are ordered by their
        text under the names fixed so far (computed only then: it is not memoizable)."""
        anon = [self.text(o, False, True) for o in ops]
        if len(set(anon)) == len(anon):
            return [ops[k] for k in sorted(range(len(ops)), key=anon.__getitem__)]
        return sorted(ops, key=lambda o: (self.text(o, False, True),
                                          self.copy().text(o, False, False)))


def region_signature(program: ast.Program, stmts: tuple[str, ...]) -> Signature:
    """The signature of the region of `stmts` (statement names of a checked program). Raises
    TooLarge when inlining makes it exceed MAX_NODES nodes."""
    inside = set(stmts)
    reads = {s: {a.tensor for a in program.statement(s).rhs.walk()
                 if isinstance(a, ast.Access)} for s in stmts}
    outputs = set(program.outputs)
    roots = [s for s in stmts if s in outputs or not any(s in reads[c] for c in stmts)
             or any(s in {a.tensor for a in t.rhs.walk() if isinstance(a, ast.Access)}
                    for t in program.statements if t.name not in inside)]
    b = _Builder(program, tuple(stmts))
    trees = []
    for r in roots:
        s = program.statement(r)
        binding = {i: b.fresh() for i in s.lhs.indices}
        lhs = tuple(binding[i] for i in s.lhs.indices)
        body, binding = b.expand(r, binding)
        trees.append((r, lhs, body, binding))
    pr = _Printer()
    trees.sort(key=lambda t: (pr.copy().text(t[2], False, True),
                              pr.copy().text(t[2], False, False)))
    parts = []
    for r, lhs, body, _ in trees:
        fmt = program.tensor(r).format.name()
        lhs_text = ",".join(pr.name_idx(t, True) for t in lhs)
        parts.append(f"{fmt}[{lhs_text}] = {pr.text(body)}")
    local: dict[str, dict[str, str]] = {}

    kinds = ("acc", "def", "bin", "call", "red", "const")

    def collect(stmt: str, binding: dict[str, str], body) -> None:
        if stmt not in local:  # the first copy of a statement inlined several times
            local[stmt] = {k: pr.idx[v] for k, v in binding.items() if v in pr.idx}
        walk(body)

    def walk(node) -> None:
        if node[0] == "def":
            collect(node[1], node[5], node[4])
            return
        for child in node[1:]:
            subs = [child] if isinstance(child, tuple) and child and child[0] in kinds \
                else child if isinstance(child, tuple) else ()
            for c in subs:
                if isinstance(c, tuple) and c and c[0] in kinds:
                    walk(c)

    for r, _, body, binding in trees:
        collect(r, binding, body)
    tensors = {v: k for k, v in pr.ten.items()}
    return Signature("; ".join(parts), local, tensors, tuple(t[0] for t in trees))

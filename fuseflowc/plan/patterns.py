"""The schedule warehouse (PluS): a directory of TOML pattern files, each a region signature
(signature.py) and a schedule in the signature's canonical names (docs/plan.md, "Warehouse").

    name = "spmm_csr"
    note = "SpMM, A in CSR: Gustavson's row-wise order"
    signature = "dense[i0,i1] = sum[i2]((t0:csr[i0,i2] * t1:dense[i2,i1]))"
    [schedule]
    order = ["i0", "i2", "i1"]                   # outer to inner
    locate = false
    parallelize = { index = "i0", factor = 4 }   # optional
    block = { t0 = 16 }                          # optional: canonical tensor -> block size

A region matches a pattern when their signatures are equal (up to renaming indices and
tensors, reordering statements and commutative operands). Files are read in name order; of two
patterns with one signature the first wins.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from ..diagnostics import Loc, Source, UserError
from ..lang import ast
from .cost import Schedule
from .signature import Signature, TooLarge, region_signature


@dataclass
class Pattern:
    name: str
    note: str
    signature: str
    order: tuple[str, ...] = ()
    locate: bool = False
    parallel: tuple[str, int] | None = None
    block: tuple[tuple[str, int], ...] = ()
    path: str = ""

    def schedule_for(self, sig: Signature) -> Schedule | None:
        """The pattern's schedule in the matched region's own names (None when the order does
        not name every index of the region)."""
        pos = {c: k for k, c in enumerate(self.order)}
        orders = []
        for stmt, m in sig.local.items():
            if self.order:
                if any(c not in pos for c in m.values()):
                    return None
                orders.append((stmt, tuple(sorted(m, key=lambda x: pos[m[x]]))))
        par = ()
        if self.parallel is not None:
            idx, f = self.parallel
            for stmt in list(sig.roots) + list(sig.local):
                loc = next((x for x, c in sig.local.get(stmt, {}).items() if c == idx), None)
                if loc is not None:
                    par = ((stmt, loc, f),)
                    break
        blocks = tuple(sorted((sig.tensors[t], b) for t, b in self.block if t in sig.tensors))
        return Schedule(tuple(orders), par, blocks)

    def to_toml(self) -> str:
        q = _quote
        lines = [f"name = {q(self.name)}", f"note = {q(self.note)}",
                 f"signature = {q(self.signature)}", "", "[schedule]",
                 "order = [" + ", ".join(q(x) for x in self.order) + "]",
                 f"locate = {'true' if self.locate else 'false'}"]
        if self.parallel is not None:
            lines.append(f"parallelize = {{ index = {q(self.parallel[0])}, factor = "
                         f"{self.parallel[1]} }}")
        if self.block:
            lines.append("block = { " + ", ".join(f"{t} = {b}" for t, b in self.block) + " }")
        return "\n".join(lines) + "\n"


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canonical_schedule(sig: Signature, sched: Schedule) -> tuple[tuple[str, ...],
                                                                 tuple[str, int] | None,
                                                                 tuple[tuple[str, int], ...]]:
    """(global order, parallel (index, factor), blocks) of a region's schedule in the
    signature's canonical names. The order is a linear extension of the statements' orders,
    ties to the lower canonical number; indices no order names follow in canonical order."""
    succ: dict[str, set[str]] = {}
    for stmt, order in sched.orders:
        m = sig.local.get(stmt, {})
        cs = [m[x] for x in order if x in m]
        for a, b in zip(cs, cs[1:]):
            succ.setdefault(a, set()).add(b)
    names = sig.indices
    indeg = {n: 0 for n in names}
    for a in succ:
        for b in succ[a]:
            indeg[b] = indeg.get(b, 0) + 1
    out: list[str] = []
    ready = sorted((n for n in names if indeg[n] == 0), key=lambda n: int(n[1:]))
    while ready:
        n = ready.pop(0)
        out.append(n)
        for b in sorted(succ.get(n, ()), key=lambda n: int(n[1:])):
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
                ready.sort(key=lambda n: int(n[1:]))
    par = None
    for stmt, idx, f in sched.parallel:
        c = sig.local.get(stmt, {}).get(idx)
        if c is not None:
            par = (c, f)
            break
    inv = {v: k for k, v in sig.tensors.items()}
    blocks = tuple(sorted((inv[t], b) for t, b in sched.blocks if t in inv))
    return tuple(out) if sched.orders else (), par, blocks


class Warehouse:
    """Patterns by signature text."""

    def __init__(self, patterns: list[Pattern]):
        self.patterns = patterns
        self.by_sig: dict[str, Pattern] = {}
        for p in patterns:
            self.by_sig.setdefault(p.signature, p)
        self._sigs: dict[tuple, Signature] = {}

    @classmethod
    def load(cls, path: str) -> "Warehouse":
        """Every *.toml file of directory `path` ('builtin': the shipped warehouse)."""
        if path == "builtin":
            base = resources.files("fuseflowc.plan.warehouse")
            files = sorted((f.name, f.read_text(encoding="utf-8")) for f in base.iterdir()
                           if f.name.endswith(".toml"))
            return cls([parse_pattern(text, f"<builtin>/{n}") for n, text in files])
        if not os.path.isdir(path):
            raise UserError(f"--warehouse {path}: not a directory")
        files = sorted(f for f in os.listdir(path) if f.endswith(".toml"))
        from ..files import read_source
        return cls([parse_pattern(read_source(os.path.join(path, f)).text,
                                  os.path.join(path, f)) for f in files])

    def signature(self, program: ast.Program, stmts: tuple[str, ...]) -> Signature | None:
        """The region's signature (None: too large to have one, see signature.MAX_NODES)."""
        key = (id(program), stmts)
        if key not in self._sigs:
            try:
                self._sigs[key] = region_signature(program, stmts)
            except TooLarge:
                self._sigs[key] = None
        return self._sigs[key]

    def match(self, program: ast.Program, stmts: tuple[str, ...]
              ) -> tuple[str, Schedule] | None:
        """(pattern name, its schedule in the region's names) of the pattern matching the
        region of `stmts`, or None."""
        sig = self.signature(program, stmts)
        if sig is None:
            return None
        p = self.by_sig.get(sig.text)
        if p is None:
            return None
        sched = p.schedule_for(sig)
        return None if sched is None else (p.name, sched)


def _line_of(text: str, key: str) -> int:
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line) or line.strip() == f"[{key}]":
            return n
    return 1


def parse_pattern(text: str, path: str) -> Pattern:
    """A pattern file's content; UserError at file:line:col for syntax and schema mistakes."""
    src = Source(path, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = Loc(src, int(m.group(1)), int(m.group(2))) if m else Loc(src, 1, 1)
        raise UserError(re.sub(r"\s*\(at line.*\)", "", str(e)), loc) from None

    def bad(key: str, msg: str):
        return UserError(f"{key}: {msg}", Loc(src, _line_of(text, key.split(".")[-1]), 1))

    for key in ("name", "signature"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            raise bad(key, "expected a non-empty string")
    note = doc.get("note", "")
    if not isinstance(note, str):
        raise bad("note", "expected a string")
    sch = doc.get("schedule", {})
    if not isinstance(sch, dict):
        raise bad("schedule", "expected a table")
    unknown = sorted(set(sch) - {"order", "locate", "parallelize", "block"})
    if unknown:
        raise bad(f"schedule.{unknown[0]}", "unknown key (expected order, locate, "
                  "parallelize, block)")
    order = sch.get("order", [])
    if not isinstance(order, list) or not all(isinstance(x, str) and re.fullmatch(r"i\d+", x)
                                              for x in order) or len(set(order)) != len(order):
        raise bad("schedule.order", "expected a list of distinct canonical index names "
                  "(i0, i1, ...)")
    locate = sch.get("locate", False)
    if not isinstance(locate, bool):
        raise bad("schedule.locate", "expected true or false")
    par = None
    if "parallelize" in sch:
        pz = sch["parallelize"]
        if not (isinstance(pz, dict) and isinstance(pz.get("index"), str)
                and isinstance(pz.get("factor"), int) and not isinstance(pz["factor"], bool)
                and 1 <= pz["factor"] <= 64 and set(pz) == {"index", "factor"}):
            raise bad("schedule.parallelize", "expected { index = \"iN\", factor = 1..64 }")
        par = (pz["index"], pz["factor"])
    block = ()
    if "block" in sch:
        bl = sch["block"]
        if not (isinstance(bl, dict) and all(re.fullmatch(r"t\d+", k) and isinstance(v, int)
                                             and not isinstance(v, bool) and v >= 1
                                             for k, v in bl.items())):
            raise bad("schedule.block", "expected { tN = size, ... } with sizes >= 1")
        block = tuple(sorted(bl.items()))
    return Pattern(doc["name"], note, doc["signature"], tuple(order), locate, par, block, path)


def pattern_of(program: ast.Program, stmts: tuple[str, ...], sched: Schedule, locate: bool,
               name: str, note: str) -> Pattern:
    """A new pattern: the region of `stmts` of `program` with schedule `sched`."""
    try:
        sig = region_signature(program, stmts)
    except TooLarge:
        raise UserError(f"the region of {', '.join(stmts)} is too large for a signature (its "
                        f"intermediates inlined at every use exceed the limit): no pattern "
                        f"can name it") from None
    order, par, blocks = canonical_schedule(sig, sched)
    return Pattern(name, note, sig.text, order, locate, par, blocks)


#: A pattern's name: it becomes the file NAME.toml inside the warehouse, so no separator, no
#: leading dot (no `..`, no hidden file), nothing a shell or another system reads otherwise.
PATTERN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def pattern_name_error(name: str) -> str | None:
    """Why `name` cannot name a pattern file inside a warehouse directory, or None."""
    if PATTERN_NAME.fullmatch(name):
        return None
    return (f"{name!r} is not a pattern name: letters, digits, '_', '-' and '.', not first, "
            f"at most 100 characters (the pattern is written as NAME.toml inside -o DIR, "
            f"never elsewhere)")


def learn_pattern(results: str, out_dir: str, name: str | None) -> str:
    """Write the best configuration (fewest simulated cycles, status ok) of a sweep's results
    file into warehouse `out_dir` as a new pattern file NAME.toml; returns its path."""
    from .. import pipeline
    from ..outputs import Outputs
    from ..sweep.results import read_rows
    if name is not None and pattern_name_error(name):
        raise UserError("--name " + pattern_name_error(name))
    rows = [r for r in read_rows(results) if r.get("status") == "ok"
            and r.get("cycles") is not None]
    if not rows:
        raise UserError(f"{results}: no configuration with status ok and cycles to learn from")
    best = min(rows, key=lambda r: (r["cycles"], r["id"]))
    prog = best["program"]
    cands = [prog, os.path.join(os.path.dirname(results), prog)]
    path = next((c for c in cands if os.path.isfile(c)), None)
    if path is None:
        raise UserError(f"{results}: the best configuration ({best['id']}) reads program "
                        f"{prog}, which is not found (from the current directory or beside "
                        f"the results file)")
    # (the orders per region of an `orders = "product"` row, else its order index)
    options = pipeline.CompileOptions(
        schedule=tuple(best.get("schedule") or ()), unfused=bool(best.get("unfused")),
        order=best.get("order"), order_region=best.get("order_region"),
        orders=dict(best.get("orders") or {}) or None,
        inline_widened=bool(best.get("inline_widened")),
        free_input_order=bool(best.get("free_input_order")), share=bool(best.get("share")))
    program = pipeline.load(path, options, "program").ir
    fused = pipeline.fuse(program, options, path)
    groups: dict[str, list] = {}
    for r in fused.regions:
        groups.setdefault(r.group or r.name, []).append(r)
    key = max(groups, key=lambda g: (sum(len(r.statements) for r in groups[g]),
                                     -list(groups).index(g)))
    regs = groups[key]
    index = {s.name: n for n, s in enumerate(program.statements)}
    stmts = tuple(sorted({s for r in regs for s in r.statements}, key=index.__getitem__))
    orders: dict[str, tuple[str, ...]] = {}
    for r in regs:
        pos = {x: k for k, x in enumerate(r.order)}
        for inst in r.exprs:
            if inst.statement not in orders:
                orders[inst.statement] = tuple(a for a, _ in sorted(
                    inst.index_map, key=lambda p: pos[p[1]]))
    par = tuple((d.statement, d.index, d.factor) for d in program.directives
                if isinstance(d, ast.Parallelize) and d.statement in stmts)
    blocks = tuple((d.tensor, d.size) for d in program.directives if isinstance(d, ast.Block))
    sched = Schedule(tuple(sorted(orders.items(), key=lambda i: index[i[0]])), par, blocks)
    locate = "locate" in (best.get("pipeline") or "")
    name = name or re.sub(r"[^A-Za-z0-9_]+", "_", f"{best.get('model')}_{best.get('variant')}"
                          f"_{key}").strip("_")
    pat = pattern_of(program, stmts, sched, locate, name,
                     f"learned from {os.path.basename(results)}: configuration {best['id']}, "
                     f"{best['cycles']} simulated cycles")
    target = os.path.join(out_dir, f"{name}.toml")
    if os.path.exists(target):
        raise UserError(f"{target}: a pattern of that name exists (give another --name)")
    out = Outputs(results)
    dest = out.file(target)
    with out:
        dest.write(pat.to_toml())
    return target

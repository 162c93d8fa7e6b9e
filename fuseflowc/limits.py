"""The bounds on what fuseflowc reads, in one place (docs/language.md, "Limits").

Every number, nesting depth and input size a user can write is checked against these bounds
where it is read, with a located error, so that no later stage meets a value it cannot handle:
an integer beyond 64 bits (numpy indexes with int64), a number with thousands of digits (Python
refuses to convert more than 4300), an expression nested deeper than the recursive stages
(checker, fuse, lowering) can walk, an input that never ends (/dev/zero), or a size whose
arrays would not fit in memory.
"""

from __future__ import annotations

import math
import os
import re
import sys

from .diagnostics import Loc, Source, UserError

#: Largest integer in any IR or option: sizes, modes, block sizes (an int64 index).
MAX_INT = 2**63 - 1
#: Longest integer literal read at all (Python converts at most 4300 digits).
MAX_DIGITS = 4000
#: Deepest nesting of operators, calls and reductions in one expression (a reduction over n
#: indices counts n: lowering splits it). Lowering recurses about five frames per level; 100
#: levels stay far from Python's limit of 1000 frames. The models nest at most 22 deep, with
#: every intermediate inlined.
MAX_NESTING = 100
#: Most dims of a tensor: numpy's limit of array dimensions (32 before numpy 2), which the
#: reference evaluator and the data files need.
MAX_TENSOR_ORDER = 32
#: The most work the exact order count of one region may do (fuseflowc.fuse.pog): memoized
#: sets of indices times the region's indices (each set costs a pass over them, ~1 us per
#: index), so a few seconds at worst. Every example needs fewer than 20 sets.
MAX_ORDER_WORK = 2_000_000
#: Most statements and list elements a program with loops unrolls to (fuseflowc.lang.unroll):
#: every later stage works on the flat program, at about a millisecond per statement to check
#: and more to fuse and lower (a `map` over 10,000 iterations checks in ~7 s); the loop models
#: unroll to fewer than 1,000.
MAX_UNROLLED = 100_000
#: Most candidate decompositions `decompose-advisor` costs (each is compiled and estimated, a
#: few tens of milliseconds): the defaults make at most 70; --blocks and --thresholds lists
#: of hundreds of values made tens of thousands.
MAX_ADVISOR_CANDIDATES = 500
#: Largest text input (a program, an include, an IR file, a spec): 64 MiB. The largest
#: generated file of the examples (GPT-3 fully fused, SAMML) is under 1 MiB.
MAX_TEXT_BYTES = 64 << 20
#: Most lanes a node may be copied into by parallelization (the product of the factors of
#: nested splits): 64 lanes of BigBird attention simulate in ~20 s where 256 take ~45 s and
#: 1 GB, and 64 x 64 nested splits take 30 s just to build.
MAX_LANES = 64

#: The Lark rules of expressions in the program and fused-IR grammars (list index
#: expressions, `x[2 * (t - 1); i]`, included).
EXPRESSION_RULES = frozenset({"add", "sub", "mul", "div", "neg", "call", "reduce", "fallback",
                              "ladd", "lsub", "lscale", "lrev", "lind"})
#: Deepest parse tree of any kind (loops in loops, ...): the parsers' tree walks recurse once
#: per level, and Python's stack holds about 1,000 frames.
MAX_TREE_DEPTH = 3 * MAX_NESTING


def shown(text: str) -> str:
    """A number as a message shows it: long ones cut, with their digit count."""
    return text if len(text) <= 24 else f"{text[:12]}...({len(text.lstrip('+-'))} digits)"


def whole_number(text: str, what: str, loc: Loc | None = None, lo: int = 0,
                 hi: int | None = MAX_INT) -> int:
    """The integer written `text` (digits, optionally signed when `lo` < 0), checked to lie in
    [lo, hi] (`hi` None: any value of at most MAX_DIGITS digits). `what` names it in messages
    ("a dimension size"). Never converts a string longer than MAX_DIGITS."""
    digits = text[1:] if text[:1] in "+-" and lo < 0 else text
    if not digits.isdigit() or not digits.isascii():
        raise UserError(f"{what} must be a whole number, not {shown(text)}", loc)
    if len(digits.lstrip("0")) > MAX_DIGITS:
        raise UserError(f"{what} {shown(text)} is too large"
                        + ("" if hi is None else f" (at most {hi})"), loc)
    value = int(text)
    if hi is not None and value > hi:
        raise UserError(f"{what} {shown(text)} is too large (at most {hi})", loc)
    if value < lo:
        raise UserError(f"{what} must be at least {lo}, not {shown(text)}", loc)
    return value


def order_number(text: str, n: int, loc: Loc | None = None) -> int:
    """The order number K of a region with `n` indices: below n!, the most orders n indices
    have (the count of the region's valid orders is smaller still, but costs a count)."""
    hi = math.factorial(n) - 1 if n <= 1500 else None  # 1500! has 4115 digits
    return whole_number(text, "the order number", loc, 0, hi)


def finite_number(text: str, loc: Loc | None = None) -> float:
    """The decimal number written `text` as a double; one beyond a double's range (1e999) is an
    error: there would be nothing finite to compute with."""
    value = float(text)
    if math.isinf(value):
        raise UserError(f"number {shown(text)} is too large (beyond the range of a double)",
                        loc)
    return value


def check_nesting(tree, source: Source, rules=EXPRESSION_RULES,
                  what: str = "an expression (operators, calls, reductions)",
                  hint: str = "; split it into several statements") -> None:
    """Raise a located UserError when `tree` (a Lark parse tree) nests `rules` more than
    MAX_NESTING deep, or any rules more than MAX_TREE_DEPTH deep (found by fuzzing: list index
    expressions and loops in loops). Iterative: it runs before any recursive walk of the
    tree."""
    from lark import Tree

    def where(t):
        meta = t.meta
        return Loc(source, meta.line, meta.column) if not getattr(meta, "empty", True) else None
    stack = [(tree, 0, 0)]
    while stack:
        t, depth, levels = stack.pop()
        if t.data in rules:
            depth += 1
            if depth > MAX_NESTING:
                raise UserError(f"{what} is nested more than {MAX_NESTING} levels deep{hint}",
                                where(t))
        levels += 1
        if levels > MAX_TREE_DEPTH:
            raise UserError(f"the input is nested more than {MAX_TREE_DEPTH} levels deep (loops "
                            f"in loops, brackets in brackets); flatten it", where(t))
        stack.extend((c, depth, levels) for c in t.children if isinstance(c, Tree))


def available_memory() -> int | None:
    """Bytes of memory this process can still allocate, as the system reports it: the
    kernel's MemAvailable (Linux), else the free physical pages (os.sysconf), bounded by the
    address-space limit (RLIMIT_AS, less what is mapped) and a cgroup's memory limit when there
    are; None when the system does not say."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    try:  # an address-space limit (ulimit -v; the fuzzer's cases) bounds it too
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as f:
                mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            avail = min(avail, max(soft - mapped, 0))
    except (ImportError, OSError, ValueError, IndexError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
            used = int(f.read().strip())
        if limit != "max":
            avail = min(avail, max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return avail


def _bytes(n: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}" if n < 1024 * size else f"{n / size:,.0f} {unit}"
    return f"{n:.0f} bytes"


def check_memory(needed: float, what: str) -> None:
    """Refuse, before allocating anything, work whose arrays need about `needed` bytes when the
    machine has less available (`what` says what was asked for, e.g. "A: 100000 x 100000,
    density 0.5")."""
    if needed < 64 << 20:  # small: not worth asking the system
        return
    avail = available_memory()
    if avail is not None and needed > avail:
        raise UserError(f"{what} needs about {_bytes(needed)} of memory, and this machine has "
                        f"{_bytes(avail)} available")


def number_too_long(src: Source) -> UserError:
    """The error for a text holding an integer too long for Python to convert (json and tomllib
    raise a bare ValueError): located at the first such number."""
    limit = sys.get_int_max_str_digits() or 4300  # what int() refuses past
    m = re.search(r"\d{%d,}" % (limit + 1), src.text)
    if m is None:
        return UserError(f"{src.name}: a number too long to read (more than {limit} digits)")
    line = src.text.count("\n", 0, m.start()) + 1
    col = m.start() - (src.text.rfind("\n", 0, m.start()) + 1) + 1
    return UserError(f"a number with {len(m.group())} digits; at most {limit} are read",
                     Loc(src, line, col))

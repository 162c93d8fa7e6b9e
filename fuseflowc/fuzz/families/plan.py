"""The `plan` family: the planner on the corpus's programs (by --data or --size/--density), with
a warehouse (the shipped one, the corpus's pattern files, mutated TOML, odd paths), and
`--learn` of a results file (mutated) into a warehouse directory under names that would
escape it (`../x`, absolute, with a slash), with `--json` and odd outputs.

A plan case is bounded by the fuzzer's per-case time limit like any case: a search that does not
finish is a hang. Each passes `--time-limit 4` (a good value, most of the time), so that a large
search stops in time and plans with the best it found (the anytime search, docs/plan.md). A
plan written to a file then goes through `fuse` with the flags its header says to compile it
with (`# compile: fuseflowc fuse PROG --inline-widened ...`; the driver runs it): a plan that
`fuse` rejects is `wrong`."""

from __future__ import annotations

import re

from ..textmut import TextMutator

NAMES = ("spmm_fast", "p1", "../escape", "/tmp/abs", "a/b", "", ".", "..", "x" * 300,
         "n\0ul", "ok-name_2")


def build(b, fam) -> None:
    c = b.case
    c.command = "plan"
    if b.chance(0.25):
        return learn(b)
    seed = b.input(("program",), True)
    names = b.names(seed)
    if b.chance(0.5) and seed is not None and seed.data:
        b.data_dir(seed)
    else:
        b.sizes(names)
        if b.chance(0.6):
            b.densities(names)
    if b.chance(0.3):
        b.opt("--objective", b.pick(("cycles", "bytes", "flops", "energy", "edp"))
              if b.good(0.9) else "time")
    if b.chance(0.2):   # a finite fabric: candidates mapped and split (fuseflowc.fabric)
        b.opt("--fabric", b.pick(("unlimited", "onyx", "onyx-quarter", "onyx-eighth"))
              if b.good(0.9) else "nope")
    if b.chance(0.3):
        b.opt("--lanes", b.int_value((1, 2, 4, 8)))
    for opt, good in (("--top", (1, 3)), ("--max-points", (0, 2, 4)), ("--max-orders", (1, 4))):
        if b.chance(0.15):
            b.opt(opt, b.int_value(good))
    if b.chance(0.35):
        warehouse(b)
        if b.chance(0.3):
            b.opt("--no-search")
    elif b.chance(0.03):
        b.opt("--no-search")
    # the search's time limit, within the fuzzer's per-case limit: a search that would run
    # longer plans with the best it has found (docs/plan.md, "Limits"); sometimes a bad value,
    # or a compile budget that cuts the search (or is too small to plan at all)
    if b.good(0.95):
        b.opt("--time-limit", "4")
    else:
        b.opt("--time-limit", b.pick(("0", "-1", "nan", "inf", "1e999", "abc", "", "0.001")))
    if b.chance(0.15):
        b.opt("--max-compiles", b.int_value((1, 5, 40, 300)))
    for flag in ("--share", "--inline-widened", "--free-input-order"):
        if b.chance(0.1):
            b.opt(flag)
    if b.chance(0.2):
        b.opt("--json")
    if b.chance(0.2):
        b.opt("-q")
    if b.chance(0.3):
        b.output("-o", "file")
    elif "--json" not in b.case.argv and b.chance(0.6):
        b.opt("-o", "planned.ff")   # fuse must accept what plan writes (issue 23, item 7)
        c.outputs.append("planned.ff")
        c.then_fuse = "planned.ff"
    b.stray()


FUSE_FLAGS = ("--free-input-order", "--share", "--inline-widened")
_COMPILE = re.compile(rb"^# compile: fuseflowc fuse PROG((?: --[a-z-]+)*) \|", re.M)


def fuse_flags(plan: bytes) -> list[str]:
    """The fuse flags a written plan's header says to compile it with (plan searches them:
    issue 22), in the header's order; none without such a line."""
    m = _COMPILE.search(plan)
    flags = m.group(1).decode().split() if m else []
    return [f for f in flags if f in FUSE_FLAGS]


def warehouse(b) -> None:
    """--warehouse: builtin, a directory of the corpus's patterns (maybe mutated), or an odd
    path."""
    seeds = b.corpus.seeds.get("warehouse", [])
    if b.good(0.8) and (seeds or b.chance(0.5)):
        if not seeds or b.chance(0.3):
            b.opt("--warehouse", "builtin")
            return
        s = b.pick(seeds)
        b.add_files(b.corpus.files(s.path))
        files = sorted(k for k in b.corpus.files(s.path) if k.endswith(".toml"))
        if files and b.chance(0.6):
            f = b.pick(files)
            b.case.files[f], note = TextMutator("toml", b.rng).mutate(b.case.files[f])
            b.case.notes.append(f"{f}: {note}")
            b.case.mutated.append(f)
        b.case.inputs.append(s.path)
        b.opt("--warehouse", s.path)
    else:
        b.opt("--warehouse", b.pick(("nonexistent", "/dev/null", ".", "", "notes.txt")))
        if b.case.args[-1][1] == "notes.txt":
            b.case.files["notes.txt"] = b"a user's notes\n"


def learn(b) -> None:
    """plan --learn RESULTS -o DIR [--name NAME]."""
    c = b.case
    seeds = b.corpus.seeds.get("results", [])
    if seeds and b.good(0.9):
        s = b.pick(seeds)
        b.add_files(b.corpus.files(s.path))
        if b.chance(0.4):
            c.files[s.path], note = TextMutator("csv", b.rng).mutate(c.files[s.path])
            c.notes.append(f"{s.path}: {note}")
            c.mutated.append(s.path)
        c.inputs.append(s.path)
        b.opt("--learn", s.path)
    else:
        b.opt("--learn", b.pick(("nonexistent.csv", "/dev/null", ".", "r.txt")))
    if b.chance(0.9):
        b.output("-o", "dir", p_odd=0.3)
    if b.chance(0.7):
        name = b.pick(NAMES[:2] + NAMES[-1:]) if b.good(0.5) else b.pick(NAMES)
        b.opt("--name", name.replace("\0", ""))
        c.notes.append(f"--name {name[:40]!r}")
    if b.chance(0.05):
        b.opt(b.pick(("ir_examples/kernels/spmv.ff",)))
    b.stray()

"""The `decompose-advisor` family: a matrix (Matrix Market seeds of the corpus, or a graph's
adjacency, maybe mutated) with a program that reads it, and its options: block sizes,
thresholds, padding, sizes of the other dims, a tensor name, schedules, --json, outputs."""

from __future__ import annotations

from ..datamut import mutate_file
from ..textmut import TextMutator

#: The programs that read one unblocked sparse input matrix, with the dims the matrix does not
#: size (a --size each).
PROGRAMS = {"ir_examples/kernels/spmm.ff": ("J",), "ir_examples/kernels/spmv.ff": (),
            "ir_examples/kernels/sddmm.ff": ("K",),
            "ir_examples/kernels/spmm_decomposed.ff": (),
            "ir_examples/models/gcn/gcn.ff": ("F", "C")}


def build(b, fam) -> None:
    c = b.case
    c.command = "decompose-advisor"
    mtx = [s for s in b.corpus.seeds.get("matrix", [])]
    if mtx and b.good(0.95):
        s = b.pick(mtx)
        b.add_files(b.corpus.files(s.path))
        if b.chance(0.35):
            c.files[s.path], note = mutate_file(s.path, c.files[s.path], b.rng)
            c.notes.append(f"{s.path}: {note}")
            c.mutated.append(s.path)
        c.inputs.append(s.path)
        c.args.append((s.path,))
    else:
        c.args.append((b.pick(("nonexistent.mtx", "/dev/zero", ".", "-")),))
    progs = [s for s in b.corpus.seeds.get("program", []) if s.path in PROGRAMS]
    if progs and b.good(0.95):
        p = b.pick(progs)
        b.add_files(b.corpus.seed_files(p))
        if b.chance(0.2):
            c.files[p.path], note = TextMutator("program", b.rng).mutate(c.files[p.path])
            c.notes.append(f"{p.path}: {note}")
            c.mutated.append(p.path)
        c.inputs.append(p.path)
        b.opt("--program", p.path)
        names = b.names(p)
    else:
        b.opt("--program", b.pick(("nonexistent.ff", "/dev/null")))
        names = b.names(None)
    others = PROGRAMS.get(c.inputs[-1], ()) if len(c.inputs) > 1 else ()
    for dim in (others if b.good(0.9) else names.dims):
        if b.good(0.95):
            b.opt("--size", f"{dim}=" + (b.pick(("2", "4", "8")) if b.good(0.85) else
                                          b.pick(("0", "-1", "1e3", "99999999999999999999",
                                                  "x", "1000000000000"))))
    if b.chance(0.2):
        b.opt("--tensor", b.pick(names.tensors) if b.good(0.8) else "ZZ")
    if b.chance(0.3):
        b.opt("--blocks", ",".join(b.pick(("2", "4", "8")) for _ in range(b.rng.randint(1, 3)))
              if b.good(0.7) else b.pick(("0", "-2", "x", "", "3,3", "4096", "2," * 500 + "2",
                                          "99999999999999999999")))
    if b.chance(0.3):
        b.opt("--thresholds", b.pick(("0.5", "0.25,0.75", "1")) if b.good(0.7) else
              b.pick(("0", "1.5", "nan", "-1", "inf", "x", "", "0.1," * 500 + "0.1")))
    if b.chance(0.2):
        b.opt("--pad", b.int_value((2, 4, 8, 16)))
    if b.chance(0.15):
        b.opt("--top", b.int_value((1, 3)))
    if b.chance(0.1):
        b.opt("--hoist")
    if b.chance(0.1):
        b.schedule(names)
    if b.chance(0.2):
        b.opt("--json")
    if b.chance(0.25):
        b.output("-o", "file")
    b.stray()

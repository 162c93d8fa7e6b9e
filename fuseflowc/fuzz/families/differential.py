"""The `differential` family: `simulate --json` of a SAMML seed with data, its graph mutated
about half the time (grammar-aware and byte-level, like the simulate family) and its data some of
the time, with arch options, run on both engines (`--engine fast`, then `--engine python`):
the driver compares the two runs (fuseflowc.fuzz.twins) and reports any difference. Its seeds
are those the corpus found a twin's data for (corpus.TWIN_BUDGET: data the Python engine
simulates quickly, made smaller for the seed when its own is not), so that both runs of every
case fit the case limit."""

from __future__ import annotations

from ..datamut import mutate_data
from ..textmut import TextMutator


def build(b, fam) -> None:
    c = b.case
    c.command = "simulate"
    seeds = [s for s in b.corpus.seeds.get("samml", []) if s.twin]
    if not seeds:
        c.args.append(("nonexistent.samml",))
        return
    seed = b.pick(seeds)
    b.add_files(b.corpus.seed_files(seed))
    if b.chance(0.45):
        donors = [b.corpus.files(s.path).get(s.path, b"").decode("utf-8", "replace")
                  for s in seeds[:12]]
        c.files[seed.path], note = TextMutator("samml", b.rng, donors).mutate(
            c.files[seed.path])
        c.notes.append(f"{seed.path}: {note}")
        c.mutated.append(seed.path)
    c.inputs.append(seed.path)
    c.args.append((seed.path,))
    b.add_files(b.corpus.files(seed.twin))
    c.made.append(seed.twin)
    if b.chance(0.2):
        c.notes.append("data: " + mutate_data(c.files, seed.twin, b.rng))
    c.inputs.append(seed.twin)
    b.opt("--data", seed.twin)
    if b.chance(0.4):
        b.opt("--check")
    b.arch()
    if b.chance(0.1):
        b.opt("--hoist")
    b.opt("--json")
    b.opt("--engine", "fast")
    c.twin = (("--engine", "fast"), ("--engine", "python"))

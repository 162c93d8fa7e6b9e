"""The fuzzer's families: what kind of case to make, how often, and which function makes it.

A family is one line of FAMILIES: its name (what the table reports), the subcommand its cases
run, its weight in the mix, and its builder as "module:function" (a module of this package, or
`cases` for the plain one-subcommand families), imported when first used. The lines are sorted
by name, so that branches each adding a family (one line, and a module of its own) merge
without conflict.

The weights make every subcommand at least 3.6% of the cases (360 expected at N=10000; the
binomial spread keeps it above 300), cheap families more often than costly ones: a test
(tests/fuzz/test_fuzz_families.py) checks both.

A builder takes the case builder (`fuseflowc.fuzz.cases._Builder`: the corpus, the case's
random stream, the pickers of inputs and options) and the Family; it sets the case's command and
fills its arguments and files.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One family of cases (see the module docstring)."""

    name: str
    command: str
    weight: int
    build: str

    def builder(self):
        """The function that makes a case of this family."""
        module, _, func = self.build.partition(":")
        base = "fuseflowc.fuzz" if module == "cases" else __name__
        return getattr(importlib.import_module(f"{base}.{module}"), func)


FAMILIES: tuple[Family, ...] = (
    Family("advisor", "decompose-advisor", 8, "advisor:build"),
    Family("check", "check", 8, "cases:command_case"),
    Family("decompose", "fuse", 6, "formats:decompose"),
    Family("differential", "simulate", 6, "differential:build"),
    Family("dot", "dot", 6, "cases:command_case"),
    Family("estimate", "estimate", 8, "cases:command_case"),
    Family("formats", "estimate", 6, "formats:formats"),
    Family("fuse", "fuse", 8, "cases:command_case"),
    Family("gen-data", "gen-data", 6, "cases:command_case"),
    Family("graph", "graph", 5, "cases:command_case"),
    Family("graph-ogb", "graph", 4, "graphs:ogb"),
    Family("graph-pyg", "graph", 3, "graphs:pyg"),
    Family("graph-synthetic", "graph", 3, "graphs:synthetic"),
    Family("import", "import", 6, "onnx_models:build"),
    Family("loops", "fuse", 6, "loops:build"),
    Family("lower", "lower", 8, "cases:command_case"),
    Family("opt", "opt", 8, "cases:command_case"),
    Family("orders", "orders", 8, "cases:command_case"),
    Family("plan", "plan", 9, "plan:build"),
    Family("report", "report", 5, "cases:command_case"),
    Family("report-damaged", "report", 4, "results:damaged"),
    Family("run", "run", 8, "cases:command_case"),
    Family("simulate", "simulate", 8, "cases:command_case"),
    Family("sweep", "sweep", 5, "cases:command_case"),
    Family("sweep-executor", "sweep", 4, "sweeps:executor"),
)

BY_NAME = {f.name: f for f in FAMILIES}


def pick_family(rng: random.Random, only: tuple[str, ...] = ()) -> Family:
    """A family drawn by weight from FAMILIES (those named in `only`, by family or by
    subcommand, when given)."""
    pool = [f for f in FAMILIES if not only or f.name in only or f.command in only]
    return rng.choices(pool, weights=[f.weight for f in pool])[0]

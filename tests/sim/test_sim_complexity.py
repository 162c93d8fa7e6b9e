"""The Python engine is the reference people read (issue #12, item 5): each primitive reads as
its algorithm, with time and channel bookkeeping in sim.node and sim.channel. This keeps it so:
no function or method of the primitives (sim/prims_*.py), the node and channel classes or the
engine has a cyclomatic complexity above 25, as radon measures it (one per branch, loop,
except clause, comprehension and boolean operator; `radon cc sim/`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.visitors import ComplexityVisitor

SIM = Path(__file__).resolve().parents[2] / "sim"
LIMIT = 25
FILES = sorted(SIM.glob("prims_*.py")) + [SIM / "node.py", SIM / "channel.py",
                                          SIM / "engine.py"]


def complexities(source: str) -> dict[str, int]:
    """Qualified name -> complexity of every function and method (nested ones included)."""
    out = {}
    v = ComplexityVisitor.from_code(source)

    def add(fn, prefix=""):
        out[prefix + fn.name] = fn.complexity
        for inner in fn.closures:
            add(inner, prefix + fn.name + ".")
    for fn in v.functions:
        add(fn)
    for cls in v.classes:
        for m in cls.methods:
            add(m, cls.name + ".")
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_method_above_the_limit(path):
    over = {k: c for k, c in complexities(path.read_text()).items() if c > LIMIT}
    assert not over, f"{path.name}: complexity above {LIMIT}: {over} (split them up)"


def test_the_measure_sees_a_tangled_method():
    branches = "\n".join(f"        if x == {i} or y:\n            x += 1" for i in range(13))
    src = f"class A:\n    def m(self, x, y):\n{branches}\n        return x\n"
    assert complexities(src) == {"A.m": 27}
    assert len(FILES) >= 9      # the six primitive families, node, channel, engine

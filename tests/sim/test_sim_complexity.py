"""The Python engine is the reference people read (issue #12, item 5): each primitive reads as
its algorithm, with time and channel bookkeeping in sim.node and sim.channel. This keeps it so:
no function or method of the primitives (sim/prims_*.py), the node and channel classes or the
engine has a cyclomatic complexity above 25, as radon measures it (one per branch, loop,
except clause, comprehension and boolean operator; `radon cc sim/`). The compiled engine
(sim/cpp) is held to the same limit by lizard's measure, the C/C++ field's usual tool (one per
branch, loop, case, catch, `&&`, `||` and `?:`; `make lint` runs `lizard --CCN 25` too)."""

from __future__ import annotations

from pathlib import Path

import lizard
import pytest
from radon.visitors import ComplexityVisitor

SIM = Path(__file__).resolve().parents[2] / "sim"
CPP = sorted((SIM / "cpp").glob("*.?pp"))
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


def cpp_complexities(path: Path) -> dict[str, int]:
    """Qualified name -> lizard's cyclomatic complexity of every C++ function in `path`."""
    info = lizard.analyze_file.analyze_source_code(path.name, path.read_text())
    return {f.long_name: f.cyclomatic_complexity for f in info.function_list}


@pytest.mark.parametrize("path", CPP, ids=lambda p: p.name)
def test_no_cpp_function_above_the_limit(path):
    over = {k: c for k, c in cpp_complexities(path).items() if c > LIMIT}
    assert not over, f"sim/cpp/{path.name}: complexity above {LIMIT}: {over} (split them up)"


def test_lizard_sees_a_tangled_function(tmp_path):
    branches = "\n".join(f"  if (x == {i} || y) x += 1;" for i in range(13))
    src = tmp_path / "t.cpp"
    src.write_text(f"int m(int x, bool y) {{\n{branches}\n  return x;\n}}\n")
    assert cpp_complexities(src) == {"m( int x , bool y)": 27}
    assert len(CPP) >= 15       # the primitive families, node, channel, engine, registry, ...

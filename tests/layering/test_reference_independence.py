"""The reference evaluator is the independent oracle: it may depend on the program IR and the
data model only, never on the compiler (fuse, lower, SAMML) or the simulator."""

from __future__ import annotations

import ast
from pathlib import Path

import fuseflowc.reference

ALLOWED = ("fuseflowc.lang", "fuseflowc.data", "fuseflowc.diagnostics", "fuseflowc.formats",
           "fuseflowc.files", "fuseflowc.reference")
PACKAGE = Path(fuseflowc.reference.__file__).parent


def _imports(path: Path) -> set[str]:
    """Absolute names of the fuseflowc/sim modules a file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = "fuseflowc.reference"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                name = ".".join(parts + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.add(name)
    return {n for n in out if n.startswith(("fuseflowc", "sim"))}


def test_reference_imports_only_the_program_ir_and_data():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 4
    for f in files:
        for name in _imports(f):
            assert name.startswith(ALLOWED), f"{f.name} imports {name}"


def test_the_check_catches_a_compiler_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from ..samml import ir\nimport sim.engine\n")
    assert _imports(bad) == {"fuseflowc.samml", "sim.engine"}

"""The layering of docs/architecture.md, enforced: which package may import which, no import of
a top-level `sim`, no import cycle (imports inside functions count: they run too).

Imports are read with `ast` from the source files (fuseflowc/, and sim/ as fuseflowc.sim), so a
rule holds for every import, however deep in a function it sits. Each test of the real tree has
a twin that builds a small tree breaking the rule and checks that the check catches it.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

# ---- the rules ------------------------------------------------------------------------------
#: Top-level modules every package may import: diagnostics, limits and formats shared by all,
#: the operator table, the grammar front end. They import only each other.
FOUNDATION = ("fuseflowc", "diagnostics", "limits", "formats", "files", "outputs", "names",
              "ir_kind", "ops", "syntax", "grammars", "fabric", "status")

#: Everything a harness or the command line may reach.
EVERYTHING = "*"

#: Package (or top-level module) -> what else it may import (a package, or one module of one:
#: "sim.arch"), with the reason. Imports within a package and of FOUNDATION are always allowed.
RULES: dict[str, tuple[tuple[str, ...], str]] = {
    "data": ((), "the tensor data model: storage formats, files, generators, graph data sets"),
    "lang": (("data",), "the program IR; a declaration's data spec (data.spec)"),
    "reference": (("lang", "data"), "the independent oracle: the program IR and the data, "
                                    "never the compiler or the simulator"),
    "fuse": (("lang",), "program IR -> fused IR"),
    "lower": (("fuse.ir", "lang", "samml"), "fused IR -> SAMML (it reads the fused IR; "
                                             "it never runs fuse)"),
    "samml": (("data",), "the SAMML IR (a tensor's data spec)"),
    "opt": (("samml",), "SAMML -> SAMML passes"),
    "sim": (("samml", "data"), "runs a SAMML module on tensor data"),
    "estimate": (("samml", "lang", "data", "sim.arch", "sim.energy"),
                 "models a SAMML module's cost on the simulator's machine description "
                 "(sim.arch), never the simulator, never the pipeline above it"),
    "pipeline": (("data", "lang", "fuse", "lower", "samml", "opt", "sim", "reference",
                  "estimate"), "the library facade over every stage (imported lazily)"),
    "sweep": (("data", "lang", "fuse", "lower", "samml", "opt", "sim", "reference", "estimate",
               "pipeline"), "runs experiments over the whole tool chain"),
    "plan": (("data", "lang", "fuse", "lower", "samml", "opt", "estimate", "sim.arch",
              "sim.energy", "sweep", "pipeline"), "compiles and estimates candidate plans"),
    "bench": (("data", "lang", "fuse", "lower", "samml", "opt", "sim", "reference", "estimate",
               "pipeline", "sweep", "plan"), "harnesses: anything but the commands"),
    "fuzz": (("data", "lang", "fuse", "lower", "samml", "opt", "sim", "reference", "estimate",
              "pipeline", "sweep", "plan", "cli"), "the fuzzer drives the real entry point"),
    "commands": ((EVERYTHING,), "one module per subcommand, over every stage"),
    "cli": ((EVERYTHING,), "finds the commands (by name, importlib)"),
    "__main__": (("cli",), "python -m fuseflowc"),
}
RULES.update({m: ((), "shared by every package") for m in FOUNDATION})
# `fuseflowc import` (ONNX -> program text and data); the zoo's harness and the fuzzer use it.
RULES["importer"] = ((), "ONNX models to program text and constants (onnx, imported lazily)")
RULES["bench"] = (RULES["bench"][0] + ("importer",), RULES["bench"][1])
RULES["fuzz"] = (RULES["fuzz"][0] + ("importer",), RULES["fuzz"][1])

#: Imports that break a rule today, each with the branch that removes it. The test fails when
#: one is no longer made, so this list only shrinks: delete an entry once its import is gone.
PENDING: dict[tuple[str, str], str] = {}


# ---- reading the imports --------------------------------------------------------------------
@dataclass(frozen=True)
class Import:
    """One imported module: the importing module, the module imported, where, and whether the
    import runs only when a function is called."""

    source: str
    target: str
    line: int
    lazy: bool

    def __str__(self) -> str:
        where = self.source.replace(".", "/") + f".py:{self.line}"
        return f"{where}: {self.source} imports {self.target}" + (" (lazily)" if self.lazy else "")


def modules(tree: Path) -> dict[str, Path]:
    """Module name -> file, for fuseflowc/ and sim/ (installed as fuseflowc.sim) under `tree`."""
    out: dict[str, Path] = {}
    for top, name in (("fuseflowc", "fuseflowc"), ("sim", "fuseflowc.sim")):
        for path in sorted((tree / top).rglob("*.py")):
            parts = list(path.relative_to(tree / top).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name] + parts)] = path
    return out


class _Visitor(ast.NodeVisitor):
    def __init__(self, module: str, package: str, known: set[str]):
        self.module, self.package, self.known = module, package, known
        self.depth = 0
        self.found: list[Import] = []

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def _add(self, name: str, node: ast.stmt) -> None:
        self.found.append(Import(self.module, self._existing(name), node.lineno, self.depth > 0))

    def _existing(self, name: str) -> str:
        """`name`, or the innermost module of it that exists (an attribute `a.b.f` -> `a.b`)."""
        probe = name
        while probe not in self.known and "." in probe:
            probe = probe.rsplit(".", 1)[0]
        return probe if probe in self.known else name

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(sub if sub in self.known else base, node)


def imports(tree: Path) -> list[Import]:
    """Every import of a first-party module (or of a top-level `sim`) by fuseflowc/ and sim/."""
    mods = modules(tree)
    known = set(mods)
    out = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        v = _Visitor(name, package, known)
        v.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out += [i for i in v.found if _first_party(i.target)]
    return out


def _first_party(name: str) -> bool:
    return name.split(".")[0] in ("fuseflowc", "sim")


def unit(module: str) -> str:
    """The package a module belongs to for the rules: `fuseflowc.lower.build` -> `lower`,
    `fuseflowc.ops` -> `ops`, `fuseflowc` -> `fuseflowc`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


# ---- the checks -----------------------------------------------------------------------------
def allowed(source: str, target: str, rules=RULES) -> bool:
    """Whether module `source` may import module `target` by `rules`."""
    mine, theirs = unit(source), unit(target)
    if target.split(".")[0] != "fuseflowc":
        return False                      # a top-level `sim` (or another stray name)
    if mine == theirs or theirs in FOUNDATION:
        return True
    may, _ = rules[mine]
    rel = target.partition(".")[2]
    return EVERYTHING in may or any(rel == m or rel.startswith(m + ".") for m in may)


def violations(found: list[Import], rules=RULES, pending=PENDING) -> list[str]:
    """The imports that break `rules` (and are not `pending`), the packages `rules` does not
    know, and the `pending` entries no import needs any more."""
    problems = [f"package {unit(u)} has no rule in RULES ({m})"
                for u, m in sorted({(i.source, str(i)) for i in found}) if unit(u) not in rules]
    used = set()
    for i in found:
        if unit(i.source) not in rules or allowed(i.source, i.target, rules):
            continue
        if (i.source, i.target) in pending:
            used.add((i.source, i.target))
            continue
        problems.append(f"{i}: {unit(i.source)} may import only "
                        f"{', '.join(rules[unit(i.source)][0]) or 'the foundation'}")
    problems += [f"PENDING entry {s} -> {t} is no longer needed: delete it"
                 for s, t in sorted(set(pending) - used)]
    return problems


def cycles(found: list[Import]) -> list[list[str]]:
    """The import cycles among modules (strongly connected components of more than one module),
    lazy imports included."""
    graph: dict[str, set[str]] = {}
    for i in found:
        if i.source != i.target:
            graph.setdefault(i.source, set()).add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def top_level_sim(paths: list[Path]) -> list[str]:
    """`file:line` of every import of a top-level `sim` package in `paths` (the simulator is
    fuseflowc.sim; from the repository root `import sim` would still work, by accident)."""
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            if any(n == "sim" or n.startswith("sim.") for n in names):
                out.append(f"{path}:{node.lineno}")
    return out


# ---- the real tree --------------------------------------------------------------------------
def test_every_package_imports_only_what_the_rules_allow():
    found = imports(ROOT)
    assert len({i.source for i in found}) > 100      # the walker saw the whole tree
    assert violations(found) == []


def test_no_import_cycle_lazy_imports_included():
    assert cycles(imports(ROOT)) == []


def test_no_module_imports_a_top_level_sim():
    paths = [p for top in ("fuseflowc", "sim", "tests") for p in sorted((ROOT / top).rglob("*.py"))]
    assert len(paths) > 150
    assert top_level_sim(paths + [ROOT / "setup.py"]) == []


def test_the_reference_evaluator_stays_independent():
    # The rule that matters most, spelled out: the oracle shares nothing with what it checks.
    found = [i for i in imports(ROOT) if unit(i.source) == "reference"]
    assert len({i.source for i in found}) >= 4
    assert {unit(i.target) for i in found} - set(FOUNDATION) <= {"reference", "lang", "data"}


# ---- the checks catch what they are for -----------------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in {"fuseflowc/__init__.py": "", "sim/__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.parents:
            if parent == root or parent.name in ("fuseflowc", "sim") and parent.parent == root:
                break
            (parent / "__init__.py").touch()
        path.write_text(text)
    return root


def test_the_rules_catch_a_stage_reaching_into_another(tmp_path):
    tree = _tree(tmp_path, {
        "fuseflowc/samml/ir.py": "",
        "fuseflowc/lang/ast.py": "",
        "fuseflowc/reference/evaluate.py": "from ..lang import ast\n"
                                           "def f():\n    from ..samml import ir\n",
        "sim/engine.py": "from fuseflowc.samml import ir\n",
        "sim/build.py": "def f():\n    import fuseflowc.reference.evaluate\n",
    })
    problems = violations(imports(tree), pending={})
    assert len(problems) == 2, problems
    assert "fuseflowc/reference/evaluate.py:3: fuseflowc.reference.evaluate imports " \
           "fuseflowc.samml.ir (lazily)" in problems[0]
    assert "fuseflowc.sim.build imports fuseflowc.reference.evaluate" in problems[1]


def test_the_rules_catch_an_unknown_package_and_a_stale_exception(tmp_path):
    tree = _tree(tmp_path, {"fuseflowc/newpkg/a.py": "from ..lang import ast\n",
                            "fuseflowc/lang/ast.py": ""})
    problems = violations(imports(tree), pending={("fuseflowc.x", "fuseflowc.y"): "gone"})
    assert any("package newpkg has no rule" in p for p in problems)
    assert any("PENDING entry fuseflowc.x -> fuseflowc.y is no longer needed" in p
               for p in problems)


def test_the_cycle_check_counts_lazy_imports(tmp_path):
    tree = _tree(tmp_path, {
        "fuseflowc/opt/a.py": "from .b import x\n",
        "fuseflowc/opt/b.py": "def f():\n    from .c import y\n",
        "fuseflowc/opt/c.py": "def g():\n    from . import a\n",
        "fuseflowc/opt/d.py": "from .a import x\n",
    })
    assert cycles(imports(tree)) == [["fuseflowc.opt.a", "fuseflowc.opt.b", "fuseflowc.opt.c"]]


def test_the_sim_check_catches_a_top_level_sim(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import sim.engine\nfrom sim import ops\nfrom .sim import ok\n"
                   "import fuseflowc.sim\n")
    assert top_level_sim([bad]) == [f"{bad}:1", f"{bad}:2"]
    tree = _tree(tmp_path / "t", {"fuseflowc/x.py": "def f():\n    import sim.engine\n"})
    assert any("imports sim.engine" in p for p in violations(imports(tree), pending={}))

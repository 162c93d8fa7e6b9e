"""dce and cse against constructed oracles: on every SAMML example (and a lowered GCN), a module
with a duplicated node (consumers split between the copies) must come back from cse exactly as
it was, and a module with dead nodes added must come back from dce exactly as it was."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from fuseflowc.formats import shorthand
from fuseflowc.opt.cse import common_subexpressions
from fuseflowc.opt.dce import DeadCodeElimination, dead_code
from fuseflowc.samml.ir import Alu, Stream, TensorDecl
from fuseflowc.samml.load import load_module
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples" / "samml").glob("*.samml"))


def _clone(g, n):
    """A copy of node `n` reading the same streams, appended to graph `g`."""
    c = copy.copy(n)
    c.inputs = list(n.inputs)
    c.outputs = [Stream(s.kind, c, i) for i, s in enumerate(n.outputs)]
    g.nodes.append(c)
    return c


def _cases(path):
    """(graph index, node index) of every node with results in the module at `path`."""
    m = load_module(str(path))
    return [(gi, ni) for gi, g in enumerate(m.graphs) for ni, n in enumerate(g.nodes) if n.outputs]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_cse_undoes_every_duplication(path):
    text = print_module(load_module(str(path)))
    rng = random.Random(path.stem)
    for gi, ni in _cases(path):
        m = parse_text(text)
        g = m.graphs[gi]
        n = g.nodes[ni]
        c = _clone(g, n)
        # Move a random non-empty subset of the uses to the copy (all of them sometimes).
        moved = 0
        for user in g.nodes:
            for k, s in enumerate(user.inputs):
                if s.producer is n and user is not c and rng.random() < 0.5:
                    user.inputs[k] = c.outputs[s.index]
                    moved += 1
        if moved == 0:
            user, k = next((u, k) for u in g.nodes if u is not c
                           for k, s in enumerate(u.inputs) if s.producer is n)
            user.inputs[k] = c.outputs[user.inputs[k].index]
        assert common_subexpressions(g) == 1, (path.stem, n.KIND)
        assert print_module(m) == text


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_cse_merges_whole_chains(path):
    """Duplicating every non-writer node (each copy reading the copies of its producers) and
    moving one writer to the copies: cse merges it all back, level by level."""
    text = print_module(load_module(str(path)))
    m = parse_text(text)
    for g in m.graphs:
        mapping: dict[int, Stream] = {}
        for n in g.topo_order():
            if not n.outputs:
                continue
            c = _clone(g, n)
            c.inputs = [mapping.get(id(s), s) for s in n.inputs]
            for s, t in zip(n.outputs, c.outputs):
                mapping[id(s)] = t
        writer = next(n for n in g.nodes if not n.outputs)
        writer.inputs = [mapping.get(id(s), s) for s in writer.inputs]
        # The copies nobody reads are dead; dce after cse leaves the original graph.
        common_subexpressions(g)
        dead_code(g)
    assert print_module(m) == text


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_dce_removes_exactly_the_dead(path):
    text = print_module(load_module(str(path)))
    for gi, ni in _cases(path):
        m = parse_text(text)
        g = m.graphs[gi]
        c = _clone(g, g.nodes[ni])
        vals = [s for s in c.outputs if s.kind == "val"]
        if vals:  # a dead chain two nodes long
            g.add(Alu(op="neg"), vals[0])
        m.tensors.append(TensorDecl("Unused", ("N",), shorthand("dense", 1), "temp"))
        DeadCodeElimination().apply(m)
        assert print_module(m) == text


def test_dce_keeps_declarations_when_asked():
    m = load_module(str(EXAMPLES[0]))
    m.tensors.append(TensorDecl("Unused", ("N",), shorthand("dense", 1), "temp"))
    DeadCodeElimination(decls=False).apply(m)
    assert m.tensor("Unused") is not None
    DeadCodeElimination().apply(m)
    assert m.tensor("Unused") is None


def test_passes_keep_permute_steps():
    from tests.support.golden import run_cli
    path = ROOT / "tests" / "golden" / "samml" / "permute.samml"
    before = print_module(load_module(str(path)))
    r = run_cli(["opt", str(path), "-p", "cleanup"])
    assert r.exit_code == 0, r.stderr
    assert "permute" in before
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("permute")] == \
        [ln for ln in before.splitlines() if ln.startswith("permute")]


def test_cse_respects_attributes_and_constants():
    """Nodes differing only in an attribute, a constant's sign or a lane are not merged."""
    text = """tensor A[N]: dense input
tensor y[N]: dense output

graph g {
  %ra = root {tensor = A}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = dense, index = i}
  %va = array %ri {tensor = A}
  %p = alu %va {op = mulc, const = 0.0}
  %q = alu %va {op = mulc, const = -0.0}
  %r = alu %va {op = mulc, const = 0.0, lane = 1}
  %s = alu %va {op = addc, const = 0.0}
  %t = alu %p, %q {op = add}
  %u = alu %r, %s {op = add}
  %w = alu %t, %u {op = add}
  write_level %ci {tensor = y, mode = 0, format = dense}
  write_vals %w {tensor = y}
}
"""
    m = parse_text(text)
    before = print_module(m)
    assert common_subexpressions(m.graphs[0]) == 0
    assert print_module(m) == before

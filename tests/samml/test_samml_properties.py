"""Property tests of the SAMML IR: random valid graphs verify and round-trip through the text
format; randomly mutated text fails only with clean UserErrors."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import Format
from fuseflowc.ops import ALU_BINARY, ALU_SCALAR, ALU_UNARY
from fuseflowc.samml.dot import module_dot
from fuseflowc.samml.ir import (
    Alu,
    Array,
    CrdDrop,
    CrdHold,
    Fork,
    Graph,
    Intersect,
    Join,
    Module,
    Reduce,
    Repeat,
    Repsig,
    Root,
    Scan,
    Spacc1,
    TensorDecl,
    Union,
    WriteLevel,
    WriteVals,
)
from fuseflowc.samml.parser import parse_module
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
LEVELS = ("dense", "compressed")
UNARY = tuple(op for op in ALU_UNARY)
CONSTS = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-5, 5).map(float))


@st.composite
def modules(draw) -> Module:
    """A random module of one or two graphs that the verifier must accept."""
    tensors: list[TensorDecl] = []
    graphs: list[Graph] = []
    n_inputs = draw(st.integers(1, 3))
    for t in range(n_inputs):
        order = draw(st.integers(1, 3))
        levels = tuple(draw(st.sampled_from(LEVELS)) for _ in range(order))
        mode_order = tuple(draw(st.permutations(range(order))))
        dims = tuple(draw(st.one_of(st.sampled_from("NMK"), st.integers(1, 9)))
                     for _ in range(order))
        tensors.append(TensorDecl(f"T{t}", dims, Format(levels, mode_order), "input"))
    n_graphs = draw(st.integers(1, 2))
    for k in range(n_graphs):
        out = TensorDecl(f"Y{k}", ("N",), Format(("compressed",), (0,)),
                         "output" if k == n_graphs - 1 else "temp")
        # `tensors` holds the temps written by earlier graphs: a later graph may read them.
        graphs.append(_graph(draw, f"k{k}", list(tensors), out))
        tensors.append(out)
    source = draw(st.one_of(st.none(), st.just("prog.ff")))
    return Module(tensors, graphs, source)


def _lane(draw):
    return draw(st.one_of(st.none(), st.integers(0, 3)))


def _graph(draw, name: str, inputs: list[TensorDecl], out: TensorDecl) -> Graph:
    g = Graph(name)
    crds, vals, last = [], [], []
    chosen = draw(st.lists(st.sampled_from(inputs), min_size=1, max_size=3))
    for decl in chosen:
        r = g.add(Root(tensor=decl.name, lane=_lane(draw)))
        c = None
        for level in range(decl.order):
            c, r = g.add(Scan(tensor=decl.name, mode=decl.format.mode_order[level],
                              format=decl.format.levels[level], index=f"i{level}"), r)
            crds.append(c)
            if draw(st.booleans()):  # broadcast the ref across some index
                s = g.add(Repsig(index="b"), draw(st.sampled_from(crds)))
                r = g.add(Repeat(index="b"), r, s)
        last.append((decl, c, r))
    # Join pairs of last levels with intersect or union, then load values.
    while last:
        if len(last) >= 2 and draw(st.booleans()):
            (da, ca, ra), (db, cb, rb) = last.pop(), last.pop()
            if draw(st.booleans()):
                c, r1, r2 = g.add(Intersect(index="j"), ca, ra, cb, rb)
            else:
                req = draw(st.lists(st.integers(0, 1), unique=True, max_size=2))
                c, r1, r2 = g.add(Union(index="j", required=sorted(req)), ca, ra, cb, rb)
            crds.append(c)
            vals += [g.add(Array(tensor=da.name), r1), g.add(Array(tensor=db.name), r2)]
        else:
            d, _, r = last.pop()
            vals.append(g.add(Array(tensor=d.name), r))
    steps = draw(st.integers(0, 4))
    while len(vals) > 1 or steps > 0:
        steps -= 1
        choice = draw(st.integers(0, 7))
        if len(vals) > 1 and (choice < 2 or steps < -3):
            a, b = vals.pop(), vals.pop()
            vals.append(g.add(Alu(op=draw(st.sampled_from(ALU_BINARY))), a, b))
        elif choice == 2:
            vals.append(g.add(Alu(op=draw(st.sampled_from(UNARY)), lane=_lane(draw)), vals.pop()))
        elif choice == 3:
            vals.append(g.add(Alu(op=draw(st.sampled_from(ALU_SCALAR)), const=draw(CONSTS)),
                              vals.pop()))
        elif choice == 4:
            vals.append(g.add(Reduce(op=draw(st.sampled_from(("sum", "max"))), index="j"),
                              vals.pop()))
        elif choice == 5:
            s = g.add(Repsig(index="k"), draw(st.sampled_from(crds)))
            vals.append(g.add(Repeat(index="k"), vals.pop(), s))
        elif choice == 6:
            lanes = draw(st.integers(2, 3))
            parts = g.add(Fork(lanes=lanes, level=draw(st.integers(0, 2))), vals.pop())
            parts = [g.add(Alu(op="relu", lane=i), p) for i, p in enumerate(parts)]
            vals.append(g.add(Join(lanes=lanes, level=0), *parts))
        else:
            c, v = g.add(Spacc1(op="sum", index="j"), draw(st.sampled_from(crds)), vals.pop())
            crds.append(c)
            vals.append(v)
    wcrd = draw(st.sampled_from(crds))
    if draw(st.booleans()):
        cls = draw(st.sampled_from((CrdDrop, CrdHold)))
        wcrd, _ = g.add(cls(outer=draw(st.one_of(st.none(), st.just("i")))), wcrd,
                        draw(st.sampled_from(crds)))
    g.add(WriteLevel(tensor=out.name, mode=0, format="compressed"), wcrd)
    g.add(WriteVals(tensor=out.name), vals.pop())
    return g


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_random_graphs_verify_and_round_trip(m):
    verify(m)
    text = print_module(m)
    parsed = parse_module(Source("<printed>", text))
    verify(parsed)
    assert print_module(parsed) == text
    # Same shape: node kinds and attributes survive.
    for g0, g1 in zip(m.graphs, parsed.graphs):
        assert [(n.KIND, n.attrs()) for n in g0.topo_order()] == \
               [(n.KIND, n.attrs()) for n in g1.nodes]
    module_dot(parsed)


# ---- fuzz: mutated text fails cleanly ----------------------------------------------------------

def _seed_texts() -> list[str]:
    files = sorted((ROOT / "tests" / "golden" / "samml").glob("*.samml"))
    files += sorted((ROOT / "ir_examples").rglob("*.samml"))
    return [p.read_text(encoding="utf-8") for p in files if not p.name.endswith(".invalid.samml")]


SEEDS = _seed_texts()
TOKENS = ["%r0", "%c0", "%v0", "%s9", "=", ",", "{", "}", "[", "]", "(", ")", ":", "\n", "#",
          "scan", "root", "alu", "union", "fork", "join", "repeat", "tensor", "graph", "source",
          "mode", "format", "index", "op", "const", "lanes", "required", "0", "1", "-1", "2.5",
          "inf", "-inf", "1e400", "csr", "dense", "compressed", "block", "order", "blocked",
          "input", "output", "temp", '"x"', "A", "B", "\t", " ", "é", "\x00", "99999999999999"]


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 3))
        i = draw(st.integers(0, len(text)))
        if kind == 0:  # delete a span
            j = draw(st.integers(i, min(len(text), i + 12)))
            text = text[:i] + text[j:]
        elif kind == 1:  # insert a token
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == 2:  # replace a word
            j = draw(st.integers(i, min(len(text), i + 6)))
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
        else:  # duplicate or drop a whole line
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                lines.insert(k, lines[k])
            else:
                del lines[k]
            text = "\n".join(lines)
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_text_fails_cleanly(text):
    try:
        m = parse_module(Source("<fuzz>", text))
        verify(m)
    except UserError as e:
        assert e.format()
        return
    # It verified: then it prints, round-trips and draws.
    printed = print_module(m)
    assert print_module(parse_module(Source("<p>", printed))) == printed
    module_dot(m)


@settings(max_examples=40, deadline=None)
@given(mutated())
def test_mutated_text_through_cli(text):
    r = run_cli(["dot", "-"], input=text)
    assert r.exit_code in (0, 1), r.stderr
    if r.exit_code == 1:
        assert "error:" in r.stderr and not r.stdout


# ---- fuzz: graphs broken through the Python API fail cleanly -----------------------------------

ATTR_VALUES = st.one_of(st.none(), st.integers(-3, 5), st.booleans(), st.floats(),
                        st.text(max_size=3), st.lists(st.integers(-1, 3), max_size=3),
                        st.sampled_from(["A", "T0", "Y0", "dense", "compressed", "sum", "mul",
                                         "mulc", "i"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(), st.data())
def test_api_mutations_fail_cleanly(m, data):
    for _ in range(data.draw(st.integers(1, 3))):
        g = data.draw(st.sampled_from(m.graphs))
        if not g.nodes:
            continue
        n = data.draw(st.sampled_from(g.nodes))
        what = data.draw(st.integers(0, 2))
        if what == 0:  # an attribute of any type
            spec = data.draw(st.sampled_from(n.attr_specs()))
            setattr(n, spec.name, data.draw(ATTR_VALUES))
        elif what == 1 and n.inputs:  # rewire an operand to any stream of the graph
            streams = list(g.streams())
            n.inputs[data.draw(st.integers(0, len(n.inputs) - 1))] = data.draw(
                st.sampled_from(streams))
        elif n.inputs and data.draw(st.booleans()):
            n.inputs.pop()
        else:
            g.remove(n)
    try:
        verify(m)
    except UserError as e:
        assert e.format()
        return
    text = print_module(m)
    assert print_module(parse_module(Source("<p>", text))) == text
    module_dot(m)

"""Regions read without Lark (fuseflowc.fuse.fastregions), against the Lark parser alone
(`read_items(..., fast=False)`): the same items with the same locations on every fused-IR
golden and on `fuse`'s output of every example program, with every region taken by the fast
reader; on random expressions (spacing, parentheses, names Lark's lexer splits, keywords,
numbers out of range, deep nesting) and random edits of region lines, the same items or the
same error, word for word."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import Source
from fuseflowc.fuse import fastlines, ir
from fuseflowc.fuse.printer import fused_str
from tests.support.fused_read import apply_edits, outcome

ROOT = Path(__file__).resolve().parents[2]


def golden_texts() -> list[tuple[str, str]]:
    """(name, fused IR) of every fused-IR golden: `fuse` stdouts and hand-written files."""
    out = []
    for p in sorted((ROOT / "tests/golden/fuse").rglob("*.expected")):
        text = p.read_text()
        if "--- stdout\n# fuseflowc fused einsum IR" in text:
            body = text.split("--- stdout\n", 1)[1].split("\n--- ", 1)[0]
            out.append((p.name, body + "\n"))
    out += [(p.name, p.read_text()) for p in sorted((ROOT / "tests/golden/fuse").rglob("*.fused"))]
    return out


def regions_taken(text: str) -> tuple[int, int]:
    items, _ = fastlines.split(text if text.endswith("\n") else text + "\n", Source("<f>", text))
    return (sum(isinstance(x, ir.Region) for _, x in items),
            sum(line.startswith("region ") for line in text.split("\n")))


def test_goldens_read_alike():
    texts = golden_texts()
    assert len(texts) >= 30
    for name, text in texts:
        assert outcome(text, True) == outcome(text, False), name


@cache
def example_texts() -> dict[str, str]:
    paths = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ir_examples").rglob("*.ff"))
    return {p: fused_str(pipeline.fuse(pipeline.load_program(str(ROOT / p)))) for p in paths}


#: Examples with more regions are unrolled copies of smaller ones' regions (gpt3_layers,
#: rnn_stacked): Lark alone takes 7 s on the four; compared in full by hand, see the commit.
MOST_REGIONS_COMPARED = 120


def test_every_example_reads_alike_and_every_region_is_taken():
    texts = example_texts()
    assert len(texts) >= 70
    taken = total = compared = 0
    for path, text in texts.items():
        k, n = regions_taken(text)
        taken, total = taken + k, total + n
        if n <= MOST_REGIONS_COMPARED:
            assert outcome(text, True) == outcome(text, False), path
            compared += 1
    assert total > 1000 and taken == total and compared >= 70


REGION = """region r group g {{
  statements y
  index i : N
  index j : 4
  expr e0 y[i,j] = {expr} {{i=i, j=j}} writes
  view v0 a[i,j] input (i, j)
  view v1 b[j] inline y (j)
  edge i -> j : format a v0 by y
  edge i -> j : order by y
  order i -> j : 1
  parallelize y: i0 = i by 2
}}
"""
NAMES = ["a", "b_1", "x.y", "_", "sum", "max", "summary", "maxi", "input", "order", "writes",
         "su", "ma", "region"]
NUMBERS = ["0", "2", "0.5", ".5", "1.", "1e3", "2.5E-3", "00", "1e999", "1e", "1.2.3"]
SPACE = st.sampled_from(["", " ", "  ", "\t"])


def expressions():
    """Texts of random expressions: valid ones in odd spelling and near-misses."""
    leaf = st.one_of(
        st.builds(lambda n, idx: f"{n}[{','.join(idx)}]", st.sampled_from(NAMES),
                  st.lists(st.sampled_from(["i", "j", "k", "sum", "i j"]), max_size=3)),
        st.sampled_from(NUMBERS))

    def grow(sub):
        return st.one_of(
            st.builds(lambda a, op, b, s, t: f"{a}{s}{op}{t}{b}", sub,
                      st.sampled_from(["+", "-", "*", "/", "", "**"]), sub, SPACE, SPACE),
            st.builds(lambda a, s: f"-{s}{a}", sub, SPACE),
            st.builds(lambda a, s: f"({s}{a}{s})", sub, SPACE),
            st.builds(lambda f, args: f"{f}({', '.join(args)})",
                      st.sampled_from(["exp", "max", "sum", "relu", "maxi", "order"]),
                      st.lists(sub, min_size=0, max_size=3)),
            st.builds(lambda op, idx, b: f"{op}[{','.join(idx)}]({b})",
                      st.sampled_from(["sum", "max", "summ", "exp"]),
                      st.lists(st.sampled_from(["i", "j", "input"]), max_size=2), sub))
    return st.recursive(leaf, grow, max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_random_expressions_read_alike(expr):
    text = REGION.format(expr=expr)
    assert outcome(text, True) == outcome(text, False)


def test_deep_and_long_expressions_read_alike():
    for expr in ["(" * 60 + "a[i]" + ")" * 60, " + ".join(["a[i]"] * 120),
                 "-" * 150 + "1", "exp(" * 99 + "1" + ")" * 99, " * ".join(["2"] * 30)]:
        text = REGION.format(expr=expr)
        assert outcome(text, True) == outcome(text, False)


def test_plain_expressions_are_taken():
    """The fast reader does read a well-formed region (the tests above cannot pass by it
    leaving everything to Lark)."""
    text = REGION.format(expr="-(a[i,j] + 2) * sum[k](exp(b[j] / .5, 1e3)) - -x.y[]")
    assert regions_taken(text) == (1, 1)
    assert outcome(text, True) == outcome(text, False)


EDITS = [("  expr", "\texpr"), ("  view", "  view  "), (" : ", ":"), ("statements ",
         "statements order, "), (" by ", " by 0"), ("order i", "order sum -> i"),
         (": 1", ": 99999999999999999999"), (": 1", ": 2"), ("by 2", "by 0"),
         ("by 2", "by 99999"), ("(", "(("), ("[i,j]", "[i, j]"), ("[i,j]", "[input,j]"),
         ("}\n", "  }\n"), ("\n  ", "\n  # c\n  "), ("\n  ", "\n\n  "),
         (" writes", " writes # w"), ("{i=i", "{ i = i"), ("inline y", "inline order"),
         ("inline y", "shared y"), ("input (", "permuted ("), ("input (", "output ("),
         ("format a v0", "format a"), ("order by", "output by"), (": N", ": 0"),
         (": N", ": 007"), (": 4", ": 99999999999999999999"), ("group g", "unfused"),
         ("group g", "group sum"), ("region r", "region input"), ("\n}", "\n}}"),
         ("  index j : 4\n", ""), (" writes", ""), ("i -> j : 1", " : 0"),
         ("statements y", "statements y, z"), ("\n", "\r\n"), ("y (j)", "y ()")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 10**6)), max_size=3),
       st.sampled_from(["a[i,j] * b[j]", "sum[k](a[i,k]) / 2"]), st.booleans())
def test_random_region_edits_read_alike(edits, expr, twice):
    text = REGION.format(expr=expr)
    text = "tensor a[N, 4] : dense input\n" + (text + "\n" + text if twice else text)
    text = apply_edits(text, edits)
    assert outcome(text, True) == outcome(text, False)


@pytest.mark.parametrize("expr", ["summary[i]", "maxi(a[i])", "1e999", "a[i] b[i]",
                                  "sum[i](a[i]", "input[i]"])
def test_what_the_fast_reader_leaves_is_read_by_lark(expr):
    """Lark refuses all but the keyword-named tensor, which it reads as a name."""
    text = REGION.format(expr=expr)
    assert regions_taken(text)[0] == 0
    assert outcome(text, True) == outcome(text, False)
    assert (outcome(text, False)[0] == "error") == (expr != "input[i]")

"""The fused IR's plain lines read without Lark (fuseflowc.fuse.fastlines): the oracle is the
Lark parser alone (`read_items(..., fast=False)`): the same items with the same locations on
the examples, and on random edits of a fused text (lines moved into and out of regions,
keywords as names, comments, braces, other spacing, out-of-range numbers) the same items or the
same error, word for word."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import Source
from fuseflowc.fuse import fastlines
from fuseflowc.fuse.printer import fused_str
from fuseflowc.syntax import parser
from tests.fuse.test_fuse_rebind import loop_program
from tests.support.fused_read import apply_edits, outcome
from tests.support.lower_harness import load_text

EXAMPLES = ["ir_examples/models/gcn_deep/gcn_deep_reuse.ff",
            "ir_examples/kernels/spmm_decomposed.ff",
            "ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff",
            "ir_examples/kernels/nested_matmul_sweep.ff"]


@cache
def fused_text(path: str) -> str:
    return fused_str(pipeline.fuse(pipeline.load_program(path)))


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_read_alike(path):
    text = fused_text(path)
    fast, _ = fastlines.split(text, Source("<f>", text))
    assert fast                               # lines are taken
    assert outcome(text, True) == outcome(text, False)


EDITS = [("tensor ", "tensor  "), ("tensor ", "tensor input"), ("] : ", "]: "),
         (" input", " input # c"), (" input", " output block 2"), ("[", "[0, "),
         ("[", "[99999999999999999999, "), ("[", "[sum, "), ("dense", "dense(4)"),
         ("dense", "region"), ("reuse l ", "reuse l 00"), ("reuse l ", "reuse sum "),
         (" = 0 {", " = 0 {}\n}\ntensor q[N] : dense input\nreuse l 9 = 0 {"),
         (", ", ","), ("{", "{ # }"), ("}", "} # {"), ("}", "}\n}"), ("\n", "\n  "),
         ("\n", "\n}\n"), ("\n", "\n# {\n"), ("(dense, ", "(dense, singleton, "),
         ("compressed", "compressed(0)"), ("region ", "tensor x[N] : dense input\nregion "),
         ("statements", "tensor x[N] : dense input\n  statements"), ("=", "= 4"),
         ("\n  view", "\ntensor x[N] : dense input\n  view"),
         ("\n  index", "\nreuse l 0: a, b\n  index"),
         ("\n  edge", "\nreuse l 1 = 0 {a = b}\n  edge"),
         ("intermediate", "intermediate block"), ("dense input", "dense"),
         ("dense input", "(dense) order (0) input"), ("dense input", "(dense) order (1) input"),
         ("dense input", "(dense) order (00) input"), ("dense input", "dense permuted of x"),
         ("dense input", "dense permuted of order"), ("source", "source \"a\"\nsource"),
         ("source", "dim n = 0\nsource"), ("source", "dim n = 007\nwave w 3\nsource"),
         ("source", "wave max 2\nsource"), ("source", "dim X = 99999999999999999999\nsource")]


@cache
def loop_text() -> str:
    """A small reused loop's fused IR: tensor, reuse and binding lines, regions."""
    return fused_str(pipeline.fuse(load_text(loop_program("fold", 3, "same", "csr", True, False,
                                                          "relu"))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["loop", EXAMPLES[1]]), st.lists(st.tuples(st.sampled_from(EDITS),
                                                         st.integers(0, 10**6)), max_size=3))
def test_random_edits_read_alike(path, edits):
    text = loop_text() if path == "loop" else fused_text(path)
    text = apply_edits(text, edits)
    assert outcome(text, True) == outcome(text, False)


def another_terminal_matches(word: str) -> bool:
    others = [t for t in parser("fused.lark").terminals if t.name != "NAME"]
    return any(re.fullmatch(t.pattern.to_regexp(), word) for t in others)


@given(st.from_regex(r"[A-Za-z_][A-Za-z_0-9.]{0,12}", fullmatch=True))
def test_a_word_no_other_terminal_matches_is_no_keyword(word):
    assert another_terminal_matches(word) == (word in fastlines.keywords())


def test_every_keyword_is_matched_by_another_terminal():
    assert {"tensor", "reuse", "input", "sum", "blocked"} <= fastlines.keywords()
    assert all(another_terminal_matches(w) for w in fastlines.keywords())


def test_keywords_are_the_grammars():
    """fastlines.KEYWORDS, written out so reading needs no Lark, is what the grammar's
    terminals other than NAME spell out in full."""
    derived = set()
    for t in parser("fused.lark").terminals:
        if t.name != "NAME":
            pattern = re.compile(t.pattern.to_regexp())
            derived.update(w for w in re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", t.pattern.value)
                           if pattern.fullmatch(w))
    assert fastlines.KEYWORDS == derived

"""The prebuilt parsers shipped next to the grammars (fuseflowc.syntax, grammars/lalr_*.py).

A command writes no file it was not asked to write: parsing leaves the temporary directory
empty (Lark's own `cache=True` left /tmp/.lark_cache_* behind). The shipped tables are current
(regenerate with `make parse-tables`), are used when current, are ignored when stale or absent,
and every way of getting a parser parses every example into the same tree, positions included.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import lark
import pytest
from lark import Token, Tree

from fuseflowc import syntax

ROOT = Path(__file__).resolve().parents[2]
_EXAMPLES = {"program.lark": "ff", "fused.lark": "ff", "samml.lark": "samml"}


def _module(grammar_file: str, start: str):
    return importlib.import_module(f"fuseflowc.grammars.{syntax.table_module(grammar_file, start)}")


def _shape(node) -> tuple:
    """A tree as nested tuples, with every node's and token's position."""
    if isinstance(node, Token):
        return ("token", node.type, str(node), node.line, node.column, node.end_line,
                node.end_column)
    if isinstance(node, Tree):
        m = node.meta
        pos = (getattr(m, "line", None), getattr(m, "column", None),
               getattr(m, "end_line", None), getattr(m, "end_column", None))
        return (str(node.data), pos, tuple(_shape(c) for c in node.children))
    return ("none", node)


@pytest.fixture(scope="module")
def texts() -> dict[str, list[str]]:
    """For each grammar file, example texts it parses (fused IR made by `fuse` from the .ff)."""
    ffs = sorted((ROOT / "ir_examples").glob("**/*.ff"))[:12]
    sammls = sorted((ROOT / "ir_examples").glob("**/*.samml"))[:12]
    fused = [subprocess.run([sys.executable, "-m", "fuseflowc", "fuse", str(f)],
                            capture_output=True, text=True).stdout for f in ffs[:3]]
    return {"program.lark": [f.read_text() for f in ffs],
            "fused.lark": [t for t in fused if t],
            "samml.lark": [f.read_text() for f in sammls]}


@pytest.mark.parametrize(("grammar_file", "start"), syntax.PARSERS)
def test_shipped_tables_are_current(grammar_file, start):
    mod = _module(grammar_file, start)
    assert mod.GRAMMAR_KEY == syntax.grammar_key(grammar_file, start), (
        f"grammars/{syntax.table_module(grammar_file, start)}.py is stale: run make parse-tables")


@pytest.mark.parametrize(("grammar_file", "start"), syntax.PARSERS)
def test_current_tables_are_used(grammar_file, start):
    # with another Lark than the one that made them, the tables are ignored (built in memory)
    assert (_module(grammar_file, start).LARK_VERSION != lark.__version__
            or syntax._prebuilt(grammar_file, start) is not None)


@pytest.mark.parametrize("how", ["stale grammar", "other lark", "absent"])
def test_stale_or_absent_tables_fall_back_to_the_same_parse(how, monkeypatch, texts):
    grammar_file, start = "program.lark", "start"
    mod = _module(grammar_file, start)
    if how == "stale grammar":
        monkeypatch.setattr(mod, "GRAMMAR_KEY", "0" * 64)
    elif how == "other lark":
        monkeypatch.setattr(mod, "LARK_VERSION", "0.0.0")
    else:
        monkeypatch.setattr(syntax, "table_module", lambda g, s: "lalr_no_such_table")
    assert syntax._prebuilt(grammar_file, start) is None
    syntax.parser.cache_clear()
    try:
        fallback = syntax.parser(grammar_file, start)
        assert fallback.options.cache is False
        built = syntax.build_parser(grammar_file, start)
        for text in texts[grammar_file]:
            assert _shape(fallback.parse(text)) == _shape(built.parse(text))
    finally:
        syntax.parser.cache_clear()


@pytest.mark.parametrize(("grammar_file", "start"),
                         [p for p in syntax.PARSERS if p[1] == "start"])
def test_loaded_parser_parses_like_the_built_one(grammar_file, start, texts):
    loaded, built = syntax.parser(grammar_file, start), syntax.build_parser(grammar_file, start)
    assert texts[grammar_file]
    for text in texts[grammar_file]:
        assert _shape(loaded.parse(text)) == _shape(built.parse(text))
    for text in ("}", "graph", "x = ", "\x00"):  # errors: same exception, same place
        errs = []
        for p in (loaded, built):
            with pytest.raises(lark.exceptions.UnexpectedInput) as e:
                p.parse(text)
            # (Lark's expected terminals are a set: their order in its message varies)
            errs.append((type(e.value), getattr(e.value, "line", None),
                         getattr(e.value, "column", None),
                         sorted(getattr(e.value, "expected", None) or ()),
                         getattr(e.value, "char", None)))
        assert errs[0] == errs[1]


def test_commands_write_nothing_to_the_temporary_directory(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp)}
    ff = ROOT / "ir_examples" / "kernels" / "spmv.ff"
    run = lambda args, stdin=None: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "fuseflowc", *args], input=stdin, capture_output=True,
        text=True, env=env, cwd=tmp_path)
    fused = run(["fuse", str(ff)])
    samml = run(["lower", "-"], fused.stdout)
    opt = run(["opt", "-p", "cleanup", "-"], samml.stdout)
    check = run(["check", str(ff)])
    assert [fused.returncode, samml.returncode, opt.returncode, check.returncode] == [0] * 4
    assert "graph" in opt.stdout
    assert sorted(os.listdir(tmp)) == []
    assert sorted(os.listdir(tmp_path)) == ["tmp"]

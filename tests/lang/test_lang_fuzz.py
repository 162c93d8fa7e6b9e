"""Mutation fuzzing of the language front end.

Example programs are mutated (characters and tokens deleted, inserted, replaced, duplicated,
swapped) with a fixed seed. Parsing and checking a mutant must either succeed or raise a
UserError, never another exception; through the CLI, `check` must exit 0 or 1 and never report
an internal error. Mutants keep their file's path, so includes still resolve (or fail cleanly).
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import program_str
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples").rglob("*.ff"))
COMMENT = re.compile(r"#[^\n]*")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+\.?\d*(?:[eE][+-]?\d+)?|->|\S")

# Fragments a mutation may insert: the language's own tokens (so mutants stay near-valid and
# reach the checker), plus characters it does not know.
FRAGMENTS = [
    "dim", "tensor", "fuse", "order", "parallelize", "block", "output", "include", "by",
    "blocked", "sum", "max", "min", "mask", "exp", "relu", "gelu", "softmax", "dense",
    "compressed", "singleton", "csr", "csc", "dcsr", "bcsr", "bdense", "sparse", "(", ")",
    "[", "]", ",", ":", "=", "+", "-", "*", "/", "->", "#", '"', '"x.ff"', '""', "0", "1", "2.5",
    "1e999", "-1", "i", "j", "k", "A", "x", "y", "I", "J", "\n", " ", "@", "$", "é", "\t",
]


def _mutate(text: str, rng: random.Random) -> str:
    """Apply 1-3 random character- or token-level edits to `text`."""
    for _ in range(rng.randint(1, 3)):
        toks = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
        op = rng.choice(["del_char", "ins_char", "rep_char", "del_tok", "ins_tok", "rep_tok",
                         "dup_tok", "swap_tok"])
        if op.endswith("char") or not toks:
            k = rng.randrange(len(text) + 1)
            ch = rng.choice(FRAGMENTS) if rng.random() < 0.5 else chr(rng.randrange(32, 127))
            if op == "del_char":
                text = text[:k] + text[k + 1:]
            elif op == "ins_char":
                text = text[:k] + ch + text[k:]
            else:
                text = text[:k] + ch + text[k + 1:]
            continue
        a, b = rng.choice(toks)
        frag = rng.choice(FRAGMENTS)
        if op == "del_tok":
            text = text[:a] + text[b:]
        elif op == "ins_tok":
            text = text[:a] + frag + " " + text[a:]
        elif op == "rep_tok":
            text = text[:a] + frag + text[b:]
        elif op == "dup_tok":
            text = text[:b] + " " + text[a:b] + text[b:]
        else:
            c, d = rng.choice(toks)
            if (a, b) > (c, d):
                (a, b), (c, d) = (c, d), (a, b)
            if b <= c:
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return text


def _mutants(n: int, seed: int) -> list[tuple[Path, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        path = rng.choice(EXAMPLES)
        text = path.read_text(encoding="utf-8")
        if rng.random() < 0.8:  # edits inside comments change nothing: mostly mutate code
            text = COMMENT.sub("", text)
        out.append((path, _mutate(text, rng)))
    return out


def test_mutated_programs_fail_only_with_user_errors():
    outcomes = {"ok": 0, "error": 0}
    for path, text in _mutants(600, seed=20261121):
        try:
            p = check(parse_program(Source(str(path), text)))
        except UserError as e:
            # Every diagnostic is printable, and a located one points into a real line.
            assert e.format()
            for d in e.diagnostics:
                if d.loc is not None and d.loc.source is not None:
                    assert d.loc.line >= 1 and d.loc.col >= 1
            outcomes["error"] += 1
            continue
        # A mutant that checks also round-trips.
        text1 = program_str(p)
        assert program_str(check(parse_program(Source("<printed>", text1)))) == text1
        outcomes["ok"] += 1
    # The mutants exercise both outcomes (a fuzzer that only produces syntax errors is weak).
    assert outcomes["ok"] >= 30 and outcomes["error"] >= 300, outcomes


def test_mutated_programs_through_the_cli(tmp_path):
    """The check command on mutants: exit 0 or 1, never an internal error (exit 3)."""
    codes = set()
    for k, (path, text) in enumerate(_mutants(120, seed=7)):
        # A copy of the example's directory, so that includes resolve as they would beside the
        # original (never write into ir_examples/: other tests glob it).
        d = tmp_path / str(k)
        shutil.copytree(path.parent, d)
        target = d / path.name
        target.write_text(text, encoding="utf-8")
        r = run_cli(["check", str(target)])
        assert r.exit_code in (0, 1), (text, r.stderr)
        assert "internal error" not in r.stderr
        assert r.exit_code == 0 or "error:" in r.stderr
        codes.add(r.exit_code)
    assert codes == {0, 1}


@pytest.mark.parametrize("text", [
    "",                                   # empty program
    "# only a comment",
    "\x00",
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = " + "(" * 3000 + "x[i]" + ")" * 3000,
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = " + "relu(" * 3000 + "x[i]" + ")" * 3000,
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = " + " + ".join(["x[i]"] * 3000),
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = x[i] * 1e999",
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = x[i] * 1e-999",
    "dim I = 99999999999999999999999999\ntensor x[I] : dense",
    'include "."',
    'include "/"',
    "dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = x[i]\nparallelize y: i by 99999999999999999999",
])
def test_edge_inputs(text):
    """Odd inputs: empty, NUL, very deep nesting, out-of-range numbers, odd includes."""
    try:
        p = check(parse_program(Source(str(ROOT / "ir_examples" / "edge.ff"), text)))
    except UserError as e:
        assert e.format()
        return
    program_str(p)


def test_mutated_schedule_overrides():
    """--schedule texts are parsed and checked like the program: mutants fail only cleanly."""
    from fuseflowc.lang.load import load_program

    rng = random.Random(11)
    base = ["order AX1: i -> k -> f", "fuse a: AX1, Z1", "parallelize Z1: i by 4",
            "block A: 4", "output Z1", "fuse b: Y, Z2"]
    program = str(ROOT / "ir_examples/models/gcn/gcn_partial.ff")
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        texts = tuple(_mutate(rng.choice(base), rng) for _ in range(rng.randint(1, 3)))
        try:
            load_program(program, texts, unfused=rng.random() < 0.3)
            outcomes["ok"] += 1
        except UserError as e:
            assert e.format()
            outcomes["error"] += 1
    assert outcomes["ok"] >= 5 and outcomes["error"] >= 100, outcomes

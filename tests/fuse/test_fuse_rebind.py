"""Reused iterations fused once (fuseflowc.fuse.rebind): a later iteration of a `reuse` loop
that is iteration 0 rebound is written `reuse l K = 0 {...}` and lowered by renaming iteration
0's graphs; the oracle is the same program fused and lowered iteration by iteration
(`FuseOptions(rebind=False)`): the same regions once the bindings are expanded, the same
SAMML text, so the same simulation (the reference check of reused loops is
tests/e2e/test_lists.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc import pipeline
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.printer import fused_str
from fuseflowc.samml.printer import print_module
from tests.support.lower_harness import load_text

# How iteration l reads the list B: same element, the element before (X for l = 0: iteration
# 0 differs from the others), reversed, or through an index list.
READS = {"same": "B[l; i, h]", "shift": "(B[l - 1; i, h] else X[i, h])",
         "reverse": "B[reverse(l); i, h]", "indirect": "B[p[l]; i, h]"}


def loop_program(kind: str, n: int, read: str, fmt: str, fused: bool, order: bool,
                 act: str) -> str:
    state = {"fold": "tensor S[N, F] : dense", "scan": "tensor S[L; N, F] : dense",
             "map": "tensor S[L; N, F] : dense"}[kind]
    lines = [f"dim L = {n}, N = 3, F = 3", "tensor X[N, F] : dense",
             f"tensor W[L; F, F] : {fmt}", "tensor B[L; N, F] : dense",
             "tensor T[N, F] : dense", state, f"index p[L] = {', '.join(map(str, range(n)))}"]
    src = "X" if kind == "map" else "S"
    head = "map l in L {" if kind == "map" else f"S = {kind} l in L from X {{"
    lhs = "S[l; i, h]" if kind == "map" else "S[i, h]"
    lines += [head, f"  T[i, h] = sum[f]({src}[i, f] * W[l; f, h])",
              f"  {lhs} = {act}(T[i, h] + 0.5 * {READS[read]})", "}"]
    if fused:
        lines.append("fuse layer: T, S")
    if order:
        lines.append("order T: i -> h -> f")
    lines.append("schedule l: reuse")
    return "\n".join(lines) + "\n"


def compiled(fused, passes=None) -> str:
    return print_module(pipeline.compile(fused, pipeline.CompileOptions(passes=passes)).module)


def assert_same_as_full(program) -> dict:
    """The bound form against the full one; returns the bindings."""
    bound = fuse_program(program)
    full = fuse_program(program, options=FuseOptions(rebind=False))
    assert not full.bindings
    text = fused_str(bound)
    parsed = parse_fused(Source("<bound>", text))
    assert fused_str(parsed) == text                        # round trip of the short form
    assert parsed.bindings == bound.bindings
    parsed.bindings = {}
    assert fused_str(parsed) == fused_str(full)             # expanded: the full regions
    assert compiled(bound) == compiled(full)                # and the same SAMML
    assert compiled(parse_fused(Source("<bound>", text))) == compiled(full)
    return bound.bindings


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["fold", "scan", "map"]), st.integers(1, 4), st.sampled_from(sorted(READS)),
       st.sampled_from(["dense", "csr", "dcsr"]), st.booleans(), st.booleans(),
       st.sampled_from(["relu", "tanh", ""]))
def test_bound_iterations_compile_as_the_full_unrolling(kind, n, read, fmt, fused, order, act):
    program = load_text(loop_program(kind, n, read, fmt, fused, order, act))
    bindings = assert_same_as_full(program)
    # shift: iteration 0 reads X twice where the others read two tensors: none is rebound
    want = set() if read == "shift" else {("l", k) for k in range(1, n)}
    assert set(bindings) == want


def test_a_layer_that_differs_is_fused_in_full():
    """Iteration 0 reads X where the others read B[l - 1]: no later iteration is iteration 0
    rebound, all are fused in full; with an order for one layer's region, neither."""
    text = loop_program("fold", 4, "shift", "dense", True, False, "relu")
    assert assert_same_as_full(load_text(text)) == {}
    same = loop_program("fold", 4, "same", "dense", True, False, "relu")
    assert set(assert_same_as_full(load_text(same))) == {("l", 1), ("l", 2), ("l", 3)}
    named = fuse_program(load_text(same), options=FuseOptions(orders={"layer__2": 0}))
    assert named.bindings == {}
    assert fuse_program(load_text(same), options=FuseOptions(share=True)).bindings == {}


def test_the_binding_line_names_every_renamed_name():
    text = fused_str(fuse_program(load_text(
        loop_program("fold", 3, "same", "dense", True, False, "relu"))))
    assert ("reuse l 1 = 0 {layer__0 = layer__1, T__0 = T__1, S__0 = S__1, X = S__0, "
            "W__0 = W__1, B__0 = B__1}\n") in text
    assert "region layer__1 " not in text and "region layer__0 " in text
    # a permuted copy is renamed with its tensor (T's order reads W transposed)
    ordered = fused_str(fuse_program(load_text(
        loop_program("fold", 3, "same", "dense", False, True, "relu"))))
    assert "W__0__T = W__1__T" in ordered and "tensor W__2__T[F, F]" in ordered


def _bound_text() -> str:
    return fused_str(fuse_program(load_text(
        loop_program("fold", 3, "same", "dense", True, False, "relu"))))


@pytest.mark.parametrize("edit,message", [
    (("reuse l 2 = 0", "reuse l 5 = 0"), "<f>:{line}:1: error: reuse l 5 = 0: loop l has no "
                                          "iteration 5 (its `reuse l K: ...` lines list "
                                          "iterations 0 to 2)"),
    (("reuse l 2 = 0", "reuse q 2 = 0"), "no `reuse q 0: ...` line lists"),
    (("reuse l 2 = 0", "reuse l 2 = 1"), "a reused iteration rebinds iteration 0"),
    (("reuse l 2 = 0", "reuse l 1 = 0"), "reuse l 1 = 0 is given twice"),
    (("T__0 = T__2", "T__0 = T__1"), "iteration 0's statements renamed are T__1, S, not "
                                     "iteration 2's (T__2, S)"),
    (("S__0 = S,", "S__0 = S, S__0 = S,"), "S__0 is bound twice"),
    (("W__0 = W__2", "W__0 = W__9"), "tensor 'W__9'"),
])
def test_bad_binding_lines_are_located_errors(edit, message):
    text = _bound_text()
    assert edit[0] in text
    bad = text.replace(edit[0], edit[1], 1)
    line = next(k for k, x in enumerate(bad.splitlines(), 1) if edit[1] in x)
    with pytest.raises(UserError) as e:
        parse_fused(Source("<f>", bad))
    assert message.format(line=line) in e.value.format()


def test_the_deep_gcn_reuse_model_lowers_as_before():
    """A model of the examples: the bound fused IR lowers to the SAMML of the full one."""
    program = pipeline.load_program("ir_examples/models/gcn_deep/gcn_deep_reuse.ff")
    bindings = assert_same_as_full(program)
    assert len(bindings) == 7


@pytest.mark.parametrize("read,note", [
    ("same", "note: reused loop l: iterations 1 to 3 are iteration 0 rebound (fused once: "
             "`reuse l K = 0 {...}` lines)\n"),
    ("shift", "note: reused loop l: iterations 1 to 3 differ from iteration 0 (other "
              "statements, formats or directives) and are fused in full\n"),
])
def test_fuse_says_which_iterations_are_fused_once(tmp_path, read, note):
    from click.testing import CliRunner

    from fuseflowc.cli import main
    path = tmp_path / "loop.ff"
    path.write_text(loop_program("fold", 4, read, "dense", True, False, "relu"))
    result = CliRunner().invoke(main, ["fuse", str(path)])
    assert result.exit_code == 0, result.stderr
    assert note in result.stderr
    assert ("reuse l 3 = 0 {" in result.stdout) == (read == "same")


@pytest.mark.parametrize("cut,want", [
    ("T__0", set()),                         # no template: the loop is fused in full
    ("T__1", {("l", 2), ("l", 3)}),          # iteration 1 fused in full, the others bound
    ("T__3", {("l", 1), ("l", 2)}),
])
def test_a_program_holding_part_of_a_loop_binds_only_whole_iterations(cut, want):
    """A program cut down to part of a reused loop (as `plan` costs one region) still lists
    every iteration's statements in its loop schedule: an iteration with a statement missing
    is fused in full, never looked up (issue 23: StopIteration from plan on
    gcn_deep_reuse.ff)."""
    from dataclasses import replace
    whole = load_text(loop_program("fold", 4, "same", "dense", False, False, "relu"))
    assert cut in {s.name for s in whole.statements}
    program = replace(whole, statements=[s for s in whole.statements if s.name != cut])
    assert any(cut in names for _, its in program.reuse for names in its)
    assert set(assert_same_as_full(program)) == want

"""The fused IR verifier takes a reused iteration's regions (iteration 0's renamed, `reuse l K =
0 {...}`) as checked when their template passed and the renaming keeps everything the
structural checks read; it re-checks roles and what earlier regions wrote. The oracle: the
same verifier checking every region in full gives the same result, errors and their locations
included, on the deep GCN's fused IR with its bindings and declarations edited."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse import verify
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.printer import fused_str
from fuseflowc.pipeline import fuse, load_program

_TEXT = fused_str(fuse(load_program("ir_examples/models/gcn_deep/gcn_deep_reuse.ff")))
_LINES = _TEXT.splitlines()
_TENSORS = re.findall(r"^tensor (\w+)", _TEXT, re.M)
_REUSE = [k for k, x in enumerate(_LINES) if re.match(r"reuse l \d+ = 0 \{", x)]
_DECLS = [k for k, x in enumerate(_LINES) if x.startswith("tensor ")]


def _outcome(text: str, shortcut: bool) -> str:
    """The fused IR printed back, or every diagnostic with its location."""
    with mock.patch.object(verify, "_copy_clean", verify._copy_clean if shortcut
                           else (lambda *a: False)):
        try:
            return fused_str(parse_fused(Source("<edited>", text)))
        except UserError as e:
            return "\n".join(f"{d.loc.line if d.loc else '-'}:{d.loc.col if d.loc else '-'}: "
                             f"{d.severity}: {d.message}" for d in e.diagnostics)


@st.composite
def _edit(draw) -> str:
    lines = list(_LINES)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["bind", "decl", "swap"]))
        if kind == "bind":   # bind a name of a reuse line to another tensor (or none)
            k = draw(st.sampled_from(_REUSE))
            pairs = re.findall(r"(\w+) = (\w+)", lines[k].split("{", 1)[1])
            a, b = draw(st.sampled_from(pairs))
            c = draw(st.sampled_from([*_TENSORS, "Nowhere"]))
            lines[k] = lines[k].replace(f"{a} = {b}", f"{a} = {c}")
        elif kind == "decl":   # declare a tensor with another format, role or dims
            k = draw(st.sampled_from(_DECLS))
            old, new = draw(st.sampled_from([(" dense ", " csr "), (" csr ", " dense "),
                                             (" dense ", " csc "), (" csr ", " csc "),
                                             (" dense ", " (dense) "),
                                             (" intermediate", " input"),
                                             (" input", " intermediate"),
                                             (" intermediate", " output"),
                                             ("[N, H]", "[N, N]"), ("[H, H]", "[H, C]")]))
            lines[k] = lines[k].replace(old, new, 1)
        else:   # two reuse lines' iterations exchanged (reads before writes)
            j, k = draw(st.sampled_from(_REUSE)), draw(st.sampled_from(_REUSE))
            lines[j], lines[k] = lines[k], lines[j]
    return "\n".join(lines) + "\n"


def test_the_models_fused_ir_verifies_alike_and_uses_the_shortcut():
    calls = []
    real = verify._copy_clean

    def spy(*a):
        calls.append(real(*a))
        return calls[-1]
    with mock.patch.object(verify, "_copy_clean", spy):
        parsed = parse_fused(Source("<gcn>", _TEXT))
    assert fused_str(parsed) == _TEXT == _outcome(_TEXT, False)
    copies = [r for r in parsed.regions if r.template is not None]
    assert len(copies) == 7 * 3 and len(calls) == len(copies) and all(calls)   # layers 1-7


@settings(max_examples=40, deadline=None)
@given(_edit())
def test_edited_bindings_and_declarations_verify_as_in_full(text):
    assert _outcome(text, True) == _outcome(text, False)


@pytest.mark.parametrize("old, new", [
    ("tensor AX__3[N, H] : dense intermediate", "tensor AX__3[N, H] : csc intermediate"),
    ("tensor Z__2[N, H] : dense intermediate", "tensor Z__2[N, H] : dense input"),
    ("tensor Bs__2[N, H] : dense intermediate", "tensor Bs__2[N, N] : dense intermediate"),
    ("W__0 = W__3,", "W__0 = Nowhere,"),
    ("AX__0 = AX__2,", "AX__0 = AX__1,"),
])
def test_an_edit_a_copy_inherits_no_check_for_is_reported_as_in_full(old, new):
    assert old in _TEXT
    text = _TEXT.replace(old, new, 1)
    got = _outcome(text, True)
    assert got == _outcome(text, False) and "error" in got

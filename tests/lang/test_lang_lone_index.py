"""An index that occurs in one factor only, and nowhere else in the statement, is summed over
that factor alone: legal, but usually a typo (`Z[i,h] = X[i,f] * W1[g,h]` is
sum[f](X) * sum[g](W1)). It is a located warning unless the sum is written out (issue #22)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source
from fuseflowc.lang.load import program_from_source
from tests.support.golden import run_cli

TYPO = """dim I = 3, F = 4, G = 4, H = 2
tensor X[I, F] : dense
tensor W1[G, H] : dense
tensor Z[I, H] : dense
Z[i,h] = X[i,f] * W1[g,h]
"""


def test_the_typo_warns_at_each_lone_index_and_still_checks(tmp_path):
    (tmp_path / "typo.ff").write_text(TYPO)
    r = run_cli(["check", str(tmp_path / "typo.ff")])
    assert r.exit_code == 0
    assert "Z[i,h] = sum[f](X[i,f]) * sum[g](W1[g,h])" in r.stdout
    p = tmp_path / "typo.ff"
    assert r.stderr.splitlines() == [
        f"{p}:5:14: warning: index f occurs only in X[i,f] and nowhere else in the statement, "
        f"so X alone is summed over f; write sum[f](X[i,f]) if that is meant",
        "  Z[i,h] = X[i,f] * W1[g,h]",
        "               ^",
        f"{p}:5:22: warning: index g occurs only in W1[g,h] and nowhere else in the statement, "
        f"so W1 alone is summed over g; write sum[g](W1[g,h]) if that is meant",
        "  Z[i,h] = X[i,f] * W1[g,h]",
        "                       ^"]


@pytest.mark.parametrize("command", [["fuse"], ["orders"], ["estimate", "--density", "1"],
                                     ["plan", "--density", "1"]])
def test_every_command_that_reads_the_program_warns(tmp_path, command):
    (tmp_path / "typo.ff").write_text(TYPO)
    r = run_cli([*command, str(tmp_path / "typo.ff")])
    assert r.exit_code == 0 and r.stderr.count(": warning: index") == 2, r.stderr


def test_an_explicit_sum_or_a_shared_index_does_not_warn(tmp_path):
    text = TYPO.replace("Z[i,h] = X[i,f] * W1[g,h]",
                        "Z[i,h] = sum[f](X[i,f]) * sum[g](W1[g,h])")
    (tmp_path / "ok.ff").write_text(text)
    r = run_cli(["check", str(tmp_path / "ok.ff")])
    assert r.exit_code == 0 and r.stderr == ""


LOOP = """dim N = 4, H = 3
dim L = 2
tensor A[N, N] : csr
tensor W[L; H, H] : dense
tensor H0[N, H] : dense
tensor Hs[N, H] : dense
tensor AX[N, H] : dense
Hs = fold l in L from H0 {
  AX[i,h] = A[i,k] * Hs[m,h]
  Hs[i,g] = AX[i,h] * W[l; h,g]
}
"""


def test_a_loop_body_warns_once_per_place_not_per_iteration():
    p = program_from_source(Source("loop.ff", LOOP))
    assert [(w.loc.line, w.loc.col, w.message.split()[1]) for w in p.warnings] == [
        (9, 17, "k"), (9, 25, "m")]
    assert "only in Hs[m,h]" in p.warnings[1].message          # as written, not a copy
    assert {w.severity for w in p.warnings} == {"warning"}


_INDICES = "ijkl"
_FACTOR = st.lists(st.sampled_from(_INDICES), min_size=1, max_size=2, unique=True)


@settings(max_examples=60, deadline=None)
@given(factors=st.lists(_FACTOR, min_size=1, max_size=3), data=st.data())
def test_exactly_the_lone_implicit_indices_warn(factors, data):
    """Against a count made here: an index warns iff it is not on the left side and occurs in
    exactly one factor."""
    used = sorted({x for f in factors for x in f})
    lhs = data.draw(st.lists(st.sampled_from(used), min_size=1, unique=True))
    decls = [f"dim {', '.join(f'{x.upper()} = 2' for x in _INDICES)}"]
    decls += [f"tensor T{n}[{', '.join(x.upper() for x in f)}] : dense"
              for n, f in enumerate(factors)]
    decls.append(f"tensor Y[{', '.join(x.upper() for x in lhs)}] : dense")
    rhs = " * ".join(f"T{n}[{','.join(f)}]" for n, f in enumerate(factors))
    text = "\n".join(decls) + f"\nY[{','.join(lhs)}] = {rhs}\n"
    p = program_from_source(Source("p.ff", text))
    warned = sorted(w.message.split()[1] for w in p.warnings)
    lone = sorted(x for x in used if x not in lhs and sum(x in f for f in factors) == 1)
    assert warned == lone

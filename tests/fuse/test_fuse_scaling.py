"""Fusing an unrolled loop is linear in its iterations: per fusion group, fuse asked the whole
program for its outputs, its statement positions and the readers of each tensor (a walk of every
statement per group), which made the 408 statements of GPT-3's 12 unrolled layers cost 6 s of
the profile. Measured in Python function calls, a deterministic measure of the work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.calls import count_calls


def _fold(tmp_path: Path, t: int, fused: bool) -> str:
    p = tmp_path / f"fold{t}{'f' if fused else ''}.ff"
    p.write_text(f"dim N = 4\ndim T = {t}\ntensor x[N] : dense\ntensor W[T; N] : dense\n"
                 "tensor a[N] : dense\ntensor y[N] : dense\n"
                 "y = fold l in T from x {\n  a[i] = y[i] * W[l; i]\n  y[i] = a[i] + y[i]\n}\n"
                 + ("fuse body: a, y\n" if fused else ""))
    return str(p)


def _calls(path: str) -> int:
    """The Python function calls that fusing the program at `path` makes (loading excluded)."""
    return count_calls(f"from fuseflowc import pipeline\nprogram = pipeline.load_program({path!r})",
                       "pipeline.fuse(program)")


@pytest.mark.parametrize("fused", [False, True], ids=["unfused", "one-region-per-iteration"])
def test_fusing_an_unrolled_loop_is_linear_in_its_iterations(tmp_path, fused):
    small, large = _calls(_fold(tmp_path, 30, fused)), _calls(_fold(tmp_path, 120, fused))
    # 4x the iterations: about 4x the calls; it was quadratic (see the module docstring)
    assert large < 5 * small, (small, large)

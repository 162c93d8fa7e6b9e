"""Compare simulated output tensors with expected ones and describe the differences."""

from __future__ import annotations

import numpy as np


def compare(actual: dict, expected: dict, rtol: float = 1e-6, atol: float = 1e-9,
            show: int = 5, patterns: bool = True) -> list[str]:
    """Messages for every tensor of `expected` that `actual` lacks or gets wrong (empty when all
    match). Values are compared densely with numpy.isclose: NaN matches NaN in the same
    position (NaN propagates: docs/language.md), an infinity matches the same infinity, and
    either against anything else is a difference. With `patterns`, the stored coordinates too
    (an explicit 0 is not an absent entry: the language stores a reduction result only where
    something was reduced)."""
    problems = []
    for name in sorted(expected):
        e = expected[name]
        a = actual.get(name)
        if a is None:
            problems.append(f"{name}: not written by the simulation")
            continue
        ed, ad = e.to_dense(), a.to_dense()
        if ed.shape != ad.shape:
            problems.append(f"{name}: shape {ad.shape} but expected {ed.shape}")
            continue
        ok = np.isclose(ad, ed, rtol=rtol, atol=atol, equal_nan=True)
        if ok.all():
            if patterns:
                problems += _pattern_problems(name, a, e, show)
            continue
        bad = np.argwhere(~ok)
        lines = [f"{name}: {bad.shape[0]} of {ok.size} entries differ ({_error(ad, ed, ok)})"]
        for idx in bad[:show]:
            at = tuple(int(i) for i in idx)
            lines.append(f"  at {at}: expected {ed[at]:.9g}, got {ad[at]:.9g}")
        if bad.shape[0] > show:
            lines.append(f"  ... and {bad.shape[0] - show} more")
        problems.append("\n".join(lines))
    return problems


def _error(ad, ed, ok) -> str:
    """How far the differing entries are off: the largest finite error, and how many differ by
    a NaN or an infinity (no finite error to report for those)."""
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(ad - ed)[~ok]
    finite = err[np.isfinite(err)]
    parts = [f"max abs error {finite.max():.6g}"] if finite.size else []
    if finite.size < err.size:
        parts.append(f"{err.size - finite.size} NaN or infinite against another value")
    return "; ".join(parts)


def _pattern_problems(name: str, a, e, show: int) -> list[str]:
    """A message when `a` stores other coordinates than `e` (values already equal)."""
    pa, pe = a.pattern(), e.pattern()
    if pa.shape != pe.shape or (pa == pe).all():
        return []
    extra, missing = np.argwhere(pa & ~pe), np.argwhere(pe & ~pa)
    lines = [f"{name}: values match but the stored entries differ ({len(extra)} stored that "
             f"should be absent, {len(missing)} absent that should be stored)"]
    for what, idx in (("stored, expected absent", extra), ("absent, expected stored", missing)):
        for at in idx[:show]:
            lines.append(f"  at {tuple(int(i) for i in at)}: {what}")
    return ["\n".join(lines)]

"""Differential cases: one `simulate` case run on both engines (the compiled one and the Python
one), which must agree on everything a user sees: the exit status, the JSON report on stdout
(cycles, FLOPs, bytes, per kernel and per node; wall times aside) and the messages on stderr
(an error, a deadlock report with its waiting nodes, notes), timings masked.

`compare(first, second)` names the first difference, or returns None; `combine` folds the two
runs' verdicts and their difference into the case's verdict (the worst of them)."""

from __future__ import annotations

import json
import re

from .classify import OUTCOMES, Verdict
from .execute import Run

_TIMES = re.compile(r"\d+(\.\d+)?\s*(s|ms|seconds)\b|\d[\d,.]*\s*(cycles|activations)/s")


def _report(text: str):
    """The JSON report without wall times (or the text itself, when it is no JSON)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if "seconds" not in k and k != "engine"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(doc)


def _messages(text: str) -> list[str]:
    return [_TIMES.sub("<time>", ln) for ln in text.splitlines()
            if ln.strip() and "engine" not in ln.lower()]


def compare(first: Run, second: Run) -> str | None:
    """The first difference between two runs of one case on the two engines, or None."""
    if first.timed_out or second.timed_out or first.signal or second.signal:
        return None  # a hang or a crash is its own verdict
    if first.exit_code != second.exit_code:
        return f"exit {first.exit_code} on one engine, {second.exit_code} on the other"
    a, b = _report(first.stdout), _report(second.stdout)
    if a != b:
        return "the report on stdout differs" + _where(a, b)
    ma, mb = _messages(first.stderr), _messages(second.stderr)
    if ma != mb:
        k = next((i for i, (x, y) in enumerate(zip(ma, mb)) if x != y), min(len(ma), len(mb)))
        x = ma[k] if k < len(ma) else "(nothing)"
        y = mb[k] if k < len(mb) else "(nothing)"
        return f"stderr line {k + 1} differs: {x[:80]!r} vs {y[:80]!r}"
    return None


def _where(a, b, path: str = "") -> str:
    """Where two JSON values first differ (a path such as kernels[0].cycles)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _where(a.get(k), b.get(k), f"{path}.{k}" if path else k)
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _where(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f" at {path}: {len(a)} vs {len(b)} items"
    return f" at {path or 'the top'}: {str(a)[:60]} vs {str(b)[:60]}"


def combine(command: str, first: Verdict, second: Verdict, difference: str | None) -> Verdict:
    """The verdict of a differential case: a failure of either run, else the difference, else
    the first run's."""
    worst = max(first, second, key=lambda v: OUTCOMES.index(v.outcome))
    if worst.key is not None and worst.outcome not in ("warning",):
        return worst
    if difference is not None:
        what = difference.split(":")[0].split(" at ")[0][:60]
        return Verdict("differ", ("differ", what, command), difference[:200])
    return worst

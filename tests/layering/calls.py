"""The layering at run time: calls that climb from a lower layer into a higher one.

The import rules (test_layering.RULES) say which package may use which. A call is a *climb*
when the called function's package is one its caller's package may not import (a callback
handed down and called from below, say `pipeline` calling a lambda of `sweep`), and a *bypass*
when an orchestrator (sweep, plan, commands) calls a stage's compile entry (fuse, lower, opt,
lang's loader) itself instead of going through `pipeline`. Both are counted with
`sys.settrace` (its call events only: no line tracing) while a command runs in this process;
frames outside fuseflowc (the standard library, click) are skipped to the nearest fuseflowc
caller.

    python -m tests.layering.calls sweep ir_examples/sweeps/nested_matmul_orders.toml \\
        -o /tmp/r.csv --dry-run
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import contextmanager

from tests.layering.test_layering import allowed, unit

#: The stages' compile entries an orchestrator reaches through `pipeline` only.
ENTRIES = {("fuseflowc.fuse.algorithm", "fuse_program"), ("fuseflowc.lower.driver", "lower_fused"),
           ("fuseflowc.opt.pipeline", "run_pipeline"), ("fuseflowc.lang.load", "load_program"),
           ("fuseflowc.fuse.orders", "region_orders")}
ORCHESTRATORS = ("sweep", "plan", "commands")


@contextmanager
def counting():
    """Count climbs and bypasses while the block runs: yields (climbs, bypasses), Counters of
    ("caller module:function", "callee module:function") -> calls."""
    climbs: Counter = Counter()
    bypasses: Counter = Counter()

    def name(frame) -> str:
        return frame.f_globals.get("__name__", "")

    def trace(frame, event, arg):
        if not name(frame).startswith("fuseflowc."):
            return None
        caller = frame.f_back
        while caller is not None and not name(caller).startswith("fuseflowc."):
            caller = caller.f_back
        if caller is None or unit(name(caller)) == unit(name(frame)):
            return None
        edge = (f"{name(caller)}:{caller.f_code.co_name}",
                f"{name(frame)}:{frame.f_code.co_name}")
        if not allowed(name(caller), name(frame)):
            climbs[edge] += 1
        elif unit(name(caller)) in ORCHESTRATORS and \
                (name(frame), frame.f_code.co_name) in ENTRIES:
            bypasses[edge] += 1
        return None    # no line events

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        yield climbs, bypasses
    finally:
        sys.settrace(old)


def run(argv: list[str]) -> tuple[Counter, Counter]:
    """Run `fuseflowc ARGV` in this process, counting (see `counting`)."""
    from fuseflowc.cli import main
    with counting() as (climbs, bypasses):
        try:
            main.main(argv, prog_name="fuseflowc", standalone_mode=False)
        except SystemExit:
            pass
    return climbs, bypasses


if __name__ == "__main__":  # pragma: no cover
    c, b = run(sys.argv[1:])
    for what, found in (("climbs", c), ("bypasses", b)):
        print(f"{what}: {sum(found.values())} calls at {len(found)} call edges", file=sys.stderr)
        for (src, dst), n in sorted(found.items()):
            print(f"  {n:7d}  {src} -> {dst}", file=sys.stderr)

"""The fuzz family of the load views (issue 28): `simulate --trace FILE [--trace-limit N]` and
`dot --load RUN.json [--renderer ...]`. `extend(builder, command, seed)` adds their options to
a simulate or dot case (cases._Builder calls it for every case; other commands get nothing):
trace files in odd places (through the builder's `output`, so the classifier checks what is
written), limits good and bad, and run JSON files made for the case's SAMML seed (its graphs
with as many `#i` nodes as their text has statements, random counts) or broken ones (not JSON,
another module's, negative or huge counts, the wrong shape, text mutated byte by byte).
"""

from __future__ import annotations

import json
import re

from .textmut import TextMutator

#: Limits --trace-limit is given: good ones, then out of range or not numbers.
GOOD_LIMITS = ("1000", "5000", "100000")
BAD_LIMITS = ("0", "999", "-1", "1e9", "abc", "", "100000001", "1" + "0" * 400)
RUN_FILE = "run.json"


def extend(b, command: str, seed) -> None:
    """Add this family's options to case builder `b` (a cases._Builder) of `command`."""
    if command == "simulate" and b.chance(0.3):
        b.output("--trace", "file", p_odd=0.3)
        if b.chance(0.4):
            b.opt("--trace-limit", b.pick(GOOD_LIMITS) if b.good(0.7) else b.pick(BAD_LIMITS))
    elif command == "simulate" and b.chance(0.03):
        b.opt("--trace-limit", b.pick(GOOD_LIMITS))     # without --trace: a usage error
    elif command == "dot" and b.chance(0.35):
        text = seed_text(b, seed)
        b.case.files[RUN_FILE] = run_json(b, text).encode()
        if not b.good(0.6):
            b.case.files[RUN_FILE], note = TextMutator("toml", b.rng).mutate(
                b.case.files[RUN_FILE])
            b.case.notes.append(f"{RUN_FILE}: {note}")
        b.case.inputs.append(RUN_FILE)
        b.opt("--load", RUN_FILE if b.good(0.9) else b.pick(("missing.json", ".", "-")))
        if b.chance(0.3):
            b.opt("--renderer", b.pick(("auto", "builtin", "graphviz", "nope")))


def seed_text(b, seed) -> str:
    """The SAMML text of the case's seed ('' when there is none)."""
    if seed is None:
        return ""
    return "\n".join(v.decode("utf-8", "replace") for v in b.corpus.seed_files(seed).values())


def graph_sizes(text: str) -> dict[str, int]:
    """Each graph of a SAMML text and its statement count (its nodes, for a valid text)."""
    out = {}
    for m in re.finditer(r"^[ \t]*graph[ \t]+([A-Za-z_]\w*)[^{\n]*\{(.*?)^\}", text, re.M | re.S):
        body = [ln for ln in m.group(2).splitlines() if ln.strip() and
                not ln.strip().startswith("#")]
        out[m.group(1)] = len(body)
    return out


def run_json(b, text: str) -> str:
    """A `simulate --json` document for the graphs of `text`, mostly well formed."""
    sizes = graph_sizes(text) or {"g": 3}
    how = "good" if b.good(0.6) else b.pick(("fewer", "other", "negative", "huge", "shape",
                                             "empty", "not-json"))
    if how == "not-json":
        return '{"kernels": [' + "}" * b.pick((1, 3))
    if how == "empty":
        return b.pick(("{}", "[]", '{"kernels": {}}', "null", '{"kernels": [1]}'))
    kernels = []
    for g, n in sorted(sizes.items()):
        if how == "fewer":
            n = max(n - 1, 0)
        cycles = b.pick((0, 1, 100, 10**6))
        busy = b.pick((0, 1, cycles, cycles * 2))
        if how == "negative":
            busy = -busy - 1
        elif how == "huge":
            busy = 10**30
        nodes = [{"name": f"#{i} x", "busy_cycles": busy, "stalled_cycles": b.pick((0, 5))}
                 for i in range(n)]
        chans = [{"name": f"%s{i}", "tokens": b.pick((0, 7, 10**9))} for i in range(n)]
        kernels.append({"graph": ("other_" + g) if how == "other" else g, "cycles": cycles,
                        "nodes": nodes if how != "shape" else {"nodes": nodes},
                        "channels": chans})
    return json.dumps({"total": {}, "kernels": kernels})

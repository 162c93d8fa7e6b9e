"""Simulating each distinct compiled configuration once.

Two configurations of a grid often compile to the same thing: a program fused in the paper's
order and in our order 0 where the two orders coincide (ir_examples/bench/artifact: every
`-order0` variant whose order is the paper's). Simulating both costs the same run twice, and
at the paper's sizes a run is minutes to an hour. So a sweep first compiles every
configuration that could share a run with another and hashes what decides its result: the
compiled module's printed text, the program file's text, the schedule, the data set (its name
and source) and the arch. Configurations with equal hashes run once: the first of them in grid
order (the same one in every run) is simulated and checked; each of the others gets a copy of
its result columns, with `reused` = the id of the row it repeats.

Only configurations that agree on the program, schedule, data set and arch can share a run
(`candidates`): the others are never compiled twice. The program's text is in the hash, so a
row is always checked against its own program's reference evaluation, never another's that
happened to compile alike.
"""

from __future__ import annotations

import hashlib
import json

#: The fields two configurations must share to possibly share a run (the rest, fusion options
#: and order, decide the compiled module, whose text is hashed).
GROUP_FIELDS = ("program", "schedule", "data", "data_source", "arch")

#: The columns a repeating row copies from the row it repeats: the run's results.
RESULT_FIELDS = ("parallel", "block", "status", "check", "cycles", "kernel_cycles", "flops",
                 "bytes_read_seg", "bytes_read_crd", "bytes_read_vals", "bytes_written_seg",
                 "bytes_written_crd", "bytes_written_vals", "bytes", "est_flops", "est_bytes",
                 "est_cycles", "error", "energy", "edp")

#: Statuses of a row that another may repeat: a simulation's outcome (a pruned or estimated row
#: was not simulated, so a row repeating it would not be either).
REUSABLE = ("ok", "error", "timeout")


def group_key(config: dict) -> str:
    """What a configuration must share with another to possibly share its run, as text."""
    return json.dumps({k: config.get(k) for k in GROUP_FIELDS}, sort_keys=True)


def candidates(configs: list[dict]) -> list[dict]:
    """The configurations of `configs` (grid order kept) that may share a run: those not
    marked estimate_only whose group_key another such configuration has."""
    runnable = [c for c in configs if not c.get("estimate_only")]
    seen: dict[str, int] = {}
    for c in runnable:
        seen[group_key(c)] = seen.get(group_key(c), 0) + 1
    return [c for c in runnable if seen[group_key(c)] > 1]


def run_key(config: dict, module_text: str, program_text: str) -> str:
    """The content hash of one compiled configuration's run: equal keys, equal results."""
    h = hashlib.sha256()
    for part in (group_key(config), program_text, module_text):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def leaders(configs: list[dict], keys: dict[str, str | None]) -> dict[str, str]:
    """id -> the id of the row it repeats, for every configuration (of `configs`, in grid
    order) whose run key (`keys`, by id; None: it did not compile, so it runs on its own) an
    earlier one has."""
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for c in configs:
        k = keys.get(c["id"])
        if k is None:
            continue
        if k in first:
            out[c["id"]] = first[k]
        else:
            first[k] = c["id"]
    return out


def repeated_row(config: dict, leader: dict) -> dict:
    """The row of `config`, whose run is the same as the row `leader`'s: the configuration's
    own columns, the leader's results, `reused` naming the leader, no wall time of its own."""
    row = dict(config)
    row.update({k: leader.get(k) for k in RESULT_FIELDS})
    row["reused"] = leader["id"]
    row["wall_seconds"] = 0.0
    return row

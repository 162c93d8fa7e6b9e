"""A strict reader of Chrome trace-event JSON (the subset `simulate --trace` writes), written
from the format's specification, not from sim/trace.py: every event has the keys its phase
requires with the right types; per track (pid, tid) the B/E events nest and match and their
timestamps never go back; counter samples are in time order per (pid, name); metadata names
each process and thread once. `read_trace` returns what the tests compare: per process name,
per thread name, the slices and their summed durations."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

REQUIRED = {  # phase -> required keys (beyond "ph") and their types
    "B": {"name": str, "pid": int, "tid": int, "ts": (int, float)},
    "E": {"pid": int, "tid": int, "ts": (int, float)},
    "X": {"name": str, "pid": int, "tid": int, "ts": (int, float), "dur": (int, float)},
    "C": {"name": str, "pid": int, "ts": (int, float), "args": dict},
    "M": {"name": str, "pid": int, "args": dict},
    "i": {"name": str, "pid": int, "ts": (int, float)},
}
META = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}


class TraceError(AssertionError):
    pass


@dataclass
class Track:
    name: str = ""
    slices: list = field(default_factory=list)    # (start, end, name, args)

    def total(self, name: str) -> int:
        return sum(e - s for s, e, n, _ in self.slices if n == name)

    def args_total(self, key: str) -> int:
        return sum(a.get(key, 0) for _, _, _, a in self.slices)


@dataclass
class Trace:
    processes: dict = field(default_factory=dict)      # pid -> name
    tracks: dict = field(default_factory=dict)         # (pid, tid) -> Track
    counters: dict = field(default_factory=dict)       # (pid, name) -> [(ts, args)]
    other: dict = field(default_factory=dict)

    def process(self, name_part: str) -> int:
        found = [p for p, n in self.processes.items() if name_part in n]
        if len(found) != 1:
            raise TraceError(f"{len(found)} processes named like {name_part!r}")
        return found[0]

    def threads(self, pid: int) -> dict:
        """thread name -> Track of process pid."""
        return {t.name: t for (p, _), t in self.tracks.items() if p == pid}


def read_trace(text: str) -> Trace:
    """Parse and validate a trace's text; TraceError on the first violation."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError("not a JSON object with a traceEvents list")
    tr = Trace(other=doc.get("otherData", {}))
    stacks: dict = defaultdict(list)
    last_ts: dict = {}
    for i, e in enumerate(doc["traceEvents"]):
        _check_keys(i, e)
        ph = e["ph"]
        if ph == "M":
            _meta(tr, i, e)
            continue
        if ph == "C":
            seq = tr.counters.setdefault((e["pid"], e["name"]), [])
            if seq and e["ts"] < seq[-1][0]:
                raise TraceError(f"event {i}: counter {e['name']} goes back in time")
            if not all(isinstance(v, (int, float)) for v in e["args"].values()):
                raise TraceError(f"event {i}: a counter value is not a number")
            seq.append((e["ts"], e["args"]))
            continue
        if ph == "i":
            continue
        key = (e["pid"], e["tid"])
        if e["ts"] < last_ts.get(key, float("-inf")):
            raise TraceError(f"event {i}: timestamp {e['ts']} before {last_ts[key]} on {key}")
        last_ts[key] = e["ts"]
        track = tr.tracks.setdefault(key, Track())
        if ph == "B":
            stacks[key].append(e)
        elif ph == "E":
            if not stacks[key]:
                raise TraceError(f"event {i}: E without a B on {key}")
            b = stacks[key].pop()
            track.slices.append((b["ts"], e["ts"], b["name"], b.get("args", {})))
        else:   # X
            if e["dur"] < 0:
                raise TraceError(f"event {i}: negative duration")
            last_ts[key] = e["ts"] + e["dur"]
            track.slices.append((e["ts"], e["ts"] + e["dur"], e["name"], e.get("args", {})))
    open_ = {k: len(v) for k, v in stacks.items() if v}
    if open_:
        raise TraceError(f"B events never ended: {open_}")
    for key in tr.tracks:
        if key[0] not in tr.processes:
            raise TraceError(f"track {key}: its process has no process_name")
    return tr


def _check_keys(i: int, e) -> None:
    if not isinstance(e, dict) or e.get("ph") not in REQUIRED:
        raise TraceError(f"event {i}: not an event of a known phase: {e!r}")
    for k, t in REQUIRED[e["ph"]].items():
        if k not in e:
            raise TraceError(f"event {i}: phase {e['ph']} without {k!r}")
        if not isinstance(e[k], t) or isinstance(e[k], bool):
            raise TraceError(f"event {i}: {k!r} is {type(e[k]).__name__}")
    if e["ph"] in "BX" and e.get("ts", 0) < 0:
        raise TraceError(f"event {i}: negative timestamp")


def _meta(tr: Trace, i: int, e: dict) -> None:
    what = e["name"]
    if what not in META:
        raise TraceError(f"event {i}: unknown metadata {what}")
    if what == "process_name":
        if e["pid"] in tr.processes:
            raise TraceError(f"event {i}: process {e['pid']} named twice")
        tr.processes[e["pid"]] = e["args"]["name"]
    elif what == "thread_name":
        track = tr.tracks.setdefault((e["pid"], e["tid"]), Track())
        if track.name:
            raise TraceError(f"event {i}: thread {(e['pid'], e['tid'])} named twice")
        track.name = e["args"]["name"]

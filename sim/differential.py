"""Both engines on one module: the Python engine (sim/engine.py) and the compiled one
(sim/engine_fast.py) must agree on everything a run produces. `first_difference` names the first
thing that differs, readably; the differential tests (tests/sim/test_sim_fast.py) and
`make bench-sim` use it.

Compared: per kernel the cycles, activations, FLOPs, token-hops and bytes read and written
(seg, crd, vals); per node its firings, stall cycles, finish, clock, FLOPs and bytes; per channel
its token count; the written tensors bit for bit (every level array and every value's bits,
NaN payloads included); and, for a failing run, the error text with every note (the deadlock
report: waiting nodes and channel contents).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fuseflowc.diagnostics import UserError

from .arch import Arch
from .build import SimResult, Simulator


@dataclass
class Outcome:
    """A run's result, or the UserError it raised."""

    result: SimResult | None = None
    error: UserError | None = None


def run(module, inputs: dict, sizes: dict, arch: Arch, engine: str,
        max_cycles: int | None = None) -> Outcome:
    """Simulate on one engine; a UserError becomes the outcome."""
    try:
        return Outcome(Simulator(module, inputs, sizes, arch, max_cycles, engine=engine).run())
    except UserError as e:
        return Outcome(error=e)


def error_text(e: UserError) -> str:
    """Every diagnostic of an error, notes included (a deadlock report is all notes)."""
    return "\n".join(f"{d.severity}: {d.message}" for d in e.diagnostics)


def _node_row(n) -> dict:
    # a permute step's pseudo node (sim/permute.py) has no clock and no `done`
    return {"name": n.name, "kind": n.kind, "fires": n.fires, "stall": n.stall,
            "finish": n.finish, "t": getattr(n, "t", None), "done": getattr(n, "done", None),
            "flops": n.flops,
            "rd": (n.rd_seg, n.rd_crd, n.rd_vals), "wr": (n.wr_seg, n.wr_crd, n.wr_vals)}


def _bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        return a.view(np.uint8)
    return a


def _tensor_difference(name: str, a, b) -> str | None:
    if a.format != b.format or a.shape != b.shape or len(a.levels) != len(b.levels):
        return f"tensor {name}: format or shape differs"
    for k, (la, lb) in enumerate(zip(a.levels, b.levels)):
        if la.kind != lb.kind or la.size != lb.size:
            return f"tensor {name}: level {k} differs ({la.kind} {la.size} vs {lb.kind} {lb.size})"
        for arr in ("seg", "crd"):
            x, y = getattr(la, arr, None), getattr(lb, arr, None)
            if (x is None) != (y is None) or (x is not None and not np.array_equal(x, y)):
                return f"tensor {name}: level {k} {arr} differs"
    va, vb = np.asarray(a.vals), np.asarray(b.vals)
    if va.shape != vb.shape or va.dtype != vb.dtype:
        return f"tensor {name}: vals shape/dtype differ ({va.shape} {va.dtype} vs {vb.shape} {vb.dtype})"
    if not np.array_equal(_bits(va), _bits(vb)):
        n = va.shape[0] if va.ndim else 1
        rows_a, rows_b = _bits(va).reshape(n, -1), _bits(vb).reshape(n, -1)
        i = next(k for k in range(n) if not np.array_equal(rows_a[k], rows_b[k]))
        return f"tensor {name}: stored value {i} differs (bit for bit): {va.reshape(n, -1)[i]} " \
               f"vs {vb.reshape(n, -1)[i]}"
    return None


def first_difference(py: Outcome, fast: Outcome) -> str | None:
    """None when the two outcomes are identical, else a line naming the first difference."""
    if py.error or fast.error:
        if not (py.error and fast.error):
            which, e = ("python", py.error) if py.error else ("fast", fast.error)
            return f"only the {which} engine failed: {error_text(e)}"
        a, b = error_text(py.error), error_text(fast.error)
        if a != b:
            return f"errors differ:\n  python: {a}\n  fast:   {b}"
        return None
    pk, fk = py.result.kernels, fast.result.kernels
    if [k.graph for k in pk] != [k.graph for k in fk]:
        return f"kernels differ: {[k.graph for k in pk]} vs {[k.graph for k in fk]}"
    for a, b in zip(pk, fk):
        for what, x, y in (("cycles", a.cycles, b.cycles),
                           ("activations", a.activations, b.activations),
                           ("flops", a.flops, b.flops), ("token-hops", a.hops, b.hops),
                           ("bytes read", a.bytes_read(), b.bytes_read()),
                           ("bytes written", a.bytes_written(), b.bytes_written()),
                           ("tensors written", a.written, b.written)):
            if x != y:
                return f"kernel {a.graph}: {what} {x} (python) vs {y} (fast)"
        if len(a.nodes) != len(b.nodes):
            return f"kernel {a.graph}: {len(a.nodes)} vs {len(b.nodes)} nodes"
        for n, m in zip(a.nodes, b.nodes):
            x, y = _node_row(n), _node_row(m)
            if x != y:
                diff = {k: (x[k], y[k]) for k in x if x[k] != y[k]}
                return f"kernel {a.graph}: node {n.name}: (python, fast) {diff}"
        for c, d in zip(a.channels, b.channels):
            if (c.name, c.pushed) != (d.name, d.pushed):
                return (f"kernel {a.graph}: channel {c.name}: {c.pushed} tokens (python) vs "
                        f"{d.name}: {d.pushed} (fast)")
    ta, tb = py.result.tensors, fast.result.tensors
    if sorted(ta) != sorted(tb):
        return f"tensors written differ: {sorted(ta)} vs {sorted(tb)}"
    for name in sorted(ta):
        d = _tensor_difference(name, ta[name], tb[name])
        if d:
            return d
    return None

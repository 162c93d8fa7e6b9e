"""The summary `fuseflowc run` prints: one row per tensor (inputs, then statements in order)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from ..data.fibertree import FiberTensor


@dataclass
class TensorRow:
    """What the summary shows of one tensor; `seconds` is the statement's wall time (None for
    inputs)."""

    name: str
    role: str  # input | intermediate | output
    shape: tuple[int, ...]
    format: str
    stored: int  # stored entries at element granularity (a stored b x b block counts b*b)
    density: float
    seconds: float | None


def tensor_row(name: str, t: FiberTensor, role: str, seconds: float | None) -> TensorRow:
    """The summary row of tensor `t`."""
    stored = t.entries * (t.block ** 2 if t.block else 1)
    space = math.prod(t.shape)
    fmt = t.format.name() + (f" (block {t.block})" if t.block else "")
    return TensorRow(name, role, tuple(t.shape), fmt, stored, stored / space if space else 0.0,
                     seconds)


def _shape(shape) -> str:
    return " x ".join(map(str, shape)) if shape else "scalar"


def render_table(rows: list[TensorRow], load_seconds: float, total: float, output: str | None,
                 written: list[str]) -> str:
    """A plain-text table (aligned columns) plus a closing line on where results went."""
    head = ("tensor", "role", "shape", "format", "stored", "density", "time")
    body = [(r.name, r.role, _shape(r.shape), r.format, str(r.stored), f"{r.density:.4g}",
             "-" if r.seconds is None else f"{r.seconds * 1000:.1f} ms") for r in rows]
    widths = [max(len(x[k]) for x in [head, *body]) for k in range(len(head))]
    right = {4, 5, 6}

    def line(cells) -> str:
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]
    out.append(f"inputs loaded in {load_seconds * 1000:.1f} ms; total {total * 1000:.1f} ms")
    if output is not None:
        out.append(f"wrote {', '.join(written) or 'nothing'} to {output}")
    return "\n".join(out)


def summary_json(program: str, sizes: dict[str, int], rows: list[TensorRow], load_seconds: float,
                 total: float, output: str | None, written: list[str]) -> str:
    """The summary as JSON text (keys sorted within each object)."""
    doc = {
        "program": program,
        "dims": {k: sizes[k] for k in sorted(sizes)},
        "tensors": [dict(asdict(r), shape=list(r.shape)) for r in rows],
        "load_seconds": load_seconds,
        "total_seconds": total,
        "output_dir": output,
        "written": written,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"

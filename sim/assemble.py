"""Turn what the writers of one tensor recorded into a FiberTensor.

A level writer records its coordinate stream. The stream of storage level k is a sequence of
pieces, each closed by a stop. Which pieces are real fibers (one per position of level k-1) and
which are bare stops (an empty fiber one level up) follows from level k-1's pieces: a real piece
with n > 0 coordinates has n real child fibers, an empty real piece or a bare one has one bare
child. So the levels are read top-down, and every stored value gets its full coordinates. A dense
level may have no writer: its fibers are then 0..size-1.
"""

from __future__ import annotations

import numpy as np

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import UserError

from .tokens import N


def _pieces(tokens: list) -> list[list[int]]:
    out: list[list[int]] = []
    cur: list[int] = []
    for t in tokens:
        if t >= 0 or t == N:
            cur.append(t)
        else:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def assemble(name: str, fmt, shape: tuple[int, ...], block: int | None,
             level_streams: dict[int, list], vals: list) -> tuple[FiberTensor, dict]:
    """Build tensor `name` (format `fmt`, logical `shape`) from its recorded level streams
    (logical mode -> crd tokens) and value tokens. Returns the tensor and the elements it
    stores ({'seg', 'crd', 'vals'}, see `stored_elements`): what the writers put off-chip,
    which for a dense level includes the zeros of positions its stream never reached."""
    bshape = shape if block is None else tuple(s // block for s in shape)
    # Expected pieces of the current level: (is_real, parent coordinate prefix).
    expected: list[tuple[bool, tuple]] = [(True, ())]
    positions: list[tuple] = [()]
    for k, kind in enumerate(fmt.levels):
        mode = fmt.mode_order[k]
        size = bshape[mode]
        toks = level_streams.get(mode)
        if toks is None:
            if kind != "dense":
                raise UserError(f"simulation: tensor {name}: no write_level for its compressed "
                                f"mode {mode}")
            pieces = [list(range(size)) if real else [] for real, _ in expected]
        else:
            pieces = _pieces(toks)
            if len(pieces) != len(expected):
                raise UserError(
                    f"simulation: tensor {name}: the stream written for mode {mode} has "
                    f"{len(pieces)} fibers where the levels above give {len(expected)}")
        nxt: list[tuple[bool, tuple]] = []
        positions = []
        for (real, prefix), crds in zip(expected, pieces):
            if not real:
                if crds:
                    raise UserError(f"simulation: tensor {name}: mode {mode} has coordinates "
                                    "under an empty fiber")
                nxt.append((False, prefix))
                continue
            if not crds:
                nxt.append((False, prefix))
            for c in crds:
                if c == N or not 0 <= c < size:
                    raise UserError(f"simulation: tensor {name}: coordinate "
                                    f"{'N' if c == N else c} written for mode {mode} of size "
                                    f"{size}")
                p = prefix + (c,)
                positions.append(p)
                nxt.append((True, p))
        expected = nxt
    values = [0.0 if (v.__class__ is int and v == N) else v for v in vals
              if not (v.__class__ is int and v != N)]
    if len(values) != len(positions):
        raise UserError(f"simulation: tensor {name}: {len(values)} values written for "
                        f"{len(positions)} stored positions")
    order = len(shape)
    sc = np.array(positions, dtype=np.int64).reshape(len(positions), order)
    coords = np.empty_like(sc)
    for k, mode in enumerate(fmt.mode_order):
        coords[:, mode] = sc[:, k]
    if block:
        varr = np.array(values, dtype=np.float64).reshape(len(values), block, block) if values \
            else np.zeros((0, block, block))
    else:
        varr = np.array(values, dtype=np.float64)
    t = FiberTensor.from_coo(shape, coords, varr, fmt, block, name)
    return t, stored_elements(t)


def stored_elements(t: FiberTensor) -> dict:
    """Elements of a tensor's stored arrays: `seg` and `crd` of its sparse levels (a dense
    level stores neither; singleton and compressed(c) levels no seg, a compressed(c) crd its
    padding too) and `vals`, every stored value (b x b per block; a dense innermost level
    stores all its positions, zeros included; padding slots too). Times
    memory.element_bytes = bytes."""
    seg = sum(int(lv.seg.shape[0]) for lv in t.levels if lv.seg is not None)
    crd = sum(int(lv.crd.shape[0]) for lv in t.levels if lv.crd is not None)
    return {"seg": seg, "crd": crd, "vals": int(np.asarray(t.vals).size)}

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

from .recorded import Recorded
from .tokens import N


def _level_pieces(toks: list, nexp: int, name: str, mode: int) -> tuple[np.ndarray, np.ndarray]:
    """The coordinates of a level's recorded stream and the piece each belongs to (pieces are
    closed by stops; data after the last stop is one more piece; `toks` a list or a
    sim.recorded.Recorded, read as int64 without a Python object per token). A UserError when
    the stream has another number of pieces than the `nexp` the levels above give."""
    t = np.asarray(toks, dtype=np.int64).reshape(-1)
    stop = (t < 0) & (t != N)
    npieces = int(np.count_nonzero(stop)) + int(t.shape[0] > 0 and not stop[-1])
    if npieces != nexp:
        raise UserError(f"simulation: tensor {name}: the stream written for mode {mode} has "
                        f"{npieces} fibers where the levels above give {nexp}")
    piece = np.cumsum(stop) - stop          # stops before each token: its piece
    data = ~stop
    return t[data], piece[data]


def _values(vals, block: int | None) -> np.ndarray:
    """The stored values of a recorded val stream (a list, or the compiled engine's
    sim.recorded.Recorded): every value, N as 0 (an int is a control token in a val stream, a
    value never is: sim.tokens)."""
    if isinstance(vals, Recorded):
        if not block:
            return vals.stored_values()
        vals = vals.tolist()        # block values are Python arrays anyway
    if block:
        values = [0.0 if (v.__class__ is int and v == N) else v for v in vals
                  if not (v.__class__ is int and v != N)]
        return np.array(values, dtype=np.float64).reshape(len(values), block, block) \
            if values else np.zeros((0, block, block))
    # one float per value, without a list of them (a MAG-size output streams 31 M)
    return np.fromiter((0.0 if v.__class__ is int else v for v in vals
                        if v.__class__ is not int or v == N), dtype=np.float64)


def assemble(name: str, fmt, shape: tuple[int, ...], block: int | None,
             level_streams: dict, vals) -> tuple[FiberTensor, dict]:
    """Build tensor `name` (format `fmt`, logical `shape`) from its recorded level streams
    (logical mode -> crd tokens) and value tokens. Returns the tensor and the elements it
    stores ({'seg', 'crd', 'vals'}, see `stored_elements`): what the writers put off-chip,
    which for a dense level includes the zeros of positions its stream never reached.

    Vectorized over each level (numpy arrays, no Python object per position): the expected
    pieces of a level are `real` (one per position of the level above, or bare) and each
    position is its coordinate and its parent position."""
    bshape = shape if block is None else tuple(s // block for s in shape)
    real = np.ones(1, dtype=bool)           # expected pieces of the current level: real or bare
    crds: list[np.ndarray] = []             # per level: the coordinate of each position
    parents: list[np.ndarray] = []          # per level: the position above each position
    for k, kind in enumerate(fmt.levels):
        mode = fmt.mode_order[k]
        size = bshape[mode]
        toks = level_streams.get(mode)
        nexp = real.shape[0]
        if toks is None:
            if kind != "dense":
                raise UserError(f"simulation: tensor {name}: no write_level for its compressed "
                                f"mode {mode}")
            nreal = int(np.count_nonzero(real))
            c = np.tile(np.arange(size, dtype=np.int64), nreal)
            piece = np.repeat(np.flatnonzero(real), size)
        else:
            c, piece = _level_pieces(toks, nexp, name, mode)
            in_real = real[piece]
            bad = in_real & ((c == N) | (c >= size))        # data tokens are >= 0 or N
            bare = np.flatnonzero(~in_real)
            first_bad = np.flatnonzero(bad)
            if bare.shape[0] and (not first_bad.shape[0] or
                                  piece[bare[0]] < piece[first_bad[0]]):
                raise UserError(f"simulation: tensor {name}: mode {mode} has coordinates "
                                "under an empty fiber")
            if first_bad.shape[0]:
                x = int(c[first_bad[0]])
                raise UserError(f"simulation: tensor {name}: coordinate "
                                f"{'N' if x == N else x} written for mode {mode} of size "
                                f"{size}")
        counts = np.bincount(piece, minlength=nexp)
        above = np.cumsum(real) - 1             # the position above each real piece
        crds.append(c)
        parents.append(above[piece])
        # next level's pieces: one real per position of a real non-empty piece, else one bare
        filled = real & (counts > 0)
        real = np.repeat(filled, np.where(filled, counts, 1))
    values = _values(vals, block)
    npos = int(crds[-1].shape[0]) if crds else 1
    if values.shape[0] != npos:
        raise UserError(f"simulation: tensor {name}: {values.shape[0]} values written for "
                        f"{npos} stored positions")
    order = len(shape)
    coords = np.empty((npos, order), dtype=np.int64)
    idx = np.arange(npos, dtype=np.int64)
    for k in range(len(crds) - 1, -1, -1):       # from the innermost level up
        coords[:, fmt.mode_order[k]] = crds[k][idx]
        idx = parents[k][idx]
    t = FiberTensor.from_coo(shape, coords, values, fmt, block, name)
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

"""sim.assemble (vectorized over levels) against the per-position loop it replaced, on valid
streams of random tensors and on corrupted ones: the same tensor, or the same error."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format
from fuseflowc.sim.assemble import assemble
from fuseflowc.sim.tokens import N, stop


def _pieces(tokens):
    out, cur = [], []
    for t in tokens:
        if t >= 0 or t == N:
            cur.append(t)
        else:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def assemble_by_positions(name, fmt, shape, level_streams, vals):
    """The former sim.assemble (scalar values): one Python tuple per stored position."""
    expected, positions = [(True, ())], [()]
    for k, kind in enumerate(fmt.levels):
        mode, size = fmt.mode_order[k], shape[fmt.mode_order[k]]
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
        nxt, positions = [], []
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
    sc = np.array(positions, dtype=np.int64).reshape(len(positions), len(shape))
    coords = np.empty_like(sc)
    for k, mode in enumerate(fmt.mode_order):
        coords[:, mode] = sc[:, k]
    return FiberTensor.from_coo(shape, coords, np.array(values, dtype=np.float64), fmt, None,
                                name)


def _streams(t: FiberTensor, rng, omit_dense: bool):
    """What the writers of `t` record: per level its pieces (a real fiber's coordinates, or a
    bare stop under an empty one), then the values (some zeros streamed as N)."""
    streams = {}
    real = [True]                   # expected pieces: real (a position above) or bare
    pos = [0]
    for k, lvl in enumerate(t.levels):
        toks, nreal, npos = [], [], []
        for r, p in zip(real, pos):
            if r:
                if lvl.kind == "dense":
                    crds = list(range(lvl.size))
                    kids = [p * lvl.size + c for c in crds]
                else:
                    lo, hi = int(lvl.seg[p]), int(lvl.seg[p + 1])
                    crds = [int(c) for c in lvl.crd[lo:hi]]
                    kids = list(range(lo, hi))
                toks += crds
                nreal += [True] * len(crds) or [False]
                npos += kids or [0]
            else:
                nreal.append(False)
                npos.append(0)
            toks.append(stop(int(rng.integers(0, 3)), 0 if r else 1))
        if toks and rng.random() < 0.3 and toks[-1] < 0 and len(toks) > 1 and toks[-2] >= 0:
            toks.pop()              # the last stop is not recorded: a trailing piece
        if not (omit_dense and lvl.kind == "dense"):
            streams[t.format.mode_order[k]] = toks
        real, pos = nreal, npos
    vals = []
    for v in np.asarray(t.vals, dtype=np.float64).reshape(-1):
        vals.append(N if v == 0.0 and rng.random() < 0.5 else float(v))
        if rng.random() < 0.2:
            vals.append(stop(0))
    return streams, vals


@st.composite
def cases(draw):
    order = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(order))
    levels = tuple(draw(st.sampled_from(["dense", "compressed"])) for _ in range(order))
    mode_order = tuple(draw(st.permutations(range(order))))
    seed = draw(st.integers(0, 2**16))
    density = draw(st.sampled_from([0.0, 0.3, 1.0]))
    mutate = draw(st.sampled_from([None, "drop", "insert", "crd", "value"]))
    return shape, Format(levels, mode_order), seed, density, mutate, draw(st.booleans())


def _outcome(f):
    try:
        t = f()
    except UserError as e:
        return "error", str(e)
    return "ok", (t.shape, t.format, t.to_dense().tolist(),
                  [(lv.kind, None if lv.seg is None else lv.seg.tolist(),
                    None if lv.crd is None else lv.crd.tolist()) for lv in t.levels])


@settings(max_examples=300, deadline=None)
@given(cases())
def test_assemble_matches_the_per_position_loop(case):
    shape, fmt, seed, density, mutate, omit_dense = case
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random(shape) < density, rng.uniform(-1, 1, shape), 0.0)
    t = FiberTensor.from_dense(dense, fmt)
    streams, vals = _streams(t, rng, omit_dense)
    if mutate == "value" or (mutate is not None and not streams):
        if vals:
            vals.pop(int(rng.integers(0, len(vals))))
    elif mutate is not None:
        mode = sorted(streams)[int(rng.integers(0, len(streams)))]
        toks = streams[mode]
        at = int(rng.integers(0, len(toks) + 1))
        if mutate == "drop" and toks:
            toks.pop(min(at, len(toks) - 1))
        elif mutate == "insert":
            toks.insert(at, [stop(0), stop(1, 1), 0, N][int(rng.integers(0, 4))])
        else:
            toks.insert(at, int(rng.integers(0, 6)))
    new = _outcome(lambda: assemble("T", fmt, shape, None, streams, vals)[0])
    old = _outcome(lambda: assemble_by_positions("T", fmt, shape, streams, vals))
    assert new == old
    if mutate is None:
        assert new[0] == "ok" and np.array_equal(np.array(new[1][2]), dense)

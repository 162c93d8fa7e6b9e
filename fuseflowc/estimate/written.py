"""The statistics of a tensor a graph writes, estimated from the streams its writers receive,
so that a later graph (or step) reads it as it reads an input."""

from __future__ import annotations

import numpy as np

from .relation import pattern
from .shape import StreamShape, is_full, nonempty_share
from .stats import DENSE, LevelStats, TensorStats, level_shape


def written_stats(decl, shape: tuple[int, ...], levels: dict, vals: StreamShape | None,
                  fresh_label: str) -> TensorStats:
    """Statistics of a tensor assembled from its writers' streams (sim/assemble.py): dense
    levels store every position under their parents; a compressed level stores the coordinates
    its stream carries, less the prefixes left with no stored entry beneath (`from_coo` keeps
    only prefixes of stored values)."""
    fmt = decl.format
    sizes = level_shape(shape, fmt, decl.block)
    streams = [levels.get(fmt.mode_order[k]) for k in range(len(fmt.levels))]
    ns, hists, labels = _positions(fmt, sizes, streams, vals, fresh_label)
    # prefixes of a compressed level whose compressed child fiber stays empty are not stored
    for k in range(len(ns) - 2, -1, -1):
        if fmt.levels[k] != "compressed" or fmt.levels[k + 1] != "compressed":
            continue
        s, child = streams[k], streams[k + 1]
        if s is None or s.nonempty or child is None or child.per_coord is None \
                or is_full(child):
            continue
        keep = nonempty_share(child)
        ns[k] *= keep
        hists[k] = hists[k] * keep
    out: list[LevelStats] = []
    phist, pn = np.ones(1), 1.0
    for k, (kind, size) in enumerate(zip(fmt.levels, sizes)):
        n = ns[k]
        parent = phist * (n / pn) if pn > 0 else np.zeros_like(phist)
        out.append(LevelStats(kind, size, n, hists[k], parent, phist.copy(), labels[k],
                              _measured(fmt, k, streams[k], phist.size, size)))
        phist, pn = hists[k], n
    return TensorStats(decl.name, tuple(shape), fmt, decl.block, out)


def _positions(fmt, sizes: list, streams: list, vals, fresh_label: str):
    """Per level: the positions it stores, their histogram over its coordinates, and its
    pattern's label, before dropping the prefixes with nothing stored beneath."""
    ns: list[float] = []
    hists: list[np.ndarray] = []
    labels: list = []
    prev = 1.0
    for k, (kind, size) in enumerate(zip(fmt.levels, sizes)):
        s = streams[k]
        if kind == "dense":
            n = prev * size
            hist = np.full(size, prev)
            lab = DENSE
        elif s is None:
            n = vals.data if vals is not None else 0.0
            hist = np.full(size, n / max(size, 1))
            lab = f"{fresh_label}.{k}"
        else:
            n = s.data
            known = s.per_coord is not None and s.per_coord.shape == (size,)
            hist = s.per_coord if known else np.full(size, n / max(size, 1))
            lab = s.label[0] if isinstance(s.label, tuple) else \
                (DENSE if s.label == DENSE else f"{fresh_label}.{k}")
        ns.append(n)
        hists.append(hist)
        labels.append(lab)
        prev = n
    return ns, hists, labels


def _measured(fmt, k: int, s, parents: int, size: int):
    """The measured pattern of level k (a compressed level under a dense first level) when
    its writer's stream knows it; else None."""
    if fmt.levels[k] != "compressed" or s is None or not s.rels or k != 1 \
            or fmt.levels[0] != "dense":
        return None
    rel = pattern(s.rels[-1])
    return rel if rel is not None and rel.shape == (parents, size) else None

"""What a scanner of a fixed-length, non-unique or singleton level reads (sim.prims_stream.Scan).

Dense and compressed levels are scanned from their own arrays. The other sparse levels
(fuseflowc.formats) are given to the scanner as, per input ref x, the positions `lo[x]..hi[x]`
of its fiber, the bytes `look[x]` the lookup reads, the coordinate of each position and,
where positions and refs differ, the ref each position emits. The byte model (sim/README.md):

  fixed (compressed(c))  no seg: fiber x is slots x*c .. x*c+c-1, its coordinates first. The
                         scanner reads a crd per coordinate it emits, and one more (the first
                         padding slot, which ends the fiber) when the fiber has fewer than c.
  nonunique              COO's first level: a compressed scan (2 seg entries per fiber) over its
                         runs of equal coordinates, one coordinate read per run, at the run's
                         first position p, which is the ref it emits.
  singleton              under a non-unique level: ref p opens the run p .. q-1 of the level
                         above; the scanner reads the parent crd of positions p+1 .. q (finding
                         where the run ends: q - p reads) and its own crd of each position.
"""

from __future__ import annotations

import numpy as np

from fuseflowc.formats import PAD


def fixed_arrays(crd: np.ndarray, width: int, eb: int):
    """(crd, refs, lo, hi, look) of a compressed(`width`) level (refs None: the positions)."""
    lengths = (crd.reshape(-1, width) != PAD).sum(axis=1) if width else np.zeros(0, np.int64)
    lo = np.arange(lengths.shape[0], dtype=np.int64) * width
    look = np.where(lengths < width, eb, 0)
    return crd, None, lo, lo + lengths, look


def runs(seg: np.ndarray, crd: np.ndarray) -> np.ndarray:
    """Whether each position of a non-unique level starts a run of equal coordinates (a fiber's
    first position always does)."""
    start = np.ones(crd.shape[0], dtype=bool)
    if crd.shape[0] > 1:
        start[1:] = crd[1:] != crd[:-1]
    start[seg[:-1][seg[:-1] < crd.shape[0]]] = True
    return start


def nonunique_arrays(seg: np.ndarray, crd: np.ndarray):
    """(seg, crd, refs) of a non-unique compressed level scanned as a compressed one whose
    positions are its runs (refs: each run's first position)."""
    start = runs(seg, crd)
    first = np.flatnonzero(start)                         # each run's first position
    index = np.concatenate([[0], np.cumsum(start)])       # runs before each position
    return index[seg], crd[first], first


def singleton_arrays(parent_seg: np.ndarray, parent_crd: np.ndarray, crd: np.ndarray, eb: int):
    """(crd, refs, lo, hi, look) of a singleton level under a non-unique one: ref p (a run's
    first position) opens the run's positions."""
    start = runs(parent_seg, parent_crd)
    first = np.flatnonzero(start)
    end = np.append(first[1:], crd.shape[0])             # one past each run's last position
    lo = np.arange(crd.shape[0], dtype=np.int64)
    hi = lo + 1
    hi[first] = end
    return crd, None, lo, hi, (hi - lo) * eb

"""BigBird block-sparse attention masks (Zaheer et al., 2020, the ITC variant), seeded.

The sequence of `seq_len` tokens is split into `seq_len / block` blocks. Block row r of the mask
(queries in block r) attends to key block c when any of these holds:

  - global:  r or c is one of the first or last `n_global` blocks (whole block rows and columns:
             ITC's global tokens are existing tokens, so they attend everywhere and are attended
             by everyone);
  - window:  |r - c| <= window // 2 (the diagonal block and its neighbours; no wrap-around);
  - random:  c is one of `n_random` blocks drawn for row r, without replacement, among the
             blocks that are neither global nor in r's window (BigBird's bigbird_block_rand_mask
             draws from the same set). Global rows draw nothing (they are already full).

A row with fewer candidate blocks than `n_random` takes all of them: short sequences then
degenerate towards dense attention, as BigBird itself falls back to full attention when
seq_len <= (5 + 2 * n_random) * block.

The random draws come from one numpy Generator seeded with `seed`, one `choice` per non-global
block row in increasing row order, so the same arguments always give the same mask and the
block pattern and the element mask agree.

Public API:
  bigbird_block_pattern(num_blocks, n_random, seed, n_global=1, window=3) -> bool ndarray
  bigbird_block_mask(seq_len, block, n_random, seed, ...) -> CSR of the block pattern (1.0)
  bigbird_mask(seq_len, block, n_random, seed, ...) -> CSR seq_len x seq_len element mask (1.0)
  parse_mask_spec(text) -> MaskSpec   ("bigbird:block=64,random=3[,global=1,window=3,seed=N]")
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError

MASK_SYNTAX = "bigbird:block=B,random=R[,global=G,window=W,seed=N]"


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UserError(f"bigbird mask: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise UserError(f"bigbird mask: {name} must be at least {minimum}, got {value}")
    return int(value)


def _check_params(n_random, n_global, window) -> tuple[int, int, int]:
    """The one validation of the pattern's parameters (MaskSpec checks a `--mask` value with it
    when parsed, bigbird_block_pattern its arguments)."""
    r = _check_int("random", n_random, 0)
    g = _check_int("global", n_global, 0)
    w = _check_int("window", window, 1)
    if w % 2 == 0:
        raise UserError(f"bigbird mask: window must be odd (the diagonal block and the same "
                        f"number of neighbours on each side), got {w}")
    return r, g, w


def bigbird_block_pattern(num_blocks: int, n_random: int, seed: int, n_global: int = 1,
                          window: int = 3) -> np.ndarray:
    """The block-level BigBird pattern: a `num_blocks` x `num_blocks` boolean array, True where
    query block r attends to key block c (see the module docstring for the rules)."""
    nb = _check_int("the number of blocks", num_blocks, 1)
    r, g, w = _check_params(n_random, n_global, window)
    seed = _check_int("seed", seed, 0)
    pat = np.zeros((nb, nb), dtype=bool)
    is_global = np.zeros(nb, dtype=bool)
    is_global[:min(g, nb)] = True
    is_global[max(nb - g, 0):] = True
    pat[is_global, :] = True
    pat[:, is_global] = True
    half = w // 2
    rows = np.arange(nb)
    for off in range(-half, half + 1):
        keep = (rows + off >= 0) & (rows + off < nb)
        pat[rows[keep], rows[keep] + off] = True
    rng = np.random.default_rng(seed)
    for row in range(nb):
        if is_global[row] or r == 0:
            continue
        near = np.abs(rows - row) <= half
        cand = rows[~is_global & ~near]
        k = min(r, cand.size)
        if k:
            pat[row, np.sort(rng.choice(cand, size=k, replace=False))] = True
    return pat


def num_blocks_of(seq_len: int, block: int) -> int:
    """seq_len / block, or a UserError when the sequence does not split into whole blocks."""
    s = _check_int("seq_len", seq_len, 1)
    b = _check_int("block", block, 1)
    if s % b:
        raise UserError(f"bigbird mask: sequence length {s} is not divisible by block size {b}")
    return s // b


def bigbird_block_mask(seq_len: int, block: int, n_random: int, seed: int, n_global: int = 1,
                       window: int = 3) -> sp.csr_matrix:
    """The block pattern of `bigbird_mask(...)` as a (seq_len/block)^2 CSR matrix of 1.0s."""
    nb = num_blocks_of(seq_len, block)
    return sp.csr_matrix(bigbird_block_pattern(nb, n_random, seed, n_global, window)
                         .astype(np.float64))


def bigbird_mask(seq_len: int, block: int, n_random: int, seed: int, n_global: int = 1,
                 window: int = 3) -> sp.csr_matrix:
    """The element-level BigBird attention mask: a seq_len x seq_len CSR matrix whose stored
    entries (all 1.0, sorted indices) are the (query, key) pairs attended to; every block of the
    block pattern expanded to a dense `block` x `block` square."""
    nb = num_blocks_of(seq_len, block)
    pat = bigbird_block_pattern(nb, n_random, seed, n_global, window)
    m = sp.kron(sp.csr_matrix(pat.astype(np.float64)), np.ones((block, block)), format="csr")
    m.sort_indices()
    return m


def mask_density(m) -> float:
    """Fraction of stored entries of a square mask (1 - the paper's "sparsity")."""
    n = m.shape[0] * m.shape[1]
    return float(m.nnz) / n if n else 0.0


@dataclass(frozen=True)
class MaskSpec:
    """A parsed `--mask` value: the BigBird parameters (checked when made); `seed` None means
    gen-data's --seed."""

    block: int
    random: int
    n_global: int = 1
    window: int = 3
    seed: int | None = None

    def __post_init__(self):
        _check_int("block", self.block, 1)
        _check_params(self.random, self.n_global, self.window)
        if self.seed is not None:
            _check_int("seed", self.seed, 0)

    def build(self, seq_len: int, default_seed: int) -> sp.csr_matrix:
        """The element mask for a sequence of `seq_len` tokens."""
        seed = self.seed if self.seed is not None else default_seed
        return bigbird_mask(seq_len, self.block, self.random, seed, self.n_global, self.window)

    def text(self) -> str:
        s = f"bigbird:block={self.block},random={self.random},global={self.n_global}," \
            f"window={self.window}"
        return s + (f",seed={self.seed}" if self.seed is not None else "")


_KEYS = {"block": "block", "random": "random", "global": "n_global", "window": "window",
         "seed": "seed"}


def parse_mask_spec(text: str) -> MaskSpec:
    """Parse `bigbird:block=B,random=R[,global=G,window=W,seed=N]` (keys in any order)."""
    kind, colon, rest = text.partition(":")
    if kind.strip() != "bigbird" or not colon:
        raise UserError(f"mask '{text}': expected {MASK_SYNTAX}, e.g. bigbird:block=64,random=3")
    vals: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in _KEYS:
            raise UserError(f"mask '{text}': unknown or malformed item '{item}'; keys are "
                            f"{', '.join(_KEYS)} ({MASK_SYNTAX})")
        if _KEYS[key] in vals:
            raise UserError(f"mask '{text}': '{key}' given twice")
        try:
            vals[_KEYS[key]] = int(value)
        except ValueError:
            raise UserError(f"mask '{text}': {key} must be an integer, got '{value}'") from None
    missing = [k for k in ("block", "random") if k not in vals]
    if missing:
        raise UserError(f"mask '{text}': missing {' and '.join(missing)} ({MASK_SYNTAX})")
    return MaskSpec(**vals)  # which checks the values

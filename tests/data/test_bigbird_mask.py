"""BigBird masks (fuseflowc.data.bigbird) and `gen-data --mask`: the ITC pattern's rules checked
independently, block by block, on random parameters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.bigbird import (
    MaskSpec,
    bigbird_block_mask,
    bigbird_block_pattern,
    bigbird_mask,
    mask_density,
    parse_mask_spec,
)
from fuseflowc.diagnostics import UserError
from tests.support.golden import run_cli

params = st.tuples(st.integers(1, 24), st.integers(0, 6), st.integers(0, 2**31 - 1),
                   st.integers(0, 3), st.sampled_from([1, 3, 5]))


def _globals(nb: int, g: int) -> set[int]:
    return set(range(min(g, nb))) | set(range(max(nb - g, 0), nb))


@settings(max_examples=150, deadline=None)
@given(params)
def test_block_pattern_rules(p):
    nb, r, seed, g, w = p
    pat = bigbird_block_pattern(nb, r, seed, g, w)
    assert pat.shape == (nb, nb) and pat.dtype == bool
    glob = _globals(nb, g)
    half = w // 2
    for row in range(nb):
        for col in glob:
            # global blocks: whole block rows and whole block columns, so that part is symmetric
            assert pat[row, col] and pat[col, row]
        if row in glob:
            assert pat[row].all()
            continue
        window = {c for c in range(row - half, row + half + 1) if 0 <= c < nb}
        for c in window:
            assert pat[row, c]
        cand = [c for c in range(nb) if c not in glob and c not in window]
        extra = [c for c in cand if pat[row, c]]
        # exactly n_random random blocks (or every candidate when there are fewer)
        assert len(extra) == min(r, len(cand))
        assert set(np.flatnonzero(pat[row]).tolist()) == glob | window | set(extra)


@settings(max_examples=60, deadline=None)
@given(params)
def test_deterministic_and_seed_dependent(p):
    nb, r, seed, g, w = p
    a = bigbird_block_pattern(nb, r, seed, g, w)
    assert np.array_equal(a, bigbird_block_pattern(nb, r, seed, g, w))


def test_different_seeds_differ():
    pats = {bigbird_block_pattern(16, 3, s).tobytes() for s in range(8)}
    assert len(pats) > 1


def test_random_blocks_spread_over_candidates():
    # every non-window, non-global block is drawn for some row over many seeds (no bias to an end)
    seen = np.zeros((16, 16), bool)
    for s in range(200):
        seen |= bigbird_block_pattern(16, 2, s)
    assert seen.all()


@settings(max_examples=60, deadline=None)
@given(params, st.integers(1, 5))
def test_element_mask_expands_blocks(p, block):
    nb, r, seed, g, w = p
    m = bigbird_mask(nb * block, block, r, seed, g, w)
    pat = bigbird_block_pattern(nb, r, seed, g, w)
    assert m.shape == (nb * block, nb * block)
    assert m.has_sorted_indices
    assert np.all(m.data == 1.0)
    dense = m.toarray()
    assert np.array_equal(dense, np.kron(pat, np.ones((block, block))))
    bm = bigbird_block_mask(nb * block, block, r, seed, g, w)
    assert np.array_equal(bm.toarray() != 0, pat)
    assert mask_density(m) == pytest.approx(pat.mean())


def test_known_pattern_and_densities():
    pat = bigbird_block_pattern(6, 0, 0)
    expect = np.array([[1, 1, 1, 1, 1, 1],
                       [1, 1, 1, 0, 0, 1],
                       [1, 1, 1, 1, 0, 1],
                       [1, 0, 1, 1, 1, 1],
                       [1, 0, 0, 1, 1, 1],
                       [1, 1, 1, 1, 1, 1]], bool)
    assert np.array_equal(pat, expect)
    # S = 1024, block 64, 3 random: 2 global rows of 16 blocks; rows 1 and 14 have 7 blocks
    # (their window reaches a global block); the other 12 rows 2 + 3 + 3 = 8
    assert bigbird_mask(1024, 64, 3, 0).nnz == (2 * 16 + 2 * 7 + 12 * 8) * 64 * 64


@pytest.mark.parametrize("args, msg", [
    ((60, 8, 3, 0), "not divisible"),
    ((64, 0, 3, 0), "block must be at least 1"),
    ((64, 8, -1, 0), "random must be at least 0"),
    ((64, 8, 3, 0, 1, 2), "window must be odd"),
    ((64, 8, 3, -5), "seed must be at least 0"),
])
def test_errors(args, msg):
    with pytest.raises(UserError, match=msg):
        bigbird_mask(*args)


def test_parse_mask_spec():
    s = parse_mask_spec("bigbird:random=2,block=16,seed=7,window=5,global=2")
    assert (s.block, s.random, s.seed, s.window, s.n_global) == (16, 2, 7, 5, 2)
    assert parse_mask_spec(s.text()) == s
    assert parse_mask_spec("bigbird:block=8,random=1").seed is None
    for bad, msg in [("dense:block=8", "expected bigbird"), ("bigbird:block=8", "missing random"),
                     ("bigbird:block=8,random=x", "must be an integer"),
                     ("bigbird:block=8,random=1,foo=2", "unknown"),
                     ("bigbird:block=8,block=4,random=1", "twice"),
                     ("bigbird:block=8,random=1,window=4", "odd")]:
        with pytest.raises(UserError, match=msg):
            parse_mask_spec(bad)


# ---- gen-data --mask -------------------------------------------------------------------------
PROG = """\
dim S, D
tensor Q[S, D] : dense
tensor K[S, D] : dense
tensor M[S, S] : csr
tensor X[S, D] : dense
tensor Sc[S, S] : csr
Sc[i,j] = mask(Q[i,d] * K[j,d], M[i,j])
"""

BLOCKED = PROG.replace("tensor M[S, S] : csr", "tensor M[S, S] : bcsr") + "block M: 4\n"


def _gen(tmp_path, prog, *opts):
    f = tmp_path / "p.ff"
    f.write_text(prog)
    return run_cli(["gen-data", str(f), "--size", "S=32", "--size", "D=4", "-o",
                    str(tmp_path / "d"), *opts])


@pytest.mark.parametrize("prog", [PROG, BLOCKED])
def test_gen_data_mask(tmp_path, prog):
    from fuseflowc.data.io import load_inputs
    from fuseflowc.lang.load import load_program

    r = _gen(tmp_path, prog, "--mask", "M=bigbird:block=4,random=2", "--seed", "5")
    assert r.exit_code == 0, r.stderr
    p = load_program(str(tmp_path / "p.ff"))
    t = load_inputs(tmp_path / "d", [s for s in p.specs() if s.name == "M"])[0]["M"]
    coords, vals = t.element_coo()
    dense = np.zeros((32, 32))
    dense[coords[:, 0], coords[:, 1]] = vals
    assert np.array_equal(dense, bigbird_mask(32, 4, 2, 5).toarray())
    # seed= in the spec overrides --seed
    r = _gen(tmp_path, prog, "--mask", "M=bigbird:block=4,random=2,seed=9", "--seed", "5")
    assert r.exit_code == 0
    t = load_inputs(tmp_path / "d", [s for s in p.specs() if s.name == "M"])[0]["M"]
    coords, vals = t.element_coo()
    dense[:] = 0
    dense[coords[:, 0], coords[:, 1]] = vals
    assert np.array_equal(dense, bigbird_mask(32, 4, 2, 9).toarray())


@pytest.mark.parametrize("opt, msg", [
    ("M=bigbird:block=5,random=1", "not divisible by block size 5"),
    ("Sc=bigbird:block=4,random=1", "computed by the program"),
    ("Z=bigbird:block=4,random=1", "not a tensor"),
    ("X=bigbird:block=4,random=1", "square matrix"),
    ("bigbird:block=4,random=1", "expected T=bigbird"),
    ("M=bigbird:block=4", "missing random"),
])
def test_gen_data_mask_errors(tmp_path, opt, msg):
    r = _gen(tmp_path, PROG, "--mask", opt)
    assert r.exit_code == 1 and msg in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


def test_gen_data_mask_conflicts(tmp_path):
    r = _gen(tmp_path, PROG, "--mask", "M=bigbird:block=4,random=1", "--density", "M=0.5")
    assert r.exit_code == 1 and "--density" in r.stderr
    r = _gen(tmp_path, PROG, "--mask", "M=bigbird:block=4,random=1",
             "--mask", "M=bigbird:block=4,random=1")
    assert r.exit_code == 1 and "already has a mask" in r.stderr


def test_mask_spec_checks_its_values_where_it_is_made():
    # One validation (bigbird._check_params): a MaskSpec made directly is checked like a parsed
    # one and like bigbird_mask's arguments (it was only checked when parsed).
    for kw, msg in [({"block": 0, "random": 1}, "block must be at least 1"),
                    ({"block": 4, "random": -1}, "random must be at least 0"),
                    ({"block": 4, "random": 1, "window": 4}, "window must be odd"),
                    ({"block": 4, "random": 1, "seed": -1}, "seed must be at least 0")]:
        with pytest.raises(UserError, match=msg):
            MaskSpec(**kw)


def test_gen_data_names_the_mask_option_in_every_mask_error(tmp_path):
    for opt in ("M=bigbird:block=4,random=1,window=2", "M=bigbird:block=4",
                "M=bigbird:block=5,random=1"):
        r = _gen(tmp_path, PROG, "--mask", opt)
        assert r.exit_code == 1 and f"error: --mask {opt}: " in r.stderr, r.stderr
